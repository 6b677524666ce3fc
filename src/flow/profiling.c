/* profiling.c - what each pipeline stage cost: per-worker counters that the
 * stages update (profile runs), the stage slices of a trace, and the
 * profile that stc_result_profile_* read, built from the counters after the
 * run. */
#include <stdlib.h>
#include <string.h>

#include "flow/job.h"
#include "trace/profile.h"
#include "trace/trace.h"
#include "util/buf.h"

/* Worker w's cells of stage s: a row per worker, padded to whole cache
 * lines (cells is 64-byte aligned) so that workers do not share one. */
static size_t flow_prof_row(const flow_plan *pl) { return ((size_t)(pl->nstages + 2) * 3 + 7) / 8 * 8; }
static uint64_t *flow_prof_cell(const flow_plan_prof *pf, const flow_plan *pl, int w, int s)
{
    return pf->cells + (size_t)w * flow_prof_row(pl) + (size_t)s * 3;
}

void stc__flow_prof_note(flow_job *job, int stage, const char *name, int worker, uint64_t t0, uint64_t t1, int nran,
                    uint64_t seq)
{
    flow_runtime *rt = job->rt;
    if (rt->profile) {
        uint64_t *cell = flow_prof_cell(job->prof, job->plan, worker, stage);
        cell[0] += t1 - t0;
        cell[1] += (uint64_t)nran;
        cell[2]++;
    }
    if (rt->trace) stc__trace_slice(rt->trace, worker, name, "stage", t0, t1, nran, (long long)seq);
}

int stc__flow_prof_init(flow_runtime *rt, const flow_plan *pl, flow_plan_prof *pf)
{
    size_t ns = (size_t)pl->nstages;
    *pf = (flow_plan_prof){.order = -1};
    pf->names = calloc(ns + 1, sizeof *pf->names);
    size_t ncells = (size_t)rt->workers * flow_prof_row(pl);
    pf->cells = aligned_alloc(64, ncells * sizeof *pf->cells);
    if (pf->cells) memset(pf->cells, 0, ncells * sizeof *pf->cells);
    pf->wait_ns = calloc(ns + 1, sizeof *pf->wait_ns);
    if (!pf->names || !pf->cells || !pf->wait_ns) return -1;
    for (size_t i = 0; i < ns; i++) {
        buf b = BUF_INIT;
        stc__flow_stage_describe(rt->fi, pl, (int)i, &b);
        stc__buf_printf(&b, " (line %d)", stc__flow_stage_line(pl, (int)i));
        if (!(pf->names[i] = stc__buf_take(&b))) return -1;
    }
    return 0;
}

void stc__flow_prof_free(const flow_plan *pl, flow_plan_prof *pf)
{
    for (int i = 0; pf->names && i < pl->nstages; i++) free(pf->names[i]);
    free(pf->names);
    free(pf->cells);
    free(pf->wait_ns);
}

/* ---- The profile of a run ----------------------------------------------------- */

/* Keeps s in pf->strings (taking it); NULL when s is NULL or no memory. */
static const char *flow_keep(result_profile *pf, char *s)
{
    if (!s) return NULL;
    pf->strings[pf->nstrings++] = s;
    return s;
}

/* The stage shown in profile row k of a plan: a stream's input first and
 * its output last. */
static int flow_row_stage(const flow_plan *pl, const flow_plan_prof *pp, int k)
{
    if (!pp->stream) return k;
    if (k == 0) return FLOW_INPUT_STAGE(pl);
    return k - 1 < pl->nstages ? k - 1 : FLOW_OUTPUT_STAGE(pl);
}

/* Fills sp, row k of plan pl's pipeline `order` (at smap), from its
 * counters; -1 when out of memory. */
static int flow_profile_row(const flow_runtime *rt, const flow_plan *pl, const flow_plan_prof *pp, int k, int order,
                            const char *smap, result_profile *pf, stc_stage_profile *sp)
{
    int s = flow_row_stage(pl, pp, k);
    buf name = BUF_INIT;
    bool io = s >= pl->nstages;
    if (io) stc__buf_puts(&name, s == FLOW_INPUT_STAGE(pl) ? "input" : "output");
    else stc__flow_stage_describe(rt->fi, pl, s, &name);
    sp->pipeline = order;
    sp->smap = smap;
    sp->name = flow_keep(pf, stc__buf_take(&name));
    buf kind = BUF_INIT;
    if (io) stc__buf_puts(&kind, s == FLOW_INPUT_STAGE(pl) ? "serial, source" : "serial, sink");
    else stc__flow_stage_kind_why(rt->fi, pl, s, &kind);
    sp->kind = flow_keep(pf, stc__buf_take(&kind));
    if (!sp->name || !sp->kind) return -1;
    sp->line = io ? pl->smap->u.call.callee_loc.line : stc__flow_stage_line(pl, s);
    sp->serial = io || pl->stages[s].serial;
    uint64_t busy = 0, items = 0, batches = 0;
    for (int w = 0; w < rt->workers; w++) {
        const uint64_t *cell = flow_prof_cell(pp, pl, w, s);
        busy += cell[0];
        items += cell[1];
        batches += cell[2];
    }
    sp->busy_ms = (double)busy / 1e6;
    sp->items = (long long)items;
    sp->batches = (long long)batches;
    sp->queued_ms = s == FLOW_INPUT_STAGE(pl) ? 0.0 : (double)pp->wait_ns[s] / 1e6;
    return 0;
}

result_profile *stc__flow_runtime_profile(const flow_runtime *rt, double wall_ms)
{
    result_profile *pf = calloc(1, sizeof *pf);
    if (!pf) return NULL;
    pf->workers = flow_parallel_workers(rt); /* a sample's runtime has 2, the run 1 */
    pf->wall_ms = wall_ms;
    pf->npipelines = rt->npipelines;
    size_t nst = 0;
    for (int i = 0; rt->profs && i < rt->nplans; i++)
        if (rt->profs[i].order >= 0) nst += (size_t)rt->plans[i]->nstages + 2;
    pf->pipeline_wall_ms = calloc((size_t)rt->npipelines + 1, sizeof *pf->pipeline_wall_ms);
    pf->pipeline_probe_ns = calloc((size_t)rt->npipelines + 1, sizeof *pf->pipeline_probe_ns);
    pf->pipeline_sample_ns = calloc((size_t)rt->npipelines + 1, sizeof *pf->pipeline_sample_ns);
    pf->stages = calloc(nst + 1, sizeof *pf->stages);
    pf->strings = calloc(3 * nst + (size_t)rt->npipelines + 1, sizeof *pf->strings);
    if (!pf->pipeline_wall_ms || !pf->pipeline_probe_ns || !pf->pipeline_sample_ns || !pf->stages || !pf->strings) goto oom;
    /* Stages in pipeline order, then stage order. */
    for (int order = 0; order < rt->npipelines; order++) {
        for (int i = 0; i < rt->nplans; i++) {
            const flow_plan_prof *pp = &rt->profs[i];
            const flow_plan *pl = rt->plans[i];
            if (pp->order != order) continue;
            pf->pipeline_wall_ms[order] = (double)pp->wall_ns / 1e6;
            if (pp->probe_items) pf->pipeline_probe_ns[order] = (double)pp->probe_ns / (double)pp->probe_items;
            if (pp->sample_items) pf->pipeline_sample_ns[order] = (double)pp->sample_ns / (double)pp->sample_items;
            buf where = BUF_INIT;
            stc__buf_printf(&where, "%s:%d:%d", rt->p->file ? rt->p->file : "<input>", pl->smap->u.call.callee_loc.line,
                       pl->smap->u.call.callee_loc.col);
            const char *smap = flow_keep(pf, stc__buf_take(&where));
            if (!smap) goto oom;
            /* A stream's input and output are serial stages too: reading
             * and writing items costs time no worker count divides. */
            int nrows = pl->nstages + (pp->stream ? 2 : 0);
            for (int k = 0; k < nrows; k++)
                if (flow_profile_row(rt, pl, pp, k, order, smap, pf, &pf->stages[pf->nstages++]) != 0) goto oom;
        }
    }
    return pf;
oom:
    stc__profile_free(pf);
    return NULL;
}
