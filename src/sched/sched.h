/* sched.h - the worker pool and the batch pipeline executor.
 *
 * A pool is a fixed set of workers for one stc_run: the calling thread plus
 * nworkers-1 pthreads, created once and reused for every parallel smap of
 * the run. A pipeline is a chain of stages that batches of items pass
 * through in order. The executor follows oneTBB's parallel_pipeline: a
 * bounded number of batches (tokens) is in flight; a serial stage takes
 * batches strictly in sequence order, one at a time; a parallel stage takes
 * any batch at any time. A worker carries its batch on into the next stage
 * while it can, and otherwise parks the batch at the serial stage that is
 * not yet its turn and looks for other work. Workers spin briefly before
 * sleeping and are woken only when they sleep.
 *
 * Branches (split/join) are expressed by the client: every batch visits
 * every stage, and a branch stage simply skips the items not routed to it,
 * so the flag stream is implicit in each batch and order is kept for free.
 */
#ifndef STC_SCHED_H
#define STC_SCHED_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sched_pool sched_pool;

/* nworkers >= 1. NULL when out of memory or a thread cannot be created. */
sched_pool *stc__sched_pool_new(int nworkers);
/* The CPUs this process may run on (its affinity mask; else the online
 * ones), at least 1. */
int stc__sched_cpus_allowed(void);
void stc__sched_pool_free(sched_pool *pool); /* NULL is a no-op */
int stc__sched_pool_workers(const sched_pool *pool);

typedef struct sched_batch {
    uint64_t seq;        /* 0, 1, 2 ... in input order */
    void *data;          /* the client's */
    /* executor-private: */
    int stage;           /* next stage to run */
    bool dropped;        /* after a stop: passes the remaining stages without running them */
    /* Set by the client while running a stage: bit t (t < 64) says the
     * batch has nothing to do at later stage t.  For a serial stage that
     * lets later batches take their turn there before this batch arrives
     * (a branch: items routed elsewhere need not wait for the branch's
     * earlier items); the batch then passes stage t without running it. */
    uint64_t skip;
    uint64_t queued_at;  /* when it began waiting for a serial stage's turn (wait_ns only) */
    /* SCHED_AWAY (pool->lock): away, the client still has it; resumed, the
     * client gave it back before its run returned SCHED_AWAY. */
    bool away, resumed;
    bool passed;         /* SCHED_AWAY_PASS: its turn at this (serial) stage is given */
    struct sched_batch *next;
} sched_batch;

typedef enum sched_status {
    SCHED_CONTINUE = 0,  /* all fine */
    SCHED_STOP = 1,      /* an error in this batch: produce no more input, and
                            drop batches after this one; this batch and earlier
                            ones still run every remaining stage */
    SCHED_AWAY = 2,      /* the client took the batch away (a remote stage's
                            batch in another process): it holds no worker
                            and a token, and after stc__sched_resume the
                            same stage runs on it again */
    SCHED_AWAY_PASS = 3  /* as SCHED_AWAY, and a serial stage's turn passes to
                            the next batch now (the client keeps the order
                            itself: another process owns the stage and runs
                            its batches in the order sent); when the batch
                            is back the stage runs on it again, without
                            waiting for a turn */
} sched_status;

typedef struct sched_pipeline {
    int nstages;
    const bool *serial;  /* per stage */
    /* Runs stage `stage` on batch b; `worker` is in [0, nworkers). */
    sched_status (*run)(void *ud, int stage, sched_batch *b, int worker);
    /* Fills b->data for batch b->seq; called serially in seq order.
     * Returns 1 when it produced a batch, 0 at the end of input,
     * SCHED_SOURCE_STOP (-1) when it failed (stop, like SCHED_STOP). */
    int (*source)(void *ud, sched_batch *b, int worker);
    /* The batch left the pipeline (finished or dropped): free b->data. */
    void (*release)(void *ud, sched_batch *b, int worker);
    void *ud;
    int max_batches;     /* batches in flight at most (>= 1) */
    /* Workers start a new batch (a free token) before running one that is
     * ready: for stages another process runs (SCHED_AWAY), so that they
     * always have the next batch while this process runs the others.
     * Default (false): ready batches first, which frees tokens soonest. */
    bool input_first;
    /* Testing aids, both off when 0.  perturb_seed: workers yield or sleep
     * for a few microseconds at random around every queue operation, to
     * shake out schedule-dependent bugs (reproducible per seed as far as
     * the OS lets it).  watchdog_ms: if the job runs longer, the first
     * worker to notice prints the queue occupancy to stderr and aborts:
     * a hung test fails loudly instead of blocking CI. */
    unsigned perturb_seed;
    int watchdog_ms;
    /* Observation, both optional (NULL: off).  wait_ns[stage] accumulates
     * the time batches waited for their turn at each serial stage (updated
     * under the pool lock); on_idle is told of every interval a worker
     * spent parked, with CLOCK_MONOTONIC nanoseconds. */
    uint64_t *wait_ns;
    void (*on_idle)(void *ud, int worker, uint64_t t0, uint64_t t1);
    /* Optional: called on the worker's own thread when it joins the job
     * (joining true, before its first batch) and when it leaves it; the
     * client sets up per-thread state there (flow: the value cache). */
    void (*on_worker)(void *ud, int worker, bool joining);
} sched_pipeline;

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t stc__sched_now_ns(void);

#define SCHED_SOURCE_STOP (-1)

/* Runs the pipeline to completion on the pool; the caller's thread works
 * as worker 0. Returns 0, or -1 if out of memory before anything ran.
 * Not reentrant on one pool: one pipeline at a time. */
int stc__sched_run(sched_pool *pool, const sched_pipeline *pl);

/* Gives back batch b of the pool's running job, which a stage run took
 * away (SCHED_AWAY): from any thread, once per SCHED_AWAY, possibly before
 * that run has returned.  The batch becomes ready, to run the same stage
 * again. */
void stc__sched_resume(sched_pool *pool, sched_batch *b);

#endif
