/* run.c - stc_run: evaluate a program's main, with the parallel runtime
 * (src/flow) taking over every smap it can, or with the reference
 * evaluator alone when opts->reference is set. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/pool.h"
#include "api/program.h"
#include "api/testing.h"
#include "eval/eval.h"
#include "flow/flow.h"
#include "sched/sched.h"
#include "trace/profile.h"
#include "trace/trace.h"
#include "value/result.h"
#include "value/value.h"

static int run_default_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > STC_MAX_WORKERS ? STC_MAX_WORKERS : (int)n;
}

static int run_with(stc_program *prog, const stc_run_opts *opts, const run_testing_opts *t, sched_pool *pool,
                    const stc_stream *io, stc_result **out);
static int run_counted(stc_program *prog, const stc_run_opts *opts, const run_testing_opts *t, sched_pool *pool,
                       const stc_stream *io, stc_result **out);

int stc_run(stc_program *prog, const stc_run_opts *opts, stc_result **out)
{
    return stc_run_stream(prog, opts, NULL, out);
}

bool stc_program_takes_input(const stc_program *prog) { return prog && prog->ir->main_param; }

int stc_run_stream(stc_program *prog, const stc_run_opts *opts, const stc_stream *io, stc_result **out)
{
    return stc__run_testing(prog, opts, NULL, io, out);
}

int stc__run_testing(stc_program *prog, const stc_run_opts *opts, const run_testing_opts *testing, const stc_stream *io,
                stc_result **out)
{
    if (!out) return STC_EINVAL;
    *out = NULL;
    if (!prog) return STC_EINVAL;
    stc_run_opts o = opts ? *opts : (stc_run_opts){0};
    run_testing_opts t = testing ? *testing : (run_testing_opts){0};
    if (o.workers < 0 || o.workers > STC_MAX_WORKERS || o.queue_capacity < 0 || o.max_batches < 0 ||
        t.watchdog_ms < 0)
        return STC_EINVAL;
    if (o.pool && !o.reference) {
        int pw = stc_pool_workers(o.pool);
        if (o.workers && o.workers != pw) return STC_EINVAL;
        o.workers = pw;
        pthread_mutex_lock(&o.pool->in_use);
        stc_run_opts inner = o;
        inner.pool = NULL;
        int rc = run_counted(prog, &inner, &t, o.pool->sched, io, out);
        pthread_mutex_unlock(&o.pool->in_use);
        return rc;
    }
    return run_counted(prog, &o, &t, NULL, io, out);
}

/* Counts change plainly on this thread while it runs the program alone
 * (value.h, "Reference counts"); its parallel jobs switch their workers to
 * atomic counts.  The host's own mode comes back at the end: the result's
 * values are the host's, counted atomically by its threads. */
static int run_counted(stc_program *prog, const stc_run_opts *opts, const run_testing_opts *t, sched_pool *pool,
                       const stc_stream *io, stc_result **out)
{
    bool was = stc__val_counts_set_plain(true);
    int rc = run_with(prog, opts, t, pool, io, out);
    stc__val_counts_set_plain(was);
    return rc;
}

/* stc_run on a given scheduler pool (NULL: the run makes its own). */
static int run_with(stc_program *prog, const stc_run_opts *opts, const run_testing_opts *t, sched_pool *pool,
                    const stc_stream *io, stc_result **out)
{
    stc_run_opts o = *opts;
    const ir_program *p = prog->ir;
    const char **names = NULL;
    if (p->nthreads) {
        names = malloc((size_t)p->nthreads * sizeof *names);
        if (!names) return STC_ENOMEM;
        for (int i = 0; i < p->nthreads; i++) names[i] = p->threads[i]->name;
    }
    stc_result *res = stc__result_new((size_t)p->nthreads, names);
    free(names);
    if (!res) return STC_ENOMEM;
    flow_runtime *rt = NULL;
    trace_writer *trace = NULL;
    if (!o.reference) {
        int workers = o.workers ? o.workers : run_default_workers();
        if (o.trace_path && !(trace = stc__trace_open(o.trace_path, workers, p->file ? p->file : "stc"))) {
            stc_result_free(res);
            return errno == ENOMEM ? STC_ENOMEM : STC_EIO;
        }
        /* A 1-worker profile measures what 2 workers would cost, when the
         * process may use 2 CPUs: values crossing between the cores cost a
         * pipeline more than its stage times show (exec.c, "The sample"). */
        bool sample = o.profile && workers == 1 && !trace && !pool && !o.remote && t->profile_sample >= 0 &&
                      (t->profile_sample > 0 || stc__sched_cpus_allowed() >= 2);
        flow_opts fo = {.workers = workers, .sample = sample, .queue_capacity = o.queue_capacity, .max_batches = o.max_batches,
                        .perturb_seed = t->perturb_seed, .watchdog_ms = t->watchdog_ms,
                        .trial_refusals = t->trial_refusals, .shuttle_items = t->shuttle_items, .profile = o.profile,
                        .trace = trace, .pool = pool, .remote = o.remote};
        _Static_assert(RUN_TESTING_STAGES == FLOW_OWNED_FEED, "one figure per stage");
        memcpy(fo.owned_item_ns, t->owned_item_ns, sizeof fo.owned_item_ns);
        rt = stc__flow_runtime_new(p, &fo);
        if (!rt) {
            stc__trace_close(trace);
            stc_result_free(res);
            return STC_ENOMEM;
        }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = stc__eval_run_hooked(p, res, rt ? stc__flow_runtime_hooks(rt) : NULL, o.cancel, io);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rt && o.profile) {
        double wall = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (!(res->profile = stc__flow_runtime_profile(rt, wall)) && rc == 0) rc = STC_ENOMEM;
    }
    int trace_rc = stc__trace_close(trace); /* before the runtime: it owns the stage names */
    if (rt) {
        res->stats = stc__flow_runtime_stats(rt);
        stc__flow_runtime_free(rt);
    }
    if (trace_rc != 0 && rc == 0) {
        stc_result_free(res);
        return STC_EIO;
    }
    if (rc != 0 && rc != STC_ERUNTIME && !res->err.message) {
        stc_result_free(res);
        return rc;
    }
    *out = res;
    if (rc == 0) return 0;
    return res->err.code == STC_ECANCELED ? STC_ECANCELED : STC_ERUNTIME;
}
