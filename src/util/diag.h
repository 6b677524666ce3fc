/* diag.h - compile diagnostics (struct stc_diags of the public API).
 * Keeps a copy of the source so that formatting can show the line and a
 * caret. At most DIAG_MAX entries are kept; more are counted but dropped. */
#ifndef STC_UTIL_DIAG_H
#define STC_UTIL_DIAG_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "stc.h"

#define DIAG_MAX 50
/* Bounds on what one diagnostic prints (see diag.c): bytes of the source
 * line shown, bytes of one name in a message, bytes of a message. */
#define DIAG_LINE_MAX 120
#define DIAG_NAME_MAX 64
#define DIAG_MESSAGE_MAX 1024

typedef struct diag_entry {
    int line, col;      /* 1-based; 0 when unknown */
    char *message;
} diag_entry;

struct stc_diags {
    char *file;
    char *src;          /* copy of the source, NUL-terminated (may be NULL) */
    size_t src_len;
    diag_entry *items;
    size_t count, cap;
    size_t dropped;     /* entries beyond DIAG_MAX */
    bool oom;           /* an allocation failed while recording */
};

/* file and src are copied; src may be NULL. NULL when out of memory. */
stc_diags *stc__diags_new(const char *file, const char *src, size_t len);
void stc__diags_add(stc_diags *d, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void stc__diags_vadd(stc_diags *d, int line, int col, const char *fmt, va_list ap);
static inline bool diags_any(const stc_diags *d) { return d->count > 0 || d->oom; }

#endif
