/* gen_map.c - the generator's maps and state(t) (see gen.c): int
 * expressions over map expressions (literals with repeated keys, put,
 * remove, update with a function that may call threads, to_map, a map
 * let-bound and updated once, a map thread's state), read with get,
 * lookup, has, len, keys, values, items, == and str; and state(t) of any
 * thread, turned into an int.  Every int stays non-negative.  Keys are
 * small ints (`(E %% 6)`), sometimes strings or tuples, so that maps
 * collide, grow and shrink. */
#include <stdlib.h>

#include "gen_internal.h"

/* A small non-negative int key. */
static void gen_key(gen *g, int depth)
{
    if (chance(g, 30)) {
        emit(g, "%d", rnd(g, 6));
        return;
    }
    emit(g, "(");
    gen_int(g, depth);
    emit(g, " %% 6)");
}

/* A map thread, or -1. */
static int gen_pick_map_thread(gen *g)
{
    int c[MAX_THREADS], n = 0;
    for (int i = 0; i < g->nth; i++)
        if (g->th[i].kind == K_MAP || g->th[i].kind == K_MAPR) c[n++] = i;
    return n ? c[rnd(g, n)] : -1;
}

/* A map from int to int. */
void gen_map(gen *g, int depth)
{
    int d = depth - 1, t, a;
    if (depth <= 0 || g->budget <= 0) {
        if ((t = gen_pick_map_thread(g)) >= 0 && chance(g, 50)) emit(g, "state(t%d)", t);
        else if (chance(g, 30)) emit(g, "{}");
        else emit(g, "{%d: %d, %d: %d}", rnd(g, 6), rnd(g, 100), rnd(g, 6), rnd(g, 100));
        return;
    }
    g->budget--;
    int saved = g->nenv;
    switch (rnd(g, 8)) {
    case 0: { /* a literal; a repeated key: the later entry wins */
        int n = rnd(g, 4);
        emit(g, "{");
        for (int i = 0; i < n; i++) {
            if (i) emit(g, ", ");
            gen_key(g, d);
            emit(g, ": ");
            gen_int(g, d);
        }
        emit(g, "}");
        break;
    }
    case 1: emit(g, "put("); gen_map(g, d); emit(g, ", "); gen_key(g, d); emit(g, ", "); gen_int(g, d); emit(g, ")"); break;
    case 2: emit(g, "remove("); gen_map(g, d); emit(g, ", "); gen_key(g, d); emit(g, ")"); break;
    case 3: /* the function may call threads: it runs once, in order */
        a = fresh(g);
        emit(g, "update(");
        gen_map(g, d);
        emit(g, ", ");
        gen_key(g, d);
        emit(g, ", %d, fn v%d => ((v%d * %d + ", rnd(g, 10), a, a, 1 + rnd(g, 30));
        push(g, a);
        gen_int(g, d);
        g->nenv = saved;
        emit(g, ") %% " PRIME "))");
        break;
    case 4:
        emit(g, "to_map([(");
        gen_key(g, d);
        emit(g, ", ");
        gen_int(g, d);
        emit(g, "), (%d, ", rnd(g, 6));
        gen_int(g, d);
        emit(g, ")])");
        break;
    case 5: /* let-bound and used once: updated in place */
        a = fresh(g);
        emit(g, "(let m%d = ", a);
        gen_map(g, d);
        emit(g, " in put(m%d, ", a);
        gen_key(g, d);
        emit(g, ", %d))", rnd(g, 100));
        break;
    case 6:
        if ((t = gen_pick_map_thread(g)) >= 0) {
            emit(g, "state(t%d)", t);
            break;
        }
        /* fall through */
    default: emit(g, "to_map(zip(range(0, %d), [", 1 + rnd(g, 4)); gen_int(g, d); emit(g, ", %d]))", rnd(g, 50)); break;
    }
    g->nenv = saved;
}

/* An int from the state of thread t (not the error-injection thread). */
void gen_state_int(gen *g, int t)
{
    int a = fresh(g), b = fresh(g);
    switch (g->th[t].kind) {
    case K_TUP:
    case K_ROT: emit(g, "(case state(t%d) of (v%d, v%d) => ((v%d + v%d) %% " PRIME "))", t, a, b, a, b); break;
    case K_LIST: emit(g, "nth(state(t%d), %d)", t, rnd(g, 2)); break;
    case K_BOOL: emit(g, "(if state(t%d) then 1 else 0)", t); break;
    case K_FLT: emit(g, "(round(state(t%d)) %% " PRIME ")", t); break;
    case K_SUMST: emit(g, "(case state(t%d) of inl v%d => v%d | inr v%d => v%d)", t, a, a, b, b); break;
    case K_MAP:
    case K_MAPR:
        switch (rnd(g, 3)) {
        case 0: emit(g, "len(state(t%d))", t); break;
        case 1: emit(g, "get(state(t%d), %d, %d)", t, rnd(g, 6), rnd(g, 9)); break;
        default: g->use_sumlist = true; emit(g, "sumlist(values(state(t%d)))", t); break;
        }
        break;
    default: emit(g, "state(t%d)", t); break; /* an int state */
    }
}

/* An int read from maps. */
void gen_map_int(gen *g, int depth)
{
    int d = depth - 1, a = fresh(g), b = fresh(g), saved = g->nenv;
    switch (rnd(g, 11)) {
    case 0: emit(g, "get("); gen_map(g, d); emit(g, ", "); gen_key(g, d); emit(g, ", "); gen_int(g, d); emit(g, ")"); break;
    case 1:
        emit(g, "(case lookup("); gen_map(g, d); emit(g, ", "); gen_key(g, d);
        emit(g, ") of inl v%d => v%d | inr v%d => %d)", a, a, b, rnd(g, 9));
        break;
    case 2:
        emit(g, "(if has("); gen_map(g, d); emit(g, ", "); gen_key(g, d); emit(g, ") then ");
        gen_int(g, d); emit(g, " else "); gen_int(g, d); emit(g, ")");
        break;
    case 3: emit(g, "len("); gen_map(g, d); emit(g, ")"); break;
    case 4: /* order-sensitive: the keys' order matters */
        g->use_sumlist = true;
        emit(g, "sumlist(%s(", chance(g, 50) ? "keys" : "values"); gen_map(g, d); emit(g, "))");
        break;
    case 5:
        g->use_sumlist = true;
        emit(g, "sumlist(smap(fn (v%d, v%d) => ((v%d * 7 + v%d) %% " PRIME "), items(", a, b, a, b);
        gen_map(g, d);
        emit(g, ")))");
        break;
    case 6: emit(g, "(if "); gen_map(g, d); emit(g, " == "); gen_map(g, d); emit(g, " then 1 else 2)"); break;
    case 7: emit(g, "len(str("); gen_map(g, d); emit(g, "))"); break;
    case 8: /* string keys: bytewise order */
        emit(g, "len(str(to_map([(str("); gen_int(g, d); emit(g, " %% 12), 1), (\"1\", 2), (\"\", 3)])))");
        break;
    case 9: /* tuple keys */
        emit(g, "(case nth(items(put({(1, 2): 3, (0, 9): 4}, ("); gen_key(g, d); emit(g, ", 2), "); gen_int(g, d);
        emit(g, ")), 0) of (v%d, v%d) => v%d)", a, b, b);
        break;
    default: gen_state_int(g, gen_pick_thread(g)); break;
    }
    g->nenv = saved;
}
