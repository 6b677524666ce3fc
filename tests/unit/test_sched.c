/* test_sched.c - the batch pipeline executor: order, bounds, stops. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "test.h"
#include "sched/sched.h"

/* Items are ints 0..n-1 in batches of `per` items. Stage 0 (serial) folds
 * an order-sensitive hash, stage 1 (parallel) squares, stage 2 (serial)
 * appends to the output in order. */
typedef struct tp_batch { int first, n; int64_t v[8]; } tp_batch;

typedef struct tp_state {
    int n, per;
    int produced;           /* source only (serial) */
    uint64_t hash;          /* stage 0 only (serial) */
    int64_t *out;           /* stage 2 only (serial) */
    int nout;
    atomic_int live, max_live, released;
    int fail_at_item;       /* -1: never; stage 1 stops at this item */
    int fail_source_at;     /* -1: never */
    atomic_int ran_after_stop;
} tp_state;

static int tp_source(void *ud, sched_batch *b, int worker)
{
    (void)worker;
    tp_state *st = ud;
    if (st->produced >= st->n) return 0;
    if (st->fail_source_at >= 0 && st->produced >= st->fail_source_at) return SCHED_SOURCE_STOP;
    tp_batch *tb = malloc(sizeof *tb);
    tb->first = st->produced;
    tb->n = st->n - st->produced < st->per ? st->n - st->produced : st->per;
    for (int i = 0; i < tb->n; i++) tb->v[i] = tb->first + i;
    st->produced += tb->n;
    b->data = tb;
    int live = atomic_fetch_add(&st->live, 1) + 1;
    int m = atomic_load(&st->max_live);
    while (live > m && !atomic_compare_exchange_weak(&st->max_live, &m, live)) {
    }
    return 1;
}

static sched_status tp_run(void *ud, int stage, sched_batch *b, int worker)
{
    (void)worker;
    tp_state *st = ud;
    tp_batch *tb = b->data;
    if (stage == 0) {
        for (int i = 0; i < tb->n; i++) st->hash = st->hash * 31 + (uint64_t)tb->v[i];
    } else if (stage == 1) {
        for (int i = 0; i < tb->n; i++) {
            if (tb->first + i == st->fail_at_item) return SCHED_STOP;
            tb->v[i] = tb->v[i] * tb->v[i];
        }
    } else {
        if (st->fail_at_item >= 0 && tb->first > st->fail_at_item) atomic_fetch_add(&st->ran_after_stop, 1);
        for (int i = 0; i < tb->n; i++) st->out[st->nout++] = tb->v[i];
    }
    return SCHED_CONTINUE;
}

static void tp_release(void *ud, sched_batch *b, int worker)
{
    (void)worker;
    tp_state *st = ud;
    free(b->data);
    atomic_fetch_sub(&st->live, 1);
    atomic_fetch_add(&st->released, 1);
}

static void tp_check(int workers, int max_batches, int n, int per, int fail_at, int fail_source)
{
    sched_pool *pool = stc__sched_pool_new(workers);
    CHECK(pool != NULL);
    if (!pool) return;
    tp_state st = {.n = n, .per = per, .fail_at_item = fail_at, .fail_source_at = fail_source};
    st.out = calloc((size_t)n + 1, sizeof *st.out);
    static const bool serial[3] = {true, false, true};
    sched_pipeline pl = {.nstages = 3, .serial = serial, .run = tp_run, .source = tp_source,
                         .release = tp_release, .ud = &st, .max_batches = max_batches};
    for (int round = 0; round < 2; round++) { /* the pool runs several jobs */
        st.produced = 0;
        st.hash = 0;
        st.nout = 0;
        atomic_store(&st.released, 0);
        CHECK_INT(stc__sched_run(pool, &pl), 0);
        uint64_t hash = 0;
        int limit = n;
        if (fail_source >= 0 && fail_source < limit) limit = fail_source;
        for (int i = 0; i < n; i++) hash = hash * 31 + (uint64_t)i;
        if (fail_at < 0 && fail_source < 0) {
            CHECK_INT(st.nout, n);
            CHECK(st.hash == hash);
        }
        int expect_out = limit;
        if (fail_at >= 0) expect_out = fail_at / per * per; /* batches before the failing one */
        if (fail_at < 0 || fail_source >= 0) CHECK(st.nout >= (expect_out < limit ? expect_out : limit));
        else CHECK(st.nout >= expect_out);
        /* The failing batch itself still reaches stage 2, with the items
         * from the failing one on left unsquared: only earlier ones count. */
        for (int i = 0; i < st.nout && (fail_at < 0 || i < fail_at); i++) CHECK_INT(st.out[i], (int64_t)i * i);
        CHECK_INT(atomic_load(&st.live), 0);
        CHECK(atomic_load(&st.max_live) <= max_batches);
        CHECK_INT(atomic_load(&st.ran_after_stop), 0);
    }
    free(st.out);
    stc__sched_pool_free(pool);
}

TEST(sched_pipeline_order_all_worker_counts)
{
    int workers[] = {1, 2, 3, 8};
    int caps[] = {1, 2, 16};
    for (int w = 0; w < 4; w++)
        for (int c = 0; c < 3; c++) {
            tp_check(workers[w], caps[c], 1000, 8, -1, -1);
            tp_check(workers[w], caps[c], 7, 3, -1, -1);
            tp_check(workers[w], caps[c], 0, 3, -1, -1);
        }
}

TEST(sched_pipeline_stop_keeps_earlier_batches)
{
    int workers[] = {1, 2, 4};
    for (int w = 0; w < 3; w++)
        for (int c = 1; c <= 8; c *= 2) {
            tp_check(workers[w], c, 500, 4, 0, -1);
            tp_check(workers[w], c, 500, 4, 1, -1);
            tp_check(workers[w], c, 500, 4, 250, -1);
            tp_check(workers[w], c, 500, 4, 499, -1);
            tp_check(workers[w], c, 500, 4, -1, 0);
            tp_check(workers[w], c, 500, 4, -1, 100);
        }
}

TEST(sched_pool_rejects_bad_args)
{
    CHECK(stc__sched_pool_new(0) == NULL);
    stc__sched_pool_free(NULL);
    sched_pool *pool = stc__sched_pool_new(2);
    CHECK_INT(stc__sched_run(pool, NULL), -1);
    CHECK_INT(stc__sched_pool_workers(pool), 2);
    stc__sched_pool_free(pool);
}
