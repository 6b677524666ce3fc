/* strings.c - the evaluator's string builtins: words split str concat
 * parse_int parse_float try_int try_float (docs/LANGUAGE.md 7; the rest of
 * the string library is in text.c).  They are pure: they read
 * their arguments (borrowed) and build a new value.  Errors are reported at
 * the callee name and quote the offending text as a string literal, cut
 * after STR_QUOTE_MAX bytes.  Every path releases what it built; an
 * allocation failure is the error "out of memory". */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "util/buf.h"
#include "value/value.h"

/* Bytes of an input quoted in an error message; longer inputs end in "...". */
#define STR_QUOTE_MAX 40

/* "NAME: "TEXT" WHAT", TEXT escaped as `stc run` prints strings. */
static int str_error(eval_ctx *cx, ir_loc loc, const char *name, const val_str *s, const char *what)
{
    size_t n = s->len;
    bool cut = n > STR_QUOTE_MAX;
    if (cut) {
        n = STR_QUOTE_MAX;
        /* Do not end inside a UTF-8 sequence: drop a sequence cut short. */
        for (int k = 0; k < 3 && n > 0 && ((unsigned char)s->data[n] & 0xc0) == 0x80; k++) n--;
        if (n > 0 && ((unsigned char)s->data[n] & 0xc0) == 0x80) n = STR_QUOTE_MAX; /* not UTF-8 */
    }
    buf b = BUF_INIT;
    stc__val_print_text_string(&b, s->data, n);
    if (cut) stc__buf_puts(&b, "...");
    char *text = stc__buf_take(&b);
    if (!text) return stc__eval_oom(cx, loc);
    int rc = stc__eval_error(cx, STC_ERUNTIME, loc, "%s: %s %s", name, text, what);
    free(text);
    return rc;
}

/* Item k of the list r: bytes [from, to) of s, or s itself when that is
 * all of it.  False when out of memory (r keeps unit there). */
static inline bool str_piece(stc_value r, size_t k, stc_value s, size_t from, size_t to)
{
    const val_str *vs = val_as_str(s);
    stc_value v = from == 0 && to == vs->len ? val_retain(s) : val_str_new(vs->data + from, to - from);
    if (v.tag == STC_T_INVALID) return false;
    val_seq_items(r)[k] = v;
    return true;
}

/* Releases the list r of which only the first k items are set (words). */
static void str_release_part(stc_value r, size_t k)
{
    ((val_seq *)r.as.obj)->n = k;
    val_release(r);
}

/* ---- words ----------------------------------------------------------------- */

/* The end of the word at d[j]: the first blank at or after j, or len.
 * Bytes above ' ' are never blanks.  Eight bytes at a time where the
 * words are (SWAR, as val_str_compare): (x - 0x21..) & ~x & 0x80.. flags
 * the bytes below 0x21, and its lowest flag is exact (a borrow only runs
 * upward from a flagged byte); a flagged byte that is no blank (a control
 * byte) is stepped over.  A logstats line's words took ~390 instructions
 * bytewise, ~100 so (docs/DESIGN.md 2, "Allocation and strings"). */
static inline size_t str_word_end(const char *d, size_t len, size_t j)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    while (len - j >= 8) {
        uint64_t x;
        memcpy(&x, d + j, 8);
        uint64_t m = (x - 0x21 * ones) & ~x & highs;
        if (m == 0) {
            j += 8;
            continue;
        }
        j += (size_t)__builtin_ctzll(m) / 8;
        if (stc__str_space((unsigned char)d[j])) return j;
        j++;
    }
#endif
    while (j < len && ((unsigned char)d[j] > ' ' || !stc__str_space((unsigned char)d[j]))) j++;
    return j;
}

/* The next word of d[0..len) at or after *i: its bounds, false when none. */
static inline bool str_next_word(const char *d, size_t len, size_t *i, size_t *from, size_t *to)
{
    size_t j = *i;
    if (j + 1 < len && d[j] == ' ' && (unsigned char)d[j + 1] > ' ') { /* one space: the usual case */
        j++;
    } else {
        while (j < len && (unsigned char)d[j] <= ' ' && stc__str_space((unsigned char)d[j])) j++;
        if (j == len) return false;
    }
    *from = j;
    *to = *i = j = str_word_end(d, len, j + 1);
    return true;
}

/* Words whose bounds one scan keeps on the C stack; a line with more is
 * scanned again from there for the rest. */
#define STR_WORDS_INLINE 32
/* Word starts a words summary keeps (stc__str_words_pack). */
#define STR_WORDS_PACKED 7

int stc__eval_words(eval_ctx *cx, ir_loc loc, stc_value s, stc_value *out)
{
    const val_str *vs = val_as_str(s);
    size_t bounds[2 * STR_WORDS_INLINE];
    size_t n = 0, i = 0, rest = 0, from, to;
    while (str_next_word(vs->data, vs->len, &i, &from, &to)) {
        if (n < STR_WORDS_INLINE) {
            bounds[2 * n] = from;
            bounds[2 * n + 1] = to;
            rest = i;
        }
        n++;
    }
    stc_value r = val_seq_new_unset(STC_T_LIST, n);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    i = rest;
    for (size_t k = 0; k < n; k++) {
        if (k < STR_WORDS_INLINE) from = bounds[2 * k], to = bounds[2 * k + 1];
        else str_next_word(vs->data, vs->len, &i, &from, &to);
        if (!str_piece(r, k, s, from, to)) {
            str_release_part(r, k);
            return stc__eval_oom(cx, loc);
        }
    }
    *out = r;
    return 0;
}

/* ---- words kept as bounds (the words form of EVAL_X_BUILTIN) -------------------
 *
 * `let w = words(s) in ...` whose w is only read by len(w) and nth(w, K)
 * binds w to s itself and keeps in two slots of the frame beside it a
 * summary of s's words (eval_internal.h, "the words form"): no list and
 * no string per word is made.  A word not in the summary is found by
 * scanning s again from the end of the last word kept.  The summary is
 * a pure function of s. */

/* The number whose byte k is b[k]. */
static inline uint64_t str_le64(const uint8_t *b)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, b, 8);
    return x;
#endif
    return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24 |
           (uint64_t)b[4] << 32 | (uint64_t)b[5] << 40 | (uint64_t)b[6] << 48 | (uint64_t)b[7] << 56;
}

void stc__str_words_pack(const val_str *vs, stc_value *h)
{
    uint8_t b[16]; /* h[0]'s bytes, then h[1]'s */
    memset(b, 255, sizeof b);
    size_t n = 0, i = 0, from, to;
    while (str_next_word(vs->data, vs->len, &i, &from, &to)) {
        if (n < STR_WORDS_PACKED && to < 255) {
            b[n + 1] = (uint8_t)from;
            b[n + 8] = (uint8_t)to;
        }
        n++;
    }
    b[0] = (uint8_t)(n < 255 ? n : 255);
    h[0] = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)str_le64(b)};
    h[1] = (stc_value){.tag = STC_T_INT, .as.i = (int64_t)str_le64(b + 8)};
}

size_t stc__str_words_count_scan(const val_str *vs)
{
    size_t n = 0, i = 0, from, to;
    while (str_next_word(vs->data, vs->len, &i, &from, &to)) n++;
    return n;
}

void stc__str_words_bounds_scan(const val_str *vs, const stc_value *h, size_t k, size_t *from, size_t *to)
{
    size_t i = 0, j = 0;
    if (h[0].tag == STC_T_INT && h[1].tag == STC_T_INT) { /* from the end of the last word kept */
        uint64_t starts = (uint64_t)h[0].as.i;
        size_t m = k < STR_WORDS_PACKED ? k : STR_WORDS_PACKED; /* words 0..m-1 may be kept */
        while (m > 0 && (starts >> 8 * m & 0xff) == 255) m--;
        if (m > 0) {
            i = (size_t)((uint64_t)h[1].as.i >> 8 * (m - 1) & 0xff);
            j = m;
        }
    }
    for (; j <= k; j++) str_next_word(vs->data, vs->len, &i, from, to); /* k < the count: found */
}

/* ---- split ----------------------------------------------------------------- */

/* str_finder (eval_internal.h): memchr for one byte, else
 * Knuth-Morris-Pratt with the prefix table fail[0..m). */
bool stc__str_finder_init(str_finder *f, const char *sep, size_t m)
{
    f->sep = sep;
    f->m = m;
    f->fail = NULL;
    if (m < 2) return true;
    if (m > SIZE_MAX / sizeof *f->fail) return false;
    f->fail = malloc(m * sizeof *f->fail);
    if (!f->fail) return false;
    f->fail[0] = 0;
    for (size_t i = 1, k = 0; i < m; i++) {
        while (k > 0 && sep[i] != sep[k]) k = f->fail[k - 1];
        if (sep[i] == sep[k]) k++;
        f->fail[i] = k;
    }
    return true;
}

size_t stc__str_find(const str_finder *f, const char *d, size_t len, size_t from)
{
    if (len - from < f->m) return SIZE_MAX;
    if (f->m == 1) {
        const char *p = memchr(d + from, f->sep[0], len - from);
        return p ? (size_t)(p - d) : SIZE_MAX;
    }
    size_t q = 0;
    for (size_t i = from; i < len; i++) {
        while (q > 0 && d[i] != f->sep[q]) q = f->fail[q - 1];
        if (d[i] == f->sep[q] && ++q == f->m) return i + 1 - f->m;
    }
    return SIZE_MAX;
}

static int str_split(eval_ctx *cx, ir_loc loc, stc_value s, stc_value sep, stc_value *out)
{
    const val_str *vs = val_as_str(s), *vsep = val_as_str(sep);
    if (vsep->len == 0) return stc__eval_error(cx, STC_ERUNTIME, loc, "split: empty separator");
    str_finder f;
    if (vsep->len > vs->len) { /* no separator fits: [s] */
        f = (str_finder){vsep->data, vsep->len, NULL};
    } else if (!stc__str_finder_init(&f, vsep->data, vsep->len)) {
        return stc__eval_oom(cx, loc);
    }
    size_t n = 1, at = 0, p;
    while ((p = stc__str_find(&f, vs->data, vs->len, at)) != SIZE_MAX) n++, at = p + f.m;
    stc_value r = stc__val_seq_alloc(STC_T_LIST, n);
    bool ok = r.tag != STC_T_INVALID;
    at = 0;
    for (size_t k = 0; ok && k < n; k++) {
        p = k + 1 < n ? stc__str_find(&f, vs->data, vs->len, at) : vs->len;
        ok = str_piece(r, k, s, at, p);
        at = p + f.m;
    }
    free(f.fail);
    if (!ok) {
        val_release(r); /* unit, or a list whose missing items are unit */
        return stc__eval_oom(cx, loc);
    }
    *out = r;
    return 0;
}

/* ---- str, concat ------------------------------------------------------------ */

/* str(v) is at most VAL_PRINT_MAX bytes, as stc run can print: a value with
 * much sharing can have a text far beyond memory (a list holding one
 * sublist twice, nested 40 times, has 2^40 leaves). */
static int str_str(eval_ctx *cx, ir_loc loc, stc_value v, stc_value *out)
{
    buf b = BUF_INIT;
    int rc = stc__val_print_text(&b, v, VAL_PRINT_MAX);
    if (rc == STC_ELIMIT) {
        stc__buf_free(&b);
        return stc__eval_error(cx, STC_ELIMIT, loc, "str: value too large to print (over %zu bytes)", (size_t)VAL_PRINT_MAX);
    }
    stc_value r = rc == 0 ? stc_value_new_str(b.data ? b.data : "", b.len) : (stc_value){.tag = STC_T_INVALID};
    stc__buf_free(&b);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    *out = r;
    return 0;
}

static int str_concat(eval_ctx *cx, ir_loc loc, stc_value a, stc_value b, stc_value *out)
{
    const val_str *x = val_as_str(a), *y = val_as_str(b);
    if (y->len == 0 || x->len == 0) { /* share the other one */
        *out = val_retain(y->len == 0 ? a : b);
        return 0;
    }
    /* The limit every text obeys (str's too): checked before allocating. */
    if (x->len > VAL_PRINT_MAX || y->len > VAL_PRINT_MAX - x->len)
        return stc__eval_error(cx, STC_ELIMIT, loc, "concat: result too long (over %zu bytes)", (size_t)VAL_PRINT_MAX);
    stc_value r = stc__val_str_alloc(x->len + y->len);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    memcpy(val_as_str(r)->data, x->data, x->len);
    memcpy(val_as_str(r)->data + x->len, y->data, y->len);
    *out = r;
    return 0;
}

/* ---- parse_int, parse_float ------------------------------------------------------ */

enum { STR_INT_OK, STR_INT_SYNTAX, STR_INT_RANGE };

/* [+-]?[0-9]+ whose value fits int64: STR_INT_OK and *out, else why not. */
static int str_int_bytes(const char *d, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (d[i] == '+' || d[i] == '-')) neg = d[i++] == '-';
    if (i == len) return STR_INT_SYNTAX;
    if (len - i <= 18) { /* below 10^18: no overflow, no division per digit */
        int64_t v = 0;
        for (; i < len; i++) {
            if (d[i] < '0' || d[i] > '9') return STR_INT_SYNTAX;
            v = v * 10 + (d[i] - '0');
        }
        *out = neg ? -v : v;
        return STR_INT_OK;
    }
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    bool over = false; /* a bad byte after an overflow still makes it "not an integer" */
    for (; i < len; i++) {
        if (d[i] < '0' || d[i] > '9') return STR_INT_SYNTAX;
        unsigned digit = (unsigned)(d[i] - '0');
        if (over || v > (limit - digit) / 10) over = true;
        else v = v * 10 + digit;
    }
    if (over) return STR_INT_RANGE;
    *out = !neg ? (int64_t)v : v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    return STR_INT_OK;
}

static int str_int_value(const val_str *vs, int64_t *out) { return str_int_bytes(vs->data, vs->len, out); }

int stc__eval_parse_int(eval_ctx *cx, ir_loc loc, stc_value s, stc_value *out)
{
    const val_str *vs = val_as_str(s);
    int64_t v = 0;
    int why = str_int_value(vs, &v);
    if (why != STR_INT_OK)
        return str_error(cx, loc, "parse_int", vs, why == STR_INT_SYNTAX ? "is not an integer" : "is out of range");
    *out = eval_int(v);
    return 0;
}

static size_t str_digits(const char *d, size_t len, size_t i)
{
    size_t j = i;
    while (j < len && d[j] >= '0' && d[j] <= '9') j++;
    return j - i;
}

/* Whether d[0..len) is [+-]? (inf | nan | D+ [. D*] [E] | . D+ [E]), with
 * E = [eE] [+-]? D+: strtod's decimal forms, whole, without spaces. */
static bool str_float_syntax(const char *d, size_t len)
{
    size_t i = 0;
    if (i < len && (d[i] == '+' || d[i] == '-')) i++;
    if (len - i == 3 && (memcmp(d + i, "inf", 3) == 0 || memcmp(d + i, "nan", 3) == 0)) return true;
    size_t whole = str_digits(d, len, i), frac = 0;
    i += whole;
    if (i < len && d[i] == '.') {
        frac = str_digits(d, len, i + 1);
        i += 1 + frac;
    }
    if (whole + frac == 0) return false;
    if (i < len && (d[i] == 'e' || d[i] == 'E')) {
        i++;
        if (i < len && (d[i] == '+' || d[i] == '-')) i++;
        size_t exp = str_digits(d, len, i);
        if (exp == 0) return false;
        i += exp;
    }
    return i == len;
}

/* Exact powers of ten as doubles: 10^22 is the largest (5^22 < 2^53). */
static const double str_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Plain decimals without strtod (Clinger's fast path): when the digits,
 * leading zeros aside, are at most 15 (an integer m below 2^53, exact as a
 * double) and the decimal exponent e is within +-22 (10^|e| exact), one
 * IEEE multiplication or division m * 10^e or m / 10^-e is correctly
 * rounded: the same double as strtod's.  False for everything else
 * (inf, nan, more digits, larger exponents), which strtod reads.  d[0..len)
 * has the syntax of str_float_syntax.  Needs double arithmetic without
 * excess precision (FLT_EVAL_METHOD 0: x86-64 SSE2, AArch64). */
static bool str_float_fast(const char *d, size_t len, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    size_t i = 0;
    bool neg = false, dot = false;
    if (d[i] == '+' || d[i] == '-') neg = d[i++] == '-';
    uint64_t m = 0;
    int digits = 0, e = 0;
    for (; i < len; i++) {
        char c = d[i];
        if (c == '.' && !dot) {
            dot = true;
            continue;
        }
        if (c < '0' || c > '9') break;
        if (dot && --e < -400) return false; /* (an int, however long the text) */
        if (m == 0 && c == '0') continue; /* leading zeros: no digit of m */
        if (++digits > 15) return false;
        m = m * 10 + (uint64_t)(c - '0');
    }
    if (i < len) { /* an exponent (the syntax is checked), or inf/nan */
        if (d[i] != 'e' && d[i] != 'E') return false;
        i++;
        bool eneg = false;
        if (d[i] == '+' || d[i] == '-') eneg = d[i++] == '-';
        int x = 0;
        for (; i < len; i++) {
            if (x > 1000) return false; /* far out of range: strtod says inf or 0 */
            x = x * 10 + (d[i] - '0');
        }
        e += eneg ? -x : x;
    }
    double v = (double)m;
    if (m != 0) { /* 0 with any exponent is 0 */
        if (e < -22 || e > 22) return false;
        v = e < 0 ? v / str_pow10[-e] : v * str_pow10[e];
    }
    *out = neg ? -v : v;
    return true;
#else
    (void)d, (void)len, (void)out;
    return false;
#endif
}

/* The common case in one pass: [+-]? D* [. D*] with 1 to 15 digits in
 * all (leading zeros too, so m < 10^15 is exact) and no exponent, read as
 * str_float_fast reads it (m / 10^frac, correctly rounded).  False for
 * everything else, which the checks below read ("57.6": ~190
 * instructions through them). */
static bool str_float_plain(const char *d, size_t len, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    size_t i = len > 0 && (d[0] == '+' || d[0] == '-'), start = i, frac = 0;
    uint64_t m = 0; /* wraps on a long text, which is refused below */
    unsigned c;
    bool dot = false;
    for (; i < len && (c = (unsigned char)d[i] - '0') <= 9; i++) m = m * 10 + c;
    if (i < len && d[i] == '.') {
        size_t f = ++i;
        dot = true;
        for (; i < len && (c = (unsigned char)d[i] - '0') <= 9; i++) m = m * 10 + c;
        frac = i - f;
    }
    size_t nd = i - start - dot; /* digits */
    if (i != len || nd == 0 || nd > 15) return false;
    double v = (double)m / str_pow10[frac];
    *out = start && d[0] == '-' ? -v : v;
    return true;
#else
    (void)d, (void)len, (void)out;
    return false;
#endif
}

/* Overflow gives +-inf and underflow the nearest double (0 or subnormal),
 * as strtod rounds them: parse_float("1e400") is inf.  False when vs is
 * not a number. */
static bool str_float_value(const val_str *vs, double *out)
{
    if (str_float_plain(vs->data, vs->len, out)) return true;
    if (!str_float_syntax(vs->data, vs->len)) return false;
    if (str_float_fast(vs->data, vs->len, out)) return true;
    char *end = NULL;
    double x = strtod(vs->data, &end); /* data is NUL-terminated and has no NUL (checked) */
    if (end != vs->data + vs->len) return false;
    *out = x;
    return true;
}

int stc__eval_parse_float(eval_ctx *cx, ir_loc loc, stc_value s, stc_value *out)
{
    const val_str *vs = val_as_str(s);
    double x = 0;
    if (!str_float_value(vs, &x)) return str_error(cx, loc, "parse_float", vs, "is not a number");
    *out = eval_float(x);
    return 0;
}

/* parse_int or parse_float (bi) of bytes [from, to) of string s, as of a
 * string of those bytes: a word read in place (EVAL_X_BUILTIN's words
 * form, builtins.c).  The common forms at once; anything else (and every
 * error, which quotes the text) through the string itself. */
int stc__eval_parse_piece(eval_ctx *cx, ir_builtin bi, ir_loc loc, stc_value s, size_t from, size_t to,
                          stc_value *out)
{
    const char *d = val_as_str(s)->data + from;
    size_t len = to - from;
    double f;
    if (bi == BI_PARSE_INT && len > 0 && len <= 18) { /* digits only: str_int_bytes' first case, inline */
        int64_t v = 0;
        size_t i = 0;
        for (; i < len && (unsigned)(d[i] - '0') <= 9; i++) v = v * 10 + (d[i] - '0');
        if (i == len) {
            *out = eval_int(v);
            return 0;
        }
    }
    int64_t i;
    if (bi == BI_PARSE_INT && str_int_bytes(d, len, &i) == STR_INT_OK) {
        *out = eval_int(i);
        return 0;
    }
    if (bi == BI_PARSE_FLOAT && str_float_plain(d, to - from, &f)) {
        *out = eval_float(f);
        return 0;
    }
    /* (Not val_str_new: a third call site here had GCC stop inlining it
     * into words, +1% instructions for wordfreq.) */
    stc_value w = stc_value_new_str(d, to - from);
    if (w.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    int rc = bi == BI_PARSE_INT ? stc__eval_parse_int(cx, loc, w, out) : stc__eval_parse_float(cx, loc, w, out);
    val_release(w);
    return rc;
}

/* try_int(s), try_float(s): inl v where parse_int/parse_float give v, else
 * inr (). */
static int str_try_number(eval_ctx *cx, ir_loc loc, bool is_int, stc_value s, stc_value *out)
{
    const val_str *vs = val_as_str(s);
    int64_t i = 0;
    double f = 0;
    stc_value r;
    if (is_int ? str_int_value(vs, &i) == STR_INT_OK : str_float_value(vs, &f))
        r = stc_value_new_inl(is_int ? eval_int(i) : eval_float(f));
    else
        r = stc_value_new_inr(stc_value_unit());
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    *out = r;
    return 0;
}

/* ---- Dispatch ------------------------------------------------------------------ */

int stc__eval_string_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out)
{
    if (bi == BI_STR) return str_str(cx, loc, a[0], out);
    int nstr = bi == BI_SPLIT || bi == BI_CONCAT ? 2 : 1;
    for (int i = 0; i < nstr; i++)
        if (a[i].tag != STC_T_STR)
            return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad arguments to '%s'", stc__ir_builtins[bi].name);
    switch (bi) {
    case BI_WORDS: return stc__eval_words(cx, loc, a[0], out);
    case BI_SPLIT: return str_split(cx, loc, a[0], a[1], out);
    case BI_CONCAT: return str_concat(cx, loc, a[0], a[1], out);
    case BI_PARSE_INT: return stc__eval_parse_int(cx, loc, a[0], out);
    case BI_PARSE_FLOAT: return stc__eval_parse_float(cx, loc, a[0], out);
    case BI_TRY_INT:
    case BI_TRY_FLOAT: return str_try_number(cx, loc, bi == BI_TRY_INT, a[0], out);
    default: return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: not a string builtin");
    }
}
