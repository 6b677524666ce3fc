/* eval_internal.h - the reference evaluator's internals, for src/eval only.
 * The parallel runtime sees the evaluator through eval_runtime.h (included
 * here: contexts, frames, errors, hooks and the calls it makes); this adds
 * what only the evaluator's own files share.  Same ownership rules as
 * there. */
#ifndef STC_EVAL_INTERNAL_H
#define STC_EVAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval/eval.h"
#include "eval/eval_runtime.h"
#include "ir/ir.h"
#include "value/value.h"

/* C stack: the evaluator moves to a fresh stack segment (a new thread,
 * joined at once) whenever the current one has used EVAL_SEGMENT_BYTES,
 * so it is safe on any thread with EVAL_SEGMENT_BYTES plus a few KiB of
 * free stack, whatever the frame sizes; the segments are invisible to the
 * program (tests/unit/test_eval.c, eval_depth_limit_stack, checks the first
 * stack of a recursion to the limit). Frames measured: about 140-190 bytes
 * per depth unit with gcc -O2, 320-450 with gcc ASan -O0, 2-4 KiB with
 * clang ASan -O0.  (The depth limit, EVAL_MAX_DEPTH, is in eval_runtime.h.) */
#define EVAL_SEGMENT_BYTES ((uintptr_t)512 << 10)
#define EVAL_SEGMENT_STACK ((size_t)2 << 20)

/* Longest list range() builds (STC_ELIMIT beyond): keeps a typo like
 * range(0, 1000000000000) from exhausting memory. */
#define EVAL_MAX_RANGE ((int64_t)1 << 28)

/* A stream program's input and output (stc_run_stream; stream.c). */
struct eval_stream {
    const stc_stream *io;
    ir_type *item_type;   /* the type of main's input items */
    bool item_str;        /* item_type resolves to str (set once, not per item) */
    ir_loc in_loc;        /* main's parameter: where input errors are reported */
    ir_loc out_loc;       /* main: where output errors are reported */
    /* filter(P, smap(F, xs)) in the parallel runtime: P (keep, a function
     * value; unit: none) is applied to each result in the runtime's serial
     * output stage, in order, as the item keep_item of the list's meaning
     * would (at keep_loc, item keep_item, call depth keep_depth), and a kept
     * result goes out numbered (*kept)++. */
    stc_value keep;
    ir_loc keep_loc;
    long long keep_item;
    int keep_depth;
    long long *kept;
};

/* An operand that is only read: a variable or a literal is borrowed (no
 * reference counted: with several workers, counting a captured or literal
 * value that every item reads bounces its cache line between the cores),
 * anything else is evaluated.  *owned says whether *v is to be released.
 * Sound because nothing can rebind the variable's slot while the operand
 * is in use: each binder has its own slot, bound before its scope. */
static inline int eval_operand(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *v, bool *owned)
{
    *owned = false;
    if (e->kind == IR_VAR) { *v = fr->slots[e->u.var->slot]; return 0; }
    if (e->kind == IR_LIT) { *v = e->u.lit; return 0; }
    *owned = true;
    return stc__eval_expr(cx, e, fr, v);
}

/* Applies fn (with captured values caps[0..fn->ncaptures-1], borrowed; NULL
 * when there are none) to nargs args, adapting the argument count as
 * stc__eval_adapt_args does (docs/LANGUAGE.md 4).  loc is the call's location
 * for errors (depth limit).  Consumes args. */
int stc__eval_call_fun(eval_ctx *cx, const ir_fun *fn, const stc_value *caps, size_t nargs,
                  stc_value *args, ir_loc loc, stc_value *out);

/* Applies a closure value (STC_T_FUNC) like stc__eval_call_fun. Consumes args,
 * borrows fnv. */
int stc__eval_apply(eval_ctx *cx, stc_value fnv, size_t nargs, stc_value *args, ir_loc loc,
               stc_value *out);

/* Calls thread t with nargs inputs (adapted like stc__eval_call_fun: a lang
 * thread of k inputs takes k args or one k-tuple; a C thread gets unit,
 * the arg, or a tuple of the args) and threads its state. Sets cx->thread
 * for the duration. Consumes args. */
int stc__eval_call_thread(eval_ctx *cx, int t, size_t nargs, stc_value *args, ir_loc loc,
                     stc_value *out);

/* Thread t's state for a call of its function: moved out of the state
 * (left unit until the call stores the next one) when t's calls never
 * overlap (ir_thread.state_moves) and it is a map or a tuple, so that a
 * map held by the thread alone is updated in place and a tuple's block
 * reused (EVAL_X_LET_MOVE); else a new reference (val_retain: the public
 * stc_value_retain marks the value shared, after which every count
 * change on it is atomic).  Inline: on every thread call. */
static inline stc_value eval_state_take(eval_ctx *cx, int t)
{
    eval_tstate *st = &cx->states[t];
    stc_value v = st->value;
    if (!cx->p->threads[t]->state_moves || (v.tag != STC_T_MAP && v.tag != STC_T_TUPLE)) return val_retain(v);
    st->value = (stc_value){.tag = STC_T_UNIT};
    return v;
}

/* Completes a lang thread call: pair is the (out, s') its fun returned
 * (consumed); stores s' as thread t's state and out in *out. */
int stc__eval_thread_result(eval_ctx *cx, int t, stc_value pair, ir_loc loc, stc_value *out);
/* The same for a call whose pair was never built: o and next (consumed)
 * are its output and its new state.  A state that comes back the very
 * same value (one heap object, or equal scalar bits: a read-only thread)
 * is not written, so the parallel runtime may run such calls on several
 * workers. */
static inline void eval_thread_store(eval_ctx *cx, int t, stc_value o, stc_value next, stc_value *out)
{
    eval_tstate *st = &cx->states[t];
    stc_value old = st->value;
    *out = o;
    bool same = next.tag == old.tag &&
                (next.tag == STC_T_UNIT || (next.tag == STC_T_FLOAT ? memcmp(&next.as.f, &old.as.f, sizeof next.as.f) == 0
                                            : next.tag == STC_T_INT  ? next.as.i == old.as.i
                                            : next.tag == STC_T_BOOL ? next.as.b == old.as.b
                                                                     : next.as.obj == old.as.obj));
    if (same) {
        val_release(next);
        return;
    }
    st->value = next;
    val_release(old);
}

/* Builtin call node e (CALL_BUILTIN) in frame fr (builtins.c). */
int stc__eval_builtin(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
/* The same for a node of form EVAL_X_BUILTIN: none of the checks that
 * stc__eval_prepare made (builtins.c). */
int stc__eval_builtin_x(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

/* Where the C stack is (stack segments, eval.c). */
#if defined(__GNUC__)
/* The real frame, also under ASan's fake stacks for locals. */
#define EVAL_STACK_POS() ((uintptr_t)__builtin_frame_address(0))
#else
#define EVAL_STACK_POS() ((uintptr_t)&(char){0})
#endif

/* Whether this context's stack segment has room for an evaluation that
 * skips stc__eval_expr (which moves to a new segment when it has not):
 * false before the context's first stc__eval_expr set the base. */
static inline bool eval_stack_room(const eval_ctx *cx, uintptr_t pos)
{
    uintptr_t base = cx->stack_base;
    return base && (pos < base ? base - pos : pos - base) <= EVAL_SEGMENT_BYTES;
}
/* The map builtins (BI_GET .. BI_TO_MAP), call node e (maps.c). */
int stc__eval_map_builtin(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
/* The string builtins (words split str concat parse_int parse_float
 * try_int try_float) on their evaluated arguments a (borrowed), errors at
 * loc (strings.c). */
int stc__eval_string_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out);
/* words, parse_int, parse_float (strings.c) and slice (text.c) of a string
 * s (the type checked by the caller), called by eval_simple without the
 * dispatch above: a log line's parse calls them (docs/DESIGN.md 2). */
int stc__eval_words(eval_ctx *cx, ir_loc loc, stc_value s, stc_value *out);
int stc__eval_parse_int(eval_ctx *cx, ir_loc loc, stc_value s, stc_value *out);
int stc__eval_parse_float(eval_ctx *cx, ir_loc loc, stc_value s, stc_value *out);
int stc__eval_slice(eval_ctx *cx, ir_loc loc, stc_value s, int64_t i, int64_t j, stc_value *out);
/* The words form (EVAL_X_BUILTIN with xslot; builtins.c): a string's
 * words summed up in two frame slots h[0..1] (strings.c), ints: h[0]'s
 * byte 0 the count (255: 255 or more), its byte k + 1 and h[1]'s byte k
 * the bounds of word k for k < 7 (start 255: not kept, the word ends at
 * 255 or later).  stc__str_words_pack makes it; stc__str_words_count is the
 * number of words of vs and stc__str_words_bounds the bounds of its word k
 * (k below the count), read from h where it has them, else scanned
 * again (slots that are not ints are no summary).
 * stc__eval_parse_piece is parse_int or parse_float (bi) of bytes
 * [from, to) of s. */
void stc__str_words_pack(const val_str *vs, stc_value *h);
size_t stc__str_words_count_scan(const val_str *vs);
void stc__str_words_bounds_scan(const val_str *vs, const stc_value *h, size_t k, size_t *from, size_t *to);
static inline size_t stc__str_words_count(const val_str *vs, const stc_value *h)
{
    uint64_t n = (uint64_t)h[0].as.i & 0xff;
    return h[0].tag == STC_T_INT && n != 255 ? (size_t)n : stc__str_words_count_scan(vs);
}
static inline void stc__str_words_bounds(const val_str *vs, const stc_value *h, size_t k, size_t *from, size_t *to)
{
    unsigned sh = 8 * (unsigned)k;
    if (k < 7 && h[0].tag == STC_T_INT && h[1].tag == STC_T_INT && ((uint64_t)h[0].as.i >> (sh + 8) & 0xff) != 255) {
        *from = (size_t)((uint64_t)h[0].as.i >> (sh + 8) & 0xff);
        *to = (size_t)((uint64_t)h[1].as.i >> sh & 0xff);
        return;
    }
    stc__str_words_bounds_scan(vs, h, k, from, to);
}
int stc__eval_parse_piece(eval_ctx *cx, ir_builtin bi, ir_loc loc, stc_value s, size_t from, size_t to,
                          stc_value *out);
/* The library's other string builtins (slice find starts_with ends_with
 * contains lower upper trim join replace; text.c), its list builtins (fold
 * filter append reverse sort zip take drop; lists.c) and its math (abs min
 * max sqrt floor ceil pow exp log; math.c), the same way. */
int stc__eval_text_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out);
int stc__eval_list_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out);
int stc__eval_math_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out);
/* x rounded to the integral r (trunc, round, floor, ceil of x) as an int;
 * a runtime error "NAME: X cannot be converted to int" for NaN, the
 * infinities and values out of the int range (builtins.c). */
int stc__eval_to_int(eval_ctx *cx, ir_loc loc, const char *name, double x, double r, stc_value *out);

/* Finds a pattern of m >= 1 bytes in linear time (strings.c): init fails
 * only when out of memory; stc__str_find gives the start of the first
 * occurrence in d[from..len), or SIZE_MAX; free fail when done. */
typedef struct str_finder {
    const char *sep;
    size_t m;
    size_t *fail;
} str_finder;
bool stc__str_finder_init(str_finder *f, const char *sep, size_t m);
size_t stc__str_find(const str_finder *f, const char *d, size_t len, size_t from);
/* ASCII whitespace: space, \t \n \v \f \r.  Inline: a call per byte
 * was 4% of logstats' instructions. */
static inline bool stc__str_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Thread states (threads.c).  stc__eval_states_init allocates and initialises
 * every state in declaration order (init expressions in a frame of
 * p->init_nslots); on error it frees what it made and *out is NULL.
 * stc__eval_states_final stores each thread's final state value in out[i]
 * (owned; out has p->nthreads entries, left unit on error).
 * stc__eval_states_free releases everything (NULL is a no-op). */
int stc__eval_states_init(eval_ctx *cx, eval_tstate **out);
int stc__eval_states_final(eval_ctx *cx, const eval_tstate *st, stc_value *out);
void stc__eval_states_free(const ir_program *p, eval_tstate *st);

/* Streams (stream.c; stc__eval_stream_pull and stc__eval_stream_push are in
 * eval_runtime.h). */
/* main's streamed smap: main is `smap(F, xs)` with xs its parameter and F
 * not mentioning xs; else NULL. */
const ir_expr *stc__eval_stream_smap(const ir_program *p);
/* The forms of main that stream (stream.c): smap(F, xs) (filter NULL),
 * filter(P, smap(F, xs)) and smap(F, filter(P, xs)) (filter_first), under
 * lets that do not read xs; false for any other main.  Either is main's
 * value (let NULL: its items go to the sink), or the value of a let whose
 * name the rest of main reads nowhere, nor xs (`let _ = smap(F, xs) in
 * BODY`): its items are discarded and main's value is BODY's, evaluated
 * after the input ends. */
typedef struct eval_stream_form {
    const ir_expr *smap, *filter;
    bool filter_first;
    const ir_expr *let; /* the discarded stream's let, or NULL */
} eval_stream_form;
bool stc__eval_stream_shape(const ir_program *p, eval_stream_form *form);
/* Evaluates a main that takes an input (p->main_param) with input and
 * output from io (NULL: empty input, no sink); *out is main's value, or
 * unit when a list went to the sink (*to_sink set); *count the items read. */
int stc__eval_main_stream(eval_ctx *cx, const stc_stream *io, stc_value *out, long long *count, bool *to_sink);

/* The evaluator's specialised node forms (ir_expr.xop), chosen once per
 * program by stc__eval_prepare (prepare.c) from the resolved IR (the
 * shapes of nodes, callees and frames; the inferred types are not read:
 * int and float paths are taken on the runtime tags).  Each runs exactly
 * what the generic code runs for that node (same order, depths, errors):
 * it only skips the decisions known at compile time. */
enum {
    EVAL_X_GENERIC = 0,
    /* IR_BINOP whose left operand is not a binop or is itself
     * EVAL_X_BINOP, at most EVAL_X_SPINE deep: operands read in place
     * (variables, literals), the left spine evaluated inline (the depths
     * of eval_chain), && || short-circuited, int and float operands
     * computed at once, anything else by the generic eval_arith /
     * eval_compare (the runtime tags decide, not the inferred types). */
    EVAL_X_BINOP,
    /* IR_CALL of a top-level function (CALL_FUN), not a tail call, with
     * as many args as params and stc__ir_resolve's frame layout: args
     * straight into the callee's frame, no checks left to make. */
    EVAL_X_CALL_FUN,
    /* IR_CALL of an STCLang thread (CALL_THREAD) with as many args as
     * inputs and the frame layout: as eval_call, and the function's
     * (output, state) pair, when its body ends in a tuple under lets, ifs
     * and cases, is never built (eval_pair in calls.c); a thread with a
     * compiled form (ir_thread.xtk, kernel.c) runs that instead. */
    EVAL_X_CALL_THREAD,
    /* IR_CALL of a builtin other than smap, state and the map builtins,
     * with its arity (at most 3 args): bound once, the args read in place
     * (variables, literals) or evaluated, nested builtins of this form
     * without the dispatch (stc__eval_builtin_x, builtins.c). */
    EVAL_X_BUILTIN,
    /* (The forms above are calls and operators, which eval_quick takes
     * without the dispatch; the ones below are read where their node
     * kind is evaluated.)
     * IR_LETTUPLE `let (a, b, ...) = s` in a top-level function's body,
     * where s is a parameter that the body mentions there only (dead in
     * the let's body and after the let): when s's tuple is
     * held by s's slot alone (count 1), its items are moved into the
     * binders (no retain, no release) and the slot keeps the emptied
     * block for a tuple of the body to reuse (eval_let_enter).  Not in
     * main's context (hooks), whose lets and tuples may run as tasks. */
    EVAL_X_LET_MOVE,
    /* IR_TUPLE in the body of an EVAL_X_LET_MOVE let (not inside a
     * lambda), xslot that let's variable's slot: when that slot holds a
     * tuple of the same arity held by it alone, the new tuple is built in
     * its block (Perceus-style reuse; stc__eval_seq). The variable is dead
     * there, so nothing can see the old tuple. */
    EVAL_X_TUPLE_REUSE
};
#define EVAL_X_SPINE 8
/* The words form: an EVAL_X_BUILTIN call with ir_expr.xslot not 0
 * (prepare.c, builtins.c).  In `let w = words(s) in B` where B reads w
 * only as len(w) and nth(w, K) (not inside a lambda), the words call,
 * with xslot = H + 1, gives s itself (bound to w) and stores in slots
 * H and H + 1, added to the function's frame, s's words summary
 * (stc__str_words_pack); the len and nth calls, with the same xslot, read s
 * and the summary: no list, no string per word.  A parse_int or
 * parse_float of such an nth of variables or literals, xslot
 * EVAL_XW_PARSE, parses the word in place.  Each falls back to the
 * generic builtin when the slot holds a list after all. */
#define EVAL_XW_PARSE (-1)
/* A slice(v, i, j) of form EVAL_X_BUILTIN in a tail position of a
 * function's body (its value is the body's: nothing of the function
 * reads v after it), v a variable: xslot EVAL_XW_SLICE.  When v's string
 * is held by v's slot alone (eval_unique) and not in main's context
 * (hooks), the slice is cut in that string's own block and the string
 * is the result (builtins.c): minute's slice(ts, 0, 16) of a word made
 * for it. */
#define EVAL_XW_SLICE (-2)

/* ---- The node evaluators (eval.c dispatches; one module each) ----------
 * Each evaluates node e in frame fr into *out (unit on entry) at the depth
 * its caller counted for it, as stc__eval_expr would after its dispatch. */

/* Frames and argument arrays up to this size live on the C stack. */
#define EVAL_FRAME_SMALL 8

#if defined(__GNUC__)
#define EVAL_NOINLINE __attribute__((noinline))
#define EVAL_INLINE static inline __attribute__((always_inline))
#else
#define EVAL_NOINLINE
#define EVAL_INLINE static inline
#endif

/* Whether heap value v is held by one reference only (the caller's):
 * then nothing else can read it and it may be changed in place.  Acquire:
 * a release by another thread that brought the count to 1 happened
 * before the changes.  A marked value (VAL_SHARED) is never changed in
 * place: what it holds was marked with it, and what a change would put
 * in it would not be (value.h). */
static inline bool eval_unique(stc_value v)
{
    return val_is_heap(v) && __atomic_load_n(&v.as.obj->refs, __ATOMIC_ACQUIRE) == 1 && !val_obj_is_shared(v.as.obj);
}

/* Scalars built in place: the public stc_value_int & co. are exported
 * functions, which position-independent code never inlines (a call each).
 * Both 8-byte words of the value are written whole: built field by field,
 * a value kept the bytes a slot held beside its 4-byte tag and 1-byte
 * bool, and an 8-byte load of the slot right after (a copy of the value)
 * waited for the narrower stores to reach the cache (no store-to-load
 * forwarding): 35% of the compiled thread call's time on the cheap smap
 * (docs/DESIGN.md 2, "The register code"). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
_Static_assert(sizeof(stc_value) == 16 && offsetof(stc_value, as) == 8, "a value is two words: the tag's, the payload");
static inline stc_value eval_words(stc_tag tag, uint64_t bits)
{
    uint64_t w[2] = {(uint64_t)tag, bits};
    stc_value v;
    memcpy(&v, w, sizeof v);
    return v;
}
static inline stc_value eval_int(int64_t i) { return eval_words(STC_T_INT, (uint64_t)i); }
static inline stc_value eval_float(double f)
{
    uint64_t bits;
    memcpy(&bits, &f, sizeof bits);
    return eval_words(STC_T_FLOAT, bits);
}
static inline stc_value eval_bool(bool b) { return eval_words(STC_T_BOOL, b ? 1u : 0u); }
#else
static inline stc_value eval_int(int64_t i) { return (stc_value){.tag = STC_T_INT, .as.i = i}; }
static inline stc_value eval_float(double f) { return (stc_value){.tag = STC_T_FLOAT, .as.f = f}; }
static inline stc_value eval_bool(bool b) { return (stc_value){.tag = STC_T_BOOL, .as.b = b}; }
#endif

static inline void eval_release_n(stc_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++) val_release(v[i]);
}

/* Whether fn's params sit right after its captures (stc__ir_resolve's layout):
 * then args can be evaluated straight into the callee's frame.  Inline: out
 * of line it cost fib(25) 3% of its instructions, more than the tail-call
 * tests on the call path (docs/DESIGN.md 2). */
static inline bool eval_direct_layout(const ir_fun *fn)
{
    size_t ncaps = fn->ncaptures > 0 ? (size_t)fn->ncaptures : 0;
    size_t k = fn->nparams > 0 ? (size_t)fn->nparams : 0;
    if (ncaps + k > (size_t)(fn->nslots > 0 ? fn->nslots : 0)) return false;
    for (size_t i = 0; i < k; i++)
        if (fn->params[i]->slot != (int)(ncaps + i)) return false;
    return true;
}

/* calls.c: a call (CALL_FUN, CALL_VALUE, CALL_THREAD; a tail call goes to
 * tail.c), the forms EVAL_X_CALL_FUN and EVAL_X_CALL_THREAD, and the n
 * args of call e into a (on error those evaluated are released and set
 * back to unit: a may be a frame that the caller frees as a whole). */
int stc__eval_call(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_call_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_call_thread_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_args_into(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *a);

/* tail.c: call e in tail position, its callee and args left in cx->tail
 * (EVAL_TAIL, or an error as a call would report it); the trampoline
 * that runs the pending tail call in the frame of the body that made it
 * (cx->tail.fr, into cx->tail.out); dropping a pending one. */
int stc__eval_tail_prepare(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_tail_resume(eval_ctx *cx);
void stc__eval_tail_drop(eval_ctx *cx);

/* operators.c: IR_BINOP (generic, chains included), EVAL_X_BINOP, IR_UNOP. */
int stc__eval_binop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_fast_binop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_unop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

/* control.c: IR_LET and IR_LETTUPLE, IR_CASE, IR_TUPLE and IR_LIST,
 * IR_LAMBDA, IR_INL and IR_INR, IR_IF. */
int stc__eval_let(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_case(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_seq(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_lambda(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_box(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__eval_if(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

/* An EVAL_X_BINOP of two int variables or literals whose result needs no
 * check (+ - * and the comparisons): into *out at once, true; no depth
 * unit to count since nothing below can call.  False for anything else,
 * which stc__eval_fast_binop then does. */
static inline bool eval_leaf_int(const ir_expr *e, const eval_frame *fr, stc_value *out)
{
    const ir_expr *l = e->a, *r = e->b;
    const stc_value *a, *b;
    if (l->kind == IR_VAR) a = &fr->slots[l->u.var->slot];
    else if (l->kind == IR_LIT) a = &l->u.lit;
    else return false;
    if (r->kind == IR_VAR) b = &fr->slots[r->u.var->slot];
    else if (r->kind == IR_LIT) b = &r->u.lit;
    else return false;
    if (a->tag != STC_T_INT || b->tag != STC_T_INT) return false;
    int64_t x = a->as.i, y = b->as.i;
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y; /* wrapping, as eval_arith */
    switch (e->u.binop) {
    case OP_ADD: *out = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)(ux + uy)}; return true;
    case OP_SUB: *out = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)(ux - uy)}; return true;
    case OP_MUL: *out = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)(ux * uy)}; return true;
    case OP_EQ: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x == y}; return true;
    case OP_NE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x != y}; return true;
    case OP_LT: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x < y}; return true;
    case OP_LE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x <= y}; return true;
    case OP_GT: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x > y}; return true;
    case OP_GE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x >= y}; return true;
    default: return false;
    }
}

/* stc__eval_expr for a sub-expression, with its commonest forms taken
 * here: a variable, an int leaf (eval_leaf_int), an EVAL_X_BINOP,
 * EVAL_X_CALL_FUN, EVAL_X_CALL_THREAD or EVAL_X_BUILTIN (one depth unit,
 * as stc__eval_expr counts it; no stack check here: a binop's operands
 * that recurse go through stc__eval_expr, every function body through
 * eval_body or eval_pair, a builtin's args through eval_x_arg, which
 * check). */
EVAL_INLINE int eval_quick(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->kind == IR_VAR) {
        *out = val_retain(fr->slots[e->u.var->slot]);
        return 0;
    }
    if (e->xop == EVAL_X_BINOP && eval_leaf_int(e, fr, out)) return 0;
    if ((unsigned)e->xop - 1u < (unsigned)EVAL_X_BUILTIN) { /* EVAL_X_BINOP .. EVAL_X_BUILTIN */
        *out = (stc_value){.tag = STC_T_UNIT};
        cx->depth++;
        int rc = e->xop == EVAL_X_BINOP         ? stc__eval_fast_binop(cx, e, fr, out)
                 : e->xop == EVAL_X_CALL_FUN    ? stc__eval_call_direct(cx, e, fr, out)
                 : e->xop == EVAL_X_CALL_THREAD ? stc__eval_call_thread_direct(cx, e, fr, out)
                                                : stc__eval_builtin_x(cx, e, fr, out);
        cx->depth--;
        return rc;
    }
    return stc__eval_expr(cx, e, fr, out);
}

/* Binds let e's binders to the value of its bound expression, as
 * eval_quick and eval_let_bind would; a let-tuple of a variable reads the
 * tuple in place (its items retained, not the tuple: the variable's slot
 * is not a binder's, so it stays put while they are bound). */
EVAL_INLINE int eval_let_enter(eval_ctx *cx, const ir_expr *e, eval_frame *fr)
{
    if (e->kind == IR_LETTUPLE && e->a->kind == IR_VAR) {
        stc_value v = fr->slots[e->a->u.var->slot];
        int rc = eval_let_check(cx, e, v);
        if (rc == 0 && e->xop == EVAL_X_LET_MOVE && !cx->hooks && eval_unique(v)) {
            stc_value *items = val_seq_items(v); /* moved out; the block stays in the slot */
            for (int i = 0; i < e->u.let.nbinders; i++) {
                eval_bind(fr, e->u.let.binders[i], items[i]);
                items[i] = (stc_value){.tag = STC_T_UNIT};
            }
            return 0;
        }
        for (int i = 0; rc == 0 && i < e->u.let.nbinders; i++)
            eval_bind(fr, e->u.let.binders[i], val_retain(val_seq_items(v)[i]));
        return rc;
    }
    stc_value v;
    int rc = eval_quick(cx, e->a, fr, &v);
    return rc ? rc : eval_let_bind(cx, e, fr, v);
}

/* ---- A thread call's compiled form (kernel.c) ----------------------------
 * ir_thread.xtk, made by stc__eval_tk_prepare for each thread whose body
 * fits (docs/DESIGN.md 2, "A thread call's compiled form").
 * stc__eval_tk_call is EVAL_X_CALL_THREAD's path (no hooks) for such a
 * thread: its args into a frame of its own, then the call compiled, or,
 * when a value's tag is not the compiled one or a check is due, the
 * evaluator's stc__eval_thread_body (calls.c) on that frame: thread t's
 * call after the args are in the first slots (releases the frame's
 * values, not its storage). */
typedef struct eval_tk eval_tk;
void stc__eval_tk_prepare(ir_program *p);
int stc__eval_tk_call(eval_ctx *cx, const ir_expr *e, eval_frame *fr, const eval_tk *k, stc_value *out);
int stc__eval_thread_body(eval_ctx *cx, int t, stc_value *slots, ir_loc loc, stc_value *out);
/* The compiled code's size, for tests: its ops, and the items its
 * let-tuples and pairs copy when the state is held twice and when it
 * moves in (items left in place are not copied). */
void stc__eval_tk_shape(const eval_tk *k, int *ops, int *copies, int *moved_copies);

/* Whether v has type ty (type variables accept anything). Used to check
 * values coming from C threads before the evaluator relies on their shape. */
bool stc__eval_value_has_type(stc_value v, ir_type *ty);

#endif
