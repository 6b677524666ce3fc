/* test_wire.c - values as bytes (src/value/wire.c): round trips of every
 * kind, sharing kept, and malformed input rejected, never crashing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "stc.h"
#include "value/value.h"
#include "value/wire.h"

/* Closures' code in these tests: three fake functions, numbered by their
 * index, the middle one capturing 2 values and the others 1. */
static const char fake_code[3] = {0};
static int64_t fake_id(void *ud, const void *code)
{
    (void)ud;
    const char *c = code;
    return c >= fake_code && c < fake_code + 3 ? (int64_t)(c - fake_code) : -1;
}
static const void *fake_of(void *ud, uint64_t id, size_t ncaps)
{
    (void)ud;
    return id < 3 && ncaps == (id == 1 ? 2u : 1u) ? fake_code + id : NULL;
}
static const wire_funcs fake_funcs = {NULL, fake_id, fake_of};

static stc_value s_(const char *s) { return stc_value_new_str(s, strlen(s)); }
static stc_value list2(stc_value a, stc_value b) { return stc_value_new_list(2, (stc_value[]){a, b}); }
static stc_value tup2(stc_value a, stc_value b) { return stc_value_new_tuple(2, (stc_value[]){a, b}); }

/* Encodes v, decodes it, and checks the bytes were all taken and the value
 * prints the same (equal, for values without closures).  Returns the
 * decoded value (the caller's) and the encoded size in *size. */
static stc_value round_trip(stc_value v, size_t *size)
{
    buf b = BUF_INIT;
    CHECK_INT(stc__val_wire_encode(&b, v, &fake_funcs), 0);
    stc_value back;
    size_t used = 0;
    CHECK_INT(stc__val_wire_decode(b.data, b.len, &used, &back, &fake_funcs), 0);
    CHECK_INT(used, b.len);
    if (size) *size = b.len;
    stc__buf_free(&b);
    char *t1 = stc_value_to_text(v), *t2 = stc_value_to_text(back);
    if (t1 || t2) CHECK_STR(t2, t1); /* both NULL: too large to print */
    free(t1);
    free(t2);
    return back;
}

static void check_round_trip(stc_value v)
{
    stc_value back = round_trip(v, NULL);
    CHECK(stc_value_equal(v, back));
    stc_value_release(back);
    stc_value_release(v);
}

TEST(wire_scalars_round_trip)
{
    int64_t ints[] = {0, 1, -1, 63, -64, 64, 300, -300, INT64_MAX, INT64_MIN, 1LL << 40};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) check_round_trip(stc_value_int(ints[i]));
    double fl[] = {0.0, -0.0, 1.5, -2.25e300, 5e-324, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
        stc_value back = round_trip(stc_value_float(fl[i]), NULL);
        CHECK(memcmp(&back.as.f, &fl[i], 8) == 0); /* bit for bit, -0.0 too */
    }
    stc_value nan = round_trip(stc_value_float(NAN), NULL);
    CHECK(isnan(nan.as.f));
    check_round_trip(stc_value_unit());
    check_round_trip(stc_value_bool(true));
    check_round_trip(stc_value_bool(false));
    /* small ints are short: kind byte + 1 varint byte */
    size_t n;
    round_trip(stc_value_int(-5), &n);
    CHECK_INT(n, 2);
}

TEST(wire_compound_round_trip)
{
    check_round_trip(s_(""));
    check_round_trip(stc_value_new_str("a\0b\xc3\xa9", 5)); /* NUL and UTF-8 inside */
    check_round_trip(stc_value_new_list(0, NULL));
    check_round_trip(stc_value_new_tuple(0, NULL));
    check_round_trip(list2(stc_value_int(1), stc_value_int(2)));
    check_round_trip(tup2(s_("x"), stc_value_new_inl(list2(stc_value_float(0.5), stc_value_new_inr(stc_value_unit())))));
    /* a map with tuple keys, and a map inside a map */
    stc_value m = stc_map_new();
    m = stc_map_put(m, tup2(stc_value_int(2), s_("b")), stc_value_int(20));
    m = stc_map_put(m, tup2(stc_value_int(1), s_("a")), stc_value_int(10));
    stc_value outer = stc_map_put(stc_map_new(), s_("inner"), m);
    outer = stc_map_put(outer, s_("empty"), stc_map_new());
    CHECK(outer.tag == STC_T_MAP);
    check_round_trip(outer);
}

TEST(wire_closures_round_trip)
{
    stc_value f = stc__val_func_alloc(fake_code + 1, 2);
    val_as_func(f)->caps[0] = s_("captured");
    val_as_func(f)->caps[1] = stc_value_int(7);
    stc_value v = list2(f, stc_value_int(3));
    stc_value back = round_trip(v, NULL);
    stc_value g = stc_value_at(back, 0);
    CHECK(g.tag == STC_T_FUNC);
    CHECK(val_as_func(g)->code == fake_code + 1);
    CHECK_INT(val_as_func(g)->ncaps, 2);
    CHECK(stc_value_equal(val_as_func(g)->caps[0], val_as_func(f)->caps[0]));
    CHECK_INT(val_as_func(g)->caps[1].as.i, 7);
    stc_value_release(back);
    /* code that cannot travel, or no table at all */
    stc_value h = stc__val_func_alloc(&fake_id, 0);
    buf b = BUF_INIT;
    CHECK_INT(stc__val_wire_encode(&b, h, &fake_funcs), STC_EINVAL);
    CHECK_INT(stc__val_wire_encode(&b, v, NULL), STC_EINVAL);
    stc__buf_free(&b);
    stc_value_release(h);
    stc_value_release(v);
}

TEST(wire_user_and_invalid_values_do_not_travel)
{
    buf b = BUF_INIT;
    stc_value u = stc_value_new_user(NULL, NULL);
    stc_value l = list2(stc_value_int(1), stc_value_retain(u));
    CHECK_INT(stc__val_wire_encode(&b, u, &fake_funcs), STC_EINVAL);
    CHECK_INT(stc__val_wire_encode(&b, l, &fake_funcs), STC_EINVAL);
    CHECK_INT(stc__val_wire_encode(&b, (stc_value){.tag = STC_T_INVALID}, &fake_funcs), STC_EINVAL);
    stc__buf_free(&b);
    stc_value_release(l);
    stc_value_release(u);
}

TEST(wire_shared_substructure_written_once)
{
    /* [x, x] nested 40 deep: 2^40 leaves, 40 objects */
    stc_value v = s_("leaf");
    for (int i = 0; i < 40; i++) v = list2(v, stc_value_retain(v));
    size_t n;
    stc_value top1 = stc_value_new_list(1, (stc_value[]){stc_value_retain(v)});
    stc_value back = round_trip(top1, &n);
    stc_value_release(top1);
    CHECK(n < 400);
    CHECK(stc_value_equal(stc_value_at(back, 0), v));
    /* decoded as shared again */
    stc_value top = stc_value_at(back, 0);
    CHECK(stc_value_at(top, 0).as.obj == stc_value_at(top, 1).as.obj);
    stc_value_release(back);
    stc_value_release(v);
}

TEST(wire_big_values)
{
    size_t n = 100000;
    stc_value *items = malloc(n * sizeof *items);
    for (size_t i = 0; i < n; i++) items[i] = stc_value_int((int64_t)i * 7919 - 50000);
    check_round_trip(stc_value_new_list(n, items));
    free(items);
    size_t len = 1 << 20;
    char *s = malloc(len);
    for (size_t i = 0; i < len; i++) s[i] = (char)(i * 31);
    check_round_trip(stc_value_new_str(s, len));
    free(s);
    stc_value m = stc_map_new();
    for (int i = 0; i < 5000; i++) m = stc_map_put(m, stc_value_int((i * 37) % 5000), s_("v"));
    CHECK_INT(stc_value_len(m), 5000);
    check_round_trip(m);
}

TEST(wire_depth_limit)
{
    stc_value v = stc_value_int(1);
    for (int i = 0; i < WIRE_MAX_DEPTH + 10; i++) v = stc_value_new_inl(v);
    buf b = BUF_INIT;
    CHECK_INT(stc__val_wire_encode(&b, v, &fake_funcs), STC_ELIMIT);
    stc__buf_free(&b);
    stc_value_release(v);
    /* a buffer nesting deeper than the limit */
    size_t n = WIRE_MAX_DEPTH + 10;
    unsigned char *p = malloc(n + 2);
    memset(p, WIRE_INL, n);
    p[n] = WIRE_UNIT;
    stc_value out;
    CHECK_INT(stc__val_wire_decode(p, n + 1, NULL, &out, &fake_funcs), STC_ELIMIT);
    CHECK(out.tag == STC_T_INVALID);
    free(p);
}

static int decode_bytes(const unsigned char *p, size_t n)
{
    stc_value out;
    size_t used;
    int rc = stc__val_wire_decode(p, n, &used, &out, &fake_funcs);
    if (rc == 0) {
        CHECK(used <= n);
        char *t = stc_value_to_text(out); /* a decoded value is a whole value */
        free(t);
        stc_value_release(out);
    } else {
        CHECK(out.tag == STC_T_INVALID);
    }
    return rc;
}

TEST(wire_malformed_input_rejected)
{
    /* hand-made: each is STC_EINVAL */
    static const unsigned char bad[][8] = {
        {0},                                   /* kind 0 */
        {WIRE_REF + 1},                         /* unknown kind */
        {WIRE_INT | WIRE_KEEP, 1},              /* a kept scalar */
        {WIRE_REF, 0},                          /* reference to nothing */
        {WIRE_LIST | WIRE_KEEP, 1, WIRE_REF, 0},/* reference to an unfinished object */
        {WIRE_STR, 5, 'a'},                     /* string past the end */
        {WIRE_LIST, 0xff, 0xff, 0xff, 0xff, 0x0f}, /* huge count */
        {WIRE_MAP, 2, WIRE_INT, 2, WIRE_UNIT, WIRE_INT, 2, WIRE_UNIT}, /* key twice */
        {WIRE_MAP, 1, WIRE_FUNC, 0, 1, WIRE_UNIT, WIRE_UNIT},          /* function key */
        {WIRE_FUNC, 9, 0},                      /* unknown function */
        {WIRE_FUNC, 0, 2, WIRE_UNIT, WIRE_UNIT}, /* wrong capture count */
        {WIRE_FLOAT, 1, 2, 3},                  /* short float */
        {WIRE_INT, 0x80, 0x80},                 /* truncated varint */
    };
    static const size_t lens[] = {1, 1, 2, 2, 4, 3, 6, 8, 7, 3, 5, 4, 3};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        if (decode_bytes(bad[i], lens[i]) != STC_EINVAL) test_fail(__FILE__, __LINE__, "case %zu decoded", i);
    }
    unsigned char over[11];
    memset(over, 0xff, 10);
    over[10] = 0x01;
    uint64_t x;
    size_t used;
    CHECK_INT(stc__val_wire_get_uvarint(over, 11, &used, &x), STC_EINVAL); /* over 64 bits */
    CHECK_INT(decode_bytes(NULL, 0), STC_EINVAL);
}

/* Every strict prefix of an encoding is rejected; random flips of its bytes
 * and random buffers never crash (ASan/UBSan builds check the rest). */
TEST(wire_truncated_and_corrupt_input)
{
    stc_value m = stc_map_put(stc_map_new(), s_("k"), tup2(stc_value_float(1.5), stc_value_int(-9)));
    stc_value f = stc__val_func_alloc(fake_code, 1);
    val_as_func(f)->caps[0] = s_("cap");
    stc_value shared = s_("shared");
    stc_value v = stc_value_new_list(5, (stc_value[]){m, f, stc_value_new_inr(stc_value_retain(shared)),
                                                        stc_value_retain(shared), stc_value_int(123456789)});
    stc_value_release(shared);
    buf b = BUF_INIT;
    CHECK_INT(stc__val_wire_encode(&b, v, &fake_funcs), 0);
    unsigned char *p = (unsigned char *)b.data;
    for (size_t n = 0; n < b.len; n++) CHECK_INT(decode_bytes(p, n), STC_EINVAL);
    CHECK_INT(decode_bytes(p, b.len), 0);
    unsigned seed = 12345;
    unsigned char *q = malloc(b.len);
    for (int round = 0; round < 20000; round++) {
        memcpy(q, p, b.len);
        int flips = 1 + (int)(rand_r(&seed) % 3);
        for (int k = 0; k < flips; k++) q[rand_r(&seed) % b.len] = (unsigned char)rand_r(&seed);
        decode_bytes(q, b.len);
    }
    unsigned char r[64];
    for (int round = 0; round < 20000; round++) {
        size_t n = rand_r(&seed) % sizeof r;
        for (size_t k = 0; k < n; k++) r[k] = (unsigned char)(rand_r(&seed) % (WIRE_REF + 3));
        decode_bytes(r, n);
    }
    free(q);
    stc__buf_free(&b);
    stc_value_release(v);
}
