/* env.c - the registry of C state threads a host offers to programs. */
#include "api/env.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "lang/lang.h"

stc_env *stc_env_new(void) { return calloc(1, sizeof(stc_env)); }

static void env_thread_free(ir_cthread *ct)
{
    if (!ct) return;
    free((char *)ct->def.name);
    free((char *)ct->def.type);
    free((char *)ct->def.state_type);
    free(ct);
}

void stc_env_free(stc_env *env)
{
    if (!env) return;
    for (size_t i = 0; i < env->nthreads; i++) env_thread_free(env->threads[i]);
    free(env->threads);
    stc__ir_program_free(env->types);
    free(env);
}

const stc_thread_def *stc__env_find_thread(const stc_env *env, const char *name)
{
    const ir_cthread *ct = stc__ir_cthread_find(env, name);
    return ct ? &ct->def : NULL;
}

static bool env_valid_name(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* Parses text as a type (if must_be_fun, a function type) into the env's
 * arena: 0 and *out, or STC_EINVAL / STC_ENOMEM.  The compiler uses the
 * result as it is (ir/cthread.h): a type string is parsed once. */
static int env_parse_type(stc_env *env, const char *text, bool must_be_fun, ir_type **out)
{
    if (!env->types && !(env->types = stc__ir_program_new("<type>", NULL))) return STC_ENOMEM;
    stc_diags *d = stc__diags_new("<type>", text, strlen(text));
    if (!d) return STC_ENOMEM;
    /* A type that fails to parse leaves its nodes in the arena until the
     * env is freed: a few bytes per rejected registration. */
    ir_type *t = stc__lang_parse_type(env->types, text, d);
    int rc = t && !diags_any(d) ? 0 : STC_EINVAL;
    stc_diags_free(d);
    if (rc == 0 && must_be_fun && stc__ir_type_resolve(t)->kind != TY_FUN) rc = STC_EINVAL;
    if (rc == 0) *out = t;
    return rc;
}

int stc_env_add_thread(stc_env *env, const stc_thread_def *def)
{
    if (!env || !def || !def->fn || !env_valid_name(def->name) || !def->type) return STC_EINVAL;
    if ((unsigned)def->access > STC_INDEPENDENT) return STC_EINVAL;
    /* The two halves come together, and only for a g x h thread. */
    if ((def->output_fn || def->state_fn) &&
        (!def->output_fn || !def->state_fn || def->access != STC_INDEPENDENT))
        return STC_EINVAL;
    if (stc__ir_cthread_find(env, def->name)) return STC_EEXIST;
    if (stc__ir_builtin_lookup(def->name) >= 0) return STC_EEXIST;
    ir_type *type = NULL, *state_type = NULL;
    int rc = env_parse_type(env, def->type, true, &type);
    if (rc == 0 && def->state_type) rc = env_parse_type(env, def->state_type, false, &state_type);
    if (rc != 0) return rc;
    if (env->nthreads == env->cap) {
        size_t cap = env->cap ? env->cap * 2 : 8;
        ir_cthread **threads = realloc(env->threads, cap * sizeof *threads);
        if (!threads) return STC_ENOMEM;
        env->threads = threads;
        env->cap = cap;
    }
    ir_cthread *ct = calloc(1, sizeof *ct);
    if (!ct) return STC_ENOMEM;
    ct->def = *def;
    ct->def.name = strdup(def->name);
    ct->def.type = strdup(def->type);
    ct->def.state_type = def->state_type ? strdup(def->state_type) : NULL;
    ct->type = type;
    ct->state_type = state_type;
    if (!ct->def.name || !ct->def.type || (def->state_type && !ct->def.state_type)) {
        env_thread_free(ct);
        return STC_ENOMEM;
    }
    env->threads[env->nthreads++] = ct;
    return 0;
}
