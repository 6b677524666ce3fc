/* runtime.c - the parallel runtime object (flow.h): its options, the worker
 * pool and the workers' evaluation contexts and value caches, the plans
 * made so far, the hooks it gives the evaluator and the run's stats.  The
 * work offered through the hooks runs in exec.c (smaps) and tasks.c
 * (tuples and lets). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_internal.h"
#include "flow/job.h"
#include "value/cache.h"

#define FLOW_DEFAULT_CAPACITY 1024     /* items per batch at most */

/* The least of a few back-to-back readings' differences of the thread's
 * CPU clock: what one reading adds to an interval timed with it. */
static uint64_t flow_runtime_cpu_clock_cost(void)
{
    uint64_t least = UINT64_MAX, prev = flow_cpu_ns();
    for (int i = 0; i < 8; i++) {
        uint64_t now = flow_cpu_ns();
        if (now - prev < least) least = now - prev;
        prev = now;
    }
    return least;
}

flow_runtime *stc__flow_runtime_new(const ir_program *p, const flow_opts *o)
{
    if (o->workers < 1 || o->queue_capacity < 0 || o->max_batches < 0) return NULL;
    flow_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return NULL;
    rt->p = p;
    rt->perturb_seed = o->perturb_seed;
    rt->watchdog_ms = o->watchdog_ms;
    rt->trial_refusals = o->trial_refusals;
    rt->shuttle_items = o->shuttle_items;
    rt->sample = o->sample;
    if (o->workers > 1 || o->sample) rt->cpu_clock_ns = flow_runtime_cpu_clock_cost();
    memcpy(rt->owned_feed, o->owned_item_ns, sizeof rt->owned_feed);
    rt->profile = o->profile;
    rt->trace = o->trace;
    rt->pool = o->pool;
    rt->workers = o->sample ? 2 : o->workers; /* a sample's second worker runs its pipelines only */
    rt->capacity = o->queue_capacity ? o->queue_capacity : FLOW_DEFAULT_CAPACITY;
    rt->max_batches = o->max_batches;
    rt->stats.workers = o->workers;
    rt->hooks = (eval_runtime_hooks){.smap = stc__flow_smap, .stream = stc__flow_stream, .tuple = stc__flow_tuple,
                                     .lets = stc__flow_lets, .ud = rt};
    if (!(rt->fi = stc__flow_info_new(p))) {
        free(rt);
        return NULL;
    }
    /* A keyed thread's shards: one per worker, and one per peer of a
     * transport whose peers may own them (owned.c), so that -np K
     * --workers 1 shards too; at most FLOW_MAX_SHARDS (docs/DESIGN.md 7c). */
    int peers = o->remote && o->remote->call && o->remote->start_to && o->remote->peers > 0
                    ? o->remote->peers : 0;
    rt->fi->nshards = stc__flow_shards_for(o->workers + (peers < FLOW_MAX_SHARDS ? peers : FLOW_MAX_SHARDS));
    atomic_init(&rt->remote_batches, 0);
    atomic_init(&rt->remote_sent, 0);
    atomic_init(&rt->remote_received, 0);
    atomic_init(&rt->remote_declined, 0);
    atomic_init(&rt->remote_serial, 0);
    atomic_init(&rt->remote_moves, 0);
    atomic_init(&rt->remote_shard_moves, 0);
    atomic_init(&rt->remote_shard_serial, 0);
    if (o->remote && o->remote->call) {
        rt->remote = *o->remote;
        if (!(rt->rnames = stc__flow_remote_names_new(p))) {
            stc__flow_info_free(rt->fi);
            free(rt);
            return NULL;
        }
    }
    return rt;
}

void stc__flow_runtime_free(flow_runtime *rt)
{
    if (!rt) return;
    if (rt->own_pool) stc__sched_pool_free(rt->pool);
    for (int i = 0; rt->caches && i < rt->workers; i++) stc__val_cache_free(rt->caches[i]);
    stc__val_depot_free(rt->depot);
    free(rt->caches);
    free(rt->outer_caches);
    free(rt->outer_plain);
    for (int i = 0; rt->wcx && i < rt->workers; i++) stc__eval_ctx_fini(&rt->wcx[i].cx);
    free(rt->wcx);
    for (int i = 0; rt->profs && i < rt->nplans; i++) stc__flow_prof_free(rt->plans[i], &rt->profs[i]);
    free(rt->profs);
    free(rt->plans);
    free(rt->uses);
    free(rt->tasks); /* the plans are in fi->mem */
    stc__flow_info_free(rt->fi);
    stc__flow_remote_names_free(rt->rnames);
    free(rt);
}

const eval_runtime_hooks *stc__flow_runtime_hooks(flow_runtime *rt) { return &rt->hooks; }

stc_run_stats stc__flow_runtime_stats(const flow_runtime *rt)
{
    stc_run_stats st = rt->stats;
    st.remote_batches = atomic_load(&rt->remote_batches);
    st.remote_bytes_sent = atomic_load(&rt->remote_sent);
    st.remote_bytes_received = atomic_load(&rt->remote_received);
    st.remote_declined = atomic_load(&rt->remote_declined);
    st.remote_serial = atomic_load(&rt->remote_serial);
    st.remote_moves = atomic_load(&rt->remote_moves);
    st.remote_shard_moves = atomic_load(&rt->remote_shard_moves);
    st.remote_shard_serial = atomic_load(&rt->remote_shard_serial);
    return st;
}

int stc__flow_start_pool(flow_runtime *rt)
{
    if (!rt->wcx) {
        rt->wcx = aligned_alloc(64, (size_t)rt->workers * sizeof *rt->wcx);
        if (!rt->wcx) return -1;
        for (int i = 0; i < rt->workers; i++) stc__eval_ctx_init(&rt->wcx[i].cx, rt->p, NULL);
    }
    if (!rt->caches) {
        rt->caches = calloc((size_t)rt->workers, sizeof *rt->caches);
        rt->outer_caches = calloc((size_t)rt->workers, sizeof *rt->outer_caches);
        rt->outer_plain = calloc((size_t)rt->workers, sizeof *rt->outer_plain);
        if (!rt->caches || !rt->outer_caches || !rt->outer_plain) {
            free(rt->caches);
            free(rt->outer_caches);
            free(rt->outer_plain);
            rt->caches = rt->outer_caches = NULL;
            rt->outer_plain = NULL;
            return -1;
        }
        /* A worker without a cache (out of memory) just uses malloc. */
        rt->depot = stc__val_depot_new();
        for (int i = 0; i < rt->workers; i++) rt->caches[i] = stc__val_cache_new(rt->depot);
    }
    if (!rt->pool) {
        rt->pool = stc__sched_pool_new(rt->workers);
        rt->own_pool = true;
    }
    return rt->pool ? 0 : -1;
}

void stc__flow_on_worker(void *ud, int worker, bool joining)
{
    flow_runtime *rt = *(flow_runtime **)ud; /* every job's ud starts with its runtime */
    if (joining) {
        rt->outer_caches[worker] = stc__val_cache_use(rt->caches[worker]);
        /* One worker: the job's values stay on this thread, counts stay as
         * they were (plain in a run).  More: plain for a plain job (what
         * two workers can reach at once is marked: exec.c), else atomic on
         * every worker until it leaves; job start and end go through the
         * pool's mutex, which orders these changes against the plain ones
         * around the job. */
        bool plain = stc__sched_pool_workers(rt->pool) == 1 ? stc__val_counts_plain : rt->plain_job;
        rt->outer_plain[worker] = stc__val_counts_set_plain(plain);
    } else {
        stc__val_cache_use(rt->outer_caches[worker]);
        stc__val_counts_set_plain(rt->outer_plain[worker]);
    }
}

const flow_plan *stc__flow_plan_get(flow_runtime *rt, const ir_expr *e, const ir_fun *fn, int thread,
                               flow_plan_prof **prof, flow_plan_use **use)
{
    *prof = NULL;
    for (int i = 0; i < rt->nplans; i++) {
        const flow_plan *pl = rt->plans[i];
        if (pl->smap == e && pl->fn == fn && (fn || pl->thread == thread)) {
            if (rt->profs) *prof = &rt->profs[i];
            *use = &rt->uses[i];
            return pl;
        }
    }
    if (rt->nplans == rt->plans_cap) {
        int ncap = rt->plans_cap ? 2 * rt->plans_cap : 8;
        flow_plan **n = realloc(rt->plans, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        rt->plans = n;
        flow_plan_use *nu = realloc(rt->uses, (size_t)ncap * sizeof *nu);
        if (!nu) return NULL;
        rt->uses = nu;
        if (rt->profile || rt->trace) {
            flow_plan_prof *np = realloc(rt->profs, (size_t)ncap * sizeof *np);
            if (!np) return NULL;
            rt->profs = np;
        }
        rt->plans_cap = ncap;
    }
    flow_plan *pl = stc__flow_plan_build(rt->fi, e, fn, thread);
    if (!pl) return NULL;
    if ((rt->profile || rt->trace) && stc__flow_prof_init(rt, pl, &rt->profs[rt->nplans]) != 0) {
        stc__flow_prof_free(pl, &rt->profs[rt->nplans]);
        return NULL;
    }
    if (rt->profs) *prof = &rt->profs[rt->nplans];
    stc__flow_nested_use_init(rt->fi, pl, &rt->uses[rt->nplans]);
    *use = &rt->uses[rt->nplans];
    rt->plans[rt->nplans++] = pl;
    return pl;
}
