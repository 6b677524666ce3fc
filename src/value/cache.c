/* cache.c - per-thread caches of freed value blocks (see cache.h). */
#include "value/cache.h"

#include <stdlib.h>
#include <string.h>

/* Under AddressSanitizer a cached block is poisoned, so a use after its
 * value was freed is still reported although free() was not called. */
#if defined(__SANITIZE_ADDRESS__)
#define VAL_CACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VAL_CACHE_ASAN 1
#endif
#endif
#ifdef VAL_CACHE_ASAN
#include <sanitizer/asan_interface.h>
#define val_cache_poison(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define val_cache_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define val_cache_poison(p, n) ((void)(p), (void)(n))
#define val_cache_unpoison(p, n) ((void)(p), (void)(n))
#endif

#define VAL_CACHE_GRAIN 16
#define VAL_CACHE_CLASSES (VAL_CACHE_MAX_SIZE / VAL_CACHE_GRAIN)

typedef struct val_cache_block {
    struct val_cache_block *next;
} val_cache_block;

/* Used by one thread at a time: the one whose current cache it is. */
struct val_cache {
    val_cache_block *head[VAL_CACHE_CLASSES + 1]; /* per class 1..VAL_CACHE_CLASSES */
    unsigned count[VAL_CACHE_CLASSES + 1];
};

/* The calling thread's cache, or NULL (then blocks come from malloc and go
 * back to free).  Thread-local, so no lock: see cache.h for who sets it. */
static _Thread_local val_cache *val_cache_here;

static size_t val_class_size(unsigned cls) { return (size_t)cls * VAL_CACHE_GRAIN; }

static unsigned val_class_cap(unsigned cls) { return VAL_CACHE_BYTES / (unsigned)val_class_size(cls); }

val_cache *val_cache_new(void) { return calloc(1, sizeof(val_cache)); }

void val_cache_free(val_cache *c)
{
    if (!c) return;
    for (unsigned k = 1; k <= VAL_CACHE_CLASSES; k++)
        while (c->head[k]) {
            val_cache_block *b = c->head[k];
            val_cache_unpoison(b, val_class_size(k));
            c->head[k] = b->next;
            free(b);
        }
    free(c);
}

val_cache *val_cache_use(val_cache *c)
{
    val_cache *prev = val_cache_here;
    val_cache_here = c;
    return prev;
}

size_t val_cache_held(const val_cache *c)
{
    size_t n = 0;
    for (unsigned k = 1; c && k <= VAL_CACHE_CLASSES; k++) n += c->count[k] * val_class_size(k);
    return n;
}

void *val_block_alloc(size_t size, uint8_t *cls)
{
    if (size > VAL_CACHE_MAX_SIZE) {
        *cls = 0;
        return malloc(size);
    }
    /* Small blocks get their class's full size even from malloc, so that
     * whichever thread frees them can cache them. */
    unsigned k = size ? (unsigned)((size + VAL_CACHE_GRAIN - 1) / VAL_CACHE_GRAIN) : 1;
    *cls = (uint8_t)k;
    val_cache *c = val_cache_here;
    if (c && c->head[k]) {
        val_cache_block *b = c->head[k];
        val_cache_unpoison(b, val_class_size(k));
        c->head[k] = b->next;
        c->count[k]--;
        return b;
    }
    return malloc(val_class_size(k));
}

void *val_block_calloc(size_t size, uint8_t *cls)
{
    if (size > VAL_CACHE_MAX_SIZE) {
        *cls = 0;
        return calloc(1, size); /* large: fresh zero pages, no pass to clear them */
    }
    void *p = val_block_alloc(size, cls);
    if (p) memset(p, 0, size);
    return p;
}

void val_block_free(void *p, uint8_t cls)
{
    val_cache *c = val_cache_here;
    if (!p) return;
    if (cls == 0 || !c || c->count[cls] >= val_class_cap(cls)) {
        free(p);
        return;
    }
    val_cache_block *b = p;
    b->next = c->head[cls];
    c->head[cls] = b;
    c->count[cls]++;
    val_cache_poison(b, val_class_size(cls));
}
