/* maps.c - the evaluator's map builtins (docs/LANGUAGE.md, maps): get
 * lookup has put remove update keys values items to_map; len of a map is
 * in builtins.c.  Errors are reported at the callee name.
 *
 * put, remove and update change their map in place when they hold its
 * only reference (value/map.h): a map argument that is a variable marked
 * as its last use (ir_expr.move, set by stc__ir_mark_moves) is moved out of its
 * frame slot instead of counted, so `let m2 = put(m, k, v) in ...` and a
 * thread's map state held only by the thread update in O(log n). */
#include "eval/eval_internal.h"
#include "value/map.h"

static const stc_value eval_map_unit = {.tag = STC_T_UNIT};

/* Argument 0 of put/remove/update when it is a variable: read after the
 * other arguments (a variable has no effects, so the order is not
 * observable), moved out of its slot at its last use. */
static stc_value eval_map_take(const ir_expr *a, eval_frame *fr)
{
    stc_value *slot = &fr->slots[a->u.var->slot];
    if (!a->move) return val_retain(*slot);
    stc_value v = *slot;
    *slot = eval_map_unit;
    return v;
}

static int eval_map_bad(eval_ctx *cx, ir_loc loc, const char *name)
{
    return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad arguments to '%s'", name);
}

/* A list of n items from the map m, each made by pick (0 keys, 1 values,
 * 2 (key, value) tuples). */
static int eval_map_list(eval_ctx *cx, ir_loc loc, stc_value m, int pick, stc_value *out)
{
    stc_value r = stc__val_seq_alloc(STC_T_LIST, val_map_len(m));
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    val_map_iter it;
    stc__val_map_iter_init(&it, m);
    stc_value k, v, *items = val_seq_items(r);
    for (size_t i = 0; stc__val_map_iter_next(&it, &k, &v); i++) {
        if (pick == 0) items[i] = val_retain(k);
        else if (pick == 1) items[i] = val_retain(v);
        else {
            stc_value kv = stc__val_seq_alloc_unfilled(STC_T_TUPLE, 2);
            if (kv.tag == STC_T_INVALID) {
                val_release(r);
                return stc__eval_oom(cx, loc);
            }
            val_seq_items(kv)[0] = val_retain(k);
            val_seq_items(kv)[1] = val_retain(v);
            items[i] = kv;
        }
    }
    *out = r;
    return 0;
}

/* to_map(ps): pairs in order, later pairs winning. */
static int eval_to_map(eval_ctx *cx, ir_loc loc, stc_value ps, stc_value *out)
{
    if (ps.tag != STC_T_LIST) return eval_map_bad(cx, loc, "to_map");
    stc_value m = stc__val_map_new();
    if (m.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    for (size_t i = 0; i < val_seq_len(ps); i++) {
        stc_value p = val_seq_items(ps)[i];
        if (p.tag != STC_T_TUPLE || val_seq_len(p) != 2) {
            val_release(m);
            return eval_map_bad(cx, loc, "to_map");
        }
        stc_value k = val_retain(val_seq_items(p)[0]), v = val_retain(val_seq_items(p)[1]);
        if (stc__val_map_put(m, k, v, &m)) return stc__eval_oom(cx, loc);
    }
    *out = m;
    return 0;
}

/* The builtins that only read their (borrowed) arguments. */
static int eval_map_read(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out)
{
    if (bi == BI_TO_MAP) return eval_to_map(cx, loc, a[0], out);
    if (a[0].tag != STC_T_MAP) return eval_map_bad(cx, loc, stc__ir_builtins[bi].name);
    switch (bi) {
    case BI_GET: {
        const stc_value *v = stc__val_map_find(a[0], a[1]);
        *out = val_retain(v ? *v : a[2]);
        return 0;
    }
    case BI_LOOKUP: {
        const stc_value *v = stc__val_map_find(a[0], a[1]);
        *out = v ? stc_value_new_inl(val_retain(*v)) : stc_value_new_inr(eval_map_unit);
        return out->tag == STC_T_INVALID ? stc__eval_oom(cx, loc) : 0;
    }
    case BI_HAS: *out = stc_value_bool(stc__val_map_find(a[0], a[1]) != NULL); return 0;
    case BI_KEYS: return eval_map_list(cx, loc, a[0], 0, out);
    case BI_VALUES: return eval_map_list(cx, loc, a[0], 1, out);
    case BI_ITEMS: return eval_map_list(cx, loc, a[0], 2, out);
    default: return eval_map_bad(cx, loc, stc__ir_builtins[bi].name);
    }
}

/* put(m, k, v), remove(m, k), update(m, k, d, f) with m owned (consumed)
 * and the rest borrowed (f a closure). */
static int eval_map_write(eval_ctx *cx, ir_builtin bi, ir_loc loc, stc_value m, const stc_value *a,
                          stc_value *out)
{
    if (m.tag != STC_T_MAP) {
        val_release(m);
        return eval_map_bad(cx, loc, stc__ir_builtins[bi].name);
    }
    int rc = 0;
    if (bi == BI_REMOVE) {
        rc = stc__val_map_remove(m, a[1], out);
    } else if (bi == BI_PUT) {
        rc = stc__val_map_put(m, val_retain(a[1]), val_retain(a[2]), out);
    } else {
        /* update: f runs once, on the value at k or d. */
        const stc_value *cur = stc__val_map_find(m, a[1]);
        stc_value arg = val_retain(cur ? *cur : a[2]), nv;
        if ((rc = stc__eval_apply(cx, a[3], 1, &arg, loc, &nv))) {
            val_release(m);
            return rc;
        }
        rc = stc__val_map_put(m, val_retain(a[1]), nv, out);
    }
    return rc ? stc__eval_oom(cx, loc) : 0;
}

int stc__eval_map_builtin(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    ir_loc loc = e->u.call.callee_loc;
    ir_builtin bi = (ir_builtin)e->u.call.callee.index;
    int n = e->u.call.nargs, rc = 0;
    if (n > 4) return eval_map_bad(cx, loc, stc__ir_builtins[bi].name);
    stc_value a[4] = {eval_map_unit, eval_map_unit, eval_map_unit, eval_map_unit};
    bool owned[4] = {false, false, false, false};
    bool writes = bi == BI_PUT || bi == BI_REMOVE || bi == BI_UPDATE;
    /* A written map that is a variable is taken after the other args. */
    bool late = writes && e->u.call.args[0]->kind == IR_VAR;
    for (int i = late ? 1 : 0; i < n && rc == 0; i++) rc = eval_operand(cx, e->u.call.args[i], fr, &a[i], &owned[i]);
    if (rc == 0 && writes) {
        stc_value m = late ? eval_map_take(e->u.call.args[0], fr) : a[0];
        if (!late && !owned[0]) m = val_retain(m);
        owned[0] = false;
        a[0] = eval_map_unit;
        rc = eval_map_write(cx, bi, loc, m, a, out);
    } else if (rc == 0) {
        rc = eval_map_read(cx, bi, loc, a, out);
    }
    for (int i = 0; i < n; i++)
        if (owned[i]) val_release(a[i]);
    return rc;
}
