/* gen_stage.c - the generator's main (see gen.c): 1-4 stages
 * `let rI = STAGE in ... (r0, r1, ...)`. A stage is an smap with a random
 * body (int, tuple or sum valued) over range(0, N), range(a, b), a range
 * with let-bound bounds, a literal list, [], an earlier stage's result or an
 * inline smap of a thread; an smap of a thread, function or wrapper passed
 * directly, or of a let-bound lambda; a tuple of two smaps; a top-level
 * tuple of thread calls; or a plain expression. */
#include <stdio.h>
#include <stdlib.h>

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

static void gen_stage(gen *g, gstage *s)
{
    g->nenv = 0;
    g->item_var = -1;
    g->smap_depth = 0;
    *s = (gstage){.is_list = false};
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

