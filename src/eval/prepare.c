/* prepare.c - chooses the evaluator's specialised form of each node
 * (ir_expr.xop, EVAL_X_* in eval_internal.h) once per program, after
 * stc__ir_resolve and stc__types_check: what the generic evaluator would
 * decide again at every evaluation (the callee of a call, its frame
 * layout, the shape of an operator's operands) is decided here.  The
 * parallel runtime evaluates sub-expressions with stc__eval_expr, which
 * reads the same marks, so every node stays runnable on its own. */
#include <limits.h>

#include "eval/eval_internal.h"

/* Whether top-level call e can take calls.c's direct path: a known function
 * (no captures), exactly its params, stc__ir_resolve's layout. */
static bool prep_direct_call(const ir_program *p, const ir_expr *e)
{
    if (e->u.call.kind != CALL_FUN || e->u.call.tail) return false;
    int idx = e->u.call.callee.index;
    if (idx < 0 || idx >= p->nfuns) return false;
    const ir_fun *fn = p->funs[idx];
    if (fn->ncaptures > 0 || fn->nparams < 0 || e->u.call.nargs != fn->nparams) return false;
    if (fn->nparams > fn->nslots) return false;
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i]->slot != i) return false;
    return true;
}

/* The same for a call of an STCLang thread: its function takes the
 * inputs and then the state. A keyed thread's call goes through
 * keyed.c (its state is one key's part of a map), never this path. */
static bool prep_thread_call(const ir_program *p, const ir_expr *e)
{
    if (e->u.call.kind != CALL_THREAD) return false;
    int idx = e->u.call.callee.index;
    if (idx < 0 || idx >= p->nthreads) return false;
    const ir_thread *th = p->threads[idx];
    if (th->kind != THREAD_LANG || th->keyed || th->fun < 0 || th->fun >= p->nfuns) return false;
    const ir_fun *fn = p->funs[th->fun];
    if (fn->ncaptures > 0 || fn->nparams < 1 || e->u.call.nargs != fn->nparams - 1) return false;
    if (fn->nparams > fn->nslots) return false;
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i]->slot != i) return false;
    return true;
}

/* Whether builtin call e can be bound once (EVAL_X_BUILTIN): one of
 * eval_simple's builtins (not smap, state, the map builtins, which read
 * their arg nodes) with its arity. */
static bool prep_builtin_call(const ir_expr *e)
{
    if (e->u.call.kind != CALL_BUILTIN) return false;
    int bi = e->u.call.callee.index;
    if (bi < 0 || bi >= BI_COUNT_ || e->u.call.nargs != stc__ir_builtins[bi].arity) return false;
    if (bi == BI_SMAP || bi == BI_STATE || (bi >= BI_GET && bi <= BI_TO_MAP)) return false;
    return e->u.call.nargs <= 3;
}

static void prep_expr(const ir_program *p, ir_expr *e);

/* A binop's left spine, bottom up: a node is specialised when its left
 * operand is not a binop or a specialised one less than EVAL_X_SPINE deep (inline
 * recursion on the C stack stays bounded; longer chains keep eval_chain).
 * The loop keeps this pass's own recursion off the spine's length. */
static void prep_binop(const ir_program *p, ir_expr *e)
{
    ir_chain ch; /* nodes[0] = e, nodes[i + 1] = nodes[i]->a */
    if (!stc__ir_chain_init(&ch, e)) { /* out of memory: the generic forms */
        stc__ir_chain_free(&ch);
        return;
    }
    prep_expr(p, ch.nodes[ch.n - 1]->a);
    int height = 0; /* of the specialised spine below the current node */
    for (size_t i = ch.n; i-- > 0;) {
        ir_expr *x = ch.nodes[i];
        prep_expr(p, x->b);
        bool left_ok = x->a->kind != IR_BINOP || (x->a->xop == EVAL_X_BINOP && height < EVAL_X_SPINE);
        if (left_ok) {
            x->xop = EVAL_X_BINOP;
            height = x->a->kind == IR_BINOP ? height + 1 : 1;
        } else {
            height = 0;
        }
    }
    stc__ir_chain_free(&ch);
}

/* ---- The words form (eval_internal.h) ----------------------------------- */

/* Whether e is len(v) or nth(v, K) of form EVAL_X_BUILTIN. */
static bool prep_words_use(const ir_expr *e, const ir_var *v)
{
    int bi = e->u.call.callee.index;
    return e->xop == EVAL_X_BUILTIN && e->u.call.kind == CALL_BUILTIN && (bi == BI_LEN || bi == BI_NTH) &&
           e->u.call.args[0]->kind == IR_VAR && e->u.call.args[0]->u.var == v;
}

static bool prep_is_leaf(const ir_expr *e) { return e->kind == IR_VAR || e->kind == IR_LIT; }

/* The len(v) and nth(v, K) calls in e, not inside lambdas: counted, and
 * when xslot is not 0 given it, with the parse_int and parse_float of
 * such an nth of leaves marked EVAL_XW_PARSE. */
static int prep_words_uses(ir_expr *e, const ir_var *v, int xslot)
{
    int n = 0;
    for (; e && e->kind == IR_BINOP; e = e->a) n += prep_words_uses(e->b, v, xslot); /* a chain's spine */
    if (!e) return n;
    switch (e->kind) {
    case IR_LAMBDA: return n; /* a capture of v: more uses than these, no form */
    case IR_CALL: {
        for (int i = 0; i < e->u.call.nargs; i++) n += prep_words_uses(e->u.call.args[i], v, xslot);
        if (e->kind != IR_CALL || e->u.call.kind != CALL_BUILTIN || e->xop != EVAL_X_BUILTIN) return n;
        int bi = e->u.call.callee.index;
        const ir_expr *a = e->u.call.nargs > 0 ? e->u.call.args[0] : NULL;
        if (prep_words_use(e, v)) {
            n++;
            if (xslot) e->xslot = xslot;
        } else if (xslot && (bi == BI_PARSE_INT || bi == BI_PARSE_FLOAT) && a->kind == IR_CALL &&
                   a->xslot == xslot && a->u.call.callee.index == BI_NTH && prep_is_leaf(a->u.call.args[0]) &&
                   prep_is_leaf(a->u.call.args[1])) {
            e->xslot = EVAL_XW_PARSE;
        }
        return n;
    }
    case IR_CASE:
        n += prep_words_uses(e->a, v, xslot);
        for (int i = 0; i < e->u.cas.nalts; i++) n += prep_words_uses(e->u.cas.alts[i].body, v, xslot);
        return n;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) n += prep_words_uses(e->u.agg.items[i], v, xslot);
        return n;
    default:
        return n + prep_words_uses(e->a, v, xslot) + prep_words_uses(e->b, v, xslot) +
               prep_words_uses(e->c, v, xslot);
    }
}

/* `let w = words(s) in B` in fn's body e whose B reads w only as len(w)
 * and nth(w, K): the words form, with two slots added to fn's frame for
 * the summary, unless they would take a frame on the C stack past
 * EVAL_FRAME_SMALL (a malloc'd frame per call costs more than the list).
 * Not into lambdas (prep_fun does each) nor binop operands (as
 * prep_reuse). */
static void prep_words(ir_fun *fn, ir_expr *e)
{
    if (!e) return;
    switch (e->kind) {
    case IR_LET: {
        prep_words(fn, e->a);
        ir_expr *c = e->a;
        ir_var *w = e->u.let.nbinders == 1 ? e->u.let.binders[0] : NULL;
        if (w && w->slot >= 0 && c->kind == IR_CALL && c->xop == EVAL_X_BUILTIN && c->u.call.kind == CALL_BUILTIN &&
            c->u.call.callee.index == BI_WORDS && c->xslot == 0 && fn->nslots < INT_MAX - 2 &&
            (fn->nslots + 2 <= EVAL_FRAME_SMALL || fn->nslots > EVAL_FRAME_SMALL)) {
            int uses = prep_words_uses(e->b, w, 0);
            if (uses > 0 && stc__ir_expr_count_uses(e->b, w, uses + 1) == uses) {
                c->xslot = fn->nslots + 1; /* two new slots, the first plus one */
                fn->nslots += 2;
                prep_words_uses(e->b, w, c->xslot);
            }
        }
        prep_words(fn, e->b);
        return;
    }
    case IR_LETTUPLE:
    case IR_IF:
    case IR_INL:
    case IR_INR:
    case IR_UNOP:
        prep_words(fn, e->a);
        prep_words(fn, e->b);
        prep_words(fn, e->c);
        return;
    case IR_CASE:
        prep_words(fn, e->a);
        for (int i = 0; i < e->u.cas.nalts; i++) prep_words(fn, e->u.cas.alts[i].body);
        return;
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) prep_words(fn, e->u.call.args[i]);
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) prep_words(fn, e->u.agg.items[i]);
        return;
    default: return;
    }
}

/* EVAL_XW_SLICE: the slices of a variable in e's tail positions. */
static void prep_tail_slice(ir_expr *e)
{
    while (e) {
        switch (e->kind) {
        case IR_LET:
        case IR_LETTUPLE: e = e->b; break;
        case IR_IF:
            prep_tail_slice(e->b);
            e = e->c;
            break;
        case IR_CASE:
            for (int i = 0; i < e->u.cas.nalts; i++) prep_tail_slice(e->u.cas.alts[i].body);
            return;
        case IR_CALL:
            if (e->xop == EVAL_X_BUILTIN && e->u.call.kind == CALL_BUILTIN && e->u.call.callee.index == BI_SLICE &&
                e->u.call.args[0]->kind == IR_VAR && e->xslot == 0)
                e->xslot = EVAL_XW_SLICE;
            return;
        default: return;
        }
    }
}

static void prep_fun(const ir_program *p, ir_fun *fn)
{
    if (fn && fn->body) {
        prep_expr(p, fn->body);
        prep_words(fn, fn->body);
        prep_tail_slice(fn->body);
    }
}

/* Recursion bounded by IR_MAX_DEPTH (the parser's and builder's nesting
 * limit) except along binop chains, which prep_binop walks by loop. */
static void prep_expr(const ir_program *p, ir_expr *e)
{
    if (!e) return;
    switch (e->kind) {
    case IR_LIT:
    case IR_NAME:
    case IR_VAR:
    case IR_FUNREF:
    case IR_THREADREF: return;
    case IR_LAMBDA: prep_fun(p, e->u.fn); return;
    case IR_LET:
    case IR_LETTUPLE:
    case IR_IF:
    case IR_INL:
    case IR_INR:
    case IR_UNOP:
        prep_expr(p, e->a);
        prep_expr(p, e->b);
        prep_expr(p, e->c);
        return;
    case IR_CASE:
        prep_expr(p, e->a);
        for (int i = 0; i < e->u.cas.nalts; i++) prep_expr(p, e->u.cas.alts[i].body);
        return;
    case IR_BINOP: prep_binop(p, e); return;
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) prep_expr(p, e->u.call.args[i]);
        if (prep_direct_call(p, e)) e->xop = EVAL_X_CALL_FUN;
        else if (prep_thread_call(p, e)) e->xop = EVAL_X_CALL_THREAD;
        else if (prep_builtin_call(e)) e->xop = EVAL_X_BUILTIN;
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) prep_expr(p, e->u.agg.items[i]);
        return;
    }
}

/* Whether v is one of fn's parameters (whose slots no binder shares). */
static bool prep_is_param(const ir_fun *fn, const ir_var *v)
{
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i] == v) return true;
    return false;
}

/* EVAL_X_LET_MOVE and EVAL_X_TUPLE_REUSE in top-level function fn's body
 * e: slot is the slot of the dead parameter whose block the tuples of e
 * may reuse, or -1.  A let-tuple moves only from a parameter it is the
 * one mention of in the whole body: then the parameter is dead in the
 * let's body and after the let alike (`(let (a, b) = s in a, s)` must
 * not move).  Not into lambdas (frames of their own) nor binop
 * operands (a tuple there is rare, and this keeps the recursion bounded
 * by IR_MAX_DEPTH: binop chains nest without limit). */
static void prep_reuse(const ir_fun *fn, ir_expr *e, int slot)
{
    if (!e) return;
    switch (e->kind) {
    case IR_LETTUPLE:
        prep_reuse(fn, e->a, slot);
        if (e->xop == EVAL_X_GENERIC && e->a->kind == IR_VAR && prep_is_param(fn, e->a->u.var) &&
            e->a->u.var->slot >= 0 && stc__ir_expr_count_uses(fn->body, e->a->u.var, 2) == 1) {
            e->xop = EVAL_X_LET_MOVE;
            slot = e->a->u.var->slot;
        }
        prep_reuse(fn, e->b, slot);
        return;
    case IR_LET:
    case IR_IF:
    case IR_INL:
    case IR_INR:
    case IR_UNOP:
        prep_reuse(fn, e->a, slot);
        prep_reuse(fn, e->b, slot);
        prep_reuse(fn, e->c, slot);
        return;
    case IR_CASE:
        prep_reuse(fn, e->a, slot);
        for (int i = 0; i < e->u.cas.nalts; i++) prep_reuse(fn, e->u.cas.alts[i].body, slot);
        return;
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) prep_reuse(fn, e->u.call.args[i], slot);
        return;
    case IR_TUPLE:
        if (slot >= 0 && e->xop == EVAL_X_GENERIC) {
            e->xop = EVAL_X_TUPLE_REUSE;
            e->xslot = slot;
        }
        /* fall through */
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) prep_reuse(fn, e->u.agg.items[i], slot);
        return;
    default: return;
    }
}

void stc__eval_prepare(ir_program *p)
{
    for (int i = 0; i < p->nfuns; i++) prep_fun(p, p->funs[i]);
    for (int i = 0; i < p->nfuns; i++)
        if (p->funs[i] && p->funs[i]->body && p->funs[i]->nslots > 0) prep_reuse(p->funs[i], p->funs[i]->body, -1);
    for (int i = 0; i < p->nthreads; i++) prep_expr(p, p->threads[i]->init);
    prep_expr(p, p->main);
    stc__eval_tk_prepare(p); /* after prep_reuse: a let-tuple's move is its mark */
}
