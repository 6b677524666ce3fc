/* print.c - values as STCLang text and as JSON. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "value/map.h"
#include "value/value.h"

void stc__val_print_float(buf *b, double f)
{
    if (isnan(f)) { stc__buf_puts(b, "nan"); return; }
    if (isinf(f)) { stc__buf_puts(b, f < 0 ? "-inf" : "inf"); return; }
    char tmp[40];
    /* A decimal of at most 15 digits survives the trip through a normal
     * double (DBL_DIG), so %.15g (which drops trailing zeros) is already
     * the shortest form when one of at most 15 digits exists. Subnormals
     * carry fewer significant bits: 5e-324 prints as
     * 4.94065645841247e-324 at 15 digits, so their search starts at 1. */
    int first = f != 0.0 && fabs(f) < DBL_MIN ? 1 : 15;
    for (int prec = first; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, f);
        if (strtod(tmp, NULL) == f) break;
    }
    stc__buf_puts(b, tmp);
    for (const char *p = tmp; *p; p++)
        if (*p == '.' || *p == 'e' || *p == 'n' || *p == 'i') return;
    stc__buf_puts(b, ".0");
}

/* Whether printing must stop: b failed, or it passed the byte limit end. */
static bool val_print_stop(const buf *b, size_t end) { return b->failed || b->len > end; }

static void val_print_string(buf *b, const char *s, size_t len, bool json, size_t end)
{
    stc__buf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        if (val_print_stop(b, end)) return; /* a huge string: no need to copy it all */
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': stc__buf_puts(b, "\\\""); break;
        case '\\': stc__buf_puts(b, "\\\\"); break;
        case '\n': stc__buf_puts(b, "\\n"); break;
        case '\t': stc__buf_puts(b, "\\t"); break;
        case '\r': stc__buf_puts(b, "\\r"); break;
        default:
            if (c < 0x20 || c == 0x7f) {
                stc__buf_printf(b, json ? "\\u%04x" : "\\x%02x", c);
            } else if (c < 0x80 || !json) {
                stc__buf_putc(b, (char)c);
            } else {
                /* JSON text is UTF-8: well-formed sequences are copied, any
                 * ill-formed part is one U+FFFD (docs/LANGUAGE.md section 9). */
                i += stc__utf8_put_json(b, (const unsigned char *)s + i, len - i) - 1;
            }
        }
    }
    stc__buf_putc(b, '"');
}

void stc__val_print_text_string(buf *b, const char *s, size_t len) { val_print_string(b, s, len, false, SIZE_MAX); }

/* Depth guard: values nested deeper than this print as "..." rather than
 * recursing without bound. */
#define VAL_PRINT_MAX_DEPTH 10000

/* An int in decimal: streams print millions of them, and printf's
 * format parsing costs more than the digits. */
static void val_print_int(buf *b, int64_t i)
{
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (i < 0) *--p = '-';
    stc__buf_put(b, p, (size_t)(tmp + sizeof tmp - p));
}

static void val_print_map(buf *b, stc_value m, bool json, int depth, size_t end);

/* Prints v at nesting depth `depth`; stops early (leaving a partial text)
 * once b fails or grows past end, so the work is bounded by the limit
 * however large the value's text would be. */
static void val_print(buf *b, stc_value v, bool json, int depth, size_t end)
{
    if (val_print_stop(b, end)) return;
    if (depth > VAL_PRINT_MAX_DEPTH) { stc__buf_puts(b, json ? "null" : "..."); return; }
    switch (v.tag) {
    case STC_T_INVALID: stc__buf_puts(b, json ? "null" : "<invalid>"); break;
    case STC_T_UNIT: stc__buf_puts(b, json ? "null" : "()"); break;
    case STC_T_INT: val_print_int(b, v.as.i); break;
    case STC_T_FLOAT:
        if (json && !isfinite(v.as.f)) {
            stc__buf_putc(b, '"');
            stc__val_print_float(b, v.as.f);
            stc__buf_putc(b, '"');
        } else {
            stc__val_print_float(b, v.as.f);
        }
        break;
    case STC_T_BOOL: stc__buf_puts(b, v.as.b ? "true" : "false"); break;
    case STC_T_STR: val_print_string(b, val_as_str(v)->data, val_as_str(v)->len, json, end); break;
    case STC_T_LIST:
    case STC_T_TUPLE: {
        bool list = v.tag == STC_T_LIST;
        stc__buf_putc(b, json || list ? '[' : '(');
        for (size_t i = 0; i < val_seq_len(v); i++) {
            if (val_print_stop(b, end)) return;
            if (i) stc__buf_puts(b, ", ");
            val_print(b, val_seq_items(v)[i], json, depth + 1, end);
        }
        stc__buf_putc(b, json || list ? ']' : ')');
        break;
    }
    case STC_T_INL:
    case STC_T_INR: {
        const char *side = v.tag == STC_T_INL ? "inl" : "inr";
        stc_value p = val_box_get(v);
        if (json) {
            stc__buf_printf(b, "{\"%s\": ", side);
            val_print(b, p, json, depth + 1, end);
            stc__buf_putc(b, '}');
        } else {
            bool paren = p.tag == STC_T_INL || p.tag == STC_T_INR ||
                         (p.tag == STC_T_INT && p.as.i < 0) || (p.tag == STC_T_FLOAT && p.as.f < 0);
            stc__buf_printf(b, "%s ", side);
            if (paren) stc__buf_putc(b, '(');
            val_print(b, p, json, depth + 1, end);
            if (paren) stc__buf_putc(b, ')');
        }
        break;
    }
    case STC_T_FUNC: stc__buf_puts(b, json ? "\"<fn>\"" : "<fn>"); break;
    case STC_T_USER: stc__buf_puts(b, json ? "\"<object>\"" : "<object>"); break;
    case STC_T_MAP: val_print_map(b, v, json, depth, end); break;
    }
}

/* {k: v, ...} in key order; in JSON an object when the keys are strings
 * (all keys of a map have one type, so the first tells), else an array of
 * [k, v] arrays. */
static void val_print_map(buf *b, stc_value m, bool json, int depth, size_t end)
{
    val_map_iter it;
    stc__val_map_iter_init(&it, m);
    stc_value k, v;
    bool first = true, object = !json;
    while (stc__val_map_iter_next(&it, &k, &v)) {
        if (val_print_stop(b, end)) return;
        if (first) {
            object = !json || k.tag == STC_T_STR;
            stc__buf_putc(b, object ? '{' : '[');
        } else {
            stc__buf_puts(b, ", ");
        }
        first = false;
        if (!object) stc__buf_putc(b, '[');
        val_print(b, k, json, depth + 1, end);
        stc__buf_puts(b, object ? ": " : ", ");
        val_print(b, v, json, depth + 1, end);
        if (!object) stc__buf_putc(b, ']');
    }
    if (first) stc__buf_putc(b, '{'); /* empty: {} in text and JSON */
    stc__buf_putc(b, object || first ? '}' : ']');
}

/* ---- A lower bound of the printed size -----------------------------------------
 *
 * val_print walks every path through a value: a list holding one sublist
 * twice, nested 40 times, is 40 objects but prints 2^40 leaves.  Before
 * printing with a large limit, this walk adds up, per object, a lower
 * bound of the bytes val_print writes for it (brackets and separators,
 * ints exactly, strings unescaped, 3 for a float...) and remembers the sum
 * for shared objects (val_memo), so each is walked once: a text beyond the
 * limit is usually known to be so at once, without printing anything.
 * Every object adds at least one byte, so even without the memo the walk
 * stops after about `max` steps.  A remembered sum holds at any depth
 * where the object's subtree stays within VAL_PRINT_MAX_DEPTH (deeper
 * parts print as "..."), so the memo keeps each subtree's height too; the
 * sum of a subtree that reaches the limit holds at its own depth only and
 * is remembered under that depth. */

static size_t val_lb_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

static size_t val_lb_int(int64_t i)
{
    uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    size_t n = i < 0 ? 2 : 1;
    while (u >= 10) u /= 10, n++;
    return n;
}

/* The memo key of a subtree cut by the depth limit: its sum holds at that
 * depth only. */
static const void *val_lb_depth_key(int depth) { return (const void *)(uintptr_t)(depth + 1); }

typedef struct val_lb_frame {
    const stc_value *items; /* the items, or a sum's payload */
    size_t n, i;
    const stc_obj *obj;
    size_t start;  /* the total before this container */
    size_t height; /* of the subtree walked so far (a leaf is 0) */
    int depth;
    bool cut;      /* something below is at the depth limit */
} val_lb_frame;

#define VAL_LB_INLINE 32

/* A lower bound of the length of val_print(v, json): exact up to strings,
 * floats, sums' parentheses and the like, and at least max + 1 when the
 * text is longer than max (the walk stops there).  0 when memory for the
 * walk ran out: no information. */
static size_t val_print_lower_bound(stc_value v, bool json, size_t max)
{
    val_lb_frame inline_st[VAL_LB_INLINE], *st = inline_st;
    size_t top = 0, cap = VAL_LB_INLINE, total = 0, steps = 0;
    val_memo memo = VAL_MEMO_INIT;
    int depth = 0;
    for (;;) {
        size_t add = 0, n = 0, over = 0; /* over: the container's own bytes */
        const stc_value *items = NULL;
        bool leaf = true;
        if (depth > VAL_PRINT_MAX_DEPTH) {
            add = json ? 4 : 3;
            if (top) st[top - 1].cut = true;
        } else {
            switch (v.tag) {
            case STC_T_INVALID: add = json ? 4 : 9; break;
            case STC_T_UNIT: add = json ? 4 : 2; break;
            case STC_T_INT: add = val_lb_int(v.as.i); break;
            case STC_T_FLOAT: add = 3; break; /* "0.0", "nan", "1e+300" */
            case STC_T_BOOL: add = 4; break;
            case STC_T_STR: add = val_lb_add(val_as_str(v)->len, 2); break;
            case STC_T_LIST:
            case STC_T_TUPLE:
                n = val_seq_len(v);
                if (n == 0) { add = 2; break; }
                items = val_seq_items(v);
                over = val_lb_add(2, (n - 1) < SIZE_MAX / 2 ? 2 * (n - 1) : SIZE_MAX);
                leaf = false;
                break;
            case STC_T_INL:
            case STC_T_INR:
                n = 1;
                items = &((const val_box *)v.as.obj)->v;
                over = json ? 9 : 4; /* {"inl": X} or inl X */
                leaf = false;
                break;
            case STC_T_FUNC: add = 4; break;
            case STC_T_USER: add = 8; break;
            case STC_T_MAP: add = 2; break; /* its braces: a lower bound */
            }
        }
        if (leaf) {
            total = val_lb_add(total, add);
        } else {
            size_t lb, h;
            bool memo_on = ++steps >= VAL_MEMO_AFTER && val_obj_shared(v.as.obj);
            if (memo_on && ((stc__val_memo_get(&memo, v.as.obj, NULL, &lb, &h) &&
                             h <= (size_t)(VAL_PRINT_MAX_DEPTH - depth)) ||
                            stc__val_memo_get(&memo, v.as.obj, val_lb_depth_key(depth), &lb, &h))) {
                total = val_lb_add(total, lb);
                if (top) {
                    val_lb_frame *up = &st[top - 1];
                    if (up->height < h + 1) up->height = h + 1;
                    up->cut |= h > (size_t)(VAL_PRINT_MAX_DEPTH - depth);
                }
            } else {
                if (top == cap) {
                    val_lb_frame *bigger = cap <= SIZE_MAX / 2 / sizeof *st
                                           ? realloc(st == inline_st ? NULL : st, 2 * cap * sizeof *st) : NULL;
                    if (!bigger) { total = 0; break; } /* no bound: the printer's limit decides */
                    if (st == inline_st) memcpy(bigger, inline_st, sizeof inline_st);
                    st = bigger;
                    cap *= 2;
                }
                st[top++] = (val_lb_frame){items, n, 0, v.as.obj, total, 1, depth, false};
                total = val_lb_add(total, over);
            }
        }
        if (total > max) break;
        /* Close the finished containers, then take the next item. */
        while (top > 0 && st[top - 1].i == st[top - 1].n) {
            const val_lb_frame *d = &st[--top];
            if (steps >= VAL_MEMO_AFTER && val_obj_shared(d->obj))
                stc__val_memo_put(&memo, d->obj, d->cut ? val_lb_depth_key(d->depth) : NULL, total - d->start,
                             d->height);
            if (top) {
                val_lb_frame *up = &st[top - 1];
                if (up->height < d->height + 1) up->height = d->height + 1;
                up->cut |= d->cut;
            }
        }
        if (top == 0) break;
        val_lb_frame *cur = &st[top - 1];
        v = cur->items[cur->i++];
        depth = cur->depth + 1;
    }
    if (st != inline_st) free(st);
    stc__val_memo_free(&memo);
    return total;
}

/* Cuts b back to len bytes. */
static void val_buf_cut(buf *b, size_t len)
{
    if (b->failed || b->len <= len) return;
    b->len = len;
    if (b->data) b->data[len] = '\0';
}

static int val_print_max(buf *b, stc_value v, bool json, size_t max)
{
    if (!buf_ok(b)) return STC_ENOMEM;
    size_t start = b->len, end = start > SIZE_MAX - max ? SIZE_MAX : start + max;
    if (val_print_lower_bound(v, json, max) > max) return STC_ELIMIT;
    val_print(b, v, json, 0, end);
    if (!buf_ok(b)) return STC_ENOMEM;
    if (b->len > end) {
        val_buf_cut(b, start);
        return STC_ELIMIT;
    }
    return 0;
}

int stc__val_print_text(buf *b, stc_value v, size_t max) { return val_print_max(b, v, false, max); }
int stc__val_print_json(buf *b, stc_value v, size_t max) { return val_print_max(b, v, true, max); }

void stc__val_print_text_brief(buf *b, stc_value v, size_t max)
{
    if (!buf_ok(b)) return;
    size_t start = b->len, end = start > SIZE_MAX - max ? SIZE_MAX : start + max;
    val_print(b, v, false, 0, end); /* stops soon after end: no lower bound needed */
    if (!buf_ok(b) || b->len <= end) return;
    /* Do not end inside a UTF-8 sequence: drop a sequence cut short. */
    size_t n = max;
    const unsigned char *d = (const unsigned char *)b->data + start;
    for (int k = 0; k < 3 && n > 0 && (d[n] & 0xc0) == 0x80; k++) n--;
    if (n > 0 && (d[n] & 0xc0) == 0x80) n = max; /* not UTF-8 */
    val_buf_cut(b, start + n);
    stc__buf_puts(b, "...");
}

char *stc__val_print_take(buf *b, int rc)
{
    if (rc == 0) {
        char *s = stc__buf_take(b);
        if (s) return s;
        rc = STC_ENOMEM;
    }
    stc__buf_free(b);
    errno = rc == STC_ELIMIT ? E2BIG : ENOMEM;
    return NULL;
}

char *stc_value_to_text(stc_value v)
{
    buf b = BUF_INIT;
    return stc__val_print_take(&b, stc__val_print_text(&b, v, VAL_PRINT_MAX));
}

char *stc_value_to_json(stc_value v)
{
    buf b = BUF_INIT;
    return stc__val_print_take(&b, stc__val_print_json(&b, v, VAL_PRINT_MAX));
}
