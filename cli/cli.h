/* cli.h - what the parts of the `stc` command share. */
#ifndef STC_CLI_H
#define STC_CLI_H

#include "args.h"
#include "stc.h"

/* Prints "out of memory"; returns CLI_EXIT_OSERR. */
int cli_oom(void);
/* After stc_value_to_text/json failed: "too large" (errno E2BIG, exit 70)
 * or out of memory. */
int cli_print_failed(void);
/* Prints the error of a failed run; returns the exit code. */
int cli_report_failure(int rc, const stc_result *res);
/* A run's outcome for --verify: its JSON line or "error: ..." (malloc'd). */
char *cli_outcome(int rc, const stc_result *res);
/* SIGINT/SIGTERM raise c while a run runs (NULL: default handling again). */
void cli_catch_signals(stc_cancel *c);
/* --profile and --stats output after a run (res may be NULL). */
void cli_after_run(const stc_result *res, const cli_args *a);
/* stc run of a program whose main takes input lines (cli/stream.c). */
int cli_run_stream(stc_program *prog, const cli_args *a, stc_pool *pool);

#endif
