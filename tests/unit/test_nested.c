/* test_nested.c - nested smaps by cost (src/flow/nested.c) through the
 * public API: which level runs as the pipeline (stc_run_stats: a structural
 * check, never a timing), and every outcome the reference's. */
#include <stdlib.h>
#include <string.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"

#define nested_compile(env, src) UNIT_COMPILE(env, src, "nested.stc")

/* rows(n) rows of 20000 pure items each, mapped by an inner smap: each
 * inner pipeline takes well over FLOW_SMAP_MIN_NS (50 us) on any machine
 * (rows of 2000, 40-60 us on a fast core, were left to the evaluator as
 * too cheap after three runs, and the counts below changed). */
#define NESTED_ROWS(n)                                                                   \
    "fun pure_fn(x) = (x * x + 7) % 1009\n"                                              \
    "fun rows(n) = smap(fn r => range(r * 20000, (r + 1) * 20000), range(0, n))\n"         \
    "main = smap(fn row => len(smap(pure_fn, row)), rows(" #n "))\n"

TEST(nested_three_rows_at_two_workers_run_the_inner_smaps_as_pipelines)
{
    stc_env *env = stc_env_new();
    stc_program *prog = nested_compile(env, NESTED_ROWS(3));
    if (prog) {
        stc_run_stats st;
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 2}, &st);
        CHECK_STR(ref, "{\"result\": [20000, 20000, 20000], \"states\": {}}");
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_looped, 1);
        CHECK_INT(st.smaps_parallel, 4); /* rows() and one per row */
        CHECK_INT(st.items, 3 + 3 * 20000);
        free(got);
        /* One worker: nothing to gain, the outer smap is the pipeline. */
        got = unit_outcome(prog, (stc_run_opts){.workers = 1}, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_looped, 0);
        CHECK_INT(st.smaps_parallel, 2);
        free(got);
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(nested_four_rows_spread_over_two_workers_or_loop_at_three)
{
    stc_env *env = stc_env_new();
    stc_program *prog = nested_compile(env, NESTED_ROWS(4));
    if (prog) {
        stc_run_stats st;
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 2}, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_looped, 0); /* 4 rows, 2 per worker */
        CHECK_INT(st.smaps_parallel, 2);
        free(got);
        got = unit_outcome(prog, (stc_run_opts){.workers = 3}, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_looped, 1); /* 4 rows do not spread over 3 */
        CHECK_INT(st.smaps_parallel, 5);
        free(got);
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* Inner smaps that write threads sit in a serial stage of the outer plan:
 * the outer smap loops on main whatever its item count (up to 256), on a
 * host's pool too, run after run. */
TEST(nested_inner_pipelines_of_threads_on_a_host_pool)
{
    stc_env *env = stc_env_new();
    stc_program *prog = nested_compile(env,
        "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\n"
        "thread a = acc init 0\nthread b = acc init 0\n"
        "main = smap(fn r => len(smap(fn x => b(a(x * r)), range(0, 3000))) + r, range(0, 8))\n");
    stc_pool *pool = stc_pool_new(2);
    CHECK(pool != NULL);
    if (prog && pool) {
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        for (int run = 0; run < 3; run++) {
            stc_run_stats st;
            char *got = unit_outcome(prog, (stc_run_opts){.pool = pool, .workers = 2}, &st);
            CHECK(ref && got && strcmp(ref, got) == 0);
            CHECK_INT(st.smaps_looped, 1);
            CHECK_INT(st.smaps_parallel, 8);
            CHECK_INT(st.items, 8 * 3000);
            free(got);
        }
        free(ref);
    }
    stc_pool_free(pool);
    stc_program_free(prog);
    stc_env_free(env);
}

/* An error inside an inner pipeline run from main's loop: the reference's
 * message, thread and item. */
TEST(nested_error_in_an_inner_pipeline_is_the_references)
{
    stc_env *env = stc_env_new();
    stc_program *prog = nested_compile(env,
        "fun inv(x, s) = (s % 1000 + 1000 / x, (s * 31 + x) % 1000003)\n"
        "fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)\n"
        "thread t = inv init 0\nthread a = acc init 0\n"
        "main = smap(fn k => len(smap(fn x => a(t(x - k)), range(0, 500))), [700, 600, 321])\n");
    if (prog) {
        stc_run_stats st;
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 2}, &st);
        CHECK(ref && strstr(ref, "division by zero (in thread 't', smap item 321)"));
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_looped, 1);
        free(got);
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* One row: the outer smap has one item and is left to the evaluator on
 * main (as rows() is), whose hooks see the inner smap: a pipeline. */
TEST(nested_one_row_runs_its_inner_smap_as_a_pipeline)
{
    stc_env *env = stc_env_new();
    stc_program *prog = nested_compile(env, NESTED_ROWS(1));
    if (prog) {
        stc_run_stats st;
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 2}, &st);
        CHECK(ref && got && strcmp(ref, got) == 0);
        CHECK_INT(st.smaps_looped, 0);
        CHECK_INT(st.smaps_sequential, 2);
        CHECK_INT(st.smaps_parallel, 1);
        CHECK_INT(st.items, 20000);
        free(got);
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}
