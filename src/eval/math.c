/* math.c - the evaluator's math builtins: abs min max (int or float, the
 * same type on both sides) and sqrt floor ceil pow exp log on floats
 * (docs/LANGUAGE.md 7).  Floats follow IEEE 754 as the float operators do
 * (1.0 / 0.0 is inf): sqrt(-1.0) and log(-1.0) are NaN, log(0.0) is -inf,
 * exp and pow overflow to inf; none of them is an error.  floor and ceil
 * give an int, like round, with its errors.  Int abs wraps like unary
 * minus: abs(-9223372036854775808) is itself. */
#include <math.h>
#include <string.h>

#include "eval/eval_internal.h"

/* min/max of floats: NaN when either is (the first NaN), else by IEEE
 * totalOrder, so min(0.0, -0.0) is -0.0 whatever the argument order. */
static double math_float_pick(bool want_max, double a, double b)
{
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    int c = stc__val_order(eval_float(a), eval_float(b));
    return (want_max ? c >= 0 : c <= 0) ? a : b;
}

int stc__eval_math_builtin(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out)
{
    const char *name = stc__ir_builtins[bi].name;
    switch (bi) {
    case BI_ABS:
        if (a[0].tag == STC_T_INT) {
            *out = eval_int(a[0].as.i < 0 ? (int64_t)(0 - (uint64_t)a[0].as.i) : a[0].as.i);
            return 0;
        }
        if (a[0].tag != STC_T_FLOAT) break;
        *out = eval_float(fabs(a[0].as.f));
        return 0;
    case BI_MIN:
    case BI_MAX:
        if (a[0].tag == STC_T_INT && a[1].tag == STC_T_INT) {
            bool first = bi == BI_MIN ? a[0].as.i <= a[1].as.i : a[0].as.i >= a[1].as.i;
            *out = first ? a[0] : a[1];
            return 0;
        }
        if (a[0].tag != STC_T_FLOAT || a[1].tag != STC_T_FLOAT) break;
        *out = eval_float(math_float_pick(bi == BI_MAX, a[0].as.f, a[1].as.f));
        return 0;
    case BI_POW:
        if (a[0].tag != STC_T_FLOAT || a[1].tag != STC_T_FLOAT) break;
        *out = eval_float(pow(a[0].as.f, a[1].as.f));
        return 0;
    case BI_SQRT:
    case BI_EXP:
    case BI_LOG:
    case BI_FLOOR:
    case BI_CEIL: {
        if (a[0].tag != STC_T_FLOAT) break;
        double x = a[0].as.f;
        if (bi == BI_FLOOR || bi == BI_CEIL) return stc__eval_to_int(cx, loc, name, x, bi == BI_FLOOR ? floor(x) : ceil(x), out);
        *out = eval_float(bi == BI_SQRT ? sqrt(x) : bi == BI_EXP ? exp(x) : log(x));
        return 0;
    }
    default: break;
    }
    return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad arguments to '%s'", name);
}
