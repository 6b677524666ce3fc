/* result.h - struct stc_result: what a run produces (main's value, the
 * final states, the first error, the runtime's counters, the profile).
 *
 * Kept low in the layers because the evaluator (src/eval) fills it and
 * src/api/result.c gives the host its public accessors (stc.h). */
#ifndef STC_VALUE_RESULT_H
#define STC_VALUE_RESULT_H

#include <stdarg.h>

#include "stc.h"

struct stc_result {
    stc_value value;      /* owned; INVALID after an error */
    size_t nstates;
    char **names;         /* owned copies, declaration order */
    stc_value *states;    /* owned; unit for states never initialised */
    /* Error (err.message == NULL when the run succeeded); strings owned. */
    stc_error_info err;
    char *owned_message;  /* err.message when allocated; NULL when static */
    stc_run_stats stats;  /* the parallel runtime's counters */
    bool to_sink;         /* a stream program's list result went to the sink */
    long long input_items; /* a stream program's input items read */
    struct result_profile *profile; /* opts.profile runs only (src/trace/profile.h) */
};

/* Frees r and everything it owns (stc_result_free). NULL is a no-op. */
void stc__result_free(stc_result *r);

/* A result with room for n states (all unit, names copied). NULL on OOM. */
stc_result *stc__result_new(size_t nstates, const char *const *names);
/* Records the error; only the first call has an effect (the reference
 * evaluator's first error is the one reported). file/thread may be NULL,
 * line/col 0, item -1. */
void stc__result_set_error(stc_result *r, int code, const char *file, int line, int col,
                      const char *thread, long long item, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;
void stc__result_vset_error(stc_result *r, int code, const char *file, int line, int col,
                       const char *thread, long long item, const char *fmt, va_list ap);

#endif
