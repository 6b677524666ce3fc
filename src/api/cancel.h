/* cancel.h - struct stc_cancel: a flag a host raises to stop a run. */
#ifndef STC_API_CANCEL_H
#define STC_API_CANCEL_H

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
