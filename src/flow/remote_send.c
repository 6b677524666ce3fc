/* remote_send.c - the sending side of remote stages (remote.c): a worker
 * encodes a batch at a stage another process runs, hands it to the host's
 * transport (stc_remote.call, or .start and a resume when the reply
 * comes), and adopts the reply; and the batches and states of serial
 * stages owned by a peer (owned.c). */
#include <stdlib.h>
#include <string.h>

#include "flow/owned.h"
#include "flow/remote_wire.h"

/* ---- The sending side ---------------------------------------------------------- */

/* The request for stage `stage` of the (loaded) batch: 0, or the code of a
 * value that cannot travel. */
static int request_encode(flow_job *job, int smap, int fn, int stage, const flow_batch *b, buf *out,
                          const flow_owned_stage *o, bool keep)
{
    const flow_plan *pl = job->plan;
    const flow_remote_names *nm = job->rt->rnames;
    stc__buf_put(out, o ? "STCo" : "STCq", 4);
    uint64_t head[] = {(uint64_t)smap, (uint64_t)fn, (uint64_t)job->rt->fi->nshards, (uint64_t)stage, (uint64_t)job->base_depth, b->first,
                       (uint64_t)b->n, (uint64_t)pl->nslots, (uint64_t)pl->nflags, (uint64_t)job->ncaps,
                       (uint64_t)(stc__flow_remote_thread_number(job->rt->p, job->thread) + 1)};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) stc__val_wire_put_uvarint(out, head[i]);
    const uint8_t *reads = job->remote_reads ? job->remote_reads + (size_t)stage * (size_t)pl->nslots : NULL;
    if (!reads && pl->nslots > job->ncaps) return STC_ENOMEM; /* (job_reads ran out of memory) */
    int rc = 0;
    if (o) { /* an owned stage: its threads' states go with its first batch */
        int k = o->moved ? 0 : o->nthreads;
        stc__val_wire_put_uvarint(out, (uint64_t)k);
        for (int i = 0; rc == 0 && i < k; i++) {
            stc__val_wire_put_uvarint(out, stc__flow_owned_id(job, o, i));
            rc = stc__val_wire_encode(out, *stc__flow_owned_value(job, o, i), &nm->wf);
            if (rc == 0 && o->shard_map >= 0) /* a keyed thread's: a new key's state too */
                rc = stc__val_wire_encode(out, job->owned->states[o->threads[i]].init, &nm->wf);
        }
        for (int j = 0; rc == 0 && j < job->ncaps; j++) rc = stc__val_wire_encode(out, flow_capture_sent(job, reads, j), &nm->wf);
    } else { /* the context (owned.c job_contexts): its bytes, or its key once the peer has it */
        const buf *c = job->remote_ctx ? &job->remote_ctx[stage] : NULL;
        if (!c || !c->len) return STC_ENOMEM; /* (not made: the stage is not in remote_mask) */
        bool small = c->len <= FLOW_CTX_SMALL;
        stc__val_wire_put_uvarint(out, small ? FLOW_CTX_INLINE : keep ? FLOW_CTX_KEEP : FLOW_CTX_REF);
        if (!small) {
            uint8_t key[16];
            for (int i = 0; i < 16; i++) key[i] = (uint8_t)(job->remote_ctx_key[stage].h[i / 8] >> (8 * (i % 8)));
            stc__buf_put(out, (const char *)key, sizeof key);
            stc__val_wire_put_uvarint(out, (uint64_t)c->len);
        }
        if (small || keep) stc__buf_put(out, c->data, c->len);
    }
    /* an inner smap's shard: its item's list carries only its elements */
    const flow_step *ik = o && o->shard_map >= 0 ? &pl->steps[pl->stages[stage].first] : NULL;
    int list = ik && ik->kind == FS_IKEYED ? ik->src : -1; /* (the list is its first temporary) */
    /* The slots it reads, listed once for the batch rather than looked up
     * per item (16 slots on logstats, 2 read). */
    int few[32], *at = few, nat = 0;
    if (rc == 0 && pl->nslots - job->ncaps > 32 && !(at = malloc((size_t)pl->nslots * sizeof *at))) rc = STC_ENOMEM;
    for (int j = job->ncaps; rc == 0 && j < pl->nslots; j++)
        if (reads[j]) at[nat++] = j;
    size_t nf = (size_t)pl->nflags;
    for (int i = 0; rc == 0 && i < b->n; i++) {
        char *t = buf_room(out, 1 + nf); /* the dead byte and the flags */
        if (!t) break;
        t[0] = (char)b->dead[i];
        if (b->dead[i]) {
            buf_commit(out, 1);
            continue;
        }
        const uint8_t *fl = b->flags + (size_t)i * nf;
        for (size_t k = 0; k < nf; k++) t[1 + k] = (char)fl[k]; /* (a few bytes: no call) */
        buf_commit(out, 1 + nf);
        const stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        for (int k = 0; rc == 0 && k < nat; k++)
            rc = at[k] == list ? stc__flow_ikeyed_put_list(ik, slots, out, &nm->wf)
                               : stc__val_wire_encode(out, slots[at[k]], &nm->wf);
    }
    if (at != few) free(at);
    return rc ? rc : buf_ok(out) ? 0 : STC_ENOMEM;
}

/* A slot an item's stage changed: the item (among the live ones
 * answered), the batch's slot and its new value. */
typedef struct reply_slot {
    int item;
    stc_value *dst;
    stc_value v;
} reply_slot;

/* The reply, decoded whole before anything changes: per item its flags
 * and the slots it changed, and the failing item's error. */
typedef struct reply {
    int nran;
    uint64_t work_ns;   /* an owned stage's: the peer's work on the batch */
    int nok;            /* live items answered */
    reply_slot *slots;  /* nslots of them, in item and slot order */
    size_t nslots;
    const uint8_t **flags; /* per live item answered, its nflags flags in the reply's bytes */
    bool failed;
    bool recorded;      /* failed: the item's error is recorded already (an inner
                           smap's shards, tag 3) */
    eval_err err;
    /* An inner smap's element that failed in a shard stage (tag 2; the first
     * of the batch, the lowest item): the item of nok == elem_at, the element. */
    bool elem;
    int elem_at;
    long long elem_sub;
    eval_err elem_err;
} reply;

/* An item's error in a reply (code, whether it has a message, its length
 * and bytes, line, column, thread + 1, item), which must be item `want`:
 * false when malformed (r->rc set). */
static bool reply_error(rd *r, const flow_job *job, uint64_t want, eval_err *err)
{
    uint64_t code = rd_uv(r), has = rd_uv(r), len = rd_uv(r);
    const uint8_t *msg = rd_bytes(r, (size_t)len);
    uint64_t line = rd_uv(r), col = rd_uv(r), th = rd_uv(r), item = rd_uv(r);
    if (r->rc) return false;
    if (code == 0 || code > 1000 || line > INT32_MAX || col > INT32_MAX || th > (uint64_t)job->rt->p->nthreads ||
        item != want) {
        r->rc = STC_EINVAL;
        return false;
    }
    *err = (eval_err){.code = -(int)code, .loc = {(int)line, (int)col},
                      .thread = th ? job->rt->p->threads[th - 1]->name : NULL, .item = (long long)item};
    if (has && !(err->message = malloc((size_t)len + 1))) {
        r->rc = STC_ENOMEM;
        return false;
    }
    if (has) {
        memcpy(err->message, msg, (size_t)len);
        err->message[len] = '\0';
    }
    return true;
}

static int reply_decode(flow_job *job, const flow_batch *b, const void *p, size_t n, bool owned, reply *out)
{
    const flow_plan *pl = job->plan;
    const flow_remote_names *nm = job->rt->rnames;
    size_t w = (size_t)(pl->nslots - job->ncaps);
    rd r = {p, n, 0, 0};
    *out = (reply){0};
    const uint8_t *magic = rd_bytes(&r, 4);
    if (!magic || memcmp(magic, "STCa", 4) != 0) return STC_EINVAL;
    uint64_t nran = rd_uv(&r);
    out->work_ns = owned ? rd_uv(&r) : 0;
    int live = 0;
    for (int i = 0; i < b->n; i++) live += !b->dead[i];
    out->slots = malloc(((size_t)live * w + 1) * sizeof *out->slots); /* at most every slot of every item */
    out->flags = malloc(((size_t)live + 1) * sizeof *out->flags);
    if (!out->slots || !out->flags) r.rc = STC_ENOMEM;
    if (nran > (uint64_t)live) r.rc = STC_EINVAL;
    out->nran = (int)nran;
    for (int i = 0; !r.rc && i < b->n && !out->failed; i++) {
        if (b->dead[i]) continue;
        const uint8_t *tag = rd_bytes(&r, 1);
        while (tag && *tag == 2) { /* an element's error, then the item's part */
            eval_err e = {0};
            if (!reply_error(&r, job, b->first + (size_t)i, &e)) break;
            uint64_t sub = rd_uv(&r), eitem = rd_uv(&r);
            if (r.rc || sub >= (uint64_t)1 << 62 || eitem >= (uint64_t)1 << 62) {
                r.rc = r.rc ? r.rc : STC_EINVAL;
                free(e.message);
                break;
            }
            e.item = (long long)eitem;
            if (out->elem) { /* a later item's: never the earliest */
                free(e.message);
            } else {
                out->elem = true, out->elem_at = out->nok, out->elem_sub = (long long)sub, out->elem_err = e;
            }
            tag = rd_bytes(&r, 1);
        }
        if (!tag || r.rc) break;
        if (*tag == 0) {
            const uint8_t *fl = rd_bytes(&r, (size_t)pl->nflags);
            out->flags[out->nok] = fl;
            stc_value *dst = b->slots + (size_t)i * (size_t)pl->nslots + job->ncaps; /* slot 1 of the reply's */
            /* The slots it changed, in increasing order (the others keep
             * the batch's own), then 0. */
            for (uint64_t j, prev = 0; !r.rc && (j = rd_uv(&r)) != 0; prev = j) {
                if (j <= prev || j > w) {
                    r.rc = r.rc ? r.rc : STC_EINVAL;
                    break;
                }
                stc_value v = rd_val(&r, &nm->wf);
                if (!r.rc) out->slots[out->nslots++] = (reply_slot){out->nok, dst + (j - 1), v};
            }
            out->nok++;
        } else if (*tag == 1) {
            if (reply_error(&r, job, b->first + (size_t)i, &out->err)) out->failed = true;
        } else if (*tag == 3) { /* ended: its error is recorded (a tag 2 here or elsewhere) */
            out->failed = out->recorded = true;
        } else {
            r.rc = STC_EINVAL;
        }
    }
    if (!r.rc && (r.at != n || (!out->failed && out->nok != live))) r.rc = STC_EINVAL;
    if (r.rc) {
        for (size_t k = 0; out->slots && k < out->nslots; k++) val_release(out->slots[k].v);
        free(out->slots);
        free(out->flags);
        free(out->err.message);
        free(out->elem_err.message);
        *out = (reply){0};
    }
    return r.rc;
}

/* Whether reply rep (rc, replen) is a peer's "STCn": it does not hold
 * the context the request named, and ran nothing (remote_wire.h). */
static bool asks_context(int rc, const void *rep, size_t replen)
{
    return rc == 0 && rep && replen == 4 && memcmp(rep, "STCn", 4) == 0;
}

/* A batch away at a remote stage (stc_remote.start): its request, kept
 * until the reply comes, and the reply.  The transport writes rc, rep and
 * replen, then resumes the batch (the pool's lock orders that before the
 * worker that runs the stage again reads them). */
typedef struct flow_away {
    buf req;
    bool keep;           /* a replicated stage's request carried its context to keep */
    atomic_uint_fast64_t *asked; /* and its job's ctx_asked, cleared of bit once answered */
    atomic_uint_fast64_t *kept;  /* and its job's ctx_kept, counted then */
    uint64_t bit;
    uint64_t kept_then;  /* ctx_kept when it left */
    int peer;            /* an owned stage's batch: its peer (else -1) */
    flow_owned_stage *o; /* and its stage, until it is decided (else NULL) */
    bool shard;          /* and it is a keyed thread's shard stage */
    sched_pool *pool;
    sched_batch *sb;
    sched_status loaded; /* what loading the frames said (SCHED_STOP: an item failed) */
    int rc;
    void *rep;
    size_t replen;
} flow_away;

static void away_done(void *token, int rc, void *reply, size_t reply_len)
{
    flow_away *a = token;
    if (a->o && rc == 0 && reply) { /* the peer's work on it, for the placement at once (owned.c) */
        rd r = {reply, reply_len, 0, 0};
        const uint8_t *magic = rd_bytes(&r, 4);
        uint64_t nran = rd_uv(&r), work = rd_uv(&r);
        if (!r.rc && memcmp(magic, "STCa", 4) == 0 && nran <= INT32_MAX) stc__flow_owned_measured(a->o, work, (int)nran);
    }
    if (a->keep && rc == 0 && reply && !asks_context(rc, reply, reply_len)) { /* kept there now */
        atomic_fetch_and(a->asked, ~a->bit);
        atomic_fetch_add(a->kept, 1);
    }
    a->rc = rc;
    a->rep = reply;
    a->replen = reply_len;
    stc__sched_resume(a->pool, a->sb);
}

/* Adopts reply rep (consumed) of a request of `sent` bytes: true when the
 * batch's frames (or an item's error) are now the stage's outcome; an
 * owned stage's reply also says the peer's work on it (*work_ns). */
static bool reply_adopt(flow_job *job, eval_ctx *cx, flow_batch *b, int rc, void *rep, size_t replen, size_t sent,
                        sched_status *status, int *nran, bool owned, uint64_t *work_ns)
{
    flow_runtime *rt = job->rt;
    const flow_plan *pl = job->plan;
    reply r;
    if (rc != 0 || !rep || reply_decode(job, b, rep, replen, owned, &r) != 0) {
        free(rep);
        if (!owned) atomic_fetch_add(&rt->remote_declined, 1);
        return false;
    }
    atomic_fetch_add(&rt->remote_batches, 1);
    if (owned) atomic_fetch_add(&rt->remote_serial, 1);
    atomic_fetch_add(&rt->remote_sent, (long long)sent);
    atomic_fetch_add(&rt->remote_received, (long long)replen);
    /* Adopt: the answered items' frames and flags, then the error. */
    sched_status st = SCHED_CONTINUE;
    size_t e = 0; /* r.slots adopted */
    int k = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->dead[i]) continue;
        if (r.elem && r.elem_at == k) { /* as the shard step records it here (shards.c) */
            cx->err = r.elem_err;
            r.elem = false;
            stc__flow_record_error_at(job, cx, (long long)(b->first + (size_t)i), r.elem_sub);
        }
        if (k == r.nok) {
            if (r.failed) {
                if (!r.recorded) {
                    cx->err = r.err; /* cx holds no error between items */
                    stc__flow_record_error(job, cx, (long long)(b->first + (size_t)i));
                }
                r.failed = false;
                memset(b->dead + i, 1, (size_t)(b->n - i));
                st = SCHED_STOP;
            }
            break;
        }
        for (; e < r.nslots && r.slots[e].item == k; e++) {
            val_release(*r.slots[e].dst);
            *r.slots[e].dst = r.slots[e].v;
        }
        uint8_t *fl = b->flags + (size_t)i * (size_t)pl->nflags;
        for (int f = 0; f < pl->nflags; f++) fl[f] = r.flags[k][f]; /* (a few bytes, from the reply: no call) */
        k++;
    }
    free(rep); /* (r.flags point into it) */
    if (r.failed && !r.recorded) free(r.err.message);
    if (r.elem) free(r.elem_err.message);
    free(r.slots);
    free(r.flags);
    *status = st;
    *nran = r.nran;
    *work_ns = r.work_ns;
    return true;
}

/* ---- Serial stages owned by a peer (owned.c) ------------------------------------ */

/* Records an error of the owned stage's transport for the batch's first
 * live item (the items from there on are dead). */
static void owned_fail(flow_job *job, eval_ctx *cx, flow_batch *b, int peer, const char *what)
{
    for (int i = 0; i < b->n; i++) {
        if (b->dead[i]) continue;
        cx->item = (long long)(b->first + (size_t)i);
        cx->thread = job->thread;
        if (!cx->err.code) stc__eval_error(cx, STC_EIO, job->loc, "remote executor %d: %s", peer, what);
        stc__flow_record_error(job, cx, cx->item);
        memset(b->dead + i, 1, (size_t)(b->n - i));
        return;
    }
}

/* Brings stage o's states back from its peer before batch b runs it here:
 * false then; true when they did not come back, the batch's first live
 * item failed with that (*status, *nran). */
static bool owned_back(flow_job *job, eval_ctx *cx, flow_owned_stage *o, flow_batch *b, sched_status *status,
                       int *nran)
{
    int peer = o->peer;
    if (!o->moved || stc__flow_owned_recall(job, cx, o, true) == 0) return false;
    owned_fail(job, cx, b, peer, "");
    *status = SCHED_STOP, *nran = 0;
    return true;
}

/* Stage o of the batch: sent to its peer (SCHED_AWAY_PASS: the next batch
 * may be sent at once, the peer keeps the order), or false: it runs here
 * (not placed there, brought back by the cost model, or it just came
 * back). */
static bool owned_stage(flow_job *job, eval_ctx *cx, flow_owned_stage *o, int smap, int fn, sched_batch *sb,
                        sched_status *status, int *nran)
{
    flow_runtime *rt = job->rt;
    flow_batch *b = sb->data;
    if (!stc__flow_owned_goes(job, o)) /* (measured cheap there: its states come back first) */
        return owned_back(job, cx, o, b, status, nran);
    sched_status loaded = b->loaded ? SCHED_CONTINUE : stc__flow_load_batch(job, cx, b);
    int live = 0;
    for (int i = 0; i < b->n; i++) live += !b->dead[i];
    if (!live) { /* nothing to send */
        *status = loaded, *nran = 0;
        return true;
    }
    flow_away *a = malloc(sizeof *a);
    buf req = BUF_INIT;
    int rc = a ? request_encode(job, smap, fn, o->stage, b, &req, o, false) : STC_ENOMEM;
    bool first = !o->moved;
    if (rc == 0) {
        *a = (flow_away){.req = req, .peer = o->peer, .o = o->decided ? NULL : o, .shard = o->shard_map >= 0, .pool = rt->pool, .sb = sb,
                         .loaded = loaded};
        b->away = a; /* before start_to: the reply may come before it returns */
        if (rt->remote.start_to(rt->remote.ud, o->peer, a->req.data, a->req.len, away_done, a) == 0) {
            /* (a and b may be back and gone already: neither is touched) */
            if (first) { /* the states are there now, and nowhere else */
                for (int i = 0; i < o->nthreads; i++) {
                    stc_value *v = stc__flow_owned_value(job, o, i);
                    val_release(*v);
                    *v = flow_unit();
                }
                o->moved = true;
                atomic_fetch_add(&rt->remote_moves, 1);
                if (o->shard_map >= 0) atomic_fetch_add(&rt->remote_shard_moves, 1);
            }
            *status = SCHED_AWAY_PASS;
            return true;
        }
        b->away = NULL;
        if (!first) { /* its states are there: it cannot run here */
            stc__buf_free(&a->req);
            free(a);
            owned_fail(job, cx, b, o->peer, "the transport did not take a batch of a serial stage");
            *status = SCHED_STOP, *nran = 0;
            return true;
        }
        req = a->req;
    }
    /* A value that cannot travel, or the transport refused the first batch:
     * the stage runs here for the rest of the job (its states back first). */
    stc__buf_free(&req);
    free(a);
    if (owned_back(job, cx, o, b, status, nran)) return true;
    o->peer = -1;
    o->decided = true;
    return false;
}

int stc__flow_owned_recall(flow_job *job, eval_ctx *cx, flow_owned_stage *o, bool report)
{
    flow_runtime *rt = job->rt;
    const flow_remote_names *nm = rt->rnames;
    int peer = o->peer;
    buf req = BUF_INIT;
    stc__buf_put(&req, "STCf", 4);
    stc__val_wire_put_uvarint(&req, (uint64_t)o->nthreads);
    for (int i = 0; i < o->nthreads; i++) stc__val_wire_put_uvarint(&req, stc__flow_owned_id(job, o, i));
    void *rep = NULL;
    size_t len = 0;
    int rc = buf_ok(&req) ? stc__flow_owned_call(rt, peer, &req, &rep, &len) : STC_ENOMEM;
    size_t sent = req.len;
    stc__buf_free(&req);
    stc_value *got = calloc((size_t)o->nthreads + 1, sizeof *got);
    rd r = {rep, rep ? len : 0, 0, rc ? rc : got ? 0 : STC_ENOMEM};
    const uint8_t *magic = rd_bytes(&r, 4);
    if (magic && memcmp(magic, "STCs", 4) != 0) r.rc = STC_EINVAL;
    if (rd_uv(&r) != (uint64_t)o->nthreads) r.rc = r.rc ? r.rc : STC_EINVAL;
    int k = 0;
    while (!r.rc && k < o->nthreads) {
        uint64_t t = rd_uv(&r);
        stc_value v = rd_val(&r, &nm->wf);
        if (!r.rc && t != stc__flow_owned_id(job, o, k)) r.rc = STC_EINVAL;
        if (!r.rc && o->shard_map >= 0 && v.tag != STC_T_MAP) r.rc = STC_EINVAL; /* (a shard map) */
        if (r.rc) {
            val_release(v);
            break;
        }
        got[k++] = v;
    }
    if (!r.rc && r.at != r.n) r.rc = STC_EINVAL;
    free(rep);
    o->moved = false;
    o->peer = -1;
    o->decided = true;
    if (r.rc) {
        release_n(got, (size_t)k);
        free(got);
        if (report) {
            cx->thread = job->thread;
            stc__eval_error(cx, STC_EIO, job->loc,
                            "remote executor %d: the states of a serial stage did not come back", peer);
        }
        return STC_EIO;
    }
    for (int i = 0; i < o->nthreads; i++) {
        stc_value *v = stc__flow_owned_value(job, o, i);
        val_release(*v);
        *v = got[i];
    }
    free(got);
    atomic_fetch_add(&rt->remote_batches, 1); /* a request and a reply, as the transport counts */
    atomic_fetch_add(&rt->remote_serial, 1);
    if (o->shard_map >= 0) atomic_fetch_add(&rt->remote_shard_serial, 1);
    atomic_fetch_add(&rt->remote_sent, (long long)sent);
    atomic_fetch_add(&rt->remote_received, (long long)len);
    return 0;
}


/* Counts a request answered "STCn" (a request and a reply, as the
 * transport counts them) and frees the reply. */
static void asked_context(flow_runtime *rt, size_t sent, void *rep, size_t replen)
{
    atomic_fetch_add(&rt->remote_batches, 1);
    atomic_fetch_add(&rt->remote_sent, (long long)sent);
    atomic_fetch_add(&rt->remote_received, (long long)replen);
    free(rep);
}

bool stc__flow_remote_stage(flow_job *job, eval_ctx *cx, int stage, sched_batch *sb, sched_status *status, int *nran,
                            uint64_t *wait_ns)
{
    flow_runtime *rt = job->rt;
    const flow_plan *pl = job->plan;
    flow_batch *b = sb->data;
    bool keep = false; /* send the context's bytes for the peer to keep */
    sched_status was_loaded = SCHED_CONTINUE; /* what loading the frames said before a first sending */
    *wait_ns = 0;
    if (b->away && b->away->peer < 0 && !b->away->keep && asks_context(b->away->rc, b->away->rep, b->away->replen)) {
        flow_away *a = b->away; /* the peer lacks the context: again, with it */
        b->away = NULL;
        asked_context(rt, a->req.len, a->rep, a->replen);
        /* With the bytes, unless a request that carried them was answered
         * since this one left; and the stage's next ones with them too. */
        keep = b->ctx_retried || atomic_load(&job->ctx_kept) == a->kept_then;
        b->ctx_retried = !keep;
        if (keep && stage < 64) atomic_fetch_or(&job->ctx_asked, (uint64_t)1 << stage);
        was_loaded = a->loaded;
        stc__buf_free(&a->req);
        free(a);
    }
    if (b->away) { /* back from another process */
        flow_away *a = b->away;
        b->away = NULL;
        b->ctx_retried = false;
        uint64_t work = 0; /* (counted as it came: away_done) */
        bool ok = reply_adopt(job, cx, b, a->rc, a->rep, a->replen, a->req.len, status, nran, a->peer >= 0, &work);
        if (ok && a->shard) atomic_fetch_add(&job->rt->remote_shard_serial, 1);
        if (!ok && a->peer >= 0) { /* the peer ran it (its states moved on): it cannot run here */
            owned_fail(job, cx, b, a->peer, "a batch of a serial stage came back unreadable");
            *status = SCHED_STOP, *nran = 0, ok = true;
        }
        if (ok && a->loaded == SCHED_STOP) *status = SCHED_STOP;
        stc__buf_free(&a->req);
        free(a);
        return ok; /* (not ok: runs here, the frames still loaded) */
    }
    if (!rt->rnames || !pl->fn) return false;
    int smap = stc__flow_remote_smap_number(rt->rnames, pl->smap);
    int64_t fn = rt->rnames->wf.code_id(rt->rnames->wf.ud, pl->fn);
    if (smap < 0 || fn < 0) return false;
    if (job->owned && stage < 64 && job->owned->at[stage] >= 0)
        return owned_stage(job, cx, &job->owned->st[job->owned->at[stage]], smap, (int)fn, sb, status, nran);
    sched_status loaded = b->loaded ? was_loaded : stc__flow_load_batch(job, cx, b);
    flow_away *a = rt->remote.start ? malloc(sizeof *a) : NULL;
    buf req = BUF_INIT;
    keep = keep || (stage < 64 && (atomic_load(&job->ctx_asked) >> stage & 1)); /* (a peer asked lately) */
    if (request_encode(job, smap, (int)fn, stage, b, &req, NULL, keep) != 0) {
        stc__buf_free(&req);
        free(a);
        return false; /* runs here; the frames stay loaded */
    }
    if (a) {
        *a = (flow_away){.req = req, .keep = keep, .asked = &job->ctx_asked, .kept = &job->ctx_kept,
                         .bit = stage < 64 ? (uint64_t)1 << stage : 0, .kept_then = atomic_load(&job->ctx_kept),
                         .peer = -1, .pool = rt->pool, .sb = sb, .loaded = loaded};
        b->away = a; /* before start: the reply may come before it returns */
        if (rt->remote.start(rt->remote.ud, a->req.data, a->req.len, away_done, a) == 0) {
            *status = SCHED_AWAY;
            return true;
        }
        b->away = NULL; /* the transport is full: here, now */
        stc__buf_free(&a->req);
        free(a);
        return false;
    }
    void *rep = NULL;
    size_t replen = 0;
    uint64_t t0 = flow_now_ns();
    int rc = rt->remote.call(rt->remote.ud, req.data, req.len, &rep, &replen);
    if (!keep && asks_context(rc, rep, replen)) { /* again, with the context */
        asked_context(rt, req.len, rep, replen);
        keep = true;
        rep = NULL, replen = 0;
        stc__buf_free(&req);
        req = (buf)BUF_INIT;
        rc = request_encode(job, smap, (int)fn, stage, b, &req, NULL, true);
        if (rc == 0) rc = rt->remote.call(rt->remote.ud, req.data, req.len, &rep, &replen);
    }
    *wait_ns = flow_now_ns() - t0;
    size_t sent = req.len;
    stc__buf_free(&req);
    uint64_t work;
    if (!reply_adopt(job, cx, b, rc, rep, replen, sent, status, nran, false, &work)) {
        *wait_ns = 0;
        return false;
    }
    if (keep && stage < 64) atomic_fetch_and(&job->ctx_asked, ~((uint64_t)1 << stage)); /* kept there now */
    if (loaded == SCHED_STOP) *status = SCHED_STOP;
    return true;
}
