/* calls.c - the evaluator's applications: frames, calls of functions,
 * closures and threads (the general path and the direct forms
 * EVAL_X_CALL_FUN and EVAL_X_CALL_THREAD), a thread's pair without the
 * tuple (eval_pair).  Tail calls are in tail.c. */
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "util/cancel.h"

static const stc_value eval_unit = {.tag = STC_T_UNIT};

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

/* How far the C stack is from where this context's segment began. */
static inline uintptr_t eval_stack_used(const eval_ctx *cx, uintptr_t pos)
{
    return pos < cx->stack_base ? cx->stack_base - pos : pos - cx->stack_base;
}

/* A function body: stc__eval_expr, with an if (the commonest body) sent
 * to stc__eval_if without the dispatch when no stack segment is due. */
static inline int eval_body(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->kind == IR_IF && cx->stack_base && eval_stack_used(cx, EVAL_STACK_POS()) <= EVAL_SEGMENT_BYTES) {
        *out = eval_unit;
        cx->depth++;
        int rc = stc__eval_if(cx, e, fr, out);
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
    if (rc == EVAL_TAIL) rc = stc__eval_tail_resume(cx); /* in fr, into out */
    cx->depth--;
    return rc;
}

/* A frame of n unit slots: `small` when it fits, else malloc'd (NULL: OOM). */
static stc_value *eval_frame_new(stc_value *small, size_t n)
{
    stc_value *slots = n <= EVAL_FRAME_SMALL ? small : malloc(n * sizeof *slots);
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
    stc_value small[EVAL_FRAME_SMALL];
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

/* Evaluates the n args of call e into a (n entries); on error releases
 * those already evaluated and sets them back to unit (a may be a frame
 * that the caller frees as a whole). */
int stc__eval_args_into(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *a)
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

/* The general call path: args into an array, then stc__eval_call_thread /
 * stc__eval_call_fun (which adapt the argument count).  Kept out of line so
 * that its array does not weigh on the recursive path. */
EVAL_NOINLINE static int eval_call_general(eval_ctx *cx, const ir_expr *e, eval_frame *fr,
                                           const ir_fun *fn, const stc_value *caps, stc_value *out)
{
    ir_loc loc = e->u.call.callee_loc;
    size_t n = (size_t)e->u.call.nargs;
    stc_value small[EVAL_FRAME_SMALL];
    stc_value *args = n <= EVAL_FRAME_SMALL ? small : malloc(n * sizeof *args);
    if (!args) return stc__eval_oom(cx, loc);
    int rc = stc__eval_args_into(cx, e, fr, args);
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
EVAL_NOINLINE int stc__eval_call(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->u.call.tail) return stc__eval_tail_prepare(cx, e, fr, out);
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
        stc_value small[EVAL_FRAME_SMALL];
        stc_value *slots = eval_frame_new(small, nslots);
        if (!slots) {
            val_release(callee);
            return stc__eval_oom(cx, loc);
        }
        rc = stc__eval_args_into(cx, e, fr, slots + ncaps);
        if (rc == 0 && thread < 0) {
            for (size_t i = 0; caps && i < ncaps; i++) slots[i] = val_retain(caps[i]);
            rc = eval_invoke(cx, fn, slots, loc, out);
        } else if (rc == 0) {
            const char *saved = cx->thread;
            cx->thread = p->threads[thread]->name;
            slots[fn->nparams - 1] = eval_state_take(cx, thread);
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

/* EVAL_X_CALL_FUN (eval_internal.h): stc__eval_call's path for a known
 * function, with the checks stc__eval_prepare made once left out. */
EVAL_NOINLINE int stc__eval_call_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    const ir_fun *fn = cx->p->funs[e->u.call.callee.index];
    size_t nslots = (size_t)fn->nslots;
    /* Written in order, as a thread call's frame: the args, then the
     * binders' units; nlive slots hold values to release. */
    stc_value small[EVAL_FRAME_SMALL];
    stc_value *slots = nslots <= EVAL_FRAME_SMALL ? small : malloc(nslots * sizeof *slots);
    if (!slots) return stc__eval_oom(cx, e->u.call.callee_loc);
    int rc = 0, i = 0;
    for (; i < e->u.call.nargs; i++)
        if ((rc = eval_quick(cx, e->u.call.args[i], fr, &slots[i]))) break; /* slots[i] holds nothing */
    size_t nlive = (size_t)i;
    if (rc == 0) {
        for (size_t j = (size_t)i; j < nslots; j++) slots[j] = eval_unit;
        nlive = nslots;
        rc = eval_invoke(cx, fn, slots, e->u.call.callee_loc, out);
    }
    eval_frame_free(slots, small, nlive);
    return rc;
}

/* An item of a thread's pair, as eval_quick would evaluate it, with the
 * commonest other items taken without the dispatch: a literal (the `()`
 * of most outputs) and a tuple (the new state), at the depth unit
 * stc__eval_expr would count; its stack check is eval_pair's, made with
 * half a segment to spare. */
EVAL_INLINE int eval_pair_item(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->kind == IR_LIT) {
        *out = val_retain(e->u.lit);
        return 0;
    }
    if (e->kind == IR_TUPLE) {
        *out = eval_unit;
        cx->depth++;
        int rc = stc__eval_seq(cx, e, fr, out);
        cx->depth--;
        return rc;
    }
    return eval_quick(cx, e, fr, out);
}

/* A 2-tuple e's items into *o and *s, at the depth unit eval_pair's own
 * level for e would count (its caller's level checked the stack); on an
 * error *o is unit and *s INVALID. */
EVAL_INLINE int eval_pair_tuple(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *o, stc_value *s)
{
    int rc;
    cx->depth++;
    if ((rc = eval_pair_item(cx, e->u.agg.items[0], fr, o)) == 0 &&
        (rc = eval_pair_item(cx, e->u.agg.items[1], fr, s)) != 0) {
        val_release(*o);
        *o = eval_unit;
        *s = (stc_value){.tag = STC_T_INVALID};
    }
    cx->depth--;
    return rc;
}

/* Whether this segment of the stack is past its half: eval_pair then
 * leaves the body to stc__eval_expr, which moves to a new segment in
 * time. */
static inline bool eval_pair_far(const eval_ctx *cx)
{
    uintptr_t pos = EVAL_STACK_POS();
    return cx->stack_base && eval_stack_used(cx, pos) > EVAL_SEGMENT_BYTES / 2;
}

/* Whether eval_pair takes e as a 2-tuple: then its callers' levels run it
 * by eval_pair_tuple, without a level of their own. */
static inline bool eval_pair_is_tuple(const ir_expr *e) { return e->kind == IR_TUPLE && e->u.agg.nitems == 2; }

/* The pair an STCLang thread's function returns, as its two items: *o
 * the output, *s the state, evaluated as stc__eval_expr would evaluate e
 * (the same depth units, order, binders and errors) without building the
 * tuple, down lets, ifs and cases to a 2-tuple.  Any other e (or a stack
 * segment due) is evaluated whole: then *o is the pair and *s INVALID, or
 * EVAL_TAIL comes back with the pair due in *o.  The binders of its
 * lets and cases stay bound (their values dropped when the call's frame
 * is, see IR_LET below).  Main's context (hooks) never comes here: its
 * lets and tuples are offered to the runtime. */
static int eval_pair(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *o, stc_value *s)
{
    *o = eval_unit;
    *s = (stc_value){.tag = STC_T_INVALID};
    if (eval_pair_far(cx) || (e->kind == IR_TUPLE ? e->u.agg.nitems != 2
                                    : e->kind != IR_LET && e->kind != IR_LETTUPLE && e->kind != IR_IF &&
                                          e->kind != IR_CASE))
        return stc__eval_expr(cx, e, fr, o);
    int rc;
    stc_value v;
    cx->depth++;
    switch (e->kind) {
    case IR_TUPLE:
        if ((rc = eval_pair_item(cx, e->u.agg.items[0], fr, o))) break;
        if ((rc = eval_pair_item(cx, e->u.agg.items[1], fr, s))) {
            val_release(*o);
            *o = eval_unit;
            *s = (stc_value){.tag = STC_T_INVALID};
        }
        break;
    case IR_LET:
    case IR_LETTUPLE:
        /* Its binders are not unbound here: nothing of this call runs
         * after the pair but the enclosing levels, and the call's frame
         * is released as a whole (or by a tail call it ends in) right
         * after the new state is stored. */
        if ((rc = eval_let_enter(cx, e, fr))) break;
        rc = eval_pair_is_tuple(e->b) ? eval_pair_tuple(cx, e->b, fr, o, s) : eval_pair(cx, e->b, fr, o, s);
        break;
    case IR_IF: {
        bool then = false;
        if ((rc = eval_quick(cx, e->a, fr, &v))) break;
        if ((rc = eval_if_test(cx, e, v, &then))) {
            val_release(v);
            break;
        }
        const ir_expr *b = then ? e->b : e->c;
        rc = eval_pair_is_tuple(b) ? eval_pair_tuple(cx, b, fr, o, s) : eval_pair(cx, b, fr, o, s);
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
        rc = eval_pair_is_tuple(alt->body) ? eval_pair_tuple(cx, alt->body, fr, o, s)
                                            : eval_pair(cx, alt->body, fr, o, s);
        break; /* its binders as a let's */
    }
    }
    cx->depth--;
    return rc;
}

/* Thread t's call after its args are in the frame's first slots (nslots
 * of them, of fn): the checks, the state, the body by eval_pair, the new
 * state stored; the frame's values released, its storage left to the
 * caller.  The compiled form (kernel.c) comes here when it declines. */
EVAL_INLINE int eval_thread_body(eval_ctx *cx, int t, stc_value *slots, ir_loc loc, stc_value *out)
{
    const ir_fun *fn = cx->p->funs[cx->p->threads[t]->fun];
    size_t nslots = (size_t)fn->nslots, nlive = (size_t)fn->nparams - 1;
    const char *saved = cx->thread;
    cx->thread = cx->p->threads[t]->name;
    stc_value o = eval_unit, st = eval_unit;
    int rc;
    /* eval_invoke, with eval_pair for the body; the state is taken
     * after the checks, so that a state moved into the call (threads.c)
     * is not lost to a depth or cancel error */
    if (cx->depth >= EVAL_MAX_DEPTH) rc = stc__eval_error(cx, STC_ELIMIT, loc, "call depth limit exceeded");
    else if (cancel_raised(cx->cancel)) rc = stc__eval_check_cancel(cx, loc);
    else {
        slots[fn->nparams - 1] = eval_state_take(cx, t);
        for (size_t j = (size_t)fn->nparams; j < nslots; j++) slots[j] = eval_unit;
        nlive = nslots;
        eval_frame cfr = {slots, fn};
        cx->depth++;
        rc = eval_pair_is_tuple(fn->body) && !eval_pair_far(cx) ? eval_pair_tuple(cx, fn->body, &cfr, &o, &st)
                                                                : eval_pair(cx, fn->body, &cfr, &o, &st);
        if (rc == EVAL_TAIL) rc = stc__eval_tail_resume(cx); /* in cfr, into o */
        cx->depth--;
    }
    if (rc == 0 && st.tag == STC_T_INVALID) rc = stc__eval_thread_result(cx, t, o, loc, out);
    else if (rc == 0) eval_thread_store(cx, t, o, st, out);
    cx->thread = saved;
    eval_release_n(slots, nlive);
    return rc;
}

int stc__eval_thread_body(eval_ctx *cx, int t, stc_value *slots, ir_loc loc, stc_value *out)
{
    return eval_thread_body(cx, t, slots, loc, out);
}

/* EVAL_X_CALL_THREAD's path for a thread without a compiled form: its
 * args into the callee's frame, then stc__eval_thread_body. */
EVAL_NOINLINE static int eval_call_thread_walk(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    const ir_program *p = cx->p;
    int t = e->u.call.callee.index;
    const ir_fun *fn = p->funs[p->threads[t]->fun];
    ir_loc loc = e->u.call.callee_loc;
    size_t nslots = (size_t)fn->nslots;
    /* The frame's slots are written in order: the args, then (after the
     * checks) the state and the binders' units. */
    stc_value small[EVAL_FRAME_SMALL];
    stc_value *slots = nslots <= EVAL_FRAME_SMALL ? small : malloc(nslots * sizeof *slots);
    if (!slots) return stc__eval_oom(cx, loc);
    int rc = 0, i = 0;
    for (; i < e->u.call.nargs; i++)
        if ((rc = eval_quick(cx, e->u.call.args[i], fr, &slots[i]))) break; /* slots[i] holds nothing */
    if (rc == 0) rc = eval_thread_body(cx, t, slots, loc, out);
    else eval_release_n(slots, (size_t)i);
    if (slots != small) free(slots);
    return rc;
}

/* EVAL_X_CALL_THREAD (eval_internal.h): stc__eval_call's thread path, the
 * function's body evaluated by eval_pair, or, for a thread with a
 * compiled form (ir_thread.xtk), kernel.c's.  Small, so that neither
 * path pays the other's frame. */
EVAL_NOINLINE int stc__eval_call_thread_direct(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (cx->hooks || !cx->states) return stc__eval_call(cx, e, fr, out);
    const eval_tk *k = cx->p->threads[e->u.call.callee.index]->xtk;
    if (k) return stc__eval_tk_call(cx, e, fr, k, out);
    return eval_call_thread_walk(cx, e, fr, out);
}
