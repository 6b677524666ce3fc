/* difftest.c - differential testing of stc's parallel runtime against the
 * reference evaluator, on random programs from gen.c (tests/diff/README.md).
 *
 *   difftest [--seed S] [--count N] [--verbose] [--long] [--perturb] [--print] [--no-fork]
 *            [--size THREADS,ITEMS,DEPTH,STAGES]
 *
 * For each seed S..S+N-1 it generates a program, runs it under the
 * reference evaluator and under the runtime at 1, 2, 3 and 8 workers with
 * queue capacities 1 and 0 (the default), at 2 and 3 workers with jobs
 * going between fused and the pipeline every few items (the shuttle,
 * run_testing_opts.shuttle_items), at 1 worker as a profile that samples
 * its pipelines at 2 (run_testing_opts.profile_sample, once with the
 * shuttle), and compares the outcomes byte
 * for byte (diffrun.c). Programs run in a child process (one child for many
 * programs, a new one after a failure), so a crash or a hang (no outcome
 * within 60 s) is reported with its seed too. On a failure it prints the
 * seed, the mode, both outcomes and the program, shrinks the program
 * (shrink.h) and prints the smallest failing one with the reference's
 * expectation, ready for tests/diff/regress.
 *
 * --long: 100000 programs (unless --count is given). --perturb: two more
 * modes with the scheduler's perturbation on (run_testing_opts.perturb_seed).
 * --verbose: print every program with the reference's outcome.
 * --print: print every program with its expectation, and run nothing else.
 * --no-fork: run everything in this process (for a debugger).
 * --size: the generator's size (default 12,300,4,4; see gen.h).
 * Ends with "difftest: N passed, N failed"; exit status 1 on any failure. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diffrun.h"
#include "gen.h"
#include "shrink.h"

/* The first line of a printed program (a tests/lang comment). */
#define PRINT_HEADER "-- difftest --seed %llu: a generated program, with the reference evaluator's outcome\n%s"

/* The second comment line of a printed program with let chains outside smap. */
static const char *chains_line(const gen_info *info)
{
    return info->chains ? "-- with chains of independent lets outside smap (let tasks)\n" : "";
}

/* ---- Shrinking ---- */

/* Does src fail the same way as the original (ud)? A crash must happen
 * twice: without a sanitizer, memory errors crash only now and then. */
static bool still_fails(const char *src, void *ud)
{
    const verdict *orig = ud;
    bool same = true;
    for (int k = 0; k < (orig->kind == V_CRASH ? 2 : 1) && same; k++) {
        verdict v;
        diff_check(src, orig->mode, 3, &v, NULL, true);
        same = v.kind == orig->kind && (v.kind != V_CRASH || v.status == orig->status);
        verdict_free(&v);
    }
    return same;
}

/* Regenerates the seed with smaller sizes (one dimension at a time, the
 * smallest value first), then shrinks the text. */
static char *shrink(unsigned long long seed, gen_size size, const verdict *orig, int *tries)
{
    char *best = gen_program(seed, size, NULL);
    static const int items[] = {0, 1, 2, 3, 5, 10, 30, 100}, small[] = {0, 1, 2, 3, 4, 6, 8};
    int *dims[4] = {&size.items, &size.stages, &size.threads, &size.depth};
    int n = 0;
    for (int d = 0; d < 4; d++) {
        const int *ladder = d == 0 ? items : small;
        int len = d == 0 ? 8 : 7, orig_value = *dims[d];
        for (int k = 0; k < len && ladder[k] < orig_value; k++) {
            *dims[d] = ladder[k];
            char *src = gen_program(seed, size, NULL);
            n++;
            if (src && still_fails(src, (void *)orig)) {
                free(best);
                best = src;
                break;
            }
            free(src);
            *dims[d] = orig_value;
        }
    }
    int text_tries = 0;
    char *small_src = shrink_text(best, still_fails, (void *)orig,
                                  (shrink_budget){.max_tries = 3000, .max_seconds = 120}, &text_tries);
    free(best);
    *tries = n + text_tries;
    return small_src;
}

static void report(unsigned long long seed, gen_size size, const char *src, const verdict *v)
{
    if (v->kind == V_MISMATCH)
        printf("FAIL seed %llu [%s]\n  reference: %s\n  runtime:   %s\nprogram:\n%s", seed,
               diff_mode_name(v->mode), v->ref, v->got, src);
    else if (v->kind == V_COMPILE)
        printf("FAIL seed %llu: the generated program does not compile (a generator bug)\n%sprogram:\n%s", seed,
               v->ref, src);
    else
        printf("FAIL seed %llu: %s\nprogram:\n%s", seed, v->ref, src);
    if (v->kind == V_COMPILE) return;
    fflush(stdout);
    int tries = 0;
    char *small = shrink(seed, size, v, &tries);
    char *file = xprintf("-- difftest --seed %llu: %s\n%s", seed,
                         v->kind == V_MISMATCH ? "the runtime differs from the reference" : v->ref,
                         small ? small : "");
    char *e = diff_expectation(file);
    printf("shrunk (%d variants tried) to %zu bytes; for tests/diff/regress/seed_%llu.stc:\n%s%s\n", tries,
           strlen(file), seed, file, e);
    verdict again;
    diff_check(file, v->mode, 3, &again, NULL, true);
    if (again.kind == V_MISMATCH)
        printf("  the shrunk program at %s gives\n  runtime:   %s\n", diff_mode_name(again.mode), again.got);
    else if (again.kind == V_CRASH)
        printf("  the shrunk program: %s\n", again.ref);
    verdict_free(&again);
    free(e);
    free(file);
    free(small);
}

/* ---- The run ---- */

typedef struct run {
    gen_size size;
    unsigned long long seed;
    long long count, passed, failed, threads, sites;
    long long chained, chained_tasks, plain_tasks; /* programs with let chains; with tasks run at 8 workers */
    bool verbose;
    diff_totals tot;
} run;

/* One program's verdict: counted, and reported when it is a failure. t:
 * what its runs did. */
static void judge(run *r, long long i, verdict *v, const diff_totals *t)
{
    unsigned long long s = r->seed + (unsigned long long)i;
    gen_info info;
    char *src = gen_program(s, r->size, &info);
    r->threads += info.threads;
    r->sites += info.error_injected;
    r->chained += info.chains > 0;
    if (t->task_groups > 0) ++*(info.chains > 0 ? &r->chained_tasks : &r->plain_tasks);
    diff_seed = s;
    if (r->verbose) {
        char *file = xprintf(PRINT_HEADER "%s", s, chains_line(&info), src);
        char *e = diff_expectation(file);
        printf("%s%s\n", file, e);
        free(e);
        free(file);
    }
    if (v->kind == V_AGREE) {
        r->passed++;
        if (r->verbose) printf("ok seed %llu: every mode gives the reference's outcome\n", s);
    } else {
        r->failed++;
        report(s, r->size, src, v);
    }
    free(src);
    fflush(stdout);
}

/* In a child: programs from..count-1, one verdict each down fd. */
static void batch_child(const run *r, long long from, int fd)
{
    for (long long i = from; i < r->count; i++) {
        diff_seed = r->seed + (unsigned long long)i;
        char *src = gen_program(diff_seed, r->size, NULL);
        verdict v;
        diff_totals t = {0};
        alarm(DIFF_TIMEOUT_S);
        diff_check_here(src, 0, 0, &v, &t);
        diff_send(fd, &v, &t);
        verdict_free(&v);
        free(src);
    }
    _exit(0);
}

static void add_totals(diff_totals *a, const diff_totals *b)
{
    a->pipelines += b->pipelines, a->sequential += b->sequential, a->items += b->items;
    a->task_groups += b->task_groups, a->errors += b->errors, a->shuttled += b->shuttled;
    a->sampled += b->sampled;
}

/* Runs the programs in batch children: after a failure (or a crash, found
 * again alone in its own child) a new child goes on with the next seed. */
static void run_batches(run *r)
{
    for (long long i = 0; i < r->count;) {
        int fds[2];
        fflush(stdout);
        pid_t pid = pipe(fds) == 0 ? fork() : -1;
        if (pid < 0) {
            perror("difftest: pipe/fork");
            exit(2);
        }
        if (pid == 0) {
            close(fds[0]);
            batch_child(r, i, fds[1]);
        }
        close(fds[1]);
        verdict v;
        diff_totals t;
        bool failed = false;
        while (i < r->count && !failed && diff_receive(fds[0], &v, &t)) {
            add_totals(&r->tot, &t);
            failed = v.kind != V_AGREE;
            if (failed) kill(pid, SIGKILL);
            judge(r, i++, &v, &t);
            verdict_free(&v);
        }
        close(fds[0]);
        int status;
        while (waitpid(pid, &status, 0) < 0) {}
        if (failed || i == r->count) continue;
        /* The child died at program i: check it alone, in a fresh child. */
        char *src = gen_program(r->seed + (unsigned long long)i, r->size, NULL);
        diff_seed = r->seed + (unsigned long long)i;
        t = (diff_totals){0};
        diff_check(src, 0, 0, &v, &t, false);
        add_totals(&r->tot, &t);
        free(src);
        if (v.kind == V_AGREE) {
            verdict_free(&v);
            v = (verdict){.kind = V_CRASH, .status = status,
                          .ref = xprintf("the batch child died here (wait status %d), but not when run alone",
                                         status)};
        }
        judge(r, i++, &v, &t);
        verdict_free(&v);
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    run r = {.seed = 1, .count = -1, .size = gen_default_size()};
    bool longrun = false, print = false;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) r.seed = strtoull(argv[++i], &end, 10);
        else if (!strcmp(argv[i], "--count") && i + 1 < argc) r.count = strtoll(argv[++i], &end, 10);
        else if (!strcmp(argv[i], "--verbose")) r.verbose = true;
        else if (!strcmp(argv[i], "--long")) longrun = true;
        else if (!strcmp(argv[i], "--perturb")) diff_nmodes = 14;
        else if (!strcmp(argv[i], "--print")) print = true;
        else if (!strcmp(argv[i], "--no-fork")) diff_use_fork = false;
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            gen_size *z = &r.size;
            int got = sscanf(argv[++i], "%d,%d,%d,%d", &z->threads, &z->items, &z->depth, &z->stages);
            end = got == 4 ? "" : argv[i];
        } else end = argv[i];
        if (end && *end) {
            fprintf(stderr, "usage: difftest [--seed S] [--count N] [--verbose] [--long] [--perturb] [--print] "
                            "[--no-fork] [--size THREADS,ITEMS,DEPTH,STAGES]\n");
            return 2;
        }
    }
    if (r.count < 0) r.count = longrun ? 100000 : 2000;
    if (print) {
        for (long long i = 0; i < r.count; i++) {
            unsigned long long s = r.seed + (unsigned long long)i;
            gen_info info;
            char *src = gen_program(s, r.size, &info);
            char *file = xprintf(PRINT_HEADER "%s", s, chains_line(&info), src);
            char *e = diff_expectation(file);
            printf("%s%s\n", file, e);
            free(e);
            free(file);
            free(src);
        }
        return 0;
    }
    double t0 = now();
    if (diff_use_fork) {
        run_batches(&r);
    } else {
        for (long long i = 0; i < r.count; i++) {
            diff_seed = r.seed + (unsigned long long)i;
            char *src = gen_program(diff_seed, r.size, NULL);
            verdict v;
            diff_totals t = {0};
            diff_check_here(src, 0, 0, &v, &t);
            add_totals(&r.tot, &t);
            free(src);
            judge(&r, i, &v, &t);
            verdict_free(&v);
        }
    }
    double dt = now() - t0;
    printf("difftest: %lld programs in %.1f s (%.0f programs/s, %d modes each); threads %lld, injected error "
           "sites %lld, runtime errors %lld; at 8 workers: pipelines %lld, sequential smaps %lld, items %lld, "
           "tuple tasks %lld; in the shuttle modes, trips back to fused %lld; in the sample modes, jobs sampled %lld\n",
           r.count, dt,
           dt > 0 ? (double)r.count / dt : 0.0, diff_nmodes, r.threads, r.sites, r.tot.errors, r.tot.pipelines,
           r.tot.sequential, r.tot.items, r.tot.task_groups, r.tot.shuttled, r.tot.sampled);
    printf("difftest: programs with let chains outside smap %lld (%lld of them ran tasks at 8 workers), without "
           "%lld (%lld ran tasks)\n", r.chained, r.chained_tasks, r.count - r.chained, r.plain_tasks);
    printf("difftest: %lld passed, %lld failed\n", r.passed, r.failed);
    return r.failed ? 1 : 0;
}
