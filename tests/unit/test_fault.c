/* test_fault.c - the runtime under faults: a thread failing at item k at
 * every stage position, two stages failing at once, schedule
 * perturbation, cancellation, and thousands of run cycles after success,
 * error and cancel.  The reported error must always be the reference's;
 * leaks and races are the sanitizers' to find (make asan, make tsan). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"

/* A C thread that passes its input on, folds it into an order-sensitive
 * state, and fails when the input equals its fail point:
 * init = (fail_at + 1) * 1000 + seed, so init < 1000 never fails. */
typedef struct failer { int64_t s, fail_at; } failer;

static int failer_init(void *state, const stc_value *init, void *user)
{
    (void)user;
    failer *f = state;
    f->fail_at = init->as.i / 1000 - 1;
    f->s = init->as.i % 1000;
    return 0;
}
static int failer_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_int(((const failer *)state)->s);
    return 0;
}
static int failer_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    failer *f = state;
    if (in->as.i == f->fail_at) return stc_ctx_error(cx, "failed at %lld", (long long)in->as.i);
    f->s = (f->s * 31 + in->as.i) % 1000003;
    *out = *in;
    return 0;
}

static stc_env *fault_env(void)
{
    stc_env *env = stc_env_new();
    stc_thread_def d = {.name = "failer", .fn = failer_fn, .type = "int -> int", .state_type = "int",
                        .state_size = sizeof(failer), .state_init = failer_init,
                        .state_to_value = failer_value, .access = STC_WRITES};
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    return env;
}

#define fault_compile(env, src) UNIT_COMPILE(env, src, "fault.stc")
#define fault_outcome(prog, opts) unit_outcome(prog, opts, NULL)

/* Three writing stages with a pure one between each; stage s fails at the
 * item in fail[s] (-1: never). */
static void fault_pipeline(stc_env *env, int n, const int fail[3], unsigned perturb)
{
    char src[512];
    snprintf(src, sizeof src,
             "thread t0 = failer init %d\nthread t1 = failer init %d\nthread t2 = failer init %d\n"
             "main = smap(fn x => t2(t1(t0(x) * 2 + 1) * 3 + 2) - 2, range(0, %d))\n",
             (fail[0] + 1) * 1000 + 1, (fail[1] < 0 ? 0 : 2 * fail[1] + 2) * 1000 + 2,
             (fail[2] < 0 ? 0 : 3 * (2 * fail[2] + 1) + 3) * 1000 + 3, n);
    stc_program *prog = fault_compile(env, src);
    if (!prog) return;
    trun_mode modes[9];
    int nmodes = trun_modes_parse("1,2,4", "1,3,0", perturb, 60000, modes, 9);
    CHECK_INT(nmodes, 9);
    char *ref = NULL, *got = NULL, name[64];
    int bad = trun_check_modes(prog, modes, nmodes, NULL, NULL, &ref, &got);
    if (fail[0] >= 0 || fail[1] >= 0 || fail[2] >= 0) CHECK_CONTAINS(ref, ": error: thread 't");
    else CHECK_CONTAINS(ref, "{\"result\": [");
    if (bad >= 0)
        test_fail(__FILE__, __LINE__, "fail at {%d, %d, %d} of %d, %s: %s, reference %s", fail[0], fail[1], fail[2],
                  n, trun_mode_name(&modes[bad], name, sizeof name), got ? got : "(null)", ref ? ref : "(null)");
    free(got);
    free(ref);
    stc_program_free(prog);
}

TEST(fault_one_stage_fails_at_item_k)
{
    stc_env *env = fault_env();
    const int n = 200, ks[] = {0, 1, 100, 199};
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < 4; k++) {
            int fail[3] = {-1, -1, -1};
            fail[s] = ks[k];
            fault_pipeline(env, n, fail, 0);
        }
    stc_env_free(env);
}

TEST(fault_two_stages_fail_at_once)
{
    stc_env *env = fault_env();
    /* The later stage failing at an earlier item must win, and vice versa. */
    const int cases[][3] = {{50, 40, -1}, {40, 50, -1}, {-1, 7, 6}, {9, -1, 9}, {120, -1, 3}, {0, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) fault_pipeline(env, 150, cases[i], 0);
    stc_env_free(env);
}

TEST(fault_under_schedule_perturbation)
{
    stc_env *env = fault_env();
    const int cases[][3] = {{-1, -1, -1}, {-1, 60, -1}, {70, -1, 30}};
    for (unsigned seed = 1; seed <= 3; seed++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) fault_pipeline(env, 120, cases[i], seed);
    stc_env_free(env);
}

/* ---- cancellation ---- */

typedef struct canceller {
    stc_cancel *c;
    int delay_ms;
} canceller;

static void *fault_cancel_later(void *arg)
{
    canceller *k = arg;
    struct timespec ts = {k->delay_ms / 1000, (long)(k->delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    stc_cancel_request(k->c);
    return NULL;
}

/* Runs prog with a cancel raised after delay_ms; returns stc_run's code. */
static int fault_run_cancelled(stc_program *prog, stc_run_opts o, int delay_ms, char **err)
{
    stc_cancel *c = stc_cancel_new();
    canceller k = {c, delay_ms};
    pthread_t th;
    o.cancel = c;
    if (delay_ms == 0) stc_cancel_request(c);
    else pthread_create(&th, NULL, fault_cancel_later, &k);
    trun_outcome out;
    int rc = trun_run(prog, &o, NULL, NULL, &out);
    if (delay_ms != 0) pthread_join(th, NULL);
    *err = out.error; /* taken from out */
    out.error = NULL;
    trun_outcome_free(&out);
    stc_cancel_free(c);
    return rc;
}

static const char *fault_slow =
    "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\n"
    "fun spin(n, x) = if n == 0 then x else spin(n - 1, x + 1)\n"
    "thread a = acc init 0\nthread b = acc init 0\n"
    "main = smap(fn x => b(spin(3000, a(x))), range(0, 1000000))\n";

TEST(fault_cancel_stops_a_long_run)
{
    stc_env *env = stc_env_new();
    stc_program *prog = fault_compile(env, fault_slow);
    if (prog) {
        stc_run_opts modes[] = {{.reference = true}, {.workers = 1}, {.workers = 2}, {.workers = 4, .queue_capacity = 1}};
        for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
            char *err = NULL;
            CHECK_INT(fault_run_cancelled(prog, modes[m], 30, &err), STC_ECANCELED);
            CHECK_CONTAINS(err, "run cancelled");
            free(err);
            CHECK_INT(fault_run_cancelled(prog, modes[m], 0, &err), STC_ECANCELED);
            free(err);
        }
        /* A raised flag that is reset lets the next run finish. */
        stc_cancel *c = stc_cancel_new();
        stc_cancel_request(c);
        stc_cancel_reset(c);
        stc_program *small = fault_compile(env, "fun acc(x, s) = (s * 10 + x, s * 10 + x)\nthread a = acc init 0\n"
                                                "thread b = acc init 0\nmain = smap(fn x => b(a(x)), [1, 2, 3])\n");
        stc_result *res = NULL;
        CHECK_INT(stc_run(small, &(stc_run_opts){.workers = 2, .cancel = c}, &res), 0);
        stc_result_free(res);
        stc_program_free(small);
        stc_cancel_free(c);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* ---- lifecycle ---- */

TEST(fault_lifecycle_thousands_of_runs)
{
    stc_env *env = fault_env();
    const char *ok = "thread t0 = failer init 1\nthread t1 = failer init 2\n"
                     "main = smap(fn x => t1(t0(x) + 1), range(0, 20))\n";
    const char *bad = "thread t0 = failer init 8001\nthread t1 = failer init 2\n"
                      "main = smap(fn x => t1(t0(x) + 1), range(0, 20))\n";
    int cycles = 5000, wrong = 0;
    char *ok_ref = NULL, *bad_ref = NULL;
    for (int i = 0; i < cycles && wrong < 5; i++) {
        int kind = i % 3; /* success, error, cancel */
        stc_program *prog = fault_compile(env, kind == 1 ? bad : ok);
        if (!prog) break;
        stc_run_opts o = {.workers = 1 + i % 4, .queue_capacity = 1 + i % 5};
        if (kind == 2) {
            char *err = NULL;
            int rc = fault_run_cancelled(prog, o, 0, &err);
            wrong += rc != STC_ECANCELED;
            free(err);
        } else {
            char *got = fault_outcome(prog, o);
            char **ref = kind == 0 ? &ok_ref : &bad_ref;
            if (!*ref) *ref = fault_outcome(prog, (stc_run_opts){.reference = true});
            if (!got || !*ref || strcmp(got, *ref) != 0) {
                wrong++;
                test_fail(__FILE__, __LINE__, "cycle %d: %s, reference %s", i, got ? got : "(null)",
                          *ref ? *ref : "(null)");
            }
            free(got);
        }
        stc_program_free(prog);
    }
    CHECK_INT(wrong, 0);
    CHECK_CONTAINS(bad_ref, "failed at 7 (in thread 't0', smap item 7)");
    free(ok_ref);
    free(bad_ref);
    stc_env_free(env);
}

/* An error at the first items, many workers, perturbed: the stop must wake
 * every parked worker (a missed wake-up once left stc__sched_run waiting
 * forever; the watchdog turns such a hang into an abort with a dump). */
TEST(fault_early_error_wakes_every_worker)
{
    stc_env *env = fault_env();
    stc_program *prog = fault_compile(env, "thread t0 = failer init 1001\nthread t1 = failer init 2\n"
                                           "main = smap(fn x => t1(t0(x) + 1), range(0, 50))\n");
    int wrong = 0;
    for (int i = 0; prog && i < 300 && wrong < 3; i++) {
        trun_mode m = {.workers = 8, .queue_capacity = 1, .perturb_seed = 1u + (unsigned)i, .watchdog_ms = 30000};
        char *got = unit_outcome_aided(prog, trun_opts(&m), &m, NULL);
        if (!got || !strstr(got, "failed at 0 (in thread 't0', smap item 0)")) {
            wrong++;
            test_fail(__FILE__, __LINE__, "run %d: %s", i, got ? got : "(null)");
        }
        free(got);
    }
    stc_program_free(prog);
    stc_env_free(env);
}
