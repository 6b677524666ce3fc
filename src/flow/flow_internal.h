/* flow_internal.h - the runtime object shared by exec.c (smap pipelines)
 * and tasks.c (tuples as parallel tasks). */
#ifndef STC_FLOW_INTERNAL_H
#define STC_FLOW_INTERNAL_H

#include "flow/flow.h"
#include "sched/sched.h"

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
    sched_pool *pool;        /* made at the first parallel smap */
    eval_ctx *wcx;           /* one evaluation context per worker */
    flow_plan **plans;       /* made so far (used by the main thread only) */
    int nplans, plans_cap;
    flow_tuple_plan *tuples; /* tuple decisions made so far (main thread only) */
    int ntuples, tuples_cap;
    eval_smap_hook hook;
    flow_stats stats;
};

/* Creates the pool and the worker contexts if not done yet; -1 on OOM. */
int flow_start_pool(flow_runtime *rt);

/* The tuple hook (tasks.c). */
int flow_tuple(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out);

#endif
