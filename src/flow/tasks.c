/* tasks.c - the items of a tuple as parallel tasks (the seed's products).
 *
 * `(e1, e2, ...)` evaluated by main (not inside a pipeline) is cut into
 * groups of items: items that write a common thread share a group and run
 * in tuple order within it; different groups write disjoint states and run
 * at once on the pool.  Used when there are two groups or more that call
 * something, and no item may run an smap (an smap is better off with the
 * whole pool to itself; the pool runs one job at a time).  Each group is
 * one batch of a one-stage replicated pipeline; a group stops at its
 * first failing item, and the earliest failing item of all is reported.
 * The items share main's frame: each binds only its own let slots, and
 * reads what was bound before the tuple.  If several items fail, the
 * earliest in the tuple is reported, as the evaluator would. */
#include <pthread.h>
#include <stdlib.h>

#include "flow/flow_internal.h"
#include "sched/sched.h"
#include "trace/trace.h"
#include "value/value.h"

typedef struct flow_tasks {
    flow_runtime *rt; /* first: flow_on_worker finds the runtime there */
    const ir_expr *e;
    const flow_tuple_plan *plan;
    eval_frame *fr;
    stc_value *out;        /* the tuple's items; task i writes out[i] */
    int n;
    int base_depth;
    long long item;        /* main's smap item and thread, for errors */
    const char *thread;
    int next;              /* next group to hand out (the source is serial) */
    pthread_mutex_t lock;
    int err_index;         /* earliest failing item, -1 (lock) */
    eval_err err;          /* (lock) */
} flow_tasks;

/* Groups the items: items whose write sets meet share a group (found by
 * merging groups until no two meet).  Returns the number of groups that
 * call something, with group[] filled; 0 when the tuple is not worth it. */
static int flow_tuple_group(flow_runtime *rt, const ir_expr *e, int *group)
{
    flow_info *fi = rt->fi;
    int n = e->u.agg.nitems;
    flow_set *sets = malloc((size_t)n * sizeof *sets);
    bool *busy = calloc((size_t)n, sizeof *busy);
    int ngroups = 0, nbusy = 0;
    bool ok = sets && busy && rt->workers > 1;
    for (int i = 0; i < n && ok; i++) {
        const ir_expr *item = e->u.agg.items[i];
        sets[i] = flow_expr_set(fi, item);
        ok = !sets[i].all && !flow_expr_smaps(fi, item);
        group[i] = i;
        busy[i] = flow_expr_calls(fi, item);
    }
    for (int i = 0; i < n && ok; i++) /* union: item i joins the group of the first item it meets */
        for (int j = 0; j < i; j++)
            if (!flow_sets_disjoint(fi, sets[i], sets[j])) {
                int from = group[i], to = group[j];
                for (int k = 0; k <= i; k++)
                    if (group[k] == from) group[k] = to;
            }
    for (int g = 0; g < n && ok; g++) { /* renumber 0..ngroups-1 in order of first item */
        bool used = false, calls = false;
        for (int i = 0; i < n; i++)
            if (group[i] == g) {
                used = true;
                calls |= busy[i];
            }
        if (!used) continue;
        for (int i = 0; i < n; i++)
            if (group[i] == g) group[i] = -1 - ngroups;
        ngroups++;
        nbusy += calls;
    }
    for (int i = 0; i < n && ok; i++) group[i] = -1 - group[i];
    free(sets);
    free(busy);
    return ok && ngroups >= 2 && nbusy >= 2 ? ngroups : 0;
}

static const flow_tuple_plan *flow_tuple_plan_get(flow_runtime *rt, const ir_expr *e)
{
    for (int i = 0; i < rt->ntuples; i++)
        if (rt->tuples[i].e == e) return &rt->tuples[i];
    if (rt->ntuples == rt->tuples_cap) {
        int ncap = rt->tuples_cap ? 2 * rt->tuples_cap : 8;
        flow_tuple_plan *n = realloc(rt->tuples, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        rt->tuples = n;
        rt->tuples_cap = ncap;
    }
    int *group = arena_alloc(rt->fi->mem, (size_t)e->u.agg.nitems * sizeof *group);
    if (!group) return NULL;
    flow_tuple_plan *tp = &rt->tuples[rt->ntuples++];
    *tp = (flow_tuple_plan){e, flow_tuple_group(rt, e, group), group};
    return tp;
}

static int flow_task_source(void *ud, sched_batch *b, int worker)
{
    (void)b;
    (void)worker;
    flow_tasks *t = ud;
    if (t->next >= t->plan->ngroups) return 0;
    t->next++; /* batch b->seq runs group b->seq */
    return 1;
}

static void flow_task_release(void *ud, sched_batch *b, int worker)
{
    (void)ud;
    (void)b;
    (void)worker;
}

static sched_status flow_task_run(void *ud, int stage, sched_batch *b, int worker)
{
    (void)stage;
    flow_tasks *t = ud;
    eval_ctx *cx = &t->rt->wcx[worker];
    cx->stack_base = 0;
    cx->item = t->item;
    cx->thread = t->thread;
    uint64_t t0 = t->rt->trace ? sched_now_ns() : 0;
    int ran = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->plan->group[i] != (int)b->seq) continue;
        cx->depth = t->base_depth;
        ran++;
        if (eval_expr(cx, t->e->u.agg.items[i], t->fr, &t->out[i]) == 0) continue;
        pthread_mutex_lock(&t->lock);
        if (t->err_index < 0 || i < t->err_index) {
            free(t->err.message);
            t->err = cx->err;
            t->err_index = i;
        } else {
            free(cx->err.message);
        }
        pthread_mutex_unlock(&t->lock);
        cx->err = (eval_err){.item = -1};
        /* Not SCHED_STOP: that would drop the groups after this one, but
         * their items may come before the failed one in the tuple. */
        break;
    }
    /* One slice per group: its items, and the group number as the batch. */
    if (t->rt->trace) trace_slice(t->rt->trace, worker, "tuple task", "task", t0, sched_now_ns(), ran, (long long)b->seq);
    return SCHED_CONTINUE;
}

static void flow_task_idle(void *ud, int worker, uint64_t t0, uint64_t t1)
{
    flow_tasks *t = ud;
    trace_slice(t->rt->trace, worker, "parked", "sched", t0, t1, -1, -1);
}

int flow_tuple(void *ud, eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    flow_runtime *rt = ud;
    const flow_tuple_plan *tp = flow_tuple_plan_get(rt, e);
    if (!tp) return eval_oom(cx, e->loc);
    if (tp->ngroups == 0) return EVAL_SMAP_DECLINED;
    int n = e->u.agg.nitems;
    stc_value tuple = val_seq_alloc(STC_T_TUPLE, (size_t)n);
    if (tuple.tag == STC_T_INVALID || flow_start_pool(rt) != 0) {
        stc_value_release(tuple);
        return eval_oom(cx, e->loc);
    }
    for (int i = 0; i < rt->workers; i++) {
        rt->wcx[i].states = cx->states;
        rt->wcx[i].cancel = cx->cancel;
    }
    flow_tasks t = {.rt = rt, .e = e, .plan = tp, .fr = fr, .out = val_seq_items(tuple), .n = n,
                    .base_depth = cx->depth, .item = cx->item, .thread = cx->thread, .err_index = -1};
    pthread_mutex_init(&t.lock, NULL);
    static const bool parallel[1] = {false};
    sched_pipeline pl = {.nstages = 1, .serial = parallel, .run = flow_task_run, .source = flow_task_source,
                         .release = flow_task_release, .ud = &t, .max_batches = tp->ngroups,
                         .perturb_seed = rt->perturb_seed, .watchdog_ms = rt->watchdog_ms,
                         .on_idle = rt->trace ? flow_task_idle : NULL, .on_worker = flow_on_worker};
    int rc = sched_run(rt->pool, &pl);
    pthread_mutex_destroy(&t.lock);
    rt->stats.task_groups++;
    if (t.err_index >= 0) {
        stc_value_release(tuple);
        if (cx->err.code == 0) {
            cx->err = t.err;
            return cx->err.code;
        }
        free(t.err.message);
        return t.err.code;
    }
    if (rc != 0) {
        stc_value_release(tuple);
        return eval_oom(cx, e->loc);
    }
    *out = tuple;
    return 0;
}
