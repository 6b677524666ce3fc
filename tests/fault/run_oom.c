/* run_oom.c - allocation-failure injection through the public API, for
 * the reference evaluator and the parallel runtime.
 *
 * For each program and each mode (reference, 1 worker, 2 workers with
 * queue capacity 1), it compiles once, then runs the program once per
 * allocation the run makes, failing that allocation; then again failing
 * every allocation from that one on ("persistently").  Every run must
 * either give exactly the normal output or fail cleanly with an
 * out-of-memory error; nothing may crash, hang or leak (the ctest runs it
 * in every build, so ASan/LSan and TSan see it too).  Allocations are
 * counted across all workers, so with 2 workers "the N-th" is whichever
 * comes N-th in that run: a different schedule each time, by design.
 *
 * malloc, calloc and realloc are wrapped with ld --wrap (see CMakeLists).
 * Programs are compiled and modes made by tests/support/run_modes.h; the
 * runs are this file's own, as the injection must stop between a run and
 * the printing of its result (trun_run does both).
 * Ends with "fault_oom: N passed, N failed". */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_modes.h"
#include "stc.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);

static atomic_long oom_armed = -1;  /* allocation number to fail, -1: none */
static atomic_long oom_count;       /* allocations since arming */
static atomic_bool oom_persistent;  /* fail every allocation from the armed one on */
static atomic_int oom_failed;       /* an allocation was failed */

static int oom_should_fail(void)
{
    long armed = atomic_load(&oom_armed);
    if (armed < 0) return 0;
    long n = atomic_fetch_add(&oom_count, 1);
    if (n == armed || (n > armed && atomic_load(&oom_persistent))) {
        atomic_store(&oom_failed, 1);
        return 1;
    }
    return 0;
}
void *__wrap_malloc(size_t n) { return oom_should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return oom_should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return oom_should_fail() ? NULL : __real_realloc(p, n); }

static int64_t c_fold(int64_t s, int64_t x) { return (s * 31 + x) % 1000003; }
static int cfn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    int64_t *s = state;
    if (in->as.i < 0) return stc_ctx_error(cx, "negative input %lld", (long long)in->as.i);
    *s = c_fold(*s, in->as.i);
    stc_value items[2] = {stc_value_int(*s), stc_value_new_str("ab", 2)};
    if (items[1].tag == STC_T_INVALID) return STC_ENOMEM;
    *out = stc_value_new_tuple(2, items);
    return out->tag == STC_T_INVALID ? STC_ENOMEM : 0;
}
static int cinit(void *state, const stc_value *init, void *user)
{
    (void)user;
    *(int64_t *)state = init ? init->as.i : 0;
    return 0;
}
static int cval(const void *state, stc_value *out, void *user)
{
    (void)user;
    stc_value items[1] = {stc_value_int(*(const int64_t *)state)};
    *out = stc_value_new_list(1, items);
    return out->tag == STC_T_INVALID ? STC_ENOMEM : 0;
}

static const char *progs[] = {
    /* keyed threads: a direct call's shards (string keys), an inner smap's, and one outside smap */
    "fun acc(k, x, s) = (s + x, s + x)\nfun cnt(w, n) = (n + 1, n + 1)\n"
    "keyed thread a = acc init 0\nkeyed thread c = cnt init 0\n"
    "main = (smap(fn x => (a(str(x % 5), x), smap(fn w => c(w), [x % 3, x % 4])), range(0, 30)), a(\"1\", 2))\n",
    /* keyed threads: a second sharded smap splits the first's keys, and both merge */
    "fun cnt(w, n) = (n + 1, n + 1)\nkeyed thread c = cnt init 0\n"
    "main = let a = smap(fn x => c(str(x % 7)), range(0, 20)) in (a, smap(fn x => c(str(x % 9)), range(0, 20)))\n",
    /* a pipeline with a branch and a string-carrying C thread */
    "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\n"
    "thread a = acc init 0\nthread b = acc init 1\nthread c = cthr init 5\n"
    "main = smap(fn x => let y = a(x) in if y % 2 == 0 then b(y) else let (p, q) = c(y % 100) in p + len(q),"
    " range(0, 40))\n",
    /* replicated, g x h, nested smap, a tuple of tasks */
    "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\n"
    "fun rd(x, s) = (x * s, s)\nfun gh(x, s) = (x + 1, s * 3 % 1000003)\n"
    "thread a = acc init 0\nthread r = rd init 3\nthread g = gh init 1\nthread b = acc init 2\n"
    "main = (smap(fn x => b(g(r(a(x)) + len(smap(fn y => y, [x, x])))), range(0, 30)), a(1), b(2))\n",
    /* an error in the middle of a pipeline */
    "thread a = cthr init 1\nthread b = cthr init 2\n"
    "main = smap(fn x => let (p, s) = a(x) in b(if x == 17 then 0 - 1 else p % 7), range(0, 30))\n",
    /* inl/inr values through a case in the body */
    "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\nthread a = acc init 0\nthread b = acc init 0\n"
    "main = smap(fn x => case (if x % 3 == 0 then inl a(x) else inr [x]) of inl v => b(v) | inr l => len(l),"
    " [1, 2, 3, 4, 5, 6])\n",
    /* values with sharing: equality and str() use memo tables past 4096 steps (finding 3) */
    "fun d(x) = [x, x]\nfun d8(x) = d(d(d(d(d(d(d(d(x))))))))\n"
    "main = let x = d8(d8(1.5)) in (x == d8(d8(1.5)), x == x, len(str(d8(d(d(d(d(d(1)))))))),"
    " smap(fn k => d8(d8(k)) == d8(d8(2)), [1, 2]))\n",
    /* From the evaluator-only stc__eval_oom.c this file replaced: case on ints, closures, a thread
     * outside smap, errors from a C thread, nth and a case with no match, deep recursion,
     * a thread of a tuple. (Not its `loop(0)` to the depth limit: 136 runs of that took
     * 9 s, three quarters of this test's time, for a path tests/lang covers.) */
    "fun foo(x, s) = (x + 2, s + 2)\nfun bar(x, s) = (x * 3, s + 3)\nthread f = foo init 0\n"
    "thread b1 = bar init 0\nthread b2 = bar init 0\n"
    "main = smap(fn x => let y = f(x) in case y of 4 => b1(y) | 8 => b2(y), [2, 6])\n",
    "fun mk(a) = fn x => fn y => (a, [x, y], \"s\")\nfun acc(x, s) = ((s, x), [x])\nthread t = acc init [0]\n"
    "main = let f = mk(1) in let g = f(2) in (g(3), smap(fn p => t(p), [1, 2, 3]), inl (1, 2), range(0, 10))\n",
    "thread c = cthr init 5\nmain = (smap(fn x => c(x), [1, 2]), c(3))\n",
    "thread c = cthr init 5\nmain = (smap(fn x => c(x), [1, -2]), c(3))\n",
    "fun f(x) = case x of (a, b) => if a > 2 then nth([a], b) else 0\nmain = smap(f, [(1, 0), (3, 0), (4, 1)])\n",
    "fun f(v) = case v of inl x => x | inr y => 0\nmain = (f(inl 1), case inl [(1, \"x\")] of inr q => q)\n",
    "fun r(n) = if n == 0 then [n] else smap(fn x => x + 1, r(n - 1))\nmain = r(50)\n",
    "fun step(a, b, s) = (a - b + s, s + 1)\nthread t = step init 10\n"
    "main = (t(1, 2), smap(t, [(5, 1), (7, 10)]), let p = (0, 0) in t(p), smap(fn (a, b) => a * b, [(1, 2)]))\n",
    /* compiled thread calls (src/eval/kernel.c): a tuple output, a string state item, and a state
     * kept by state(t), so that the new state needs a new block */
    "fun f(x, s) = let (a, b) = s in ((a, x), (a + x, if x > 2 then \"big\" else b))\n"
    "fun g(x, s) = let (a, b) = s in ((), (a + x, b))\nthread t = f init (0, \"\")\nthread u = g init (0, 0)\n"
    "main = (smap(fn x => (state(t), t(x), u(x)), [1, 2, 3, 4]), state(u))\n",
    /* a state moved into a compiled call, its str items taken out (w), dropped (_) and left in
     * place (v), then the output tuple out of memory: each item released once */
    "fun f(x, s) = let (a, w, _, v) = s in ((a, w), (a + 1, x, x, v))\nthread t = f init (0, \"\", \"\", \"v\")\n"
    "main = smap(fn x => t(str(x)), [1, 2, 3, 4])\n",
};

/* Stream programs (fun main(xs)): run with a source of 40 strs "0".."39"
 * and a sink that collects the results; source and sink allocate too. */
static const char *stream_progs[] = {
    /* keyed threads: an inner smap's shards, on a stream */
    "fun cnt(w, n) = (n + 1, n + 1)\nkeyed thread c = cnt init 0\n"
    "fun main(lines) = smap(fn l => smap(c, words(concat(l, \" x y\"))), lines)\n",
    "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\nthread a = acc init 0\n"
    "fun main(lines) = smap(fn l => concat(str(a(parse_int(l))), l), lines)\n",
    "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\nthread a = acc init 0\nthread b = acc init 1\n"
    "fun main(lines) = smap(fn l => let n = parse_int(l) in if n == 33 then b(n / 0) else a(len(words(l)) + n),"
    " lines)\n",
    "fun main(lines) = let n = len(lines) in smap(fn l => concat(l, str(n)), lines)\n",
};

typedef struct oom_io {
    int next;
    char text[4096];
    size_t len;
} oom_io;

static int oom_source(void *ud, stc_value *item, stc_ctx *cx)
{
    (void)cx;
    oom_io *io = ud;
    if (io->next == 40) return 0;
    char s[16];
    int n = snprintf(s, sizeof s, "%d", io->next++);
    *item = stc_value_new_str(s, (size_t)n);
    return item->tag == STC_T_INVALID ? STC_ENOMEM : 1;
}

static int oom_sink(void *ud, long long index, stc_value v, stc_ctx *cx)
{
    (void)index;
    oom_io *io = ud;
    char *t = stc_value_to_text(v);
    (void)cx;
    if (!t) return STC_ENOMEM;
    io->len += (size_t)snprintf(io->text + io->len, sizeof io->text - io->len, "%s;", t);
    free(t);
    return 0;
}

/* The outcome of one run: JSON, or the error text; NULL when stc_run
 * itself gave up (ENOMEM before a result existed). rc receives its code. */
static char *oom_run(stc_program *prog, const stc_run_opts *opts, int *rc)
{
    stc_result *res = NULL;
    oom_io io = {0};
    if (stc_program_takes_input(prog))
        *rc = stc_run_stream(prog, opts, &(stc_stream){oom_source, &io, oom_sink, &io}, &res);
    else
        *rc = stc_run(prog, opts, &res);
    atomic_store(&oom_armed, -1); /* the harness's own allocations must not fail */
    char *txt = NULL, *out = NULL;
    if (res) txt = *rc == 0 ? stc_result_to_json(res) : stc_result_error_format(res);
    if (txt) { /* the sink's part first */
        size_t n = io.len + strlen(txt) + 2;
        if ((out = malloc(n))) snprintf(out, n, "%s|%s", io.text, txt);
    }
    free(txt);
    stc_result_free(res);
    return out;
}

int main(void)
{
    int passed = 0, failed = 0;
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "cthr", .fn = cfn, .type = "int -> (int, str)", .state_type = "int",
                          .state_size = 8, .state_init = cinit, .state_to_value = cval};
    if (!env || stc_env_add_thread(env, &def) != 0) return 1;
    const trun_mode modes[] = {{.reference = true}, {.workers = 1}, {.workers = 2, .queue_capacity = 1}};
    size_t nprogs = sizeof progs / sizeof *progs, nstream = sizeof stream_progs / sizeof *stream_progs;
    for (size_t k = 0; k < nprogs + nstream; k++) {
        const char *src = k < nprogs ? progs[k] : stream_progs[k - nprogs];
        stc_program *prog = NULL;
        char *diags = NULL;
        if (trun_compile(env, src, strlen(src), "f.stc", &prog, &diags) != 0) {
            printf("FAIL program %zu does not compile: %s\n", k, diags ? diags : "?");
            free(diags);
            failed++;
            continue;
        }
        for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
            const stc_run_opts opts = trun_opts(&modes[m]);
            char name[64];
            trun_mode_name(&modes[m], name, sizeof name);
            int base_rc;
            char *base = oom_run(prog, &opts, &base_rc);
            int bad = base ? 0 : 1;
            long runs = 0, nomem = 0;
            for (int persistent = 0; persistent < 2 && !bad; persistent++) {
                for (long n = 0;; n++) {
                    atomic_store(&oom_persistent, persistent != 0);
                    atomic_store(&oom_count, 0);
                    atomic_store(&oom_failed, 0);
                    atomic_store(&oom_armed, n);
                    int rc;
                    char *txt = oom_run(prog, &opts, &rc);
                    atomic_store(&oom_armed, -1);
                    runs++;
                    bool hit = atomic_load(&oom_failed);
                    bool same = txt && rc == base_rc && strcmp(txt, base) == 0;
                    bool clean_oom = rc == STC_ENOMEM || (txt && strstr(txt, "out of memory"));
                    if (!same && !clean_oom) {
                        printf("FAIL program %zu, %s, %s allocation %ld: rc %d: %s\n  normal: %s\n", k,
                               name, persistent ? "from" : "only", n, rc, txt ? txt : "(no result)", base);
                        bad = 1;
                    }
                    nomem += !same;
                    free(txt);
                    if (!hit || bad) break; /* the run made fewer than n+1 allocations: done */
                }
            }
            printf("%s program %zu, %s: %ld runs with a failed allocation, %ld ended out of memory\n",
                   bad ? "FAIL" : "ok", k, name, runs, nomem);
            bad ? failed++ : passed++;
            free(base);
        }
        stc_program_free(prog);
    }
    stc_env_free(env);
    printf("fault_oom: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
