/* cache.h - per-thread caches of freed value blocks.
 *
 * In a pipeline, a value made by one worker is usually freed by another
 * (an item's string is split at one stage and dropped at a later one, on
 * whichever worker runs it).  glibc's malloc keeps only 7 freed blocks per
 * size in a thread's own cache; past that, a free takes the lock of the
 * arena the block came from, which the allocating worker holds for its own
 * mallocs: fine-grained items then run slower on 2 workers than on 1, and
 * the arenas grow unevenly.  A worker with a val_cache keeps up to
 * VAL_CACHE_BYTES of freed blocks per size class and reuses them for its
 * next values without any lock; the blocks themselves stay malloc blocks,
 * so a block may still be freed anywhere (a result released by the host
 * after the run goes to free()).
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

/* Blocks of at most this many bytes are cached, in 16-byte size classes. */
#define VAL_CACHE_MAX_SIZE 256
/* Bytes of freed blocks kept per size class at most; the rest go to free(). */
#define VAL_CACHE_BYTES (32 * 1024)

/* NULL when out of memory. */
val_cache *val_cache_new(void);
/* Frees the cached blocks and c; c must be no thread's current cache.
 * NULL is a no-op. */
void val_cache_free(val_cache *c);
/* Makes c (NULL: none) the calling thread's cache; returns the previous
 * one, to be put back when the thread is done with c. */
val_cache *val_cache_use(val_cache *c);
/* Bytes of freed blocks c holds now (for tests and statistics). */
size_t val_cache_held(const val_cache *c);

/* A block of at least size bytes, and its class for val_block_free (0: a
 * plain malloc block); NULL when out of memory. */
void *val_block_alloc(size_t size, uint8_t *cls);
/* The same, zero-filled. */
void *val_block_calloc(size_t size, uint8_t *cls);
/* Frees a block of class cls (from val_block_alloc, on any thread). */
void val_block_free(void *p, uint8_t cls);

#endif
