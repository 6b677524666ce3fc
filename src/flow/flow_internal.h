/* flow_internal.h - the runtime object (runtime.c) shared by the files
 * that do its work: exec.c and steps.c (smap pipelines), profiling.c
 * (their measurements) and tasks.c (tuples and let chains as parallel
 * tasks). */
#ifndef STC_FLOW_INTERNAL_H
#define STC_FLOW_INTERNAL_H

#include <stdatomic.h>

#include "eval/eval_runtime.h"
#include "flow/flow.h"
#include "sched/sched.h"

#if defined(__GNUC__)
#define FLOW_NOINLINE __attribute__((noinline))
#else
#define FLOW_NOINLINE
#endif

/* Measurements of one plan's pipeline (profile and trace runs only). */
typedef struct flow_plan_prof {
    char **names;       /* per stage: its name and line, for traces and profiles */
    /* [worker][stage][3]: busy ns, items, batches; each worker writes its
     * row.  Stages 0..nstages-1 are the plan's; a stream's output stage is
     * nstages and its input (the source) nstages + 1. */
    uint64_t *cells;
    uint64_t *wait_ns;  /* per stage: batches waiting for their turn (the pool lock) */
    uint64_t wall_ns;   /* main thread */
    /* The probes' fused stretches (exec.c FLOW_PROBE_NS): wall ns and
     * items, what an item costs one worker in a run at 2+ (main thread) */
    uint64_t probe_ns, probe_items;
    /* A sample's pipeline at 2 workers (exec.c, a 1-worker profile): wall
     * ns and finished items over its counted windows (the source) */
    uint64_t sample_ns, sample_items;
    int order;          /* which pipeline it was to run first (0, 1, ...), -1 before */
    bool stream;        /* it ran over a stream: the input and output rows count */
} flow_plan_prof;

/* The cells of a stream's output stage (the sink) and input (the source). */
#define FLOW_OUTPUT_STAGE(pl) ((pl)->nstages)
#define FLOW_INPUT_STAGE(pl) ((pl)->nstages + 1)

/* How a tuple's items, or a chain of independent lets' bound expressions,
 * run (tasks.c): as ngroups tasks, or (ngroups 0) left to the evaluator.
 * Items sharing a thread are in one group and run in order in one task;
 * group[i] is item i's group. */
typedef struct flow_task_plan {
    const ir_expr *e;             /* the tuple, or the chain's first let */
    int n;                        /* items */
    ir_expr *const *items;        /* item i's expression */
    const ir_expr *const *lets;   /* a chain: item i's let (its binders); NULL for a tuple */
    int ngroups;
    int *group;
    int cheap_runs;               /* consecutive runs shorter than FLOW_TASK_MIN_NS (main thread only) */
} flow_task_plan;

/* What the runtime learnt about one plan over its runs (main thread
 * only), for the decisions of nested.c. */
typedef struct flow_plan_use {
    bool nested;        /* a step of its plan may run an smap */
    bool nested_serial; /* ... and one such step is in a serial stage (the smap writes threads) */
    bool outer_pays;    /* a loop on main did not pay (nested.c): pipeline it from now on */
    bool cheap;         /* its pipelines were too short to pay: left to the evaluator */
    int cheap_runs;     /* consecutive pipeline runs shorter than FLOW_SMAP_MIN_NS */
    uint64_t owned_cheap; /* serial stages a peer measured too cheap to own: kept here (owned.c) */
} flow_plan_use;

/* A worker's evaluation context, on cache lines of its own (the array is
 * 64-byte aligned): its fields change at every call, and a neighbour's
 * context on the same line would move between the cores with them. */
typedef struct flow_worker_ctx {
    _Alignas(64) eval_ctx cx;
} flow_worker_ctx;

struct flow_runtime {
    const ir_program *p;
    flow_info *fi;
    int workers, capacity, max_batches;
    unsigned perturb_seed;   /* testing aids, passed to every pipeline */
    int watchdog_ms;
    int trial_refusals;      /* the first trial decisions of a job forced to "stays fused" */
    int shuttle_items;       /* > 0: every trial says "gains", the pipeline goes back after this many items */
    /* A 1-worker profile (flow_opts.sample): `workers` is 2, but only a
     * pipeline's sample (exec.c) uses the second; everything else runs
     * as at 1 worker (flow_parallel_workers). */
    bool sample;
    /* What reading the thread's CPU clock adds to an interval timed with
     * it (job.h flow_trial_add; measured at 2+ workers when the runtime is
     * made, 0 at 1): ~30 ns through the vDSO, ~1.4 us on a VM where it is a
     * system call, where it made a 20 ns stage look 10 times dearer. */
    uint64_t cpu_clock_ns;
    long long owned_feed[FLOW_OWNED_FEED]; /* the placement's figures for stages 0.. (flow_opts) */
    bool profile;            /* measure stages (profs) */
    struct trace_writer *trace; /* NULL: no trace */
    flow_plan_prof *profs;   /* parallel to plans when profile or trace is on */
    int npipelines;          /* plans that have run, for flow_plan_prof.order */
    sched_pool *pool;        /* made at the first parallel smap, or the host's */
    bool own_pool;           /* free it with the runtime */
    flow_worker_ctx *wcx;    /* one evaluation context per worker (.cx) */
    /* Per worker: the value cache it allocates from while it works for a
     * job of this runtime, and the cache its thread had before (put back
     * when it leaves; a C thread may run another program's job inside). */
    struct val_cache **caches, **outer_caches;
    /* Per worker: its thread's counting mode before it joined (value.h:
     * counts are atomic while more than one worker works for a job). */
    bool *outer_plain;
    /* The pipeline running now counts plainly on its workers (exec.c
     * flow_counts_plain); set by the calling thread before the job starts
     * and cleared after it ends (the pool's mutex orders both for the
     * workers). */
    bool plain_job;
    struct val_depot *depot; /* where the caches exchange full magazines */
    flow_plan **plans;       /* made so far (used by the main thread only) */
    flow_plan_use *uses;     /* parallel to plans (main thread only) */
    uint64_t pipeline_ns;    /* wall time of every pipeline run so far (main thread only) */
    int nplans, plans_cap;
    flow_task_plan **tasks;  /* tuple and let-chain decisions made so far, a hash
                                table by expression (main thread only) */
    int ntasks, tasks_cap;
    eval_runtime_hooks hooks;
    stc_run_stats stats;     /* what the runtime did (main thread only) */
    /* Remote stages (remote.c): the host's executor (call NULL: none), the
     * smap and function numbers it names them by (made with the runtime),
     * and counters any worker adds to (atomic). */
    stc_remote remote;
    struct flow_remote_names *rnames;
    atomic_llong remote_batches, remote_sent, remote_received, remote_declined;
    atomic_llong remote_serial; /* of remote_batches: serial stages' (atomic) */
    atomic_llong remote_moves;  /* serial stages placed on a peer (atomic) */
    atomic_llong remote_shard_moves, remote_shard_serial; /* of those two: keyed shard stages' (atomic) */
    int next_peer;              /* round robin of owned serial stages (main thread only) */
};

/* ---- Remote stages (remote.c) ---- */

/* Numbers both ends agree on: smap nodes in source order, functions by
 * funtable.  NULL when out of memory. */
struct flow_remote_names *stc__flow_remote_names_new(const ir_program *p);
void stc__flow_remote_names_free(struct flow_remote_names *n);

/* Creates the pool and the worker contexts if not done yet; -1 on OOM
 * (runtime.c). */
int stc__flow_start_pool(flow_runtime *rt);

/* A sched_pipeline's on_worker: switches the thread to worker's cache.
 * The pipeline's ud must start with the runtime's pointer (runtime.c). */
void stc__flow_on_worker(void *ud, int worker, bool joining);

/* The plan for smap e mapping fn (or thread when fn is NULL), made at its
 * first use, with its measurements in *prof when profiling or tracing
 * (else NULL); NULL when out of memory (runtime.c). */
const flow_plan *stc__flow_plan_get(flow_runtime *rt, const ir_expr *e, const ir_fun *fn, int thread,
                               flow_plan_prof **prof, flow_plan_use **use);

/* The workers the run's parallel constructs may spread over: 1 in a
 * sample's runtime (flow_runtime.sample), whose pool has 2. */
static inline int flow_parallel_workers(const flow_runtime *rt) { return rt->sample ? 1 : rt->workers; }

/* A plan's stage names and counters (profile or trace runs); -1 when out
 * of memory, the partial record freed by stc__flow_prof_free (profiling.c). */
int stc__flow_prof_init(flow_runtime *rt, const flow_plan *pl, flow_plan_prof *pf);
void stc__flow_prof_free(const flow_plan *pl, flow_plan_prof *pf);

/* The smap and stream hooks (exec.c). */
int stc__flow_smap(void *ud, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_items *xs,
              stc_value *out);
int stc__flow_stream(void *ud, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_stream *s,
                long long *count);

/* Nested smaps (nested.c).  Whether smap e's plan, offered with n items
 * from main's context, runs as main's own loop over its items so that the
 * smaps inside them run as pipelines (the decision rule is there). */
void stc__flow_nested_use_init(const flow_info *fi, const flow_plan *pl, flow_plan_use *use);
bool stc__flow_nested_loop_pays(const flow_runtime *rt, const flow_plan_use *use, size_t n);
/* Runs that loop: the evaluator's smap over xs on cx (main), its inner
 * smaps offered to the hooks; measures whether it paid. */
int stc__flow_nested_loop(flow_runtime *rt, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv,
                          const eval_items *xs, flow_plan_use *use, stc_value *out);
/* Accounts a pipeline run of wall_ns: a plan whose runs are too short to
 * pay for waking the workers is left to the evaluator from then on. */
void stc__flow_note_pipeline(flow_runtime *rt, flow_plan_use *use, uint64_t wall_ns);

/* The tuple and let hooks (tasks.c). */
int stc__flow_tuple(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int stc__flow_lets(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

#endif
