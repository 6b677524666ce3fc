/* env.c - the registry of C state threads a host offers to programs. */
#include "api/env.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "lang/lang.h"

stc_env *stc_env_new(void) { return calloc(1, sizeof(stc_env)); }

static void env_def_free(stc_thread_def *d)
{
    free((char *)d->name);
    free((char *)d->type);
    free((char *)d->state_type);
}

void stc_env_free(stc_env *env)
{
    if (!env) return;
    for (size_t i = 0; i < env->ndefs; i++) env_def_free(&env->defs[i]);
    free(env->defs);
    free(env);
}

const stc_thread_def *env_find_thread(const stc_env *env, const char *name)
{
    if (!env) return NULL;
    for (size_t i = 0; i < env->ndefs; i++)
        if (strcmp(env->defs[i].name, name) == 0) return &env->defs[i];
    return NULL;
}

static bool env_valid_name(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* 0 when text parses as a type (and, if must_be_fun, a function type). */
static int env_check_type(const char *text, bool must_be_fun)
{
    ir_program *p = ir_program_new("<type>", NULL);
    stc_diags *d = diags_new("<type>", text, strlen(text));
    if (!p || !d) {
        ir_program_free(p);
        stc_diags_free(d);
        return STC_ENOMEM;
    }
    ir_type *t = lang_parse_type(p, text, d);
    int rc = t && !diags_any(d) ? 0 : STC_EINVAL;
    if (rc == 0 && must_be_fun && ir_type_resolve(t)->kind != TY_FUN) rc = STC_EINVAL;
    ir_program_free(p);
    stc_diags_free(d);
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
    if (env_find_thread(env, def->name)) return STC_EEXIST;
    if (ir_builtin_lookup(def->name) >= 0) return STC_EEXIST;
    int rc = env_check_type(def->type, true);
    if (rc == 0 && def->state_type) rc = env_check_type(def->state_type, false);
    if (rc != 0) return rc;
    if (env->ndefs == env->cap) {
        size_t cap = env->cap ? env->cap * 2 : 8;
        stc_thread_def *defs = realloc(env->defs, cap * sizeof *defs);
        if (!defs) return STC_ENOMEM;
        env->defs = defs;
        env->cap = cap;
    }
    stc_thread_def copy = *def;
    copy.name = strdup(def->name);
    copy.type = strdup(def->type);
    copy.state_type = def->state_type ? strdup(def->state_type) : NULL;
    if (!copy.name || !copy.type || (def->state_type && !copy.state_type)) {
        env_def_free(&copy);
        return STC_ENOMEM;
    }
    env->defs[env->ndefs++] = copy;
    return 0;
}
