/* lang_runner.c - runs the STCLang tests in tests/lang/ (every .stc file).
 *
 *   lang_runner [--workers LIST] [--queue-capacity LIST] [-v] [--filter S]
 *               [--perturb SEED] [--watchdog MS] PATH...
 *
 * PATH is a .stc file or a directory of them. A file holds one test, or
 * several: a line `-- test: NAME` starts a test that runs to the next such
 * line; the lines before the first one (the prelude) belong to every test
 * of the file. Each test is compiled on its own with every other line
 * blanked out, so line numbers are those of the file. Expectations are
 * comments anywhere in the test's lines:
 *
 *   -- expect: {"result": ..., "states": {...}}
 *       the exact stc_result_to_json line;
 *   -- expect compile error: LINE:COL: message substring
 *       (one or more) each must match a diagnostic at exactly LINE:COL
 *       whose message contains the substring;
 *   -- expect runtime error: LINE:COL: message substring
 *       the run fails at exactly LINE:COL and the rest of
 *       stc_result_error_format (after "FILE:LINE:COL: ") contains the
 *       substring, e.g. "division by zero (in thread 't', smap item 3)".
 *
 * A stream program (`fun main(xs) = ...`) reads its input from the test's
 *
 *   -- input: TEXT
 *       lines, one str item each (TEXT as it is after "-- input: "), and
 *       its JSON line starts with the items its sink received:
 *       {"items": [...], "result": ..., "states": {...}}.
 *
 * --workers LIST (e.g. ref,1,2,8; ref = the reference evaluator) and
 * --queue-capacity LIST (e.g. 1,0; 0 = default) run every test under each
 * combination; default: ref only. --perturb SEED runs the runtime with
 * schedule perturbation (random yields and sleeps in the scheduler) and
 * --watchdog MS makes a pipeline running longer than MS print its queues
 * and abort.  --remote gives every runtime run a remote executor
 * (tests/support/remote_fake.h: a server thread with its own compile of
 * the test), so the replicated stages that may go run there;
 * --remote-async does the same with an asynchronous one (stc_remote.start:
 * a batch away holds no worker; and two peers that own every serial stage
 * they may, tfake_set_peers: in every other test for the whole job, in
 * the others under the cost model told that every stage is cheap, so each
 * goes with its first batch and its states come back after its first
 * batches are back).  Modes and runs go through tests/support/run_modes.h; uses
 * only the public API (stc.h). Ends
 * with "lang: N passed, N failed"; exit status 1 when anything failed. */
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "remote_fake.h"
#include "run_modes.h"
#include "stc.h"

#define LR_MAX_MODES 64
#define LR_MAX_EXPECT 32
#define LR_MAX_INPUTS 256

typedef struct lr_mode {
    trun_mode mode;
    char name[64];
} lr_mode;

typedef enum lr_kind { LR_NONE, LR_JSON, LR_COMPILE, LR_RUNTIME } lr_kind;

typedef struct lr_expect {
    int line, col;   /* compile/runtime errors */
    const char *text; /* JSON line, or message substring (points into the file copy) */
} lr_expect;

typedef struct lr_test {
    const char *path, *name;
    int line;        /* of the `-- test:` line, or 1 */
    lr_kind kind;
    lr_expect expect[LR_MAX_EXPECT];
    int nexpect;
    const char *inputs[LR_MAX_INPUTS]; /* `-- input:` lines (point into the file copy) */
    int ninputs;
    const char *problem; /* a malformed test file: reported as a failure */
} lr_test;

typedef struct lr_state {
    lr_mode modes[LR_MAX_MODES];
    int nmodes;
    bool verbose;
    bool remote;     /* --remote or --remote-async */
    bool remote_async; /* --remote-async */
    const char *filter;
    int passed, failed;
    long long remote_batches; /* served by the fake executors */
    long long serial_batches; /* of them, by the peers owning serial stages (--remote-async) */
    long long remote_tests;   /* tests run with the fake (--remote-async: odd ones under the cost model) */
    long long shard_batches;  /* of those, keyed threads' shard stages' (batches and maps back) */
} lr_state;

static void lr_fail(lr_state *st, const lr_test *t, const char *mode, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void lr_fail(lr_state *st, const lr_test *t, const char *mode, const char *fmt, ...)
{
    printf("FAIL %s:%d (%s) [%s]\n", t->path, t->line, t->name, mode);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    st->failed++;
}

static void lr_pass(lr_state *st, const lr_test *t, const char *mode)
{
    if (st->verbose) printf("PASS %s:%d (%s) [%s]\n", t->path, t->line, t->name, mode);
    st->passed++;
}

static char *lr_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) { free(buf); return NULL; }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Parses "LINE:COL: rest" into t->expect[t->nexpect]. */
static void lr_add_expect(lr_test *t, const char *s, bool located)
{
    if (t->nexpect == LR_MAX_EXPECT) { t->problem = "too many expectations"; return; }
    lr_expect *e = &t->expect[t->nexpect++];
    while (*s == ' ') s++;
    if (located) {
        char *end;
        e->line = (int)strtol(s, &end, 10);
        if (end == s || *end != ':') { t->problem = "expected LINE:COL: after 'error:'"; return; }
        s = end + 1;
        e->col = (int)strtol(s, &end, 10);
        if (end == s || *end != ':') { t->problem = "expected LINE:COL: after 'error:'"; return; }
        s = end + 1;
        while (*s == ' ') s++;
    }
    e->text = s;
}

/* Reads the expectation in one line (NUL-terminated, no newline). */
static void lr_scan_line(lr_test *t, char *line)
{
    static const struct { const char *marker; lr_kind kind; } forms[] = {
        {"-- expect compile error:", LR_COMPILE},
        {"-- expect runtime error:", LR_RUNTIME},
        {"-- expect:", LR_JSON},
    };
    char *in = strstr(line, "-- input: ");
    if (in == line) {
        if (t->ninputs == LR_MAX_INPUTS) t->problem = "too many '-- input:' lines";
        else t->inputs[t->ninputs++] = in + 10;
        return;
    }
    char *p = strstr(line, "-- expect");
    if (!p) return;
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r')) line[--n] = '\0';
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        size_t m = strlen(forms[i].marker);
        if (strncmp(p, forms[i].marker, m) != 0) continue;
        if (t->kind != LR_NONE && (t->kind != forms[i].kind || t->kind != LR_COMPILE)) {
            t->problem = "conflicting or repeated expectations";
            return;
        }
        t->kind = forms[i].kind;
        lr_add_expect(t, p + m, forms[i].kind != LR_JSON);
        return;
    }
    if (p[9] == ' ' || p[9] == ':') t->problem = "malformed '-- expect' comment";
}

/* Is this line a `-- test: NAME` marker? Returns the name or NULL. */
static char *lr_marker(char *line)
{
    while (*line == ' ' || *line == '\t') line++;
    if (strncmp(line, "-- test:", 8) != 0) return NULL;
    line += 8;
    while (*line == ' ') line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\r')) line[--n] = '\0';
    return line;
}

static bool lr_located(const char *actual, const lr_expect *e, const char **rest)
{
    char *end;
    long l = strtol(actual, &end, 10);
    if (end == actual || *end != ':') return false;
    const char *c = end + 1;
    long col = strtol(c, &end, 10);
    if (end == c || *end != ':') return false;
    *rest = end + 1;
    return l == e->line && col == e->col;
}

static void lr_check_compile(lr_state *st, const lr_test *t, int rc, const stc_diags *d)
{
    if (rc == 0) {
        lr_fail(st, t, "compile", "  expected: compile error %d:%d: %s\n  actual:   compiled\n",
                t->expect[0].line, t->expect[0].col, t->expect[0].text);
        return;
    }
    bool ok = true;
    for (int i = 0; i < t->nexpect; i++) {
        const lr_expect *e = &t->expect[i];
        bool found = false;
        for (size_t j = 0; j < stc_diags_count(d) && !found; j++) {
            const char *msg = stc_diags_message(d, j);
            found = stc_diags_line(d, j) == e->line && stc_diags_col(d, j) == e->col && msg &&
                    strstr(msg, e->text);
        }
        if (found) continue;
        if (ok) lr_fail(st, t, "compile", "%s", "");
        ok = false;
        printf("  expected: compile error %d:%d: %s\n", e->line, e->col, e->text);
    }
    if (ok) {
        lr_pass(st, t, "compile");
        return;
    }
    if (!stc_diags_count(d)) printf("  actual:   no diagnostics (%s)\n", stc_strerror(rc));
    for (size_t j = 0; j < stc_diags_count(d); j++)
        printf("  actual:   %d:%d: %s\n", stc_diags_line(d, j), stc_diags_col(d, j),
               stc_diags_message(d, j));
}

/* A stream test's input and output. */
typedef struct lr_io {
    const lr_test *t;
    int next;
    char *items;          /* "[i0, i1, ..." as JSON */
    size_t len, cap;
} lr_io;

static int lr_source(void *ud, stc_value *item, stc_ctx *cx)
{
    (void)cx;
    lr_io *io = ud;
    if (io->next == io->t->ninputs) return 0;
    const char *s = io->t->inputs[io->next++];
    *item = stc_value_new_str(s, strlen(s));
    return item->tag == STC_T_INVALID ? STC_ENOMEM : 1;
}

static int lr_sink(void *ud, long long index, stc_value v, stc_ctx *cx)
{
    (void)cx;
    lr_io *io = ud;
    char *j = stc_value_to_json(v);
    if (!j) return STC_ENOMEM;
    size_t n = strlen(j) + 4;
    if (io->len + n >= io->cap) {
        io->cap = 2 * (io->len + n) + 64;
        char *g = realloc(io->items, io->cap);
        if (!g) {
            free(j);
            return STC_ENOMEM;
        }
        io->items = g;
    }
    io->len += (size_t)sprintf(io->items + io->len, "%s%s", index ? ", " : "[", j);
    free(j);
    return 0;
}

/* cheap: the placement of serial stages on the fake's peers decides on
 * figures of 1 ns an item for every stage (run_testing_opts.owned_item_ns). */
static void lr_check_run(lr_state *st, const lr_test *t, const char *file, stc_program *prog,
                         const lr_mode *m, const stc_remote *remote, bool cheap)
{
    stc_run_opts opts = trun_opts(&m->mode);
    if (!m->mode.reference) opts.remote = remote;
    trun_mode aids = m->mode;
    for (size_t s = 0; cheap && s < sizeof aids.owned_item_ns / sizeof aids.owned_item_ns[0]; s++) aids.owned_item_ns[s] = 1;
    lr_io io = {.t = t};
    bool streams = stc_program_takes_input(prog);
    trun_outcome o;
    int rc = trun_run(prog, &opts, &aids, &(stc_stream){lr_source, &io, lr_sink, &io}, &o);
    st->shard_batches += o.stats.remote_shard_serial;
    char *json = o.json, *err = o.error; /* taken from o */
    o.json = o.error = NULL;
    trun_outcome_free(&o);
    if (json && streams) { /* {"items": [...], "result": ... */
        size_t n = strlen(json) + io.len + 32;
        char *full = malloc(n);
        if (full) snprintf(full, n, "{\"items\": %s], %s", io.items ? io.items : "[", json + 1);
        free(json);
        json = full;
    }
    free(io.items);
    const lr_expect *e = &t->expect[0];
    if (t->kind == LR_JSON) {
        if (json && !strcmp(json, e->text)) lr_pass(st, t, m->name);
        else lr_fail(st, t, m->name, "  expected: %s\n  actual:   %s\n", e->text,
                     json ? json : err ? err : stc_strerror(rc));
    } else {
        /* Strip "FILE:" so the rest starts with LINE:COL. */
        size_t fl = strlen(file);
        const char *a = err && !strncmp(err, file, fl) && err[fl] == ':' ? err + fl + 1 : NULL;
        const char *rest = NULL;
        if (rc != 0 && a && lr_located(a, e, &rest) && strstr(rest, e->text))
            lr_pass(st, t, m->name);
        else
            lr_fail(st, t, m->name, "  expected: runtime error %d:%d: %s\n  actual:   %s\n", e->line,
                    e->col, e->text, json ? json : err ? err : stc_strerror(rc));
    }
    free(json);
    free(err);
}

static void lr_run_test(lr_state *st, const lr_test *t, const char *file, const char *src, size_t len)
{
    if (t->problem || t->kind == LR_NONE) {
        lr_fail(st, t, "-", "  bad test: %s\n", t->problem ? t->problem : "no expectation");
        return;
    }
    stc_env *env = stc_env_new();
    stc_program *prog = NULL;
    stc_diags *diags = NULL;
    int rc = env ? stc_compile(env, src, len, file, &prog, &diags) : STC_ENOMEM;
    if (t->kind == LR_COMPILE) {
        lr_check_compile(st, t, rc, diags);
    } else if (rc != 0) {
        char *text = stc_diags_format(diags);
        lr_fail(st, t, "compile", "  expected: %s%s\n  actual:   does not compile:\n%s",
                t->kind == LR_RUNTIME ? "runtime error " : "", t->expect[0].text,
                text ? text : stc_strerror(rc));
        free(text);
    } else {
        stc_program *twin = NULL;
        tfake *fake = NULL;
        if (st->remote && (stc_compile(env, src, len, file, &twin, NULL) != 0 || !(fake = tfake_start(twin, st->remote_async ? TFAKE_ASYNC : TFAKE_SERVE))))
            lr_fail(st, t, "remote", "  could not start the fake remote executor\n");
        /* asynchronous: 2 peers that own every serial stage they may, from
         * its first batch, for the job, or (every other test) until the cost
         * model, fed cheap figures, brings it back */
        bool cheap = fake && st->remote_async && st->remote_tests++ % 2 == 1;
        if (fake && st->remote_async) tfake_set_peers(fake, 2, cheap ? 0 : -1);
        for (int i = 0; i < st->nmodes; i++)
            lr_check_run(st, t, file, prog, &st->modes[i], fake ? tfake_remote(fake) : NULL, cheap);
        if (fake) st->serial_batches += tfake_peer_served(fake);
        if (fake) st->remote_batches += tfake_stop(fake, NULL, NULL);
        stc_program_free(twin);
    }
    stc_program_free(prog);
    stc_diags_free(diags);
    stc_env_free(env);
}

static void lr_run_file(lr_state *st, const char *path)
{
    size_t len = 0;
    char *text = lr_read(path, &len);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!text) {
        printf("FAIL %s: cannot read the file\n", path);
        st->failed++;
        return;
    }
    /* Split into lines: starts[i] .. the NUL that replaced its newline. */
    size_t nlines = 1;
    for (size_t i = 0; i < len; i++) nlines += text[i] == '\n';
    char **lines = calloc(nlines, sizeof *lines);
    char *scratch = malloc(len + 1), *src = malloc(len + 1);
    lr_test *tests = calloc(nlines + 1, sizeof *tests);
    size_t *first = calloc(nlines + 1, sizeof *first);
    if (!lines || !scratch || !src || !tests || !first) {
        printf("FAIL %s: out of memory\n", path);
        st->failed++;
        goto done;
    }
    memcpy(scratch, text, len + 1);
    size_t k = 0;
    lines[k++] = scratch;
    for (size_t i = 0; i < len; i++)
        if (scratch[i] == '\n') {
            scratch[i] = '\0';
            lines[k++] = scratch + i + 1;
        }

    /* Tests: [first line, end line) per `-- test:` section; prelude [0, p). */
    size_t ntests = 0, prelude = nlines;
    for (size_t i = 0; i < nlines; i++) {
        char *name = lr_marker(lines[i]);
        if (!name) continue;
        if (ntests == 0) prelude = i;
        tests[ntests] = (lr_test){.path = path, .name = name, .line = (int)i + 1};
        first[ntests++] = i;
    }
    if (ntests == 0) {
        tests[0] = (lr_test){.path = path, .name = base, .line = 1};
        first[0] = 0;
        ntests = 1;
        prelude = 0;
    }
    first[ntests] = nlines;
    for (size_t i = 0; i < prelude; i++)
        if (strstr(lines[i], "-- expect")) tests[0].problem = "'-- expect' in the prelude";

    for (size_t ti = 0; ti < ntests; ti++) {
        lr_test *t = &tests[ti];
        if (st->filter && !strstr(path, st->filter) && !strstr(t->name, st->filter)) continue;
        for (size_t i = first[ti]; i < first[ti + 1]; i++) lr_scan_line(t, lines[i]);
        /* The test's source: its lines and the prelude, all else blank. */
        size_t line = 0, j = 0;
        for (size_t i = 0; i < len; i++) {
            bool keep = line < prelude || (line >= first[ti] && line < first[ti + 1]);
            if (text[i] == '\n') {
                src[j++] = '\n';
                line++;
            } else if (keep) {
                src[j++] = text[i];
            }
        }
        src[j] = '\0';
        lr_run_test(st, t, base, src, j);
    }
done:
    free(first);
    free(tests);
    free(src);
    free(scratch);
    free(lines);
    free(text);
}

static int lr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void lr_run_path(lr_state *st, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        lr_run_file(st, path);
        return;
    }
    DIR *dir = opendir(path);
    if (!dir) {
        printf("FAIL %s: cannot open the directory\n", path);
        st->failed++;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 4, ".stc") != 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        size_t pl = strlen(path) + l + 2;
        names[n] = malloc(pl);
        if (!names[n]) break;
        snprintf(names[n++], pl, "%s/%s", path, de->d_name);
    }
    closedir(dir);
    if (n) qsort(names, n, sizeof *names, lr_cmp);
    for (size_t i = 0; i < n; i++) {
        lr_run_file(st, names[i]);
        free(names[i]);
    }
    free(names);
}

/* Every combination of the --workers and --queue-capacity lists into st->modes. */
static int lr_parse_modes(lr_state *st, const char *workers, const char *qcs, unsigned perturb, int watchdog_ms)
{
    trun_mode modes[LR_MAX_MODES];
    st->nmodes = trun_modes_parse(workers, qcs, perturb, watchdog_ms, modes, LR_MAX_MODES);
    for (int i = 0; i < st->nmodes; i++) {
        st->modes[i].mode = modes[i];
        trun_mode_name(&modes[i], st->modes[i].name, sizeof st->modes[i].name);
    }
    return st->nmodes > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    static lr_state st;
    const char *workers = "ref", *qcs = "0";
    unsigned perturb = 0;
    int npaths = 0, watchdog_ms = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workers") && i + 1 < argc) workers = argv[++i];
        else if (!strcmp(argv[i], "--queue-capacity") && i + 1 < argc) qcs = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) st.filter = argv[++i];
        else if (!strcmp(argv[i], "--perturb") && i + 1 < argc) perturb = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--watchdog") && i + 1 < argc) watchdog_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-v")) st.verbose = true;
        else if (!strcmp(argv[i], "--remote")) st.remote = true;
        else if (!strcmp(argv[i], "--remote-async")) st.remote = st.remote_async = true;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: lang_runner [--workers ref,1,2] [--queue-capacity 1,0] [-v] "
                            "[--filter S] [--perturb SEED] [--watchdog MS] [--remote | --remote-async] PATH...\n");
            return 2;
        } else argv[npaths++ + 1] = argv[i];
    }
    if (!npaths || lr_parse_modes(&st, workers, qcs, perturb, watchdog_ms) != 0) {
        fprintf(stderr, "lang_runner: need PATH... and valid --workers/--queue-capacity lists\n");
        return 2;
    }
    for (int i = 0; i < npaths; i++) lr_run_path(&st, argv[i + 1]);
    printf("lang: %d passed, %d failed\n", st.passed, st.failed);
    if (st.remote) {
        /* the executors must have run something, or --remote tests nothing */
        printf("lang: %lld batches ran on the fake remote executors\n", st.remote_batches);
        if (st.remote_batches == 0) return 1;
        if (st.remote_async) { /* and serial stages were owned there */
            printf("lang: %lld of them serial stages' (batches and states)\n", st.serial_batches);
            printf("lang: %lld of those keyed threads' shard stages' (batches and shard maps)\n", st.shard_batches);
            if (st.serial_batches == 0 || st.shard_batches == 0) return 1;
        }
    }
    return st.failed || !st.passed ? 1 : 0;
}
