/* run.c - `stc run` of a compiled program.  One path for every program:
 * stc_run_stream with the input lines as its source when main takes them
 * (cli/stream.c) and a sink that writes each result as it completes; a
 * main without input simply never calls either.  --verify is the same run
 * twice, reference and runtime, on the input read into memory, with the
 * output collected and compared line by line; --profile, --stats and
 * --trace report the runtime's run. */
#include "run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "report.h"
#include "stream.h"

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

/* SIGINT/SIGTERM raise c while a run runs (NULL: default handling again). */
static void cli_catch_signals(stc_cancel *c)
{
    cli_cancel = c;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = c ? cli_on_signal : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* --profile and --stats output after a run (res may be NULL). */
static void cli_after_run(const stc_result *res, const cli_args *a)
{
    if (a->profile && res) {
        char *table = stc_result_profile_format(res);
        if (table) fputs(table, stderr);
        else if (a->reference) fputs("stc: --profile measures the parallel runtime, not --reference\n", stderr);
        free(table);
    }
    if (a->stats && res) {
        stc_run_stats st = stc_result_stats(res);
        fprintf(stderr,
                "stats: workers %d, pipelines %lld, sequential smaps %lld, items %lld, "
                "peak in flight %lld (bound %lld), tuple tasks %lld, nested loops %lld, fused jobs %lld, "
                "back to fused %lld\n",
                st.workers, st.smaps_parallel, st.smaps_sequential, st.items, st.peak_in_flight,
                st.max_in_flight, st.task_groups, st.smaps_looped, st.smaps_fused, st.smaps_retreated);
        if (st.remote_batches || st.remote_declined)
            fprintf(stderr,
                    "stats: remote batches %lld, bytes sent %lld, received %lld, declined %lld, "
                    "serial stages placed %lld (their batches and states %lld), of them keyed shards %lld "
                    "(%lld)\n",
                    st.remote_batches, st.remote_bytes_sent, st.remote_bytes_received, st.remote_declined,
                    st.remote_moves, st.remote_serial, st.remote_shard_moves, st.remote_shard_serial);
    }
}

/* The input options against the program: 0, or the usage error's code. */
static int cli_run_check_input(const stc_program *prog, const cli_args *a)
{
    bool takes = stc_program_takes_input(prog);
    if (!takes && a->ninputs) {
        fprintf(stderr, "stc: --input: main takes no input (declare it as `fun main(lines) = ...`)\n");
        return CLI_EXIT_USAGE;
    }
    /* `stc run -` reads the program from standard input, so its input
     * lines cannot come from there too. */
    if (takes && !a->ninputs && !strcmp(a->file, "-")) {
        fprintf(stderr, "stc: the program is read from standard input, so its input lines must come "
                        "from '--input FILE'\n");
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* A plain run: results written as they complete, then the rest. */
static int cli_run_once(stc_program *prog, const cli_args *a, stc_pool *pool, const stc_remote *remote,
                        cli_inputs *ins)
{
    cli_progress progress;
    cli_progress_start(&progress, ins && !a->quiet);
    if (ins) ins->progress = &progress;
    cli_output out;
    cli_output_init(&out, 1);
    cli_sink sink = {.json = a->json, .no_states = a->no_states, .out = &out, .progress = &progress};
    stc_stream io = {ins ? cli_inputs_counted : NULL, ins, cli_sink_fn, &sink};
    stc_run_opts opts = {.workers = pool ? 0 : a->workers, .queue_capacity = a->queue_capacity,
                         .reference = a->reference, .cancel = stc_cancel_new(), .profile = a->profile,
                         .trace_path = a->trace, .pool = pool, .remote = remote};
    stc_result *res = NULL;
    cli_catch_signals(opts.cancel);
    cli_cluster_run_starts(); /* --mpi --trace: the other ranks' spans count from here */
    int rc = stc_run_stream(prog, &opts, &io, &res);
    cli_catch_signals(NULL);
    stc_cancel_free(opts.cancel);
    cli_progress_clear(&progress);
    bool sink_failed = out.err != 0; /* the run stopped on a write error */

    int code = CLI_EXIT_OK;
    if (rc == 0 && res) code = cli_sink_finish(&sink, res);
    cli_output_flush(&out); /* everything before any message on stderr */
    if (out.err) {
        cli_output_report(&out);
        if (code == CLI_EXIT_OK) code = CLI_EXIT_IOERR;
    }
    if (rc == STC_EIO && a->trace) {
        fprintf(stderr, "stc: cannot write the trace file '%s'\n", a->trace);
        code = CLI_EXIT_IOERR;
    } else if ((rc != 0 || !res) && !sink_failed) {
        code = cli_report_failure(rc, res);
        if (ins && cli_inputs_failed(ins) && code == CLI_EXIT_SOFTWARE) code = CLI_EXIT_NOINPUT;
    } else if (sink_failed) {
        code = CLI_EXIT_IOERR;
    }
    cli_after_run(res, a);
    stc_result_free(res);
    cli_output_free(&out);
    return code;
}

/* A failed run's outcome for --verify: "error: MESSAGE" (malloc'd). */
static char *cli_outcome(int rc, const stc_result *res)
{
    char *err = res && stc_result_error(res).message ? stc_result_error_format(res) : NULL;
    const char *msg = err ? err : stc_strerror(rc);
    size_t n = strlen(msg) + 8;
    char *out = malloc(n);
    if (out) snprintf(out, n, "error: %s", msg);
    free(err);
    return out;
}

/* Prints the first line where a and b differ. */
static void cli_verify_differ(const cli_output *ref, const cli_output *par)
{
    const char *a = ref->buf ? ref->buf : "", *b = par->buf ? par->buf : "";
    size_t i = 0, line = 1, start = 0;
    for (; a[i] && a[i] == b[i]; i++)
        if (a[i] == '\n') line++, start = i + 1;
    const char *la = a + start, *lb = b + start;
    int na = (int)strcspn(la, "\n"), nb = (int)strcspn(lb, "\n");
    fprintf(stderr, "verify: runtime and reference differ at output line %zu\n", line);
    fprintf(stderr, "reference: %.*s%s\nruntime:   %.*s%s\n", na, la, *la ? "" : "(no more output)", nb, lb,
            *lb ? "" : "(no more output)");
}

/* --verify --no-states: the states are not printed, but still compared. */
static int cli_verify_states(stc_result *const res[2], const int rcs[2])
{
    if (rcs[0] || rcs[1] || !res[0] || !res[1]) return CLI_EXIT_OK; /* failed runs: their errors were compared */
    char *j0 = stc_result_to_json(res[0]), *j1 = stc_result_to_json(res[1]);
    int code = !j0 || !j1 ? cli_oom() : strcmp(j0, j1) ? CLI_EXIT_SOFTWARE : CLI_EXIT_OK;
    if (code == CLI_EXIT_SOFTWARE)
        fprintf(stderr, "verify: runtime and reference differ in the final states (not printed: --no-states)\n");
    free(j0);
    free(j1);
    return code;
}

/* --verify: the reference and the runtime on the same input, in memory;
 * their output (and error) collected and compared.  When they agree the
 * output is written as a plain run writes it. */
static int cli_run_verify(stc_program *prog, const cli_args *a, const stc_remote *remote, cli_inputs *ins)
{
    cli_memsrc mem = {0};
    int code = ins ? cli_memsrc_fill(&mem, ins) : CLI_EXIT_OK;
    cli_output out[2];
    stc_result *res[2] = {NULL, NULL};
    int rcs[2] = {0, 0};
    size_t outlen[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
        cli_output_init(&out[r], -1);
        if (code != CLI_EXIT_OK) continue;
        mem.next = 0;
        cli_sink sink = {.json = a->json, .no_states = a->no_states, .out = &out[r]};
        stc_stream io = {ins ? cli_memsrc_source : NULL, &mem, cli_sink_fn, &sink};
        /* --profile, --trace and --stats are the runtime's (r == 1), as in a plain run */
        stc_run_opts o = {.workers = a->workers, .queue_capacity = a->queue_capacity, .reference = r == 0,
                          .remote = r == 1 ? remote : NULL, .profile = r == 1 && a->profile,
                          .trace_path = r == 1 ? a->trace : NULL};
        rcs[r] = stc_run_stream(prog, &o, &io, &res[r]);
        if (rcs[r] == STC_EIO && r == 1 && a->trace) {
            fprintf(stderr, "stc: cannot write the trace file '%s'\n", a->trace);
            code = CLI_EXIT_IOERR;
            continue;
        }
        if (rcs[r] == 0 && res[r]) code = cli_sink_finish(&sink, res[r]);
        outlen[r] = out[r].len;
        if (rcs[r] != 0 || !res[r]) {
            char *err = cli_outcome(rcs[r], res[r]);
            if (!err || cli_output_line(&out[r], err, strlen(err), -1) != 0) code = cli_oom();
            free(err);
        }
    }
    if (code == CLI_EXIT_OK) {
        if (out[0].len != out[1].len || (out[0].len && memcmp(out[0].buf, out[1].buf, out[0].len) != 0)) {
            cli_verify_differ(&out[0], &out[1]);
            code = CLI_EXIT_SOFTWARE;
        } else if (a->no_states && (code = cli_verify_states(res, rcs)) != CLI_EXIT_OK) {
            /* said */
        } else {
            cli_output std;
            cli_output_init(&std, 1);
            if (outlen[1]) cli_output_line(&std, out[1].buf, outlen[1] - 1, -1); /* it ends in '\n' */
            cli_output_flush(&std);
            if (std.err) {
                cli_output_report(&std);
                code = CLI_EXIT_IOERR;
            }
            cli_output_free(&std);
            if (rcs[1] != 0 || !res[1]) {
                int failed = cli_report_failure(rcs[1], res[1]);
                if (code == CLI_EXIT_OK) code = failed;
            }
            cli_after_run(res[1], a);
        }
    }
    for (int r = 0; r < 2; r++) {
        stc_result_free(res[r]);
        cli_output_free(&out[r]);
    }
    cli_memsrc_free(&mem);
    return code;
}

int cli_run(stc_program *prog, const cli_args *a, stc_pool *pool, const stc_remote *remote, bool *ran)
{
    *ran = false;
    int code = cli_run_check_input(prog, a);
    if (code != CLI_EXIT_OK) return code;
    cli_inputs ins;
    bool takes = stc_program_takes_input(prog);
    if (takes && (code = cli_inputs_open(a, &ins)) != CLI_EXIT_OK) return code;
    *ran = true;
    code = a->verify ? cli_run_verify(prog, a, remote, takes ? &ins : NULL)
                     : cli_run_once(prog, a, pool, remote, takes ? &ins : NULL);
    if (takes) cli_inputs_close(&ins);
    return code;
}
