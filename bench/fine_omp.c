/* fine_omp.c - the fine-grained pipeline sweep with OpenMP, a second
 * yardstick for bench/fine.c: the same stages (fine_common.h) with the same
 * flags and output.
 *
 * OpenMP has no pipeline construct (and an `ordered` loop allows only one
 * ordered region per iteration, but we have two serial stages), so this is
 * the usual chunked form: per chunk of items, one thread runs w2 over the
 * previous chunk and w1 over this one (`single`), then the team runs p over
 * the chunk (`for`).  A chunk holds about 1 ms of work, so the two barriers
 * per chunk cost little; w1 and w2 take nanoseconds per item.
 *
 *   fine_omp [--workers N] [--runs R] [--quick] [--iters-per-us X]
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fine_common.h"

static long chunk_items(double work_us, int workers)
{
    long c = (long)ceil(1000.0 / work_us);
    return c < 8L * workers ? 8L * workers : c;
}

/* One run over n items; buf[i] holds item i's value as it moves through
 * the stages and ends as w2's output (as stc builds its result list). */
static void run_chunked(int workers, long n, uint64_t iters, long chunk, uint64_t *buf, uint64_t *s1,
                        uint64_t *s2)
{
    uint64_t a = 0, b = 0;
#pragma omp parallel num_threads(workers) shared(a, b)
    {
        /* One round past the end to run w2 over the last chunk. */
        for (long lo = 0; lo < n + chunk; lo += chunk) {
            long hi = lo + chunk < n ? lo + chunk : n;
#pragma omp single
            {
                for (long i = lo > 0 ? lo - chunk : 0; i < lo && i < n; i++) buf[i] = b = fine_fold(b, buf[i]);
                for (long i = lo; i < hi; i++) buf[i] = a = fine_fold(a, (uint64_t)i);
            }
#pragma omp for schedule(static)
            for (long i = lo; i < hi; i++) buf[i] = fine_spin(buf[i], iters);
        }
    }
    *s1 = a, *s2 = b;
}

/* Median ns per item of o->runs runs after one warm-up run (page faults,
 * the team's threads); 1 if a run gives a wrong result. */
static int time_runs(const fine_opts *o, int workers, int k, uint64_t s1, uint64_t s2, uint64_t *buf,
                     double *ns)
{
    long n = fine_items(o, k), chunk = chunk_items(fine_work_us[k], workers);
    uint64_t iters = fine_iters(o, k);
    double t[FINE_MAX_RUNS];
    for (int r = -1; r < o->runs; r++) {
        uint64_t a = 0, b = 0;
        double t0 = bench_now_ns();
        run_chunked(workers, n, iters, chunk, buf, &a, &b);
        if (r >= 0) t[r] = (bench_now_ns() - t0) / (double)n;
        if (a != s1 || b != s2 || buf[n - 1] != s2) {
            fprintf(stderr, "fine_omp: wrong result at %d worker(s), %ld items\n", workers, n);
            return 1;
        }
    }
    *ns = bench_median(t, o->runs);
    return 0;
}

int main(int argc, char **argv)
{
    fine_opts o;
    fine_parse(argc, argv, "fine_omp", &o);
    uint64_t *buf = malloc((size_t)fine_items(&o, 0) * sizeof *buf); /* 0 has the most items */
    if (!buf) {
        fprintf(stderr, "fine_omp: out of memory\n");
        return 1;
    }
    fine_header(&o, "OpenMP, chunked", "chunk: max(1000 / W, 8 * workers) items, about 1 ms of work");
    int bad = 0;
    for (int k = 0; k < FINE_NWORK && !bad; k++) {
        uint64_t s1, s2;
        double seq = fine_seq(fine_items(&o, k), fine_iters(&o, k), &s1, &s2), ns1 = 0, nsn = 0;
        bad = time_runs(&o, 1, k, s1, s2, buf, &ns1) || time_runs(&o, o.workers, k, s1, s2, buf, &nsn);
        if (!bad) fine_row(&o, k, seq, ns1, nsn);
    }
    free(buf);
    return bad;
}
