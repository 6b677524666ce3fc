/* run_modes.c - compiling and running test programs in every mode (see
 * run_modes.h). */
#include "run_modes.h"

#include "api/testing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

stc_run_opts trun_opts(const trun_mode *m)
{
    /* The testing aids are not run options: trun_run sets them from the mode. */
    if (m->reference) return (stc_run_opts){.reference = true};
    return (stc_run_opts){.workers = m->workers, .queue_capacity = m->queue_capacity, .profile = m->profile_sample};
}

const char *trun_mode_name(const trun_mode *m, char *buf, size_t cap)
{
    if (m->reference) snprintf(buf, cap, "ref");
    else if (m->perturb_seed) snprintf(buf, cap, "workers=%d qc=%d perturb=%u", m->workers, m->queue_capacity,
                                       m->perturb_seed);
    else snprintf(buf, cap, "workers=%d qc=%d", m->workers, m->queue_capacity);
    return buf;
}

/* A whole number in [lo, hi], or -1. */
static long trun_number(const char *s, long lo, long hi)
{
    char *end;
    long n = strtol(s, &end, 10);
    return end == s || *end || n < lo || n > hi ? -1 : n;
}

int trun_modes_parse(const char *workers, const char *capacities, unsigned perturb_seed, int watchdog_ms,
                     trun_mode *modes, int max)
{
    char wbuf[256], qbuf[256];
    if (snprintf(wbuf, sizeof wbuf, "%s", workers) >= (int)sizeof wbuf) return -1;
    int n = 0;
    char *wsave = NULL;
    for (char *w = strtok_r(wbuf, ",", &wsave); w; w = strtok_r(NULL, ",", &wsave)) {
        bool ref = !strcmp(w, "ref");
        long nw = ref ? 0 : trun_number(w, 1, TRUN_MAX_WORKERS);
        if (nw < 0) return -1;
        if (snprintf(qbuf, sizeof qbuf, "%s", capacities) >= (int)sizeof qbuf) return -1;
        char *qsave = NULL;
        for (char *q = strtok_r(qbuf, ",", &qsave); q; q = strtok_r(NULL, ",", &qsave)) {
            long nq = trun_number(q, 0, 1L << 24);
            if (nq < 0 || n == max) return -1;
            modes[n++] = ref ? (trun_mode){.reference = true}
                             : (trun_mode){.workers = (int)nw, .queue_capacity = (int)nq,
                                           .perturb_seed = perturb_seed, .watchdog_ms = watchdog_ms};
            if (ref) break; /* the reference evaluator has no queues */
        }
    }
    return n ? n : -1;
}

int trun_compile(stc_env *env, const char *src, size_t len, const char *file, stc_program **prog,
                 char **diags_text)
{
    stc_diags *diags = NULL;
    *prog = NULL;
    int rc = stc_compile(env, src, len, file, prog, &diags);
    if (rc != 0 && diags_text) {
        char *text = diags ? stc_diags_format(diags) : NULL;
        if (!text) { /* no diagnostics: say why from the code */
            size_t n = strlen(stc_strerror(rc)) + 32;
            if ((text = malloc(n))) snprintf(text, n, "(no diagnostics: %s)\n", stc_strerror(rc));
        }
        *diags_text = text;
    }
    stc_diags_free(diags);
    return rc;
}

int trun_run(stc_program *prog, const stc_run_opts *opts, const trun_mode *aids, const stc_stream *io,
             trun_outcome *out)
{
    stc_result *res = NULL;
    *out = (trun_outcome){0};
    /* The testing aids are set here and nowhere else in tests/. */
    run_testing_opts t = {.perturb_seed = aids ? aids->perturb_seed : 0, .watchdog_ms = aids ? aids->watchdog_ms : 0,
                         .trial_refusals = aids ? aids->trial_refusals : 0,
                         .shuttle_items = aids ? aids->shuttle_items : 0,
                         .profile_sample = aids && aids->profile_sample ? 1 : 0};
    _Static_assert(sizeof t.owned_item_ns == sizeof aids->owned_item_ns, "one figure per stage");
    if (aids) memcpy(t.owned_item_ns, aids->owned_item_ns, sizeof t.owned_item_ns);
    bool streams = stc_program_takes_input(prog);
    out->rc = stc__run_testing(prog, opts, &t, streams ? (io ? io : &(stc_stream){0}) : NULL, &res);
    if (res) {
        stc_error_info err = stc_result_error(res);
        out->has_result = true;
        out->stats = stc_result_stats(res);
        out->code = err.code;
        out->message = err.message ? strdup(err.message) : NULL;
        out->line = err.line;
        out->col = err.col;
        if (out->rc == 0) {
            errno = 0;
            out->json = stc_result_to_json(res);
            out->json_errno = out->json ? 0 : errno;
        } else {
            out->error = stc_result_error_format(res);
        }
    }
    stc_result_free(res);
    return out->rc;
}

void trun_outcome_free(trun_outcome *o)
{
    free(o->json);
    free(o->error);
    free(o->message);
    *o = (trun_outcome){0};
}

char *trun_outcome_text(const trun_outcome *o)
{
    if (o->rc == 0 && o->json) return strdup(o->json);
    int code = o->rc == 0 ? 0 : o->code ? o->code : o->rc;
    const char *what = o->rc == 0 ? "(the result could not be printed)" : o->error ? o->error : "(no result)";
    size_t n = strlen(what) + strlen(stc_strerror(code)) + 48;
    char *s = malloc(n);
    if (s) snprintf(s, n, "error %d (%s): %s", code, stc_strerror(code), what);
    return s;
}

static char *trun_default_runner(stc_program *prog, const trun_mode *m, void *ud)
{
    (void)ud;
    stc_run_opts opts = trun_opts(m);
    trun_outcome o;
    trun_run(prog, &opts, m, NULL, &o);
    char *text = trun_outcome_text(&o);
    trun_outcome_free(&o);
    return text;
}

int trun_check_modes(stc_program *prog, const trun_mode *modes, int n, trun_runner run, void *ud, char **ref,
                     char **got)
{
    if (!run) run = trun_default_runner;
    *got = NULL;
    *ref = run(prog, &(trun_mode){.reference = true}, ud);
    for (int i = 0; i < n; i++) {
        char *g = run(prog, &modes[i], ud);
        if (!*ref || !g || strcmp(*ref, g) != 0) {
            *got = g;
            return i;
        }
        free(g);
    }
    return -1;
}
