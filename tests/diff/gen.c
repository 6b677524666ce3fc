/* gen.c - random, well-typed STCLang programs around state threads: the
 * declarations and the program as a whole (expressions: gen_expr.c, main's
 * stages: gen_stage.c).
 *
 * A program is: thread functions of several kinds (order-sensitive
 * accumulators, tuple, list, bool, float and sum states, read-only, g x h,
 * conditional writers, sum outputs, threads calling threads directly or in
 * an smap, a zero-input counter, a two-input join), 1-12 threads bound to
 * them (sometimes several to one function), a few pure functions, wrapper
 * functions that call threads (and each other), and a main of 1-4 stages
 * (`let rI = STAGE in ... (r0, r1, ...)`); in about 30% of programs some
 * stages are chains of independent lets outside smap, inline or in
 * functions c<i> main calls (recursive ones too); in about half of them the
 * helper sumlist is a tail-recursive loop instead of a right fold (same
 * value: docs/LANGUAGE.md 6's tail calls, in smap items and outside). Every compound expression is
 * parenthesized, so the text has no precedence surprises and the shrinker
 * can take parenthesized groups apart. Without an injected error every int
 * stays non-negative and far below 2^63 (arithmetic is modulo a prime). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"

void gen_sb_printf(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) abort();
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 256;
        while (cap <= b->len + (size_t)n) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "gen: out of memory\n");
            abort();
        }
        b->p = p;
        b->cap = cap;
    }
}

int gen_pick_weighted(gen *g, const int *w, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++) total += w[i];
    int r = rnd(g, total);
    for (int i = 0; i < n; i++) {
        if (r < w[i]) return i;
        r -= w[i];
    }
    return 0;
}

int gen_pick_simple(gen *g, int below)
{
    int c[MAX_THREADS], n = 0;
    for (int i = 0; i < below; i++)
        if (g->th[i].arity == 1 && !g->th[i].sum_out && g->th[i].kind != K_ERR) c[n++] = i;
    return n ? c[rnd(g, n)] : -1;
}

int gen_pick_kind(gen *g, tkind k)
{
    int c[MAX_THREADS], n = 0;
    for (int i = 0; i < g->nth; i++)
        if (g->th[i].kind == k) c[n++] = i;
    return n ? c[rnd(g, n)] : -1;
}

int gen_pick_thread(gen *g)
{
    int t;
    do t = rnd(g, g->nth);
    while (g->th[t].kind == K_ERR);
    return t;
}

/* ---- Declarations ---- */

static const int kind_weight[K_COUNT] = {
    [K_ACC] = 18, [K_MIX] = 12, [K_ACC2] = 6, [K_CNT] = 4, [K_TUP] = 5, [K_LIST] = 4, [K_RO] = 10,
    [K_ROT] = 4, [K_GH] = 10, [K_COND] = 6, [K_SUM] = 5, [K_NEST] = 5, [K_NESTSMAP] = 3, [K_BOOL] = 3,
    [K_FLT] = 3, [K_SUMST] = 3, [K_ERR] = 0, [K_MAP] = 6, [K_MAPR] = 4, [K_PEEK] = 4};

static void add_thread(gen *g, tkind k)
{
    static const int mult[] = {31, 17, 7, 10, 3, 37};
    int i = g->nth++;
    if ((k == K_NEST || k == K_NESTSMAP || k == K_PEEK) && gen_pick_simple(g, i) < 0) k = K_ACC;
    gthread *t = &g->th[i];
    *t = (gthread){.kind = k, .arity = k == K_ACC2 ? 2 : k == K_CNT ? 0 : 1, .sum_out = k == K_SUM};
    if (k != K_NEST && k != K_NESTSMAP && k != K_PEEK && k != K_ERR && chance(g, 25))
        for (int j = 0; j < g->nfn; j++)
            if (g->fn[j].kind == k) { /* a second thread on the same function */
                t->fun = j;
                return;
            }
    t->fun = g->nfn++;
    gfun *f = &g->fn[t->fun];
    *f = (gfun){.kind = k, .a = mult[rnd(g, 6)], .b = 1 + rnd(g, 97), .other = -1};
    if (k == K_NEST || k == K_NESTSMAP || k == K_PEEK) f->other = gen_pick_simple(g, i);
    if (k == K_ERR) f->other = rnd(g, g->size.items / 2 + 1);
    g->use_sumlist |= k == K_NESTSMAP;
}

static void emit_fun(gen *g, int i)
{
    const gfun *f = &g->fn[i];
    int a = f->a, b = f->b, o = f->other;
    sbuf *d = &g->decl;
    switch (f->kind) {
    case K_ACC: gen_sb_printf(d, "fun f%d(x, s) = let v = (s * %d + x) %% " PRIME " in (v, v)\n", i, a); break;
    case K_MIX:
        gen_sb_printf(d, "fun f%d(x, s) = let v = (s * %d + x * 3 + 1) %% " PRIME " in (v + x %% 7, v)\n", i, a);
        break;
    case K_ACC2:
        gen_sb_printf(d, "fun f%d(x, y, s) = let v = (s * %d + x * 5 + y) %% " PRIME " in (v, v)\n", i, a);
        break;
    case K_CNT: gen_sb_printf(d, "fun f%d(s) = (s, (s * %d + 1) %% " PRIME ")\n", i, a); break;
    case K_TUP:
        gen_sb_printf(d, "fun f%d(x, s) = let (p, q) = s in let p2 = (p * %d + x) %% " PRIME
                         " in ((p2 + q) %% " PRIME ", (p2, (q * 3 + p2) %% " PRIME "))\n", i, a);
        break;
    case K_LIST:
        gen_sb_printf(d, "fun f%d(x, s) = let v = (nth(s, 0) * %d + x + nth(s, 1)) %% " PRIME
                         " in (v, [v, nth(s, 0)])\n", i, a);
        break;
    case K_RO: gen_sb_printf(d, "fun f%d(x, s) = ((x * s + %d) %% " PRIME ", s)\n", i, b); break;
    case K_ROT: gen_sb_printf(d, "fun f%d(x, s) = let (k, m) = s in ((x * k + m) %% " PRIME ", s)\n", i); break;
    case K_GH:
        gen_sb_printf(d, "fun f%d(x, s) = ((x * %d + 1) %% " PRIME ", (s * 3 + %d) %% " PRIME ")\n", i, a, b);
        break;
    case K_COND:
        gen_sb_printf(d, "fun f%d(x, s) = ((x + s) %% " PRIME ", if x %% %d == 0 then (s * %d + x) %% " PRIME
                         " else s)\n", i, 2 + b % 4, a);
        break;
    case K_SUM:
        gen_sb_printf(d, "fun f%d(x, s) = let v = (s * %d + x) %% " PRIME
                         " in (if v %% 2 == 0 then inl v else inr (v %% 1000), v)\n", i, a);
        break;
    case K_NEST:
        gen_sb_printf(d, "fun f%d(x, s) = let v = (s * %d + t%d(x)) %% " PRIME " in (v, v)\n", i, a, o);
        break;
    case K_NESTSMAP:
        gen_sb_printf(d, "fun f%d(x, s) = let v = (s * %d + sumlist(smap(fn y => t%d((y + x) %% " PRIME
                         "), range(0, x %% 3)))) %% " PRIME " in (v, v)\n", i, a, o);
        break;
    case K_BOOL:
        gen_sb_printf(d, "fun f%d(x, s) = (if s then (x * %d + 1) %% " PRIME
                         " else x, if x %% 3 == 0 then s else not s)\n", i, a);
        break;
    case K_FLT:
        gen_sb_printf(d, "fun f%d(x, s) = let v = s * 0.5 + float(x %% 1000) in (round(v * 3.0) %% "
                         PRIME ", v)\n", i);
        break;
    case K_SUMST:
        gen_sb_printf(d, "fun f%d(x, s) = case s of inl a => (a, inr ((a * %d + x) %% " PRIME
                         ")) | inr b => ((b + x) %% " PRIME ", inl ((b * 3 + 1) %% " PRIME "))\n", i, a);
        break;
    case K_ERR:
        gen_sb_printf(d, "fun f%d(x, s) = (s %% 1000 + 1000 / (x - %d), (s * 31 + x) %% " PRIME ")\n", i, o);
        break;
    case K_MAP: /* a word count's shape: the state updated in place */
        gen_sb_printf(d, "fun f%d(x, s) = let k = x %% %d in let m = update(s, k, 0, fn n => (n * %d + x) %% " PRIME
                         ") in (get(m, k, 0), m)\n", i, 2 + b % 7, a);
        break;
    case K_MAPR:
        gen_sb_printf(d, "fun f%d(x, s) = let k = x %% %d in if has(s, k) && x %% 3 == 0 then (len(s), remove(s, k)) "
                         "else ((x + len(s)) %% " PRIME ", put(s, k, (get(s, k, 0) * %d + x) %% " PRIME "))\n",
                      i, 2 + b % 5, a);
        break;
    case K_PEEK: { /* another thread's state, read where this thread's call runs */
        sbuf *saved = g->out;
        g->out = d;
        gen_sb_printf(d, "fun f%d(x, s) = let v = (s * %d + x + ", i, a);
        gen_state_int(g, o);
        gen_sb_printf(d, ") %% " PRIME " in (v, v)\n");
        g->out = saved;
        break;
    }
    case K_COUNT: break;
    }
}

static void emit_thread(gen *g, int i)
{
    const gthread *t = &g->th[i];
    sbuf *d = &g->decl;
    gen_sb_printf(d, "thread t%d = f%d init ", i, t->fun);
    int u = rnd(g, 100), w = rnd(g, 100);
    switch (t->kind) {
    case K_TUP: gen_sb_printf(d, "(%d, %d)\n", u, w); break;
    case K_ROT: gen_sb_printf(d, "(%d, %d)\n", u + 1, w); break;
    case K_LIST: gen_sb_printf(d, "[%d, %d]\n", u, w); break;
    case K_BOOL: gen_sb_printf(d, "%s\n", u % 2 ? "true" : "false"); break;
    case K_FLT: gen_sb_printf(d, "%d.5\n", u); break;
    case K_SUMST: gen_sb_printf(d, "%s %d\n", w % 2 ? "inl" : "inr", u); break;
    case K_MAP:
    case K_MAPR:
        if (u % 2) gen_sb_printf(d, "{}\n");
        else gen_sb_printf(d, "{%d: %d, %d: %d}\n", u % 6, w, (u + 3) % 6, u);
        break;
    default: gen_sb_printf(d, "%d\n", u); break;
    }
}

static void emit_pure(gen *g, int i)
{
    int a = 2 + rnd(g, 40), b = rnd(g, 100);
    sbuf *d = &g->decl;
    g->pure_arity[i] = 1;
    switch (rnd(g, 5)) {
    case 0: gen_sb_printf(d, "fun p%d(x) = (x * %d + %d) %% " PRIME "\n", i, a, b); break;
    case 1:
        g->pure_arity[i] = 2;
        gen_sb_printf(d, "fun p%d(x, y) = (x * %d + y) %% " PRIME "\n", i, a);
        break;
    case 2: gen_sb_printf(d, "fun p%d(x) = if x %% 2 == 0 then x / 2 else (x * 3 + 1) %% " PRIME "\n", i); break;
    case 3: gen_sb_printf(d, "fun p%d(x) = round(float(x %% 1000) * 1.5)\n", i); break;
    default:
        gen_sb_printf(d, "fun p%d(x) = case x %% 3 of 0 => x | 1 => x * 2 %% " PRIME " | _ => x + %d\n", i, b);
        break;
    }
}

/* Wrappers: functions called per item (or mapped by name) that call
 * threads, which the runtime plans as if their bodies were written in
 * place (docs/DESIGN.md 3): one thread, an inner smap, an if, a let and a
 * case, an earlier wrapper (helpers calling helpers, one of them twice per
 * call), and a recursive helper (which stays one step). */
static void emit_wrapper(gen *g, int i)
{
    int t = gen_pick_simple(g, g->nth), u = gen_pick_simple(g, g->nth);
    int j = i > 0 ? rnd(g, i) : -1; /* an earlier wrapper */
    sbuf *d = &g->decl;
    int k = rnd(g, 7);
    if (j < 0 && (k == 3 || k == 5)) k = 0;
    switch (k) {
    case 0: gen_sb_printf(d, "fun w%d(x) = (t%d(x) + 1) %% " PRIME "\n", i, t); break;
    case 1:
        g->use_sumlist = true;
        gen_sb_printf(d, "fun w%d(x) = sumlist(smap(fn y => t%d((y + x) %% " PRIME "), range(0, x %% 4)))\n", i, t);
        break;
    case 3: gen_sb_printf(d, "fun w%d(x) = ((w%d(x) * 3) + t%d((x %% 100))) %% " PRIME "\n", i, j, t); break;
    case 4:
        gen_sb_printf(d, "fun w%d(x) = let y = (t%d(x) %% " PRIME ") in (case (y %% 3) of 0 => t%d(y) | 1 => "
                         "((y + 1) %% " PRIME ") | _ => t%d((x %% 100)))\n", i, t, u, t);
        break;
    case 5:
        gen_sb_printf(d, "fun w%d(x) = let a = w%d(x) in ((a + w%d(((x + 1) %% " PRIME "))) %% " PRIME ")\n", i, j, j);
        break;
    case 6:
        gen_sb_printf(d, "fun w%d(x) = wr%d(x, (x %% 3))\n"
                         "fun wr%d(x, n) = if n <= 0 then x else wr%d((t%d(x) %% " PRIME "), (n - 1))\n",
                      i, i, i, i, t);
        break;
    default: gen_sb_printf(d, "fun w%d(x) = if x %% 2 == 0 then t%d(x) else t%d(x %% 100)\n", i, t, u); break;
    }
}

gen_size gen_default_size(void) { return (gen_size){.threads = 12, .items = 300, .depth = 4, .stages = 4}; }

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

char *gen_program(uint64_t seed, gen_size size, gen_info *info)
{
    static const gen zero;
    gen *g = malloc(sizeof *g);
    if (!g) return NULL;
    *g = zero;
    g->rng = seed * 0x2545f4914f6cdd1dull + 0x632be59bd9b4e019ull;
    g->size = (gen_size){.threads = clamp(size.threads, 1, 12), .items = clamp(size.items, 0, 1 << 20),
                         .depth = clamp(size.depth, 0, 8), .stages = clamp(size.stages, 1, MAX_STAGES)};
    g->err_thread = g->item_var = -1;
    g->err_pending = chance(g, 8);
    /* Whether main has chains of independent lets (gen_stage.c), drawn from
     * a stream of its own: a program without them is the one this seed gave
     * before chains were generated. With them, errors are likelier (they
     * test which failing item of a chain is reported). */
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + 0x5851f42d4c957f2dull;
    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
    g->chains = (z ^ (z >> 33)) % 100 < 30;
    /* sumlist as a loop: from a stream of its own too (the program text
     * changes, not the random draws). */
    bool tail_sumlist = ((z ^ (z >> 33)) >> 20) % 2 == 0;
    if (g->chains && !g->err_pending) g->err_pending = chance(g, 12);
    g->krng = z ^ 0x6b657965642121ull;
    g->keyed = krnd(g, 100) < 45;
    int n = 1 + rnd(g, g->size.threads);
    for (int i = 0; i < n; i++) add_thread(g, (tkind)gen_pick_weighted(g, kind_weight, K_COUNT));
    if (g->err_pending && chance(g, 40)) {
        g->err_thread = g->nth;
        add_thread(g, K_ERR);
    }
    for (int i = 0; i < g->nfn; i++) emit_fun(g, i);
    for (int i = 0; i < g->nth; i++) emit_thread(g, i);
    if (g->keyed)
        gen_sb_printf(&g->decl,
                      "fun kf(k, x, s) = let v = (s * %d + x + k) %% " PRIME " in (v, v)\n"
                      "keyed thread kt = kf init %d\n"
                      "fun kcount(k, s) = (s * 7 + k, s + 1)\n"
                      "keyed thread kc = kcount init 0\n",
                      3 + krnd(g, 30), krnd(g, 100));
    g->npure = 1 + rnd(g, MAX_PURE);
    for (int i = 0; i < g->npure; i++) emit_pure(g, i);
    g->nwrap = gen_pick_simple(g, g->nth) >= 0 ? rnd(g, MAX_WRAP + 1) : 0;
    for (int i = 0; i < g->nwrap; i++) emit_wrapper(g, i);
    gen_main(g);
    if (g->fdecl.p) gen_sb_printf(&g->decl, "%s", g->fdecl.p);
    free(g->fdecl.p);
    if (g->use_sumlist && tail_sumlist) /* the same fold from the end, by tail calls */
        gen_sb_printf(&g->decl, "fun sumlist(xs) = sl(xs, len(xs) - 1, 0)\n"
                                "fun sl(xs, i, acc) = if i < 0 then acc else sl(xs, i - 1, (nth(xs, i) * 31 + acc) %% "
                                PRIME ")\n");
    else if (g->use_sumlist)
        gen_sb_printf(&g->decl, "fun sumlist(xs) = sl(xs, 0, len(xs))\n"
                                "fun sl(xs, i, n) = if i >= n then 0 else (nth(xs, i) * 31 + sl(xs, i + 1, n)) %% "
                                PRIME "\n");
    if (g->use_app) gen_sb_printf(&g->decl, "fun app(f, x) = f(x)\n");
    if (g->use_keep) gen_sb_printf(&g->decl, "fun keep(p, xs) = filter(p, xs)\n");
    gen_sb_printf(&g->decl, "%s", g->body.p);
    free(g->body.p);
    char *text = g->decl.p;
    if (info) *info = (gen_info){.threads = g->nth, .error_injected = g->err_placed, .chains = g->nchains};
    free(g);
    return text;
}
