/* pool.c - worker pools kept across runs (stc_pool in stc.h).  Creating
 * threads for every run costs their start-up (and, on our VMs, often a few
 * milliseconds until the kernel spreads them over the cores); a host that
 * runs many programs keeps one pool instead. */
#include <stdlib.h>

#include "api/pool.h"

stc_pool *stc_pool_new(int workers)
{
    if (workers < 1 || workers > STC_MAX_WORKERS) return NULL;
    stc_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (pthread_mutex_init(&p->in_use, NULL) != 0) {
        free(p);
        return NULL;
    }
    if (!(p->sched = stc__sched_pool_new(workers))) {
        pthread_mutex_destroy(&p->in_use);
        free(p);
        return NULL;
    }
    return p;
}

void stc_pool_free(stc_pool *p)
{
    if (!p) return;
    stc__sched_pool_free(p->sched);
    pthread_mutex_destroy(&p->in_use);
    free(p);
}

int stc_pool_workers(const stc_pool *p) { return p ? stc__sched_pool_workers(p->sched) : 0; }
