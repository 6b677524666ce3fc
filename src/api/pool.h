/* pool.h - struct stc_pool: a worker pool a host keeps across runs. */
#ifndef STC_API_POOL_H
#define STC_API_POOL_H

#include <pthread.h>

#include "sched/sched.h"
#include "stc.h"

struct stc_pool {
    sched_pool *sched;
    pthread_mutex_t in_use; /* held by the stc_run using it: one run at a time */
};

#endif
