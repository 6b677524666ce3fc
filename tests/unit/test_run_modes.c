/* test_run_modes.c - the shared run helper (tests/support/run_modes.h) that
 * every mode-comparing test relies on: mode lists, options, outcome text,
 * and that a mode whose outcome differs is caught. */
#include <stdio.h>
#include <stdlib.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"

TEST(run_modes_parse_lists)
{
    trun_mode m[16];
    char name[64];
    CHECK_INT(trun_modes_parse("ref,1,8", "1,0", 7, 500, m, 16), 5); /* ref once, then 2 x 2 */
    CHECK(m[0].reference);
    CHECK_STR(trun_mode_name(&m[0], name, sizeof name), "ref");
    CHECK_STR(trun_mode_name(&m[2], name, sizeof name), "workers=1 qc=0 perturb=7");
    CHECK_INT(m[4].workers, 8);
    CHECK_INT(m[4].watchdog_ms, 500);
    stc_run_opts o = trun_opts(&m[3]);
    CHECK(!o.reference && o.workers == 8 && o.queue_capacity == 1);
    CHECK(m[3].perturb_seed == 7 && m[3].watchdog_ms == 500); /* trun_run sets them */
    o = trun_opts(&m[0]);
    CHECK(o.reference && o.workers == 0);
    CHECK_INT(trun_modes_parse("ref,0", "1", 0, 0, m, 16), -1);    /* 0 workers */
    CHECK_INT(trun_modes_parse("2,x", "1", 0, 0, m, 16), -1);
    CHECK_INT(trun_modes_parse("2", "-1", 0, 0, m, 16), -1);
    CHECK_INT(trun_modes_parse("", "1", 0, 0, m, 16), -1);
    CHECK_INT(trun_modes_parse("1,2,3", "1,2,3", 0, 0, m, 8), -1); /* 9 modes, room for 8 */
}

TEST(run_modes_outcome_text)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, "main = nth([1], 3)\n", "rm.stc");
    char *diags = NULL;
    stc_program *bad = NULL;
    CHECK_INT(trun_compile(env, "main = 1 +\n", 11, "bad.stc", &bad, &diags), STC_ECOMPILE);
    CHECK(bad == NULL);
    CHECK_CONTAINS(diags, "bad.stc:1:11: error: expected an expression");
    free(diags);
    if (prog) {
        char *text = unit_outcome(prog, trun_opts(&(trun_mode){.reference = true}), NULL);
        CHECK_CONTAINS(text, "error -4 (runtime error): rm.stc:1:8: error: nth: index 3 out of range");
        free(text);
        trun_outcome o;
        CHECK_INT(trun_run(prog, &(stc_run_opts){.workers = 2}, NULL, NULL, &o), STC_ERUNTIME);
        CHECK(o.has_result && o.json == NULL && o.line == 1 && o.col == 8);
        CHECK_CONTAINS(o.message, "nth: index 3 out of range");
        trun_outcome_free(&o);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* A runner whose runtime at 3 workers disagrees with the reference. */
static char *run_modes_liar(stc_program *prog, const trun_mode *m, void *ud)
{
    (*(int *)ud)++;
    char *text = unit_outcome(prog, trun_opts(m), NULL);
    if (m->workers != 3) return text;
    free(text);
    return strdup("{\"result\": 0, \"states\": {}}");
}

TEST(run_modes_check_finds_the_mode_that_differs)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, "main = smap(fn x => x * 2, range(0, 50))\n", "rm.stc");
    trun_mode m[8];
    int n = trun_modes_parse("1,2,3,8", "1,0", 0, 0, m, 8), calls = 0;
    char *ref = NULL, *got = NULL;
    if (prog) {
        CHECK_INT(trun_check_modes(prog, m, n, NULL, NULL, &ref, &got), -1);
        CHECK_CONTAINS(ref, "{\"result\": [0, 2, 4,");
        CHECK(got == NULL);
        free(ref);
        CHECK_INT(trun_check_modes(prog, m, n, run_modes_liar, &calls, &ref, &got), 4); /* workers=3 qc=1 */
        CHECK_INT(calls, 1 + 5);
        CHECK_STR(got, "{\"result\": 0, \"states\": {}}");
        free(ref);
        free(got);
    }
    stc_program_free(prog);
    stc_env_free(env);
}
