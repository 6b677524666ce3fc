/* eval.c - the reference evaluator: expressions, patterns, applications.
 *
 * Plain call-by-value, left to right.  Frames follow stc__ir_resolve's layout
 * (captures, then params, then binders); slots hold owned references and
 * are released when their scope ends and again (for safety) when the
 * activation returns.  Threads and thread states are in threads.c,
 * builtins (smap included) in builtins.c. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "util/buf.h"
#include "util/cancel.h"

/* Frames and argument arrays up to this size live on the C stack. */
#define EVAL_SMALL 6

#if defined(__GNUC__)
#define EVAL_NOINLINE __attribute__((noinline))
#else
#define EVAL_NOINLINE
#endif

static const stc_value eval_unit = {.tag = STC_T_UNIT};

/* ---- Context and errors ------------------------------------------------ */

void stc__eval_ctx_init(eval_ctx *cx, const ir_program *p, eval_tstate *states)
{
    memset(cx, 0, sizeof *cx);
    cx->p = p;
    cx->states = states;
    cx->item = -1;
    cx->err.item = -1;
}

static void eval_tail_drop(eval_ctx *cx);

void stc__eval_ctx_fini(eval_ctx *cx)
{
    eval_tail_drop(cx);
    free(cx->err.message);
    cx->err.message = NULL;
    for (int i = 0; i < cx->nseg_stacks; i++) free(cx->seg_stacks[i]);
    free(cx->seg_stacks);
    cx->seg_stacks = NULL;
    cx->nseg_stacks = 0;
}

static int eval_verror(eval_ctx *cx, int code, ir_loc loc, const char *fmt, va_list ap)
{
    if (cx->err.code) return code;
    buf b = BUF_INIT;
    stc__buf_vprintf(&b, fmt, ap);
    cx->err.message = stc__buf_take(&b);
    /* Without memory for the message the error is reported as what it became. */
    cx->err.code = cx->err.message ? code : STC_ENOMEM;
    cx->err.loc = loc;
    cx->err.thread = cx->thread;
    cx->err.item = cx->item;
    return code;
}

int stc__eval_error(eval_ctx *cx, int code, ir_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    eval_verror(cx, code, loc, fmt, ap);
    va_end(ap);
    return code;
}

int stc__eval_check_cancel(eval_ctx *cx, ir_loc loc)
{
    return cancel_raised(cx->cancel) ? stc__eval_error(cx, STC_ECANCELED, loc, "run cancelled") : 0;
}

int stc__eval_oom(eval_ctx *cx, ir_loc loc) { return stc__eval_error(cx, STC_ENOMEM, loc, "out of memory"); }

eval_err stc__eval_error_take(eval_ctx *cx)
{
    eval_err err = cx->err;
    cx->err = (eval_err){.item = -1};
    return err;
}

int stc__eval_error_adopt(eval_ctx *cx, eval_err err)
{
    if (cx->err.code == 0) cx->err = err;
    else free(err.message);
    return err.code;
}

void stc__eval_ctx_share(eval_ctx *wcx, const eval_ctx *cx)
{
    wcx->states = cx->states;
    wcx->cancel = cx->cancel;
}

static void eval_release_n(stc_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++) val_release(v[i]);
}

/* ---- Applications -------------------------------------------------------- */

int stc__eval_adapt_args(eval_ctx *cx, const char *what, size_t k, size_t nargs, stc_value *args,
                    stc_value *dst, ir_loc loc)
{
    if (nargs == k) {
        for (size_t i = 0; i < k; i++) dst[i] = args[i];
        return 0;
    }
    if (k >= 2 && nargs == 1 && args[0].tag == STC_T_TUPLE && val_seq_len(args[0]) == k) {
        for (size_t i = 0; i < k; i++) dst[i] = val_retain(val_seq_items(args[0])[i]);
        val_release(args[0]);
        return 0;
    }
    if (k == 1) { /* a one-param function takes the tuple (or unit) of the args */
        if (nargs == 0) {
            dst[0] = eval_unit;
            return 0;
        }
        stc_value t = stc_value_new_tuple(nargs, args); /* consumes args */
        if (t.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
        dst[0] = t;
        return 0;
    }
    if (k == 0 && nargs == 1 && args[0].tag == STC_T_UNIT) return 0;
    eval_release_n(args, nargs);
    return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: '%s' takes %zu arguments, %zu given",
                      what, k, nargs);
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

static int eval_tail_resume(eval_ctx *cx);
static int eval_if(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

/* How far the C stack is from where this context's segment began. */
static inline uintptr_t eval_stack_used(const eval_ctx *cx, uintptr_t pos)
{
    return pos < cx->stack_base ? cx->stack_base - pos : pos - cx->stack_base;
}

/* A function body: stc__eval_expr, with an if (the commonest body) sent
 * to eval_if without the dispatch when no stack segment is due. */
static inline int eval_body(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->kind == IR_IF && cx->stack_base && eval_stack_used(cx, EVAL_STACK_POS()) <= EVAL_SEGMENT_BYTES) {
        *out = eval_unit;
        cx->depth++;
        int rc = eval_if(cx, e, fr, out);
        cx->depth--;
        return rc;
    }
    return stc__eval_expr(cx, e, fr, out);
}

/* Runs fn's body in its filled frame (the slots are released by the caller),
 * then the tail calls it ends in, in the same frame when they fit. */
static int eval_invoke(eval_ctx *cx, const ir_fun *fn, stc_value *slots, ir_loc loc, stc_value *out)
{
    if (cx->depth >= EVAL_MAX_DEPTH) return stc__eval_error(cx, STC_ELIMIT, loc, "call depth limit exceeded");
    if (cancel_raised(cx->cancel)) return stc__eval_check_cancel(cx, loc);
    eval_frame fr = {slots, fn};
    cx->depth++;
    int rc = eval_body(cx, fn->body, &fr, out);
    if (rc == EVAL_TAIL) rc = eval_tail_resume(cx); /* in fr, into out */
    cx->depth--;
    return rc;
}

/* A frame of n unit slots: `small` when it fits, else malloc'd (NULL: OOM). */
static stc_value *eval_frame_new(stc_value *small, size_t n)
{
    stc_value *slots = n <= EVAL_SMALL ? small : malloc(n * sizeof *slots);
    if (slots)
        for (size_t i = 0; i < n; i++) slots[i] = eval_unit;
    return slots;
}

static void eval_frame_free(stc_value *slots, stc_value *small, size_t n)
{
    eval_release_n(slots, n);
    if (slots != small) free(slots);
}

int stc__eval_call_fun(eval_ctx *cx, const ir_fun *fn, const stc_value *caps, size_t nargs,
                  stc_value *args, ir_loc loc, stc_value *out)
{
    *out = eval_unit;
    size_t nslots = fn->nslots > 0 ? (size_t)fn->nslots : 0;
    size_t ncaps = fn->ncaptures > 0 ? (size_t)fn->ncaptures : 0;
    size_t k = fn->nparams > 0 ? (size_t)fn->nparams : 0;
    if (!eval_direct_layout(fn)) { /* never produced by stc__ir_resolve: refuse, do not guess */
        eval_release_n(args, nargs);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad frame for '%s'", fn->name);
    }
    stc_value small[EVAL_SMALL];
    stc_value *slots = eval_frame_new(small, nslots);
    if (!slots) {
        eval_release_n(args, nargs);
        return stc__eval_oom(cx, loc);
    }
    int rc = stc__eval_adapt_args(cx, fn->name, k, nargs, args, slots + ncaps, loc);
    for (size_t i = 0; caps && i < ncaps; i++) slots[i] = val_retain(caps[i]);
    if (rc == 0) rc = eval_invoke(cx, fn, slots, loc, out);
    eval_frame_free(slots, small, nslots);
    return rc;
}

int stc__eval_apply(eval_ctx *cx, stc_value fnv, size_t nargs, stc_value *args, ir_loc loc,
               stc_value *out)
{
    *out = eval_unit;
    if (fnv.tag != STC_T_FUNC) {
        eval_release_n(args, nargs);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: calling a non-function value");
    }
    val_func *f = val_as_func(fnv);
    return stc__eval_call_fun(cx, f->code, f->caps, nargs, args, loc, out);
}

static int eval_fast_binop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
static int eval_call_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
static int eval_call_thread_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

/* An EVAL_X_BINOP of two int variables or literals whose result needs no
 * check (+ - * and the comparisons): into *out at once, true; no depth
 * unit to count since nothing below can call.  False for anything else,
 * which eval_fast_binop then does. */
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
static inline int eval_quick(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->kind == IR_VAR) {
        *out = val_retain(fr->slots[e->u.var->slot]);
        return 0;
    }
    if (e->xop == EVAL_X_BINOP && eval_leaf_int(e, fr, out)) return 0;
    if (e->xop != EVAL_X_GENERIC) {
        *out = eval_unit;
        cx->depth++;
        int rc = e->xop == EVAL_X_BINOP         ? eval_fast_binop(cx, e, fr, out)
                 : e->xop == EVAL_X_CALL_FUN    ? eval_call_direct(cx, e, fr, out)
                 : e->xop == EVAL_X_CALL_THREAD ? eval_call_thread_direct(cx, e, fr, out)
                                                : stc__eval_builtin_x(cx, e, fr, out);
        cx->depth--;
        return rc;
    }
    return stc__eval_expr(cx, e, fr, out);
}

/* Evaluates the n args of call e into a (n entries); on error releases
 * those already evaluated and sets them back to unit (a may be a frame
 * that the caller frees as a whole). */
static int eval_args_into(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *a)
{
    for (int i = 0; i < e->u.call.nargs; i++) {
        int rc = eval_quick(cx, e->u.call.args[i], fr, &a[i]);
        if (rc) {
            eval_release_n(a, (size_t)i);
            for (int k = 0; k < i; k++) a[k] = eval_unit;
            return rc;
        }
    }
    return 0;
}

/* ---- Tail calls ------------------------------------------------------------
 * A call marked tail (stc__ir_resolve: a call to a function, by name or through
 * a function value, in tail position of its function's body) evaluates its
 * callee and args as any call does, leaves them in cx->tail and returns
 * EVAL_TAIL up through the if, case and let evaluators to the activation
 * running the body (eval_invoke, or the runtime through stc__eval_tail_run),
 * whose loop runs it in place: constant depth and C stack (docs/DESIGN.md
 * 2).  Marks are only on tail chains down from function bodies, so
 * EVAL_TAIL reaches nothing but those activations. */

/* Releases a pending tail call, if any. */
static void eval_tail_drop(eval_ctx *cx)
{
    eval_tailcall *t = &cx->tail;
    if (!t->fn) return;
    eval_release_n(t->big ? t->big : t->args, t->nargs);
    free(t->big);
    val_release(t->fnv);
    *t = (eval_tailcall){.fnv = eval_unit};
}

/* Call e (CALL_FUN or CALL_VALUE) in tail position: its callee and args
 * into cx->tail, with fr and out, which are the frame and the destination
 * of the body e ends (the if, case and let between pass them down as they
 * are); EVAL_TAIL, or an error as eval_call would report it. */
EVAL_NOINLINE static int eval_tail_prepare(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    const ir_program *p = cx->p;
    ir_loc loc = e->u.call.callee_loc;
    int idx = e->u.call.callee.index;
    const ir_fun *fn = NULL;
    stc_value fnv = eval_unit;
    if (e->u.call.kind == CALL_FUN) {
        if (idx >= 0 && idx < p->nfuns) fn = p->funs[idx];
    } else if (e->u.call.kind == CALL_VALUE) { /* held until the callee's frame has its captures */
        fnv = val_retain(fr->slots[e->u.call.callee.var->slot]);
        if (fnv.tag == STC_T_FUNC) fn = val_as_func(fnv)->code;
    }
    if (!fn) {
        val_release(fnv);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: unresolved call");
    }
    /* The args go to a local array first: evaluating them may run other
     * functions' tail calls through cx->tail. */
    size_t n = (size_t)e->u.call.nargs;
    stc_value small[EVAL_TAIL_ARGS];
    stc_value *args = n <= EVAL_TAIL_ARGS ? small : malloc(n * sizeof *args);
    int rc = args ? eval_args_into(cx, e, fr, args) : stc__eval_oom(cx, loc);
    if (rc) {
        if (args != small) free(args);
        val_release(fnv);
        return rc;
    }
    eval_tailcall *t = &cx->tail;
    *t = (eval_tailcall){.fn = fn, .fnv = fnv, .loc = loc, .fr = fr, .out = out, .nargs = n};
    if (args == small) memcpy(t->args, small, n * sizeof *args);
    else t->big = args;
    return EVAL_TAIL;
}

/* The trampoline: runs cx's pending tail call in a frame of cap slots
 * (frame, whose values belong to the caller's activation, which ends here;
 * a callee needing more slots gets a frame of its own), then the tail calls
 * its body ends in, at the depth of the body that made the first one.  As
 * a call would: the args adapted, the captures held, the cancel flag
 * checked; no depth check, the depth being the caller's. */
EVAL_NOINLINE static int eval_tail_loop(eval_ctx *cx, stc_value *frame, size_t cap, stc_value *out)
{
    stc_value *own = NULL, *slots = frame;
    int rc;
    do {
        eval_tailcall t = cx->tail;
        cx->tail = (eval_tailcall){.fnv = eval_unit};
        stc_value *args = t.big ? t.big : t.args;
        const ir_fun *fn = t.fn;
        /* The caller's activation is over: its values go first, so that a
         * value passed on is held once more only by the callee. */
        for (size_t i = 0; i < cap; i++) {
            val_release(slots[i]);
            slots[i] = eval_unit;
        }
        size_t nslots = fn->nslots > 0 ? (size_t)fn->nslots : 0;
        size_t ncaps = fn->ncaptures > 0 ? (size_t)fn->ncaptures : 0;
        size_t k = fn->nparams > 0 ? (size_t)fn->nparams : 0;
        rc = 0;
        if (!eval_direct_layout(fn)) { /* as stc__eval_call_fun */
            rc = stc__eval_error(cx, STC_ERUNTIME, t.loc, "internal error: bad frame for '%s'", fn->name);
        } else if (nslots > cap) {
            stc_value *grown = realloc(own, nslots * sizeof *grown);
            if (!grown) rc = stc__eval_oom(cx, t.loc);
            else {
                own = slots = grown;
                for (size_t i = cap = nslots; i-- > 0;) slots[i] = eval_unit;
            }
        }
        if (rc) eval_release_n(args, t.nargs);
        else rc = stc__eval_adapt_args(cx, fn->name, k, t.nargs, args, slots + ncaps, t.loc);
        free(t.big);
        if (t.fnv.tag == STC_T_FUNC)
            for (size_t i = 0; rc == 0 && i < ncaps; i++) slots[i] = val_retain(val_as_func(t.fnv)->caps[i]);
        val_release(t.fnv);
        if (rc) break;
        if (cancel_raised(cx->cancel)) {
            rc = stc__eval_check_cancel(cx, t.loc);
            break;
        }
        eval_frame fr = {slots, fn};
        rc = stc__eval_expr(cx, fn->body, &fr, out);
    } while (rc == EVAL_TAIL);
    if (own) {
        eval_release_n(own, cap);
        free(own);
    }
    return rc;
}

/* eval_invoke's trampoline: in the frame of the body that made the call
 * (its own values are released first), out of line so that the ordinary
 * call path saves nothing for it. */
EVAL_NOINLINE static int eval_tail_resume(eval_ctx *cx)
{
    eval_frame *fr = cx->tail.fr;
    return eval_tail_loop(cx, fr->slots, fr->fn && fr->fn->nslots > 0 ? (size_t)fr->fn->nslots : 0, cx->tail.out);
}

int stc__eval_tail_run(eval_ctx *cx, stc_value *out)
{
    *out = eval_unit;
    if (!cx->tail.fn) return stc__eval_error(cx, STC_ERUNTIME, cx->tail.loc, "internal error: no tail call pending");
    stc_value small[EVAL_SMALL];
    for (size_t i = 0; i < EVAL_SMALL; i++) small[i] = eval_unit;
    int rc = eval_tail_loop(cx, small, EVAL_SMALL, out);
    eval_release_n(small, EVAL_SMALL);
    return rc;
}

/* The general call path: args into an array, then stc__eval_call_thread /
 * stc__eval_call_fun (which adapt the argument count).  Kept out of line so
 * that its array does not weigh on the recursive path. */
EVAL_NOINLINE static int eval_call_general(eval_ctx *cx, const ir_expr *e, eval_frame *fr,
                                           const ir_fun *fn, const stc_value *caps, stc_value *out)
{
    ir_loc loc = e->u.call.callee_loc;
    size_t n = (size_t)e->u.call.nargs;
    stc_value small[EVAL_SMALL];
    stc_value *args = n <= EVAL_SMALL ? small : malloc(n * sizeof *args);
    if (!args) return stc__eval_oom(cx, loc);
    int rc = eval_args_into(cx, e, fr, args);
    if (rc == 0) {
        if (e->u.call.kind == CALL_THREAD) rc = stc__eval_call_thread(cx, e->u.call.callee.index, n, args, loc, out);
        else rc = stc__eval_call_fun(cx, fn, caps, n, args, loc, out);
    }
    if (args != small) free(args);
    return rc;
}

/* Calls with exactly as many args as params (the common case) evaluate
 * them straight into the callee's frame; a lang thread's state goes into
 * the last param slot after the args are evaluated (they may call the
 * same thread).  A thread call is never a tail call: it returns to store
 * the thread's new state. */
EVAL_NOINLINE static int eval_call(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->u.call.tail) return eval_tail_prepare(cx, e, fr, out);
    const ir_program *p = cx->p;
    ir_loc loc = e->u.call.callee_loc;
    int idx = e->u.call.callee.index;
    const ir_fun *fn = NULL;
    const stc_value *caps = NULL;
    stc_value callee = eval_unit;
    int thread = -1;
    switch (e->u.call.kind) {
    case CALL_FUN:
        if (idx >= 0 && idx < p->nfuns) fn = p->funs[idx];
        break;
    case CALL_VALUE: /* held across the call (the closure may be the slot's only reference) */
        callee = val_retain(fr->slots[e->u.call.callee.var->slot]);
        if (callee.tag == STC_T_FUNC) {
            fn = val_as_func(callee)->code;
            caps = val_as_func(callee)->caps;
        }
        break;
    case CALL_THREAD:
        if (idx < 0 || idx >= p->nthreads || !cx->states) break;
        thread = idx;
        if (p->threads[idx]->kind != THREAD_LANG || p->threads[idx]->keyed)
            return eval_call_general(cx, e, fr, NULL, NULL, out); /* keyed: src/eval/keyed.c */
        if (p->threads[idx]->fun >= 0 && p->threads[idx]->fun < p->nfuns) fn = p->funs[p->threads[idx]->fun];
        break;
    default: break;
    }
    if (!fn) {
        val_release(callee);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: unresolved call");
    }
    size_t nslots = fn->nslots > 0 ? (size_t)fn->nslots : 0;
    size_t ncaps = fn->ncaptures > 0 ? (size_t)fn->ncaptures : 0;
    int rc;
    if (e->u.call.nargs != fn->nparams - (thread >= 0) || !eval_direct_layout(fn)) {
        rc = eval_call_general(cx, e, fr, fn, caps, out);
    } else {
        stc_value small[EVAL_SMALL];
        stc_value *slots = eval_frame_new(small, nslots);
        if (!slots) {
            val_release(callee);
            return stc__eval_oom(cx, loc);
        }
        rc = eval_args_into(cx, e, fr, slots + ncaps);
        if (rc == 0 && thread < 0) {
            for (size_t i = 0; caps && i < ncaps; i++) slots[i] = val_retain(caps[i]);
            rc = eval_invoke(cx, fn, slots, loc, out);
        } else if (rc == 0) {
            const char *saved = cx->thread;
            cx->thread = p->threads[thread]->name;
            slots[fn->nparams - 1] = stc__eval_state_take(cx, thread);
            stc_value pair;
            rc = eval_invoke(cx, fn, slots, loc, &pair);
            if (rc == 0) rc = stc__eval_thread_result(cx, thread, pair, loc, out);
            cx->thread = saved;
        }
        eval_frame_free(slots, small, nslots);
    }
    val_release(callee);
    return rc;
}

/* EVAL_X_CALL_FUN (eval_internal.h): eval_call's path for a known
 * function, with the checks stc__eval_prepare made once left out. */
EVAL_NOINLINE static int eval_call_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    const ir_fun *fn = cx->p->funs[e->u.call.callee.index];
    size_t nslots = (size_t)fn->nslots;
    stc_value small[EVAL_SMALL];
    stc_value *slots = eval_frame_new(small, nslots);
    if (!slots) return stc__eval_oom(cx, e->u.call.callee_loc);
    int rc = 0;
    for (int i = 0; rc == 0 && i < e->u.call.nargs; i++) rc = eval_quick(cx, e->u.call.args[i], fr, &slots[i]);
    if (rc == 0) rc = eval_invoke(cx, fn, slots, e->u.call.callee_loc, out);
    eval_frame_free(slots, small, nslots);
    return rc;
}

/* The pair an STCLang thread's function returns, as its two items: *o
 * the output, *s the state, evaluated as stc__eval_expr would evaluate e
 * (the same depth units, order, binders and errors) without building the
 * tuple, down lets, ifs and cases to a 2-tuple.  Any other e (or a stack
 * segment due) is evaluated whole: then *o is the pair and *s INVALID, or
 * EVAL_TAIL comes back with the pair due in *o.  Main's context (hooks)
 * never comes here: its lets and tuples are offered to the runtime. */
static int eval_pair(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *o, stc_value *s)
{
    *o = eval_unit;
    *s = (stc_value){.tag = STC_T_INVALID};
    uintptr_t pos = EVAL_STACK_POS();
    bool far = cx->stack_base && (pos < cx->stack_base ? cx->stack_base - pos : pos - cx->stack_base) >
                                     EVAL_SEGMENT_BYTES / 2;
    if (far || (e->kind == IR_TUPLE ? e->u.agg.nitems != 2
                                    : e->kind != IR_LET && e->kind != IR_LETTUPLE && e->kind != IR_IF &&
                                          e->kind != IR_CASE))
        return stc__eval_expr(cx, e, fr, o);
    int rc;
    stc_value v;
    cx->depth++;
    switch (e->kind) {
    case IR_TUPLE:
        if ((rc = eval_quick(cx, e->u.agg.items[0], fr, o))) break;
        if ((rc = eval_quick(cx, e->u.agg.items[1], fr, s))) {
            val_release(*o);
            *o = eval_unit;
            *s = (stc_value){.tag = STC_T_INVALID};
        }
        break;
    case IR_LET:
    case IR_LETTUPLE:
        if ((rc = eval_quick(cx, e->a, fr, &v))) break;
        if ((rc = eval_let_bind(cx, e, fr, v))) break;
        rc = eval_pair(cx, e->b, fr, o, s);
        eval_let_unbind(fr, e);
        break;
    case IR_IF: {
        bool then = false;
        if ((rc = eval_quick(cx, e->a, fr, &v))) break;
        if ((rc = eval_if_test(cx, e, v, &then))) {
            val_release(v);
            break;
        }
        rc = eval_pair(cx, then ? e->b : e->c, fr, o, s);
        break;
    }
    default: { /* IR_CASE */
        bool owned;
        int i;
        if ((rc = eval_operand(cx, e->a, fr, &v, &owned))) break;
        rc = stc__eval_case_select(cx, e, v, fr, &i);
        if (owned) val_release(v);
        if (rc) break;
        const ir_alt *alt = &e->u.cas.alts[i];
        rc = eval_pair(cx, alt->body, fr, o, s);
        eval_unbind(fr, alt->vars, alt->nvars);
        break;
    }
    }
    cx->depth--;
    return rc;
}

/* EVAL_X_CALL_THREAD (eval_internal.h): eval_call's thread path, the
 * function's body evaluated by eval_pair. */
EVAL_NOINLINE static int eval_call_thread_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (cx->hooks || !cx->states) return eval_call(cx, e, fr, out);
    const ir_program *p = cx->p;
    int t = e->u.call.callee.index;
    const ir_fun *fn = p->funs[p->threads[t]->fun];
    ir_loc loc = e->u.call.callee_loc;
    size_t nslots = (size_t)fn->nslots;
    stc_value small[EVAL_SMALL];
    stc_value *slots = eval_frame_new(small, nslots);
    if (!slots) return stc__eval_oom(cx, loc);
    int rc = 0;
    for (int i = 0; rc == 0 && i < e->u.call.nargs; i++) rc = eval_quick(cx, e->u.call.args[i], fr, &slots[i]);
    if (rc == 0) {
        const char *saved = cx->thread;
        cx->thread = p->threads[t]->name;
        slots[fn->nparams - 1] = stc__eval_state_take(cx, t);
        stc_value o = eval_unit, st = eval_unit;
        /* eval_invoke, with eval_pair for the body */
        if (cx->depth >= EVAL_MAX_DEPTH) rc = stc__eval_error(cx, STC_ELIMIT, loc, "call depth limit exceeded");
        else if (cancel_raised(cx->cancel)) rc = stc__eval_check_cancel(cx, loc);
        else {
            eval_frame cfr = {slots, fn};
            cx->depth++;
            rc = eval_pair(cx, fn->body, &cfr, &o, &st);
            if (rc == EVAL_TAIL) rc = eval_tail_resume(cx); /* in cfr, into o */
            cx->depth--;
        }
        if (rc == 0 && st.tag == STC_T_INVALID) rc = stc__eval_thread_result(cx, t, o, loc, out);
        else if (rc == 0) stc__eval_thread_store(cx, t, o, st, out);
        cx->thread = saved;
    }
    eval_frame_free(slots, small, nslots);
    return rc;
}

/* ---- Operators ----------------------------------------------------------- */

static int eval_arith(eval_ctx *cx, const ir_expr *e, stc_value a, stc_value b, stc_value *out)
{
    ir_binop op = e->u.binop;
    if (a.tag == STC_T_INT && b.tag == STC_T_INT) {
        /* Wrapping arithmetic through uint64_t: never signed overflow. */
        uint64_t x = (uint64_t)a.as.i, y = (uint64_t)b.as.i;
        int64_t r;
        switch (op) {
        case OP_ADD: r = (int64_t)(x + y); break;
        case OP_SUB: r = (int64_t)(x - y); break;
        case OP_MUL: r = (int64_t)(x * y); break;
        case OP_DIV:
            if (b.as.i == 0) return stc__eval_error(cx, STC_ERUNTIME, e->loc, "division by zero");
            r = b.as.i == -1 ? (int64_t)(0 - x) : a.as.i / b.as.i;
            break;
        default: /* OP_MOD */
            if (b.as.i == 0) return stc__eval_error(cx, STC_ERUNTIME, e->loc, "modulo by zero");
            r = b.as.i == -1 ? 0 : a.as.i % b.as.i;
            break;
        }
        *out = (stc_value){.tag = STC_T_INT, .as.i = r};
        return 0;
    }
    if (a.tag == STC_T_FLOAT && b.tag == STC_T_FLOAT) {
        double x = a.as.f, y = b.as.f, r;
        switch (op) {
        case OP_ADD: r = x + y; break;
        case OP_SUB: r = x - y; break;
        case OP_MUL: r = x * y; break;
        case OP_DIV: r = x / y; break;
        default: r = fmod(x, y); break;
        }
        *out = (stc_value){.tag = STC_T_FLOAT, .as.f = r};
        return 0;
    }
    return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: bad operands for '%s'",
                      stc__ir_binop_name(op));
}

static int eval_compare(eval_ctx *cx, const ir_expr *e, stc_value a, stc_value b, stc_value *out)
{
    ir_binop op = e->u.binop;
    bool r;
    if (op == OP_EQ || op == OP_NE) {
        r = stc_value_equal(a, b) == (op == OP_EQ);
    } else if (a.tag == STC_T_FLOAT && b.tag == STC_T_FLOAT) { /* IEEE: NaN compares false */
        double x = a.as.f, y = b.as.f;
        r = op == OP_LT ? x < y : op == OP_LE ? x <= y : op == OP_GT ? x > y : x >= y;
    } else if (a.tag == b.tag && (a.tag == STC_T_INT || a.tag == STC_T_STR)) {
        int c = stc__val_compare(a, b);
        r = op == OP_LT ? c < 0 : op == OP_LE ? c <= 0 : op == OP_GT ? c > 0 : c >= 0;
    } else {
        return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: bad operands for '%s'",
                          stc__ir_binop_name(op));
    }
    *out = stc_value_bool(r);
    return 0;
}

/* Binop e whose left operand is a (owned when own_a); consumes a. */
static int eval_binop_with(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value a, bool own_a,
                           stc_value *out)
{
    ir_binop op = e->u.binop;
    stc_value b;
    bool own_b;
    int rc;
    if (op == OP_AND || op == OP_OR) { /* bools: nothing to count */
        if (a.tag != STC_T_BOOL) {
            if (own_a) val_release(a);
            return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: '%s' on a non-bool",
                              stc__ir_binop_name(op));
        }
        if (a.as.b == (op == OP_OR)) { /* short-circuit */
            *out = a;
            return 0;
        }
        rc = stc__eval_expr(cx, e->b, fr, &b);
        if (rc) return rc;
        if (b.tag != STC_T_BOOL) {
            val_release(b);
            return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: '%s' on a non-bool",
                              stc__ir_binop_name(op));
        }
        *out = b;
        return 0;
    }
    rc = eval_operand(cx, e->b, fr, &b, &own_b);
    if (rc) {
        if (own_a) val_release(a);
        return rc;
    }
    if (op >= OP_ADD) rc = eval_arith(cx, e, a, b, out);
    else rc = eval_compare(cx, e, a, b, out);
    if (own_a) val_release(a);
    if (own_b) val_release(b);
    return rc;
}

/* A chain a + b + c + ... (e->a is a binop) is one level, however long
 * (docs/LANGUAGE.md section 6): a loop folds it left to right, every
 * operand one depth unit below e (ir_chain in ir.h). The runtime compiles
 * chains with the same depths (src/flow/compile.c). */
EVAL_NOINLINE static int eval_chain(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    ir_chain ch;
    if (!stc__ir_chain_init(&ch, e)) {
        stc__ir_chain_free(&ch);
        return stc__eval_oom(cx, e->loc);
    }
    stc_value acc;
    bool own;
    int rc = eval_operand(cx, ch.nodes[ch.n - 1]->a, fr, &acc, &own);
    for (size_t i = ch.n; rc == 0 && i-- > 0;) {
        stc_value r = eval_unit;
        rc = eval_binop_with(cx, ch.nodes[i], fr, acc, own, &r);
        acc = r;
        own = true;
    }
    stc__ir_chain_free(&ch);
    if (rc == 0) *out = own ? acc : val_retain(acc);
    return rc;
}

EVAL_NOINLINE static int eval_binop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->a->kind == IR_BINOP) return eval_chain(cx, e, fr, out);
    stc_value a;
    bool own_a;
    int rc = eval_operand(cx, e->a, fr, &a, &own_a);
    if (rc) return rc;
    return eval_binop_with(cx, e, fr, a, own_a, out);
}

/* An EVAL_X_BINOP operand: variables and literals read in place, a
 * specialised left spine inline (stc__eval_prepare bounds it; the depths
 * are eval_chain's: every operand of the spine one unit below the top),
 * anything else evaluated (*owned). */
static inline int eval_fast_operand(eval_ctx *cx, const ir_expr *o, eval_frame *fr, bool spine,
                                    stc_value *v, bool *owned)
{
    *owned = false;
    if (o->kind == IR_VAR) { *v = fr->slots[o->u.var->slot]; return 0; }
    if (o->kind == IR_LIT) { *v = o->u.lit; return 0; }
    if (spine && o->xop == EVAL_X_BINOP) {
        if (eval_leaf_int(o, fr, v)) return 0;
        *owned = true;
        return eval_fast_binop(cx, o, fr, v);
    }
    *owned = true;
    if (o->xop == EVAL_X_CALL_FUN) {
        *v = eval_unit;
        cx->depth++;
        int rc = eval_call_direct(cx, o, fr, v);
        cx->depth--;
        return rc;
    }
    if (o->xop == EVAL_X_BUILTIN && eval_stack_room(cx, EVAL_STACK_POS())) {
        *v = eval_unit;
        cx->depth++;
        int rc = stc__eval_builtin_x(cx, o, fr, v);
        cx->depth--;
        return rc;
    }
    return stc__eval_expr(cx, o, fr, v);
}

/* && || of EVAL_X_BINOP, left operand a evaluated: as eval_binop_with. */
EVAL_NOINLINE static int eval_fast_logic(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value a, bool own_a,
                                         stc_value *out)
{
    ir_binop op = e->u.binop;
    stc_value b;
    int rc;
    if (a.tag != STC_T_BOOL) {
        if (own_a) val_release(a);
        return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: '%s' on a non-bool",
                               stc__ir_binop_name(op));
    }
    if (a.as.b == (op == OP_OR)) {
        *out = a;
        return 0;
    }
    if ((rc = stc__eval_expr(cx, e->b, fr, &b))) return rc;
    if (b.tag != STC_T_BOOL) {
        val_release(b);
        return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: '%s' on a non-bool",
                               stc__ir_binop_name(op));
    }
    *out = b;
    return 0;
}

/* EVAL_X_BINOP (eval_internal.h): int and float operands computed here,
 * as eval_arith and eval_compare compute them; the rest (division by 0
 * or -1, == on floats, strings, a wrong operand) by those two. */
static int eval_fast_binop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value a, b;
    bool own_a, own_b;
    int rc = eval_fast_operand(cx, e->a, fr, true, &a, &own_a);
    if (rc) return rc;
    ir_binop op = e->u.binop;
    if (op == OP_AND || op == OP_OR) return eval_fast_logic(cx, e, fr, a, own_a, out);
    if ((rc = eval_fast_operand(cx, e->b, fr, false, &b, &own_b))) {
        if (own_a) val_release(a);
        return rc;
    }
    if (a.tag == STC_T_INT && b.tag == STC_T_INT) { /* nothing to release */
        int64_t x = a.as.i, y = b.as.i;
        uint64_t ux = (uint64_t)x, uy = (uint64_t)y; /* wrapping, as eval_arith */
        switch (op) {
        case OP_ADD: *out = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)(ux + uy)}; return 0;
        case OP_SUB: *out = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)(ux - uy)}; return 0;
        case OP_MUL: *out = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)(ux * uy)}; return 0;
        case OP_DIV:
            if (y == 0 || y == -1) break;
            *out = (stc_value){.tag = STC_T_INT, .as.i = x / y};
            return 0;
        case OP_MOD:
            if (y == 0 || y == -1) break;
            *out = (stc_value){.tag = STC_T_INT, .as.i = x % y};
            return 0;
        case OP_EQ: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x == y}; return 0;
        case OP_NE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x != y}; return 0;
        case OP_LT: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x < y}; return 0;
        case OP_LE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x <= y}; return 0;
        case OP_GT: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x > y}; return 0;
        case OP_GE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x >= y}; return 0;
        default: break;
        }
    } else if (a.tag == STC_T_FLOAT && b.tag == STC_T_FLOAT) {
        double x = a.as.f, y = b.as.f;
        switch (op) {
        case OP_ADD: *out = (stc_value){.tag = STC_T_FLOAT, .as.f = x + y}; return 0;
        case OP_SUB: *out = (stc_value){.tag = STC_T_FLOAT, .as.f = x - y}; return 0;
        case OP_MUL: *out = (stc_value){.tag = STC_T_FLOAT, .as.f = x * y}; return 0;
        case OP_DIV: *out = (stc_value){.tag = STC_T_FLOAT, .as.f = x / y}; return 0;
        case OP_LT: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x < y}; return 0;
        case OP_LE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x <= y}; return 0;
        case OP_GT: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x > y}; return 0;
        case OP_GE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = x >= y}; return 0;
        default: break;
        }
    }
    rc = op >= OP_ADD ? eval_arith(cx, e, a, b, out) : eval_compare(cx, e, a, b, out);
    if (own_a) val_release(a);
    if (own_b) val_release(b);
    return rc;
}

EVAL_NOINLINE static int eval_unop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value a;
    int rc = stc__eval_expr(cx, e->a, fr, &a);
    if (rc) return rc;
    if (e->u.unop == OP_NOT && a.tag == STC_T_BOOL) *out = stc_value_bool(!a.as.b);
    else if (e->u.unop == OP_NEG && a.tag == STC_T_INT) *out = stc_value_int((int64_t)(0 - (uint64_t)a.as.i));
    else if (e->u.unop == OP_NEG && a.tag == STC_T_FLOAT) *out = stc_value_float(-a.as.f);
    else {
        val_release(a);
        return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: bad operand for '%s'",
                          stc__ir_unop_name(e->u.unop));
    }
    return 0;
}

/* ---- Binders and patterns ------------------------------------------------ */

int stc__eval_let_error(eval_ctx *cx, const ir_expr *e)
{
    return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: let-tuple arity mismatch");
}

EVAL_NOINLINE static int eval_let(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (cx->hooks && cx->hooks->lets) { /* independent lets as parallel tasks */
        int rc = cx->hooks->lets(cx->hooks->ud, cx, e, fr, out);
        if (rc != EVAL_DECLINED) return rc;
    }
    stc_value v;
    int rc = eval_quick(cx, e->a, fr, &v);
    if (rc) return rc;
    if ((rc = eval_let_bind(cx, e, fr, v))) return rc;
    rc = eval_quick(cx, e->b, fr, out);
    eval_let_unbind(fr, e);
    return rc;
}

/* Whether v matches alt; on a match its binders are bound. */
static bool eval_case_match(const ir_alt *alt, stc_value v, eval_frame *fr)
{
    switch (alt->pat) {
    case PAT_WILD: return true;
    case PAT_LIT: /* ints (the common literal pattern) without the call */
        if (v.tag == STC_T_INT && alt->lit.tag == STC_T_INT) return v.as.i == alt->lit.as.i;
        return stc_value_equal(v, alt->lit);
    case PAT_VAR:
        eval_bind(fr, alt->nvars > 0 ? alt->vars[0] : NULL, val_retain(v));
        return true;
    case PAT_INL:
    case PAT_INR:
        if (v.tag != (alt->pat == PAT_INL ? STC_T_INL : STC_T_INR)) return false;
        eval_bind(fr, alt->nvars > 0 ? alt->vars[0] : NULL, val_retain(val_box_get(v)));
        return true;
    case PAT_TUPLE:
        if (v.tag != STC_T_TUPLE || val_seq_len(v) != (size_t)alt->nvars) return false;
        for (int i = 0; i < alt->nvars; i++)
            eval_bind(fr, alt->vars[i], val_retain(val_seq_items(v)[i]));
        return true;
    }
    return false;
}

int stc__eval_case_select(eval_ctx *cx, const ir_expr *e, stc_value v, eval_frame *fr, int *alt)
{
    for (int i = 0; i < e->u.cas.nalts; i++) {
        if (eval_case_match(&e->u.cas.alts[i], v, fr)) {
            *alt = i;
            return 0;
        }
    }
    /* Quote a long value only in part: its text may be huge. */
    buf b = BUF_INIT;
    stc__val_print_text_brief(&b, v, VAL_PRINT_BRIEF);
    char *text = stc__buf_take(&b);
    if (!text) return stc__eval_oom(cx, e->loc);
    int rc = stc__eval_error(cx, STC_ERUNTIME, e->loc, "no case alternative matches %s", text);
    free(text);
    return rc;
}

EVAL_NOINLINE static int eval_case(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value v;
    bool owned;
    int rc = eval_operand(cx, e->a, fr, &v, &owned);
    if (rc) return rc;
    int i;
    rc = stc__eval_case_select(cx, e, v, fr, &i);
    if (owned) val_release(v);
    if (rc) return rc;
    const ir_alt *alt = &e->u.cas.alts[i];
    rc = eval_quick(cx, alt->body, fr, out);
    eval_unbind(fr, alt->vars, alt->nvars);
    return rc;
}

/* ---- Constructors -------------------------------------------------------- */

EVAL_NOINLINE static int eval_seq(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->kind == IR_TUPLE && cx->hooks && cx->hooks->tuple) {
        int rc = cx->hooks->tuple(cx->hooks->ud, cx, e, fr, out);
        if (rc != EVAL_DECLINED) return rc;
    }
    size_t n = (size_t)e->u.agg.nitems;
    stc_value s = stc__val_seq_alloc(e->kind == IR_LIST ? STC_T_LIST : STC_T_TUPLE, n);
    if (s.tag == STC_T_INVALID) return stc__eval_oom(cx, e->loc);
    stc_value *items = val_seq_items(s);
    for (size_t i = 0; i < n; i++) {
        int rc = eval_quick(cx, e->u.agg.items[i], fr, &items[i]);
        if (rc) {
            val_release(s); /* the remaining items are unit */
            return rc;
        }
    }
    *out = s;
    return 0;
}

EVAL_NOINLINE static int eval_lambda(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    const ir_fun *fn = e->u.fn;
    size_t n = fn->ncaptures > 0 ? (size_t)fn->ncaptures : 0;
    stc_value c = stc__val_func_alloc(fn, n);
    if (c.tag == STC_T_INVALID) return stc__eval_oom(cx, e->loc);
    for (size_t i = 0; i < n; i++) val_as_func(c)->caps[i] = val_retain(fr->slots[fn->captures[i]->slot]);
    *out = c;
    return 0;
}

EVAL_NOINLINE static int eval_box(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value v;
    int rc = eval_quick(cx, e->a, fr, &v);
    if (rc) return rc;
    v = e->kind == IR_INL ? stc_value_new_inl(v) : stc_value_new_inr(v);
    if (v.tag == STC_T_INVALID) return stc__eval_oom(cx, e->loc);
    *out = v;
    return 0;
}

int stc__eval_if_error(eval_ctx *cx, const ir_expr *e)
{
    return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: 'if' on a non-bool");
}

EVAL_NOINLINE static int eval_if(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value c;
    bool then = false;
    int rc = eval_quick(cx, e->a, fr, &c); /* an if on a compare: eval_fast_binop at once */
    if (rc) return rc;
    if ((rc = eval_if_test(cx, e, c, &then))) {
        val_release(c);
        return rc;
    }
    return eval_quick(cx, then ? e->b : e->c, fr, out);
}

/* ---- C stack segments ------------------------------------------------------
 * Deep evaluation continues on a fresh stack: when the current segment has
 * used EVAL_SEGMENT_BYTES, the expression is evaluated on a new thread with
 * a stack of EVAL_SEGMENT_STACK bytes while the caller waits (joined at once:
 * evaluation stays sequential).  Segments are invisible to the program: the
 * depth limit alone decides where deep recursion stops, and the evaluator
 * is safe on any thread with EVAL_SEGMENT_BYTES + a margin of free stack,
 * whatever the compiler's frame sizes (ASan at -O0 makes them 10x bigger). */

typedef struct eval_segment {
    eval_ctx *cx;
    const ir_expr *e;
    eval_frame *fr;
    stc_value *out;
    int rc;
    bool plain_counts; /* the parent's counting mode (value.h) */
} eval_segment;

static void *eval_segment_main(void *arg)
{
    eval_segment *sg = arg;
    /* The parent waits in pthread_join: its values are this thread's now. */
    stc__val_counts_set_plain(sg->plain_counts);
    sg->rc = stc__eval_expr(sg->cx, sg->e, sg->fr, sg->out); /* sets the new stack base */
    return NULL;
}

/* The stack for segment level `level`: allocated once per context and
 * reused (a fresh thread stack would be page-faulted in again each time). */
static void *eval_segment_stack(eval_ctx *cx, int level)
{
    if (level < cx->nseg_stacks) return cx->seg_stacks[level];
    if (level != cx->nseg_stacks) return NULL;
    void **grown = realloc(cx->seg_stacks, (size_t)(level + 1) * sizeof *grown);
    if (!grown) return NULL;
    cx->seg_stacks = grown;
    void *stack = NULL;
    if (posix_memalign(&stack, 4096, EVAL_SEGMENT_STACK) != 0) return NULL;
    cx->seg_stacks[cx->nseg_stacks++] = stack;
    return stack;
}

EVAL_NOINLINE static int eval_on_new_stack(eval_ctx *cx, const ir_expr *e, eval_frame *fr, 
                                           stc_value *out)
{
    eval_segment sg = {cx, e, fr, out, 0, stc__val_counts_plain};
    void *stack = eval_segment_stack(cx, cx->seg_level);
    pthread_attr_t attr;
    pthread_t th;
    if (!stack || pthread_attr_init(&attr) != 0) return stc__eval_oom(cx, e->loc);
    int err = pthread_attr_setstack(&attr, stack, EVAL_SEGMENT_STACK);
    uintptr_t saved = cx->stack_base;
    cx->stack_base = 0;
    cx->seg_level++;
    if (err == 0) err = pthread_create(&th, &attr, eval_segment_main, &sg);
    pthread_attr_destroy(&attr);
    if (err == 0) pthread_join(th, NULL);
    cx->seg_level--;
    cx->stack_base = saved;
    if (err != 0) return stc__eval_error(cx, STC_ENOMEM, e->loc, "out of memory (cannot grow the stack)");
    return sg.rc;
}

/* ---- Dispatch -------------------------------------------------------------- */

int stc__eval_expr(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    *out = eval_unit;
    switch (e->kind) { /* leaves first: they do not recurse */
    case IR_LIT: *out = val_retain(e->u.lit); return 0;
    case IR_VAR: *out = val_retain(fr->slots[e->u.var->slot]); return 0;
    case IR_FUNREF:
        if (e->u.index < 0 || e->u.index >= cx->p->nfuns) break;
        *out = stc__val_func_alloc(cx->p->funs[e->u.index], 0);
        return out->tag == STC_T_INVALID ? stc__eval_oom(cx, e->loc) : 0;
    case IR_LAMBDA: return eval_lambda(cx, e, fr, out);
    default: break;
    }
    uintptr_t pos = EVAL_STACK_POS();
    if (!cx->stack_base) cx->stack_base = pos;
    if ((pos < cx->stack_base ? cx->stack_base - pos : pos - cx->stack_base) > EVAL_SEGMENT_BYTES)
        return eval_on_new_stack(cx, e, fr, out);
    int rc;
    cx->depth++;
    switch (e->kind) {
    case IR_LET:
    case IR_LETTUPLE: rc = eval_let(cx, e, fr, out); break;
    case IR_IF: rc = eval_if(cx, e, fr, out); break;
    case IR_CASE: rc = eval_case(cx, e, fr, out); break;
    case IR_INL:
    case IR_INR: rc = eval_box(cx, e, fr, out); break;
    case IR_BINOP:
        rc = e->xop == EVAL_X_BINOP ? eval_fast_binop(cx, e, fr, out) : eval_binop(cx, e, fr, out);
        break;
    case IR_UNOP: rc = eval_unop(cx, e, fr, out); break;
    case IR_CALL: /* builtins apart: eval_call's frame would weigh on smap's recursion */
        rc = e->xop == EVAL_X_CALL_FUN          ? eval_call_direct(cx, e, fr, out)
             : e->xop == EVAL_X_CALL_THREAD   ? eval_call_thread_direct(cx, e, fr, out)
             : e->xop == EVAL_X_BUILTIN       ? stc__eval_builtin_x(cx, e, fr, out)
             : e->u.call.kind == CALL_BUILTIN ? stc__eval_builtin(cx, e, fr, out)
                                              : eval_call(cx, e, fr, out);
        break;
    case IR_TUPLE:
    case IR_LIST: rc = eval_seq(cx, e, fr, out); break;
    default: /* IR_NAME, IR_THREADREF outside smap, bad indices: a malformed IR */
        rc = stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: unexpected expression kind %d",
                        (int)e->kind);
        break;
    }
    cx->depth--;
    return rc;
}
