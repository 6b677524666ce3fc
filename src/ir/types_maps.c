/* types_maps.c - the types of the map builtins (docs/LANGUAGE.md, maps).
 * Every key type is a fresh variable that may hold no function (the flag
 * == uses), so a map keyed by functions is a located compile error. */
#include <stdlib.h>

#include "ir/types_internal.h"

ir_type *stc__types_map_builtin(types_ck *ck, ir_expr *e)
{
    ir_expr **args = e->u.call.args;
    ir_loc loc = stc__types_call_loc(e);
    int b = e->u.call.callee.index;
    ir_type *K = stc__types_fresh_flag(ck, TYF_EQ, "a map key"), *V = stc__types_fresh(ck);
    ir_type *M = K && V ? stc__types_map(ck, K, V) : NULL;
    if (!M) return NULL;
    ir_type *in[4] = {M, K, NULL, NULL}, *res = NULL;
    switch (b) {
    case BI_GET: in[2] = V, res = V; break;
    case BI_LOOKUP: res = stc__types_sum(ck, V, ck->t_unit); break;
    case BI_HAS: res = ck->t_bool; break;
    case BI_PUT: in[2] = V, res = M; break;
    case BI_REMOVE: res = M; break;
    case BI_UPDATE: in[2] = V, in[3] = stc__types_fun(ck, V, V), res = M; break;
    case BI_KEYS: res = stc__types_list(ck, K); break;
    case BI_VALUES: res = stc__types_list(ck, V); break;
    case BI_ITEMS: res = stc__types_list(ck, stc__types_pack(ck, 2, (ir_type *[]){K, V})); break;
    case BI_TO_MAP: in[0] = stc__types_list(ck, stc__types_pack(ck, 2, (ir_type *[]){K, V})), res = M; break;
    default: stc__types_error(ck, loc, "unknown builtin"); return NULL;
    }
    const char *name = stc__ir_builtins[b].name;
    for (int i = 0; i < e->u.call.nargs && i < 4; i++) {
        if (!in[i]) return NULL;
        int rc = stc__types_unify(ck, in[i], args[i]->type);
        if (rc)
            return stc__types_fail_fmt(ck, stc__types_loc(args[i], loc), rc,
                                  stc__types_fmt("type mismatch in argument %d of '%s': expected %%s, found %%s",
                                            i + 1, name),
                                  in[i], args[i]->type);
    }
    return res;
}
