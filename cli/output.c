/* output.c - standard output of a run, written with write(2) through a
 * buffer of our own rather than stdio: stdio reports a failed write only
 * when some later item's write flushes its buffer, and its error flag and
 * errno are read long after.  Here the first failed write is kept with its
 * errno and the first result it did not fully write; it is reported once,
 * and nothing is written after it.  Every result before that one is
 * written whole; the end of the output may hold the start of its line.
 * On a terminal each line is written at once, as a line-buffered stdout
 * would (but not under mpirun, whose terminal is its own: cli/cluster.h). */
#include "output.h"

#include "args.h"
#include "cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLI_OUTPUT_BUFFER 65536

void cli_output_init(cli_output *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->lost = -1;
    o->line_flush = fd >= 0 && isatty(fd) && !cli_cluster_output_blocks();
}

void cli_output_free(cli_output *o)
{
    free(o->buf);
    free(o->marks);
    o->buf = NULL;
    o->marks = NULL;
    o->len = o->cap = o->nmarks = o->mcap = 0;
}

/* Writes p[0, n) whole; returns the bytes written, o->err set if fewer. */
static size_t cli_output_write(cli_output *o, const char *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(o->fd, p + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            o->err = w < 0 ? errno : EIO;
            break;
        }
        off += (size_t)w;
    }
    return off;
}

int cli_output_flush(cli_output *o)
{
    if (o->err || o->oom) return -1;
    if (o->fd < 0 || o->len == 0) return 0;
    size_t written = cli_output_write(o, o->buf, o->len);
    if (o->err) {
        for (size_t i = 0; i < o->nmarks; i++)
            if (o->marks[i].end > written) {
                o->lost = o->marks[i].index;
                break;
            }
        return -1;
    }
    o->len = 0;
    o->nmarks = 0;
    return 0;
}

/* Room for n more bytes and a NUL in buf. */
static int cli_output_room(cli_output *o, size_t n)
{
    if (o->len + n + 1 <= o->cap) return 0;
    size_t ncap = o->cap ? o->cap : CLI_OUTPUT_BUFFER;
    while (ncap < o->len + n + 1) {
        if (ncap > ((size_t)-1) / 2) return -1;
        ncap *= 2;
    }
    char *nb = realloc(o->buf, ncap);
    if (!nb) return -1;
    o->buf = nb;
    o->cap = ncap;
    return 0;
}

static int cli_output_mark_add(cli_output *o, long long index)
{
    if (o->nmarks == o->mcap) {
        size_t ncap = o->mcap ? 2 * o->mcap : 256;
        cli_output_mark *nm = realloc(o->marks, ncap * sizeof *nm);
        if (!nm) return -1;
        o->marks = nm;
        o->mcap = ncap;
    }
    o->marks[o->nmarks++] = (cli_output_mark){o->len, index};
    return 0;
}

int cli_output_line(cli_output *o, const char *s, size_t n, long long index)
{
    if (o->err || o->oom) return -1;
    if (o->fd >= 0 && o->len + n + 1 > CLI_OUTPUT_BUFFER) {
        if (cli_output_flush(o) != 0) return -1;
        if (n + 1 > CLI_OUTPUT_BUFFER) { /* a long line goes out as it is */
            cli_output_write(o, s, n);
            if (!o->err) cli_output_write(o, "\n", 1);
            if (o->err) o->lost = index;
            return o->err ? -1 : 0;
        }
    }
    if (cli_output_room(o, n) != 0) {
        o->oom = true;
        return -1;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len++] = '\n';
    o->buf[o->len] = '\0';
    if (o->fd < 0) return 0;
    /* Without room for its mark the line is written at once: no mark needed. */
    if (o->line_flush || (index >= 0 && cli_output_mark_add(o, index) != 0)) return cli_output_flush(o);
    return 0;
}

void cli_output_report(const cli_output *o)
{
    if (o->lost >= 0)
        fprintf(stderr, "stc: cannot write output: %s (results from item %lld on are missing)\n",
                strerror(o->err), o->lost);
    else
        fprintf(stderr, "stc: cannot write output: %s\n", strerror(o->err));
}

int cli_output_text(const char *text)
{
    cli_output o;
    cli_output_init(&o, 1);
    cli_output_write(&o, text, strlen(text));
    if (o.err) cli_output_report(&o);
    return o.err ? CLI_EXIT_IOERR : CLI_EXIT_OK;
}
