/* sched_internal.h - state shared by pool.c and pipeline.c. */
#ifndef STC_SCHED_INTERNAL_H
#define STC_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "sched/sched.h"

typedef struct sched_stage_state {
    uint64_t next_seq;      /* serial stages: the batch whose turn it is (pool->lock) */
    sched_batch *pending;   /* batches waiting for their turn, sorted by seq (pool->lock) */
    uint64_t *skips;        /* seqs of batches that skip this stage, not yet reached by
                               next_seq; at most max_batches (pool->lock) */
    int nskips;             /* (pool->lock) */
} sched_stage_state;

/* One pipeline run. Every field is guarded by pool->lock unless marked. */
typedef struct sched_job {
    const sched_pipeline *pl;
    sched_stage_state *stages;
    sched_batch *batches;           /* max_batches batch structs (the tokens) */
    sched_batch *free_list;
    sched_batch *ready_head, *ready_tail;
    uint64_t next_seq;              /* seq of the next batch the source makes */
    bool source_busy, input_done;
    int in_flight;
    int nparked;                    /* workers waiting on pool->work */
    atomic_uint_fast64_t stop_seq;  /* atomic: UINT64_MAX, or the first batch that stopped */
    atomic_uint version;            /* atomic: bumped whenever work appears, for spinners */
    struct timespec deadline;       /* watchdog (pl->watchdog_ms > 0); read-only */
} sched_job;

struct sched_pool {
    int nworkers;
    pthread_t *threads;             /* nworkers - 1 */
    int nthreads;                   /* threads actually started */
    pthread_mutex_t lock;
    pthread_cond_t work;            /* new work, a new job, or shutdown (lock) */
    pthread_cond_t idle;            /* a worker left the job (lock) */
    sched_job *job;                 /* the current job or NULL (lock) */
    uint64_t job_gen;               /* bumped per job (lock) */
    int busy;                       /* pool threads inside the current job (lock) */
    bool shutdown;                  /* (lock) */
};

/* Works on the job until it is complete. Called with pool->lock held;
 * returns with it held. */
void stc__sched_job_work(sched_pool *pool, sched_job *job, int worker);

#endif
