/* program.h - struct stc_program: a resolved, type-checked IR. */
#ifndef STC_API_PROGRAM_H
#define STC_API_PROGRAM_H

#include "ir/ir.h"
#include "util/diag.h"

struct stc_program {
    ir_program *ir; /* owned */
};

/* Runs resolve and type checking on p and wraps it. Takes ownership of p
 * and of d (returned through diags when the caller wants it, else freed).
 * Returns 0, STC_ECOMPILE or STC_ENOMEM. */
int stc__program_finish(ir_program *p, stc_diags *d, stc_program **out, stc_diags **diags);

#endif
