/* ir_dump.h - test-only printer of the program IR as S-expressions, so
 * parser tests can compare whole trees:
 *   (+ x 1)  (call f a b)  (let x a b)  (case e (1 => a) (_ => b))
 *   (fn (x) body)  (tuple a b)  (list a b)  (inl a)  (- a)  (not a)
 * With locs, every node is followed by @LINE:COL. */
#ifndef STC_TEST_IR_DUMP_H
#define STC_TEST_IR_DUMP_H

#include <stdbool.h>

#include "ir/ir.h"

/* Malloc'd strings (free them); NULL when out of memory. */
char *ir_dump_expr(const ir_expr *e, bool locs);
/* One line per declaration: funs, then threads, then main:
 *   (fun f (x s:int) : int body) / (thread t foo init) / (main body) */
char *ir_dump_program(const ir_program *p, bool locs);

/* The program back as fully parenthesised STCLang source (funs, threads,
 * main), which parses to the same IR: the round-trip oracle of the parser
 * fuzz tests. */
char *ir_dump_source(const ir_program *p);

#endif
