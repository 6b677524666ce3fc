/* operators.c - the evaluator's binary and unary operators: the generic
 * ones (eval_arith, eval_compare, chains) and the specialised
 * EVAL_X_BINOP. */
#include <math.h>
#include <string.h>

#include "eval/eval_internal.h"

static const stc_value eval_unit = {.tag = STC_T_UNIT};

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
        /* strings (logstats' `m == cur`): stc_value_equal's bytes without
         * its walk and memo */
        if (a.tag == STC_T_STR && b.tag == STC_T_STR) {
            const val_str *x = val_as_str(a), *y = val_as_str(b);
            r = x == y || (x->len == y->len && memcmp(x->data, y->data, x->len) == 0);
        } else {
            r = stc_value_equal(a, b);
        }
        r = r == (op == OP_EQ);
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
    *out = eval_bool(r);
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

EVAL_NOINLINE int stc__eval_binop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
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
        return stc__eval_fast_binop(cx, o, fr, v);
    }
    *owned = true;
    if (o->xop == EVAL_X_CALL_FUN) {
        *v = eval_unit;
        cx->depth++;
        int rc = stc__eval_call_direct(cx, o, fr, v);
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
    /* a comparison of ints (`s < 200 || s > 599`) at once: nothing below
     * it can call, so it needs no depth unit (eval_quick) */
    if (!(e->b->xop == EVAL_X_BINOP && eval_leaf_int(e->b, fr, &b)) && (rc = stc__eval_expr(cx, e->b, fr, &b)))
        return rc;
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
int stc__eval_fast_binop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
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

EVAL_NOINLINE int stc__eval_unop(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    stc_value a;
    int rc = stc__eval_expr(cx, e->a, fr, &a);
    if (rc) return rc;
    if (e->u.unop == OP_NOT && a.tag == STC_T_BOOL) *out = eval_bool(!a.as.b);
    else if (e->u.unop == OP_NEG && a.tag == STC_T_INT) *out = eval_int((int64_t)(0 - (uint64_t)a.as.i));
    else if (e->u.unop == OP_NEG && a.tag == STC_T_FLOAT) *out = eval_float(-a.as.f);
    else {
        val_release(a);
        return stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: bad operand for '%s'",
                          stc__ir_unop_name(e->u.unop));
    }
    return 0;
}

