/* remote.c - replicated stages run by another process (stc_remote in
 * include/stc.h; docs/DESIGN.md 7c).
 *
 * A worker at a stage that may go remote (flow_plan.remote_ok) encodes the
 * batch as a request, hands it to the host's transport and waits for the
 * reply; the serving process (stc__flow_remote_serve, the same program
 * text compiled there) builds the same plan from the same numbers, runs
 * the stage's steps on each item's frame with an evaluation context of
 * its own and answers with the frames the stage left, or with the first
 * failing item's error.  The worker then adopts the reply as if the stage
 * had run here: the frames replace the batch's, an error is recorded for
 * its item, so the earliest failing item still wins.
 *
 * Request:  "STCq" smap fn nshards stage base_depth first n nslots nflags
 *           ncaps thread+1, the captures, then per item: dead byte, and for a
 *           live item its flags and slots ncaps..nslots-1.
 * Reply:    "STCa" nran, then per live item of the request: 0, its flags
 *           and slots; or 1 and the item's error (code, message, line,
 *           col, thread+1, item), which ends the reply.  A slot the stage
 *           left as it came is the byte 0 (REPLY_SAME, a kind no value
 *           starts with): the sender keeps its own (the input line, on
 *           logstats, need not come back).
 * Owned:    "STCo", a serial stage's batch for the peer that owns it
 *           (owned.c): the STCq header, then nstates and per state its
 *           thread number and value (the stage's first batch carries its
 *           threads' states, later ones none: the peer keeps them), then
 *           captures and items as STCq; replied to as STCq.
 * Fetch:    "STCf" n thread...: the states go back, "STCs" n (thread,
 *           state)..., and the peer holds them no more.
 * nshards is the runtime's fi->nshards (keyed threads' shard stages
 * depend on the worker count): the server builds its plan with the same,
 * so the stage numbers agree.  Numbers are LEB128 varints, values wire.h's.
 * A request carries the slots the stage reads (job->remote_reads, owned.c;
 * the others are the byte SLOT_ABSENT, a placeholder on the peer) and the
 * captures once per batch; a reply every slot the stage changed. */
#include <stdlib.h>
#include <string.h>

#include "flow/owned.h"
#include "ir/funtable.h"
#include "value/value.h"
#include "value/wire.h"

#define REPLY_SAME 0 /* in a reply: this slot is as the request sent it */
#define SLOT_ABSENT 0 /* in a request: the stage does not read this slot (not sent) */

typedef struct flow_remote_names {
    ir_fun_table ft;
    wire_funcs wf;
    const ir_expr **smaps; /* by number: source order */
    int nsmaps, cap;
    bool oom;
} flow_remote_names;

/* ---- Which stages may go ------------------------------------------------- */

/* Whether evaluating e may call a thread, a function value or smap, or
 * hand a builtin a function it does not see (through called functions;
 * seen[f]: function f is being or was checked). */
static bool remote_unsafe(const ir_program *p, const ir_expr *e, bool *seen)
{
    while (e) {
        switch (e->kind) {
        case IR_THREADREF: return true;
        case IR_FUNREF: {
            int f = e->u.index;
            if (f < 0 || f >= p->nfuns) return true;
            if (seen[f]) return false;
            seen[f] = true;
            e = p->funs[f]->body;
            continue;
        }
        case IR_LAMBDA: e = e->u.fn->body; continue;
        case IR_CALL: {
            int idx = e->u.call.callee.index;
            switch (e->u.call.kind) {
            case CALL_BUILTIN:
                if (idx == BI_SMAP) return true;
                if (idx == BI_FOLD || idx == BI_FILTER || idx == BI_UPDATE) {
                    const ir_expr *f = idx == BI_UPDATE ? (e->u.call.nargs == 4 ? e->u.call.args[3] : NULL)
                                                        : (e->u.call.nargs > 0 ? e->u.call.args[0] : NULL);
                    if (!f || (f->kind != IR_LAMBDA && f->kind != IR_FUNREF)) return true;
                }
                break;
            case CALL_FUN:
                if (idx < 0 || idx >= p->nfuns) return true;
                if (!seen[idx]) {
                    seen[idx] = true;
                    if (remote_unsafe(p, p->funs[idx]->body, seen)) return true;
                }
                break;
            default: return true; /* a thread, a function value */
            }
            for (int i = 0; i < e->u.call.nargs; i++)
                if (remote_unsafe(p, e->u.call.args[i], seen)) return true;
            return false;
        }
        case IR_CASE:
            for (int i = 0; i < e->u.cas.nalts; i++)
                if (remote_unsafe(p, e->u.cas.alts[i].body, seen)) return true;
            e = e->a;
            continue;
        case IR_TUPLE:
        case IR_LIST:
            for (int i = 0; i < e->u.agg.nitems; i++)
                if (remote_unsafe(p, e->u.agg.items[i], seen)) return true;
            return false;
        default:
            if (remote_unsafe(p, e->b, seen) || remote_unsafe(p, e->c, seen)) return true;
            e = e->a;
            continue;
        }
    }
    return false;
}

/* Whether e calls a function or a builtin anywhere (not looking inside
 * lambdas: making a closure is cheap). */
static bool has_call(const ir_expr *e)
{
    if (!e) return false;
    switch (e->kind) {
    case IR_CALL: return true;
    case IR_LAMBDA: return false;
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (has_call(e->u.cas.alts[i].body)) return true;
        return has_call(e->a);
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (has_call(e->u.agg.items[i])) return true;
        return false;
    default: return has_call(e->a) || has_call(e->b) || has_call(e->c);
    }
}

uint64_t stc__flow_remote_stages(flow_info *fi, const flow_plan *pl)
{
    const ir_program *p = fi->p;
    bool *seen = malloc((size_t)(p->nfuns > 0 ? p->nfuns : 1));
    if (!seen) return 0;
    uint64_t ok = 0;
    for (int t = 0; t < pl->nstages && t < 64; t++) {
        const flow_stage *st = &pl->stages[t];
        bool safe = !st->serial && st->count > 0, calls = false;
        for (int k = st->first; safe && k < st->first + st->count; k++) {
            const flow_step *s = &pl->steps[k];
            memset(seen, 0, (size_t)(p->nfuns > 0 ? p->nfuns : 1));
            /* The selects and a let-tuple's binding evaluate nothing but
             * patterns on a slot; an expression step may call anything. */
            if (s->kind == FS_EVAL) safe = !remote_unsafe(p, s->e, seen), calls = calls || has_call(s->e);
            else safe = s->kind == FS_SELECT_IF || s->kind == FS_SELECT_CASE || s->kind == FS_DESTRUCT;
        }
        /* A stage that calls nothing (patterns, arithmetic on a slot) costs
         * less here than its frames' trip (logstats's `case` stage went
         * remote too, and doubled the bytes). */
        if (safe && calls) ok |= (uint64_t)1 << t;
    }
    free(seen);
    return ok;
}

/* ---- Names both ends agree on ----------------------------------------------- */

static void names_add(const ir_expr *smap, void *ud)
{
    flow_remote_names *n = ud;
    if (n->oom) return;
    if (n->nsmaps == n->cap) {
        int ncap = n->cap ? 2 * n->cap : 16;
        const ir_expr **m = realloc(n->smaps, (size_t)ncap * sizeof *m);
        if (!m) {
            n->oom = true;
            return;
        }
        n->smaps = m;
        n->cap = ncap;
    }
    n->smaps[n->nsmaps++] = smap;
}

flow_remote_names *stc__flow_remote_names_new(const ir_program *p)
{
    flow_remote_names *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    if (stc__ir_fun_table_build(p, &n->ft) != 0) {
        free(n);
        return NULL;
    }
    n->wf = stc__ir_fun_table_wire(&n->ft);
    stc__flow_each_smap(p, names_add, n);
    if (n->oom) {
        stc__flow_remote_names_free(n);
        return NULL;
    }
    return n;
}

void stc__flow_remote_names_free(flow_remote_names *n)
{
    if (!n) return;
    stc__ir_fun_table_free(&n->ft);
    free(n->smaps);
    free(n);
}

static int names_smap(const flow_remote_names *n, const ir_expr *e)
{
    for (int i = 0; i < n->nsmaps; i++)
        if (n->smaps[i] == e) return i;
    return -1;
}

static int thread_number(const ir_program *p, const char *name)
{
    for (int i = 0; name && i < p->nthreads; i++)
        if (p->threads[i]->name == name || strcmp(p->threads[i]->name, name) == 0) return i;
    return -1;
}

/* ---- Reading --------------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    size_t n, at;
    int rc; /* first failure */
} rd;

static uint64_t rd_uv(rd *r)
{
    uint64_t x = 0;
    size_t used;
    if (r->rc) return 0;
    if ((r->rc = stc__val_wire_get_uvarint(r->p + r->at, r->n - r->at, &used, &x))) return 0;
    r->at += used;
    return x;
}

static const uint8_t *rd_bytes(rd *r, size_t k)
{
    if (r->rc) return NULL;
    if (k > r->n - r->at) {
        r->rc = STC_EINVAL;
        return NULL;
    }
    r->at += k;
    return r->p + r->at - k;
}

static stc_value rd_val(rd *r, const wire_funcs *wf)
{
    stc_value v = stc_value_unit();
    size_t used;
    if (r->rc) return v;
    if (r->at < r->n && r->p[r->at] == WIRE_UNIT) { /* most slots of a request */
        r->at++;
        return v;
    }
    if ((r->rc = stc__val_wire_decode(r->p + r->at, r->n - r->at, &used, &v, wf))) return stc_value_unit();
    r->at += used;
    return v;
}

static void release_n(stc_value *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) val_release(v[i]);
}

/* ---- The sending side ---------------------------------------------------------- */

/* The request for stage `stage` of the (loaded) batch: 0, or the code of a
 * value that cannot travel. */
static int request_encode(flow_job *job, int smap, int fn, int stage, const flow_batch *b, buf *out,
                          const flow_owned_stage *o)
{
    const flow_plan *pl = job->plan;
    const flow_remote_names *nm = job->rt->rnames;
    stc__buf_put(out, o ? "STCo" : "STCq", 4);
    uint64_t head[] = {(uint64_t)smap, (uint64_t)fn, (uint64_t)job->rt->fi->nshards, (uint64_t)stage, (uint64_t)job->base_depth, b->first,
                       (uint64_t)b->n, (uint64_t)pl->nslots, (uint64_t)pl->nflags, (uint64_t)job->ncaps,
                       (uint64_t)(thread_number(job->rt->p, job->thread) + 1)};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) stc__val_wire_put_uvarint(out, head[i]);
    int rc = 0;
    if (o) { /* an owned stage: its threads' states go with its first batch */
        int k = o->moved ? 0 : o->nthreads;
        stc__val_wire_put_uvarint(out, (uint64_t)k);
        for (int i = 0; rc == 0 && i < k; i++) {
            stc__val_wire_put_uvarint(out, (uint64_t)o->threads[i]);
            rc = stc__val_wire_encode(out, job->owned->states[o->threads[i]].value, &nm->wf);
        }
    }
    for (int j = 0; rc == 0 && j < job->ncaps; j++) rc = stc__val_wire_encode(out, job->caps[j], &nm->wf);
    for (int i = 0; rc == 0 && i < b->n; i++) {
        stc__buf_putc(out, (char)b->dead[i]);
        if (b->dead[i]) continue;
        stc__buf_put(out, (const char *)b->flags + (size_t)i * (size_t)pl->nflags, (size_t)pl->nflags);
        const stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots;
        const uint8_t *reads = job->remote_reads ? job->remote_reads + (size_t)stage * (size_t)pl->nslots : NULL;
        for (int j = job->ncaps; rc == 0 && j < pl->nslots; j++)
            if (reads && !reads[j]) stc__buf_putc(out, SLOT_ABSENT);
            else rc = stc__val_wire_encode(out, slots[j], &nm->wf);
    }
    return rc ? rc : buf_ok(out) ? 0 : STC_ENOMEM;
}

/* The reply, decoded whole before anything changes: per item its new
 * slots (ncaps..nslots-1) and flags, and the failing item's error. */
typedef struct reply {
    int nran;
    int nok;            /* live items answered */
    stc_value *slots;   /* nok x (nslots - ncaps) */
    uint8_t *flags;     /* nok x nflags */
    bool failed;
    eval_err err;
} reply;

static int reply_decode(flow_job *job, const flow_batch *b, const void *p, size_t n, reply *out)
{
    const flow_plan *pl = job->plan;
    const flow_remote_names *nm = job->rt->rnames;
    size_t w = (size_t)(pl->nslots - job->ncaps);
    rd r = {p, n, 0, 0};
    *out = (reply){0};
    const uint8_t *magic = rd_bytes(&r, 4);
    if (!magic || memcmp(magic, "STCa", 4) != 0) return STC_EINVAL;
    uint64_t nran = rd_uv(&r);
    int live = 0;
    for (int i = 0; i < b->n; i++) live += !b->dead[i];
    out->slots = calloc((size_t)live * w + 1, sizeof *out->slots);
    out->flags = malloc((size_t)live * (size_t)pl->nflags + 1);
    if (!out->slots || !out->flags) r.rc = STC_ENOMEM;
    if (nran > (uint64_t)live) r.rc = STC_EINVAL;
    out->nran = (int)nran;
    for (int i = 0; !r.rc && i < b->n && !out->failed; i++) {
        if (b->dead[i]) continue;
        const uint8_t *tag = rd_bytes(&r, 1);
        if (!tag) break;
        if (*tag == 0) {
            const uint8_t *fl = rd_bytes(&r, (size_t)pl->nflags);
            if (fl) memcpy(out->flags + (size_t)out->nok * (size_t)pl->nflags, fl, (size_t)pl->nflags);
            for (size_t j = 0; j < w && !r.rc; j++) {
                stc_value *v = &out->slots[(size_t)out->nok * w + j];
                if (r.at < r.n && r.p[r.at] == REPLY_SAME) {
                    r.at++;
                    *v = (stc_value){.tag = STC_T_INVALID}; /* keep the batch's own */
                } else {
                    *v = rd_val(&r, &nm->wf);
                }
            }
            out->nok++;
        } else if (*tag == 1) {
            uint64_t code = rd_uv(&r), has = rd_uv(&r), len = rd_uv(&r);
            const uint8_t *msg = rd_bytes(&r, (size_t)len);
            uint64_t line = rd_uv(&r), col = rd_uv(&r), th = rd_uv(&r), item = rd_uv(&r);
            if (r.rc) break;
            if (code == 0 || code > 1000 || line > INT32_MAX || col > INT32_MAX ||
                th > (uint64_t)job->rt->p->nthreads || item != b->first + (size_t)i) {
                r.rc = STC_EINVAL;
                break;
            }
            out->failed = true;
            out->err = (eval_err){.code = -(int)code, .loc = {(int)line, (int)col},
                                  .thread = th ? job->rt->p->threads[th - 1]->name : NULL,
                                  .item = (long long)item};
            if (has && !(out->err.message = malloc((size_t)len + 1))) r.rc = STC_ENOMEM;
            else if (has) {
                memcpy(out->err.message, msg, (size_t)len);
                out->err.message[len] = '\0';
            }
        } else {
            r.rc = STC_EINVAL;
        }
    }
    if (!r.rc && (r.at != n || (!out->failed && out->nok != live))) r.rc = STC_EINVAL;
    if (r.rc) {
        release_n(out->slots, (size_t)live * w);
        free(out->slots);
        free(out->flags);
        free(out->err.message);
        *out = (reply){0};
    }
    return r.rc;
}

/* A batch away at a remote stage (stc_remote.start): its request, kept
 * until the reply comes, and the reply.  The transport writes rc, rep and
 * replen, then resumes the batch (the pool's lock orders that before the
 * worker that runs the stage again reads them). */
typedef struct flow_away {
    buf req;
    int peer;            /* an owned stage's batch: its peer (else -1) */
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
    a->rc = rc;
    a->rep = reply;
    a->replen = reply_len;
    stc__sched_resume(a->pool, a->sb);
}

/* Adopts reply rep (consumed) of a request of `sent` bytes: true when the
 * batch's frames (or an item's error) are now the stage's outcome. */
static bool reply_adopt(flow_job *job, eval_ctx *cx, flow_batch *b, int rc, void *rep, size_t replen, size_t sent,
                        sched_status *status, int *nran, bool owned)
{
    flow_runtime *rt = job->rt;
    const flow_plan *pl = job->plan;
    reply r;
    if (rc != 0 || !rep || reply_decode(job, b, rep, replen, &r) != 0) {
        free(rep);
        if (!owned) atomic_fetch_add(&rt->remote_declined, 1);
        return false;
    }
    free(rep);
    atomic_fetch_add(&rt->remote_batches, 1);
    if (owned) atomic_fetch_add(&rt->remote_serial, 1);
    atomic_fetch_add(&rt->remote_sent, (long long)sent);
    atomic_fetch_add(&rt->remote_received, (long long)replen);
    /* Adopt: the answered items' frames and flags, then the error. */
    sched_status st = SCHED_CONTINUE;
    size_t w = (size_t)(pl->nslots - job->ncaps);
    int k = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->dead[i]) continue;
        if (k == r.nok) {
            if (r.failed) {
                cx->err = r.err; /* cx holds no error between items */
                r.failed = false;
                stc__flow_record_error(job, cx, (long long)(b->first + (size_t)i));
                memset(b->dead + i, 1, (size_t)(b->n - i));
                st = SCHED_STOP;
            }
            break;
        }
        stc_value *slots = b->slots + (size_t)i * (size_t)pl->nslots + job->ncaps;
        const stc_value *got = r.slots + (size_t)k * w;
        for (size_t j = 0; j < w; j++)
            if (got[j].tag != STC_T_INVALID) { /* else REPLY_SAME: as it was */
                val_release(slots[j]);
                slots[j] = got[j];
            }
        memcpy(b->flags + (size_t)i * (size_t)pl->nflags, r.flags + (size_t)k * (size_t)pl->nflags,
               (size_t)pl->nflags);
        k++;
    }
    if (r.failed) free(r.err.message);
    free(r.slots);
    free(r.flags);
    *status = st;
    *nran = r.nran;
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

/* Stage o of the batch: sent to its peer (SCHED_AWAY_PASS: the next batch
 * may be sent at once, the peer keeps the order), or false: it runs here
 * (not placed there, or it just came back). */
static bool owned_stage(flow_job *job, eval_ctx *cx, flow_owned_stage *o, int smap, int fn, sched_batch *sb,
                        sched_status *status, int *nran)
{
    flow_runtime *rt = job->rt;
    flow_batch *b = sb->data;
    if (o->peer < 0 && !stc__flow_owned_goes(job, o)) return false;
    sched_status loaded = b->loaded ? SCHED_CONTINUE : stc__flow_load_batch(job, cx, b);
    int live = 0;
    for (int i = 0; i < b->n; i++) live += !b->dead[i];
    if (!live) { /* nothing to send */
        *status = loaded, *nran = 0;
        return true;
    }
    flow_away *a = malloc(sizeof *a);
    buf req = BUF_INIT;
    int rc = a ? request_encode(job, smap, fn, o->stage, b, &req, o) : STC_ENOMEM;
    bool first = !o->moved;
    if (rc == 0) {
        *a = (flow_away){.req = req, .peer = o->peer, .pool = rt->pool, .sb = sb, .loaded = loaded};
        b->away = a; /* before start_to: the reply may come before it returns */
        if (rt->remote.start_to(rt->remote.ud, o->peer, a->req.data, a->req.len, away_done, a) == 0) {
            /* (a and b may be back and gone already: neither is touched) */
            if (first) { /* the states are there now, and nowhere else */
                for (int i = 0; i < o->nthreads; i++) {
                    eval_tstate *st = &job->owned->states[o->threads[i]];
                    val_release(st->value);
                    st->value = flow_unit();
                }
                o->moved = true;
                atomic_fetch_add(&rt->remote_moves, 1);
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
    if (o->moved && stc__flow_owned_recall(job, cx, o, true) != 0) {
        owned_fail(job, cx, b, o->peer, "");
        *status = SCHED_STOP, *nran = 0;
        return true;
    }
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
    for (int i = 0; i < o->nthreads; i++) stc__val_wire_put_uvarint(&req, (uint64_t)o->threads[i]);
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
        if (!r.rc && t != (uint64_t)o->threads[k]) r.rc = STC_EINVAL;
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
        eval_tstate *st = &job->owned->states[o->threads[i]];
        val_release(st->value);
        st->value = got[i];
    }
    free(got);
    atomic_fetch_add(&rt->remote_batches, 1); /* a request and a reply, as the transport counts */
    atomic_fetch_add(&rt->remote_serial, 1);
    atomic_fetch_add(&rt->remote_sent, (long long)sent);
    atomic_fetch_add(&rt->remote_received, (long long)len);
    return 0;
}

bool stc__flow_remote_stage(flow_job *job, eval_ctx *cx, int stage, sched_batch *sb, sched_status *status, int *nran,
                            uint64_t *wait_ns)
{
    flow_runtime *rt = job->rt;
    const flow_plan *pl = job->plan;
    flow_batch *b = sb->data;
    *wait_ns = 0;
    if (b->away) { /* back from another process */
        flow_away *a = b->away;
        b->away = NULL;
        bool ok = reply_adopt(job, cx, b, a->rc, a->rep, a->replen, a->req.len, status, nran, a->peer >= 0);
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
    int smap = names_smap(rt->rnames, pl->smap);
    int64_t fn = rt->rnames->wf.code_id(rt->rnames->wf.ud, pl->fn);
    if (smap < 0 || fn < 0) return false;
    if (job->owned && stage < 64 && job->owned->at[stage] >= 0)
        return owned_stage(job, cx, &job->owned->st[job->owned->at[stage]], smap, (int)fn, sb, status, nran);
    sched_status loaded = b->loaded ? SCHED_CONTINUE : stc__flow_load_batch(job, cx, b);
    flow_away *a = rt->remote.start ? malloc(sizeof *a) : NULL;
    buf req = BUF_INIT;
    if (request_encode(job, smap, (int)fn, stage, b, &req, NULL) != 0) {
        stc__buf_free(&req);
        free(a);
        return false; /* runs here; the frames stay loaded */
    }
    if (a) {
        *a = (flow_away){.req = req, .peer = -1, .pool = rt->pool, .sb = sb, .loaded = loaded};
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
    *wait_ns = flow_now_ns() - t0;
    size_t sent = req.len;
    stc__buf_free(&req);
    if (!reply_adopt(job, cx, b, rc, rep, replen, sent, status, nran, false)) {
        *wait_ns = 0;
        return false;
    }
    if (loaded == SCHED_STOP) *status = SCHED_STOP;
    return true;
}

/* ---- The answering side ---------------------------------------------------------- */

struct flow_remote_server {
    const ir_program *p;
    flow_info *fi;
    flow_remote_names *names;
    flow_plan **plans; /* by smap x function, made at first use */
    int *plan_shards;  /* the fi->nshards each was made with */
    int nfuns;
    bool cx_ready;
    eval_ctx cx;
    eval_tstate *states; /* the owned stages' thread states held here (p->nthreads) */
};

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
    }
    s->states = calloc((size_t)p->nthreads + 1, sizeof *s->states);
    for (int t = 0; s->states && t < p->nthreads; t++)
        s->states[t] = (eval_tstate){.value = stc_value_unit(), .init = stc_value_unit()};
    if (!s->fi || !s->names || !s->plans || !s->plan_shards || !s->states) {
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
    for (int t = 0; s->states && t < s->p->nthreads; t++) val_release(s->states[t].value);
    free(s->states);
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

/* Encodes item i's error (taken from cx) into the reply. */
static void serve_error(flow_remote_server *s, buf *out, long long item)
{
    eval_err err = stc__eval_error_take(&s->cx);
    stc__buf_putc(out, 1);
    stc__val_wire_put_uvarint(out, (uint64_t)(err.code < 0 ? -err.code : STC_ERUNTIME * -1));
    size_t len = err.message ? strlen(err.message) : 0;
    stc__val_wire_put_uvarint(out, err.message != NULL);
    stc__val_wire_put_uvarint(out, len);
    stc__buf_put(out, err.message ? err.message : "", len);
    stc__val_wire_put_uvarint(out, (uint64_t)(err.loc.line > 0 ? err.loc.line : 0));
    stc__val_wire_put_uvarint(out, (uint64_t)(err.loc.col > 0 ? err.loc.col : 0));
    stc__val_wire_put_uvarint(out, (uint64_t)(thread_number(s->p, err.thread) + 1));
    stc__val_wire_put_uvarint(out, (uint64_t)item);
    free(err.message);
}

static int serve(flow_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len);

/* The serving thread is the only one touching the values it decodes and
 * makes (program literals are counted atomically anyway, value.h), so it
 * counts them plainly meanwhile, as a 1-worker run does: atomic counts
 * cost a third of such a run (docs/DESIGN.md 5). */
int stc__flow_remote_serve(flow_remote_server *s, const void *req, size_t len, void **reply, size_t *reply_len)
{
    bool was = stc__val_counts_set_plain(true);
    int rc = serve(s, req, len, reply, reply_len);
    stc__val_counts_set_plain(was);
    return rc;
}

/* Whether t names a thread whose state may be held here. */
static bool ownable_thread(const flow_remote_server *s, uint64_t t)
{
    return t < (uint64_t)s->p->nthreads && s->p->threads[t]->kind == THREAD_LANG && !s->p->threads[t]->keyed;
}

/* "STCf" n thread...: the states held here go back ("STCs" n, then
 * thread and state each) and are no longer held. */
static int serve_fetch(flow_remote_server *s, rd *r, void **reply, size_t *reply_len)
{
    uint64_t n = rd_uv(r);
    if (r->rc || n > (uint64_t)s->p->nthreads) return STC_EINVAL;
    size_t at = r->at;
    for (uint64_t i = 0; i < n; i++)
        if (!ownable_thread(s, rd_uv(r)) || r->rc) return STC_EINVAL;
    if (r->at != r->n) return STC_EINVAL;
    r->at = at;
    buf out = BUF_INIT;
    stc__buf_put(&out, "STCs", 4);
    stc__val_wire_put_uvarint(&out, n);
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++) {
        uint64_t t = rd_uv(r);
        stc__val_wire_put_uvarint(&out, t);
        rc = stc__val_wire_encode(&out, s->states[t].value, &s->names->wf);
    }
    if (!rc && !buf_ok(&out)) rc = STC_ENOMEM;
    if (rc) {
        stc__buf_free(&out);
        return rc;
    }
    r->at = at;
    for (uint64_t i = 0; i < n; i++) { /* gone back: not held here any more */
        uint64_t t = rd_uv(r);
        val_release(s->states[t].value);
        s->states[t].value = stc_value_unit();
        s->states[t].ready = false;
    }
    *reply_len = out.len;
    *reply = stc__buf_take(&out);
    return 0;
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
        if (!(*slot = stc__flow_plan_build(s->fi, s->names->smaps[smap], f, -1))) return STC_ENOMEM;
        s->plan_shards[at] = (int)nshards;
    }
    const flow_plan *pl = *slot;
    if (stage >= (uint64_t)pl->nstages || stage >= 64 || !((owned ? pl->remote_owned : pl->remote_ok) >> stage & 1) ||
        nslots != (uint64_t)pl->nslots || nflags != (uint64_t)pl->nflags || ncaps != (uint64_t)pl->fn->ncaptures ||
        ncaps > nslots)
        return STC_EINVAL;
    const wire_funcs *wf = &s->names->wf;
    if (owned) { /* the stage's first batch brings its threads' states */
        uint64_t k = rd_uv(&r);
        if (r.rc || k > (uint64_t)s->p->nthreads) return STC_EINVAL;
        for (uint64_t i = 0; i < k; i++) {
            uint64_t t = rd_uv(&r);
            if (r.rc || !ownable_thread(s, t)) return STC_EINVAL;
            stc_value v = rd_val(&r, wf);
            if (r.rc) return r.rc;
            val_release(s->states[t].value);
            s->states[t].value = v;
            s->states[t].ready = true;
        }
    }
    stc_value *frame = calloc((size_t)nslots + 1, sizeof *frame), *came = calloc((size_t)nslots + 1, sizeof *came);
    uint8_t *flags = malloc((size_t)nflags + 1);
    int rc = frame && came && flags ? 0 : STC_ENOMEM;
    for (size_t j = 0; j < nslots && frame && came; j++) frame[j] = came[j] = stc_value_unit();
    for (size_t j = 0; !rc && j < ncaps; j++) {
        frame[j] = rd_val(&r, wf);
        rc = r.rc;
    }
    flow_job job = {.plan = pl, .base_depth = (int)depth, .thread = th ? s->p->threads[th - 1]->name : NULL};
    buf out = BUF_INIT, items = BUF_INIT;
    int nran = 0;
    bool failed = false;
    for (uint64_t i = 0; !rc && i < n && !failed; i++) {
        const uint8_t *dead = rd_bytes(&r, 1), *fl = dead && !*dead ? rd_bytes(&r, (size_t)nflags) : NULL;
        if (!dead || (!*dead && !fl)) {
            rc = STC_EINVAL;
            break;
        }
        if (*dead) continue;
        memcpy(flags, fl, (size_t)nflags);
        /* A slot the stage does not read comes as SLOT_ABSENT and stays
         * STC_T_INVALID unless a step writes it: then REPLY_SAME. */
        for (size_t j = ncaps; j < nslots; j++)
            if (r.at < r.n && r.p[r.at] == SLOT_ABSENT) {
                r.at++;
                frame[j] = came[j] = (stc_value){.tag = STC_T_INVALID};
            } else {
                came[j] = val_retain(frame[j] = rd_val(&r, wf));
            }
        if ((rc = r.rc)) break;
        s->cx.item = (long long)(first + i);
        s->cx.thread = job.thread;
        s->cx.stack_base = 0;
        bool ran = false;
        int src = stc__flow_item_steps(&job, &s->cx, (int)stage, frame, flags, &ran);
        nran += ran;
        if (src) {
            stc__eval_oom(&s->cx, pl->smap->u.call.callee_loc); /* records nothing when the step did */
            serve_error(s, &items, (long long)(first + i));
            failed = true;
        } else {
            stc__buf_putc(&items, 0);
            stc__buf_put(&items, (const char *)flags, (size_t)nflags);
            for (size_t j = ncaps; !rc && j < nslots; j++)
                if (same_value(frame[j], came[j])) stc__buf_putc(&items, REPLY_SAME);
                else rc = stc__val_wire_encode(&items, frame[j], wf);
        }
        release_n(frame + ncaps, (size_t)(nslots - ncaps));
        release_n(came + ncaps, (size_t)(nslots - ncaps));
        for (size_t j = ncaps; j < nslots; j++) frame[j] = came[j] = stc_value_unit();
    }
    if (frame) release_n(frame, (size_t)nslots);
    if (came) release_n(came + (ncaps < nslots ? ncaps : 0), (size_t)(ncaps < nslots ? nslots - ncaps : 0));
    free(frame);
    free(came);
    free(flags);
    if (!rc && !failed && r.at != len) rc = STC_EINVAL;
    if (!rc) {
        stc__buf_put(&out, "STCa", 4);
        stc__val_wire_put_uvarint(&out, (uint64_t)nran);
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
    return 0;
}
