/* cthread.c - looking up the C threads of an env (see cthread.h). */
#include "ir/cthread.h"

#include <string.h>

const ir_cthread *stc__ir_cthread_find(const stc_env *env, const char *name)
{
    if (!env || !name) return NULL;
    for (size_t i = 0; i < env->nthreads; i++)
        if (strcmp(env->threads[i]->def.name, name) == 0) return env->threads[i];
    return NULL;
}
