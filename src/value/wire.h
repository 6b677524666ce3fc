/* wire.h - values as bytes, for sending them to another process (the
 * distributed runtime, docs/DESIGN.md "The distributed runtime").
 *
 * Every value kind but user objects travels: unit, bool, int (zigzag
 * varint), float (8 bytes, little-endian, bit for bit), str (length and
 * bytes), list and tuple (length and items), inl/inr (payload), map (count
 * and its keys and values in key order), closures (a function number that
 * both ends agree on, through wire_funcs, and the captured values).  An
 * object held more than once is written once and referred to after (a
 * list holding one sublist twice, nested 40 deep, takes 40 objects, not
 * 2^40), and decodes to one shared object again.
 *
 * Format, one value: a kind byte, then the kind's fields; a kind byte with
 * WIRE_KEEP set says "number this object when done" (numbers count from 0
 * in the order objects finish), and WIRE_REF n stands for kept object n.
 * Numbers are unsigned LEB128 varints (at most 10 bytes).
 *
 * Decoding checks everything: a truncated or malformed buffer (a bad kind,
 * a length past the end, a reference to no object or to one not finished,
 * a map key holding a function, duplicate keys, an unknown function)
 * is STC_EINVAL, never a crash; lengths are checked against the bytes left
 * before anything is allocated.  Both directions recurse, one level per
 * nesting level, to at most WIRE_MAX_DEPTH levels (then STC_ELIMIT). */
#ifndef STC_VALUE_WIRE_H
#define STC_VALUE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "stc.h"
#include "util/buf.h"

#define WIRE_MAX_DEPTH 2000

enum {
    WIRE_UNIT = 1,
    WIRE_FALSE,
    WIRE_TRUE,
    WIRE_INT,
    WIRE_FLOAT,
    WIRE_STR,
    WIRE_LIST,
    WIRE_TUPLE,
    WIRE_INL,
    WIRE_INR,
    WIRE_MAP,
    WIRE_FUNC,
    WIRE_REF,
    WIRE_KEEP = 0x80
};

/* How closures travel: their code (an ir_fun *, opaque here) as a number.
 * May be NULL when no closure is expected (then one is STC_EINVAL). */
typedef struct wire_funcs {
    void *ud;
    /* The number of code, or -1 when it cannot travel. */
    int64_t (*code_id)(void *ud, const void *code);
    /* The code numbered id, which must capture ncaps values; NULL if none. */
    const void *(*code_of)(void *ud, uint64_t id, size_t ncaps);
} wire_funcs;

/* Appends v to b.  0; STC_EINVAL for a user object, an invalid value or a
 * closure whose code cannot travel; STC_ELIMIT nested too deeply;
 * STC_ENOMEM (b failed, or the table of shared objects). */
int stc__val_wire_encode(buf *b, stc_value v, const wire_funcs *f);

/* Decodes one value from p[0, n): 0 with *out (one reference, the
 * caller's) and *used the bytes it took; else STC_EINVAL (malformed),
 * STC_ELIMIT or STC_ENOMEM, with *out INVALID and nothing leaked. */
int stc__val_wire_decode(const void *p, size_t n, size_t *used, stc_value *out, const wire_funcs *f);

/* Varints for the frames around values. put: appends; get: 0 and the
 * bytes it took in *used, or STC_EINVAL (truncated, over 64 bits). */
void stc__val_wire_put_uvarint(buf *b, uint64_t x);
/* The same without a call for numbers below 128 (slot numbers, counts). */
static inline void val_wire_put_uv(buf *b, uint64_t x)
{
    if (x < 0x80) buf_putc(b, (char)x);
    else stc__val_wire_put_uvarint(b, x);
}
int stc__val_wire_get_uvarint(const void *p, size_t n, size_t *used, uint64_t *x);

#endif
