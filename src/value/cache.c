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
    val_cache_front front; /* first: cur[k], cap[k] and id, used inline (cache.h) */
    val_depot *depot;
    val_mag full[VAL_CACHE_CLASSES + 1][VAL_CACHE_KEPT];
    /* Other caches' blocks freed here, per owner id and class, on their
     * way home: a full one goes to the owner's inbox (val_cache_return). */
    val_mag away[VAL_CACHE_OWNERS + 1][VAL_CACHE_CLASSES + 1];
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
    /* Full magazines of blocks returned to cache id i (1 .. VAL_CACHE_OWNERS), per class. */
    val_mag inbox[VAL_CACHE_OWNERS + 1][VAL_CACHE_CLASSES + 1][VAL_INBOX_MAGS]; /* (lock) */
    unsigned ninbox[VAL_CACHE_OWNERS + 1][VAL_CACHE_CLASSES + 1];               /* (lock) */
    unsigned ids; /* caches given an id so far (lock) */
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
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++) {
        for (unsigned i = 0; i < d->nfull[k]; i++) val_mag_release(&d->full[k][i], k);
        for (unsigned o = 1; o <= VAL_CACHE_OWNERS; o++)
            for (unsigned i = 0; i < d->ninbox[o][k]; i++) val_mag_release(&d->inbox[o][k][i], k);
    }
    pthread_mutex_destroy(&d->lock);
    free(d);
}

size_t stc__val_depot_held(val_depot *d)
{
    size_t n = 0;
    if (!d) return 0;
    pthread_mutex_lock(&d->lock);
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++) {
        for (unsigned i = 0; i < d->nfull[k]; i++) n += d->full[k][i].count * val_class_size(k);
        for (unsigned o = 1; o <= VAL_CACHE_OWNERS; o++)
            for (unsigned i = 0; i < d->ninbox[o][k]; i++) n += d->inbox[o][k][i].count * val_class_size(k);
    }
    pthread_mutex_unlock(&d->lock);
    return n;
}

/* Hands full magazine *m to the inbox of cache id owner (0: to no inbox)
 * or, when that holds enough, to the depot's shared ones, or frees its
 * blocks; *m is empty after. */
static void val_depot_put(val_depot *d, val_mag *m, unsigned cls, unsigned owner)
{
    bool kept = false;
    if (d) {
        pthread_mutex_lock(&d->lock);
        if (owner && d->ninbox[owner][cls] < VAL_INBOX_MAGS) {
            d->inbox[owner][cls][d->ninbox[owner][cls]++] = *m;
            kept = true;
        } else if (d->nfull[cls] < VAL_DEPOT_MAGS) {
            d->full[cls][d->nfull[cls]++] = *m;
            kept = true;
        }
        pthread_mutex_unlock(&d->lock);
    }
    if (kept) *m = (val_mag){NULL, 0};
    else val_mag_release(m, cls);
}

/* A full magazine into (empty) *m for cache id owner: from its inbox, else
 * from the depot's shared ones; false when there is none. */
static bool val_depot_take(val_depot *d, val_mag *m, unsigned cls, unsigned owner)
{
    bool got = false;
    if (!d) return false;
    pthread_mutex_lock(&d->lock);
    if (owner && d->ninbox[owner][cls] > 0) {
        *m = d->inbox[owner][cls][--d->ninbox[owner][cls]];
        got = true;
    } else if (d->nfull[cls] > 0) {
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
        for (unsigned i = 0; i < spill; i++) val_depot_put(c->depot, &c->full[k][i], k, 0);
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
    if (d) {
        pthread_mutex_lock(&d->lock);
        if (d->ids < VAL_CACHE_OWNERS) c->front.id = (uint8_t)++d->ids;
        pthread_mutex_unlock(&d->lock);
    }
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++) c->front.cap[k] = val_mag_cap(k);
    return c;
}

void stc__val_cache_free(val_cache *c)
{
    if (!c) return;
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++) {
        val_mag_release(&c->front.cur[k], k);
        for (unsigned i = 0; i < c->nfull[k]; i++) val_mag_release(&c->full[k][i], k);
        for (unsigned o = 1; o <= VAL_CACHE_OWNERS; o++) val_mag_release(&c->away[o][k], k);
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
        for (unsigned o = 1; o <= VAL_CACHE_OWNERS; o++) n += c->away[o][k].count * val_class_size(k);
    }
    return n;
}

void *stc__val_block_alloc(size_t size, uint8_t *cls, uint8_t *owner)
{
    val_cache *c = val_cache_here_get();
    *owner = c ? c->front.id : 0;
    if (size > VAL_CACHE_MAX_SIZE) {
        *cls = 0;
        return malloc(size);
    }
    /* Small blocks get their class's full size even from malloc, so that
     * whichever thread frees them can cache them. */
    unsigned k = size ? (unsigned)((size + VAL_CACHE_GRAIN - 1) / VAL_CACHE_GRAIN) : 1;
    *cls = (uint8_t)k;
    if (c) {
        val_mag *cur = &c->front.cur[k];
        if (!cur->head) { /* empty: a full one of ours, else one from the depot */
            if (c->nfull[k] > 0) {
                *cur = c->full[k][--c->nfull[k]];
                c->kept--;
                if (c->nfull[k] < c->low[k]) c->low[k] = c->nfull[k];
                if (++c->moves >= VAL_CACHE_TRIM_MOVES) val_cache_trim(c);
            } else {
                val_depot_take(c->depot, cur, k, c->front.id);
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

void *stc__val_block_calloc(size_t size, uint8_t *cls, uint8_t *owner)
{
    if (size > VAL_CACHE_MAX_SIZE) {
        val_cache *c = val_cache_here_get();
        *cls = 0;
        *owner = c ? c->front.id : 0;
        return calloc(1, size); /* large: fresh zero pages, no pass to clear them */
    }
    void *p = stc__val_block_alloc(size, cls, owner);
    if (p) memset(p, 0, size);
    return p;
}

/* Another cache's block, freed here: collected with others of its owner
 * and class, a full magazine of them sent to the owner's inbox (cache.h,
 * "Blocks go home"). */
static void val_cache_send_home(val_cache *c, void *p, unsigned cls, unsigned owner)
{
    val_mag *m = &c->away[owner][cls];
    if (m->count >= c->front.cap[cls]) val_depot_put(c->depot, m, cls, owner);
    val_cache_block *b = p;
    b->next = m->head;
    m->head = b;
    m->count++;
    val_cache_poison(b, val_class_size(cls));
}

void stc__val_block_free(void *p, uint8_t cls, uint8_t owner)
{
    val_cache *c = val_cache_here_get();
    if (!p) return;
    if (cls == 0 || cls > VAL_CACHE_CLASSES || !c) {
        free(p);
        return;
    }
    if (owner != c->front.id && owner != 0 && owner <= VAL_CACHE_OWNERS && c->depot) {
        val_cache_send_home(c, p, cls, owner);
        return;
    }
    val_mag *cur = &c->front.cur[cls];
    if (cur->count >= c->front.cap[cls]) { /* full: kept, or to the depot when we keep enough */
        if (c->kept < VAL_CACHE_KEPT) {
            c->full[cls][c->nfull[cls]++] = *cur;
            c->kept++;
        } else {
            val_depot_put(c->depot, cur, cls, 0);
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
