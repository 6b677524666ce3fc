/* cache.c - per-thread caches of freed value blocks (see cache.h). */
#include "value/cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Under AddressSanitizer a cached block is poisoned, so a use after its
 * value was freed is still reported although free() was not called
 * (VAL_CACHE_ASAN: cache.h). */
#ifdef VAL_CACHE_ASAN
#include <sanitizer/asan_interface.h>
#define val_cache_poison(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define val_cache_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define val_cache_poison(p, n) ((void)(p), (void)(n))
#define val_cache_unpoison(p, n) ((void)(p), (void)(n))
#endif

/* Used by one thread at a time: the one whose current cache it is.  Per
 * class, cur is where blocks come and go, and full[0 .. nfull) are full
 * magazines kept for this thread's next allocations, the newest last
 * (classes 1 .. VAL_CACHE_CLASSES).  low is the fewest full ones a class
 * had since the last trim: that many were not needed (see val_cache_trim). */
struct val_cache {
    val_cache_front front; /* first: cur[k] and cap[k], used inline (cache.h) */
    val_depot *depot;
    val_mag full[VAL_CACHE_CLASSES + 1][VAL_CACHE_KEPT];
    unsigned nfull[VAL_CACHE_CLASSES + 1], low[VAL_CACHE_CLASSES + 1];
    unsigned moves; /* magazines kept or taken since the last trim */
    unsigned kept;  /* full magazines kept, all classes */
};

/* A trim after this many magazine moves. */
#define VAL_CACHE_TRIM_MOVES 64

struct val_depot {
    pthread_mutex_t lock;
    val_mag full[VAL_CACHE_CLASSES + 1][VAL_DEPOT_MAGS]; /* (lock) */
    unsigned nfull[VAL_CACHE_CLASSES + 1];               /* (lock) */
};

/* The calling thread's cache, or NULL (then blocks come from malloc and go
 * back to free).  Thread-local, so no lock: see cache.h for who sets it. */
_Thread_local val_cache_front *stc__val_cache_here;

static val_cache *val_cache_here_get(void) { return (val_cache *)stc__val_cache_here; }

static size_t val_class_size(unsigned cls) { return (size_t)cls * VAL_CACHE_GRAIN; }

static unsigned val_mag_cap(unsigned cls) { return VAL_CACHE_MAG_BYTES / (unsigned)val_class_size(cls); }

static void val_mag_release(val_mag *m, unsigned cls)
{
    while (m->head) {
        val_cache_block *b = m->head;
        val_cache_unpoison(b, val_class_size(cls));
        m->head = b->next;
        free(b);
    }
    m->count = 0;
}

val_depot *stc__val_depot_new(void)
{
    val_depot *d = calloc(1, sizeof *d);
    if (d && pthread_mutex_init(&d->lock, NULL) != 0) {
        free(d);
        return NULL;
    }
    return d;
}

void stc__val_depot_free(val_depot *d)
{
    if (!d) return;
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++)
        for (unsigned i = 0; i < d->nfull[k]; i++) val_mag_release(&d->full[k][i], k);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

size_t stc__val_depot_held(val_depot *d)
{
    size_t n = 0;
    if (!d) return 0;
    pthread_mutex_lock(&d->lock);
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++)
        for (unsigned i = 0; i < d->nfull[k]; i++) n += d->full[k][i].count * val_class_size(k);
    pthread_mutex_unlock(&d->lock);
    return n;
}

/* Hands full magazine *m to the depot (or frees its blocks); *m is empty after. */
static void val_depot_put(val_depot *d, val_mag *m, unsigned cls)
{
    bool kept = false;
    if (d) {
        pthread_mutex_lock(&d->lock);
        if (d->nfull[cls] < VAL_DEPOT_MAGS) {
            d->full[cls][d->nfull[cls]++] = *m;
            kept = true;
        }
        pthread_mutex_unlock(&d->lock);
    }
    if (kept) *m = (val_mag){NULL, 0};
    else val_mag_release(m, cls);
}

/* A full magazine from the depot into (empty) *m; false when it has none. */
static bool val_depot_take(val_depot *d, val_mag *m, unsigned cls)
{
    bool got = false;
    if (!d) return false;
    pthread_mutex_lock(&d->lock);
    if (d->nfull[cls] > 0) {
        *m = d->full[cls][--d->nfull[cls]];
        got = true;
    }
    pthread_mutex_unlock(&d->lock);
    return got;
}

/* Full magazines a class kept all along since the last trim were not
 * needed by this thread: they (the oldest ones) go to the depot, where
 * another thread may need them, or are freed.  So a thread that mostly
 * frees a class (it runs the later stages) does not sit on its blocks
 * while another allocates new ones, and one that frees and allocates alike
 * keeps what it will use (after jemalloc's thread cache "low water"). */
static void val_cache_trim(val_cache *c)
{
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++) {
        unsigned spill = c->low[k];
        for (unsigned i = 0; i < spill; i++) val_depot_put(c->depot, &c->full[k][i], k);
        if (spill) {
            memmove(&c->full[k][0], &c->full[k][spill], (c->nfull[k] - spill) * sizeof c->full[k][0]);
            c->nfull[k] -= spill;
            c->kept -= spill;
        }
        c->low[k] = c->nfull[k];
    }
    c->moves = 0;
}

val_cache *stc__val_cache_new(val_depot *d)
{
    /* Cache lines of its own: the caches of a run's workers are made one
     * after the other, and neighbours in the heap would share a line that
     * both write at every allocation. */
    size_t size = (sizeof(val_cache) + 63) / 64 * 64;
    val_cache *c = aligned_alloc(64, size);
    if (!c) return NULL;
    memset(c, 0, size);
    c->depot = d;
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++) c->front.cap[k] = val_mag_cap(k);
    return c;
}

void stc__val_cache_free(val_cache *c)
{
    if (!c) return;
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++) {
        val_mag_release(&c->front.cur[k], k);
        for (unsigned i = 0; i < c->nfull[k]; i++) val_mag_release(&c->full[k][i], k);
    }
    free(c);
}

val_cache *stc__val_cache_use(val_cache *c)
{
    val_cache *prev = val_cache_here_get();
    stc__val_cache_here = c ? &c->front : NULL;
    return prev;
}

size_t stc__val_cache_held(const val_cache *c)
{
    size_t n = 0;
    for (unsigned k = 1; c && k <= VAL_CACHE_CLASSES; k++) {
        n += c->front.cur[k].count * val_class_size(k);
        for (unsigned i = 0; i < c->nfull[k]; i++) n += c->full[k][i].count * val_class_size(k);
    }
    return n;
}

void *stc__val_block_alloc(size_t size, uint8_t *cls)
{
    if (size > VAL_CACHE_MAX_SIZE) {
        *cls = 0;
        return malloc(size);
    }
    /* Small blocks get their class's full size even from malloc, so that
     * whichever thread frees them can cache them. */
    unsigned k = size ? (unsigned)((size + VAL_CACHE_GRAIN - 1) / VAL_CACHE_GRAIN) : 1;
    *cls = (uint8_t)k;
    val_cache *c = val_cache_here_get();
    if (c) {
        val_mag *cur = &c->front.cur[k];
        if (!cur->head) { /* empty: a full one of ours, else one from the depot */
            if (c->nfull[k] > 0) {
                *cur = c->full[k][--c->nfull[k]];
                c->kept--;
                if (c->nfull[k] < c->low[k]) c->low[k] = c->nfull[k];
                if (++c->moves >= VAL_CACHE_TRIM_MOVES) val_cache_trim(c);
            } else {
                val_depot_take(c->depot, cur, k);
            }
        }
        if (cur->head) {
            val_cache_block *b = cur->head;
            val_cache_unpoison(b, val_class_size(k));
            cur->head = b->next;
            cur->count--;
            return b;
        }
    }
    return malloc(val_class_size(k));
}

void *stc__val_block_calloc(size_t size, uint8_t *cls)
{
    if (size > VAL_CACHE_MAX_SIZE) {
        *cls = 0;
        return calloc(1, size); /* large: fresh zero pages, no pass to clear them */
    }
    void *p = stc__val_block_alloc(size, cls);
    if (p) memset(p, 0, size);
    return p;
}

void stc__val_block_free(void *p, uint8_t cls)
{
    val_cache *c = val_cache_here_get();
    if (!p) return;
    if (cls == 0 || cls > VAL_CACHE_CLASSES || !c) {
        free(p);
        return;
    }
    val_mag *cur = &c->front.cur[cls];
    if (cur->count >= c->front.cap[cls]) { /* full: kept, or to the depot when we keep enough */
        if (c->kept < VAL_CACHE_KEPT) {
            c->full[cls][c->nfull[cls]++] = *cur;
            c->kept++;
        } else {
            val_depot_put(c->depot, cur, cls);
        }
        *cur = (val_mag){NULL, 0};
        if (++c->moves >= VAL_CACHE_TRIM_MOVES) val_cache_trim(c);
    }
    val_cache_block *b = p;
    b->next = cur->head;
    cur->head = b;
    cur->count++;
    val_cache_poison(b, val_class_size(cls));
}
