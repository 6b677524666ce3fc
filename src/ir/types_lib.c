/* types_lib.c - the types of the library builtins (docs/LANGUAGE.md 7):
 * lists, strings and math.  types.c's types_builtin unifies each argument
 * with the parameter type given here and reports a mismatch at that
 * argument. */
#include "ir/types_internal.h"

bool stc__types_lib_signature(types_ck *ck, int b, ir_type **in, ir_type **res)
{
    ir_type *t_int = ck->t_int, *t_float = ck->t_float, *t_str = ck->t_str, *t_bool = ck->t_bool;
    switch (b) {
    case BI_FOLD: { /* ((b, a) -> b, b, [a]) -> b */
        ir_type *acc = stc__types_fresh(ck), *item = stc__types_fresh(ck);
        ir_type *pair[2] = {acc, item};
        ir_type *params = acc && item ? stc__types_pack(ck, 2, pair) : NULL;
        in[0] = params ? stc__types_fun(ck, params, acc) : NULL;
        in[1] = acc, in[2] = item ? stc__types_list(ck, item) : NULL, *res = acc;
        break;
    }
    case BI_FILTER: { /* (a -> bool, [a]) -> [a] */
        ir_type *item = stc__types_fresh(ck);
        in[0] = item ? stc__types_fun(ck, item, t_bool) : NULL;
        in[1] = *res = item ? stc__types_list(ck, item) : NULL;
        break;
    }
    case BI_APPEND:
    case BI_REVERSE:
    case BI_TAKE:
    case BI_DROP: { /* ([a], [a]) -> [a], [a] -> [a], ([a], int) -> [a] */
        ir_type *item = stc__types_fresh(ck);
        in[0] = *res = item ? stc__types_list(ck, item) : NULL;
        if (b == BI_APPEND) in[1] = in[0];
        if (b == BI_TAKE || b == BI_DROP) in[1] = t_int;
        break;
    }
    case BI_SORT: { /* [a] -> [a], a without functions (the key order) */
        ir_type *item = stc__types_fresh_flag(ck, TYF_EQ, "'sort'");
        in[0] = *res = item ? stc__types_list(ck, item) : NULL;
        break;
    }
    case BI_ZIP: { /* ([a], [b]) -> [(a, b)] */
        ir_type *x = stc__types_fresh(ck), *y = stc__types_fresh(ck);
        ir_type *pair[2] = {x, y};
        ir_type *t = x && y ? stc__types_pack(ck, 2, pair) : NULL;
        in[0] = x ? stc__types_list(ck, x) : NULL;
        in[1] = y ? stc__types_list(ck, y) : NULL;
        *res = t ? stc__types_list(ck, t) : NULL;
        break;
    }
    case BI_SLICE: in[0] = t_str, in[1] = in[2] = t_int, *res = t_str; break;
    case BI_FIND: in[0] = in[1] = t_str, *res = t_int; break;
    case BI_STARTS_WITH:
    case BI_ENDS_WITH:
    case BI_CONTAINS: in[0] = in[1] = t_str, *res = t_bool; break;
    case BI_LOWER:
    case BI_UPPER:
    case BI_TRIM: in[0] = t_str, *res = t_str; break;
    case BI_JOIN: in[0] = t_str, in[1] = stc__types_list(ck, t_str), *res = t_str; break;
    case BI_REPLACE: in[0] = in[1] = in[2] = t_str, *res = t_str; break;
    case BI_TRY_INT:
    case BI_TRY_FLOAT: /* str -> int + () */
        in[0] = t_str, *res = stc__types_sum(ck, b == BI_TRY_INT ? t_int : t_float, ck->t_unit);
        break;
    case BI_ABS:
    case BI_MIN:
    case BI_MAX: { /* int or float, the same on both sides, as operators are typed */
        ir_type *x = stc__types_fresh_flag(ck, TYF_NUM, b == BI_ABS ? "'abs'" : b == BI_MIN ? "'min'" : "'max'");
        in[0] = *res = x;
        if (b != BI_ABS) in[1] = x;
        break;
    }
    case BI_SQRT:
    case BI_EXP:
    case BI_LOG: in[0] = t_float, *res = t_float; break;
    case BI_POW: in[0] = in[1] = t_float, *res = t_float; break;
    case BI_FLOOR:
    case BI_CEIL: in[0] = t_float, *res = t_int; break;
    default: return false;
    }
    return *res != NULL;
}
