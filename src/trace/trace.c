/* trace.c - the Chrome trace-event writer (see trace.h). */
#include "trace/trace.h"

#include "util/buf.h"
#include "util/utf8.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRACE_BUF_EVENTS 4096 /* per worker: about 200 KiB */

typedef struct trace_event {
    const char *name, *cat;
    uint64_t t0, t1;
    long long items, batch;
} trace_event;

/* Aligned so that two workers' counts never share a cache line. */
typedef struct trace_track {
    _Alignas(64) trace_event *ev; /* TRACE_BUF_EVENTS; written only by its worker */
    int n;
} trace_track;

struct trace_writer {
    FILE *f;
    pthread_mutex_t lock; /* guards f, out and failed */
    buf out;              /* text on its way to f (lock) */
    bool failed;
    uint64_t start_ns;    /* read-only after stc__trace_open */
    int workers;
    char *process;
    trace_track *tracks;
};

static uint64_t trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A JSON string's body into b: bytes that are not well-formed UTF-8 (a
 * file name can hold any) as U+FFFD, as the value printers write them. */
static void trace_buf_str(buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            stc__buf_put(b, esc, 2);
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            stc__buf_put(b, esc, 6);
        } else if (c < 0x80) {
            stc__buf_putc(b, (char)c);
        } else {
            i += stc__utf8_put_json(b, (const unsigned char *)s + i, len - i) - 1;
        }
    }
}

/* The same to f. */
static void trace_json_str(FILE *f, const char *s)
{
    buf b = BUF_INIT;
    trace_buf_str(&b, s);
    if (b.len) fwrite(b.data, 1, b.len, f);
    stc__buf_free(&b);
}

/* Decimal digits of v; with frac3, v is thousandths, printed as N.NNN. */
static void trace_buf_num(buf *b, uint64_t v, bool frac3)
{
    char d[24];
    int n = 0;
    for (int i = 0; i < (frac3 ? 3 : 0); i++, v /= 10) d[n++] = (char)('0' + v % 10);
    if (frac3) d[n++] = '.';
    do d[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    char out[24];
    for (int i = 0; i < n; i++) out[i] = d[n - 1 - i];
    stc__buf_put(b, out, (size_t)n);
}

trace_writer *stc__trace_open(const char *path, int workers, const char *process_name)
{
    trace_writer *tw = calloc(1, sizeof *tw);
    if (!tw) return NULL;
    tw->workers = workers;
    tw->tracks = aligned_alloc(64, (size_t)workers * sizeof *tw->tracks);
    if (tw->tracks) memset(tw->tracks, 0, (size_t)workers * sizeof *tw->tracks);
    tw->process = strdup(process_name ? process_name : "stc");
    bool ok = tw->tracks && tw->process;
    for (int i = 0; ok && i < workers; i++)
        ok = (tw->tracks[i].ev = malloc(TRACE_BUF_EVENTS * sizeof(trace_event))) != NULL;
    if (!ok) errno = ENOMEM;
    if (ok && !(tw->f = fopen(path, "w"))) ok = false;
    if (!ok) {
        int e = errno;
        for (int i = 0; tw->tracks && i < workers; i++) free(tw->tracks[i].ev);
        free(tw->tracks);
        free(tw->process);
        free(tw);
        errno = e;
        return NULL;
    }
    pthread_mutex_init(&tw->lock, NULL);
    tw->start_ns = trace_now();
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", tw->f);
    return tw;
}

/* Writes track t's events; called with tw->lock held.  The text is put
 * together by hand in tw->out and written 16 KiB at a time: with fprintf a
 * flush of 4096 events held its worker up for about 2 ms. */
static void trace_flush(trace_writer *tw, trace_track *t, int worker)
{
    buf *b = &tw->out;
    for (int i = 0; i < t->n; i++) {
        const trace_event *e = &t->ev[i];
        uint64_t t0 = e->t0 > tw->start_ns ? e->t0 - tw->start_ns : 0;
        uint64_t t1 = e->t1 > e->t0 ? e->t1 - e->t0 : 0;
        stc__buf_puts(b, "{\"name\": \"");
        trace_buf_str(b, e->name);
        stc__buf_puts(b, "\", \"cat\": \"");
        trace_buf_str(b, e->cat);
        stc__buf_puts(b, "\", \"ph\": \"X\", \"ts\": ");
        trace_buf_num(b, t0, true); /* ns as microseconds with 3 decimals */
        stc__buf_puts(b, ", \"dur\": ");
        trace_buf_num(b, t1, true);
        stc__buf_puts(b, ", \"pid\": 1, \"tid\": ");
        trace_buf_num(b, (uint64_t)worker, false);
        if (e->items >= 0 || e->batch >= 0) {
            stc__buf_puts(b, ", \"args\": {");
            if (e->items >= 0) {
                stc__buf_puts(b, "\"items\": ");
                trace_buf_num(b, (uint64_t)e->items, false);
                if (e->batch >= 0) stc__buf_puts(b, ", ");
            }
            if (e->batch >= 0) {
                stc__buf_puts(b, "\"batch\": ");
                trace_buf_num(b, (uint64_t)e->batch, false);
            }
            stc__buf_putc(b, '}');
        }
        stc__buf_puts(b, "},\n");
        if (b->len >= 16384 || i == t->n - 1) {
            if (!buf_ok(b) || fwrite(b->data, 1, b->len, tw->f) != b->len) tw->failed = true;
            b->len = 0;
        }
    }
    t->n = 0;
    if (ferror(tw->f)) tw->failed = true;
}

void stc__trace_slice(trace_writer *tw, int worker, const char *name, const char *cat, uint64_t t0_ns,
                 uint64_t t1_ns, long long items, long long batch)
{
    if (!tw || worker < 0 || worker >= tw->workers) return;
    trace_track *t = &tw->tracks[worker];
    if (t->n == TRACE_BUF_EVENTS) {
        /* The flush is a slice of its own: it takes a millisecond or two,
         * and an unexplained gap on the track would be blamed on the run. */
        uint64_t f0 = trace_now();
        pthread_mutex_lock(&tw->lock);
        trace_flush(tw, t, worker);
        pthread_mutex_unlock(&tw->lock);
        t->ev[t->n++] = (trace_event){"trace write", "trace", f0, trace_now(), -1, -1};
    }
    t->ev[t->n++] = (trace_event){name, cat, t0_ns, t1_ns, items, batch};
}

int stc__trace_close(trace_writer *tw)
{
    if (!tw) return 0;
    for (int w = 0; w < tw->workers; w++) trace_flush(tw, &tw->tracks[w], w);
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"", tw->f);
    trace_json_str(tw->f, tw->process);
    fputs("\"}}", tw->f);
    for (int w = 0; w < tw->workers; w++)
        fprintf(tw->f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
                       "\"args\": {\"name\": \"worker %d%s\"}}", w, w, w == 0 ? " (main)" : "");
    fputs("\n]}\n", tw->f);
    bool failed = tw->failed || ferror(tw->f);
    if (fclose(tw->f) != 0) failed = true;
    pthread_mutex_destroy(&tw->lock);
    for (int w = 0; w < tw->workers; w++) free(tw->tracks[w].ev);
    free(tw->tracks);
    free(tw->process);
    stc__buf_free(&tw->out);
    free(tw);
    return failed ? -1 : 0;
}
