/* pipeline.c - the token pipeline: how workers move batches through stages.
 *
 * All bookkeeping (ready queue, serial-stage turns, tokens) is guarded by
 * pool->lock; stage code, the source and release run unlocked. A batch is
 * owned by exactly one place at a time: a worker's hands, the ready queue,
 * or one serial stage's pending list. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched/sched_internal.h"

/* Spinning before sleeping: waking a parked worker costs 8-21 us on our
 * machines, so a worker first polls job->version for a while. */
#define SCHED_SPIN_PAUSES 2000
#define SCHED_SPIN_YIELDS 20

static inline void sched_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- Testing aids ----------------------------------------------------------- */

/* With perturbation on, a random pause: often a yield, sometimes a sleep
 * of 1-50 us, so that workers interleave in ways a quiet machine rarely
 * shows.  rng is the calling worker's own generator (xorshift64). */
static void sched_perturb(const sched_job *job, uint64_t *rng)
{
    if (!job->pl->perturb_seed) return;
    uint64_t x = *rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rng = x;
    unsigned r = (unsigned)(x >> 32) % 16;
    if (r < 4) {
        sched_yield();
    } else if (r == 4) {
        struct timespec ts = {0, (long)(1000 + (x % 50) * 1000)};
        nanosleep(&ts, NULL);
    }
}

uint64_t stc__sched_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool sched_past(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* The watchdog fired: say where everything is, then abort.  Called with
 * pool->lock held. */
static void sched_watchdog_fire(const sched_pool *pool, const sched_job *job)
{
    const sched_pipeline *pl = job->pl;
    int ready = 0, free_tokens = 0;
    for (const sched_batch *b = job->ready_head; b; b = b->next) ready++;
    for (const sched_batch *b = job->free_list; b; b = b->next) free_tokens++;
    fprintf(stderr,
            "sched watchdog: job still running after %d ms: %d workers (%d parked), %d batches in flight "
            "of %d, %d ready, %d free, next input seq %llu, input %s%s, stop at %llu\n",
            pl->watchdog_ms, pool->nworkers, job->nparked, job->in_flight, pl->max_batches, ready, free_tokens,
            (unsigned long long)job->next_seq, job->input_done ? "done" : "open",
            job->source_busy ? " (source busy)" : "",
            (unsigned long long)atomic_load_explicit(&job->stop_seq, memory_order_relaxed));
    for (int s = 0; s < pl->nstages; s++) {
        int pending = 0;
        for (const sched_batch *b = job->stages[s].pending; b; b = b->next) pending++;
        fprintf(stderr, "  stage %d (%s): next seq %llu, %d pending\n", s, pl->serial[s] ? "serial" : "replicated",
                (unsigned long long)job->stages[s].next_seq, pending);
    }
    fflush(stderr);
    abort();
}

/* New work exists: let spinners see it and wake one sleeper. */
static void sched_announce(sched_pool *pool, sched_job *job)
{
    atomic_fetch_add_explicit(&job->version, 1, memory_order_release);
    if (job->nparked > 0) pthread_cond_signal(&pool->work);
}

static void sched_push_ready(sched_pool *pool, sched_job *job, sched_batch *b)
{
    b->next = NULL;
    if (job->ready_tail) job->ready_tail->next = b;
    else job->ready_head = b;
    job->ready_tail = b;
    sched_announce(pool, job);
}

static sched_batch *sched_pop_ready(sched_job *job)
{
    sched_batch *b = job->ready_head;
    if (b) {
        job->ready_head = b->next;
        if (!job->ready_head) job->ready_tail = NULL;
        b->next = NULL;
    }
    return b;
}

static void sched_pending_insert(sched_stage_state *st, sched_batch *b)
{
    sched_batch **p = &st->pending;
    while (*p && (*p)->seq < b->seq) p = &(*p)->next;
    b->next = *p;
    *p = b;
}

static bool sched_job_done(const sched_job *job) { return job->input_done && job->in_flight == 0; }

static void sched_mark_stop(sched_job *job, uint64_t seq)
{
    uint64_t cur = atomic_load_explicit(&job->stop_seq, memory_order_relaxed);
    while (seq < cur &&
           !atomic_compare_exchange_weak_explicit(&job->stop_seq, &cur, seq, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

static bool sched_is_dropped(sched_job *job, const sched_batch *b)
{
    return b->dropped || b->seq > atomic_load_explicit(&job->stop_seq, memory_order_relaxed);
}

/* Serial stage s has finished with batch next_seq: its turn passes on, past
 * the batches that said they skip it, and the next waiting batch (if its
 * turn has come) becomes ready.  pool->lock held. */
static void sched_stage_next(sched_pool *pool, sched_job *job, int s)
{
    sched_stage_state *ss = &job->stages[s];
    ss->next_seq++;
    for (int i = 0; i < ss->nskips;) {
        if (ss->skips[i] != ss->next_seq) {
            i++;
            continue;
        }
        ss->skips[i] = ss->skips[--ss->nskips];
        ss->next_seq++;
        i = 0;
    }
    if (ss->pending && ss->pending->seq == ss->next_seq) {
        sched_batch *nb = ss->pending;
        ss->pending = nb->next;
        if (job->pl->wait_ns) job->pl->wait_ns[s] += stc__sched_now_ns() - nb->queued_at;
        sched_push_ready(pool, job, nb);
    }
}

/* The client said b will skip the later serial stages in b->skip: those
 * stages let later batches go first.  pool->lock held. */
static void sched_register_skips(sched_pool *pool, sched_job *job, sched_batch *b, int s, uint64_t added)
{
    const sched_pipeline *pl = job->pl;
    for (int t = s + 1; t < pl->nstages && t < 64; t++) {
        if (!((added >> t) & 1) || !pl->serial[t]) continue;
        sched_stage_state *ts = &job->stages[t];
        if (ts->next_seq == b->seq) {
            sched_stage_next(pool, job, t);
        } else if (ts->nskips < pl->max_batches) {
            ts->skips[ts->nskips++] = b->seq;
        } else {
            /* Batches that skipped t may have left the pipeline with their
             * marks still waiting for t's turn: with the marks full, this
             * one takes its turn at t the ordinary way. */
            b->skip &= ~((uint64_t)1 << t);
        }
    }
}

/* Runs batch b from its current stage on, as far as it can go. Called and
 * returns with pool->lock held. */
static void sched_advance(sched_pool *pool, sched_job *job, sched_batch *b, int worker, uint64_t *rng)
{
    const sched_pipeline *pl = job->pl;
    for (;;) {
        int s = b->stage;
        if (s == pl->nstages) {
            pthread_mutex_unlock(&pool->lock);
            pl->release(pl->ud, b, worker);
            pthread_mutex_lock(&pool->lock);
            b->data = NULL;
            b->next = job->free_list;
            job->free_list = b;
            job->in_flight--;
            if (sched_job_done(job)) pthread_cond_broadcast(&pool->work);
            else sched_announce(pool, job); /* a token came free */
            return;
        }
        if (s < 64 && ((b->skip >> s) & 1)) { /* nothing to do here; its turn was given away */
            b->stage = s + 1;
            continue;
        }
        bool serial = pl->serial[s] && !b->passed;
        if (serial && job->stages[s].next_seq != b->seq) {
            if (pl->wait_ns) b->queued_at = stc__sched_now_ns();
            sched_pending_insert(&job->stages[s], b);
            return;
        }
        /* A batch back from SCHED_AWAY runs its stage again even after a
         * stop: the client must take back what it sent away. */
        bool back = b->resumed;
        b->resumed = false;
        if (!back && sched_is_dropped(job, b)) b->dropped = true;
        if (!b->dropped) {
            pthread_mutex_unlock(&pool->lock);
            sched_perturb(job, rng);
            uint64_t skip_before = b->skip;
            sched_status st = pl->run(pl->ud, s, b, worker);
            sched_perturb(job, rng);
            pthread_mutex_lock(&pool->lock);
            if (st == SCHED_AWAY_PASS && serial) { /* the next batch may take its turn */
                b->passed = true;
                sched_stage_next(pool, job, s);
            }
            if (st == SCHED_AWAY || st == SCHED_AWAY_PASS) { /* the client has it until stc__sched_resume */
                if (!b->resumed) b->away = true;
                else continue; /* already back: run the stage again */
                return;
            }
            if (st == SCHED_STOP) sched_mark_stop(job, b->seq);
            if (b->skip != skip_before) {
                uint64_t added = b->skip & ~skip_before;
                added &= s >= 63 ? 0 : ~(((uint64_t)2 << s) - 1); /* later stages only */
                b->skip = skip_before | added;
                if (added) sched_register_skips(pool, job, b, s, added);
            }
        }
        b->stage = s + 1;
        b->passed = false;
        if (serial) sched_stage_next(pool, job, s);
    }
}

/* Makes the next input batch, if the source is free and a token is. */
static sched_batch *sched_take_input(sched_pool *pool, sched_job *job, int worker, uint64_t *rng)
{
    if (job->input_done || job->source_busy || !job->free_list) return NULL;
    if (atomic_load_explicit(&job->stop_seq, memory_order_relaxed) != UINT64_MAX) {
        job->input_done = true;
        /* If nothing is in flight the job is complete now: parked workers
         * must hear it, or stc__sched_run would wait for them forever. */
        if (sched_job_done(job)) pthread_cond_broadcast(&pool->work);
        return NULL;
    }
    sched_batch *b = job->free_list;
    job->free_list = b->next;
    b->next = NULL;
    b->seq = job->next_seq;
    b->stage = 0;
    b->dropped = false;
    b->skip = 0;
    b->data = NULL;
    b->away = b->resumed = b->passed = false;
    job->source_busy = true;
    pthread_mutex_unlock(&pool->lock);
    sched_perturb(job, rng);
    int r = job->pl->source(job->pl->ud, b, worker);
    sched_perturb(job, rng);
    pthread_mutex_lock(&pool->lock);
    job->source_busy = false;
    if (r == 1) {
        job->next_seq++;
        job->in_flight++;
        if (job->free_list) sched_announce(pool, job); /* another worker may take the next input */
        return b;
    }
    /* End of input or a failing source: batches before this one go on. */
    if (r < 0 && b->seq > 0) sched_mark_stop(job, b->seq - 1);
    job->input_done = true;
    b->next = job->free_list;
    job->free_list = b;
    if (sched_job_done(job)) pthread_cond_broadcast(&pool->work);
    return NULL;
}

static void sched_job_loop(sched_pool *pool, sched_job *job, int worker)
{
    uint64_t rng = ((uint64_t)job->pl->perturb_seed << 16) ^ (uint64_t)(worker + 1) * 0x9E3779B97F4A7C15u;
    for (;;) {
        if (job->pl->watchdog_ms > 0 && sched_past(&job->deadline)) sched_watchdog_fire(pool, job);
        /* Finishing batches in flight comes before starting new ones: it
         * frees tokens and keeps memory low; unless stages run in another
         * process, which must not wait for our ready batches (input_first). */
        bool input_first = job->pl->input_first;
        sched_batch *b = input_first ? sched_take_input(pool, job, worker, &rng) : NULL;
        if (!b) b = sched_pop_ready(job);
        if (!b && !input_first) b = sched_take_input(pool, job, worker, &rng);
        if (b) {
            sched_advance(pool, job, b, worker, &rng);
            continue;
        }
        if (sched_job_done(job)) return;
        /* Nothing to do now: spin a little, then sleep. */
        unsigned v = atomic_load_explicit(&job->version, memory_order_acquire);
        pthread_mutex_unlock(&pool->lock);
        bool changed = false;
        for (int i = 0; i < SCHED_SPIN_PAUSES + SCHED_SPIN_YIELDS && !changed; i++) {
            if (i < SCHED_SPIN_PAUSES) sched_cpu_relax();
            else sched_yield();
            changed = atomic_load_explicit(&job->version, memory_order_acquire) != v;
        }
        pthread_mutex_lock(&pool->lock);
        if (changed || job->ready_head || sched_job_done(job)) continue;
        if (!job->input_done && !job->source_busy && job->free_list) continue;
        job->nparked++;
        uint64_t t0 = job->pl->on_idle ? stc__sched_now_ns() : 0;
        if (job->pl->watchdog_ms > 0) pthread_cond_timedwait(&pool->work, &pool->lock, &job->deadline);
        else pthread_cond_wait(&pool->work, &pool->lock);
        if (job->pl->on_idle) job->pl->on_idle(job->pl->ud, worker, t0, stc__sched_now_ns());
        job->nparked--;
    }
}

void stc__sched_job_work(sched_pool *pool, sched_job *job, int worker)
{
    if (job->pl->on_worker) job->pl->on_worker(job->pl->ud, worker, true);
    sched_job_loop(pool, job, worker);
    if (job->pl->on_worker) job->pl->on_worker(job->pl->ud, worker, false);
}

void stc__sched_resume(sched_pool *pool, sched_batch *b)
{
    pthread_mutex_lock(&pool->lock);
    b->resumed = true; /* (if its run has not returned yet, it sees this) */
    if (b->away) {
        b->away = false;
        sched_push_ready(pool, pool->job, b);
    }
    pthread_mutex_unlock(&pool->lock);
}
