/* run_check.h - the unit tests' side of tests/support/run_modes.h: compiling
 * and running in every mode with failures reported through test.h at the
 * line of the calling test. */
#ifndef STC_TESTS_UNIT_RUN_CHECK_H
#define STC_TESTS_UNIT_RUN_CHECK_H

#include "run_modes.h"
#include "stc.h"

/* Compiles src as the file `name`; a compile error fails the test and gives NULL. */
#define UNIT_COMPILE(env, src, name) unit_compile((env), (src), (name), __FILE__, __LINE__)
stc_program *unit_compile(stc_env *env, const char *src, const char *name, const char *file, int line);

/* The outcome of one run with opts as trun_outcome_text gives it
 * (malloc'd); stats may be NULL. */
char *unit_outcome(stc_program *prog, stc_run_opts opts, stc_run_stats *stats);
/* The same with the testing aids of the mode aids (NULL: none). */
char *unit_outcome_aided(stc_program *prog, stc_run_opts opts, const trun_mode *aids, stc_run_stats *stats);

/* Runs prog under the reference and in each mode of the lists (as
 * trun_modes_parse takes them); any outcome unlike the reference's fails
 * the test. run and ud: as for trun_check_modes. Returns the reference's
 * outcome (malloc'd). */
#define CHECK_MODES(prog, workers, capacities, run, ud) \
    unit_check_modes((prog), (workers), (capacities), (run), (ud), __FILE__, __LINE__)
char *unit_check_modes(stc_program *prog, const char *workers, const char *capacities, trun_runner run, void *ud,
                       const char *file, int line);

#endif
