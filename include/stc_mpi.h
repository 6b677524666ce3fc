/* stc_mpi.h - an stc program on every rank of a C host's MPI job
 * (libstc_mpi; docs/CLUSTER.md, "Embedding").
 *
 * libstc knows nothing of MPI (its remote executor, stc_remote in stc.h,
 * is transport-neutral); libstc_mpi is that executor over MPI, the one the
 * `stc run --mpi` command uses too.  A host links it with MPI:
 *
 *   mpicc host.c $(pkg-config --cflags --libs stc_mpi) -o host
 *   find_package(stc COMPONENTS mpi) ... target_link_libraries(host stc::stc_mpi)
 *
 * The host owns MPI: it calls MPI_Init_thread (asking for
 * MPI_THREAD_MULTIPLE or MPI_THREAD_SERIALIZED: with less every stage
 * stays on rank 0) and MPI_Finalize, and chooses the communicator.  Every
 * rank registers the same C threads and compiles the same program text,
 * then calls stc_mpi_run with the same communicator: rank 0 runs the
 * program (its C threads, its serial stages, its I/O) and hands batches
 * of replicated stages to the other ranks, which answer them until rank 0
 * is done.  Stages that call a C thread always run on rank 0.
 *
 * Errors are negative codes (stc_strerror).  A failing MPI call during a
 * run (a dead peer, a broken link), or memory running out where a batch
 * can no longer be refused, is not an error a run can recover from (a
 * peer may hold an owned stage's state): the rank says so on its fault
 * descriptor ("stc: rank R: WHAT failed: REASON") and ends the job with
 * MPI_Abort (code 71), as a dead rank would. */
#ifndef STC_MPI_H
#define STC_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>
#include <stc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The run on every rank ---------------------------------------------- */

/* Collective over comm: every rank calls it with its own compile of the
 * same program.  Rank 0 runs prog as stc_run does (opts as there; a
 * remote in opts is replaced by the other ranks), and *out is its result.
 * Every other rank answers rank 0's batches with its prog until rank 0's
 * run is over; its *out is NULL.  Every rank returns rank 0's return code,
 * so a host may end every rank alike; on rank 0 a failed run's *out holds
 * the error as stc_run's does.  A rank whose prog is NULL (it did not
 * compile there) refuses every batch: rank 0 then runs them itself. */
int stc_mpi_run(stc_program *prog, const stc_run_opts *opts, MPI_Comm comm, stc_result **out);
/* The same with a stream (stc_run_stream): io is used on rank 0 only. */
int stc_mpi_run_stream(stc_program *prog, const stc_run_opts *opts, const stc_stream *io, MPI_Comm comm,
                       stc_result **out);

/* ---- The session underneath (what `stc run --mpi` uses) ------------------ */

/* One rank's end of the transport over a communicator (a duplicate of the
 * host's, so its messages never meet the host's own). */
typedef struct stc_mpi stc_mpi;

#define STC_MPI_CREDITS 3 /* batches away at one serving rank at most (docs/DESIGN.md 7c) */

typedef struct stc_mpi_opts {
    int fault_fd;           /* where a failing MPI call is said; 0: standard error (2) */
    bool local;             /* keep every stage on rank 0 (stc_mpi_remote gives NULL) */
    long long serial_min_ns; /* stc_remote.serial_min_ns: 0 the cost model (measured on the peer) */
} stc_mpi_opts;

/* Collective: opens the session over a duplicate of comm (opts may be
 * NULL).  0, STC_EINVAL (MPI not initialised, comm null), STC_ENOMEM or
 * STC_EIO (duplicating comm failed). */
int stc_mpi_open(MPI_Comm comm, const stc_mpi_opts *opts, stc_mpi **out);
/* Collective: ends the session (on rank 0 after stc_mpi_stop). */
void stc_mpi_close(stc_mpi *m);
int stc_mpi_rank(const stc_mpi *m);
int stc_mpi_size(const stc_mpi *m);

/* Rank 0: the remote executor over the other ranks for stc_run_opts.remote,
 * valid until stc_mpi_stop; NULL on other ranks, with one rank, with
 * opts.local, or without MPI threading support.  Its transport thread
 * starts here. */
const stc_remote *stc_mpi_remote(stc_mpi *m);
/* Rank 0, once its runs are over: tells every other rank to stop serving
 * (the transport thread ends first).  0, or STC_EINVAL on another rank. */
int stc_mpi_stop(stc_mpi *m);

/* Every other rank: answers rank 0's batches with server (NULL: refuses
 * them, and rank 0 runs them) until rank 0 stops.  The caller keeps the
 * server, e.g. to read its counts (stc_remote_server_stage).  It waits by
 * polling with short sleeps (MPI's blocking calls spin a core), with the
 * calling thread's timer slack at 1 us while it serves (Linux; the
 * thread's own is put back).  0, or STC_EINVAL on rank 0. */
int stc_mpi_serve(stc_mpi *m, stc_remote_server *server);

/* After the stop, a serving rank may send rank 0 one report of its own
 * (the stc command's per-stage counts and spans), and rank 0 takes each
 * rank's with stc_mpi_take_report (*data malloc'd; an empty report is NULL
 * and 0); both sides must agree to exchange them.  0, or STC_EINVAL (the
 * wrong rank), STC_ELIMIT (over 2 GiB). */
int stc_mpi_send_report(stc_mpi *m, const void *data, size_t len);
int stc_mpi_take_report(stc_mpi *m, int rank, void **data, size_t *len);

/* Rank 0: what went to a serving rank (1..size-1) so far; zeros otherwise. */
typedef struct stc_mpi_peer_stats {
    long long batches;        /* answered batches (requests and replies: 2 messages each) */
    long long bytes_sent, bytes_received;
    long long serial;         /* of batches: serial stages' the rank owned */
    long long away_ns;        /* the batches' time from send to reply, summed */
} stc_mpi_peer_stats;
stc_mpi_peer_stats stc_mpi_peer(const stc_mpi *m, int rank);
/* Rank 0: batches that found every credit in use and ran on rank 0. */
long long stc_mpi_kept(const stc_mpi *m);

#ifdef __cplusplus
}
#endif

#endif
