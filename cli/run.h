/* run.h - `stc run`: the one path that runs a compiled program (a stream
 * program or not) and writes its output, and the one that verifies it. */
#ifndef STC_CLI_RUN_H
#define STC_CLI_RUN_H

#include "args.h"
#include "stc.h"

/* Runs prog as a->(reference, verify, workers, ...) say, writes its output
 * and reports any failure.  pool: workers started early, or NULL; remote:
 * where replicated stages may run (stc run --mpi's other ranks), or NULL.
 * *ran: whether the program ran (false after a usage or input error found
 * first).  Returns the exit code. */
int cli_run(stc_program *prog, const cli_args *a, stc_pool *pool, const stc_remote *remote, bool *ran);

#endif
