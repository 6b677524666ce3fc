/* serve.c - the other ranks' end of libstc_mpi (include/stc_mpi.h): they
 * answer rank 0's batches until it says stop, then may send it a report.
 * Every wait polls with short sleeps rather than MPI's blocking calls,
 * which spin a core at 100% (beside rank 0 on a shared machine). */
#include <limits.h>
#include <stdlib.h>

#include "mpi_session.h"

/* A serving rank polls: 20 us after a batch, doubling up to 100 us while
 * none comes (1 ms made an owned serial stage wait up to 1 ms a batch:
 * comp_write at -np 2 124-134 ms -> 111-119). */
#define SERVE_NAP_MIN_NS 20000
#define SERVE_NAP_MAX_NS 100000

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
    for (;;) {
        void *buf = NULL, *rep = NULL;
        size_t len = 0, replen = 0;
        int tag = MPI_ANY_TAG;
        int rc = stc__mpi_recv(m, 0, &tag, &buf, &len, SERVE_NAP_MAX_NS, "waiting for a batch");
        if (rc) return rc;
        if (tag == 0) { /* stop */
            free(buf);
            return 0;
        }
        /* A refused request (or any, without a server) gets an empty
         * reply: rank 0 runs that batch itself. */
        if (!server || stc_remote_server_handle(server, buf, len, &rep, &replen) != 0 || replen > INT_MAX) {
            free(rep);
            rep = NULL;
            replen = 0;
        }
        free(buf);
        rc = stc__mpi_send(m, rep, replen, 0, tag, "sending a batch back");
        free(rep);
        if (rc) return rc;
    }
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
