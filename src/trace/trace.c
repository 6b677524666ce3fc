/* trace.c - the Chrome trace-event writer (see trace.h). */
#include "trace/trace.h"

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
    pthread_mutex_t lock; /* guards f and failed */
    bool failed;
    uint64_t start_ns;    /* read-only after trace_open */
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

/* A JSON string's body. */
static void trace_json_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
}

trace_writer *trace_open(const char *path, int workers, const char *process_name)
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

/* Writes track t's events; called with tw->lock held. */
static void trace_flush(trace_writer *tw, trace_track *t, int worker)
{
    for (int i = 0; i < t->n; i++) {
        const trace_event *e = &t->ev[i];
        uint64_t t0 = e->t0 > tw->start_ns ? e->t0 - tw->start_ns : 0;
        uint64_t t1 = e->t1 > e->t0 ? e->t1 - e->t0 : 0;
        fputs("{\"name\": \"", tw->f);
        trace_json_str(tw->f, e->name);
        /* Microseconds with 3 decimals, printed as integers: %f costs about
         * twice as much, and a flush holds up its worker. */
        fprintf(tw->f,
                "\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %llu.%03u, \"dur\": %llu.%03u, \"pid\": 1, \"tid\": %d",
                e->cat, (unsigned long long)(t0 / 1000), (unsigned)(t0 % 1000), (unsigned long long)(t1 / 1000),
                (unsigned)(t1 % 1000), worker);
        if (e->items >= 0 || e->batch >= 0) {
            fputs(", \"args\": {", tw->f);
            if (e->items >= 0) fprintf(tw->f, "\"items\": %lld%s", e->items, e->batch >= 0 ? ", " : "");
            if (e->batch >= 0) fprintf(tw->f, "\"batch\": %lld", e->batch);
            fputs("}", tw->f);
        }
        fputs("},\n", tw->f);
    }
    t->n = 0;
    if (ferror(tw->f)) tw->failed = true;
}

void trace_slice(trace_writer *tw, int worker, const char *name, const char *cat, uint64_t t0_ns,
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

int trace_close(trace_writer *tw)
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
    free(tw);
    return failed ? -1 : 0;
}
