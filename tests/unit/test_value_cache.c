/* test_value_cache.c - per-thread caches of freed value blocks. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "stc.h"
#include "value/cache.h"
#include "value/value.h"

/* A freed small value's block is kept by the thread's cache and given to
 * the next value of its size class; without a cache nothing is kept. */
TEST(value_cache_reuses_blocks)
{
    val_cache *c = stc__val_cache_new(NULL);
    CHECK(c != NULL);
    if (!c) return;
    CHECK(stc__val_cache_use(c) == NULL);
    stc_value s = stc_value_new_str("abc", 3);
    const void *block = s.as.obj;
    stc_value_release(s);
    CHECK_INT(stc__val_cache_held(c), 32); /* header 16 + len 8 + 4 bytes, in 16-byte classes */
    stc_value t = stc_value_new_str("xyz!", 4);
    CHECK(t.as.obj == block);
    CHECK_INT(stc__val_cache_held(c), 0);
    CHECK_STR(stc_value_str(t, NULL), "xyz!");
    /* A list's items go back too, and the list's block (2 items: 56 bytes). */
    stc_value items[2] = {t, stc_value_new_str("q", 1)};
    stc_value l = stc_value_new_list(2, items);
    stc_value_release(l);
    CHECK_INT(stc__val_cache_held(c), 32 + 32 + 64);
    /* Large blocks are not cached. */
    stc_value big = stc_value_new_str("", 0);
    stc_value_release(big);
    size_t held = stc__val_cache_held(c);
    char text[VAL_CACHE_MAX_SIZE];
    for (size_t i = 0; i < sizeof text; i++) text[i] = 'a';
    big = stc_value_new_str(text, sizeof text);
    stc_value_release(big);
    CHECK_INT(stc__val_cache_held(c), held);
    /* Another thread's values are plain malloc blocks once the cache is off. */
    CHECK(stc__val_cache_use(NULL) == c);
    stc_value u = stc_value_new_str("abc", 3);
    stc_value_release(u);
    CHECK_INT(stc__val_cache_held(c), held);
    stc__val_cache_free(c);
    stc__val_cache_free(NULL);
}

typedef struct cache_side {
    val_cache *cache;
    stc_value *vals;
    int n;
    size_t held_after;
} cache_side;

static void *cache_release_all(void *arg)
{
    cache_side *s = arg;
    val_cache *prev = stc__val_cache_use(s->cache);
    for (int i = 0; i < s->n; i++) stc_value_release(s->vals[i]);
    s->held_after = stc__val_cache_held(s->cache);
    /* and make as many again: the first come from the cache */
    for (int i = 0; i < s->n; i++) s->vals[i] = stc_value_new_str("0123456789", 10);
    stc__val_cache_use(prev);
    return NULL;
}

/* Values made on one thread and freed on another (as in a pipeline) go
 * home: the freeing thread's cache keeps none of them (less than a
 * magazine on its way) and hands full magazines of them to the owner's
 * inbox (VAL_INBOX_MAGS of them), then to the depot's shared ones
 * (VAL_DEPOT_MAGS: any cache may take those), then to free(); the owner
 * takes its inbox back for its next values.  Kept by the freeing thread, they shared cache
 * lines with the owner's values (docs/DESIGN.md 5, "Values on workers"). */
TEST(value_cache_blocks_go_home)
{
    enum { N = 5000 };
    const size_t cap = VAL_CACHE_MAG_BYTES / 48, mag = cap * 48; /* 40-byte strings: class 48 */
    stc_value *vals = malloc(N * sizeof *vals);
    const void **made = malloc(N * sizeof *made);
    val_depot *d = stc__val_depot_new();
    val_cache *mine = stc__val_cache_new(d), *theirs = stc__val_cache_new(d);
    CHECK(vals && made && d && mine && theirs);
    if (!vals || !made || !d || !mine || !theirs) goto out;
    stc__val_cache_use(mine);
    for (int i = 0; i < N; i++) {
        vals[i] = stc_value_new_str("abcdefghij", 10);
        made[i] = vals[i].as.obj;
    }
    stc__val_cache_use(NULL);
    cache_side side = {theirs, vals, N, 0};
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, cache_release_all, &side), 0);
    pthread_join(th, NULL);
    /* Released there: the blocks in full magazines left, the rest on its way. */
    CHECK_INT(side.held_after, (N % cap) * 48);
    /* Their new strings took the depot's shared magazines, not our inbox. */
    CHECK_INT(stc__val_depot_held(d), VAL_INBOX_MAGS * mag);
    /* Ours come back to us: the inbox's first, then the shared ones. */
    stc_value *again = malloc(N * sizeof *again);
    CHECK(again != NULL);
    if (!again) goto release;
    stc__val_cache_use(mine);
    stc_value first = stc_value_new_str("abcdefghij", 10);
    bool ours = false;
    for (int i = 0; i < N && !ours; i++) ours = first.as.obj == made[i];
    CHECK(ours);
    stc_value_release(first);
    for (int i = 0; i < N; i++) again[i] = stc_value_new_str("abcdefghij", 10);
    CHECK_INT(stc__val_depot_held(d), 0);
    CHECK_INT(stc__val_cache_held(mine), 0);
    for (int i = 0; i < N; i++) stc_value_release(again[i]); /* ours, kept here */
    stc__val_cache_use(NULL);
    CHECK(stc__val_cache_held(mine) >= VAL_CACHE_KEPT * mag);
    free(again);
release:
    stc__val_cache_use(theirs);
    for (int i = 0; i < N; i++) stc_value_release(vals[i]); /* theirs: kept there */
    stc__val_cache_use(NULL);
    CHECK(stc__val_cache_held(theirs) >= VAL_CACHE_KEPT * mag);
out:
    stc__val_cache_free(mine);
    stc__val_cache_free(theirs);
    stc__val_depot_free(d);
    free(vals);
    free(made);
}

/* The first VAL_CACHE_OWNERS caches of a depot have ids; a later one's
 * values have none, and whoever frees them keeps them. */
TEST(value_cache_owners_bounded)
{
    val_depot *d = stc__val_depot_new();
    val_cache *c[VAL_CACHE_OWNERS + 1] = {0};
    bool ok = d != NULL;
    for (int i = 0; i <= VAL_CACHE_OWNERS; i++) ok = ok && (c[i] = stc__val_cache_new(d)) != NULL;
    CHECK(ok);
    if (!ok) goto out;
    stc__val_cache_use(c[VAL_CACHE_OWNERS]); /* the one without an id */
    stc_value s = stc_value_new_str("abc", 3);
    CHECK_INT(s.as.obj->owner, 0);
    stc__val_cache_use(c[0]);
    stc_value t = stc_value_new_str("abc", 3);
    CHECK_INT(t.as.obj->owner, 1);
    stc_value_release(s); /* kept by c[0] */
    CHECK_INT(stc__val_cache_held(c[0]), 32);
    stc__val_cache_use(c[1]);
    stc_value_release(t); /* c[0]'s: on its way home */
    CHECK_INT(stc__val_cache_held(c[1]), 32);
    stc__val_cache_use(c[0]);
    stc_value u = stc_value_new_str("abc", 3); /* c[0]'s kept one */
    CHECK_INT(u.as.obj->owner, 1);
    CHECK_INT(stc__val_cache_held(c[0]), 0);
    stc_value_release(u);
    stc__val_cache_use(NULL);
out:
    for (int i = 0; i <= VAL_CACHE_OWNERS; i++) stc__val_cache_free(c[i]);
    stc__val_depot_free(d);
}

/* Magazines a cache keeps but does not use go to the depot at its second
 * trim after they were kept (they were not needed since the first), while
 * a class it allocates as much as it frees keeps its own. */
TEST(value_cache_trim_gives_unused_magazines_away)
{
    /* Class 48 keeps KA full magazines, class 208 uses KB a round; together no more than the cache keeps. */
    enum { KA = VAL_CACHE_KEPT / 2, KB = VAL_CACHE_KEPT - VAL_CACHE_KEPT / 2 };
    enum { NA = (KA + 1) * (VAL_CACHE_MAG_BYTES / 48), NB = KB * (VAL_CACHE_MAG_BYTES / 208) };
    const size_t mag_a = (VAL_CACHE_MAG_BYTES / 48) * 48, mag_b = (VAL_CACHE_MAG_BYTES / 208) * 208;
    char text_b[181];
    memset(text_b, 'b', 180); /* 16 + 8 + 181 bytes: class 208 */
    text_b[180] = 0;
    stc_value *a = malloc(NA * sizeof *a), *b = malloc(NB * sizeof *b);
    val_depot *d = stc__val_depot_new();
    val_cache *c = stc__val_cache_new(d);
    CHECK(a && b && d && c);
    if (!a || !b || !d || !c) goto out;
    /* Class 48: made without a cache, freed into c: KA full magazines kept
     * and the full one in use. */
    for (int i = 0; i < NA; i++) a[i] = stc_value_new_str("abcdefghij", 10);
    stc__val_cache_use(c);
    for (int i = 0; i < NA; i++) stc_value_release(a[i]);
    CHECK_INT(stc__val_cache_held(c), (KA + 1) * mag_a);
    /* Class 208: allocated and freed alike, KB magazines a round, for more
     * than two trims' worth of moves (64 each). */
    for (int r = 0; r < 3 * 64; r++) { /* at least 2 moves a round */
        for (int i = 0; i < NB; i++) b[i] = stc_value_new_str(text_b, 180);
        for (int i = 0; i < NB; i++) stc_value_release(b[i]);
    }
    stc__val_cache_use(NULL);
    CHECK_INT(stc__val_depot_held(d), KA * mag_a); /* class 48's kept ones, given away */
    size_t held = stc__val_cache_held(c) - mag_a;  /* class 48's in use stays */
    CHECK(held >= (KB - 1) * mag_b && held <= (KB + 1) * mag_b); /* class 208's, kept */
out:
    stc__val_cache_free(c);
    stc__val_depot_free(d);
    free(a);
    free(b);
}
