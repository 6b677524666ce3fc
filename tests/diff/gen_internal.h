/* gen_internal.h - shared state of the program generator (gen.c:
 * declarations, gen_expr.c: expressions, gen_stage.c: main's stages and
 * the chains of independent lets main evaluates). */
#ifndef STC_DIFF_GEN_INTERNAL_H
#define STC_DIFF_GEN_INTERNAL_H

#include <stddef.h>

#include "gen.h"

#define PRIME "1000003"
#define MAX_THREADS 13 /* 12 plus the error-injection thread */
#define MAX_PURE 4
#define MAX_WRAP 4
#define MAX_ENV 128
#define MAX_STAGES 8
#define MAX_CHAINFN 4 /* functions c<i> holding let chains */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

/* Appends to b; aborts when out of memory. */
void gen_sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Kinds of thread functions (see emit_fun in gen.c). */
typedef enum tkind {
    K_ACC,      /* s' = s * a + x: order-sensitive accumulator */
    K_MIX,      /* the same with another output */
    K_ACC2,     /* two inputs */
    K_CNT,      /* no input: t() */
    K_TUP,      /* tuple state */
    K_LIST,     /* list state */
    K_RO,       /* read-only: returns its state parameter */
    K_ROT,      /* read-only with a tuple state */
    K_GH,       /* g x h: output ignores the state, new state ignores the input */
    K_COND,     /* writes its state for some inputs only */
    K_SUM,      /* sum output: callers case over inl/inr */
    K_NEST,     /* calls an earlier thread */
    K_NESTSMAP, /* runs an smap that calls an earlier thread */
    K_BOOL,     /* bool state */
    K_FLT,      /* float state */
    K_SUMST,    /* sum state */
    K_ERR,      /* fails for one input value (error injection only) */
    K_MAP,      /* a map state {int: int} updated in place with update */
    K_MAPR,     /* a map state with has, put and remove */
    K_PEEK,     /* reads an earlier thread's state with state(t) */
    K_COUNT
} tkind;

typedef enum etype { E_INT, E_TUP2, E_TUP3, E_SUM } etype; /* list element types */

typedef struct gthread {
    tkind kind;
    int fun, arity;
    bool sum_out;
} gthread;

typedef struct gfun {
    tkind kind;
    int a, b, other; /* multiplier, constant, thread called (K_NEST*) or failing input (K_ERR) */
} gfun;

typedef struct gstage {
    bool is_list, is_int; /* a list of elem, or an int */
    etype elem;
} gstage;

typedef struct gen {
    uint64_t rng;
    gen_size size;
    sbuf decl, body, *out; /* expressions go to *out */
    gthread th[MAX_THREADS];
    gfun fn[MAX_THREADS];
    int nth, nfn, npure, nwrap, err_thread;
    int pure_arity[MAX_PURE];
    bool use_sumlist, use_app, err_pending, err_placed;
    bool use_keep; /* keep(p, xs) = filter(p, xs): a predicate passed as a value */
    int env[MAX_ENV], nenv, nvar; /* int variables in scope: v<id> */
    int budget, smap_depth;       /* expression nodes left; smaps nested around */
    int item_var, item_n;         /* the innermost smap item (-1: none), bound of its values */
    gstage st[MAX_STAGES];
    int nst, cur_stage;
    /* Chains of independent lets outside smap (gen_stage.c): whether this
     * program has them, the functions c<i> declared for them (into fdecl;
     * arity 1, or 2 for a recursive c<i>(n, x)), and how many chains. */
    bool chains, in_chainfn;
    sbuf fdecl;
    int nchainfn, chainfn_arity[MAX_CHAINFN], nchains, chain_stage;
    /* Keyed threads (kt, kc, gen_keyed): whether this program has them, and
     * the stream their choices come from, of its own, so that a program
     * without them is the one its seed gave before they were generated. */
    bool keyed;
    uint64_t krng;
} gen;

static inline uint64_t gen_next(gen *g)
{
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline int rnd(gen *g, int n) { return n <= 0 ? 0 : (int)(gen_next(g) % (uint64_t)n); }
static inline bool chance(gen *g, int pct) { return rnd(g, 100) < pct; }
static inline int fresh(gen *g) { return g->nvar++; }
static inline void push(gen *g, int v)
{
    if (g->nenv < MAX_ENV) g->env[g->nenv++] = v;
}

#define emit(g, ...) gen_sb_printf((g)->out, __VA_ARGS__)

int gen_pick_weighted(gen *g, const int *w, int n);
int gen_pick_simple(gen *g, int below); /* int -> int thread below index `below`, or -1 */
int gen_pick_kind(gen *g, tkind k);     /* a thread of kind k, or -1 */
int gen_pick_thread(gen *g);            /* any thread but the error-injection one */

void gen_int(gen *g, int depth);            /* an int expression */
void gen_call(gen *g, int t, int depth);    /* a call of thread t (int-valued) */
void gen_sum(gen *g, int depth);            /* an int + int expression */
void gen_error_site(gen *g);                /* a data-dependent runtime error (int) */
void gen_nested(gen *g, int depth);         /* sumlist(smap(...)) or len(smap(...)) over a small list */
void gen_main(gen *g);                      /* "main = ..." into g->body */
void gen_keyed(gen *g, int depth);          /* a call of a keyed thread, or an smap of one (int) */
static inline int krnd(gen *g, int n)
{
    uint64_t z = (g->krng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return n <= 0 ? 0 : (int)((z ^ (z >> 31)) % (uint64_t)n);
}
void gen_map(gen *g, int depth);            /* a map {int: int} (gen_map.c) */
void gen_map_int(gen *g, int depth);        /* an int read from maps, or from a state(t) */
void gen_state_int(gen *g, int t);          /* an int from state(t) */

#endif
