/* keyed.c - calls of keyed threads (docs/LANGUAGE.md, keyed threads).
 *
 * A keyed thread's state is a map from keys to each key's state; t(k, x...)
 * runs f(k, x..., S) with S the key's state (the thread's init value for a
 * key not seen before), puts the new state at k and returns the output:
 * exactly the thread `g(k, x..., m) = let (y, s) = f(k, x..., get(m, k, E))
 * in (y, put(m, k, s))`.  The map is moved out of its slot for the call when
 * the thread's calls can never overlap (state_moves), so a uniquely held
 * map is updated in place (O(log n), no copy); otherwise it is shared and
 * put copies one path (O(log n)), which is also exactly g's meaning when f
 * reaches the thread again.  The parallel runtime calls the same function
 * on one shard of the map (src/flow/shards.c). */
#include <stdlib.h>

#include "eval/eval_internal.h"
#include "util/buf.h"
#include "value/map.h"

#define KEYED_SMALL 8
#define KEYED_KEY_BRIEF 60 /* bytes of a key an error message quotes */

static const stc_value keyed_unit = {.tag = STC_T_UNIT};

/* An error raised in keyed thread th's own code (not in another thread it
 * calls) names the key: "division by zero for key \"a\"". */
static void keyed_note_key(eval_ctx *cx, const ir_thread *th, stc_value key)
{
    eval_err *e = &cx->err;
    if (!e->code || e->code == STC_ENOMEM || e->code == STC_ECANCELED || !e->message || e->key_noted ||
        e->thread != th->name)
        return;
    buf b = BUF_INIT;
    stc__buf_printf(&b, "%s for key ", e->message);
    stc__val_print_text_brief(&b, key, KEYED_KEY_BRIEF);
    char *m = stc__buf_take(&b);
    if (!m) return; /* the message without the key */
    free(e->message);
    e->message = m;
    e->key_noted = true;
}

int stc__eval_keyed_call(eval_ctx *cx, int t, stc_value *map, stc_value init, size_t nargs, stc_value *args,
                         ir_loc loc, stc_value *out)
{
    *out = keyed_unit;
    const ir_program *p = cx->p;
    const ir_thread *th = p->threads[t];
    if (th->fun < 0 || th->fun >= p->nfuns || th->ninputs < 1 || map->tag != STC_T_MAP) {
        for (size_t i = 0; i < nargs; i++) val_release(args[i]);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: unbound keyed thread '%s'", th->name);
    }
    size_t k = (size_t)th->ninputs; /* the key and the other inputs */
    stc_value small[KEYED_SMALL], *full = small;
    if (k + 1 > KEYED_SMALL && !(full = malloc((k + 1) * sizeof *full))) {
        for (size_t i = 0; i < nargs; i++) val_release(args[i]);
        return stc__eval_oom(cx, loc);
    }
    int rc = stc__eval_adapt_args(cx, th->name, k, nargs, args, full, loc);
    if (rc) {
        if (full != small) free(full);
        return rc;
    }
    stc_value key = val_retain(full[0]);
    stc_value m = *map;
    if (th->state_moves) *map = keyed_unit; /* held once: put updates it in place */
    else val_retain(m);
    /* moved out when held once; then the new state goes back into the
     * same place, one walk of the tree for the call */
    stc_value *slot = NULL;
    bool absent = false;
    if (th->state_moves) slot = stc__val_map_take_slot(m, key, &full[k], &absent);
    if (!slot) {
        const stc_value *cur = absent ? NULL : stc__val_map_find(m, key);
        full[k] = val_retain(cur ? *cur : init);
    }
    stc_value pair = keyed_unit;
    rc = stc__eval_call_fun(cx, p->funs[th->fun], NULL, k + 1, full, loc, &pair);
    if (full != small) free(full);
    if (rc == 0 && (pair.tag != STC_T_TUPLE || val_seq_len(pair) != 2))
        rc = stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: keyed thread '%s' did not return a pair",
                             th->name);
    if (rc) {
        keyed_note_key(cx, th, key);
        val_release(pair);
        val_release(key);
        if (th->state_moves) *map = m;
        else val_release(m);
        return rc;
    }
    *out = val_retain(val_seq_items(pair)[0]);
    stc_value s = val_retain(val_seq_items(pair)[1]);
    val_release(pair);
    if (slot) { /* m held once all along: nothing else ran on it */
        val_release(*slot);
        *slot = s;
        val_release(key);
        *map = m;
        return 0;
    }
    if (stc__val_map_put(m, key, s, &m) != 0) {
        /* m was consumed: the thread's state is lost with the run */
        if (th->state_moves) *map = keyed_unit;
        val_release(*out);
        *out = keyed_unit;
        return stc__eval_oom(cx, loc);
    }
    if (!th->state_moves) val_release(*map);
    *map = m;
    return 0;
}

/* The args of keyed call e (leaves or any expressions), evaluated in fr
 * into a (room for e's nargs). */
static int keyed_args(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *a)
{
    for (int i = 0; i < e->u.call.nargs; i++) {
        int rc = stc__eval_expr(cx, e->u.call.args[i], fr, &a[i]);
        if (rc) {
            for (int j = 0; j < i; j++) val_release(a[j]);
            return rc;
        }
    }
    return 0;
}

int stc__eval_keyed_key_of(eval_ctx *cx, int t, size_t n, stc_value *args, ir_loc loc, stc_value *key)
{
    *key = keyed_unit;
    const ir_thread *th = cx->p->threads[t];
    size_t k = th->ninputs > 0 ? (size_t)th->ninputs : 1;
    stc_value fsmall[KEYED_SMALL], *full = k <= KEYED_SMALL ? fsmall : malloc(k * sizeof *full);
    if (!full) {
        for (size_t i = 0; i < n; i++) val_release(args[i]);
        return stc__eval_oom(cx, loc);
    }
    /* the key as the call will see it: after adapting the args (a tuple of
     * all the inputs is taken apart) */
    int rc = stc__eval_adapt_args(cx, th->name, k, n, args, full, loc);
    if (rc == 0) {
        *key = full[0];
        for (size_t i = 1; i < k; i++) val_release(full[i]);
    }
    if (full != fsmall) free(full);
    return rc;
}

int stc__eval_keyed_key(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *key)
{
    *key = keyed_unit;
    size_t n = (size_t)e->u.call.nargs;
    stc_value small[KEYED_SMALL], *a = n <= KEYED_SMALL ? small : malloc(n * sizeof *a);
    int rc = a ? keyed_args(cx, e, fr, a) : stc__eval_oom(cx, e->u.call.callee_loc);
    if (rc == 0) rc = stc__eval_keyed_key_of(cx, e->u.call.callee.index, n, a, e->u.call.callee_loc, key);
    if (a && a != small) free(a);
    return rc;
}

int stc__eval_smap_apply(eval_ctx *cx, int thread, stc_value fnv, stc_value x, ir_loc loc, stc_value *out)
{
    if (thread >= 0) return stc__eval_call_thread(cx, thread, 1, &x, loc, out);
    return stc__eval_apply(cx, fnv, 1, &x, loc, out);
}
