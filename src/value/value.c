/* value.c - construction, reference counting and comparison of values. */
#include "value/value.h"

#include "value/cache.h"
#include "value/map.h"

#include <stdlib.h>
#include <string.h>

stc_value stc_value_unit(void) { return (stc_value){.tag = STC_T_UNIT}; }
stc_value stc_value_int(int64_t i) { return (stc_value){.tag = STC_T_INT, .as.i = i}; }
stc_value stc_value_float(double f) { return (stc_value){.tag = STC_T_FLOAT, .as.f = f}; }
stc_value stc_value_bool(bool b) { return (stc_value){.tag = STC_T_BOOL, .as.b = b}; }

static const stc_value val_invalid = {.tag = STC_T_INVALID};
/* Not stc_value_unit(): a call to an exported function is not inlined in
 * the library's position-independent code. */
static const stc_value val_unit = {.tag = STC_T_UNIT};

#if defined(__GNUC__)
#define VAL_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define VAL_ALWAYS_INLINE inline
#endif

/* Inlined in every constructor: the block cache's fast path is a few
 * instructions (cache.h), a call around it doubled them. */
static VAL_ALWAYS_INLINE void *val_obj_alloc(stc_tag tag, size_t size)
{
    uint8_t cls, owner;
    stc_obj *o = val_block_alloc(size, &cls, &owner);
    if (!o) return NULL;
    o->refs = 1;
    o->tag = tag;
    o->cls = cls;
    o->shared = VAL_LOCAL;
    o->owner = owner;
    return o;
}

stc_value stc__val_str_alloc(size_t len)
{
    if (len > SIZE_MAX - sizeof(val_str) - 1) return val_invalid;
    val_str *o = val_obj_alloc(STC_T_STR, sizeof(val_str) + len + 1);
    if (!o) return val_invalid;
    o->len = len;
    o->data[len] = '\0';
    return (stc_value){.tag = STC_T_STR, .as.obj = &o->hdr};
}

stc_value stc__val_seq_alloc_unfilled(stc_tag tag, size_t n)
{
    if (n > (SIZE_MAX - sizeof(val_seq)) / sizeof(stc_value)) return val_invalid;
    /* Zero-filled (large blocks come as fresh zero pages, with no pass to
     * fill them); all-zero bytes are STC_T_INVALID items, which release
     * ignores. */
    uint8_t cls, owner;
    val_seq *o = stc__val_block_calloc(sizeof(val_seq) + n * sizeof(stc_value), &cls, &owner);
    if (!o) return val_invalid;
    o->hdr.refs = 1;
    o->hdr.tag = tag;
    o->hdr.cls = cls;
    o->hdr.shared = VAL_LOCAL;
    o->hdr.owner = owner;
    o->n = n;
    return (stc_value){.tag = tag, .as.obj = &o->hdr};
}

stc_value stc_value_new_str(const char *s, size_t len)
{
    stc_value v = stc__val_str_alloc(len);
    if (v.tag != STC_T_INVALID && len) memcpy(val_as_str(v)->data, s, len);
    return v;
}

stc_value stc__val_seq_alloc(stc_tag tag, size_t n)
{
    if (n > (SIZE_MAX - sizeof(val_seq)) / sizeof(stc_value)) return val_invalid;
    val_seq *o = val_obj_alloc(tag, sizeof(val_seq) + n * sizeof(stc_value));
    if (!o) return val_invalid;
    o->n = n;
    stc_value *it = o->items;
    for (size_t i = 0; i < n; i++) it[i].tag = STC_T_UNIT, it[i].as.i = 0;
    return (stc_value){.tag = tag, .as.obj = &o->hdr};
}

static stc_value val_seq_new(stc_tag tag, size_t n, const stc_value *items)
{
    stc_value v = stc__val_seq_alloc(tag, n);
    if (v.tag == STC_T_INVALID) {
        for (size_t i = 0; i < n; i++) val_release(items[i]);
        return v;
    }
    if (n) memcpy(val_seq_items(v), items, n * sizeof(stc_value));
    return v;
}

stc_value stc_value_new_list(size_t n, const stc_value *items) { return val_seq_new(STC_T_LIST, n, items); }
stc_value stc_value_new_tuple(size_t n, const stc_value *items) { return val_seq_new(STC_T_TUPLE, n, items); }

stc_value stc_value_new_inl(stc_value v) { return val_box_new(STC_T_INL, v); }
stc_value stc_value_new_inr(stc_value v) { return val_box_new(STC_T_INR, v); }

stc_value stc_value_new_user(void *ptr, void (*destroy)(void *))
{
    val_user *o = val_obj_alloc(STC_T_USER, sizeof *o);
    if (!o) return val_invalid;
    o->ptr = ptr;
    o->destroy = destroy;
    return (stc_value){.tag = STC_T_USER, .as.obj = &o->hdr};
}

stc_value stc__val_func_alloc(const void *code, size_t ncaps)
{
    if (ncaps > (SIZE_MAX - sizeof(val_func)) / sizeof(stc_value)) return val_invalid;
    val_func *o = val_obj_alloc(STC_T_FUNC, sizeof(val_func) + ncaps * sizeof(stc_value));
    if (!o) return val_invalid;
    o->code = code;
    o->ncaps = ncaps;
    for (size_t i = 0; i < ncaps; i++) o->caps[i] = val_unit;
    return (stc_value){.tag = STC_T_FUNC, .as.obj = &o->hdr};
}

_Thread_local bool stc__val_counts_plain = false;

bool stc__val_counts_set_plain(bool plain)
{
    bool was = stc__val_counts_plain;
    stc__val_counts_plain = plain;
    return was;
}

/* The host may hand what it retains to its other threads: mark it shared
 * first (on the thread that holds it now, before any other can see it). */
stc_value stc_value_retain(stc_value v)
{
    if (!val_is_heap(v)) return v;
    if (!val_obj_is_shared(v.as.obj)) stc__val_mark_shared(v);
    __atomic_fetch_add(&v.as.obj->refs, 1, __ATOMIC_RELAXED);
    return v;
}

void stc_value_release(stc_value v)
{
    if (!val_is_heap(v)) return;
    if (__atomic_fetch_sub(&v.as.obj->refs, 1, __ATOMIC_ACQ_REL) == 1) stc__val_obj_free(v.as.obj);
}

void stc__val_obj_free(stc_obj *o)
{
    switch (o->tag) {
    case STC_T_LIST: {
        /* The strings of a list (of words) are freed here, not by a call
         * back into this function: they hold nothing (docs/DESIGN.md 2).
         * Tuples, mostly of scalars, keep the plain loop. */
        val_seq *s = (val_seq *)o;
        for (size_t i = 0; i < s->n; i++) {
            stc_value v = s->items[i];
            if (!val_is_heap(v)) continue;
            stc_obj *c = v.as.obj;
            bool last = stc__val_counts_plain && !val_obj_is_shared(c)
                            ? --c->refs == 0
                            : __atomic_fetch_sub(&c->refs, 1, __ATOMIC_ACQ_REL) == 1;
            if (last && c->tag == STC_T_STR) val_block_free(c, c->cls, c->owner);
            else if (last) stc__val_obj_free(c);
        }
        break;
    }
    case STC_T_TUPLE: {
        val_seq *s = (val_seq *)o;
        for (size_t i = 0; i < s->n; i++) val_release(s->items[i]);
        break;
    }
    case STC_T_INL:
    case STC_T_INR: val_release(((val_box *)o)->v); break;
    case STC_T_USER: {
        val_user *u = (val_user *)o;
        if (u->destroy) u->destroy(u->ptr);
        break;
    }
    case STC_T_FUNC: {
        val_func *f = (val_func *)o;
        for (size_t i = 0; i < f->ncaps; i++) val_release(f->caps[i]);
        break;
    }
    case STC_T_MAP: stc__val_map_destroy((val_map *)o); break;
    default: break;
    }
    val_block_free(o, o->cls, o->owner);
}

/* The values an object holds: *n of them at the returned address. */
static const stc_value *val_obj_children(const stc_obj *o, size_t *n)
{
    switch (o->tag) {
    case STC_T_LIST:
    case STC_T_TUPLE: *n = ((const val_seq *)o)->n; return ((const val_seq *)o)->items;
    case STC_T_INL:
    case STC_T_INR: *n = 1; return &((const val_box *)o)->v;
    case STC_T_FUNC: *n = ((const val_func *)o)->ncaps; return ((const val_func *)o)->caps;
    default: *n = 0; return NULL;
    }
}

#define VAL_MARK_INLINE 64 /* objects on the C stack: more allocates */

void stc__val_mark_shared(stc_value v)
{
    if (!val_is_heap(v) || val_obj_is_shared(v.as.obj)) return;
    stc_obj *inline_st[VAL_MARK_INLINE], **st = inline_st;
    size_t top = 0, cap = VAL_MARK_INLINE;
    __atomic_store_n(&v.as.obj->shared, VAL_SHARED, __ATOMIC_RELAXED);
    st[top++] = v.as.obj;
    while (top > 0) {
        size_t n;
        stc_obj *o = st[--top];
        if (o->tag == STC_T_MAP) { /* its nodes are always counted atomically; */
            stc__val_map_mark_items((const val_map *)o); /* its keys and values are marked */
            continue;
        }
        const stc_value *kids = val_obj_children(o, &n);
        for (size_t i = 0; i < n; i++) {
            if (!val_is_heap(kids[i]) || val_obj_is_shared(kids[i].as.obj)) continue;
            if (top == cap) {
                stc_obj **bigger = cap <= SIZE_MAX / 2 / sizeof *st
                                   ? realloc(st == inline_st ? NULL : st, 2 * cap * sizeof *st) : NULL;
                if (!bigger) goto out; /* see value.h */
                if (st == inline_st) memcpy(bigger, inline_st, sizeof inline_st);
                st = bigger;
                cap *= 2;
            }
            __atomic_store_n(&kids[i].as.obj->shared, VAL_SHARED, __ATOMIC_RELAXED);
            st[top++] = kids[i].as.obj;
        }
    }
out:
    if (st != inline_st) free(st);
}

bool stc_value_is_valid(stc_value v) { return v.tag != STC_T_INVALID; }

const char *stc_value_str(stc_value v, size_t *len)
{
    if (v.tag != STC_T_STR) return NULL;
    if (len) *len = val_as_str(v)->len;
    return val_as_str(v)->data;
}

size_t stc_value_len(stc_value v)
{
    switch (v.tag) {
    case STC_T_STR: return val_as_str(v)->len;
    case STC_T_LIST:
    case STC_T_TUPLE: return val_seq_len(v);
    case STC_T_MAP: return val_map_len(v);
    default: return 0;
    }
}

stc_value stc_value_at(stc_value v, size_t i)
{
    if ((v.tag != STC_T_LIST && v.tag != STC_T_TUPLE) || i >= val_seq_len(v)) return val_invalid;
    return val_seq_items(v)[i];
}

stc_value stc_value_payload(stc_value v)
{
    if (v.tag != STC_T_INL && v.tag != STC_T_INR) return val_invalid;
    return val_box_get(v);
}

void *stc_value_user(stc_value v) { return v.tag == STC_T_USER ? ((val_user *)v.as.obj)->ptr : NULL; }

/* ---- Equality ----------------------------------------------------------------
 *
 * Iterative (values may be nested deeper than the C stack allows), with an
 * explicit stack of the container pairs being compared.  Values share
 * subvalues, so the tree under a pair can be exponentially larger than the
 * objects involved; once a comparison gets big, pairs of shared objects
 * found equal are remembered (val_memo) and not compared again, which
 * keeps it linear in the objects for the sharing the language creates.
 *
 * There is no shortcut for a pair of identical lists, tuples or sums: a
 * value holding a NaN is not equal to itself (floats compare with ==).  The
 * memo gives the same effect without changing that: an object compared
 * with itself once is remembered like any other pair, and a pair is only
 * remembered after it was found equal (so it holds no NaN). */

/* Strings at least this long are remembered too (a list of many references
 * to one long string, compared with one to an equal copy). */
#define VAL_EQ_MEMO_STR 256

typedef struct val_eq_frame {
    const stc_value *xa, *xb; /* the items (or payloads) to compare */
    size_t n, i;              /* xa[0..i) equal xb[0..i) */
    const stc_obj *a, *b;     /* the containers: remembered when done */
} val_eq_frame;

typedef struct val_eq {
    val_memo memo;
    size_t steps; /* containers opened; the memo is used from VAL_MEMO_AFTER on */
} val_eq;

enum { VAL_EQ_FALSE = 0, VAL_EQ_TRUE = 1, VAL_EQ_OPEN }; /* FALSE/TRUE: a bool result as is */

static bool val_eq_memo_on(const val_eq *q, const stc_obj *a, const stc_obj *b)
{
    return q->steps >= VAL_MEMO_AFTER && val_obj_shared(a) && val_obj_shared(b);
}

/* Two scalars (tags below STC_T_STR) of the same tag. */
static inline bool val_eq_scalar(stc_value a, stc_value b)
{
    switch (a.tag) {
    case STC_T_INT: return a.as.i == b.as.i;
    case STC_T_FLOAT: return a.as.f == b.as.f;
    case STC_T_BOOL: return a.as.b == b.as.b;
    default: return true; /* invalid, unit */
    }
}

/* Compares what can be compared at once; VAL_EQ_OPEN with *f set up for a
 * pair of containers whose items are still to compare. */
static int val_eq_step(val_eq *q, stc_value a, stc_value b, val_eq_frame *f)
{
    if (a.tag != b.tag) return VAL_EQ_FALSE;
    switch (a.tag) {
    case STC_T_INVALID:
    case STC_T_UNIT:
    case STC_T_INT:
    case STC_T_FLOAT:
    case STC_T_BOOL: return val_eq_scalar(a, b);
    case STC_T_STR: {
        const val_str *x = val_as_str(a), *y = val_as_str(b);
        if (x == y) return VAL_EQ_TRUE; /* no NaN in a string */
        if (x->len != y->len) return VAL_EQ_FALSE;
        bool memo = x->len >= VAL_EQ_MEMO_STR && val_eq_memo_on(q, a.as.obj, b.as.obj);
        if (memo && stc__val_memo_get(&q->memo, x, y, NULL, NULL)) return VAL_EQ_TRUE;
        if (memcmp(x->data, y->data, x->len) != 0) return VAL_EQ_FALSE;
        if (memo) stc__val_memo_put(&q->memo, x, y, 0, 0);
        return VAL_EQ_TRUE;
    }
    case STC_T_LIST:
    case STC_T_TUPLE:
        if (val_seq_len(a) != val_seq_len(b)) return VAL_EQ_FALSE;
        if (val_seq_len(a) == 0) return VAL_EQ_TRUE;
        *f = (val_eq_frame){val_seq_items(a), val_seq_items(b), val_seq_len(a), 0, a.as.obj, b.as.obj};
        break;
    case STC_T_INL:
    case STC_T_INR:
        *f = (val_eq_frame){&((const val_box *)a.as.obj)->v, &((const val_box *)b.as.obj)->v, 1, 0,
                            a.as.obj, b.as.obj};
        break;
    case STC_T_FUNC:
    case STC_T_USER: return a.as.obj == b.as.obj;
    case STC_T_MAP: return stc__val_map_equal(a, b); /* recursive per level of map nesting */
    default: return VAL_EQ_FALSE;
    }
    q->steps++;
    if (val_eq_memo_on(q, f->a, f->b) && stc__val_memo_get(&q->memo, f->a, f->b, NULL, NULL)) return VAL_EQ_TRUE;
    return VAL_EQ_OPEN;
}

#define VAL_EQ_INLINE 32 /* frames on the C stack: nesting beyond this allocates */

static bool val_eq_walk(val_eq *q, stc_value a, stc_value b)
{
    val_eq_frame inline_st[VAL_EQ_INLINE], *st = inline_st, f;
    size_t top = 0, cap = VAL_EQ_INLINE;
    bool eq = true;
    for (;;) {
        int r = val_eq_step(q, a, b, &f);
        if (r == VAL_EQ_FALSE) { eq = false; break; }
        if (r == VAL_EQ_OPEN) {
            if (top == cap) {
                val_eq_frame *bigger = cap <= SIZE_MAX / 2 / sizeof *st
                                       ? realloc(st == inline_st ? NULL : st, 2 * cap * sizeof *st) : NULL;
                if (!bigger) {
                    /* Out of memory for the stack: compare this pair in a
                     * nested walk (its own inline stack, the same memo). */
                    if (!val_eq_walk(q, a, b)) { eq = false; break; }
                    goto next;
                }
                if (st == inline_st) memcpy(bigger, inline_st, sizeof inline_st);
                st = bigger;
                cap *= 2;
            }
            st[top++] = f;
        }
    next:
        /* The next pair to compare: the next item of the innermost open
         * container; containers whose items are all equal are done. */
        while (top > 0 && st[top - 1].i == st[top - 1].n) {
            val_eq_frame *d = &st[--top];
            if (val_eq_memo_on(q, d->a, d->b)) stc__val_memo_put(&q->memo, d->a, d->b, 0, 0);
        }
        if (top == 0) break;
        val_eq_frame *cur = &st[top - 1];
        a = cur->xa[cur->i];
        b = cur->xb[cur->i];
        cur->i++;
    }
    if (st != inline_st) free(st);
    return eq;
}

bool stc_value_equal(stc_value a, stc_value b)
{
    val_eq q = {VAL_MEMO_INIT, 0};
    if (a.tag != b.tag) return false;
    if (a.tag < STC_T_STR) return val_eq_scalar(a, b); /* the common case: no walk */
    bool eq = val_eq_walk(&q, a, b);
    stc__val_memo_free(&q.memo);
    return eq;
}

int stc__val_compare(stc_value a, stc_value b)
{
    switch (a.tag) {
    case STC_T_INT: return (a.as.i > b.as.i) - (a.as.i < b.as.i);
    case STC_T_FLOAT: return (a.as.f > b.as.f) - (a.as.f < b.as.f);
    case STC_T_STR: return val_str_compare(val_as_str(a), val_as_str(b));
    default: return 0;
    }
}
