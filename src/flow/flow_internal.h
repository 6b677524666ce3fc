/* flow_internal.h - the runtime object shared by exec.c (smap pipelines)
 * and tasks.c (tuples and let chains as parallel tasks). */
#ifndef STC_FLOW_INTERNAL_H
#define STC_FLOW_INTERNAL_H

#include "flow/flow.h"
#include "sched/sched.h"

/* Measurements of one plan's pipeline (profile and trace runs only). */
typedef struct flow_plan_prof {
    char **names;       /* per stage: its name and line, for traces and profiles */
    /* [worker][stage][3]: busy ns, items, batches; each worker writes its
     * row.  Stages 0..nstages-1 are the plan's; a stream's output stage is
     * nstages and its input (the source) nstages + 1. */
    uint64_t *cells;
    uint64_t *wait_ns;  /* per stage: batches waiting for their turn (the pool lock) */
    uint64_t wall_ns;   /* main thread */
    int order;          /* which pipeline it was to run first (0, 1, ...), -1 before */
    bool stream;        /* it ran over a stream: the input and output rows count */
} flow_plan_prof;

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
    struct val_depot *depot; /* where the caches exchange full magazines */
    flow_plan **plans;       /* made so far (used by the main thread only) */
    int nplans, plans_cap;
    flow_task_plan **tasks;  /* tuple and let-chain decisions made so far, a hash
                                table by expression (main thread only) */
    int ntasks, tasks_cap;
    eval_smap_hook hook;
    flow_stats stats;
};

/* Creates the pool and the worker contexts if not done yet; -1 on OOM. */
int flow_start_pool(flow_runtime *rt);

/* A sched_pipeline's on_worker: switches the thread to worker's cache. */
void flow_on_worker(void *ud, int worker, bool joining);

/* The tuple and let hooks (tasks.c). */
int flow_tuple(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);
int flow_lets(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

#endif
