/* args.h - the `stc` command line: parsing argv into a cli_args. */
#ifndef STC_CLI_ARGS_H
#define STC_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "stc.h"

/* Exit codes (sysexits.h values; see docs/LANGUAGE.md "Exit codes"). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_USAGE = 64,    /* bad command line */
    CLI_EXIT_DATAERR = 65,  /* the program does not compile */
    CLI_EXIT_NOINPUT = 66,  /* the file cannot be read */
    CLI_EXIT_SOFTWARE = 70, /* runtime error, or --verify mismatch */
    CLI_EXIT_OSERR = 71,    /* out of memory or internal error */
    CLI_EXIT_UNAVAILABLE = 69, /* a program stc needs (dot) is not installed */
    CLI_EXIT_IOERR = 74,    /* the output could not be written */
    CLI_EXIT_INTERRUPTED = 130 /* SIGINT/SIGTERM cancelled the run (128 + SIGINT) */
};

#define CLI_MAX_WORKERS STC_MAX_WORKERS
#define CLI_MAX_QUEUE_CAPACITY (1 << 24)
#define CLI_MAX_INPUTS 64

typedef enum cli_cmd {
    CLI_CMD_RUN,
    CLI_CMD_CHECK,
    CLI_CMD_GRAPH,
    CLI_CMD_HELP,
    CLI_CMD_VERSION
} cli_cmd;

typedef struct cli_args {
    cli_cmd cmd;
    bool json;
    bool reference;
    bool verify;
    bool stats;         /* print what the parallel runtime did, on stderr */
    bool profile;       /* run: print the per-stage profile and predictions */
    const char *trace;  /* run: write a Chrome trace-event file here */
    bool threads;       /* graph: the thread/type multigraph */
    int ranks;          /* graph: > 0, say which ranks of stc run --mpi run each stage */
    const char *svg;    /* graph: render with dot into this file */
    int workers;        /* 0: the library default (online CPUs) */
    int queue_capacity; /* 0: the library default */
    const char *file;   /* "-" for standard input */
    const char *inputs[CLI_MAX_INPUTS]; /* run: --input files of a stream program ("-": stdin) */
    int ninputs;
    bool quiet;         /* run: no progress line */
    bool mpi;           /* run: one program on the ranks of an MPI job (cli/cluster.h) */
    bool no_states;     /* run: leave the final states out of the output */
    size_t max_line;    /* run: input line limit in bytes; 0: CLI_MAX_LINE.  Set
                           only by the tests, through $STC_TEST_MAX_LINE */
} cli_args;

/* Parses argv (argv[0] is skipped). env_queue_capacity is the value of
 * STC_QUEUE_CAPACITY or NULL; --queue-capacity overrides it.  Returns 0, or
 * -1 with a one-line reason (no "stc: " prefix, no newline) in err. */
int cli_parse_args(int argc, char **argv, const char *env_queue_capacity, cli_args *out,
                   char *err, size_t errlen);

/* Parses a decimal number in [min, max]: digits only, no sign, no spaces.
 * Returns 0 and stores it, or -1. */
int cli_parse_int(const char *s, long min, long max, int *out);

#endif
