/* types_decl.c - type checking of declarations: top-level functions per
 * strongly connected component of the call graph, thread bindings, inits,
 * main, the final defaults, and the stc__types_check entry point (see types.c
 * for the overall scheme). */
#include <stdlib.h>
#include <string.h>

#include "ir/cthread.h"
#include "ir/types_internal.h"

/* ---- Threads ------------------------------------------------------------------------ */

/* Takes the declared types of a C thread, parsed when it was registered
 * (shared with the env: they have no type variables, so nothing here
 * writes them). */
static void types_c_thread(types_ck *ck, ir_thread *th)
{
    const ir_cthread *ct = th->cthread;
    const stc_thread_def *def = th->cdef;
    ir_loc loc = th->target_loc.line > 0 ? th->target_loc : th->loc;
    ir_type *t = ct && ct->type ? stc__ir_type_resolve(ct->type) : NULL;
    ir_type *s = !ct ? NULL : ct->state_type ? ct->state_type : ck->t_unit;
    if (!t || !s || t->kind != TY_FUN) { /* stc_env_add_thread let no such thread in */
        stc__types_error(ck, loc, "C thread '%s' has an invalid type \"%s\"%s", def->name,
                    def->type ? def->type : "", def->state_type ? " or state type" : "");
        return;
    }
    th->in_type = t->args[0];
    th->out_type = t->args[1];
    th->state_type = s;
}

/* Binds lang thread th to an instance of its function's scheme. */
static void types_lang_thread(types_ck *ck, ir_thread *th)
{
    ir_fun *fn = ck->p->funs[th->fun];
    if (ck->fun_failed[th->fun] || !fn->type || fn->nparams < 1) return;
    ir_loc loc = th->target_loc.line > 0 ? th->target_loc : th->loc;
    char nm[112];
    stc__types_esc(nm, sizeof nm, fn->name);
    ir_type *T = stc__types_instantiate(ck, fn->type);
    if (!T) {
        if (!ck->oom) stc__types_fail(ck, loc, TU_LIMIT, "", NULL, NULL);
        return;
    }
    T = stc__ir_type_resolve(T);
    ir_type *P = stc__ir_type_resolve(T->args[0]), *R = T->args[1];
    int k = fn->nparams;
    ir_type *state = P, *in = ck->t_unit;
    if (k >= 2) { /* P is the k-tuple of parameter types built by stc__types_fun_begin */
        state = P->args[k - 1];
        in = stc__types_pack(ck, k - 1, P->args);
    }
    ir_type *pair = stc__types_tuple_fresh(ck, 2);
    if (!in || !pair) return;
    int rc = stc__types_unify(ck, pair, R);
    if (rc) {
        stc__types_fail_fmt(ck, loc, rc,
                       stc__types_fmt("thread function '%s' must return a pair (output, state), not %%s", nm),
                       R, NULL);
        return;
    }
    rc = stc__types_unify(ck, state, pair->args[1]);
    if (rc) {
        stc__types_fail_fmt(ck, loc, rc,
                       stc__types_fmt("thread function '%s' takes a state of type %%s but returns a state of "
                                 "type %%s", nm),
                       state, pair->args[1]);
        return;
    }
    if (th->keyed && k >= 2) { /* f(key, inputs..., state): the key is a map key */
        rc = stc__types_unify(ck, th->key_type, P->args[0]);
        if (rc) {
            char tn[112];
            stc__types_esc(tn, sizeof tn, th->name);
            stc__types_fail_fmt(ck, th->loc, rc,
                           stc__types_fmt("the key of keyed thread '%s' (the first parameter of '%s') has type "
                                     "%%s, which cannot be a key (%%s)", tn, nm),
                           P->args[0], th->key_type);
            return;
        }
    }
    ir_type *have_state = th->keyed ? th->key_state_type : th->state_type;
    ir_type *want[3] = {in, pair->args[0], state}, *have[3] = {th->in_type, th->out_type, have_state};
    static const char *const what[3] = {"input", "output", "state"};
    for (int i = 0; i < 3; i++) {
        rc = stc__types_unify(ck, have[i], want[i]);
        if (rc) {
            char tn[112];
            stc__types_esc(tn, sizeof tn, th->name);
            stc__types_fail_fmt(ck, th->loc, rc,
                           stc__types_fmt("thread '%s' is used with %s type %%s, but '%s' gives %%s", tn, what[i], nm),
                           have[i], want[i]);
            return;
        }
    }
}

/* ---- Strongly connected components -------------------------------------------------- */

typedef struct types_graph {
    int *start; /* CSR: edges of fun f are adj[start[f] .. start[f+1]) */
    int *adj;
    int nadj, adj_cap;
} types_graph;

static bool types_edge(types_ck *ck, types_graph *g, int to)
{
    if (g->nadj == g->adj_cap) {
        int cap = g->adj_cap ? g->adj_cap * 2 : 64;
        int *a = realloc(g->adj, (size_t)cap * sizeof *a);
        if (!a) { ck->oom = true; return false; }
        g->adj = a;
        g->adj_cap = cap;
    }
    g->adj[g->nadj++] = to;
    return true;
}

/* Appends the funs e refers to (threads count as their functions). */
static bool types_collect(types_ck *ck, types_graph *g, const ir_expr *e, int depth)
{
    if (!e || depth > TYPES_MAX_EXPR_DEPTH) return true;
    const ir_program *p = ck->p;
    if (e->kind == IR_BINOP) { /* a chain by a loop, its operands in order (ir_chain) */
        ir_chain c;
        bool ok = stc__ir_chain_init(&c, e);
        if (!ok) ck->oom = true;
        if (ok) ok = types_collect(ck, g, c.nodes[c.n - 1]->a, depth + 1);
        for (size_t i = c.n; ok && i-- > 0;) ok = types_collect(ck, g, c.nodes[i]->b, depth + 1);
        stc__ir_chain_free(&c);
        return ok;
    }
    switch (e->kind) {
    case IR_FUNREF:
        return types_edge(ck, g, e->u.index);
    case IR_THREADREF: {
        const ir_thread *th = p->threads[e->u.index];
        return th->kind != THREAD_LANG || th->fun < 0 || types_edge(ck, g, th->fun);
    }
    case IR_CALL:
        if (e->u.call.kind == CALL_FUN && !types_edge(ck, g, e->u.call.callee.index)) return false;
        if (e->u.call.kind == CALL_THREAD) {
            const ir_thread *th = p->threads[e->u.call.callee.index];
            if (th->kind == THREAD_LANG && th->fun >= 0 && !types_edge(ck, g, th->fun)) return false;
        }
        for (int i = 0; i < e->u.call.nargs; i++)
            if (!types_collect(ck, g, e->u.call.args[i], depth + 1)) return false;
        return true;
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (!types_collect(ck, g, e->u.cas.alts[i].body, depth + 1)) return false;
        return types_collect(ck, g, e->a, depth + 1);
    case IR_LAMBDA:
        return types_collect(ck, g, e->u.fn->body, depth + 1);
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (!types_collect(ck, g, e->u.agg.items[i], depth + 1)) return false;
        return true;
    default:
        return types_collect(ck, g, e->a, depth + 1) && types_collect(ck, g, e->b, depth + 1) &&
               types_collect(ck, g, e->c, depth + 1);
    }
}

/* Infers one component (funs[scc[0..n-1]]) and binds its threads. */
static void types_scc(types_ck *ck, const int *scc, int n, const int *first_thread, const int *next_thread)
{
    ir_program *p = ck->p;
    bool bad = false;
    ck->level = 1;
    ck->cur_loc = p->funs[scc[0]]->loc;
    for (int i = 0; i < n && !bad; i++)
        if (!stc__types_fun_begin(ck, p->funs[scc[i]])) bad = true;
    bool begun = !bad;
    for (int i = 0; i < n && begun; i++) { /* each function reports its own first error */
        ir_fun *fn = p->funs[scc[i]];
        if (!stc__types_fun_body(ck, fn, 0)) bad = true;
        if (ck->oom || ck->fatal) break;
    }
    for (int i = 0; i < n; i++) {
        if (bad) ck->fun_failed[scc[i]] = true;
        else stc__types_generalize(ck, p->funs[scc[i]]->type);
    }
    ck->level = 0;
    for (int i = 0; i < n && !bad; i++)
        for (int t = first_thread[scc[i]]; t >= 0; t = next_thread[t]) types_lang_thread(ck, p->threads[t]);
}

/* Tarjan's algorithm without recursion; components come out callees first. */
static void types_funs(types_ck *ck, const int *first_thread, const int *next_thread)
{
    ir_program *p = ck->p;
    int n = p->nfuns;
    types_graph g = {0};
    g.start = malloc(((size_t)n + 1) * sizeof *g.start);
    int *idx = malloc(((size_t)n + 1) * sizeof *idx), *low = malloc(((size_t)n + 1) * sizeof *low);
    int *stk = malloc(((size_t)n + 1) * sizeof *stk), *cs = malloc(((size_t)n + 1) * sizeof *cs);
    int *pos = malloc(((size_t)n + 1) * sizeof *pos);
    bool *on = calloc((size_t)n + 1, sizeof *on);
    if (!g.start || !idx || !low || !stk || !cs || !pos || !on) { ck->oom = true; goto out; }
    for (int f = 0; f < n; f++) {
        g.start[f] = g.nadj;
        if (!types_collect(ck, &g, p->funs[f]->body, 0)) goto out;
        idx[f] = -1;
    }
    g.start[n] = g.nadj;
    int counter = 0, nstk = 0, ncs = 0;
    for (int root = 0; root < n; root++) {
        if (idx[root] >= 0) continue;
        idx[root] = low[root] = counter++;
        stk[nstk++] = root, on[root] = true;
        cs[ncs] = root, pos[ncs++] = g.start[root];
        while (ncs > 0) {
            int v = cs[ncs - 1];
            if (pos[ncs - 1] < g.start[v + 1]) {
                int w = g.adj[pos[ncs - 1]++];
                if (idx[w] < 0) {
                    idx[w] = low[w] = counter++;
                    stk[nstk++] = w, on[w] = true;
                    cs[ncs] = w, pos[ncs++] = g.start[w];
                } else if (on[w] && idx[w] < low[v]) {
                    low[v] = idx[w];
                }
                continue;
            }
            ncs--;
            if (ncs > 0 && low[v] < low[cs[ncs - 1]]) low[cs[ncs - 1]] = low[v];
            if (low[v] != idx[v]) continue;
            int top = nstk;
            do on[stk[--nstk]] = false;
            while (stk[nstk] != v);
            types_scc(ck, stk + nstk, top - nstk, first_thread, next_thread);
            if (ck->oom || ck->fatal) goto out;
        }
    }
out:
    free(g.start), free(g.adj), free(idx), free(low), free(stk), free(cs), free(pos), free(on);
}

/* ---- Main, inits, defaults ------------------------------------------------------------ */

/* Defaults the free variables of every type in e (main or an init). */
static void types_default_expr(types_ck *ck, ir_expr *e, int depth)
{
    if (!e || depth > TYPES_MAX_EXPR_DEPTH || ck->fatal) return;
    stc__types_default(ck, e->type);
    while (e->kind == IR_BINOP) { /* a chain: its left spine by a loop */
        types_default_expr(ck, e->b, depth + 1);
        e = e->a;
        if (!e) return;
        stc__types_default(ck, e->type);
    }
    switch (e->kind) {
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) types_default_expr(ck, e->u.call.args[i], depth + 1);
        return;
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++) types_default_expr(ck, e->u.cas.alts[i].body, depth + 1);
        break;
    case IR_LAMBDA:
        types_default_expr(ck, e->u.fn->body, depth + 1);
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) types_default_expr(ck, e->u.agg.items[i], depth + 1);
        return;
    default:
        break;
    }
    types_default_expr(ck, e->a, depth + 1);
    types_default_expr(ck, e->b, depth + 1);
    types_default_expr(ck, e->c, depth + 1);
}

/* Leaves the unconstrained variables of main's input type open (generic:
 * not defaulted, and stc__eval_value_has_type accepts any value for them). */
static void types_open_input(ir_type *t, int depth)
{
    t = stc__ir_type_resolve(t);
    if (!t || depth > 64) return;
    if (t->kind == TY_VAR) {
        if (!(t->flags & ~(unsigned)TYF_EQ)) t->generic = true; /* sources make no functions */
        return;
    }
    for (int i = 0; i < t->n; i++) types_open_input(t->args[i], depth + 1);
}

static void types_toplevel(types_ck *ck)
{
    ir_program *p = ck->p;
    for (int i = 0; i < p->nthreads && !ck->oom && !ck->fatal; i++) {
        ir_thread *th = p->threads[i];
        if (!th->init) continue;
        ck->cur_loc = stc__types_loc(th->init, th->loc);
        ir_type *t = stc__types_expr(ck, th->init, 0);
        if (!t) continue;
        ir_type *state = th->keyed ? th->key_state_type : th->state_type; /* keyed: a new key's state */
        int rc = stc__types_unify(ck, state, t);
        if (rc) {
            char nm[112];
            stc__types_esc(nm, sizeof nm, th->name);
            stc__types_fail_fmt(ck, stc__types_loc(th->init, th->loc), rc,
                           stc__types_fmt("init of thread '%s' has type %%s, but the state has type %%s", nm), t,
                           state);
        }
    }
    ck->cur_loc = stc__types_loc(p->main, p->main_loc);
    ir_type *input_elem = NULL;
    if (p->main_param && !ck->oom && !ck->fatal) {
        /* main's input stream is a list; its items are str unless main's
         * body says otherwise (a C host's source may produce any type). */
        input_elem = stc__types_fresh(ck);
        if (!(p->main_param->type = input_elem ? stc__types_list(ck, input_elem) : NULL)) ck->oom = true;
    }
    if (p->main && !ck->oom && !ck->fatal) stc__types_expr(ck, p->main, 0);
    if (input_elem && !ck->oom && !ck->fatal) {
        /* Lines are str: an input item used only as len's or <'s operand
         * is one.  Parts of the items nothing constrains stay open (any
         * value is fine, the source decides), e.g. the index of a merged
         * stream's (INDEX, LINE) events that main only prints. */
        ir_type *t = stc__ir_type_resolve(input_elem);
        if (t->kind == TY_VAR && !t->generic && (t->flags & (TYF_ORD | TYF_SIZED)) && !(t->flags & TYF_NUM))
            t->ref = ck->t_str;
        types_open_input(input_elem, 0);
    }
    for (int i = 0; i < p->nthreads; i++) {
        ir_thread *th = p->threads[i];
        stc__types_default(ck, th->in_type);
        stc__types_default(ck, th->out_type);
        stc__types_default(ck, th->state_type);
        types_default_expr(ck, th->init, 0);
    }
    types_default_expr(ck, p->main, 0);
}

int stc__types_check(ir_program *p, stc_diags *d)
{
    types_ck ck = {.p = p, .d = d};
    ck.t_int = stc__ir_type_new(p, TY_INT, 0);
    ck.t_float = stc__ir_type_new(p, TY_FLOAT, 0);
    ck.t_bool = stc__ir_type_new(p, TY_BOOL, 0);
    ck.t_str = stc__ir_type_new(p, TY_STR, 0);
    ck.t_unit = stc__ir_type_new(p, TY_UNIT, 0);
    ck.fun_failed = calloc((size_t)p->nfuns + 1, sizeof *ck.fun_failed);
    int *first_thread = malloc(((size_t)p->nfuns + 1) * sizeof *first_thread);
    int *next_thread = malloc(((size_t)p->nthreads + 1) * sizeof *next_thread);
    if (!ck.t_int || !ck.t_float || !ck.t_bool || !ck.t_str || !ck.t_unit || !ck.fun_failed ||
        !first_thread || !next_thread) {
        ck.oom = true;
        goto out;
    }
    for (int f = 0; f < p->nfuns; f++) first_thread[f] = -1;
    /* Thread types first: calls to a thread may be inferred before the
     * thread's own function. */
    for (int i = p->nthreads - 1; i >= 0; i--) {
        ir_thread *th = p->threads[i];
        next_thread[i] = -1;
        if (th->kind == THREAD_C && th->cdef) {
            types_c_thread(&ck, th);
        } else {
            th->in_type = stc__types_fresh(&ck);
            th->out_type = stc__types_fresh(&ck);
            th->state_type = stc__types_fresh(&ck);
            if (th->keyed) { /* keyed_types: the state is the map of the keys' states */
                th->key_type = stc__types_fresh_flag(&ck, TYF_EQ, "a keyed thread's key");
                th->key_state_type = stc__types_fresh(&ck);
                th->state_type = stc__types_map(&ck, th->key_type, th->key_state_type);
                if (!th->key_type || !th->key_state_type) ck.oom = true;
            }
            if (th->fun >= 0) {
                next_thread[i] = first_thread[th->fun];
                first_thread[th->fun] = i;
            }
        }
        if (!th->in_type || !th->out_type || !th->state_type) { /* errors: keep going */
            if (!th->in_type) th->in_type = stc__types_fresh(&ck);
            if (!th->out_type) th->out_type = stc__types_fresh(&ck);
            if (!th->state_type) th->state_type = stc__types_fresh(&ck);
        }
        if (ck.oom) goto out;
    }
    types_funs(&ck, first_thread, next_thread);
    if (!ck.oom && !ck.fatal) types_toplevel(&ck);
out:
    if (ck.fatal && !ck.limit_reported)
        stc__types_fail(&ck, ck.cur_loc, TU_LIMIT, "", NULL, NULL);
    if (ck.oom) stc__diags_add(d, 0, 0, "out of memory during type checking");
    free(ck.origins);
    free(ck.fun_failed);
    free(first_thread);
    free(next_thread);
    return ck.failed || ck.oom || ck.fatal ? -1 : 0;
}
