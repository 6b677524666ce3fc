/* gen_expr.c - the generator's expressions (see gen.c): int expressions
 * built from thread calls, pure and wrapper calls, arithmetic modulo a
 * prime, let, tuple lets and patterns, if (with && and ||), case on int
 * literals with `_` or a name, case on inl/inr, nested smaps, float
 * builtins, function values and the library (fold and filter whose
 * functions call threads, lists, strings, math); and the injected error
 * sites. */
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"

/* An error outside any smap: a tuple item at the top level of main. */
static void gen_top_error(gen *g)
{
    int kind = rnd(g, 4);
    if (kind == 0 && g->err_thread < 0) kind = 1;
    switch (kind) {
    case 0: emit(g, "t%d(%d)", g->err_thread, g->fn[g->th[g->err_thread].fun].other); break;
    case 1: emit(g, "nth([1, 2, 3], %d)", 3 + rnd(g, 2)); break;
    case 2: emit(g, "(case %d of 0 => 1 | 1 => 2)", 2 + rnd(g, 5)); break;
    default: emit(g, "(100 / len([]))"); break;
    }
    g->err_pending = false;
    g->err_placed = true;
}

void gen_error_site(gen *g)
{
    if (g->item_var < 0) { /* outside smap */
        gen_top_error(g);
        return;
    }
    int v = g->item_var, n = g->item_n > 0 ? g->item_n : 50;
    int k = rnd(g, n), d = 1 + rnd(g, n / 4 > 1 ? n / 4 : 1);
    int kind = rnd(g, 6);
    if (kind == 3 && g->err_thread < 0) kind = 0;
    switch (kind) {
    case 0: emit(g, "(100 / (v%d - %d))", v, k); break;
    case 1: emit(g, "nth([1, 2, 3], v%d / %d)", v, d); break;
    case 2: emit(g, "(case v%d / %d of 0 => 1 | 1 => 2 | 2 => 3)", v, d); break;
    case 3: emit(g, "t%d(v%d)", g->err_thread, v); break;
    case 4: emit(g, "int(1.0 / float(v%d - %d))", v, k); break;
    default: emit(g, "(case (if v%d == %d then 5 else v%d %% 2) of 0 => 1 | 1 => 2)", v, k, v); break;
    }
    g->err_pending = false;
    g->err_placed = true;
}

static void gen_leaf(gen *g)
{
    if (g->err_pending && g->item_var >= 0 && chance(g, 20)) {
        gen_error_site(g);
        return;
    }
    if (g->cur_stage > 0 && chance(g, 5)) {
        int j = rnd(g, g->cur_stage);
        if (g->st[j].is_list || g->st[j].is_int) {
            emit(g, g->st[j].is_list ? "len(r%d)" : "r%d", j);
            return;
        }
    }
    if (g->nenv > 0 && chance(g, 85)) emit(g, "v%d", g->env[chance(g, 50) ? g->nenv - 1 : rnd(g, g->nenv)]);
    else emit(g, "%d", rnd(g, 100));
}

/* A keyed thread: kt(key, x) with a small int key, or an smap of one
 * over a short list, by a lambda (the runtime's inner shards) or by the
 * thread's name (kc, counting its int keys). */
void gen_keyed(gen *g, int depth)
{
    int k = 2 + krnd(g, 5), d = depth - 1;
    switch (krnd(g, 4)) {
    case 0:
    case 1:
        emit(g, "kt(("); gen_int(g, d); emit(g, ") %% %d, ", k); gen_int(g, d); emit(g, ")");
        break;
    case 2: {
        int w = fresh(g);
        g->use_sumlist = true;
        emit(g, "sumlist(smap(fn v%d => kt(v%d %% %d, v%d), [", w, w, k, w);
        for (int i = 0, n = krnd(g, 5); i < n; i++) { if (i) emit(g, ", "); gen_int(g, d); }
        emit(g, "]))");
        break;
    }
    default:
        g->use_sumlist = true;
        emit(g, "sumlist(smap(kc, smap(fn v => v %% %d, [", k);
        for (int i = 0, n = krnd(g, 5); i < n; i++) { if (i) emit(g, ", "); gen_int(g, d); }
        emit(g, "])))");
        break;
    }
}

/* A thread call; a sum-valued thread is wrapped in a case over inl/inr. */
void gen_call(gen *g, int t, int depth)
{
    const gthread *th = &g->th[t];
    if (th->sum_out) {
        int a = fresh(g), b = fresh(g), saved = g->nenv;
        emit(g, "(case t%d(", t);
        gen_int(g, depth - 1);
        emit(g, ") of inl v%d => ", a);
        push(g, a);
        gen_int(g, depth - 1);
        g->nenv = saved;
        emit(g, " | inr v%d => ", b);
        push(g, b);
        gen_int(g, depth - 1);
        g->nenv = saved;
        emit(g, ")");
        return;
    }
    emit(g, "t%d(", t);
    for (int k = 0; k < th->arity; k++) {
        if (k) emit(g, ", ");
        gen_int(g, depth - 1);
    }
    emit(g, ")");
}

static void gen_cond(gen *g, int depth)
{
    int k = 2 + rnd(g, 4);
    switch (rnd(g, 5)) {
    case 0: gen_int(g, depth); emit(g, " %% %d == %d", k, rnd(g, k)); break;
    case 1: gen_int(g, depth); emit(g, " < %d", chance(g, 50) ? rnd(g, 300) : rnd(g, 1000003)); break;
    case 2: gen_int(g, depth); emit(g, " %% 2 == 0 && "); gen_int(g, depth); emit(g, " %% 3 != 1"); break;
    case 3: gen_int(g, depth); emit(g, " %% 2 == 0 || "); gen_int(g, depth); emit(g, " %% 5 == 1"); break;
    default: emit(g, "not ("); gen_int(g, depth); emit(g, " %% 3 == 0)"); break;
    }
}

void gen_sum(gen *g, int depth)
{
    int t = gen_pick_kind(g, K_SUM);
    if (t >= 0 && chance(g, 35)) {
        emit(g, "t%d(", t);
        gen_int(g, depth);
        emit(g, ")");
        return;
    }
    emit(g, "(if ");
    gen_cond(g, depth);
    emit(g, " then inl ");
    gen_int(g, depth);
    emit(g, " else inr ");
    gen_int(g, depth);
    emit(g, ")");
}

/* sumlist(smap(...)) or len(smap(...)) over a small list, inside a body. */
void gen_nested(gen *g, int depth)
{
    int saved = g->nenv, sv = g->item_var, sn = g->item_n;
    sbuf list = {0}, *out = g->out;
    g->out = &list; /* the list is evaluated in the outer scope */
    switch (rnd(g, 4)) {
    case 0: emit(g, "range(0, "); gen_int(g, depth - 1); emit(g, " %% 4)"); break;
    case 1: emit(g, "[%d, %d, %d]", rnd(g, 50), rnd(g, 50), rnd(g, 50)); break;
    case 2: emit(g, "[]"); break;
    default: emit(g, "range(%d, 4)", rnd(g, 5)); break;
    }
    g->out = out;
    bool sum = chance(g, 50);
    g->use_sumlist |= sum;
    g->smap_depth++;
    emit(g, "%s(smap(", sum ? "sumlist" : "len");
    int t = gen_pick_simple(g, g->nth);
    if (t >= 0 && chance(g, 20)) {
        emit(g, "t%d", t);
    } else {
        int v = fresh(g);
        emit(g, "fn v%d => ", v);
        push(g, v);
        g->item_var = v;
        g->item_n = 4;
        gen_int(g, depth - 1);
    }
    emit(g, ", %s))", list.p);
    free(list.p);
    g->smap_depth--;
    g->nenv = saved;
    g->item_var = sv;
    g->item_n = sn;
}

/* A function value: a let-bound lambda called by name, or passed to app(f, x). */
static void gen_fnval(gen *g, int depth)
{
    int f = fresh(g), y = fresh(g), saved = g->nenv;
    if (chance(g, 50)) {
        emit(g, "(let v%d = fn v%d => ", f, y);
        push(g, y);
        gen_int(g, depth - 1);
        g->nenv = saved;
        emit(g, " in v%d(", f);
        gen_int(g, depth - 1);
        emit(g, "))");
        return;
    }
    g->use_app = true;
    emit(g, "app(fn v%d => ", y);
    push(g, y);
    gen_int(g, depth - 1);
    g->nenv = saved;
    emit(g, ", ");
    gen_int(g, depth - 1);
    emit(g, ")");
}

/* A small int list: its items may call threads. */
static void gen_small_list(gen *g, int depth)
{
    switch (rnd(g, 3)) {
    case 0: emit(g, "range(0, "); gen_int(g, depth); emit(g, " %% 5)"); break;
    case 1: emit(g, "["); gen_int(g, depth); emit(g, ", "); gen_int(g, depth); emit(g, ", %d]", rnd(g, 50)); break;
    default: emit(g, "[%d, %d, %d, %d]", rnd(g, 50), rnd(g, 50), rnd(g, 50), rnd(g, 50)); break;
    }
}

/* fold and filter: their functions may call threads (in list order); the
 * function is a lambda, a let-bound value or a parameter of keep(). */
static void gen_lib_call(gen *g, int depth)
{
    int saved = g->nenv, a = fresh(g), x = fresh(g), f = fresh(g);
    bool by_value = chance(g, 40);
    if (chance(g, 50)) { /* fold */
        if (by_value) emit(g, "(let v%d = ", f);
        else emit(g, "fold(");
        emit(g, "fn (v%d, v%d) => (", a, x);
        push(g, a);
        push(g, x);
        gen_int(g, depth - 1);
        emit(g, " + v%d * %d) %% " PRIME, a, 1 + rnd(g, 30));
        g->nenv = saved;
        if (by_value) emit(g, " in fold(v%d", f);
        emit(g, ", ");
        gen_int(g, depth - 1);
        emit(g, ", ");
        gen_small_list(g, depth - 1);
        emit(g, by_value ? "))" : ")");
        return;
    }
    bool sum = chance(g, 50);
    g->use_sumlist |= sum;
    g->use_keep |= by_value;
    emit(g, "%s(%s(fn v%d => ", sum ? "sumlist" : "len", by_value ? "keep" : "filter", x);
    push(g, x);
    gen_cond(g, depth - 1);
    g->nenv = saved;
    emit(g, ", ");
    gen_small_list(g, depth - 1);
    emit(g, "))");
}

/* The rest of the library on ints: lists, math, strings. */
static void gen_lib_pure(gen *g, int depth)
{
    int d = depth - 1, a, b;
    switch (rnd(g, 10)) {
    case 0: emit(g, "nth(sort(["); gen_int(g, d); emit(g, ", "); gen_int(g, d); emit(g, ", %d]), %d)", rnd(g, 100), rnd(g, 3)); break;
    case 1:
        g->use_sumlist = true;
        emit(g, "sumlist(%s(", chance(g, 50) ? "take" : "drop");
        emit(g, chance(g, 50) ? "reverse(" : "append([%d], ", rnd(g, 9));
        gen_small_list(g, d);
        emit(g, "), %d))", rnd(g, 5));
        break;
    case 2: emit(g, "len(zip("); gen_small_list(g, d); emit(g, ", ["); gen_int(g, d); emit(g, "]))"); break;
    case 3: emit(g, "%s(", chance(g, 50) ? "min" : "max"); gen_int(g, d); emit(g, ", "); gen_int(g, d); emit(g, ")"); break;
    case 4: emit(g, "abs("); gen_int(g, d); emit(g, " - %d)", rnd(g, 1000)); break;
    case 5:
        emit(g, "%s(%s(float(", chance(g, 50) ? "floor" : "ceil", chance(g, 50) ? "sqrt" : "log");
        gen_int(g, d);
        emit(g, " %% 1000 + 1)))");
        break;
    case 6: emit(g, "find(str("); gen_int(g, d); emit(g, "), \"%d\")", rnd(g, 10)); break;
    case 7: emit(g, "len(replace(str("); gen_int(g, d); emit(g, "), \"%d\", \"ab\"))", rnd(g, 10)); break;
    case 8:
        a = fresh(g), b = fresh(g);
        emit(g, "(case try_int(slice(str("); gen_int(g, d);
        emit(g, "), 0, 1)) of inl v%d => v%d | inr v%d => %d)", a, a, b, rnd(g, 9));
        break;
    default:
        emit(g, "len(join(\",\", [upper(trim(str("); gen_int(g, d); emit(g, "))), lower(str(");
        gen_int(g, d); emit(g, "))]))");
        break;
    }
}

enum { X_LEAF, X_CALL, X_TWICE, X_PURE, X_WRAP, X_ARITH, X_LET, X_LETTUP, X_CASETUP, X_IF, X_CASE,
       X_CASESUM, X_NEST, X_FLOAT, X_FNVAL, X_LIBCALL, X_LIB, X_MAP, X_STATE, X_COUNT };
static const int x_weight[X_COUNT] = {8, 30, 4, 8, 3, 10, 8, 4, 2, 9, 6, 5, 4, 2, 3, 3, 3, 4, 3};

void gen_int(gen *g, int depth)
{
    if (depth <= 0 || g->budget <= 0) {
        gen_leaf(g);
        return;
    }
    g->budget--;
    int saved = g->nenv, d = depth - 1, t, a, b;
    switch (gen_pick_weighted(g, x_weight, X_COUNT)) {
    case X_CALL:
        if (g->keyed && krnd(g, 100) < 50) gen_keyed(g, depth);
        else gen_call(g, gen_pick_thread(g), depth);
        break;
    case X_TWICE:
        if ((t = gen_pick_simple(g, g->nth)) < 0) { gen_leaf(g); break; }
        if (chance(g, 50)) { emit(g, "t%d(t%d(", t, t); gen_int(g, d); emit(g, "))"); break; }
        emit(g, "((t%d(", t); gen_int(g, d); emit(g, ") + t%d(", t); gen_int(g, d); emit(g, ")) %% " PRIME ")");
        break;
    case X_PURE:
        t = rnd(g, g->npure);
        emit(g, "p%d(", t);
        gen_int(g, d);
        if (g->pure_arity[t] == 2) { emit(g, ", "); gen_int(g, d); }
        emit(g, ")");
        break;
    case X_WRAP:
        if (!g->nwrap) { gen_leaf(g); break; }
        emit(g, "w%d(", rnd(g, g->nwrap)); gen_int(g, d); emit(g, ")");
        break;
    case X_ARITH:
        switch (rnd(g, 4)) {
        case 0: emit(g, "(("); gen_int(g, d); emit(g, " + "); gen_int(g, d); emit(g, ") %% " PRIME ")"); break;
        case 1: emit(g, "(("); gen_int(g, d); emit(g, " * "); gen_int(g, d); emit(g, ") %% " PRIME ")"); break;
        case 2: emit(g, "("); gen_int(g, d); emit(g, " %% %d)", 2 + rnd(g, 9)); break;
        default: emit(g, "("); gen_int(g, d); emit(g, " / %d + %d)", 1 + rnd(g, 9), rnd(g, 10)); break;
        }
        break;
    case X_LET:
        a = fresh(g);
        emit(g, "(let v%d = ", a); gen_int(g, d); emit(g, " in ");
        push(g, a); gen_int(g, d); emit(g, ")");
        break;
    case X_LETTUP:
        a = fresh(g), b = fresh(g);
        emit(g, "(let (v%d, v%d) = (", a, b); gen_int(g, d); emit(g, ", "); gen_int(g, d); emit(g, ") in ");
        push(g, a); push(g, b); gen_int(g, d); emit(g, ")");
        break;
    case X_CASETUP:
        a = fresh(g), b = fresh(g);
        emit(g, "(case ("); gen_int(g, d); emit(g, ", "); gen_int(g, d); emit(g, ") of (v%d, v%d) => ", a, b);
        push(g, a); push(g, b); gen_int(g, d); emit(g, ")");
        break;
    case X_IF:
        emit(g, "(if "); gen_cond(g, d); emit(g, " then "); gen_int(g, d); emit(g, " else "); gen_int(g, d);
        emit(g, ")");
        break;
    case X_CASE: {
        int k = 2 + rnd(g, 4), any = 0;
        emit(g, "(case "); gen_int(g, d); emit(g, " %% %d of ", k);
        for (int j = 0; j < k; j++) {
            if (j + 1 < k && !chance(g, 70)) continue;
            emit(g, "%s%d => ", any++ ? " | " : "", j);
            gen_int(g, d);
        }
        if (any < k || chance(g, 50)) {
            if (chance(g, 70)) emit(g, " | _ => ");
            else { a = fresh(g); emit(g, " | v%d => ", a); push(g, a); }
            gen_int(g, d);
        }
        emit(g, ")");
        break;
    }
    case X_CASESUM:
        a = fresh(g), b = fresh(g);
        emit(g, "(case "); gen_sum(g, d);
        bool swap = chance(g, 30);
        emit(g, " of %s v%d => ", swap ? "inr" : "inl", a); push(g, a); gen_int(g, d); g->nenv = saved;
        emit(g, " | %s v%d => ", swap ? "inl" : "inr", b); push(g, b); gen_int(g, d);
        emit(g, ")");
        break;
    case X_NEST:
        if (g->smap_depth >= 2) gen_call(g, gen_pick_thread(g), depth);
        else gen_nested(g, depth);
        break;
    case X_FLOAT:
        if (chance(g, 50)) { emit(g, "round(float("); gen_int(g, d); emit(g, " %% 1000) * 1.5)"); }
        else { emit(g, "(round(sin_iter(2, float("); gen_int(g, d); emit(g, " %% 100))) %% 7)"); }
        break;
    case X_FNVAL: gen_fnval(g, depth); break;
    case X_LIBCALL: gen_lib_call(g, depth); break;
    case X_LIB: gen_lib_pure(g, depth); break;
    case X_MAP: gen_map_int(g, depth); break;
    case X_STATE: gen_state_int(g, gen_pick_thread(g)); break;
    default: gen_leaf(g); break;
    }
    g->nenv = saved;
}

