/* paper_c.c - the STCLang paper's microbenchmarks through the C API.
 *
 * Five benchmarks over the 50 items 400.0, 410.0, ..., 890.0, with two
 * threads f and h (initial states 4.0 and 3.0) doing sin_iter(100000, x) per
 * call: composition h(f(x)) with pure, reading and writing threads,
 * applicative (f(x), h(x)) and conditional, both with writing threads.
 * Here f and h are C state threads declaring their access (STC_PURE,
 * STC_READS, STC_WRITES); the .stc files in bench/paper/ are the same
 * programs in STCLang, timed with `stc run` by bench/run.sh.
 *
 * For each benchmark it prints the median wall time of R runs of the plain
 * sequential C loop, of stc_run at 1 worker and at N workers, and the
 * speedup seq / N workers.  Every run's result and final states are checked
 * against the sequential loop; a mismatch exits 1.
 *
 *   paper_c [--workers N] [--runs R] [--json-dir DIR]
 *
 * --json-dir writes DIR/NAME.json, the result as `stc run --json` prints it,
 * so the runner can check that the .stc files compute the same thing.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stc.h>

#include "bench_util.h"

enum { N_ITEMS = 50, WORK = 100000, MAX_RUNS = 1000 };

/* The same arithmetic as the builtin sin_iter, so results are bit-equal. */
static double sin_iter(long n, double x)
{
    for (long i = 0; i < n; i++) x += sin(x);
    return x;
}

static double item(int i) { return 400.0 + 10.0 * (double)i; }

/* ---- The C state threads: the state is one double ---------------------- */

static int st_init(void *state, const stc_value *init, void *user)
{
    (void)user;
    *(double *)state = init ? init->as.f : 0.0;
    return 0;
}

static int st_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_float(*(const double *)state);
    return 0;
}

/* fp(x, s) = (sin_iter(100000, x), s) */
static int th_pure(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state;
    if (in->tag != STC_T_FLOAT) return stc_ctx_error(cx, "c_pure: expected a float");
    *out = stc_value_float(sin_iter(WORK, in->as.f));
    return 0;
}

/* fr(x, s) = (sin_iter(100000, x + s), s) */
static int th_read(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    if (in->tag != STC_T_FLOAT) return stc_ctx_error(cx, "c_read: expected a float");
    *out = stc_value_float(sin_iter(WORK, in->as.f + *(const double *)state));
    return 0;
}

/* fw(x, s) = (sin_iter(100000, x + s), s + 1.0) */
static int th_write(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    double *s = state;
    if (in->tag != STC_T_FLOAT) return stc_ctx_error(cx, "c_write: expected a float");
    *out = stc_value_float(sin_iter(WORK, in->as.f + *s));
    *s += 1.0;
    return 0;
}

static int add_thread(stc_env *env, const char *name, stc_thread_fn fn, stc_access access)
{
    stc_thread_def def = {
        .name = name, .fn = fn, .type = "float -> float", .state_type = "float",
        .state_size = sizeof(double), .state_init = st_init, .state_to_value = st_value,
        .access = access,
    };
    return stc_env_add_thread(env, &def);
}

/* ---- The sequential C loops: out[i][0] (and [1] for pairs), states ------ */

static void seq_comp_pure(double out[][2], double st[2])
{
    for (int i = 0; i < N_ITEMS; i++) out[i][0] = sin_iter(WORK, sin_iter(WORK, item(i)));
    (void)st;
}

static void seq_comp_read(double out[][2], double st[2])
{
    for (int i = 0; i < N_ITEMS; i++)
        out[i][0] = sin_iter(WORK, sin_iter(WORK, item(i) + st[0]) + st[1]);
}

static void seq_comp_write(double out[][2], double st[2])
{
    for (int i = 0; i < N_ITEMS; i++) {
        double y = sin_iter(WORK, item(i) + st[0]++);
        out[i][0] = sin_iter(WORK, y + st[1]++);
    }
}

static void seq_applicative(double out[][2], double st[2])
{
    for (int i = 0; i < N_ITEMS; i++) {
        out[i][0] = sin_iter(WORK, item(i) + st[0]++);
        out[i][1] = sin_iter(WORK, item(i) + st[1]++);
    }
}

static void seq_conditional(double out[][2], double st[2])
{
    for (int i = 0; i < N_ITEMS; i++) {
        double x = item(i);
        int t = ((long)round(x) / 10) % 2 == 0 ? 0 : 1;
        out[i][0] = sin_iter(WORK, x + st[t]++);
    }
}

#define ITEMS "fun inputs(n) = smap(fn i => 400.0 + 10.0 * float(i), range(0, n))\n"
#define THREADS(fn) "thread f = " fn " init 4.0\nthread h = " fn " init 3.0\n" ITEMS

static const struct bench {
    const char *name; /* also the .stc file name in bench/paper/ */
    const char *src;
    void (*seq)(double out[][2], double st[2]);
    int pairs; /* items of the result are (f, h) pairs */
} benches[] = {
    {"comp_pure", THREADS("c_pure") "main = smap(fn x => h(f(x)), inputs(50))\n", seq_comp_pure, 0},
    {"comp_read", THREADS("c_read") "main = smap(fn x => h(f(x)), inputs(50))\n", seq_comp_read, 0},
    {"comp_write", THREADS("c_write") "main = smap(fn x => h(f(x)), inputs(50))\n", seq_comp_write, 0},
    {"applicative", THREADS("c_write") "main = smap(fn x => (f(x), h(x)), inputs(50))\n",
     seq_applicative, 1},
    {"conditional", THREADS("c_write")
     "main = smap(fn x => if (round(x) / 10) % 2 == 0 then f(x) else h(x), inputs(50))\n",
     seq_conditional, 0},
};

/* The sequential result as an stc value, to compare with stc_value_equal. */
static stc_value expected_value(const struct bench *b, double out[][2])
{
    stc_value items[N_ITEMS];
    for (int i = 0; i < N_ITEMS; i++) {
        if (b->pairs) {
            stc_value pair[2] = {stc_value_float(out[i][0]), stc_value_float(out[i][1])};
            items[i] = stc_value_new_tuple(2, pair);
        } else {
            items[i] = stc_value_float(out[i][0]);
        }
    }
    return stc_value_new_list(N_ITEMS, items);
}

/* 0 when res holds exactly the expected result and states f, h. */
static int check(const struct bench *b, const stc_result *res, stc_value want, const double st[2],
                 int workers)
{
    int ok = stc_value_equal(stc_result_value(res), want) && stc_result_state_count(res) == 2;
    for (size_t i = 0; ok && i < 2; i++) {
        stc_value s = stc_result_state(res, i);
        ok = s.tag == STC_T_FLOAT && s.as.f == st[i];
    }
    if (ok) return 0;
    char *got = stc_result_to_json(res), *exp = stc_value_to_text(want);
    fprintf(stderr, "paper_c: %s: mismatch at %d worker(s)\n  stc: %s\n  seq: %s (states %.17g, %.17g)\n",
            b->name, workers, got ? got : "?", exp ? exp : "?", st[0], st[1]);
    free(got);
    free(exp);
    return 1;
}

static int write_json(const char *dir, const char *name, const stc_result *res)
{
    char path[4096];
    char *json = stc_result_to_json(res);
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = json ? fopen(path, "w") : NULL;
    int bad = !f || fprintf(f, "%s\n", json) < 0;
    if (f && fclose(f) != 0) bad = 1;
    if (bad) fprintf(stderr, "paper_c: cannot write %s\n", path);
    free(json);
    return bad;
}

/* Median ms of `runs` stc_run calls at `workers`, each result checked. */
static int time_stc(const struct bench *b, stc_program *prog, int workers, int runs, stc_value want,
                    const double st[2], const char *json_dir, double *ms)
{
    double t[MAX_RUNS];
    /* One pool kept across the runs, as oneTBB keeps its arena: the runs
     * measure the pipelines, not thread start-up. */
    stc_pool *pool = stc_pool_new(workers);
    if (!pool) {
        fprintf(stderr, "paper_c: cannot start %d workers\n", workers);
        return 1;
    }
    stc_run_opts opts = {.pool = pool};
    for (int r = 0; r < runs; r++) {
        stc_result *res = NULL;
        double t0 = bench_now_ns();
        int rc = stc_run(prog, &opts, &res);
        t[r] = (bench_now_ns() - t0) / 1e6;
        if (rc != 0) {
            char *msg = res ? stc_result_error_format(res) : NULL;
            fprintf(stderr, "paper_c: %s: %s\n", b->name, msg ? msg : stc_strerror(rc));
            free(msg);
            stc_result_free(res);
            stc_pool_free(pool);
            return 1;
        }
        int bad = check(b, res, want, st, workers);
        if (!bad && json_dir && r == 0) bad = write_json(json_dir, b->name, res);
        stc_result_free(res);
        if (bad) {
            stc_pool_free(pool);
            return 1;
        }
    }
    stc_pool_free(pool);
    *ms = bench_median(t, runs);
    return 0;
}

static int run_bench(stc_env *env, const struct bench *b, int workers, int runs, const char *json_dir)
{
    double out[N_ITEMS][2] = {{0}}, st[2] = {4.0, 3.0}, t[MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        st[0] = 4.0, st[1] = 3.0;
        double t0 = bench_now_ns();
        b->seq(out, st);
        t[r] = (bench_now_ns() - t0) / 1e6;
    }
    double seq_ms = bench_median(t, runs), one_ms = 0, many_ms = 0;

    stc_program *prog = NULL;
    stc_diags *diags = NULL;
    int rc = stc_compile(env, b->src, strlen(b->src), b->name, &prog, &diags);
    if (rc != 0) {
        char *text = stc_diags_format(diags);
        fprintf(stderr, "paper_c: %s does not compile:\n%s", b->name, text ? text : stc_strerror(rc));
        free(text);
        stc_diags_free(diags);
        return 1;
    }
    stc_value want = expected_value(b, out);
    int bad = !stc_value_is_valid(want) ||
              time_stc(b, prog, 1, runs, want, st, json_dir, &one_ms) ||
              time_stc(b, prog, workers, runs, want, st, NULL, &many_ms);
    if (!bad)
        printf("%-12s %10.1f %10.1f %10.1f %8.2f\n", b->name, seq_ms, one_ms, many_ms, seq_ms / many_ms);
    stc_value_release(want);
    stc_program_free(prog);
    return bad;
}

/* --once NAME: one stc_run of benchmark NAME at `workers`, its own pool
 * started and stopped by the run, the result printed as `stc run --json`
 * prints it (bench/run.sh compares it with the checked one): the C host as
 * a whole process, what bench/run.sh times beside `stc run` (both pay
 * process start, compile and thread start). */
static int run_once(stc_env *env, const char *name, int workers)
{
    const struct bench *b = NULL;
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        if (!strcmp(benches[i].name, name)) b = &benches[i];
    if (!b) {
        fprintf(stderr, "paper_c: no benchmark '%s'\n", name);
        return 64;
    }
    stc_program *prog = NULL;
    if (stc_compile(env, b->src, strlen(b->src), b->name, &prog, NULL) != 0) return 1;
    stc_result *res = NULL;
    int rc = stc_run(prog, &(stc_run_opts){.workers = workers}, &res);
    char *json = rc == 0 ? stc_result_to_json(res) : NULL;
    int bad = !json;
    if (json) printf("%s\n", json);
    free(json);
    stc_result_free(res);
    stc_program_free(prog);
    return bad;
}

int main(int argc, char **argv)
{
    int workers = 2, runs = 5;
    const char *json_dir = NULL, *once = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workers")) workers = bench_int_arg("paper_c", argv[i], argv[i + 1], 4096), i++;
        else if (!strcmp(argv[i], "--runs")) runs = bench_int_arg("paper_c", argv[i], argv[i + 1], MAX_RUNS), i++;
        else if (!strcmp(argv[i], "--json-dir") && i + 1 < argc) json_dir = argv[++i];
        else if (!strcmp(argv[i], "--once") && i + 1 < argc) once = argv[++i];
        else {
            fprintf(stderr, "usage: paper_c [--workers N] [--runs R] [--json-dir DIR] [--once NAME]\n");
            return 64;
        }
    }

    stc_env *env = stc_env_new();
    if (!env || add_thread(env, "c_pure", th_pure, STC_PURE) || add_thread(env, "c_read", th_read, STC_READS) ||
        add_thread(env, "c_write", th_write, STC_WRITES)) {
        fprintf(stderr, "paper_c: cannot set up the environment\n");
        stc_env_free(env);
        return 1;
    }
    if (once) {
        int rc = run_once(env, once, workers);
        stc_env_free(env);
        return rc;
    }
    printf("# paper_c: the STCLang paper's microbenchmarks through the C API\n");
    printf("# %d items, sin_iter(%d, x) per thread call; median wall time of %d run(s), ms\n", N_ITEMS,
           WORK, runs);
    char many[32];
    snprintf(many, sizeof many, "stc %dw", workers);
    printf("# %-10s %10s %10s %10s %8s\n", "benchmark", "seq", "stc 1w", many, "speedup");
    int bad = 0;
    for (size_t i = 0; i < sizeof benches / sizeof benches[0] && !bad; i++)
        bad = run_bench(env, &benches[i], workers, runs, json_dir);
    stc_env_free(env);
    return bad;
}
