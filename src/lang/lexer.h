/* lexer.h - STCLang tokens.
 *
 * The lexer works on demand (one token per stc__lex_next call) over a byte
 * buffer that need not be NUL-terminated.  It never allocates except for a
 * temporary copy of a very long float literal.  Every malformed input is
 * reported to the diagnostics with its line and column and the lexer goes
 * on: bad bytes are skipped, a malformed literal still yields a token, so
 * the parser sees a plausible stream.
 *
 * Numbers (decided here, documented in docs):
 *   INT    digits, decimal only (leading zeros allowed).  A value above
 *          INT64_MAX is "integer literal out of range", except exactly
 *          9223372036854775808, which becomes a token with int_min set: the
 *          parser accepts it only directly after a unary minus (INT64_MIN).
 *   FLOAT  digits '.' digits [exp]  |  digits exp,  exp = (e|E) [+|-] digits.
 *          "1." is rejected ("expected a digit after '.'"), ".5" is an
 *          unexpected '.', and "1e" / "1else" lex as INT 1 then an identifier
 *          (an exponent needs a digit).  A float that overflows to infinity
 *          is "float literal out of range"; underflow gives 0 or a subnormal.
 * Strings: "..." with escapes \n \t \r \\ \" \0 \xHH (two hex digits).
 *          A raw newline or the end of input inside a string is an error.
 * Whitespace: space, tab, CR, LF.  Comments: "--" to the end of the line.
 */
#ifndef STC_LANG_LEXER_H
#define STC_LANG_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/diag.h"

typedef enum lex_kind {
    TOK_EOF = 0,
    TOK_IDENT,
    TOK_INT,
    TOK_FLOAT,
    TOK_STRING,
    /* keywords */
    TOK_FUN, TOK_THREAD, TOK_LET, TOK_IN, TOK_IF, TOK_THEN, TOK_ELSE, TOK_CASE,
    TOK_OF, TOK_FN, TOK_INL, TOK_INR, TOK_NOT, TOK_TRUE, TOK_FALSE, TOK_INIT,
    /* punctuation */
    TOK_LPAREN,   /* ( */
    TOK_RPAREN,   /* ) */
    TOK_LBRACKET, /* [ */
    TOK_RBRACKET, /* ] */
    TOK_LBRACE,   /* { */
    TOK_RBRACE,   /* } */
    TOK_COMMA,    /* , */
    TOK_COLON,    /* : */
    TOK_ASSIGN,   /* = */
    TOK_DARROW,   /* => */
    TOK_BAR,      /* | */
    TOK_UNDERSCORE, /* _ (alone; "_x" is an identifier) */
    /* operators */
    TOK_OROR, TOK_ANDAND, TOK_EQ, TOK_NE, TOK_LT, TOK_LE, TOK_GT, TOK_GE,
    TOK_PLUS, TOK_MINUS, TOK_STAR, TOK_SLASH, TOK_PERCENT,
    TOK_ARROW,    /* -> */
    TOK_COUNT_
} lex_kind;

typedef struct lex_token {
    lex_kind kind;
    int line, col;      /* 1-based; col counts bytes */
    size_t start, len;  /* byte span in the source */
    int64_t ival;       /* TOK_INT */
    double fval;        /* TOK_FLOAT */
    bool int_min;       /* TOK_INT: the literal 9223372036854775808 */
    bool bad;           /* a malformed literal already reported by the lexer */
    bool after_junk;    /* the lexer skipped bad bytes (or ended a broken
                           string) right before this token */
} lex_token;

typedef struct lexer {
    const char *src;
    size_t len, pos;
    int line, col;
    stc_diags *d;
    int errors;         /* diagnostics reported by the lexer */
    int desyncs;        /* errors after which the token stream is unreliable
                           (skipped bytes, broken strings) */
    int desync_mark;    /* desyncs before the previous token */
    int end_line, end_col; /* just after the previous token: where the
                              EOF token is placed, so that "found end of
                              input" points at the end of the text, not at
                              a line after a trailing newline or comment */
    bool oom;
} lexer;

void stc__lex_init(lexer *lx, const char *src, size_t len, stc_diags *d);
lex_token stc__lex_next(lexer *lx);

/* Appends the decoded bytes of a TOK_STRING token to b (check buf_ok). */
void stc__lex_string_value(const lexer *lx, const lex_token *t, buf *b);

/* A short description of a token kind for messages: "'('", "'in'",
 * "identifier", "end of input". */
const char *stc__lex_kind_name(lex_kind k);

#endif
