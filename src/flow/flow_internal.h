/* flow_internal.h - the runtime object shared by exec.c (smap pipelines)
 * and tasks.c (tuples as parallel tasks). */
#ifndef STC_FLOW_INTERNAL_H
#define STC_FLOW_INTERNAL_H

#include "flow/flow.h"
#include "sched/sched.h"

/* Measurements of one plan's pipeline (profile and trace runs only). */
typedef struct flow_plan_prof {
    char **names;       /* per stage: its name and line, for traces and profiles */
    uint64_t *cells;    /* [worker][stage][3]: busy ns, items, batches; each worker writes its row */
    uint64_t *wait_ns;  /* per stage: batches waiting for their turn (the pool lock) */
    uint64_t wall_ns;   /* main thread */
    int order;          /* which pipeline it was to run first (0, 1, ...), -1 before */
} flow_plan_prof;

/* How a tuple expression runs its items: as ngroups tasks, or (ngroups
 * 0) left to the evaluator.  Items sharing a thread are in one group and
 * run in order in one task; group[i] is item i's group. */
typedef struct flow_tuple_plan {
    const ir_expr *e;
    int ngroups;
    int *group;
} flow_tuple_plan;

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
    eval_ctx *wcx;           /* one evaluation context per worker */
    /* Per worker: the value cache it allocates from while it works for a
     * job of this runtime, and the cache its thread had before (put back
     * when it leaves; a C thread may run another program's job inside). */
    struct val_cache **caches, **outer_caches;
    flow_plan **plans;       /* made so far (used by the main thread only) */
    int nplans, plans_cap;
    flow_tuple_plan *tuples; /* tuple decisions made so far (main thread only) */
    int ntuples, tuples_cap;
    eval_smap_hook hook;
    flow_stats stats;
};

/* Creates the pool and the worker contexts if not done yet; -1 on OOM. */
int flow_start_pool(flow_runtime *rt);

/* A sched_pipeline's on_worker: switches the thread to worker's cache. */
void flow_on_worker(void *ud, int worker, bool joining);

/* The tuple hook (tasks.c). */
int flow_tuple(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

#endif
