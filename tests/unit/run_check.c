/* run_check.c - compiling and checking every mode from a unit test (see
 * run_check.h). */
#include "run_check.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"

stc_program *unit_compile(stc_env *env, const char *src, const char *name, const char *file, int line)
{
    stc_program *prog = NULL;
    char *diags = NULL;
    if (trun_compile(env, src, strlen(src), name, &prog, &diags) != 0)
        test_fail(file, line, "compile failed: %s", diags ? diags : "(out of memory)");
    free(diags);
    return prog;
}

char *unit_outcome(stc_program *prog, stc_run_opts opts, stc_run_stats *stats)
{
    return unit_outcome_aided(prog, opts, NULL, stats);
}

char *unit_outcome_aided(stc_program *prog, stc_run_opts opts, const trun_mode *aids, stc_run_stats *stats)
{
    trun_outcome o;
    trun_run(prog, &opts, aids, NULL, &o);
    if (stats) *stats = o.stats;
    char *text = trun_outcome_text(&o);
    trun_outcome_free(&o);
    return text;
}

char *unit_check_modes(stc_program *prog, const char *workers, const char *capacities, trun_runner run, void *ud,
                       const char *file, int line)
{
    trun_mode modes[64];
    int n = trun_modes_parse(workers, capacities, 0, 0, modes, 64);
    if (n < 0) {
        test_fail(file, line, "bad mode lists \"%s\" x \"%s\"", workers, capacities);
        return NULL;
    }
    char *ref = NULL, *got = NULL, name[64];
    int bad = trun_check_modes(prog, modes, n, run, ud, &ref, &got);
    if (bad >= 0)
        test_fail(file, line, "%s:\n%s\nreference:\n%s", trun_mode_name(&modes[bad], name, sizeof name),
                  got ? got : "(null)", ref ? ref : "(null)");
    free(got);
    return ref;
}
