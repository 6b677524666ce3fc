/* fuzz_run.c - libFuzzer target: compile the input and, if it compiles,
 * run it under the reference evaluator and under the parallel runtime
 * (2 workers, queue capacity 1: the finest interleaving).  Invariant: both
 * runs have the same outcome, i.e. the same return code and the same
 * stc_result_to_json line (success) or stc_result_error_format text (runtime
 * error).  A difference traps.  Runs that hit STC_ENOMEM are skipped.
 *
 * STCLang has no step limit, so two guards keep every input short:
 *   - a filter (a heuristic, see fuzz_run_wanted): at most FUZZ_RUN_MAX_SIZE
 *     bytes in all and FUZZ_RUN_MAX_CODE bytes outside comments (so a
 *     seed's explanatory comments do not count), and no digit sequence
 *     longer than FUZZ_RUN_MAX_DIGITS outside comments, string literals
 *     included (numbers <= 999, even through parse_int: bounds range(a, b),
 *     sin_iter(n, x) and counting recursion);
 *   - a budget: a guard thread raises an stc_cancel after FUZZ_RUN_BUDGET_MS
 *     of each run; a cancelled run (STC_ECANCELED) skips the comparison.
 * Cancellation is checked at smap items and function calls only, so work
 * outside those is not covered: run libFuzzer with -timeout to catch it.
 * (Printing and comparing values with exponential sharing, finding 3, are
 * bounded now: a result whose JSON would pass 1 GiB makes
 * stc_result_to_json fail with errno E2BIG, and the outcome says so.)
 * With the environment variable FUZZ_RUN_STATS set, counts are printed at
 * exit (inputs, filtered, compiled, run, cancelled).
 *
 * Modes and runs go through tests/support/run_modes.h.
 *
 * Built with replay.c into fuzz_run_replay (any compiler), and with
 * clang -fsanitize=fuzzer into fuzz_run (-DSTC_FUZZ=ON). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run_modes.h"
#include "stc.h"

#define FUZZ_FILE "fuzz.stc"
#define FUZZ_RUN_MAX_SIZE 4096
#define FUZZ_RUN_MAX_CODE 1024
#define FUZZ_RUN_MAX_DIGITS 3
#define FUZZ_RUN_BUDGET_MS 250

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Does the input pass the run filter described above? */
static bool fuzz_run_wanted(const uint8_t *s, size_t n)
{
    if (n > FUZZ_RUN_MAX_SIZE) return false;
    size_t code = 0, digits = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-' && i + 1 < n && s[i + 1] == '-') { /* comment */
            while (i < n && s[i] != '\n') i++;
            digits = 0;
            continue;
        }
        code++;
        if (s[i] == '"') { /* a string literal: "--" in it is no comment */
            for (i++; i < n && s[i] != '"' && s[i] != '\n'; i++, code++) {
                if (s[i] == '\\' && i + 1 < n && s[i + 1] != '\n') i++, code++;
                digits = s[i] >= '0' && s[i] <= '9' ? digits + 1 : 0; /* parse_int("...") */
                if (digits > FUZZ_RUN_MAX_DIGITS) return false;
            }
            digits = 0;
            continue;
        }
        digits = s[i] >= '0' && s[i] <= '9' ? digits + 1 : 0;
        if (digits > FUZZ_RUN_MAX_DIGITS) return false;
    }
    return code <= FUZZ_RUN_MAX_CODE;
}

static long fuzz_inputs, fuzz_wanted, fuzz_compiled, fuzz_ran, fuzz_cancelled;

/* The budget guard: cancels the run unless it is done within ms. */
typedef struct fuzz_guard {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    stc_cancel *cancel;
    int ms;
} fuzz_guard;

static void *fuzz_guard_main(void *arg)
{
    fuzz_guard *g = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += g->ms / 1000;
    until.tv_nsec += (long)(g->ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&g->mu);
    int rc = 0;
    while (!g->done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&g->cv, &g->mu, &until);
    if (!g->done) stc_cancel_request(g->cancel);
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* trun_run under the budget guard (without it if no thread can be made). */
static int fuzz_guarded_run(stc_program *prog, stc_run_opts *opts, trun_outcome *o)
{
    static stc_cancel *cancel;
    if (!cancel) cancel = stc_cancel_new(); /* kept for the whole process */
    if (!cancel) return trun_run(prog, opts, NULL, NULL, o);
    stc_cancel_reset(cancel);
    opts->cancel = cancel;
    fuzz_guard g = {.done = false, .cancel = cancel, .ms = FUZZ_RUN_BUDGET_MS};
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    pthread_t th;
    bool guarded = pthread_create(&th, NULL, fuzz_guard_main, &g) == 0;
    int rc = trun_run(prog, opts, NULL, NULL, o);
    if (guarded) {
        pthread_mutex_lock(&g.mu);
        g.done = true;
        pthread_cond_signal(&g.cv);
        pthread_mutex_unlock(&g.mu);
        pthread_join(th, NULL);
    }
    pthread_cond_destroy(&g.cv);
    pthread_mutex_destroy(&g.mu);
    return rc;
}

/* The outcome of one run as a malloc'd string "RC TEXT", TEXT being the
 * JSON line or the formatted error; NULL to skip the input (out of memory,
 * cancelled).  Traps when stc_run breaks its contract (no result for 0 or
 * STC_ERUNTIME, no JSON after a success, no message after a failure). */
static char *fuzz_run_outcome(stc_program *prog, stc_run_opts *opts)
{
    trun_outcome o;
    int rc = fuzz_guarded_run(prog, opts, &o);
    if (rc == STC_ECANCELED || o.code == STC_ECANCELED) fuzz_cancelled++;
    if (rc == STC_ENOMEM || o.code == STC_ENOMEM || rc == STC_ECANCELED || o.code == STC_ECANCELED) {
        trun_outcome_free(&o);
        return NULL;
    }
    char *text = NULL;
    if (rc == 0 || rc == STC_ERUNTIME) {
        if (!o.has_result) {
            fprintf(stderr, "fuzz_run: stc_run returned %d without a result\n", rc);
            __builtin_trap();
        }
        text = rc == 0 ? o.json : o.error; /* taken from o */
        if (rc == 0) o.json = NULL;
        else o.error = NULL;
        if (!text && rc == 0 && o.json_errno == E2BIG) text = strdup("(result too large to print)");
        if (!text || (rc == 0) == (o.message != NULL)) {
            fprintf(stderr, "fuzz_run: stc_run returned %d, output %s, error message %s\n", rc,
                    text ? text : "(none)", o.message ? o.message : "(none)");
            __builtin_trap();
        }
    }
    size_t len = (text ? strlen(text) : 0) + 32;
    char *out = malloc(len);
    if (out) snprintf(out, len, "%d %s", rc, text ? text : stc_strerror(rc));
    free(text);
    trun_outcome_free(&o);
    return out;
}

static void fuzz_print_stats(void)
{
    fprintf(stderr, "fuzz_run: %ld inputs, %ld passed the filter, %ld compiled, "
                    "%ld compared, %ld runs cancelled\n",
            fuzz_inputs, fuzz_wanted, fuzz_compiled, fuzz_ran, fuzz_cancelled);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_inputs++ == 0 && getenv("FUZZ_RUN_STATS")) atexit(fuzz_print_stats);
    if (!fuzz_run_wanted(data, size)) return 0;
    fuzz_wanted++;
    stc_env *env = stc_env_new();
    if (!env) return 0;
    stc_program *prog = NULL;
    int rc = stc_compile(env, (const char *)data, size, FUZZ_FILE, &prog, NULL);
    if (rc == 0) {
        fuzz_compiled++;
        stc_run_opts ref = trun_opts(&(trun_mode){.reference = true});
        stc_run_opts par = trun_opts(&(trun_mode){.workers = 2, .queue_capacity = 1});
        char *a = fuzz_run_outcome(prog, &ref);
        char *b = a ? fuzz_run_outcome(prog, &par) : NULL;
        fuzz_ran += a && b;
        if (a && b && strcmp(a, b) != 0) {
            fprintf(stderr, "fuzz_run: the runtime and the reference differ\n"
                            "  reference: %s\n  runtime:   %s\n", a, b);
            __builtin_trap();
        }
        free(a);
        free(b);
    }
    stc_program_free(prog);
    stc_env_free(env);
    return 0;
}
