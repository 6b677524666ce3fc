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

/* Appends text or JSON to b (see stc_value_to_text / stc_value_to_json). */
void val_print_text(buf *b, stc_value v);
void val_print_json(buf *b, stc_value v);
/* Appends len bytes of s as a quoted STCLang string literal, escaped exactly
 * as val_print_text prints a string ("a\"b", control bytes as \xHH). */
void val_print_text_string(buf *b, const char *s, size_t len);
/* Appends the shortest decimal form of f that reads back exactly, with
 * ".0" when it would look like an int; "nan", "inf", "-inf" otherwise. */
void val_print_float(buf *b, double f);

#endif
