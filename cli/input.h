/* input.h - input lines for stream programs (`fun main(lines)`). */
#ifndef STC_CLI_INPUT_H
#define STC_CLI_INPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "stc.h"

typedef struct cli_input cli_input;

/* Lines may have this many bytes at most (without the newline). */
#define CLI_MAX_LINE ((size_t)256 << 20)

/* Opens path ("-": standard input; a directory is refused).  merged: the
 * input is one of several, so its source says STC_STREAM_AGAIN instead of
 * blocking.  max_line: 0 for CLI_MAX_LINE.  NULL with a message in err on
 * failure. */
cli_input *cli_input_open(const char *path, bool merged, size_t max_line, char *err, size_t errlen);
void cli_input_close(cli_input *in);
/* The descriptor to poll, or -1 after the end. */
int cli_input_fd(const cli_input *in);
/* Whether a read failed (the run's error says why). */
bool cli_input_failed(const cli_input *in);
/* Why its source failed, or NULL. */
const char *cli_input_error(const cli_input *in);
/* An stc_source_fn: the next line as a str. */
int cli_input_source(void *ud, stc_value *item, stc_ctx *cx);

/* The merge's wait: polls every open input (ud: a cli_inputs_ref). */
typedef struct cli_inputs_ref {
    cli_input *const *inputs;
    int n;
} cli_inputs_ref;
void cli_inputs_wait(void *ud);

#endif
