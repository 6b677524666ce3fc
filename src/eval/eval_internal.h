/* eval_internal.h - the reference evaluator's internal entry points.
 *
 * All evaluation state lives in an explicit eval_ctx (no globals), so the
 * parallel runtime can evaluate single functions, lambdas or thread steps on
 * several worker threads at once, each worker with its own eval_ctx over the
 * same read-only IR.  Thread states live in an eval_tstate array that may be
 * shared between contexts, as long as each thread's entry is used by one
 * context at a time.
 *
 * Ownership: every function that yields a value stores an owned reference
 * in *out (left unit on error).  Functions taking `stc_value *args` consume
 * the args (their references are released or moved), on success and on
 * error alike.  Every function returns 0 or a negative stc error code after
 * recording the error in the context (eval_error).
 */
#ifndef STC_EVAL_INTERNAL_H
#define STC_EVAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval/eval.h"
#include "ir/ir.h"
#include "value/value.h"

/* Evaluation depth limit.  Depth counts one unit per nested eval_expr
 * activation of a non-leaf node plus one per function application (a
 * top-level fun, a lambda or a lang thread's fun, including smap's per-item
 * application).  The check happens at each application: when the depth on
 * entry has reached EVAL_MAX_DEPTH the error "call depth limit exceeded"
 * (STC_ELIMIT) is raised at the call.  A recursive function typically
 * spends 3-6 units per level.  The limit is a property of the program only:
 * a runtime that starts evaluating in the middle of a program must set
 * cx->depth to the depth the reference evaluator has there to hit the
 * limit at the same point.
 *
 * C stack: the evaluator moves to a fresh stack segment (a new thread,
 * joined at once) whenever the current one has used EVAL_SEGMENT_BYTES,
 * so it is safe on any thread with EVAL_SEGMENT_BYTES plus a few KiB of
 * free stack, whatever the frame sizes; the segments are invisible to the
 * program (tests/unit/test_eval.c, eval_depth_limit_stack, checks the first
 * stack of a recursion to the limit). Frames measured: about 140-190 bytes
 * per depth unit with gcc -O2, 320-450 with gcc ASan -O0, 2-4 KiB with
 * clang ASan -O0. */
#define EVAL_MAX_DEPTH 50000
#define EVAL_SEGMENT_BYTES ((uintptr_t)512 << 10)
#define EVAL_SEGMENT_STACK ((size_t)2 << 20)

/* Longest list range() builds (STC_ELIMIT beyond): keeps a typo like
 * range(0, 1000000000000) from exhausting memory. */
#define EVAL_MAX_RANGE ((int64_t)1 << 28)

/* A thread's state during a run. */
typedef struct eval_tstate {
    stc_value value; /* THREAD_LANG: the current state (owned) */
    void *cstate;    /* THREAD_C: def->state_size bytes, initialised; NULL before */
    bool ready;      /* initialised (C: state_init succeeded; free with state_free) */
} eval_tstate;

/* The first error of an evaluation. */
typedef struct eval_err {
    int code;           /* 0 = none */
    char *message;      /* malloc'd; NULL if formatting ran out of memory */
    ir_loc loc;
    const char *thread; /* borrowed from the IR (a thread name) or NULL */
    long long item;     /* innermost smap item, -1 outside smap */
} eval_err;

/* The parallel runtime's entry point: eval_smap calls hook->run (when the
 * context has a hook) after evaluating smap's function (fnv, or the thread
 * index `thread` >= 0) and its items xs, both borrowed.  run returns 0 with the
 * result list in *out, a negative error code after recording the error in
 * cx, or EVAL_SMAP_DECLINED to let the evaluator run the smap itself. */
#define EVAL_SMAP_DECLINED 1
struct eval_ctx;
struct eval_frame;
/* The items an smap maps: a list's items (borrowed), or, when items is
 * NULL, the ints start, start+1, ... of `smap(f, range(a, b))`, which the
 * runtime need not build as a list. */
typedef struct eval_items {
    const stc_value *items;
    int64_t start;
    size_t n;
} eval_items;
/* A stream program's input and output (stc_run_stream; stream.c). */
typedef struct eval_stream {
    const stc_stream *io;
    ir_type *item_type;   /* the type of main's input items */
    ir_loc in_loc;        /* main's parameter: where input errors are reported */
    ir_loc out_loc;       /* main: where output errors are reported */
} eval_stream;
typedef struct eval_smap_hook {
    int (*run)(void *ud, struct eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv,
               const eval_items *xs, stc_value *out);
    /* Optional: the streamed smap e of main over the input stream s: pull
     * items with eval_stream_pull, deliver results with eval_stream_push;
     * *count is the items read.  Same returns as run. */
    int (*stream)(void *ud, struct eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv,
                  const eval_stream *s, long long *count);
    /* Optional: offered every tuple expression e (in frame fr) the hooked
     * context evaluates, to run its items as parallel tasks; same returns. */
    int (*tuple)(void *ud, struct eval_ctx *cx, const ir_expr *e, struct eval_frame *fr, stc_value *out);
    /* Optional: offered every let or let-tuple e (in frame fr) the hooked
     * context evaluates, to run it with the independent lets below it as
     * parallel tasks: on 0 it has bound them, evaluated the body into *out
     * and unbound them, as eval_let would; same returns. */
    int (*lets)(void *ud, struct eval_ctx *cx, const ir_expr *e, struct eval_frame *fr, stc_value *out);
    void *ud;
} eval_smap_hook;

typedef struct eval_ctx {
    const ir_program *p;
    const stc_cancel *cancel;        /* NULL, or checked at every call and smap item */
    const eval_smap_hook *smap_hook; /* NULL: every smap runs here, sequentially */
    eval_tstate *states;  /* p->nthreads entries */
    int depth;            /* see EVAL_MAX_DEPTH */
    uintptr_t stack_base; /* where the current C stack segment began; 0: set at the
                             next eval_expr.  Reset it to 0 before using the context
                             on another thread (one thread at a time). */
    int seg_level;        /* stack segments in use below this one */
    void **seg_stacks;    /* cached segment stacks (EVAL_SEGMENT_STACK bytes each) */
    int nseg_stacks;
    const char *thread;   /* innermost running thread (name) or NULL */
    long long item;       /* innermost smap item index or -1 */
    eval_err err;
} eval_ctx;

/* A function activation: fn is NULL for main and init expressions. */
typedef struct eval_frame {
    stc_value *slots;
    const ir_fun *fn;
} eval_frame;

/* The per-call context handed to a C thread (public opaque type). */
struct stc_ctx {
    const stc_thread_def *def;
    char *message; /* the first stc_ctx_error message, malloc'd */
    bool error_oom;
};

void eval_ctx_init(eval_ctx *cx, const ir_program *p, eval_tstate *states);
/* Frees the recorded error message and the cached stack segments (states
 * are not touched). */
void eval_ctx_fini(eval_ctx *cx);

/* Records an error (only the first one counts) at loc with the context's
 * current thread and item; returns code. */
int eval_error(eval_ctx *cx, int code, ir_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* STC_ECANCELED recorded at loc if the run's cancel flag is raised, else 0. */
int eval_check_cancel(eval_ctx *cx, ir_loc loc);

/* Records "out of memory" (STC_ENOMEM) at loc; returns STC_ENOMEM. */
int eval_oom(eval_ctx *cx, ir_loc loc);

/* Whether v matches alt; on a match the alt's binders are bound in fr. */
bool eval_case_match(const ir_alt *alt, stc_value v, eval_frame *fr);

/* Evaluates e in frame fr. */
int eval_expr(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
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
    return eval_expr(cx, e, fr, v);
}

/* Applies fn (with captured values caps[0..fn->ncaptures-1], borrowed; NULL
 * when there are none) to nargs args, adapting the argument count (common.md
 * 1): k args to a k-param fun pass directly; one k-tuple to a k>=2-param
 * fun is destructured; args of a 1-param fun called with k != 1 args are
 * packed into a tuple (unit for none); a 0-param fun ignores a unit arg.
 * loc is the call's location for errors (depth limit). Consumes args. */
int eval_call_fun(eval_ctx *cx, const ir_fun *fn, const stc_value *caps, size_t nargs,
                  stc_value *args, ir_loc loc, stc_value *out);

/* Moves nargs args into the k values dst[0..k-1] by the rule above (what
 * names the callee in the internal error for an impossible count).
 * Consumes args. */
int eval_adapt_args(eval_ctx *cx, const char *what, size_t k, size_t nargs, stc_value *args,
                    stc_value *dst, ir_loc loc);

/* Applies a closure value (STC_T_FUNC) like eval_call_fun. Consumes args,
 * borrows fnv. */
int eval_apply(eval_ctx *cx, stc_value fnv, size_t nargs, stc_value *args, ir_loc loc,
               stc_value *out);

/* Calls thread t with nargs inputs (adapted like eval_call_fun: a lang
 * thread of k inputs takes k args or one k-tuple; a C thread gets unit,
 * the arg, or a tuple of the args) and threads its state. Sets cx->thread
 * for the duration. Consumes args. */
int eval_call_thread(eval_ctx *cx, int t, size_t nargs, stc_value *args, ir_loc loc,
                     stc_value *out);

/* Completes a lang thread call: pair is the (out, s') its fun returned
 * (consumed); stores s' as thread t's state and out in *out. */
int eval_thread_result(eval_ctx *cx, int t, stc_value pair, ir_loc loc, stc_value *out);

/* Builtin call node e (CALL_BUILTIN) in frame fr (builtins.c). */
int eval_builtin(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
/* The string builtins (words split str concat parse_int parse_float) on
 * their evaluated arguments a (borrowed), errors at loc (strings.c). */
int eval_string_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out);

/* Thread states (threads.c).  eval_states_init allocates and initialises
 * every state in declaration order (init expressions in a frame of
 * p->init_nslots); on error it frees what it made and *out is NULL.
 * eval_states_final stores each thread's final state value in out[i]
 * (owned; out has p->nthreads entries, left unit on error).
 * eval_states_free releases everything (NULL is a no-op). */
int eval_states_init(eval_ctx *cx, eval_tstate **out);
int eval_states_final(eval_ctx *cx, const eval_tstate *st, stc_value *out);
void eval_states_free(const ir_program *p, eval_tstate *st);

/* Streams (stream.c).  eval_stream_pull reads input item `index`: 1 with
 * the item in *item (owned), 0 at the end, or a negative code with the
 * error recorded in cx (a failing source, an item of the wrong type, a
 * cancel while the source waits).  eval_stream_push hands result `index`
 * (borrowed) to the sink: 0 or a negative code with the error recorded. */
int eval_stream_pull(eval_ctx *cx, const eval_stream *s, long long index, stc_value *item);
int eval_stream_push(eval_ctx *cx, const eval_stream *s, long long index, stc_value v);
/* main's streamed smap: main is `smap(F, xs)` with xs its parameter and F
 * not mentioning xs; else NULL. */
const ir_expr *eval_stream_smap(const ir_program *p);
/* Evaluates a main that takes an input (p->main_param) with input and
 * output from io (NULL: empty input, no sink); *out is main's value, or
 * unit when a list went to the sink (*to_sink set); *count the items read. */
int eval_main_stream(eval_ctx *cx, const stc_stream *io, stc_value *out, long long *count, bool *to_sink);

/* Whether v has type ty (type variables accept anything). Used to check
 * values coming from C threads before the evaluator relies on their shape. */
bool eval_value_has_type(stc_value v, ir_type *ty);

#endif
