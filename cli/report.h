/* report.h - the `stc` command's exit codes and its messages for failures
 * that several commands share. */
#ifndef STC_CLI_REPORT_H
#define STC_CLI_REPORT_H

#include "args.h"
#include "stc.h"

/* Prints "stc: out of memory"; returns CLI_EXIT_OSERR. */
int cli_oom(void);
/* After stc_value_to_text/json failed: "too large" (errno E2BIG, exit 70)
 * or out of memory. */
int cli_print_failed(void);
/* Prints the error of a failed run; returns the exit code. */
int cli_report_failure(int rc, const stc_result *res);

#endif
