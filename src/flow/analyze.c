/* analyze.c - which thread states an expression may write.
 *
 * A function's set is the union over its body of: threads called directly
 * (a thread writes itself unless it is read-only, plus whatever its own
 * function calls), functions called or named, lambdas written inside it
 * (they may be called later), and `all` for a call through a function
 * value (it could be anything; so is a builtin handed a function from a
 * variable, as in smap(g, xs) or fold(f, z, xs): a closure's writes count where it is written).  Sets of mutually recursive functions are
 * found by iterating to a fixpoint.  A lang thread is read-only when every
 * path of its function returns its state parameter itself; the evaluator
 * then never writes its state (stc__eval_thread_result skips identical values),
 * so its calls can run on several workers at once. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow.h"

static flow_set flow_set_new(flow_info *fi)
{
    flow_set s = {false, stc__arena_alloc(fi->mem, (size_t)fi->nwords * sizeof(uint64_t) + 1)};
    if (!s.bits) s.all = true;
    return s;
}

/* dst |= src; returns whether dst changed. */
static bool flow_set_join(const flow_info *fi, flow_set *dst, flow_set src)
{
    bool changed = false;
    if (src.all && !dst->all) {
        dst->all = true;
        changed = true;
    }
    if (!src.bits || !dst->bits) return changed;
    for (int i = 0; i < fi->nwords; i++) {
        uint64_t v = dst->bits[i] | src.bits[i];
        if (v != dst->bits[i]) {
            dst->bits[i] = v;
            changed = true;
        }
    }
    return changed;
}

bool stc__flow_set_empty(const flow_info *fi, flow_set s)
{
    if (s.all) return false;
    for (int i = 0; s.bits && i < fi->nwords; i++)
        if (s.bits[i]) return false;
    return true;
}

/* A call of a builtin that calls its function argument (args[0]; update:
 * args[3]), like
 * fold and filter, when that argument is not a lambda or a top-level
 * function written there: a function value, which could call anything.
 * (A written one is covered by walking the argument itself.) */
static bool flow_calls_unknown_arg(const ir_expr *e)
{
    int idx = e->u.call.callee.index;
    const ir_expr *f;
    if (idx == BI_FOLD || idx == BI_FILTER) f = e->u.call.nargs > 0 ? e->u.call.args[0] : NULL;
    else if (idx == BI_UPDATE) f = e->u.call.nargs == 4 ? e->u.call.args[3] : NULL; /* update(m, k, d, f) */
    else return false;
    return !f || (f->kind != IR_LAMBDA && f->kind != IR_FUNREF);
}

/* state(t) adds t itself (unless t is read-only: then its state never
 * changes), not what t's function writes: reading calls nothing. */
static void flow_state_read(flow_info *fi, const ir_expr *e, flow_set *acc)
{
    const ir_expr *a = e->u.call.nargs == 1 ? e->u.call.args[0] : NULL;
    int t = a && a->kind == IR_THREADREF ? a->u.index : -1;
    if (t < 0 || t >= fi->p->nthreads || !acc->bits) {
        acc->all = true;
        return;
    }
    if (!fi->readonly[t]) acc->bits[t / 64] |= (uint64_t)1 << (t % 64);
}

/* Adds to *acc what evaluating e may write, with the current estimates. */
static void flow_collect(flow_info *fi, const ir_expr *e, flow_set *acc);

static void flow_collect_fun(flow_info *fi, const ir_fun *fn, flow_set *acc)
{
    if (fn && fn->body) flow_collect(fi, fn->body, acc);
}

static void flow_collect(flow_info *fi, const ir_expr *e, flow_set *acc)
{
    if (!e || acc->all) return;
    const ir_program *p = fi->p;
    while (e->kind == IR_BINOP) { /* a chain: its left spine by a loop (ir_chain in ir.h) */
        flow_collect(fi, e->b, acc);
        e = e->a;
        if (!e || acc->all) return;
    }
    switch (e->kind) {
    case IR_FUNREF:
        if (e->u.index >= 0 && e->u.index < p->nfuns) flow_set_join(fi, acc, fi->fun_sets[e->u.index]);
        return;
    case IR_THREADREF:
        if (e->u.index >= 0 && e->u.index < p->nthreads) flow_set_join(fi, acc, fi->thread_sets[e->u.index]);
        return;
    case IR_LAMBDA: flow_collect_fun(fi, e->u.fn, acc); return;
    case IR_CALL:
        switch (e->u.call.kind) {
        case CALL_FUN:
            if (e->u.call.callee.index >= 0 && e->u.call.callee.index < p->nfuns)
                flow_set_join(fi, acc, fi->fun_sets[e->u.call.callee.index]);
            break;
        case CALL_THREAD:
            if (e->u.call.callee.index >= 0 && e->u.call.callee.index < p->nthreads)
                flow_set_join(fi, acc, fi->thread_sets[e->u.call.callee.index]);
            break;
        case CALL_BUILTIN: /* smap(g, xs), fold(f, z, xs), ...: g a variable: what g writes is not known here */
            if (e->u.call.callee.index == BI_STATE) { /* reads t: counts as a write of t, ordered with its calls */
                flow_state_read(fi, e, acc);
                return;
            }
            if (flow_calls_unknown_arg(e)) { acc->all = true; return; } /* like a call through a value */
            for (int i = 0; i < e->u.call.nargs; i++) {
                const ir_expr *a = e->u.call.args[i];
                ir_type *t = a->type ? stc__ir_type_resolve(a->type) : NULL;
                if (t && t->kind == TY_FUN && a->kind != IR_LAMBDA && a->kind != IR_FUNREF && a->kind != IR_THREADREF) {
                    acc->all = true;
                    return;
                }
            }
            break;
        default: acc->all = true; return; /* through a value: unknown */
        }
        for (int i = 0; i < e->u.call.nargs; i++) flow_collect(fi, e->u.call.args[i], acc);
        return;
    case IR_CASE:
        flow_collect(fi, e->a, acc);
        for (int i = 0; i < e->u.cas.nalts; i++) flow_collect(fi, e->u.cas.alts[i].body, acc);
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) flow_collect(fi, e->u.agg.items[i], acc);
        return;
    default:
        flow_collect(fi, e->a, acc);
        flow_collect(fi, e->b, acc);
        flow_collect(fi, e->c, acc);
        return;
    }
}

static bool flow_type_fun(ir_type *t, int depth)
{
    t = t ? stc__ir_type_resolve(t) : NULL;
    if (!t || t->kind == TY_FUN || t->kind == TY_VAR || depth > 64) return true;
    for (int i = 0; i < t->n; i++)
        if (t->args && flow_type_fun(t->args[i], depth + 1)) return true;
    return false;
}

bool stc__flow_type_may_hold_fun(ir_type *t) { return flow_type_fun(t, 0); }

flow_set stc__flow_expr_set(flow_info *fi, const ir_expr *e)
{
    flow_set s = flow_set_new(fi);
    flow_collect(fi, e, &s);
    return s;
}

/* Whether every path of e ends in a pair whose second item is state var s. */
static bool flow_returns_state(const ir_expr *e, const ir_var *s)
{
    switch (e->kind) {
    case IR_LET:
    case IR_LETTUPLE: return flow_returns_state(e->b, s);
    case IR_IF: return flow_returns_state(e->b, s) && flow_returns_state(e->c, s);
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (!flow_returns_state(e->u.cas.alts[i].body, s)) return false;
        return e->u.cas.nalts > 0;
    case IR_TUPLE:
        return e->u.agg.nitems == 2 && e->u.agg.items[1]->kind == IR_VAR && e->u.agg.items[1]->u.var == s;
    default: return false;
    }
}

/* A lang thread whose function is `(g, h)` with g free of the state, h
 * free of the inputs, and neither writing any thread: g can be replicated
 * and h folded serially.  A C thread: STC_INDEPENDENT with both halves. */
static bool flow_is_split(flow_info *fi, const ir_thread *th)
{
    if (th->kind == THREAD_C)
        return th->cdef && th->cdef->access == STC_INDEPENDENT && th->cdef->output_fn && th->cdef->state_fn;
    if (th->kind != THREAD_LANG || th->keyed || th->fun < 0 || th->fun >= fi->p->nfuns) return false;
    const ir_fun *fn = fi->p->funs[th->fun];
    const ir_expr *body = fn->body;
    if (fn->nparams < 1 || fn->ncaptures || !body || body->kind != IR_TUPLE || body->u.agg.nitems != 2)
        return false;
    const ir_var *s = fn->params[fn->nparams - 1];
    const ir_expr *g = body->u.agg.items[0], *h = body->u.agg.items[1];
    if (stc__ir_expr_uses(g, s)) return false;
    for (int i = 0; i + 1 < fn->nparams; i++)
        if (stc__ir_expr_uses(h, fn->params[i])) return false;
    return stc__flow_set_empty(fi, stc__flow_expr_set(fi, g)) && stc__flow_set_empty(fi, stc__flow_expr_set(fi, h));
}

/* Whether e may run an smap, or calls something that may: `calls` also
 * counts any call of a function, a thread or sin_iter (some work). */
static bool flow_scan(const flow_info *fi, const ir_expr *e, bool calls)
{
    if (!e) return false;
    const ir_program *p = fi->p;
    while (e->kind == IR_BINOP) { /* a chain: its left spine by a loop */
        if (flow_scan(fi, e->b, calls)) return true;
        e = e->a;
        if (!e) return false;
    }
    switch (e->kind) {
    case IR_FUNREF: return e->u.index >= 0 && e->u.index < p->nfuns && fi->fun_smap[e->u.index];
    case IR_LAMBDA: return flow_scan(fi, e->u.fn->body, calls);
    case IR_THREADREF: return false;
    case IR_CALL: {
        int idx = e->u.call.callee.index;
        switch (e->u.call.kind) {
        case CALL_BUILTIN:
            if (idx == BI_SMAP || (calls && (idx == BI_SIN_ITER || idx == BI_FOLD || idx == BI_FILTER || idx == BI_UPDATE))) return true;
            if (flow_calls_unknown_arg(e)) return true; /* through a value: anything */
            break;
        case CALL_FUN:
            if (calls || (idx >= 0 && idx < p->nfuns && fi->fun_smap[idx])) return true;
            break;
        case CALL_THREAD: {
            if (calls) return true;
            const ir_thread *th = idx >= 0 && idx < p->nthreads ? p->threads[idx] : NULL;
            if (th && th->kind == THREAD_LANG && th->fun >= 0 && th->fun < p->nfuns && fi->fun_smap[th->fun])
                return true;
            break;
        }
        default: return true; /* through a value: anything */
        }
        for (int i = 0; i < e->u.call.nargs; i++)
            if (flow_scan(fi, e->u.call.args[i], calls)) return true;
        return false;
    }
    case IR_CASE:
        if (flow_scan(fi, e->a, calls)) return true;
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (flow_scan(fi, e->u.cas.alts[i].body, calls)) return true;
        return false;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (flow_scan(fi, e->u.agg.items[i], calls)) return true;
        return false;
    default: return flow_scan(fi, e->a, calls) || flow_scan(fi, e->b, calls) || flow_scan(fi, e->c, calls);
    }
}

bool stc__flow_expr_smaps(const flow_info *fi, const ir_expr *e) { return flow_scan(fi, e, false); }
bool stc__flow_expr_calls(const flow_info *fi, const ir_expr *e) { return flow_scan(fi, e, true); }

bool stc__flow_sets_disjoint(const flow_info *fi, flow_set a, flow_set b)
{
    if (a.all || b.all) return stc__flow_set_empty(fi, a) || stc__flow_set_empty(fi, b);
    for (int i = 0; a.bits && b.bits && i < fi->nwords; i++)
        if (a.bits[i] & b.bits[i]) return false;
    return true;
}

flow_info *stc__flow_info_new(const ir_program *p)
{
    flow_info *fi = calloc(1, sizeof *fi);
    if (!fi) return NULL;
    fi->p = p;
    fi->nwords = (p->nthreads + 63) / 64;
    fi->nshards = FLOW_GRAPH_SHARDS; /* the runtime sets its own */
    if (!(fi->mem = stc__arena_new())) goto oom;
    size_t nf = p->nfuns > 0 ? (size_t)p->nfuns : 0, nt = p->nthreads > 0 ? (size_t)p->nthreads : 0;
    fi->fun_sets = stc__arena_alloc(fi->mem, (nf + 1) * sizeof *fi->fun_sets);
    fi->thread_sets = stc__arena_alloc(fi->mem, (nt + 1) * sizeof *fi->thread_sets);
    fi->readonly = stc__arena_alloc(fi->mem, nt + 1);
    fi->split = stc__arena_alloc(fi->mem, nt + 1);
    fi->fun_smap = stc__arena_alloc(fi->mem, nf + 1);
    if (!fi->fun_sets || !fi->thread_sets || !fi->readonly || !fi->split || !fi->fun_smap) goto oom;
    for (size_t i = 0; i < nf; i++) fi->fun_sets[i] = flow_set_new(fi);
    for (size_t i = 0; i < nt; i++) {
        const ir_thread *th = p->threads[i];
        fi->thread_sets[i] = flow_set_new(fi);
        if (th->kind == THREAD_C) {
            fi->readonly[i] = th->cdef && (th->cdef->access == STC_READS || th->cdef->access == STC_PURE);
        } else if (th->fun >= 0 && th->fun < p->nfuns && !th->keyed) { /* keyed: a new key is a write */
            const ir_fun *fn = p->funs[th->fun];
            fi->readonly[i] = fn->nparams >= 1 && fn->body &&
                              flow_returns_state(fn->body, fn->params[fn->nparams - 1]);
        }
        if (!fi->readonly[i] && fi->thread_sets[i].bits) fi->thread_sets[i].bits[i / 64] |= (uint64_t)1 << (i % 64);
    }
    /* Fixpoint: the sets only grow, and are bounded. */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < nf; i++) {
            flow_set s = flow_set_new(fi);
            flow_collect_fun(fi, p->funs[i], &s);
            changed |= flow_set_join(fi, &fi->fun_sets[i], s);
        }
        for (size_t i = 0; i < nt; i++) {
            const ir_thread *th = p->threads[i];
            if (th->kind == THREAD_LANG && th->fun >= 0 && th->fun < p->nfuns)
                changed |= flow_set_join(fi, &fi->thread_sets[i], fi->fun_sets[th->fun]);
        }
    }
    if (stc__flow_calls_analyze(fi) != 0) goto oom;
    for (size_t i = 0; i < nt; i++) fi->split[i] = !fi->readonly[i] && flow_is_split(fi, p->threads[i]);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < nf; i++)
            if (!fi->fun_smap[i] && stc__flow_expr_smaps(fi, p->funs[i]->body)) fi->fun_smap[i] = changed = true;
    }
    return fi;
oom:
    stc__flow_info_free(fi);
    return NULL;
}

void stc__flow_info_free(flow_info *fi)
{
    if (!fi) return;
    stc__arena_free(fi->mem);
    free(fi);
}
