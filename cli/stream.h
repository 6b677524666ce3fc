/* stream.h - the input and output of a run: the input lines as the run's
 * source, the results written (or collected) as they complete, the
 * progress line. */
#ifndef STC_CLI_STREAM_H
#define STC_CLI_STREAM_H

#include <stdbool.h>
#include <time.h>

#include "args.h"
#include "input.h"
#include "output.h"
#include "stc.h"

/* The progress line on stderr. */
typedef struct cli_progress {
    bool on;               /* stderr is a terminal and not --quiet */
    bool shown;            /* the line is on the screen */
    bool stdout_tty;       /* results go to the same screen: clear the line first */
    long long items;
    struct timespec start, last;
} cli_progress;

void cli_progress_start(cli_progress *p, bool on);
void cli_progress_clear(cli_progress *p);

/* The inputs of a stream program: --input files or standard input. */
typedef struct cli_inputs {
    cli_input *in[CLI_MAX_INPUTS];
    int n;
    stc_merge *merge;
    cli_inputs_ref ref;
    stc_source_fn fn;      /* the source to run: one input, or their merge */
    void *ud;
    cli_progress *progress; /* counts the items read (cli_inputs_counted) */
} cli_inputs;

/* Opens a->inputs (none: standard input).  Returns CLI_EXIT_OK, or prints
 * why not and returns the exit code. */
int cli_inputs_open(const cli_args *a, cli_inputs *ins);
void cli_inputs_close(cli_inputs *ins);
/* An stc_source_fn over ins (its ud) that counts items for ins->progress. */
int cli_inputs_counted(void *ud, stc_value *item, stc_ctx *cx);
/* Whether reading an input failed (exit 66), and its message (or NULL). */
bool cli_inputs_failed(const cli_inputs *ins);
const char *cli_inputs_error(const cli_inputs *ins);

/* All the input read into memory (--verify runs the program twice). */
typedef struct cli_memsrc {
    stc_value *items;
    size_t n, cap, next;
} cli_memsrc;

/* Reads every item of ins into m.  CLI_EXIT_OK, or prints why not and
 * returns the exit code. */
int cli_memsrc_fill(cli_memsrc *m, cli_inputs *ins);
void cli_memsrc_free(cli_memsrc *m);
/* An stc_source_fn replaying m from m->next. */
int cli_memsrc_source(void *ud, stc_value *item, stc_ctx *cx);

/* Where results go: lines on an output (written or collected). */
typedef struct cli_sink {
    bool json;
    bool no_states; /* --no-states: the final states are not printed */
    cli_output *out;
    cli_progress *progress; /* cleared before a line goes to a terminal */
} cli_sink;

/* An stc_sink_fn over a cli_sink: one line per result, () results none. */
int cli_sink_fn(void *ud, long long index, stc_value v, stc_ctx *cx);
/* After a successful run: main's value unless it went to the sink, then
 * the final states (text: `NAME = V` lines; JSON: one line).  Returns the
 * exit code (a failed write is left in k->out for the caller). */
int cli_sink_finish(cli_sink *k, const stc_result *res);

#endif
