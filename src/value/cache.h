/* cache.h - per-thread caches of freed value blocks.
 *
 * In a pipeline, a value made by one worker is usually freed by another
 * (an item's string is split at one stage and dropped at a later one, on
 * whichever worker runs it).  glibc's malloc keeps only 7 freed blocks per
 * size in a thread's own cache; past that, a free takes the lock of the
 * arena the block came from, which the allocating worker holds for its own
 * mallocs: fine-grained items then run slower on 2 workers than on 1, and
 * the arenas grow unevenly.
 *
 * A worker with a val_cache keeps freed blocks per 16-byte size class and
 * reuses them for its next values without any lock.  The blocks of a class
 * are held in magazines of VAL_CACHE_MAG_BYTES (after Bonwick's slab
 * allocator): the one in use per class and up to VAL_CACHE_KEPT full ones
 * in the cache; further full ones go to a val_depot shared by the run's
 * workers.  The cache must hold what a worker frees when it releases a
 * batch (hundreds of items of a cheap stream): with two magazines per
 * class, most of those blocks went through the depot to the other worker,
 * whose next batch then wrote to memory last written on the other core, a
 * cache-line transfer per block, and every stage's time per item doubled
 * at 2 workers (bench/stream_scale.sh).  A worker that frees more than it
 * allocates (it runs the later stages) hands full magazines to the depot,
 * both past that bound and those it kept but did not use by its next trim
 * (every VAL_CACHE_TRIM_MOVES magazine moves, cache.c); one that allocates
 * more takes them from there: one lock per magazine, and the memory the
 * caches hold stays bounded however long the run.  The blocks
 * stay malloc blocks, so a block may be freed anywhere (a result released
 * by the host after the run goes to free()).
 *
 * Blocks go home.  Each cache of a depot has an id (1 .. VAL_CACHE_OWNERS,
 * 0 for later ones), and a block carries the id of the cache that last
 * allocated it (stc_obj.owner).  A cache that frees another's block does
 * not reuse it: it collects such blocks per owner and class, and hands a
 * full magazine of them to the owner's inbox in the depot, from which the
 * owner takes them before it takes the depot's shared ones or calls
 * malloc.  Reused by the freeing worker, a block is written on a cache
 * line whose other blocks the owner keeps writing: the two workers' stores
 * to one line ping-pong it between the cores at every value (false
 * sharing).  Forcing every block onto lines of its own (64-byte aligned
 * and sized) took logstats at 2 workers from 0.74 to 0.59 s of CPU; see
 * docs/DESIGN.md 5, "Values on workers".
 *
 * The cache a thread uses is a thread-local pointer, set only while the
 * thread works for a run (flow: the pipeline's on_worker hook), so separate
 * runs and programs never share one and nothing global remains after a
 * run. */
#ifndef STC_VALUE_CACHE_H
#define STC_VALUE_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct val_cache val_cache;
typedef struct val_depot val_depot;

/* Blocks of at most this many bytes are cached, in 16-byte size classes. */
#define VAL_CACHE_MAX_SIZE 256
#define VAL_CACHE_GRAIN 16
#define VAL_CACHE_CLASSES (VAL_CACHE_MAX_SIZE / VAL_CACHE_GRAIN)
/* A magazine holds this many bytes of blocks of its class. */
#define VAL_CACHE_MAG_BYTES (8 * 1024)
/* Full magazines a cache keeps for its own thread (all classes together),
 * besides the one in use per class; more go to the depot.  About what a
 * worker has in flight at 2 workers (2-3 batches): a batch of 331 cheap
 * lines (`len(words(l))`) frees some 20 magazines; with 4 kept most went
 * through the depot's shared ones to the other worker (see above). */
#define VAL_CACHE_KEPT 16
/* Full magazines a depot keeps per class at most; more go to free().  At
 * most 2 MiB over the 16 classes.  Rank 0 of an MPI run decodes its
 * batches' replies in bursts (a batch's parsed records, 3 objects a line
 * on logstats) and frees them stages later: with 4, most of those blocks
 * went to free() and came back from malloc (callgrind on rank 0, 40,000
 * lines: 74,352 mallocs, 70,920 frees; docs/DESIGN.md 7c). */
#define VAL_DEPOT_MAGS 16
/* Caches of one depot that get an id of their own (the first ones made);
 * blocks of a cache without one are kept by whoever frees them. */
#define VAL_CACHE_OWNERS 16
/* Full magazines of returned blocks an owner's inbox holds per class;
 * more go to the depot's shared ones. */
#define VAL_INBOX_MAGS 4

/* NULL when out of memory. */
val_depot *stc__val_depot_new(void);
/* Frees the depot's blocks and d; no cache may use d any more. NULL: no-op. */
void stc__val_depot_free(val_depot *d);

/* A cache exchanging magazines with depot d (NULL: none, full magazines
 * are freed); NULL when out of memory. */
val_cache *stc__val_cache_new(val_depot *d);
/* Frees the cached blocks and c; c must be no thread's current cache.
 * NULL is a no-op. */
void stc__val_cache_free(val_cache *c);
/* Makes c (NULL: none) the calling thread's cache; returns the previous
 * one, to be put back when the thread is done with c. */
val_cache *stc__val_cache_use(val_cache *c);
/* Bytes of freed blocks c, or d, holds now (for tests and statistics). */
size_t stc__val_cache_held(const val_cache *c);
size_t stc__val_depot_held(val_depot *d);

/* A block of at least size bytes, its class for stc__val_block_free (0: a
 * plain malloc block) and its owner (the calling thread's cache's id, 0
 * for none), which the caller keeps with the block (stc_obj) and passes
 * back when it frees it; NULL when out of memory. */
void *stc__val_block_alloc(size_t size, uint8_t *cls, uint8_t *owner);
/* The same, zero-filled. */
void *stc__val_block_calloc(size_t size, uint8_t *cls, uint8_t *owner);
/* Frees a block of class cls and owner owner (from stc__val_block_alloc,
 * on any thread). */
void stc__val_block_free(void *p, uint8_t cls, uint8_t owner);

/* ---- Inline fast paths ------------------------------------------------------
 *
 * val_block_alloc and val_block_free do what stc__val_block_alloc/free do;
 * the common case (the class's magazine in use has a block, or room for
 * one) inline, in the caller, everything else (magazine moves, the depot,
 * malloc) in the functions above.  A logstats line allocates and frees
 * about 20 blocks: the calls and their prologues were ~6% of its
 * instructions (docs/DESIGN.md 2, "Allocation and strings").  Under
 * AddressSanitizer the functions are always called: they poison cached
 * blocks. */

typedef struct val_cache_block {
    struct val_cache_block *next;
} val_cache_block;

/* A chain of freed blocks of one class. */
typedef struct val_mag {
    val_cache_block *head;
    unsigned count;
} val_mag;

/* The start of every val_cache (cache.c): per class, the magazine blocks
 * come from and go to, and how many blocks it may hold. */
typedef struct val_cache_front {
    val_mag cur[VAL_CACHE_CLASSES + 1];
    unsigned cap[VAL_CACHE_CLASSES + 1];
    uint8_t id; /* the owner of the blocks it hands out; 0: none */
} val_cache_front;

/* The calling thread's cache (its front), or NULL: set by
 * stc__val_cache_use only, read by its own thread only. */
#if defined(__GNUC__) && !defined(STC_NO_TLS_MODEL)
extern _Thread_local val_cache_front *stc__val_cache_here __attribute__((tls_model("initial-exec")));
#else
extern _Thread_local val_cache_front *stc__val_cache_here;
#endif

#if defined(__SANITIZE_ADDRESS__)
#define VAL_CACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VAL_CACHE_ASAN 1
#endif
#endif

static inline void *val_block_alloc(size_t size, uint8_t *cls, uint8_t *owner)
{
#ifndef VAL_CACHE_ASAN
    val_cache_front *c = stc__val_cache_here;
    if (c && size - 1 < VAL_CACHE_MAX_SIZE) {
        unsigned k = (unsigned)((size + VAL_CACHE_GRAIN - 1) / VAL_CACHE_GRAIN);
        val_mag *cur = &c->cur[k];
        val_cache_block *b = cur->head;
        if (b) {
            cur->head = b->next;
            cur->count--;
            *cls = (uint8_t)k;
            *owner = c->id;
            return b;
        }
    }
#endif
    return stc__val_block_alloc(size, cls, owner);
}

static inline void val_block_free(void *p, uint8_t cls, uint8_t owner)
{
#ifndef VAL_CACHE_ASAN
    val_cache_front *c = stc__val_cache_here;
    if (c && (unsigned)cls - 1 < VAL_CACHE_CLASSES && owner == c->id && c->cur[cls].count < c->cap[cls]) {
        val_mag *cur = &c->cur[cls];
        val_cache_block *b = p;
        b->next = cur->head;
        cur->head = b;
        cur->count++;
        return;
    }
#endif
    stc__val_block_free(p, cls, owner);
}

#endif
