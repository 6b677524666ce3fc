/* resolve.h - name resolution, arity checks, thread binding, frame slots. */
#ifndef STC_IR_RESOLVE_H
#define STC_IR_RESOLVE_H

#include "ir/ir.h"
#include "util/diag.h"

/* 0 on success; -1 when errors were reported to d (or memory ran out). */
int stc__ir_resolve(ir_program *p, stc_diags *d);
/* Marks the maps that put/remove/update may take over (moves.c); run by
 * stc__ir_resolve on a resolved program. */
void stc__ir_mark_moves(ir_program *p);

#endif
