/* remote_wire.h - what remote.c (which stages may go, the names both ends
 * agree on), remote_send.c (the sending side) and remote_serve.c (the
 * answering side) share: the messages' layout and a reader of them.
 *
 * Request:  "STCq" smap fn nshards stage base_depth first n nslots nflags
 *           ncaps thread+1, then the batch's context: what every batch of
 *           the stage in a job carries alike, "nstates, per state its
 *           thread number and value (the read-only threads the stage
 *           reaches), the captures", as a mode and: FLOW_CTX_INLINE, the
 *           context's bytes (the peer lends the states for that batch
 *           only); FLOW_CTX_REF, its key (16 bytes) and length: the peer
 *           holds it, or answers "STCn" (send the context) and runs
 *           nothing; FLOW_CTX_KEEP, key, length and the bytes, which the
 *           peer checks against the key and keeps for later batches
 *           (content-addressed: a context equal byte for byte is the same
 *           whatever job sends it, so nothing kept can be stale).  Then
 *           per item: dead byte, and for a live item its
 *           flags and the slots (from ncaps on) the stage reads
 *           (stc__flow_stage_reads, owned.c: both ends compute them from
 *           the plan), in slot order; the peer holds the others as
 *           STC_T_INVALID placeholders, which a step writing them replaces.
 * Reply:    "STCa" nran, then per live item of the request: 0, its flags,
 *           then each slot the stage changed as its index - ncaps + 1 and
 *           its value, in increasing order, then 0; or 1 and the item's
 *           error (code, message, line, col, thread+1, item), which ends
 *           the reply; or, in a keyed thread's inner smap shard stage
 *           (shards.c), 2, an element's error (the same fields, then the
 *           element and the error's item), followed by the item's own
 *           part; or 3: the item ended with its error recorded already (a
 *           2 here or in another shard's reply), which ends the reply.
 *           The slots left as they came are not sent (the
 *           sender keeps its own: the input line, on logstats, need not
 *           come back).
 * Owned:    "STCo", a serial stage's batch for the peer that owns it
 *           (owned.c): the STCq header, then nstates and per state its
 *           thread number and value (the stage's first batch carries its
 *           threads' states, later ones none: the peer keeps them), then
 *           its captures (with every batch: no context; () for one the
 *           stage does not read, owned.h flow_capture_sent, as in a
 *           context) and items as STCq; replied to as STCq, but for
 *           the serving thread's CPU time on the batch's items (ns) after
 *           nran: "STCa" nran work ... (owned.c's placement measures the
 *           stage on its peer).  A keyed thread's shard stage's state is
 *           its shard map, named by nthreads + thread x FLOW_MAX_SHARDS +
 *           shard (owned.h) and followed by the thread's init (a new key's
 *           state).
 * Fetch:    "STCf" n thread...: the states go back, "STCs" n (thread,
 *           state)..., and the peer holds them no more (thread: a state's
 *           id, as in STCo).
 * nshards is the runtime's fi->nshards (keyed threads' shard stages
 * depend on the worker count): the server builds its plan with the same,
 * so the stage numbers agree.  Numbers are LEB128 varints, values wire.h's.
 * A request carries the slots the stage reads (and an owned stage's
 * captures) once per batch; a reply only the slots the stage changed (a byte per slot of the
 * frame, each way, cost more than the values on logstats: DESIGN.md 7c). */
#ifndef STC_FLOW_REMOTE_WIRE_H
#define STC_FLOW_REMOTE_WIRE_H

#include <stdint.h>
#include <string.h>

#include "flow/flow_internal.h"
#include "ir/funtable.h"
#include "value/value.h"
#include "value/wire.h"

/* A replicated stage's context (owned.c job_contexts): up to
 * FLOW_CTX_SMALL bytes it goes with every batch (FLOW_CTX_INLINE); a larger
 * one goes to each peer once and is named by its key after (a join against
 * a captured table of a few MB sent with every batch took 18.6 s for 3,000
 * lines at -np 2, against 0.03 s on one machine); a stage whose context is
 * larger than FLOW_REMOTE_CTX_MAX runs here.  A peer keeps at most
 * FLOW_CTX_KEPT contexts of FLOW_CTX_KEPT_BYTES bytes in all, dropping the
 * least recently used (a batch naming a dropped one gets "STCn" and is
 * sent again with the bytes). */
enum { FLOW_CTX_INLINE = 0, FLOW_CTX_REF = 1, FLOW_CTX_KEEP = 2 };
#define FLOW_CTX_SMALL 1024
#define FLOW_REMOTE_CTX_MAX ((size_t)64 << 20)
#define FLOW_CTX_KEPT 8
#define FLOW_CTX_KEPT_BYTES ((size_t)128 << 20)

/* A context's key: two independent 64-bit hashes of its bytes (FNV-1a and
 * a multiply-xorshift), so that two different contexts of a run sharing a
 * key is not a practical concern. */
typedef struct flow_ctx_key {
    uint64_t h[2];
} flow_ctx_key;

static inline flow_ctx_key flow_ctx_key_of(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t a = 0xcbf29ce484222325u, b = 0x9e3779b97f4a7c15u ^ n;
    for (size_t i = 0; i < n; i++) {
        a = (a ^ p[i]) * 0x100000001b3u;
        b = (b ^ p[i]) * 0xff51afd7ed558ccdu;
        b ^= b >> 29;
    }
    return (flow_ctx_key){{a, b}};
}

typedef struct flow_remote_names {
    ir_fun_table ft;
    wire_funcs wf;
    const ir_expr **smaps; /* by number: source order */
    int nsmaps, cap;
    bool oom;
} flow_remote_names;

/* smap node e's number (source order), or -1. */
int stc__flow_remote_smap_number(const struct flow_remote_names *n, const ir_expr *e);
/* The number of the thread called name, or -1 (NULL: none). */
int stc__flow_remote_thread_number(const ir_program *p, const char *name);

/* ---- Reading --------------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    size_t n, at;
    int rc; /* first failure */
} rd;

static inline uint64_t rd_uv(rd *r)
{
    uint64_t x = 0;
    size_t used;
    if (r->rc) return 0;
    if (r->at < r->n && r->p[r->at] < 0x80) return r->p[r->at++]; /* one byte: most numbers */
    if ((r->rc = stc__val_wire_get_uvarint(r->p + r->at, r->n - r->at, &used, &x))) return 0;
    r->at += used;
    return x;
}

static inline const uint8_t *rd_bytes(rd *r, size_t k)
{
    if (r->rc) return NULL;
    if (k > r->n - r->at) {
        r->rc = STC_EINVAL;
        return NULL;
    }
    r->at += k;
    return r->p + r->at - k;
}

static inline stc_value rd_val(rd *r, const wire_funcs *wf)
{
    stc_value v = {.tag = STC_T_UNIT};
    size_t used;
    if (r->rc) return v;
    if (r->at < r->n && r->p[r->at] <= WIRE_TRUE) { /* unit (most slots of a request) and bools: no call */
        int k = r->p[r->at++];
        if (k == 0) r->rc = STC_EINVAL; /* no kind */
        else if (k != WIRE_UNIT) v = (stc_value){.tag = STC_T_BOOL, .as.b = k == WIRE_TRUE};
        return v;
    }
    if ((r->rc = stc__val_wire_decode(r->p + r->at, r->n - r->at, &used, &v, wf))) return (stc_value){.tag = STC_T_UNIT};
    r->at += used;
    return v;
}

static inline void release_n(stc_value *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) val_release(v[i]);
}

#endif
