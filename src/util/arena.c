/* arena.c - bump allocator with large-block fallback and free hooks. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK 16384
#define ARENA_ALIGN 16

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(ARENA_ALIGN) unsigned char data[];
} arena_block;

typedef struct arena_hook {
    struct arena_hook *next;
    void (*fn)(void *);
    void *ptr;
} arena_hook;

struct arena {
    arena_block *blocks;
    arena_hook *hooks;
};

arena *stc__arena_new(void) { return calloc(1, sizeof(arena)); }

void stc__arena_free(arena *a)
{
    if (!a) return;
    for (arena_hook *h = a->hooks; h;) {
        arena_hook *next = h->next;
        h->fn(h->ptr);
        free(h);
        h = next;
    }
    for (arena_block *b = a->blocks; b;) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

void *stc__arena_alloc(arena *a, size_t size)
{
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (size == 0) size = ARENA_ALIGN;
    arena_block *b = a->blocks;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
        if (cap > SIZE_MAX - sizeof(arena_block)) return NULL;
        arena_block *nb = malloc(sizeof(arena_block) + cap);
        if (!nb) return NULL;
        nb->used = 0;
        nb->cap = cap;
        /* A big one-off block goes behind the current one so the current
         * block's free space stays usable. */
        if (b && cap != ARENA_BLOCK) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->blocks = nb;
        }
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *stc__arena_strndup(arena *a, const char *s, size_t n)
{
    char *p = stc__arena_alloc(a, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *stc__arena_strdup(arena *a, const char *s) { return stc__arena_strndup(a, s, strlen(s)); }

int stc__arena_on_free(arena *a, void (*fn)(void *), void *ptr)
{
    arena_hook *h = malloc(sizeof *h);
    if (!h) {
        fn(ptr);
        return -1;
    }
    h->fn = fn;
    h->ptr = ptr;
    h->next = a->hooks;
    a->hooks = h;
    return 0;
}
