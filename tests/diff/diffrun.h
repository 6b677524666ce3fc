/* diffrun.h - running one program under the reference evaluator and the
 * runtime in several modes and comparing the outcomes (difftest's core),
 * in this process or in a child process that may crash or hang. */
#ifndef STC_DIFF_DIFFRUN_H
#define STC_DIFF_DIFFRUN_H

#include <stdbool.h>
#include <stddef.h>

#define DIFF_TIMEOUT_S 60 /* a program with no outcome by then is a hang */

typedef struct diff_mode {
    int workers, queue_capacity; /* queue_capacity 0: the default */
    bool perturb;                /* run_testing_opts.perturb_seed = the seed */
    int shuttle;                 /* run_testing_opts.shuttle_items (0: off) */
    bool sample;                 /* a 1-worker profile sampling its pipelines at 2 (run_testing_opts.profile_sample) */
} diff_mode;

/* workers 1, 2, 3, 8 x queue capacities 1, 0; two where jobs go between
 * fused and the pipeline every few items (the shuttle); two 1-worker
 * profiles that sample their pipelines at 2 workers; then two perturbed
 * modes. */
extern const diff_mode diff_modes[];
extern int diff_nmodes;          /* modes in use: 12, or 14 with --perturb */
extern bool diff_use_fork;       /* false: run everything in this process */
extern unsigned long long diff_seed; /* the seed being tested (for perturb_seed) */

/* What the runs did (at 8 workers, default queue capacity). */
typedef struct diff_totals {
    long long pipelines, sequential, items, task_groups, errors;
    long long shuttled; /* the shuttle modes' trips back to fused (smaps_retreated) */
    long long sampled;  /* the sample modes' jobs fused after their sample (smaps_retreated) */
} diff_totals;

enum { V_AGREE, V_MISMATCH, V_COMPILE, V_CRASH };
typedef struct verdict {
    int kind, mode, status; /* mode: index of the mismatching mode; status: the child's wait status */
    char *ref, *got;        /* V_MISMATCH: both outcomes; V_COMPILE: diagnostics; V_CRASH: what happened */
} verdict;

char *xprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
const char *diff_mode_name(int mode); /* "workers=2 qc=1"; a static buffer */
void verdict_free(verdict *v);

/* Compiles src and runs it under the reference, then in diff_modes[first]
 * `repeat` times, then in every mode; stops at the first outcome that
 * differs from the reference's. tot may be NULL. */
void diff_check_here(const char *src, int first, int repeat, verdict *v, diff_totals *tot);

/* The same in a child process (unless diff_use_fork is false): a child that
 * dies or has no outcome within DIFF_TIMEOUT_S gives V_CRASH. quiet: the
 * child's stderr goes to /dev/null. */
void diff_check(const char *src, int first, int repeat, verdict *v, diff_totals *tot, bool quiet);

/* The reference's outcome as a tests/lang expectation line ("-- expect: ..."
 * or "-- expect runtime error: L:C: ..."), computed in a child. */
char *diff_expectation(const char *src);

/* The child-to-parent protocol: a verdict and totals, streamed. */
void diff_send(int fd, const verdict *v, const diff_totals *t);
bool diff_receive(int fd, verdict *v, diff_totals *t); /* false at EOF or on a short record */
void diff_quiet_stderr(void);

#endif
