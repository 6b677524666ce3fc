/* profile.c - the speedup model and the profile table.
 *
 * Model: a pipeline's stages are measured by their busy time.  With P
 * workers a pipeline takes at least its work divided by P, and at least
 * its busiest serial stage (a serial stage runs one batch at a time, so
 * it alone bounds the pipeline, whatever P); we take the larger of the
 * two (Brent's bound, the serial stage as the span).  Two measured costs
 * are added (profile_pipeline_ms): the pipeline's own time outside its
 * stages, as it was measured, and at 2+ workers a cost per item handed to
 * the next stage.  A pipeline the bound gives less than
 * STC__PROFILE_FUSE_GAIN runs fused at any worker count (the runtime
 * decides with this same bound on a trial's stage times), so it is
 * predicted at its one-worker time.  Time outside pipelines (main's own
 * evaluation) stays as it was.  A profile taken at 2+ workers whose
 * pipeline was probed (src/flow/exec.c: the job ran fused for a while in
 * the middle of the run, timed on one worker) takes its 1-worker time
 * from the probes' wall time per item, since its stages' busy times carry
 * what crossing between the cores cost there.  A 1-worker profile whose
 * pipeline was sampled at 2 workers (exec.c, "The sample") takes its
 * 1-worker time from the fused rest of the run and its 2-worker time from
 * the sample, which paid for the crossing the stage times cannot show
 * (unless the probe's rule would keep the job fused); more workers scale
 * the model by what the sample made of its 2-worker time.  Not seen: fill
 * and drain (short lists of coarse items come out a few percent
 * optimistic), any machine whose hand-off cost differs from
 * STC__PROFILE_HANDOFF_NS's in an unsampled profile (one CPU allowed, or
 * coarse items), whether crossing grows beyond 2 workers, and CPUs of
 * unequal speed: our VM's second vCPU has run cache-bound code 1.5x
 * slower at times, and a probe or a 1-worker run that lands there says
 * so. */
#include "trace/profile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

void stc__profile_free(result_profile *pf)
{
    if (!pf) return;
    for (size_t i = 0; i < pf->nstrings; i++) free(pf->strings[i]);
    free(pf->strings);
    free(pf->stages);
    free(pf->pipeline_wall_ms);
    free(pf->pipeline_probe_ns);
    free(pf->pipeline_sample_ns);
    free(pf);
}

/* A pipeline as the model sees it: its stages' work (sum of busy) and
 * span (busiest serial stage), ms; its items (its busiest stage's: a
 * branch's stage sees fewer); its hand-offs (items entering a stage after
 * the first: each crosses to another worker at 2+ workers). */
typedef struct profile_pipe {
    double work, span;
    long long items, handoffs;
} profile_pipe;

static profile_pipe profile_pipeline(const result_profile *pf, int p)
{
    profile_pipe pp = {0};
    bool first = true;
    for (size_t i = 0; i < pf->nstages; i++) {
        const stc_stage_profile *s = &pf->stages[i];
        if (s->pipeline != p) continue;
        pp.work += s->busy_ms;
        if (s->serial && s->busy_ms > pp.span) pp.span = s->busy_ms;
        if (s->items > pp.items) pp.items = s->items;
        if (!first) pp.handoffs += s->items;
        first = false;
    }
    return pp;
}

static double profile_outside_ms(const result_profile *pf)
{
    double in = 0;
    for (int p = 0; p < pf->npipelines; p++) in += pf->pipeline_wall_ms[p];
    double out = pf->wall_ms - in;
    return out > 0 ? out : 0;
}

double stc__profile_pipeline_time(double work, double span, int workers)
{
    double per = work / (workers > 0 ? workers : 1);
    return per > span ? per : span;
}

double stc__profile_run_time(double work, double span, long long items, int workers)
{
    double t = stc__profile_pipeline_time(work, span, workers);
    bool few_or_coarse = items < STC__PROFILE_FUSE_MIN_ITEMS || work * 1e6 >= STC__PROFILE_COARSE_NS * (double)items;
    return workers > 1 && !few_or_coarse && work < STC__PROFILE_FUSE_GAIN * t ? work : t;
}

/* Pipeline p's predicted wall time on `workers`, ms.  Its work at one
 * worker is the stages' busy time, less, in a profile taken at 2+
 * workers, what its hand-offs cost there (STC__PROFILE_HANDOFF_NS each:
 * the values a stage reads were written on the other core); its own
 * time outside the stages (cutting batches, releasing them, waiting for a
 * turn: the pipeline's wall time beyond its work per worker) is added as
 * it was measured, a cost no worker count divides.  On 2+ workers the
 * work is that plus the hand-offs', divided by the workers, or the busiest
 * serial stage; a pipeline that would not gain stays fused (its one-worker
 * time). */
static double profile_pipeline_ms(const result_profile *pf, int p, int workers)
{
    profile_pipe pp = profile_pipeline(pf, p);
    int measured = pf->workers > 0 ? pf->workers : 1;
    double handoff_ms = (double)pp.handoffs * STC__PROFILE_HANDOFF_NS / 1e6;
    double work1 = pp.work - (measured > 1 ? handoff_ms : 0);
    if (work1 < 0) work1 = 0;
    double outside = pf->pipeline_wall_ms[p] - pp.work / measured;
    if (outside < 0) outside = 0;
    double one = work1 + outside;
    /* Measured at 2+ workers, the stages' busy times carry what crossing
     * between the cores cost there (on a far placement of our VM twice
     * what one worker takes); a probe timed the job on one worker. */
    double probe_ns = pf->pipeline_probe_ns ? pf->pipeline_probe_ns[p] : 0;
    double sample_ns = pf->pipeline_sample_ns ? pf->pipeline_sample_ns[p] : 0;
    if ((measured > 1 || sample_ns > 0) && probe_ns > 0) one = probe_ns * (double)pp.items / 1e6;
    if (workers <= 1) return one;
    double many = stc__profile_run_time(work1 + handoff_ms, pp.span, pp.items, workers) + outside;
    /* the runtime's rule, on the stages' times as its trial measures them */
    bool fused = stc__profile_run_time(work1, pp.span, pp.items, workers) == work1;
    if (fused || sample_ns <= 0) return fused ? one : many;
    /* A 1-worker profile's sample timed the pipeline at 2 workers, with
     * what its values' crossing between the cores cost.  The runtime's
     * probe keeps the pipeline only if it beats one worker by the margin;
     * more workers: the model's time, scaled as the sample scaled its
     * 2-worker time. */
    double two = sample_ns * (double)pp.items / 1e6;
    if (probe_ns > 0 && one < STC__PROFILE_PROBE_MARGIN * two) return one;
    double model2 = stc__profile_run_time(work1 + handoff_ms, pp.span, pp.items, 2) + outside;
    return model2 > 0 ? many * two / model2 : two;
}

double stc__profile_predict_ms(const result_profile *pf, int workers)
{
    if (!pf || workers < 1) return 0;
    double t = profile_outside_ms(pf);
    for (int p = 0; p < pf->npipelines; p++) t += profile_pipeline_ms(pf, p, workers);
    return t;
}

double stc__profile_predict(const result_profile *pf, int workers)
{
    double one = stc__profile_predict_ms(pf, 1), many = stc__profile_predict_ms(pf, workers);
    return many > 0 ? one / many : 0;
}

char *stc__profile_format(const result_profile *pf)
{
    if (!pf) return NULL;
    buf b = BUF_INIT;
    stc__buf_printf(&b, "profile: %d worker%s, %.3f ms wall, %d pipeline%s\n", pf->workers, pf->workers == 1 ? "" : "s",
               pf->wall_ms, pf->npipelines, pf->npipelines == 1 ? "" : "s");
    for (int p = 0; p < pf->npipelines; p++) {
        double total = 0, work = profile_pipeline(pf, p).work;
        const stc_stage_profile *first = NULL, *bottleneck = NULL;
        for (size_t i = 0; i < pf->nstages; i++) {
            const stc_stage_profile *s = &pf->stages[i];
            if (s->pipeline != p) continue;
            if (!first) first = s;
            total += s->busy_ms;
            if (!bottleneck || (s->serial ? s->busy_ms : s->busy_ms / pf->workers) >
                                   (bottleneck->serial ? bottleneck->busy_ms : bottleneck->busy_ms / pf->workers))
                bottleneck = s;
        }
        if (!first) continue;
        stc__buf_printf(&b, "\npipeline %d: smap at %s, %.3f ms wall, work %.3f ms\n", p, first->smap,
                   pf->pipeline_wall_ms[p], work);
        /* Columns as wide as their widest entry ("serial (calls recursive
         * function g)" is longer than most), at least the usual widths. */
        int wname = 28, wkind = 26;
        for (size_t i = 0; i < pf->nstages; i++) {
            const stc_stage_profile *s = &pf->stages[i];
            if (s->pipeline != p) continue;
            int nl = snprintf(NULL, 0, "%s (line %d)", s->name, s->line), kl = (int)strlen(s->kind);
            if (nl > wname) wname = nl;
            if (kl > wkind) wkind = kl;
        }
        stc__buf_printf(&b, "  %-*s %-*s %10s %10s %6s %10s %10s\n", wname, "stage", wkind, "kind", "items", "busy ms",
                   "share", "us/item", "queued ms");
        for (size_t i = 0; i < pf->nstages; i++) {
            const stc_stage_profile *s = &pf->stages[i];
            if (s->pipeline != p) continue;
            buf name = BUF_INIT;
            stc__buf_printf(&name, "%s (line %d)", s->name, s->line);
            char *label = stc__buf_take(&name);
            stc__buf_printf(&b, "  %-*s %-*s %10lld %10.3f %5.1f%% %10.3f %10.3f\n", wname, label ? label : s->name,
                       wkind, s->kind,
                       s->items, s->busy_ms, total > 0 ? 100.0 * s->busy_ms / total : 0.0,
                       s->items > 0 ? 1000.0 * s->busy_ms / (double)s->items : 0.0, s->queued_ms);
            free(label);
        }
        if (bottleneck)
            stc__buf_printf(&b, "  bottleneck: %s (line %d), %s: %s\n", bottleneck->name, bottleneck->line,
                       bottleneck->serial ? "serial" : "replicated",
                       bottleneck->serial ? "no number of workers makes this pipeline faster than it"
                                          : "more workers would help");
        double sample_ns = pf->pipeline_sample_ns ? pf->pipeline_sample_ns[p] : 0;
        double probe_ns = pf->pipeline_probe_ns ? pf->pipeline_probe_ns[p] : 0;
        if (sample_ns > 0)
            stc__buf_printf(&b, "  sampled at 2 workers: %.3f us/item (1 worker, the rest of the run: %.3f us/item)\n",
                            sample_ns / 1000.0, probe_ns / 1000.0);
    }
    stc__buf_printf(&b, "\npredicted speedup over 1 worker (outside pipelines: %.3f ms, kept sequential):\n",
               profile_outside_ms(pf));
    static const int ws[] = {1, 2, 4, 8, 16, 64};
    stc__buf_printf(&b, "  %-10s", "workers");
    for (int i = 0; i < 6; i++) stc__buf_printf(&b, " %8d", ws[i]);
    stc__buf_printf(&b, "\n  %-10s", "speedup");
    for (int i = 0; i < 6; i++) stc__buf_printf(&b, " %8.2f", stc__profile_predict(pf, ws[i]));
    stc__buf_printf(&b, "\n  %-10s", "wall ms");
    for (int i = 0; i < 6; i++) stc__buf_printf(&b, " %8.1f", stc__profile_predict_ms(pf, ws[i]));
    bool sampled = false;
    for (int p = 0; pf->pipeline_sample_ns && p < pf->npipelines; p++) sampled |= pf->pipeline_sample_ns[p] > 0;
    stc__buf_printf(&b, "\n  (this run: %d worker%s%s, %.1f ms measured, %.1f ms predicted%s)\n", pf->workers,
                    pf->workers == 1 ? "" : "s", sampled ? " and its samples at 2" : "", pf->wall_ms,
                    stc__profile_predict_ms(pf, pf->workers), sampled ? " for 1 worker alone" : "");
    return stc__buf_take(&b);
}
