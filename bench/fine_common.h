/* fine_common.h - what the fine-grained pipeline benchmarks share (fine.c,
 * fine_tbb.cpp, fine_omp.c), so the three measure exactly the same work:
 *
 *   item x -> w1 (serial, order-sensitive state) -> p (pure, W us of CPU)
 *          -> w2 (serial, order-sensitive state)
 *
 * w1 and w2 fold each item into their state as s = (s * 31 + x) mod 2^61 and
 * output the new state, so any reordering changes the final states.  p spins
 * a calibrated number of iterations of a dependent multiply-add chain.
 *
 * Flags (the same for all three programs):
 *   --workers N        the parallel run uses N workers (default 2)
 *   --runs R           median of R runs (default 5)
 *   --quick            a tenth of the items, for a smoke run
 *   --iters-per-us X   skip calibration and use X spin iterations per us
 *                      (the runner passes fine's figure to the others)
 *
 * Output: '#' comment lines, one of them "# calibration: X iters/us", then
 * one row per work size:
 *   work_us items ns_seq ns_1w ns_Nw speedup overhead_1w_ns
 */
#ifndef STC_BENCH_FINE_COMMON_H
#define STC_BENCH_FINE_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define FINE_MASK ((UINT64_C(1) << 61) - 1)
#define FINE_MAX_RUNS 1000

/* The work sizes, in microseconds, and the items per run: about 1 s of work
 * per run on one worker (0.1 us: 0.1 s), so a run stays under ~2 s. */
static const double fine_work_us[] = {0.1, 1.0, 10.0, 100.0};
static const long fine_items_full[] = {1000000, 1000000, 100000, 10000};
#define FINE_NWORK 4

typedef struct fine_opts {
    int workers, runs, quick;
    double iters_per_us; /* 0: calibrate */
} fine_opts;

/* The serial stages' state update (w1 and w2). */
static inline uint64_t fine_fold(uint64_t s, uint64_t x) { return (s * 31 + x) & FINE_MASK; }

/* The pure stage: `iters` dependent LCG steps.  The empty asm keeps the
 * compiler from collapsing or vectorising the loop. */
static inline uint64_t fine_spin(uint64_t x, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        __asm__ volatile("" : "+r"(x));
    }
    return x & FINE_MASK;
}

/* Spin iterations per microsecond: the fastest of a few timed spins (the
 * fastest is the one least disturbed by the rest of the machine). */
static inline double fine_calibrate(void)
{
    const uint64_t n = 20000000;
    double best = 1e300;
    uint64_t sink = fine_spin(1, n / 10); /* warm up the clock */
    for (int r = 0; r < 5; r++) {
        double t0 = bench_now_ns();
        sink += fine_spin(sink, n);
        double t = bench_now_ns() - t0;
        if (t < best) best = t;
    }
    if (sink == 42) printf("#\n"); /* use the result */
    return (double)n / (best / 1000.0);
}

static inline long fine_items(const fine_opts *o, int k)
{
    return o->quick ? fine_items_full[k] / 10 : fine_items_full[k];
}

static inline uint64_t fine_iters(const fine_opts *o, int k)
{
    return (uint64_t)llround(fine_work_us[k] * o->iters_per_us);
}

/* The sequential result: final states of w1 and w2 after n items. */
static inline void fine_expected(long n, uint64_t iters, uint64_t *s1, uint64_t *s2)
{
    uint64_t a = 0, b = 0;
    for (long x = 0; x < n; x++) {
        a = fine_fold(a, (uint64_t)x);
        b = fine_fold(b, fine_spin(a, iters));
    }
    *s1 = a, *s2 = b;
}

static inline void fine_parse(int argc, char **argv, const char *prog, fine_opts *o)
{
    o->workers = 2, o->runs = 5, o->quick = 0, o->iters_per_us = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workers")) o->workers = bench_int_arg(prog, argv[i], argv[i + 1], 4096), i++;
        else if (!strcmp(argv[i], "--runs")) o->runs = bench_int_arg(prog, argv[i], argv[i + 1], FINE_MAX_RUNS), i++;
        else if (!strcmp(argv[i], "--quick")) o->quick = 1;
        else if (!strcmp(argv[i], "--iters-per-us")) o->iters_per_us = bench_double_arg(prog, argv[i], argv[i + 1]), i++;
        else {
            fprintf(stderr, "usage: %s [--workers N] [--runs R] [--quick] [--iters-per-us X]\n", prog);
            exit(64);
        }
    }
    if (o->iters_per_us == 0) o->iters_per_us = fine_calibrate();
}

/* what: the implementation; note: an extra comment line, or NULL. */
static inline void fine_header(const fine_opts *o, const char *what, const char *note)
{
    char many[32];
    snprintf(many, sizeof many, "ns_%dw", o->workers);
    printf("# %s: pipeline w1 (serial) -> p (pure, W us) -> w2 (serial)\n", what);
    printf("# calibration: %.3f iters/us\n", o->iters_per_us);
    printf("# items per run: %ld, %ld, %ld, %ld for W = 0.1, 1, 10, 100 us (about 1 s of work%s)\n",
           fine_items(o, 0), fine_items(o, 1), fine_items(o, 2), fine_items(o, 3),
           o->quick ? " / 10: --quick" : "");
    printf("# median of %d run(s), ns per item; seq = the plain C loop (one run);\n", o->runs);
    printf("# overhead = ns per item at 1 worker - W; one untimed warm-up run per row and worker count\n");
    if (note) printf("# %s\n", note);
    printf("# %-7s %8s %9s %9s %9s %8s %14s\n", "work_us", "items", "ns_seq", "ns_1w", many, "speedup",
           "overhead_1w_ns");
}

static inline void fine_row(const fine_opts *o, int k, double seq, double ns1, double nsn)
{
    printf("%-9g %8ld %9.1f %9.1f %9.1f %8.2f %14.1f\n", fine_work_us[k], fine_items(o, k), seq, ns1, nsn,
           ns1 / nsn, ns1 - fine_work_us[k] * 1000.0);
    fflush(stdout);
}

/* Runs fine_expected once: the states to check against and the ns per item
 * of the plain sequential loop. */
static inline double fine_seq(long n, uint64_t iters, uint64_t *s1, uint64_t *s2)
{
    double t0 = bench_now_ns();
    fine_expected(n, iters, s1, s2);
    return (bench_now_ns() - t0) / (double)n;
}

#endif /* STC_BENCH_FINE_COMMON_H */
