/* stc.c - the `stc` command: compile and run STCLang programs.
 * Uses only the public API (include/stc.h).  See `stc --help` and
 * docs/LANGUAGE.md for the output formats and exit codes.
 *
 * The command's modules, each using only those after it:
 *   stc.c     main: the command line, the program file, dispatch
 *   graph.c   stc graph
 *   run.c     stc run: the one run path and the one --verify path
 *   stream.c  a run's input lines, result lines and progress line
 *   input.c   input lines read from files and pipes
 *   output.c  standard output written with write(2), its errors
 *   cluster.c stc run --mpi: the ranks of an MPI job (over libstc_mpi)
 *   ranks.c   what the other ranks did: their --stats, --profile, --trace
 *   report.c  messages and exit codes for failures
 *   args.c    argv into a cli_args, the exit codes */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "graph.h"
#include "cluster.h"
#include "output.h"
#include "report.h"
#include "run.h"

/* The largest program file stc reads; a bigger one is refused unread. */
#define CLI_MAX_PROGRAM ((size_t)64 << 20)

static const char cli_help[] =
    "usage: stc run [--json] [--workers N] [--reference] [--verify] [--stats]\n"
    "               [--profile] [--trace OUT.json] [--queue-capacity N]\n"
    "               [--input IN]... [--quiet] [--no-states] [--mpi] FILE.stc\n"
    "       stc check FILE.stc\n"
    "       stc graph [--threads | --ranks K] [--workers N] [--svg OUT.svg] FILE.stc\n"
    "       stc help | --help\n"
    "       stc --version\n"
    "\n"
    "Commands:\n"
    "  run     compile FILE and run its main\n"
    "  check   compile FILE only; prints nothing and exits 0 when it compiles\n"
    "  graph   print the compiled dataflow graph as Graphviz DOT: every smap as\n"
    "          its pipeline of stages (serial, replicated, split, fused)\n"
    "  FILE '-' reads the program from standard input; a stream program's\n"
    "  input lines must then come from --input FILE.  A program file may\n"
    "  have up to 64 MiB.\n"
    "\n"
    "Options of run:\n"
    "  --json              print the result as one JSON line:\n"
    "                      {\"result\": V, \"states\": {\"NAME\": V, ...}}\n"
    "  --workers N         worker threads, 1..4096 (default: the number of online CPUs)\n"
    "  --reference         run the sequential reference evaluator\n"
    "  --verify            run the reference evaluator and the runtime, compare their\n"
    "                      output; exit 70 and show the first line that differs\n"
    "  --stats             after the run, print on stderr what the parallel runtime\n"
    "                      did: workers, smaps run as pipelines or left sequential,\n"
    "                      items, peak items in flight and their bound, tuple tasks\n"
    "  --profile           after the run, print on stderr a table per pipeline stage\n"
    "                      (items, busy time, share, time per item, waits), the\n"
    "                      bottleneck, and the predicted speedup on 1..64 workers\n"
    "  --trace OUT.json    write a Chrome trace-event file (Perfetto, chrome://tracing):\n"
    "                      one track per worker, a slice per stage activation\n"
    "  --queue-capacity N  items per batch between stages at most, N >= 1\n"
    "                      (default: $STC_QUEUE_CAPACITY, else the library's default)\n"
    "  --input IN          a stream program's input (default: standard input); given\n"
    "                      several times, the inputs are merged and each line\n"
    "                      arrives as (INDEX, LINE), INDEX counting --input from 0.\n"
    "                      Lines lose their \\n or \\r\\n; one may have up to 256 MiB\n"
    "  --quiet             no progress line (shown on stderr when it is a terminal)\n"
    "  --no-states         leave the final states out: no NAME = VALUE lines; with\n"
    "                      --json no \"states\" member (a stream: no states line)\n"
    "  --mpi               run as one rank of an MPI job: mpirun -q -np K stc run --mpi ...\n"
    "                      runs the program once for all K ranks; rank 0 reads the\n"
    "                      program and the input and prints; output and exit code are\n"
    "                      those of stc run; the other ranks run the replicated\n"
    "                      stages that call no thread (docs/CLUSTER.md).  Exit 64\n"
    "                      in a build without MPI\n"
    "\n"
    "Options of graph:\n"
    "  --threads           the threads as edges between their input and output types\n"
    "  --ranks K           label each stage with the ranks of 'mpirun -np K stc run\n"
    "                      --mpi' that may run it (docs/CLUSTER.md)\n"
    "  --workers N         draw a keyed thread's shards as a run at N workers has\n"
    "                      them (N shards, at most 8; none at 1 worker); without it\n"
    "                      two stand for them, labelled 1/S and S/S\n"
    "  --svg OUT.svg       render with Graphviz's dot (apt-get install graphviz);\n"
    "                      '-' writes the SVG to standard output\n"
    "\n"
    "Output of run (without --json): the value of main in STCLang syntax on the\n"
    "first line, then one line `NAME = VALUE` per thread with its final state,\n"
    "in declaration order.  Errors go to stderr as FILE:LINE:COL: error: MESSAGE.\n"
    "A stream program, `fun main(lines) = ...`, gets the input's lines as a list\n"
    "of str; when main's value is a list, its items are written one per line as\n"
    "they complete (str items as they are, () items not at all, --json: one JSON\n"
    "value per line), then the final states (--json: one line {\"states\": {...}}).\n"
    "If the output cannot be written, stc says from which item on results are\n"
    "missing (exit 74); a last line without its newline is the start of that item.\n"
    "\n"
    "Exit codes:\n"
    "  0   success\n"
    "  64  bad usage (unknown command or option, missing FILE, bad number)\n"
    "  65  the program does not compile (or is larger than 64 MiB)\n"
    "  66  FILE or an --input cannot be read\n"
    "  69  graph --svg: the dot program is not installed\n"
    "  70  runtime error, or --verify found a difference\n"
    "  71  out of memory or internal error\n"
    "  74  the output could not be written\n"
    "  130 interrupted (SIGINT or SIGTERM during the run)\n"
    "\n"
    "Language reference: docs/LANGUAGE.md\n";

/* Reads the whole file (or stdin for "-") in binary, at most
 * CLI_MAX_PROGRAM bytes.  Returns 0, or an errno value (ENOMEM when memory
 * ran out, EFBIG when the file is larger). */
static int cli_read_file(const char *path, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return errno ? errno : EIO;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    int err = 0;
    for (;;) {
        if (n == cap) {
            if (cap > CLI_MAX_PROGRAM) { err = EFBIG; break; } /* one byte over it was read */
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap > CLI_MAX_PROGRAM) ncap = CLI_MAX_PROGRAM + 1;
            char *nb = realloc(buf, ncap);
            if (!nb) { err = ENOMEM; break; }
            buf = nb;
            cap = ncap;
        }
        errno = 0;
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) err = errno ? errno : EIO;
            break;
        }
    }
    if (!err && n > CLI_MAX_PROGRAM) err = EFBIG;
    if (f != stdin) fclose(f);
    if (err) {
        free(buf);
        return err;
    }
    *data = buf;
    *len = n;
    return 0;
}

/* Reads the program file (cli_read_file); on failure prints why and
 * returns the exit code.  With --mpi, rank 0 reads it and every rank gets
 * rank 0's text (or its failure). */
static int cli_load(const char *path, bool mpi, int rank, char **src, size_t *len)
{
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    int err = 0;
    *src = NULL;
    *len = 0;
    if (rank == 0) err = cli_read_file(path, src, len);
    if (mpi) {
        int code = cli_cluster_share_program(&err, src, len);
        if (code) {
            free(*src);
            *src = NULL;
            return code;
        }
    }
    if (err == ENOMEM) return cli_oom();
    if (err == EFBIG) {
        fprintf(stderr, "%s: error: the program is larger than %zu MiB, the limit\n", name, CLI_MAX_PROGRAM >> 20);
        return CLI_EXIT_DATAERR;
    }
    if (err) {
        fprintf(stderr, "stc: cannot read '%s': %s\n", name, strerror(err));
        return CLI_EXIT_NOINPUT;
    }
    return CLI_EXIT_OK;
}

/* Compiles the program text src (consumed); on failure prints why and
 * returns the exit code. */
static int cli_compile(const char *path, char *src, size_t len, stc_env **env, stc_program **prog)
{
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    *env = stc_env_new();
    if (!*env) {
        free(src);
        return cli_oom();
    }
    stc_diags *diags = NULL;
    /* src may be NULL for an empty file: pass a valid empty string. */
    int rc = stc_compile(*env, src ? src : "", len, name, prog, &diags);
    free(src);
    if (rc == 0) {
        stc_diags_free(diags);
        return CLI_EXIT_OK;
    }
    char *text = stc_diags_format(diags);
    bool shown = text != NULL;
    if (text) fputs(text, stderr);
    free(text);
    stc_diags_free(diags);
    if (rc == STC_ENOMEM) return cli_oom();
    if (rc == STC_ECOMPILE || rc == STC_ELIMIT) {
        if (!shown) fprintf(stderr, "%s: error: the program does not compile\n", name);
        return CLI_EXIT_DATAERR;
    }
    fprintf(stderr, "stc: %s: %s\n", name, stc_strerror(rc));
    return CLI_EXIT_OSERR;
}

static int cli_usage(const char *msg)
{
    fprintf(stderr, "stc: %s\nRun 'stc --help' for usage.\n", msg);
    return CLI_EXIT_USAGE;
}

static int cli_main(int argc, char **argv)
{
    cli_args a;
    char err[512];
    if (cli_parse_args(argc, argv, getenv("STC_QUEUE_CAPACITY"), &a, err, sizeof err) != 0) {
        /* Under mpirun every rank has the same bad argv: rank 0 says it
         * and exits 64, the others end quietly with 0 (mpirun would
         * otherwise stop rank 0 at the first rank exiting non-zero,
         * perhaps before it has said why). */
        for (int i = 1; i < argc; i++)
            if (argv[i] && !strcmp(argv[i], "--mpi") && cli_cluster_env_says_not_rank0()) return CLI_EXIT_OK;
        return cli_usage(err);
    }
    if (a.cmd == CLI_CMD_HELP) return cli_output_text(cli_help);
    if (a.cmd == CLI_CMD_VERSION) return cli_output_text("stc " STC_VERSION_STRING "\n");
    /* The tests' way to a small input line limit (tests/cli/run.sh). */
    const char *max_line = getenv("STC_TEST_MAX_LINE");
    int ml = 0;
    if (max_line && *max_line && cli_parse_int(max_line, 1, 1 << 30, &ml) == 0) a.max_line = (size_t)ml;

    /* --mpi: join the job first; ranks other than 0 print nothing. */
    int rank = 0, size = 1;
    if (a.mpi) {
        int code = cli_cluster_init(&rank, &size);
        if (code) return code;
    }
    stc_env *env = NULL;
    stc_program *prog = NULL;
    /* Start the workers before compiling: a new thread often begins on the
     * creating thread's core, and the kernel needs a few milliseconds to
     * move it; compiling covers that instead of the program's first smap.
     * If the pool cannot be made, the run makes its own. */
    stc_pool *pool = NULL;
    if (a.cmd == CLI_CMD_RUN && !a.reference && !a.verify && rank == 0) {
        long n = a.workers ? a.workers : sysconf(_SC_NPROCESSORS_ONLN);
        if (n > 1) pool = stc_pool_new((int)(n > CLI_MAX_WORKERS ? CLI_MAX_WORKERS : n));
    }
    char *src = NULL;
    size_t len = 0;
    int code = cli_load(a.file, a.mpi, rank, &src, &len);
    if (code == CLI_EXIT_OK) code = cli_compile(a.file, src, len, &env, &prog);
    else free(src);
    if (code == CLI_EXIT_OK && a.cmd == CLI_CMD_GRAPH) code = cli_graph(prog, &a);
    /* With --mpi, rank 0 runs the program and prints; the other ranks
     * answer the batches it sends them (cli/cluster.c). */
    bool serving = a.mpi && code == CLI_EXIT_OK && a.cmd == CLI_CMD_RUN;
    if (serving && a.trace) cli_cluster_clock_mark();
    bool ran = false;
    if (code == CLI_EXIT_OK && a.cmd == CLI_CMD_RUN && rank == 0)
        code = cli_run(prog, &a, pool, a.mpi ? cli_cluster_remote() : NULL, &ran);
    if (serving && rank != 0) code = cli_cluster_serve(prog, a.stats || a.profile || a.trace, a.trace != NULL);
    if (serving && rank == 0) cli_cluster_stop_servers(a.stats, a.profile, a.trace, ran);
    stc_program_free(prog);
    stc_env_free(env);
    stc_pool_free(pool);
    if (a.mpi) code = cli_cluster_finish(code);
    return code;
}

int main(int argc, char **argv)
{
    /* Everything on standard output goes through cli/output.c, which
     * reports a failed write itself, once. */
    return cli_main(argc, argv);
}
