/* cancel.h - struct stc_cancel: a flag a host raises to stop a run.
 *
 * Here, at the bottom of the layers, because the evaluator (src/eval) reads
 * it while src/api/cancel.c implements the public stc_cancel_* calls. */
#ifndef STC_UTIL_CANCEL_H
#define STC_UTIL_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "stc.h"

struct stc_cancel {
    atomic_int raised; /* atomic: set by stc_cancel_request, read by every worker */
};

static inline bool cancel_raised(const stc_cancel *c)
{
    return c && atomic_load_explicit(&((stc_cancel *)c)->raised, memory_order_relaxed);
}

#endif
