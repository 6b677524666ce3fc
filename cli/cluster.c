/* cluster.c - `stc run --mpi` over MPI (cli/cluster.h).
 *
 * Rank 0 reads the program and sends its text to every rank (so the other
 * hosts need not see the file), every rank compiles it, rank 0 runs it and
 * prints, handing libstc a remote executor (stc_remote) over the other
 * ranks, which answer its batches of replicated stages meanwhile; then
 * every rank ends with rank 0's exit code.  Waits never block in MPI
 * (its blocking calls poll a core at 100%, which on a shared machine
 * would slow rank 0 down): they poll with short sleeps (docs/DESIGN.md,
 * "The distributed runtime").
 *
 * MPI_THREAD_MULTIPLE is asked for; during the run rank 0's pool workers
 * call MPI, one at a time (remote_lock); libstc knows nothing of MPI. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_setaffinity: undoing mpirun's default binding */
#endif
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ranks.h"

bool cli_cluster_env_says_not_rank0(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return strcmp(v, "0") != 0;
    }
    return false;
}

#ifndef STC_HAVE_MPI

bool cli_cluster_built(void) { return false; }

bool cli_cluster_output_blocks(void) { return false; }

int cli_cluster_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    fputs("stc: --mpi: this stc was built without MPI (install libopenmpi-dev and "
          "openmpi-bin, then build with cmake -DSTC_MPI=ON; see docs/CLUSTER.md)\n"
          "Run 'stc --help' for usage.\n",
          stderr);
    return CLI_EXIT_USAGE;
}

int cli_cluster_share_program(int *err, char **data, size_t *len)
{
    (void)err, (void)data, (void)len;
    return CLI_EXIT_USAGE;
}

int cli_cluster_finish(int code) { return code; }

const struct stc_remote *cli_cluster_remote(void) { return NULL; }

int cli_cluster_remote_slots(void) { return 0; }

int cli_cluster_serve(struct stc_program *prog, bool report, bool trace)
{
    (void)prog, (void)report, (void)trace;
    return CLI_EXIT_USAGE;
}

void cli_cluster_clock_mark(void) {}

void cli_cluster_run_starts(void) {}

void cli_cluster_stop_servers(bool stats, bool profile, const char *trace) { (void)stats, (void)profile, (void)trace; }

#else

#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "stc.h"

/* This process's rank, and where its fault messages go (the real standard
 * error, kept when ranks other than 0 are silenced).  Set once by
 * cli_cluster_init on the main thread. */
static int mpi_rank, mpi_size;
static int mpi_err_fd = 2;
static bool mpi_threads_ok; /* MPI may be called from any thread, one at a time */

bool cli_cluster_built(void) { return true; }

/* Set by cli_cluster_init (main thread, before any output). */
static bool mpi_joined;

bool cli_cluster_output_blocks(void) { return mpi_joined; }

/* A fault message on the real standard error, naming the rank. */
static int mpi_fault(int code, const char *what, int mpi_rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(mpi_rc, text, &n) != MPI_SUCCESS) n = 0;
    text[n] = '\0';
    dprintf(mpi_err_fd, "stc: rank %d: %s failed: %s\n", mpi_rank, what, n ? text : "MPI error");
    return code;
}

/* mpirun binds each rank to one core by default when there are at most
 * two ranks (Open MPI 4.1): then every worker of the rank, and its
 * transport thread, would share that core (-np 1 --workers 2 ran at one
 * core's speed).  A rank runs many threads, so unless the user chose a
 * binding or mapping, the rank may use every core. */
static void mpi_unbind(void)
{
#ifdef __linux__
    const char *bound = getenv("OMPI_MCA_orte_bound_at_launch");
    if (!bound || strcmp(bound, "1") != 0 || getenv("OMPI_MCA_hwloc_base_binding_policy") ||
        getenv("OMPI_MCA_rmaps_base_mapping_policy"))
        return;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long i = 0; i < n && i < CPU_SETSIZE; i++) CPU_SET((int)i, &all);
    (void)sched_setaffinity(0, sizeof all, &all); /* a cpuset keeps what it allows */
#endif
}

int cli_cluster_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    mpi_threads_ok = provided >= MPI_THREAD_SERIALIZED;
    if (rc != MPI_SUCCESS) return mpi_fault(CLI_EXIT_OSERR, "MPI_Init", rc);
    /* Errors come back as codes, to be reported with the rank, not abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    mpi_rank = *rank;
    mpi_size = *size;
    mpi_joined = true;
    mpi_unbind();
    if (*rank != 0) {
        int keep = dup(2), null = open("/dev/null", O_WRONLY);
        if (keep >= 0) mpi_err_fd = keep;
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
            close(null);
        }
    }
    return 0;
}

/* A rank that fails ends the whole job: its message, then MPI_Abort, which
 * makes mpirun stop every rank (and say which one aborted) rather than
 * leave the others waiting for it. */
static int mpi_fail(int code, const char *what, int mpi_rc)
{
    mpi_fault(code, what, mpi_rc);
    MPI_Abort(MPI_COMM_WORLD, code);
    return code; /* not reached */
}

/* The tests' way to a failing broadcast (tests/mpi/run.sh): the rank
 * named by STC_TEST_MPI_FAIL fails its first one. */
static bool mpi_test_fail(void)
{
    static bool done;
    const char *v = getenv("STC_TEST_MPI_FAIL");
    if (done || !v || !*v || atoi(v) != mpi_rank) return false;
    return done = true;
}

/* A broadcast from rank 0 that the other ranks wait for by polling every
 * millisecond rather than MPI's busy wait. */
static int mpi_bcast(void *p, int count, MPI_Datatype type, const char *what)
{
    MPI_Request req;
    int rc = mpi_test_fail() ? MPI_ERR_OTHER : MPI_Ibcast(p, count, type, 0, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) return mpi_fail(CLI_EXIT_OSERR, what, rc);
    for (;;) {
        int done = 0;
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return mpi_fail(CLI_EXIT_OSERR, what, rc);
        if (done) return 0;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

int cli_cluster_share_program(int *err, char **data, size_t *len)
{
    /* {errno, length}: the length fits 64 bits (the program is at most 64 MiB). */
    long long head[2] = {*err, *err ? 0 : (long long)*len};
    int code = mpi_bcast(head, 2, MPI_LONG_LONG, mpi_rank ? "receiving the program's size" : "sending the program's size");
    if (code) return code;
    *err = (int)head[0];
    if (*err || head[1] == 0) return 0;
    if (mpi_rank != 0) {
        *len = (size_t)head[1];
        if (!(*data = malloc(*len))) {
            dprintf(mpi_err_fd, "stc: rank %d: out of memory\n", mpi_rank);
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OSERR);
            return CLI_EXIT_OSERR;
        }
    }
    return mpi_bcast(*data, (int)head[1], MPI_CHAR, mpi_rank ? "receiving the program" : "sending the program");
}

int cli_cluster_finish(int code)
{
    int shared = code;
    if (mpi_bcast(&shared, 1, MPI_INT, mpi_rank ? "receiving the exit code" : "sending the exit code") == 0)
        code = shared;
    MPI_Finalize();
    return code;
}

/* ---- Remote stages: rank 0 sends batches, the others answer ----------------
 *
 * Rank 0's pool workers hand a batch to remote_start (stc_remote.start)
 * and go on with other work; the transport thread (remote_loop) watches
 * the sends and the replies and gives each reply back to libstc (done),
 * which resumes the batch.  Every MPI call during the run goes through
 * remote_lock (MPI_THREAD_SERIALIZED is enough: Open MPI 4.1 here gives
 * MPI_THREAD_MULTIPLE, but its TCP transport has a lock-order inversion
 * under TSan, tests/mpi/tsan.supp).  Waiting polls with short sleeps that
 * grow while nothing happens, since Open MPI's blocking calls spin.  A
 * request goes to the rank with the fewest batches away, at most
 * REMOTE_CREDITS per rank; with every credit in use it is not taken and
 * the batch runs on rank 0 (so rank 0's workers never wait for a credit),
 * and memory stays bounded for any stream length.  Its tag is its credit
 * slot + 1, unique while it is away, so each reply finds its request; tag
 * 0 from rank 0 says stop. */

#define REMOTE_CREDITS 4 /* batches away per rank at most */
#define SERIAL_TAG (REMOTE_CREDITS + 1) /* the requests of owned serial stages */
#define REPORT_TAG (SERIAL_TAG + 1) /* after stop, a serving rank's report (cli/ranks.h) */
#define REMOTE_NAP_MIN_NS 20000    /* a serving rank polls: 20 us after a batch, */
#define SERVE_NAP_MAX_NS 100000    /* doubling up to 100 us while none comes (1 ms
                                      * made an owned serial stage wait up to 1 ms a
                                      * batch: comp_write at -np 2 124-134 ms -> 111-119) */
/* Rank 0's transport thread polls for replies every 100 us, up to 500 us
 * while none comes: each nap is a system call and a context switch (at 20
 * us they took 8% of rank 0's time on logstats), and a rank holds up to
 * REMOTE_CREDITS batches of ~0.3 ms (src/flow/exec.c), so a later look
 * leaves no rank idle. */
#define REPLY_NAP_MIN_NS 100000
#define REPLY_NAP_MAX_NS 500000

typedef void remote_done_fn(void *token, int rc, void *reply, size_t reply_len);

typedef struct remote_away {      /* a request away (remote_lock) */
    bool used, sent;
    MPI_Request sreq;
    size_t len;
    long long t0;                 /* when it went (mono_ns) */
    remote_done_fn *done;
    void *token;
} remote_away;

typedef struct remote_peer {
    int away;                          /* batches there now (remote_lock) */
    remote_away slot[REMOTE_CREDITS];  /* (remote_lock) */
    /* Requests of serial stages this rank owns (remote_start_to): no
     * credits (the run's tokens bound them), tag SERIAL_TAG, answered in
     * the order sent, so replies pop the ring's head (remote_lock). */
    remote_away *fifo;
    int fhead, fcount, fcap;
    long long batches, sent, received; /* answered batches and their bytes (remote_lock) */
    long long serial;                  /* of batches: serial stages' (remote_lock) */
    long long kept;                    /* batches not sent: every credit in use (remote_lock) */
    long long away_ns;                 /* the answered batches' time from send to reply (remote_lock) */
} remote_peer;

static pthread_mutex_t remote_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t remote_work = PTHREAD_COND_INITIALIZER; /* a request went, or stop */
static remote_peer *remote_peers; /* [mpi_size], rank 0's unused; made by cli_cluster_remote */
static int remote_nawait;         /* requests away, all ranks (remote_lock) */
static long long remote_kept;     /* batches kept on rank 0 for want of a credit (remote_lock) */
static bool remote_stop;          /* (remote_lock) */
static bool remote_thread_on;     /* main thread only */
static pthread_t remote_thread;

static void remote_nap(long ns) { nanosleep(&(struct timespec){0, ns}, NULL); }

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long nap_next(long ns, long max) { return ns * 2 > max ? max : ns * 2; }

static int remote_start(void *ud, const void *req, size_t len, remote_done_fn *done, void *token)
{
    (void)ud;
    if (len > INT_MAX) return STC_ELIMIT; /* runs on rank 0 */
    pthread_mutex_lock(&remote_lock);
    int peer = -1;
    for (int r = 1; r < mpi_size; r++)
        if (remote_peers[r].away < REMOTE_CREDITS && (peer < 0 || remote_peers[r].away < remote_peers[peer].away))
            peer = r;
    if (peer < 0 || remote_stop) {
        remote_kept++;
        pthread_mutex_unlock(&remote_lock);
        return STC_ELIMIT;
    }
    remote_peer *pp = &remote_peers[peer];
    int slot = 0;
    while (pp->slot[slot].used) slot++;
    remote_away *a = &pp->slot[slot];
    int rc = MPI_Isend(req, (int)len, MPI_BYTE, peer, slot + 1, MPI_COMM_WORLD, &a->sreq);
    if (rc != MPI_SUCCESS) mpi_fail(CLI_EXIT_OSERR, "sending a batch", rc);
    *a = (remote_away){.used = true, .sreq = a->sreq, .len = len, .t0 = mono_ns(), .done = done, .token = token};
    pp->away++;
    remote_nawait++;
    pthread_cond_signal(&remote_work);
    pthread_mutex_unlock(&remote_lock);
    return 0;
}

/* stc_remote.start_to: a batch (or a state fetch) of a serial stage that
 * rank peer + 1 owns.  Always taken (libstc cannot run the stage here: its
 * states are there); MPI keeps the order of one sender's messages to one
 * receiver, and the serving rank answers in that order. */
static int remote_start_to(void *ud, int peer, const void *req, size_t len, remote_done_fn *done, void *token)
{
    (void)ud;
    int rank = peer + 1;
    if (len > INT_MAX || rank < 1 || rank >= mpi_size) return STC_ELIMIT;
    pthread_mutex_lock(&remote_lock);
    remote_peer *pp = &remote_peers[rank];
    if (remote_stop) {
        pthread_mutex_unlock(&remote_lock);
        return STC_ELIMIT;
    }
    if (pp->fcount == pp->fcap) { /* grow the ring, unrolled from its head */
        int ncap = pp->fcap ? 2 * pp->fcap : 16;
        remote_away *m = malloc((size_t)ncap * sizeof *m);
        if (!m) {
            pthread_mutex_unlock(&remote_lock);
            return STC_ENOMEM;
        }
        for (int i = 0; i < pp->fcount; i++) m[i] = pp->fifo[(pp->fhead + i) % pp->fcap];
        free(pp->fifo);
        pp->fifo = m, pp->fcap = ncap, pp->fhead = 0;
    }
    remote_away *a = &pp->fifo[(pp->fhead + pp->fcount) % pp->fcap];
    *a = (remote_away){.used = true, .len = len, .t0 = mono_ns(), .done = done, .token = token};
    int rc = MPI_Isend(req, (int)len, MPI_BYTE, rank, SERIAL_TAG, MPI_COMM_WORLD, &a->sreq);
    if (rc != MPI_SUCCESS) mpi_fail(CLI_EXIT_OSERR, "sending a batch of a serial stage", rc);
    pp->fcount++;
    remote_nawait++;
    pthread_cond_signal(&remote_work);
    pthread_mutex_unlock(&remote_lock);
    return 0;
}

/* A reply of a serial stage from rank r, if one came: its request (the
 * ring's head) is done; lock held.  *buf malloc'd. */
static bool serial_reply(int r, remote_done_fn **done, void **token, void **buf, int *count)
{
    remote_peer *pp = &remote_peers[r];
    if (!pp->fcount) return false;
    remote_away *a = &pp->fifo[pp->fhead];
    int got = 0, rc;
    MPI_Message msg;
    MPI_Status st;
    if ((rc = MPI_Improbe(r, SERIAL_TAG, MPI_COMM_WORLD, &got, &msg, &st)) != MPI_SUCCESS)
        mpi_fail(CLI_EXIT_OSERR, "waiting for a batch of a serial stage", rc);
    if (!got) return false;
    MPI_Get_count(&st, MPI_BYTE, count);
    if (!(*buf = malloc(*count > 0 ? (size_t)*count : 1))) {
        dprintf(mpi_err_fd, "stc: rank %d: out of memory\n", mpi_rank);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OSERR);
    }
    if ((rc = MPI_Mrecv(*buf, *count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        mpi_fail(CLI_EXIT_OSERR, "receiving a batch of a serial stage", rc);
    /* its request was received, so its send completes now */
    for (int sent = 0; !sent;) {
        if ((rc = MPI_Test(&a->sreq, &sent, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            mpi_fail(CLI_EXIT_OSERR, "sending a batch of a serial stage", rc);
        if (!sent) remote_nap(REMOTE_NAP_MIN_NS);
    }
    *done = a->done, *token = a->token;
    pp->batches++, pp->serial++;
    pp->sent += (long long)a->len;
    pp->received += *count;
    pp->away_ns += mono_ns() - a->t0;
    *a = (remote_away){0};
    pp->fhead = (pp->fhead + 1) % pp->fcap;
    pp->fcount--;
    remote_nawait--;
    return true;
}

/* The transport thread: until stopped, finds the replies that came and
 * hands them back (outside the lock: done resumes the batch in libstc). */
static void *remote_loop(void *ud)
{
    (void)ud;
    long nap = REPLY_NAP_MIN_NS;
    pthread_mutex_lock(&remote_lock);
    for (;;) {
        while (!remote_stop && remote_nawait == 0) pthread_cond_wait(&remote_work, &remote_lock);
        if (remote_nawait == 0) break; /* stopped, nothing away */
        struct { remote_done_fn *done; void *token; void *buf; int count; } back[REMOTE_CREDITS + 1];
        int nback = 0;
        for (int r = 1; r < mpi_size && !nback; r++)
            if (serial_reply(r, &back[0].done, &back[0].token, &back[0].buf, &back[0].count)) nback = 1;
        for (int r = 1; r < mpi_size && !nback; r++)
            for (int k = 0; k < REMOTE_CREDITS && nback < REMOTE_CREDITS; k++) {
                remote_peer *pp = &remote_peers[r];
                remote_away *a = &pp->slot[k];
                if (!a->used) continue;
                int done = 0, rc;
                if (!a->sent) {
                    if ((rc = MPI_Test(&a->sreq, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                        mpi_fail(CLI_EXIT_OSERR, "sending a batch", rc);
                    if (!(a->sent = done)) continue;
                }
                MPI_Message msg;
                MPI_Status st;
                if ((rc = MPI_Improbe(r, k + 1, MPI_COMM_WORLD, &done, &msg, &st)) != MPI_SUCCESS)
                    mpi_fail(CLI_EXIT_OSERR, "waiting for a batch", rc);
                if (!done) continue;
                int count = 0;
                MPI_Get_count(&st, MPI_BYTE, &count);
                void *buf = malloc(count > 0 ? (size_t)count : 1);
                if (!buf) {
                    dprintf(mpi_err_fd, "stc: rank %d: out of memory\n", mpi_rank);
                    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OSERR);
                }
                if ((rc = MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                    mpi_fail(CLI_EXIT_OSERR, "receiving a batch", rc);
                pp->batches++;
                pp->sent += (long long)a->len;
                pp->received += count;
                pp->away_ns += mono_ns() - a->t0;
                pp->away--;
                remote_nawait--;
                back[nback].done = a->done, back[nback].token = a->token;
                back[nback].buf = buf, back[nback].count = count;
                nback++;
                *a = (remote_away){0};
            }
        pthread_mutex_unlock(&remote_lock);
        /* An empty reply: the rank refused it (the batch runs on rank 0). */
        for (int i = 0; i < nback; i++) back[i].done(back[i].token, 0, back[i].buf, (size_t)back[i].count);
        if (nback) nap = REPLY_NAP_MIN_NS;
        else {
            remote_nap(nap);
            nap = nap_next(nap, REPLY_NAP_MAX_NS);
        }
        pthread_mutex_lock(&remote_lock);
    }
    pthread_mutex_unlock(&remote_lock);
    return NULL;
}

/* stc_remote.call, which libstc uses only without start: start, then wait. */
typedef struct remote_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    int rc;
    void *reply;
    size_t len;
} remote_wait;

static void remote_wait_done(void *token, int rc, void *reply, size_t reply_len)
{
    remote_wait *w = token;
    pthread_mutex_lock(&w->lock);
    w->rc = rc, w->reply = reply, w->len = reply_len, w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static int remote_call(void *ud, const void *req, size_t len, void **reply, size_t *reply_len)
{
    remote_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0, NULL, 0};
    int rc = remote_start(ud, req, len, remote_wait_done, &w);
    if (rc == 0) {
        pthread_mutex_lock(&w.lock);
        while (!w.done) pthread_cond_wait(&w.cond, &w.lock);
        pthread_mutex_unlock(&w.lock);
        *reply = w.reply, *reply_len = w.len, rc = w.rc;
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return rc;
}

static stc_remote remote_mpi = {.call = remote_call, .start = remote_start, .start_to = remote_start_to};

const struct stc_remote *cli_cluster_remote(void)
{
    const char *local = getenv("STC_MPI_LOCAL");
    if (mpi_rank != 0 || mpi_size < 2 || !mpi_threads_ok || (local && !strcmp(local, "1"))) return NULL;
    if (!remote_peers && !(remote_peers = calloc((size_t)mpi_size, sizeof *remote_peers))) return NULL;
    if (!remote_thread_on) {
        if (pthread_create(&remote_thread, NULL, remote_loop, NULL) != 0) return NULL;
        remote_thread_on = true;
    }
    remote_mpi.slots = REMOTE_CREDITS * (mpi_size - 1);
    remote_mpi.peers = mpi_size - 1;
    /* STC_MPI_SERIAL_NS: the placement rule of serial stages (stc_remote:
     * unset or 0 the cost model, N > 0 ns an item, -1 always: the tests). */
    const char *serial = getenv("STC_MPI_SERIAL_NS");
    remote_mpi.serial_min_ns = serial ? strtoll(serial, NULL, 10) : 0;
    return &remote_mpi;
}

int cli_cluster_remote_slots(void) { return REMOTE_CREDITS * (mpi_size - 1); }

/* The clocks of --trace: every rank's CLOCK_MONOTONIC when they all left
 * one barrier (clock_t0), and rank 0's when its run started (run_t0); the
 * serving ranks' spans count from their clock_t0 (main thread only). */
static long long clock_t0, run_t0;
static bool run_marked;

void cli_cluster_clock_mark(void)
{
    int rc = MPI_Barrier(MPI_COMM_WORLD); /* spins, but only until every rank compiled */
    if (rc != MPI_SUCCESS) mpi_fail(CLI_EXIT_OSERR, "waiting for the ranks' clock mark", rc);
    clock_t0 = mono_ns();
}

void cli_cluster_run_starts(void)
{
    if (!mpi_joined || mpi_rank != 0) return;
    run_t0 = mono_ns();
    run_marked = true;
}

/* Sends a serving rank's report to rank 0 (after stop). */
static int serve_report(const stc_remote_server *server)
{
    size_t len = 0;
    char *text = server ? cli_ranks_encode(server, (unsigned long long)clock_t0, &len) : NULL;
    if (!text || len > INT_MAX) len = 0; /* (out of memory: an empty report) */
    MPI_Request req;
    int rc = MPI_Isend(text ? text : "", (int)len, MPI_BYTE, 0, REPORT_TAG, MPI_COMM_WORLD, &req), done = 0;
    while (rc == MPI_SUCCESS && !done) {
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !done) remote_nap(REMOTE_NAP_MIN_NS);
    }
    free(text);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(CLI_EXIT_OSERR, "sending the rank's report", rc);
}

int cli_cluster_serve(struct stc_program *prog, bool report, bool trace)
{
    stc_remote_server *server = prog ? stc_remote_server_new(prog) : NULL;
    if (prog && !server) {
        dprintf(mpi_err_fd, "stc: rank %d: out of memory\n", mpi_rank);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OSERR);
        return CLI_EXIT_OSERR;
    }
    if (trace) { /* STC_TEST_MPI_SPANS: a smaller cap, for the tests */
        const char *cap = getenv("STC_TEST_MPI_SPANS");
        stc_remote_server_record(server, cap && atol(cap) > 0 ? (size_t)atol(cap) : CLI_RANKS_SPANS_MAX);
    }
    void *buf = NULL;
    size_t cap = 0;
    long nap = REMOTE_NAP_MIN_NS;
    for (;;) {
        int done = 0, rc;
        MPI_Message msg;
        MPI_Status st;
        if ((rc = MPI_Improbe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &done, &msg, &st)) != MPI_SUCCESS)
            return mpi_fail(CLI_EXIT_OSERR, "waiting for a batch", rc);
        if (!done) {
            remote_nap(nap);
            nap = nap_next(nap, SERVE_NAP_MAX_NS);
            continue;
        }
        nap = REMOTE_NAP_MIN_NS;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count > cap) {
            free(buf);
            cap = (size_t)count;
            if (!(buf = malloc(cap))) {
                dprintf(mpi_err_fd, "stc: rank %d: out of memory\n", mpi_rank);
                MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OSERR);
            }
        }
        if ((rc = MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return mpi_fail(CLI_EXIT_OSERR, "receiving a batch", rc);
        if (st.MPI_TAG == 0) break; /* stop */
        void *rep = NULL;
        size_t replen = 0;
        /* A refused request (or one that came before the program compiled
         * here) gets an empty reply: rank 0 runs that batch itself. */
        if (!server || stc_remote_server_handle(server, buf, (size_t)count, &rep, &replen) != 0 || replen > INT_MAX) {
            free(rep);
            rep = NULL;
            replen = 0;
        }
        MPI_Request sreq;
        rc = MPI_Isend(rep ? rep : "", (int)replen, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, &sreq);
        for (done = 0; rc == MPI_SUCCESS && !done;) {
            rc = MPI_Test(&sreq, &done, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS && !done) remote_nap(REMOTE_NAP_MIN_NS);
        }
        free(rep);
        if (rc != MPI_SUCCESS) return mpi_fail(CLI_EXIT_OSERR, "sending a batch back", rc);
    }
    free(buf);
    int code = report ? serve_report(server) : 0;
    stc_remote_server_free(server);
    return code;
}

/* Rank 0: the serving ranks' reports, after stop (rr[1..mpi_size-1]). */
static void stop_reports(cli_rank_report *rr)
{
    for (int r = 1; r < mpi_size; r++) {
        MPI_Message msg;
        MPI_Status st;
        int got = 0, rc, count = 0;
        for (long nap = REMOTE_NAP_MIN_NS; !got; nap = nap_next(nap, SERVE_NAP_MAX_NS)) {
            if ((rc = MPI_Improbe(r, REPORT_TAG, MPI_COMM_WORLD, &got, &msg, &st)) != MPI_SUCCESS)
                mpi_fail(CLI_EXIT_OSERR, "waiting for a rank's report", rc);
            if (!got) remote_nap(nap);
        }
        MPI_Get_count(&st, MPI_BYTE, &count);
        char *text = malloc(count > 0 ? (size_t)count : 1);
        if (!text) {
            dprintf(mpi_err_fd, "stc: rank %d: out of memory\n", mpi_rank);
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OSERR);
        }
        if ((rc = MPI_Mrecv(text, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            mpi_fail(CLI_EXIT_OSERR, "receiving a rank's report", rc);
        if (count > 0 && cli_ranks_decode(&rr[r], text, (size_t)count) != 0)
            fprintf(stderr, "stc: rank %d's report is incomplete (out of memory)\n", r);
        free(text);
    }
}

/* --profile: where the batches went and how long they were away. */
static void stop_profile(const cli_rank_report *rr)
{
    long long batches = 0, away = 0;
    for (int r = 1; r < mpi_size; r++) batches += remote_peers[r].batches, away += remote_peers[r].away_ns;
    fprintf(stderr,
            "\nranks: rank 0 sent %lld batches away (%.3f ms in all from send to reply; its workers ran other "
            "batches meanwhile) and kept %lld for want of a credit (%d per rank)\n",
            batches, (double)away / 1e6, remote_kept, REMOTE_CREDITS);
    for (int r = 1; r < mpi_size; r++) {
        fprintf(stderr, "  rank %d: %lld batches, %.3f ms away\n", r, remote_peers[r].batches,
                (double)remote_peers[r].away_ns / 1e6);
    }
    for (int r = 1; r < mpi_size; r++) cli_ranks_print_profile(stderr, r, &rr[r]);
}

/* --trace: the serving ranks' spans into rank 0's trace file. */
static void stop_trace(const char *path, const cli_rank_report *rr)
{
    if (!run_marked) return; /* no run wrote it (--verify, an early failure) */
    if (cli_ranks_trace(path, rr, mpi_size, run_t0 - clock_t0) != 0) {
        fprintf(stderr, "stc: --trace: cannot add the other ranks' spans to '%s'\n", path);
        return;
    }
    for (int r = 1; r < mpi_size; r++)
        if (rr[r].dropped)
            fprintf(stderr, "stc: --trace: rank %d's track has its first %zu batches, not the %lld after (memory bound)\n",
                    r, rr[r].nspans, rr[r].dropped);
}

void cli_cluster_stop_servers(bool stats, bool profile, const char *trace)
{
    if (remote_thread_on) { /* every batch is back: the runs are over */
        pthread_mutex_lock(&remote_lock);
        remote_stop = true;
        pthread_cond_signal(&remote_work);
        pthread_mutex_unlock(&remote_lock);
        pthread_join(remote_thread, NULL);
        remote_thread_on = false;
    }
    for (int r = 1; r < mpi_size; r++) {
        MPI_Request req;
        int rc = MPI_Isend("", 0, MPI_BYTE, r, 0, MPI_COMM_WORLD, &req), done = 0;
        while (rc == MPI_SUCCESS && !done) {
            rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS && !done) remote_nap(REMOTE_NAP_MIN_NS);
        }
        if (rc != MPI_SUCCESS) mpi_fail(CLI_EXIT_OSERR, "stopping the ranks", rc);
    }
    bool report = stats || profile || trace;
    cli_rank_report *rr = report ? calloc((size_t)mpi_size, sizeof *rr) : NULL;
    if (report && !rr) fprintf(stderr, "stc: out of memory for the other ranks' reports\n");
    if (report && rr) stop_reports(rr);
    if (stats && remote_peers) {
        long long away = 0;
        for (int r = 1; r < mpi_size; r++) away += remote_peers[r].away_ns;
        fprintf(stderr,
                "stats: rank 0: batches kept for want of a credit %lld (credits %d per rank), "
                "time away %.3f ms\n",
                remote_kept, REMOTE_CREDITS, (double)away / 1e6);
    }
    for (int r = 1; stats && remote_peers && r < mpi_size; r++) {
        fprintf(stderr,
                "stats: rank %d: remote batches %lld, messages %lld, bytes sent %lld, received %lld, "
                "serial-stage batches %lld\n",
                r, remote_peers[r].batches, 2 * remote_peers[r].batches, remote_peers[r].sent,
                remote_peers[r].received, remote_peers[r].serial);
        if (rr) cli_ranks_print_stats(stderr, r, &rr[r]);
    }
    if (profile && remote_peers && rr) stop_profile(rr);
    if (trace && rr) stop_trace(trace, rr);
    for (int r = 1; rr && r < mpi_size; r++) cli_ranks_free(&rr[r]);
    free(rr);
    for (int r = 1; remote_peers && r < mpi_size; r++) free(remote_peers[r].fifo);
    free(remote_peers);
    remote_peers = NULL;
}

#endif
