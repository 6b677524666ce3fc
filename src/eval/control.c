/* control.c - the evaluator's binders, patterns, constructors and if. */
#include <stdlib.h>

#include "eval/eval_internal.h"
#include "util/buf.h"

/* ---- Binders and patterns ------------------------------------------------ */

int stc__eval_let_error(eval_ctx *cx, const ir_expr *e)
{
    return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: let-tuple arity mismatch");
}

EVAL_NOINLINE int stc__eval_let(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (cx->hooks && cx->hooks->lets) { /* independent lets as parallel tasks */
        int rc = cx->hooks->lets(cx->hooks->ud, cx, e, fr, out);
        if (rc != EVAL_DECLINED) return rc;
    }
    int rc = eval_let_enter(cx, e, fr);
    if (rc) return rc;
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

EVAL_NOINLINE int stc__eval_case(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
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

/* A tuple or list s whose item i failed: items i+1.. still hold the old
 * values of a reused block (dead) or nothing (a new one); all become unit
 * and s is dropped with the items made before i. */
static EVAL_NOINLINE int eval_seq_fail(stc_value s, size_t i, bool reused, int rc)
{
    stc_value *items = val_seq_items(s);
    size_t n = val_seq_len(s);
    items[i] = (stc_value){.tag = STC_T_UNIT}; /* holds nothing */
    for (size_t j = i + 1; j < n; j++) {
        if (reused) val_release(items[j]);
        items[j] = (stc_value){.tag = STC_T_UNIT};
    }
    val_release(s);
    return rc;
}

EVAL_NOINLINE int stc__eval_seq(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if (e->kind == IR_TUPLE && cx->hooks && cx->hooks->tuple) {
        int rc = cx->hooks->tuple(cx->hooks->ud, cx, e, fr, out);
        if (rc != EVAL_DECLINED) return rc;
    }
    size_t n = (size_t)e->u.agg.nitems;
    stc_value s;
    /* not in main's context: its hooks may run a tuple's items as tasks at once */
    stc_value *old = e->xop == EVAL_X_TUPLE_REUSE && !cx->hooks ? &fr->slots[e->xslot] : NULL;
    if (old && old->tag == STC_T_TUPLE && val_seq_len(*old) == n && eval_unique(*old)) {
        s = *old; /* the dead variable's block (eval_internal.h, EVAL_X_TUPLE_REUSE) */
        *old = (stc_value){.tag = STC_T_UNIT};
        /* Each old item (unit when the let moved them out) is dropped just
         * before its new one is made: one pass, no unit stores.  Nothing
         * can read the old items (the variable is dead), so dropping them
         * one by one is not seen. */
        stc_value *items = val_seq_items(s);
        for (size_t i = 0; i < n; i++) {
            val_release(items[i]);
            int rc = eval_quick(cx, e->u.agg.items[i], fr, &items[i]);
            if (rc) return eval_seq_fail(s, i, true, rc);
        }
        *out = s;
        return 0;
    }
    /* A new block, its items set by the loop alone (unit from i on after
     * an error). */
    s = val_seq_new_unset(e->kind == IR_LIST ? STC_T_LIST : STC_T_TUPLE, n);
    if (s.tag == STC_T_INVALID) return stc__eval_oom(cx, e->loc);
    stc_value *items = val_seq_items(s);
    for (size_t i = 0; i < n; i++) {
        int rc = eval_quick(cx, e->u.agg.items[i], fr, &items[i]);
        if (rc) return eval_seq_fail(s, i, false, rc);
    }
    *out = s;
    return 0;
}

EVAL_NOINLINE int stc__eval_lambda(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    const ir_fun *fn = e->u.fn;
    size_t n = fn->ncaptures > 0 ? (size_t)fn->ncaptures : 0;
    stc_value c = stc__val_func_alloc(fn, n);
    if (c.tag == STC_T_INVALID) return stc__eval_oom(cx, e->loc);
    for (size_t i = 0; i < n; i++) val_as_func(c)->caps[i] = val_retain(fr->slots[fn->captures[i]->slot]);
    *out = c;
    return 0;
}

EVAL_NOINLINE int stc__eval_box(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value v;
    int rc;
    if (e->a->kind == IR_TUPLE && eval_stack_room(cx, EVAL_STACK_POS())) {
        /* `inl (a, b, ...)`, a parser's commonest result: the tuple
         * without the dispatch, at the depth unit it would count */
        v = (stc_value){.tag = STC_T_UNIT};
        cx->depth++;
        rc = stc__eval_seq(cx, e->a, fr, &v);
        cx->depth--;
    } else {
        rc = eval_quick(cx, e->a, fr, &v);
    }
    if (rc) return rc;
    v = val_box_new(e->kind == IR_INL ? STC_T_INL : STC_T_INR, v);
    if (v.tag == STC_T_INVALID) return stc__eval_oom(cx, e->loc);
    *out = v;
    return 0;
}

int stc__eval_if_error(eval_ctx *cx, const ir_expr *e)
{
    return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: 'if' on a non-bool");
}

EVAL_NOINLINE int stc__eval_if(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value c;
    bool then = false;
    int rc = eval_quick(cx, e->a, fr, &c); /* an if on a compare: stc__eval_fast_binop at once */
    if (rc) return rc;
    if ((rc = eval_if_test(cx, e, c, &then))) {
        val_release(c);
        return rc;
    }
    return eval_quick(cx, then ? e->b : e->c, fr, out);
}

