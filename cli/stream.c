/* stream.c - `stc run` of a stream program (`fun main(lines) = ...`):
 * input lines from --input files or standard input, results written one
 * per line as they complete, in order, then the final states; a progress
 * line on stderr when it is a terminal. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "input.h"

typedef struct cli_progress {
    bool on;               /* stderr is a terminal and not --quiet */
    bool shown;            /* the line is on the screen */
    bool stdout_tty;       /* results go to the same screen: clear the line first */
    long long items;
    struct timespec start, last;
} cli_progress;

static double cli_seconds(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void cli_progress_draw(cli_progress *p, const struct timespec *now)
{
    double t = cli_seconds(&p->start, now);
    fprintf(stderr, "\r\033[Kstc: %lld items, %.0f items/s, %.1f s", p->items, t > 0 ? (double)p->items / t : 0.0, t);
    fflush(stderr);
    p->shown = true;
    p->last = *now;
}

static void cli_progress_clear(cli_progress *p)
{
    if (!p->shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->shown = false;
}

/* The source as the run sees it: the real one, counted for the progress line. */
typedef struct cli_source {
    stc_source_fn fn;
    void *ud;
    cli_progress *progress;
} cli_source;

static int cli_counted_source(void *ud, stc_value *item, stc_ctx *cx)
{
    cli_source *s = ud;
    int rc = s->fn(s->ud, item, cx);
    cli_progress *p = s->progress;
    if (rc == 1 && p->on) {
        p->items++;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
        if (cli_seconds(&p->last, &now) >= 0.25) cli_progress_draw(p, &now);
    }
    return rc;
}

/* Input read into memory (for --verify, which runs the program twice). */
typedef struct cli_memsrc {
    stc_value *items;
    size_t n, cap, next;
} cli_memsrc;

static int cli_mem_source(void *ud, stc_value *item, stc_ctx *cx)
{
    (void)cx;
    cli_memsrc *m = ud;
    if (m->next == m->n) return 0;
    *item = stc_value_retain(m->items[m->next++]);
    return 1;
}

/* Where results go: printed, or collected as JSON lines (--verify). */
typedef struct cli_sink {
    bool json;
    bool collect;
    char *text;            /* collect: the JSON lines so far */
    size_t len, cap;
    bool write_failed;
    cli_progress *progress;
} cli_sink;

static int cli_collect(cli_sink *k, const char *s, size_t n)
{
    if (k->len + n + 2 > k->cap) {
        size_t ncap = (k->cap ? 2 * k->cap : 4096) + n;
        char *nt = realloc(k->text, ncap);
        if (!nt) return -1;
        k->text = nt;
        k->cap = ncap;
    }
    memcpy(k->text + k->len, s, n);
    k->len += n;
    k->text[k->len++] = '\n';
    k->text[k->len] = 0;
    return 0;
}

static int cli_sink_fn(void *ud, long long index, stc_value v, stc_ctx *cx)
{
    (void)index;
    cli_sink *k = ud;
    /* () carries nothing: a reduction whose threads answer () per item
     * prints only its final states. */
    if (v.tag == STC_T_UNIT) return 0;
    size_t n;
    const char *raw = !k->json && v.tag == STC_T_STR ? stc_value_str(v, &n) : NULL;
    char *text = raw ? NULL : k->json ? stc_value_to_json(v) : stc_value_to_text(v);
    if (!raw && !text)
        return errno == E2BIG ? stc_ctx_error(cx, "the result is too large to print (over 1 GiB of text)")
                              : STC_ENOMEM;
    if (text) n = strlen(text);
    int rc = 0;
    if (k->collect) {
        if (cli_collect(k, raw ? raw : text, n) != 0) rc = STC_ENOMEM;
    } else {
        if (k->progress->stdout_tty) cli_progress_clear(k->progress);
        if (fwrite(raw ? raw : text, 1, n, stdout) != n || putchar('\n') == EOF) {
            k->write_failed = true;
            rc = stc_ctx_error(cx, "cannot write output: %s", strerror(errno));
        }
    }
    free(text);
    return rc;
}

/* One output line: printed, or collected (--verify). */
static int cli_emit(cli_sink *k, const char *s, size_t n)
{
    if (k->collect) return cli_collect(k, s, n) == 0 ? 0 : -1;
    if (k->progress->stdout_tty) cli_progress_clear(k->progress);
    if (fwrite(s, 1, n, stdout) != n || putchar('\n') == EOF) k->write_failed = true;
    return 0;
}

/* After a successful run: main's value unless it went to the sink, then
 * the final states (text: `NAME = V` lines; JSON: one line). */
static int cli_print_final(const stc_result *res, bool json, cli_sink *k)
{
    bool streamed = stc_result_streamed(res);
    if (json && !streamed) {
        char *line = stc_result_to_json(res);
        if (!line) return cli_print_failed();
        int rc = cli_emit(k, line, strlen(line));
        free(line);
        return rc ? cli_oom() : CLI_EXIT_OK;
    }
    size_t cap = 256, len = 0;
    char *line = malloc(cap);
    if (!line) return cli_oom();
    int rc = 0;
    if (!streamed) {
        char *text = stc_value_to_text(stc_result_value(res));
        if (!text) {
            free(line);
            return cli_print_failed();
        }
        rc = cli_emit(k, text, strlen(text));
        free(text);
    }
    if (json) len = (size_t)sprintf(line, "{\"states\": {");
    size_t count = stc_result_state_count(res);
    for (size_t i = 0; rc == 0 && i < count; i++) {
        const char *nm = stc_result_state_name(res, i);
        nm = nm ? nm : "?";
        char *name = NULL, *val = json ? stc_value_to_json(stc_result_state(res, i))
                                       : stc_value_to_text(stc_result_state(res, i));
        if (json) {
            stc_value nv = stc_value_new_str(nm, strlen(nm));
            name = stc_value_to_json(nv);
            stc_value_release(nv);
        }
        size_t need = len + strlen(nm) + (name ? strlen(name) : 0) + (val ? strlen(val) : 0) + 16;
        if (val && (!json || name) && need > cap) {
            char *nl = realloc(line, cap = 2 * need);
            if (nl) line = nl;
            else free(val), val = NULL;
        }
        if (!val || (json && !name)) rc = -1;
        else if (json) len += (size_t)sprintf(line + len, "%s%s: %s", i ? ", " : "", name, val);
        else rc = cli_emit(k, line, (size_t)sprintf(line, "%s = %s", nm, val));
        free(name), free(val);
    }
    if (rc == 0 && json) {
        len += (size_t)sprintf(line + len, "}}");
        rc = cli_emit(k, line, len);
    }
    free(line);
    return rc ? cli_oom() : CLI_EXIT_OK;
}

/* Opens the inputs: the source to run and what to free afterwards. */
typedef struct cli_inputs {
    cli_input *in[CLI_MAX_INPUTS];
    int n;
    stc_merge *merge;
    cli_inputs_ref ref;
} cli_inputs;

static void cli_inputs_close(cli_inputs *ins)
{
    stc_merge_free(ins->merge);
    for (int i = 0; i < ins->n; i++) cli_input_close(ins->in[i]);
}

static int cli_inputs_open(const cli_args *a, cli_inputs *ins, stc_source_fn *fn, void **ud)
{
    static const char *const stdin_only[] = {"-"};
    const char *const *paths = a->ninputs ? a->inputs : stdin_only;
    int n = a->ninputs ? a->ninputs : 1;
    memset(ins, 0, sizeof *ins);
    for (int i = 0; i < n; i++) {
        char err[600];
        if (!(ins->in[i] = cli_input_open(paths[i], n > 1, err, sizeof err))) {
            fprintf(stderr, "stc: %s\n", err);
            cli_inputs_close(ins);
            return CLI_EXIT_NOINPUT;
        }
        ins->n++;
    }
    if (n == 1) {
        *fn = cli_input_source;
        *ud = ins->in[0];
        return CLI_EXIT_OK;
    }
    stc_source_fn fns[CLI_MAX_INPUTS];
    void *uds[CLI_MAX_INPUTS];
    for (int i = 0; i < n; i++) {
        fns[i] = cli_input_source;
        uds[i] = ins->in[i];
    }
    ins->ref = (cli_inputs_ref){ins->in, n};
    if (!(ins->merge = stc_merge_new((size_t)n, fns, uds, cli_inputs_wait, &ins->ref))) {
        cli_inputs_close(ins);
        return cli_oom();
    }
    *fn = stc_merge_source;
    *ud = ins->merge;
    return CLI_EXIT_OK;
}

/* --verify: the input in memory, both runs collected and compared. */
static int cli_stream_verify(stc_program *prog, const cli_args *a, stc_source_fn fn, void *ud)
{
    cli_memsrc mem = {0};
    int code = CLI_EXIT_OK;
    for (;;) {
        stc_value v;
        stc_ctx *no_cx = NULL;
        int rc = fn(ud, &v, no_cx);
        if (rc == STC_STREAM_AGAIN) continue;
        if (rc <= 0) {
            if (rc < 0) {
                fprintf(stderr, "stc: cannot read the input: %s\n", stc_strerror(rc));
                code = CLI_EXIT_NOINPUT;
            }
            break;
        }
        if (mem.n == mem.cap) {
            size_t ncap = mem.cap ? 2 * mem.cap : 256;
            stc_value *ni = realloc(mem.items, ncap * sizeof *ni);
            if (!ni) {
                stc_value_release(v);
                code = cli_oom();
                break;
            }
            mem.items = ni;
            mem.cap = ncap;
        }
        mem.items[mem.n++] = v;
    }
    cli_progress quiet = {0};
    cli_sink out[2] = {{.json = a->json, .collect = true, .progress = &quiet},
                       {.json = a->json, .collect = true, .progress = &quiet}};
    stc_result *res[2] = {NULL, NULL};
    int rcs[2] = {0, 0};
    for (int r = 0; r < 2 && code == CLI_EXIT_OK; r++) {
        mem.next = 0;
        stc_run_opts o = {.workers = a->workers, .queue_capacity = a->queue_capacity, .reference = r == 0};
        stc_stream io = {cli_mem_source, &mem, cli_sink_fn, &out[r]};
        rcs[r] = stc_run_stream(prog, &o, &io, &res[r]);
        if (rcs[r] == 0 && res[r]) cli_print_final(res[r], a->json, &out[r]);
        else {
            char *err = cli_outcome(rcs[r], res[r]);
            if (err) cli_collect(&out[r], err, strlen(err));
            free(err);
        }
    }
    if (code == CLI_EXIT_OK) {
        const char *rt = out[0].text ? out[0].text : "", *pt = out[1].text ? out[1].text : "";
        if (strcmp(rt, pt) != 0) {
            size_t i = 0, line = 1;
            for (; rt[i] && rt[i] == pt[i]; i++) line += rt[i] == '\n';
            fprintf(stderr, "verify: runtime and reference differ at output line %zu\n", line);
            code = CLI_EXIT_SOFTWARE;
        } else if (rcs[1] != 0) {
            code = cli_report_failure(rcs[1], res[1]);
        } else {
            fputs(pt, stdout); /* they agree: the output as a plain run prints it */
        }
    }
    for (int r = 0; r < 2; r++) {
        stc_result_free(res[r]);
        free(out[r].text);
    }
    for (size_t i = 0; i < mem.n; i++) stc_value_release(mem.items[i]);
    free(mem.items);
    return code;
}

int cli_run_stream(stc_program *prog, const cli_args *a, stc_pool *pool)
{
    cli_inputs ins;
    stc_source_fn fn = NULL;
    void *ud = NULL;
    int code = cli_inputs_open(a, &ins, &fn, &ud);
    if (code != CLI_EXIT_OK) return code;
    if (a->verify) {
        code = cli_stream_verify(prog, a, fn, ud);
        cli_inputs_close(&ins);
        return code;
    }
    cli_progress progress = {.on = !a->quiet && isatty(2), .stdout_tty = isatty(1)};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &progress.start);
    progress.last = progress.start;
    cli_source src = {fn, ud, &progress};
    cli_sink sink = {.json = a->json, .progress = &progress};
    stc_stream io = {cli_counted_source, &src, cli_sink_fn, &sink};
    stc_run_opts opts = {.workers = pool ? 0 : a->workers, .queue_capacity = a->queue_capacity,
                         .reference = a->reference, .cancel = stc_cancel_new(), .profile = a->profile,
                         .trace_path = a->trace, .pool = pool};
    stc_result *res = NULL;
    cli_catch_signals(opts.cancel);
    int rc = stc_run_stream(prog, &opts, &io, &res);
    cli_catch_signals(NULL);
    stc_cancel_free(opts.cancel);
    cli_progress_clear(&progress);
    if (rc == STC_EIO && a->trace) {
        fprintf(stderr, "stc: cannot write the trace file '%s'\n", a->trace);
        code = CLI_EXIT_IOERR;
    } else if (rc == 0 && res) {
        code = cli_print_final(res, a->json, &sink);
        if (sink.write_failed) code = CLI_EXIT_IOERR;
    } else {
        fflush(stdout);
        code = cli_report_failure(rc, res);
        if (sink.write_failed && code == CLI_EXIT_SOFTWARE) code = CLI_EXIT_IOERR;
    }
    cli_after_run(res, a);
    stc_result_free(res);
    cli_inputs_close(&ins);
    return code;
}
