/* memo.c - a small open-addressing hash map from pointer pairs to two
 * size_t, for the walks over shared values (equality, printed size, type
 * checks) that must not repeat work on a subvalue reached again. */
#include <stdint.h>
#include <stdlib.h>

#include "value/value.h"

#define VAL_MEMO_FIRST_CAP 1024 /* slots; a power of two */

static size_t val_memo_hash(const void *a, const void *b)
{
    uint64_t h = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15u;
    h ^= (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4fu;
    h ^= h >> 29;
    return (size_t)h;
}

/* The slot of (a, b), or the empty slot where it would go. */
static val_memo_slot *val_memo_find(val_memo_slot *slots, size_t cap, const void *a, const void *b)
{
    size_t i = val_memo_hash(a, b) & (cap - 1);
    while (slots[i].a && (slots[i].a != a || slots[i].b != b)) i = (i + 1) & (cap - 1);
    return &slots[i];
}

bool stc__val_memo_get(const val_memo *m, const void *a, const void *b, size_t *v, size_t *w)
{
    if (!m->n) return false;
    const val_memo_slot *s = val_memo_find(m->slots, m->cap, a, b);
    if (!s->a) return false;
    if (v) *v = s->v;
    if (w) *w = s->w;
    return true;
}

/* Doubles the table (the first call allocates it); false when out of memory. */
static bool val_memo_grow(val_memo *m)
{
    size_t cap = m->cap ? m->cap * 2 : VAL_MEMO_FIRST_CAP;
    if (cap > SIZE_MAX / 2 / sizeof(val_memo_slot)) return false;
    val_memo_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].a) *val_memo_find(slots, cap, m->slots[i].a, m->slots[i].b) = m->slots[i];
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

void stc__val_memo_put(val_memo *m, const void *a, const void *b, size_t v, size_t w)
{
    if (m->failed || !a) return;
    /* Load at most 1/2: probes stay short. */
    if ((m->n + 1) * 2 > m->cap && !val_memo_grow(m)) {
        m->failed = true; /* keep what we have; the walk goes on without new entries */
        return;
    }
    val_memo_slot *s = val_memo_find(m->slots, m->cap, a, b);
    if (!s->a) m->n++;
    *s = (val_memo_slot){a, b, v, w};
}

void stc__val_memo_free(val_memo *m)
{
    free(m->slots);
    *m = (val_memo)VAL_MEMO_INIT;
}
