/* merge.c - signals: several sources merged into one event stream of
 * (source index, item) tuples (stc_merge_*, see stc.h).
 *
 * Fairness is round robin: after serving source i the merge asks i + 1
 * first, so a busy source cannot starve the others.  Sources that never
 * say STC_STREAM_AGAIN (files, generators) therefore interleave one item
 * each in index order, which makes the merged order, and so the run,
 * reproducible. */
#include <stdlib.h>
#include <time.h>

#include "eval/eval_internal.h"

struct stc_merge {
    size_t n;
    stc_source_fn *sources;
    void **uds;
    bool *ended;
    size_t open;    /* sources not yet ended */
    size_t next;    /* the source asked first next time */
    void (*wait)(void *wait_ud);
    void *wait_ud;
};

stc_merge *stc_merge_new(size_t n, const stc_source_fn *sources, void *const *uds, void (*wait)(void *wait_ud),
                         void *wait_ud)
{
    if (n == 0 || !sources || n > ((size_t)1 << 20)) return NULL;
    for (size_t i = 0; i < n; i++)
        if (!sources[i]) return NULL;
    stc_merge *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->sources = malloc(n * sizeof *m->sources);
    m->uds = calloc(n, sizeof *m->uds);
    m->ended = calloc(n, sizeof *m->ended);
    if (!m->sources || !m->uds || !m->ended) {
        stc_merge_free(m);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        m->sources[i] = sources[i];
        m->uds[i] = uds ? uds[i] : NULL;
    }
    m->n = m->open = n;
    m->wait = wait;
    m->wait_ud = wait_ud;
    return m;
}

void stc_merge_free(stc_merge *m)
{
    if (!m) return;
    free(m->sources);
    free(m->uds);
    free(m->ended);
    free(m);
}

int stc_merge_source(void *merge, stc_value *item, stc_ctx *cx)
{
    stc_merge *m = merge;
    if (!m || !item) return STC_EINVAL;
    for (;;) {
        if (m->open == 0) return 0;
        for (size_t k = 0; k < m->n; k++) {
            size_t i = (m->next + k) % m->n;
            if (m->ended[i]) continue;
            stc_value v = stc_value_unit();
            int rc = m->sources[i](m->uds[i], &v, cx);
            if (rc == STC_STREAM_AGAIN) {
                val_release(v);
                continue;
            }
            if (rc < 0) {
                val_release(v);
                if (cx && !cx->message && !cx->error_oom) stc_ctx_error(cx, "source %zu: %s", i, stc_strerror(rc));
                return rc;
            }
            if (rc == 0) {
                val_release(v);
                m->ended[i] = true;
                m->open--;
                continue;
            }
            stc_value pair[2] = {stc_value_int((int64_t)i), v};
            *item = stc_value_new_tuple(2, pair);
            if (item->tag == STC_T_INVALID) return STC_ENOMEM;
            m->next = (i + 1) % m->n;
            return 1;
        }
        if (m->open == 0) return 0;
        /* Every open source said AGAIN. */
        if (m->wait) {
            m->wait(m->wait_ud);
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        /* A plain source's caller cannot be cancelled while we wait here,
         * so hand the decision back after a round of waiting. */
        return STC_STREAM_AGAIN;
    }
}
