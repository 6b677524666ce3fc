/* output.h - what a run writes: lines on standard output through a buffer
 * of our own, or collected in memory (--verify). */
#ifndef STC_CLI_OUTPUT_H
#define STC_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

/* The end of one result's line in the buffer, to tell after a failed
 * write which result was the first not fully written. */
typedef struct cli_output_mark {
    size_t end;        /* offset in buf just past its newline */
    long long index;   /* the result's smap item */
} cli_output_mark;

typedef struct cli_output {
    int fd;            /* -1: collect in memory, never write */
    bool line_flush;   /* a terminal: each line is written at once */
    char *buf;
    size_t len, cap;
    cli_output_mark *marks; /* the results whose lines are in buf, in order */
    size_t nmarks, mcap;
    bool oom;          /* collecting ran out of memory */
    int err;           /* errno of the first failed write; then nothing more is written */
    long long lost;    /* the first result not fully written (-1: none, or not a result) */
} cli_output;

/* fd: where to write (-1: collect).  Nothing to free before the first line. */
void cli_output_init(cli_output *o, int fd);
void cli_output_free(cli_output *o);
/* Appends s[0, n) and a newline; index: the result's smap item, or -1 for
 * other lines (the value of main, the states).  Returns 0, or -1 once a
 * write failed (o->err) or memory ran out (o->oom); then it does nothing. */
int cli_output_line(cli_output *o, const char *s, size_t n, long long index);
/* Writes what is buffered.  0, or -1 as above. */
int cli_output_flush(cli_output *o);
/* After a failed write: prints its one message, e.g. "stc: cannot write
 * output: No space left on device (smap item 616 and those after it
 * were not written)". */
void cli_output_report(const cli_output *o);
/* Writes text to standard output; on failure reports it once.  Returns
 * CLI_EXIT_OK or CLI_EXIT_IOERR. */
int cli_output_text(const char *text);

#endif
