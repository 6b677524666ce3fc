/* utf8.h - well-formed UTF-8 (RFC 3629) for the JSON printers, which copy
 * it and write U+FFFD for each maximal ill-formed subpart instead
 * (docs/LANGUAGE.md section 9; the Unicode Standard's recommended
 * practice, what Python's decode(errors="replace") and browsers do). */
#ifndef STC_UTIL_UTF8_H
#define STC_UTIL_UTF8_H
#include <stdbool.h>
#include <stddef.h>

/* For the n >= 1 bytes s that start with a byte 0x80-0xFF: the length of
 * the well-formed sequence there (2-4, *ok true), or of the maximal
 * ill-formed subpart there (1-3, *ok false): a lone continuation byte or
 * invalid lead byte, or the longest prefix of a sequence that could still
 * have become well-formed (a truncated sequence; an overlong form, a
 * UTF-16 surrogate or a code point above U+10FFFF fail at the second
 * byte). */
size_t stc__utf8_scan(const unsigned char *s, size_t n, bool *ok);

struct buf;
/* For the same s and n: appends to b the well-formed sequence there, or
 * the JSON escape \ufffd for its maximal ill-formed subpart, and returns
 * how many bytes of s that consumed. The one rule of both JSON printers
 * (values, traces). */
size_t stc__utf8_put_json(struct buf *b, const unsigned char *s, size_t n);

#endif
