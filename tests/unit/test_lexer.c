/* test_lexer.c - STCLang tokens: kinds, positions, literal values, errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lang/lexer.h"
#include "test.h"
#include "util/buf.h"

/* All tokens of src as "KIND@L:C" (KIND = the token text for everything but
 * literals, which show as int:V / float:V / str:"..." ), space-separated. */
static char *lexer_stream(const char *src, size_t len, stc_diags *d)
{
    lexer lx;
    stc__lex_init(&lx, src, len, d);
    buf b = BUF_INIT;
    for (int guard = 0; guard < 100000; guard++) {
        lex_token t = stc__lex_next(&lx);
        if (b.len) stc__buf_putc(&b, ' ');
        switch (t.kind) {
        case TOK_EOF: stc__buf_puts(&b, "EOF"); break;
        case TOK_INT: stc__buf_printf(&b, "int:%lld", (long long)t.ival); break;
        case TOK_FLOAT: stc__buf_printf(&b, "float:%.17g", t.fval); break;
        case TOK_STRING: {
            buf s = BUF_INIT;
            stc__lex_string_value(&lx, &t, &s);
            stc__buf_puts(&b, "str:\"");
            for (size_t i = 0; i < s.len; i++) {
                unsigned char c = (unsigned char)s.data[i];
                if (c < 0x20 || c >= 0x7f) stc__buf_printf(&b, "\\x%02x", c);
                else stc__buf_putc(&b, (char)c);
            }
            stc__buf_putc(&b, '"');
            stc__buf_free(&s);
            break;
        }
        default: stc__buf_put(&b, src + t.start, t.len); break;
        }
        stc__buf_printf(&b, "@%d:%d", t.line, t.col);
        if (t.kind == TOK_EOF) break;
    }
    return stc__buf_take(&b);
}

static char *lexer_kinds(const char *src)
{
    lexer lx;
    stc__lex_init(&lx, src, strlen(src), NULL);
    buf b = BUF_INIT;
    for (;;) {
        lex_token t = stc__lex_next(&lx);
        if (b.len) stc__buf_putc(&b, ' ');
        stc__buf_puts(&b, stc__lex_kind_name(t.kind));
        if (t.kind == TOK_EOF) break;
    }
    return stc__buf_take(&b);
}

/* Checks the token stream and that no diagnostic was produced. */
#define CHECK_LEX(src, expected)                                                          \
    do {                                                                                  \
        stc_diags *d_ = stc__diags_new("t", NULL, 0);                                          \
        char *s_ = lexer_stream((src), strlen(src), d_);                                  \
        CHECK_STR(s_, (expected));                                                        \
        CHECK_INT(stc_diags_count(d_), 0);                                                \
        free(s_);                                                                         \
        stc_diags_free(d_);                                                               \
    } while (0)

/* Checks the token stream and the diagnostics, formatted "L:C: msg; ...". */
static char *lexer_diag_list(stc_diags *d)
{
    buf b = BUF_INIT;
    for (size_t i = 0; i < stc_diags_count(d); i++)
        stc__buf_printf(&b, "%s%d:%d: %s", i ? "; " : "", stc_diags_line(d, i), stc_diags_col(d, i),
                   stc_diags_message(d, i));
    return stc__buf_take(&b);
}

#define CHECK_LEX_ERR(src, len, expected, diags)                                          \
    do {                                                                                  \
        stc_diags *d_ = stc__diags_new("t", NULL, 0);                                          \
        char *s_ = lexer_stream((src), (len), d_);                                        \
        char *m_ = lexer_diag_list(d_);                                                   \
        CHECK_STR(s_, (expected));                                                        \
        CHECK_STR(m_, (diags));                                                           \
        free(s_);                                                                         \
        free(m_);                                                                         \
        stc_diags_free(d_);                                                               \
    } while (0)

TEST(lexer_punctuation_and_operators)
{
    char *k = lexer_kinds("( ) [ ] , : = => | _ || && == != < <= > >= + - * / % ->");
    CHECK_STR(k, "'(' ')' '[' ']' ',' ':' '=' '=>' '|' '_' '||' '&&' '==' '!=' '<' '<=' '>' "
                 "'>=' '+' '-' '*' '/' '%' '->' end of input");
    free(k);
    /* maximal munch without spaces */
    CHECK_LEX("a<=b=>c==d->e||f&&g!=h>=i", "a@1:1 <=@1:2 b@1:4 =>@1:5 c@1:7 ==@1:8 d@1:10 "
                                          "->@1:11 e@1:13 ||@1:14 f@1:16 &&@1:17 g@1:19 "
                                          "!=@1:20 h@1:22 >=@1:23 i@1:25 EOF@1:26");
    CHECK_LEX("=== |||", "==@1:1 =@1:3 ||@1:5 |@1:7 EOF@1:8");
    CHECK_LEX("x-1 - -2", "x@1:1 -@1:2 int:1@1:3 -@1:5 -@1:7 int:2@1:8 EOF@1:9");
}

TEST(lexer_keywords_and_identifiers)
{
    char *k = lexer_kinds("fun thread let in if then else case of fn inl inr not true false init");
    CHECK_STR(k, "'fun' 'thread' 'let' 'in' 'if' 'then' 'else' 'case' 'of' 'fn' 'inl' 'inr' "
                 "'not' 'true' 'false' 'init' end of input");
    free(k);
    /* main, builtins and type names are identifiers; _ alone is its own token */
    k = lexer_kinds("main smap int float str unit bool _ _x x_1 funx Fun inl2 __");
    CHECK_STR(k, "identifier identifier identifier identifier identifier identifier identifier "
                 "'_' identifier identifier identifier identifier identifier identifier end of input");
    free(k);
    CHECK_LEX("_x1 x_ X9", "_x1@1:1 x_@1:5 X9@1:8 EOF@1:10");
}

TEST(lexer_positions_comments_whitespace)
{
    CHECK_LEX("fun f(x) = x -- a comment ( \" $\n\tmain = 1\r\n  -- only comment\n  2",
              "fun@1:1 f@1:5 (@1:6 x@1:7 )@1:8 =@1:10 x@1:12 main@2:2 =@2:7 int:1@2:9 "
              "int:2@4:3 EOF@4:4");
    CHECK_LEX("x--y\ny", "x@1:1 y@2:1 EOF@2:2");
    CHECK_LEX("", "EOF@1:1");
    CHECK_LEX("\n\n", "EOF@1:1");
    CHECK_LEX("-- comment at end without newline", "EOF@1:1");
    /* EOF sits just after the last token, not after trailing space/comments */
    CHECK_LEX("f(x)  -- c\n\n  \n", "f@1:1 (@1:2 x@1:3 )@1:4 EOF@1:5");
    CHECK_LEX("a\r\nb", "a@1:1 b@2:1 EOF@2:2");
}

TEST(lexer_integers)
{
    CHECK_LEX("0 7 007 42 9223372036854775807",
              "int:0@1:1 int:7@1:3 int:7@1:5 int:42@1:9 int:9223372036854775807@1:12 EOF@1:31");
    /* 2^63 lexes (flagged); only the parser decides whether a '-' precedes it */
    lexer lx;
    stc__lex_init(&lx, "9223372036854775808 9223372036854775807", 39, NULL);
    lex_token t = stc__lex_next(&lx);
    CHECK(t.kind == TOK_INT && t.int_min && !t.bad && t.ival == INT64_MIN);
    t = stc__lex_next(&lx);
    CHECK(t.kind == TOK_INT && !t.int_min && t.ival == INT64_MAX);
    CHECK_LEX_ERR("1 9223372036854775809 99999999999999999999999 2", 47,
                  "int:1@1:1 int:0@1:3 int:0@1:23 int:2@1:47 EOF@1:48",
                  "1:3: integer literal out of range; 1:23: integer literal out of range");
    /* a number directly followed by a letter or '_' is one malformed token */
    CHECK_LEX_ERR("12abc + 1", 9, "int:0@1:1 +@1:7 int:1@1:9 EOF@1:10",
                  "1:1: malformed number '12abc': a number cannot be directly followed by a letter");
    CHECK_LEX_ERR("0x10 0XfF 10x5", 14, "int:0@1:1 int:0@1:6 int:0@1:11 EOF@1:15",
                  "1:1: malformed number '0x10': hexadecimal literals are not supported (write the value in decimal); "
                  "1:6: malformed number '0XfF': hexadecimal literals are not supported (write the value in decimal); "
                  "1:11: malformed number '10x5': a number cannot be directly followed by a letter");
    CHECK_LEX_ERR("1_000 2.5_1 3_", 14, "int:0@1:1 float:0@1:7 int:0@1:13 EOF@1:15",
                  "1:1: malformed number '1_000': '_' cannot separate digits (write 1000, not 1_000); "
                  "1:7: malformed number '2.5_1': '_' cannot separate digits (write 1000, not 1_000); "
                  "1:13: malformed number '3_': '_' cannot separate digits (write 1000, not 1_000)");
    /* a long run is quoted cut */
    CHECK_LEX_ERR("1abcdefghijklmnopqrstuvwxyz0123456789", 37, "int:0@1:1 EOF@1:38",
                  "1:1: malformed number '1abcdefghijklmnopqrstuvw...': a number cannot be directly followed by a letter");
}

TEST(lexer_floats)
{
    CHECK_LEX("1.5 1e3 2.5e-3 1E+2 0.1 3.0e0 10e-1",
              "float:1.5@1:1 float:1000@1:5 float:0.0025000000000000001@1:9 float:100@1:16 "
              "float:0.10000000000000001@1:21 float:3@1:25 float:1@1:31 EOF@1:36");
    lexer lx;
    stc__lex_init(&lx, "0.1 2.5e-3 123456.789e-2 4.9e-324 1e-400", 40, NULL);
    double want[] = {0.1, 2.5e-3, 123456.789e-2, 4.9e-324, 0.0};
    for (int i = 0; i < 5; i++) {
        lex_token t = stc__lex_next(&lx);
        CHECK(t.kind == TOK_FLOAT && t.fval == want[i]);
    }
    /* an exponent needs a digit: 1e, 2e+, 1.5e are malformed numbers */
    CHECK_LEX_ERR("1e 1else 2e+ 3E 1.5e 4e-x", 25,
                  "int:0@1:1 int:0@1:4 int:0@1:10 int:0@1:14 float:0@1:17 int:0@1:22 x@1:25 EOF@1:26",
                  "1:1: malformed number '1e': the exponent needs digits (as in 1e5 or 2.5e-3); "
                  "1:4: malformed number '1else': a number cannot be directly followed by a letter; "
                  "1:10: malformed number '2e+': the exponent needs digits (as in 1e5 or 2.5e-3); "
                  "1:14: malformed number '3E': the exponent needs digits (as in 1e5 or 2.5e-3); "
                  "1:17: malformed number '1.5e': the exponent needs digits (as in 1e5 or 2.5e-3); "
                  "1:22: malformed number '4e-': the exponent needs digits (as in 1e5 or 2.5e-3)");
    /* "1." is rejected; a float token is still produced */
    CHECK_LEX_ERR("1. + x", 6, "float:1@1:1 +@1:4 x@1:6 EOF@1:7",
                  "1:2: malformed number: expected a digit after '.'");
    CHECK_LEX_ERR("1e999 -1e400 1e-999", 19, "float:0@1:1 -@1:7 float:0@1:8 float:0@1:14 EOF@1:20",
                  "1:1: float literal out of range; 1:8: float literal out of range");
    CHECK_LEX_ERR(".5", 2, "int:5@1:2 EOF@1:3", "1:1: unexpected character '.'");
    /* a very long mantissa (takes the heap path) still converts exactly */
    buf b = BUF_INIT;
    stc__buf_puts(&b, "0.");
    for (int i = 0; i < 300; i++) stc__buf_putc(&b, '0');
    stc__buf_puts(&b, "15e302");
    stc__lex_init(&lx, b.data, b.len, NULL);
    lex_token t = stc__lex_next(&lx);
    CHECK(t.kind == TOK_FLOAT && t.fval == 15.0 && t.len == b.len);
    stc__buf_free(&b);
}

TEST(lexer_numbers_at_end_of_unterminated_buffer)
{
    /* the source need not be NUL-terminated: only len bytes are read */
    const char src[] = "1.57";
    CHECK_LEX_ERR(src, 3, "float:1.5@1:1 EOF@1:4", "");
    CHECK_LEX_ERR(src, 1, "int:1@1:1 EOF@1:2", "");
    CHECK_LEX_ERR(src, 2, "float:1@1:1 EOF@1:3", "1:2: malformed number: expected a digit after '.'");
    const char e[] = "2e5";
    CHECK_LEX_ERR(e, 2, "int:0@1:1 EOF@1:3", "1:1: malformed number '2e': the exponent needs digits (as in 1e5 or 2.5e-3)");
}

TEST(lexer_strings)
{
    CHECK_LEX("\"\" \"abc\" \"a b\\tc\"", "str:\"\"@1:1 str:\"abc\"@1:4 str:\"a b\\x09c\"@1:10 EOF@1:18");
    CHECK_LEX("\"\\n\\t\\r\\\\\\\"\\0\\x41\\x7a\\xFF\"",
              "str:\"\\x0a\\x09\\x0d\\\"\\x00Az\\xff\"@1:1 EOF@1:27");
    /* non-ASCII bytes and comment markers are plain string content */
    CHECK_LEX("\"h\xc3\xa9 -- x\" y", "str:\"h\\xc3\\xa9 -- x\"@1:1 y@1:12 EOF@1:13");
    /* embedded NUL through \0 keeps the length */
    lexer lx;
    stc__lex_init(&lx, "\"a\\0b\"", 6, NULL);
    lex_token t = stc__lex_next(&lx);
    buf s = BUF_INIT;
    stc__lex_string_value(&lx, &t, &s);
    CHECK_INT(s.len, 3);
    CHECK(s.data[1] == '\0' && s.data[2] == 'b');
    stc__buf_free(&s);
}

TEST(lexer_string_errors)
{
    CHECK_LEX_ERR("x \"abc", 6, "x@1:1 str:\"abc\"@1:3 EOF@1:7", "1:3: unterminated string literal");
    CHECK_LEX_ERR("\"ab\ncd\" x", 9, "str:\"ab\"@1:1 cd@2:1 str:\" x\"@2:3 EOF@2:6",
                  "1:4: newline in string literal (write \\n); 2:3: unterminated string literal");
    CHECK_LEX_ERR("\"a\\qb\" \"\\x4g\" \"\\'\" \"\\\x01\"", 23,
                  "str:\"aqb\"@1:1 str:\"x4g\"@1:8 str:\"'\"@1:15 str:\"\\x01\"@1:20 EOF@1:24",
                  "1:3: invalid escape sequence '\\q' in string literal; "
                  "1:9: invalid escape sequence '\\x' in string literal (expected two hex digits); "
                  "1:16: invalid escape sequence '\\'' in string literal; "
                  "1:21: invalid byte '\\x01' after '\\' in string literal");
    /* backslash at the very end / before a newline */
    CHECK_LEX_ERR("\"ab\\", 4, "str:\"ab\"@1:1 EOF@1:5", "1:1: unterminated string literal");
    CHECK_LEX_ERR("\"ab\\\n\"", 6, "str:\"ab\"@1:1 str:\"\"@2:1 EOF@2:2",
                  "1:5: newline in string literal (write \\n); 2:1: unterminated string literal");
}

TEST(lexer_unexpected_characters)
{
    CHECK_LEX_ERR("a $ b", 5, "a@1:1 b@1:5 EOF@1:6", "1:3: unexpected character '$'");
    CHECK_LEX_ERR("a\x01" "b", 3, "a@1:1 b@1:3 EOF@1:4", "1:2: unexpected character '\\x01'");
    CHECK_LEX_ERR("a\0b", 3, "a@1:1 b@1:3 EOF@1:4", "1:2: unexpected character '\\x00'");
    /* one diagnostic for the bytes of one UTF-8 character */
    CHECK_LEX_ERR("x = \xc3\xa9t\xe2\x82\xac", 10, "x@1:1 =@1:3 t@1:7 EOF@1:8",
                  "1:5: unexpected character '\\xc3'; 1:8: unexpected character '\\xe2'");
    CHECK_LEX_ERR("& ! ' \\ . ; $ $ @ # ~ ` ? ^", 27, "EOF@1:1",
                  "1:1: unexpected character '&'; 1:3: unexpected character '!'; "
                  "1:5: unexpected character '\\''; 1:7: unexpected character '\\\\'; "
                  "1:9: unexpected character '.'; 1:11: unexpected character ';'; "
                  "1:13: unexpected character '$'; 1:15: unexpected character '$'; "
                  "1:17: unexpected character '@'; 1:19: unexpected character '#'; "
                  "1:21: unexpected character '~'; 1:23: unexpected character '`'; "
                  "1:25: unexpected character '?'; 1:27: unexpected character '^'");
    CHECK_LEX_ERR("\x7f\f\v", 3, "EOF@1:1", "1:1: unexpected character '\\x7f'");
}

TEST(lexer_byte_order_mark)
{
    /* skipped at the very start only; columns count from the byte after it */
    CHECK_LEX("\xef\xbb\xbfmain = 1", "main@1:1 =@1:6 int:1@1:8 EOF@1:9");
    CHECK_LEX("\xef\xbb\xbf", "EOF@1:1");
    CHECK_LEX_ERR("x \xef\xbb\xbf", 5, "x@1:1 EOF@1:2", "1:3: unexpected character '\\xef'");
    CHECK_LEX_ERR("\xef\xbb\xbf\xef\xbb\xbfx", 7, "x@1:4 EOF@1:5", "1:1: unexpected character '\\xef'");
    CHECK_LEX_ERR("\xef\xbb", 2, "EOF@1:1", "1:1: unexpected character '\\xef'");
}

TEST(lexer_after_junk_flag)
{
    lexer lx;
    stc__lex_init(&lx, "a $ b c \"x\ny z", 14, NULL);
    lex_token t = stc__lex_next(&lx);
    CHECK(!t.after_junk); /* a */
    t = stc__lex_next(&lx);
    CHECK(t.after_junk); /* b, after $ */
    t = stc__lex_next(&lx);
    CHECK(!t.after_junk); /* c */
    t = stc__lex_next(&lx);
    CHECK(t.kind == TOK_STRING && !t.after_junk && t.bad);
    t = stc__lex_next(&lx);
    CHECK(t.after_junk); /* y, after the broken string */
    t = stc__lex_next(&lx);
    CHECK(!t.after_junk);
    CHECK_INT(lx.errors, 2);
    CHECK_INT(lx.desyncs, 2);
}

TEST(lexer_kind_names)
{
    CHECK_STR(stc__lex_kind_name(TOK_EOF), "end of input");
    CHECK_STR(stc__lex_kind_name(TOK_IDENT), "identifier");
    CHECK_STR(stc__lex_kind_name(TOK_ARROW), "'->'");
    CHECK_STR(stc__lex_kind_name(TOK_IN), "'in'");
    CHECK_STR(stc__lex_kind_name((lex_kind)999), "token");
    for (int k = 0; k < TOK_COUNT_; k++) CHECK(strcmp(stc__lex_kind_name((lex_kind)k), "token") != 0);
}

/* A small deterministic PRNG (xorshift64*), no rand(). */
static uint64_t lexer_rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

TEST(lexer_random_bytes)
{
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    char src[256];
    for (int iter = 0; iter < 5000; iter++) {
        size_t len = (size_t)(lexer_rng(&seed) % sizeof src);
        bool ascii = iter % 2;
        for (size_t i = 0; i < len; i++) {
            unsigned r = (unsigned)lexer_rng(&seed);
            src[i] = ascii ? " \n\"\\-=>|()x1.e_\t"[r % 16] : (char)(r & 0xff);
        }
        stc_diags *d = stc__diags_new("t", NULL, 0);
        lexer lx;
        stc__lex_init(&lx, src, len, d);
        size_t last = 0;
        int n = 0;
        for (;;) {
            lex_token t = stc__lex_next(&lx);
            CHECK(t.line >= 1 && t.col >= 1);
            CHECK(t.start >= last && t.start + t.len <= len);
            last = t.start + t.len;
            if (t.kind == TOK_EOF || ++n > 1000) break;
        }
        CHECK(n <= (int)len);
        for (size_t i = 0; i < stc_diags_count(d); i++)
            CHECK(stc_diags_line(d, i) >= 1 && stc_diags_col(d, i) >= 1);
        stc_diags_free(d);
    }
}
