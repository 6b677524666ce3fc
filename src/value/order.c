/* order.c - the total order on values without functions (docs/LANGUAGE.md
 * 7, `sort`): () ; false < true ; ints numerically ; floats by IEEE 754
 * totalOrder (-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN) ; strings
 * bytewise, a proper prefix first ; lists and tuples lexicographically, a
 * proper prefix first ; inl a < inr b, two inl (or two inr) by their
 * contents.
 *
 * Iterative like stc_value_equal (value.c), for values nested deeper than
 * the C stack allows: an explicit stack of the container pairs being
 * compared.  Once a comparison gets big, pairs of shared containers found
 * equal are remembered (val_memo), which keeps it linear in the objects
 * for the sharing the language creates. */
#include <stdlib.h>
#include <string.h>

#include "value/map.h"
#include "value/value.h"

typedef struct val_ord_frame {
    const stc_value *xa, *xb; /* the items (or payloads) to compare */
    size_t na, nb, i;         /* xa[0..i) equal xb[0..i) */
    const stc_obj *a, *b;     /* the containers: remembered when equal */
} val_ord_frame;

typedef struct val_ord {
    val_memo memo;
    size_t steps; /* containers opened; the memo is used from VAL_MEMO_AFTER on */
} val_ord;

enum { VAL_ORD_OPEN = 2 }; /* else -1, 0, 1 */

static int val_ord_int(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* IEEE 754 totalOrder: the bits as a sign-magnitude integer. */
static int64_t val_ord_float_key(double f)
{
    int64_t k;
    memcpy(&k, &f, sizeof k);
    return k < 0 ? k ^ INT64_MAX : k;
}

static bool val_ord_memo_on(const val_ord *q, const stc_obj *a, const stc_obj *b)
{
    return q->steps >= VAL_MEMO_AFTER && val_obj_shared(a) && val_obj_shared(b);
}

/* Compares what can be compared at once; VAL_ORD_OPEN with *f set up for
 * a pair of containers whose items are still to compare. */
static int val_ord_step(val_ord *q, stc_value a, stc_value b, val_ord_frame *f)
{
    if (a.tag != b.tag) return val_ord_int(a.tag, b.tag); /* inl < inr (well typed: only these differ) */
    switch (a.tag) {
    case STC_T_BOOL: return val_ord_int(a.as.b, b.as.b);
    case STC_T_INT: return val_ord_int(a.as.i, b.as.i);
    case STC_T_FLOAT: return val_ord_int(val_ord_float_key(a.as.f), val_ord_float_key(b.as.f));
    case STC_T_STR: {
        const val_str *x = val_as_str(a), *y = val_as_str(b);
        if (x == y) return 0;
        size_t n = x->len < y->len ? x->len : y->len;
        int c = memcmp(x->data, y->data, n);
        if (c) return c < 0 ? -1 : 1;
        return val_ord_int(x->len > y->len, x->len < y->len);
    }
    case STC_T_LIST:
    case STC_T_TUPLE:
        if (a.as.obj == b.as.obj) return 0; /* no NaN trouble: an order, not == */
        *f = (val_ord_frame){val_seq_items(a), val_seq_items(b), val_seq_len(a), val_seq_len(b), 0,
                             a.as.obj, b.as.obj};
        break;
    case STC_T_INL:
    case STC_T_INR:
        if (a.as.obj == b.as.obj) return 0;
        *f = (val_ord_frame){&((const val_box *)a.as.obj)->v, &((const val_box *)b.as.obj)->v, 1, 1, 0,
                             a.as.obj, b.as.obj};
        break;
    case STC_T_MAP: return stc__val_key_compare(a, b); /* by their items (map.c) */
    default: return 0; /* unit; functions and user objects are not ordered (the types exclude them) */
    }
    q->steps++;
    if (val_ord_memo_on(q, f->a, f->b) && stc__val_memo_get(&q->memo, f->a, f->b, NULL, NULL)) return 0;
    return VAL_ORD_OPEN;
}

#define VAL_ORD_INLINE 32 /* frames on the C stack: nesting beyond this allocates */

static int val_ord_walk(val_ord *q, stc_value a, stc_value b)
{
    val_ord_frame inline_st[VAL_ORD_INLINE], *st = inline_st, f;
    size_t top = 0, cap = VAL_ORD_INLINE;
    int result = 0;
    for (;;) {
        int r = val_ord_step(q, a, b, &f);
        if (r == -1 || r == 1) { result = r; break; }
        if (r == VAL_ORD_OPEN) {
            if (top == cap) {
                val_ord_frame *bigger = cap <= SIZE_MAX / 2 / sizeof *st
                                        ? realloc(st == inline_st ? NULL : st, 2 * cap * sizeof *st) : NULL;
                if (!bigger) {
                    /* Out of memory for the stack: compare this pair in a
                     * nested walk (its own inline stack, the same memo). */
                    if ((result = val_ord_walk(q, a, b)) != 0) break;
                    goto next;
                }
                if (st == inline_st) memcpy(bigger, inline_st, sizeof inline_st);
                st = bigger;
                cap *= 2;
            }
            st[top++] = f;
        }
    next:
        /* The next pair: the next item of the innermost open container.  A
         * container whose common items are all equal is decided by its
         * length (a proper prefix first); equal ones are done. */
        while (top > 0) {
            val_ord_frame *d = &st[top - 1];
            if (d->i < d->na && d->i < d->nb) break;
            if (d->na != d->nb) { result = d->na < d->nb ? -1 : 1; goto out; }
            if (val_ord_memo_on(q, d->a, d->b)) stc__val_memo_put(&q->memo, d->a, d->b, 0, 0);
            top--;
        }
        if (top == 0) break;
        val_ord_frame *cur = &st[top - 1];
        a = cur->xa[cur->i];
        b = cur->xb[cur->i];
        cur->i++;
    }
out:
    if (st != inline_st) free(st);
    return result;
}

int stc__val_order(stc_value a, stc_value b)
{
    val_ord_frame unused;
    if (a.tag == b.tag && a.tag <= STC_T_STR) return val_ord_step(NULL, a, b, &unused); /* the common case: no walk */
    if (a.tag == b.tag && (a.tag == STC_T_TUPLE || a.tag == STC_T_LIST)) {
        /* a sequence of scalars and strings (a sort key such as (-count,
         * word)) compares without the walk's set-up; a container inside
         * sends it to the walk */
        const stc_value *xa = val_seq_items(a), *xb = val_seq_items(b);
        size_t na = val_seq_len(a), nb = val_seq_len(b), i = 0;
        for (; i < na && i < nb; i++) {
            if (xa[i].tag != xb[i].tag || xa[i].tag > STC_T_STR) break;
            int r = val_ord_step(NULL, xa[i], xb[i], &unused);
            if (r) return r;
        }
        if (i == na || i == nb) return val_ord_int(na, nb); /* all common items equal: a proper prefix first */
    }
    val_ord q = {VAL_MEMO_INIT, 0};
    int r = val_ord_walk(&q, a, b);
    stc__val_memo_free(&q.memo);
    return r;
}
