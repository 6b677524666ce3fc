/* mpi_session.h - one rank's end of libstc_mpi's transport (include/stc_mpi.h):
 * the state transport.c (rank 0's remote executor) and serve.c (the other
 * ranks' answers, the reports) share.  Built only with MPI, never into
 * libstc (docs/DESIGN.md 7c). */
#ifndef STC_MPI_SESSION_H
#define STC_MPI_SESSION_H

#include <pthread.h>

#include "stc_mpi.h"

/* Tags on the session's communicator: 1..STC_MPI_CREDITS a replicated
 * stage's batch in that credit slot, then a serial stage's, then a report;
 * 0 from rank 0 says stop. */
#define STC__MPI_SERIAL_TAG (STC_MPI_CREDITS + 1)
#define STC__MPI_REPORT_TAG (STC__MPI_SERIAL_TAG + 1)
#define STC__MPI_EXIT_OSERR 71 /* MPI_Abort's code, sysexits' EX_OSERR, as `stc` exits */

typedef void stc__mpi_done_fn(void *token, int rc, void *reply, size_t reply_len);

typedef struct stc__mpi_away { /* a request away (lock) */
    bool used, sent; /* sent: MPI_Test said its send is complete */
    MPI_Request sreq;
    size_t len;
    long long t0; /* when it went (stc__mpi_now) */
    stc__mpi_done_fn *done;
    void *token;
} stc__mpi_away;

typedef struct stc__mpi_peer {
    int away;                            /* replicated batches there now */
    stc__mpi_away slot[STC_MPI_CREDITS];
    /* Requests of serial stages this rank owns (start_to): no credits (the
     * run's tokens bound them), answered in the order sent, so replies pop
     * the ring's head. */
    stc__mpi_away *fifo;
    int fhead, fcount, fcap;
    /* When its next reply is due (transport.c, mpi_loop): the last
     * reply's look, and the moving average of its service time, 0 before
     * the first. */
    long long last_reply_ns, service_ns;
    stc_mpi_peer_stats st;
} stc__mpi_peer;

struct stc_mpi {
    MPI_Comm comm;      /* the host's, duplicated */
    int rank, size;
    int fault_fd;
    bool threads_ok;    /* MPI may be called from any thread, one at a time */
    bool local;
    stc_remote remote;  /* rank 0's executor; ud is this session */
    /* Rank 0's transport (every MPI call during a run holds lock). */
    pthread_mutex_t lock;
    pthread_cond_t work; /* a request went whose reply is due before wake_at, or stop (CLOCK_MONOTONIC) */
    long long wake_at;   /* the transport thread's next look while it waits (LLONG_MAX: for work), else 0 */
    stc__mpi_peer *peers; /* [size], rank 0's unused */
    int nawait;          /* requests away, all ranks */
    long long kept;      /* batches kept on rank 0 for want of a credit */
    bool stop;
    bool thread_on;      /* the calling thread's only */
    pthread_t thread;
};

/* A failing MPI call: "stc: rank R: WHAT failed: REASON" on the fault
 * descriptor, then MPI_Abort; returns STC_EIO (not reached). */
int stc__mpi_fail(stc_mpi *m, const char *what, int mpi_rc);
/* Out of memory where no batch can be refused: said, then MPI_Abort. */
int stc__mpi_oom(stc_mpi *m);
long long stc__mpi_now(void); /* CLOCK_MONOTONIC, ns */
void stc__mpi_nap(long ns);
/* Sends buf to rank `to` and waits for the send by polling (Open MPI's
 * blocking calls spin a core); 0 or STC_EIO after MPI_Abort. */
int stc__mpi_send(stc_mpi *m, const void *buf, size_t len, int to, int tag, const char *what);
/* Receives the next message from `from` with tag (MPI_ANY_TAG: any),
 * polling with naps up to max_nap_ns: *buf malloc'd (*len bytes; at least
 * 1 allocated), *tag the message's.  0, or STC_EIO after MPI_Abort. */
int stc__mpi_recv(stc_mpi *m, int from, int *tag, void **buf, size_t *len, long max_nap_ns, const char *what);

#endif
