/* env.h - struct stc_env: the C state threads a host registered. */
#ifndef STC_API_ENV_H
#define STC_API_ENV_H

#include "stc.h"

struct stc_env {
    stc_thread_def *defs; /* owned copies; name/type/state_type strdup'd */
    size_t ndefs, cap;
};

/* The registered C thread called `name`, or NULL. */
const stc_thread_def *env_find_thread(const stc_env *env, const char *name);

#endif
