/* eval_runtime.h - the reference evaluator as the parallel runtime
 * (src/flow) sees it: the points where the evaluator offers work to the
 * runtime, the evaluation context a worker runs in, and the evaluator's own
 * code for the pieces of the language a plan's steps run one at a time.
 * Everything the runtime evaluates goes through these calls, so the
 * language has one definition (docs/DESIGN.md 2); the rest of the evaluator
 * is private to src/eval (eval_internal.h).
 *
 * Ownership: a function that yields a value stores an owned reference in
 * *out (left unit on error).  Functions taking `stc_value *args` consume
 * the args, on success and on error alike.  Every function returns 0 or a
 * negative stc error code after recording the error in the context
 * (stc__eval_error). */
#ifndef STC_EVAL_RUNTIME_H
#define STC_EVAL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "stc.h"
#include "value/value.h"

/* Evaluation depth limit.  Depth counts one unit per nested stc__eval_expr
 * activation of a non-leaf node plus one per function application (a
 * top-level fun, a lambda or a lang thread's fun, including smap's per-item
 * application).  The check happens at each application: when the depth on
 * entry has reached EVAL_MAX_DEPTH the error "call depth limit exceeded"
 * (STC_ELIMIT) is raised at the call.  A recursive function typically
 * spends 3-6 units per level; a tail call (below) none: its callee runs at
 * the depth of its caller's body.  The limit is a property of the program only:
 * a runtime that starts evaluating in the middle of a program must set
 * cx->depth to the depth the reference evaluator has there to hit the
 * limit at the same point. */
#define EVAL_MAX_DEPTH 50000

/* Tail calls (docs/LANGUAGE.md 6): a call to a function (by name or
 * through a function value, not a thread) in tail position of a function
 * body (stc__ir_resolve marks it: e->u.call.tail) replaces the running
 * activation instead of nesting in it.  Evaluating it evaluates its callee
 * and args, leaves them pending in cx->tail and returns EVAL_TAIL, which
 * the if, case and let around it pass on; whoever evaluates the function
 * body runs the pending call (stc__eval_tail_run) at the body's depth, and so
 * on while the callee's body ends in a tail call: constant depth and C
 * stack.  So a runtime that evaluates a piece of a function body in tail
 * position must expect EVAL_TAIL from stc__eval_expr (nothing else returns it). */
#define EVAL_TAIL 2
#define EVAL_TAIL_ARGS 6 /* args held in the context itself; more are malloc'd */

typedef struct eval_stream eval_stream; /* a stream program's input and output */

/* A tail call waiting for its trampoline (tail.c): nothing is evaluated
 * between the call leaving it here and the trampoline taking it. */
typedef struct eval_tailcall {
    const ir_fun *fn;    /* the callee; NULL: none pending */
    stc_value fnv;       /* the closure called through (held), or unit */
    ir_loc loc;          /* the call's callee location, for its errors */
    struct eval_frame *fr; /* the frame of the body the call ends (borrowed) */
    stc_value *out;      /* where that body's value goes */
    size_t nargs;
    stc_value args[EVAL_TAIL_ARGS]; /* owned; in `big` (malloc'd) when nargs > EVAL_TAIL_ARGS */
    stc_value *big;
} eval_tailcall;

/* A thread's state during a run: 64 bytes, and main's array of them
 * 64-byte aligned (stc__eval_states_init), so that each thread's state is
 * on a cache line of its own.  The parallel runtime's serial stages write
 * their threads' states at every call, two workers at once at 2+ workers:
 * 48-byte states shared lines, which then moved between the cores at
 * every item (docs/DESIGN.md section 5, "Values on workers"). */
#define EVAL_TSTATE_FIELDS (2 * sizeof(stc_value) + sizeof(void *) + sizeof(bool))
typedef struct eval_tstate {
    stc_value value; /* THREAD_LANG: the current state (owned) */
    stc_value init;  /* keyed thread: a new key's state (owned); value is the key map */
    void *cstate;    /* THREAD_C: def->state_size bytes, initialised; NULL before */
    bool ready;      /* initialised (C: state_init succeeded; free with state_free) */
    char pad[EVAL_TSTATE_FIELDS < 64 ? 64 - EVAL_TSTATE_FIELDS : 1];
} eval_tstate;
_Static_assert(sizeof(eval_tstate) == 64, "a thread's state is one cache line");

/* The per-call context handed to a C thread (public opaque type). */
struct stc_ctx {
    const stc_thread_def *def;
    char *message; /* the first stc_ctx_error message, malloc'd */
    bool error_oom;
};

/* The first error of an evaluation.  Taken out of a context
 * (stc__eval_error_take), its message belongs to the holder (free it). */
typedef struct eval_err {
    int code;           /* 0 = none */
    char *message;      /* malloc'd; NULL if formatting ran out of memory */
    ir_loc loc;
    const char *thread; /* borrowed from the IR (a thread name) or NULL */
    long long item;     /* innermost smap item, -1 outside smap */
    bool key_noted;     /* the message names the key of its keyed thread (keyed.c) */
} eval_err;

/* ---- Where the evaluator offers work to the runtime ----------------------- */

/* A hook declines: the evaluator does the work itself, as without hooks. */
#define EVAL_DECLINED 1

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

/* The points at which the evaluator offers work to the parallel runtime,
 * set only on main's context (stc__eval_run_hooked; a worker's context has
 * none, so what a worker evaluates runs there, sequentially).  Each hook
 * returns 0 having done the work (its value in *out), a negative error code
 * after recording the error in cx, or EVAL_DECLINED.  Every hook but smap
 * is optional (NULL). */
typedef struct eval_runtime_hooks {
    /* Every smap main reaches, after its function (fnv, or the thread index
     * `thread` >= 0) and its items xs are evaluated, both borrowed: *out
     * is the result list. */
    int (*smap)(void *ud, struct eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv,
                const eval_items *xs, stc_value *out);
    /* The streamed smap e of main over the input stream s: pull items
     * with stc__eval_stream_pull, deliver results with stc__eval_stream_push;
     * *count is the items read. */
    int (*stream)(void *ud, struct eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv,
                  const eval_stream *s, long long *count);
    /* Every tuple expression e (in frame fr) main evaluates, to run its
     * items as parallel tasks. */
    int (*tuple)(void *ud, struct eval_ctx *cx, const ir_expr *e, struct eval_frame *fr, stc_value *out);
    /* Every let or let-tuple e (in frame fr) main evaluates, to run it with
     * the independent lets below it as parallel tasks: on 0 it has bound
     * them (eval_let_bind), evaluated the body into *out and unbound them
     * (eval_let_unbind), as the evaluator would; a let in tail position
     * may return EVAL_TAIL from its body (passed on after unbinding). */
    int (*lets)(void *ud, struct eval_ctx *cx, const ir_expr *e, struct eval_frame *fr, stc_value *out);
    void *ud;
} eval_runtime_hooks;

/* ---- Contexts and frames ------------------------------------------------------ */

/* All of an evaluation's state (no globals): several workers evaluate at
 * once, each in a context of its own over the same read-only IR.  The
 * thread states may be shared between contexts as long as each thread's
 * state is used by one context at a time.  The runtime sets depth, item,
 * thread and stack_base itself before each piece of work (they are plain
 * fields so that doing so per item costs nothing). */
typedef struct eval_ctx {
    const ir_program *p;
    const stc_cancel *cancel;        /* NULL, or checked at every call and smap item */
    const eval_runtime_hooks *hooks; /* NULL: everything runs here, sequentially */
    eval_tstate *states;  /* p->nthreads entries */
    int depth;            /* see EVAL_MAX_DEPTH */
    uintptr_t stack_base; /* where the current C stack segment began; 0: set at the
                             next stc__eval_expr.  Reset it to 0 before using the context
                             on another thread (one thread at a time). */
    int seg_level;        /* stack segments in use below this one */
    void **seg_stacks;    /* cached segment stacks (EVAL_SEGMENT_STACK bytes each) */
    int nseg_stacks;
    const char *thread;   /* innermost running thread (name) or NULL: errors name it */
    long long item;       /* innermost smap item index or -1: errors name it */
    eval_err err;
    eval_tailcall tail;   /* the pending tail call (EVAL_TAIL) */
} eval_ctx;

/* A function activation: its slots (stc__ir_resolve's layout: captures, params,
 * binders, then whatever temporaries the runtime adds); fn is NULL for main
 * and init expressions. */
typedef struct eval_frame {
    stc_value *slots;
    const ir_fun *fn;
} eval_frame;

void stc__eval_ctx_init(eval_ctx *cx, const ir_program *p, eval_tstate *states);
/* Frees the recorded error message and the cached stack segments (states
 * are not touched). */
void stc__eval_ctx_fini(eval_ctx *cx);
/* Prepares a worker's context wcx to run work that main's context cx
 * offered: the same thread states and cancel flag. */
void stc__eval_ctx_share(eval_ctx *wcx, const eval_ctx *cx);

/* ---- Errors ------------------------------------------------------------------ */

/* The evaluator's smap loop over xs (borrowed), item by item on cx as the
 * reference runs it, without offering it to the hooks: each item's
 * smaps, tuples and lets are offered as usual when cx has hooks (the
 * runtime runs an outer smap this way so that its inner smaps may run as
 * pipelines).  fnv is borrowed; *out is the result list. */
int stc__eval_smap_seq(struct eval_ctx *cx, ir_loc loc, int thread, stc_value fnv, const eval_items *xs,
                       stc_value *out);

/* Records an error (only the first one counts) at loc with the context's
 * current thread and item; returns code. */
int stc__eval_error(eval_ctx *cx, int code, ir_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Records "out of memory" (STC_ENOMEM) at loc; returns STC_ENOMEM. */
int stc__eval_oom(eval_ctx *cx, ir_loc loc);
/* STC_ECANCELED recorded at loc if the run's cancel flag is raised, else 0. */
int stc__eval_check_cancel(eval_ctx *cx, ir_loc loc);
/* Moves cx's error out; cx is left without one, ready for more work. */
eval_err stc__eval_error_take(eval_ctx *cx);
/* Makes err (taken from another context) cx's error, unless cx has one
 * already (then err's message is freed); returns err's code. */
int stc__eval_error_adopt(eval_ctx *cx, eval_err err);

/* ---- The language, piece by piece --------------------------------------------- */

/* Evaluates e in frame fr.  When e is in tail position of a function
 * body and ends in a tail call, that call is left pending in cx and
 * EVAL_TAIL returned (*out unit), for the caller to run with stc__eval_tail_run
 * or to return in turn. */
int stc__eval_expr(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
/* stc__eval_expr for the runtime's steps and whole bodies: the same
 * result, depth units and errors, with the evaluator's commonest forms
 * (a direct call of a function, thread or builtin, an operator) taken
 * without stc__eval_expr's dispatch when this segment of the stack has
 * room. */
int stc__eval_step(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
/* Runs the tail call pending in cx, and every tail call its callee's body
 * ends in, as the body of the function that made it: at depth cx->depth,
 * which is to be that body's depth. */
int stc__eval_tail_run(eval_ctx *cx, stc_value *out);

/* Calls keyed thread t (src/eval/keyed.c) with the key map *map (the
 * thread's state, or one shard of it: the keys of a shard are those the
 * runtime routes to it) and init, a new key's state (borrowed): runs the
 * thread's function on the key's state, puts the new state at the key,
 * yields the output.  Consumes args. */
int stc__eval_keyed_call(eval_ctx *cx, int t, stc_value *map, stc_value init, size_t nargs, stc_value *args,
                         ir_loc loc, stc_value *out);

/* For the runtime's shards (src/flow/shards.c): the key of a call of
 * keyed thread t, as the call would see it: of its args (consumed,
 * adapted as the call adapts them), or of keyed call e with its args
 * evaluated in fr. */
int stc__eval_keyed_key_of(eval_ctx *cx, int t, size_t nargs, stc_value *args, ir_loc loc, stc_value *key);
int stc__eval_keyed_key(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *key);
/* One element x (consumed) of smap: thread(x), or the function value fnv
 * (borrowed) applied to x, as the evaluator's smap runs it at loc. */
int stc__eval_smap_apply(eval_ctx *cx, int thread, stc_value fnv, stc_value x, ir_loc loc, stc_value *out);

/* Moves nargs args into the k values dst[0..k-1] as a function of k params
 * takes them (docs/LANGUAGE.md 4): k args pass directly; one k-tuple to k >= 2
 * params is destructured; the args of a 1-param function called with
 * k != 1 args are packed into a tuple (unit for none); a 0-param function
 * ignores a unit arg.  what names the callee in the internal error for an
 * impossible count.  Consumes args. */
int stc__eval_adapt_args(eval_ctx *cx, const char *what, size_t k, size_t nargs, stc_value *args,
                    stc_value *dst, ir_loc loc);

/* Stores v (owned) in var's slot; a NULL var (e.g. `_`) drops v.  Always
 * inline: left out of line in eval_pair it cost ~20 instructions a binder. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void eval_bind(eval_frame *fr, const ir_var *var, stc_value v)
{
    if (!var || var->slot < 0) {
        val_release(v);
        return;
    }
    val_release(fr->slots[var->slot]);
    fr->slots[var->slot] = v;
}

/* Ends the scope of binders vars[0..n-1]: their slots go back to unit,
 * dropping the values as early as possible. */
static inline void eval_unbind(eval_frame *fr, ir_var *const *vars, int n)
{
    for (int i = 0; i < n; i++) {
        if (!vars[i] || vars[i]->slot < 0) continue;
        val_release(fr->slots[vars[i]->slot]);
        fr->slots[vars[i]->slot] = (stc_value){.tag = STC_T_UNIT};
    }
}

/* Let e (IR_LET or IR_LETTUPLE) and the value v of its bound expression:
 * eval_let_check says whether v fits the binders (a let-tuple's value is a
 * tuple of its arity; the error otherwise, v borrowed); eval_let_bind binds
 * them in fr (checked the same way; consumes v); eval_let_unbind ends their
 * scope.  Inline: the runtime's steps bind a let-tuple per item. */
int stc__eval_let_error(eval_ctx *cx, const ir_expr *e);
static inline int eval_let_check(eval_ctx *cx, const ir_expr *e, stc_value v)
{
    if (e->kind != IR_LETTUPLE || (v.tag == STC_T_TUPLE && val_seq_len(v) == (size_t)e->u.let.nbinders)) return 0;
    return stc__eval_let_error(cx, e);
}

static inline int eval_let_bind(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value v)
{
    int n = e->u.let.nbinders;
    ir_var *const *vars = e->u.let.binders;
    if (e->kind == IR_LET) {
        eval_bind(fr, n > 0 ? vars[0] : NULL, v);
        return 0;
    }
    int rc = eval_let_check(cx, e, v);
    for (int i = 0; rc == 0 && i < n; i++) eval_bind(fr, vars[i], val_retain(val_seq_items(v)[i]));
    val_release(v);
    return rc;
}

static inline void eval_let_unbind(eval_frame *fr, const ir_expr *e)
{
    eval_unbind(fr, e->u.let.binders, e->u.let.nbinders);
}

/* The branch if e takes on condition c: *then, or the error for a
 * non-bool. */
int stc__eval_if_error(eval_ctx *cx, const ir_expr *e);
static inline int eval_if_test(eval_ctx *cx, const ir_expr *e, stc_value c, bool *then)
{
    if (c.tag != STC_T_BOOL) return stc__eval_if_error(cx, e);
    *then = c.as.b;
    return 0;
}

/* The first alternative of case e that v (borrowed) matches, in *alt, with
 * its binders bound in fr; or the error "no case alternative matches". */
int stc__eval_case_select(eval_ctx *cx, const ir_expr *e, stc_value v, eval_frame *fr, int *alt);

/* Calls C thread t on the input *in (borrowed: the arg, or the tuple of the
 * args) with its state, and checks its output against the thread's
 * declared type; errors name the thread.  The thread's state must be ready,
 * as every state is while main runs (stc__eval_states_init succeeded).  Inline:
 * the runtime's steps call C threads per item; what is not the common case
 * (a failure, a message, an output that is not a scalar of the declared
 * type) goes to stc__eval_call_c_rest with the call's outcome. */
int stc__eval_call_c_rest(eval_ctx *cx, int t, ir_loc loc, int code, stc_ctx *ccx, stc_value v, stc_value *out);
static inline int eval_call_c(eval_ctx *cx, int t, const stc_value *in, ir_loc loc, stc_value *out)
{
    const ir_thread *th = cx->p->threads[t];
    struct stc_ctx ccx = {.def = th->cdef};
    stc_value v = {.tag = STC_T_UNIT};
    int code = th->cdef->fn(cx->states[t].cstate, in, &v, &ccx);
    const ir_type *ty = th->out_type ? stc__ir_type_resolve(th->out_type) : NULL;
    if (code >= 0 && !ccx.message && ty &&
        ((ty->kind == TY_INT && v.tag == STC_T_INT) || (ty->kind == TY_FLOAT && v.tag == STC_T_FLOAT) ||
         (ty->kind == TY_BOOL && v.tag == STC_T_BOOL))) {
        *out = v;
        return 0;
    }
    return stc__eval_call_c_rest(cx, t, loc, code, &ccx, v, out);
}

/* A g x h thread t (output independent of the state, new state independent
 * of the input; flow/compile.c splits its calls in two): with out, the
 * output part on the nargs inputs slots[args[0..nargs-1]] (borrowed);
 * without (out NULL), the state part, which replaces t's state.  As the
 * whole call would do it: the inputs adapted, the depth limit checked,
 * errors naming the thread. */
int stc__eval_call_thread_part(eval_ctx *cx, int t, const stc_value *slots, const int *args, int nargs, ir_loc loc,
                          stc_value *out);

/* ---- Streams (stream.c) ---------------------------------------------------------- */

/* stc__eval_stream_pull reads input item `index`: 1 with the item in *item
 * (owned), 0 at the end, or a negative code with the error recorded in cx
 * (a failing source, an item of the wrong type, a cancel while the source
 * waits).  stc__eval_stream_push hands result `index` (borrowed) to the sink:
 * 0 or a negative code with the error recorded. */
int stc__eval_stream_pull(eval_ctx *cx, const eval_stream *s, long long index, stc_value *item);
int stc__eval_stream_push(eval_ctx *cx, const eval_stream *s, long long index, stc_value v);

#endif
