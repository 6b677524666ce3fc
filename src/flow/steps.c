/* steps.c - the pipeline's stages: a plan's steps run on each item of a
 * batch, the branch stages a batch may skip, and a stream's output stage.
 *
 * Every item has its own frame of slots (the function's, then the plan's
 * temporaries) and branch flags; a step evaluates one piece of the body
 * into a slot, in the reference evaluator's order.  What a step computes is
 * always the evaluator's own code (eval_runtime.h): an expression, a let's
 * binding, an if's or a case's choice, a C thread call, a g x h thread's
 * part.  So the steps decide nothing about the language, only where each
 * piece runs.  This is the per-item path: the stage function, the item
 * loop and the steps stay in one file so that they compile as one. */
#include <stdlib.h>
#include <string.h>

#include "flow/job.h"
#include "util/cancel.h"
#include "value/map.h"
#include "value/value.h"

/* 1: a fused job outside a trial, --profile and --trace runs each item as
 * the evaluator's call (flow_direct_items); 0 (a build to compare): as
 * the plan's steps. */
#ifndef FLOW_DIRECT
#define FLOW_DIRECT 1
#endif

/* STC_ECANCELED at the smap if the run's cancel flag is raised: the flag
 * is read here, the error made out of line only when it is. */
static inline int flow_check_cancel(flow_job *job, eval_ctx *cx)
{
    return cancel_raised(cx->cancel) ? stc__eval_check_cancel(cx, job->loc) : 0;
}

static void flow_store(stc_value *slot, stc_value v)
{
    val_release(*slot);
    *slot = v;
}

/* A let-tuple's binding.  From a temporary (the tuple's slot is this
 * step's alone) the tuple is moved to the binding, not counted; from a
 * variable's slot (s->borrow) it is read there, the variable living on.
 * A tuple of the binders' arity binds straight into their item slots
 * (planned in s->args), the evaluator's eval_let_bind doing anything else
 * (its error).  Out of line: inlined, its loop costs the item loop
 * registers (about 1% more instructions per item on a step-heavy body). */
FLOW_NOINLINE static int flow_destruct(eval_ctx *cx, const flow_step *s, stc_value *slots, eval_frame *fr)
{
    stc_value t = slots[s->src];
    if (s->borrow) t = val_retain(t);
    else slots[s->src] = flow_unit();
    if (!s->args || t.tag != STC_T_TUPLE || val_seq_len(t) != (size_t)s->nargs) return eval_let_bind(cx, s->e, fr, t);
    const stc_value *items = val_seq_items(t);
    for (int i = 0; i < s->nargs; i++)
        if (s->args[i] >= 0) flow_store(&slots[s->args[i]], val_retain(items[i]));
    val_release(t);
    return 0;
}

/* A keyed call's shard: the flag of the shard its key hashes to. */
FLOW_NOINLINE static int flow_shard_choose(eval_ctx *cx, const flow_step *s, eval_frame *fr, uint8_t *flags)
{
    stc_value key;
    int rc = stc__eval_keyed_key(cx, s->e, fr, &key);
    if (rc) return rc;
    flags[s->flag0 + flow_shard_of(stc__val_key_hash(key), s->nshards)] = 1;
    val_release(key);
    return 0;
}

/* FS_EVAL: slots[dst] = e, evaluated in frame fr (the item's, or a
 * callee's block of it); slots are the item's. */
static inline int flow_eval(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *slots)
{
    stc_value v;
    int rc = stc__eval_step(cx, s->e, fr, &v);
    /* A tail call the body ends in runs here, at the body's depth, as in
     * the evaluator. */
    if (rc == EVAL_TAIL) {
        cx->depth = job->base_depth + 1;
        rc = stc__eval_tail_run(cx, &v);
    }
    if (rc) return rc;
    if (s->dst >= 0) flow_store(&slots[s->dst], v);
    else val_release(v);
    return 0;
}

FLOW_NOINLINE static int flow_step_run(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr,
                                       uint8_t *flags)
{
    stc_value *slots = fr->slots, v;
    int rc;
    cx->depth = job->base_depth + s->depth;
    /* A step of a callee's body planned in place evaluates in its block
     * of the item's frame (flow_step.base); src, dst and args are item
     * slots. */
    eval_frame block;
    if (s->base) {
        block = (eval_frame){slots + s->base, fr->fn};
        fr = &block;
    }
    switch (s->kind) {
    case FS_EVAL: return flow_eval(job, cx, s, fr, slots);
    case FS_SELECT_IF: {
        bool then = false;
        if ((rc = eval_if_test(cx, s->e, slots[s->src], &then))) return rc;
        flags[s->flag0 + (then ? 0 : 1)] = 1;
        return 0;
    }
    case FS_SELECT_CASE: {
        int alt;
        if ((rc = stc__eval_case_select(cx, s->e, slots[s->src], fr, &alt))) return rc;
        flags[s->flag0 + alt] = 1;
        return 0;
    }
    case FS_DESTRUCT: return flow_destruct(cx, s, slots, fr);
    case FS_SPLIT_OUT:
        if ((rc = stc__eval_call_thread_part(cx, s->thread, slots, s->args, s->nargs, s->e->u.call.callee_loc, &v)))
            return rc;
        flow_store(&slots[s->dst], v);
        return 0;
    case FS_SPLIT_STATE:
        return stc__eval_call_thread_part(cx, s->thread, slots, NULL, 0, s->e->u.call.callee_loc, NULL);
    case FS_CALL_C:
        if ((rc = eval_call_c(cx, s->thread, &slots[s->args[0]], s->e->u.call.callee_loc, &v))) return rc;
        flow_store(&slots[s->dst], v);
        return 0;
    case FS_SHARD: return flow_shard_choose(cx, s, fr, flags);
    case FS_KEYED: return stc__flow_keyed_run(job, cx, s, fr, slots);
    case FS_ISHARD: return stc__flow_ishard_run(job, cx, s, fr, slots, flags);
    case FS_IKEYED: return stc__flow_ikeyed_run(job, cx, s, slots);
    }
    return stc__eval_error(cx, STC_ERUNTIME, s->e->loc, "internal error: bad step");
}

/* Runs step s of an item: the most frequent kind, an expression in the
 * item's own frame, inline; the others out of line (their register
 * pressure would cost the item loops). */
static inline int flow_do_step(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, uint8_t *flags)
{
    if (s->kind == FS_EVAL && !s->base) {
        cx->depth = job->base_depth + s->depth;
        return flow_eval(job, cx, s, fr, fr->slots);
    }
    return flow_step_run(job, cx, s, fr, flags);
}

/* Fills item i's frame: captures (borrowed), then the parameters; its
 * other slots hold units already (flow_batch_get, flow_release).  The
 * frame counts as filled (b->nloaded) from here on, for release: frames
 * are filled in item order, and only the items after a failing one are
 * never filled, so the filled ones are a prefix of the batch. */
static int flow_load(flow_job *job, eval_ctx *cx, flow_batch *b, int i, stc_value *slots)
{
    const flow_plan *pl = job->plan;
    b->nloaded = i + 1;
    for (int j = 0; j < job->ncaps; j++) slots[j] = job->caps[j];
    stc_value arg;
    if (job->stream) {
        arg = b->in[i];
        b->in[i] = flow_unit();
    } else {
        arg = job->items ? val_retain(job->items[cx->item])
                         : (stc_value){.tag = STC_T_INT, .as.i = (int64_t)((uint64_t)job->start + (uint64_t)cx->item)};
    }
    if (!pl->fn) {
        slots[0] = arg;
        return 0;
    }
    if (pl->fn->nparams == 1) {
        slots[job->ncaps] = arg;
        return 0;
    }
    return stc__eval_adapt_args(cx, pl->fn->name, (size_t)pl->fn->nparams, 1, &arg, slots + job->ncaps, job->loc);
}

/* Runs plan stage `stage` over the batch's live items on worker context cx,
 * loading their frames first if the batch is not loaded yet.  An item that
 * fails ends itself and the items after it in the batch (dead), its error
 * recorded; then it returns SCHED_STOP.  *nran: the items the stage did
 * something for. */
static sched_status flow_stage_items(flow_job *job, eval_ctx *cx, int stage, flow_batch *b, int *nran_out)
{
    const flow_plan *pl = job->plan;
    const flow_stage *st = &pl->stages[stage];
    const flow_step *first = pl->steps + st->first, *end = first + st->count;
    sched_status status = SCHED_CONTINUE;
    int nran = 0; /* items this stage did something for (a branch skips the others) */
    for (int i = 0; i < b->n; i++) {
        if (b->dead[i]) continue;
        stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        uint8_t *flags = b->flags + (size_t)i * (size_t)pl->nflags;
        eval_frame fr = {slots, pl->fn};
        cx->item = (long long)(b->first + (size_t)i);
        cx->thread = job->thread;
        int rc = flow_check_cancel(job, cx);
        if (rc == 0 && !b->loaded) rc = flow_load(job, cx, b, i, slots);
        bool ran = false;
        for (const flow_step *s = first; rc == 0 && s < end; s++) {
            if (s->guard < 0 || flags[s->guard]) {
                rc = flow_do_step(job, cx, s, &fr, flags);
                ran = true;
            }
        }
        nran += ran;
        if (rc == FLOW_RECORDED) { /* an inner smap's shards recorded the error */
            memset(b->dead + i, 1, (size_t)(b->n - i));
            status = SCHED_STOP;
        } else if (rc) {
            stc__eval_oom(cx, job->loc); /* records nothing when the step recorded its error */
            stc__flow_record_error(job, cx, (long long)(b->first + (size_t)i));
            memset(b->dead + i, 1, (size_t)(b->n - i));
            status = SCHED_STOP;
        }
    }
    *nran_out = nran;
    return status;
}

sched_status stc__flow_load_batch(flow_job *job, eval_ctx *cx, flow_batch *b)
{
    const flow_plan *pl = job->plan;
    sched_status status = SCHED_CONTINUE;
    for (int i = 0; i < b->n && !b->loaded; i++) {
        if (b->dead[i]) continue;
        stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        cx->item = (long long)(b->first + (size_t)i);
        cx->thread = job->thread;
        int rc = flow_check_cancel(job, cx);
        if (rc == 0) rc = flow_load(job, cx, b, i, slots);
        if (rc) {
            stc__eval_oom(cx, job->loc);
            stc__flow_record_error(job, cx, (long long)(b->first + (size_t)i));
            memset(b->dead + i, 1, (size_t)(b->n - i));
            status = SCHED_STOP;
        }
    }
    b->loaded = true;
    return status;
}

int stc__flow_item_steps(flow_job *job, eval_ctx *cx, int stage, stc_value *slots, uint8_t *flags, bool *ran)
{
    const flow_plan *pl = job->plan;
    const flow_stage *st = &pl->stages[stage];
    eval_frame fr = {slots, pl->fn};
    int rc = 0;
    *ran = false;
    for (int k = st->first; rc == 0 && k < st->first + st->count; k++) {
        const flow_step *s = &pl->steps[k];
        if (s->guard < 0 || flags[s->guard]) {
            rc = flow_do_step(job, cx, s, &fr, flags);
            *ran = true;
        }
    }
    return rc;
}

/* ---- The stage function ----------------------------------------------------------- */

/* A stream's last stage (serial): the batch's results to the sink, in order. */
static sched_status flow_output(flow_job *job, eval_ctx *cx, flow_batch *b, int worker, uint64_t seq)
{
    const flow_plan *pl = job->plan;
    uint64_t t0 = job->prof ? flow_now_ns() : 0, c0 = job->trial_ns ? flow_cpu_ns() : 0;
    sched_status status = SCHED_CONTINUE;
    int nran = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->dead[i]) continue;
        long long index = (long long)(b->first + (size_t)i);
        nran++;
        stc_value r = b->direct ? b->in[i] : b->slots[(size_t)i * (size_t)pl->nslots + (size_t)pl->result];
        if (stc__eval_stream_push(cx, job->stream, index, r)) {
            stc__flow_record_error(job, cx, index);
            memset(b->dead + i, 1, (size_t)(b->n - i));
            status = SCHED_STOP;
            break;
        }
    }
    if (job->trial_ns) flow_trial_add(job, FLOW_OUTPUT_STAGE(pl), c0);
    if (job->prof) stc__flow_prof_note(job, FLOW_OUTPUT_STAGE(pl), "output", worker, t0, flow_now_ns(), nran, seq);
    return status;
}

/* After stage s: the branch stages none of the batch's items is routed to.
 * Called only after a stage that decides some (flow_decides).  Narrow (every
 * guard flag < 64, the usual case): the flags set among the live items,
 * of those the stages decided after s read (decided_bits[s]), looked at once
 * per item (it was once per item and stage decided; logstats' `case`
 * decides four), then the stages needing a flag seen (needed_by) kept. */
static void flow_mark_skips(const flow_job *job, const flow_batch *b, int s, sched_batch *sb)
{
    const flow_plan *pl = job->plan;
    if (job->skip_narrow) {
        uint64_t want = job->decided_bits[s], seen = 0;
        for (int i = 0; i < b->n && seen != want; i++) {
            if (b->dead[i]) continue;
            const uint8_t *flags = b->flags + (size_t)i * (size_t)pl->nflags;
            for (uint64_t m = want & ~seen; m; m &= m - 1)
                if (flags[__builtin_ctzll(m)]) seen |= m & -m;
        }
        uint64_t needed = 0; /* a stage is needed when some flag of its was seen */
        for (; seen; seen &= seen - 1) needed |= job->needed_by[__builtin_ctzll(seen)];
        sb->skip |= job->decides[s] & ~needed;
        return;
    }
    for (uint64_t ts = job->decides[s]; ts; ts &= ts - 1) {
        int t = __builtin_ctzll(ts);
        bool needed = false;
        for (int i = 0; i < b->n && !needed; i++) {
            if (b->dead[i]) continue;
            const uint8_t *flags = b->flags + (size_t)i * (size_t)pl->nflags;
            for (int k = job->skip_first[t]; k < job->skip_first[t + 1] && !needed; k++)
                needed = flags[job->skip_flags[k]] != 0;
        }
        if (!needed) sb->skip |= (uint64_t)1 << t;
    }
}

/* Whether stage s decides a branch stage (job->decides[s]): known per
 * stage, checked here so that the others make no call. */
static inline bool flow_decides(const flow_job *job, int s)
{
    return s < 64 && (job->deciding >> s & 1);
}

sched_status stc__flow_stage_run(void *ud, int stage, sched_batch *sb, int worker)
{
    flow_job *job = ud;
    flow_batch *b = sb->data;
    eval_ctx *cx = &job->rt->wcx[worker].cx;
    if (stage == job->plan->nstages) return flow_output(job, cx, b, worker, sb->seq);
    cx->stack_base = 0; /* this activation may run on another thread than the last */
    bool timed = b->timed || job->prof || job->owned; /* (flow_source) */
    uint64_t t0 = timed ? flow_now_ns() : 0, wait_ns = 0, c0 = job->trial_ns ? flow_cpu_ns() : 0;
    int nran;
    sched_status status;
    bool here = false;
    if (!(stage < 64 && (job->remote_mask >> stage & 1) &&
          stc__flow_remote_stage(job, cx, stage, sb, &status, &nran, &wait_ns)))
        status = flow_stage_items(job, cx, stage, b, &nran), here = true;
    else if (status == SCHED_AWAY || status == SCHED_AWAY_PASS)
        return status; /* in another process: this runs again when it is back */
    b->loaded = true; /* frames of items that died before loading hold units: harmless */
    if (job->plain && job->plain_writes[stage]) stc__flow_mark_states(cx, job->plain_writes[stage]); /* (exec.c) */
    if (flow_decides(job, stage)) flow_mark_skips(job, b, stage, sb);
    uint64_t t1 = timed ? flow_now_ns() : 0;
    if (here && job->owned) stc__flow_owned_note(job, stage, t1 - t0, nran); /* placement (owned.c) */
    if (timed) b->busy_ns += t1 - t0 - wait_ns; /* a remote reply's latency is not work per item here */
    if (job->trial_ns) flow_trial_add(job, stage, c0); /* fused: never remote */
    if (job->prof) stc__flow_prof_note(job, stage, job->prof->names[stage], worker, t0, t1, nran, sb->seq);
    return status;
}


/* ---- One worker: the stages fused ------------------------------------------------ */

/* A fused item's failure: its error recorded (unless an inner smap's
 * shards did, FLOW_RECORDED), and it and the batch's later items dead. */
FLOW_NOINLINE static void flow_item_failed(flow_job *job, eval_ctx *cx, flow_batch *b, int i, int rc)
{
    if (rc != FLOW_RECORDED) {
        stc__eval_oom(cx, job->loc); /* records nothing when the step recorded its error */
        stc__flow_record_error(job, cx, (long long)(b->first + (size_t)i));
    }
    memset(b->dead + i, 1, (size_t)(b->n - i));
}

/* Every stage of the plan on each item in turn.  The same steps in the same
 * order for each item as the pipeline runs them (and as the evaluator
 * does): each thread still sees its calls in item order, since item k
 * finishes all its steps before item k + 1 starts.  An item that fails
 * ends the batch there (the items after it never start), its error
 * recorded. */
static sched_status flow_fused_items(flow_job *job, eval_ctx *cx, flow_batch *b)
{
    const flow_plan *pl = job->plan;
    /* the stages' steps follow each other in pl->steps (flow_fusable) */
    const flow_step *first = pl->steps + pl->stages[0].first;
    const flow_step *end = pl->steps + pl->stages[pl->nstages - 1].first + pl->stages[pl->nstages - 1].count;
    for (int i = 0; i < b->n; i++) {
        stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        uint8_t *flags = b->flags + (size_t)i * (size_t)pl->nflags;
        eval_frame fr = {slots, pl->fn};
        cx->item = (long long)(b->first + (size_t)i);
        cx->thread = job->thread;
        int rc = flow_check_cancel(job, cx);
        if (rc == 0) rc = flow_load(job, cx, b, i, slots);
        for (const flow_step *s = first; rc == 0 && s < end; s++)
            if (s->guard < 0 || flags[s->guard]) rc = flow_do_step(job, cx, s, &fr, flags);
        if (rc) {
            flow_item_failed(job, cx, b, i, rc);
            return SCHED_STOP;
        }
    }
    return SCHED_CONTINUE;
}

/* Every stage of the plan over the batch in turn, as the pipeline's
 * activations run them (flow_stage_items, and the skip marks after a
 * stage that decides some) but in one call, without what only the
 * pipeline needs: no activation's set-up and return per stage, no count of
 * the items a stage ran for, the thread's name set once (the evaluator
 * puts it back after every call it makes).  An item that fails ends the
 * batch there (the items after it are dead), its error recorded; the
 * later stages still run for the items before it, as in the pipeline. */
static sched_status flow_fused_stages(flow_job *job, eval_ctx *cx, flow_batch *b, sched_batch *sb)
{
    const flow_plan *pl = job->plan;
    sched_status status = SCHED_CONTINUE;
    cx->thread = job->thread;
    for (int t = 0; t < pl->nstages; t++) {
        if (t < 64 && (sb->skip >> t & 1)) continue;
        const flow_stage *st = &pl->stages[t];
        const flow_step *first = pl->steps + st->first, *end = first + st->count;
        for (int i = 0; i < b->n; i++) {
            if (b->dead[i]) continue;
            stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
            uint8_t *flags = b->flags + (size_t)i * (size_t)pl->nflags;
            eval_frame fr = {slots, pl->fn};
            cx->item = (long long)(b->first + (size_t)i);
            int rc = flow_check_cancel(job, cx);
            if (rc == 0 && !b->loaded) rc = flow_load(job, cx, b, i, slots);
            for (const flow_step *s = first; rc == 0 && s < end; s++)
                if (s->guard < 0 || flags[s->guard]) rc = flow_do_step(job, cx, s, &fr, flags);
            if (rc) {
                flow_item_failed(job, cx, b, i, rc);
                status = SCHED_STOP;
                break;
            }
        }
        b->loaded = true;
        if (flow_decides(job, t)) flow_mark_skips(job, b, t, sb);
    }
    return status;
}

/* Every item of the batch through the function's whole body at once, as
 * the evaluator's call of it runs it (eval_invoke): in one frame, the
 * batch's first, filled as for the steps (captures borrowed, the item
 * adapted to the params) and emptied after each item as the evaluator
 * frees a call's frame, the body evaluated at the depth of a body one
 * level inside the smap's call, a tail call it ends in run there; for an
 * smap of a thread, the evaluator's own smap_apply.  No steps, flags or
 * skip masks: one step, the whole body, so the results, the states and the
 * first error are those of the plan's steps and of the reference (the
 * call's depth check is flow_plan_for's, its cancel check this loop's, at
 * the smap as the reference's).  A list's result goes straight into the
 * result list (its unfilled items are invalid, which release ignores on
 * failure); a stream's into b->in[i], emptied by the load, for the output
 * stage.  Fused only (one thread, item k before item k + 1), and never for
 * keyed shards or a C thread's g x h halves (exec.c flow_directable). */
static sched_status flow_direct_items(flow_job *job, eval_ctx *cx, flow_batch *b)
{
    const flow_plan *pl = job->plan;
    const ir_fun *fn = pl->fn;
    stc_value *slots = b->slots; /* units, but for the captures */
    int ncaps = job->ncaps, nslots = fn ? fn->nslots : 0;
    b->direct = true;
    b->nloaded = 0; /* no frame holds anything between items */
    for (int j = 0; j < ncaps; j++) slots[j] = job->caps[j];
    for (int i = 0; i < b->n; i++) {
        long long index = (long long)(b->first + (size_t)i);
        cx->item = index;
        cx->thread = job->thread;
        stc_value v = flow_unit();
        int rc = flow_check_cancel(job, cx);
        if (rc == 0) {
            stc_value arg;
            if (job->stream) {
                arg = b->in[i];
                b->in[i] = flow_unit();
            } else {
                arg = job->items ? val_retain(job->items[index])
                                 : (stc_value){.tag = STC_T_INT, .as.i = (int64_t)((uint64_t)job->start + (uint64_t)index)};
            }
            if (!fn) {
                cx->depth = job->base_depth;
                rc = stc__eval_smap_apply(cx, job->map_thread, job->fnv, arg, job->loc, &v);
            } else {
                if (fn->nparams == 1) slots[ncaps] = arg;
                else rc = stc__eval_adapt_args(cx, fn->name, (size_t)fn->nparams, 1, &arg, slots + ncaps, job->loc);
                if (rc == 0) {
                    eval_frame fr = {slots, fn};
                    cx->depth = job->base_depth + 1;
                    rc = stc__eval_step(cx, fn->body, &fr, &v);
                    if (rc == EVAL_TAIL) {
                        cx->depth = job->base_depth + 1;
                        rc = stc__eval_tail_run(cx, &v);
                    }
                }
                for (int j = ncaps; j < nslots; j++) {
                    val_release(slots[j]);
                    slots[j] = flow_unit();
                }
            }
        }
        if (rc) {
            stc__eval_oom(cx, job->loc); /* records nothing when the evaluator made its error */
            stc__flow_record_error(job, cx, index);
            memset(b->dead + i, 1, (size_t)(b->n - i));
            return SCHED_STOP;
        }
        if (job->stream) b->in[i] = v;
        else job->out[index] = v;
    }
    return SCHED_CONTINUE;
}

/* Items cheaper than this (the running estimate, ns) go item by item,
 * each through the function's whole body at once (flow_direct_items; the
 * plan's steps, flow_fused_items, where that cannot be), dearer ones
 * stage by stage over the batch.  For cheap items the runtime's cost per
 * step counts most; for dear ones, that each stage's code and branches
 * stay warm over a batch.  CPU time at one worker (perf task-clock,
 * medians of 9 interleaved runs, load average 6-8; docs/DESIGN.md 5):
 * 3M cheap smap items 138 ms whole body, 166 ms the steps item by item,
 * 166 ms stage by stage; logstats 1M lines 1135, 1138 and 1058 ms (the
 * whole body runs 8% fewer instructions there, yet takes 7% more time).
 * Either way the results are the same. */
#ifndef FLOW_ITEMWISE_NS
#define FLOW_ITEMWISE_NS (250 * FLOW_TIME_SCALE)
#endif

sched_status stc__flow_fused_run(flow_job *job, sched_batch *sb, int worker)
{
    const flow_plan *pl = job->plan;
    flow_batch *b = sb->data;
    eval_ctx *cx = &job->rt->wcx[worker].cx;
    sched_status status = SCHED_CONTINUE;
    if (job->prof || job->trial_ns) {
        /* Stage by stage, each activation measured (and skipped) as the
         * pipeline does: profiles and traces read the same, and a trial
         * (exec.c) gets each stage's time. */
        for (int t = 0; t < pl->nstages; t++)
            if (!(t < 64 && (sb->skip >> t & 1)) && stc__flow_stage_run(job, t, sb, worker) == SCHED_STOP)
                status = SCHED_STOP;
    } else {
        /* The batch's time alone, for its size (two clock reads a batch,
         * not two a stage). */
        uint64_t est = atomic_load_explicit(&job->ns_per_item, memory_order_relaxed), t0 = flow_now_ns();
        cx->stack_base = 0;
        if (est >= FLOW_ITEMWISE_NS) {
            status = flow_fused_stages(job, cx, b, sb);
        } else if (FLOW_DIRECT && job->direct_ok) {
            status = flow_direct_items(job, cx, b);
        } else {
            status = flow_fused_items(job, cx, b);
        }
        b->loaded = true;
        b->busy_ns += flow_now_ns() - t0;
    }
    /* A stream's output stage: the live items' results, in order. */
    if (job->stream && flow_output(job, cx, b, worker, sb->seq) == SCHED_STOP) status = SCHED_STOP;
    return status;
}
