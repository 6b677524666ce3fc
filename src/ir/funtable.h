/* funtable.h - every function of a program numbered, so that a closure
 * can travel to another process as a number (value/wire.h): top-level
 * functions first, in declaration order (their ir_fun.index), then the
 * lambdas in the order a fixed walk meets them (the functions' bodies in
 * declaration order, then the threads' inits, then main; each expression
 * before its sub-expressions, left to right).  The numbering depends on
 * the program's text alone, so every rank that compiled the same text
 * agrees on it (docs/DESIGN.md, "The distributed runtime"). */
#ifndef STC_IR_FUNTABLE_H
#define STC_IR_FUNTABLE_H

#include <stddef.h>

#include "ir/ir.h"
#include "value/value.h"
#include "value/wire.h"

typedef struct ir_fun_table {
    ir_fun **funs; /* by number */
    size_t n, cap;
    val_memo ids;  /* ir_fun * -> its number */
} ir_fun_table;

/* Numbers p's functions into t.  0 or STC_ENOMEM (t is then empty). */
int stc__ir_fun_table_build(const ir_program *p, ir_fun_table *t);
void stc__ir_fun_table_free(ir_fun_table *t);
/* The closure codes of wire.h over t (which must outlive their use). */
wire_funcs stc__ir_fun_table_wire(ir_fun_table *t);

#endif
