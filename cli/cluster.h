/* cluster.h - `stc run --mpi`: one program on the K ranks of an MPI job
 * (docs/CLUSTER.md, docs/DESIGN.md "The distributed runtime").  Built
 * with MPI only when CMake found it (STC_HAVE_MPI); otherwise every call
 * but cli_cluster_built says so and --mpi is a usage error. */
#ifndef STC_CLI_CLUSTER_H
#define STC_CLI_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this stc was built with MPI. */
bool cli_cluster_built(void);

/* Whether this process joined an MPI job (cli_cluster_init): then its
 * standard output is written in blocks even on a terminal (cli/output.c),
 * since mpirun hands every rank a pseudo-terminal, and a write per line,
 * each relayed by mpirun, made a million-line output 2.5x slower. */
bool cli_cluster_output_blocks(void);

/* Whether the environment says this process is a rank other than 0 of an
 * MPI job (Open MPI's OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, PMI_RANK):
 * before MPI starts, such a rank keeps quiet about a bad command line,
 * which rank 0 reports for all.  Needs no MPI. */
bool cli_cluster_env_says_not_rank0(void);

/* Joins the MPI job: *rank and *size are set.  On every rank but 0,
 * standard output and standard error then go to /dev/null (rank 0 alone
 * prints; a rank's fault messages still reach the real standard error).
 * Returns 0, or the exit code (64 without MPI, 71 when MPI cannot start)
 * after printing why. */
int cli_cluster_init(int *rank, int *size);

/* The program text, as rank 0 read it: rank 0 passes its read's errno
 * (0: data and len hold the text) and every rank returns with rank 0's
 * errno and, when it is 0, its own copy of the text in data and len
 * (malloc'd; NULL for an empty text).  Returns 0, or an exit code after
 * printing why (a failed broadcast, out of memory). */
int cli_cluster_share_program(int *err, char **data, size_t *len);

struct stc_remote;
struct stc_program;

/* Rank 0's remote executor over the other ranks (include/stc.h,
 * stc_remote), or NULL: one rank, no MPI threading support, or
 * STC_MPI_LOCAL=1 in the environment (every stage stays on rank 0). */
const struct stc_remote *cli_cluster_remote(void);

/* How many batches the other ranks can hold at once (credits x ranks). */
int cli_cluster_remote_slots(void);

/* Ranks other than 0: answers rank 0's batches with prog (NULL when it
 * did not compile: then no batch comes) until rank 0 says stop; then, with
 * report (rank 0 asked for --stats, --profile or --trace), sends rank 0
 * what it answered (cli/ranks.h), with trace its spans too.  Returns 0,
 * or an exit code after a fault (then MPI_Abort has ended the job). */
int cli_cluster_serve(struct stc_program *prog, bool report, bool trace);

/* --trace, on every rank before the run or the serving: a barrier, then
 * each rank notes its own clock; the ranks' spans are placed on rank 0's
 * time line from there, so clocks of several hosts agree only as well as
 * the barrier's end does on each (docs/OBSERVE.md). */
void cli_cluster_clock_mark(void);

/* Rank 0, just before its run starts (its trace counts from there). */
void cli_cluster_run_starts(void);

/* Rank 0, after its run: tells the serving ranks to stop (call it when
 * they serve, i.e. when the program compiled); with --stats prints per
 * rank what it sent there and each stage's counts there, with --profile
 * the ranks' busy time per stage, and with --trace (the trace file's
 * path) adds their spans to rank 0's trace, a process per rank.  ran
 * false (a usage or input error stopped rank 0 before its run): the
 * ranks' reports are taken (they send them) but nothing is printed, as a
 * run that never started prints no stats. */
void cli_cluster_stop_servers(bool stats, bool profile, const char *trace, bool ran);

/* Ends the job: rank 0 tells every rank its exit code `code`; the others
 * wait for it (sleeping, not spinning) and take it.  Then MPI ends.
 * Returns the exit code this process should end with: rank 0's. */
int cli_cluster_finish(int code);

#endif
