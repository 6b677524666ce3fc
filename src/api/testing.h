/* testing.h - run options for stc's own test programs, not for hosts:
 * they shake the schedule and guard against hangs.  Not installed and not
 * in stc.h; tests/lang_runner.c, tests/diff and tests/unit include it from
 * src/ and link the static library. */
#ifndef STC_API_TESTING_H
#define STC_API_TESTING_H

#include "stc.h"

#define RUN_TESTING_STAGES 8

typedef struct run_testing_opts {
    /* Workers yield and sleep at random around queue operations, seeded
     * with this, to shake out schedule-dependent bugs (0: off). */
    unsigned perturb_seed;
    /* A pipeline that runs longer than this prints its queues to stderr
     * and aborts the process (0: off; negative: STC_EINVAL). */
    int watchdog_ms;
    /* The first this many trial decisions of each job at 2+ workers say
     * "stays fused" whatever the times (src/flow/exec.c), so that a test
     * sees a later window decide (0: off). */
    int trial_refusals;
    /* > 0: at 2+ workers every trial decision sends the job to the
     * pipeline, which goes back to fused once this many items have
     * finished in it, whatever the times (src/flow/exec.c): a job goes
     * back and forth every few batches (0: off). */
    int shuttle_items;
    /* A 1-worker --profile samples its pipelines at 2 workers (exec.c,
     * "The sample") when the machine has 2+ CPUs: 1 samples on any
     * machine, -1 never, 0 as the machine allows. */
    int profile_sample;
    /* The figures the placement of serial stages on a transport's peers
     * decides on (src/flow/owned.c), instead of the clock: per plan stage s
     * < RUN_TESTING_STAGES, > 0 counts each item of stage s that a peer
     * ran (or, for a stage kept here by an earlier job's verdict, that
     * ran here) as this many ns of work, whatever was measured (0: the
     * measure). */
    long long owned_item_ns[RUN_TESTING_STAGES];
} run_testing_opts;

/* stc_run_stream (io NULL: stc_run) with the testing options t (NULL:
 * none).  The reference evaluator ignores them. */
int stc__run_testing(stc_program *prog, const stc_run_opts *opts, const run_testing_opts *t, const stc_stream *io,
                stc_result **out);

#endif
