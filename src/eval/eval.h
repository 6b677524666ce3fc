/* eval.h - the reference evaluator: the meaning of a program.
 * Call by value, left to right; smap runs item by item, each item through
 * its whole body before the next; a thread's state is threaded through the
 * calls in that order; untaken branches touch nothing. */
#ifndef STC_EVAL_H
#define STC_EVAL_H

#include "ir/ir.h"
#include "value/result.h"

/* Evaluates main of a resolved, type-checked program. Initialises every
 * thread's state (init expressions in declaration order), runs main, then
 * stores the result value and every final state in res (created by the
 * caller with stc__result_new(p->nthreads, names)). Returns 0, or STC_ERUNTIME /
 * STC_ENOMEM / STC_ELIMIT with the error recorded in res. */
struct eval_runtime_hooks;
int stc__eval_run(const ir_program *p, stc_result *res);
/* The same, with the points of main's evaluation listed in hooks (its
 * smaps, tuples and lets) offered to the parallel runtime first (see
 * eval_runtime.h), stopping with STC_ECANCELED when cancel (may be NULL)
 * is raised, and a main that takes an input reading it from io (NULL:
 * empty; see stc_run_stream). */
int stc__eval_run_hooked(const ir_program *p, stc_result *res, const struct eval_runtime_hooks *hooks,
                    const stc_cancel *cancel, const stc_stream *io);

/* Chooses the evaluator's specialised form of every node of a resolved,
 * type-checked program (ir_expr.xop; src/eval/prepare.c).  Once, before
 * any run: afterwards the IR is read-only again.  A program not prepared
 * runs the generic forms, with the same results. */
void stc__eval_prepare(ir_program *p);

#endif
