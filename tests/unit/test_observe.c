/* test_observe.c - graph export, trace files and profiles through the
 * public API: the DOT names every stage, the trace is valid JSON with a
 * track per worker and a slice per stage, the profile's items add up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"
#include "api/testing.h"
#include "trace/profile.h"
#include "value/result.h"

static const char *observe_src =
    "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\n"
    "fun rd(x, s) = (x * s, s)\n"
    "fun count(x, n) = (x, n + 1)\n"
    "thread a = acc init 0\nthread r = rd init 3\nthread hi = count init 0\nthread lo = count init 0\n"
    "thread z = acc init 1\n"
    "main = smap(fn x => let y = r(a(x)) in z(if y % 2 == 0 then hi(y) else lo(y)), range(0, 300))\n";

#define observe_compile(env, src) UNIT_COMPILE(env, src, "obs.stc")

TEST(observe_graph_names_every_stage)
{
    stc_env *env = stc_env_new();
    stc_program *prog = observe_compile(env, observe_src);
    if (prog) {
        char *dot = stc_program_graph(prog, STC_GRAPH_STAGES);
        CHECK_CONTAINS(dot, "digraph stc {");
        CHECK_CONTAINS(dot, "smap at obs.stc:9:8");
        CHECK_CONTAINS(dot, "label=\"a\\nserial · line 9\"");
        CHECK_CONTAINS(dot, "replicated");           /* r is read-only */
        CHECK_CONTAINS(dot, "replicated, split");    /* the if */
        CHECK_CONTAINS(dot, "state fold (g x h), branch");
        CHECK_CONTAINS(dot, "-> p0_out [label=\"int\"]");
        free(dot);
        char *threads = stc_program_graph(prog, STC_GRAPH_THREADS);
        CHECK_CONTAINS(threads, "[label=\"r (reads)\"]");
        CHECK_CONTAINS(threads, "[label=\"a (writes)\"]");
        CHECK_CONTAINS(threads, "[label=\"hi (g x h)\"]");
        free(threads);
        CHECK(stc_program_graph(prog, 7) == NULL);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* stc_program_graph_run draws a keyed thread's shards as a run at N
 * workers has them: N (at most 8), none at 1 worker; bad counts are NULL. */
TEST(observe_graph_run_draws_the_shards)
{
    stc_env *env = stc_env_new();
    stc_program *prog = observe_compile(env, "fun cnt(w, n) = (n + 1, n + 1)\nkeyed thread c = cnt init 0\n"
                                             "main = smap(fn x => c(x % 5), range(0, 50))\n");
    if (prog) {
        char *three = stc_program_graph_run(prog, 1, 3), *one = stc_program_graph_run(prog, 1, 1);
        char *many = stc_program_graph_run(prog, 2, 100);
        CHECK_CONTAINS(three, "c [shard 1/3]");
        CHECK_CONTAINS(three, "c [shard 3/3]");
        CHECK_CONTAINS(three, "at 3 workers, a keyed thread in 3 shards");
        CHECK(three && !strstr(three, "/S]"));
        CHECK_CONTAINS(one, "runs on one worker");
        CHECK(one && !strstr(one, "[shard"));
        CHECK_CONTAINS(many, "c [shard 8/8]");
        CHECK_CONTAINS(many, "rank 0");
        CHECK(many && !strstr(many, "[shard 9/"));
        free(three);
        free(one);
        free(many);
        CHECK(stc_program_graph_run(prog, 1, 0) == NULL);
        CHECK(stc_program_graph_run(prog, 0, 2) == NULL);
        CHECK(stc_program_graph_run(NULL, 1, 2) == NULL);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* ---- a small JSON syntax check (objects, arrays, strings, numbers, words) ---- */

static const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

static const char *json_value(const char *p, int depth);

static const char *json_string(const char *p)
{
    if (*p++ != '"') return NULL;
    while (*p && *p != '"') {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') p++;
        if (*p) p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *json_value(const char *p, int depth)
{
    p = json_ws(p);
    if (depth > 64) return NULL;
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        bool object = *p == '{';
        p = json_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (object) {
                if (!(p = json_string(json_ws(p)))) return NULL;
                p = json_ws(p);
                if (*p++ != ':') return NULL;
            }
            if (!(p = json_value(p, depth + 1))) return NULL;
            p = json_ws(p);
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (*p == '"') return json_string(p);
    if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    char *end;
    strtod(p, &end);
    return end > p ? end : NULL;
}

static bool json_valid(const char *text)
{
    const char *end = json_value(text, 0);
    return end && *json_ws(end) == '\0';
}

static char *observe_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

TEST(observe_trace_is_valid_json_with_tracks_and_slices)
{
    stc_env *env = stc_env_new();
    stc_program *prog = observe_compile(env, observe_src);
    char path[] = "/tmp/stc_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    if (prog && fd >= 0) {
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 3, .queue_capacity = 2, .trace_path = path}, &res), 0);
        stc_result_free(res);
        char *text = observe_read(path);
        CHECK(text && json_valid(text));
        CHECK_CONTAINS(text, "\"traceEvents\": [");
        for (int w = 0; w < 3; w++) {
            char want[64];
            snprintf(want, sizeof want, "\"tid\": %d, \"args\": {\"name\": \"worker %d", w, w);
            CHECK_CONTAINS(text, want);
        }
        CHECK_CONTAINS(text, "{\"name\": \"a (line 9)\", \"cat\": \"stage\", \"ph\": \"X\"");
        CHECK_CONTAINS(text, "{\"name\": \"hi (line 9)\"");
        CHECK_CONTAINS(text, "{\"name\": \"z (line 9)\"");
        free(text);
        /* Tuple items and independent lets run as tasks: a slice per group. */
        static const char *const task_src[2][2] = {
            {"main = (a(sin_iter(1000, 1.0)), b(2.0))\n", "tuple task"},
            {"main = let x = a(sin_iter(1000, 1.0)) in let y = b(2.0) in x + y\n", "let task"},
        };
        for (int k = 0; k < 2; k++) {
            char src[256], slice[96];
            snprintf(src, sizeof src, "fun acc(x, s) = (s + x, s + x)\nthread a = acc init 0.0\n"
                                      "thread b = acc init 0.0\n%s", task_src[k][0]);
            snprintf(slice, sizeof slice, "{\"name\": \"%s\", \"cat\": \"task\", \"ph\": \"X\"", task_src[k][1]);
            stc_program *tp = observe_compile(env, src);
            CHECK(tp != NULL);
            if (tp) {
                CHECK_INT(stc_run(tp, &(stc_run_opts){.workers = 2, .trace_path = path}, &res), 0);
                CHECK_INT(stc_result_stats(res).task_groups, 1);
                stc_result_free(res);
                text = observe_read(path);
                CHECK(text && json_valid(text));
                CHECK_CONTAINS(text, slice);
                free(text);
            }
            stc_program_free(tp);
        }
        /* More slices than a worker's buffer holds: the buffer is written
         * out mid-run, which shows as a slice of its own, and the file is
         * still one valid JSON value. */
        stc_program *lp = observe_compile(env, "main = smap(fn x => x + 1, range(0, 6000))\n");
        CHECK(lp != NULL);
        if (lp) {
            CHECK_INT(stc_run(lp, &(stc_run_opts){.workers = 1, .queue_capacity = 1, .trace_path = path}, &res), 0);
            stc_result_free(res);
            text = observe_read(path);
            CHECK(text && json_valid(text));
            CHECK_CONTAINS(text, "{\"name\": \"trace write\", \"cat\": \"trace\", \"ph\": \"X\"");
            free(text);
        }
        stc_program_free(lp);
        /* An unwritable path is an I/O error, and nothing runs. */
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 2, .trace_path = "/nonexistent/dir/t.json"}, &res),
                  STC_EIO);
        CHECK(res == NULL);
    }
    unlink(path);
    stc_program_free(prog);
    stc_env_free(env);
}

/* One worker runs each batch through the stages itself (fused), stage by
 * stage when profiling: the profile still has every stage's items, and
 * the trace a slice per stage activation on worker 0. */
TEST(observe_profile_and_trace_at_one_worker)
{
    stc_env *env = stc_env_new();
    stc_program *prog = observe_compile(env, observe_src);
    char path[] = "/tmp/stc_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    if (prog && fd >= 0) {
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 1, .queue_capacity = 7, .profile = true}, &res), 0);
        size_t n = stc_result_profile_count(res);
        CHECK(n >= 4);
        long long hi = -1, lo = -1, first = -1, last = -1, batches = 0;
        for (size_t i = 0; i < n; i++) {
            stc_stage_profile s = stc_result_profile_stage(res, i);
            if (i == 0) first = s.items, batches = s.batches;
            last = s.items;
            if (!strcmp(s.name, "hi")) hi = s.items;
            if (!strcmp(s.name, "lo")) lo = s.items;
            CHECK(s.busy_ms >= 0 && s.batches >= 1);
        }
        CHECK_INT(first, 300);
        CHECK_INT(last, 300);
        CHECK(hi > 0 && lo > 0);
        CHECK_INT(hi + lo, 300);
        CHECK(batches >= 300 / 7); /* at most 7 items a batch */
        stc_result_free(res);
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 1, .trace_path = path}, &res), 0);
        stc_result_free(res);
        char *text = observe_read(path);
        CHECK(text && json_valid(text));
        CHECK_CONTAINS(text, "{\"name\": \"a (line 9)\", \"cat\": \"stage\", \"ph\": \"X\"");
        CHECK_CONTAINS(text, "{\"name\": \"z (line 9)\"");
        free(text);
    }
    unlink(path);
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(observe_profile_items_add_up)
{
    stc_env *env = stc_env_new();
    stc_program *prog = observe_compile(env, observe_src);
    if (prog) {
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 2, .profile = true}, &res), 0);
        size_t n = stc_result_profile_count(res);
        CHECK(n >= 4);
        long long hi = -1, lo = -1, first = -1, last = -1;
        double busy = 0;
        for (size_t i = 0; i < n; i++) {
            stc_stage_profile s = stc_result_profile_stage(res, i);
            CHECK_INT(s.pipeline, 0);
            CHECK_STR(s.smap, "obs.stc:9:8");
            if (i == 0) first = s.items;
            last = s.items;
            if (!strcmp(s.name, "hi")) hi = s.items;
            if (!strcmp(s.name, "lo")) lo = s.items;
            CHECK(s.busy_ms >= 0 && s.batches >= 1);
            busy += s.busy_ms;
        }
        CHECK_INT(first, 300);
        CHECK_INT(last, 300);
        CHECK(hi > 0 && lo > 0);
        CHECK_INT(hi + lo, 300); /* every item took exactly one branch */
        CHECK(busy > 0);
        CHECK(stc_result_profile_wall_ms(res, -1) >= stc_result_profile_wall_ms(res, 0));
        CHECK(stc_result_predict_speedup(res, 1) > 0.99 && stc_result_predict_speedup(res, 1) < 1.01);
        double s2 = stc_result_predict_speedup(res, 2), s64 = stc_result_predict_speedup(res, 64);
        CHECK(s2 >= 1.0 && s64 >= s2);
        char *table = stc_result_profile_format(res);
        CHECK_CONTAINS(table, "pipeline 0: smap at obs.stc:9:8");
        CHECK_CONTAINS(table, "bottleneck: ");
        CHECK_CONTAINS(table, "predicted speedup over 1 worker");
        free(table);
        stc_result_free(res);
        /* Without opts.profile there is none. */
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 2}, &res), 0);
        CHECK_INT(stc_result_profile_count(res), 0);
        CHECK(stc_result_profile_format(res) == NULL);
        stc_result_free(res);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* The model as the runtime runs a pipeline at 2+ workers (trace/profile.c):
 * the pipeline's time when it gains at least 1.25x, else the work (it stays
 * fused), except for few or coarse items, which always take the pipeline. */
TEST(observe_model_predicts_fused_jobs)
{
    /* 1M items of 0.1 us, a serial stage of 90 of 100 ms: 1.11x, fused. */
    CHECK(stc__profile_run_time(100, 90, 1000000, 2) == 100);
    /* ... a serial stage of 10 ms: 2x, the pipeline. */
    CHECK(stc__profile_run_time(100, 10, 1000000, 2) == 50);
    /* 1.11x but 40 items: the pipeline (a short list gets no trial). */
    CHECK(stc__profile_run_time(100, 90, 40, 2) == 90);
    /* 1.11x but 1,000 items of 100 us: coarse, the pipeline. */
    CHECK(stc__profile_run_time(100, 90, 1000, 2) == 90);
    /* One worker: the work, whatever the shape. */
    CHECK(stc__profile_run_time(100, 10, 1000000, 1) == 100);
    CHECK(stc__profile_run_time(100, 90, 1000000, 1) == 100);
}

/* The two measured costs (trace/profile.c): the time outside the stages
 * and, at 2+ workers, 7.5 ns a hand-off; a 1-worker profile and the
 * 2-worker profile of the same run predict each other. */
TEST(observe_model_adds_outside_time_and_handoffs)
{
    double wall1[1] = {110};
    stc_stage_profile st1[2] = {{.pipeline = 0, .serial = false, .items = 1000000, .busy_ms = 60},
                                {.pipeline = 0, .serial = true, .items = 1000000, .busy_ms = 40}};
    result_profile one = {.workers = 1, .wall_ms = 110, .npipelines = 1, .pipeline_wall_ms = wall1, .nstages = 2,
                          .stages = st1};
    CHECK(fabs(stc__profile_predict_ms(&one, 1) - 110) < 1e-9);
    /* max((100 + 1M x 7.5 ns) / 2, 40) + 10 outside */
    CHECK(fabs(stc__profile_predict_ms(&one, 2) - 63.75) < 1e-9);
    double wall2[1] = {63.75};
    stc_stage_profile st2[2] = {{.pipeline = 0, .serial = false, .items = 1000000, .busy_ms = 63.75},
                                {.pipeline = 0, .serial = true, .items = 1000000, .busy_ms = 43.75}};
    result_profile two = {.workers = 2, .wall_ms = 63.75, .npipelines = 1, .pipeline_wall_ms = wall2, .nstages = 2,
                          .stages = st2};
    CHECK(fabs(stc__profile_predict_ms(&two, 1) - 110) < 1e-9);
    CHECK(fabs(stc__profile_predict_ms(&two, 2) - 63.75) < 1e-9);
    /* A serial stage of 95 of 100 ms: no gain, fused: the 1-worker time. */
    st1[0].busy_ms = 5, st1[1].busy_ms = 95;
    CHECK(fabs(stc__profile_predict_ms(&one, 2) - 110) < 1e-9);
}

/* A profile taken at 2+ workers estimates the 1-worker time from what its
 * probes ran fused (src/flow/exec.c), not from stage times that carry the
 * cost of crossing between the cores: here they are twice the probe's. */
TEST(observe_model_takes_one_worker_from_the_probe)
{
    double wall2[1] = {120}, probe[1] = {110.0}; /* ns per item */
    stc_stage_profile st2[2] = {{.pipeline = 0, .serial = false, .items = 1000000, .busy_ms = 140},
                                {.pipeline = 0, .serial = true, .items = 1000000, .busy_ms = 80}};
    result_profile two = {.workers = 2, .wall_ms = 120, .npipelines = 1, .pipeline_wall_ms = wall2,
                          .pipeline_probe_ns = probe, .nstages = 2, .stages = st2};
    CHECK(fabs(stc__profile_predict_ms(&two, 1) - 110) < 1e-9); /* 1M x 110 ns */
    CHECK(fabs(stc__profile_predict_ms(&two, 2) - 120) < 1e-9); /* the measured run */
    CHECK(fabs(stc__profile_predict(&two, 2) - 110.0 / 120.0) < 1e-9);
    probe[0] = 0; /* no probe: the stage times less the hand-offs, plus outside (120 - 220 / 2) */
    CHECK(fabs(stc__profile_predict_ms(&two, 1) - (220 - 7.5 + 10)) < 1e-9);
    /* A run at 2 workers whose pipeline is probed (the shuttle aid) keeps
     * the probes' figure in its profile. */
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, "fun acc(x, s) = (s + x, s + x)\nthread a = acc init 0\n"
                                          "main = len(smap(fn x => a(x * 3 % 7), range(0, 20000)))\n", "obs.stc");
    if (prog) {
        stc_result *res = NULL;
        run_testing_opts t = {.shuttle_items = 500};
        CHECK_INT(stc__run_testing(prog, &(stc_run_opts){.workers = 2, .profile = true}, &t, NULL, &res), 0);
        CHECK(res && res->profile && res->profile->npipelines == 1);
        if (res && res->profile && res->profile->npipelines == 1) CHECK(res->profile->pipeline_probe_ns[0] > 0);
        CHECK(stc_result_stats(res).smaps_retreated >= 1);
        stc_result_free(res);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* A 1-worker profile whose pipeline was sampled at 2 workers (exec.c, "The
 * sample") takes its 2-worker time from the sample, which saw the cost of
 * values crossing between the cores, unless the probe's rule keeps the job
 * on one worker; more workers scale the model by the sample. */
TEST(observe_model_takes_two_workers_from_the_sample)
{
    double wall1[1] = {110}, probe[1] = {100.0}, sample[1] = {80.0}; /* ns per item */
    stc_stage_profile st1[2] = {{.pipeline = 0, .serial = false, .items = 1000000, .busy_ms = 60},
                                {.pipeline = 0, .serial = true, .items = 1000000, .busy_ms = 40}};
    result_profile one = {.workers = 1, .wall_ms = 110, .npipelines = 1, .pipeline_wall_ms = wall1,
                          .pipeline_probe_ns = probe, .pipeline_sample_ns = sample, .nstages = 2, .stages = st1};
    CHECK(fabs(stc__profile_predict_ms(&one, 1) - 100) < 1e-9); /* 1M x the fused rest's 100 ns */
    CHECK(fabs(stc__profile_predict_ms(&one, 2) - 80) < 1e-9);  /* 1M x the sample's 80 ns */
    /* 4 workers: max((100 + 7.5) / 4, 40) + 10 outside, scaled by 80 / (max(107.5 / 2, 40) + 10) */
    CHECK(fabs(stc__profile_predict_ms(&one, 4) - 50.0 * 80.0 / 63.75) < 1e-9);
    sample[0] = 98.0; /* not 5% faster than one worker: the probe keeps it fused */
    CHECK(fabs(stc__profile_predict_ms(&one, 2) - 100) < 1e-9);
    sample[0] = 0; /* not sampled: the model alone */
    probe[0] = 0;
    CHECK(fabs(stc__profile_predict_ms(&one, 2) - 63.75) < 1e-9);
}

/* observe_sampled's run: the result's JSON (or NULL), its stats and profile figures. */
typedef struct observe_sampled {
    char *json;
    stc_run_stats st;
    int workers;
    double sample_ns, probe_ns;
} observe_sampled;

static observe_sampled observe_sample_run(stc_program *prog, int sample, int shuttle)
{
    observe_sampled o = {0};
    stc_result *res = NULL;
    run_testing_opts t = {.profile_sample = sample, .shuttle_items = shuttle};
    if (stc__run_testing(prog, &(stc_run_opts){.workers = 1, .profile = true}, &t, NULL, &res) == 0 && res) {
        o.json = stc_result_to_json(res);
        o.st = stc_result_stats(res);
        if (res->profile) {
            o.workers = res->profile->workers;
            if (res->profile->npipelines == 1)
                o.sample_ns = res->profile->pipeline_sample_ns[0], o.probe_ns = res->profile->pipeline_probe_ns[0];
        }
    }
    stc_result_free(res);
    return o;
}

/* A 1-worker profile samples its pipeline at 2 workers and runs the rest
 * fused, with the sequential meaning; it says 1 worker, and runs nothing
 * else in parallel (a tuple of thread calls stays in order on main). */
TEST(observe_one_worker_profile_samples_two)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, "fun acc(x, s) = (s * 3 + x, (s * 3 + x) % 1000003)\nthread a = acc init 1\n"
                                          "fun spin(n, x) = if n == 0 then x else spin(n - 1, x)\n"
                                          "thread f = acc init 1\nthread g = acc init 2\n"
                                          "main = let r = smap(fn x => a(spin(20, x) * 3 % 7), range(0, 20000)) in "
                                          "(r, f(spin(2000, 3)), g(spin(2000, 4)), f(5), g(7))\n", "obs.stc");
    if (prog) {
        stc_result *ref = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.reference = true}, &ref), 0);
        char *want = ref ? stc_result_to_json(ref) : NULL;
        stc_result_free(ref);
        observe_sampled on = observe_sample_run(prog, 1, 500), off = observe_sample_run(prog, -1, 500);
        CHECK(want && on.json && !strcmp(want, on.json));
        CHECK(want && off.json && !strcmp(want, off.json));
        CHECK_INT(on.workers, 1);
        CHECK_INT(on.st.workers, 1);
        CHECK(on.sample_ns > 0 && on.probe_ns > 0);
        CHECK_INT(on.st.smaps_retreated, 1); /* the sample, then fused to the end */
        CHECK_INT(on.st.task_groups, 0);
        CHECK(off.sample_ns == 0 && off.st.smaps_retreated == 0);
        /* at 2 workers the tuple does run as tasks: the check above can fail */
        stc_result *two = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 2}, &two), 0);
        CHECK(stc_result_stats(two).task_groups >= 1);
        stc_result_free(two);
        free(want);
        free(on.json);
        free(off.json);
    }
    stc_program_free(prog);
    stc_env_free(env);
}
