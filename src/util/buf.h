/* buf.h - growable byte/string buffer.  After any allocation failure the
 * buffer is marked failed and further appends are ignored; check buf_ok(). */
#ifndef STC_UTIL_BUF_H
#define STC_UTIL_BUF_H
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>

typedef struct buf {
    char *data; /* NUL-terminated when len > 0 */
    size_t len, cap;
    bool failed;
} buf;

#define BUF_INIT {NULL, 0, 0, false}

void stc__buf_putc(buf *b, char c);
void stc__buf_put(buf *b, const char *s, size_t n);
void stc__buf_puts(buf *b, const char *s);
void stc__buf_printf(buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void stc__buf_vprintf(buf *b, const char *fmt, va_list ap);
static inline bool buf_ok(const buf *b) { return !b->failed; }
/* stc__buf_putc without a call while there is room (the wire encoding
 * writes a kind byte per value and a byte per slot not sent: a call each
 * was a quarter of a remote batch's cost, docs/DESIGN.md 7c). */
static inline void buf_putc(buf *b, char c)
{
    if (b->len + 2 <= b->cap && !b->failed) {
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
    } else {
        stc__buf_putc(b, c);
    }
}
/* Room for n more bytes (and the NUL) at b->data + b->len, for a writer
 * that then calls buf_commit with the bytes it wrote (at most n); NULL
 * when the buffer failed.  The wire encoding writes a value's kind, length
 * and bytes at once this way (docs/DESIGN.md 7c). */
char *stc__buf_room(buf *b, size_t n);
static inline char *buf_room(buf *b, size_t n)
{
    if (!b->failed && n < b->cap - b->len) return b->data + b->len; /* (cap >= len + 1 when data) */
    return stc__buf_room(b, n);
}
static inline void buf_commit(buf *b, size_t k)
{
    b->len += k;
    b->data[b->len] = '\0';
}
/* Returns the malloc'd string (an empty one if nothing was written) and
 * resets b; NULL if an allocation failed. */
char *stc__buf_take(buf *b);
void stc__buf_free(buf *b);

#endif
