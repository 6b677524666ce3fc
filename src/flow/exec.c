/* exec.c - runs an smap's plan on the worker pool.
 *
 * Items travel in batches (sched_batch.data is a flow_batch): the source
 * cuts the list into batches whose size adapts to the measured cost per
 * item (about FLOW_BATCH_TARGET_NS of work each, never more than the queue
 * capacity); each stage runs its steps over the batch's items in order;
 * release moves each item's result into the result list and frees the
 * batch.  Every item has its own frame of slots, so replicated stages
 * share nothing but immutable values and the thread states that serial
 * stages own one at a time.
 *
 * Errors: the first failing step of an item ends that item and the items
 * after it in its batch; the scheduler then drops later batches and lets
 * earlier ones finish, and the error of the earliest failing item is the
 * one reported, which is the reference evaluator's error. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/flow_internal.h"
#include "sched/sched.h"
#include "trace/profile.h"
#include "trace/trace.h"
#include "util/buf.h"
#include "value/cache.h"
#include "value/value.h"

#define FLOW_DEFAULT_CAPACITY 1024     /* items per batch at most */
#define FLOW_BATCH_TARGET_NS 50000     /* work per batch the source aims at */


typedef struct flow_batch {
    size_t first;       /* list index of item 0 */
    size_t cap;         /* items the block has room for (n <= cap) */
    struct flow_batch *next_spare; /* in flow_job.spare */
    int n;
    bool loaded;        /* frames filled (by stage 0) */
    uint64_t busy_ns;   /* stage time spent on it */
    stc_value *in;      /* streams: per item, the input until stage 0 loads it */
    uint8_t *dead;      /* per item: failed, or after a failure */
    uint8_t *flags;     /* per item: plan->nflags branch flags */
    stc_value *slots;   /* per item: plan->nslots */
} flow_batch;

/* One smap run. The fields above the line are read-only during the run. */
typedef struct flow_job {
    flow_runtime *rt;
    const flow_plan *plan;
    const stc_value *caps;    /* the closure's captures (borrowed by every frame) */
    int ncaps;
    const stc_value *items;   /* NULL: the ints start, start + 1, ... (or a stream) */
    int64_t start;
    size_t n;                 /* items (SIZE_MAX for a stream) */
    const eval_stream *stream; /* non-NULL: items come from its source, results go
                                  to its sink in the extra serial stage plan->nstages */
    stc_value *out;           /* result list items; item i written by its batch's release */
    int base_depth;
    ir_loc loc;
    const char *thread;       /* the thread running the smap, if any (for errors) */
    flow_plan_prof *prof;     /* NULL unless profiling or tracing */
    /* Branch stages a batch may skip (sched_batch.skip): for stage t,
     * decided_at[t] is the stage after which it is known whether any item
     * of a batch needs it (-1: always needed), and its guard flags are
     * skip_flags[skip_first[t] .. skip_first[t + 1]). */
    int *decided_at, *skip_first, *skip_flags;
    /* ---- */
    size_t next;              /* next item to hand out (the source is serial) */
    bool src_end, src_failed; /* streams: the source ended / failed (the source's) */
    atomic_uint_fast64_t ns_per_item; /* atomic: cost estimate, 0 = unknown */
    atomic_llong live;        /* atomic: items in batches not yet released */
    atomic_llong peak;        /* atomic */
    pthread_mutex_t err_lock;
    long long err_index;      /* earliest failing item, -1 (err_lock) */
    /* Released batch blocks, for the source to reuse: one block per token
     * at most, so a stream's memory does not creep as glibc places blocks
     * of ever-changing sizes (the batch size adapts) among the values. */
    pthread_mutex_t spare_lock;
    flow_batch *spare;        /* (spare_lock) */
    eval_err err;             /* its error (err_lock) */
} flow_job;

static uint64_t flow_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Keeps err (taking its message) if it is the earliest so far. */
static void flow_record(flow_job *job, eval_err err, long long index)
{
    pthread_mutex_lock(&job->err_lock);
    if (job->err_index < 0 || index < job->err_index) {
        free(job->err.message);
        job->err = err;
        job->err_index = index;
    } else {
        free(err.message);
    }
    pthread_mutex_unlock(&job->err_lock);
}

/* The same for the error in cx, which is reset for the next item. */
static void flow_record_error(flow_job *job, eval_ctx *cx, long long index)
{
    flow_record(job, cx->err, index);
    cx->err = (eval_err){.item = -1};
}

static void flow_store(stc_value *slot, stc_value v)
{
    val_release(*slot);
    *slot = v;
}

/* Turns a C thread's return code (and ccx's message) into the evaluator's
 * error, or checks and stores its output. */
static int flow_c_result(eval_ctx *cx, const ir_thread *th, ir_loc loc, int code, struct stc_ctx *ccx,
                         stc_value v, stc_value *out)
{
    const char *saved = cx->thread;
    cx->thread = th->name;
    int rc = 0;
    if (code < 0) {
        val_release(v);
        rc = ccx->error_oom ? eval_oom(cx, loc)
                            : eval_error(cx, STC_ERUNTIME, loc, "thread '%s' failed: %s", th->name,
                                         ccx->message ? ccx->message : stc_strerror(code));
    } else if (out && !eval_value_has_type(v, th->out_type)) {
        val_release(v);
        rc = eval_error(cx, STC_ERUNTIME, loc, "thread '%s' returned a value of the wrong type", th->name);
    } else if (out) {
        *out = v;
    }
    cx->thread = saved;
    free(ccx->message);
    return rc;
}

/* A C thread on one input, as eval_call_c does it. */
static int flow_call_c(eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *out)
{
    const ir_thread *th = cx->p->threads[s->thread];
    struct stc_ctx ccx = {.def = th->cdef};
    stc_value v = stc_value_unit();
    int code = th->cdef->fn(cx->states[s->thread].cstate, &fr->slots[s->args[0]], &v, &ccx);
    /* The common case, a scalar of the declared type, without the general
     * type walk; anything else takes the full path. */
    const ir_type *t = th->out_type ? ir_type_resolve(th->out_type) : NULL;
    if (code >= 0 && t && !ccx.message &&
        ((t->kind == TY_INT && v.tag == STC_T_INT) || (t->kind == TY_FLOAT && v.tag == STC_T_FLOAT) ||
         (t->kind == TY_BOOL && v.tag == STC_T_BOOL))) {
        *out = v;
        return 0;
    }
    return flow_c_result(cx, th, s->e->u.call.callee_loc, code, &ccx, v, out);
}

/* A split C thread: output_fn on the inputs (out != NULL) or state_fn. */
static int flow_split_c(eval_ctx *cx, const ir_thread *th, const flow_step *s, eval_frame *fr, stc_value *out)
{
    const stc_thread_def *def = th->cdef;
    ir_loc loc = s->e->u.call.callee_loc;
    struct stc_ctx ccx = {.def = def};
    stc_value in = stc_value_unit(), v = stc_value_unit();
    int code;
    if (out) {
        if (s->nargs == 1) in = val_retain(fr->slots[s->args[0]]);
        else if (s->nargs > 1) {
            stc_value argv[16];
            if (s->nargs > 16) return eval_error(cx, STC_ERUNTIME, loc, "internal error: too many inputs");
            for (int i = 0; i < s->nargs; i++) argv[i] = val_retain(fr->slots[s->args[i]]);
            if ((in = stc_value_new_tuple((size_t)s->nargs, argv)).tag == STC_T_INVALID) return eval_oom(cx, loc);
        }
        code = def->output_fn(NULL, &in, &v, &ccx);
    } else {
        code = def->state_fn(cx->states[s->thread].cstate, &ccx);
    }
    val_release(in);
    return flow_c_result(cx, th, loc, code, &ccx, v, out);
}

/* A g x h thread's output part (out != NULL) or state part, evaluated in
 * a frame of the thread's function like the evaluator's call would. */
static int flow_split(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *out)
{
    const ir_program *p = job->rt->p;
    const ir_thread *th = p->threads[s->thread];
    if (th->kind == THREAD_C) return flow_split_c(cx, th, s, fr, out);
    const ir_fun *fn = p->funs[th->fun];
    ir_loc loc = s->e->u.call.callee_loc;
    size_t k = (size_t)th->ninputs, nslots = (size_t)fn->nslots;
    if (cx->depth + 1 >= EVAL_MAX_DEPTH) return eval_error(cx, STC_ELIMIT, loc, "call depth limit exceeded");
    stc_value small[8], *slots = nslots <= 8 ? small : malloc(nslots * sizeof *slots);
    stc_value argv[8], *args = out && s->nargs > 8 ? malloc((size_t)s->nargs * sizeof *args) : argv;
    if (!slots || !args) {
        if (slots != small) free(slots);
        if (args != argv) free(args);
        return eval_oom(cx, loc);
    }
    for (size_t i = 0; i < nslots; i++) slots[i] = stc_value_unit();
    int rc = 0;
    if (out) {
        for (int i = 0; i < s->nargs; i++) args[i] = val_retain(fr->slots[s->args[i]]);
        rc = eval_adapt_args(cx, th->name, k, (size_t)s->nargs, args, slots, loc);
    } else {
        slots[k] = val_retain(cx->states[s->thread].value);
    }
    const char *saved = cx->thread;
    cx->thread = th->name;
    cx->depth += 2;
    eval_frame ffr = {slots, fn};
    stc_value v = stc_value_unit();
    if (rc == 0) rc = eval_expr(cx, fn->body->u.agg.items[out ? 0 : 1], &ffr, &v);
    cx->depth -= 2;
    cx->thread = saved;
    for (size_t i = 0; i < nslots; i++) val_release(slots[i]);
    if (slots != small) free(slots);
    if (args != argv) free(args);
    if (rc) return rc;
    if (out) *out = v;
    else flow_store(&cx->states[s->thread].value, v);
    return 0;
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
        else val_release(v);
        return 0;
    case FS_SELECT_IF:
        if (slots[s->src].tag != STC_T_BOOL)
            return eval_error(cx, STC_ERUNTIME, s->e->loc, "internal error: 'if' on a non-bool");
        flags[s->flag0 + (slots[s->src].as.b ? 0 : 1)] = 1;
        return 0;
    case FS_SELECT_CASE: {
        for (int i = 0; i < s->e->u.cas.nalts; i++) {
            if (eval_case_match(&s->e->u.cas.alts[i], slots[s->src], fr)) {
                flags[s->flag0 + i] = 1;
                return 0;
            }
        }
        buf b = BUF_INIT; /* quoted in part, as the evaluator does: it may be huge */
        val_print_text_brief(&b, slots[s->src], VAL_PRINT_BRIEF);
        char *text = buf_take(&b);
        if (!text) return eval_oom(cx, s->e->loc);
        rc = eval_error(cx, STC_ERUNTIME, s->e->loc, "no case alternative matches %s", text);
        free(text);
        return rc;
    }
    case FS_DESTRUCT: {
        stc_value t = slots[s->src];
        int n = s->e->u.let.nbinders;
        if (t.tag != STC_T_TUPLE || val_seq_len(t) != (size_t)n)
            return eval_error(cx, STC_ERUNTIME, s->e->loc, "internal error: let-tuple arity mismatch");
        for (int i = 0; i < n; i++) {
            const ir_var *b = s->e->u.let.binders[i];
            if (b && b->slot >= 0) flow_store(&slots[b->slot], val_retain(val_seq_items(t)[i]));
        }
        return 0;
    }
    case FS_SPLIT_OUT:
        if ((rc = flow_split(job, cx, s, fr, &v))) return rc;
        flow_store(&slots[s->dst], v);
        return 0;
    case FS_SPLIT_STATE: return flow_split(job, cx, s, fr, NULL);
    case FS_CALL_C:
        if ((rc = flow_call_c(cx, s, fr, &v))) return rc;
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
        arg = job->items ? val_retain(job->items[cx->item])
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

/* Accounts an activation of stage (FLOW_OUTPUT_STAGE(pl) and
 * FLOW_INPUT_STAGE(pl) included) in the profile and the trace. */
#define FLOW_OUTPUT_STAGE(pl) ((pl)->nstages)
#define FLOW_INPUT_STAGE(pl) ((pl)->nstages + 1)
/* Worker w's cells of stage s: a row per worker, padded to whole cache
 * lines (cells is 64-byte aligned) so that workers do not share one. */
static size_t flow_prof_row(const flow_plan *pl) { return ((size_t)(pl->nstages + 2) * 3 + 7) / 8 * 8; }
static uint64_t *flow_prof_cell(const flow_plan_prof *pf, const flow_plan *pl, int w, int s)
{
    return pf->cells + (size_t)w * flow_prof_row(pl) + (size_t)s * 3;
}

static void flow_prof_note(flow_job *job, int stage, const char *name, int worker, uint64_t t0, uint64_t t1,
                           int nran, uint64_t seq)
{
    flow_runtime *rt = job->rt;
    if (rt->profile) {
        uint64_t *cell = flow_prof_cell(job->prof, job->plan, worker, stage);
        cell[0] += t1 - t0;
        cell[1] += (uint64_t)nran;
        cell[2]++;
    }
    if (rt->trace) trace_slice(rt->trace, worker, name, "stage", t0, t1, nran, (long long)seq);
}

/* A stream's last stage (serial): the batch's results to the sink, in order. */
static sched_status flow_output(flow_job *job, eval_ctx *cx, flow_batch *b, int worker, uint64_t seq)
{
    const flow_plan *pl = job->plan;
    uint64_t t0 = job->prof ? flow_now_ns() : 0;
    sched_status status = SCHED_CONTINUE;
    int nran = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->dead[i]) continue;
        long long index = (long long)(b->first + (size_t)i);
        nran++;
        if (eval_stream_push(cx, job->stream, index, b->slots[(size_t)i * (size_t)pl->nslots + (size_t)pl->result])) {
            flow_record_error(job, cx, index);
            memset(b->dead + i, 1, (size_t)(b->n - i));
            status = SCHED_STOP;
            break;
        }
    }
    if (job->prof) flow_prof_note(job, FLOW_OUTPUT_STAGE(pl), "output", worker, t0, flow_now_ns(), nran, seq);
    return status;
}

/* After stage s: the branch stages none of the batch's items is routed to. */
static void flow_mark_skips(const flow_job *job, const flow_batch *b, int s, sched_batch *sb)
{
    const flow_plan *pl = job->plan;
    for (int t = s + 1; t < pl->nstages && t < 64; t++) {
        if (job->decided_at[t] != s) continue;
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

/* Fills job->decided_at and friends; -1 when out of memory (then no stage
 * is ever skipped: correct, only slower). */
static int flow_skips_init(flow_job *job)
{
    const flow_plan *pl = job->plan;
    int ns = pl->nstages, nsteps = pl->nsteps;
    int *stage_of = malloc(((size_t)nsteps + 1) * sizeof *stage_of);
    job->decided_at = malloc(((size_t)ns + 1) * sizeof *job->decided_at);
    job->skip_first = malloc(((size_t)ns + 2) * sizeof *job->skip_first);
    job->skip_flags = malloc(((size_t)nsteps + 1) * sizeof *job->skip_flags);
    if (!stage_of || !job->decided_at || !job->skip_first || !job->skip_flags) {
        free(stage_of);
        free(job->decided_at), free(job->skip_first), free(job->skip_flags);
        job->decided_at = job->skip_first = job->skip_flags = NULL;
        return -1;
    }
    for (int t = 0; t < ns; t++)
        for (int k = pl->stages[t].first; k < pl->stages[t].first + pl->stages[t].count; k++) stage_of[k] = t;
    int nf = 0;
    bool any = false;
    for (int t = 0; t < ns; t++) {
        const flow_stage *st = &pl->stages[t];
        job->skip_first[t] = nf;
        int at = st->serial && t < 64 && st->count > 0 ? 0 : -1;
        for (int k = st->first; at >= 0 && k < st->first + st->count; k++) {
            int g = pl->steps[k].guard;
            int sel = -1;
            for (int j = 0; g >= 0 && j < nsteps && sel < 0; j++) {
                const flow_step *x = &pl->steps[j];
                int nalts = x->kind == FS_SELECT_IF ? 2 : x->kind == FS_SELECT_CASE ? x->e->u.cas.nalts : 0;
                if (nalts && g >= x->flag0 && g < x->flag0 + nalts) sel = stage_of[j];
            }
            if (sel < 0 || sel >= t) at = -1; /* unguarded, or decided in this very stage */
            else {
                if (sel > at) at = sel;
                job->skip_flags[nf++] = g;
            }
        }
        if (at < 0) nf = job->skip_first[t];
        job->decided_at[t] = at;
        any |= at >= 0;
    }
    job->skip_first[ns] = nf;
    free(stage_of);
    if (!any) {
        free(job->decided_at), free(job->skip_first), free(job->skip_flags);
        job->decided_at = job->skip_first = job->skip_flags = NULL;
    }
    return 0;
}

static sched_status flow_stage_run(void *ud, int stage, sched_batch *sb, int worker)
{
    flow_job *job = ud;
    flow_batch *b = sb->data;
    const flow_plan *pl = job->plan;
    eval_ctx *cx = &job->rt->wcx[worker].cx;
    if (stage == pl->nstages) return flow_output(job, cx, b, worker, sb->seq);
    const flow_stage *st = &pl->stages[stage];
    cx->stack_base = 0; /* this activation may run on another thread than the last */
    uint64_t t0 = flow_now_ns();
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
            if (!cx->err.code) eval_oom(cx, job->loc);
            flow_record_error(job, cx, (long long)(b->first + (size_t)i));
            memset(b->dead + i, 1, (size_t)(b->n - i));
            status = SCHED_STOP;
        }
    }
    if (!b->loaded) {
        /* Frames of items that died before loading hold units: harmless. */
        b->loaded = true;
    }
    if (job->decided_at) flow_mark_skips(job, b, stage, sb);
    uint64_t t1 = flow_now_ns();
    b->busy_ns += t1 - t0;
    if (job->prof) flow_prof_note(job, stage, job->prof->names[stage], worker, t0, t1, nran, sb->seq);
    return status;
}

static void flow_on_idle(void *ud, int worker, uint64_t t0, uint64_t t1)
{
    flow_job *job = ud;
    trace_slice(job->rt->trace, worker, "parked", "sched", t0, t1, -1, -1);
}

/* Names and counters for a new plan's stages (profile or trace runs). */
static int flow_prof_init(flow_runtime *rt, const flow_plan *pl, flow_plan_prof *pf)
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
        flow_stage_describe(rt->fi, pl, (int)i, &b);
        buf_printf(&b, " (line %d)", flow_stage_line(pl, (int)i));
        if (!(pf->names[i] = buf_take(&b))) return -1;
    }
    return 0;
}

static void flow_prof_free(const flow_plan *pl, flow_plan_prof *pf)
{
    for (int i = 0; pf->names && i < pl->nstages; i++) free(pf->names[i]);
    free(pf->names);
    free(pf->cells);
    free(pf->wait_ns);
}

/* A block for a batch of size items: a released one if it has room, else
 * a new one with room for the next power of two items. NULL: no memory. */
static flow_batch *flow_batch_get(flow_job *job, size_t size)
{
    const flow_plan *pl = job->plan;
    pthread_mutex_lock(&job->spare_lock);
    flow_batch *b = job->spare;
    if (b) job->spare = b->next_spare;
    pthread_mutex_unlock(&job->spare_lock);
    if (b && b->cap < size) {
        free(b);
        b = NULL;
    }
    if (!b) {
        size_t cap = 1;
        while (cap < size) cap *= 2;
        size_t nin = job->stream ? cap : 0;
        b = malloc(sizeof *b + (cap * (size_t)pl->nslots + nin) * sizeof(stc_value) + cap + cap * (size_t)pl->nflags);
        if (!b) return NULL;
        b->cap = cap;
    }
    b->slots = (stc_value *)(b + 1);
    b->in = b->slots + b->cap * (size_t)pl->nslots;
    b->dead = (uint8_t *)(b->in + (job->stream ? b->cap : 0));
    b->flags = b->dead + b->cap;
    return b;
}

static void flow_batch_put(flow_job *job, flow_batch *b)
{
    pthread_mutex_lock(&job->spare_lock);
    b->next_spare = job->spare;
    job->spare = b;
    pthread_mutex_unlock(&job->spare_lock);
}

static int flow_source(void *ud, sched_batch *sb, int worker)
{
    flow_job *job = ud;
    const flow_plan *pl = job->plan;
    if (job->src_end) return job->src_failed ? SCHED_SOURCE_STOP : 0;
    if (job->next >= job->n) return 0;
    size_t size = 1;
    uint64_t est = atomic_load_explicit(&job->ns_per_item, memory_order_relaxed);
    if (est) size = FLOW_BATCH_TARGET_NS / est;
    size_t slack = job->n / (4 * (size_t)job->rt->workers); /* keep every worker fed */
    if (!job->stream && size > slack) size = slack;
    if (size > (size_t)job->rt->capacity) size = (size_t)job->rt->capacity;
    if (size < 1) size = 1;
    if (size > job->n - job->next) size = job->n - job->next;
    size_t nslots = size * (size_t)pl->nslots, nflags = size * (size_t)pl->nflags;
    flow_batch *b = flow_batch_get(job, size);
    if (!b) {
        char *msg = malloc(sizeof "out of memory");
        if (msg) memcpy(msg, "out of memory", sizeof "out of memory");
        flow_record(job, (eval_err){.code = STC_ENOMEM, .message = msg, .loc = job->loc,
                                    .thread = job->thread, .item = (long long)job->next},
                    (long long)job->next);
        return SCHED_SOURCE_STOP;
    }
    b->first = job->next;
    b->n = (int)size;
    b->loaded = false;
    b->busy_ns = 0;
    for (size_t j = 0; j < nslots; j++) b->slots[j] = stc_value_unit();
    memset(b->dead, 0, size);
    memset(b->flags, 0, nflags);
    if (job->stream) {
        /* Read up to size items; a partial batch still goes on. */
        eval_ctx *cx = &job->rt->wcx[worker].cx;
        uint64_t t0 = job->prof ? flow_now_ns() : 0;
        size_t k = 0;
        while (k < size) {
            int rc = eval_stream_pull(cx, job->stream, (long long)job->next + (long long)k, &b->in[k]);
            if (rc == 1) {
                k++;
                continue;
            }
            job->src_end = true;
            if (rc < 0) {
                job->src_failed = true;
                flow_record_error(job, cx, (long long)(job->next + k));
            }
            break;
        }
        if (job->prof) flow_prof_note(job, FLOW_INPUT_STAGE(pl), "input", worker, t0, flow_now_ns(), (int)k, sb->seq);
        if (k == 0) {
            flow_batch_put(job, b);
            return job->src_failed ? SCHED_SOURCE_STOP : 0;
        }
        size = k;
        b->n = (int)size;
    }
    job->next += size;
    long long live = atomic_fetch_add(&job->live, (long long)size) + (long long)size;
    long long peak = atomic_load(&job->peak);
    while (live > peak && !atomic_compare_exchange_weak(&job->peak, &peak, live)) {
    }
    sb->data = b;
    return 1;
}

static void flow_release(void *ud, sched_batch *sb, int worker)
{
    (void)worker;
    flow_job *job = ud;
    flow_batch *b = sb->data;
    const flow_plan *pl = job->plan;
    for (int i = 0; i < b->n; i++) {
        stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        if (b->loaded && !b->dead[i] && !job->stream) {
            job->out[b->first + (size_t)i] = slots[pl->result];
            slots[pl->result] = stc_value_unit();
        }
        if (b->loaded) /* else the frame holds only units */
            for (int j = job->ncaps; j < pl->nslots; j++) val_release(slots[j]);
        if (job->stream) val_release(b->in[i]);
    }
    if (b->n > 0 && b->busy_ns > 0) {
        uint64_t est = b->busy_ns / (uint64_t)b->n, old = atomic_load_explicit(&job->ns_per_item, memory_order_relaxed);
        atomic_store_explicit(&job->ns_per_item, old ? (3 * old + est) / 4 : est + 1, memory_order_relaxed);
    }
    atomic_fetch_sub(&job->live, (long long)b->n);
    flow_batch_put(job, b);
    sb->data = NULL;
}

static const flow_plan *flow_plan_get(flow_runtime *rt, const ir_expr *e, const ir_fun *fn, int thread)
{
    for (int i = 0; i < rt->nplans; i++) {
        const flow_plan *pl = rt->plans[i];
        if (pl->smap == e && pl->fn == fn && (fn || pl->thread == thread)) return pl;
    }
    if (rt->nplans == rt->plans_cap) {
        int ncap = rt->plans_cap ? 2 * rt->plans_cap : 8;
        flow_plan **n = realloc(rt->plans, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        rt->plans = n;
        if (rt->profile || rt->trace) {
            flow_plan_prof *np = realloc(rt->profs, (size_t)ncap * sizeof *np);
            if (!np) return NULL;
            rt->profs = np;
        }
        rt->plans_cap = ncap;
    }
    flow_plan *pl = flow_plan_build(rt->fi, e, fn, thread);
    if (!pl) return NULL;
    if ((rt->profile || rt->trace) && flow_prof_init(rt, pl, &rt->profs[rt->nplans]) != 0) {
        flow_prof_free(pl, &rt->profs[rt->nplans]);
        return NULL;
    }
    rt->plans[rt->nplans++] = pl;
    return pl;
}

int flow_start_pool(flow_runtime *rt)
{
    if (!rt->wcx) {
        rt->wcx = aligned_alloc(64, (size_t)rt->workers * sizeof *rt->wcx);
        if (!rt->wcx) return -1;
        for (int i = 0; i < rt->workers; i++) eval_ctx_init(&rt->wcx[i].cx, rt->p, NULL);
    }
    if (!rt->caches) {
        rt->caches = calloc((size_t)rt->workers, sizeof *rt->caches);
        rt->outer_caches = calloc((size_t)rt->workers, sizeof *rt->outer_caches);
        rt->outer_plain = calloc((size_t)rt->workers, sizeof *rt->outer_plain);
        if (!rt->caches || !rt->outer_caches || !rt->outer_plain) {
            free(rt->caches);
            free(rt->outer_caches);
            free(rt->outer_plain);
            rt->caches = rt->outer_caches = NULL;
            rt->outer_plain = NULL;
            return -1;
        }
        /* A worker without a cache (out of memory) just uses malloc. */
        rt->depot = val_depot_new();
        for (int i = 0; i < rt->workers; i++) rt->caches[i] = val_cache_new(rt->depot);
    }
    if (!rt->pool) {
        rt->pool = sched_pool_new(rt->workers);
        rt->own_pool = true;
    }
    return rt->pool ? 0 : -1;
}

/* Runs smap e over xs (into *out) or over stream s (*count: items read). */
static int flow_run(flow_runtime *rt, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_items *xs,
                    const eval_stream *s, stc_value *out, long long *count)
{
    size_t n = s ? SIZE_MAX : xs->n;
    const ir_fun *fn = NULL;
    if (thread < 0) {
        if (fnv.tag != STC_T_FUNC) return EVAL_SMAP_DECLINED;
        fn = (const ir_fun *)val_as_func(fnv)->code;
    }
    if (n < 2 || cx->depth + 2 >= EVAL_MAX_DEPTH) { /* nothing to overlap, or at the limit */
        rt->stats.smaps_sequential++;
        return EVAL_SMAP_DECLINED;
    }
    ir_loc loc = e->u.call.callee_loc;
    const flow_plan *pl = flow_plan_get(rt, e, fn, thread);
    if (!pl) return eval_oom(cx, loc);
    flow_plan_prof *prof = NULL;
    if (rt->profs)
        for (int i = 0; i < rt->nplans; i++)
            if (rt->plans[i] == pl) prof = &rt->profs[i];
    if (pl->nstages == 0 || (pl->nstages == 1 && pl->stages[0].serial)) {
        rt->stats.smaps_sequential++; /* one serial stage: the evaluator is as good */
        return EVAL_SMAP_DECLINED;
    }
    int nstages = pl->nstages + (s ? 1 : 0); /* a stream's results go out in a last serial stage */
    bool *serial = malloc((size_t)nstages * sizeof *serial);
    /* release fills every item of the result list on success */
    stc_value result = s ? stc_value_unit() : val_seq_alloc_unfilled(STC_T_LIST, n);
    if (!serial || result.tag == STC_T_INVALID || flow_start_pool(rt) != 0) {
        free(serial);
        val_release(result);
        return eval_oom(cx, loc);
    }
    for (int i = 0; i < pl->nstages; i++) serial[i] = pl->stages[i].serial;
    if (s) serial[pl->nstages] = true;
    for (int i = 0; i < rt->workers; i++) {
        rt->wcx[i].cx.states = cx->states;
        rt->wcx[i].cx.cancel = cx->cancel;
    }
    flow_job job = {.rt = rt, .plan = pl, .items = s ? NULL : xs->items, .start = s ? 0 : xs->start, .n = n,
                    .stream = s, .out = s ? NULL : val_seq_items(result), .base_depth = cx->depth, .loc = loc,
                    .thread = cx->thread, .err_index = -1};
    if (fn) {
        job.caps = val_as_func(fnv)->caps;
        job.ncaps = fn->ncaptures;
    }
    job.prof = prof;
    if (prof && prof->order < 0) prof->order = rt->npipelines++;
    if (prof && s) prof->stream = true;
    flow_skips_init(&job); /* no skipping when out of memory */
    uint64_t start = flow_now_ns();
    atomic_init(&job.ns_per_item, 0);
    atomic_init(&job.live, 0);
    atomic_init(&job.peak, 0);
    pthread_mutex_init(&job.err_lock, NULL);
    pthread_mutex_init(&job.spare_lock, NULL);
    /* Tokens (batches in flight). A list is in memory anyway, so it gets
     * one per worker twice over plus one per stage, room for every stage to
     * hold a batch. A stream gets 2 x workers + 1: its peak memory is
     * tokens x batch size items, and a long stream reaches that peak sooner
     * or later, so it must be one that a short stream reaches too (with
     * 2 x workers + stages a 10M-line log stream peaked 10% above a
     * 100K-line one; throughput is the same, bench/stream_mem.sh). */
    int tokens = rt->max_batches ? rt->max_batches
                 : s             ? 2 * rt->workers + 1
                                 : 2 * rt->workers + pl->nstages;
    sched_pipeline spl = {.nstages = nstages, .serial = serial, .run = flow_stage_run,
                          .source = flow_source, .release = flow_release, .ud = &job,
                          .max_batches = tokens, .perturb_seed = rt->perturb_seed,
                          .watchdog_ms = rt->watchdog_ms,
                          .wait_ns = prof && rt->profile ? prof->wait_ns : NULL,
                          .on_idle = rt->trace ? flow_on_idle : NULL, .on_worker = flow_on_worker};
    int rc = sched_run(rt->pool, &spl);
    if (prof) prof->wall_ns += flow_now_ns() - start;
    pthread_mutex_destroy(&job.err_lock);
    pthread_mutex_destroy(&job.spare_lock);
    while (job.spare) {
        flow_batch *b = job.spare;
        job.spare = b->next_spare;
        free(b);
    }
    free(serial);
    free(job.decided_at), free(job.skip_first), free(job.skip_flags);
    rt->stats.smaps_parallel++;
    size_t nread = s ? job.next : n;
    if (count) *count = (long long)nread;
    rt->stats.items += (long long)nread;
    if (atomic_load(&job.peak) > rt->stats.peak_in_flight) rt->stats.peak_in_flight = atomic_load(&job.peak);
    long long bound = (long long)tokens * rt->capacity;
    if (bound > rt->stats.max_in_flight) rt->stats.max_in_flight = bound;
    if (rc != 0 && job.err_index < 0) {
        val_release(result);
        return eval_oom(cx, loc);
    }
    if (job.err_index >= 0) {
        val_release(result);
        if (cx->err.code == 0) {
            cx->err = job.err;
            return cx->err.code;
        }
        int code = job.err.code;
        free(job.err.message);
        return code;
    }
    *out = result;
    return 0;
}

/* The smap hook (see eval_internal.h). */
static int flow_smap(void *ud, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_items *xs,
                     stc_value *out)
{
    return flow_run(ud, cx, e, thread, fnv, xs, NULL, out, NULL);
}

/* The streamed smap of main. */
static int flow_stream(void *ud, eval_ctx *cx, const ir_expr *e, int thread, stc_value fnv, const eval_stream *s,
                       long long *count)
{
    stc_value unused = stc_value_unit();
    return flow_run(ud, cx, e, thread, fnv, NULL, s, &unused, count);
}

flow_runtime *flow_runtime_new(const ir_program *p, const flow_opts *o)
{
    if (o->workers < 1 || o->queue_capacity < 0 || o->max_batches < 0) return NULL;
    flow_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return NULL;
    rt->p = p;
    int workers = o->workers, queue_capacity = o->queue_capacity, max_batches = o->max_batches;
    rt->perturb_seed = o->perturb_seed;
    rt->watchdog_ms = o->watchdog_ms;
    rt->profile = o->profile;
    rt->trace = o->trace;
    rt->pool = o->pool;
    rt->workers = workers;
    rt->capacity = queue_capacity ? queue_capacity : FLOW_DEFAULT_CAPACITY;
    rt->max_batches = max_batches;
    rt->hook = (eval_smap_hook){.run = flow_smap, .stream = flow_stream, .tuple = flow_tuple, .lets = flow_lets,
                                .ud = rt};
    if (!(rt->fi = flow_info_new(p))) {
        free(rt);
        return NULL;
    }
    return rt;
}

void flow_on_worker(void *ud, int worker, bool joining)
{
    flow_runtime *rt = *(flow_runtime **)ud; /* every job's ud starts with its runtime */
    if (joining) {
        rt->outer_caches[worker] = val_cache_use(rt->caches[worker]);
        /* One worker: the job's values stay on this thread, counts stay as
         * they were (plain in a run).  More: atomic on every worker until
         * it leaves; job start and end go through the pool's mutex, which
         * orders these changes against the plain ones around the job. */
        rt->outer_plain[worker] = val_counts_set_plain(sched_pool_workers(rt->pool) == 1 && val_counts_plain);
    } else {
        val_cache_use(rt->outer_caches[worker]);
        val_counts_set_plain(rt->outer_plain[worker]);
    }
}

void flow_runtime_free(flow_runtime *rt)
{
    if (!rt) return;
    if (rt->own_pool) sched_pool_free(rt->pool);
    for (int i = 0; rt->caches && i < rt->workers; i++) val_cache_free(rt->caches[i]);
    val_depot_free(rt->depot);
    free(rt->caches);
    free(rt->outer_caches);
    free(rt->outer_plain);
    for (int i = 0; rt->wcx && i < rt->workers; i++) eval_ctx_fini(&rt->wcx[i].cx);
    free(rt->wcx);
    for (int i = 0; rt->profs && i < rt->nplans; i++) flow_prof_free(rt->plans[i], &rt->profs[i]);
    free(rt->profs);
    free(rt->plans);
    free(rt->tasks); /* the plans are in fi->mem */
    flow_info_free(rt->fi);
    free(rt);
}

const eval_smap_hook *flow_runtime_hook(flow_runtime *rt) { return &rt->hook; }

flow_stats flow_runtime_stats(const flow_runtime *rt) { return rt->stats; }

/* Keeps s in pf->strings (taking it); NULL when s is NULL or no memory. */
static const char *flow_keep(result_profile *pf, char *s)
{
    if (!s) return NULL;
    pf->strings[pf->nstrings++] = s;
    return s;
}

static char *flow_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The stage shown in profile row k of a plan: a stream's input first and
 * its output last. */
static int flow_row_stage(const flow_plan *pl, const flow_plan_prof *pp, int k)
{
    if (!pp->stream) return k;
    if (k == 0) return FLOW_INPUT_STAGE(pl);
    return k - 1 < pl->nstages ? k - 1 : FLOW_OUTPUT_STAGE(pl);
}

result_profile *flow_runtime_profile(const flow_runtime *rt, double wall_ms)
{
    result_profile *pf = calloc(1, sizeof *pf);
    if (!pf) return NULL;
    pf->workers = rt->workers;
    pf->wall_ms = wall_ms;
    pf->npipelines = rt->npipelines;
    size_t nst = 0;
    for (int i = 0; rt->profs && i < rt->nplans; i++)
        if (rt->profs[i].order >= 0) nst += (size_t)rt->plans[i]->nstages + 2;
    pf->pipeline_wall_ms = calloc((size_t)rt->npipelines + 1, sizeof *pf->pipeline_wall_ms);
    pf->stages = calloc(nst + 1, sizeof *pf->stages);
    pf->strings = calloc(3 * nst + (size_t)rt->npipelines + 1, sizeof *pf->strings);
    if (!pf->pipeline_wall_ms || !pf->stages || !pf->strings) goto oom;
    /* Stages in pipeline order, then stage order. */
    for (int order = 0; order < rt->npipelines; order++) {
        for (int i = 0; i < rt->nplans; i++) {
            const flow_plan_prof *pp = &rt->profs[i];
            const flow_plan *pl = rt->plans[i];
            if (pp->order != order) continue;
            pf->pipeline_wall_ms[order] = (double)pp->wall_ns / 1e6;
            buf where = BUF_INIT;
            buf_printf(&where, "%s:%d:%d", rt->p->file ? rt->p->file : "<input>", pl->smap->u.call.callee_loc.line,
                       pl->smap->u.call.callee_loc.col);
            const char *smap = flow_keep(pf, buf_take(&where));
            if (!smap) goto oom;
            /* A stream's input and output are serial stages too: reading
             * and writing items costs time no worker count divides. */
            int nrows = pl->nstages + (pp->stream ? 2 : 0);
            for (int k = 0; k < nrows; k++) {
                int s = flow_row_stage(pl, pp, k);
                stc_stage_profile *sp = &pf->stages[pf->nstages++];
                buf name = BUF_INIT;
                bool io = s >= pl->nstages;
                if (io) buf_puts(&name, s == FLOW_INPUT_STAGE(pl) ? "input" : "output");
                else flow_stage_describe(rt->fi, pl, s, &name);
                sp->pipeline = order;
                sp->smap = smap;
                sp->name = flow_keep(pf, buf_take(&name));
                sp->kind = flow_keep(pf, flow_strdup(io ? (s == FLOW_INPUT_STAGE(pl) ? "serial, source" : "serial, sink")
                                                        : flow_stage_kind(rt->fi, pl, s)));
                if (!sp->name || !sp->kind) goto oom;
                sp->line = io ? pl->smap->u.call.callee_loc.line : flow_stage_line(pl, s);
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
            }
        }
    }
    return pf;
oom:
    profile_free(pf);
    return NULL;
}
