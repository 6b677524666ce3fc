/* gen_stage.c - the generator's main (see gen.c): 1-4 stages
 * `let rI = STAGE in ... (r0, r1, ...)`. A stage is an smap with a random
 * body (int, tuple or sum valued) over range(0, N), range(a, b), a range
 * with let-bound bounds, a literal list, [], an earlier stage's result or an
 * inline smap of a thread; an smap of a thread, function or wrapper passed
 * directly, or of a let-bound lambda; a tuple of two smaps; a top-level
 * tuple of thread calls; or a plain expression. In programs with chains
 * (g->chains), some stages are chains of independent lets evaluated by main
 * (see "Chains" below). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"

static int pick_n(gen *g)
{
    int r = rnd(g, 100), max = g->size.items;
    int n = r < 4 ? 0 : r < 8 ? 1 : r < 40 ? 2 + rnd(g, 10) : rnd(g, max + 1);
    return n > max ? max : n;
}

/* Range bounds held in variables: (let vA = a in (let vB = b in smap(..., range(vA, vB)))). */
typedef struct var_range {
    bool on;
    int va, vb, a, b;
} var_range;

/* A list to smap over; its element type, and a bound on its int items (0: unknown). */
static void gen_source(gen *g, etype *elem, int *bound, var_range *vr)
{
    int r = rnd(g, 100), n, t;
    *elem = E_INT;
    *bound = 0;
    if (r < 30 && g->cur_stage > 0) {
        int j = rnd(g, g->cur_stage);
        if (g->st[j].is_list) {
            emit(g, "r%d", j);
            *elem = g->st[j].elem;
            return;
        }
    }
    if (r < 38) {
        emit(g, "[]");
    } else if (r < 50) {
        int k = 1 + rnd(g, 8);
        emit(g, "[");
        for (int i = 0; i < k; i++) emit(g, "%s%d", i ? ", " : "", rnd(g, 100));
        emit(g, "]");
        *bound = 100;
    } else if (r < 58) {
        int a = rnd(g, 20);
        n = pick_n(g);
        emit(g, "range(%d, %d)", a, a + n);
        *bound = a + n;
    } else if (r < 66 && (t = chance(g, 50) ? gen_pick_kind(g, K_SUM) : gen_pick_simple(g, g->nth)) >= 0) {
        emit(g, "smap(t%d, range(0, %d))", t, pick_n(g));
        *elem = g->th[t].sum_out ? E_SUM : E_INT;
    } else if (r < 74) {
        vr->on = true;
        vr->va = fresh(g), vr->vb = fresh(g);
        vr->a = rnd(g, 10), vr->b = chance(g, 10) ? rnd(g, 10) : vr->a + pick_n(g);
        emit(g, "range(v%d, v%d)", vr->va, vr->vb);
        *bound = vr->b;
    } else {
        n = pick_n(g);
        emit(g, "range(0, %d)", n);
        *bound = n;
    }
}

/* smap(NAME, src) with a thread, pure function or wrapper passed directly;
 * false when none fits the element type. */
static bool gen_direct(gen *g, gstage *s, etype elem, const char *src)
{
    char names[MAX_THREADS + MAX_PURE + MAX_WRAP][16];
    bool sums[MAX_THREADS + MAX_PURE + MAX_WRAP];
    int n = 0, arity = elem == E_INT ? 1 : elem == E_TUP2 ? 2 : 0;
    if (!arity) return false;
    for (int i = 0; i < g->nth; i++)
        if (g->th[i].arity == arity && g->th[i].kind != K_ERR) {
            sums[n] = g->th[i].sum_out;
            snprintf(names[n++], 16, "t%d", i);
        }
    for (int i = 0; i < g->npure; i++)
        if (g->pure_arity[i] == arity) {
            sums[n] = false;
            snprintf(names[n++], 16, "p%d", i);
        }
    for (int i = 0; arity == 1 && i < g->nwrap; i++) {
        sums[n] = false;
        snprintf(names[n++], 16, "w%d", i);
    }
    if (!n) return false;
    int k = rnd(g, n);
    emit(g, "smap(%s, %s)", names[k], src);
    s->elem = sums[k] ? E_SUM : E_INT;
    return true;
}

/* smap(..., src) over a list of elem whose int items are below bound (0: unknown) */
static void gen_smap_body(gen *g, gstage *s, etype elem, int bound, const char *src)
{
    int depth = g->size.depth;
    s->is_list = true;
    s->elem = E_INT;
    if (chance(g, 15) && gen_direct(g, s, elem, src)) return;
    g->budget = 10 + rnd(g, 30);
    int v = fresh(g), b;
    if (elem == E_INT && chance(g, 5)) { /* through a function value */
        int f = fresh(g);
        emit(g, "(let v%d = fn v%d => ", f, v);
        push(g, v);
        g->item_var = v;
        g->item_n = bound;
        gen_int(g, depth);
        emit(g, " in smap(v%d, %s))", f, src);
        return;
    }
    push(g, v);
    g->item_var = v;
    g->item_n = bound;
    switch (elem) {
    case E_INT: emit(g, "smap(fn v%d => ", v); break;
    case E_TUP2:
    case E_TUP3:
        b = fresh(g);
        push(g, b);
        emit(g, "smap(fn (v%d, v%d", v, b);
        if (elem == E_TUP3) {
            b = fresh(g);
            push(g, b);
            emit(g, ", v%d", b);
        }
        emit(g, ") => ");
        break;
    case E_SUM: /* fn b => (case b of inl v => ... | inr w => ...) */
        g->nenv = 0;
        b = fresh(g);
        emit(g, "smap(fn v%d => (case v%d of inl v%d => ", b, b, v);
        push(g, v);
        gen_int(g, depth - 1);
        g->nenv = 0;
        g->item_var = v = fresh(g);
        push(g, v);
        emit(g, " | inr v%d => ", v);
        gen_int(g, depth - 1);
        emit(g, "), %s)", src);
        return;
    }
    int r = rnd(g, 100);
    if (r < 20) {
        int k = r < 14 ? 2 : 3;
        s->elem = k == 2 ? E_TUP2 : E_TUP3;
        emit(g, "(");
        for (int i = 0; i < k; i++) {
            if (i) emit(g, ", ");
            gen_int(g, depth - 1);
        }
        emit(g, ")");
    } else if (r < 28) {
        s->elem = E_SUM;
        gen_sum(g, depth - 1);
    } else {
        gen_int(g, depth);
    }
    emit(g, ", %s)", src);
}

static void gen_smap_stage(gen *g, gstage *s)
{
    sbuf src = {0}, *out = g->out;
    etype elem;
    int bound;
    var_range vr = {0};
    g->out = &src;
    gen_source(g, &elem, &bound, &vr);
    g->out = out;
    if (vr.on) emit(g, "(let v%d = %d in (let v%d = %d in ", vr.va, vr.a, vr.vb, vr.b);
    gen_smap_body(g, s, elem, bound, src.p);
    if (vr.on) emit(g, "))");
    free(src.p);
}

/* ---- Chains of independent lets outside smap (src/flow/tasks.c) ----
 *
 * `(let vA = ITEM in let vB = ITEM in ... BODY)` evaluated by main, which
 * runs the bound expressions (items) as parallel tasks grouped by the
 * threads they write. Items call order-sensitive threads taken mostly from
 * a small pool (so two lets of a chain often share a thread, and their
 * order matters) and read no binder of the chain, except: sometimes a
 * dependent let (it reads an earlier binder: the runtime's chain ends
 * before it and another starts there), an item that runs an smap or calls
 * through a function value (also ends the chain; first in it, the chain is
 * declined), let tuples `let (vA, vB) = (ITEM, ITEM) in`, and, when an
 * error is to be injected, one or two failing items (the earliest in chain
 * order must be reported). Chains appear as stages, in functions c<k>(x)
 * that main calls a few times, and in recursive functions c<k>(n, x) with a
 * chain at every level, which main calls a few times (their runs are cheap:
 * the runtime soon leaves them to the evaluator). BODY combines every
 * binder (a hash modulo the prime, a tuple, or thread calls reading them),
 * so a wrong value or order shows in the result as well as in the states. */

enum { REC_BODY, REC_LET, REC_DEP }; /* where a recursive c<k>'s call of itself is */

typedef struct chain {
    int pool[4], npool; /* threads the items mostly call */
    int self;           /* a recursive c<self>(n, x), or -1 */
    int n_var, x_var, rec;
} chain;

/* Threads that run an smap (K_NESTSMAP) end a chain: the pool avoids them
 * (their items stay as likely as the explicit smap items). */
static void chain_pool(gen *g, chain *c)
{
    static const int sizes[] = {1, 2, 2, 2, 3, 3, 3, 4};
    c->npool = sizes[rnd(g, 8)];
    for (int i = 0; i < c->npool; i++) {
        int t = gen_pick_thread(g);
        for (int k = 0; k < 3 && g->th[t].kind == K_NESTSMAP; k++) t = gen_pick_thread(g);
        c->pool[i] = t;
    }
}

static int chain_thread(gen *g, const chain *c)
{
    return chance(g, 80) ? c->pool[rnd(g, c->npool)] : gen_pick_thread(g);
}

/* A call of chain function c<k> with literal arguments. */
static void gen_chainfn_call(gen *g, int k)
{
    if (g->chainfn_arity[k] == 2) emit(g, "c%d(%d, %d)", k, rnd(g, 21), rnd(g, 100));
    else emit(g, "c%d(%d)", k, rnd(g, 50));
}

/* An int item that reads no binder of its chain (they are not in g->env). */
static void gen_chain_item(gen *g, const chain *c)
{
    g->budget = 3 + rnd(g, 6);
    int r = rnd(g, 100), t;
    if (r < 50) {
        gen_call(g, chain_thread(g, c), 1 + rnd(g, 2));
    } else if (r < 64) {
        emit(g, "((");
        gen_call(g, chain_thread(g, c), 1);
        emit(g, " * %d + ", 2 + rnd(g, 9));
        gen_call(g, chain_thread(g, c), 1);
        emit(g, ") %% " PRIME ")");
    } else if (r < 72) {
        t = rnd(g, g->npure);
        emit(g, "p%d(", t);
        gen_call(g, chain_thread(g, c), 1);
        if (g->pure_arity[t] == 2) emit(g, ", %d", rnd(g, 100));
        emit(g, ")");
    } else if (r < 78 && g->nwrap) {
        emit(g, "w%d(", rnd(g, g->nwrap));
        gen_int(g, 1);
        emit(g, ")");
    } else if (r < 86) {
        emit(g, "(if ");
        gen_int(g, 0);
        emit(g, " %% 2 == 0 then ");
        gen_call(g, chain_thread(g, c), 1);
        emit(g, " else ");
        gen_call(g, chain_thread(g, c), 1);
        emit(g, ")");
    } else if (r < 91 && !g->in_chainfn && g->nchainfn) {
        gen_chainfn_call(g, rnd(g, g->nchainfn)); /* a chain inside the item */
    } else {
        gen_int(g, 2);
    }
}

/* An item that reads binder v of the chain (a dependent let). */
static void gen_chain_dep(gen *g, int v)
{
    int t = gen_pick_simple(g, g->nth);
    if (t >= 0 && chance(g, 85)) emit(g, "t%d((v%d + %d) %% " PRIME ")", t, v, rnd(g, 100));
    else emit(g, "((v%d * %d + %d) %% " PRIME ")", v, 2 + rnd(g, 30), rnd(g, 100));
}

/* An item that runs an smap. */
static void gen_chain_smap(gen *g)
{
    int t = gen_pick_simple(g, g->nth), y;
    switch (t < 0 ? 0 : rnd(g, 3)) {
    case 0:
        g->budget = 4;
        gen_nested(g, 2);
        break;
    case 1:
        y = fresh(g);
        g->use_sumlist = true;
        emit(g, "sumlist(smap(fn v%d => t%d((v%d * 7 + %d) %% " PRIME "), range(0, %d)))", y, t, y, rnd(g, 50),
             rnd(g, 6));
        break;
    default: emit(g, "len(smap(t%d, [%d, %d, %d]))", t, rnd(g, 100), rnd(g, 100), rnd(g, 100)); break;
    }
}

/* An item that calls through a function value. */
static void gen_chain_fnval(gen *g, const chain *c)
{
    int f = fresh(g), y = fresh(g), saved = g->nenv;
    bool app = chance(g, 50);
    g->budget = 3;
    g->use_app |= app;
    if (app) emit(g, "app(fn v%d => ", y);
    else emit(g, "(let v%d = fn v%d => ", f, y);
    push(g, y);
    gen_call(g, chain_thread(g, c), 1);
    g->nenv = saved;
    if (app) emit(g, ", %d)", rnd(g, 100));
    else emit(g, " in v%d(%d))", f, rnd(g, 100));
}

/* An item that fails (an injected error site), alone or after a thread call. */
static void gen_chain_error(gen *g, const chain *c)
{
    g->err_pending = true;
    if (chance(g, 50)) {
        emit(g, "((");
        gen_call(g, chain_thread(g, c), 1);
        emit(g, " + ");
        gen_error_site(g);
        emit(g, ") %% " PRIME ")");
    } else {
        gen_error_site(g);
    }
}

/* ((((vA * 31 + vB) % P) * 31 + vC) % P): every binder, in order. */
static void gen_hash(gen *g, const int *vars, int nv)
{
    for (int i = 1; i < nv; i++) emit(g, "((");
    emit(g, "v%d", vars[0]);
    for (int i = 1; i < nv; i++) emit(g, " * 31 + v%d) %% " PRIME ")", vars[i]);
}

#define CHAIN_MAX 6

/* A parenthesized chain of 2-CHAIN_MAX lets and its body; *is_int: the
 * body is an int (else a tuple, only when tuple_ok). */
static void gen_chain(gen *g, const chain *c, bool tuple_ok, bool *is_int)
{
    int saved = g->nenv, n = 2 + rnd(g, CHAIN_MAX - 1), vars[2 * CHAIN_MAX], nv = 0;
    int dep = chance(g, 30) ? 1 + rnd(g, n - 1) : -1;
    int smap = chance(g, 10) ? rnd(g, n) : -1;
    int fnv = chance(g, 5) ? rnd(g, n) : -1;
    int err = -1, err2 = -1;
    if (g->err_pending && chance(g, c->self >= 0 ? 40 : 60)) { /* one failing item, or two */
        err = rnd(g, n);
        if (chance(g, 35)) err2 = rnd(g, n);
    }
    int rec = c->self >= 0 && c->rec != REC_BODY ? rnd(g, n) : -1;
    g->nchains++;
    emit(g, "(");
    for (int i = 0; i < n; i++) {
        g->nenv = saved; /* the chain's binders are out of scope for its items */
        if (i == rec) {
            int r = fresh(g);
            emit(g, "let v%d = c%d((v%d - 1), ", r, c->self, c->n_var);
            if (c->rec == REC_DEP && nv) emit(g, "((v%d + v%d) %% " PRIME ")", vars[rnd(g, nv)], c->x_var);
            else emit(g, "v%d", c->x_var);
            emit(g, ") in ");
            vars[nv++] = r;
            continue;
        }
        bool tup = chance(g, 18);
        int a = fresh(g), b = tup ? fresh(g) : -1;
        if (tup) emit(g, "let (v%d, v%d) = (", a, b);
        else emit(g, "let v%d = ", a);
        if (i == err || i == err2) gen_chain_error(g, c);
        else if (i == dep) gen_chain_dep(g, vars[rnd(g, nv)]);
        else if (i == smap) gen_chain_smap(g);
        else if (i == fnv) gen_chain_fnval(g, c);
        else gen_chain_item(g, c);
        if (tup) {
            emit(g, ", ");
            if (chance(g, 30)) emit(g, "%d", rnd(g, 100));
            else gen_chain_item(g, c);
            emit(g, ")");
        }
        emit(g, " in ");
        vars[nv++] = a;
        if (tup) vars[nv++] = b;
    }
    g->nenv = saved;
    for (int i = 0; i < nv; i++) push(g, vars[i]);
    int r = rnd(g, 100), t = gen_pick_simple(g, g->nth);
    *is_int = true;
    if (c->self >= 0 && c->rec == REC_BODY) {
        emit(g, "c%d((v%d - 1), ", c->self, c->n_var);
        gen_hash(g, vars, nv);
        emit(g, ")");
    } else if (tuple_ok && r < 25) {
        *is_int = false;
        emit(g, "(");
        for (int i = 0; i < nv; i++) emit(g, "%sv%d", i ? ", " : "", vars[i]);
        emit(g, ")");
    } else if (tuple_ok && r < 40 && t >= 0) { /* a tuple main may run as tasks too */
        *is_int = false;
        emit(g, "(t%d(v%d), ", t, vars[rnd(g, nv)]);
        gen_call(g, gen_pick_thread(g), 1);
        emit(g, ", ");
        gen_hash(g, vars, nv);
        emit(g, ")");
    } else if (r < 55) {
        g->budget = 4 + rnd(g, 4);
        emit(g, "((");
        gen_hash(g, vars, nv);
        emit(g, " + ");
        gen_int(g, 2);
        emit(g, ") %% " PRIME ")");
    } else {
        gen_hash(g, vars, nv);
    }
    emit(g, ")");
    g->nenv = saved;
}

/* Declares c<k>(x) = CHAIN, or the recursive c<k>(n, x) = (if n <= 0 then
 * x else CHAIN) with one call c<k>(n - 1, ...) in its chain; returns k, or
 * -1 when there are MAX_CHAINFN already. */
static int gen_chainfn(gen *g, bool recursive)
{
    if (g->nchainfn >= MAX_CHAINFN) return -1;
    int k = g->nchainfn, env[MAX_ENV], nenv = g->nenv, item_var = g->item_var, item_n = g->item_n;
    int cur_stage = g->cur_stage, smap_depth = g->smap_depth;
    sbuf *out = g->out;
    memcpy(env, g->env, sizeof env);
    g->out = &g->fdecl;
    g->nenv = g->cur_stage = g->smap_depth = 0; /* no rI in a function */
    g->in_chainfn = true;
    chain c = {.self = -1};
    chain_pool(g, &c);
    int x = fresh(g);
    bool is_int;
    if (recursive) {
        c.self = k;
        c.n_var = fresh(g);
        c.x_var = x;
        c.rec = rnd(g, 3);
        emit(g, "fun c%d(v%d, v%d) = (if v%d <= 0 then v%d else ", k, c.n_var, x, c.n_var, x);
        push(g, c.n_var);
        push(g, x);
        g->item_var = c.n_var; /* errors depend on the level */
        g->item_n = 21;
        gen_chain(g, &c, false, &is_int);
        emit(g, ")\n");
    } else {
        emit(g, "fun c%d(v%d) = ", k, x);
        push(g, x);
        g->item_var = x;
        g->item_n = 50;
        gen_chain(g, &c, false, &is_int);
        emit(g, "\n");
    }
    g->chainfn_arity[k] = recursive ? 2 : 1;
    g->nchainfn++;
    g->in_chainfn = false;
    g->out = out;
    memcpy(g->env, env, sizeof env);
    g->nenv = nenv;
    g->item_var = item_var;
    g->item_n = item_n;
    g->cur_stage = cur_stage;
    g->smap_depth = smap_depth;
    return k;
}

/* A stage with chains: an inline chain, or two to four calls of a chain
 * function (the first runs its chains as tasks; a recursive one runs one
 * per level, and those cheap runs are soon left to the evaluator). */
static void gen_chain_stage(gen *g, gstage *s)
{
    int r = rnd(g, 100), k = -1;
    bool is_int = true;
    if (r >= 50) k = gen_chainfn(g, r >= 75);
    if (k < 0) {
        chain c = {.self = -1};
        chain_pool(g, &c);
        gen_chain(g, &c, true, &is_int);
    } else {
        int m = 2 + rnd(g, 3);
        if (chance(g, 50)) {
            is_int = false;
            emit(g, "(");
            for (int i = 0; i < m; i++) {
                if (i) emit(g, ", ");
                gen_chainfn_call(g, k);
            }
            emit(g, ")");
        } else {
            for (int i = 1; i < m; i++) emit(g, "((");
            gen_chainfn_call(g, k);
            for (int i = 1; i < m; i++) {
                emit(g, " * 31 + ");
                gen_chainfn_call(g, k);
                emit(g, ") %% " PRIME ")");
            }
        }
    }
    s->is_int = is_int;
}

static void gen_stage(gen *g, gstage *s)
{
    g->nenv = 0;
    g->item_var = -1;
    g->smap_depth = 0;
    *s = (gstage){.is_list = false};
    if (g->chains && (g->cur_stage == g->chain_stage || chance(g, 25))) {
        gen_chain_stage(g, s);
        return;
    }
    int r = rnd(g, 100);
    if (r < 76) {
        gen_smap_stage(g, s);
    } else if (r < 88) { /* a top-level tuple of thread calls */
        g->budget = 8;
        int k = 2 + rnd(g, 3);
        emit(g, "(");
        int bad = g->err_pending && chance(g, 40) ? rnd(g, k) : -1;
        for (int i = 0; i < k; i++) {
            if (i) emit(g, ", ");
            if (i == bad) gen_error_site(g);
            else gen_call(g, gen_pick_thread(g), 1 + rnd(g, 2));
        }
        emit(g, ")");
    } else if (r < 96) { /* a tuple of two smaps */
        gstage tmp;
        emit(g, "(");
        gen_smap_stage(g, &tmp);
        emit(g, ", ");
        g->nenv = 0;
        g->item_var = -1;
        gen_smap_stage(g, &tmp);
        emit(g, ")");
    } else {
        g->budget = 8;
        s->is_int = true;
        gen_int(g, 2);
    }
}

void gen_main(gen *g)
{
    g->out = &g->body;
    g->nst = 1 + rnd(g, g->size.stages);
    g->chain_stage = g->chains ? rnd(g, g->nst) : -1; /* a program with chains has one stage of them at least */
    emit(g, "main = ");
    for (int i = 0; i < g->nst; i++) {
        g->cur_stage = i;
        if (g->nst > 1) emit(g, "%slet r%d = ", i ? "  " : "", i);
        gen_stage(g, &g->st[i]);
        if (g->nst > 1) emit(g, " in\n");
    }
    if (g->nst > 1) {
        emit(g, "  (");
        for (int i = 0; i < g->nst; i++) {
            if (i) emit(g, ", ");
            if (g->st[i].is_list && chance(g, 15)) emit(g, "len(r%d)", i);
            else emit(g, "r%d", i);
        }
        emit(g, ")");
    }
    emit(g, "\n");
}

