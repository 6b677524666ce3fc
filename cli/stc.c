/* stc.c - the `stc` command: compile and run STCLang programs.
 * Uses only the public API (include/stc.h).  See `stc --help` and
 * docs/LANGUAGE.md for the output formats and exit codes. */
#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char cli_help[] =
    "usage: stc run [--json] [--workers N] [--reference] [--verify] [--stats]\n"
    "               [--profile] [--trace OUT.json] [--queue-capacity N]\n"
    "               [--input IN]... [--quiet] FILE.stc\n"
    "       stc check FILE.stc\n"
    "       stc graph [--threads] [--svg OUT.svg] FILE.stc\n"
    "       stc help | --help\n"
    "       stc --version\n"
    "\n"
    "Commands:\n"
    "  run     compile FILE and run its main\n"
    "  check   compile FILE only; prints nothing and exits 0 when it compiles\n"
    "  graph   print the compiled dataflow graph as Graphviz DOT: every smap as\n"
    "          its pipeline of stages (serial, replicated, split, fused)\n"
    "  FILE '-' reads the program from standard input.\n"
    "\n"
    "Options of run:\n"
    "  --json              print the result as one JSON line:\n"
    "                      {\"result\": V, \"states\": {\"NAME\": V, ...}}\n"
    "  --workers N         worker threads, 1..4096 (default: the number of online CPUs)\n"
    "  --reference         run the sequential reference evaluator\n"
    "  --verify            run the reference evaluator and the runtime, compare their\n"
    "                      JSON output; exit 70 and show both if they differ\n"
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
    "                      arrives as (INDEX, LINE), INDEX counting --input from 0\n"
    "  --quiet             no progress line (shown on stderr when it is a terminal)\n"
    "\n"
    "Options of graph:\n"
    "  --threads           the threads as edges between their input and output types\n"
    "  --svg OUT.svg       render with Graphviz's dot (apt-get install graphviz)\n"
    "\n"
    "Output of run (without --json): the value of main in STCLang syntax on the\n"
    "first line, then one line `NAME = VALUE` per thread with its final state,\n"
    "in declaration order.  Errors go to stderr as FILE:LINE:COL: error: MESSAGE.\n"
    "A stream program, `fun main(lines) = ...`, gets the input's lines as a list\n"
    "of str; when main's value is a list, its items are written one per line as\n"
    "they complete (str items as they are, () items not at all, --json: one JSON\n"
    "value per line), then the final states (--json: one line {\"states\": {...}}).\n"
    "\n"
    "Exit codes:\n"
    "  0   success\n"
    "  64  bad usage (unknown command or option, missing FILE, bad number)\n"
    "  65  the program does not compile\n"
    "  66  FILE cannot be read\n"
    "  69  graph --svg: the dot program is not installed\n"
    "  70  runtime error, or --verify found a difference\n"
    "  71  out of memory or internal error\n"
    "  74  the output could not be written\n"
    "  130 interrupted (SIGINT or SIGTERM during the run)\n"
    "\n"
    "Language reference: docs/LANGUAGE.md\n";

/* Reads the whole file (or stdin for "-") in binary. Returns 0, or an errno
 * value (ENOMEM when memory ran out). */
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
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
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
    if (f != stdin) fclose(f);
    if (err) {
        free(buf);
        return err;
    }
    *data = buf;
    *len = n;
    return 0;
}

int cli_oom(void)
{
    fprintf(stderr, "stc: out of memory\n");
    return CLI_EXIT_OSERR;
}

/* Compiles the file; on failure prints why and returns the exit code. */
static int cli_compile(const char *path, stc_env **env, stc_program **prog)
{
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    char *src;
    size_t len;
    int err = cli_read_file(path, &src, &len);
    if (err == ENOMEM) return cli_oom();
    if (err) {
        fprintf(stderr, "stc: cannot read '%s': %s\n", name, strerror(err));
        return CLI_EXIT_NOINPUT;
    }
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

/* Ctrl-C (SIGINT) or SIGTERM during a run cancels it: the workers stop at
 * the next item, everything is freed, and stc exits 130.  The handler
 * needs the flag in a static: the one piece of global state of the
 * program (the library has none). */
static stc_cancel *cli_cancel;

static void cli_on_signal(int sig)
{
    (void)sig;
    stc_cancel_request(cli_cancel);
}

void cli_catch_signals(stc_cancel *c)
{
    cli_cancel = c;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = c ? cli_on_signal : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cli_report_failure(int rc, const stc_result *res)
{
    stc_error_info info = res ? stc_result_error(res) : (stc_error_info){0};
    if (rc == STC_ECANCELED || info.code == STC_ECANCELED) {
        fprintf(stderr, "stc: interrupted\n");
        return CLI_EXIT_INTERRUPTED;
    }
    if (rc == STC_ENOMEM || info.code == STC_ENOMEM) {
        char *text = res && info.message ? stc_result_error_format(res) : NULL;
        if (!text) return cli_oom();
        fprintf(stderr, "%s\n", text);
        free(text);
        return CLI_EXIT_OSERR;
    }
    if (res && info.message) {
        char *text = stc_result_error_format(res);
        if (!text) return cli_oom();
        fprintf(stderr, "%s\n", text);
        free(text);
        return CLI_EXIT_SOFTWARE;
    }
    fprintf(stderr, "stc: run failed: %s\n", stc_strerror(rc));
    return rc == STC_ERUNTIME || rc == STC_ELIMIT ? CLI_EXIT_SOFTWARE : CLI_EXIT_OSERR;
}

int cli_print_failed(void)
{
    if (errno != E2BIG) return cli_oom();
    fprintf(stderr, "stc: the result is too large to print (over 1 GiB of text)\n");
    return CLI_EXIT_SOFTWARE;
}

/* Prints a successful result; returns the exit code. */
static int cli_print_result(const stc_result *res, bool json)
{
    if (json) {
        char *line = stc_result_to_json(res);
        if (!line) return cli_print_failed();
        printf("%s\n", line);
        free(line);
        return CLI_EXIT_OK;
    }
    char *text = stc_value_to_text(stc_result_value(res));
    if (!text) return cli_print_failed();
    printf("%s\n", text);
    free(text);
    for (size_t i = 0; i < stc_result_state_count(res); i++) {
        text = stc_value_to_text(stc_result_state(res, i));
        if (!text) return cli_print_failed();
        const char *name = stc_result_state_name(res, i);
        printf("%s = %s\n", name ? name : "?", text);
        free(text);
    }
    return CLI_EXIT_OK;
}

/* The outcome of a run for --verify: its JSON line or "error: ..." text.
 * NULL when out of memory. */
char *cli_outcome(int rc, const stc_result *res)
{
    if (rc == 0 && res) return stc_result_to_json(res);
    char *err = res && stc_result_error(res).message ? stc_result_error_format(res) : NULL;
    const char *msg = err ? err : stc_strerror(rc);
    size_t n = strlen(msg) + 8;
    char *out = malloc(n);
    if (out) snprintf(out, n, "error: %s", msg);
    free(err);
    return out;
}

static int cli_verify(stc_program *prog, const cli_args *a)
{
    stc_run_opts ref = {.workers = a->workers, .queue_capacity = a->queue_capacity, .reference = true};
    stc_run_opts par = ref;
    par.reference = false;
    stc_result *rres = NULL, *pres = NULL;
    int rrc = stc_run(prog, &ref, &rres);
    int prc = stc_run(prog, &par, &pres);
    char *rtext = cli_outcome(rrc, rres), *ptext = cli_outcome(prc, pres);
    int code;
    if (!rtext || !ptext) {
        code = cli_oom();
    } else if (strcmp(rtext, ptext) != 0) {
        size_t i = 0;
        while (rtext[i] && rtext[i] == ptext[i]) i++;
        fprintf(stderr, "verify: runtime and reference differ\n");
        fprintf(stderr, "reference: %s\nruntime:   %s\n", rtext, ptext);
        fprintf(stderr, "first difference at character %zu\n", i + 1);
        code = CLI_EXIT_SOFTWARE;
    } else if (prc != 0 || !pres) {
        code = cli_report_failure(prc, pres);
    } else {
        code = cli_print_result(pres, a->json);
    }
    free(rtext);
    free(ptext);
    stc_result_free(rres);
    stc_result_free(pres);
    return code;
}

/* stc graph: DOT on stdout, or rendered to SVG by Graphviz's dot. */
static int cli_graph(stc_program *prog, const cli_args *a)
{
    char *dot = stc_program_graph(prog, a->threads ? STC_GRAPH_THREADS : STC_GRAPH_STAGES);
    if (!dot) return cli_oom();
    if (!a->svg) {
        fputs(dot, stdout);
        free(dot);
        return CLI_EXIT_OK;
    }
    /* dot reads the graph on stdin; the output name goes through argv, so
     * no shell ever sees it. */
    int in[2];
    if (pipe(in) != 0) {
        free(dot);
        fprintf(stderr, "stc: graph: %s\n", strerror(errno));
        return CLI_EXIT_OSERR;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        close(in[0]);
        close(in[1]);
        execlp("dot", "dot", "-Tsvg", "-o", a->svg, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    int code = CLI_EXIT_OK;
    if (pid < 0) {
        fprintf(stderr, "stc: graph: %s\n", strerror(errno));
        code = CLI_EXIT_OSERR;
    } else {
        void (*old)(int) = signal(SIGPIPE, SIG_IGN); /* dot missing: write fails, no signal */
        size_t len = strlen(dot), off = 0;
        while (off < len) {
            ssize_t w = write(in[1], dot + off, len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        close(in[1]);
        signal(SIGPIPE, old);
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
            fprintf(stderr, "stc: graph: the 'dot' program is not installed (Debian package graphviz: "
                            "apt-get install graphviz); without --svg, stc graph prints the DOT text\n");
            code = CLI_EXIT_UNAVAILABLE;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "stc: graph: dot failed to write '%s'\n", a->svg);
            code = CLI_EXIT_IOERR;
        }
    }
    if (pid < 0) close(in[1]);
    free(dot);
    return code;
}

void cli_after_run(const stc_result *res, const cli_args *a)
{
    if (a->profile && res) {
        char *table = stc_result_profile_format(res);
        fflush(stdout);
        if (table) fputs(table, stderr);
        else if (a->reference) fputs("stc: --profile measures the parallel runtime, not --reference\n", stderr);
        free(table);
    }
    if (a->stats && res) {
        stc_run_stats st = stc_result_stats(res);
        fflush(stdout);
        fprintf(stderr,
                "stats: workers %d, pipelines %lld, sequential smaps %lld, items %lld, "
                "peak in flight %lld (bound %lld), tuple tasks %lld\n",
                st.workers, st.smaps_parallel, st.smaps_sequential, st.items, st.peak_in_flight,
                st.max_in_flight, st.task_groups);
    }
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
    if (cli_parse_args(argc, argv, getenv("STC_QUEUE_CAPACITY"), &a, err, sizeof err) != 0)
        return cli_usage(err);
    if (a.cmd == CLI_CMD_HELP) {
        fputs(cli_help, stdout);
        return CLI_EXIT_OK;
    }
    if (a.cmd == CLI_CMD_VERSION) {
        printf("stc %s\n", STC_VERSION_STRING);
        return CLI_EXIT_OK;
    }

    stc_env *env = NULL;
    stc_program *prog = NULL;
    /* Start the workers before compiling: a new thread often begins on the
     * creating thread's core, and the kernel needs a few milliseconds to
     * move it; compiling covers that instead of the program's first smap.
     * If the pool cannot be made, the run makes its own. */
    stc_pool *pool = NULL;
    if (a.cmd == CLI_CMD_RUN && !a.reference && !a.verify) {
        long n = a.workers ? a.workers : sysconf(_SC_NPROCESSORS_ONLN);
        if (n > 1) pool = stc_pool_new((int)(n > CLI_MAX_WORKERS ? CLI_MAX_WORKERS : n));
    }
    int code = cli_compile(a.file, &env, &prog);
    if (code == CLI_EXIT_OK && a.cmd == CLI_CMD_GRAPH) code = cli_graph(prog, &a);
    if (code == CLI_EXIT_OK && a.cmd == CLI_CMD_RUN && stc_program_takes_input(prog)) {
        code = cli_run_stream(prog, &a, pool);
    } else if (code == CLI_EXIT_OK && a.cmd == CLI_CMD_RUN && a.ninputs) {
        fprintf(stderr, "stc: --input: main takes no input (declare it as `fun main(lines) = ...`)\n");
        code = CLI_EXIT_USAGE;
    } else if (code == CLI_EXIT_OK && a.cmd == CLI_CMD_RUN) {
        if (a.verify) {
            code = cli_verify(prog, &a);
        } else {
            stc_run_opts opts = {.workers = pool ? 0 : a.workers, .queue_capacity = a.queue_capacity,
                                 .reference = a.reference, .cancel = stc_cancel_new(),
                                 .profile = a.profile, .trace_path = a.trace, .pool = pool};
            stc_result *res = NULL;
            cli_catch_signals(opts.cancel);
            int rc = stc_run(prog, &opts, &res);
            cli_catch_signals(NULL);
            stc_cancel_free(opts.cancel);
            if (rc == STC_EIO && a.trace) {
                fprintf(stderr, "stc: cannot write the trace file '%s'\n", a.trace);
                code = CLI_EXIT_IOERR;
            } else {
                code = rc == 0 && res ? cli_print_result(res, a.json) : cli_report_failure(rc, res);
            }
            cli_after_run(res, &a);
            stc_result_free(res);
        }
    }
    stc_program_free(prog);
    stc_env_free(env);
    stc_pool_free(pool);
    return code;
}

int main(int argc, char **argv)
{
    int code = cli_main(argc, argv);
    /* A failed write (e.g. to a full disk) must not look like success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "stc: cannot write output: %s\n", strerror(errno));
        if (code == CLI_EXIT_OK) code = CLI_EXIT_IOERR;
    }
    return code;
}
