/* ranks.h - what the serving ranks of `stc run --mpi` did, for rank 0 to
 * report (--stats, --profile, --trace; docs/OBSERVE.md, "Across ranks").
 * A serving rank encodes its server's counts and spans as text
 * (cli_ranks_encode), cli/cluster.c carries it to rank 0 at the end of the
 * run, and rank 0 decodes it and prints it, or adds it to the trace file.
 * No MPI here. */
#ifndef STC_CLI_RANKS_H
#define STC_CLI_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "stc.h"

/* Spans a serving rank keeps for --trace (32 bytes each in memory, about
 * 100 in the report): later batches are only counted, and the trace says so. */
#define CLI_RANKS_SPANS_MAX 100000

typedef struct cli_rank_stage {
    char *name, *kind, *smap;
    int line;
    bool serial;
    long long batches, items, bytes_in, bytes_out, busy_ns;
} cli_rank_stage;

typedef struct cli_rank_span {
    size_t stage;
    long long items, start_ns, dur_ns; /* start: since the rank's clock mark */
} cli_rank_span;

typedef struct cli_rank_report {
    bool came;                 /* a report was decoded */
    cli_rank_stage *stages;
    size_t nstages;
    cli_rank_span *spans;
    size_t nspans;
    long long dropped;         /* spans not kept (CLI_RANKS_SPANS_MAX) */
} cli_rank_report;

/* A serving rank's report: s's rows and spans, the spans' times relative
 * to t0_ns (CLOCK_MONOTONIC).  malloc'd text of *len bytes, or NULL. */
char *cli_ranks_encode(const stc_remote_server *s, unsigned long long t0_ns, size_t *len);
/* Rank 0: decodes text[0, len) into rr (zeroed first); 0, or -1 when it
 * is malformed or memory runs out (rr then holds what was read). */
int cli_ranks_decode(cli_rank_report *rr, const char *text, size_t len);
void cli_ranks_free(cli_rank_report *rr);

/* --stats: a line per stage of rank `rank`. */
void cli_ranks_print_stats(FILE *f, int rank, const cli_rank_report *rr);
/* --profile: rank `rank`'s table of busy time per stage. */
void cli_ranks_print_profile(FILE *f, int rank, const cli_rank_report *rr);
/* --trace: adds rr[1..nranks-1]'s spans to rank 0's finished trace file
 * at path, one process (pid rank + 1) per rank, their times shifted back
 * by shift_ns (rank 0's run started that long after its clock mark).
 * 0, or -1 when the file is not a finished trace or cannot be written. */
int cli_ranks_trace(const char *path, const cli_rank_report *rr, int nranks, long long shift_ns);

#endif
