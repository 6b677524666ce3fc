/* keyhash.c - a hash of keys that agrees with their order: keys equal by
 * stc__val_key_compare hash alike (docs/DESIGN.md, keyed threads: the
 * runtime routes a keyed thread's calls to shards by it).  Floats hash
 * their bits, as totalOrder compares them; strings their bytes (8 at a time); tuples,
 * lists, inl/inr and maps their items.  Below VAL_HASH_DEPTH levels of
 * nesting a container hashes as its tag and length only, so any value
 * hashes in bounded C stack and equal values still hash alike. */
#include <string.h>

#include "value/map.h"
#include "value/value.h"

#define VAL_HASH_DEPTH 8

static uint64_t hash_mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h;
}

/* The finaliser of splitmix64: every bit of x reaches every bit. */
static uint64_t hash_fin(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* A string's bytes, 8 at a time (a word is one or two steps; a byte at a
 * time cost most of a word count's routing). */
static uint64_t hash_bytes(const val_str *s)
{
    const unsigned char *p = (const unsigned char *)s->data;
    size_t n = s->len;
    uint64_t f = 0xcbf29ce484222325u ^ n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        f = (f ^ x) * 0x9e3779b97f4a7c15u;
        f ^= f >> 29;
    }
    uint64_t x = 0; /* the last 0-7 bytes: two 4-byte loads that may overlap, or 3 bytes */
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        x = (uint64_t)a << 32 | b;
    } else if (n > 0) {
        x = (uint64_t)p[0] << 16 | (uint64_t)p[n / 2] << 8 | p[n - 1];
    }
    f = (f ^ x) * 0x9e3779b97f4a7c15u;
    return f ^ (f >> 32);
}

static uint64_t hash_at(stc_value v, int depth)
{
    uint64_t h = (uint64_t)v.tag * 0x100000001b3u;
    switch (v.tag) {
    case STC_T_BOOL: return hash_mix(h, v.as.b);
    case STC_T_INT: return hash_mix(h, (uint64_t)v.as.i);
    case STC_T_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v.as.f, sizeof bits);
        return hash_mix(h, bits);
    }
    case STC_T_STR: return hash_mix(h, hash_bytes(val_as_str(v)));
    case STC_T_LIST:
    case STC_T_TUPLE: {
        size_t n = val_seq_len(v);
        h = hash_mix(h, n);
        if (depth >= VAL_HASH_DEPTH) return h;
        for (size_t i = 0; i < n; i++) h = hash_mix(h, hash_at(val_seq_items(v)[i], depth + 1));
        return h;
    }
    case STC_T_INL:
    case STC_T_INR:
        if (depth >= VAL_HASH_DEPTH) return h;
        return hash_mix(h, hash_at(((const val_box *)v.as.obj)->v, depth + 1));
    case STC_T_MAP: {
        h = hash_mix(h, val_map_len(v));
        if (depth >= VAL_HASH_DEPTH) return h;
        val_map_iter it;
        stc_value k, x;
        stc__val_map_iter_init(&it, v);
        while (stc__val_map_iter_next(&it, &k, &x)) h = hash_mix(hash_mix(h, hash_at(k, depth + 1)), hash_at(x, depth + 1));
        return h;
    }
    default: return h; /* unit; functions are never keys */
    }
}

uint64_t stc__val_key_hash(stc_value v)
{
    /* the common key: its bytes' hash alone (a top-level key's hash need
     * only agree with itself: strings and other keys never meet in one
     * map), whose last multiply already spreads into the high half, which
     * picks the shard */
    if (v.tag == STC_T_STR) return hash_bytes(val_as_str(v));
    return hash_fin(hash_at(v, 0));
}
