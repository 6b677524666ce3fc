/* wire.c - values as bytes and back (wire.h). */
#include "value/wire.h"

#include <stdlib.h>
#include <string.h>

#include "value/map.h"
#include "value/value.h"

#if defined(__GNUC__)
#define WIRE_INLINE static inline __attribute__((always_inline))
#else
#define WIRE_INLINE static inline
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WIRE_LE 1 /* a float's 8 bytes are its bits as they lie in memory */
#else
#define WIRE_LE 0
#endif

void stc__val_wire_put_uvarint(buf *b, uint64_t x)
{
    if (x < 0x80) { /* most lengths and numbers */
        buf_putc(b, (char)x);
        return;
    }
    char t[10];
    size_t n = 0;
    do {
        t[n++] = (char)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
        x >>= 7;
    } while (x);
    stc__buf_put(b, t, n);
}

int stc__val_wire_get_uvarint(const void *p, size_t n, size_t *used, uint64_t *x)
{
    const unsigned char *s = p;
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        uint64_t bits = s[i] & 0x7f;
        if (i == 9 && bits > 1) return STC_EINVAL; /* past 64 bits */
        v |= bits << (7 * i);
        if (!(s[i] & 0x80)) {
            *used = i + 1;
            *x = v;
            return 0;
        }
    }
    return STC_EINVAL;
}

/* ---- Encoding ---- */

/* Objects held more than once are numbered as they are written; the first
 * WENC_FEW are looked up in a short array, the rest in a memo: a frame's
 * value holds a few such objects, and a memo costs 32 KiB of zeroing
 * (wire.c's memset was 28% of a serving rank's time on logstats). */
#define WENC_FEW 16

typedef struct wenc {
    buf *b;
    const wire_funcs *f;
    const stc_obj *few[WENC_FEW]; /* numbers 0 .. WENC_FEW - 1 */
    val_memo kept; /* object -> its number, from WENC_FEW on */
    size_t nkept;
} wenc;

static bool wenc_find(const wenc *e, const stc_obj *o, size_t *num)
{
    for (size_t i = 0; i < e->nkept && i < WENC_FEW; i++)
        if (e->few[i] == o) {
            *num = i;
            return true;
        }
    return e->nkept > WENC_FEW && stc__val_memo_get(&e->kept, o, NULL, num, NULL);
}

static void wenc_keep(wenc *e, const stc_obj *o)
{
    if (e->nkept < WENC_FEW) e->few[e->nkept] = o;
    else stc__val_memo_put(&e->kept, o, NULL, e->nkept, 0);
    e->nkept++;
}

static void put_kind(wenc *e, int kind) { buf_putc(e->b, (char)kind); }

/* x as a varint at t (room for 10 bytes): its length. */
static inline size_t put_uv_at(unsigned char *t, uint64_t x)
{
    size_t n = 0;
    for (; x >= 0x80; x >>= 7) t[n++] = (unsigned char)(x | 0x80);
    t[n++] = (unsigned char)x;
    return n;
}

/* A scalar, or a string (kind: WIRE_STR with or without WIRE_KEEP), written
 * at once: its kind, number or length and bytes in one reservation (a
 * byte and a call each were most of a line's encoding, DESIGN.md 7c). */
WIRE_INLINE int enc_leaf(buf *b, stc_value v, int kind)
{
    switch (v.tag) {
    case STC_T_UNIT: buf_putc(b, WIRE_UNIT); return 0;
    case STC_T_BOOL: buf_putc(b, v.as.b ? WIRE_TRUE : WIRE_FALSE); return 0;
    default: break;
    }
    size_t len = v.tag == STC_T_STR ? val_as_str(v)->len : 0;
    unsigned char *t = (unsigned char *)buf_room(b, 11 + len);
    if (!t) return 0; /* (the caller sees the failed buffer) */
    size_t k = 1;
    if (v.tag == STC_T_INT) {
        t[0] = WIRE_INT;
        /* zigzag: small negative numbers stay short */
        k += put_uv_at(t + 1, ((uint64_t)v.as.i << 1) ^ (uint64_t)(v.as.i >> 63));
    } else if (v.tag == STC_T_FLOAT) {
        uint64_t bits;
        memcpy(&bits, &v.as.f, 8);
        t[0] = WIRE_FLOAT;
        if (WIRE_LE) memcpy(t + 1, &bits, 8);
        else
            for (int i = 0; i < 8; i++) t[1 + i] = (unsigned char)(bits >> (8 * i));
        k = 9;
    } else { /* STC_T_STR */
        t[0] = (unsigned char)kind;
        k += put_uv_at(t + 1, len);
        memcpy(t + k, val_as_str(v)->data, len);
        k += len;
    }
    buf_commit(b, k);
    return 0;
}

static int enc(wenc *e, stc_value v, int depth)
{
    if (depth > WIRE_MAX_DEPTH) return STC_ELIMIT;
    switch (v.tag) {
    case STC_T_UNIT: case STC_T_BOOL: case STC_T_INT: case STC_T_FLOAT: return enc_leaf(e->b, v, 0);
    case STC_T_STR: case STC_T_LIST: case STC_T_TUPLE: case STC_T_INL: case STC_T_INR:
    case STC_T_MAP: case STC_T_FUNC:
        break;
    default: return STC_EINVAL; /* invalid, user objects */
    }
    stc_obj *o = v.as.obj;
    size_t num;
    if (wenc_find(e, o, &num)) {
        put_kind(e, WIRE_REF);
        stc__val_wire_put_uvarint(e->b, num);
        return 0;
    }
    int keep = val_obj_shared(o) ? WIRE_KEEP : 0, rc = 0;
    switch (v.tag) {
    case STC_T_STR: enc_leaf(e->b, v, WIRE_STR | keep); break;
    case STC_T_LIST: case STC_T_TUPLE: {
        size_t n = val_seq_len(v);
        put_kind(e, (v.tag == STC_T_LIST ? WIRE_LIST : WIRE_TUPLE) | keep);
        stc__val_wire_put_uvarint(e->b, n);
        const stc_value *it = val_seq_items(v);
        for (size_t i = 0; i < n && !rc; i++) /* a scalar item here, without a call */
            rc = it[i].tag >= STC_T_UNIT && it[i].tag <= STC_T_BOOL && depth < WIRE_MAX_DEPTH
                     ? enc_leaf(e->b, it[i], 0)
                     : enc(e, it[i], depth + 1);
        break;
    }
    case STC_T_INL: case STC_T_INR:
        put_kind(e, (v.tag == STC_T_INL ? WIRE_INL : WIRE_INR) | keep);
        rc = enc(e, val_box_get(v), depth + 1);
        break;
    case STC_T_MAP: {
        put_kind(e, WIRE_MAP | keep);
        stc__val_wire_put_uvarint(e->b, val_map_len(v));
        val_map_iter it;
        stc_value k, x;
        stc__val_map_iter_init(&it, v);
        while (!rc && stc__val_map_iter_next(&it, &k, &x)) {
            rc = enc(e, k, depth + 1);
            if (!rc) rc = enc(e, x, depth + 1);
        }
        break;
    }
    default: { /* STC_T_FUNC */
        val_func *fn = val_as_func(v);
        int64_t id = e->f && e->f->code_id ? e->f->code_id(e->f->ud, fn->code) : -1;
        if (id < 0) return STC_EINVAL;
        put_kind(e, WIRE_FUNC | keep);
        stc__val_wire_put_uvarint(e->b, (uint64_t)id);
        stc__val_wire_put_uvarint(e->b, fn->ncaps);
        for (size_t i = 0; i < fn->ncaps && !rc; i++) rc = enc(e, fn->caps[i], depth + 1);
        break;
    }
    }
    if (!rc && keep) {
        /* Numbered when done, as the decoder does: a reference can only
         * name a finished object, so no decoded value can hold itself. */
        /* (If the memo runs out of memory it ignores the entry: the object
         * is then written again where it recurs, still numbered alike.) */
        wenc_keep(e, o);
    }
    return rc;
}

int stc__val_wire_encode(buf *b, stc_value v, const wire_funcs *f)
{
    /* Scalars and strings (a frame's unit slots, logstats' line) need no
     * numbering of shared objects: written at once. */
    if ((v.tag >= STC_T_UNIT && v.tag <= STC_T_BOOL) || v.tag == STC_T_STR) {
        enc_leaf(b, v, v.tag == STC_T_STR && val_obj_shared(v.as.obj) ? WIRE_STR | WIRE_KEEP : WIRE_STR);
        return buf_ok(b) ? 0 : STC_ENOMEM;
    }
    wenc e; /* few[] is read only below nkept: no need to clear it (a frame
               is mostly scalars, each encoded by a call of its own) */
    e.b = b, e.f = f, e.nkept = 0, e.kept = (val_memo)VAL_MEMO_INIT;
    int rc = enc(&e, v, 0);
    if (e.nkept > WENC_FEW) stc__val_memo_free(&e.kept);
    if (!rc && !buf_ok(b)) rc = STC_ENOMEM;
    return rc;
}

/* ---- Decoding ---- */

typedef struct wdec {
    const unsigned char *p;
    size_t n, at;
    const wire_funcs *f;
    stc_value *kept; /* the numbered objects, one reference each */
    size_t nkept, cap;
} wdec;

WIRE_INLINE int get_num(wdec *d, uint64_t *x)
{
    if (d->at < d->n && d->p[d->at] < 0x80) { /* one byte: most lengths and numbers */
        *x = d->p[d->at++];
        return 0;
    }
    if (d->n - d->at >= 2 && d->p[d->at + 1] < 0x80) { /* two: numbers below 16,384 */
        *x = (uint64_t)(d->p[d->at] & 0x7f) | (uint64_t)d->p[d->at + 1] << 7;
        d->at += 2;
        return 0;
    }
    if (d->n - d->at >= 3 && d->p[d->at + 2] < 0x80) { /* three: below 2^21 (a zigzag int below 2^20) */
        *x = (uint64_t)(d->p[d->at] & 0x7f) | (uint64_t)(d->p[d->at + 1] & 0x7f) << 7 | (uint64_t)d->p[d->at + 2] << 14;
        d->at += 3;
        return 0;
    }
    size_t used;
    if (stc__val_wire_get_uvarint(d->p + d->at, d->n - d->at, &used, x)) return STC_EINVAL;
    d->at += used;
    return 0;
}

/* A count of things each taking at least `each` bytes: no more than fit
 * in what is left (so a bad count never makes a huge allocation). */
WIRE_INLINE int get_count(wdec *d, size_t each, size_t *count)
{
    uint64_t x;
    if (get_num(d, &x) || x > (d->n - d->at) / each) return STC_EINVAL;
    *count = (size_t)x;
    return 0;
}

static int keep(wdec *d, stc_value v)
{
    if (d->nkept == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        stc_value *k = realloc(d->kept, cap * sizeof *k);
        if (!k) return STC_ENOMEM;
        d->kept = k;
        d->cap = cap;
    }
    d->kept[d->nkept++] = val_retain(v);
    return 0;
}

static bool has_func(stc_value v, int depth)
{
    if (depth > WIRE_MAX_DEPTH) return true;
    switch (v.tag) {
    case STC_T_FUNC: return true;
    case STC_T_LIST: case STC_T_TUPLE:
        for (size_t i = 0; i < val_seq_len(v); i++)
            if (has_func(val_seq_items(v)[i], depth + 1)) return true;
        return false;
    case STC_T_INL: case STC_T_INR: return has_func(val_box_get(v), depth + 1);
    case STC_T_MAP: { /* its keys were checked when it was decoded */
        val_map_iter it;
        stc_value k, x;
        stc__val_map_iter_init(&it, v);
        while (stc__val_map_iter_next(&it, &k, &x))
            if (has_func(x, depth + 1)) return true;
        return false;
    }
    default: return false;
    }
}

/* A value of kind `kind` (its byte read) that holds no other value and is
 * never numbered: a scalar, or a string not held twice, made here with
 * no call (a call per value and per number was most of a reply's
 * decoding: DESIGN.md 7c).  0 (*out set), an error (*out untouched), or
 * WDEC_NOT_LEAF. */
#define WDEC_NOT_LEAF 1
WIRE_INLINE int dec_leaf(wdec *d, int kind, stc_value *out)
{
    uint64_t x;
    switch (kind) {
    case WIRE_UNIT: *out = (stc_value){.tag = STC_T_UNIT}; return 0;
    case WIRE_FALSE: case WIRE_TRUE: *out = (stc_value){.tag = STC_T_BOOL, .as.b = kind == WIRE_TRUE}; return 0;
    case WIRE_INT:
        if (get_num(d, &x)) return STC_EINVAL;
        *out = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)(x >> 1) ^ -(int64_t)(x & 1)};
        return 0;
    case WIRE_FLOAT: {
        if (d->n - d->at < 8) return STC_EINVAL;
        uint64_t bits = 0;
        if (WIRE_LE) memcpy(&bits, d->p + d->at, 8);
        else
            for (int i = 0; i < 8; i++) bits |= (uint64_t)d->p[d->at + i] << (8 * i);
        d->at += 8;
        out->tag = STC_T_FLOAT;
        memcpy(&out->as.f, &bits, 8);
        return 0;
    }
    case WIRE_STR: {
        size_t n;
        if (get_count(d, 1, &n)) return STC_EINVAL;
        stc_value s = val_str_new((const char *)d->p + d->at, n);
        if (s.tag == STC_T_INVALID) return STC_ENOMEM;
        d->at += n;
        *out = s;
        return 0;
    }
    default: return WDEC_NOT_LEAF;
    }
}

static int dec(wdec *d, stc_value *out, int depth);

static int dec_map(wdec *d, stc_value *out, int depth)
{
    size_t n;
    if (get_count(d, 2, &n)) return STC_EINVAL;
    stc_value m = stc__val_map_new();
    if (m.tag == STC_T_INVALID) return STC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        stc_value k, v;
        int rc = dec(d, &k, depth + 1);
        if (!rc && has_func(k, 0)) {
            val_release(k);
            rc = STC_EINVAL;
        }
        if (rc) {
            val_release(m);
            return rc;
        }
        if ((rc = dec(d, &v, depth + 1))) {
            val_release(k);
            val_release(m);
            return rc;
        }
        if ((rc = stc__val_map_put(m, k, v, &m))) return rc; /* all consumed */
    }
    if (val_map_len(m) != n) { /* a key came twice */
        val_release(m);
        return STC_EINVAL;
    }
    *out = m;
    return 0;
}

static int dec_obj(wdec *d, int kind, stc_value *out, int depth)
{
    size_t n;
    int rc = 0;
    switch (kind) {
    case WIRE_STR: return dec_leaf(d, WIRE_STR, out); /* (a string held twice) */
    case WIRE_LIST: case WIRE_TUPLE: {
        if (get_count(d, 1, &n)) return STC_EINVAL;
        stc_value s = val_seq_new_unset(kind == WIRE_LIST ? STC_T_LIST : STC_T_TUPLE, n);
        if (s.tag == STC_T_INVALID) return STC_ENOMEM;
        stc_value *it = val_seq_items(s);
        size_t i = 0;
        for (; i < n; i++) { /* a leaf item here, without a call (a tuple of scalars) */
            size_t at = d->at;
            rc = at < d->n && depth < WIRE_MAX_DEPTH ? (d->at++, dec_leaf(d, d->p[at], &it[i])) : WDEC_NOT_LEAF;
            if (rc == WDEC_NOT_LEAF) {
                d->at = at;
                rc = dec(d, &it[i], depth + 1);
            }
            if (rc) break;
        }
        if (rc) { /* items 0 .. i - 1 are set */
            ((val_seq *)s.as.obj)->n = i;
            val_release(s);
        } else {
            *out = s;
        }
        return rc;
    }
    case WIRE_INL: case WIRE_INR: {
        stc_value x;
        if ((rc = dec(d, &x, depth + 1))) return rc;
        stc_value b = val_box_new(kind == WIRE_INL ? STC_T_INL : STC_T_INR, x);
        if (b.tag == STC_T_INVALID) return STC_ENOMEM; /* x consumed */
        *out = b;
        return 0;
    }
    case WIRE_MAP: return dec_map(d, out, depth);
    case WIRE_FUNC: {
        uint64_t id;
        if (get_num(d, &id) || get_count(d, 1, &n)) return STC_EINVAL;
        const void *code = d->f && d->f->code_of ? d->f->code_of(d->f->ud, id, n) : NULL;
        if (!code) return STC_EINVAL;
        stc_value fn = stc__val_func_alloc(code, n);
        if (fn.tag == STC_T_INVALID) return STC_ENOMEM;
        for (size_t i = 0; i < n && !rc; i++) rc = dec(d, &val_as_func(fn)->caps[i], depth + 1);
        if (rc) val_release(fn);
        else *out = fn;
        return rc;
    }
    default: return STC_EINVAL;
    }
}

static int dec(wdec *d, stc_value *out, int depth)
{
    *out = (stc_value){.tag = STC_T_INVALID};
    if (depth > WIRE_MAX_DEPTH) return STC_ELIMIT;
    if (d->at >= d->n) return STC_EINVAL;
    int kind = d->p[d->at++];
    int rc = dec_leaf(d, kind, out);
    if (rc != WDEC_NOT_LEAF) return rc;
    uint64_t x;
    if (kind == WIRE_REF) {
        if (get_num(d, &x) || x >= d->nkept) return STC_EINVAL;
        *out = val_retain(d->kept[x]);
        return 0;
    }
    stc_value v;
    if ((rc = dec_obj(d, kind & ~WIRE_KEEP, &v, depth))) return rc;
    if ((kind & WIRE_KEEP) && (rc = keep(d, v))) {
        val_release(v);
        return rc;
    }
    *out = v;
    return 0;
}

int stc__val_wire_decode(const void *p, size_t n, size_t *used, stc_value *out, const wire_funcs *f)
{
    wdec d = {p, n, 0, f, NULL, 0, 0};
    int rc = dec(&d, out, 0);
    if (d.kept) { /* (objects held twice: rare in a frame) */
        for (size_t i = 0; i < d.nkept; i++) val_release(d.kept[i]);
        free(d.kept);
    }
    if (rc) *out = (stc_value){.tag = STC_T_INVALID};
    else if (used) *used = d.at;
    return rc;
}
