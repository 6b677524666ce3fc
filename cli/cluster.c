/* cluster.c - `stc run --mpi` over MPI (cli/cluster.h).
 *
 * Rank 0 reads the program and sends its text to every rank (so the other
 * hosts need not see the file), every rank compiles it, rank 0 runs it and
 * prints, handing libstc a remote executor (stc_remote) over the other
 * ranks, which answer its batches of replicated stages meanwhile; then
 * every rank ends with rank 0's exit code.  The transport (the remote
 * executor, the serving loop, the stop and the ranks' reports) is
 * libstc_mpi's (include/stc_mpi.h, src/mpi/), the one a C host uses too;
 * this file joins the job, shares the program and the exit code, and
 * prints what the ranks did.  Waits never block in MPI (its blocking
 * calls poll a core at 100%, which on a shared machine would slow rank 0
 * down): they poll with short sleeps (docs/DESIGN.md 7c).
 *
 * MPI_THREAD_MULTIPLE is asked for; during the run rank 0's pool workers
 * call MPI, one at a time; libstc knows nothing of MPI. */
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

void cli_cluster_stop_servers(bool stats, bool profile, const char *trace, bool ran)
{
    (void)stats, (void)profile, (void)trace, (void)ran;
}

#else

#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <time.h>
#include <unistd.h>

#include "stc_mpi.h"

/* This process's rank, where its fault messages go (the real standard
 * error, kept when ranks other than 0 are silenced), and its end of the
 * transport (libstc_mpi, opened over MPI_COMM_WORLD).  Set once by
 * cli_cluster_init on the main thread. */
static int mpi_rank, mpi_size;
static int mpi_err_fd = 2;
static stc_mpi *mpi_session;

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

/* A rank that fails ends the whole job: its message, then MPI_Abort, which
 * makes mpirun stop every rank (and say which one aborted) rather than
 * leave the others waiting for it. */
static int mpi_fail(int code, const char *what, int mpi_rc)
{
    mpi_fault(code, what, mpi_rc);
    MPI_Abort(MPI_COMM_WORLD, code);
    return code; /* not reached */
}

int cli_cluster_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
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
    /* STC_MPI_LOCAL=1 keeps every stage on rank 0; STC_MPI_SERIAL_NS is
     * the placement rule of serial stages (stc_remote: unset or 0 the
     * cost model, N > 0 ns an item, -1 always: the tests). */
    const char *local = getenv("STC_MPI_LOCAL"), *serial = getenv("STC_MPI_SERIAL_NS");
    stc_mpi_opts o = {.fault_fd = mpi_err_fd, .local = local && !strcmp(local, "1"),
                      .serial_min_ns = serial ? strtoll(serial, NULL, 10) : 0};
    if ((rc = stc_mpi_open(MPI_COMM_WORLD, &o, &mpi_session)) != 0) {
        dprintf(mpi_err_fd, "stc: rank %d: cannot open the transport: %s\n", mpi_rank, stc_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OSERR);
        return CLI_EXIT_OSERR;
    }
    return 0;
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
    stc_mpi_close(mpi_session);
    mpi_session = NULL;
    MPI_Finalize();
    return code;
}

/* ---- Remote stages: libstc_mpi (src/mpi/) carries them -------------------- */

static bool remote_given; /* cli_cluster_remote gave rank 0's run the other ranks */

const struct stc_remote *cli_cluster_remote(void)
{
    const stc_remote *r = mpi_session ? stc_mpi_remote(mpi_session) : NULL;
    remote_given = remote_given || r;
    return r;
}

int cli_cluster_remote_slots(void) { return STC_MPI_CREDITS * (mpi_size - 1); }

/* The clocks of --trace: every rank's CLOCK_MONOTONIC when they all left
 * one barrier (clock_t0), and rank 0's when its run started (run_t0); the
 * serving ranks' spans count from their clock_t0 (main thread only). */
static long long clock_t0, run_t0;
static bool run_marked;

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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
    int rc = stc_mpi_serve(mpi_session, server);
    if (rc == 0 && report) { /* out of memory: an empty report */
        size_t len = 0;
        char *text = server ? cli_ranks_encode(server, (unsigned long long)clock_t0, &len) : NULL;
        rc = stc_mpi_send_report(mpi_session, text, text ? len : 0);
        free(text);
    }
    stc_remote_server_free(server);
    return rc ? CLI_EXIT_OSERR : 0;
}

/* Rank 0: the serving ranks' reports, after stop (rr[1..mpi_size-1]). */
static void stop_reports(cli_rank_report *rr)
{
    for (int r = 1; r < mpi_size; r++) {
        void *text = NULL;
        size_t len = 0;
        int rc = stc_mpi_take_report(mpi_session, r, &text, &len);
        if (rc == 0 && len > 0 && cli_ranks_decode(&rr[r], text, len) != 0)
            fprintf(stderr, "stc: rank %d's report is incomplete (out of memory)\n", r);
        free(text);
    }
}

/* --profile: where the batches went and how long they were away. */
static void stop_profile(const cli_rank_report *rr)
{
    long long batches = 0, away = 0;
    for (int r = 1; r < mpi_size; r++) {
        stc_mpi_peer_stats p = stc_mpi_peer(mpi_session, r);
        batches += p.batches, away += p.away_ns;
    }
    fprintf(stderr,
            "\nranks: rank 0 sent %lld batches away (%.3f ms in all from send to reply; its workers ran other "
            "batches meanwhile) and kept %lld for want of a credit (%d per rank)\n",
            batches, (double)away / 1e6, stc_mpi_kept(mpi_session), STC_MPI_CREDITS);
    for (int r = 1; r < mpi_size; r++) {
        stc_mpi_peer_stats p = stc_mpi_peer(mpi_session, r);
        fprintf(stderr, "  rank %d: %lld batches, %.3f ms away\n", r, p.batches, (double)p.away_ns / 1e6);
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

void cli_cluster_stop_servers(bool stats, bool profile, const char *trace, bool ran)
{
    if (stc_mpi_stop(mpi_session) != 0) return; /* (MPI_Abort ended the job) */
    bool report = stats || profile || trace;
    cli_rank_report *rr = report ? calloc((size_t)mpi_size, sizeof *rr) : NULL;
    if (report && !rr) fprintf(stderr, "stc: out of memory for the other ranks' reports\n");
    if (report && rr) stop_reports(rr);
    bool sent = remote_given && ran; /* else (one rank, STC_MPI_LOCAL, no run) no rows */
    if (stats && sent) {
        long long away = 0;
        for (int r = 1; r < mpi_size; r++) away += stc_mpi_peer(mpi_session, r).away_ns;
        fprintf(stderr,
                "stats: rank 0: batches kept for want of a credit %lld (credits %d per rank), "
                "time away %.3f ms\n",
                stc_mpi_kept(mpi_session), STC_MPI_CREDITS, (double)away / 1e6);
    }
    for (int r = 1; stats && sent && r < mpi_size; r++) {
        stc_mpi_peer_stats p = stc_mpi_peer(mpi_session, r);
        fprintf(stderr,
                "stats: rank %d: remote batches %lld, messages %lld, bytes sent %lld, received %lld, "
                "serial-stage batches %lld\n",
                r, p.batches, 2 * p.batches, p.bytes_sent, p.bytes_received, p.serial);
        if (rr) cli_ranks_print_stats(stderr, r, &rr[r]);
    }
    if (profile && sent && rr) stop_profile(rr);
    if (trace && ran && rr) stop_trace(trace, rr);
    for (int r = 1; rr && r < mpi_size; r++) cli_ranks_free(&rr[r]);
    free(rr);
}

#endif
