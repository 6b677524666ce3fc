/* utf8.c - recognising well-formed UTF-8 sequences (see utf8.h). */
#include "utf8.h"
#include "buf.h"

size_t stc__utf8_scan(const unsigned char *s, size_t n, bool *ok)
{
    *ok = false;
    unsigned char c = s[0];
    /* The allowed range of the second byte narrows for E0, ED, F0 and F4:
     * that rules out overlong forms, surrogates and values past U+10FFFF. */
    unsigned char lo = 0x80, hi = 0xbf;
    size_t len;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 1;
    }
    if (n < 2 || s[1] < lo || s[1] > hi) return 1;
    for (size_t i = 2; i < len; i++)
        if (i >= n || (s[i] & 0xc0) != 0x80) return i;
    *ok = true;
    return len;
}

size_t stc__utf8_put_json(struct buf *b, const unsigned char *s, size_t n)
{
    bool ok;
    size_t len = stc__utf8_scan(s, n, &ok);
    if (ok) {
        stc__buf_put(b, (const char *)s, len);
    } else {
        stc__buf_puts(b, "\\ufffd");
    }
    return len;
}
