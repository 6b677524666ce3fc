// fine_tbb.cpp - the fine-grained pipeline sweep with oneTBB, the yardstick
// for bench/fine.c: the same stages (fine_common.h) as a
// tbb::parallel_pipeline of serial_in_order -> parallel -> serial_in_order
// filters, run in a task_arena of 1 and of N threads.  Same flags and output
// as fine.c.
//
//   fine_tbb [--workers N] [--runs R] [--quick] [--iters-per-us X]
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <vector>

#include "fine_common.h"

namespace {

// One run over n items; outputs of w2 go to out (as stc builds its result
// list).  Returns the final states of w1 and w2.
void run_pipeline(tbb::task_arena &arena, int workers, long n, uint64_t iters, std::vector<uint64_t> &out,
                  uint64_t *s1, uint64_t *s2)
{
    arena.execute([&] {
        long next = 0, done = 0;
        uint64_t a = 0, b = 0;
        // A few tokens per thread keep every thread busy without unbounded
        // buffering (the usual advice for parallel_pipeline).
        tbb::parallel_pipeline(
            static_cast<size_t>(4 * workers),
            tbb::make_filter<void, uint64_t>(tbb::filter_mode::serial_in_order,
                                             [&](tbb::flow_control &fc) -> uint64_t {
                                                 if (next == n) {
                                                     fc.stop();
                                                     return 0;
                                                 }
                                                 a = fine_fold(a, static_cast<uint64_t>(next++));
                                                 return a;
                                             }) &
                tbb::make_filter<uint64_t, uint64_t>(tbb::filter_mode::parallel,
                                                     [iters](uint64_t y) { return fine_spin(y, iters); }) &
                tbb::make_filter<uint64_t, void>(tbb::filter_mode::serial_in_order, [&](uint64_t z) {
                    b = fine_fold(b, z);
                    out[static_cast<size_t>(done++)] = b;
                }));
        *s1 = a;
        *s2 = b;
    });
}

// Median ns per item of o.runs runs after one warm-up run (the arena's
// threads start lazily); false if a run gives a wrong result.
bool time_runs(const fine_opts &o, int workers, long n, uint64_t iters, uint64_t s1, uint64_t s2, double *ns)
{
    tbb::task_arena arena(workers);
    std::vector<uint64_t> out(static_cast<size_t>(n));
    double t[FINE_MAX_RUNS];
    for (int r = -1; r < o.runs; r++) {
        uint64_t a = 0, b = 0;
        double t0 = bench_now_ns();
        run_pipeline(arena, workers, n, iters, out, &a, &b);
        if (r >= 0) t[r] = (bench_now_ns() - t0) / static_cast<double>(n);
        if (a != s1 || b != s2 || out[static_cast<size_t>(n - 1)] != s2) {
            fprintf(stderr, "fine_tbb: wrong result at %d worker(s), %ld items\n", workers, n);
            return false;
        }
    }
    *ns = bench_median(t, o.runs);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    fine_opts o;
    fine_parse(argc, argv, "fine_tbb", &o);
    fine_header(&o, "oneTBB parallel_pipeline", "tokens in flight: 4 * threads");
    for (int k = 0; k < FINE_NWORK; k++) {
        long n = fine_items(&o, k);
        uint64_t iters = fine_iters(&o, k), s1, s2;
        double seq = fine_seq(n, iters, &s1, &s2), ns1 = 0, nsn = 0;
        if (!time_runs(o, 1, n, iters, s1, s2, &ns1) || !time_runs(o, o.workers, n, iters, s1, s2, &nsn))
            return 1;
        fine_row(&o, k, seq, ns1, nsn);
    }
    return 0;
}
