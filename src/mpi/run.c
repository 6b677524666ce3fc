/* run.c - stc_mpi_run: a program on every rank of a host's MPI job
 * (include/stc_mpi.h): rank 0 runs it with the other ranks as its remote
 * executor, they serve, and every rank returns rank 0's code. */
#include <stdlib.h>

#include "mpi_session.h"

/* Rank 0's code to every rank, polling (MPI_Ibcast + MPI_Test with naps). */
static int share_code(stc_mpi *m, int *code)
{
    MPI_Request req;
    int rc = MPI_Ibcast(code, 1, MPI_INT, 0, m->comm, &req), done = 0;
    while (rc == MPI_SUCCESS && !done) {
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !done) stc__mpi_nap(100000);
    }
    return rc == MPI_SUCCESS ? 0 : stc__mpi_fail(m, "sharing rank 0's return code", rc);
}

int stc_mpi_run_stream(stc_program *prog, const stc_run_opts *opts, const stc_stream *io, MPI_Comm comm,
                       stc_result **out)
{
    if (out) *out = NULL;
    stc_mpi *m = NULL;
    int rc = stc_mpi_open(comm, NULL, &m);
    if (rc) return rc;
    if (m->rank == 0) {
        stc_run_opts o = {0};
        if (opts) o = *opts;
        o.remote = stc_mpi_remote(m);
        rc = io ? stc_run_stream(prog, &o, io, out) : stc_run(prog, &o, out);
        int stopped = stc_mpi_stop(m);
        if (!rc) rc = stopped;
    } else {
        /* Without a server (out of memory, or no program) every batch is
         * refused and runs on rank 0: the result is the same. */
        stc_remote_server *server = prog ? stc_remote_server_new(prog) : NULL;
        rc = stc_mpi_serve(m, server);
        stc_remote_server_free(server);
    }
    int shared = share_code(m, &rc);
    stc_mpi_close(m);
    return shared ? shared : rc;
}

int stc_mpi_run(stc_program *prog, const stc_run_opts *opts, MPI_Comm comm, stc_result **out)
{
    return stc_mpi_run_stream(prog, opts, NULL, comm, out);
}
