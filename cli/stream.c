/* stream.c - the input and output of `stc run`: the input lines of a
 * stream program (`fun main(lines) = ...`) as the run's source, counted
 * for a progress line on stderr when it is a terminal; the results as
 * lines on an output, written as they complete (cli/output.c) or
 * collected for --verify; then main's value and the final states. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "stream.h"

/* ---- the progress line ---------------------------------------------------- */

static double cli_seconds(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void cli_progress_start(cli_progress *p, bool on)
{
    memset(p, 0, sizeof *p);
    p->on = on && isatty(2);
    p->stdout_tty = isatty(1);
    clock_gettime(CLOCK_MONOTONIC_COARSE, &p->start);
    p->last = p->start;
}

static void cli_progress_draw(cli_progress *p, const struct timespec *now)
{
    double t = cli_seconds(&p->start, now);
    fprintf(stderr, "\r\033[Kstc: %lld items, %.0f items/s, %.1f s", p->items, t > 0 ? (double)p->items / t : 0.0, t);
    fflush(stderr);
    p->shown = true;
    p->last = *now;
}

void cli_progress_clear(cli_progress *p)
{
    if (!p || !p->shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->shown = false;
}

/* ---- the inputs ------------------------------------------------------------ */

void cli_inputs_close(cli_inputs *ins)
{
    stc_merge_free(ins->merge);
    ins->merge = NULL;
    for (int i = 0; i < ins->n; i++) cli_input_close(ins->in[i]);
    ins->n = 0;
}

int cli_inputs_open(const cli_args *a, cli_inputs *ins)
{
    static const char *const stdin_only[] = {"-"};
    const char *const *paths = a->ninputs ? a->inputs : stdin_only;
    int n = a->ninputs ? a->ninputs : 1;
    memset(ins, 0, sizeof *ins);
    for (int i = 0; i < n; i++) {
        char err[600];
        if (!(ins->in[i] = cli_input_open(paths[i], n > 1, a->max_line, err, sizeof err))) {
            fprintf(stderr, "stc: %s\n", err);
            cli_inputs_close(ins);
            return CLI_EXIT_NOINPUT;
        }
        ins->n++;
    }
    if (n == 1) {
        ins->fn = cli_input_source;
        ins->ud = ins->in[0];
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
    ins->fn = stc_merge_source;
    ins->ud = ins->merge;
    return CLI_EXIT_OK;
}

int cli_inputs_counted(void *ud, stc_value *item, stc_ctx *cx)
{
    cli_inputs *ins = ud;
    int rc = ins->fn(ins->ud, item, cx);
    cli_progress *p = ins->progress;
    if (rc == 1 && p && p->on) {
        p->items++;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
        if (cli_seconds(&p->last, &now) >= 0.25) cli_progress_draw(p, &now);
    }
    return rc;
}

bool cli_inputs_failed(const cli_inputs *ins)
{
    for (int i = 0; i < ins->n; i++)
        if (cli_input_failed(ins->in[i])) return true;
    return false;
}

const char *cli_inputs_error(const cli_inputs *ins)
{
    for (int i = 0; i < ins->n; i++)
        if (cli_input_error(ins->in[i])) return cli_input_error(ins->in[i]);
    return NULL;
}

/* ---- the input in memory (--verify) ------------------------------------------ */

int cli_memsrc_fill(cli_memsrc *m, cli_inputs *ins)
{
    for (;;) {
        stc_value v;
        int rc = ins->fn(ins->ud, &v, NULL);
        if (rc == STC_STREAM_AGAIN) continue;
        if (rc == 0) return CLI_EXIT_OK;
        if (rc < 0) {
            if (rc == STC_ENOMEM) return cli_oom();
            const char *why = cli_inputs_error(ins);
            fprintf(stderr, "stc: %s\n", why ? why : "cannot read the input");
            return cli_inputs_failed(ins) ? CLI_EXIT_NOINPUT : CLI_EXIT_SOFTWARE;
        }
        if (m->n == m->cap) {
            size_t ncap = m->cap ? 2 * m->cap : 256;
            stc_value *ni = realloc(m->items, ncap * sizeof *ni);
            if (!ni) {
                stc_value_release(v);
                return cli_oom();
            }
            m->items = ni;
            m->cap = ncap;
        }
        m->items[m->n++] = v;
    }
}

void cli_memsrc_free(cli_memsrc *m)
{
    for (size_t i = 0; i < m->n; i++) stc_value_release(m->items[i]);
    free(m->items);
    memset(m, 0, sizeof *m);
}

int cli_memsrc_source(void *ud, stc_value *item, stc_ctx *cx)
{
    (void)cx;
    cli_memsrc *m = ud;
    if (m->next == m->n) return 0;
    *item = stc_value_retain(m->items[m->next++]);
    return 1;
}

/* ---- the output ---------------------------------------------------------------- */

/* One line; index: the result's item, or -1.  0, or -1 (see k->out). */
static int cli_sink_line(cli_sink *k, const char *s, size_t n, long long index)
{
    if (k->progress && k->progress->stdout_tty && k->out->fd >= 0) cli_progress_clear(k->progress);
    return cli_output_line(k->out, s, n, index);
}

int cli_sink_fn(void *ud, long long index, stc_value v, stc_ctx *cx)
{
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
    int rc = cli_sink_line(k, raw ? raw : text, n, index);
    free(text);
    if (rc == 0) return 0;
    if (k->out->oom) return STC_ENOMEM;
    /* The run stops here; the caller reports the write error (cli/output.c
     * knows the first result lost, which may be an earlier one). */
    return stc_ctx_error(cx, "cannot write output");
}

/* --no-states: main's value alone (when not streamed), as the first line of
 * the usual output, or in JSON {"result": V}. */
static int cli_sink_value_only(cli_sink *k, const stc_result *res, bool json, bool streamed)
{
    if (streamed) return k->out->oom ? cli_oom() : CLI_EXIT_OK;
    char *text = json ? stc_value_to_json(stc_result_value(res)) : stc_value_to_text(stc_result_value(res));
    if (!text) return cli_print_failed();
    if (!json) {
        cli_sink_line(k, text, strlen(text), -1);
    } else {
        size_t n = strlen(text);
        char *line = malloc(n + 16);
        if (!line) {
            free(text);
            return cli_oom();
        }
        int len = sprintf(line, "{\"result\": %s}", text);
        cli_sink_line(k, line, (size_t)len, -1);
        free(line);
    }
    free(text);
    return k->out->oom ? cli_oom() : CLI_EXIT_OK;
}

int cli_sink_finish(cli_sink *k, const stc_result *res)
{
    bool json = k->json, streamed = stc_result_streamed(res);
    if (k->no_states) return cli_sink_value_only(k, res, json, streamed);
    if (json && !streamed) {
        char *line = stc_result_to_json(res);
        if (!line) return cli_print_failed();
        cli_sink_line(k, line, strlen(line), -1);
        free(line);
        return k->out->oom ? cli_oom() : CLI_EXIT_OK;
    }
    if (!streamed) {
        char *text = stc_value_to_text(stc_result_value(res));
        if (!text) return cli_print_failed();
        cli_sink_line(k, text, strlen(text), -1);
        free(text);
    }
    size_t cap = 256, len = 0;
    char *line = malloc(cap);
    if (!line) return cli_oom();
    int rc = 0;
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
        else cli_sink_line(k, line, (size_t)sprintf(line, "%s = %s", nm, val), -1);
        free(name), free(val);
    }
    if (rc == 0 && json) {
        len += (size_t)sprintf(line + len, "}}");
        cli_sink_line(k, line, len, -1);
    }
    free(line);
    if (k->out->oom) return cli_oom();
    return rc ? cli_print_failed() : CLI_EXIT_OK;
}
