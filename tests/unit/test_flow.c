/* test_flow.c - the parallel runtime through the public API: bounded items
 * in flight, C threads of every access mode, errors in the middle of a
 * pipeline, reruns after an error.  Every run is compared with the
 * reference evaluator's run of the same program. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"

#define flow_compile(env, src) UNIT_COMPILE(env, src, "flow.stc")

/* Runs prog under the reference and under the runtime at several worker
 * counts and capacities; every outcome must be the reference's, which
 * starts with expect_prefix (NULL: anything). */
static void flow_check_modes(stc_program *prog, const char *expect_prefix)
{
    char *ref = CHECK_MODES(prog, "1,2,3,8", "1,0", NULL, NULL);
    if (expect_prefix) CHECK(ref && strncmp(ref, expect_prefix, strlen(expect_prefix)) == 0);
    free(ref);
}

TEST(flow_in_flight_bounded_on_a_million_items)
{
    stc_env *env = stc_env_new();
    stc_program *prog = flow_compile(env,
        "fun acc(x, s) = (s * 31 + x, (s * 31 + x) % 1000000007)\n"
        "thread a = acc init 0\n"
        "thread b = acc init 1\n"
        "main = len(smap(fn x => b(a(x) % 1000) + 1, range(0, 1000000)))\n");
    if (prog) {
        stc_run_stats st;
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 2, .queue_capacity = 8, .max_batches = 4}, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_parallel, 1);
        CHECK_INT(st.items, 1000000);
        CHECK_INT(st.max_in_flight, 32);
        CHECK(st.peak_in_flight >= 1 && st.peak_in_flight <= 32);
        free(ref);
        free(got);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(flow_stats_reference_and_declined)
{
    stc_env *env = stc_env_new();
    /* One thread alone is one serial stage: left to the evaluator. */
    stc_program *prog = flow_compile(env, "fun acc(x, s) = (s * 10 + x, s * 10 + x)\n"
                                          "thread a = acc init 0\nmain = smap(a, [1, 2, 3])\n");
    if (prog) {
        stc_run_stats st;
        char *s = unit_outcome(prog, (stc_run_opts){.reference = true}, &st);
        CHECK_INT(st.workers, 0);
        CHECK_INT(st.smaps_parallel + st.smaps_sequential, 0);
        free(s);
        s = unit_outcome(prog, (stc_run_opts){.workers = 2}, &st);
        CHECK_STR(s, "{\"result\": [1, 12, 123], \"states\": {\"a\": 123}}");
        CHECK_INT(st.workers, 2);
        CHECK_INT(st.smaps_sequential, 1);
        CHECK_INT(st.smaps_parallel, 0);
        free(s);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* ---- C threads of each access mode ---- */

typedef struct cstate { int64_t v; } cstate;
typedef struct counters { atomic_int output_calls, state_calls, full_calls; } counters;

static int c_init(void *state, const stc_value *init, void *user)
{
    (void)user;
    ((cstate *)state)->v = init ? init->as.i : 7;
    return 0;
}
static int c_to_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_int(((const cstate *)state)->v);
    return 0;
}
/* writes: order-sensitive; fails on input 666 */
static int c_writer(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    cstate *s = state;
    if (in->as.i == 666) return stc_ctx_error(cx, "input %d refused", 666);
    s->v = (s->v * 31 + in->as.i) % 1000003;
    *out = stc_value_int(s->v);
    return 0;
}
/* reads: output uses the state, which never changes */
static int c_reader(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)cx;
    *out = stc_value_int(in->as.i * ((const cstate *)state)->v);
    return 0;
}
/* pure: ignores the state */
static int c_pure(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state;
    (void)cx;
    *out = stc_value_int(in->as.i * in->as.i + 1);
    return 0;
}
/* g x h: output from the input alone, the state counts calls (* 3 + 1) */
static int c_gh(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    counters *k = stc_ctx_user(cx);
    atomic_fetch_add(&k->full_calls, 1);
    ((cstate *)state)->v = (((cstate *)state)->v * 3 + 1) % 1000003;
    *out = stc_value_int(in->as.i + 1000);
    return 0;
}
static int c_gh_out(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    counters *k = stc_ctx_user(cx);
    atomic_fetch_add(&k->output_calls, 1);
    if (state != NULL) return stc_ctx_error(cx, "output_fn was given a state");
    *out = stc_value_int(in->as.i + 1000);
    return 0;
}
static int c_gh_state(void *state, stc_ctx *cx)
{
    counters *k = stc_ctx_user(cx);
    atomic_fetch_add(&k->state_calls, 1);
    ((cstate *)state)->v = (((cstate *)state)->v * 3 + 1) % 1000003;
    return 0;
}

static stc_env *flow_c_env(counters *k)
{
    stc_env *env = stc_env_new();
    stc_thread_def base = {.type = "int -> int", .state_type = "int", .state_size = sizeof(cstate),
                           .state_init = c_init, .state_to_value = c_to_value, .user = k};
    stc_thread_def d = base;
    d.name = "cwrite", d.fn = c_writer, d.access = STC_WRITES;
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    d = base;
    d.name = "cread", d.fn = c_reader, d.access = STC_READS;
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    d = base;
    d.name = "cpure", d.fn = c_pure, d.access = STC_PURE;
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    d = base;
    d.name = "cgh", d.fn = c_gh, d.access = STC_INDEPENDENT, d.output_fn = c_gh_out, d.state_fn = c_gh_state;
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    d.name = "cbad";
    d.access = STC_WRITES; /* halves only for STC_INDEPENDENT */
    CHECK_INT(stc_env_add_thread(env, &d), STC_EINVAL);
    d.access = STC_INDEPENDENT;
    d.state_fn = NULL; /* both halves or none */
    CHECK_INT(stc_env_add_thread(env, &d), STC_EINVAL);
    return env;
}

TEST(flow_c_threads_every_access_mode)
{
    counters k = {0};
    stc_env *env = flow_c_env(&k);
    stc_program *prog = flow_compile(env,
        "thread w1 = cwrite init 1\nthread r = cread init 3\nthread p = cpure\n"
        "thread g = cgh init 5\nthread w2 = cwrite init 2\n"
        "main = smap(fn x => w2(g(p(r(w1(x))))), range(0, 300))\n");
    if (prog) {
        flow_check_modes(prog, "{\"result\": [");
        /* The runtime used the halves; the reference the whole. */
        CHECK(atomic_load(&k.output_calls) > 0);
        CHECK_INT(atomic_load(&k.output_calls), atomic_load(&k.state_calls));
        CHECK_INT(atomic_load(&k.full_calls), 300); /* one reference run */
    }
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(flow_c_thread_error_in_the_middle_then_rerun)
{
    counters k = {0};
    stc_env *env = flow_c_env(&k);
    /* Item 400 fails in the second writer; item 401 would fail in the first. */
    stc_program *prog = flow_compile(env,
        "thread w1 = cwrite init 1\nthread p = cpure\nthread w2 = cwrite init 2\n"
        "main = smap(fn x => w1(if x == 401 then 666 else x) + w2(p(if x == 400 then 5 else 1) + 640),"
        " range(0, 1000))\n");
    if (prog) {
        flow_check_modes(prog, "error -4 (runtime error): flow.stc:4:");
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        CHECK_CONTAINS(ref, "thread 'w2' failed: input 666 refused (in thread 'w2', smap item 400)");
        free(ref);
        /* The same program runs again, many times, after errors. */
        for (int i = 0; i < 20; i++) {
            char *again = unit_outcome(prog, (stc_run_opts){.workers = 2, .queue_capacity = 1 + i % 3}, NULL);
            CHECK_CONTAINS(again, "smap item 400)");
            free(again);
        }
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* A g x h C thread of 17 inputs, split by the runtime: output_fn gets the
 * tuple of its inputs as the whole call would (the runtime once refused
 * more than 16). */
static int c_sum(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)cx;
    int64_t sum = 0;
    for (size_t i = 0; i < stc_value_len(*in); i++) sum += stc_value_at(*in, i).as.i;
    if (state) ((cstate *)state)->v = (((cstate *)state)->v * 3 + 1) % 1000003;
    *out = stc_value_int(sum);
    return 0;
}
static int c_sum_state(void *state, stc_ctx *cx)
{
    (void)cx;
    ((cstate *)state)->v = (((cstate *)state)->v * 3 + 1) % 1000003;
    return 0;
}

TEST(flow_c_split_thread_of_many_inputs)
{
    stc_env *env = stc_env_new();
    char type[256] = "(int";
    for (int i = 1; i < 17; i++) strcat(type, ", int");
    strcat(type, ") -> int");
    stc_thread_def d = {.name = "csum", .fn = c_sum, .output_fn = c_sum, .state_fn = c_sum_state, .type = type,
                        .state_type = "int", .state_size = sizeof(cstate), .state_init = c_init,
                        .state_to_value = c_to_value, .access = STC_INDEPENDENT};
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    stc_program *prog = flow_compile(env,
        "thread s = csum init 0\n"
        "main = smap(fn x => s(x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7, x + 8, x + 9, x + 10, x + 11,"
        " x + 12, x + 13, x + 14, x + 15, x + 16), range(0, 200))\n");
    if (prog) flow_check_modes(prog, "{\"result\": [136, 153,");
    stc_program_free(prog);
    stc_env_free(env);
}

/* ---- One worker: the stages fused, no scheduler ---- */

static stc_cancel *flow_cancel_at_5000; /* raised by c_stopper on input 5000 */
static atomic_int flow_stopper_calls;
static int c_stopper(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)cx;
    atomic_fetch_add(&flow_stopper_calls, 1);
    if (in->as.i == 5000) stc_cancel_request(flow_cancel_at_5000);
    ((cstate *)state)->v += in->as.i;
    *out = stc_value_int(((cstate *)state)->v);
    return 0;
}

/* A job the trial keeps fused is tried again later (exec.c,
 * FLOW_TRIAL_AGAIN): with its first decision forced to "stays fused" (the
 * testing aid), a job whose replicated stage holds nearly all the work
 * still goes on as the pipeline from a later window; with every decision
 * forced it stays fused to its end.  Results are the reference's. */
TEST(flow_fused_job_tried_again)
{
    stc_env *env = stc_env_new();
    stc_program *prog = flow_compile(env,
        "fun acc(x, s) = (s + x, s + x)\n"
        "thread a = acc init 0.0\n"
        "main = let r = smap(fn x => a(sin_iter(300, float(x))), range(0, 40000)) in (len(r), nth(r, 39999))\n");
    if (prog) {
        stc_run_stats st;
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        trun_mode once = {.workers = 2, .trial_refusals = 1}, always = {.workers = 2, .trial_refusals = 1 << 30};
        char *got = unit_outcome_aided(prog, (stc_run_opts){.workers = 2}, &once, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_fused, 0); /* a later window found the pipeline's gain */
        free(got);
        got = unit_outcome_aided(prog, (stc_run_opts){.workers = 2}, &always, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_fused, 1);
        free(got);
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* One worker runs a batch at a time through every stage (exec.c,
 * flow_job_fused): one batch in flight, so the bound on items in flight
 * is the queue capacity (the pipeline's is tokens x capacity); results,
 * errors, cancellation as everywhere else. */
TEST(flow_one_worker_runs_fused)
{
    stc_env *env = stc_env_new();
    stc_program *prog = flow_compile(env,
        "fun acc(x, s) = (s * 31 + x, (s * 31 + x) % 1000000007)\n"
        "thread a = acc init 0\n"
        "thread b = acc init 1\n"
        "main = len(smap(fn x => b(a(x * x) % 1000) + 1, range(0, 100000)))\n");
    if (prog) {
        stc_run_stats st;
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 1, .queue_capacity = 8}, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_parallel, 1);
        CHECK_INT(st.items, 100000);
        CHECK_INT(st.max_in_flight, 8); /* one batch of at most 8 */
        CHECK(st.peak_in_flight >= 1 && st.peak_in_flight <= 8);
        free(got);
        got = unit_outcome(prog, (stc_run_opts){.workers = 2, .queue_capacity = 8}, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK(st.max_in_flight > 8); /* the pipeline: several batches */
        free(ref);
        free(got);
    }
    stc_program_free(prog);
    /* Cancelled by the thread itself at item 5000: the next item sees it
     * and nothing after it runs. */
    stc_thread_def d = {.name = "cstop", .fn = c_stopper, .type = "int -> int", .state_type = "int",
                        .state_size = sizeof(cstate), .state_init = c_init, .state_to_value = c_to_value,
                        .access = STC_WRITES};
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    prog = flow_compile(env, "thread c = cstop init 0\nmain = len(smap(fn x => c(x * 2 / 2), range(0, 100000)))\n");
    if (prog) {
        flow_cancel_at_5000 = stc_cancel_new();
        atomic_store(&flow_stopper_calls, 0);
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 1, .cancel = flow_cancel_at_5000}, &res), STC_ECANCELED);
        CHECK_CONTAINS(stc_result_error(res).message, "run cancelled");
        CHECK_INT(stc_result_stats(res).smaps_parallel, 1);
        CHECK_INT(atomic_load(&flow_stopper_calls), 5001);
        stc_result_free(res);
        /* reset: the same program runs to the end */
        stc_cancel_reset(flow_cancel_at_5000);
        atomic_store(&flow_stopper_calls, 0);
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 1}, &res), 0);
        CHECK_INT(atomic_load(&flow_stopper_calls), 100000);
        stc_result_free(res);
        stc_cancel_free(flow_cancel_at_5000);
        flow_cancel_at_5000 = NULL;
    }
    stc_program_free(prog);
    /* Errors: item 700 fails in a later stage, 701 in an earlier one, 702
     * in a replicated one; at one worker the earliest is reported, with
     * queue capacities that cut the three into one batch and into three. */
    prog = flow_compile(env,
        "fun acc(x, s) = (s + x, s + x)\nthread a = acc init 0\nthread b = acc init 0\n"
        "main = smap(fn x => b(a(if x == 701 then 1 / 0 else x) + (if x == 700 then nth([], 0) else 0))"
        " + (if x == 702 then 1 % 0 else 0), range(0, 2000))\n");
    if (prog) {
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        CHECK_CONTAINS(ref, "smap item 700");
        int caps[] = {1, 2, 3, 1024};
        for (int i = 0; i < 8; i++) { /* item by item; stage by stage (profiling) */
            stc_run_opts o = {.workers = 1, .queue_capacity = caps[i % 4], .profile = i >= 4};
            char *got = unit_outcome(prog, o, NULL);
            CHECK(ref && got && strcmp(ref, got) == 0);
            free(got);
        }
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(flow_more_stages_than_workers)
{
    stc_env *env = stc_env_new();
    stc_program *prog = flow_compile(env,
        "fun acc(x, s) = (s * 10 + x % 10, (s * 10 + x % 10) % 1000000007)\n"
        "fun twice(x) = x * 2\n"
        "thread t0 = acc init 0\nthread t1 = acc init 1\nthread t2 = acc init 2\nthread t3 = acc init 3\n"
        "thread t4 = acc init 4\nthread t5 = acc init 5\nthread t6 = acc init 6\nthread t7 = acc init 7\n"
        "thread t8 = acc init 8\nthread t9 = acc init 9\n"
        "main = smap(fn x => t9(twice(t8(t7(twice(t6(t5(t4(t3(twice(t2(t1(t0(x))))))))))))), range(0, 500))\n");
    if (prog) flow_check_modes(prog, "{\"result\": [");
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(flow_tuple_items_as_tasks)
{
    stc_env *env = stc_env_new();
    /* f's items (0 and 2) form one group, run in order; g's item another. */
    stc_program *prog = flow_compile(env,
        "fun acc(x, s) = (s * 10 + x, s * 10 + x)\n"
        "fun spin(n, x) = if n == 0 then x else spin(n - 1, x)\n"
        "thread f = acc init 1\nthread g = acc init 2\n"
        "main = (f(spin(2000, 3)), g(spin(2000, 4)), f(5) + 100 / (len([1]) - 1), g(7))\n");
    if (prog) {
        flow_check_modes(prog, "error -4 (runtime error): flow.stc:5:56: error: division by zero");
        stc_run_stats st;
        char *s = unit_outcome(prog, (stc_run_opts){.workers = 2}, &st);
        CHECK_INT(st.task_groups, 1);
        free(s);
    }
    stc_program_free(prog);
    /* No error: the values and states; then which of two errors wins. */
    prog = flow_compile(env,
        "fun acc(x, s) = (s * 10 + x, s * 10 + x)\n"
        "thread f = acc init 1\nthread g = acc init 2\nthread h = acc init 3\n"
        "main = (f(round(sin_iter(10, 1.0))), (g(2), h(3)), f(4), g(len(range(0, 9))))\n");
    if (prog) flow_check_modes(prog, "{\"result\": [13, [22, 33], 134, 229], \"states\": {\"f\": 134, \"g\": 229, \"h\": 33}}");
    stc_program_free(prog);
    prog = flow_compile(env,
        "fun acc(x, s) = (s * 10 + x, s * 10 + x)\n"
        "fun boom(x) = nth([x], x)\n"
        "thread f = acc init 1\nthread g = acc init 2\n"
        "main = (f(boom(0) + 1), g(boom(5)), f(boom(7)))\n");
    if (prog) flow_check_modes(prog, "error -4 (runtime error): flow.stc:2:15: error: nth: index 5 out of range");
    stc_program_free(prog);
    stc_env_free(env);
}

/* task_groups of prog at `workers` workers (its outcome must be the
 * reference's at every worker count first). */
static long long flow_task_groups(stc_program *prog, const char *expect_prefix, int workers)
{
    flow_check_modes(prog, expect_prefix);
    stc_run_stats st = {0};
    char *s = unit_outcome(prog, (stc_run_opts){.workers = workers}, &st);
    free(s);
    return st.task_groups;
}

TEST(flow_independent_lets_as_tasks)
{
    static const char *prelude = "fun acc(x, s) = (s * 10 + x, s * 10 + x)\n"
                                 "fun spin(n, x) = if n == 0 then x else spin(n - 1, x)\n"
                                 "thread f = acc init 1\nthread g = acc init 2\nthread h = acc init 3\n";
    static const struct {
        const char *main, *expect;
        long long groups; /* chains (and tuples) run as tasks at 2 workers */
    } cases[] = {
        /* Independent: p and r share f (one group, in order), q is g's. */
        {"main = let p = f(spin(2000, 3)) in let q = g(spin(2000, 4)) in let r = f(5) in (p, q, r)\n",
         "{\"result\": [13, 24, 135], \"states\": {\"f\": 135, \"g\": 24, \"h\": 3}}", 1},
        /* Dependent: every let reads the one before; the body's tuple only reads. */
        {"main = let p = f(1) in let q = g(p) in let r = f(q) in (p, q, r)\n",
         "{\"result\": [11, 31, 141], \"states\": {\"f\": 141, \"g\": 31, \"h\": 3}}", 0},
        /* Independent, but all on one thread: one group, nothing to overlap. */
        {"main = let p = f(1) in let q = f(2) in (p, q)\n",
         "{\"result\": [11, 112], \"states\": {\"f\": 112, \"g\": 2, \"h\": 3}}", 0},
        /* The chain ends before the smap: p and q still run as tasks. */
        {"main = let p = f(1) in let q = g(2) in let r = smap(h, [1, 2]) in (p, q, r)\n",
         "{\"result\": [11, 22, [31, 312]], \"states\": {\"f\": 11, \"g\": 22, \"h\": 312}}", 1},
        /* [p, q] then, after r (reads p), [s, t]: two chains. */
        {"main = let p = f(1) in let q = g(2) in let r = h(p) in let s = f(r) in let t = g(3) in (q, s, t)\n",
         "{\"result\": [22, 151, 223], \"states\": {\"f\": 151, \"g\": 223, \"h\": 41}}", 2},
    };
    stc_env *env = stc_env_new();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char src[512];
        snprintf(src, sizeof src, "%s%s", prelude, cases[i].main);
        stc_program *prog = flow_compile(env, src);
        if (!prog) continue;
        long long groups = flow_task_groups(prog, cases[i].expect, 2);
        if (groups != cases[i].groups)
            test_fail(__FILE__, __LINE__, "case %zu: task_groups %lld, want %lld", i, groups, cases[i].groups);
        CHECK_INT(flow_task_groups(prog, cases[i].expect, 1), 0); /* one worker: never */
        stc_program_free(prog);
    }
    stc_env_free(env);
}

/* A let chain main runs 100 times with tiny items: after a few runs that
 * gain nothing (FLOW_TASK_MIN_NS) the chain is left to the evaluator. */
TEST(flow_cheap_tasks_declined)
{
    stc_env *env = stc_env_new();
    stc_program *prog = flow_compile(env, "fun cnt(x, s) = (s + x, (s + x) % 1000003)\n"
                                          "thread c = cnt init 0\nthread d = cnt init 0\n"
                                          "fun loop(n, a) = if n == 0 then a else\n"
                                          "  let p = c(n) in let q = d(n * 2) in loop(n - 1, (a * 31 + p + q) % 1000003)\n"
                                          "main = loop(100, 0)\n");
    if (prog) {
        long long groups = flow_task_groups(prog, "{\"result\": 70637, \"states\": {\"c\": 5050, \"d\": 10100}}", 2);
        CHECK(groups >= 1);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
        /* Timing-dependent, so not under the sanitizers' slowdown: it takes
         * 3 runs in a row under 100 us out of 100 runs. */
        CHECK(groups < 100);
#endif
    }
    stc_program_free(prog);
    stc_env_free(env);
}

typedef struct flow_pool_job {
    stc_program *prog;
    stc_pool *pool;
    char *out[20];
} flow_pool_job;

static void *flow_pool_thread(void *arg)
{
    flow_pool_job *j = arg;
    for (int i = 0; i < 20; i++)
        j->out[i] = unit_outcome(j->prog, (stc_run_opts){.pool = j->pool, .queue_capacity = 1 + i % 4}, NULL);
    return NULL;
}

TEST(flow_pool_kept_across_runs_and_shared)
{
    stc_env *env = stc_env_new();
    stc_program *prog = flow_compile(env,
        "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\n"
        "thread a = acc init 0\nthread b = acc init 1\n"
        "main = smap(fn x => b(a(x) + x), range(0, 500))\n");
    stc_pool *pool = stc_pool_new(2);
    CHECK(pool != NULL);
    CHECK_INT(stc_pool_workers(pool), 2);
    stc_pool_free(NULL);
    CHECK(stc_pool_new(0) == NULL);
    if (prog && pool) {
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        stc_run_stats st;
        char *got = unit_outcome(prog, (stc_run_opts){.pool = pool}, &st);
        CHECK(ref && got && !strcmp(ref, got));
        CHECK_INT(st.workers, 2);
        CHECK_INT(st.smaps_parallel, 1);
        free(got);
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.pool = pool, .workers = 3}, &res), STC_EINVAL);
        /* Two host threads share the pool: their runs take turns. */
        flow_pool_job jobs[2] = {{prog, pool, {0}}, {prog, pool, {0}}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, flow_pool_thread, &jobs[i]);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 20; k++) {
                CHECK(jobs[i].out[k] && ref && !strcmp(jobs[i].out[k], ref));
                free(jobs[i].out[k]);
            }
        free(ref);
    }
    stc_pool_free(pool);
    stc_program_free(prog);
    stc_env_free(env);
}

/* A left-associative operator chain is one level however long (issue 15):
 * 100000 terms compile, run and draw under the reference and the runtime
 * without recursing down the chain; a chain of thread calls inside an
 * smap is cut into steps by loops (src/flow/compile.c). */
static char *flow_chain_src(const char *head, const char *term, int n, const char *tail)
{
    size_t hl = strlen(head), tl = strlen(term), xl = strlen(tail);
    char *s = malloc(hl + (size_t)n * tl + xl + 1);
    if (!s) return NULL;
    memcpy(s, head, hl);
    for (int i = 0; i < n; i++) memcpy(s + hl + (size_t)i * tl, term, tl);
    memcpy(s + hl + (size_t)n * tl, tail, xl + 1);
    return s;
}

TEST(flow_long_operator_chains)
{
    char *src = flow_chain_src("main = 0", " + 1", 100000, "\n");
    stc_program *prog = src ? flow_compile(NULL, src) : NULL;
    if (prog) flow_check_modes(prog, "{\"result\": 100000, ");
    stc_program_free(prog);
    free(src);

    src = flow_chain_src("main = (false", " || false", 100000, " || true, 1.5 * 2.0 - 1.0 > 0.0)\n");
    prog = src ? flow_compile(NULL, src) : NULL;
    if (prog) flow_check_modes(prog, "{\"result\": [true, true], ");
    stc_program_free(prog);
    free(src);

    /* item x (x = 0, 1, 2) starts with state s = x * (K + 1): t(x) is x + s,
     * the j-th t(1) is 1 + s + j, each + 1 adds 1: x + s + K*s + K(K+1)/2 + 2K */
    enum { K = 20000 };
    src = flow_chain_src("fun f(x, s) = (x + s, s + 1)\nthread t = f init 0\n"
                         "main = smap(fn x => t(x)", " + t(1) + 1", K, ", range(0, 3))\n");
    prog = src ? flow_compile(NULL, src) : NULL;
    char want[128];
    long long v[3];
    for (long long x = 0; x < 3; x++) {
        long long s = x * (K + 1);
        v[x] = x + s + (long long)K * s + (long long)K * (K + 1) / 2 + 2LL * K;
    }
    snprintf(want, sizeof want, "{\"result\": [%lld, %lld, %lld], \"states\": {\"t\": %d}}", v[0], v[1], v[2],
             3 * (K + 1));
    if (prog) flow_check_modes(prog, want);
    char *dot = prog ? stc_program_graph(prog, 0) : NULL;
    CHECK(dot && strstr(dot, "digraph"));
    free(dot);
    stc_program_free(prog);
    free(src);
}

static double flow_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Grouping a tuple's items into tasks is linear (issue 17: a union-find
 * over the threads; pairwise set tests took 21 s for 10^5 items at 2
 * workers, the reference 0.03 s).  The items alternate between threads a
 * and b, so they form two groups, each run in order. */
TEST(flow_tuple_of_100000_items_plans_in_linear_time)
{
    enum { N = 100000, P = 1000003 };
    char *src = malloc((size_t)N * 16 + 256);
    if (!src) return;
    size_t len = (size_t)sprintf(src, "fun acc(x, s) = ((s * 31 + x) %% %d, (s * 31 + x) %% %d)\n"
                                      "thread a = acc init 0\nthread b = acc init 0\nmain = let t = (", P, P);
    long long sa = 0, sb = 0;
    for (int i = 0; i < N; i++) {
        len += (size_t)sprintf(src + len, "%s%c(%d)", i ? ", " : "", i % 2 ? 'a' : 'b', i);
        if (i % 2) sa = (sa * 31 + i) % P;
        else sb = (sb * 31 + i) % P;
    }
    sprintf(src + len, ") in 1\n");
    stc_program *prog = flow_compile(NULL, src);
    char want[128];
    snprintf(want, sizeof want, "{\"result\": 1, \"states\": {\"a\": %lld, \"b\": %lld}}", sa, sb);
    if (prog) {
        double t0 = flow_seconds();
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        double t1 = flow_seconds();
        stc_run_stats st = {0};
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 2}, &st);
        double t2 = flow_seconds();
        CHECK(ref && strcmp(ref, want) == 0);
        CHECK(got && strcmp(got, want) == 0);
        CHECK_INT(st.task_groups, 1); /* ran as tasks once (two groups) */
        /* Generous (a shared machine): quadratic grouping took 700x the reference. */
        CHECK(t2 - t1 < 10 * (t1 - t0) + 1.0);
        free(ref);
        free(got);
    }
    stc_program_free(prog);
    free(src);
}

/* One worker runs a cheap item's whole body at once (steps.c
 * flow_direct_items; at 2+ workers the fused remainder after a trial):
 * the reference's results, states and first error, wherever the error
 * falls (the first item, the first batches, a later one, the last), in a
 * thread call, in a tail call the body ends in, past the depth limit, in
 * a function of two params over tuples (its args adapted), with captures,
 * at capacities that cut batches of 1, 2, 3 and up to 1024 items. */
TEST(flow_fused_direct_body_matches_the_reference)
{
    /* the first item and the last ones run direct in a plain build (the
     * first batch has no cost estimate, later ones a low one); those
     * after the first may go stage by stage while the first item's cold
     * cost weighs on the estimate: both must be the reference's */
    static const int fail_at[] = {0, 1, 63, 700, 2500, 2999, -1};
    static const char *const shapes[] = {
        /* an error inside a thread's argument, a tail-called helper */
        "fun acc(x, s) = (s * 31 + x, (s * 31 + x) %% 1000003)\nthread a = acc init 0\n"
        "fun down(i, k) = if i == 0 then 1000 / (k - %d) else down(i - 1, k)\n"
        "main = let m = 7 in smap(fn x => a(down(3, x) + m) %% 1000, range(0, 3000))\n",
        /* the body ends in a tail call; the error in the thread's function */
        "fun acc(x, s) = if x == %d then (nth([], 0), s) else (s + x, (s * 7 + x) %% 1000003)\n"
        "thread a = acc init 1\nfun step(x, y) = x + y %% 7\n"
        "main = len(smap(fn x => step(x, a(x)), range(0, 3000)))\n",
        /* the depth limit at one item, as the evaluator reaches it */
        "fun deep(n) = if n == 0 then 0 else 1 + deep(n - 1)\n"
        "fun acc(x, s) = (s + x, s + x)\nthread a = acc init 0\n"
        "main = len(smap(fn x => a(if x == %d then deep(1000000) else x), range(0, 3000)))\n",
        /* two params over tuples, captures, strings */
        "fun acc(x, s) = (s + len(x), s + len(x))\nthread a = acc init 0\n"
        "fun pair(p, q) = a(concat(p, if q == %d then nth([\"\"], 5) else \"xy\"))\n"
        "main = let ps = smap(fn x => (str(x), x), range(0, 3000)) in len(smap(pair, ps))\n",
    };
    stc_env *env = stc_env_new();
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        for (size_t f = 0; f < sizeof fail_at / sizeof *fail_at; f++) {
            char src[1024];
            snprintf(src, sizeof src, shapes[k], fail_at[f]);
            stc_program *prog = flow_compile(env, src);
            if (!prog) continue;
            char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
            if (fail_at[f] >= 0) {
                char want[64];
                snprintf(want, sizeof want, "smap item %d)", fail_at[f]);
                CHECK_CONTAINS(ref, want);
            } else {
                CHECK(ref && strncmp(ref, "error", 5) != 0);
            }
            int caps[] = {1, 2, 3, 1024};
            for (int i = 0; i < 8; i++) {
                stc_run_opts o = {.workers = i < 4 ? 1 : 2, .queue_capacity = caps[i % 4]};
                char *got = unit_outcome(prog, o, NULL);
                CHECK(ref && got && strcmp(ref, got) == 0);
                if (ref && got && strcmp(ref, got) != 0)
                    fprintf(stderr, "shape %zu fail_at %d workers %d capacity %d:\n ref %.300s\n got %.300s\n", k,
                            fail_at[f], o.workers, o.queue_capacity, ref, got);
                free(got);
            }
            free(ref);
            stc_program_free(prog);
        }
    }
    stc_env_free(env);
}

/* The depth limit in the direct body is the evaluator's to the unit: the
 * deepest recursion the reference runs at one late item (direct in a
 * plain build; found by bisection, so the test follows the evaluator's
 * depth units) runs, and one more level fails, at 1 and 2 workers; the
 * smap at two depths of main, since a recursion level takes several depth
 * units and a body one unit off may hit the limit at the same level at
 * one of them (it does not at both). */
static stc_program *flow_deep_prog(stc_env *env, int n, bool let)
{
    char src[512];
    snprintf(src, sizeof src,
             "fun deep(n) = if n == 0 then 0 else 1 + deep(n - 1)\nfun acc(x, s) = (s + x, s + x)\n"
             "thread a = acc init 0\nmain = %slen(smap(fn x => a(if x == 2900 then deep(%d) else x), range(0, 3000)))\n",
             let ? "let z = 1 in " : "", n);
    return flow_compile(env, src);
}

TEST(flow_fused_direct_body_depth_limit)
{
    stc_env *env = stc_env_new();
    for (int w = 0; w < 2; w++) {
        int lo = 1, hi = 1 << 20; /* the reference runs deep(lo), fails deep(hi) */
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            stc_program *prog = flow_deep_prog(env, mid, w);
            if (!prog) break;
            char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
            if (ref && strncmp(ref, "error", 5) != 0) lo = mid;
            else hi = mid;
            free(ref);
            stc_program_free(prog);
        }
        CHECK(hi - lo == 1 && lo > 100);
        for (int n = lo; n <= hi; n++) {
            stc_program *prog = flow_deep_prog(env, n, w);
            if (!prog) continue;
            char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
            if (n == hi) CHECK_CONTAINS(ref, "call depth limit exceeded (smap item 2900)");
            for (int i = 0; i < 4; i++) {
                stc_run_opts o = {.workers = 1 + i / 2, .queue_capacity = i % 2 ? 1024 : 1};
                char *got = unit_outcome(prog, o, NULL);
                CHECK(ref && got && strcmp(ref, got) == 0);
                free(got);
            }
            free(ref);
            stc_program_free(prog);
        }
    }
    stc_env_free(env);
}
