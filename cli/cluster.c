/* cluster.c - `stc run --mpi` over MPI (cli/cluster.h).
 *
 * This first version runs the program on rank 0 only: rank 0 reads the
 * program and sends its text to every rank (so the other hosts need not
 * see the file), every rank compiles it, rank 0 runs it and prints, and
 * every rank then ends with rank 0's exit code.  The other ranks wait
 * without spinning (MPI's blocking calls poll a core at 100%, which on a
 * shared machine would slow rank 0 down).  Placing stages on ranks is the
 * next step (docs/DESIGN.md, "The distributed runtime").
 *
 * MPI is called from the main thread only (MPI_THREAD_FUNNELED); libstc
 * knows nothing of it. */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

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

#else

#include <fcntl.h>
#include <mpi.h>
#include <time.h>
#include <unistd.h>

/* This process's rank, and where its fault messages go (the real standard
 * error, kept when ranks other than 0 are silenced).  Set once by
 * cli_cluster_init on the main thread. */
static int mpi_rank;
static int mpi_err_fd = 2;

bool cli_cluster_built(void) { return true; }

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

int cli_cluster_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return mpi_fault(CLI_EXIT_OSERR, "MPI_Init", rc);
    /* Errors come back as codes, to be reported with the rank, not abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    mpi_rank = *rank;
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

#endif
