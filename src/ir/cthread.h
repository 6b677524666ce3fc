/* cthread.h - struct stc_env: the C state threads a host registered, as
 * the compiler reads them.
 *
 * src/api/env.c fills it (stc_env_add_thread): it checks a definition and
 * parses its type strings once, with src/lang, into the env's own arena.
 * The passes read it from here: stc__ir_resolve binds `thread t = NAME` to the
 * registered NAME, stc__types_check takes the parsed types.  So src/ir needs
 * nothing from the layers above it.
 *
 * The parsed types have no type variables, and the checker writes only
 * type variables, so every program compiled against the env shares them
 * read-only (the env outlives its programs: stc.h, stc_compile).
 */
#ifndef STC_IR_CTHREAD_H
#define STC_IR_CTHREAD_H

#include "ir/ir.h"

typedef struct ir_cthread {
    stc_thread_def def;   /* the host's definition, copied; name, type, state_type owned */
    ir_type *type;        /* def.type parsed: a TY_FUN */
    ir_type *state_type;  /* def.state_type parsed, or NULL when it has none (state unit) */
} ir_cthread;

struct stc_env {
    ir_cthread **threads; /* each allocated on its own: ir_thread.cthread stays valid
                             when the table grows */
    size_t nthreads, cap;
    ir_program *types;    /* its arena holds the parsed types */
};

/* The C thread registered as `name`, or NULL (also for a NULL env). */
const ir_cthread *stc__ir_cthread_find(const stc_env *env, const char *name);

#endif
