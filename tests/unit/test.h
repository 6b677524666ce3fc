/* test.h - the unit-test framework: nothing but the C compiler.
 *
 *   TEST(value_int_roundtrip) { CHECK(x == 1); CHECK_STR(s, "[1, 2]"); }
 *
 * Tests register themselves (a constructor per test) and tests/unit/main.c
 * runs them: all (each in a child process), one by name (`unit_tests NAME`,
 * as each ctest unit.SUITE.NAME does), or `--list` them. Test names are
 * unique across files. A failed CHECK records the failure and the test goes
 * on; the runner ends with the line "unit: N passed, N failed". */
#ifndef STC_TEST_H
#define STC_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn, const char *file);
void test_fail(const char *file, int line, const char *fmt, ...);

#define TEST(name)                                                                        \
    static void name(void);                                                               \
    __attribute__((constructor)) static void name##_register(void) { test_register(#name, name, __FILE__); } \
    static void name(void)

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                   \
    } while (0)

#define CHECK_INT(a, b)                                                                   \
    do {                                                                                  \
        long long a_ = (long long)(a), b_ = (long long)(b);                               \
        if (a_ != b_) test_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", #a, a_, b_); \
    } while (0)

/* Compares two C strings; NULL is reported, not dereferenced. */
#define CHECK_STR(a, b)                                                                   \
    do {                                                                                  \
        const char *a_ = (a), *b_ = (b);                                                  \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                            \
            test_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a,            \
                      a_ ? a_ : "(null)", b_ ? b_ : "(null)");                            \
    } while (0)

/* a contains b */
#define CHECK_CONTAINS(a, b)                                                              \
    do {                                                                                  \
        const char *a_ = (a), *b_ = (b);                                                  \
        if (!a_ || !b_ || !strstr(a_, b_))                                                \
            test_fail(__FILE__, __LINE__, "%s == \"%s\", expected to contain \"%s\"", #a, \
                      a_ ? a_ : "(null)", b_ ? b_ : "(null)");                            \
    } while (0)

#endif
