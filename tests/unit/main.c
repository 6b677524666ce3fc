/* main.c - runs the registered unit tests: `unit_tests [FILTER]`. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef struct test_case {
    const char *name, *file;
    test_fn fn;
} test_case;

static test_case test_cases[4096];
static int test_ncases;
static int test_current_failed;

void test_register(const char *name, test_fn fn, const char *file)
{
    if (test_ncases < (int)(sizeof test_cases / sizeof test_cases[0]))
        test_cases[test_ncases++] = (test_case){name, file, fn};
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    test_current_failed = 1;
}

static int test_by_name(const void *a, const void *b)
{
    const test_case *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0;
    qsort(test_cases, (size_t)test_ncases, sizeof test_cases[0], test_by_name);
    for (int i = 0; i < test_ncases; i++) {
        if (filter && !strstr(test_cases[i].name, filter)) continue;
        test_current_failed = 0;
        test_cases[i].fn();
        if (test_current_failed) {
            fprintf(stderr, "FAIL %s\n", test_cases[i].name);
            failed++;
        } else {
            passed++;
        }
    }
    printf("unit: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : (passed ? 0 : 1);
}
