/* result.c - building a run's result and recording its first error
 * (see result.h; the public accessors are in src/api/result.c). */
#include "value/result.h"

#include <stdlib.h>
#include <string.h>

#include "trace/profile.h"
#include "util/buf.h"
#include "value/value.h"

stc_result *stc__result_new(size_t nstates, const char *const *names)
{
    stc_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->value = (stc_value){.tag = STC_T_INVALID};
    r->err.item = -1;
    r->nstates = nstates;
    if (nstates) {
        r->names = calloc(nstates, sizeof *r->names);
        r->states = calloc(nstates, sizeof *r->states);
        if (!r->names || !r->states) { stc__result_free(r); return NULL; }
        for (size_t i = 0; i < nstates; i++) {
            r->states[i] = stc_value_unit();
            r->names[i] = strdup(names[i]);
            if (!r->names[i]) { stc__result_free(r); return NULL; }
        }
    }
    return r;
}

void stc__result_vset_error(stc_result *r, int code, const char *file, int line, int col,
                       const char *thread, long long item, const char *fmt, va_list ap)
{
    if (!r || r->err.message) return;
    buf b = BUF_INIT;
    stc__buf_vprintf(&b, fmt, ap);
    char *msg = stc__buf_take(&b);
    r->err.code = code;
    /* If memory is short, keep a static message rather than losing the error. */
    r->owned_message = msg;
    r->err.message = msg ? msg : "out of memory";
    r->err.file = file ? strdup(file) : NULL;
    r->err.line = line;
    r->err.col = col;
    r->err.thread = thread ? strdup(thread) : NULL;
    r->err.item = item;
}

void stc__result_set_error(stc_result *r, int code, const char *file, int line, int col,
                      const char *thread, long long item, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stc__result_vset_error(r, code, file, line, col, thread, item, fmt, ap);
    va_end(ap);
}

void stc__result_free(stc_result *r)
{
    if (!r) return;
    val_release(r->value);
    for (size_t i = 0; i < r->nstates; i++) {
        if (r->names) free(r->names[i]);
        if (r->states) val_release(r->states[i]);
    }
    free(r->names);
    free(r->states);
    free(r->owned_message);
    stc__profile_free(r->profile);
    free((char *)r->err.file);
    free((char *)r->err.thread);
    free(r);
}
