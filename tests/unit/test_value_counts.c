/* test_value_counts.c - reference counts: plain on a thread that runs a
 * program alone and on the workers of a plain job, atomic in other
 * parallel jobs and for shared objects (program literals, what a host
 * retains, what a plain job marks); see value/value.h, "Reference
 * counts". */
#include <pthread.h>
#include <stdlib.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"
#include "value/value.h"

static size_t refs_of(stc_value v) { return __atomic_load_n(&v.as.obj->refs, __ATOMIC_RELAXED); }

TEST(value_counts_plain_and_atomic_modes)
{
    CHECK(!stc__val_counts_plain); /* a host thread: atomic */
    stc_value s = stc_value_new_str("abc", 3);
    CHECK(!val_obj_is_shared(s.as.obj));
    for (int plain = 0; plain < 2; plain++) {
        CHECK(!stc__val_counts_set_plain(plain)); /* returns the old mode */
        if (plain) CHECK(stc__val_counts_set_plain(true));
        val_retain(s);
        val_retain(s);
        CHECK_INT(refs_of(s), 3);
        val_release(s);
        val_release(s);
        CHECK_INT(refs_of(s), 1);
    }
    CHECK(stc__val_counts_set_plain(false));
    /* Scalars are never counted: retain and release are no-ops on them. */
    stc_value i = val_retain(stc_value_int(7));
    val_release(i);
    CHECK_INT(i.as.i, 7);
    stc_value_release(s);
}

TEST(value_counts_host_retain_marks_what_it_reaches)
{
    stc_value inner = stc_value_new_str("x", 1);
    stc_value box = stc_value_new_inl(inner);
    stc_value list = stc_value_new_list(2, (stc_value[]){box, stc_value_int(1)});
    CHECK(!val_obj_is_shared(list.as.obj) && !val_obj_is_shared(inner.as.obj));
    /* Internal retains never mark. */
    val_release(val_retain(list));
    CHECK(!val_obj_is_shared(list.as.obj));
    /* A host's retain may hand the value to another thread: all of it is
     * marked, and counted atomically from then on, even in plain mode. */
    stc_value_retain(list);
    CHECK(val_obj_is_shared(list.as.obj));
    CHECK(val_obj_is_shared(box.as.obj));
    CHECK(val_obj_is_shared(inner.as.obj));
    CHECK_INT(refs_of(list), 2);
    stc_value_release(list);
    stc_value_release(list);
}

TEST(value_counts_program_literals_are_shared)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, "main = (\"lit\", 1)\n", "lit.stc");
    stc_result *res = NULL;
    if (prog && stc_run(prog, &(stc_run_opts){.reference = true}, &res) == 0) {
        stc_value lit = stc_value_at(stc_result_value(res), 0);
        CHECK(lit.tag == STC_T_STR && val_obj_is_shared(lit.as.obj));
        CHECK(!val_obj_is_shared(stc_result_value(res).as.obj)); /* made by the run */
    } else {
        CHECK(!"the run failed");
    }
    stc_result_free(res);
    stc_program_free(prog);
    stc_env_free(env);
}

/* ---- the mode of the thread running a C thread ---- */

static int probe_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state, (void)in, (void)cx;
    *out = stc_value_int(stc__val_counts_plain ? 1 : 0);
    return 0;
}

TEST(value_counts_mode_follows_the_run)
{
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "probe", .fn = probe_fn, .type = "int -> int", .access = STC_PURE};
    CHECK_INT(stc_env_add_thread(env, &def), 0);
    stc_program *one = UNIT_COMPILE(env, "thread p = probe\nmain = p(0)\n", "one.stc");
    /* p after a serial stage with nearly all the work (~40 us an item):
     * at 2 workers the trial keeps it fused, however slow the build. */
    stc_program *many = UNIT_COMPILE(env,
                                     "fun acc(x, s) = (int(sin_iter(2000, float(x))) * 0 + x, s + x)\n"
                                     "thread a = acc init 0\nthread p = probe\n"
                                     "main = smap(fn x => p(a(x)), range(0, 400))\n",
                                     "many.stc");
    /* A job whose pipeline would gain runs on the pool after its fused
     * first batches: sin_iter's replicated stage; with a thread whose
     * state is a map, its workers count atomically (exec.c). */
    stc_program *heavy = UNIT_COMPILE(
        env, "thread p = probe\nmain = smap(fn x => p(int(sin_iter(20000, float(x))) * 0 + x), range(0, 200))\n",
        "heavy.stc");
    stc_program *heavy_map = UNIT_COMPILE(
        env,
        "fun note(x, m) = (x, put(m, x % 3, x))\nthread seen = note init {}\nthread p = probe\n"
        "main = smap(fn x => p(seen(int(sin_iter(20000, float(x))) * 0 + x)), range(0, 200))\n",
        "heavy_map.stc");
    /* Plain where the run's thread is alone (the reference, one worker,
     * main outside a pipeline at any count, and a 2-worker job that stays
     * fused on it: the probe's cheap items cannot gain). */
    struct { stc_run_opts o; long long one, many; } modes[] = {
        {{.reference = true}, 1, 400}, {{.workers = 1}, 1, 400}, {{.workers = 2}, 1, 400}};
    for (size_t m = 0; one && many && m < sizeof modes / sizeof *modes; m++) {
        stc_result *res = NULL;
        CHECK_INT(stc_run(one, &modes[m].o, &res), 0);
        CHECK_INT(stc_result_value(res).as.i, modes[m].one);
        stc_result_free(res);
        res = NULL;
        CHECK_INT(stc_run(many, &modes[m].o, &res), 0);
        stc_value xs = stc_result_value(res);
        long long sum = 0;
        for (size_t i = 0; i < stc_value_len(xs); i++) sum += stc_value_at(xs, i).as.i;
        CHECK_INT(stc_value_len(xs), 400);
        CHECK_INT(sum, modes[m].many);
        CHECK(!stc__val_counts_plain); /* the host's mode is back */
        if (modes[m].o.workers == 2) CHECK_INT(stc_result_stats(res).smaps_fused, 1);
        stc_result_free(res);
    }
    /* Once a heavy job is on the pool: plain on its workers too (what two
     * of them can reach is marked), atomic when a thread's state may hold
     * a map. */
    stc_program *heavies[] = {heavy, heavy_map};
    for (int h = 0; h < 2; h++) {
        if (!heavies[h]) continue;
        stc_result *res = NULL;
        stc_run_opts o = {.workers = 2};
        CHECK_INT(stc_run(heavies[h], &o, &res), 0);
        stc_value xs = stc_result_value(res);
        long long sum = 0;
        for (size_t i = 0; i < stc_value_len(xs); i++) sum += stc_value_at(xs, i).as.i;
        CHECK_INT(stc_value_len(xs), 200);
        if (h == 0) CHECK_INT(sum, 200);
        else CHECK(sum < 200); /* the fused first batches' items only */
        CHECK_INT(stc_result_stats(res).smaps_fused, 0);
        CHECK_INT(stc_result_stats(res).smaps_parallel, 1);
        CHECK(!stc__val_counts_plain);
        stc_result_free(res);
    }
    stc_program_free(heavy);
    stc_program_free(heavy_map);
    stc_program_free(one);
    stc_program_free(many);
    stc_env_free(env);
}

/* ---- a plain job marks what its workers share ---- */

/* At 2 workers a pipeline job counts plainly and marks what two workers
 * could reach at once: a thread's state after each activation of its
 * stage (here the string that is also the item's output, so the final
 * state and the last result are one object); a value only a batch held
 * (each result's second string) stays unmarked.  A job whose thread holds
 * a map counts atomically and marks nothing. */
TEST(value_counts_plain_job_marks_thread_states)
{
    stc_env *env = stc_env_new();
    stc_program *plain = UNIT_COMPILE(env,
        "fun keep(x, s) = let y = concat(x, \"!\") in (y, y)\n"
        "thread last = keep init \"start\"\n"
        "main = smap(fn i => let s = str(int(sin_iter(20000, float(i))) * 0 + i) in (last(s), concat(s, \"?\")), "
        "range(0, 200))\n",
        "marks.stc");
    stc_program *atomic = UNIT_COMPILE(env,
        "fun keep(x, s) = let y = concat(x, \"!\") in (y, y)\n"
        "thread last = keep init \"start\"\n"
        "fun note(x, m) = ((), put(m, x % 3, x))\nthread seen = note init {}\n"
        "main = smap(fn i => let s = str(int(sin_iter(20000, float(i))) * 0 + i) in "
        "let u = seen(i) in (last(s), concat(s, \"?\")), range(0, 200))\n",
        "marks_map.stc");
    stc_program *progs[] = {plain, atomic};
    for (int k = 0; k < 2; k++) {
        stc_result *res = NULL;
        if (!progs[k] || stc_run(progs[k], &(stc_run_opts){.workers = 2}, &res) != 0) {
            CHECK(!"the run failed");
            stc_result_free(res);
            continue;
        }
        stc_value xs = stc_result_value(res);
        CHECK_INT(stc_value_len(xs), 200);
        CHECK_INT(stc_result_stats(res).smaps_parallel, 1);
        CHECK_INT(stc_result_stats(res).smaps_fused, 0);
        stc_value state = stc_result_state(res, 0); /* last */
        stc_value out = stc_value_at(stc_value_at(xs, 199), 0);
        CHECK_STR(stc_value_str(state, NULL), "199!");
        CHECK(out.as.obj == state.as.obj);
        /* Marked by the pipeline's last activation of `last`; unless a
         * probe (src/flow/exec.c: a loaded machine made the pipeline look
         * slow) sent the job's last items back to fused, whose plain run
         * marks nothing. */
        if (stc_result_stats(res).smaps_retreated == 0) CHECK(val_obj_is_shared(state.as.obj) == (k == 0));
        int marked = 0;
        for (size_t i = 0; i < 200; i++) marked += val_obj_is_shared(stc_value_at(stc_value_at(xs, i), 1).as.obj);
        CHECK_INT(marked, 0);
        stc_result_free(res);
    }
    stc_program_free(plain);
    stc_program_free(atomic);
    stc_env_free(env);
}

/* ---- two runs at once sharing a host value and a program's literal ---- */

typedef struct counts_job {
    stc_program *prog;
    int rc;
    long long total;
} counts_job;

static stc_value counts_global; /* the host's value every call hands out */

static int give_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state, (void)in, (void)cx;
    *out = stc_value_retain(counts_global);
    return 0;
}

static void *counts_run(void *arg)
{
    counts_job *j = arg;
    stc_result *res = NULL;
    j->rc = stc_run(j->prog, &(stc_run_opts){.workers = 1}, &res);
    if (j->rc == 0) j->total = stc_value_at(stc_result_value(res), 0).as.i;
    stc_result_free(res);
    return NULL;
}

TEST(value_counts_concurrent_runs_share_safely)
{
    /* Each run counts plainly on its own thread; the value the host hands
     * to both and the literal both read are counted atomically, so their
     * counts come back exact (and ThreadSanitizer sees no race). */
    counts_global = stc_value_new_str("global", 6);
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "give", .fn = give_fn, .type = "int -> str", .access = STC_PURE};
    CHECK_INT(stc_env_add_thread(env, &def), 0);
    stc_program *prog = UNIT_COMPILE(env,
                                     "thread g = give\n"
                                     "fun f(x) = let s = g(x) in let t = \"lit\" in (s, t, [s, t])\n"
                                     "main = (len(smap(fn x => f(x), range(0, 20000))), \"lit\")\n",
                                     "two.stc");
    counts_job jobs[2] = {{prog, -1, 0}, {prog, -1, 0}};
    pthread_t th[2];
    int started = 0;
    for (int i = 0; prog && i < 2; i++)
        if (pthread_create(&th[i], NULL, counts_run, &jobs[i]) == 0) started++;
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    CHECK_INT(started, prog ? 2 : 0);
    for (int i = 0; i < started; i++) {
        CHECK_INT(jobs[i].rc, 0);
        CHECK_INT(jobs[i].total, 20000);
    }
    CHECK_INT(refs_of(counts_global), 1);
    stc_program_free(prog);
    stc_env_free(env);
    stc_value_release(counts_global);
}
