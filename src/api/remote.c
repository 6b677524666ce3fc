/* remote.c - stc_remote_server (include/stc.h): the answering side of a
 * remote executor, over the flow layer's (src/flow/remote_serve.c), and
 * what it answered: counts and busy time per stage, and spans for a
 * trace (the host carries them to where it reports them). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/program.h"
#include "flow/flow.h"
#include "util/buf.h"

typedef struct server_row {
    flow_remote_seen key;  /* kind, smap, fn, stage (items unused) */
    char *name, *kind, *smap;
    stc_remote_stage_stats st;
} server_row;

struct stc_remote_server {
    flow_remote_server *s;
    server_row *rows;
    size_t nrows, rows_cap, last; /* last: the row the previous request used */
    stc_remote_span *spans;
    size_t nspans, spans_cap, spans_max;
    long long dropped;
};

static unsigned long long server_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

stc_remote_server *stc_remote_server_new(const stc_program *prog)
{
    if (!prog || !prog->ir) return NULL;
    stc_remote_server *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    if (!(r->s = stc__flow_remote_server_new(prog->ir))) {
        free(r);
        return NULL;
    }
    return r;
}

static bool same_key(const flow_remote_seen *a, const flow_remote_seen *b)
{
    return a->kind == b->kind &&
           (a->kind != FLOW_SEEN_BATCH || (a->smap == b->smap && a->fn == b->fn && a->stage == b->stage));
}

/* The row of request w, made at its first batch; NULL when out of memory
 * (the request then goes uncounted: counts never fail an answer). */
static server_row *server_row_of(stc_remote_server *r, const flow_remote_seen *w)
{
    if (r->last < r->nrows && same_key(&r->rows[r->last].key, w)) return &r->rows[r->last];
    for (size_t i = 0; i < r->nrows; i++)
        if (same_key(&r->rows[i].key, w)) return &r->rows[r->last = i];
    if (r->nrows == r->rows_cap) {
        size_t cap = r->rows_cap ? 2 * r->rows_cap : 8;
        server_row *m = realloc(r->rows, cap * sizeof *m);
        if (!m) return NULL;
        r->rows = m, r->rows_cap = cap;
    }
    server_row row = {.key = *w};
    buf name = BUF_INIT, kind = BUF_INIT, where = BUF_INIT;
    int line = 0;
    bool serial = false;
    if (w->kind == FLOW_SEEN_BATCH) {
        if (stc__flow_remote_server_describe(r->s, w, &name, &kind, &where, &line, &serial) != 0) {
            stc__buf_free(&name), stc__buf_free(&kind), stc__buf_free(&where);
            return NULL;
        }
    } else {
        stc__buf_puts(&name, w->kind == FLOW_SEEN_FETCH ? "states back" : "refused");
        stc__buf_puts(&kind, "");
        stc__buf_puts(&where, "");
    }
    row.name = stc__buf_take(&name), row.kind = stc__buf_take(&kind), row.smap = stc__buf_take(&where);
    if (!row.name || !row.kind || !row.smap) {
        free(row.name), free(row.kind), free(row.smap);
        return NULL;
    }
    row.st = (stc_remote_stage_stats){.name = row.name, .kind = row.kind, .smap = row.smap, .line = line,
                                      .serial = serial};
    r->rows[r->nrows] = row;
    return &r->rows[r->last = r->nrows++];
}

/* Counts request (len bytes, answered with rc and reply_len bytes in
 * [t0, t1]) in its row, and keeps its span when recording. */
static void server_count(stc_remote_server *r, size_t len, int rc, size_t reply_len, unsigned long long t0,
                         unsigned long long t1)
{
    flow_remote_seen w = stc__flow_remote_server_seen(r->s);
    server_row *row = server_row_of(r, &w);
    if (!row) return;
    stc_remote_stage_stats *st = &row->st;
    long long items = w.kind == FLOW_SEEN_BATCH && !rc ? w.items : 0;
    st->batches++;
    st->items += items;
    st->bytes_in += (long long)len;
    st->bytes_out += rc ? 0 : (long long)reply_len;
    st->busy_ms += (double)(t1 - t0) / 1e6;
    if (!r->spans_max) return;
    if (r->nspans == r->spans_cap && r->nspans < r->spans_max) {
        size_t cap = r->spans_cap ? 2 * r->spans_cap : 256;
        if (cap > r->spans_max) cap = r->spans_max;
        stc_remote_span *m = realloc(r->spans, cap * sizeof *m);
        if (m) r->spans = m, r->spans_cap = cap;
    }
    if (r->nspans < r->spans_cap && r->nspans < r->spans_max)
        r->spans[r->nspans++] = (stc_remote_span){(size_t)(row - r->rows), items, t0, t1};
    else r->dropped++;
}

int stc_remote_server_handle(stc_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len)
{
    if (!s || !reply || !reply_len || (!req && len)) return STC_EINVAL;
    unsigned long long t0 = server_now();
    int rc = stc__flow_remote_serve(s->s, req ? req : "", len, reply, reply_len);
    server_count(s, len, rc, rc ? 0 : *reply_len, t0, server_now());
    return rc;
}

size_t stc_remote_server_stage_count(const stc_remote_server *s) { return s ? s->nrows : 0; }

stc_remote_stage_stats stc_remote_server_stage(const stc_remote_server *s, size_t i)
{
    return s && i < s->nrows ? s->rows[i].st : (stc_remote_stage_stats){0};
}

void stc_remote_server_record(stc_remote_server *s, size_t max)
{
    if (s) s->spans_max = max;
}

size_t stc_remote_server_span_count(const stc_remote_server *s) { return s ? s->nspans : 0; }

stc_remote_span stc_remote_server_span(const stc_remote_server *s, size_t i)
{
    return s && i < s->nspans ? s->spans[i] : (stc_remote_span){0};
}

long long stc_remote_server_spans_dropped(const stc_remote_server *s) { return s ? s->dropped : 0; }

void stc_remote_server_free(stc_remote_server *s)
{
    if (!s) return;
    stc__flow_remote_server_free(s->s);
    for (size_t i = 0; i < s->nrows; i++) free(s->rows[i].name), free(s->rows[i].kind), free(s->rows[i].smap);
    free(s->rows);
    free(s->spans);
    free(s);
}
