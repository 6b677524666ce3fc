/* test_value.c - values: construction, ownership, equality, printing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "test.h"
#include "stc.h"
#include "value/value.h"

static void check_text_json(stc_value v, const char *text, const char *json)
{
    char *t = stc_value_to_text(v), *j = stc_value_to_json(v);
    CHECK_STR(t, text);
    CHECK_STR(j, json);
    free(t);
    free(j);
}

TEST(value_scalars_print)
{
    check_text_json(stc_value_int(-42), "-42", "-42");
    check_text_json(stc_value_int(INT64_MIN), "-9223372036854775808", "-9223372036854775808");
    check_text_json(stc_value_float(4.0), "4.0", "4.0");
    check_text_json(stc_value_float(5.84), "5.84", "5.84");
    check_text_json(stc_value_float(0.1 + 0.2), "0.30000000000000004", "0.30000000000000004");
    check_text_json(stc_value_float(1e300), "1e+300", "1e+300");
    check_text_json(stc_value_float(-0.0), "-0.0", "-0.0");
    check_text_json(stc_value_float(NAN), "nan", "\"nan\"");
    check_text_json(stc_value_float(-INFINITY), "-inf", "\"-inf\"");
    check_text_json(stc_value_bool(true), "true", "true");
    check_text_json(stc_value_unit(), "()", "null");
}

/* JSON is UTF-8 whatever the bytes: well-formed sequences are copied, each
 * maximal ill-formed part is \ufffd (docs/LANGUAGE.md section 9); the text
 * form keeps the bytes. Expectations worked out by hand from the Unicode
 * Standard's table of well-formed sequences. */
TEST(value_json_replaces_ill_formed_utf8)
{
    static const struct { const char *in; size_t len; const char *json; } cases[] = {
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""}, /* é € 😀 */
        {"a\xff" "b", 3, "\"a\\ufffdb\""},               /* a byte that starts nothing */
        {"\x80\xbf", 2, "\"\\ufffd\\ufffd\""},          /* lone continuation bytes */
        {"\xe2\x82", 2, "\"\\ufffd\""},                /* truncated: one part */
        {"\xe2\x82x", 3, "\"\\ufffdx\""},
        {"\xf0\x9f\x98", 3, "\"\\ufffd\""},
        {"\xc0\xaf", 2, "\"\\ufffd\\ufffd\""},          /* overlong: C0 starts nothing */
        {"\xe0\x80\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""}, /* overlong 3-byte form */
        {"\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""}, /* a surrogate */
        {"\xed\x9f\xbf", 3, "\"\xed\x9f\xbf\""},       /* U+D7FF, just below */
        {"\xf4\x8f\xbf\xbf", 4, "\"\xf4\x8f\xbf\xbf\""}, /* U+10FFFF */
        {"\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* past U+10FFFF */
        {"\xf5\x80", 2, "\"\\ufffd\\ufffd\""},
        {"\xc3", 1, "\"\\ufffd\""},                    /* cut at the end of the string */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stc_value s = stc_value_new_str(cases[i].in, cases[i].len);
        char *j = stc_value_to_json(s), *t = stc_value_to_text(s);
        CHECK_STR(j, cases[i].json);
        CHECK(t && strlen(t) == cases[i].len + 2 && memcmp(t + 1, cases[i].in, cases[i].len) == 0);
        free(j);
        free(t);
        stc_value_release(s);
    }
}

TEST(value_str_escapes)
{
    stc_value s = stc_value_new_str("a\"b\\c\n\x01", 7);
    check_text_json(s, "\"a\\\"b\\\\c\\n\\x01\"", "\"a\\\"b\\\\c\\n\\u0001\"");
    size_t len = 0;
    CHECK_STR(stc_value_str(s, &len), "a\"b\\c\n\x01");
    CHECK_INT(len, 7);
    CHECK_INT(stc_value_len(s), 7);
    stc_value_release(s);
    stc_value e = stc_value_new_str(NULL, 0);
    check_text_json(e, "\"\"", "\"\"");
    stc_value_release(e);
}

TEST(value_compound_print_and_access)
{
    stc_value items[3] = {stc_value_int(1), stc_value_new_str("x", 1), stc_value_float(2.5)};
    stc_value tup = stc_value_new_tuple(3, items);
    stc_value l2[2] = {tup, stc_value_new_inl(stc_value_int(-3))};
    stc_value list = stc_value_new_list(2, l2);
    check_text_json(list, "[(1, \"x\", 2.5), inl (-3)]", "[[1, \"x\", 2.5], {\"inl\": -3}]");
    CHECK_INT(stc_value_len(list), 2);
    CHECK(stc_value_at(list, 0).tag == STC_T_TUPLE);
    CHECK(stc_value_at(list, 2).tag == STC_T_INVALID);
    CHECK_INT(stc_value_payload(stc_value_at(list, 1)).as.i, -3);
    stc_value nested = stc_value_new_inr(stc_value_new_inl(stc_value_unit()));
    check_text_json(nested, "inr (inl ())", "{\"inr\": {\"inl\": null}}");
    stc_value empty = stc_value_new_list(0, NULL);
    check_text_json(empty, "[]", "[]");
    stc_value_release(list);
    stc_value_release(nested);
    stc_value_release(empty);
}

static int destroyed;
static void count_destroy(void *p) { (void)p; destroyed++; }

TEST(value_refcount_and_user_destructor)
{
    destroyed = 0;
    stc_value u = stc_value_new_user(&destroyed, count_destroy);
    CHECK(stc_value_user(u) == &destroyed);
    stc_value list = stc_value_new_list(1, (stc_value[]){stc_value_retain(u)});
    stc_value_release(u);
    CHECK_INT(destroyed, 0);
    stc_value copy = stc_value_retain(list);
    stc_value_release(list);
    CHECK_INT(destroyed, 0);
    stc_value_release(copy);
    CHECK_INT(destroyed, 1);
    stc_value_release(stc_value_int(3)); /* no-op on scalars */
}

TEST(value_equality_and_compare)
{
    stc_value a = stc_value_new_tuple(2, (stc_value[]){stc_value_int(1), stc_value_new_str("ab", 2)});
    stc_value b = stc_value_new_tuple(2, (stc_value[]){stc_value_int(1), stc_value_new_str("ab", 2)});
    stc_value c = stc_value_new_tuple(2, (stc_value[]){stc_value_int(1), stc_value_new_str("ac", 2)});
    CHECK(stc_value_equal(a, b));
    CHECK(!stc_value_equal(a, c));
    CHECK(!stc_value_equal(stc_value_int(1), stc_value_float(1.0)));
    CHECK(!stc_value_equal(stc_value_float(NAN), stc_value_float(NAN)));
    stc_value s1 = stc_value_new_str("ab", 2), s2 = stc_value_new_str("abc", 3);
    CHECK(stc__val_compare(s1, s2) < 0);
    CHECK(stc__val_compare(s2, s1) > 0);
    CHECK(stc__val_compare(stc_value_int(-1), stc_value_int(2)) < 0);
    CHECK(stc__val_compare(stc_value_float(2.5), stc_value_float(2.5)) == 0);
    stc_value_release(a);
    stc_value_release(b);
    stc_value_release(c);
    stc_value_release(s1);
    stc_value_release(s2);
}

TEST(value_strerror_covers_codes)
{
    for (int code = 0; code >= STC_ELIMIT; code--) CHECK(strcmp(stc_strerror(code), "unknown error") != 0);
    CHECK_STR(stc_strerror(12345), "unknown error");
    CHECK_STR(stc_version(), STC_VERSION_STRING);
}

/* ---- Values with sharing (fuzz finding 3) ------------------------------------
 * `fun d(x) = [x, x]` nested k deep is k objects but 2^k leaves: equality
 * and printing must not walk the leaves.  A test that hangs here is the bug. */

/* d^k(leaf): [x, x] with x = d^(k-1)(leaf); consumes leaf. */
static stc_value shared_list(int k, stc_value leaf)
{
    stc_value x = leaf;
    for (int i = 0; i < k && x.tag != STC_T_INVALID; i++)
        x = stc_value_new_list(2, (stc_value[]){stc_value_retain(x), x});
    return x;
}

/* The same shape, but the last (rightmost) leaf is `last`: y_k = [x_(k-1), y_(k-1)]. */
static stc_value shared_list_last(int k, stc_value leaf, stc_value last)
{
    stc_value x = leaf, y = last;
    for (int i = 0; i < k; i++) {
        y = stc_value_new_list(2, (stc_value[]){stc_value_retain(x), y});
        x = stc_value_new_list(2, (stc_value[]){stc_value_retain(x), x});
    }
    stc_value_release(x);
    return y;
}

TEST(value_equal_shared_dag)
{
    stc_value a = shared_list(40, stc_value_int(1)), b = shared_list(40, stc_value_int(1));
    stc_value c = shared_list(40, stc_value_int(2));
    stc_value last = shared_list_last(40, stc_value_int(1), stc_value_int(2));
    stc_value same_last = shared_list_last(40, stc_value_int(1), stc_value_int(1));
    CHECK(a.tag == STC_T_LIST && last.tag == STC_T_LIST && same_last.tag == STC_T_LIST);
    CHECK(stc_value_equal(a, a));
    CHECK(stc_value_equal(a, b));
    CHECK(stc_value_equal(b, a));
    CHECK(!stc_value_equal(a, c));
    /* Equal up to the very last leaf: all of a is walked before the difference. */
    CHECK(!stc_value_equal(a, last));
    CHECK(!stc_value_equal(last, a));
    CHECK(stc_value_equal(a, same_last)); /* the same tree, shared differently */
    /* [x, x] vs [x, y], y differing from x in one leaf deep inside. */
    stc_value xx = stc_value_new_list(2, (stc_value[]){stc_value_retain(a), stc_value_retain(a)});
    stc_value xy = stc_value_new_list(2, (stc_value[]){stc_value_retain(a), stc_value_retain(last)});
    stc_value xb = stc_value_new_list(2, (stc_value[]){stc_value_retain(b), stc_value_retain(same_last)});
    CHECK(!stc_value_equal(xx, xy));
    CHECK(stc_value_equal(xx, xb));
    /* Sums and tuples around it. */
    stc_value ia = stc_value_new_inl(stc_value_new_tuple(2, (stc_value[]){stc_value_retain(a), stc_value_int(3)}));
    stc_value ib = stc_value_new_inl(stc_value_new_tuple(2, (stc_value[]){stc_value_retain(b), stc_value_int(3)}));
    stc_value ic = stc_value_new_inr(stc_value_new_tuple(2, (stc_value[]){stc_value_retain(b), stc_value_int(3)}));
    CHECK(stc_value_equal(ia, ib));
    CHECK(!stc_value_equal(ia, ic));
    stc_value vals[] = {a, b, c, last, same_last, xx, xy, xb, ia, ib, ic};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) stc_value_release(vals[i]);
}

TEST(value_equal_shared_strings)
{
    /* 65536 references to one 1 MB string against as many to an equal
     * copy: the pair of strings is compared once, not 65536 times (64 GB). */
    size_t len = (size_t)1 << 20, n = 65536;
    char *text = malloc(len);
    CHECK(text != NULL);
    if (!text) return;
    memset(text, 'x', len);
    stc_value s = stc_value_new_str(text, len), t = stc_value_new_str(text, len);
    free(text);
    stc_value *xs = malloc(n * sizeof *xs), *ys = malloc(n * sizeof *ys);
    CHECK(xs && ys);
    if (!xs || !ys) { free(xs); free(ys); return; }
    /* First a shared list big enough for the comparison to start remembering. */
    xs[0] = shared_list(13, stc_value_int(1));
    ys[0] = shared_list(13, stc_value_int(1));
    for (size_t i = 1; i < n; i++) {
        xs[i] = stc_value_new_list(1, (stc_value[]){stc_value_retain(s)});
        ys[i] = stc_value_new_list(1, (stc_value[]){stc_value_retain(t)});
    }
    stc_value xl = stc_value_new_list(n, xs), yl = stc_value_new_list(n, ys);
    CHECK(stc_value_equal(xl, yl));
    stc_value_release(xl);
    stc_value_release(yl);
    stc_value_release(s);
    stc_value_release(t);
    free(xs);
    free(ys);
}

TEST(value_equal_nan_semantics)
{
    /* A value holding a NaN is not equal to itself, shared or not, however
     * big the comparison (the memo only remembers pairs found equal). */
    stc_value nan1 = stc_value_new_list(1, (stc_value[]){stc_value_float(NAN)});
    CHECK(!stc_value_equal(nan1, nan1));
    stc_value big_nan = shared_list(40, stc_value_float(NAN));
    CHECK(!stc_value_equal(big_nan, big_nan));
    stc_value big = shared_list(40, stc_value_float(1.5));
    CHECK(stc_value_equal(big, big));
    /* The NaN after a big equal part, in one object compared with itself. */
    stc_value late = stc_value_new_tuple(3, (stc_value[]){stc_value_retain(big), stc_value_retain(big),
                                                          stc_value_retain(nan1)});
    CHECK(!stc_value_equal(late, late));
    stc_value late2 = stc_value_new_list(2, (stc_value[]){stc_value_retain(late), stc_value_retain(late)});
    CHECK(!stc_value_equal(late2, late2));
    /* == on floats: -0.0 equals 0.0. */
    stc_value pz = shared_list(20, stc_value_float(0.0)), nz = shared_list(20, stc_value_float(-0.0));
    CHECK(stc_value_equal(pz, nz));
    stc_value vals[] = {nan1, big_nan, big, late, late2, pz, nz};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) stc_value_release(vals[i]);
}

TEST(value_equal_deep_nesting)
{
    /* Nesting far beyond any C stack: the comparison is iterative. */
    stc_value a = stc_value_int(7), b = stc_value_int(7), c = stc_value_int(8);
    for (int i = 0; i < 300000; i++) {
        a = i % 2 ? stc_value_new_inl(a) : stc_value_new_list(1, (stc_value[]){a});
        b = i % 2 ? stc_value_new_inl(b) : stc_value_new_list(1, (stc_value[]){b});
        c = i % 2 ? stc_value_new_inl(c) : stc_value_new_list(1, (stc_value[]){c});
    }
    CHECK(a.tag == STC_T_INL && b.tag == STC_T_INL);
    CHECK(stc_value_equal(a, b));
    CHECK(!stc_value_equal(a, c));
    char *t = stc_value_to_text(a); /* printing stops at its depth guard */
    CHECK(t != NULL);
    free(t);
    /* Releasing recurses per level: unwrap first (not what this test is about). */
    stc_value vs[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        stc_value v = vs[k];
        while (v.tag == STC_T_INL || v.tag == STC_T_LIST) {
            stc_value in = stc_value_retain(v.tag == STC_T_INL ? stc_value_payload(v) : stc_value_at(v, 0));
            stc_value_release(v);
            v = in;
        }
    }
}

/* The text length of d^k(1): 1, then [X, X]. */
static size_t shared_list_text_len(int k) { return k == 0 ? 1 : 2 * shared_list_text_len(k - 1) + 4; }

TEST(value_print_limit)
{
    /* 2^40 leaves: both printers fail at once (errno E2BIG). */
    stc_value a = shared_list(40, stc_value_int(1));
    errno = 0;
    CHECK(stc_value_to_text(a) == NULL);
    CHECK_INT(errno, E2BIG);
    errno = 0;
    CHECK(stc_value_to_json(a) == NULL);
    CHECK_INT(errno, E2BIG);
    buf b = BUF_INIT;
    stc__buf_puts(&b, "keep");
    CHECK_INT(stc__val_print_text(&b, a, 1000), STC_ELIMIT);
    CHECK_STR(b.data, "keep"); /* b is as it was */
    /* Brief: the first bytes and "...". */
    stc__val_print_text_brief(&b, a, 20);
    CHECK_STR(b.data, "keep[[[[[[[[[[[[[[[[[[[[...");
    stc__buf_free(&b);

    /* Exactly at the limit and one byte over, with the lower bound exact
     * (ints) and not (floats, strings with escapes). */
    stc_value small = shared_list(12, stc_value_int(1));
    size_t n = shared_list_text_len(12);
    CHECK_INT(stc__val_print_text(&b, small, n), 0);
    CHECK_INT(b.len, n);
    stc__buf_free(&b);
    CHECK_INT(stc__val_print_text(&b, small, n - 1), STC_ELIMIT);
    CHECK_INT(b.len, 0);
    stc__buf_free(&b);
    stc_value leaves[] = {stc_value_float(0.1), stc_value_new_str("a\n\"\x01", 4), stc_value_new_inr(stc_value_int(-1)),
                          stc_value_unit(), stc_value_bool(false), stc_value_new_tuple(0, NULL)};
    for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++) {
        stc_value v = shared_list(11, leaves[i]);
        for (int json = 0; json < 2; json++) {
            char *full = json ? stc_value_to_json(v) : stc_value_to_text(v);
            CHECK(full != NULL);
            size_t len = full ? strlen(full) : 0;
            CHECK_INT(json ? stc__val_print_json(&b, v, len) : stc__val_print_text(&b, v, len), 0);
            CHECK(full && b.data && strcmp(b.data, full) == 0);
            stc__buf_free(&b);
            CHECK_INT(json ? stc__val_print_json(&b, v, len - 1) : stc__val_print_text(&b, v, len - 1), STC_ELIMIT);
            stc__buf_free(&b);
            stc__val_print_text_brief(&b, v, 7);
            CHECK_INT(b.len, 10);
            stc__buf_free(&b);
            free(full);
        }
        stc_value_release(v);
    }
    /* A short value is not cut. */
    stc__val_print_text_brief(&b, small, n);
    CHECK_INT(b.len, n);
    stc__buf_free(&b);
    stc_value_release(small);
    stc_value_release(a);
}

/* A random value over a pool of earlier ones (so with sharing), for the
 * printed-size bound: printing must succeed with the limit set to the
 * exact text length and fail one byte below, text and JSON alike. */
static uint64_t rnd_state = 88172645463325252u;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* One of the 3 items before i (the value grows deep, with much sharing). */
static int rnd_below(int i) { return i - 1 - (int)(rnd() % (uint64_t)(i < 3 ? i : 3)); }

TEST(value_print_limit_random)
{
    enum { POOL = 64 };
    for (int round = 0; round < 25; round++) {
        stc_value pool[POOL];
        for (int i = 0; i < POOL; i++) {
            uint64_t r = rnd();
            stc_value v;
            switch (i < 4 || r % 6 == 0 ? (r >> 8) % 5 : 5 + (r >> 8) % 4) { /* leaves, then mostly containers */
            case 0: v = stc_value_int((int64_t)(rnd() % 2000) - 1000); break;
            case 1: v = stc_value_float(rnd() % 16 == 0 ? NAN : (double)(rnd() % 1000) / 7.0 - 50); break;
            case 2: v = stc_value_new_str("q\"\t\x7f", rnd() % 5); break;
            case 3: v = stc_value_unit(); break;
            case 4: v = stc_value_bool(rnd() % 2); break;
            case 5: v = stc_value_new_inl(stc_value_retain(pool[rnd_below(i)])); break;
            case 6: v = stc_value_new_inr(stc_value_retain(pool[rnd_below(i)])); break;
            default: {
                stc_value items[4];
                size_t n = 1 + rnd() % 3; /* items */
                for (size_t k = 0; k < n; k++) items[k] = stc_value_retain(pool[rnd_below(i)]);
                v = r % 2 ? stc_value_new_list(n, items) : stc_value_new_tuple(n, items);
            }
            }
            pool[i] = v;
        }
        for (int i = POOL - 8; i < POOL; i++) {
            for (int json = 0; json < 2; json++) {
                char *full = json ? stc_value_to_json(pool[i]) : stc_value_to_text(pool[i]);
                if (!full) { /* beyond 1 GiB: possible but not with these sizes */
                    CHECK_INT(errno, E2BIG);
                    continue;
                }
                size_t len = strlen(full);
                buf b = BUF_INIT;
                CHECK_INT(json ? stc__val_print_json(&b, pool[i], len) : stc__val_print_text(&b, pool[i], len), 0);
                stc__buf_free(&b);
                if (len > 0) CHECK_INT(json ? stc__val_print_json(&b, pool[i], len - 1) : stc__val_print_text(&b, pool[i], len - 1),
                                       STC_ELIMIT);
                stc__buf_free(&b);
                CHECK(stc_value_equal(pool[i], pool[i]) == (strstr(full, "nan") == NULL));
                free(full);
            }
        }
        for (int i = 0; i < POOL; i++) stc_value_release(pool[i]);
    }
}

TEST(value_print_deep_shared)
{
    /* A shared list deeper than the printer's depth guard (10000), where
     * the parts below print as "...": the size bound must still hold. */
    stc_value a = shared_list(10010, stc_value_int(1));
    CHECK(stc_value_to_text(a) == NULL);
    buf b = BUF_INIT;
    CHECK_INT(stc__val_print_text(&b, a, 1 << 20), STC_ELIMIT);
    stc__buf_free(&b);
    /* A chain (no sharing) 20000 deep prints, with "..." at the guard. */
    stc_value c = stc_value_int(1);
    for (int i = 0; i < 20000; i++) c = stc_value_new_list(1, (stc_value[]){c});
    char *t = stc_value_to_text(c);
    CHECK(t != NULL);
    size_t len = t ? strlen(t) : 0;
    CHECK_INT(len, 2 * 10001 + 3);
    CHECK_INT(stc__val_print_text(&b, c, len), 0);
    stc__buf_free(&b);
    CHECK_INT(stc__val_print_text(&b, c, len - 1), STC_ELIMIT);
    stc__buf_free(&b);
    free(t);
    stc_value vs[2] = {a, c};
    for (int k = 0; k < 2; k++) {
        stc_value v = vs[k];
        while (v.tag == STC_T_LIST) {
            stc_value in = stc_value_retain(stc_value_at(v, 0));
            stc_value_release(v);
            v = in;
        }
    }
}

/* String ordering (stc__val_compare, eight bytes at a time) against a
 * bytewise reference: random strings over bytes where signedness and
 * prefixes matter, lengths across the 8-byte steps, pairs made to share
 * long prefixes. */
static int ref_str_compare(const unsigned char *a, size_t na, const unsigned char *b, size_t nb)
{
    for (size_t i = 0; i < na && i < nb; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return (na > nb) - (na < nb);
}

TEST(value_string_compare_matches_bytewise)
{
    static const unsigned char alpha[] = {0x00, 0x01, 'a', 'b', 0x7f, 0x80, 0xc3, 0xff};
    uint64_t rng = 0x2545f4914f6cdd1du;
    for (int c = 0; c < 20000; c++) {
        unsigned char a[40], b[40];
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        size_t na = rng % 40, nb = (rng >> 8) % 40;
        for (size_t i = 0; i < na; i++) rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, a[i] = alpha[rng % 8];
        for (size_t i = 0; i < nb; i++) rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, b[i] = alpha[rng % 8];
        if (c % 2) { /* a common prefix, then maybe one differing byte */
            size_t k = na < nb ? na : nb;
            memcpy(b, a, k);
            if (k && c % 4 == 1) b[(rng >> 16) % k] = alpha[(rng >> 24) % 8];
        }
        stc_value x = stc_value_new_str((const char *)a, na), y = stc_value_new_str((const char *)b, nb);
        int got = stc__val_compare(x, y), want = ref_str_compare(a, na, b, nb);
        if (got != want) test_fail(__FILE__, __LINE__, "compare of lengths %zu, %zu gives %d, expected %d", na, nb, got, want);
        CHECK(stc__val_compare(y, x) == -want);
        stc_value_release(x);
        stc_value_release(y);
    }
}
