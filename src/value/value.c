/* value.c - construction, reference counting and comparison of values. */
#include "value/value.h"

#include <stdlib.h>
#include <string.h>

stc_value stc_value_unit(void) { return (stc_value){.tag = STC_T_UNIT}; }
stc_value stc_value_int(int64_t i) { return (stc_value){.tag = STC_T_INT, .as.i = i}; }
stc_value stc_value_float(double f) { return (stc_value){.tag = STC_T_FLOAT, .as.f = f}; }
stc_value stc_value_bool(bool b) { return (stc_value){.tag = STC_T_BOOL, .as.b = b}; }

static const stc_value val_invalid = {.tag = STC_T_INVALID};

static void *val_obj_alloc(stc_tag tag, size_t size)
{
    stc_obj *o = malloc(size);
    if (!o) return NULL;
    atomic_init(&o->refs, 1);
    o->tag = tag;
    return o;
}

stc_value val_str_alloc(size_t len)
{
    if (len > SIZE_MAX - sizeof(val_str) - 1) return val_invalid;
    val_str *o = val_obj_alloc(STC_T_STR, sizeof(val_str) + len + 1);
    if (!o) return val_invalid;
    o->len = len;
    o->data[len] = '\0';
    return (stc_value){.tag = STC_T_STR, .as.obj = &o->hdr};
}

stc_value val_seq_alloc_unfilled(stc_tag tag, size_t n)
{
    if (n > (SIZE_MAX - sizeof(val_seq)) / sizeof(stc_value)) return val_invalid;
    /* calloc: large blocks come as fresh zero pages, with no pass to fill
     * them; all-zero bytes are STC_T_INVALID items, which release ignores. */
    val_seq *o = calloc(1, sizeof(val_seq) + n * sizeof(stc_value));
    if (!o) return val_invalid;
    atomic_init(&o->hdr.refs, 1);
    o->hdr.tag = tag;
    o->n = n;
    return (stc_value){.tag = tag, .as.obj = &o->hdr};
}

stc_value stc_value_new_str(const char *s, size_t len)
{
    stc_value v = val_str_alloc(len);
    if (v.tag != STC_T_INVALID && len) memcpy(val_as_str(v)->data, s, len);
    return v;
}

stc_value val_seq_alloc(stc_tag tag, size_t n)
{
    if (n > (SIZE_MAX - sizeof(val_seq)) / sizeof(stc_value)) return val_invalid;
    val_seq *o = val_obj_alloc(tag, sizeof(val_seq) + n * sizeof(stc_value));
    if (!o) return val_invalid;
    o->n = n;
    for (size_t i = 0; i < n; i++) o->items[i] = stc_value_unit();
    return (stc_value){.tag = tag, .as.obj = &o->hdr};
}

static stc_value val_seq_new(stc_tag tag, size_t n, const stc_value *items)
{
    stc_value v = val_seq_alloc(tag, n);
    if (v.tag == STC_T_INVALID) {
        for (size_t i = 0; i < n; i++) stc_value_release(items[i]);
        return v;
    }
    if (n) memcpy(val_seq_items(v), items, n * sizeof(stc_value));
    return v;
}

stc_value stc_value_new_list(size_t n, const stc_value *items) { return val_seq_new(STC_T_LIST, n, items); }
stc_value stc_value_new_tuple(size_t n, const stc_value *items) { return val_seq_new(STC_T_TUPLE, n, items); }

static stc_value val_box_new(stc_tag tag, stc_value v)
{
    val_box *o = val_obj_alloc(tag, sizeof *o);
    if (!o) { stc_value_release(v); return val_invalid; }
    o->v = v;
    return (stc_value){.tag = tag, .as.obj = &o->hdr};
}

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

stc_value val_func_alloc(const void *code, size_t ncaps)
{
    if (ncaps > (SIZE_MAX - sizeof(val_func)) / sizeof(stc_value)) return val_invalid;
    val_func *o = val_obj_alloc(STC_T_FUNC, sizeof(val_func) + ncaps * sizeof(stc_value));
    if (!o) return val_invalid;
    o->code = code;
    o->ncaps = ncaps;
    for (size_t i = 0; i < ncaps; i++) o->caps[i] = stc_value_unit();
    return (stc_value){.tag = STC_T_FUNC, .as.obj = &o->hdr};
}

stc_value stc_value_retain(stc_value v)
{
    if (val_is_heap(v)) atomic_fetch_add_explicit(&v.as.obj->refs, 1, memory_order_relaxed);
    return v;
}

static void val_destroy(stc_obj *o)
{
    switch (o->tag) {
    case STC_T_LIST:
    case STC_T_TUPLE: {
        val_seq *s = (val_seq *)o;
        for (size_t i = 0; i < s->n; i++) stc_value_release(s->items[i]);
        break;
    }
    case STC_T_INL:
    case STC_T_INR: stc_value_release(((val_box *)o)->v); break;
    case STC_T_USER: {
        val_user *u = (val_user *)o;
        if (u->destroy) u->destroy(u->ptr);
        break;
    }
    case STC_T_FUNC: {
        val_func *f = (val_func *)o;
        for (size_t i = 0; i < f->ncaps; i++) stc_value_release(f->caps[i]);
        break;
    }
    default: break;
    }
    free(o);
}

void stc_value_release(stc_value v)
{
    if (!val_is_heap(v)) return;
    /* acq_rel: the thread that frees must see every other thread's writes. */
    if (atomic_fetch_sub_explicit(&v.as.obj->refs, 1, memory_order_acq_rel) == 1) val_destroy(v.as.obj);
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

bool stc_value_equal(stc_value a, stc_value b)
{
    if (a.tag != b.tag) return false;
    switch (a.tag) {
    case STC_T_INVALID:
    case STC_T_UNIT: return true;
    case STC_T_INT: return a.as.i == b.as.i;
    case STC_T_FLOAT: return a.as.f == b.as.f;
    case STC_T_BOOL: return a.as.b == b.as.b;
    case STC_T_STR:
        return val_as_str(a)->len == val_as_str(b)->len &&
               memcmp(val_as_str(a)->data, val_as_str(b)->data, val_as_str(a)->len) == 0;
    case STC_T_LIST:
    case STC_T_TUPLE: {
        size_t n = val_seq_len(a);
        if (n != val_seq_len(b)) return false;
        for (size_t i = 0; i < n; i++)
            if (!stc_value_equal(val_seq_items(a)[i], val_seq_items(b)[i])) return false;
        return true;
    }
    case STC_T_INL:
    case STC_T_INR: return stc_value_equal(val_box_get(a), val_box_get(b));
    case STC_T_FUNC:
    case STC_T_USER: return a.as.obj == b.as.obj;
    }
    return false;
}

int val_compare(stc_value a, stc_value b)
{
    switch (a.tag) {
    case STC_T_INT: return (a.as.i > b.as.i) - (a.as.i < b.as.i);
    case STC_T_FLOAT: return (a.as.f > b.as.f) - (a.as.f < b.as.f);
    case STC_T_STR: {
        val_str *x = val_as_str(a), *y = val_as_str(b);
        size_t n = x->len < y->len ? x->len : y->len;
        int c = memcmp(x->data, y->data, n);
        if (c) return c < 0 ? -1 : 1;
        return (x->len > y->len) - (x->len < y->len);
    }
    default: return 0;
    }
}
