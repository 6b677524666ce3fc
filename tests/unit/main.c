/* main.c - runs the registered unit tests.
 *
 *   unit_tests              every test, each in a child process (a crash
 *                           names the test and the others still run)
 *   unit_tests NAME...      the named tests, in this process (NAME is the
 *                           test's name or SUITE.NAME; ctest runs one each)
 *   unit_tests --filter S   the tests whose name contains S, in children
 *   unit_tests --list       SUITE.NAME of every test, one a line, sorted
 *
 * SUITE is the file a test is in, without "test_" and ".c" (test_lexer.c:
 * lexer). CMakeLists.txt makes one ctest per line of --list (unit.SUITE.NAME)
 * through tests/unit/ctest_unit.cmake. Two tests with one name are an error:
 * running by name could not tell them apart. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

typedef struct test_case {
    const char *name, *file;
    char suite[64];
    test_fn fn;
} test_case;

static test_case test_cases[4096];
static int test_ncases, test_overflow;
static int test_current_failed;

/* "tests/unit/test_lexer.c" -> "lexer" */
static void test_suite_of(const char *file, char *out, size_t cap)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    if (!strncmp(base, "test_", 5)) base += 5;
    size_t n = strcspn(base, ".");
    if (n >= cap) n = cap - 1;
    memcpy(out, base, n);
    out[n] = '\0';
}

void test_register(const char *name, test_fn fn, const char *file)
{
    if (test_ncases == (int)(sizeof test_cases / sizeof test_cases[0])) {
        test_overflow = 1;
        return;
    }
    test_case *t = &test_cases[test_ncases++];
    *t = (test_case){.name = name, .file = file, .fn = fn};
    test_suite_of(file, t->suite, sizeof t->suite);
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
    int c = strcmp(x->suite, y->suite);
    return c ? c : strcmp(x->name, y->name);
}

/* Does arg name t: "NAME" or "SUITE.NAME"? */
static int test_named(const test_case *t, const char *arg)
{
    size_t s = strlen(t->suite);
    if (!strncmp(arg, t->suite, s) && arg[s] == '.' && !strcmp(arg + s + 1, t->name)) return 1;
    return !strcmp(arg, t->name);
}

/* Runs t here; 0 when it passed. */
static int test_run_here(const test_case *t)
{
    test_current_failed = 0;
    t->fn();
    if (test_current_failed) fprintf(stderr, "FAIL %s.%s\n", t->suite, t->name);
    return test_current_failed;
}

/* Runs t in a child process, so that a crash fails t alone and says so. */
static int test_run_forked(const test_case *t)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return test_run_here(t); /* no fork: run it here after all */
    if (pid == 0) exit(test_run_here(t)); /* exit, not _exit: LeakSanitizer checks at exit */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    if (WIFEXITED(status)) return WEXITSTATUS(status) != 0;
    fprintf(stderr, "FAIL %s.%s: killed by signal %d (%s)\n", t->suite, t->name, WTERMSIG(status),
            strsignal(WTERMSIG(status)));
    return 1;
}

int main(int argc, char **argv)
{
    if (test_overflow) {
        fprintf(stderr, "unit_tests: more than %d tests: raise the limit in main.c\n", test_ncases);
        return 2;
    }
    qsort(test_cases, (size_t)test_ncases, sizeof test_cases[0], test_by_name);
    for (int i = 1; i < test_ncases; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(test_cases[i].name, test_cases[j].name)) {
                fprintf(stderr, "unit_tests: two tests named %s (%s, %s)\n", test_cases[i].name,
                        test_cases[j].file, test_cases[i].file);
                return 2;
            }

    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < test_ncases; i++) printf("%s.%s\n", test_cases[i].suite, test_cases[i].name);
        return 0;
    }
    const char *filter = NULL;
    int named = argc > 1;
    if (argc == 3 && !strcmp(argv[1], "--filter")) {
        filter = argv[2];
        named = 0;
    }
    for (int a = 1; named && a < argc; a++) {
        int found = 0;
        for (int i = 0; i < test_ncases && !found; i++) found = test_named(&test_cases[i], argv[a]);
        if (!found) {
            fprintf(stderr, "unit_tests: no test named %s (unit_tests --list names them all)\n", argv[a]);
            return 2;
        }
    }

    int passed = 0, failed = 0;
    for (int i = 0; i < test_ncases; i++) {
        const test_case *t = &test_cases[i];
        int wanted = !named && (!filter || strstr(t->name, filter));
        for (int a = 1; named && a < argc && !wanted; a++) wanted = test_named(t, argv[a]);
        if (!wanted) continue;
        if (named ? test_run_here(t) : test_run_forked(t)) failed++;
        else passed++;
    }
    printf("unit: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : (passed ? 0 : 1);
}
