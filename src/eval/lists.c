/* lists.c - the evaluator's list builtins: fold filter append reverse sort
 * zip take drop (docs/LANGUAGE.md 7).  They read their arguments
 * (borrowed) and build a new list, sharing the argument when the result is
 * all of it.  fold and filter call their function on the items in list
 * order, one after the other, like smap: a function that calls a thread
 * threads its state through the items in that order (the write-set
 * analysis, src/flow/analyze.c, knows they call their argument).  Errors
 * are reported at the callee name. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "value/value.h"

static const stc_value lists_unit = {.tag = STC_T_UNIT};

/* fold(f, z, xs): acc := f(acc, x) for each x in order; the accumulator is
 * handed to f (not kept here), so a value held only by it stays unique. */
static int lists_fold(eval_ctx *cx, ir_loc loc, stc_value f, stc_value z, stc_value xs, stc_value *out)
{
    size_t n = val_seq_len(xs);
    stc_value acc = val_retain(z);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if ((rc = stc__eval_check_cancel(cx, loc))) break;
        stc_value args[2] = {acc, val_retain(val_seq_items(xs)[i])};
        acc = lists_unit;
        if ((rc = stc__eval_apply(cx, f, 2, args, loc, &acc))) break;
    }
    if (rc) {
        val_release(acc);
        return rc;
    }
    *out = acc;
    return 0;
}

/* filter(p, xs): the items for which p is true, in order. */
static int lists_filter(eval_ctx *cx, ir_loc loc, stc_value p, stc_value xs, stc_value *out)
{
    size_t n = val_seq_len(xs), kept = 0;
    bool *keep = n > 0 ? malloc(n) : NULL;
    if (n > 0 && !keep) return stc__eval_oom(cx, loc);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if ((rc = stc__eval_check_cancel(cx, loc))) break;
        stc_value arg = val_retain(val_seq_items(xs)[i]), r;
        if ((rc = stc__eval_apply(cx, p, 1, &arg, loc, &r))) break;
        keep[i] = r.tag == STC_T_BOOL && r.as.b;
        kept += keep[i];
        val_release(r);
    }
    if (rc == 0 && kept == n) {
        *out = val_retain(xs);
    } else if (rc == 0) {
        stc_value res = stc__val_seq_alloc(STC_T_LIST, kept);
        if (res.tag == STC_T_INVALID) {
            rc = stc__eval_oom(cx, loc);
        } else {
            for (size_t i = 0, k = 0; i < n; i++)
                if (keep[i]) val_seq_items(res)[k++] = val_retain(val_seq_items(xs)[i]);
            *out = res;
        }
    }
    free(keep);
    return rc;
}

/* A new list of the n items from (retained). */
static int lists_copy(eval_ctx *cx, ir_loc loc, const stc_value *from, size_t n, stc_value *out)
{
    stc_value r = stc__val_seq_alloc(STC_T_LIST, n);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    for (size_t i = 0; i < n; i++) val_seq_items(r)[i] = val_retain(from[i]);
    *out = r;
    return 0;
}

static int lists_append(eval_ctx *cx, ir_loc loc, stc_value xs, stc_value ys, stc_value *out)
{
    size_t n = val_seq_len(xs), m = val_seq_len(ys);
    if (n == 0 || m == 0) { /* share the other one */
        *out = val_retain(n == 0 ? ys : xs);
        return 0;
    }
    if (n > SIZE_MAX / sizeof(stc_value) - m) return stc__eval_oom(cx, loc);
    stc_value r = stc__val_seq_alloc(STC_T_LIST, n + m);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    for (size_t i = 0; i < n; i++) val_seq_items(r)[i] = val_retain(val_seq_items(xs)[i]);
    for (size_t i = 0; i < m; i++) val_seq_items(r)[n + i] = val_retain(val_seq_items(ys)[i]);
    *out = r;
    return 0;
}

static int lists_reverse(eval_ctx *cx, ir_loc loc, stc_value xs, stc_value *out)
{
    size_t n = val_seq_len(xs);
    if (n < 2) {
        *out = val_retain(xs);
        return 0;
    }
    stc_value r = stc__val_seq_alloc(STC_T_LIST, n);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    for (size_t i = 0; i < n; i++) val_seq_items(r)[i] = val_retain(val_seq_items(xs)[n - 1 - i]);
    *out = r;
    return 0;
}

static inline int lists_cmp3(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* stc__val_order, with the common sort keys compared inline: ints,
 * strings, and tuples or lists decided by ints and strings (the word
 * count's (-count, word)); anything else (floats, containers, sums, bools)
 * goes to the full order from the start.  The call of stc__val_order was
 * most of a compare (~120 instructions a compare in a word count's sort). */
static inline int lists_order(stc_value a, stc_value b)
{
    if (a.tag == b.tag) {
        if (a.tag == STC_T_INT) return lists_cmp3(a.as.i, b.as.i);
        if (a.tag == STC_T_STR) return val_str_compare(val_as_str(a), val_as_str(b));
        if (a.tag == STC_T_TUPLE || a.tag == STC_T_LIST) {
            const stc_value *xa = val_seq_items(a), *xb = val_seq_items(b);
            size_t na = val_seq_len(a), nb = val_seq_len(b), i = 0;
            for (; i < na && i < nb; i++) {
                stc_value p = xa[i], q = xb[i];
                int c;
                if (p.tag != q.tag) break;
                if (p.tag == STC_T_INT) c = lists_cmp3(p.as.i, q.as.i);
                else if (p.tag == STC_T_STR) c = val_str_compare(val_as_str(p), val_as_str(q));
                else break;
                if (c) return c;
            }
            if (i == na || i == nb) return lists_cmp3((int64_t)na, (int64_t)nb); /* a proper prefix first */
        }
    }
    return stc__val_order(a, b);
}

/* Stable merge sort of v[0..n) by the order of values, with tmp of n entries. */
static void lists_merge_sort(stc_value *v, stc_value *tmp, size_t n)
{
    if (n < 2) return;
    size_t h = n / 2;
    lists_merge_sort(v, tmp, h);
    lists_merge_sort(v + h, tmp, n - h);
    if (lists_order(v[h - 1], v[h]) <= 0) return; /* already in order */
    memcpy(tmp, v, h * sizeof *v);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) v[k++] = lists_order(v[j], tmp[i]) < 0 ? v[j++] : tmp[i++];
    while (i < h) v[k++] = tmp[i++];
}

static int lists_sort(eval_ctx *cx, ir_loc loc, stc_value xs, stc_value *out)
{
    size_t n = val_seq_len(xs);
    stc_value *tmp = n > 1 ? malloc((n / 2) * sizeof *tmp) : NULL;
    if (n > 1 && !tmp) return stc__eval_oom(cx, loc);
    int rc = lists_copy(cx, loc, val_seq_items(xs), n, out);
    if (rc == 0) lists_merge_sort(val_seq_items(*out), tmp, n);
    free(tmp);
    return rc;
}

static int lists_zip(eval_ctx *cx, ir_loc loc, stc_value xs, stc_value ys, stc_value *out)
{
    size_t n = val_seq_len(xs) < val_seq_len(ys) ? val_seq_len(xs) : val_seq_len(ys);
    stc_value r = stc__val_seq_alloc(STC_T_LIST, n);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    for (size_t i = 0; i < n; i++) {
        stc_value pair[2] = {val_retain(val_seq_items(xs)[i]), val_retain(val_seq_items(ys)[i])};
        stc_value t = stc_value_new_tuple(2, pair); /* consumes pair */
        if (t.tag == STC_T_INVALID) {
            val_release(r);
            return stc__eval_oom(cx, loc);
        }
        val_seq_items(r)[i] = t;
    }
    *out = r;
    return 0;
}

/* take(xs, n) and drop(xs, n): n < 0 is an error; n past the end is all. */
static int lists_take_drop(eval_ctx *cx, ir_loc loc, bool take, stc_value xs, int64_t n, stc_value *out)
{
    if (n < 0)
        return stc__eval_error(cx, STC_ERUNTIME, loc, "%s: negative count %" PRId64, take ? "take" : "drop", n);
    size_t len = val_seq_len(xs), k = (uint64_t)n < len ? (size_t)n : len;
    if ((take && k == len) || (!take && k == 0)) {
        *out = val_retain(xs);
        return 0;
    }
    return take ? lists_copy(cx, loc, val_seq_items(xs), k, out)
                : lists_copy(cx, loc, val_seq_items(xs) + k, len - k, out);
}

int stc__eval_list_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out)
{
    const char *name = stc__ir_builtins[bi].name;
    switch (bi) {
    case BI_FOLD:
        if (a[0].tag != STC_T_FUNC || a[2].tag != STC_T_LIST) break;
        return lists_fold(cx, loc, a[0], a[1], a[2], out);
    case BI_FILTER:
        if (a[0].tag != STC_T_FUNC || a[1].tag != STC_T_LIST) break;
        return lists_filter(cx, loc, a[0], a[1], out);
    case BI_APPEND:
    case BI_ZIP:
        if (a[0].tag != STC_T_LIST || a[1].tag != STC_T_LIST) break;
        return bi == BI_APPEND ? lists_append(cx, loc, a[0], a[1], out) : lists_zip(cx, loc, a[0], a[1], out);
    case BI_REVERSE:
    case BI_SORT:
        if (a[0].tag != STC_T_LIST) break;
        return bi == BI_REVERSE ? lists_reverse(cx, loc, a[0], out) : lists_sort(cx, loc, a[0], out);
    case BI_TAKE:
    case BI_DROP:
        if (a[0].tag != STC_T_LIST || a[1].tag != STC_T_INT) break;
        return lists_take_drop(cx, loc, bi == BI_TAKE, a[0], a[1].as.i, out);
    default: break;
    }
    return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad arguments to '%s'", name);
}
