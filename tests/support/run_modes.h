/* run_modes.h - compiling a test program and running it under the reference
 * evaluator or the parallel runtime in a given mode, for every test that does
 * so: the unit tests, lang_runner, difftest, fault_oom and fuzz_run. Uses the
 * public API only (stc.h); built once, as the static library stc_test_support.
 *
 * A mode is the reference, or a worker count and a queue capacity, with the
 * testing aids (schedule perturbation, watchdog). trun_opts turns a mode into
 * run options, and trun_run is the one place that sets the mode's testing
 * aids (they are not public run options: src/api/testing.h). */
#ifndef STC_TESTS_RUN_MODES_H
#define STC_TESTS_RUN_MODES_H

#include <stdbool.h>
#include <stddef.h>

#include "stc.h"

typedef struct trun_mode {
    bool reference;             /* the reference evaluator; else the runtime with: */
    int workers, queue_capacity; /* queue_capacity 0: the default */
    unsigned perturb_seed;      /* schedule perturbation; 0: off */
    int watchdog_ms;            /* a pipeline running longer aborts with its queues; 0: off */
    int trial_refusals;         /* a job's first trial decisions say "stays fused"; 0: off */
    int shuttle_items;          /* > 0: jobs go to the pipeline and back every this many items; 0: off */
    bool profile_sample;        /* at 1 worker: --profile, its pipelines sampled at 2 workers on any machine */
    /* Per plan stage s < 8: > 0, the work in ns an item that the placement
     * of serial stages on a transport's peers counts for each item of s it
     * measures, instead of the clock (run_testing_opts.owned_item_ns). */
    long long owned_item_ns[8];
} trun_mode;

#define TRUN_MAX_WORKERS 4096 /* what stc_run accepts */

/* The run options for m (all else default). */
stc_run_opts trun_opts(const trun_mode *m);

/* "ref", "workers=2 qc=1", "workers=2 qc=1 perturb=7" (into buf, returned). */
const char *trun_mode_name(const trun_mode *m, char *buf, size_t cap);

/* Every combination of a comma-separated worker list ("ref,1,2,8"; ref: the
 * reference, once, whatever the capacities) and a capacity list ("1,0"),
 * each with perturb_seed and watchdog_ms, into modes[max]. Returns the
 * number of modes, or -1 for a malformed list or more than max modes. */
int trun_modes_parse(const char *workers, const char *capacities, unsigned perturb_seed, int watchdog_ms,
                     trun_mode *modes, int max);

/* Compiles src (len bytes) as file with env (NULL: stc_compile's default). Returns 0 with *prog, or the error code
 * with *prog NULL and, when diags_text is not NULL, the formatted
 * diagnostics in *diags_text (malloc'd; NULL when out of memory). */
int trun_compile(stc_env *env, const char *src, size_t len, const char *file, stc_program **prog,
                 char **diags_text);

/* What one run gave. */
typedef struct trun_outcome {
    int rc;              /* what stc_run or stc_run_stream returned */
    bool has_result;     /* it gave a result (the rest is zero without one) */
    int code;            /* the result's error: its code (0: none), */
    char *message;       /* its message alone (malloc'd; NULL: none), */
    int line, col;       /* and where it is (0: unknown) */
    char *json;          /* on success: stc_result_to_json (NULL: it failed, with json_errno) */
    int json_errno;
    char *error;         /* on failure: stc_result_error_format (NULL without a result) */
    stc_run_stats stats; /* zero without a result */
} trun_outcome;

/* Runs prog with opts (from trun_opts, perhaps with more set) and the
 * testing aids of the mode aids (NULL: none), through stc_run_stream with io
 * when the program takes input (io NULL: an empty input, no sink), else
 * through stc_run. Returns out->rc. */
int trun_run(stc_program *prog, const stc_run_opts *opts, const trun_mode *aids, const stc_stream *io,
             trun_outcome *out);
void trun_outcome_free(trun_outcome *o);

/* The outcome as one line to compare runs by: the JSON line, or
 * "error CODE (TEXT): FORMATTED ERROR" (malloc'd; NULL when out of memory). */
char *trun_outcome_text(const trun_outcome *o);

/* A run of prog in mode m as text to compare. A stream test gives one that
 * makes a fresh source and sink for every run. NULL: trun_outcome_text of
 * trun_run with trun_opts(m) and no input. */
typedef char *(*trun_runner)(stc_program *prog, const trun_mode *m, void *ud);

/* Runs prog under the reference, then in modes[0..n-1], and stops at the
 * first outcome that differs from the reference's. Returns -1 when all
 * agree, else the index of that mode with its outcome in *got (malloc'd).
 * *ref receives the reference's outcome (malloc'd). */
int trun_check_modes(stc_program *prog, const trun_mode *modes, int n, trun_runner run, void *ud, char **ref,
                     char **got);

#endif
