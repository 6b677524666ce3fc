/* tail.c - the evaluator's tail calls (docs/DESIGN.md 2). */
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "util/cancel.h"

static const stc_value eval_unit = {.tag = STC_T_UNIT};

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
void stc__eval_tail_drop(eval_ctx *cx)
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
 * are); EVAL_TAIL, or an error as stc__eval_call would report it. */
EVAL_NOINLINE int stc__eval_tail_prepare(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
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
    int rc = args ? stc__eval_args_into(cx, e, fr, args) : stc__eval_oom(cx, loc);
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
EVAL_NOINLINE int stc__eval_tail_resume(eval_ctx *cx)
{
    eval_frame *fr = cx->tail.fr;
    return eval_tail_loop(cx, fr->slots, fr->fn && fr->fn->nslots > 0 ? (size_t)fr->fn->nslots : 0, cx->tail.out);
}

int stc__eval_tail_run(eval_ctx *cx, stc_value *out)
{
    *out = eval_unit;
    if (!cx->tail.fn) return stc__eval_error(cx, STC_ERUNTIME, cx->tail.loc, "internal error: no tail call pending");
    stc_value small[EVAL_FRAME_SMALL];
    for (size_t i = 0; i < EVAL_FRAME_SMALL; i++) small[i] = eval_unit;
    int rc = eval_tail_loop(cx, small, EVAL_FRAME_SMALL, out);
    eval_release_n(small, EVAL_FRAME_SMALL);
    return rc;
}

