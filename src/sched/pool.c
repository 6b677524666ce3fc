/* pool.c - a fixed pool of workers that run one pipeline job at a time. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getcpu, sched_setaffinity, CPU_SET */
#endif
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "sched/sched_internal.h"

typedef struct sched_thread_arg {
    sched_pool *pool;
    int worker;
    int creator_cpu; /* the CPU the creating thread ran on, or -1 */
} sched_thread_arg;

int stc__sched_cpus_allowed(void)
{
#if defined(__linux__) && defined(CPU_SET)
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) return CPU_COUNT(&allowed) > 0 ? CPU_COUNT(&allowed) : 1;
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1 ? (int)n : 1;
}

/* Linux places a new thread on its creator's CPU and moves it to an idle
 * one only after a few milliseconds, during which both run on one core.
 * A worker therefore moves itself at once to another CPU it may use (the
 * worker-th after the creator's), then gives back its whole affinity mask:
 * nothing stays pinned, the kernel just starts from a good placement. */
static void sched_thread_place(int worker, int creator_cpu)
{
#if defined(__linux__) && defined(CPU_SET)
    cpu_set_t allowed, one;
    if (creator_cpu < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    int n = CPU_COUNT(&allowed);
    if (n < 2) return;
    int cpus[CPU_SETSIZE], k = 0, at = 0;
    for (int c = 0; c < CPU_SETSIZE && k < n; c++)
        if (CPU_ISSET(c, &allowed)) {
            if (c == creator_cpu) at = k;
            cpus[k++] = c;
        }
    CPU_ZERO(&one);
    CPU_SET(cpus[(at + worker) % k], &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0) sched_setaffinity(0, sizeof allowed, &allowed);
#else
    (void)worker;
    (void)creator_cpu;
#endif
}

static void *sched_thread_main(void *argp)
{
    sched_thread_arg arg = *(sched_thread_arg *)argp;
    free(argp);
    sched_thread_place(arg.worker, arg.creator_cpu);
    sched_pool *pool = arg.pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->shutdown && (pool->job == NULL || pool->job_gen == seen))
            pthread_cond_wait(&pool->work, &pool->lock);
        if (pool->shutdown) break;
        seen = pool->job_gen;
        pool->busy++;
        stc__sched_job_work(pool, pool->job, arg.worker);
        if (--pool->busy == 0) pthread_cond_broadcast(&pool->idle);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

sched_pool *stc__sched_pool_new(int nworkers)
{
    if (nworkers < 1) return NULL;
    sched_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->nworkers = nworkers;
    if (pthread_mutex_init(&pool->lock, NULL) != 0) { free(pool); return NULL; }
    /* work is waited on with a deadline by the watchdog: a monotonic one. */
    pthread_condattr_t attr;
    int cerr = pthread_condattr_init(&attr);
    if (cerr == 0) {
        cerr = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        if (cerr == 0) cerr = pthread_cond_init(&pool->work, &attr);
        pthread_condattr_destroy(&attr);
    }
    if (cerr != 0) {
        pthread_mutex_destroy(&pool->lock);
        free(pool);
        return NULL;
    }
    if (pthread_cond_init(&pool->idle, NULL) != 0) {
        pthread_cond_destroy(&pool->work);
        pthread_mutex_destroy(&pool->lock);
        free(pool);
        return NULL;
    }
    if (nworkers > 1) {
        pool->threads = calloc((size_t)nworkers - 1, sizeof *pool->threads);
        if (!pool->threads) { stc__sched_pool_free(pool); return NULL; }
    }
    for (int i = 1; i < nworkers; i++) {
        sched_thread_arg *arg = malloc(sizeof *arg);
        if (!arg) { stc__sched_pool_free(pool); return NULL; }
#if defined(__linux__)
        *arg = (sched_thread_arg){pool, i, sched_getcpu()};
#else
        *arg = (sched_thread_arg){pool, i, -1};
#endif
        if (pthread_create(&pool->threads[pool->nthreads], NULL, sched_thread_main, arg) != 0) {
            free(arg);
            stc__sched_pool_free(pool);
            return NULL;
        }
        pool->nthreads++;
    }
    return pool;
}

void stc__sched_pool_free(sched_pool *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->shutdown = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->nthreads; i++) pthread_join(pool->threads[i], NULL);
    free(pool->threads);
    pthread_cond_destroy(&pool->idle);
    pthread_cond_destroy(&pool->work);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

int stc__sched_pool_workers(const sched_pool *pool) { return pool ? pool->nworkers : 0; }

int stc__sched_run(sched_pool *pool, const sched_pipeline *pl)
{
    if (!pool || !pl || pl->nstages < 0 || pl->max_batches < 1 || !pl->source || !pl->release) return -1;
    sched_job job = {.pl = pl};
    job.stages = calloc((size_t)pl->nstages + 1, sizeof *job.stages);
    job.batches = calloc((size_t)pl->max_batches, sizeof *job.batches);
    uint64_t *skips = calloc(((size_t)pl->nstages + 1) * (size_t)pl->max_batches, sizeof *skips);
    if (!job.stages || !job.batches || !skips) {
        free(job.stages);
        free(job.batches);
        free(skips);
        return -1;
    }
    for (int s = 0; s < pl->nstages; s++) job.stages[s].skips = skips + (size_t)s * (size_t)pl->max_batches;
    for (int i = pl->max_batches - 1; i >= 0; i--) {
        job.batches[i].next = job.free_list;
        job.free_list = &job.batches[i];
    }
    atomic_init(&job.stop_seq, UINT64_MAX);
    atomic_init(&job.version, 0);
    if (pl->watchdog_ms > 0) {
        clock_gettime(CLOCK_MONOTONIC, &job.deadline);
        job.deadline.tv_sec += pl->watchdog_ms / 1000;
        job.deadline.tv_nsec += (long)(pl->watchdog_ms % 1000) * 1000000L;
        if (job.deadline.tv_nsec >= 1000000000L) {
            job.deadline.tv_sec++;
            job.deadline.tv_nsec -= 1000000000L;
        }
    }

    pthread_mutex_lock(&pool->lock);
    pool->job = &job;
    pool->job_gen++;
    if (pool->nthreads) pthread_cond_broadcast(&pool->work);
    stc__sched_job_work(pool, &job, 0);
    /* The job is complete; wait until every pool thread has left it. */
    while (pool->busy > 0) pthread_cond_wait(&pool->idle, &pool->lock);
    pool->job = NULL;
    pthread_mutex_unlock(&pool->lock);

    free(job.stages);
    free(job.batches);
    free(skips);
    return 0;
}
