/* shards.c - keyed threads in an smap as several serial shard stages
 * (docs/DESIGN.md, keyed threads).
 *
 * A serial stage that is one call of a keyed thread t, its arguments
 * computed by earlier steps (leaves), t's function writing no other
 * thread, becomes:
 *
 *   ...[replicated: ..., FS_SHARD: flag (hash(key) % S) ]
 *      ──>[serial: t, shard 0 ]──> ... ──>[serial: t, shard S-1 ]──> ...
 *
 * Shard i's step is guarded by flag i, so it runs exactly the items whose
 * key hashes to i, in item order (a serial stage takes batches in
 * sequence), on its own part of t's key map: the keys hashing to i.
 * Calls on different keys touch different states, so their relative order
 * does not matter, and each key's calls keep the reference's order: the
 * results and the final map are the reference's at any worker count.  A
 * batch with no item for shard i passes it (sched_batch.skip, as a
 * branch), and shard 0 works on batch k + 1 while shard 1 works on batch k.
 *
 * An inner smap whose body is one keyed call, `smap(t, xs)` or
 * `smap(fn w => t(w, ...), xs)` (the call's args leaves, xs pure), the
 * word count's shape, is sharded the same way element by element:
 * FS_ISHARD (replicated) evaluates xs and every element's key, and marks
 * the shards of the item that have elements; shard i's FS_IKEYED runs the
 * item's elements whose key hashes to i, in element order, into their
 * places of the item's result list, which the last shard hands on.  An
 * element failing at j lowers the item's bound to j: later shards run only
 * the elements before it, and the job keeps the error of the lowest
 * (item, element), the reference's; the last shard then ends the item.
 *
 * A shard step runs the evaluator's own call on its shard's map: the
 * worker's context points at a copy of the states array (job->wstates)
 * whose entry for t is the shard map, for the step's duration.
 *
 * The job splits t's map into the shards' maps when it starts and merges
 * them back when it ends (stc__flow_shards_split / _merge: O(keys), the
 * map's nodes relinked by stc__val_map_regroup, nothing allocated per
 * key), so between smaps the thread's state is the one map the evaluator
 * and the final state see (docs/DESIGN.md 7b says why it is not kept
 * split from one sharded smap to the next). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow/owned.h"
#include "util/cancel.h"
#include "value/map.h"
#include "value/wire.h"

int stc__flow_shards_for(int workers) { return workers < 2 ? 1 : workers > FLOW_MAX_SHARDS ? FLOW_MAX_SHARDS : workers; }

/* An inner smap's temporaries in the item's frame, from flow_step.src. */
enum { SHARD_XS, SHARD_FN, SHARD_OF, SHARD_RESULTS, SHARD_BOUND, SHARD_TEMPS };
_Static_assert(SHARD_TEMPS == FLOW_SHARD_TEMPS, "job.h's count of the temporaries");

static bool shard_leaf(const ir_expr *e) { return e->kind == IR_LIT || e->kind == IR_VAR; }

/* Only copies a leaf into a slot (compile.c's trivial steps). */
static bool shard_trivial(const flow_step *s)
{
    return s->kind == FS_EVAL && (s->e->kind == IR_LIT || s->e->kind == IR_VAR || s->e->kind == IR_FUNREF);
}

/* Whether set s holds thread t alone. */
static bool shard_only(const flow_info *fi, flow_set s, int t)
{
    if (s.all || !s.bits) return false;
    for (int i = 0; i < fi->nwords; i++) {
        uint64_t want = i == t / 64 ? (uint64_t)1 << (t % 64) : 0;
        if (s.bits[i] != want) return false;
    }
    return true;
}

/* A keyed thread call step, or -1. */
static int shard_keyed_thread(const flow_info *fi, const flow_step *s)
{
    const ir_expr *e = s->e;
    if (s->kind != FS_EVAL || !e || e->kind != IR_CALL || e->u.call.kind != CALL_THREAD) return -1;
    int t = e->u.call.callee.index;
    return t >= 0 && t < fi->p->nthreads && fi->p->threads[t]->keyed ? t : -1;
}

/* smap(t, xs) or smap(fn w => t(leaves), xs) with t keyed and xs pure: t,
 * else -1. */
static int shard_inner_thread(flow_info *fi, const flow_step *s)
{
    const ir_expr *e = s->e;
    if (s->kind != FS_EVAL || !e || e->kind != IR_CALL || e->u.call.kind != CALL_BUILTIN ||
        e->u.call.callee.index != BI_SMAP || e->u.call.nargs != 2)
        return -1;
    const ir_expr *f = e->u.call.args[0];
    int t = -1;
    if (f->kind == IR_THREADREF) {
        t = f->u.index;
    } else if (f->kind == IR_LAMBDA && f->u.fn->nparams == 1 && f->u.fn->body) {
        const ir_expr *b = f->u.fn->body;
        if (b->kind != IR_CALL || b->u.call.kind != CALL_THREAD) return -1;
        for (int i = 0; i < b->u.call.nargs; i++)
            if (!shard_leaf(b->u.call.args[i])) return -1;
        t = b->u.call.callee.index;
    }
    if (t < 0 || t >= fi->p->nthreads || !fi->p->threads[t]->keyed) return -1;
    return stc__flow_set_empty(fi, stc__flow_expr_set(fi, e->u.call.args[1])) ? t : -1;
}

/* The one step of serial stage st that writes, when it is a shardable
 * keyed call or inner smap (else -1, with *why set when the stage has a
 * keyed call that cannot be sharded). */
static int shard_candidate(flow_info *fi, const flow_plan *pl, const flow_stage *st, const char **why)
{
    int w = -1, nwriting = 0, keyed = -1;
    bool other = false; /* a pure step that is more than a copy (between two calls) */
    *why = NULL;
    for (int k = st->first; k < st->first + st->count; k++) {
        const flow_step *s = &pl->steps[k];
        if (shard_keyed_thread(fi, s) >= 0 || shard_inner_thread(fi, s) >= 0) keyed = k;
        if (stc__flow_set_empty(fi, s->writes)) {
            other |= !shard_trivial(s);
            continue;
        }
        nwriting++;
        w = k;
    }
    if (keyed < 0) return -1;
    if (other && nwriting <= 1) return -1; /* not made by the span rule: not expected */
    int t = shard_keyed_thread(fi, &pl->steps[keyed]);
    if (t < 0) t = shard_inner_thread(fi, &pl->steps[keyed]);
    if (nwriting > 1) {
        *why = "shares its stage with other thread calls";
        return -1;
    }
    if (!shard_only(fi, pl->steps[w].writes, t)) {
        *why = "calls threads in its function";
        return -1;
    }
    const ir_expr *e = pl->steps[w].e;
    if (shard_inner_thread(fi, &pl->steps[w]) >= 0) return w;
    for (int i = 0; i < e->u.call.nargs; i++)
        if (!shard_leaf(e->u.call.args[i])) return -1; /* not expected: compile.c cuts them */
    return w;
}

int stc__flow_shard_plan(flow_info *fi, flow_plan *pl)
{
    int S = fi->nshards;
    int ncand = 0;
    const char **whys = stc__arena_alloc(fi->mem, ((size_t)pl->nstages + 1) * sizeof *whys);
    int *cand = stc__arena_alloc(fi->mem, ((size_t)pl->nstages + 1) * sizeof *cand);
    if (!whys || !cand) return -1;
    for (int i = 0; i < pl->nstages; i++) {
        cand[i] = -1;
        whys[i] = NULL;
        if (!pl->stages[i].serial) continue;
        cand[i] = shard_candidate(fi, pl, &pl->stages[i], &whys[i]);
        if (cand[i] >= 0 && S < 2) {
            cand[i] = -1;
            whys[i] = "runs on one worker";
        }
        if (whys[i]) { /* the note for stc graph and --profile */
            int t = -1;
            for (int k = pl->stages[i].first; t < 0 && k < pl->stages[i].first + pl->stages[i].count; k++)
                if ((t = shard_keyed_thread(fi, &pl->steps[k])) < 0) t = shard_inner_thread(fi, &pl->steps[k]);
            pl->stages[i].why = whys[i];
            pl->stages[i].why_thread = t;
        }
        ncand += cand[i] >= 0;
    }
    if (!ncand) return 0;
    int nsteps = pl->nsteps + ncand * S, nstages = pl->nstages + ncand * S; /* bounds */
    flow_step *steps = stc__arena_alloc(fi->mem, (size_t)nsteps * sizeof *steps);
    flow_stage *stages = stc__arena_alloc(fi->mem, (size_t)nstages * sizeof *stages);
    int *thread_of = stc__arena_alloc(fi->mem, (size_t)(ncand * S) * sizeof *thread_of);
    if (!steps || !stages || !thread_of) return -1;
    int ns = 0, nst = 0, nmaps = 0;
    for (int i = 0; i < pl->nstages; i++) {
        const flow_stage *st = &pl->stages[i];
        if (cand[i] < 0) {
            memcpy(steps + ns, pl->steps + st->first, (size_t)st->count * sizeof *steps);
            stages[nst] = *st;
            stages[nst++].first = ns;
            ns += st->count;
            continue;
        }
        const flow_step *w = &pl->steps[cand[i]];
        int t = shard_keyed_thread(fi, w), temps = -1;
        if (t < 0) { /* an inner smap: its list, function, shards, results, bound */
            t = shard_inner_thread(fi, w);
            temps = pl->nslots;
            pl->nslots += SHARD_TEMPS;
        }
        /* the trivial steps before the call and the shard choice: into the
         * replicated stage before, or one of their own */
        int before = cand[i] - st->first, first = ns;
        memcpy(steps + ns, pl->steps + st->first, (size_t)before * sizeof *steps);
        ns += before;
        flow_step *sel = &steps[ns++];
        *sel = *w;
        sel->kind = temps < 0 ? FS_SHARD : FS_ISHARD;
        sel->src = temps;
        sel->thread = t;
        sel->dst = -1;
        sel->writes = flow_set_none();
        sel->flag0 = pl->nflags;
        sel->nshards = S;
        pl->nflags += S;
        if (nst > 0 && !stages[nst - 1].serial && stages[nst - 1].first + stages[nst - 1].count == first)
            stages[nst - 1].count += ns - first;
        else
            stages[nst++] = (flow_stage){.first = first, .count = ns - first, .serial = false};
        for (int j = 0; j < S; j++) {
            flow_step *ks = &steps[ns];
            *ks = *w;
            ks->kind = temps < 0 ? FS_KEYED : FS_IKEYED;
            ks->src = temps;
            ks->flag0 = sel->flag0;
            ks->nshards = S;
            ks->thread = t;
            ks->guard = sel->flag0 + j;
            ks->shard_map = nmaps;
            thread_of[nmaps++] = t;
            stages[nst++] = (flow_stage){.first = ns++, .count = 1, .serial = true, .shard = j, .nshards = S};
        }
        /* trivial steps after the call (copies of its result): the last shard runs them */
        int after = st->first + st->count - cand[i] - 1;
        memcpy(steps + ns, w + 1, (size_t)after * sizeof *steps);
        ns += after;
        stages[nst - 1].count += after;
        pl->nserial += S - 1;
    }
    pl->steps = steps;
    pl->nsteps = ns;
    pl->stages = stages;
    pl->nstages = nst;
    pl->nshard_maps = nmaps;
    pl->shard_thread = thread_of;
    return 0;
}

/* ---- The job's shard maps ------------------------------------------------------------ */

/* The split and the merge cost O(keys) per smap (~420 instructions a
 * key): an smap of few items over a big map (a loop in main mapping two
 * items at a time) runs on the evaluator instead, which updates the map
 * in place. */
#define SHARD_KEYS_PER_ITEM 4
#define SHARD_KEYS_FREE 4096

bool stc__flow_shards_worth(const flow_plan *pl, const eval_ctx *cx, size_t n)
{
    if (!pl->nshard_maps || n == SIZE_MAX) return true;
    size_t keys = 0;
    for (int m = 0; m < pl->nshard_maps; m++) {
        stc_value v = cx->states[pl->shard_thread[m]].value;
        if (v.tag == STC_T_MAP && (m == 0 || pl->shard_thread[m] != pl->shard_thread[m - 1])) keys += val_map_len(v);
    }
    return keys <= SHARD_KEYS_FREE || keys / SHARD_KEYS_PER_ITEM <= n;
}

/* The shard of key k among *(int *)S (the split's pick). */
static int shard_pick(stc_value k, void *S) { return flow_shard_of(stc__val_key_hash(k), *(const int *)S); }

int stc__flow_shards_split(flow_job *job, eval_ctx *cx)
{
    const flow_plan *pl = job->plan;
    job->shard_maps = NULL;
    if (!pl->nshard_maps) return 0;
    stc_value *maps = malloc((size_t)pl->nshard_maps * sizeof *maps);
    if (!maps) return stc__eval_oom(cx, job->loc);
    for (int m = 0; m < pl->nshard_maps; m++) maps[m] = stc_value_unit();
    job->shard_maps = maps;
    int S = job->rt->fi->nshards;
    size_t nt = (size_t)job->rt->p->nthreads, nw = (size_t)job->rt->workers;
    if (!(job->wstates = malloc(nt * nw * sizeof *job->wstates))) return stc__eval_oom(cx, job->loc);
    for (int m0 = 0; m0 < pl->nshard_maps; m0 += S) {
        stc_value *whole = &cx->states[pl->shard_thread[m0]].value;
        if (whole->tag != STC_T_MAP) continue; /* not expected: the shards start empty */
        /* the whole map's nodes relinked into the shards' maps (held once,
         * so each shard updates its own in place); on failure the whole map
         * stays the state */
        if (stc__val_map_regroup(whole, 1, &maps[m0], S, shard_pick, &S) != 0) return stc__eval_oom(cx, job->loc);
    }
    /* each worker's copy of the states (shallow: a shard step writes only
     * its own thread's entry, which it points at its shard map) */
    for (size_t w = 0; w < nw; w++) memcpy(job->wstates + w * nt, cx->states, nt * sizeof *job->wstates);
    return 0;
}

int stc__flow_shards_merge(flow_job *job, eval_ctx *cx)
{
    const flow_plan *pl = job->plan;
    if (!job->shard_maps) return 0;
    /* the shard maps peers hold come back first (owned.c) */
    int S = job->rt->fi->nshards, rc = stc__flow_owned_shards_back(job, cx);
    for (int m0 = 0; m0 < pl->nshard_maps; m0 += S) {
        int t = pl->shard_thread[m0];
        if (cx->states[t].value.tag == STC_T_MAP) continue; /* the split failed before it: kept */
        /* the shards' maps (a failed put may have lost one) merged by
         * relinking their nodes: O(keys), nothing allocated per key */
        stc_value in[FLOW_MAX_SHARDS], whole = stc_value_unit();
        int from[FLOW_MAX_SHARDS], nin = 0;
        for (int i = 0; i < S; i++)
            if (job->shard_maps[m0 + i].tag == STC_T_MAP) {
                from[nin] = m0 + i;
                in[nin++] = job->shard_maps[m0 + i];
            }
        if (nin == 0) whole = stc__val_map_new();
        else if (stc__val_map_regroup(in, nin, &whole, 1, NULL, NULL) == 0)
            for (int j = 0; j < nin; j++) job->shard_maps[from[j]] = stc_value_unit(); /* consumed */
        if (whole.tag != STC_T_MAP) {
            val_release(whole);
            whole = stc__val_map_new(); /* out of memory: the state is lost with the run */
            rc = stc__eval_oom(cx, job->loc);
        }
        cx->states[t].value = whole.tag == STC_T_MAP ? whole : stc_value_unit();
    }
    for (int m = 0; m < pl->nshard_maps; m++) val_release(job->shard_maps[m]);
    free(job->shard_maps);
    free(job->wstates);
    job->shard_maps = NULL;
    job->wstates = NULL;
    return rc;
}

/* ---- The shard steps ------------------------------------------------------------------ */

/* Points cx's states at the worker's copy, with the step's shard map as
 * its thread's state; returns the shared states to put back.  A process
 * serving a peer's shard stage (remote_serve.c: no wstates, one request at
 * a time) uses its own states, where the keyed thread's value is unit. */
static eval_tstate *shard_enter(flow_job *job, eval_ctx *cx, const flow_step *s)
{
    eval_tstate *mine = cx->states, *shared = cx->states;
    if (job->wstates) { /* cx is the first member of its worker's flow_worker_ctx */
        size_t worker = (size_t)((flow_worker_ctx *)(void *)cx - job->rt->wcx);
        mine = job->wstates + worker * (size_t)job->rt->p->nthreads;
    }
    mine[s->thread].value = job->shard_maps[s->shard_map];
    job->shard_maps[s->shard_map] = stc_value_unit();
    cx->states = mine;
    return shared;
}

static void shard_leave(flow_job *job, eval_ctx *cx, const flow_step *s, eval_tstate *shared)
{
    job->shard_maps[s->shard_map] = cx->states[s->thread].value;
    cx->states[s->thread].value = stc_value_unit();
    cx->states = shared;
}

int stc__flow_keyed_run(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *slots)
{
    eval_tstate *shared = shard_enter(job, cx, s);
    stc_value v;
    int rc = stc__eval_expr(cx, s->e, fr, &v); /* a thread call: never a tail call */
    shard_leave(job, cx, s, shared);
    if (rc) return rc;
    val_release(slots[s->dst]);
    slots[s->dst] = v;
    return 0;
}

static void shard_store(stc_value *slot, stc_value v)
{
    val_release(*slot);
    *slot = v;
}

/* The key of an inner element x when it is not x itself: the thread's
 * after adapting x to its inputs (smap(t, xs)), or the lambda body's
 * call's, evaluated in a frame of the lambda on x. */
static int shard_inner_key(eval_ctx *cx, const ir_expr *e, stc_value fnv, stc_value x, stc_value *key)
{
    const ir_expr *f = e->u.call.args[0];
    if (f->kind == IR_THREADREF) {
        stc_value a = val_retain(x);
        return stc__eval_keyed_key_of(cx, f->u.index, 1, &a, e->u.call.callee_loc, key);
    }
    const ir_fun *fn = f->u.fn;
    const val_func *clo = val_as_func(fnv);
    size_t nslots = (size_t)fn->nslots, ncaps = clo->ncaps;
    stc_value small[16], *fs = nslots <= 16 ? small : malloc(nslots * sizeof *fs);
    if (!fs) return stc__eval_oom(cx, e->u.call.callee_loc);
    for (size_t i = 0; i < nslots; i++) fs[i] = stc_value_unit();
    for (size_t i = 0; i < ncaps && i < nslots; i++) fs[i] = clo->caps[i]; /* borrowed */
    if (ncaps < nslots) fs[ncaps] = x;                                         /* borrowed */
    eval_frame lfr = {fs, fn};
    int rc = stc__eval_keyed_key(cx, fn->body, &lfr, key); /* reads leaves only: nothing is stored */
    if (fs != small) free(fs);
    return rc;
}

/* Which shard each element of an item goes to (SHARD_OF): 3 bits an
 * element in an int for up to SHARD_PACKED elements (a line of words: no
 * allocation per item), else a byte an element in a str. */
#define SHARD_PACKED 21

static inline int shard_of_elem(stc_value of, size_t j)
{
    return of.tag == STC_T_INT ? (int)((uint64_t)of.as.i >> (3 * j) & 7)
                               : ((const unsigned char *)val_as_str(of)->data)[j];
}

int stc__flow_ikeyed_put_list(const flow_step *s, const stc_value *slots, buf *out, const wire_funcs *wf)
{
    const stc_value *tmp = slots + s->src;
    stc_value xs = tmp[SHARD_XS], of = tmp[SHARD_OF];
    size_t n = xs.tag == STC_T_LIST ? val_seq_len(xs) : 0;
    if (xs.tag != STC_T_LIST || !(of.tag == STC_T_INT ? n <= SHARD_PACKED : of.tag == STC_T_STR && val_as_str(of)->len == n))
        return stc__val_wire_encode(out, xs, wf); /* (not as FS_ISHARD left it: as it is) */
    stc_value mine = stc__val_seq_alloc(STC_T_LIST, n);
    if (mine.tag == STC_T_INVALID) return STC_ENOMEM;
    const stc_value *from = val_seq_items(xs);
    stc_value *to = val_seq_items(mine);
    for (size_t j = 0; j < n; j++)
        if (shard_of_elem(of, j) == s->guard - s->flag0) to[j] = val_retain(from[j]);
    int rc = stc__val_wire_encode(out, mine, wf);
    val_release(mine);
    return rc;
}

int stc__flow_ishard_run(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *slots,
                         uint8_t *flags)
{
    (void)job;
    const ir_expr *e = s->e, *f = e->u.call.args[0];
    ir_loc loc = e->u.call.callee_loc;
    stc_value *tmp = slots + s->src, fnv = stc_value_unit(), xs;
    cx->depth++; /* the smap node, as stc__eval_expr counts it */
    int rc = 0;
    if (f->kind != IR_THREADREF) rc = stc__eval_expr(cx, f, fr, &fnv);
    if (rc == 0 && (rc = stc__eval_expr(cx, e->u.call.args[1], fr, &xs)) != 0) val_release(fnv);
    cx->depth--;
    if (rc) return rc;
    if (xs.tag != STC_T_LIST) {
        val_release(fnv);
        val_release(xs);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: smap over a non-list");
    }
    size_t n = val_seq_len(xs);
    bool packed = n <= SHARD_PACKED;
    stc_value of = packed ? stc_value_int(0) : stc__val_str_alloc(n), results = stc__val_seq_alloc(STC_T_LIST, n);
    shard_store(&tmp[SHARD_XS], xs);
    shard_store(&tmp[SHARD_FN], fnv);
    shard_store(&tmp[SHARD_OF], of);
    shard_store(&tmp[SHARD_RESULTS], results);
    shard_store(&tmp[SHARD_BOUND], stc_value_int((int64_t)n));
    if (of.tag == STC_T_INVALID || results.tag == STC_T_INVALID) {
        tmp[SHARD_OF] = tmp[SHARD_RESULTS] = stc_value_unit();
        val_release(of.tag == STC_T_INVALID ? results : of);
        return stc__eval_oom(cx, loc);
    }
    /* the element is the key (adapting one arg to one input keeps it):
     * hashed where it is, neither copied nor counted */
    bool self = f->kind == IR_THREADREF && cx->p->threads[f->u.index]->ninputs == 1;
    unsigned char *to = packed ? NULL : (unsigned char *)val_as_str(of)->data;
    const stc_value *items = val_seq_items(xs);
    uint64_t bits = 0;
    int S = s->nshards;
    for (size_t j = 0; j < n; j++) {
        uint64_t h;
        if (self) {
            h = stc__val_key_hash(items[j]);
        } else {
            stc_value key;
            if ((rc = shard_inner_key(cx, e, fnv, items[j], &key))) return rc;
            h = stc__val_key_hash(key);
            val_release(key);
        }
        int sh = flow_shard_of(h, S);
        if (packed) bits |= (uint64_t)sh << (3 * j);
        else to[j] = (unsigned char)sh;
        flags[s->flag0 + sh] = 1;
    }
    if (packed) tmp[SHARD_OF] = stc_value_int((int64_t)bits);
    flags[s->flag0 + S - 1] = 1; /* the last shard hands the results on */
    return 0;
}

/* Whether an item's temporaries are as FS_ISHARD left them: checked, as
 * they may have come in a peer's request (remote_serve.c). */
static bool shard_temps_ok(const stc_value *tmp, const ir_expr *f)
{
    if (tmp[SHARD_RESULTS].tag != STC_T_LIST || tmp[SHARD_XS].tag != STC_T_LIST || tmp[SHARD_BOUND].tag != STC_T_INT)
        return false;
    size_t n = val_seq_len(tmp[SHARD_RESULTS]);
    stc_value of = tmp[SHARD_OF];
    return val_seq_len(tmp[SHARD_XS]) == n && tmp[SHARD_BOUND].as.i >= 0 && (uint64_t)tmp[SHARD_BOUND].as.i <= n &&
           (of.tag == STC_T_INT ? n <= SHARD_PACKED : of.tag == STC_T_STR && val_as_str(of)->len == n) &&
           (f->kind == IR_THREADREF || tmp[SHARD_FN].tag == STC_T_FUNC);
}

int stc__flow_ikeyed_run(flow_job *job, eval_ctx *cx, const flow_step *s, stc_value *slots)
{
    const ir_expr *e = s->e;
    ir_loc loc = e->u.call.callee_loc;
    stc_value *tmp = slots + s->src;
    int shard = s->guard - s->flag0, thread = e->u.call.args[0]->kind == IR_THREADREF ? s->thread : -1;
    if (!shard_temps_ok(tmp, e->u.call.args[0])) return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: shard");
    if (val_obj_shared(tmp[SHARD_RESULTS].as.obj)) { /* a serving process keeps what came (remote_serve.c): */
        size_t k = val_seq_len(tmp[SHARD_RESULTS]);   /* fill a copy, which then goes back */
        stc_value c = stc__val_seq_alloc(STC_T_LIST, k);
        if (c.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
        for (size_t j = 0; j < k; j++) val_seq_items(c)[j] = val_retain(val_seq_items(tmp[SHARD_RESULTS])[j]);
        shard_store(&tmp[SHARD_RESULTS], c);
    }
    stc_value *xs = val_seq_items(tmp[SHARD_XS]), *out = val_seq_items(tmp[SHARD_RESULTS]), of = tmp[SHARD_OF];
    /* the item's list held once: each element is read by its own shard
     * alone (the key was hashed before), so it moves into the call */
    bool move = !val_obj_shared(tmp[SHARD_XS].as.obj);
    size_t bound = (size_t)tmp[SHARD_BOUND].as.i, n = val_seq_len(tmp[SHARD_RESULTS]);
    long long item = cx->item;
    cx->depth++; /* the smap node, as stc__eval_expr counts it */
    eval_tstate *shared = shard_enter(job, cx, s);
    const char *saved_thread = cx->thread;
    if (thread >= 0) cx->thread = cx->p->threads[thread]->name; /* as a call of the thread sets it */
    int rc = 0;
    for (size_t j = 0; j < bound; j++) {
        if (shard_of_elem(of, j) != shard) continue;
        cx->item = (long long)j; /* errors name the inner item, as the reference's */
        if (cx->cancel && cancel_raised(cx->cancel) && (rc = stc__eval_check_cancel(cx, loc))) {
        } else {
            stc_value x = xs[j], r = {.tag = STC_T_UNIT};
            if (move) xs[j] = r;
            else val_retain(x);
            /* smap(t, xs): the keyed call itself, on this shard's map
             * (what stc__eval_call_thread would pick, without its dispatch) */
            rc = thread >= 0 ? stc__eval_keyed_call(cx, thread, &cx->states[thread].value,
                                                    cx->states[thread].init, 1, &x, loc, &r)
                             : stc__eval_smap_apply(cx, -1, tmp[SHARD_FN], x, loc, &r);
            if (rc == 0) shard_store(&out[j], r);
        }
        if (rc) { /* this item ends at element j at the latest */
            stc__eval_oom(cx, loc); /* records nothing when the call recorded its error */
            stc__flow_record_error_at(job, cx, item, (long long)j);
            tmp[SHARD_BOUND] = stc_value_int((int64_t)j);
            bound = j;
            break;
        }
    }
    shard_leave(job, cx, s, shared);
    cx->thread = saved_thread;
    cx->depth--;
    cx->item = item;
    if (shard < s->nshards - 1) return 0;
    if (bound < n) return FLOW_RECORDED; /* the job has the item's error */
    shard_store(&slots[s->dst], tmp[SHARD_RESULTS]);
    tmp[SHARD_RESULTS] = stc_value_unit();
    for (int k = 0; k < SHARD_TEMPS; k++) shard_store(&tmp[k], stc_value_unit());
    return 0;
}
