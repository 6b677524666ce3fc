/* owned.c - serial stages owned by another process (docs/DESIGN.md 7c).
 *
 * A serial stage whose steps reach only lang threads that no other stage
 * of the plan reaches may be run by a peer of the transport
 * (stc_remote.start_to) for the rest of a job: the batch that goes first
 * carries the states of the threads it reaches (taken out of main's
 * states), the peer keeps them and runs the stage's batches in the order
 * they were sent (the stage's turn on rank 0 is the send order, and the
 * transport keeps it), and at the job's end the states come back into
 * main's states, where main, `state(t)` and the next job find them.  So a
 * thread's state is never in two places: rank 0 holds it between jobs and
 * while the stage runs here, the peer while it runs there.
 *
 * Placement (the cost model): the stages that may go take turns, in plan
 * order from one job to the next, over the peers and this process (which
 * runs every other stage too): with 2 ranks, of comp_write's f and h one
 * goes to rank 1 and one stays on rank 0.  A stage whose turn is a peer
 * goes from its first batch, and the peer measures it: each reply to an
 * owned batch carries the CPU time the peer spent on it.  Once its first
 * batches are back (2, or 1 ms of work), it stays there when its work on
 * them was at least FLOW_OWNED_GAIN x the transport's estimated cost for
 * them here (FLOW_OWNED_BATCH_NS + FLOW_OWNED_ITEM_NS an item: encoding
 * the frames, decoding the reply, the messages); else its states come back
 * (the peer answers the fetch after every batch sent before it) and it
 * runs here for the rest of the job.  So no item of a dear stage runs
 * here to be measured (rank 0 ran conditional's first f item, 4% of its
 * share, when the stage was measured here first), and a cheap one costs a
 * few trips once.  A stage found cheap is kept here in the plan's later
 * jobs without a turn (flow_plan_use.owned_cheap), measured here, and tried
 * on a peer again if it has become dear.  (serial_min_ns < 0, the tests:
 * every such stage goes, round robin over the peers, and stays.) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "flow/owned.h"
#include "flow/remote_wire.h"
#include "value/value.h"

/* The transport's cost here per batch and per item, estimated from
 * logstats over MPI (docs/DESIGN.md 7c: ~2 us an item over both ranks with
 * whole frames, ~0.5 ms of CPU a batch of ~240 items). */
#define FLOW_OWNED_BATCH_NS 25000
#define FLOW_OWNED_ITEM_NS 1000
#define FLOW_OWNED_GAIN 4
/* Measured on the peer before deciding: this many batches, or this much
 * work (ns). */
#define FLOW_OWNED_TRIAL_BATCHES 2
#define FLOW_OWNED_TRIAL_NS (1000000 * FLOW_TIME_SCALE)

/* ---- Which serial stages may be owned elsewhere ------------------------------------ */

typedef struct reach {
    const ir_program *p;
    const flow_info *fi;
    bool *fseen;   /* per function: walked */
    bool *threads; /* per thread: reached */
    bool unknown;  /* a call through a function value: any thread */
    bool bad;      /* something that cannot run elsewhere with its states */
} reach;

static void walk(reach *r, const ir_expr *e);

static void walk_fun(reach *r, int f)
{
    if (f < 0 || f >= r->p->nfuns) {
        r->bad = true;
        return;
    }
    if (r->fseen[f]) return;
    r->fseen[f] = true;
    walk(r, r->p->funs[f]->body);
}

static void mark_thread(reach *r, int t)
{
    if (t < 0 || t >= r->p->nthreads) {
        r->bad = r->unknown = true;
        return;
    }
    const ir_thread *th = r->p->threads[t];
    r->threads[t] = true;
    if (th->kind != THREAD_LANG || th->keyed || r->fi->split[t]) r->bad = true;
    else walk_fun(r, th->fun);
}

static void walk(reach *r, const ir_expr *e)
{
    while (e) {
        switch (e->kind) {
        case IR_THREADREF: mark_thread(r, e->u.index); return; /* state(t), or smap(t, ...) */
        case IR_FUNREF: walk_fun(r, e->u.index); return;
        case IR_LAMBDA: e = e->u.fn->body; continue;
        case IR_CALL: {
            int idx = e->u.call.callee.index;
            switch (e->u.call.kind) {
            case CALL_BUILTIN:
                if (idx == BI_SMAP) r->bad = true; /* an inner pipeline */
                if (idx == BI_FOLD || idx == BI_FILTER || idx == BI_UPDATE) {
                    const ir_expr *f = idx == BI_UPDATE ? (e->u.call.nargs == 4 ? e->u.call.args[3] : NULL)
                                                        : (e->u.call.nargs > 0 ? e->u.call.args[0] : NULL);
                    if (!f || (f->kind != IR_LAMBDA && f->kind != IR_FUNREF)) r->unknown = r->bad = true;
                }
                break;
            case CALL_FUN: walk_fun(r, idx); break;
            case CALL_THREAD: mark_thread(r, idx); break;
            default: r->unknown = r->bad = true; break; /* a function value */
            }
            for (int i = 0; i < e->u.call.nargs; i++) walk(r, e->u.call.args[i]);
            return;
        }
        case IR_CASE:
            for (int i = 0; i < e->u.cas.nalts; i++) walk(r, e->u.cas.alts[i].body);
            e = e->a;
            continue;
        case IR_TUPLE:
        case IR_LIST:
            for (int i = 0; i < e->u.agg.nitems; i++) walk(r, e->u.agg.items[i]);
            return;
        default:
            walk(r, e->b);
            walk(r, e->c);
            e = e->a;
            continue;
        }
    }
}

/* What stage t of pl reaches (r->threads, cleared first), and whether it
 * could be owned elsewhere (*ok). */
static void stage_reach(reach *r, const flow_plan *pl, int t, bool *ok)
{
    const flow_stage *st = &pl->stages[t];
    memset(r->fseen, 0, (size_t)r->p->nfuns + 1);
    memset(r->threads, 0, (size_t)r->p->nthreads + 1);
    r->unknown = r->bad = false;
    bool steps_ok = true;
    for (int k = st->first; k < st->first + st->count; k++) {
        const flow_step *s = &pl->steps[k];
        switch (s->kind) {
        case FS_EVAL: walk(r, s->e); break;
        case FS_SELECT_IF:
        case FS_SELECT_CASE:
        case FS_DESTRUCT: break; /* patterns on a slot */
        case FS_SPLIT_OUT:
        case FS_SPLIT_STATE:
        case FS_CALL_C: mark_thread(r, s->thread), steps_ok = false; break;
        default: walk(r, s->e), steps_ok = false; break; /* the shard steps: a keyed call */
        }
    }
    bool any = false;
    for (int i = 0; i < r->p->nthreads; i++) any = any || r->threads[i];
    *ok = steps_ok && st->serial && st->nshards == 0 && st->count > 0 && !r->bad && !r->unknown && any;
}

/* stage_reach over a whole plan: per stage its threads (nstages x
 * nthreads, in *sets) and eligibility (*mask, before the disjointness
 * check); false when out of memory. */
static bool plan_reach(const flow_info *fi, const flow_plan *pl, bool **sets, uint64_t *mask, bool *unknown)
{
    const ir_program *p = fi->p;
    int n = pl->nstages < 64 ? pl->nstages : 64;
    reach r = {.p = p, .fi = fi};
    r.fseen = malloc((size_t)p->nfuns + 1);
    r.threads = malloc((size_t)p->nthreads + 1);
    *sets = calloc((size_t)n * (size_t)p->nthreads + 1, 1);
    *mask = 0;
    *unknown = false;
    if (!r.fseen || !r.threads || !*sets) {
        free(r.fseen), free(r.threads), free(*sets);
        *sets = NULL;
        return false;
    }
    for (int t = 0; t < n; t++) {
        bool ok;
        stage_reach(&r, pl, t, &ok);
        *unknown = *unknown || r.unknown;
        memcpy(*sets + (size_t)t * (size_t)p->nthreads, r.threads, (size_t)p->nthreads);
        if (ok) *mask |= (uint64_t)1 << t;
    }
    free(r.fseen), free(r.threads);
    return true;
}

/* ---- Which keyed threads' shard stages may be owned elsewhere ---------------------- */

/* The keyed thread whose shard stage t is, or -1. */
static int shard_stage_thread(const flow_plan *pl, int t)
{
    const flow_stage *st = &pl->stages[t];
    if (!st->nshards || st->count < 1) return -1;
    const flow_step *s = &pl->steps[st->first];
    return s->kind == FS_KEYED || s->kind == FS_IKEYED ? s->thread : -1;
}

/* Whether stage u reaches thread k other than through the shard steps of
 * k's keyed calls (its shard choice, its shard stages). */
static bool stage_reaches_besides_shards(reach *r, const flow_plan *pl, int u, int k)
{
    const flow_stage *st = &pl->stages[u];
    memset(r->fseen, 0, (size_t)r->p->nfuns + 1);
    memset(r->threads, 0, (size_t)r->p->nthreads + 1);
    r->unknown = r->bad = false;
    for (int i = st->first; i < st->first + st->count; i++) {
        const flow_step *s = &pl->steps[i];
        bool shard_step = s->kind == FS_SHARD || s->kind == FS_ISHARD || s->kind == FS_KEYED || s->kind == FS_IKEYED;
        if (shard_step && s->thread == k) continue;
        if (s->kind == FS_SPLIT_OUT || s->kind == FS_SPLIT_STATE || s->kind == FS_CALL_C) mark_thread(r, s->thread);
        else if (s->kind == FS_EVAL || shard_step) walk(r, s->e);
    }
    return r->unknown || r->threads[k];
}

/* The shard stages of pl a peer may own: a keyed thread's (stc__flow_shard_plan)
 * whose function reaches no thread (not even its own: its calls then need
 * no other state than the shard map and its init) through every function
 * it calls, calls no function value and no smap, and which no stage
 * reaches but through its shard steps.  Its trailing steps are copies. */
static uint64_t shard_owned_stages(flow_info *fi, const flow_plan *pl)
{
    const ir_program *p = fi->p;
    int n = pl->nstages < 64 ? pl->nstages : 64;
    uint64_t ok = 0;
    reach r = {.p = p, .fi = fi};
    r.fseen = malloc((size_t)p->nfuns + 1);
    r.threads = malloc((size_t)p->nthreads + 1);
    for (int t = 0; r.fseen && r.threads && t < n; t++) {
        int k = shard_stage_thread(pl, t);
        if (k < 0 || p->threads[k]->kind != THREAD_LANG || !p->threads[k]->keyed) continue;
        memset(r.fseen, 0, (size_t)p->nfuns + 1);
        memset(r.threads, 0, (size_t)p->nthreads + 1);
        r.unknown = r.bad = false;
        walk_fun(&r, p->threads[k]->fun);
        bool alone = !r.bad && !r.unknown;
        for (int i = 0; alone && i < p->nthreads; i++) alone = !r.threads[i];
        for (int u = 0; alone && u < pl->nstages; u++)
            alone = shard_stage_thread(pl, u) == k || !stage_reaches_besides_shards(&r, pl, u, k);
        const flow_stage *st = &pl->stages[t];
        for (int i = st->first + 1; alone && i < st->first + st->count; i++) { /* the copies after the call */
            const ir_expr *e = pl->steps[i].e;
            alone = pl->steps[i].kind == FS_EVAL && (e->kind == IR_LIT || e->kind == IR_VAR || e->kind == IR_FUNREF);
        }
        if (alone) ok |= (uint64_t)1 << t;
    }
    free(r.fseen), free(r.threads);
    return ok;
}

uint64_t stc__flow_remote_owned_stages(flow_info *fi, const flow_plan *pl)
{
    const ir_program *p = fi->p;
    bool *sets, unknown;
    uint64_t cand;
    if (p->nthreads == 0 || !plan_reach(fi, pl, &sets, &cand, &unknown)) return 0;
    uint64_t ok = 0;
    int n = pl->nstages < 64 ? pl->nstages : 64;
    /* A stage that may reach any thread (a function value) could touch a
     * moved state: then nothing moves. */
    for (int t = 0; t < n && !unknown; t++) {
        if (!(cand >> t & 1)) continue;
        bool alone = true;
        for (int u = 0; u < n && alone; u++)
            for (int i = 0; u != t && i < p->nthreads && alone; i++)
                alone = !(sets[(size_t)t * (size_t)p->nthreads + (size_t)i] && sets[(size_t)u * (size_t)p->nthreads + (size_t)i]);
        if (alone) ok |= (uint64_t)1 << t;
    }
    free(sets);
    return unknown ? ok : ok | shard_owned_stages(fi, pl);
}

/* ---- The slots a stage reads ------------------------------------------------------ */

static void mark_slot(uint8_t *set, int nslots, int slot)
{
    if (slot >= 0 && slot < nslots) set[slot] = 1;
}

/* The frame slots e (evaluated in the frame block at `base`) may read:
 * its variables, a called closure's variable, the captures of the
 * lambdas it makes (not their bodies: their own frames), over-counting
 * binders, which a step writes. */
static void reads_walk(const ir_expr *e, int base, uint8_t *set, int nslots)
{
    while (e) {
        switch (e->kind) {
        case IR_VAR: mark_slot(set, nslots, base + e->u.var->slot); return;
        case IR_LAMBDA:
            for (int i = 0; i < e->u.fn->ncaptures; i++) mark_slot(set, nslots, base + e->u.fn->captures[i]->slot);
            return;
        case IR_CALL:
            if (e->u.call.kind == CALL_VALUE && e->u.call.callee.var)
                mark_slot(set, nslots, base + e->u.call.callee.var->slot);
            for (int i = 0; i < e->u.call.nargs; i++) reads_walk(e->u.call.args[i], base, set, nslots);
            return;
        case IR_CASE:
            for (int i = 0; i < e->u.cas.nalts; i++) reads_walk(e->u.cas.alts[i].body, base, set, nslots);
            e = e->a;
            continue;
        case IR_TUPLE:
        case IR_LIST:
            for (int i = 0; i < e->u.agg.nitems; i++) reads_walk(e->u.agg.items[i], base, set, nslots);
            return;
        default:
            reads_walk(e->b, base, set, nslots);
            reads_walk(e->c, base, set, nslots);
            e = e->a;
            continue;
        }
    }
}

void stc__flow_stage_reads(const flow_plan *pl, int stage, uint8_t *set)
{
    const flow_stage *st = &pl->stages[stage];
    for (int k = st->first; k < st->first + st->count; k++) {
        const flow_step *s = &pl->steps[k];
        switch (s->kind) {
        case FS_EVAL: reads_walk(s->e, s->base, set, pl->nslots); break;
        case FS_SELECT_IF:
        case FS_SELECT_CASE:
        case FS_DESTRUCT: mark_slot(set, pl->nslots, s->src); break;
        case FS_KEYED: reads_walk(s->e, s->base, set, pl->nslots); break; /* a call of leaves */
        case FS_IKEYED: /* its temporaries (FS_ISHARD evaluated the list) */
            for (int i = 0; i < FLOW_SHARD_TEMPS; i++) mark_slot(set, pl->nslots, s->src + i);
            break;
        default: memset(set, 1, (size_t)pl->nslots); break; /* (never in a remote stage) */
        }
    }
}

/* job->remote_reads for the stages in remote_mask (NULL when out of
 * memory: no batch goes). */
static void job_reads(flow_job *job)
{
    const flow_plan *pl = job->plan;
    int n = pl->nstages < 64 ? pl->nstages : 64;
    if (!job->remote_mask || pl->nslots < 1) return;
    uint8_t *reads = calloc((size_t)n * (size_t)pl->nslots, 1);
    if (!reads) return;
    for (int t = 0; t < n; t++)
        if (job->remote_mask >> t & 1) stc__flow_stage_reads(pl, t, reads + (size_t)t * (size_t)pl->nslots);
    job->remote_reads = reads;
}

/* ---- A replicated stage's context: read-only threads' states, captures ---------- */

/* job->remote_ctx for the replicated stages in remote_mask: per stage, the
 * states of the read-only threads it reaches (calls or state(t); remote.c
 * lets no other thread in) as they are now in cx's states, which no one
 * writes (a read-only thread's calls leave the state as it was, and its
 * state never moves out for a call, ir/moves.c), then the closure's
 * captures; encoded once for the job, and keyed when large (remote_wire.h:
 * a peer keeps a large context, lending its states to each batch).  A
 * stage whose context cannot travel (a user object), exceeds
 * FLOW_REMOTE_CTX_MAX or cannot be encoded for want of memory runs here
 * for the job. */
static void job_contexts(flow_job *job, eval_ctx *cx)
{
    flow_runtime *rt = job->rt;
    const flow_plan *pl = job->plan;
    const ir_program *p = rt->p;
    uint64_t mask = job->remote_mask & pl->remote_ok;
    if (!mask) return;
    bool *sets = NULL, unknown;
    uint64_t cand;
    if (!rt->rnames || (p->nthreads > 0 && (!cx->states || !plan_reach(rt->fi, pl, &sets, &cand, &unknown)))) {
        job->remote_mask &= ~pl->remote_ok; /* (cannot say which reach a state) */
        return;
    }
    int n = pl->nstages < 64 ? pl->nstages : 64;
    job->remote_ctx = calloc((size_t)n, sizeof *job->remote_ctx);
    job->remote_ctx_key = calloc((size_t)n, sizeof *job->remote_ctx_key);
    if (!job->remote_ctx || !job->remote_ctx_key) {
        free(job->remote_ctx), free(job->remote_ctx_key);
        job->remote_ctx = NULL, job->remote_ctx_key = NULL;
        job->remote_mask &= ~pl->remote_ok;
        free(sets);
        return;
    }
    /* the slots each stage reads: a capture it does not read goes as () */
    uint8_t *reads = job->ncaps > 0 ? malloc((size_t)pl->nslots) : NULL;
    for (int t = 0; t < n; t++) {
        if (!(mask >> t & 1)) continue;
        if (reads) memset(reads, 0, (size_t)pl->nslots), stc__flow_stage_reads(pl, t, reads);
        const bool *set = sets ? sets + (size_t)t * (size_t)p->nthreads : NULL;
        int k = 0;
        for (int i = 0; set && i < p->nthreads; i++) k += set[i];
        buf *b = &job->remote_ctx[t];
        stc__val_wire_put_uvarint(b, (uint64_t)k);
        int rc = 0;
        for (int i = 0; rc == 0 && k && i < p->nthreads; i++) {
            if (!set[i]) continue;
            stc__val_wire_put_uvarint(b, (uint64_t)i);
            rc = stc__val_wire_encode(b, cx->states[i].value, &rt->rnames->wf);
        }
        for (int j = 0; rc == 0 && j < job->ncaps; j++)
            rc = stc__val_wire_encode(b, flow_capture_sent(job, reads, j), &rt->rnames->wf);
        if (rc || !buf_ok(b) || b->len > FLOW_REMOTE_CTX_MAX) {
            stc__buf_free(b);
            *b = (buf)BUF_INIT;
            job->remote_mask &= ~((uint64_t)1 << t);
        } else if (b->len > FLOW_CTX_SMALL) {
            job->remote_ctx_key[t] = flow_ctx_key_of(b->data, b->len);
        }
    }
    free(reads);
    free(sets);
}

/* ---- A job's owned stages -------------------------------------------------------- */

static void job_owned(flow_job *job, eval_ctx *cx);

void stc__flow_owned_job_start(flow_job *job, eval_ctx *cx)
{
    job->remote_mask = 0;
    job->owned = NULL;
    job->remote_reads = NULL;
    job->remote_ctx = NULL;
    job->remote_ctx_key = NULL;
    if (!job->rt->remote.call) return;
    job->remote_mask = job->plan->remote_ok;
    job_contexts(job, cx);
    job_owned(job, cx);
    job_reads(job);
}

/* The plan's record of what earlier jobs learnt (main thread only), or
 * NULL (a plan the runtime did not make: no memory). */
static flow_plan_use *plan_use(flow_runtime *rt, const flow_plan *pl)
{
    for (int i = 0; i < rt->nplans; i++)
        if (rt->plans[i] == pl) return &rt->uses[i];
    return NULL;
}

/* Stage t of pl, a keyed thread's shard stage, as owned stage o: its
 * thread, its shard map and shard. */
static void shard_owned(const flow_plan *pl, int t, flow_owned_stage *o)
{
    const flow_step *s = &pl->steps[pl->stages[t].first];
    o->threads[o->nthreads++] = s->thread;
    o->shard_map = s->shard_map;
    o->shard = pl->stages[t].shard;
}

static void job_owned(flow_job *job, eval_ctx *cx)
{
    flow_runtime *rt = job->rt;
    const flow_plan *pl = job->plan;
    /* Not inside a thread's call (its state is in use), and not without
     * peers to own it. */
    if (!pl->remote_owned || !rt->remote.start_to || rt->remote.peers < 1 || job->thread || !rt->rnames || !pl->fn ||
        !cx->states)
        return;
    const ir_program *p = rt->p;
    bool *sets, unknown;
    uint64_t cand;
    if (!plan_reach(rt->fi, pl, &sets, &cand, &unknown)) return;
    /* Round robin over the peers and, under the cost model, this process
     * (place `peers`), which runs the other stages too; a stage an earlier
     * job found cheap stays here without taking a turn. */
    bool model = rt->remote.serial_min_ns >= 0;
    int places = rt->remote.peers + (model ? 1 : 0);
    const flow_plan_use *use = model ? plan_use(rt, pl) : NULL;
    uint64_t cheap = use ? use->owned_cheap : 0;
    int n = __builtin_popcountll(pl->remote_owned);
    flow_owned *ow = calloc(1, sizeof *ow);
    if (ow) ow->st = calloc((size_t)n, sizeof *ow->st);
    bool oom = !ow || !ow->st;
    if (!oom) {
        memset(ow->at, -1, sizeof ow->at);
        ow->states = cx->states;
        for (uint64_t m = pl->remote_owned; m && !oom; m &= m - 1) {
            int t = __builtin_ctzll(m);
            flow_owned_stage *o = &ow->st[ow->n];
            const bool *set = sets + (size_t)t * (size_t)p->nthreads;
            bool kept = cheap >> t & 1;
            *o = (flow_owned_stage){.stage = t, .peer = -1, .want = kept ? rt->remote.peers : rt->next_peer++ % places,
                                    .decided = kept, .kept = kept, .fed = t < FLOW_OWNED_FEED ? rt->owned_feed[t] : 0,
                                    .shard_map = -1};
            atomic_init(&o->peer_ns, 0);
            atomic_init(&o->peer_items, 0);
            atomic_init(&o->peer_batches, 0);
            if (!(o->threads = malloc((size_t)p->nthreads * sizeof *o->threads))) oom = true;
            else if (pl->stages[t].nshards) /* a shard stage: its shard map travels */
                shard_owned(pl, t, o);
            for (int i = 0; !oom && !pl->stages[t].nshards && i < p->nthreads; i++)
                if (set[i]) o->threads[o->nthreads++] = i;
            ow->at[t] = (signed char)ow->n++;
        }
    }
    free(sets);
    if (oom) { /* every stage stays here */
        for (int i = 0; ow && ow->st && i < ow->n; i++) free(ow->st[i].threads);
        if (ow) free(ow->st);
        free(ow);
        return;
    }
    job->owned = ow;
    job->remote_mask |= pl->remote_owned;
}

/* Whether work ns over items and batches is dear enough to run on a peer:
 * at least serial_min_ns an item (> 0), or (0, the model) at least
 * FLOW_OWNED_GAIN x the transport's estimated cost for them here. */
static bool owned_dear(const flow_runtime *rt, uint64_t ns, long long items, int batches)
{
    long long min = rt->remote.serial_min_ns;
    if (items <= 0) return false;
    if (min > 0) return ns >= (uint64_t)min * (uint64_t)items;
    uint64_t cost = (uint64_t)FLOW_OWNED_BATCH_NS * (uint64_t)batches + (uint64_t)FLOW_OWNED_ITEM_NS * (uint64_t)items;
    return ns >= (uint64_t)FLOW_OWNED_GAIN * FLOW_TIME_SCALE * cost;
}

/* What the job learnt about o for the plan's later jobs (main, after the
 * run): cheap on its peer, kept here from now on; dear, or a kept stage
 * that has become dear here, takes its turn again. */
static void owned_learn(flow_job *job, const flow_owned_stage *o)
{
    flow_runtime *rt = job->rt;
    flow_plan_use *use = rt->remote.serial_min_ns >= 0 && o->stage < 64 ? plan_use(rt, job->plan) : NULL;
    if (!use) return;
    uint64_t bit = (uint64_t)1 << o->stage;
    if (o->verdict < 0) use->owned_cheap |= bit;
    else if (o->verdict > 0 || (o->kept && o->batches >= FLOW_OWNED_TRIAL_BATCHES && owned_dear(rt, o->ns, o->items, o->batches)))
        use->owned_cheap &= ~bit;
}

int stc__flow_owned_shards_back(flow_job *job, eval_ctx *cx)
{
    flow_owned *ow = job->owned;
    int rc = 0;
    for (int i = 0; ow && i < ow->n; i++) {
        flow_owned_stage *o = &ow->st[i];
        if (o->shard_map < 0 || !o->moved) continue;
        /* (after an item's error only that error is reported) */
        int r = stc__flow_owned_recall(job, cx, o, job->err_index < 0 && !rc);
        if (r && !rc) rc = r;
    }
    return rc;
}

int stc__flow_owned_job_end(flow_job *job, eval_ctx *cx)
{
    flow_owned *ow = job->owned;
    int rc = 0;
    free(job->remote_reads);
    job->remote_reads = NULL;
    for (int t = 0; job->remote_ctx && t < job->plan->nstages && t < 64; t++) stc__buf_free(&job->remote_ctx[t]);
    free(job->remote_ctx), free(job->remote_ctx_key);
    job->remote_ctx = NULL, job->remote_ctx_key = NULL;
    if (!ow) return 0;
    for (int i = 0; i < ow->n; i++) {
        flow_owned_stage *o = &ow->st[i];
        if (o->moved && o->shard_map < 0) { /* (shard maps came back before the merge) */
            /* (after an item's error only that error is reported) */
            int r = stc__flow_owned_recall(job, cx, o, job->err_index < 0);
            if (r && !rc) rc = r;
        }
        owned_learn(job, o);
        free(o->threads);
    }
    free(ow->st);
    free(ow);
    job->owned = NULL;
    return rc;
}

void stc__flow_owned_note(flow_job *job, int stage, uint64_t ns, int nran)
{
    flow_owned *ow = job->owned;
    if (!ow || stage >= 64 || ow->at[stage] < 0) return;
    flow_owned_stage *o = &ow->st[ow->at[stage]];
    if (!o->kept || nran <= 0) return; /* (only a kept stage is measured here) */
    if (o->fed > 0) ns = (uint64_t)o->fed * (uint64_t)nran; /* (the testing aid) */
    o->ns += ns;
    o->items += nran;
    o->batches++;
}

void stc__flow_owned_measured(flow_owned_stage *o, uint64_t ns, int nran)
{
    if (nran <= 0) return;
    if (o->fed > 0) ns = (uint64_t)o->fed * (uint64_t)nran; /* (the testing aid) */
    atomic_fetch_add(&o->peer_ns, ns);
    atomic_fetch_add(&o->peer_items, nran);
    /* last: a reader that sees the batch sees its figures */
    atomic_fetch_add_explicit(&o->peer_batches, 1, memory_order_release);
}

bool stc__flow_owned_goes(flow_job *job, flow_owned_stage *o)
{
    const stc_remote *r = &job->rt->remote;
    if (o->decided) return o->peer >= 0;
    if (o->want >= r->peers) { /* its turn to stay here */
        o->decided = true;
        return false;
    }
    if (o->peer < 0) { /* its first batch goes, and is measured there */
        o->peer = o->want;
        o->decided = r->serial_min_ns < 0; /* (the tests: there for the job) */
        return true;
    }
    int nb = atomic_load_explicit(&o->peer_batches, memory_order_acquire);
    uint64_t ns = atomic_load(&o->peer_ns);
    if (nb < FLOW_OWNED_TRIAL_BATCHES && ns < FLOW_OWNED_TRIAL_NS) return true; /* still measuring there */
    o->decided = true;
    o->verdict = owned_dear(job->rt, ns, atomic_load(&o->peer_items), nb) ? 1 : -1;
    return o->verdict > 0;
}

/* ---- Waiting for one reply ---------------------------------------------------------- */

typedef struct owned_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;     /* (lock) */
    int rc;        /* (lock) */
    void *reply;   /* (lock) */
    size_t len;    /* (lock) */
} owned_wait;

static void owned_wait_done(void *token, int rc, void *reply, size_t reply_len)
{
    owned_wait *w = token;
    pthread_mutex_lock(&w->lock);
    w->rc = rc, w->reply = reply, w->len = reply_len, w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

int stc__flow_owned_call(flow_runtime *rt, int peer, const buf *req, void **rep, size_t *replen)
{
    owned_wait w = {.done = false};
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    int rc = rt->remote.start_to(rt->remote.ud, peer, req->data, req->len, owned_wait_done, &w);
    if (rc == 0) {
        pthread_mutex_lock(&w.lock);
        while (!w.done) pthread_cond_wait(&w.cond, &w.lock);
        pthread_mutex_unlock(&w.lock);
        rc = w.rc;
        *rep = w.reply, *replen = w.len;
    } else {
        *rep = NULL, *replen = 0;
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return rc;
}
