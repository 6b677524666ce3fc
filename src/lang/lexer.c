/* lexer.c - bytes -> STCLang tokens, with located diagnostics. */
#include "lang/lexer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const lex_names[TOK_COUNT_] = {
    [TOK_EOF] = "end of input", [TOK_IDENT] = "identifier", [TOK_INT] = "integer literal",
    [TOK_FLOAT] = "float literal", [TOK_STRING] = "string literal",
    [TOK_FUN] = "'fun'", [TOK_THREAD] = "'thread'", [TOK_LET] = "'let'", [TOK_IN] = "'in'",
    [TOK_IF] = "'if'", [TOK_THEN] = "'then'", [TOK_ELSE] = "'else'", [TOK_CASE] = "'case'",
    [TOK_OF] = "'of'", [TOK_FN] = "'fn'", [TOK_INL] = "'inl'", [TOK_INR] = "'inr'",
    [TOK_NOT] = "'not'", [TOK_TRUE] = "'true'", [TOK_FALSE] = "'false'", [TOK_INIT] = "'init'",
    [TOK_LPAREN] = "'('", [TOK_RPAREN] = "')'", [TOK_LBRACKET] = "'['", [TOK_RBRACKET] = "']'",
    [TOK_LBRACE] = "'{'", [TOK_RBRACE] = "'}'",
    [TOK_COMMA] = "','", [TOK_COLON] = "':'", [TOK_ASSIGN] = "'='", [TOK_DARROW] = "'=>'",
    [TOK_BAR] = "'|'", [TOK_UNDERSCORE] = "'_'", [TOK_OROR] = "'||'", [TOK_ANDAND] = "'&&'",
    [TOK_EQ] = "'=='", [TOK_NE] = "'!='", [TOK_LT] = "'<'", [TOK_LE] = "'<='", [TOK_GT] = "'>'",
    [TOK_GE] = "'>='", [TOK_PLUS] = "'+'", [TOK_MINUS] = "'-'", [TOK_STAR] = "'*'",
    [TOK_SLASH] = "'/'", [TOK_PERCENT] = "'%'", [TOK_ARROW] = "'->'",
};

const char *stc__lex_kind_name(lex_kind k)
{
    return (unsigned)k < TOK_COUNT_ && lex_names[k] ? lex_names[k] : "token";
}

static const struct {
    const char *word;
    lex_kind kind;
} lex_keywords[] = {
    {"fun", TOK_FUN},   {"thread", TOK_THREAD}, {"let", TOK_LET},   {"in", TOK_IN},
    {"if", TOK_IF},     {"then", TOK_THEN},     {"else", TOK_ELSE}, {"case", TOK_CASE},
    {"of", TOK_OF},     {"fn", TOK_FN},         {"inl", TOK_INL},   {"inr", TOK_INR},
    {"not", TOK_NOT},   {"true", TOK_TRUE},     {"false", TOK_FALSE}, {"init", TOK_INIT},
};

void stc__lex_init(lexer *lx, const char *src, size_t len, stc_diags *d)
{
    memset(lx, 0, sizeof *lx);
    lx->src = src ? src : "";
    lx->len = src ? len : 0;
    lx->line = 1;
    lx->col = 1;
    lx->end_line = 1;
    lx->end_col = 1;
    lx->d = d;
    /* A UTF-8 byte-order mark at the very start (editors on some systems
     * write one) is skipped; columns count from the byte after it. */
    if (lx->len >= 3 && memcmp(lx->src, "\xef\xbb\xbf", 3) == 0) lx->pos = 3;
}

static int lex_peek(const lexer *lx, size_t ahead)
{
    return lx->pos + ahead < lx->len ? (unsigned char)lx->src[lx->pos + ahead] : -1;
}

static void lex_advance(lexer *lx)
{
    if (lx->pos >= lx->len) return;
    if (lx->src[lx->pos] == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->pos++;
}

static void lex_error(lexer *lx, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void lex_error(lexer *lx, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stc__diags_vadd(lx->d, line, col, fmt, ap);
    va_end(ap);
    lx->errors++;
}

/* A byte as it appears inside quotes in a message: printable ASCII as is,
 * anything else as \xHH. */
static const char *lex_byte_repr(int c, char out[8])
{
    if (c == '\'' || c == '\\') snprintf(out, 8, "\\%c", c);
    else if (c >= 0x20 && c < 0x7f) snprintf(out, 8, "%c", c);
    else snprintf(out, 8, "\\x%02x", (unsigned)c & 0xffu);
    return out;
}

static bool lex_is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool lex_is_digit(int c) { return c >= '0' && c <= '9'; }
static bool lex_is_hex(int c)
{
    return lex_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int lex_hex_value(int c)
{
    if (lex_is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

/* Bytes that can never start a token (runs of them give one diagnostic). */
static bool lex_is_junk(int c) { return c >= 0x80 || (c < 0x20 && c != ' ' && c != '\t' && c != '\r' && c != '\n') || c == 0x7f; }

static void lex_skip_space(lexer *lx)
{
    for (;;) {
        int c = lex_peek(lx, 0);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            lex_advance(lx);
        } else if (c == '-' && lex_peek(lx, 1) == '-') {
            while (lx->pos < lx->len && lx->src[lx->pos] != '\n') lex_advance(lx);
        } else {
            return;
        }
    }
}

/* Converts the float literal in the token span with strtod, rewritten as
 * "DIGITSeEXP" without a decimal point so the C locale's decimal point
 * does not matter. */
static double lex_float_value(lexer *lx, size_t start, size_t end)
{
    const char *s = lx->src;
    size_t ndigits = 0;
    int64_t frac = 0, exp = 0;
    bool in_frac = false, neg_exp = false;
    size_t i = start;
    for (; i < end && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') { in_frac = true; continue; }
        ndigits++;
        if (in_frac && frac < ((int64_t)1 << 40)) frac++;
    }
    if (i < end) { /* exponent */
        i++;
        if (s[i] == '+' || s[i] == '-') neg_exp = s[i++] == '-';
        for (; i < end; i++)
            if (exp < ((int64_t)1 << 40)) exp = exp * 10 + (s[i] - '0');
    }
    exp = (neg_exp ? -exp : exp) - frac;
    if (exp > 1000000000) exp = 1000000000;
    if (exp < -1000000000) exp = -1000000000;
    char small[128], *tmp = small;
    size_t need = ndigits + 16;
    if (need > sizeof small) {
        tmp = malloc(need);
        if (!tmp) { lx->oom = true; return 0.0; }
    }
    size_t n = 0;
    for (i = start; i < end && s[i] != 'e' && s[i] != 'E'; i++)
        if (s[i] != '.') tmp[n++] = s[i];
    snprintf(tmp + n, need - n, "e%lld", (long long)exp);
    double v = strtod(tmp, NULL);
    if (tmp != small) free(tmp);
    return v;
}

/* A number directly followed by a letter or '_' (1e, 1.5e+, 0x10, 1_000,
 * 12abc): the whole run is one bad token with one message that says what
 * is wrong, rather than a number and a name that confuse the parser. */
static void lex_bad_number(lexer *lx, lex_token *t, bool is_float)
{
    size_t run = lx->pos;
    int first = lex_peek(lx, 0);
    while (lex_is_alpha(lex_peek(lx, 0)) || lex_is_digit(lex_peek(lx, 0))) {
        int c = lex_peek(lx, 0);
        lex_advance(lx);
        if ((c == 'e' || c == 'E') && lx->pos == run + 1 && (lex_peek(lx, 0) == '+' || lex_peek(lx, 0) == '-')) {
            lex_advance(lx); /* 2e+ (no digit follows, or it would be an exponent) */
            break;
        }
    }
    const char *s = lx->src + t->start;
    size_t n = lx->pos - t->start;
    const char *why;
    if ((first == 'x' || first == 'X') && n > 1 && s[0] == '0' && run == t->start + 1)
        why = "hexadecimal literals are not supported (write the value in decimal)";
    else if (memchr(lx->src + run, '_', lx->pos - run))
        why = "'_' cannot separate digits (write 1000, not 1_000)";
    else if ((first == 'e' || first == 'E') && (lx->pos == run + 1 || s[n - 1] == '+' || s[n - 1] == '-'))
        why = "the exponent needs digits (as in 1e5 or 2.5e-3)";
    else
        why = "a number cannot be directly followed by a letter";
    lex_error(lx, t->line, t->col, "malformed number '%.*s%s': %s", n > 24 ? 24 : (int)n, s,
              n > 24 ? "..." : "", why);
    t->kind = is_float ? TOK_FLOAT : TOK_INT;
    t->bad = true;
    t->ival = 0;
    t->fval = 0.0;
    t->len = n;
}

static void lex_number(lexer *lx, lex_token *t)
{
    uint64_t v = 0;
    bool overflow = false;
    while (lex_is_digit(lex_peek(lx, 0))) {
        unsigned dgt = (unsigned)(lex_peek(lx, 0) - '0');
        if (v > (UINT64_MAX - dgt) / 10) overflow = true;
        else v = v * 10 + dgt;
        lex_advance(lx);
    }
    bool is_float = false;
    if (lex_peek(lx, 0) == '.') {
        if (lex_is_digit(lex_peek(lx, 1))) {
            is_float = true;
            lex_advance(lx);
            while (lex_is_digit(lex_peek(lx, 0))) lex_advance(lx);
        } else {
            lex_error(lx, lx->line, lx->col, "malformed number: expected a digit after '.'");
            lex_advance(lx);
            t->kind = TOK_FLOAT;
            t->bad = true;
            t->len = lx->pos - t->start;
            t->fval = lex_float_value(lx, t->start, lx->pos - 1);
            return;
        }
    }
    int e = lex_peek(lx, 0);
    if (e == 'e' || e == 'E') {
        int s1 = lex_peek(lx, 1);
        if (lex_is_digit(s1) || ((s1 == '+' || s1 == '-') && lex_is_digit(lex_peek(lx, 2)))) {
            is_float = true;
            lex_advance(lx);
            if (!lex_is_digit(s1)) lex_advance(lx);
            while (lex_is_digit(lex_peek(lx, 0))) lex_advance(lx);
        }
    }
    if (lex_is_alpha(lex_peek(lx, 0))) {
        lex_bad_number(lx, t, is_float);
        return;
    }
    t->len = lx->pos - t->start;
    if (is_float) {
        t->kind = TOK_FLOAT;
        t->fval = lex_float_value(lx, t->start, lx->pos);
        if (isinf(t->fval)) {
            lex_error(lx, t->line, t->col, "float literal out of range");
            t->fval = 0.0;
            t->bad = true;
        }
        return;
    }
    t->kind = TOK_INT;
    if (overflow || v > (uint64_t)INT64_MAX + 1) {
        lex_error(lx, t->line, t->col, "integer literal out of range");
        t->bad = true;
    } else if (v == (uint64_t)INT64_MAX + 1) {
        t->int_min = true;
        t->ival = INT64_MIN;
    } else {
        t->ival = (int64_t)v;
    }
}

static void lex_string(lexer *lx, lex_token *t)
{
    char rep[8];
    t->kind = TOK_STRING;
    lex_advance(lx); /* opening quote */
    for (;;) {
        int c = lex_peek(lx, 0);
        if (c < 0) {
            lex_error(lx, t->line, t->col, "unterminated string literal");
            lx->desyncs++;
            t->bad = true;
            break;
        }
        if (c == '"') {
            lex_advance(lx);
            break;
        }
        if (c == '\n') {
            lex_error(lx, lx->line, lx->col, "newline in string literal (write \\n)");
            lx->desyncs++;
            t->bad = true;
            break;
        }
        if (c != '\\') {
            lex_advance(lx);
            continue;
        }
        int line = lx->line, col = lx->col;
        int e = lex_peek(lx, 1);
        if (e < 0 || e == '\n') { /* reported by the next iteration */
            lex_advance(lx);
            continue;
        }
        lex_advance(lx);
        lex_advance(lx);
        switch (e) {
        case 'n': case 't': case 'r': case '\\': case '"': case '0':
            break;
        case 'x':
            if (lex_is_hex(lex_peek(lx, 0)) && lex_is_hex(lex_peek(lx, 1))) {
                lex_advance(lx);
                lex_advance(lx);
            } else {
                lex_error(lx, line, col, "invalid escape sequence '\\x' in string literal (expected two hex digits)");
                t->bad = true;
            }
            break;
        default:
            if (e >= 0x20 && e < 0x7f)
                lex_error(lx, line, col, "invalid escape sequence '\\%c' in string literal", e);
            else
                lex_error(lx, line, col, "invalid byte '%s' after '\\' in string literal",
                          lex_byte_repr(e, rep));
            t->bad = true;
        }
    }
    t->len = lx->pos - t->start;
}

void stc__lex_string_value(const lexer *lx, const lex_token *t, buf *b)
{
    const char *s = lx->src;
    size_t i = t->start + 1, end = t->start + t->len;
    while (i < end) {
        char c = s[i];
        if (c == '"') break;
        if (c != '\\') {
            size_t j = i;
            while (j < end && s[j] != '"' && s[j] != '\\') j++;
            stc__buf_put(b, s + i, j - i);
            i = j;
            continue;
        }
        if (i + 1 >= end) break;
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case 'n': stc__buf_putc(b, '\n'); break;
        case 't': stc__buf_putc(b, '\t'); break;
        case 'r': stc__buf_putc(b, '\r'); break;
        case '0': stc__buf_putc(b, '\0'); break;
        case 'x':
            if (i + 1 < end && lex_is_hex((unsigned char)s[i]) && lex_is_hex((unsigned char)s[i + 1])) {
                stc__buf_putc(b, (char)(lex_hex_value((unsigned char)s[i]) * 16 +
                                   lex_hex_value((unsigned char)s[i + 1])));
                i += 2;
            } else {
                stc__buf_putc(b, 'x'); /* already reported */
            }
            break;
        default: stc__buf_putc(b, e); break; /* \\ \" and reported invalid escapes */
        }
    }
}

static bool lex_keyword(const char *s, size_t n, lex_kind *kind)
{
    for (size_t i = 0; i < sizeof lex_keywords / sizeof lex_keywords[0]; i++) {
        if (strlen(lex_keywords[i].word) == n && memcmp(lex_keywords[i].word, s, n) == 0) {
            *kind = lex_keywords[i].kind;
            return true;
        }
    }
    return false;
}

/* Operators and punctuation; TOK_EOF when c starts none. */
static lex_kind lex_punct(lexer *lx, int c)
{
    int n = lex_peek(lx, 1);
    lex_kind k = TOK_EOF;
    int width = 1;
    switch (c) {
    case '(': k = TOK_LPAREN; break;
    case ')': k = TOK_RPAREN; break;
    case '[': k = TOK_LBRACKET; break;
    case ']': k = TOK_RBRACKET; break;
    case '{': k = TOK_LBRACE; break;
    case '}': k = TOK_RBRACE; break;
    case ',': k = TOK_COMMA; break;
    case ':': k = TOK_COLON; break;
    case '+': k = TOK_PLUS; break;
    case '*': k = TOK_STAR; break;
    case '/': k = TOK_SLASH; break;
    case '%': k = TOK_PERCENT; break;
    case '=':
        if (n == '=') { k = TOK_EQ; width = 2; }
        else if (n == '>') { k = TOK_DARROW; width = 2; }
        else k = TOK_ASSIGN;
        break;
    case '|':
        if (n == '|') { k = TOK_OROR; width = 2; }
        else k = TOK_BAR;
        break;
    case '&':
        if (n == '&') { k = TOK_ANDAND; width = 2; }
        break;
    case '!':
        if (n == '=') { k = TOK_NE; width = 2; }
        break;
    case '<':
        if (n == '=') { k = TOK_LE; width = 2; }
        else k = TOK_LT;
        break;
    case '>':
        if (n == '=') { k = TOK_GE; width = 2; }
        else k = TOK_GT;
        break;
    case '-':
        if (n == '>') { k = TOK_ARROW; width = 2; }
        else k = TOK_MINUS;
        break;
    default: break;
    }
    if (k != TOK_EOF)
        while (width--) lex_advance(lx);
    return k;
}

static lex_token lex_scan(lexer *lx);

lex_token stc__lex_next(lexer *lx)
{
    lex_token t = lex_scan(lx);
    if (t.kind == TOK_EOF) {
        t.line = lx->end_line;
        t.col = lx->end_col;
    } else {
        lx->end_line = lx->line;
        lx->end_col = lx->col;
    }
    return t;
}

static lex_token lex_scan(lexer *lx)
{
    char rep[8];
    for (;;) {
        lex_skip_space(lx);
        lex_token t;
        memset(&t, 0, sizeof t);
        t.line = lx->line;
        t.col = lx->col;
        t.start = lx->pos;
        /* A broken string flags the token after it, skipped bytes the
         * token they precede. */
        t.after_junk = lx->desyncs != lx->desync_mark;
        lx->desync_mark = lx->desyncs;
        int c = lex_peek(lx, 0);
        if (c < 0) {
            t.kind = TOK_EOF;
            return t;
        }
        if (lex_is_alpha(c)) {
            while (lex_is_alpha(lex_peek(lx, 0)) || lex_is_digit(lex_peek(lx, 0))) lex_advance(lx);
            t.len = lx->pos - t.start;
            const char *s = lx->src + t.start;
            if (t.len == 1 && s[0] == '_') t.kind = TOK_UNDERSCORE;
            else if (!lex_keyword(s, t.len, &t.kind)) t.kind = TOK_IDENT;
            return t;
        }
        if (lex_is_digit(c)) {
            lex_number(lx, &t);
            return t;
        }
        if (c == '"') {
            lex_string(lx, &t);
            return t;
        }
        t.kind = lex_punct(lx, c);
        if (t.kind != TOK_EOF) {
            t.len = lx->pos - t.start;
            return t;
        }
        /* Not a token: one diagnostic for a run of junk bytes (e.g. the
         * bytes of one UTF-8 character), then go on. */
        lex_error(lx, t.line, t.col, "unexpected character '%s'", lex_byte_repr(c, rep));
        lx->desyncs++;
        bool junk = lex_is_junk(c);
        lex_advance(lx);
        if (junk)
            while (lex_peek(lx, 0) >= 0 && lex_is_junk(lex_peek(lx, 0))) lex_advance(lx);
    }
}
