/* steps.c - a plan's steps run on an item: one pipeline stage over the
 * items of a batch.
 *
 * Every item has its own frame of slots (the function's, then the plan's
 * temporaries) and branch flags; a step evaluates one piece of the body
 * into a slot, in the reference evaluator's order.  What a step computes is
 * always the evaluator's own code (eval_runtime.h): an expression, a let's
 * binding, an if's or a case's choice, a C thread call, a g x h thread's
 * part.  So the steps decide nothing about the language, only where each
 * piece runs. */
#include <stdlib.h>
#include <string.h>

#include "flow/job.h"
#include "value/value.h"

static void flow_store(stc_value *slot, stc_value v)
{
    stc_value_release(*slot);
    *slot = v;
}

/* A g x h thread's output part (out != NULL) on the step's inputs, or its
 * state part. */
static int flow_split(eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *out)
{
    ir_loc loc = s->e->u.call.callee_loc;
    size_t n = out ? (size_t)s->nargs : 0;
    stc_value small[8], *args = n <= 8 ? small : malloc(n * sizeof *args);
    if (!args) return eval_oom(cx, loc);
    for (size_t i = 0; i < n; i++) args[i] = stc_value_retain(fr->slots[s->args[i]]);
    int rc = eval_call_thread_part(cx, s->thread, n, args, loc, out);
    if (args != small) free(args);
    return rc;
}

static int flow_step_run(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, uint8_t *flags)
{
    stc_value *slots = fr->slots, v;
    int rc;
    cx->depth = job->base_depth + s->depth;
    switch (s->kind) {
    case FS_EVAL:
        if ((rc = eval_expr(cx, s->e, fr, &v))) return rc;
        if (s->dst >= 0) flow_store(&slots[s->dst], v);
        else stc_value_release(v);
        return 0;
    case FS_SELECT_IF: {
        bool then = false;
        if ((rc = eval_if_test(cx, s->e, slots[s->src], &then))) return rc;
        flags[s->flag0 + (then ? 0 : 1)] = 1;
        return 0;
    }
    case FS_SELECT_CASE: {
        int alt;
        if ((rc = eval_case_select(cx, s->e, slots[s->src], fr, &alt))) return rc;
        flags[s->flag0 + alt] = 1;
        return 0;
    }
    case FS_DESTRUCT: { /* the tuple's slot is this step's alone: moved, not counted */
        stc_value t = slots[s->src];
        slots[s->src] = stc_value_unit();
        return eval_let_bind(cx, s->e, fr, t);
    }
    case FS_SPLIT_OUT:
        if ((rc = flow_split(cx, s, fr, &v))) return rc;
        flow_store(&slots[s->dst], v);
        return 0;
    case FS_SPLIT_STATE: return flow_split(cx, s, fr, NULL);
    case FS_CALL_C:
        if ((rc = eval_call_c(cx, s->thread, &slots[s->args[0]], s->e->u.call.callee_loc, &v))) return rc;
        flow_store(&slots[s->dst], v);
        return 0;
    }
    return eval_error(cx, STC_ERUNTIME, s->e->loc, "internal error: bad step");
}

/* Fills item i's frame: captures (borrowed), then the parameters. */
static int flow_load(flow_job *job, eval_ctx *cx, flow_batch *b, int i, stc_value *slots)
{
    const flow_plan *pl = job->plan;
    for (int j = 0; j < pl->nslots; j++) slots[j] = stc_value_unit();
    for (int j = 0; j < job->ncaps; j++) slots[j] = job->caps[j];
    stc_value arg;
    if (job->stream) {
        arg = b->in[i];
        b->in[i] = stc_value_unit();
    } else {
        arg = job->items ? stc_value_retain(job->items[cx->item])
                         : stc_value_int((int64_t)((uint64_t)job->start + (uint64_t)cx->item));
    }
    if (!pl->fn) {
        slots[0] = arg;
        return 0;
    }
    if (pl->fn->nparams == 1) {
        slots[job->ncaps] = arg;
        return 0;
    }
    return eval_adapt_args(cx, pl->fn->name, (size_t)pl->fn->nparams, 1, &arg, slots + job->ncaps, job->loc);
}

sched_status flow_stage_items(flow_job *job, eval_ctx *cx, int stage, flow_batch *b, int *nran_out)
{
    const flow_plan *pl = job->plan;
    const flow_stage *st = &pl->stages[stage];
    sched_status status = SCHED_CONTINUE;
    int nran = 0; /* items this stage did something for (a branch skips the others) */
    for (int i = 0; i < b->n; i++) {
        if (b->dead[i]) continue;
        stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        uint8_t *flags = b->flags + (size_t)i * (size_t)pl->nflags;
        eval_frame fr = {slots, pl->fn};
        cx->item = (long long)(b->first + (size_t)i);
        cx->thread = job->thread;
        int rc = cx->cancel ? eval_check_cancel(cx, job->loc) : 0;
        if (rc == 0 && !b->loaded) rc = flow_load(job, cx, b, i, slots);
        bool ran = false;
        for (int k = st->first; rc == 0 && k < st->first + st->count; k++) {
            const flow_step *s = &pl->steps[k];
            if (s->guard < 0 || flags[s->guard]) {
                rc = flow_step_run(job, cx, s, &fr, flags);
                ran = true;
            }
        }
        nran += ran;
        if (rc) {
            eval_oom(cx, job->loc); /* records nothing when the step recorded its error */
            flow_record_error(job, cx, (long long)(b->first + (size_t)i));
            memset(b->dead + i, 1, (size_t)(b->n - i));
            status = SCHED_STOP;
        }
    }
    *nran_out = nran;
    return status;
}
