/* result.c - the public accessors of a run's result (the record itself
 * and its construction are in src/value/result.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "trace/profile.h"
#include "util/buf.h"
#include "util/diag.h"
#include "value/result.h"
#include "value/value.h"

stc_value stc_result_value(const stc_result *r)
{
    return r ? r->value : (stc_value){.tag = STC_T_INVALID};
}
size_t stc_result_state_count(const stc_result *r) { return r ? r->nstates : 0; }
const char *stc_result_state_name(const stc_result *r, size_t i)
{
    return r && i < r->nstates ? r->names[i] : NULL;
}
stc_value stc_result_state(const stc_result *r, size_t i)
{
    return r && i < r->nstates ? r->states[i] : (stc_value){.tag = STC_T_INVALID};
}

char *stc_result_to_json(const stc_result *r)
{
    if (!r) return NULL;
    buf b = BUF_INIT;
    /* The whole line is held to VAL_PRINT_MAX: NULL (E2BIG) beyond, like stc_value_to_json. */
    stc__buf_puts(&b, "{\"result\": ");
    int rc = stc__val_print_json(&b, r->value, VAL_PRINT_MAX - b.len);
    stc__buf_puts(&b, ", \"states\": {");
    for (size_t i = 0; rc == 0 && i < r->nstates; i++) {
        if (i) stc__buf_puts(&b, ", ");
        stc__buf_printf(&b, "\"%s\": ", r->names[i]); /* thread names are identifiers: no escaping */
        rc = b.len < VAL_PRINT_MAX ? stc__val_print_json(&b, r->states[i], VAL_PRINT_MAX - b.len) : STC_ELIMIT;
    }
    stc__buf_puts(&b, "}}");
    return stc__val_print_take(&b, rc);
}

stc_error_info stc_result_error(const stc_result *r)
{
    if (!r) return (stc_error_info){.item = -1};
    return r->err;
}

char *stc_result_error_format(const stc_result *r)
{
    if (!r || !r->err.message) return NULL;
    const stc_error_info *e = &r->err;
    buf b = BUF_INIT;
    if (e->file && e->line > 0) stc__buf_printf(&b, "%s:%d:%d: ", e->file, e->line, e->col);
    else if (e->file) stc__buf_printf(&b, "%s: ", e->file);
    stc__buf_printf(&b, "error: %s", e->message);
    /* a thread's name is cut as compile diagnostics cut names */
    int name_len = e->thread && strlen(e->thread) > DIAG_NAME_MAX ? DIAG_NAME_MAX : INT_MAX;
    const char *cut = name_len == INT_MAX ? "" : "...";
    if (e->thread && e->item >= 0)
        stc__buf_printf(&b, " (in thread '%.*s%s', smap item %lld)", name_len, e->thread, cut, e->item);
    else if (e->thread) stc__buf_printf(&b, " (in thread '%.*s%s')", name_len, e->thread, cut);
    else if (e->item >= 0) stc__buf_printf(&b, " (smap item %lld)", e->item);
    return stc__buf_take(&b);
}

stc_run_stats stc_result_stats(const stc_result *r)
{
    return r ? r->stats : (stc_run_stats){0};
}

void stc_result_free(stc_result *r) { stc__result_free(r); }

size_t stc_result_profile_count(const stc_result *r) { return r && r->profile ? r->profile->nstages : 0; }

stc_stage_profile stc_result_profile_stage(const stc_result *r, size_t i)
{
    if (!r || !r->profile || i >= r->profile->nstages) return (stc_stage_profile){.pipeline = -1};
    return r->profile->stages[i];
}

double stc_result_profile_wall_ms(const stc_result *r, int pipeline)
{
    if (!r || !r->profile) return 0;
    if (pipeline < 0) return r->profile->wall_ms;
    return pipeline < r->profile->npipelines ? r->profile->pipeline_wall_ms[pipeline] : 0;
}

double stc_result_predict_speedup(const stc_result *r, int workers)
{
    return r && r->profile ? stc__profile_predict(r->profile, workers) : 0;
}

char *stc_result_profile_format(const stc_result *r) { return r ? stc__profile_format(r->profile) : NULL; }

bool stc_result_streamed(const stc_result *r) { return r && r->to_sink; }

long long stc_result_input_items(const stc_result *r) { return r ? r->input_items : 0; }
