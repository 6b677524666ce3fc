/* test_strings.c - the string builtins (words split str concat parse_int
 * parse_float) against independent oracles: naive split/words in C,
 * strtoll/strtod for the parsers, and the text printer and the lexer for
 * str.  Random inputs (a fixed-seed xorshift), quoting of long inputs in
 * errors, big inputs (linear time), and the runtime agreeing with the
 * reference.  Everything goes through the public API (stc.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"

static uint64_t ts_rng = 0x9e3779b97f4a7c15u;
static unsigned ts_rand(unsigned n)
{
    ts_rng ^= ts_rng << 13, ts_rng ^= ts_rng >> 7, ts_rng ^= ts_rng << 17;
    return (unsigned)(ts_rng % n);
}

/* ---- Running programs ------------------------------------------------------ */

typedef struct ts_out {
    int rc;          /* of stc_run; -100 when it did not compile */
    char *text;      /* the value as text (rc 0), or "LINE:COL: message" */
} ts_out;

/* Compiles and runs src (workers 0: the reference evaluator). */
static ts_out ts_run(const char *src, int workers)
{
    ts_out o = {-100, NULL};
    stc_program *prog = UNIT_COMPILE(NULL, src, "t.stc");
    if (!prog) return o;
    trun_mode mode = {.reference = workers == 0, .workers = workers, .queue_capacity = 1};
    stc_run_opts opts = trun_opts(&mode);
    stc_result *r = NULL;
    o.rc = stc_run(prog, &opts, &r); /* not trun_run: the value's text is wanted, not the JSON */
    if (o.rc == 0) {
        o.text = stc_value_to_text(stc_result_value(r));
    } else if (r) {
        stc_error_info e = stc_result_error(r);
        size_t n = strlen(e.message ? e.message : "") + 32;
        o.text = malloc(n);
        if (o.text) snprintf(o.text, n, "%d:%d: %s", e.line, e.col, e.message ? e.message : "");
    }
    stc_result_free(r);
    stc_program_free(prog);
    return o;
}

/* Appends bytes as a string literal made only of \xHH escapes. */
static char *ts_lit(char *p, const char *s, size_t n)
{
    *p++ = '"';
    for (size_t i = 0; i < n; i++) p += sprintf(p, "\\x%02x", (unsigned char)s[i]);
    *p++ = '"';
    *p = '\0';
    return p;
}

/* "main = CALL(LIT)" or "main = CALL(LIT, LIT)" in a malloc'd string. */
static char *ts_call(const char *fn, const char *a, size_t na, const char *b, size_t nb)
{
    char *src = malloc(64 + 4 * (na + nb));
    if (!src) return NULL;
    char *p = src + sprintf(src, "main = %s(", fn);
    p = ts_lit(p, a, na);
    if (b) {
        p += sprintf(p, ", ");
        p = ts_lit(p, b, nb);
    }
    sprintf(p, ")\n");
    return src;
}

static void ts_expect(const char *src, const char *want, int line)
{
    ts_out o = ts_run(src, 0);
    if (!o.text || strcmp(o.text, want) != 0)
        test_fail(__FILE__, line, "%.120s gives %s, expected %s", src, o.text ? o.text : "(null)", want);
    free(o.text);
}

static void ts_random_bytes(char *s, size_t n, const char *alphabet, size_t k)
{
    for (size_t i = 0; i < n; i++) s[i] = alphabet[ts_rand((unsigned)k)];
}

/* ---- split and words against naive C --------------------------------------------- */

static stc_value ts_strlist(const char **from, const size_t *len, size_t n)
{
    stc_value items[64];
    for (size_t i = 0; i < n; i++) items[i] = stc_value_new_str(from[i], len[i]);
    return stc_value_new_list(n, items);
}

/* Naive split of s on sep (m >= 1): the pieces as a list value. */
static stc_value ts_naive_split(const char *s, size_t n, const char *sep, size_t m)
{
    const char *from[64];
    size_t len[64], k = 0, start = 0;
    for (size_t i = 0; i + m <= n;) { /* every position, left to right */
        if (memcmp(s + i, sep, m) == 0) {
            from[k] = s + start, len[k++] = i - start;
            i += m, start = i;
        } else {
            i++;
        }
    }
    from[k] = s + start, len[k++] = n - start;
    return ts_strlist(from, len, k);
}

TEST(strings_split_matches_naive)
{
    static const char alpha[] = {'a', 'b', '\0'};
    for (int c = 0; c < 1500; c++) { /* long separators of few letters: deep KMP fallbacks */
        char s[48], sep[8];
        size_t n = ts_rand(48), m = 1 + ts_rand(c % 2 ? 4 : 8);
        ts_random_bytes(s, n, alpha, c % 3 ? 2 : 3);
        ts_random_bytes(sep, m, alpha, c % 3 ? 2 : 3);
        for (size_t i = 0; c % 2 == 0 && i < n;) { /* prefixes of sep: near misses everywhere */
            size_t k = 1 + ts_rand((unsigned)m);
            for (size_t j = 0; j < k && i < n; j++) s[i++] = sep[j];
        }
        stc_value want = ts_naive_split(s, n, sep, m);
        char *wtext = stc_value_to_text(want), *src = ts_call("split", s, n, sep, m);
        ts_expect(src, wtext, __LINE__);
        free(src), free(wtext), stc_value_release(want);
    }
}

/* Every separator of 2 to 8 letters a/b, after each of its proper
 * prefixes: sep[:k] + sep.  An occurrence that starts inside a partial
 * match is what a wrong KMP fallback misses; this family reaches every
 * such case that texts of up to 14 letters can show. */
TEST(strings_split_after_partial_matches)
{
    enum { BATCH = 64 };
    char *src = malloc(BATCH * 128 + 16);
    stc_value items[BATCH];
    int nb = 0;
    char *p = src;
    for (size_t m = 2; m <= 8; m++) {
        for (unsigned mask = 0; mask < 1u << m; mask++) {
            char sep[8], t[16];
            for (size_t i = 0; i < m; i++) sep[i] = mask >> i & 1 ? 'b' : 'a';
            for (size_t k = 1; k < m; k++) {
                memcpy(t, sep, k);
                memcpy(t + k, sep, m);
                if (nb == 0) p = src + sprintf(src, "main = [");
                p += sprintf(p, "%ssplit(\"%.*s\", \"%.*s\")", nb ? ", " : "", (int)(k + m), t, (int)m, sep);
                items[nb++] = ts_naive_split(t, k + m, sep, m);
                bool last = m == 8 && mask + 1 == 1u << m && k + 1 == m;
                if (nb == BATCH || last) {
                    sprintf(p, "]\n");
                    stc_value want = stc_value_new_list((size_t)nb, items);
                    char *wtext = stc_value_to_text(want);
                    ts_expect(src, wtext, __LINE__);
                    free(wtext), stc_value_release(want);
                    nb = 0;
                }
            }
        }
    }
    free(src);
}

/* words against a naive scan.  The second half: long words of letters
 * and the bytes around the SWAR scan's threshold (0x20 blank, 0x21 not,
 * control bytes below it that are no blanks, bytes above 0x7f), so that
 * words cross the 8-byte steps of str_word_end and hold such bytes
 * anywhere in a step. */
TEST(strings_words_matches_naive)
{
    static const char alpha[] = {'a', 'x', ' ', '\t', '\n', '\v', '\f', '\r', '\0', '\x85'};
    static const char wide[] = {'a',    'b',    'c',    'd',    '!',    '\x1f', '\x0e', '\x08', '\x01', '\0',
                                '\x7f', '\x80', '\xa0', '\xff', '\xe1', 'e',    'f',    ' ',    '\t',   '\r'};
    for (int c = 0; c < 1200; c++) {
        char s[64];
        bool w = c >= 400;
        size_t n = ts_rand(w ? 64 : 40);
        if (w) ts_random_bytes(s, n, wide, c % 2 ? sizeof wide : sizeof wide - 3); /* blanks rare, or none */
        else ts_random_bytes(s, n, alpha, sizeof alpha);
        const char *from[64];
        size_t len[64], k = 0;
        for (size_t i = 0; i < n;) {
            while (i < n && strchr(" \t\n\v\f\r", s[i]) && s[i]) i++;
            size_t j = i;
            while (j < n && !(strchr(" \t\n\v\f\r", s[j]) && s[j])) j++;
            if (j > i) from[k] = s + i, len[k++] = j - i;
            i = j;
        }
        stc_value want = ts_strlist(from, len, k);
        char *wtext = stc_value_to_text(want), *src = ts_call("words", s, n, NULL, 0);
        ts_expect(src, wtext, __LINE__);
        free(src), free(wtext), stc_value_release(want);
    }
}

/* The words form (a let that reads its words only by len and nth keeps a
 * summary of them, no list: src/eval/prepare.c) against a naive scan:
 * every word read by nth, the count by len, on random lines of up to 400
 * bytes (words past the seventh, bounds at and past byte 255, blanks and
 * other control bytes) and on lines of 250 to 299 words (the count is
 * kept below 255 only). */
TEST(strings_words_form_matches_naive)
{
    static const char alpha[] = {'a', 'x', '7', ' ', ' ', '\t', '\r', '\0', '\x01', '\x85', '\x21', '\x20'};
    static const char fun[] = "fun all(l, i, acc) = let w = words(l) in\n"
                              "  if i >= len(w) then (len(w), acc) else all(l, i + 1, append(acc, [nth(w, i)]))\n";
    char s[600];
    char *src = malloc(sizeof fun + 64 + 4 * sizeof s);
    stc_value *items = malloc(300 * sizeof *items);
    if (!src || !items) test_fail(__FILE__, __LINE__, "out of memory");
    for (int c = 0; c < 300 && src && items; c++) {
        size_t n = 0;
        if (c < 250) {
            n = ts_rand(c < 100 ? 40 : 400);
            ts_random_bytes(s, n, alpha, sizeof alpha);
        } else {
            for (int k = 0; k < c; k++) s[n++] = (char)('a' + k % 3), s[n++] = k % 7 ? ' ' : '\t';
        }
        size_t k = 0;
        for (size_t i = 0; i < n;) {
            while (i < n && strchr(" \t\n\v\f\r", s[i]) && s[i]) i++;
            size_t j = i;
            while (j < n && !(strchr(" \t\n\v\f\r", s[j]) && s[j])) j++;
            if (j > i) items[k++] = stc_value_new_str(s + i, j - i);
            i = j;
        }
        stc_value pair[2] = {stc_value_int((int64_t)k), stc_value_new_list(k, items)}; /* (consumed) */
        stc_value want = stc_value_new_tuple(2, pair);
        char *wtext = stc_value_to_text(want), *p = src + sprintf(src, "%smain = all(", fun);
        p = ts_lit(p, s, n);
        sprintf(p, ", 0, [])\n");
        ts_expect(src, wtext, __LINE__);
        free(wtext), stc_value_release(want);
    }
    free(src), free(items);
}

/* Every slice of a 40-byte string, and every word of every length up to
 * 40 within a line: the copies of short pieces (val_str_new's moves for 1
 * to 3, 4 to 7 and 8 to 16 bytes, memcpy above) against the C bytes. */
TEST(strings_pieces_of_every_length)
{
    char s[40];
    for (size_t i = 0; i < sizeof s; i++) s[i] = (char)(i == 20 ? 0 : 'A' + (int)i * 7 % 60 + (i % 5 == 0 ? 120 : 0));
    char *src = malloc(4096), *p;
    p = src + sprintf(src, "main = let s = ");
    p = ts_lit(p, s, sizeof s);
    sprintf(p, " in smap(fn i => smap(fn j => slice(s, i, j), range(i, 41)), range(0, 41))\n");
    stc_value rows[41];
    for (size_t i = 0; i <= sizeof s; i++) {
        stc_value items[41];
        for (size_t j = i; j <= sizeof s; j++) items[j - i] = stc_value_new_str(s + i, j - i);
        rows[i] = stc_value_new_list(sizeof s + 1 - i, items);
    }
    stc_value want = stc_value_new_list(41, rows);
    char *wtext = stc_value_to_text(want);
    ts_expect(src, wtext, __LINE__);
    free(wtext), stc_value_release(want);
    for (size_t n = 1; n <= sizeof s; n++) { /* words(" x WORD y"): the word cut from a line */
        char line[64] = " x ";
        memcpy(line + 3, s, n);
        memcpy(line + 3 + n, " y", 2);
        char *call = ts_call("words", line, n + 5, NULL, 0);
        stc_value w[3] = {stc_value_new_str("x", 1), stc_value_new_str(s, n), stc_value_new_str("y", 1)};
        stc_value wl = stc_value_new_list(3, w);
        wtext = stc_value_to_text(wl);
        ts_expect(call, wtext, __LINE__);
        free(call), free(wtext), stc_value_release(wl);
    }
    free(src);
}

/* ---- parse_int and parse_float against strtoll and strtod ---------------------------- */

static void ts_quoted_error(char *out, size_t cap, const char *fn, const char *s, size_t n, const char *what)
{
    stc_value v = stc_value_new_str(s, n);
    char *q = stc_value_to_text(v);
    snprintf(out, cap, "1:8: %s: %s %s", fn, q ? q : "?", what);
    free(q);
    stc_value_release(v);
}

TEST(strings_parse_int_matches_strtoll)
{
    static const char alpha[] = "0123456789+- x";
    static const char *edges[] = {"9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                  "-9223372036854775809", "+9223372036854775807", "18446744073709551615",
                                  "18446744073709551616", "-18446744073709551616", "0", "-0", "+0",
                                  "00000000000000000000009223372036854775807", "-00009223372036854775808"};
    const size_t nedges = sizeof edges / sizeof *edges;
    for (size_t c = 0; c < 700 + nedges; c++) {
        char s[48], want[128];
        size_t n = c % 4 == 0 ? 15 + ts_rand(8) : ts_rand(8); /* near the int64 limits, or short */
        ts_random_bytes(s, n, alpha, c % 4 == 0 ? 10 : sizeof alpha - 1);
        if (c % 4 == 0 && c % 8 == 0) s[0] = '-';
        if (c >= 700) n = strlen(edges[c - 700]), memcpy(s, edges[c - 700], n);
        s[n] = '\0';
        size_t i = s[0] == '+' || s[0] == '-';
        bool syntax = n > i && strspn(s + i, "0123456789") == n - i;
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (!syntax) ts_quoted_error(want, sizeof want, "parse_int", s, n, "is not an integer");
        else if (errno == ERANGE) ts_quoted_error(want, sizeof want, "parse_int", s, n, "is out of range");
        else snprintf(want, sizeof want, "%lld", v);
        char *src = ts_call("parse_int", s, n, NULL, 0);
        ts_expect(src, want, __LINE__);
        free(src);
    }
}

TEST(strings_parse_float_matches_strtod)
{
    /* Over these bytes strtod's decimal syntax is exactly parse_float's. */
    static const char alpha[] = "0123456789.eE+-";
    for (int c = 0; c < 1500; c++) {
        char s[16], want[128];
        size_t n = ts_rand(9);
        ts_random_bytes(s, n, alpha, sizeof alpha - 1);
        if (c % 5 == 0 && n > 3) s[n - 3] = 'e', s[n - 2] = ts_rand(2) ? '-' : '3', s[n - 1] = '9';
        s[n] = '\0';
        char *end;
        double x = strtod(s, &end);
        if (n == 0 || end != s + n) {
            ts_quoted_error(want, sizeof want, "parse_float", s, n, "is not a number");
        } else {
            char *t = stc_value_to_text(stc_value_float(x));
            snprintf(want, sizeof want, "%s", t ? t : "?");
            free(t);
        }
        char *src = ts_call("parse_float", s, n, NULL, 0);
        ts_expect(src, want, __LINE__);
        free(src);
    }
}

/* The fast path (no strtod for at most 15 digits and exponents within
 * +-22) at and across its bounds: 13 to 17 significant digits, leading
 * and trailing zeros, decimal exponents -25..25 written or implied by the
 * point, every one checked against strtod.  Every third number has 1 to
 * 17 digits and no exponent: the one-pass form (str_float_plain) and
 * its bound of 15 digits with the leading zeros. */
TEST(strings_parse_float_fast_path_matches_strtod)
{
    static const char *edges[] = {"123456789012345", "1234567890123456", "999999999999999e22", "999999999999999e23",
                                  "1e22", "1e23", "1e-22", "1e-23", "9007199254740993", "9007199254740992.0",
                                  "0.000000000000000000000001", "000000000000000000000000001.5", "1.000000000000000",
                                  "1.0000000000000001", "0e999999999", "-0e-999999999", "0.0", "-0.000", "1e0000000000000000022",
                                  "4.35", "0.3", "2.675", "8.589973e9", "89255.0e-22", "1.7976931348623157e308",
                                  "2.2250738585072014e-308", "123.456e-5", ".000000000000000000001e21", "5e-324"};
    const size_t nedges = sizeof edges / sizeof *edges;
    for (size_t c = 0; c < 600 + nedges; c++) {
        char s[64], want[128];
        size_t n = 0;
        if (c < 600) {
            if (ts_rand(3) == 0) s[n++] = ts_rand(2) ? '-' : '+';
            for (unsigned z = ts_rand(4); z > 0; z--) s[n++] = '0';
            bool plain = c % 3 == 0;
            unsigned digits = plain ? 1 + ts_rand(17) : 13 + ts_rand(5), point = ts_rand(digits + 2);
            for (unsigned k = 0; k < digits; k++) {
                if (k == point) s[n++] = '.';
                s[n++] = (char)('0' + (k == 0 ? 1 + ts_rand(9) : ts_rand(10)));
            }
            if (plain && point == digits) s[n++] = '.'; /* "12." */
            if (!plain && ts_rand(2)) n += (size_t)sprintf(s + n, "e%d", (int)ts_rand(51) - 25);
        } else {
            n = strlen(edges[c - 600]);
            memcpy(s, edges[c - 600], n);
        }
        s[n] = '\0';
        char *end, *t = stc_value_to_text(stc_value_float(strtod(s, &end)));
        CHECK(end == s + n);
        snprintf(want, sizeof want, "%s", t ? t : "?");
        free(t);
        char *src = ts_call("parse_float", s, n, NULL, 0);
        ts_expect(src, want, __LINE__);
        free(src);
    }
}

TEST(strings_parse_float_specials)
{
    ts_expect("main = (parse_float(\"inf\"), parse_float(\"-inf\"), parse_float(\"+inf\"), parse_float(\"1e400\"))",
              "(inf, -inf, inf, inf)", __LINE__);
    ts_expect("main = (parse_float(\"1e-400\"), parse_float(\"-1e-400\"), parse_float(\"-0\"), parse_float(\"5e-324\"))",
              "(0.0, -0.0, -0.0, 5e-324)", __LINE__);
    ts_expect("main = let x = parse_float(\"nan\") in (x != x, str(x), parse_float(\"-nan\") != x)",
              "(true, \"nan\", true)", __LINE__);
    const char *bad[] = {"nan(1)", "infinity", "Inf", "NAN", "0x10", "1e5x", "+", "--1", "1e+", ".e1", " 1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char want[128], *src = ts_call("parse_float", bad[i], strlen(bad[i]), NULL, 0);
        ts_quoted_error(want, sizeof want, "parse_float", bad[i], strlen(bad[i]), "is not a number");
        ts_expect(src, want, __LINE__);
        free(src);
    }
}

/* ---- str reads back ---------------------------------------------------------------- */

TEST(strings_str_is_the_printed_text)
{
    const char *exprs[] = {"42", "-7", "0.1 + 0.2", "1e301", "-0.0", "1.0 / 0.0", "true", "()",
                           "[1, 2]", "[[], [3]]", "(1, \"a\\\"\\\\b\", [inl (-2), inr 3])", "inl (inr (-1.5))",
                           "\"\\x00\\x01\\x7f\\xff\\n\\t\\r\"", "(range(0, 5), \"\")"};
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
        char src[256];
        snprintf(src, sizeof src, "main = let v = %s in (v, str(v))", exprs[i]);
        ts_out o = ts_run(src, 0);
        CHECK_INT(o.rc, 0);
        char want[512], *first = NULL;
        /* "(V, "TEXT")": TEXT must be V's text form, escaped once more. */
        snprintf(src, sizeof src, "main = %s", exprs[i]);
        ts_out v = ts_run(src, 0);
        if (v.text) {
            stc_value s = stc_value_new_str(v.text, strlen(v.text));
            first = stc_value_to_text(s);
            stc_value_release(s);
        }
        snprintf(want, sizeof want, "(%s, %s)", v.text ? v.text : "?", first ? first : "?");
        if (!o.text || strcmp(o.text, want) != 0) test_fail(__FILE__, __LINE__, "%s: %s, expected %s", exprs[i], o.text, want);
        free(o.text), free(v.text), free(first);
    }
}

TEST(strings_str_of_random_bytes_reads_back)
{
    for (int c = 0; c < 200; c++) {
        char s[24], xl[128], src[160];
        size_t n = ts_rand(24);
        for (size_t i = 0; i < n; i++) s[i] = (char)ts_rand(256);
        ts_lit(xl, s, n);
        snprintf(src, sizeof src, "main = str(%s)", xl);
        ts_out o = ts_run(src, 0);
        stc_value sv = stc_value_new_str(s, n);
        char *lit = stc_value_to_text(sv); /* what str(s) must give */
        stc_value lv = stc_value_new_str(lit, strlen(lit));
        char *twice = stc_value_to_text(lv);
        if (!o.text || !twice || strcmp(o.text, twice) != 0)
            test_fail(__FILE__, __LINE__, "str gives %s, expected %s", o.text, twice);
        /* ... and it reads back as s */
        char *src2 = malloc(strlen(lit) + strlen(xl) + 16);
        sprintf(src2, "main = %s == %s", lit, xl);
        ts_out back = ts_run(src2, 0);
        if (!back.text || strcmp(back.text, "true") != 0) test_fail(__FILE__, __LINE__, "%s: %s", src2, back.text);
        stc_value_release(lv), stc_value_release(sv);
        free(twice), free(lit), free(src2), free(o.text), free(back.text);
    }
}

/* ---- errors quote at most 40 bytes, whole UTF-8 sequences ------------------------------ */

TEST(strings_error_quotes_are_cut)
{
    char a[64];
    memset(a, 'a', sizeof a);
    char want[256];
    struct { const char *tail; size_t prefix, keep; } cases[] = {
        {"", 40, 40}, {"", 41, 40}, {"\xc3\xa9", 39, 39}, {"\xe2\x82\xac", 38, 38}, {"\xe2\x82\xac", 39, 39},
        {"\xf0\x9f\x98\x80", 37, 37}, {"\xf0\x9f\x98\x80", 40, 40}, {"\x80\x80\x80\x80\x80\x80", 36, 40}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char s[64];
        size_t n = cases[i].prefix;
        memcpy(s, a, n);
        memcpy(s + n, cases[i].tail, strlen(cases[i].tail));
        n += strlen(cases[i].tail);
        if (cases[i].prefix == 40 && !cases[i].tail[0]) n = 40;
        else if (n <= 40) s[n++] = 'z'; /* make it longer than 40 */
        stc_value q = stc_value_new_str(s, cases[i].keep);
        char *qt = stc_value_to_text(q);
        snprintf(want, sizeof want, "1:8: parse_int: %s%s is not an integer", qt, n > 40 ? "..." : "");
        char *src = ts_call("parse_int", s, n, NULL, 0);
        ts_expect(src, want, __LINE__);
        free(src), free(qt), stc_value_release(q);
    }
}

/* ---- big inputs: linear time, the runtime agrees ------------------------------------------ */

#define TS_REP "fun rep(s, n) = if n == 0 then s else rep(concat(s, s), n - 1)\n"

TEST(strings_big_inputs)
{
    /* 2^20 bytes; a naive search for a^1024 b would take ~10^9 steps. */
    ts_expect(TS_REP "main = let s = rep(\"a\", 20) in (len(split(s, concat(rep(\"a\", 10), \"b\"))),\n"
                     "  len(split(s, rep(\"a\", 10))), len(split(s, \"a\")), len(words(s)), len(s))",
              "(1, 1025, 1048577, 1, 1048576)", __LINE__);
    ts_expect(TS_REP "main = let s = rep(\"ab \", 18) in (len(words(s)), len(split(s, \"b a\")), nth(split(s, \"ab\"), 7))",
              "(262144, 262144, \" \")", __LINE__);
    ts_expect(TS_REP "main = parse_int(rep(\"9\", 20))",
              "2:8: parse_int: \"9999999999999999999999999999999999999999\"... is out of range", __LINE__);
    ts_expect(TS_REP "main = len(str(smap(fn i => (i, str(i)), range(0, 20000))))", "337780", __LINE__);
}

/* No text passes 1 GiB (docs/LANGUAGE.md section 7): concat checks the
 * length before it copies. Peak about 1 GiB: two 512 MiB strings. */
TEST(strings_concat_limit)
{
#if defined(__SANITIZE_THREAD__)
    /* One thread, nothing for TSan to see; its 1 GiB of instrumented
     * copying takes 5-8 minutes there. The plain and ASan builds run it. */
    return;
#endif
    ts_expect(TS_REP "main = let s = rep(\"x\", 29) in let t = concat(s, \"y\") in len(concat(t, s))",
              "2:62: concat: result too long (over 1073741824 bytes)", __LINE__);
}

TEST(strings_runtime_agrees_with_reference)
{
    const char *src =
        "fun count(line, st) = let (n, seen) = st in let ws = words(line) in\n"
        "  (concat(str(n), concat(\": \", str(ws))), (n + len(ws), concat(seen, line)))\n"
        "thread t = count init (0, \"\")\n"
        "fun num(x) = parse_float(nth(split(x, \"=\"), 1))\n"
        "main = (smap(fn l => t(l), split(\"a b\\n\\nc d e\\n f \", \"\\n\")),\n"
        "        smap(fn x => num(x) * 2.0, [\"a=1.5\", \"b=-2e3\", \"c=inf\"]),\n"
        "        smap(fn l => t(concat(l, \" !\")), words(\"x y z\")))\n";
    ts_out ref = ts_run(src, 0);
    CHECK_INT(ref.rc, 0);
    CHECK_STR(ref.text, "([\"0: [\\\"a\\\", \\\"b\\\"]\", \"2: []\", \"2: [\\\"c\\\", \\\"d\\\", \\\"e\\\"]\", "
                        "\"5: [\\\"f\\\"]\"], [3.0, -4000.0, inf], [\"6: [\\\"x\\\", \\\"!\\\"]\", "
                        "\"8: [\\\"y\\\", \\\"!\\\"]\", \"10: [\\\"z\\\", \\\"!\\\"]\"])");
    for (int w = 1; w <= 4; w++) {
        ts_out o = ts_run(src, w);
        CHECK_INT(o.rc, 0);
        if (ref.text && o.text) CHECK_STR(o.text, ref.text);
        free(o.text);
    }
    free(ref.text);
    const char *bad = "fun p(x, s) = (parse_int(x) + s, s + 1)\nthread t = p init 0\n"
                      "main = smap(fn x => t(x), [\"1\", \"2\", \"3x\", \"4\"])\n";
    for (int w = 0; w <= 3; w++) {
        ts_out o = ts_run(bad, w);
        CHECK_INT(o.rc, STC_ERUNTIME);
        CHECK_STR(o.text, "1:16: parse_int: \"3x\" is not an integer");
        free(o.text);
    }
}
