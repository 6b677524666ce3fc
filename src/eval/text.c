/* text.c - the evaluator's string library: slice find starts_with
 * ends_with contains lower upper trim join replace (docs/LANGUAGE.md 7).
 * Strings are bytes: indices count bytes, lower/upper/trim touch ASCII
 * only.  Pure: they read their arguments (borrowed) and build a new string,
 * or share the argument when the result is all of it.  The builtins that
 * build text (join, replace) obey the 1 GiB limit of every text
 * (VAL_PRINT_MAX), checked before allocating, as concat does.  Errors are
 * reported at the callee name. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "value/value.h"

static int text_new(eval_ctx *cx, ir_loc loc, const char *d, size_t n, stc_value *out)
{
    stc_value r = val_str_new(d, n);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    *out = r;
    return 0;
}

/* Bytes [from, to) of s: s itself when that is all of it. */
static int text_part(eval_ctx *cx, ir_loc loc, stc_value s, size_t from, size_t to, stc_value *out)
{
    const val_str *vs = val_as_str(s);
    if (from == 0 && to == vs->len) {
        *out = val_retain(s);
        return 0;
    }
    return text_new(cx, loc, vs->data + from, to - from, out);
}

int stc__eval_slice(eval_ctx *cx, ir_loc loc, stc_value s, int64_t i, int64_t j, stc_value *out)
{
    size_t len = val_as_str(s)->len;
    if (i < 0 || j < i || (uint64_t)j > len)
        return stc__eval_error(cx, STC_ERUNTIME, loc,
                          "slice: bytes %" PRId64 "..%" PRId64 " out of range for a string of length %zu", i, j,
                          len);
    return text_part(cx, loc, s, (size_t)i, (size_t)j, out);
}

/* The first occurrence of sub in s at or after from: its start, SIZE_MAX
 * when none; *oom when the search table could not be made. */
static size_t text_index(const val_str *s, const val_str *sub, size_t from, bool *oom)
{
    *oom = false;
    if (sub->len == 0) return from <= s->len ? from : SIZE_MAX;
    if (sub->len > s->len) return SIZE_MAX;
    str_finder f;
    if (!stc__str_finder_init(&f, sub->data, sub->len)) {
        *oom = true;
        return SIZE_MAX;
    }
    size_t p = stc__str_find(&f, s->data, s->len, from);
    free(f.fail);
    return p;
}


/* find, starts_with, ends_with, contains. */
static int text_search(eval_ctx *cx, ir_loc loc, ir_builtin bi, stc_value s, stc_value sub, stc_value *out)
{
    const val_str *vs = val_as_str(s), *vp = val_as_str(sub);
    bool fits = vp->len <= vs->len;
    switch (bi) {
    case BI_STARTS_WITH: *out = eval_bool(fits && memcmp(vs->data, vp->data, vp->len) == 0); return 0;
    case BI_ENDS_WITH:
        *out = eval_bool(fits && memcmp(vs->data + (vs->len - (fits ? vp->len : 0)), vp->data, vp->len) == 0);
        return 0;
    default: break;
    }
    bool oom;
    size_t p = text_index(vs, vp, 0, &oom);
    if (oom) return stc__eval_oom(cx, loc);
    *out = bi == BI_FIND ? eval_int(p == SIZE_MAX ? -1 : (int64_t)p) : eval_bool(p != SIZE_MAX);
    return 0;
}

/* lower, upper: ASCII letters only; s itself when nothing changes. */
static int text_case(eval_ctx *cx, ir_loc loc, bool upper, stc_value s, stc_value *out)
{
    const val_str *vs = val_as_str(s);
    char from = upper ? 'a' : 'A';
    size_t first = 0;
    while (first < vs->len && !(vs->data[first] >= from && vs->data[first] <= from + 25)) first++;
    if (first == vs->len) {
        *out = val_retain(s);
        return 0;
    }
    stc_value r = stc__val_str_alloc(vs->len);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    char *d = val_as_str(r)->data;
    memcpy(d, vs->data, vs->len);
    for (size_t i = first; i < vs->len; i++)
        if (d[i] >= from && d[i] <= from + 25) d[i] = (char)(d[i] ^ 0x20);
    *out = r;
    return 0;
}

static int text_trim(eval_ctx *cx, ir_loc loc, stc_value s, stc_value *out)
{
    const val_str *vs = val_as_str(s);
    size_t from = 0, to = vs->len;
    while (from < to && stc__str_space((unsigned char)vs->data[from])) from++;
    while (to > from && stc__str_space((unsigned char)vs->data[to - 1])) to--;
    return text_part(cx, loc, s, from, to, out);
}

static int text_too_long(eval_ctx *cx, ir_loc loc, const char *name)
{
    return stc__eval_error(cx, STC_ELIMIT, loc, "%s: result too long (over %zu bytes)", name, (size_t)VAL_PRINT_MAX);
}

/* join(sep, xs): the items of xs with sep between them. */
static int text_join(eval_ctx *cx, ir_loc loc, stc_value sep, stc_value xs, stc_value *out)
{
    size_t n = val_seq_len(xs), m = val_as_str(sep)->len;
    const stc_value *items = val_seq_items(xs);
    if (n == 0) return text_new(cx, loc, "", 0, out);
    if (n == 1) {
        *out = val_retain(items[0]);
        return 0;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) { /* the limit, checked before allocating */
        size_t add = val_as_str(items[i])->len + (i > 0 ? m : 0);
        if (add > VAL_PRINT_MAX || total > VAL_PRINT_MAX - add) return text_too_long(cx, loc, "join");
        total += add;
    }
    stc_value r = stc__val_str_alloc(total);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    char *d = val_as_str(r)->data;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) memcpy(d, val_as_str(sep)->data, m), d += m;
        const val_str *x = val_as_str(items[i]);
        memcpy(d, x->data, x->len);
        d += x->len;
    }
    *out = r;
    return 0;
}

/* replace(s, old, new): every occurrence, left to right, no overlaps. */
static int text_replace(eval_ctx *cx, ir_loc loc, stc_value s, stc_value old, stc_value new, stc_value *out)
{
    const val_str *vs = val_as_str(s), *vo = val_as_str(old), *vn = val_as_str(new);
    if (vo->len == 0) return stc__eval_error(cx, STC_ERUNTIME, loc, "replace: empty pattern");
    if (vo->len > vs->len) {
        *out = val_retain(s);
        return 0;
    }
    str_finder f;
    if (!stc__str_finder_init(&f, vo->data, vo->len)) return stc__eval_oom(cx, loc);
    size_t count = 0, at = 0, p;
    while ((p = stc__str_find(&f, vs->data, vs->len, at)) != SIZE_MAX) count++, at = p + vo->len;
    int rc = 0;
    if (count == 0) {
        *out = val_retain(s);
    } else if (vn->len > vo->len &&
               (vn->len - vo->len > VAL_PRINT_MAX / count || vs->len > VAL_PRINT_MAX - count * (vn->len - vo->len))) {
        rc = text_too_long(cx, loc, "replace");
    } else {
        size_t total = vs->len - count * vo->len + count * vn->len; /* at most the limit: no overflow */
        stc_value r = stc__val_str_alloc(total);
        if (r.tag == STC_T_INVALID) {
            rc = stc__eval_oom(cx, loc);
        } else {
            char *d = val_as_str(r)->data;
            at = 0;
            while ((p = stc__str_find(&f, vs->data, vs->len, at)) != SIZE_MAX) {
                memcpy(d, vs->data + at, p - at), d += p - at;
                memcpy(d, vn->data, vn->len), d += vn->len;
                at = p + vo->len;
            }
            memcpy(d, vs->data + at, vs->len - at);
            *out = r;
        }
    }
    free(f.fail);
    return rc;
}

int stc__eval_text_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out)
{
    switch (bi) {
    case BI_SLICE:
        if (a[0].tag != STC_T_STR || a[1].tag != STC_T_INT || a[2].tag != STC_T_INT) break;
        return stc__eval_slice(cx, loc, a[0], a[1].as.i, a[2].as.i, out);
    case BI_FIND:
    case BI_STARTS_WITH:
    case BI_ENDS_WITH:
    case BI_CONTAINS:
        if (a[0].tag != STC_T_STR || a[1].tag != STC_T_STR) break;
        return text_search(cx, loc, bi, a[0], a[1], out);
    case BI_LOWER:
    case BI_UPPER:
        if (a[0].tag != STC_T_STR) break;
        return text_case(cx, loc, bi == BI_UPPER, a[0], out);
    case BI_TRIM:
        if (a[0].tag != STC_T_STR) break;
        return text_trim(cx, loc, a[0], out);
    case BI_JOIN:
        if (a[0].tag != STC_T_STR || a[1].tag != STC_T_LIST) break;
        for (size_t i = 0; i < val_seq_len(a[1]); i++)
            if (val_seq_items(a[1])[i].tag != STC_T_STR) goto bad;
        return text_join(cx, loc, a[0], a[1], out);
    case BI_REPLACE:
        if (a[0].tag != STC_T_STR || a[1].tag != STC_T_STR || a[2].tag != STC_T_STR) break;
        return text_replace(cx, loc, a[0], a[1], a[2], out);
    default: break;
    }
bad:
    return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad arguments to '%s'", stc__ir_builtins[bi].name);
}
