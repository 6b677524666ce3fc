/* buf.c - growable string buffer. */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool buf_reserve(buf *b, size_t extra)
{
    if (b->failed) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) { b->failed = true; return false; }
        cap *= 2;
    }
    char *d = realloc(b->data, cap);
    if (!d) { b->failed = true; return false; }
    b->data = d;
    b->cap = cap;
    return true;
}

void stc__buf_put(buf *b, const char *s, size_t n)
{
    if ((b->failed || b->len + n + 1 > b->cap) && !buf_reserve(b, n)) return;
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

char *stc__buf_room(buf *b, size_t n) { return buf_reserve(b, n) ? b->data + b->len : NULL; }

void stc__buf_putc(buf *b, char c) { stc__buf_put(b, &c, 1); }
void stc__buf_puts(buf *b, const char *s) { stc__buf_put(b, s, strlen(s)); }

void stc__buf_vprintf(buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) { b->failed = true; return; }
    if (!buf_reserve(b, (size_t)n)) return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void stc__buf_printf(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stc__buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *stc__buf_take(buf *b)
{
    if (b->failed) { stc__buf_free(b); return NULL; }
    char *d = b->data;
    if (!d) d = calloc(1, 1);
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

void stc__buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
