/* owned.h - serial stages owned by another process, shared by owned.c
 * (placement, the states' trips) and remote_send.c (the batches' trips). */
#ifndef STC_FLOW_OWNED_H
#define STC_FLOW_OWNED_H

#include <stdatomic.h>

#include "flow/job.h"
#include "util/buf.h"

/* One serial stage a peer may own during a job.  Every field but the
 * thread list and the peer's figures is used only by the worker holding
 * the stage's turn (the scheduler's lock orders one holder before the
 * next), and by main after the run.  The peer's figures are added as
 * its replies come, by the transport's thread (atomic). */
typedef struct flow_owned_stage {
    int stage;
    int peer;            /* the peer that owns it now; -1: here */
    int want;            /* the peer it goes to (round robin at job start); >= peers: here */
    bool decided;        /* placed: here for the rest of the job, or at peer */
    bool moved;          /* its states went with a batch and must come back */
    bool kept;           /* here from the start: an earlier job found it cheap */
    signed char verdict; /* the model's: 1 dear (stays at its peer), -1 cheap (came back), 0 none */
    int nthreads;
    int *threads;        /* the threads it reaches (their states travel) */
    /* Measured on its peer: the work its replies report (ns), over how
     * many items and batches (batches that ran no item are not counted). */
    atomic_ullong peer_ns;
    atomic_llong peer_items;
    atomic_int peer_batches;
    long long fed;       /* > 0: its work counted as fed ns an item, on the peer and here
                            (run_testing_opts.owned_item_ns) */
    int shard_map;       /* a keyed thread's shard stage: the job's shard map that
                            travels as its one thread's state (else -1) */
    int shard;           /* and its shard */
    /* Measured here (kept stages: whether it has become dear). */
    uint64_t ns;
    long long items;
    int batches;
} flow_owned_stage;

/* What a request or a context carries for capture j of the job's closure:
 * the capture, or () when the stage does not read it (reads: the stage's
 * row of slots read, stc__flow_stage_reads; NULL: all), so a table the
 * mapped function captures for one stage does not travel with the others'
 * batches (an owned serial stage's went with every batch: 500 KB each for
 * a 20,000-path table).  The peer's frames hold () there, never read. */
static inline stc_value flow_capture_sent(const flow_job *job, const uint8_t *reads, int j)
{
    return reads && !reads[j] ? stc_value_unit() : job->caps[j];
}

typedef struct flow_owned {
    int n;
    flow_owned_stage *st;
    signed char at[64];     /* stage -> index in st, or -1 */
    struct eval_tstate *states; /* main's */
} flow_owned;

/* Sends req to peer with stc_remote.start_to and waits for the reply
 * (malloc'd in *rep): 0 or the transport's code. */
int stc__flow_owned_call(flow_runtime *rt, int peer, const buf *req, void **rep, size_t *replen);
/* Brings stage o's states back from its peer into main's states (cx: a
 * context for errors); then o runs here.  0, or an error recorded in cx. */
int stc__flow_owned_recall(flow_job *job, eval_ctx *cx, flow_owned_stage *o, bool report);
/* Marks in set (pl->nslots bytes, zeroed) the frame slots stage `stage`
 * may read: what its requests carry (both ends compute it from the plan). */
void stc__flow_stage_reads(const flow_plan *pl, int stage, uint8_t *set);
/* Whether stage o's batch at its turn goes to its peer (the cost model):
 * a stage whose turn is a peer goes from its first batch and is measured
 * there; once its peer's figures are in, it stays there or, false, it is
 * brought back (the caller recalls its states) and runs here for the job. */
bool stc__flow_owned_goes(flow_job *job, flow_owned_stage *o);
/* A reply of o's peer came: ns of work it reported over nran items (the
 * transport's thread, as the reply comes; the testing aid's figures
 * replace ns). */
void stc__flow_owned_measured(flow_owned_stage *o, uint64_t ns, int nran);

/* ---- Keyed threads' shard stages owned by a peer ----
 * A state on the wire (STCo, STCf, STCs) is named by an id: a thread's
 * number, or for shard j of keyed thread t, nthreads + t x FLOW_MAX_SHARDS
 * + j (whose value is the shard map, followed in STCo by the thread's
 * init, a new key's state). */
static inline uint64_t stc__flow_owned_id(const flow_job *job, const flow_owned_stage *o, int i)
{
    return o->shard_map < 0 ? (uint64_t)o->threads[i]
                            : (uint64_t)job->rt->p->nthreads + (uint64_t)o->threads[0] * FLOW_MAX_SHARDS + (uint64_t)o->shard;
}
/* Where state i of stage o is on this side: main's states, or the job's
 * shard map. */
static inline stc_value *stc__flow_owned_value(flow_job *job, const flow_owned_stage *o, int i)
{
    return o->shard_map < 0 ? &job->owned->states[o->threads[i]].value : &job->shard_maps[o->shard_map];
}
/* Brings the job's shard maps that peers hold back (before the merge,
 * shards.c): 0, or the first recall's error (recorded in cx). */
int stc__flow_owned_shards_back(flow_job *job, eval_ctx *cx);

#endif
