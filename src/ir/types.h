/* types.h - type inference over a resolved program. */
#ifndef STC_IR_TYPES_H
#define STC_IR_TYPES_H

#include "ir/ir.h"
#include "util/diag.h"

/* Infers and checks every type; fills expr/var/fun/thread types. 0 on
 * success; -1 when errors were reported to d (or memory ran out). */
int stc__types_check(ir_program *p, stc_diags *d);

#endif
