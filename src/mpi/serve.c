/* serve.c - the other ranks' end of libstc_mpi (include/stc_mpi.h): they
 * answer rank 0's batches until it says stop, then may send it a report.
 * Every wait polls with short sleeps rather than MPI's blocking calls,
 * which spin a core at 100% (beside rank 0 on a shared machine). */
#include <limits.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "mpi_session.h"

/* A serving rank polls: 20 us after a batch, doubling up to 100 us while
 * none comes (1 ms made an owned serial stage wait up to 1 ms a batch:
 * comp_write at -np 2 124-134 ms -> 111-119).  Its replies go without
 * waiting for their sends (a large one completes only when rank 0 takes
 * it), up to SERVE_SENDS at once, so it goes on with the next batch. */
#define SERVE_NAP_MIN_NS 20000
#define SERVE_NAP_MAX_NS 100000
#define SERVE_SENDS (STC_MPI_CREDITS + 2)

typedef struct serve_sends { /* replies going, oldest first */
    MPI_Request req[SERVE_SENDS];
    void *buf[SERVE_SENDS];
    int head, count;
} serve_sends;

/* Frees the replies whose sends are complete, oldest first; with wait,
 * every one (polling).  0, or STC_EIO after MPI_Abort. */
static int sends_finish(stc_mpi *m, serve_sends *s, bool wait)
{
    while (s->count) {
        int done = 0, rc = MPI_Test(&s->req[s->head], &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return stc__mpi_fail(m, "sending a batch back", rc);
        if (!done) {
            if (!wait) return 0;
            stc__mpi_nap(SERVE_NAP_MIN_NS);
            continue;
        }
        free(s->buf[s->head]);
        s->head = (s->head + 1) % SERVE_SENDS;
        s->count--;
    }
    return 0;
}

/* Sends the reply rep (taken over: freed once sent) to rank 0 without
 * waiting, after the oldest going one when SERVE_SENDS are. */
static int sends_add(stc_mpi *m, serve_sends *s, void *rep, size_t len, int tag)
{
    while (s->count == SERVE_SENDS) {
        int rc = sends_finish(m, s, false);
        if (rc) {
            free(rep);
            return rc;
        }
        if (s->count == SERVE_SENDS) stc__mpi_nap(SERVE_NAP_MIN_NS);
    }
    int k = (s->head + s->count) % SERVE_SENDS;
    int rc = MPI_Isend(len ? rep : "", (int)len, MPI_BYTE, 0, tag, m->comm, &s->req[k]);
    if (rc != MPI_SUCCESS) {
        free(rep);
        return stc__mpi_fail(m, "sending a batch back", rc);
    }
    s->buf[k] = rep;
    s->count++;
    return 0;
}

int stc__mpi_send(stc_mpi *m, const void *buf, size_t len, int to, int tag, const char *what)
{
    if (len > INT_MAX) return STC_ELIMIT;
    MPI_Request req;
    int rc = MPI_Isend(len ? buf : "", (int)len, MPI_BYTE, to, tag, m->comm, &req), done = 0;
    while (rc == MPI_SUCCESS && !done) {
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !done) stc__mpi_nap(SERVE_NAP_MIN_NS);
    }
    return rc == MPI_SUCCESS ? 0 : stc__mpi_fail(m, what, rc);
}

int stc__mpi_recv(stc_mpi *m, int from, int *tag, void **buf, size_t *len, long max_nap_ns, const char *what)
{
    MPI_Message msg;
    MPI_Status st;
    int got = 0, rc, count = 0;
    for (long nap = SERVE_NAP_MIN_NS;; nap = nap * 2 > max_nap_ns ? max_nap_ns : nap * 2) {
        if ((rc = MPI_Improbe(from, *tag, m->comm, &got, &msg, &st)) != MPI_SUCCESS) return stc__mpi_fail(m, what, rc);
        if (got) break;
        stc__mpi_nap(nap);
    }
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (!(*buf = malloc(count > 0 ? (size_t)count : 1))) return stc__mpi_oom(m);
    if ((rc = MPI_Mrecv(*buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return stc__mpi_fail(m, what, rc);
    *len = (size_t)count;
    *tag = st.MPI_TAG;
    return 0;
}

int stc_mpi_serve(stc_mpi *m, stc_remote_server *server)
{
    if (m->rank == 0) return STC_EINVAL;
#ifdef __linux__
    /* Naps as long as asked (the default slack, 50 us, is longer than
     * one), for the serving's time; the host's thread gets its own back. */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
    serve_sends sends = {.count = 0};
    int rc;
    for (;;) {
        void *buf = NULL, *rep = NULL;
        size_t len = 0, replen = 0;
        int tag = MPI_ANY_TAG;
        if ((rc = stc__mpi_recv(m, 0, &tag, &buf, &len, SERVE_NAP_MAX_NS, "waiting for a batch"))) break;
        if (tag == 0) { /* stop */
            free(buf);
            rc = sends_finish(m, &sends, true);
            break;
        }
        /* A refused request (or any, without a server) gets an empty
         * reply: rank 0 runs that batch itself. */
        if (!server || stc_remote_server_handle(server, buf, len, &rep, &replen) != 0 || replen > INT_MAX) {
            free(rep);
            rep = NULL;
            replen = 0;
        }
        free(buf);
        if ((rc = sends_add(m, &sends, rep, replen, tag)) || (rc = sends_finish(m, &sends, false))) break;
    }
#ifdef __linux__
    if (slack > 0) prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
#endif
    return rc;
}

int stc_mpi_send_report(stc_mpi *m, const void *data, size_t len)
{
    if (m->rank == 0) return STC_EINVAL;
    return stc__mpi_send(m, data, data ? len : 0, 0, STC__MPI_REPORT_TAG, "sending the rank's report");
}

int stc_mpi_take_report(stc_mpi *m, int rank, void **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (m->rank != 0 || rank < 1 || rank >= m->size) return STC_EINVAL;
    int tag = STC__MPI_REPORT_TAG;
    void *buf = NULL;
    size_t n = 0;
    int rc = stc__mpi_recv(m, rank, &tag, &buf, &n, SERVE_NAP_MAX_NS, "waiting for a rank's report");
    if (rc) return rc;
    if (n == 0) free(buf);
    else *data = buf, *len = n;
    return 0;
}
