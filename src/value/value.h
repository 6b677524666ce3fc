/* value.h - internal layout of heap values (the public API sees stc_obj as
 * opaque).  Heap objects are immutable after construction; the reference
 * count is the only mutable field and is atomic, so values may be shared
 * between worker threads freely. */
#ifndef STC_VALUE_H
#define STC_VALUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stc.h"
#include "util/buf.h"

struct stc_obj {
    atomic_uint_fast32_t refs; /* atomic: the only mutable field */
    stc_tag tag;
    uint8_t cls;               /* the block's size class (value/cache.h) */
};

typedef struct val_str {
    stc_obj hdr;
    size_t len;
    char data[]; /* len bytes + NUL */
} val_str;

typedef struct val_seq { /* STC_T_LIST and STC_T_TUPLE */
    stc_obj hdr;
    size_t n;
    stc_value items[];
} val_seq;

typedef struct val_box { /* STC_T_INL and STC_T_INR */
    stc_obj hdr;
    stc_value v;
} val_box;

typedef struct val_user {
    stc_obj hdr;
    void *ptr;
    void (*destroy)(void *);
} val_user;

typedef struct val_func { /* a closure: code is an ir_fun*, opaque here */
    stc_obj hdr;
    const void *code;
    size_t ncaps;
    stc_value caps[];
} val_func;

/* An uninitialised list/tuple of n items to be filled by the caller before
 * it is shared (items start as unit). INVALID when out of memory. */
stc_value val_seq_alloc(stc_tag tag, size_t n);
/* The same with INVALID items, for a producer that fills every item before
 * the sequence is seen (releasing it unfilled is safe). */
stc_value val_seq_alloc_unfilled(stc_tag tag, size_t n);
static inline stc_value *val_seq_items(stc_value v) { return ((val_seq *)v.as.obj)->items; }
static inline size_t val_seq_len(stc_value v) { return ((val_seq *)v.as.obj)->n; }
static inline val_str *val_as_str(stc_value v) { return (val_str *)v.as.obj; }
/* An uninitialised string of len bytes (NUL-terminated) to be filled by the
 * caller before it is shared. INVALID when out of memory. */
stc_value val_str_alloc(size_t len);
static inline stc_value val_box_get(stc_value v) { return ((val_box *)v.as.obj)->v; }
static inline bool val_is_heap(stc_value v) { return v.tag >= STC_T_STR && v.as.obj; }
/* A closure over `code` with ncaps captured values (unit until filled). */
stc_value val_func_alloc(const void *code, size_t ncaps);
static inline val_func *val_as_func(stc_value v) { return (val_func *)v.as.obj; }

/* Ordering for int, float and str (strings bytewise); <0, 0, >0. */
int val_compare(stc_value a, stc_value b);
/* The total order of values without functions that `sort` uses (order.c;
 * docs/LANGUAGE.md 7): -1, 0 or 1.  Floats by IEEE totalOrder. */
int val_order(stc_value a, stc_value b);

/* Whether the object may be reachable along more than one path (more than
 * one reference): only such objects can be met again in a walk, so only
 * they are worth remembering.  A stale count only costs a missed entry. */
static inline bool val_obj_shared(const stc_obj *o)
{
    return atomic_load_explicit(&((stc_obj *)o)->refs, memory_order_relaxed) > 1;
}

/* A map from pointer pairs (a != NULL) to two size_t, for walks over values
 * with sharing (a list holding the same sublist twice, nested 40 times, has
 * 2^40 leaves but 40 objects): remembering the shared objects (or pairs of
 * them) already done keeps such walks linear in the number of objects.
 * Allocated at the first val_memo_put; if memory runs out the map keeps its
 * entries and ignores new ones (walks stay correct, only slower).  Walks
 * start using it only after VAL_MEMO_AFTER steps, so small ones never
 * allocate. */
#define VAL_MEMO_AFTER 4096
typedef struct val_memo_slot {
    const void *a, *b;
    size_t v, w;
} val_memo_slot;
typedef struct val_memo {
    val_memo_slot *slots;
    size_t cap, n;
    bool failed;
} val_memo;
#define VAL_MEMO_INIT {NULL, 0, 0, false}
/* Whether (a, b) is in m; its values go to *v and *w (either may be NULL). */
bool val_memo_get(const val_memo *m, const void *a, const void *b, size_t *v, size_t *w);
void val_memo_put(val_memo *m, const void *a, const void *b, size_t v, size_t w);
void val_memo_free(val_memo *m);

/* Printing with a byte limit.  The text (or JSON) of a value can be far
 * larger than the value: with sharing, exponentially so.  These append
 * v's text to b and return 0 when it is at most max bytes; STC_ELIMIT when
 * it is longer (b is then as it was: a lower bound of the size, computed
 * over the shared objects once each, usually tells at once, else printing
 * stops at the limit); STC_ENOMEM when b failed (buf_ok).  The work is
 * linear in the number of objects plus min(text size, max). */
int val_print_text(buf *b, stc_value v, size_t max);
int val_print_json(buf *b, stc_value v, size_t max);
/* Appends v's text, or, when it is longer than max bytes, its first max
 * bytes (not ending inside a UTF-8 sequence) and "...": for error messages. */
void val_print_text_brief(buf *b, stc_value v, size_t max);
/* The result of a public printer: b's string when rc is 0, else NULL with
 * errno E2BIG (rc STC_ELIMIT: too large) or ENOMEM; b is reset. */
char *val_print_take(buf *b, int rc);
/* The limit of stc_value_to_text, stc_value_to_json, stc_result_to_json and
 * str(v): 1 GiB, ten times the text of a list of 10 million ints. */
#define VAL_PRINT_MAX ((size_t)1 << 30)
/* How much of a value error messages quote (val_print_text_brief). */
#define VAL_PRINT_BRIEF 200
/* Appends len bytes of s as a quoted STCLang string literal, escaped exactly
 * as val_print_text prints a string ("a\"b", control bytes as \xHH). */
void val_print_text_string(buf *b, const char *s, size_t len);
/* Appends the shortest decimal form of f that reads back exactly, with
 * ".0" when it would look like an int; "nan", "inf", "-inf" otherwise. */
void val_print_float(buf *b, double f);

#endif
