/* fine.c - the fine-grained pipeline sweep through the stc C API.
 *
 *   main = smap(fn x => w2(p(w1(x))), range(0, N))
 *
 * w1 and w2 are STC_WRITES C threads with an order-sensitive state, p is an
 * STC_PURE C thread spinning W microseconds (see fine_common.h).  For W =
 * 0.1, 1, 10, 100 us it prints the median ns per item at 1 and N workers,
 * the speedup, and the per-item overhead at 1 worker (ns per item - W): what
 * the runtime costs per item when there is nothing to parallelise.
 * bench/fine_tbb.cpp and bench/fine_omp.c are the same pipeline in oneTBB
 * and OpenMP, with the same flags and output.
 *
 *   fine [--workers N] [--runs R] [--quick] [--iters-per-us X]
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stc.h>

#include "fine_common.h"

static int st_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_int((int64_t)*(const uint64_t *)state);
    return 0;
}

/* w1, w2: s = (s * 31 + x) mod 2^61, output s.  The state starts at 0 (the
 * runtime zeroes it; there is no init). */
static int th_fold(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    uint64_t *s = state;
    if (in->tag != STC_T_INT) return stc_ctx_error(cx, "fold: expected an int");
    *s = fine_fold(*s, (uint64_t)in->as.i);
    *out = stc_value_int((int64_t)*s);
    return 0;
}

/* p: W microseconds of spinning; the iteration count is the thread's user
 * pointer, set before each compile. */
static int th_spin(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state;
    if (in->tag != STC_T_INT) return stc_ctx_error(cx, "spin: expected an int");
    const uint64_t *iters = stc_ctx_user(cx);
    *out = stc_value_int((int64_t)fine_spin((uint64_t)in->as.i, *iters));
    return 0;
}

static int setup(stc_env *env, uint64_t *iters)
{
    stc_thread_def fold = {
        .name = "c_fold", .fn = th_fold, .type = "int -> int", .state_size = sizeof(uint64_t),
        .state_to_value = st_value, .access = STC_WRITES,
    };
    stc_thread_def spin = {
        .name = "c_spin", .fn = th_spin, .type = "int -> int", .state_size = sizeof(uint64_t),
        .access = STC_PURE, .user = iters,
    };
    return stc_env_add_thread(env, &fold) || stc_env_add_thread(env, &spin);
}

static int is_int(stc_value v, uint64_t want) { return v.tag == STC_T_INT && v.as.i == (int64_t)want; }

/* The whole list's order shows in w2's final state; w2's output is its state. */
static int check(const stc_result *res, long n, uint64_t s1, uint64_t s2, int workers)
{
    stc_value v = stc_result_value(res);
    int ok = v.tag == STC_T_LIST && stc_value_len(v) == (size_t)n && stc_result_state_count(res) == 3 &&
             is_int(stc_result_state(res, 0), s1) && is_int(stc_result_state(res, 2), s2) &&
             is_int(stc_value_at(v, (size_t)n - 1), s2);
    if (!ok)
        fprintf(stderr, "fine: wrong result at %d worker(s), %ld items: want states w1 = %llu, w2 = %llu\n",
                workers, n, (unsigned long long)s1, (unsigned long long)s2);
    return !ok;
}

/* Median ns per item of `runs` runs at `workers` after one warm-up run
 * (page faults, worker start-up); every run is checked. */
static int time_runs(stc_program *prog, const fine_opts *o, int workers, long n, uint64_t s1, uint64_t s2,
                     double *ns)
{
    double t[FINE_MAX_RUNS];
    /* One pool kept across the runs, as oneTBB keeps its arena: the runs
     * measure the pipelines, not thread start-up. */
    stc_pool *pool = stc_pool_new(workers);
    if (!pool) {
        fprintf(stderr, "fine: cannot start %d workers\n", workers);
        return 1;
    }
    stc_run_opts opts = {.pool = pool};
    for (int r = -1; r < o->runs; r++) {
        stc_result *res = NULL;
        double t0 = bench_now_ns();
        int rc = stc_run(prog, &opts, &res);
        if (r >= 0) t[r] = (bench_now_ns() - t0) / (double)n;
        if (rc != 0) {
            char *msg = res ? stc_result_error_format(res) : NULL;
            fprintf(stderr, "fine: %s\n", msg ? msg : stc_strerror(rc));
            free(msg);
        }
        int bad = rc != 0 || check(res, n, s1, s2, workers);
        stc_result_free(res);
        if (bad) {
            stc_pool_free(pool);
            return 1;
        }
    }
    stc_pool_free(pool);
    *ns = bench_median(t, o->runs);
    return 0;
}

int main(int argc, char **argv)
{
    fine_opts o;
    fine_parse(argc, argv, "fine", &o);
    uint64_t iters = 0;
    stc_env *env = stc_env_new();
    if (!env || setup(env, &iters)) {
        fprintf(stderr, "fine: cannot set up the environment\n");
        stc_env_free(env);
        return 1;
    }
    fine_header(&o, "stc C API", NULL);
    int bad = 0;
    for (int k = 0; k < FINE_NWORK && !bad; k++) {
        long n = fine_items(&o, k);
        uint64_t s1, s2;
        iters = fine_iters(&o, k);
        double seq = fine_seq(n, iters, &s1, &s2), ns1 = 0, nsn = 0;

        char src[512];
        snprintf(src, sizeof src,
                 "thread w1 = c_fold\nthread p = c_spin\nthread w2 = c_fold\n"
                 "main = smap(fn x => w2(p(w1(x))), range(0, %ld))\n", n);
        stc_program *prog = NULL;
        stc_diags *diags = NULL;
        int rc = stc_compile(env, src, strlen(src), "fine.stc", &prog, &diags);
        if (rc != 0) {
            char *text = stc_diags_format(diags);
            fprintf(stderr, "fine: the program does not compile:\n%s", text ? text : stc_strerror(rc));
            free(text);
            stc_diags_free(diags);
            bad = 1;
            break;
        }
        bad = time_runs(prog, &o, 1, n, s1, s2, &ns1) || time_runs(prog, &o, o.workers, n, s1, s2, &nsn);
        if (!bad) fine_row(&o, k, seq, ns1, nsn);
        stc_program_free(prog);
    }
    stc_env_free(env);
    return bad;
}
