/* nested.c - nested smaps: where an smap's parallelism goes when its items
 * run smaps of their own, and smaps too short to pay for a pipeline.
 *
 * Worker contexts have no hooks, so an smap inside a pipeline stage runs
 * sequentially there.  An outer smap whose pipeline could not keep the
 * workers busy (stc__flow_nested_loop_pays: its inner smaps write threads
 * and so sit in a serial stage, or its few items do not spread evenly over
 * the workers) and that has at most FLOW_NESTED_MAX_LOOP items is
 * therefore run as main's own loop over its items, the evaluator's smap
 * loop on main's context: each inner smap main reaches is offered to the
 * runtime and runs as a pipeline on the whole pool (3 rows of 100k items
 * use both workers, 2 outer items each with a long inner pipeline of
 * threads overlap that pipeline's stages).  Otherwise the outer smap stays
 * a pipeline, its inner smaps sequential inside its stages: its items
 * already feed every worker, and an inner smap never becomes a pipeline of
 * its own per outer item.
 *
 * The loop is measured: when the inner pipelines took less than half of
 * its time, the work is in the outer items themselves (tiny inner smaps),
 * and that smap runs as a pipeline from then on.  An smap whose pipeline
 * runs took under FLOW_SMAP_MIN_NS three times in a row is left to the
 * evaluator from then on: waking the workers (8-21 us on our VMs) costs
 * more than it saves.  Which way an smap runs never changes a result or
 * an error: the loop is the reference's own, and a pipeline's result and
 * first error are the reference's (docs/DESIGN.md sections 3, 6). */
#include <stddef.h>

#include "flow/flow_internal.h"
#include "flow/job.h"

#define FLOW_NESTED_ITEMS_PER_WORKER 4 /* fewer outer items per worker may not spread evenly */
#define FLOW_NESTED_MAX_LOOP 256       /* an outer smap looped on main has at most so many items */
#define FLOW_SMAP_MIN_NS 50000         /* a pipeline run shorter than this did not pay */
#define FLOW_SMAP_CHEAP_RUNS 3         /* ... so many times in a row: leave it to the evaluator */

void stc__flow_nested_use_init(const flow_info *fi, const flow_plan *pl, flow_plan_use *use)
{
    *use = (flow_plan_use){0};
    for (int t = 0; t < pl->nstages; t++) {
        const flow_stage *st = &pl->stages[t];
        for (int k = st->first; k < st->first + st->count; k++) {
            const ir_expr *e = pl->steps[k].e;
            if (!e || !stc__flow_expr_smaps(fi, e)) continue;
            use->nested = true;
            use->nested_serial |= st->serial;
        }
    }
}

/* The rule.  Looping on main pays when the outer pipeline cannot keep
 * every worker busy on the inner work: the inner smaps run in a serial
 * stage (they write threads, so the outer items pass them one at a time),
 * or the outer items cannot be spread evenly over the workers (fewer than
 * FLOW_NESTED_ITEMS_PER_WORKER per worker and not a multiple of their
 * number: 3 rows on 2 workers keep one idle a third of the time, 4 rows
 * do not).  With one worker there is nothing to gain. */
bool stc__flow_nested_loop_pays(const flow_runtime *rt, const flow_plan_use *use, size_t n)
{
    size_t w = (size_t)flow_parallel_workers(rt);
    if (!use->nested || use->outer_pays || w < 2 || n > FLOW_NESTED_MAX_LOOP) return false;
    if (use->nested_serial) return true;
    return n < FLOW_NESTED_ITEMS_PER_WORKER * w && n % w != 0;
}

int stc__flow_nested_loop(flow_runtime *rt, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv,
                          const eval_items *xs, flow_plan_use *use, stc_value *out)
{
    uint64_t t0 = flow_now_ns(), inner0 = rt->pipeline_ns;
    ptrdiff_t at = use - rt->uses; /* the inner smaps' new plans may move rt->uses */
    rt->stats.smaps_looped++;
    int rc = stc__eval_smap_seq(cx, e->u.call.callee_loc, thread, fnv, xs, out);
    use = &rt->uses[at];
    /* rt->pipeline_ns counts only pipelines run by main (this loop's inner
     * smaps, the hooks being main's alone), so the difference is theirs. */
    uint64_t inner = rt->pipeline_ns - inner0, wall = flow_now_ns() - t0;
    if (rc == 0 && 2 * inner < wall) use->outer_pays = true;
    return rc;
}

void stc__flow_note_pipeline(flow_runtime *rt, flow_plan_use *use, uint64_t wall_ns)
{
    rt->pipeline_ns += wall_ns;
    if (wall_ns >= FLOW_SMAP_MIN_NS) use->cheap_runs = 0;
    else if (++use->cheap_runs >= FLOW_SMAP_CHEAP_RUNS) use->cheap = true;
}
