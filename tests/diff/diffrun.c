/* diffrun.c - runs a program under the reference evaluator and the runtime
 * in every mode and compares the outcomes byte for byte: the
 * stc_result_to_json line, or "error CODE (text): " and
 * stc_result_error_format (trun_outcome_text). Uses only stc.h, through
 * tests/support/run_modes.h. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diffrun.h"
#include "run_modes.h"
#include "stc.h"

const diff_mode diff_modes[] = {{1, 1, false, 0, false}, {1, 0, false, 0, false}, {2, 1, false, 0, false},
                                {2, 0, false, 0, false}, {3, 1, false, 0, false}, {3, 0, false, 0, false},
                                {8, 1, false, 0, false}, {8, 0, false, 0, false}, {2, 1, false, 3, false},
                                {3, 0, false, 1, false}, {1, 1, false, 3, true},  {1, 0, false, 0, true},
                                {2, 1, true, 0, false},  {8, 0, true, 0, false}};
int diff_nmodes = 12;
bool diff_use_fork = true;
unsigned long long diff_seed;

char *xprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) {
        fprintf(stderr, "difftest: out of memory\n");
        exit(2);
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

const char *diff_mode_name(int m)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "workers=%d qc=%d%s%s%s", diff_modes[m].workers, diff_modes[m].queue_capacity,
             diff_modes[m].perturb ? " perturbed" : "", diff_modes[m].shuttle ? " shuttle" : "",
             diff_modes[m].sample ? " sampled" : "");
    return buf;
}

void verdict_free(verdict *v)
{
    free(v->ref);
    free(v->got);
    *v = (verdict){0};
}

/* ---- In this process ---- */

static char *outcome(stc_program *prog, const diff_mode *m, stc_run_stats *stats)
{
    trun_mode mode = {.reference = true};
    if (m) mode = (trun_mode){.workers = m->workers, .queue_capacity = m->queue_capacity,
                              .perturb_seed = m->perturb ? (unsigned)diff_seed | 1u : 0,
                              .shuttle_items = m->shuttle, .profile_sample = m->sample};
    stc_run_opts opts = trun_opts(&mode);
    trun_outcome o;
    trun_run(prog, &opts, &mode, NULL, &o);
    char *text = trun_outcome_text(&o);
    if (!text) text = xprintf("(out of memory printing the result)");
    if (stats && o.has_result) *stats = o.stats;
    trun_outcome_free(&o);
    return text;
}

static stc_program *compile(stc_env *env, const char *src, char **diags_text)
{
    stc_program *prog;
    trun_compile(env, src, strlen(src), "gen.stc", &prog, diags_text);
    return prog;
}

/* Runs src in every mode, starting with modes[first] `repeat` times. */
void diff_check_here(const char *src, int first, int repeat, verdict *v, diff_totals *tot)
{
    *v = (verdict){.kind = V_AGREE};
    stc_env *env = stc_env_new();
    stc_program *prog = env ? compile(env, src, &v->ref) : NULL;
    if (!prog) {
        v->kind = V_COMPILE;
        stc_env_free(env);
        return;
    }
    char *ref = outcome(prog, NULL, NULL);
    for (int k = 0; k < repeat + diff_nmodes; k++) {
        int mi = k < repeat ? first : k - repeat;
        stc_run_stats st = {0};
        char *got = outcome(prog, &diff_modes[mi], &st);
        if (strcmp(ref, got) != 0) {
            *v = (verdict){.kind = V_MISMATCH, .mode = mi, .ref = ref, .got = got};
            ref = NULL;
            break;
        }
        const diff_mode *m = &diff_modes[mi];
        if (tot && k >= repeat && m->workers == 8 && !m->queue_capacity && !m->perturb) {
            tot->pipelines += st.smaps_parallel;
            tot->sequential += st.smaps_sequential;
            tot->items += st.items;
            tot->task_groups += st.task_groups;
            tot->errors += !strncmp(ref, "error", 5);
        }
        if (tot && k >= repeat && m->shuttle) tot->shuttled += st.smaps_retreated;
        if (tot && k >= repeat && m->sample) tot->sampled += st.smaps_retreated;
        free(got);
    }
    free(ref);
    stc_program_free(prog);
    stc_env_free(env);
}

/* ---- In a child process ---- */

static void put(int fd, const void *p, size_t n)
{
    for (const char *c = p; n;) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) _exit(3);
        c += w, n -= (size_t)w;
    }
}

static void put_str(int fd, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put(fd, &n, sizeof n);
    put(fd, s ? s : "", n);
}

static bool get(int fd, void *out, size_t n)
{
    for (char *c = out; n;) {
        ssize_t r = read(fd, c, n);
        if (r <= 0) return false;
        c += r, n -= (size_t)r;
    }
    return true;
}

static bool get_str(int fd, char **out)
{
    size_t n;
    if (!get(fd, &n, sizeof n) || n > ((size_t)1 << 32) || !(*out = malloc(n + 1))) return false;
    (*out)[n] = '\0';
    return get(fd, *out, n);
}

typedef struct record {
    int kind, mode;
    diff_totals t;
} record;

void diff_send(int fd, const verdict *v, const diff_totals *t)
{
    record r = {.kind = v->kind, .mode = v->mode, .t = t ? *t : (diff_totals){0}};
    put(fd, &r, sizeof r);
    put_str(fd, v->ref);
    put_str(fd, v->got);
}

bool diff_receive(int fd, verdict *v, diff_totals *t)
{
    record r;
    *v = (verdict){0};
    if (!get(fd, &r, sizeof r)) return false;
    v->kind = r.kind, v->mode = r.mode;
    if (t) *t = r.t;
    if (get_str(fd, &v->ref) && get_str(fd, &v->got)) return true;
    verdict_free(v);
    return false;
}

void diff_quiet_stderr(void)
{
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
}

static pid_t spawn(int *fd, bool quiet)
{
    int fds[2];
    fflush(stdout);
    pid_t pid = pipe(fds) == 0 ? fork() : -1;
    if (pid < 0) {
        perror("difftest: pipe/fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        if (quiet) diff_quiet_stderr();
        alarm(DIFF_TIMEOUT_S);
        *fd = fds[1];
    } else {
        close(fds[1]);
        *fd = fds[0];
    }
    return pid;
}

/* Waits for the child; a crash as a verdict (false when it exited normally). */
static bool reap(pid_t pid, verdict *v)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return false;
    verdict_free(v);
    *v = (verdict){.kind = V_CRASH, .status = status};
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        v->ref = xprintf("no outcome within %d s (a hang?)", DIFF_TIMEOUT_S);
    else if (WIFSIGNALED(status))
        v->ref = xprintf("crashed: signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        v->ref = xprintf("crashed: exit status %d (a sanitizer report?)", WEXITSTATUS(status));
    return true;
}

void diff_check(const char *src, int first, int repeat, verdict *v, diff_totals *tot, bool quiet)
{
    if (!diff_use_fork) {
        diff_check_here(src, first, repeat, v, tot);
        return;
    }
    int fd;
    pid_t pid = spawn(&fd, quiet);
    if (pid == 0) {
        diff_totals t = {0};
        diff_check_here(src, first, repeat, v, &t);
        diff_send(fd, v, &t);
        _exit(0);
    }
    diff_totals t;
    bool ok = diff_receive(fd, v, &t);
    close(fd);
    if (reap(pid, v) || !ok) {
        if (!ok && v->kind != V_CRASH)
            *v = (verdict){.kind = V_CRASH, .ref = xprintf("no outcome from the child")};
        return;
    }
    if (tot) {
        tot->pipelines += t.pipelines, tot->sequential += t.sequential, tot->items += t.items;
        tot->task_groups += t.task_groups, tot->errors += t.errors;
    }
}

/* ---- Expectations in the tests/lang format ---- */

/* "-- expect: JSON" or "-- expect runtime error: L:C: message" for src under the reference. */
static char *expectation(const char *src)
{
    stc_env *env = stc_env_new();
    char *diags = NULL, *e;
    stc_program *prog = env ? compile(env, src, &diags) : NULL;
    if (!prog) {
        e = xprintf("-- does not compile:\n%s", diags ? diags : "");
    } else {
        stc_run_opts opts = trun_opts(&(trun_mode){.reference = true});
        trun_outcome o;
        int rc = trun_run(prog, &opts, NULL, NULL, &o);
        const char *msg = o.error ? strstr(o.error, ": error: ") : NULL;
        if (rc == 0 && o.json) e = xprintf("-- expect: %s", o.json);
        else if (msg) e = xprintf("-- expect runtime error: %d:%d: %s", o.line, o.col, msg + 9);
        else e = xprintf("-- reference failed: %s", stc_strerror(rc));
        trun_outcome_free(&o);
    }
    free(diags);
    stc_program_free(prog);
    stc_env_free(env);
    return e;
}

char *diff_expectation(const char *src)
{
    if (!diff_use_fork) return expectation(src);
    int fd;
    pid_t pid = spawn(&fd, true);
    if (pid == 0) {
        char *e = expectation(src);
        verdict v = {.ref = e};
        diff_send(fd, &v, NULL);
        _exit(0);
    }
    verdict v;
    bool ok = diff_receive(fd, &v, NULL);
    close(fd);
    if (reap(pid, &v) || !ok) {
        verdict_free(&v);
        return xprintf("-- (the reference evaluator crashes on this program: write the expectation by hand)");
    }
    free(v.got);
    return v.ref;
}
