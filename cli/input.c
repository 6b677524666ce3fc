/* input.c - the input lines of a stream program: files, pipes or standard
 * input read with read(2) into a buffer of our own, one str item per line
 * (without its newline, or its CR LF: a line ending in "\r\n" loses both;
 * a last line without a newline still counts).  A line longer than the
 * limit (256 MiB; the test sets a smaller one) fails the run with the same
 * error whether it comes from a file or a pipe: the length is checked on
 * every line found and before every read.
 *
 * One input blocks in read.  Several inputs are merged by the library's
 * stc_merge: each source then says STC_STREAM_AGAIN when it has no whole
 * line buffered and poll says its descriptor has nothing to read, and the
 * merge's wait polls them all.  Regular files are always readable, so
 * files interleave line by line in --input order, reproducibly; pipes
 * interleave in order of arrival. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "input.h"

#define CLI_READ_CHUNK 65536

struct cli_input {
    const char *name;  /* for messages */
    int fd;
    bool own_fd;
    bool eof;
    bool poll_first;   /* merged: say AGAIN rather than block */
    bool read_failed;  /* read(2) failed: the run exits 66 */
    size_t max_line;   /* bytes a line may have at most */
    char error[600];   /* why the source failed ("" if it did not) */
    char *buf;
    size_t start, end, cap; /* unread bytes are buf[start, end) */
    size_t scanned;    /* bytes after start known to hold no newline */
    long long line;    /* lines produced */
};

cli_input *cli_input_open(const char *path, bool merged, size_t max_line, char *err, size_t errlen)
{
    cli_input *in = calloc(1, sizeof *in);
    if (!in) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    in->name = strcmp(path, "-") ? path : "<stdin>";
    in->poll_first = merged;
    in->max_line = max_line ? max_line : CLI_MAX_LINE;
    if (!strcmp(path, "-")) {
        in->fd = 0;
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            snprintf(err, errlen, "cannot read input '%s': %s", path, strerror(errno));
            free(in);
            return NULL;
        }
        in->own_fd = true;
        struct stat st;
        if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "cannot read input '%s': %s", path, strerror(EISDIR));
            cli_input_close(in);
            return NULL;
        }
    }
    return in;
}

void cli_input_close(cli_input *in)
{
    if (!in) return;
    if (in->own_fd) close(in->fd);
    free(in->buf);
    free(in);
}

int cli_input_fd(const cli_input *in) { return in->eof ? -1 : in->fd; }

bool cli_input_failed(const cli_input *in) { return in->read_failed; }

const char *cli_input_error(const cli_input *in) { return in->error[0] ? in->error : NULL; }

/* Fails the run with the message kept in in->error. */
static int cli_input_fail(cli_input *in, stc_ctx *cx)
{
    return stc_ctx_error(cx, "%s", in->error);
}

/* The run's error for a line over the limit (in MiB when it is whole MiB). */
static int cli_input_too_long(cli_input *in, stc_ctx *cx)
{
    if (in->max_line % ((size_t)1 << 20) == 0)
        snprintf(in->error, sizeof in->error, "%s: line %lld is longer than %zu MiB", in->name, in->line + 1,
                 in->max_line >> 20);
    else
        snprintf(in->error, sizeof in->error, "%s: line %lld is longer than %zu bytes", in->name, in->line + 1,
                 in->max_line);
    return cli_input_fail(in, cx);
}

/* Makes room for CLI_READ_CHUNK more bytes. */
static int cli_input_room(cli_input *in)
{
    if (in->start > 0 && (in->start == in->end || in->cap - in->end < CLI_READ_CHUNK)) {
        memmove(in->buf, in->buf + in->start, in->end - in->start);
        in->end -= in->start;
        in->start = 0;
    }
    if (in->cap - in->end >= CLI_READ_CHUNK) return 0;
    size_t ncap = in->cap ? 2 * in->cap : 2 * CLI_READ_CHUNK;
    char *nb = realloc(in->buf, ncap);
    if (!nb) return -1;
    in->buf = nb;
    in->cap = ncap;
    return 0;
}

/* An item for buf[start, start + len), consuming skip more bytes (the
 * newline; a CR before it is dropped too). */
static int cli_input_emit(cli_input *in, size_t len, size_t skip, stc_value *item, stc_ctx *cx)
{
    if (skip && len && in->buf[in->start + len - 1] == '\r') {
        len--;
        skip++;
    }
    if (len > in->max_line) return cli_input_too_long(in, cx);
    *item = stc_value_new_str(in->buf + in->start, len);
    if (item->tag == STC_T_INVALID) return STC_ENOMEM;
    in->start += len + skip;
    in->scanned = 0;
    in->line++;
    return 1;
}

int cli_input_source(void *ud, stc_value *item, stc_ctx *cx)
{
    cli_input *in = ud;
    for (;;) {
        size_t unscanned = in->end - in->start - in->scanned;
        char *nl = unscanned ? memchr(in->buf + in->start + in->scanned, '\n', unscanned) : NULL;
        if (nl) return cli_input_emit(in, (size_t)(nl - (in->buf + in->start)), 1, item, cx);
        in->scanned = in->end - in->start;
        if (in->eof) return in->end > in->start ? cli_input_emit(in, in->end - in->start, 0, item, cx) : 0;
        if (in->end - in->start > in->max_line + 1) return cli_input_too_long(in, cx); /* +1: a CR */
        if (in->poll_first) {
            struct pollfd p = {.fd = in->fd, .events = POLLIN};
            int r = poll(&p, 1, 0);
            if (r == 0) return STC_STREAM_AGAIN;
            if (r < 0 && errno == EINTR) {
                snprintf(in->error, sizeof in->error, "%s: interrupted", in->name);
                return cli_input_fail(in, cx);
            }
        }
        if (cli_input_room(in) != 0) return STC_ENOMEM;
        ssize_t got = read(in->fd, in->buf + in->end, in->cap - in->end);
        if (got < 0) {
            if (errno == EAGAIN) return STC_STREAM_AGAIN;
            in->read_failed = true;
            snprintf(in->error, sizeof in->error, "cannot read '%s': %s", in->name, strerror(errno));
            return cli_input_fail(in, cx);
        }
        if (got == 0) in->eof = true;
        in->end += (size_t)got;
    }
}

void cli_inputs_wait(void *ud)
{
    cli_input *const *ins = ((const cli_inputs_ref *)ud)->inputs;
    int n = ((const cli_inputs_ref *)ud)->n;
    struct pollfd p[64];
    int np = 0;
    for (int i = 0; i < n && np < 64; i++) {
        int fd = cli_input_fd(ins[i]);
        if (fd >= 0) p[np++] = (struct pollfd){.fd = fd, .events = POLLIN};
    }
    /* A bounded wait, so a cancel (Ctrl-C) is seen soon. */
    if (np) poll(p, (nfds_t)np, 100);
}
