/* profile.h - a run's profile as the result keeps it, the speedup model,
 * and the table `stc run --profile` prints. */
#ifndef STC_TRACE_PROFILE_H
#define STC_TRACE_PROFILE_H

#include <stddef.h>

#include "stc.h"

typedef struct result_profile {
    int workers;
    double wall_ms;             /* the whole run (stc_run) */
    int npipelines;
    double *pipeline_wall_ms;   /* per pipeline: time from start to end of its runs */
    double *pipeline_probe_ns;  /* per pipeline: wall ns per item its probes ran fused
                                   (src/flow/exec.c), 0: no probe; in a 1-worker
                                   profile, its fused run after the sample */
    double *pipeline_sample_ns; /* per pipeline, a 1-worker profile: wall ns per item
                                   its sample at 2 workers took, 0: not sampled */
    size_t nstages;
    stc_stage_profile *stages;  /* strings point into `strings` */
    char **strings;             /* owned: every name, kind and smap string */
    size_t nstrings;
} result_profile;

void stc__profile_free(result_profile *pf); /* NULL is a no-op */
/* Predicted speedup on `workers` over 1 worker (see stc.h). */
double stc__profile_predict(const result_profile *pf, int workers);
/* The model for one pipeline: its time on `workers` given its work (sum
 * of its stages' busy time) and span (its busiest serial stage), in any
 * unit.  The runtime uses it too, to keep a job that cannot gain fused. */
double stc__profile_pipeline_time(double work, double span, int workers);
/* A job at 2+ workers goes on as the pipeline only when the model above
 * predicts at least this gain (src/flow/exec.c's trial); else it stays
 * fused on one thread, and so do the predictions below. */
#define STC__PROFILE_FUSE_GAIN 1.25
/* ... unless its items are few or coarse: a list of fewer than this many
 * items, or items of this many ns or more each, go to the pipeline. */
#define STC__PROFILE_FUSE_MIN_ITEMS 64
#define STC__PROFILE_COARSE_NS 50000.0
/* A pipeline's probe (src/flow/exec.c) keeps it only when it was this
 * much faster per item than the job fused on one worker. */
#define STC__PROFILE_PROBE_MARGIN 1.05
/* What an item costs the pipeline at 2+ workers each time it enters the
 * next stage on the other core (ns): measured on the development VM
 * (2 vCPUs, 200-290 ns a cache line between cores, batches of ~50 us):
 * the stages' busy time at 2 workers over their time at 1, divided by the
 * hand-offs, was 6-9 ns on bench/stream's programs and logstats. */
#define STC__PROFILE_HANDOFF_NS 7.5
/* The time of one pipeline of `items` items on `workers` as the runtime
 * will run it: the model's time when it gains at least
 * STC__PROFILE_FUSE_GAIN (or its items are few or coarse), else its work
 * (fused).  work and span in ms. */
double stc__profile_run_time(double work, double span, long long items, int workers);
/* Predicted wall time in ms on `workers`. */
double stc__profile_predict_ms(const result_profile *pf, int workers);
char *stc__profile_format(const result_profile *pf);

#endif
