/* cancel.c - cancellation flags (see stc_cancel in stc.h). */
#include <stdlib.h>

#include "util/cancel.h"

stc_cancel *stc_cancel_new(void)
{
    /* Every worker reads the flag at every call: alone on its cache line,
     * or a neighbour's writes (the host's, anyone's) would make each read
     * a transfer from another core. */
    stc_cancel *c = aligned_alloc(64, 64);
    if (c) atomic_init(&c->raised, 0);
    return c;
}

void stc_cancel_free(stc_cancel *c) { free(c); }

/* A lock-free atomic store: safe in a signal handler. */
void stc_cancel_request(stc_cancel *c)
{
    if (c) atomic_store(&c->raised, 1);
}

void stc_cancel_reset(stc_cancel *c)
{
    if (c) atomic_store(&c->raised, 0);
}
