/* job.h - one smap run on the pipeline, shared by the files that run it:
 * exec.c (the job, its source and release), steps.c (its stages: a plan's
 * steps over a batch's items) and profiling.c (their counters). */
#ifndef STC_FLOW_JOB_H
#define STC_FLOW_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "flow/flow_internal.h"
#include "sched/sched.h"

/* The runtime's thresholds in measured time (batch size, fused item by
 * item or stage by stage) are multiplied by this.  1 but to measure under
 * callgrind, which runs code ~40x slower: a build with
 * -DFLOW_TIME_SCALE=40 cuts the batches a real run cuts (docs/DESIGN.md
 * section 5). */
#ifndef FLOW_TIME_SCALE
#define FLOW_TIME_SCALE 1
#endif

/* A batch of items (sched_batch.data), in one block: see flow_batch_get. */
typedef struct flow_batch {
    size_t first;       /* list index of item 0 */
    size_t cap;         /* items the block has room for (n <= cap) */
    struct flow_batch *next_spare; /* in flow_job.spare */
    int n;
    int nloaded;        /* frames 0 .. nloaded-1 filled (the rest hold nothing to release) */
    bool loaded;        /* frames of every live item filled (by stage 0) */
    bool direct;        /* run by flow_direct_items: no frame used, a list's results
                           already in the result list, a stream's in its result slot */
    bool ctx_retried;   /* at a remote stage: asked for its context once, sent again
                           without it (remote_send.c); a second ask sends it */
    bool timed;         /* the pipeline times its stage activations (busy_ns): the
                           first batches and one in FLOW_TIME_EVERY (exec.c) */
    uint64_t busy_ns;   /* stage time spent on it (timed, or fused) */
    struct flow_away *away; /* while at a remote stage asynchronously: its request
                               and, once back, the reply (remote.c; set by the
                               worker before it is away, the reply by the
                               transport before stc__sched_resume) */
    stc_value *in;      /* streams: per item, the input until stage 0 loads it */
    uint8_t *dead;      /* per item: failed, or after a failure */
    uint8_t *flags;     /* per item: plan->nflags branch flags */
    stc_value *slots;   /* per item: plan->nslots */
} flow_batch;

/* One smap run. The fields above the line are read-only during the run. */
typedef struct flow_job {
    flow_runtime *rt;         /* first: stc__flow_on_worker finds the runtime there */
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
    stc_value fnv;            /* the function mapped (borrowed), unit when a thread is */
    int map_thread;           /* the thread mapped, or -1 */
    bool direct_ok;           /* fused batches outside a trial and without --profile or
                                 --trace may run each item as the evaluator's call of the
                                 function (steps.c flow_direct_items): no keyed shards */
    bool plain;               /* its workers count plainly: what two of them can reach
                                 at once is marked (exec.c flow_counts_plain) */
    const uint64_t *plain_writes; /* plain: per stage, the threads (bit t) whose states
                                     it may write, marked after each of its activations */
    bool fused;               /* one worker runs every stage of a batch in turn, on the
                                 calling thread, without the scheduler (exec.c); at 2+
                                 workers only until the trial says the pipeline gains */
    /* Trial (2+ workers, exec.c): while non-NULL the job runs fused, stage
     * by stage, and each stage's busy CPU ns (flow_cpu_ns) is added here (nstages + 2 cells:
     * FLOW_OUTPUT_STAGE and FLOW_INPUT_STAGE last); the calling thread's
     * alone.  NULL: no trial (1 worker, or between windows). */
    uint64_t *trial_ns;
    uint64_t *trial_cells;    /* what trial_ns points to during a window (NULL: 1 worker) */
    int trials;               /* trial windows closed (the testing aid refuses the first few) */
    /* Per stage s (< 64): bit t says branch stage t is decided after s
     * (decided_at[t] == s), so flow_mark_skips looks at those alone. */
    uint64_t *decides;
    uint64_t deciding; /* bit s: decides[s] is not 0 */
    /* Branch stages a batch may skip (sched_batch.skip): for stage t,
     * decided_at[t] is the stage after which it is known whether any item
     * of a batch needs it (-1: always needed), and its guard flags are
     * skip_flags[skip_first[t] .. skip_first[t + 1]). */
    int *decided_at, *skip_first, *skip_flags;
    /* With skip_narrow (every such flag < 64), the same as bit sets: per
     * branch stage t (< 64) its guard flags (skip_bits[t]), and per stage s
     * the flags of every stage decided after s (decided_bits[s]), so a
     * batch's marks take one look at each live item's flags of decided_bits
     * (flow_mark_skips).  They point into the decides block. */
    uint64_t *skip_bits, *decided_bits;
    uint64_t *needed_by; /* per flag f < 64: the branch stages t with f in skip_bits[t] */
    bool skip_narrow;
    /* The keyed threads' shard maps (plan->nshard_maps; shards.c): map m is
     * owned by the one serial stage whose FS_KEYED step runs on it. */
    stc_value *shard_maps;
    struct eval_tstate *wstates; /* per worker: a copy of main's states for shard steps */
    /* Stages a remote executor may run (remote.c, owned.c): the plan's
     * remote_ok, and remote_owned when its transport has peers; 0 without
     * one.  owned: the serial stages a peer may own (NULL: none), each
     * record used by the worker holding that stage's turn. */
    uint64_t remote_mask;
    struct flow_owned *owned;
    /* Per stage of remote_mask (nstages x nslots, owned.c): 1 where the
     * stage reads the frame slot, so its requests send only those (the
     * others go as "absent"); NULL: every slot goes. */
    uint8_t *remote_reads;
    /* Per stage of remote_mask that is not owned (nstages; NULL: none): its
     * requests' context, encoded once at the job's start: the states of the
     * read-only threads the stage reaches and the captures ("n (thread,
     * state)... captures", remote_wire.h), and its key (remote_ctx_key,
     * for contexts over FLOW_CTX_SMALL bytes); a stage whose context cannot
     * travel or exceeds FLOW_REMOTE_CTX_MAX bytes is left out of
     * remote_mask (owned.c). */
    struct buf *remote_ctx;
    struct flow_ctx_key *remote_ctx_key;
    /* ---- The fields below change during the run: on cache lines of
     * their own, since those above are read at every item by every
     * worker and the source and release write these at every batch. */
    _Alignas(64) size_t next; /* next item to hand out (the source is serial) */
    bool src_end, src_failed; /* streams: the source ended / failed (the source's) */
    atomic_uint_fast64_t ns_per_item; /* atomic: cost estimate, 0 = unknown */
    atomic_llong live;        /* atomic: items in batches not yet released */
    atomic_llong peak;        /* atomic */
    /* The probe (exec.c FLOW_PROBE_WINDOW_NS): whether the pipeline is
     * timed for one (a trial sent it there, its items not coarse), from
     * which item on; its windows: when the current one began, the items
     * finished by then, windows so far, the best one's wall ns per item.
     * The source's alone (its turn passes under the pool's mutex) but for
     * probing and probe_at, set before the pipeline starts. */
    bool probing;
    size_t probe_at;
    uint64_t window_t0;
    long long window_done0;
    int windows;
    double pipe_item_ns;
    bool probe;               /* the source ended the pipeline for the probe */
    int probes;               /* probes so far (the testing aid alternates their verdicts) */
    /* Bit t: a peer asked for stage t's context ("STCn", remote_wire.h), so
     * its requests carry the bytes until one that did is answered (atomic). */
    atomic_uint_fast64_t ctx_asked;
    /* Requests that carried a context to keep and were answered (atomic):
     * a batch asked for its context goes again without it when one was
     * answered since it left (the peer likely holds it now). */
    atomic_uint_fast64_t ctx_kept;
    pthread_mutex_t err_lock;
    long long err_index;      /* earliest failing item, -1 (err_lock) */
    long long err_sub;        /* and element of its inner smap, LLONG_MAX: none (err_lock) */
    /* Released batch blocks, for the source to reuse: one block per token
     * at most, so a stream's memory does not creep as glibc places blocks
     * of ever-changing sizes (the batch size adapts) among the values. */
    pthread_mutex_t spare_lock;
    flow_batch *spare;        /* (spare_lock) */
    eval_err err;             /* its error (err_lock) */
} flow_job;

/* stc_value_unit() without the call (frames are filled with it per item). */
static inline stc_value flow_unit(void) { return (stc_value){.tag = STC_T_UNIT}; }

static inline uint64_t flow_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time: a trial's stage times (exec.c) leave out
 * the time the thread was preempted, which on a loaded machine would make
 * one stage or the items look dear. */
static inline uint64_t flow_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Adds the CPU time since c0 (a flow_cpu_ns reading) to the trial's cell
 * for stage, less what the two readings themselves cost (a stage of a few
 * cheap items is timed over fewer ns than a system call takes). */
static inline void flow_trial_add(flow_job *job, int stage, uint64_t c0)
{
    uint64_t d = flow_cpu_ns() - c0, cost = job->rt->cpu_clock_ns;
    job->trial_ns[stage] += d > cost ? d - cost : 0;
}

/* Splits the keyed threads' maps (main's states, cx) into the job's shard
 * maps before the run, and merges them back after it (shards.c). */
int stc__flow_shards_split(flow_job *job, eval_ctx *cx);
/* Whether an smap of n items (SIZE_MAX: a stream) is worth the split and
 * the merge of its keyed threads' maps: their keys are few beside n. */
bool stc__flow_shards_worth(const flow_plan *pl, const eval_ctx *cx, size_t n);
int stc__flow_shards_merge(flow_job *job, eval_ctx *cx);

/* A step's return value: the item failed and the job has its error. */
#define FLOW_RECORDED 3

/* An inner smap's temporaries in the item's frame from its FS_IKEYED
 * step's src (shards.c): its list, function, shards, results, bound. */
#define FLOW_SHARD_TEMPS 5
/* Encodes the inner list of FS_IKEYED step s's item (slots) for a peer
 * running s's shard: that shard's elements, the others as unit (they are
 * the other shards' to read; remote_send.c).  0, or the encoder's code. */
struct wire_funcs;
int stc__flow_ikeyed_put_list(const flow_step *s, const stc_value *slots, struct buf *out,
                              const struct wire_funcs *wf);

/* The shard steps (shards.c; flow_step kinds FS_KEYED, FS_ISHARD, FS_IKEYED). */
int stc__flow_keyed_run(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *slots);
int stc__flow_ishard_run(flow_job *job, eval_ctx *cx, const flow_step *s, eval_frame *fr, stc_value *slots,
                         uint8_t *flags);
int stc__flow_ikeyed_run(flow_job *job, eval_ctx *cx, const flow_step *s, stc_value *slots);

/* Keeps the error in cx (taken) as the job's if (index, sub) is the
 * earliest failing so far: sub orders the elements of an item's inner smap
 * run by shards (exec.c). */
void stc__flow_record_error_at(flow_job *job, eval_ctx *cx, long long index, long long sub);

/* Keeps the error in cx (taken: cx is ready for the next item) as the
 * job's if item index is the earliest failing so far (exec.c). */
void stc__flow_record_error(flow_job *job, eval_ctx *cx, long long index);

/* The pipeline's stage function (sched_pipeline.run; steps.c): stage
 * `stage` of the plan over batch sb, or a stream's output stage
 * (FLOW_OUTPUT_STAGE). */
sched_status stc__flow_stage_run(void *ud, int stage, sched_batch *sb, int worker);

/* One worker (job->fused): batch sb through every stage of the plan and a
 * stream's output stage, on worker's context: cheap items one by one
 * through the function's whole body (or the plan's steps), dear ones
 * stage by stage, and stage by stage when profiling, tracing or in a
 * trial (each stage's activation measured as in the pipeline).
 * SCHED_STOP when an item failed, its error recorded (steps.c). */
sched_status stc__flow_fused_run(flow_job *job, sched_batch *sb, int worker);

/* Loads the frames of the batch's live items (stage 0 does it as it goes;
 * a remote stage needs them first): SCHED_STOP after an item failed, its
 * error recorded (steps.c). */
sched_status stc__flow_load_batch(flow_job *job, eval_ctx *cx, flow_batch *b);

/* Runs stage `stage`'s steps on one loaded item frame; *ran: any step ran.
 * 0 or the failing step's code, its error in cx (steps.c). */
int stc__flow_item_steps(flow_job *job, eval_ctx *cx, int stage, stc_value *slots, uint8_t *flags, bool *ran);

/* Offers stage `stage` of batch sb to the runtime's remote executor
 * (remote_send.c): true when it ran there (or failed there: *status, *nran,
 * and in *wait_ns the time spent waiting for the reply), false when the
 * stage must run here (not remote, or the batch could not go or come back:
 * the batch is then as it was, its frames loaded). */
/* With an asynchronous transport (stc_remote.start) *status may be
 * SCHED_AWAY: the batch went and stage_run must return at once; when it
 * comes back the stage runs again and this adopts the reply. */
bool stc__flow_remote_stage(flow_job *job, eval_ctx *cx, int stage, sched_batch *sb, sched_status *status, int *nran,
                            uint64_t *wait_ns);

/* Serial stages owned by another process (owned.c).  Before a job's run
 * (main's context cx): sets job->remote_mask and, when the transport has
 * peers, job->owned.  After it: the owned stages' thread states back into
 * main's states, and job->owned freed; 0, or an error recorded in cx (a
 * peer that did not give them back). */
void stc__flow_owned_job_start(flow_job *job, eval_ctx *cx);
int stc__flow_owned_job_end(flow_job *job, eval_ctx *cx);
/* Stage `stage` ran here on a batch (ns of work, nran items; job->owned
 * set, the stage's turn held): the placement measures a stage kept here by
 * an earlier job's verdict, to try it on a peer again if it has become
 * dear (a stage is otherwise measured on its peer, owned.c). */
void stc__flow_owned_note(flow_job *job, int stage, uint64_t ns, int nran);

/* Accounts an activation of stage (FLOW_OUTPUT_STAGE and FLOW_INPUT_STAGE
 * included) by worker from t0 to t1, over nran items of batch seq, in the
 * profile and the trace; job->prof is set (profiling.c). */
void stc__flow_prof_note(flow_job *job, int stage, const char *name, int worker, uint64_t t0, uint64_t t1, int nran,
                    uint64_t seq);

/* Marks the states of the threads in `threads` (bit t) VAL_SHARED
 * (value.h): a plain job's serial stage marks those it writes after each
 * activation, before the next batch's turn lets another worker read them
 * (exec.c).  Only this stage writes them: no other worker changes them
 * meanwhile. */
void stc__flow_mark_states(const eval_ctx *cx, uint64_t threads);

#endif
