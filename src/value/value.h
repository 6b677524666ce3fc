/* value.h - internal layout of heap values (the public API sees stc_obj as
 * opaque).  Heap objects are immutable after construction; the reference
 * count is the only mutable field, and the `shared` mark says how it may
 * be changed (see "Reference counts" below). */
#ifndef STC_VALUE_H
#define STC_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stc.h"
#include "util/buf.h"
#include "value/cache.h"

struct stc_obj {
    /* Changed plainly or atomically (the __atomic builtins), see below.
     * size_t: references take memory, so the count cannot overflow. */
    size_t refs;
    stc_tag tag;
    uint8_t cls;    /* the block's size class (value/cache.h) */
    uint8_t shared; /* VAL_SHARED: counted atomically by every thread (read
                       and written with relaxed atomic byte accesses) */
    uint8_t owner;  /* the id of the cache that allocated the block (value/cache.h) */
};

/* ---- Reference counts ---------------------------------------------------------
 *
 * An atomic read-modify-write for every count change cost a third of a
 * 1-worker run (docs/DESIGN.md, section 5, "Values on workers").  Counts are
 * therefore changed plainly where no other thread can touch the object at
 * the same time, and atomically elsewhere:
 *
 *   - stc__val_counts_plain, a per-thread mode, is true only on a thread that is
 *     the only one touching its run's values: the thread of stc_run outside
 *     parallel jobs (all of a reference or 1-worker run), and its stack
 *     segment threads (eval.c), and the workers of a pipeline whose values
 *     two workers can reach at once are marked (flow's plain jobs: the
 *     job's inputs and captures when it starts, each thread's state after
 *     every serial stage's activation; docs/DESIGN.md 5, "Plain counts on
 *     the workers").  Other parallel jobs of more than one worker clear it
 *     on every worker for the job's duration (stc__flow_on_worker).
 *     Switching happens at job start and end, which go through the
 *     scheduler's mutex, so plain and atomic changes of one count are
 *     always ordered, as a batch's hand-over from one worker to another
 *     is.  Host threads never set it: their changes are atomic.
 *   - An object marked VAL_SHARED is counted atomically by every thread:
 *     program literals (which concurrent runs of one program share),
 *     whatever a host retains through stc_value_retain (with everything it
 *     reaches: the host may hand it to its other threads), as Lean 4 marks
 *     objects that become reachable from another thread, and what a plain
 *     job marks.  Marks are never removed, and a marked object is never
 *     changed in place (its new parts would not be marked).
 *
 * val_retain and val_release are the internal, inline fast paths; scalars
 * are never counted.  The public stc_value_retain/release stay callable
 * from any thread. */
enum { VAL_LOCAL = 0, VAL_SHARED = 1 };

#if defined(__GNUC__) && !defined(STC_NO_TLS_MODEL)
/* initial-exec: one load from the thread pointer, not a __tls_get_addr
 * call per count change in libstc.so. */
extern _Thread_local bool stc__val_counts_plain __attribute__((tls_model("initial-exec")));
#else
extern _Thread_local bool stc__val_counts_plain;
#endif

/* Sets the calling thread's counting mode; returns the previous one, to be
 * put back when the thread is done. */
bool stc__val_counts_set_plain(bool plain);

static inline bool val_obj_is_shared(const stc_obj *o)
{
    return __atomic_load_n(&o->shared, __ATOMIC_RELAXED) != VAL_LOCAL;
}

/* Frees an object whose count reached zero (releasing what it holds). */
void stc__val_obj_free(stc_obj *o);

static inline bool val_is_heap(stc_value v) { return v.tag >= STC_T_STR && v.as.obj; }

static inline stc_value val_retain(stc_value v)
{
    if (val_is_heap(v)) {
        stc_obj *o = v.as.obj;
        if (stc__val_counts_plain && !val_obj_is_shared(o)) o->refs++;
        else __atomic_fetch_add(&o->refs, 1, __ATOMIC_RELAXED);
    }
    return v;
}

static inline void val_release(stc_value v)
{
    if (!val_is_heap(v)) return;
    stc_obj *o = v.as.obj;
    if (stc__val_counts_plain && !val_obj_is_shared(o)) {
        if (--o->refs == 0) stc__val_obj_free(o);
    } else if (__atomic_fetch_sub(&o->refs, 1, __ATOMIC_ACQ_REL) == 1) {
        /* acq_rel: the thread that frees sees every other thread's writes. */
        stc__val_obj_free(o);
    }
}

/* Marks v and everything it reaches VAL_SHARED (stopping at objects
 * already marked).  If memory for the walk runs out, objects deeper than
 * its stack stay unmarked (then only as safe as before the mark). */
void stc__val_mark_shared(stc_value v);

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
stc_value stc__val_seq_alloc(stc_tag tag, size_t n);
/* The same with INVALID items, for a producer that fills every item before
 * the sequence is seen (releasing it unfilled is safe). */
stc_value stc__val_seq_alloc_unfilled(stc_tag tag, size_t n);
/* stc__val_seq_alloc inline and with its items not set, for words: the
 * caller sets n of them before the sequence is released or seen, and on
 * failure sets the count (the n field) to those set before releasing it. */
static inline stc_value val_seq_new_unset(stc_tag tag, size_t n)
{
    stc_value v = {.tag = STC_T_INVALID};
    uint8_t cls, owner;
    if (n > (SIZE_MAX - sizeof(val_seq)) / sizeof(stc_value)) return v;
    val_seq *o = val_block_alloc(sizeof(val_seq) + n * sizeof(stc_value), &cls, &owner);
    if (!o) return v;
    o->hdr = (stc_obj){.refs = 1, .tag = tag, .cls = cls, .shared = VAL_LOCAL, .owner = owner};
    o->n = n;
    v.tag = tag;
    v.as.obj = &o->hdr;
    return v;
}
static inline stc_value *val_seq_items(stc_value v) { return ((val_seq *)v.as.obj)->items; }
static inline size_t val_seq_len(stc_value v) { return ((val_seq *)v.as.obj)->n; }
static inline val_str *val_as_str(stc_value v) { return (val_str *)v.as.obj; }
/* An uninitialised string of len bytes (NUL-terminated) to be filled by the
 * caller before it is shared. INVALID when out of memory. */
stc_value stc__val_str_alloc(size_t len);
/* stc_value_new_str inline, for the builtins that cut strings (words,
 * split, slice): a call to an exported function is not inlined in the
 * library's position-independent code, nor are the calls below it. */
static inline stc_value val_str_new(const char *s, size_t len)
{
    stc_value v = {.tag = STC_T_INVALID};
    uint8_t cls, owner;
    if (len > SIZE_MAX - sizeof(val_str) - 1) return v;
    val_str *o = val_block_alloc(sizeof(val_str) + len + 1, &cls, &owner);
    if (!o) return v;
    o->hdr = (stc_obj){.refs = 1, .tag = STC_T_STR, .cls = cls, .shared = VAL_LOCAL, .owner = owner};
    o->len = len;
    /* A word: two overlapping moves, not a call (memcpy's call and
     * dispatch cost more than the copy of a few bytes). */
    if (len >= 8 && len <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + len - 8, 8);
        memcpy(o->data, &a, 8);
        memcpy(o->data + len - 8, &b, 8);
    } else if (len >= 4 && len < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        memcpy(o->data, &a, 4);
        memcpy(o->data + len - 4, &b, 4);
    } else if (len > 0 && len < 4) { /* bytes 0, len / 2 and len - 1 cover 1 to 3 */
        o->data[0] = s[0];
        o->data[len / 2] = s[len / 2];
        o->data[len - 1] = s[len - 1];
    } else if (len > 16) {
        memcpy(o->data, s, len);
    }
    o->data[len] = '\0';
    v.tag = STC_T_STR;
    v.as.obj = &o->hdr;
    return v;
}
static inline stc_value val_box_get(stc_value v) { return ((val_box *)v.as.obj)->v; }
/* stc_value_new_inl/inr inline (tag STC_T_INL or STC_T_INR; consumes v),
 * for the evaluator's `inl`/`inr`: the exported one is a call. */
static inline stc_value val_box_new(stc_tag tag, stc_value v)
{
    uint8_t cls, owner;
    val_box *o = val_block_alloc(sizeof *o, &cls, &owner);
    if (!o) {
        val_release(v);
        return (stc_value){.tag = STC_T_INVALID};
    }
    o->hdr = (stc_obj){.refs = 1, .tag = tag, .cls = cls, .shared = VAL_LOCAL, .owner = owner};
    o->v = v;
    return (stc_value){.tag = tag, .as.obj = &o->hdr};
}
/* A closure over `code` with ncaps captured values (unit until filled). */
stc_value stc__val_func_alloc(const void *code, size_t ncaps);
static inline val_func *val_as_func(stc_value v) { return (val_func *)v.as.obj; }

/* Ordering for int, float and str (strings bytewise); <0, 0, >0. */
int stc__val_compare(stc_value a, stc_value b);

/* Strings bytewise (unsigned), a prefix first: -1, 0 or 1.  Inline and
 * without memcmp: the keys of a map of words are short, and the call was
 * most of the comparison (docs/DESIGN.md 2, "Allocation and strings").
 * Eight bytes at a time, compared as big-endian numbers. */
static inline int val_str_compare(const val_str *x, const val_str *y)
{
    size_t n = x->len < y->len ? x->len : y->len, i = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; n - i >= 8; i += 8) {
        uint64_t a, b;
        memcpy(&a, x->data + i, 8);
        memcpy(&b, y->data + i, 8);
        if (a != b) return __builtin_bswap64(a) < __builtin_bswap64(b) ? -1 : 1;
    }
#endif
    for (; i < n; i++)
        if (x->data[i] != y->data[i]) return (unsigned char)x->data[i] < (unsigned char)y->data[i] ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}
/* The total order of values without functions that `sort` uses (order.c;
 * docs/LANGUAGE.md 7): -1, 0 or 1.  Floats by IEEE totalOrder. */
int stc__val_order(stc_value a, stc_value b);

/* Whether the object may be reachable along more than one path (more than
 * one reference): only such objects can be met again in a walk, so only
 * they are worth remembering.  A stale count only costs a missed entry. */
static inline bool val_obj_shared(const stc_obj *o)
{
    return __atomic_load_n(&o->refs, __ATOMIC_RELAXED) > 1;
}

/* A map from pointer pairs (a != NULL) to two size_t, for walks over values
 * with sharing (a list holding the same sublist twice, nested 40 times, has
 * 2^40 leaves but 40 objects): remembering the shared objects (or pairs of
 * them) already done keeps such walks linear in the number of objects.
 * Allocated at the first stc__val_memo_put; if memory runs out the map keeps its
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
bool stc__val_memo_get(const val_memo *m, const void *a, const void *b, size_t *v, size_t *w);
void stc__val_memo_put(val_memo *m, const void *a, const void *b, size_t v, size_t w);
void stc__val_memo_free(val_memo *m);

/* Printing with a byte limit.  The text (or JSON) of a value can be far
 * larger than the value: with sharing, exponentially so.  These append
 * v's text to b and return 0 when it is at most max bytes; STC_ELIMIT when
 * it is longer (b is then as it was: a lower bound of the size, computed
 * over the shared objects once each, usually tells at once, else printing
 * stops at the limit); STC_ENOMEM when b failed (buf_ok).  The work is
 * linear in the number of objects plus min(text size, max). */
int stc__val_print_text(buf *b, stc_value v, size_t max);
int stc__val_print_json(buf *b, stc_value v, size_t max);
/* Appends v's text, or, when it is longer than max bytes, its first max
 * bytes (not ending inside a UTF-8 sequence) and "...": for error messages. */
void stc__val_print_text_brief(buf *b, stc_value v, size_t max);
/* The result of a public printer: b's string when rc is 0, else NULL with
 * errno E2BIG (rc STC_ELIMIT: too large) or ENOMEM; b is reset. */
char *stc__val_print_take(buf *b, int rc);
/* The limit of stc_value_to_text, stc_value_to_json, stc_result_to_json and
 * str(v): 1 GiB, ten times the text of a list of 10 million ints. */
#define VAL_PRINT_MAX ((size_t)1 << 30)
/* How much of a value error messages quote (stc__val_print_text_brief). */
#define VAL_PRINT_BRIEF 200
/* Appends len bytes of s as a quoted STCLang string literal, escaped exactly
 * as stc__val_print_text prints a string ("a\"b", control bytes as \xHH). */
void stc__val_print_text_string(buf *b, const char *s, size_t len);
/* Appends the shortest decimal form of f that reads back exactly, with
 * ".0" when it would look like an int; "nan", "inf", "-inf" otherwise. */
void stc__val_print_float(buf *b, double f);

#endif
