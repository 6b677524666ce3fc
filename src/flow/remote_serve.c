/* remote_serve.c - the answering side of remote stages (remote.c): a
 * process serving another's batches builds the same plan from the
 * request's numbers, runs the stage's steps on each item's frame, and
 * answers with the frames the stage left or the first failing item's
 * error; it also holds the states of the serial stages it owns. */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "flow/job.h"
#include "flow/owned.h"
#include "flow/remote_wire.h"

/* ---- The answering side ---------------------------------------------------------- */

struct flow_remote_server {
    const ir_program *p;
    flow_info *fi;
    flow_remote_names *names;
    flow_plan **plans; /* by smap x function, made at first use */
    int *plan_shards;  /* the fi->nshards each was made with */
    uint8_t **reads;   /* each plan's stages' read slots (stc__flow_stage_reads), nstages x nslots */
    int nfuns;
    bool cx_ready;
    eval_ctx cx;
    eval_tstate *states; /* the owned stages' thread states held here (p->nthreads) */
    eval_tstate *shards; /* the owned shard stages' shard maps held here (ready: held),
                            by keyed thread x FLOW_MAX_SHARDS + shard */
    flow_remote_seen seen; /* what the last request was (stc__flow_remote_server_seen) */
    /* Contexts kept for later batches (FLOW_CTX_KEEP, remote_wire.h), the
     * least recently used dropped first. */
    struct serve_ctx *kept;
    int nkept;
    size_t kept_bytes;
    uint64_t clock; /* requests that used a kept context, for their last use */
};

/* A request's context (remote_wire.h): the read-only threads' states it
 * lends its batch and the captures, decoded; kept (key, len, used) or for
 * one batch. */
typedef struct serve_ctx {
    flow_ctx_key key;
    size_t len;
    uint64_t used;
    int nstates;
    int *threads;
    stc_value *states;
    stc_value *caps;
    size_t ncaps;
} serve_ctx;

static void ctx_free(serve_ctx *c)
{
    release_n(c->states, (size_t)c->nstates);
    release_n(c->caps, c->ncaps);
    free(c->threads), free(c->states), free(c->caps);
    *c = (serve_ctx){0};
}

flow_remote_server *stc__flow_remote_server_new(const ir_program *p)
{
    flow_remote_server *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->p = p;
    s->fi = stc__flow_info_new(p);
    s->names = stc__flow_remote_names_new(p);
    if (s->names) {
        s->nfuns = (int)s->names->ft.n;
        s->plans = calloc((size_t)s->names->nsmaps * (size_t)s->nfuns + 1, sizeof *s->plans);
        s->plan_shards = calloc((size_t)s->names->nsmaps * (size_t)s->nfuns + 1, sizeof *s->plan_shards);
        s->reads = calloc((size_t)s->names->nsmaps * (size_t)s->nfuns + 1, sizeof *s->reads);
    }
    s->states = calloc((size_t)p->nthreads + 1, sizeof *s->states);
    for (int t = 0; s->states && t < p->nthreads; t++)
        s->states[t] = (eval_tstate){.value = stc_value_unit(), .init = stc_value_unit()};
    s->shards = calloc((size_t)p->nthreads * FLOW_MAX_SHARDS + 1, sizeof *s->shards);
    s->kept = calloc(FLOW_CTX_KEPT, sizeof *s->kept);
    for (int i = 0; s->shards && i < p->nthreads * FLOW_MAX_SHARDS; i++) s->shards[i].value = stc_value_unit();
    if (!s->fi || !s->names || !s->plans || !s->plan_shards || !s->reads || !s->states || !s->shards || !s->kept) {
        stc__flow_remote_server_free(s);
        return NULL;
    }
    stc__eval_ctx_init(&s->cx, p, s->states);
    s->cx_ready = true;
    return s;
}

void stc__flow_remote_server_free(flow_remote_server *s)
{
    if (!s) return;
    if (s->cx_ready) stc__eval_ctx_fini(&s->cx);
    free(s->plans); /* the plans are in fi->mem */
    free(s->plan_shards);
    for (int i = 0; s->reads && s->names && i < s->names->nsmaps * s->nfuns; i++) free(s->reads[i]);
    free(s->reads);
    for (int t = 0; s->states && t < s->p->nthreads; t++) val_release(s->states[t].value), val_release(s->states[t].init);
    free(s->states);
    for (int i = 0; s->shards && i < s->p->nthreads * FLOW_MAX_SHARDS; i++) val_release(s->shards[i].value);
    free(s->shards);
    for (int i = 0; i < s->nkept; i++) ctx_free(&s->kept[i]);
    free(s->kept);
    stc__flow_remote_names_free(s->names);
    stc__flow_info_free(s->fi);
    free(s);
}

/* Whether a slot holds what came (the same object, or the same scalar
 * bits): held, so an object freed by a step cannot reappear at its
 * address.  Scalars that differ only in padding just travel. */
static bool same_value(stc_value a, stc_value b)
{
    return a.tag == b.tag && memcmp(&a.as, &b.as, sizeof a.as) == 0;
}

/* Encodes item i's error err (freed) into the reply after tag (1: the
 * item's, 2: an inner element's, remote_wire.h). */
static void put_error(flow_remote_server *s, buf *out, int tag, eval_err err, long long item)
{
    stc__buf_putc(out, (char)tag);
    stc__val_wire_put_uvarint(out, (uint64_t)(err.code < 0 ? -err.code : STC_ERUNTIME * -1));
    size_t len = err.message ? strlen(err.message) : 0;
    stc__val_wire_put_uvarint(out, err.message != NULL);
    stc__val_wire_put_uvarint(out, len);
    stc__buf_put(out, err.message ? err.message : "", len);
    stc__val_wire_put_uvarint(out, (uint64_t)(err.loc.line > 0 ? err.loc.line : 0));
    stc__val_wire_put_uvarint(out, (uint64_t)(err.loc.col > 0 ? err.loc.col : 0));
    stc__val_wire_put_uvarint(out, (uint64_t)(stc__flow_remote_thread_number(s->p, err.thread) + 1));
    stc__val_wire_put_uvarint(out, (uint64_t)item);
    free(err.message);
}

static void serve_error(flow_remote_server *s, buf *out, long long item)
{
    put_error(s, out, 1, stc__eval_error_take(&s->cx), item);
}

/* The error an inner smap's shard recorded for an element of the item
 * (shards.c, stc__flow_record_error_at on the request's job): tag 2, the
 * error, the element and the error's item, and the job holds none again. */
static void serve_elem_error(flow_remote_server *s, buf *out, flow_job *job)
{
    eval_err err = job->err;
    long long item = job->err_index, sub = job->err_sub;
    job->err = (eval_err){0};
    job->err_index = -1;
    job->err_sub = LLONG_MAX;
    long long eitem = err.item;
    put_error(s, out, 2, err, item);
    stc__val_wire_put_uvarint(out, (uint64_t)(sub >= 0 ? sub : 0));
    stc__val_wire_put_uvarint(out, (uint64_t)(eitem >= 0 ? eitem : 0));
}

static int serve(flow_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len);

/* The serving thread is the only one touching the values it decodes and
 * makes (program literals are counted atomically anyway, value.h), so it
 * counts them plainly meanwhile, as a 1-worker run does: atomic counts
 * cost a third of such a run (docs/DESIGN.md 5). */
int stc__flow_remote_serve(flow_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len)
{
    bool was = stc__val_counts_set_plain(true);
    s->seen = (flow_remote_seen){.kind = FLOW_SEEN_REFUSED};
    int rc = serve(s, req, len, reply, reply_len);
    if (rc) s->seen.kind = FLOW_SEEN_REFUSED;
    stc__val_counts_set_plain(was);
    return rc;
}

/* Whether t names a thread whose state may be held here. */
static bool ownable_thread(const flow_remote_server *s, uint64_t t)
{
    return t < (uint64_t)s->p->nthreads && s->p->threads[t]->kind == THREAD_LANG && !s->p->threads[t]->keyed;
}

/* The held state a state id names (owned.h: a thread's number, or a keyed
 * thread's shard), or NULL; *keyed: its thread when a shard. */
static eval_tstate *owned_slot(flow_remote_server *s, uint64_t id, int *keyed)
{
    uint64_t n = (uint64_t)s->p->nthreads, t = (id - n) / FLOW_MAX_SHARDS;
    *keyed = -1;
    if (id < n) return ownable_thread(s, id) ? &s->states[id] : NULL;
    if (t >= n || s->p->threads[t]->kind != THREAD_LANG || !s->p->threads[t]->keyed) return NULL;
    *keyed = (int)t;
    return &s->shards[id - n];
}

/* "STCf" n thread...: the states held here go back ("STCs" n, then
 * thread and state each) and are no longer held. */
static int serve_fetch(flow_remote_server *s, rd *r, void **reply, size_t *reply_len)
{
    uint64_t n = rd_uv(r);
    if (r->rc || n > (uint64_t)s->p->nthreads) return STC_EINVAL;
    size_t at = r->at;
    int keyed;
    for (uint64_t i = 0; i < n; i++)
        if (!owned_slot(s, rd_uv(r), &keyed) || r->rc) return STC_EINVAL;
    if (r->at != r->n) return STC_EINVAL;
    r->at = at;
    buf out = BUF_INIT;
    stc__buf_put(&out, "STCs", 4);
    stc__val_wire_put_uvarint(&out, n);
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++) {
        uint64_t t = rd_uv(r);
        stc__val_wire_put_uvarint(&out, t);
        rc = stc__val_wire_encode(&out, owned_slot(s, t, &keyed)->value, &s->names->wf);
    }
    if (!rc && !buf_ok(&out)) rc = STC_ENOMEM;
    if (rc) {
        stc__buf_free(&out);
        return rc;
    }
    r->at = at;
    for (uint64_t i = 0; i < n; i++) { /* gone back: not held here any more */
        eval_tstate *st = owned_slot(s, rd_uv(r), &keyed);
        val_release(st->value);
        st->value = stc_value_unit();
        st->ready = false;
    }
    *reply_len = out.len;
    *reply = stc__buf_take(&out);
    s->seen.kind = FLOW_SEEN_FETCH;
    return 0;
}

/* A request's header, read and checked (serve), and its stage's plan. */
typedef struct serve_req {
    uint64_t stage, depth, first, n, nslots, nflags, ncaps, th;
    const flow_plan *pl;
    const uint8_t *reads; /* the slots the stage reads (nslots) */
    bool owned;           /* an owned stage's batch: the reply says its work */
    eval_tstate *shard;   /* a keyed thread's shard stage: its shard map held here */
} serve_req;

/* The rest of a request after its context: the items, run through stage
 * q->stage of q->pl with captures caps (q->ncaps, borrowed); the reply. */
static int serve_items(flow_remote_server *s, rd *rp, const serve_req *q, const stc_value *caps, void **reply,
                       size_t *reply_len)
{
    rd r = *rp;
    const wire_funcs *wf = &s->names->wf;
    const flow_plan *pl = q->pl;
    uint64_t stage = q->stage, first = q->first, n = q->n, nslots = q->nslots, nflags = q->nflags, ncaps = q->ncaps;
    stc_value *frame = calloc((size_t)nslots + 1, sizeof *frame), *came = calloc((size_t)nslots + 1, sizeof *came);
    uint8_t *flags = malloc((size_t)nflags + 1);
    int rc = frame && came && flags ? 0 : STC_ENOMEM;
    /* A slot the stage does not read is not sent: it stays STC_T_INVALID
     * (a placeholder a step may replace) between items. */
    const stc_value absent = {.tag = STC_T_INVALID};
    for (size_t j = 0; j < nslots && frame && came; j++) frame[j] = came[j] = j < ncaps ? stc_value_unit() : absent;
    const uint8_t *reads = q->reads;
    for (size_t j = 0; !rc && j < ncaps; j++) frame[j] = val_retain(caps[j]);
    flow_job job = {.plan = pl, .base_depth = (int)q->depth, .thread = q->th ? s->p->threads[q->th - 1]->name : NULL,
                    .err_index = -1, .err_sub = LLONG_MAX};
    pthread_mutex_init(&job.err_lock, NULL); /* an inner smap's shards record elements' errors (shards.c) */
    int map = q->shard ? pl->steps[pl->stages[stage].first].shard_map : -1;
    if (map >= 0 && !rc && !(job.shard_maps = calloc((size_t)pl->nshard_maps, sizeof *job.shard_maps))) rc = STC_ENOMEM;
    if (job.shard_maps) { /* the shard map held here, for the step to run on (the others unit) */
        for (int m = 0; m < pl->nshard_maps; m++) job.shard_maps[m] = stc_value_unit();
        job.shard_maps[map] = q->shard->value;
        q->shard->value = stc_value_unit();
    }
    buf out = BUF_INIT, items = BUF_INIT;
    int nran = 0;
    bool failed = false;
    /* An owned stage's work on the batch, for the placement on rank 0
     * (owned.c): this thread's CPU time over the items (a preempted batch
     * does not look dear), their slots' decoding and encoding included. */
    uint64_t c0 = q->owned ? flow_cpu_ns() : 0;
    /* The slots the stage reads, listed once for the batch (2 of 16 on logstats). */
    size_t few[32], *at = few, nat = 0;
    if (!rc && nslots - ncaps > 32 && !(at = malloc((size_t)nslots * sizeof *at))) rc = STC_ENOMEM;
    for (size_t j = ncaps; !rc && j < nslots; j++)
        if (reads[j]) at[nat++] = j;
    for (uint64_t i = 0; !rc && i < n && !failed; i++) {
        const uint8_t *dead = rd_bytes(&r, 1), *fl = dead && !*dead ? rd_bytes(&r, (size_t)nflags) : NULL;
        if (!dead || (!*dead && !fl)) {
            rc = STC_EINVAL;
            break;
        }
        if (*dead) continue;
        for (size_t k = 0; k < nflags; k++) flags[k] = fl[k]; /* (a few bytes: no call) */
        for (size_t k = 0; k < nat && !r.rc; k++) came[at[k]] = val_retain(frame[at[k]] = rd_val(&r, wf));
        if ((rc = r.rc)) break;
        s->cx.item = (long long)(first + i);
        s->cx.thread = job.thread;
        s->cx.stack_base = 0;
        bool ran = false;
        int src = stc__flow_item_steps(&job, &s->cx, (int)stage, frame, flags, &ran);
        nran += ran;
        if (job.err_index >= 0) serve_elem_error(s, &items, &job);
        if (src == FLOW_RECORDED) { /* the item ends; its error is recorded (tag 2 here or elsewhere) */
            buf_putc(&items, 3);
            failed = true;
        } else if (src) {
            stc__eval_oom(&s->cx, pl->smap->u.call.callee_loc); /* records nothing when the step did */
            serve_error(s, &items, (long long)(first + i));
            failed = true;
        } else { /* 0, the flags, then each slot the stage changed (its index + 1, its value), then 0 */
            char *t = buf_room(&items, 1 + (size_t)nflags);
            if (t) {
                t[0] = 0;
                for (size_t k = 0; k < nflags; k++) t[1 + k] = (char)flags[k];
                buf_commit(&items, 1 + (size_t)nflags);
            }
        }
        for (size_t j = ncaps; j < nslots; j++) { /* one pass: the reply, and the slots cleared */
            if (frame[j].tag == STC_T_INVALID && came[j].tag == STC_T_INVALID) continue; /* not sent, not written */
            if (!failed && !rc && !same_value(frame[j], came[j])) {
                val_wire_put_uv(&items, j - ncaps + 1);
                rc = stc__val_wire_encode(&items, frame[j], wf);
            }
            val_release(frame[j]);
            val_release(came[j]);
            frame[j] = came[j] = absent;
        }
        if (!failed) buf_putc(&items, 0);
    }
    if (at != few) free(at);
    uint64_t work = q->owned ? flow_cpu_ns() - c0 : 0;
    if (job.shard_maps) { /* the shard map stays held here */
        q->shard->value = job.shard_maps[map];
        job.shard_maps[map] = stc_value_unit();
        free(job.shard_maps);
    }
    free(job.err.message);
    pthread_mutex_destroy(&job.err_lock);
    if (frame) release_n(frame, (size_t)nslots);
    if (came) release_n(came + (ncaps < nslots ? ncaps : 0), (size_t)(ncaps < nslots ? nslots - ncaps : 0));
    free(frame);
    free(came);
    free(flags);
    if (!rc && !failed && r.at != r.n) rc = STC_EINVAL;
    if (!rc) {
        stc__buf_put(&out, "STCa", 4);
        stc__val_wire_put_uvarint(&out, (uint64_t)nran);
        if (q->owned) stc__val_wire_put_uvarint(&out, work);
        stc__buf_put(&out, items.data ? items.data : "", items.len);
        if (!buf_ok(&out) || !buf_ok(&items)) rc = STC_ENOMEM;
    }
    stc__buf_free(&items);
    if (rc) {
        stc__buf_free(&out);
        return rc;
    }
    *reply_len = out.len;
    *reply = stc__buf_take(&out);
    s->seen.items = nran;
    return 0;
}

/* The states of read-only threads a request lends for its batch: thread
 * t's value is put in the server's states, and what was there before is
 * put back after the batch (nothing of the request stays). */
typedef struct lent {
    int n;
    struct lent_one {
        int t;
        stc_value was;
        bool ready;
    } *v;
} lent;

/* Whether t names a read-only lang thread (remote.c's rule). */
static bool lendable_thread(const flow_remote_server *s, uint64_t t)
{
    return t < (uint64_t)s->p->nthreads && s->fi->readonly[t] && s->p->threads[t]->kind == THREAD_LANG &&
           !s->p->threads[t]->keyed;
}

/* Decodes a context (remote_wire.h) with ncaps captures from r into c. */
static int ctx_decode(flow_remote_server *s, rd *r, uint64_t ncaps, serve_ctx *c)
{
    uint64_t k = rd_uv(r);
    if (r->rc || k > (uint64_t)s->p->nthreads) return r->rc ? r->rc : STC_EINVAL;
    c->threads = malloc((size_t)k * sizeof *c->threads + 1);
    c->states = malloc((size_t)k * sizeof *c->states + 1);
    c->caps = malloc((size_t)ncaps * sizeof *c->caps + 1);
    if (!c->threads || !c->states || !c->caps) return STC_ENOMEM;
    for (uint64_t i = 0; i < k; i++) {
        uint64_t t = rd_uv(r);
        if (r->rc || !lendable_thread(s, t)) return r->rc ? r->rc : STC_EINVAL;
        stc_value v = rd_val(r, &s->names->wf);
        if (r->rc) return r->rc;
        c->threads[c->nstates] = (int)t;
        c->states[c->nstates++] = v;
    }
    for (uint64_t j = 0; j < ncaps; j++) {
        stc_value v = rd_val(r, &s->names->wf);
        if (r->rc) return r->rc;
        c->caps[c->ncaps++] = v;
    }
    return 0;
}

/* An owned stage's request's captures (ncaps) from r into c (no states:
 * its own came before them). */
static int ctx_decode_caps(flow_remote_server *s, rd *r, uint64_t ncaps, serve_ctx *c)
{
    if (!(c->caps = malloc((size_t)ncaps * sizeof *c->caps + 1))) return STC_ENOMEM;
    for (uint64_t j = 0; j < ncaps; j++) {
        stc_value v = rd_val(r, &s->names->wf);
        if (r->rc) return r->rc;
        c->caps[c->ncaps++] = v;
    }
    return 0;
}

/* Lends context c's states to the batch: thread t's value is put in the
 * server's states, what was there kept in ln to be put back. */
static int lend_states(flow_remote_server *s, const serve_ctx *c, lent *ln)
{
    if (!(ln->v = malloc((size_t)c->nstates * sizeof *ln->v + 1))) return STC_ENOMEM;
    for (int i = 0; i < c->nstates; i++) {
        int t = c->threads[i];
        ln->v[ln->n++] = (struct lent_one){t, s->states[t].value, s->states[t].ready};
        s->states[t].value = val_retain(c->states[i]);
        s->states[t].ready = true;
    }
    return 0;
}

/* The kept context named key and len, made the most recently used; NULL. */
static serve_ctx *ctx_find(flow_remote_server *s, flow_ctx_key key, uint64_t len)
{
    for (int i = 0; i < s->nkept; i++) {
        serve_ctx *c = &s->kept[i];
        if (c->len == len && c->key.h[0] == key.h[0] && c->key.h[1] == key.h[1]) {
            c->used = ++s->clock;
            return c;
        }
    }
    return NULL;
}

/* Keeps context c (moved in), dropping the least recently used ones to
 * stay within FLOW_CTX_KEPT and FLOW_CTX_KEPT_BYTES. */
static serve_ctx *ctx_keep(flow_remote_server *s, serve_ctx *c)
{
    while (s->nkept > 0 && (s->nkept == FLOW_CTX_KEPT || s->kept_bytes + c->len > FLOW_CTX_KEPT_BYTES)) {
        int old = 0;
        for (int i = 1; i < s->nkept; i++)
            if (s->kept[i].used < s->kept[old].used) old = i;
        s->kept_bytes -= s->kept[old].len;
        ctx_free(&s->kept[old]);
        s->kept[old] = s->kept[--s->nkept];
    }
    c->used = ++s->clock;
    s->kept_bytes += c->len;
    s->kept[s->nkept] = *c;
    *c = (serve_ctx){0};
    return &s->kept[s->nkept++];
}

/* A replicated stage's request's context (remote_wire.h) from r: *cp the
 * context to use (one kept, or *own decoded for this batch); *ask when
 * the request names a context not kept here (answer "STCn"). */
static int ctx_read(flow_remote_server *s, rd *r, uint64_t ncaps, serve_ctx *own, const serve_ctx **cp, bool *ask)
{
    uint64_t mode = rd_uv(r);
    if (r->rc || mode > FLOW_CTX_KEEP) return r->rc ? r->rc : STC_EINVAL;
    *ask = false;
    if (mode == FLOW_CTX_INLINE) {
        *cp = own;
        return ctx_decode(s, r, ncaps, own);
    }
    const uint8_t *kb = rd_bytes(r, 16);
    uint64_t len = rd_uv(r);
    if (r->rc || len > FLOW_REMOTE_CTX_MAX) return r->rc ? r->rc : STC_EINVAL;
    flow_ctx_key key = {{0, 0}};
    for (int i = 0; i < 16; i++) key.h[i / 8] |= (uint64_t)kb[i] << (8 * (i % 8));
    const serve_ctx *c = ctx_find(s, key, len);
    if (mode == FLOW_CTX_REF) {
        *ask = !c;
        *cp = c;
        return 0;
    }
    const uint8_t *bytes = rd_bytes(r, (size_t)len);
    if (!bytes) return r->rc;
    if (c) { /* (kept already: another batch brought it first) */
        *cp = c;
        return 0;
    }
    flow_ctx_key got = flow_ctx_key_of(bytes, (size_t)len);
    if (got.h[0] != key.h[0] || got.h[1] != key.h[1]) return STC_EINVAL;
    rd sub = {bytes, (size_t)len, 0, 0};
    int rc = ctx_decode(s, &sub, ncaps, own);
    if (!rc && sub.at != sub.n) rc = STC_EINVAL;
    if (rc) return rc;
    own->key = key, own->len = (size_t)len;
    *cp = ctx_keep(s, own);
    return 0;
}

static void lend_end(flow_remote_server *s, lent *ln)
{
    while (ln->n > 0) { /* in reverse: a thread sent twice ends with what it held before */
        struct lent_one *o = &ln->v[--ln->n];
        val_release(s->states[o->t].value);
        s->states[o->t].value = o->was;
        s->states[o->t].ready = o->ready;
    }
    free(ln->v);
}

static int serve(flow_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len)
{
    *reply = NULL;
    *reply_len = 0;
    rd r = {req, len, 0, 0};
    const uint8_t *magic = rd_bytes(&r, 4);
    if (!magic) return STC_EINVAL;
    if (memcmp(magic, "STCf", 4) == 0) return serve_fetch(s, &r, reply, reply_len);
    bool owned = memcmp(magic, "STCo", 4) == 0;
    if (!owned && memcmp(magic, "STCq", 4) != 0) return STC_EINVAL;
    uint64_t smap = rd_uv(&r), fn = rd_uv(&r), nshards = rd_uv(&r), stage = rd_uv(&r), depth = rd_uv(&r), first = rd_uv(&r),
             n = rd_uv(&r), nslots = rd_uv(&r), nflags = rd_uv(&r), ncaps = rd_uv(&r), th = rd_uv(&r);
    if (r.rc || smap >= (uint64_t)s->names->nsmaps || fn >= (uint64_t)s->nfuns || depth >= EVAL_MAX_DEPTH ||
        th > (uint64_t)s->p->nthreads || n > len || first > (uint64_t)1 << 62 || nshards < 1 ||
        nshards > (uint64_t)stc__flow_shards_for(STC_MAX_WORKERS))
        return STC_EINVAL;
    size_t at = smap * (uint64_t)s->nfuns + fn;
    flow_plan **slot = &s->plans[at];
    if (!*slot || s->plan_shards[at] != (int)nshards) { /* (a new plan per worker count: one per run) */
        const ir_fun *f = s->names->ft.funs[fn];
        s->fi->nshards = (int)nshards;
        free(s->reads[at]);
        s->reads[at] = NULL;
        if (!(*slot = stc__flow_plan_build(s->fi, s->names->smaps[smap], f, -1))) return STC_ENOMEM;
        s->plan_shards[at] = (int)nshards;
        const flow_plan *pl = *slot;
        int ns = pl->nstages < 64 ? pl->nstages : 64;
        if (!(s->reads[at] = calloc((size_t)ns * (size_t)pl->nslots + 1, 1))) {
            *slot = NULL; /* (made again next time: the plans are in fi->mem) */
            return STC_ENOMEM;
        }
        for (int t = 0; t < ns; t++) stc__flow_stage_reads(pl, t, s->reads[at] + (size_t)t * (size_t)pl->nslots);
    }
    const flow_plan *pl = *slot;
    if (stage >= (uint64_t)pl->nstages || stage >= 64 || !((owned ? pl->remote_owned : pl->remote_ok) >> stage & 1) ||
        nslots != (uint64_t)pl->nslots || nflags != (uint64_t)pl->nflags || ncaps != (uint64_t)pl->fn->ncaptures ||
        ncaps > nslots)
        return STC_EINVAL;
    s->seen = (flow_remote_seen){FLOW_SEEN_BATCH, (int)smap, (int)fn, (int)stage, 0};
    const wire_funcs *wf = &s->names->wf;
    if (owned) { /* the stage's first batch brings its threads' states */
        uint64_t k = rd_uv(&r);
        if (r.rc || k > (uint64_t)s->p->nthreads) return STC_EINVAL;
        for (uint64_t i = 0; i < k; i++) {
            int keyed;
            eval_tstate *st = r.rc ? NULL : owned_slot(s, rd_uv(&r), &keyed);
            if (r.rc || !st) return STC_EINVAL;
            stc_value v = rd_val(&r, wf), init = keyed >= 0 ? rd_val(&r, wf) : stc_value_unit();
            if (r.rc || (keyed >= 0 && v.tag != STC_T_MAP)) { /* (a shard's state is its map) */
                val_release(v);
                val_release(init);
                return r.rc ? r.rc : STC_EINVAL;
            }
            val_release(st->value);
            st->value = v;
            st->ready = true;
            if (keyed >= 0) { /* a shard map, and its thread's new key state */
                val_release(s->states[keyed].init);
                s->states[keyed].init = init;
            }
        }
    }
    serve_req q = {stage, depth, first, n, nslots, nflags, ncaps, th, pl, s->reads[at] + (size_t)stage * (size_t)nslots,
                   owned, NULL};
    if (pl->stages[stage].nshards) { /* an owned shard stage: its map must be here */
        const flow_step *ks = &pl->steps[pl->stages[stage].first];
        q.shard = &s->shards[ks->thread * FLOW_MAX_SHARDS + pl->stages[stage].shard];
        if (!owned || !q.shard->ready) return STC_EINVAL;
    }
    serve_ctx own = {0};
    const serve_ctx *c = NULL;
    bool ask = false;
    int rc = owned ? ctx_decode_caps(s, &r, ncaps, &own) : ctx_read(s, &r, ncaps, &own, &c, &ask);
    if (owned) c = &own;
    if (rc == 0 && ask) { /* "send the context": nothing runs */
        if (!(*reply = malloc(4))) rc = STC_ENOMEM;
        else memcpy(*reply, "STCn", 4), *reply_len = 4;
    } else if (rc == 0) {
        lent ln = {0, NULL}; /* read-only threads' states, for this batch only */
        rc = lend_states(s, c, &ln);
        if (rc == 0) rc = serve_items(s, &r, &q, c->caps, reply, reply_len);
        lend_end(s, &ln);
    }
    ctx_free(&own);
    return rc;
}

flow_remote_seen stc__flow_remote_server_seen(const flow_remote_server *s) { return s->seen; }

int stc__flow_remote_server_describe(const flow_remote_server *s, const flow_remote_seen *w, buf *name, buf *kind,
                                     buf *where, int *line, bool *serial)
{
    const flow_plan *pl = w->kind == FLOW_SEEN_BATCH ? s->plans[(size_t)w->smap * (size_t)s->nfuns + (size_t)w->fn] : NULL;
    if (!pl || w->stage >= pl->nstages) return STC_EINVAL;
    *line = stc__flow_stage_line(pl, w->stage);
    *serial = pl->stages[w->stage].serial;
    stc__flow_stage_describe(s->fi, pl, w->stage, name);
    stc__buf_printf(name, " (line %d)", *line);
    stc__flow_stage_kind_why(s->fi, pl, w->stage, kind);
    stc__buf_printf(where, "%s:%d:%d", s->p->file ? s->p->file : "<input>", pl->smap->u.call.callee_loc.line,
                    pl->smap->u.call.callee_loc.col);
    return buf_ok(name) && buf_ok(kind) && buf_ok(where) ? 0 : STC_ENOMEM;
}
