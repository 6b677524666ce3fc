/* param_fns.c - the functions an smap maps when its function is a
 * parameter: `fun each(g, xs) = smap(g, xs)` called as
 * `each(fn x => t(x), xs)` maps that lambda, and the runtime plans the
 * smap for it (a plan per smap node and function).  `stc graph` shows
 * those plans when every call of the helper passes a function it can
 * name: a lambda, a function or a thread. */
#include <stdlib.h>

#include "flow/flow.h"

typedef struct param_ctx {
    int fun, param;           /* calls of p->funs[fun], argument param */
    const ir_expr **fns, **calls;
    int n, cap;
    bool unknown, oom;
} param_ctx;

static bool same_fn(const ir_expr *a, const ir_expr *b)
{
    if (a->kind != b->kind) return false;
    return a->kind == IR_LAMBDA ? a->u.fn == b->u.fn : a->u.index == b->u.index;
}

static void param_note(param_ctx *c, const ir_expr *call)
{
    if (call->u.call.nargs <= c->param) {
        c->unknown = true; /* a tuple adapted to the parameters: not followed */
        return;
    }
    const ir_expr *f = call->u.call.args[c->param];
    if (f->kind != IR_LAMBDA && f->kind != IR_FUNREF && f->kind != IR_THREADREF) {
        c->unknown = true;
        return;
    }
    for (int i = 0; i < c->n; i++)
        if (same_fn(c->fns[i], f)) return;
    if (c->n == c->cap) {
        int ncap = c->cap ? 2 * c->cap : 4;
        const ir_expr **nf = realloc(c->fns, (size_t)ncap * sizeof *nf);
        if (nf) c->fns = nf;
        const ir_expr **nc = nf ? realloc(c->calls, (size_t)ncap * sizeof *nc) : NULL;
        if (!nf || !nc) {
            c->oom = true;
            return;
        }
        c->calls = nc;
        c->cap = ncap;
    }
    c->fns[c->n] = f;
    c->calls[c->n++] = call;
}

static void param_walk(param_ctx *c, const ir_expr *e, int depth)
{
    if (!e || c->unknown || c->oom || depth > IR_MAX_DEPTH + 8) return;
    switch (e->kind) {
    case IR_BINOP: { /* a chain by a loop (ir_chain in ir.h) */
        ir_chain ch;
        if (stc__ir_chain_init(&ch, e)) {
            param_walk(c, ch.nodes[ch.n - 1]->a, depth + 1);
            for (size_t i = ch.n; i-- > 0;) param_walk(c, ch.nodes[i]->b, depth + 1);
        } else {
            c->oom = true;
        }
        stc__ir_chain_free(&ch);
        return;
    }
    case IR_LAMBDA: param_walk(c, e->u.fn->body, depth + 1); return;
    case IR_FUNREF:
        if (e->u.index == c->fun) c->unknown = true; /* the helper as a value: called who knows how */
        return;
    case IR_CALL:
        if (e->u.call.kind == CALL_FUN && e->u.call.callee.index == c->fun) param_note(c, e);
        for (int i = 0; i < e->u.call.nargs; i++) param_walk(c, e->u.call.args[i], depth + 1);
        return;
    case IR_CASE:
        param_walk(c, e->a, depth + 1);
        for (int i = 0; i < e->u.cas.nalts; i++) param_walk(c, e->u.cas.alts[i].body, depth + 1);
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) param_walk(c, e->u.agg.items[i], depth + 1);
        return;
    default:
        param_walk(c, e->a, depth + 1);
        param_walk(c, e->b, depth + 1);
        param_walk(c, e->c, depth + 1);
        return;
    }
}

int stc__flow_param_fns(const ir_program *p, const ir_expr *smap, const ir_expr ***fns, const ir_expr ***calls)
{
    *fns = *calls = NULL;
    const ir_expr *f = smap->u.call.args[0];
    if (f->kind != IR_VAR || !f->u.var->owner) return 0;
    const ir_fun *owner = f->u.var->owner;
    param_ctx c = {.fun = -1, .param = -1};
    for (int i = 0; i < p->nfuns; i++)
        if (p->funs[i] == owner) c.fun = i;
    for (int k = 0; k < owner->nparams; k++)
        if (owner->params[k] == f->u.var) c.param = k;
    if (c.fun < 0 || c.param < 0) return 0; /* a lambda's parameter or a let binder */
    param_walk(&c, p->main, 0);
    for (int i = 0; i < p->nfuns; i++) param_walk(&c, p->funs[i]->body, 0);
    for (int t = 0; t < p->nthreads; t++) param_walk(&c, p->threads[t]->init, 0);
    if (c.oom || c.unknown || c.n == 0) {
        free(c.fns);
        free(c.calls);
        return c.oom ? -1 : 0;
    }
    *fns = c.fns;
    *calls = c.calls;
    return c.n;
}

flow_plan *stc__flow_plan_for_fn(flow_info *fi, const ir_expr *smap, const ir_expr *f)
{
    switch (f->kind) {
    case IR_LAMBDA: return stc__flow_plan_build(fi, smap, f->u.fn, -1);
    case IR_FUNREF: return stc__flow_plan_build(fi, smap, fi->p->funs[f->u.index], -1);
    case IR_THREADREF: return stc__flow_plan_build(fi, smap, NULL, f->u.index);
    default: return NULL;
    }
}
