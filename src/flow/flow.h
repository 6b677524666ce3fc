/* flow.h - the dataflow compiler and the parallel runtime.
 *
 * The reference evaluator (src/eval) defines what a program means; this
 * module makes it fast without changing that meaning.  It hooks into the
 * evaluator at smap: when main's evaluation reaches smap(f, xs), the body
 * of f is compiled (once per run) into a linear plan of steps, cut into
 * pipeline stages, and run over xs on a pool of workers (src/sched):
 *
 *   - each step evaluates one piece of the body (in the evaluator's own
 *     left-to-right order) into a slot of the item's frame;
 *   - a step that calls a thread which writes its state belongs to a
 *     serial stage (items in list order, one activation at a time); every
 *     step from a thread's first use to its last use in the body is fused
 *     into one serial stage (the seed's repeated letters);
 *   - pure steps and calls of read-only threads form replicated stages;
 *   - a g x h thread (output ignores the state, new state ignores the
 *     input) becomes a replicated output step plus a serial state step;
 *   - if/case become a select step that sets per-item branch flags; the
 *     steps of each branch run only for items whose flag is set, and since
 *     every batch visits every stage in order the join is free.
 *
 * Analysis (analyze.c) says which threads an expression may write and
 * calls.c which functions are recursive; compile.c builds the plan, with
 * calls to the other functions planned as their bodies in place; runtime.c holds the runtime object, exec.c
 * runs a plan's pipeline, steps.c its steps on each item, profiling.c
 * measures the stages; tasks.c runs tuples and let chains as tasks.  The
 * evaluator is reached only through eval/eval_runtime.h.
 */
#ifndef STC_FLOW_H
#define STC_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "stc.h"

/* ---- Thread sets (analyze.c) -------------------------------------------- */

/* The threads whose state an expression may write; `all` when unknown (a
 * call through a function value). */
typedef struct flow_set {
    bool all;
    uint64_t *bits; /* nwords words; NULL: empty */
} flow_set;

typedef struct flow_info {
    const ir_program *p;
    arena *mem;          /* everything below and every plan */
    int nwords;          /* words per bit set */
    flow_set *fun_sets;  /* per top-level function: what calling it may write */
    flow_set *thread_sets; /* per thread: what calling it may write (itself unless
                              read-only, plus what its function calls) */
    bool *readonly;      /* per thread: never changes its state (replicable) */
    bool *split;         /* per thread: a lang g x h thread (see compile.c) */
    bool *fun_smap;      /* per top-level function: calling it may run an smap */
    bool *fun_recursive; /* per top-level function: on a cycle of direct calls (calls.c) */
    int nshards;         /* shards of a keyed thread's stage (shards.c); < 2: none */
} flow_info;

static inline flow_set flow_set_none(void) { return (flow_set){false, NULL}; }

/* NULL when out of memory. */
flow_info *stc__flow_info_new(const ir_program *p);
void stc__flow_info_free(flow_info *fi);

/* What evaluating e may write (arena-allocated). all=true on OOM. */
flow_set stc__flow_expr_set(flow_info *fi, const ir_expr *e);
bool stc__flow_set_empty(const flow_info *fi, flow_set s);
bool stc__flow_sets_disjoint(const flow_info *fi, flow_set a, flow_set b);
/* Whether evaluating e may run an smap (calls through values count). */
bool stc__flow_expr_smaps(const flow_info *fi, const ir_expr *e);
/* Whether e calls a function, a thread or sin_iter: it may take a while. */
bool stc__flow_expr_calls(const flow_info *fi, const ir_expr *e);

/* Whether a value of type t may be or hold a function (a free type
 * variable may).  A closure's writes count where it is written (a
 * lambda), so a builtin handed one from a variable (smap(g, xs)) may write
 * anything, and a call whose arguments may carry one is not planned
 * through (compile.c). */
bool stc__flow_type_may_hold_fun(ir_type *t);

/* Fills fi->fun_recursive from the call graph; -1 when out of memory
 * (calls.c). */
int stc__flow_calls_analyze(flow_info *fi);

/* ---- Plans (compile.c) ---------------------------------------------------- */

typedef enum flow_step_kind {
    FS_EVAL,        /* slots[dst] = e */
    FS_SELECT_IF,   /* flags[flag0 + (slots[src] ? 0 : 1)] = 1 */
    FS_SELECT_CASE, /* first alt of case e matching slots[src]: bind, set flags[flag0 + i] */
    FS_DESTRUCT,    /* let-tuple e: bind its binders from the tuple in slots[src] */
    FS_SPLIT_OUT,   /* g x h thread: slots[dst] = output part, from the args */
    FS_SPLIT_STATE, /* g x h thread: state = state part of the current state */
    FS_CALL_C,      /* slots[dst] = C thread `thread` called on slots[args[0]] (the
                       common case of FS_EVAL, without the evaluator's call path) */
    FS_SHARD,       /* keyed call e: flags[flag0 + hash(key) % nshards] = 1 (shards.c) */
    FS_KEYED,       /* slots[dst] = keyed call e on shard map shard_map (shards.c) */
    FS_ISHARD,      /* inner smap e of a keyed call: its list, keys and shards into
                       the temporaries from src, flags as FS_SHARD (shards.c) */
    FS_IKEYED       /* inner smap e: the elements of shard guard - flag0 on its map;
                       the last shard puts the results in slots[dst] (shards.c) */
} flow_step_kind;

typedef struct flow_step {
    flow_step_kind kind;
    const ir_expr *e;
    int src, dst;     /* frame slots, -1 when unused */
    int guard;        /* the branch flag that must be set, or -1 */
    int flag0;        /* SELECT_*: the flag of its first branch */
    int thread;       /* SPLIT_*, CALL_C: the thread */
    const int *args;  /* SPLIT_OUT, CALL_C: slots of the thread's inputs; DESTRUCT
                         (when not NULL): its binders' slots, -1 for none */
    int nargs;
    int depth;        /* evaluator depth for e, relative to the smap's */
    int nshards;      /* FS_SHARD: the flags flag0 .. flag0 + nshards - 1 it chooses from */
    int shard_map;    /* FS_KEYED: the job's shard map it runs on (flow_plan.shard_thread) */
    bool borrow;      /* DESTRUCT: src is a variable's own slot: the tuple is read there,
                         not moved out (else src is a temporary of this step's) */
    int base;         /* e's frame starts at this slot of the item's frame: 0 for the
                         mapped function's body, a callee's block for a body planned
                         in place of its call; src, dst and args are item slots */
    flow_set writes;
} flow_step;

typedef struct flow_stage {
    int first, count; /* steps */
    bool serial;
    int shard, nshards; /* a keyed thread's shard stage: shard of nshards (else nshards 0) */
    const char *why;    /* a serial stage with a call of keyed thread why_thread not
                           sharded: why (or NULL) */
    int why_thread;
} flow_stage;

typedef struct flow_plan {
    const ir_expr *smap;  /* the smap node it was made for */
    const ir_fun *fn;     /* the function mapped, or NULL for a thread */
    int thread;           /* the thread mapped, or -1 */
    int nslots;           /* item frame: fn's slots, then temporaries */
    int nflags;
    int result;           /* slot of the item's result */
    flow_step *steps;
    int nsteps;
    flow_stage *stages;
    int nstages;
    int nserial;          /* serial stages */
    int nshard_maps;      /* keyed threads' shard maps (shards.c) */
    const int *shard_thread; /* per shard map: its keyed thread (nshards maps in a row each) */
    /* The frame slots (past the captures) that may hold a counted value
     * between items, ascending: release empties only these (exec.c).  A
     * slot that every writer (a step's dst, a parameter, a binder bound in
     * it) fills with an int, float, bool or unit is left out: its stale
     * scalar needs no release and is overwritten before it is read
     * (compile.c flow_heap_slots). */
    int *heap_slots;
    int nheap;
    int call_depth;       /* deepest depth (relative) of a call planned in place, where
                             the evaluator checks the depth limit; -1: none */
    uint64_t remote_ok;   /* bit t: stage t may run on a remote executor (remote.c) */
    uint64_t remote_owned; /* bit t: serial stage t may be owned by a remote executor,
                              its threads' states with it, or a keyed thread's
                              shard stage, its shard map with it (owned.c) */
} flow_plan;

/* ---- Remote stages (remote.c) ----------------------------------------------- */

/* The stages (bits 0..63) of a function's plan that may run in another
 * process: replicated, and every step evaluating only what calls no
 * function value, no smap and no thread but read-only lang ones, and
 * reads no state but theirs (through the functions and those threads'
 * functions it calls); their states go with each batch (owned.c). */
uint64_t stc__flow_remote_stages(flow_info *fi, const flow_plan *pl);
/* The serial stages (bits 0..63) another process may own: not a shard
 * stage, every step an expression, a select or a let-tuple's binding that
 * calls no C, keyed or split thread, no function value and no smap (through
 * every function and thread function called), nor reads a thread's state
 * by state(t); and no other stage reaches any thread it reaches. */
uint64_t stc__flow_remote_owned_stages(flow_info *fi, const flow_plan *pl);

/* The answering side of stc_remote (include/stc.h). */
typedef struct flow_remote_server flow_remote_server;
flow_remote_server *stc__flow_remote_server_new(const ir_program *p);
int stc__flow_remote_serve(flow_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len);
void stc__flow_remote_server_free(flow_remote_server *s);
/* What the request stc__flow_remote_serve last answered was, for the
 * server's counts (api/remote.c): a stage's batch (owned: a serial stage
 * held here), owned stages' states going back, or a refused request. */
enum { FLOW_SEEN_REFUSED, FLOW_SEEN_BATCH, FLOW_SEEN_FETCH };
typedef struct flow_remote_seen {
    int kind;
    int smap, fn, stage; /* FLOW_SEEN_BATCH: which (the request's numbers) */
    long long items;     /* items the stage ran */
} flow_remote_seen;
flow_remote_seen stc__flow_remote_server_seen(const flow_remote_server *s);
struct buf;
/* A batch's stage as the profile names it ("f (line 13)"), its kind, its
 * smap's "FILE:LINE:COL", line and whether it is serial; STC_EINVAL when
 * w is not a batch this server answered, STC_ENOMEM. */
int stc__flow_remote_server_describe(const flow_remote_server *s, const flow_remote_seen *w, struct buf *name,
                                     struct buf *kind, struct buf *where, int *line, bool *serial);

/* The plan for smap node `smap` mapping fn (or thread when fn is NULL).
 * NULL when out of memory. */
flow_plan *stc__flow_plan_build(flow_info *fi, const ir_expr *smap, const ir_fun *fn, int thread);

/* Shards of a keyed stage for a runtime of `workers` workers (one per
 * worker, at most FLOW_MAX_SHARDS), and in `stc graph`'s plans. */
#define FLOW_MAX_SHARDS 8
#define FLOW_GRAPH_SHARDS 2
int stc__flow_shards_for(int workers);
/* The shard of a key of hash h (stc__val_key_hash) among S: the hash's
 * high half scaled to [0, S) (a multiply, not a 64-bit division, which
 * cost a word count's routing ~20-40 cycles a word).  The split of a
 * thread's map and the routing of its calls use this one rule. */
static inline int flow_shard_of(uint64_t h, int S) { return (int)(((h >> 32) * (uint64_t)(unsigned)S) >> 32); }

/* Splits each serial stage that is one call of a keyed thread into
 * fi->nshards serial shard stages (shards.c); -1 when out of memory. */
int stc__flow_shard_plan(flow_info *fi, flow_plan *pl);

/* ---- Names for users (describe.c) ------------------------------------------- */

struct buf;
/* Appends the stage's name: the threads it runs, else the functions it
 * calls, else "pure"/"serial" ("f + g", "work", "if"). */
void stc__flow_stage_describe(const flow_info *fi, const flow_plan *pl, int stage, struct buf *out);
/* "serial", "serial, fused segment", "replicated, split", ... */
const char *stc__flow_stage_kind(const flow_info *fi, const flow_plan *pl, int stage);
/* Appends the kind, and for a serial stage made serial by a call that
 * could not be planned through, why: "serial (calls recursive function
 * g)", "serial (calls a function value)". */
void stc__flow_stage_kind_why(const flow_info *fi, const flow_plan *pl, int stage, struct buf *out);
int stc__flow_stage_line(const flow_plan *pl, int stage);
bool stc__flow_stage_guarded(const flow_plan *pl, int stage);
/* The expression whose value the stage hands on last, or NULL. */
const ir_expr *stc__flow_stage_output(const flow_plan *pl, int stage);

/* Calls visit(e, ud) for every smap call in the program (main, every
 * function and lambda), in source order. */
void stc__flow_each_smap(const ir_program *p, void (*visit)(const ir_expr *smap, void *ud), void *ud);
/* The plan of an smap node as the runtime would build it, from its first
 * argument alone: NULL when that is not a lambda, a function or a thread
 * name (a function value: known only at run time), or out of memory. */
flow_plan *stc__flow_plan_static(flow_info *fi, const ir_expr *smap);
/* When smap's function is a parameter of a top-level function, the
 * functions its calls pass there (param_fns.c): the count, with fns[i] a
 * lambda, function or thread reference and calls[i] the first call passing
 * it (both arrays malloc'd); 0 when any call passes something else or
 * none exists; -1 when out of memory. */
int stc__flow_param_fns(const ir_program *p, const ir_expr *smap, const ir_expr ***fns, const ir_expr ***calls);
/* The plan of smap mapping the function f names (a lambda, a function or
 * a thread reference); NULL for anything else or out of memory. */
flow_plan *stc__flow_plan_for_fn(flow_info *fi, const ir_expr *smap, const ir_expr *f);

/* ---- The runtime (runtime.c) ------------------------------------------------ */

typedef struct flow_runtime flow_runtime;
struct eval_runtime_hooks;

#define FLOW_OWNED_FEED 8

typedef struct flow_opts {
    int workers;          /* >= 1 */
    int queue_capacity;   /* items per batch at most (0: default) */
    int max_batches;      /* batches in flight (0: default) */
    unsigned perturb_seed; /* testing aids (see sched_pipeline) */
    int watchdog_ms;
    int trial_refusals;    /* (testing.h) */
    int shuttle_items;     /* (testing.h) */
    /* A profile at 1 worker that samples its pipelines at 2 (exec.c, "The
     * sample"): the runtime has 2 workers, and runs nothing but those
     * samples on the second. */
    bool sample;
    /* (testing.h) Per stage s < FLOW_OWNED_FEED: > 0, the work in ns the
     * placement of serial stages counts for each item of s it measures
     * (owned.c), instead of what was measured. */
    long long owned_item_ns[FLOW_OWNED_FEED];
    bool profile;          /* measure every stage (stc__flow_runtime_profile) */
    struct trace_writer *trace; /* record stage activations and parking (NULL: off) */
    struct sched_pool *pool;    /* the host's pool (kept), or NULL: made when needed */
    const struct stc_remote *remote; /* where replicated stages may run (NULL: here) */
} flow_opts;

/* NULL when out of memory or an option is out of range. */
flow_runtime *stc__flow_runtime_new(const ir_program *p, const flow_opts *o);
void stc__flow_runtime_free(flow_runtime *rt);
/* The hooks to hand the evaluator (stc__eval_run_hooked): they run its smaps,
 * tuples and lets on the pool. */
const struct eval_runtime_hooks *stc__flow_runtime_hooks(flow_runtime *rt);
struct result_profile;
/* The measured profile (a run with opts.profile), wall_ms being the whole
 * run's; NULL when out of memory (profiling.c). */
struct result_profile *stc__flow_runtime_profile(const flow_runtime *rt, double wall_ms);
/* What the runtime did so far (stc_result_stats). */
stc_run_stats stc__flow_runtime_stats(const flow_runtime *rt);

#endif
