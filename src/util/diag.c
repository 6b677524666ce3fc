/* diag.c - recording and formatting compile diagnostics. */
#include "diag.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

stc_diags *stc__diags_new(const char *file, const char *src, size_t len)
{
    stc_diags *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->file = strdup(file ? file : "<input>");
    if (src) {
        d->src = malloc(len + 1);
        if (d->src) {
            memcpy(d->src, src, len);
            d->src[len] = '\0';
            d->src_len = len;
        }
    }
    if (!d->file || (src && !d->src)) {
        stc_diags_free(d);
        return NULL;
    }
    return d;
}

/* A message quotes names and types from the program, which may be
 * megabytes long: every run of name characters longer than DIAG_NAME_MAX
 * keeps its first DIAG_NAME_MAX bytes and gets "...", and the whole
 * message keeps at most DIAG_MESSAGE_MAX bytes (ending in "..."). Takes
 * msg; NULL when out of memory. */
static char *diags_cut_message(char *msg)
{
    if (!msg) return NULL;
    buf b = BUF_INIT;
    size_t run = 0;
    for (size_t i = 0; msg[i] && b.len < DIAG_MESSAGE_MAX + 1; i++) {
        char c = msg[i];
        bool name = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        run = name ? run + 1 : 0;
        if (run == DIAG_NAME_MAX + 1) stc__buf_puts(&b, "...");
        if (run <= DIAG_NAME_MAX) stc__buf_putc(&b, c);
    }
    free(msg);
    if (b.len > DIAG_MESSAGE_MAX) {
        size_t n = DIAG_MESSAGE_MAX - 3;
        while (n > 0 && ((unsigned char)b.data[n] & 0xc0) == 0x80) n--; /* not inside a UTF-8 sequence */
        b.len = n;
        stc__buf_puts(&b, "...");
    }
    return stc__buf_take(&b);
}

void stc__diags_vadd(stc_diags *d, int line, int col, const char *fmt, va_list ap)
{
    if (!d) return;
    if (d->count >= DIAG_MAX) { d->dropped++; return; }
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        diag_entry *items = realloc(d->items, cap * sizeof *items);
        if (!items) { d->oom = true; return; }
        d->items = items;
        d->cap = cap;
    }
    buf b = BUF_INIT;
    stc__buf_vprintf(&b, fmt, ap);
    char *msg = diags_cut_message(stc__buf_take(&b));
    if (!msg) { d->oom = true; return; }
    d->items[d->count++] = (diag_entry){line, col, msg};
}

void stc__diags_add(stc_diags *d, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stc__diags_vadd(d, line, col, fmt, ap);
    va_end(ap);
}

size_t stc_diags_count(const stc_diags *d) { return d ? d->count : 0; }
const char *stc_diags_file(const stc_diags *d, size_t i) { return d && i < d->count ? d->file : NULL; }
int stc_diags_line(const stc_diags *d, size_t i) { return d && i < d->count ? d->items[i].line : 0; }
int stc_diags_col(const stc_diags *d, size_t i) { return d && i < d->count ? d->items[i].col : 0; }
const char *stc_diags_message(const stc_diags *d, size_t i)
{
    return d && i < d->count ? d->items[i].message : NULL;
}

/* Appends source line `line` and a caret under column `col`. Tabs in the
 * prefix are kept so the caret lines up in a terminal. A line longer than
 * DIAG_LINE_MAX bytes shows only DIAG_LINE_MAX of them around the column,
 * with "..." where it was cut. */
static void diags_caret(buf *b, const stc_diags *d, int line, int col)
{
    if (!d->src || line <= 0) return;
    const char *p = d->src, *end = d->src + d->src_len;
    for (int l = 1; l < line && p < end; p++)
        if (*p == '\n') l++;
    if (p >= end && line > 1) return;
    if (line == 1 && d->src_len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3; /* the lexer skips a BOM */
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r') e++;
    const char *caret = col <= 1 ? p : (size_t)(col - 1) <= (size_t)(e - p) ? p + col - 1 : e;
    bool cut_left = false, cut_right = false;
    if (e - p > DIAG_LINE_MAX) {
        const char *from = caret - p > DIAG_LINE_MAX / 2 ? caret - DIAG_LINE_MAX / 2 : p;
        if (e - from < DIAG_LINE_MAX) from = e - DIAG_LINE_MAX;
        while (from > p && ((unsigned char)*from & 0xc0) == 0x80) from--; /* whole UTF-8 characters */
        const char *to = from + DIAG_LINE_MAX;
        while (to < e && ((unsigned char)*to & 0xc0) == 0x80) to++;
        cut_left = from > p;
        cut_right = to < e;
        p = from;
        e = to;
    }
    stc__buf_putc(b, ' ');
    if (cut_left) stc__buf_puts(b, "...");
    /* Control bytes (NUL, ESC, ...) would cut the text or reach the
     * terminal: shown as '?', one column each so the caret still lines up. */
    for (const char *q = p; q < e; q++) {
        unsigned char c = (unsigned char)*q;
        stc__buf_putc(b, (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c);
    }
    if (cut_right) stc__buf_puts(b, "...");
    stc__buf_puts(b, "\n ");
    if (cut_left) stc__buf_puts(b, "   ");
    for (const char *q = p; q < caret && q < e; q++) stc__buf_putc(b, *q == '\t' ? '\t' : ' ');
    stc__buf_puts(b, "^\n");
}

char *stc_diags_format(const stc_diags *d)
{
    if (!d || (d->count == 0 && !d->oom)) return NULL;
    buf b = BUF_INIT;
    for (size_t i = 0; i < d->count; i++) {
        const diag_entry *e = &d->items[i];
        stc__buf_printf(&b, "%s:%d:%d: error: %s\n", d->file, e->line, e->col, e->message);
        diags_caret(&b, d, e->line, e->col);
    }
    if (d->dropped) stc__buf_printf(&b, "%s: note: %zu more errors not shown\n", d->file, d->dropped);
    if (d->oom) stc__buf_printf(&b, "%s: error: out of memory while reporting errors\n", d->file);
    return stc__buf_take(&b);
}

void stc_diags_free(stc_diags *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->count; i++) free(d->items[i].message);
    free(d->items);
    free(d->file);
    free(d->src);
    free(d);
}
