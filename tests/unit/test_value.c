/* test_value.c - values: construction, ownership, equality, printing. */
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
    CHECK(val_compare(s1, s2) < 0);
    CHECK(val_compare(s2, s1) > 0);
    CHECK(val_compare(stc_value_int(-1), stc_value_int(2)) < 0);
    CHECK(val_compare(stc_value_float(2.5), stc_value_float(2.5)) == 0);
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
