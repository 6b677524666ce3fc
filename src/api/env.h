/* env.h - the C state threads a host registered: struct stc_env is
 * defined in src/ir/cthread.h, where the compiler reads it. */
#ifndef STC_API_ENV_H
#define STC_API_ENV_H

#include "ir/cthread.h"
#include "stc.h"

/* The registered C thread called `name`, or NULL. */
const stc_thread_def *stc__env_find_thread(const stc_env *env, const char *name);

#endif
