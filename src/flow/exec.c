/* exec.c - runs an smap's plan on the worker pool: the pipeline job.
 *
 * Items travel in batches (sched_batch.data is a flow_batch): the source
 * cuts the list (or reads the stream) into batches whose size adapts to
 * the measured cost per item (about FLOW_BATCH_TARGET_NS of work each,
 * never more than the queue capacity); each stage runs its steps over the
 * batch's items in order (steps.c); release moves each item's result into
 * the result list and gives the batch's block back.  Every item has its own
 * frame of slots, so replicated stages share nothing but immutable values
 * and the thread states that serial stages own one at a time.
 *
 * Errors: the first failing step of an item ends that item and the items
 * after it in its batch; the scheduler then drops later batches and lets
 * earlier ones finish, and the error of the earliest failing item is the
 * one reported, which is the reference evaluator's error. */
#include <pthread.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "flow/job.h"
#include "sched/sched.h"
#include "trace/profile.h"
#include "trace/trace.h"
#include "value/value.h"

#define FLOW_BATCH_TARGET_NS (50000 * FLOW_TIME_SCALE) /* work per batch the source aims at */
#define FLOW_TIME_EVERY 8 /* the pipeline times one batch in this many (flow_source) */
/* ... and with stages that may go to another process (remote.c): each
 * message costs its encoding and a transport's poll, so more; not much
 * more, since a batch's frames are walked once per stage and bigger ones
 * fall out of the cache (2 ms batches made logstats's serial stages on
 * rank 0 a third slower; docs/CLUSTER.md). */
#define FLOW_REMOTE_BATCH_NS (300000 * FLOW_TIME_SCALE)
/* At 2+ workers a job starts fused, its stages timed in CPU time (the
 * trial), until they have run this long; then it stays fused unless the profile's model
 * predicts at least FLOW_TRIAL_GAIN from the pipeline on those times (the
 * pipeline's atomic counts and hand-offs cost it some of the prediction). */
#define FLOW_TRIAL_NS (200000 * FLOW_TIME_SCALE)
#define FLOW_TRIAL_GAIN STC__PROFILE_FUSE_GAIN /* trace/profile.h: the predictions use it too */
/* ... but when the trial saw fewer items than this, they are coarse (over
 * 50 us each): the job goes to the pipeline whatever the model says, as
 * its per-item costs are nothing beside such items and so few say little
 * (the paper's conditional benchmark, 2 ms items, saw one, so one
 * branch's serial stage). */
#define FLOW_TRIAL_MIN_ITEMS 4
/* ... counted once the trial has run this long: a job's first items pay
 * one-time costs (new blocks' page faults; shadow memory under the
 * sanitizers), so fewer than FLOW_TRIAL_MIN_ITEMS in FLOW_TRIAL_NS is not
 * yet "coarse" (cli's adapt check of cheap items failed once under TSan);
 * items of 400 us or more lose at most this much time fused. */
#define FLOW_TRIAL_LONG_NS (8 * FLOW_TRIAL_NS)
/* A job the trial kept fused is tried again, in a window as long as the
 * first, once it has run this many times the items it had when the last
 * window closed: one window's noise (a core busy elsewhere, a page fault
 * in a serial stage) then costs at most the items up to the next window
 * (a tenth of a stream's 10M logstats lines ran on one worker where the
 * pipeline gives 1.8x: 1 run in 5 stayed fused to its end). */
#define FLOW_TRIAL_AGAIN 8
/* A list of fewer items than this goes to the pipeline without a trial:
 * the trial would run a whole coarse item alone before the pipeline starts
 * (bench/nested.sh's rows4, 4 items of ~170 ms, fell from 1.95x to 1.33x
 * at 2 workers; the paper's 50 items of 2 ms lost a twenty-fifth), and a
 * short job of cheap items costs the pipeline little (nested.c leaves the
 * shortest to the evaluator). */
#define FLOW_TRIAL_MIN_JOB STC__PROFILE_FUSE_MIN_ITEMS /* 64, in trace/profile.h: the predictions use it too */
/* The trial's model sees no cost of values crossing between cores: on a
 * VM whose two vCPUs are far apart (cache lines 250 ns away) logstats ran
 * 0.64 s at 2 workers against 0.50 at 1.  So a pipeline the trial started
 * is timed, in wall time per finished item over windows this long and of
 * this many items at least (coarse items, 50 us or more in the trial, are
 * not timed: the pipeline is theirs, its costs nothing beside them) ... */
#define FLOW_PROBE_WINDOW_NS (16000000 * FLOW_TIME_SCALE)
#define FLOW_PROBE_MIN_ITEMS 64
/* ... and after this many windows (the first not counted: the pipeline
 * fills its tokens and finds its batch size) the job goes back to fused
 * for a probe this long, untimed but for the clock at each batch's end
 * (flow_job_fused).  The trial's own times are no yardstick: at its first
 * batches of an item or two, the CPU clock's system calls on our VM left
 * 1.2-2.8 us an item on logstats, whose items take 0.49 us fused; and the
 * first milliseconds of a run, its heap still growing, ran them at 0.6-0.8
 * us.  The probe keeps the job fused unless the pipeline's best window was
 * faster than the probe by FLOW_PROBE_MARGIN; else the pipeline goes on,
 * to be probed again at FLOW_TRIAL_AGAIN times its items.  A probe (the
 * pipeline's drain, 2 ms on one worker, its restart) cost logstats's 1M
 * lines 0-5% where the pipeline wins (bench/ab.sh); where it loses, 2
 * workers ran 0.48-0.49 s against 0.61-0.64 before, 0.46 at 1 worker. */
#define FLOW_PROBE_WINDOWS 3
#define FLOW_PROBE_NS (2000000 * FLOW_TIME_SCALE)
#define FLOW_PROBE_MARGIN STC__PROFILE_PROBE_MARGIN /* (trace/profile.h: the predictions use it too) */
/* The sample.  A 1-worker profile cannot see what values crossing between
 * the cores will cost a pipeline: on our VM's far placement logstats's
 * and tiny_tuple's stage times grew by 40-50% at 2 workers, and the
 * 1-worker profile's 2-worker prediction was 23-31% short.  So when the
 * process may use 2 CPUs, a 1-worker profile gets a runtime of 2 workers
 * (flow_runtime.sample) that runs nothing in parallel but this: a job the
 * trial would send to the pipeline at 2 workers goes there for the
 * probe's windows, whose wall time per item is the sample (the profile's
 * sample_ns, every counted window), and then runs fused to its end, timed
 * as the 1-worker figure (probe_ns).  Coarse items are not sampled (their
 * crossing costs nothing beside them); nor are jobs without a trial. */

/* ---- Errors ------------------------------------------------------------------ */

void stc__flow_record_error(flow_job *job, eval_ctx *cx, long long index)
{
    stc__flow_record_error_at(job, cx, index, LLONG_MAX);
}

void stc__flow_record_error_at(flow_job *job, eval_ctx *cx, long long index, long long sub)
{
    eval_err err = stc__eval_error_take(cx);
    pthread_mutex_lock(&job->err_lock);
    if (job->err_index < 0 || index < job->err_index || (index == job->err_index && sub < job->err_sub)) {
        free(job->err.message);
        job->err = err;
        job->err_index = index;
        job->err_sub = sub;
    } else {
        free(err.message);
    }
    pthread_mutex_unlock(&job->err_lock);
}

/* ---- Batches: the source, and the blocks it reuses ------------------------------ */

/* A block for a batch of size items: a released one if it has room, else
 * a new one with room for the next power of two items. NULL: no memory. */
static flow_batch *flow_batch_get(flow_job *job, size_t size)
{
    const flow_plan *pl = job->plan;
    if (!job->fused) pthread_mutex_lock(&job->spare_lock); /* fused: one thread */
    flow_batch *b = job->spare;
    if (b) job->spare = b->next_spare;
    if (!job->fused) pthread_mutex_unlock(&job->spare_lock);
    if (b && b->cap < size) {
        free(b);
        b = NULL;
    }
    if (!b) {
        size_t cap = 1;
        while (cap < size) cap *= 2;
        size_t nin = job->stream ? cap : 0;
        b = malloc(sizeof *b + (cap * (size_t)pl->nslots + nin) * sizeof(stc_value) + cap + cap * (size_t)pl->nflags);
        if (!b) return NULL;
        b->cap = cap;
        /* frames hold units between their items (flow_release resets them) */
        stc_value *slots = (stc_value *)(b + 1);
        for (size_t j = 0; j < cap * (size_t)pl->nslots; j++) slots[j] = flow_unit();
    }
    b->slots = (stc_value *)(b + 1);
    b->in = b->slots + b->cap * (size_t)pl->nslots;
    b->dead = (uint8_t *)(b->in + (job->stream ? b->cap : 0));
    b->flags = b->dead + b->cap;
    return b;
}

static void flow_batch_put(flow_job *job, flow_batch *b)
{
    if (!job->fused) pthread_mutex_lock(&job->spare_lock);
    b->next_spare = job->spare;
    job->spare = b;
    if (!job->fused) pthread_mutex_unlock(&job->spare_lock);
}

/* How many items the next batch takes: about FLOW_BATCH_TARGET_NS of work
 * at the measured cost per item, within the bounds. */
static size_t flow_batch_size(const flow_job *job)
{
    size_t size = 1;
    uint64_t est = atomic_load_explicit(&job->ns_per_item, memory_order_relaxed);
    if (est) size = (job->rt->remote.start && job->plan->remote_ok ? FLOW_REMOTE_BATCH_NS : FLOW_BATCH_TARGET_NS) / est;
    size_t slack = job->n / (4 * (size_t)job->rt->workers); /* keep every worker fed */
    if (!job->stream && size > slack) size = slack;
    if (size > (size_t)job->rt->capacity) size = (size_t)job->rt->capacity;
    if (size < 1) size = 1;
    if (size > job->n - job->next) size = job->n - job->next;
    return size;
}

/* Reads up to size items of a stream into b->in; returns how many (a
 * partial batch still goes on; the source's end or failure is noted in the
 * job, a failure's error recorded). */
static size_t flow_batch_read(flow_job *job, eval_ctx *cx, flow_batch *b, size_t size, int worker, uint64_t seq)
{
    uint64_t t0 = job->prof ? flow_now_ns() : 0, c0 = job->trial_ns ? flow_cpu_ns() : 0;
    size_t k = 0;
    while (k < size) {
        int rc = stc__eval_stream_pull(cx, job->stream, (long long)job->next + (long long)k, &b->in[k]);
        if (rc == 1) {
            k++;
            continue;
        }
        job->src_end = true;
        if (rc < 0) {
            job->src_failed = true;
            stc__flow_record_error(job, cx, (long long)(job->next + k));
        }
        break;
    }
    if (job->trial_ns) flow_trial_add(job, FLOW_INPUT_STAGE(job->plan), c0);
    if (job->prof)
        stc__flow_prof_note(job, FLOW_INPUT_STAGE(job->plan), "input", worker, t0, flow_now_ns(), (int)k, seq);
    return k;
}

/* Whether the pipeline is due for its probe (FLOW_PROBE_WINDOW_NS): called
 * by the source, so the window fields are the source's alone. */
static bool flow_probe_due(flow_job *job)
{
    long long done = (long long)job->next - atomic_load_explicit(&job->live, memory_order_relaxed);
    int shuttle = job->rt->shuttle_items;
    uint64_t now = flow_now_ns(), dt = now - job->window_t0;
    if (shuttle > 0) { /* the testing aid: whatever the times; a sample's figure the whole stretch */
        if (done - job->window_done0 < shuttle) return false;
        if (job->rt->sample && job->prof) job->prof->sample_ns += dt, job->prof->sample_items += (uint64_t)(done - job->window_done0);
        return true;
    }
    long long dn = done - job->window_done0;
    if (dt < FLOW_PROBE_WINDOW_NS || dn < FLOW_PROBE_MIN_ITEMS) return false;
    job->window_t0 = now;
    job->window_done0 = done;
    double rate = (double)dt / (double)dn;
    if (job->windows++ > 0 && (job->pipe_item_ns == 0 || rate < job->pipe_item_ns)) job->pipe_item_ns = rate;
    if (job->windows > 1 && job->rt->sample && job->prof) /* the sample's figure: every counted window */
        job->prof->sample_ns += dt, job->prof->sample_items += (uint64_t)dn;
    return job->windows >= FLOW_PROBE_WINDOWS && job->next >= job->probe_at;
}

static int flow_source(void *ud, sched_batch *sb, int worker)
{
    flow_job *job = ud;
    const flow_plan *pl = job->plan;
    eval_ctx *cx = &job->rt->wcx[worker].cx;
    if (job->src_end) return job->src_failed ? SCHED_SOURCE_STOP : 0;
    if (job->next >= job->n) return 0;
    if (job->probing && !job->fused && flow_probe_due(job)) {
        job->probe = true; /* no more input: the batches in flight finish, the pipeline ends */
        return 0;
    }
    size_t size = flow_batch_size(job);
    size_t nflags = size * (size_t)pl->nflags;
    flow_batch *b = flow_batch_get(job, size);
    if (!b) {
        cx->item = (long long)job->next;
        cx->thread = job->thread;
        stc__eval_oom(cx, job->loc);
        stc__flow_record_error(job, cx, (long long)job->next);
        return SCHED_SOURCE_STOP;
    }
    b->first = job->next;
    b->n = (int)size;
    b->nloaded = 0; /* the frames are filled as their items start (steps.c) */
    b->loaded = false;
    b->direct = false;
    b->busy_ns = 0;
    /* The pipeline reads the clock twice per stage activation of a timed
     * batch; the estimate needs no more than the first batches and one in
     * FLOW_TIME_EVERY after them (clock_gettime is 20-50 ns in a VM). */
    b->timed = sb->seq < FLOW_TIME_EVERY || sb->seq % FLOW_TIME_EVERY == 0;
    b->away = NULL;
    b->ctx_retried = false;
    memset(b->dead, 0, size);
    memset(b->flags, 0, nflags);
    if (job->stream) {
        size = flow_batch_read(job, cx, b, size, worker, sb->seq);
        if (size == 0) {
            flow_batch_put(job, b);
            return job->src_failed ? SCHED_SOURCE_STOP : 0;
        }
        b->n = (int)size;
    }
    job->next += size;
    long long live = atomic_fetch_add(&job->live, (long long)size) + (long long)size;
    long long peak = atomic_load(&job->peak);
    while (live > peak && !atomic_compare_exchange_weak(&job->peak, &peak, live)) {
    }
    sb->data = b;
    return 1;
}

static void flow_release(void *ud, sched_batch *sb, int worker)
{
    (void)worker;
    flow_job *job = ud;
    flow_batch *b = sb->data;
    const flow_plan *pl = job->plan;
    /* A direct batch (steps.c flow_direct_items) emptied its frame after
     * each item (nloaded 0); its results are in the result list, or for a
     * stream in b->in, with the inputs of the items never loaded. */
    for (int i = 0; b->direct && job->stream && i < b->n; i++) val_release(b->in[i]);
    for (int i = 0; i < b->nloaded; i++) { /* the other frames were never filled */
        stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        if (!b->dead[i] && !job->stream) {
            job->out[b->first + (size_t)i] = slots[pl->result];
            slots[pl->result] = flow_unit();
        }
        for (int k = 0; k < pl->nheap; k++) { /* units again for the block's next batch */
            int j = pl->heap_slots[k]; /* (the other slots hold scalars at most: compile.c) */
            val_release(slots[j]);
            slots[j] = flow_unit();
        }
    }
    if (job->stream && !b->direct) /* the inputs of items never loaded */
        for (int i = b->nloaded; i < b->n; i++) val_release(b->in[i]);
    if (b->n > 0 && b->busy_ns > 0) {
        uint64_t est = b->busy_ns / (uint64_t)b->n, old = atomic_load_explicit(&job->ns_per_item, memory_order_relaxed);
        atomic_store_explicit(&job->ns_per_item, old ? (3 * old + est) / 4 : est + 1, memory_order_relaxed);
    }
    atomic_fetch_sub(&job->live, (long long)b->n);
    flow_batch_put(job, b);
    sb->data = NULL;
}

/* ---- Branch skips, idle workers ---------------------------------------------------- */

/* Fills job->decided_at and friends; -1 when out of memory (then no stage
 * is ever skipped: correct, only slower). */
static int flow_skips_init(flow_job *job)
{
    const flow_plan *pl = job->plan;
    int ns = pl->nstages, nsteps = pl->nsteps;
    int *stage_of = malloc(((size_t)nsteps + 1) * sizeof *stage_of);
    job->decided_at = malloc(((size_t)ns + 1) * sizeof *job->decided_at);
    job->skip_first = malloc(((size_t)ns + 2) * sizeof *job->skip_first);
    job->skip_flags = malloc(((size_t)nsteps + 1) * sizeof *job->skip_flags);
    if (!stage_of || !job->decided_at || !job->skip_first || !job->skip_flags) {
        free(stage_of);
        free(job->decided_at), free(job->skip_first), free(job->skip_flags);
        job->decided_at = job->skip_first = job->skip_flags = NULL;
        return -1;
    }
    for (int t = 0; t < ns; t++)
        for (int k = pl->stages[t].first; k < pl->stages[t].first + pl->stages[t].count; k++) stage_of[k] = t;
    int nf = 0;
    bool any = false;
    for (int t = 0; t < ns; t++) {
        const flow_stage *st = &pl->stages[t];
        job->skip_first[t] = nf;
        int at = st->serial && t < 64 && st->count > 0 ? 0 : -1;
        for (int k = st->first; at >= 0 && k < st->first + st->count; k++) {
            int g = pl->steps[k].guard;
            int sel = -1;
            for (int j = 0; g >= 0 && j < nsteps && sel < 0; j++) {
                const flow_step *x = &pl->steps[j];
                int nalts = x->kind == FS_SELECT_IF     ? 2
                            : x->kind == FS_SELECT_CASE ? x->e->u.cas.nalts
                            : x->kind == FS_SHARD || x->kind == FS_ISHARD ? x->nshards
                                                        : 0;
                if (nalts && g >= x->flag0 && g < x->flag0 + nalts) sel = stage_of[j];
            }
            if (sel < 0 || sel >= t) at = -1; /* unguarded, or decided in this very stage */
            else {
                if (sel > at) at = sel;
                job->skip_flags[nf++] = g;
            }
        }
        if (at < 0) nf = job->skip_first[t];
        job->decided_at[t] = at;
        any |= at >= 0;
    }
    job->skip_first[ns] = nf;
    free(stage_of);
    if (any && !(job->decides = calloc(3 * (size_t)(ns < 64 ? ns : 64) + 64, sizeof *job->decides))) any = false;
    if (any) {
        job->skip_bits = job->decides + (ns < 64 ? ns : 64);
        job->decided_bits = job->skip_bits + (ns < 64 ? ns : 64);
        job->needed_by = job->decided_bits + (ns < 64 ? ns : 64);
        job->skip_narrow = true;
    }
    for (int t = 0; any && t < ns && t < 64; t++) {
        int at = job->decided_at[t];
        if (at < 0) continue;
        job->decides[at] |= (uint64_t)1 << t;
        job->deciding |= (uint64_t)1 << at;
        for (int k = job->skip_first[t]; k < job->skip_first[t + 1]; k++) {
            int f = job->skip_flags[k];
            if (f >= 64) job->skip_narrow = false;
            else job->skip_bits[t] |= (uint64_t)1 << f, job->needed_by[f] |= (uint64_t)1 << t;
        }
        job->decided_bits[at] |= job->skip_bits[t];
    }
    if (!any) {
        job->deciding = 0;
        free(job->decided_at), free(job->skip_first), free(job->skip_flags);
        job->decided_at = job->skip_first = job->skip_flags = NULL;
    }
    return 0;
}

static void flow_on_idle(void *ud, int worker, uint64_t t0, uint64_t t1)
{
    flow_job *job = ud;
    stc__trace_slice(job->rt->trace, worker, "parked", "sched", t0, t1, -1, -1);
}

/* ---- A run, step by step ---------------------------------------------------------- */

/* The plan for smap e in *pl (its profile in *prof), or EVAL_DECLINED when
 * the evaluator is as good: fewer than 2 items, a body that is one serial
 * stage, a depth at the limit (or a call planned in place reaching it), a map over what is not a function. */
#define FLOW_NESTED_LOOP 1000 /* flow_plan_for: run it as main's loop (nested.c); not an EVAL_ code */

static int flow_plan_for(flow_runtime *rt, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, size_t n,
                         const flow_plan **pl, flow_plan_prof **prof, flow_plan_use **use)
{
    const ir_fun *fn = NULL;
    if (thread < 0) {
        if (fnv.tag != STC_T_FUNC) return EVAL_DECLINED;
        fn = (const ir_fun *)val_as_func(fnv)->code;
    }
    if (n < 2 || cx->depth + 2 >= EVAL_MAX_DEPTH) { /* nothing to overlap, or at the limit */
        rt->stats.smaps_sequential++;
        return EVAL_DECLINED;
    }
    if (!(*pl = stc__flow_plan_get(rt, e, fn, thread, prof, use))) return stc__eval_oom(cx, e->u.call.callee_loc);
    if ((*pl)->nstages == 0 || ((*pl)->nstages == 1 && (*pl)->stages[0].serial)) {
        rt->stats.smaps_sequential++; /* one serial stage: the evaluator is as good */
        return EVAL_DECLINED;
    }
    if (!stc__flow_shards_worth(*pl, cx, n)) {
        /* splitting and merging a keyed thread's map would cost more than
         * the items (shards.c) */
        rt->stats.smaps_sequential++;
        return EVAL_DECLINED;
    }
    if ((*pl)->call_depth >= 0 && cx->depth + (*pl)->call_depth >= EVAL_MAX_DEPTH) {
        /* A call planned in place would reach the depth limit, which only
         * the evaluator checks at its calls: it runs the smap. */
        rt->stats.smaps_sequential++;
        return EVAL_DECLINED;
    }
    if ((*use)->cheap) { /* its pipelines were too short to pay (nested.c) */
        rt->stats.smaps_sequential++;
        return EVAL_DECLINED;
    }
    if (stc__flow_nested_loop_pays(rt, *use, n)) return FLOW_NESTED_LOOP;
    return 0;
}

/* Tokens (batches in flight). A list is in memory anyway, so it gets one
 * per worker twice over plus one per stage, room for every stage to hold a
 * batch. A stream gets 2 x workers + 1: its peak memory is tokens x batch
 * size items, and a long stream reaches that peak sooner or later, so it
 * must be one that a short stream reaches too (with 2 x workers + stages a
 * 10M-line log stream peaked 10% above a 100K-line one; throughput is the
 * same, bench/stream_mem.sh). */
static int flow_tokens(const flow_runtime *rt, const flow_plan *pl, bool stream)
{
    int away = rt->remote.start && pl->remote_ok && rt->remote.slots > 0 ? rt->remote.slots : 0; /* remote.c */
    /* A keyed thread's shards (shards.c) are serial stages one after the
     * other, each running its own keys' items: a later shard waits when it
     * has caught up with an earlier one, and the earlier one when the
     * tokens are all behind the later one, so the lead between them (a
     * random walk over the items' keys) needs room: 16 batches per shard
     * (a list only: a stream's memory stays the same bound; its batches of
     * lines hold many keys each, which evens the shards out anyway). */
    int lead = stream ? 0 : 16 * pl->nshard_maps;
    return rt->max_batches ? rt->max_batches
                           : (stream ? 2 * rt->workers + 1 : 2 * rt->workers + pl->nstages) + lead + away;
}

/* Whether the plan's stages take its steps in order, one after another
 * (compile.c and shards.c make them so): the fused loop runs an item's
 * steps from the first stage's first to the last stage's last. */
static bool flow_fusable(const flow_plan *pl)
{
    if (pl->nstages < 1) return false;
    for (int t = 1; t < pl->nstages; t++)
        if (pl->stages[t].first != pl->stages[t - 1].first + pl->stages[t - 1].count) return false;
    return true;
}

/* Whether a fused batch may run each item as the evaluator's call of the
 * function (steps.c flow_direct_items): any plan but one with keyed
 * threads' shards, whose maps the job holds apart from the states the
 * evaluator would read (shards.c), or with a g x h C thread split in two
 * (its output_fn and state_fn: the runtime calls the halves at any worker
 * count, as unit.flow checks, the evaluator the whole fn; an STCLang
 * thread's halves are its one function's, the same results). */
static bool flow_directable(const ir_program *p, const flow_plan *pl)
{
    if (pl->nshard_maps > 0) return false;
    /* A program with C threads keeps the steps: bench/fine.c's
     * w2(p(w1(x))) of C threads took 165 ns an item through the whole
     * body against 149 through the steps (1 worker, 0.1 us items). */
    for (int t = 0; t < p->nthreads; t++)
        if (p->threads[t]->kind == THREAD_C) return false;
    for (int k = 0; k < pl->nsteps; k++)
        switch (pl->steps[k].kind) {
        case FS_SHARD:
        case FS_KEYED:
        case FS_ISHARD:
        case FS_IKEYED: return false;
        case FS_SPLIT_OUT:
        case FS_SPLIT_STATE:
            if (p->threads[pl->steps[k].thread]->kind != THREAD_LANG) return false;
            break;
        default: break;
        }
    return true;
}

/* Sets up the job of smap e (called from cx) over xs or stream s, its
 * results into out (NULL for a stream). */
static void flow_job_init(flow_job *job, flow_runtime *rt, eval_ctx *cx, const ir_expr *e, const flow_plan *pl,
                          flow_plan_prof *prof, stc_value fnv, const eval_items *xs, const eval_stream *s,
                          stc_value *out)
{
    *job = (flow_job){.rt = rt, .plan = pl, .items = s ? NULL : xs->items, .start = s ? 0 : xs->start,
                      .n = s ? SIZE_MAX : xs->n, .stream = s, .out = out, .base_depth = cx->depth,
                      .loc = e->u.call.callee_loc, .thread = cx->thread, .prof = prof, .err_index = -1, .err_sub = LLONG_MAX};
    if (pl->fn) {
        job->caps = val_as_func(fnv)->caps;
        job->ncaps = pl->fn->ncaptures;
    }
    job->fnv = fnv;
    job->map_thread = pl->fn ? -1 : pl->thread;
    if (prof && prof->order < 0) prof->order = rt->npipelines++;
    if (prof && s) prof->stream = true;
    /* A remote executor takes whole stages of batches in flight: that
     * needs the pipeline, even on one worker.  More workers: fused for a
     * trial first (no memory for it: the pipeline), except in a perturbed
     * run, which is there to test the scheduler's interleavings. */
    job->fused = !rt->remote.call && !rt->remote.start && flow_fusable(pl);
    if (job->fused && rt->workers > 1) {
        bool trial = !rt->perturb_seed && (s || xs->n >= FLOW_TRIAL_MIN_JOB) &&
                     (job->trial_ns = job->trial_cells = calloc((size_t)pl->nstages + 2, sizeof *job->trial_ns));
        job->fused = trial || rt->sample; /* a sample's job with no trial stays on one worker */
    }
    job->direct_ok = job->fused && flow_directable(cx->p, pl);
    flow_skips_init(job); /* no skipping when out of memory */
    atomic_init(&job->ns_per_item, 0);
    atomic_init(&job->live, 0);
    atomic_init(&job->peak, 0);
    atomic_init(&job->ctx_asked, 0);
    atomic_init(&job->ctx_kept, 0);
    pthread_mutex_init(&job->err_lock, NULL);
    pthread_mutex_init(&job->spare_lock, NULL);
    for (int i = 0; i < rt->workers; i++) stc__eval_ctx_share(&rt->wcx[i].cx, cx);
}

static void flow_job_fini(flow_job *job)
{
    pthread_mutex_destroy(&job->err_lock);
    pthread_mutex_destroy(&job->spare_lock);
    while (job->spare) {
        flow_batch *b = job->spare;
        job->spare = b->next_spare;
        free(b);
    }
    free(job->decided_at), free(job->skip_first), free(job->skip_flags);
    free(job->decides);
    free(job->trial_cells);
}

/* The trial's work so far (ns): every stage's, a stream's input and output. */
static uint64_t flow_trial_work(const flow_job *job)
{
    uint64_t work = 0;
    for (int s = 0; s < job->plan->nstages + 2; s++) work += job->trial_ns[s];
    return work;
}

/* Whether the pipeline would gain on the trial's stage times over its
 * nitems items: the profile's model (trace/profile.c), a stream's input
 * and output being serial stages; or the items are coarse. */
static bool flow_trial_gains(const flow_job *job, size_t nitems)
{
    const flow_plan *pl = job->plan;
    if (nitems < FLOW_TRIAL_MIN_ITEMS) return true;
    double work = 0, span = 0;
    for (int s = 0; s < pl->nstages + 2; s++) {
        double t = (double)job->trial_ns[s];
        work += t;
        if ((s >= pl->nstages || pl->stages[s].serial) && t > span) span = t;
    }
    return work >= FLOW_TRIAL_GAIN * stc__profile_pipeline_time(work, span, job->rt->workers);
}

/* Fused: nothing to overlap (one worker), or not yet known whether the
 * pipeline gains (a trial), so no scheduler.  The calling thread makes
 * each batch, runs it through every stage (steps.c) and releases it, one
 * batch at a time: no queues, turns, tokens or locks, and the counts of
 * the thread's mode (plain in a run), since no other thread touches the
 * job's values.  A failing item stops the job after its batch, as the
 * pipeline stops after the batches before the failing one (here none is
 * in flight).  True when a trial found that the pipeline gains: the job's
 * remaining items go to it (batches are cut in order, and every batch so
 * far is released, so the results and the first error are the same).
 * again: the first item of its next trial window (0: one is open now);
 * probe: the job comes from the pipeline for its probe (FLOW_PROBE_NS),
 * true again when the pipeline was the faster. */
static bool flow_job_fused(flow_job *job, size_t again, bool probe)
{
    flow_runtime *rt = job->rt;
    sched_batch sb = {.seq = 0};
    bool gains = false;
    size_t from = 0;       /* the trial window's or the probe's first item */
    uint64_t probe_t0 = 0; /* the probe's start, after its first batch */
    uint64_t last = 0;     /* the probe's latest batch end, */
    size_t last_next = 0;  /* and job->next then */
    stc__flow_on_worker(job, 0, true);
    stc__val_counts_set_plain(rt->outer_plain[0]); /* the mode it had (on_worker sets atomic at 2+) */
    for (;;) {
        sb.skip = 0;
        sb.data = NULL;
        if (flow_source(job, &sb, 0) != 1) break; /* the end, or a failing source (recorded) */
        sched_status st = stc__flow_fused_run(job, &sb, 0);
        flow_release(job, &sb, 0);
        if (st == SCHED_STOP) break;
        if (probe) {
            uint64_t now = flow_now_ns();
            if (!probe_t0) { /* its first batch paid for the caches the pipeline left */
                probe_t0 = now;
                from = job->next;
                continue;
            }
            last = now, last_next = job->next;
            if (rt->sample) continue; /* after the sample, fused to the end, timed (below) */
            bool shuttle = rt->shuttle_items > 0; /* the testing aid: every other probe keeps the pipeline */
            if (!shuttle && (now - probe_t0 < FLOW_PROBE_NS || job->next - from < FLOW_PROBE_MIN_ITEMS)) continue;
            double fused_ns = (double)(now - probe_t0) / (double)(job->next - from);
            probe = false;
            if (job->prof) job->prof->probe_ns += now - probe_t0, job->prof->probe_items += job->next - from;
            if (shuttle ? job->probes++ % 2 == 1 : fused_ns > FLOW_PROBE_MARGIN * job->pipe_item_ns) {
                job->probe_at = shuttle ? 0 : FLOW_TRIAL_AGAIN * job->next;
                gains = !job->src_end && job->next < job->n;
                if (gains) break;
                continue;
            }
            rt->stats.smaps_retreated++;
            again = shuttle ? job->next : FLOW_TRIAL_AGAIN * job->next;
            continue;
        }
        if (sb.seq++ == 0 && job->trial_ns) { /* the first batch's one-time costs are no trial */
            memset(job->trial_ns, 0, (size_t)(job->plan->nstages + 2) * sizeof *job->trial_ns);
            from = job->next;
            continue;
        }
        if (!job->trial_ns && job->trial_cells && job->next >= again) { /* a new window */
            memset(job->trial_cells, 0, (size_t)(job->plan->nstages + 2) * sizeof *job->trial_cells);
            job->trial_ns = job->trial_cells;
            from = job->next;
            continue;
        }
        uint64_t work = job->trial_ns ? flow_trial_work(job) : 0;
        size_t seen = job->next - from;
        bool shuttle = rt->shuttle_items > 0 && job->trial_ns; /* the testing aid: at once, "gains" */
        if (shuttle || (work >= FLOW_TRIAL_NS && (seen >= FLOW_TRIAL_MIN_ITEMS || work >= FLOW_TRIAL_LONG_NS))) {
            gains = job->trials++ >= rt->trial_refusals && (shuttle || flow_trial_gains(job, seen)) && !job->src_end &&
                    job->next < job->n;
            job->trial_ns = NULL; /* before any worker runs a stage */
            if (gains) {
                /* coarse items (50 us or more) are the pipeline's: its costs are nothing beside them */
                job->probing = shuttle || (seen >= FLOW_TRIAL_MIN_ITEMS && (double)work < STC__PROFILE_COARSE_NS * (double)seen);
                job->probe_at = 0;
                if (!rt->sample || job->probing) break;
                gains = false; /* a sample's coarse items: nothing to learn, they stay on one worker */
                again = SIZE_MAX;
                continue;
            }
            again = FLOW_TRIAL_AGAIN * job->next; /* (stays fused until then: untimed) */
        }
    }
    if (probe && rt->sample && last && job->prof) /* the fused rest of a sampled job: its 1-worker time */
        job->prof->probe_ns += last - probe_t0, job->prof->probe_items += last_next - from;
    stc__flow_on_worker(job, 0, false);
    return gains;
}

/* ---- Plain counts on the workers ----------------------------------------------------
 *
 * Two workers of a pipeline touch one value's count at once only if the
 * value is reachable from something both read: the job's inputs, the
 * mapped function's captures, and the threads' states (a batch, with the
 * values only it holds, belongs to one worker at a time and passes to
 * another under the pool's mutex).  A job whose workers count plainly
 * marks those VAL_SHARED (counted atomically by everyone, value.h) before
 * its workers start, and each thread's state again after every serial
 * stage's activation, before the stage's next turn can go to the other
 * worker; a marked value is never changed in place, so what is reachable
 * from a marked state stays marked.  Not for keyed shards, remote stages,
 * or threads whose state may hold a map (a map's in-place changes would
 * then copy it: they keep atomic counts).  docs/DESIGN.md 5, "Plain counts
 * on the workers". */

static bool flow_type_has_map(const ir_type *t, int depth)
{
    while (t && t->kind == TY_VAR && t->ref) t = t->ref;
    if (!t || depth > 64) return true; /* not known: as if it might */
    if (t->kind == TY_MAP) return true;
    for (int i = 0; i < t->n && t->args; i++)
        if (flow_type_has_map(t->args[i], depth + 1)) return true;
    return false;
}

static bool flow_counts_plain(const flow_job *job, const eval_ctx *cx)
{
    if (job->rt->workers < 2 || job->shard_maps || job->wstates || job->remote_mask || job->owned) return false;
    if (cx->p->nthreads > 64) return false; /* (the per-stage masks below) */
    for (int t = 0; t < cx->p->nthreads; t++) {
        const ir_thread *th = cx->p->threads[t];
        if (th->keyed || flow_type_has_map(th->state_type, 0)) return false;
    }
    return true;
}

void stc__flow_mark_states(const eval_ctx *cx, uint64_t threads)
{
    for (int t = 0; t < cx->p->nthreads; t++) {
        if (!(threads >> t & 1)) continue;
        stc__val_mark_shared(cx->states[t].value);
        stc__val_mark_shared(cx->states[t].init);
    }
}

/* Per stage, the threads its steps may write (every one for a call
 * through a function value): a thread is written by one serial stage
 * only, else its calls would leave item order (compile.c). */
static uint64_t *flow_stage_writes(const flow_job *job)
{
    const flow_plan *pl = job->plan;
    uint64_t *w = calloc((size_t)pl->nstages + 1, sizeof *w);
    for (int s = 0; w && s < pl->nstages; s++)
        for (int k = pl->stages[s].first; k < pl->stages[s].first + pl->stages[s].count; k++) {
            flow_set ws = pl->steps[k].writes;
            if (ws.all) w[s] = ~(uint64_t)0;
            else if (ws.bits) w[s] |= ws.bits[0];
        }
    return w;
}

/* What every worker of the job may read: marked before they start. */
static void flow_mark_job(const flow_job *job, const eval_ctx *cx)
{
    stc__val_mark_shared(job->fnv);
    for (int i = 0; i < job->ncaps; i++) stc__val_mark_shared(job->caps[i]);
    for (size_t i = job->next; job->items && i < job->n; i++) stc__val_mark_shared(job->items[i]);
    stc__flow_mark_states(cx, ~(uint64_t)0);
}

/* Runs the job's pipeline on the pool: the plan's stages, and for a stream
 * one more serial stage that hands the results to the sink.  0, or -1 when
 * out of memory before anything ran. */
static int flow_job_pipeline(flow_job *job, int tokens)
{
    flow_runtime *rt = job->rt;
    const flow_plan *pl = job->plan;
    int nstages = pl->nstages + (job->stream ? 1 : 0);
    bool *serial = malloc((size_t)nstages * sizeof *serial);
    if (!serial) return -1;
    for (int i = 0; i < pl->nstages; i++) serial[i] = pl->stages[i].serial;
    if (job->stream) serial[pl->nstages] = true;
    flow_plan_prof *prof = job->prof;
    sched_pipeline spl = {.nstages = nstages, .serial = serial, .run = stc__flow_stage_run,
                          .source = flow_source, .release = flow_release, .ud = job,
                          .max_batches = tokens, .input_first = job->remote_mask != 0,
                          .perturb_seed = rt->perturb_seed,
                          .watchdog_ms = rt->watchdog_ms,
                          .wait_ns = prof && rt->profile ? prof->wait_ns : NULL,
                          .on_idle = rt->trace ? flow_on_idle : NULL, .on_worker = stc__flow_on_worker};
    uint64_t start = flow_now_ns();
    const eval_ctx *cx = &rt->wcx[0].cx; /* (every context shares main's states) */
    uint64_t *writes = NULL;
    job->plain = flow_counts_plain(job, cx) && (writes = flow_stage_writes(job)) != NULL;
    job->plain_writes = writes;
    if (job->plain) flow_mark_job(job, cx);
    rt->plain_job = job->plain; /* read by stc__flow_on_worker, under the pool's mutex */
    job->window_t0 = start; /* flow_probe_due's first window */
    job->window_done0 = (long long)job->next;
    job->windows = 0;
    job->pipe_item_ns = 0;
    int rc = stc__sched_run(rt->pool, &spl);
    rt->plain_job = false;
    job->plain = false;
    job->plain_writes = NULL;
    free(writes);
    if (prof) prof->wall_ns += flow_now_ns() - start;
    free(serial);
    return rc;
}

/* Runs the job: fused while its trial windows say so (at 1 worker always),
 * else as the pipeline, and fused again while a probe finds the pipeline
 * no faster (FLOW_PROBE_WINDOW_NS).  0, or -1 when out of memory before
 * anything ran. */
static int flow_job_run(flow_job *job, int tokens)
{
    flow_runtime *rt = job->rt;
    size_t again = 0;   /* the first item of the fused run's next trial window (0: open now) */
    bool probe = false; /* the fused run is the pipeline's probe */
    bool piped = false; /* some of its items went through the pipeline */
    for (;;) {
        if (job->fused) {
            uint64_t start = flow_now_ns();
            bool gains = flow_job_fused(job, again, probe);
            if (job->prof) job->prof->wall_ns += flow_now_ns() - start;
            if (!gains) {
                if (flow_parallel_workers(rt) > 1 && !piped) rt->stats.smaps_fused++;
                return 0;
            }
            job->fused = false; /* the rest on the pool (the spare blocks locked again) */
        }
        piped = true;
        int rc = flow_job_pipeline(job, tokens);
        if (rc != 0 || !job->probe) return rc;
        /* Fused from the next item: every batch so far is released, so
         * the results and the first error are the same. A stop (every
         * stop records its error) or the stream's end ends the job. */
        job->probe = false;
        if (job->err_index >= 0 || job->src_end || job->next >= job->n) return 0;
        job->fused = probe = true;
        again = SIZE_MAX; /* (the probe says when) */
        if (rt->sample) rt->stats.smaps_retreated++; /* a sample's job: fused to its end */
    }
}

/* Adds the job's figures to the run's stats; the items read in *count. */
static void flow_job_count(const flow_job *job, int tokens, long long *count)
{
    stc_run_stats *st = &job->rt->stats;
    size_t nread = job->stream ? job->next : job->n;
    if (count) *count = (long long)nread;
    st->smaps_parallel++;
    st->items += (long long)nread;
    long long peak = atomic_load(&job->peak), bound = (long long)tokens * job->rt->capacity;
    if (peak > st->peak_in_flight) st->peak_in_flight = peak;
    if (bound > st->max_in_flight) st->max_in_flight = bound;
}

/* Runs smap e over xs (into *out) or over stream s (*count: items read). */
static int flow_run(flow_runtime *rt, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_items *xs,
                    const eval_stream *s, stc_value *out, long long *count)
{
    const flow_plan *pl = NULL;
    flow_plan_prof *prof = NULL;
    flow_plan_use *use = NULL;
    int rc = flow_plan_for(rt, cx, e, thread, fnv, s ? SIZE_MAX : xs->n, &pl, &prof, &use);
    if (rc == FLOW_NESTED_LOOP && !s) return stc__flow_nested_loop(rt, cx, e, thread, fnv, xs, use, out);
    if (rc) return rc;
    /* release fills every item of the result list on success */
    stc_value result = s ? stc_value_unit() : stc__val_seq_alloc_unfilled(STC_T_LIST, xs->n);
    if (result.tag == STC_T_INVALID || stc__flow_start_pool(rt) != 0) {
        val_release(result);
        return stc__eval_oom(cx, e->u.call.callee_loc);
    }
    flow_job job;
    flow_job_init(&job, rt, cx, e, pl, prof, fnv, xs, s, s ? NULL : val_seq_items(result));
    stc__flow_owned_job_start(&job, cx); /* stages a remote executor may run (owned.c) */
    /* one worker fused: one batch at a time */
    int tokens = job.fused && rt->workers == 1 ? 1 : flow_tokens(rt, pl, s != NULL);
    rc = stc__flow_shards_split(&job, cx);
    if (rc == 0) {
        uint64_t start = flow_now_ns();
        rc = flow_job_run(&job, tokens);
        stc__flow_note_pipeline(rt, use, flow_now_ns() - start);
        int mrc = stc__flow_shards_merge(&job, cx);
        if (mrc != 0 && job.err_index < 0) rc = -1; /* out of memory (cx has the error) */
    } else {
        stc__flow_shards_merge(&job, cx);
    }
    int orc = stc__flow_owned_job_end(&job, cx); /* states of stages owned elsewhere back (owned.c) */
    flow_job_fini(&job);
    flow_job_count(&job, tokens, count);
    if (orc != 0 && job.err_index < 0) { /* recorded in cx */
        val_release(result);
        return orc;
    }
    if (rc != 0 && job.err_index < 0) {
        val_release(result);
        return stc__eval_oom(cx, job.loc);
    }
    if (job.err_index >= 0) {
        val_release(result);
        return stc__eval_error_adopt(cx, job.err);
    }
    *out = result;
    return 0;
}

/* ---- The hooks ---------------------------------------------------------------------- */

int stc__flow_smap(void *ud, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_items *xs,
              stc_value *out)
{
    return flow_run(ud, cx, e, thread, fnv, xs, NULL, out, NULL);
}

int stc__flow_stream(void *ud, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_stream *s,
                long long *count)
{
    stc_value unused = stc_value_unit();
    return flow_run(ud, cx, e, thread, fnv, NULL, s, &unused, count);
}
