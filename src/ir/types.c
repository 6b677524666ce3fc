/* types.c - Hindley-Milner type inference over a resolved program:
 * expressions here, declarations in types_decl.c.
 *
 * Top-level functions are inferred per strongly connected component of the
 * call graph (callees first), monomorphically inside a component, then
 * generalised: variables above level 0 become generic and every use of the
 * function (CALL_FUN, IR_FUNREF) instantiates them afresh.  Lambdas and
 * let-bound locals are monomorphic.  Threads are monomorphic: their types
 * are level-0 variables, bound to an instance of the function's scheme right
 * after its component, so calls before that (a thread used inside its own
 * function) only refine them.  Inits, then main, are checked at level 0;
 * at the end the free variables of threads, inits and main are defaulted
 * (see below), so every thread's types are concrete.  Types inside function
 * bodies may keep generic variables.  A C thread without a state type has
 * state type unit.
 *
 * Constraints ride on type variables as flags (ir.h TYF_*): NUM for
 * arithmetic and int(), ORD for comparisons, EQ for == and !=, and SIZED
 * (list or str) for len(), so `fun n(xs) = len(xs)` stays usable on both;
 * generic variables keep their flags and instances inherit them.
 * Defaults: SIZED -> [unit] (str when also ORD), NUM/ORD -> int, else unit.
 *
 * Errors: each top-level function, init and main stops at its first error
 * (inference returns NULL); a function whose component failed is then used
 * with fresh types so that its callers report no follow-up errors.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/types_internal.h"

static const char *const types_op_origin[] = {
    "operator '||'", "operator '&&'", "operator '=='", "operator '!='", "operator '<'",
    "operator '<='", "operator '>'",  "operator '>='", "operator '+'",  "operator '-'",
    "operator '*'",  "operator '/'",  "operator '%'"};

/* ---- Helpers ----------------------------------------------------------------- */

static ir_type *types_set(ir_expr *e, ir_type *t)
{
    if (t) e->type = t;
    return t;
}

/* ---- Literals --------------------------------------------------------------- */

static ir_type *types_value(types_ck *ck, stc_value v, ir_loc loc, int depth)
{
    if (depth > TYPES_MAX_EXPR_DEPTH) {
        stc__types_error(ck, loc, "literal nested too deeply");
        return NULL;
    }
    switch (v.tag) {
    case STC_T_UNIT: return ck->t_unit;
    case STC_T_INT: return ck->t_int;
    case STC_T_FLOAT: return ck->t_float;
    case STC_T_BOOL: return ck->t_bool;
    case STC_T_STR: return ck->t_str;
    case STC_T_LIST: {
        ir_type *elem = stc__types_fresh(ck);
        for (size_t i = 0; elem && i < stc_value_len(v); i++) {
            ir_type *t = types_value(ck, stc_value_at(v, i), loc, depth + 1);
            if (!t) return NULL;
            int rc = stc__types_unify(ck, elem, t);
            if (rc) return stc__types_fail(ck, loc, rc, "list items have different types: %s and %s", elem, t);
        }
        return stc__types_list(ck, elem);
    }
    case STC_T_TUPLE: {
        size_t n = stc_value_len(v);
        ir_type *t = stc__ir_type_new(ck->p, TY_TUPLE, (int)n);
        if (!t) { ck->oom = true; return NULL; }
        for (size_t i = 0; i < n; i++)
            if (!(t->args[i] = types_value(ck, stc_value_at(v, i), loc, depth + 1))) return NULL;
        return t;
    }
    case STC_T_INL:
    case STC_T_INR: {
        ir_type *t = types_value(ck, stc_value_payload(v), loc, depth + 1);
        ir_type *o = stc__types_fresh(ck);
        return v.tag == STC_T_INL ? stc__types_sum(ck, t, o) : stc__types_sum(ck, o, t);
    }
    default:
        stc__types_error(ck, loc, "unsupported literal value");
        return NULL;
    }
}

/* ---- Functions ----------------------------------------------------------------- */

/* Fresh parameter types (unified with annotations) and fn->type = P -> R. */
bool stc__types_fun_begin(types_ck *ck, ir_fun *fn)
{
    int n = fn->nparams;
    ir_type *P = NULL;
    if (n >= 2 && !(P = stc__ir_type_new(ck->p, TY_TUPLE, n))) { ck->oom = true; return false; }
    for (int i = 0; i < n; i++) {
        ir_type *v = stc__types_fresh(ck);
        if (!v) return false;
        fn->params[i]->type = v;
        if (fn->param_annots && fn->param_annots[i]) {
            int rc = stc__types_unify(ck, v, fn->param_annots[i]);
            if (rc) { stc__types_fail(ck, fn->params[i]->loc, rc, "invalid annotation %s", v, NULL); return false; }
        }
        if (n >= 2) P->args[i] = v;
        else P = v;
    }
    if (n == 0) P = ck->t_unit;
    ir_type *R = stc__types_fresh(ck);
    if (!R) return false;
    if (fn->ret_annot) {
        int rc = stc__types_unify(ck, R, fn->ret_annot);
        if (rc) { stc__types_fail(ck, fn->loc, rc, "invalid annotation %s", R, NULL); return false; }
    }
    fn->type = stc__types_fun(ck, P, R);
    return fn->type != NULL;
}

bool stc__types_fun_body(types_ck *ck, ir_fun *fn, int depth)
{
    ir_type *bt = stc__types_expr(ck, fn->body, depth + 1);
    if (!bt) return false;
    ir_type *R = stc__ir_type_resolve(fn->type)->args[1];
    int rc = stc__types_unify(ck, R, bt);
    if (rc) {
        char nm[112];
        stc__types_esc(nm, sizeof nm, fn->name);
        stc__types_fail_fmt(ck, stc__types_loc(fn->body, fn->loc), rc,
                       fn->ret_annot ? stc__types_fmt("'%s' is declared to return %%s, but its body has type %%s", nm)
                                     : stc__types_fmt("'%s' must return %%s, but its body has type %%s", nm),
                       R, bt);
        return false;
    }
    return true;
}

static ir_type *types_lambda(types_ck *ck, ir_fun *fn, int depth)
{
    for (int i = 0; i < fn->ncaptures; i++)
        fn->capture_slots[i]->type = fn->captures[i]->type;
    if (!stc__types_fun_begin(ck, fn) || !stc__types_fun_body(ck, fn, depth)) return NULL;
    return fn->type;
}

/* ---- Calls ----------------------------------------------------------------------- */

/* Unifies the parameter type of callee `name` with the (inferred) args. */
static bool types_args(types_ck *ck, ir_expr *e, ir_type *param, const char *name)
{
    int n = e->u.call.nargs;
    ir_expr **args = e->u.call.args;
    ir_loc loc = stc__types_call_loc(e);
    char nm[112];
    stc__types_esc(nm, sizeof nm, name);
    ir_type *pr = stc__ir_type_resolve(param);
    if (n >= 2 && pr->kind == TY_TUPLE && pr->n == n) {
        for (int i = 0; i < n; i++) {
            int rc = stc__types_unify(ck, pr->args[i], args[i]->type);
            if (rc) {
                stc__types_fail_fmt(ck, stc__types_loc(args[i], loc), rc,
                               stc__types_fmt("type mismatch in argument %d of '%s': expected %%s, found %%s",
                                         i + 1, nm),
                               pr->args[i], args[i]->type);
                return false;
            }
        }
        return true;
    }
    if (n == 1) {
        int rc = stc__types_unify(ck, param, args[0]->type);
        if (rc)
            stc__types_fail_fmt(ck, stc__types_loc(args[0], loc), rc,
                           stc__types_fmt("type mismatch in argument 1 of '%s': expected %%s, found %%s", nm),
                           param, args[0]->type);
        return rc == 0;
    }
    ir_type **items = n > 0 ? malloc((size_t)n * sizeof *items) : NULL;
    if (n > 0 && !items) { ck->oom = true; return false; }
    for (int i = 0; i < n; i++) items[i] = args[i]->type;
    ir_type *A = stc__types_pack(ck, n, items);
    free(items);
    if (!A) return false;
    int rc = stc__types_unify(ck, param, A);
    if (rc)
        stc__types_fail_fmt(ck, loc, rc,
                       stc__types_fmt("type mismatch in the arguments of '%s': expected %%s, found %%s", nm),
                       param, A);
    return rc == 0;
}

static ir_type *types_builtin(types_ck *ck, ir_expr *e)
{
    ir_expr **args = e->u.call.args;
    ir_loc loc = stc__types_call_loc(e);
    int b = e->u.call.callee.index;
    const char *name = stc__ir_builtins[b].name;
    ir_type *in[3] = {NULL, NULL, NULL}, *res = NULL;
    switch (b) {
    case BI_SMAP: {
        ir_type *F = args[0]->type, *L = args[1]->type;
        ir_type *a = stc__types_fresh(ck), *r = stc__types_fresh(ck);
        ir_type *want = stc__types_fun(ck, a, r), *lst = stc__types_list(ck, a);
        if (!want || !lst) return NULL;
        ir_type_kind k = stc__ir_type_resolve(F)->kind;
        if (k != TY_VAR && k != TY_FUN)
            return stc__types_error1(ck, stc__types_loc(args[0], loc),
                                "smap needs a function as its first argument, not %s", F);
        int rc = stc__types_unify(ck, F, want);
        if (rc) return stc__types_fail(ck, stc__types_loc(args[0], loc), rc,
                                  "type mismatch in argument 1 of 'smap': expected %s, found %s", want, F);
        rc = stc__types_unify(ck, lst, L);
        if (rc) return stc__types_fail(ck, stc__types_loc(args[1], loc), rc,
                                  "type mismatch in argument 2 of 'smap': expected %s, found %s", lst, L);
        return stc__types_list(ck, r);
    }
    case BI_LEN: in[0] = stc__types_fresh_flag(ck, TYF_SIZED, "'len'"), res = ck->t_int; break;
    case BI_NTH:
        res = stc__types_fresh(ck);
        in[0] = stc__types_list(ck, res), in[1] = ck->t_int;
        break;
    case BI_RANGE: in[0] = in[1] = ck->t_int, res = stc__types_list(ck, ck->t_int); break;
    case BI_FLOAT: in[0] = ck->t_int, res = ck->t_float; break;
    case BI_INT: in[0] = stc__types_fresh_flag(ck, TYF_NUM, "'int'"), res = ck->t_int; break;
    case BI_ROUND: in[0] = ck->t_float, res = ck->t_int; break;
    case BI_SIN_ITER: in[0] = ck->t_int, in[1] = ck->t_float, res = ck->t_float; break;
    case BI_WORDS: in[0] = ck->t_str, res = stc__types_list(ck, ck->t_str); break;
    case BI_SPLIT: in[0] = in[1] = ck->t_str, res = stc__types_list(ck, ck->t_str); break;
    /* str(v) prints any value but a function, like == compares. */
    case BI_STR: in[0] = stc__types_fresh_flag(ck, TYF_EQ, "'str'"), res = ck->t_str; break;
    case BI_CONCAT: in[0] = in[1] = ck->t_str, res = ck->t_str; break;
    case BI_PARSE_INT: in[0] = ck->t_str, res = ck->t_int; break;
    case BI_PARSE_FLOAT: in[0] = ck->t_str, res = ck->t_float; break;
    case BI_GET:
    case BI_LOOKUP:
    case BI_HAS:
    case BI_PUT:
    case BI_REMOVE:
    case BI_UPDATE:
    case BI_KEYS:
    case BI_VALUES:
    case BI_ITEMS:
    case BI_TO_MAP: return stc__types_map_builtin(ck, e);
    case BI_STATE: /* the thread's state type itself (resolve.c made args[0] a thread; a keyed
                      thread's will be the map from its key type to it) */
        return args[0]->kind == IR_THREADREF ? ck->p->threads[args[0]->u.index]->state_type : NULL;
    default:
        if (stc__types_lib_signature(ck, b, in, &res)) break;
        if (!ck->oom) stc__types_error(ck, loc, "unknown builtin");
        return NULL;
    }
    for (int i = 0; i < e->u.call.nargs && i < 3; i++) {
        if (!in[i]) return NULL;
        int rc = stc__types_unify(ck, in[i], args[i]->type);
        if (rc)
            return stc__types_fail_fmt(ck, stc__types_loc(args[i], loc), rc,
                                  stc__types_fmt("type mismatch in argument %d of '%s': expected %%s, found %%s",
                                            i + 1, name),
                                  in[i], args[i]->type);
    }
    return res;
}

static ir_type *types_call(types_ck *ck, ir_expr *e, int depth)
{
    ir_program *p = ck->p;
    int n = e->u.call.nargs;
    for (int i = 0; i < n; i++) {
        ir_expr *a = e->u.call.args[i];
        if (a->kind == IR_THREADREF && i == 0) { /* smap's thread argument */
            ir_thread *th = p->threads[a->u.index];
            if (!types_set(a, stc__types_fun(ck, th->in_type, th->out_type))) return NULL;
        } else if (!stc__types_expr(ck, a, depth + 1)) {
            return NULL;
        }
    }
    switch (e->u.call.kind) {
    case CALL_FUN: {
        ir_fun *fn = p->funs[e->u.call.callee.index];
        if (ck->fun_failed[fn->index] || !fn->type) return stc__types_fresh(ck);
        ir_type *T = stc__types_instantiate(ck, fn->type);
        if (!T) return ck->oom ? NULL : stc__types_fail(ck, e->loc, TU_LIMIT, "", NULL, NULL);
        T = stc__ir_type_resolve(T);
        return types_args(ck, e, T->args[0], fn->name) ? T->args[1] : NULL;
    }
    case CALL_VALUE: {
        ir_var *v = e->u.call.callee.var;
        ir_type *T = stc__ir_type_resolve(v->type);
        if (T->kind != TY_VAR && T->kind != TY_FUN) {
            char nm[112];
            stc__types_esc(nm, sizeof nm, v->name);
            char *fmt = stc__types_fmt("calling '%s' of type %%s, which is not a function", nm);
            if (!fmt) { ck->oom = true; return NULL; }
            stc__types_error1(ck, stc__types_call_loc(e), fmt, T);
            free(fmt);
            return NULL;
        }
        if (T->kind == TY_VAR) {
            ir_type *F = stc__types_fun(ck, stc__types_fresh(ck), stc__types_fresh(ck));
            if (!F) return NULL;
            int rc = stc__types_unify(ck, T, F);
            if (rc) return stc__types_fail(ck, stc__types_call_loc(e), rc, "cannot call a value of type %s (%s)", T, F);
            T = F;
        }
        return types_args(ck, e, T->args[0], v->name) ? T->args[1] : NULL;
    }
    case CALL_THREAD: {
        ir_thread *th = p->threads[e->u.call.callee.index];
        if (!th->in_type || !th->out_type) return stc__types_fresh(ck);
        return types_args(ck, e, th->in_type, th->name) ? th->out_type : NULL;
    }
    case CALL_BUILTIN:
        return types_builtin(ck, e);
    default:
        stc__types_error(ck, e->loc, "unresolved call");
        return NULL;
    }
}

/* ---- Expressions ---------------------------------------------------------------- */

static ir_type *types_case(types_ck *ck, ir_expr *e, int depth)
{
    ir_type *s = stc__types_expr(ck, e->a, depth + 1), *res = NULL;
    if (!s) return NULL;
    for (int i = 0; i < e->u.cas.nalts; i++) {
        ir_alt *alt = &e->u.cas.alts[i];
        ir_loc aloc = alt->loc.line > 0 ? alt->loc : stc__types_loc(alt->body, e->loc);
        ir_type *pt = NULL;
        switch (alt->pat) {
        case PAT_LIT:
            if (!(pt = types_value(ck, alt->lit, aloc, 0))) return NULL;
            break;
        case PAT_WILD: break;
        case PAT_VAR: alt->vars[0]->type = s; break;
        case PAT_INL:
        case PAT_INR: {
            ir_type *x = stc__types_fresh(ck), *o = stc__types_fresh(ck);
            pt = alt->pat == PAT_INL ? stc__types_sum(ck, x, o) : stc__types_sum(ck, o, x);
            if (!pt) return NULL;
            alt->vars[0]->type = x;
            break;
        }
        case PAT_TUPLE:
            if (alt->nvars == 1) { /* `(x)` is just x */
                alt->vars[0]->type = s;
                break;
            }
            if (!(pt = stc__types_tuple_fresh(ck, alt->nvars))) return NULL;
            for (int j = 0; j < alt->nvars; j++) alt->vars[j]->type = pt->args[j];
            break;
        }
        if (pt) {
            int rc = stc__types_unify(ck, s, pt);
            if (rc)
                return stc__types_fail(ck, aloc, rc, "case pattern of type %s does not match scrutinee of type %s",
                                  pt, s);
        }
        ir_type *bt = stc__types_expr(ck, alt->body, depth + 1);
        if (!bt) return NULL;
        if (!res) {
            res = bt;
        } else {
            int rc = stc__types_unify(ck, res, bt);
            if (rc)
                return stc__types_fail(ck, stc__types_loc(alt->body, aloc), rc,
                                  "case alternatives have different types: %s and %s", res, bt);
        }
    }
    return res ? res : stc__types_fresh(ck);
}

/* The type of binop e whose left operand has type ta. */
static ir_type *types_binop_step(types_ck *ck, ir_expr *e, ir_type *ta, int depth)
{
    ir_binop op = e->u.binop;
    const char *origin = types_op_origin[op];
    ir_type *tb = stc__types_expr(ck, e->b, depth + 1);
    if (!tb) return NULL;
    if (op == OP_OR || op == OP_AND) {
        for (int i = 0; i < 2; i++) {
            ir_type *t = i ? tb : ta;
            if (stc__types_unify(ck, t, ck->t_bool)) {
                char *fmt = stc__types_fmt("%s needs bool, not %%s", origin);
                if (!fmt) { ck->oom = true; return NULL; }
                stc__types_error1(ck, e->loc, fmt, t);
                free(fmt);
                return NULL;
            }
        }
        return ck->t_bool;
    }
    unsigned flag = op == OP_EQ || op == OP_NE ? TYF_EQ : op <= OP_GE ? TYF_ORD : TYF_NUM;
    ir_type *v = stc__types_fresh_flag(ck, flag, origin);
    if (!v) return NULL;
    int rc = stc__types_unify(ck, v, ta);
    if (rc) return stc__types_fail(ck, e->loc, rc, "type mismatch: %s and %s", v, ta);
    rc = stc__types_unify(ck, ta, tb);
    if (rc)
        return stc__types_fail_fmt(ck, e->loc, rc,
                              /* the result is a format string: '%' must be doubled */
                              stc__types_fmt("operands of '%s' have different types: %%s and %%s",
                                        op == OP_MOD ? "%%" : stc__ir_binop_name(op)),
                              ta, tb);
    return flag == TYF_NUM ? ta : ck->t_bool;
}

/* A chain a + b + c + ... by a loop (ir_chain in ir.h): every node of its
 * left spine gets its type, bottom up; its operands are one level down. */
static ir_type *types_binop(types_ck *ck, ir_expr *e, int depth)
{
    ir_chain c;
    if (!stc__ir_chain_init(&c, e)) {
        stc__ir_chain_free(&c);
        ck->oom = true;
        return NULL;
    }
    ir_type *t = stc__types_expr(ck, c.nodes[c.n - 1]->a, depth + 1);
    for (size_t i = c.n; t && i-- > 1;) t = types_set(c.nodes[i], types_binop_step(ck, c.nodes[i], t, depth));
    if (t) t = types_binop_step(ck, e, t, depth); /* e's own type is set by stc__types_expr */
    stc__ir_chain_free(&c);
    return t;
}

static ir_type *types_unop(types_ck *ck, ir_expr *e, int depth)
{
    ir_type *t = stc__types_expr(ck, e->a, depth + 1);
    if (!t) return NULL;
    if (e->u.unop == OP_NOT) {
        if (stc__types_unify(ck, t, ck->t_bool))
            return stc__types_error1(ck, e->loc, "operator 'not' needs bool, not %s", t);
        return ck->t_bool;
    }
    ir_type *v = stc__types_fresh_flag(ck, TYF_NUM, "operator '-'");
    if (!v) return NULL;
    int rc = stc__types_unify(ck, v, t);
    return rc ? stc__types_fail(ck, e->loc, rc, "type mismatch: %s and %s", v, t) : t;
}

static ir_type *types_expr_kind(types_ck *ck, ir_expr *e, int depth)
{
    switch (e->kind) {
    case IR_LIT:
        return types_value(ck, e->u.lit, e->loc, 0);
    case IR_VAR:
        return e->u.var->type ? e->u.var->type : stc__types_fresh(ck);
    case IR_FUNREF: {
        ir_fun *fn = ck->p->funs[e->u.index];
        if (ck->fun_failed[fn->index] || !fn->type) return stc__types_fresh(ck);
        ir_type *t = stc__types_instantiate(ck, fn->type);
        return t || ck->oom ? t : stc__types_fail(ck, e->loc, TU_LIMIT, "", NULL, NULL);
    }
    case IR_THREADREF: {
        ir_thread *th = ck->p->threads[e->u.index];
        return stc__types_fun(ck, th->in_type, th->out_type);
    }
    case IR_LET: {
        ir_type *t = stc__types_expr(ck, e->a, depth + 1);
        if (!t) return NULL;
        e->u.let.binders[0]->type = t;
        return stc__types_expr(ck, e->b, depth + 1);
    }
    case IR_LETTUPLE: {
        ir_type *t = stc__types_expr(ck, e->a, depth + 1);
        if (!t) return NULL;
        int n = e->u.let.nbinders;
        if (n == 1) { /* `let (x) = e` is `let x = e` */
            e->u.let.binders[0]->type = t;
        } else {
            ir_type *tt = stc__types_tuple_fresh(ck, n);
            if (!tt) return NULL;
            int rc = stc__types_unify(ck, tt, t);
            if (rc)
                return stc__types_fail_fmt(ck, stc__types_loc(e->a, e->loc), rc,
                                      stc__types_fmt("let (...) with %d names needs a %d-tuple, not %%s",
                                                n, n),
                                      t, NULL);
            for (int i = 0; i < n; i++) e->u.let.binders[i]->type = tt->args[i];
        }
        return stc__types_expr(ck, e->b, depth + 1);
    }
    case IR_IF: {
        ir_type *c = stc__types_expr(ck, e->a, depth + 1);
        if (!c) return NULL;
        if (stc__types_unify(ck, c, ck->t_bool))
            return stc__types_error1(ck, stc__types_loc(e->a, e->loc), "condition of 'if' must be bool, not %s", c);
        ir_type *tb = stc__types_expr(ck, e->b, depth + 1);
        ir_type *tc = tb ? stc__types_expr(ck, e->c, depth + 1) : NULL;
        if (!tc) return NULL;
        int rc = stc__types_unify(ck, tb, tc);
        if (rc) return stc__types_fail(ck, e->loc, rc, "'if' branches have different types: %s and %s", tb, tc);
        return tb;
    }
    case IR_CASE:
        return types_case(ck, e, depth);
    case IR_LAMBDA:
        return types_lambda(ck, e->u.fn, depth);
    case IR_INL:
    case IR_INR: {
        ir_type *t = stc__types_expr(ck, e->a, depth + 1);
        if (!t) return NULL;
        ir_type *o = stc__types_fresh(ck);
        return e->kind == IR_INL ? stc__types_sum(ck, t, o) : stc__types_sum(ck, o, t);
    }
    case IR_BINOP:
        return types_binop(ck, e, depth);
    case IR_UNOP:
        return types_unop(ck, e, depth);
    case IR_CALL:
        return types_call(ck, e, depth);
    case IR_TUPLE: {
        int n = e->u.agg.nitems;
        ir_type *t = stc__ir_type_new(ck->p, TY_TUPLE, n);
        if (!t) { ck->oom = true; return NULL; }
        for (int i = 0; i < n; i++)
            if (!(t->args[i] = stc__types_expr(ck, e->u.agg.items[i], depth + 1))) return NULL;
        return t;
    }
    case IR_LIST: {
        ir_type *elem = stc__types_fresh(ck);
        for (int i = 0; elem && i < e->u.agg.nitems; i++) {
            ir_expr *it = e->u.agg.items[i];
            ir_type *t = stc__types_expr(ck, it, depth + 1);
            if (!t) return NULL;
            int rc = stc__types_unify(ck, elem, t);
            if (rc) return stc__types_fail(ck, stc__types_loc(it, e->loc), rc,
                                      "list items have different types: %s and %s", elem, t);
        }
        return stc__types_list(ck, elem);
    }
    case IR_NAME:
        stc__types_error(ck, e->loc, "unresolved name '%s'", e->u.name);
        return NULL;
    }
    return NULL;
}

ir_type *stc__types_expr(types_ck *ck, ir_expr *e, int depth)
{
    if (ck->oom || ck->fatal) return NULL;
    if (depth > TYPES_MAX_EXPR_DEPTH) {
        stc__types_error(ck, e->loc, "expression nested too deeply (limit %d)", TYPES_MAX_EXPR_DEPTH);
        return NULL;
    }
    return types_set(e, types_expr_kind(ck, e, depth));
}
