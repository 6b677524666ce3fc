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
 * The job splits t's map into the shards' maps when it starts and merges
 * them back when it ends (stc__flow_shards_split / _merge, O(n log n) in
 * the keys), so between smaps the thread's state is the one map the
 * evaluator and the final state see. */
#include <stdlib.h>
#include <string.h>

#include "flow/job.h"
#include "value/map.h"

int stc__flow_shards_for(int workers) { return workers < 2 ? 1 : workers > FLOW_MAX_SHARDS ? FLOW_MAX_SHARDS : workers; }

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

/* The one step of serial stage st that writes, when it is a shardable
 * keyed call (else -1, with *why set when the stage has a keyed call that
 * cannot be sharded). */
static int shard_candidate(const flow_info *fi, const flow_plan *pl, const flow_stage *st, const char **why)
{
    int w = -1, nwriting = 0, keyed = -1;
    *why = NULL;
    for (int k = st->first; k < st->first + st->count; k++) {
        const flow_step *s = &pl->steps[k];
        if (shard_keyed_thread(fi, s) >= 0) keyed = k;
        if (stc__flow_set_empty(fi, s->writes)) {
            if (!shard_trivial(s)) return -1; /* a select or a destructuring in the span: leave it */
            continue;
        }
        nwriting++;
        w = k;
    }
    if (keyed < 0) return -1;
    int t = shard_keyed_thread(fi, &pl->steps[keyed]);
    if (nwriting > 1) {
        *why = "shares its stage with other thread calls";
        return -1;
    }
    if (!shard_only(fi, pl->steps[w].writes, t)) {
        *why = "calls threads in its function";
        return -1;
    }
    const ir_expr *e = pl->steps[w].e;
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
                t = shard_keyed_thread(fi, &pl->steps[k]);
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
        int t = w->e->u.call.callee.index;
        /* the trivial steps before the call and the shard choice: into the
         * replicated stage before, or one of their own */
        int before = cand[i] - st->first, first = ns;
        memcpy(steps + ns, pl->steps + st->first, (size_t)before * sizeof *steps);
        ns += before;
        flow_step *sel = &steps[ns++];
        *sel = *w;
        sel->kind = FS_SHARD;
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
            ks->kind = FS_KEYED;
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

int stc__flow_shards_split(flow_job *job, eval_ctx *cx)
{
    const flow_plan *pl = job->plan;
    job->shard_maps = NULL;
    if (!pl->nshard_maps) return 0;
    stc_value *maps = malloc((size_t)pl->nshard_maps * sizeof *maps);
    if (!maps) return stc__eval_oom(cx, job->loc);
    for (int m = 0; m < pl->nshard_maps; m++) maps[m] = stc_value_unit();
    job->shard_maps = maps;
    for (int m = 0; m < pl->nshard_maps; m++) {
        if ((maps[m] = stc__val_map_new()).tag == STC_T_INVALID) {
            maps[m] = stc_value_unit();
            return stc__eval_oom(cx, job->loc);
        }
    }
    int S = job->rt->fi->nshards;
    for (int m0 = 0; m0 < pl->nshard_maps; m0 += S) {
        int t = pl->shard_thread[m0];
        stc_value whole = cx->states[t].value;
        val_map_iter it;
        stc_value k, v;
        stc__val_map_iter_init(&it, whole);
        while (stc__val_map_iter_next(&it, &k, &v)) {
            stc_value *into = &maps[m0 + (int)(stc__val_key_hash(k) % (uint64_t)S)];
            if (stc__val_map_put(*into, val_retain(k), val_retain(v), into) != 0) {
                *into = stc_value_unit();
                return stc__eval_oom(cx, job->loc); /* the whole map stays the state */
            }
        }
        /* the shards hold the state now: the whole map is dropped, so each
         * shard's map is held once and updated in place */
        val_release(whole);
        cx->states[t].value = stc_value_unit();
    }
    return 0;
}

int stc__flow_shards_merge(flow_job *job, eval_ctx *cx)
{
    const flow_plan *pl = job->plan;
    if (!job->shard_maps) return 0;
    int S = job->rt->fi->nshards, rc = 0;
    for (int m0 = 0; m0 < pl->nshard_maps; m0 += S) {
        int t = pl->shard_thread[m0];
        if (cx->states[t].value.tag == STC_T_MAP) continue; /* the split failed before it: kept */
        stc_value whole = stc__val_map_new();
        for (int m = m0; m < m0 + S && whole.tag == STC_T_MAP; m++) {
            if (job->shard_maps[m].tag != STC_T_MAP) continue;
            val_map_iter it;
            stc_value k, v;
            stc__val_map_iter_init(&it, job->shard_maps[m]);
            while (stc__val_map_iter_next(&it, &k, &v))
                if (stc__val_map_put(whole, val_retain(k), val_retain(v), &whole) != 0) break;
        }
        if (whole.tag != STC_T_MAP) {
            whole = stc__val_map_new(); /* out of memory: the state is lost with the run */
            rc = stc__eval_oom(cx, job->loc);
        }
        cx->states[t].value = whole.tag == STC_T_MAP ? whole : stc_value_unit();
    }
    for (int m = 0; m < pl->nshard_maps; m++) val_release(job->shard_maps[m]);
    free(job->shard_maps);
    job->shard_maps = NULL;
    return rc;
}
