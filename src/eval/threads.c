/* threads.c - thread states, thread calls, the C thread context, stc__eval_run.
 *
 * A lang thread's state is a value threaded through its function: t(x)
 * calls fun(x, s) and keeps s' of the returned (out, s').  A C thread's
 * state is def->state_size bytes owned by the run, handed to def->fn. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "value/map.h"
#include "util/buf.h"
#include "value/result.h"

#define EVAL_SMALL 8

static const stc_value eval_unit = {.tag = STC_T_UNIT};

/* ---- The C thread context (public API) ------------------------------------ */

int stc_ctx_error(stc_ctx *cx, const char *fmt, ...)
{
    if (!cx) return STC_ERUNTIME;
    if (cx->message || cx->error_oom || !fmt) return STC_ERUNTIME; /* the first one counts */
    buf b = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    stc__buf_vprintf(&b, fmt, ap);
    va_end(ap);
    cx->message = stc__buf_take(&b);
    if (!cx->message) cx->error_oom = true;
    return STC_ERUNTIME;
}

void *stc_ctx_user(stc_ctx *cx) { return cx && cx->def ? cx->def->user : NULL; }

/* ---- Values against types --------------------------------------------------- */

/* A C thread may return a value with much sharing (one sublist held twice,
 * nested 40 times, is 2^40 paths): past VAL_MEMO_AFTER containers, shared
 * objects found to have a type are remembered with it, so each (object,
 * type) is checked once.  The recursion is bounded by the type's depth. */
typedef struct eval_type_walk {
    val_memo memo;
    size_t steps;
} eval_type_walk;

static bool eval_has_type(eval_type_walk *w, stc_value v, ir_type *ty)
{
    ty = stc__ir_type_resolve(ty);
    if (!ty || ty->kind == TY_VAR) return v.tag != STC_T_INVALID;
    switch (ty->kind) {
    case TY_INT: return v.tag == STC_T_INT;
    case TY_FLOAT: return v.tag == STC_T_FLOAT;
    case TY_BOOL: return v.tag == STC_T_BOOL;
    case TY_STR: return v.tag == STC_T_STR;
    case TY_UNIT: return v.tag == STC_T_UNIT;
    case TY_FUN: return v.tag == STC_T_FUNC;
    case TY_LIST:
        if (v.tag != STC_T_LIST) return false;
        break;
    case TY_TUPLE:
        if (v.tag != STC_T_TUPLE || val_seq_len(v) != (size_t)ty->n) return false;
        break;
    case TY_SUM:
        if (v.tag != STC_T_INL && v.tag != STC_T_INR) return false;
        break;
    case TY_MAP:
        if (v.tag != STC_T_MAP) return false;
        break;
    default: return false;
    }
    bool memo = ++w->steps >= VAL_MEMO_AFTER && val_obj_shared(v.as.obj);
    if (memo && stc__val_memo_get(&w->memo, v.as.obj, ty, NULL, NULL)) return true;
    bool ok = true;
    if (ty->kind == TY_MAP) {
        val_map_iter it;
        stc__val_map_iter_init(&it, v);
        stc_value k, x;
        while (ok && stc__val_map_iter_next(&it, &k, &x))
            ok = eval_has_type(w, k, ty->args[0]) && eval_has_type(w, x, ty->args[1]);
    } else if (ty->kind == TY_LIST) {
        for (size_t i = 0; ok && i < val_seq_len(v); i++) ok = eval_has_type(w, val_seq_items(v)[i], ty->args[0]);
    } else if (ty->kind == TY_TUPLE) {
        for (int i = 0; ok && i < ty->n; i++) ok = eval_has_type(w, val_seq_items(v)[i], ty->args[i]);
    } else {
        ok = eval_has_type(w, val_box_get(v), ty->args[v.tag == STC_T_INL ? 0 : 1]);
    }
    if (ok && memo) stc__val_memo_put(&w->memo, v.as.obj, ty, 0, 0);
    return ok;
}

bool stc__eval_value_has_type(stc_value v, ir_type *ty)
{
    eval_type_walk w = {VAL_MEMO_INIT, 0};
    bool ok = eval_has_type(&w, v, ty);
    stc__val_memo_free(&w.memo);
    return ok;
}

/* ---- Thread calls ------------------------------------------------------------ */



int stc__eval_thread_result(eval_ctx *cx, int t, stc_value pair, ir_loc loc, stc_value *out)
{
    *out = eval_unit;
    const ir_thread *th = cx->p->threads[t];
    if (pair.tag != STC_T_TUPLE || val_seq_len(pair) != 2) {
        val_release(pair);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: thread '%s' did not return a pair",
                          th->name);
    }
    stc_value o = val_retain(val_seq_items(pair)[0]), next = val_retain(val_seq_items(pair)[1]);
    val_release(pair);
    eval_thread_store(cx, t, o, next, out);
    return 0;
}


static int eval_call_lang(eval_ctx *cx, int t, size_t nargs, stc_value *args, ir_loc loc,
                          stc_value *out)
{
    const ir_program *p = cx->p;
    const ir_thread *th = p->threads[t];
    if (th->fun < 0 || th->fun >= p->nfuns || th->ninputs < 0) {
        for (size_t i = 0; i < nargs; i++) val_release(args[i]);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: unbound thread '%s'", th->name);
    }
    size_t k = (size_t)th->ninputs;
    stc_value small[EVAL_SMALL], *full = small;
    if (k + 1 > EVAL_SMALL && !(full = malloc((k + 1) * sizeof *full))) {
        for (size_t i = 0; i < nargs; i++) val_release(args[i]);
        return stc__eval_oom(cx, loc);
    }
    int rc = stc__eval_adapt_args(cx, th->name, k, nargs, args, full, loc);
    stc_value pair = eval_unit;
    if (rc == 0) {
        full[k] = eval_state_take(cx, t); /* the state as of this call */
        rc = stc__eval_call_fun(cx, p->funs[th->fun], NULL, k + 1, full, loc, &pair);
    }
    if (full != small) free(full);
    if (rc) return rc;
    return stc__eval_thread_result(cx, t, pair, loc, out);
}

/* The input a C thread gets for nargs args (consumed): unit, the arg, or
 * the tuple of the args. */
static int eval_c_input(eval_ctx *cx, size_t nargs, stc_value *args, ir_loc loc, stc_value *in)
{
    *in = eval_unit;
    if (nargs == 1) *in = args[0];
    else if (nargs > 1 && (*in = stc_value_new_tuple(nargs, args)).tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    return 0;
}

/* Turns a C thread's return code (and ccx's message) into the evaluator's
 * error, or checks its output v and stores it in *out (out NULL: a state
 * part, no output).  Errors name the thread. */
static int eval_c_result(eval_ctx *cx, const ir_thread *th, ir_loc loc, int code, stc_ctx *ccx, stc_value v,
                         stc_value *out)
{
    const char *saved = cx->thread;
    cx->thread = th->name;
    int rc = 0;
    if (out) *out = eval_unit;
    if (code < 0) {
        val_release(v);
        if (ccx->error_oom) rc = stc__eval_oom(cx, loc);
        else
            rc = stc__eval_error(cx, STC_ERUNTIME, loc, "thread '%s' failed: %s", th->name,
                            ccx->message ? ccx->message : stc_strerror(code));
    } else if (out && !stc__eval_value_has_type(v, th->out_type)) {
        val_release(v);
        rc = stc__eval_error(cx, STC_ERUNTIME, loc, "thread '%s' returned a value of the wrong type", th->name);
    } else if (out) {
        *out = v;
    }
    cx->thread = saved;
    free(ccx->message);
    return rc;
}

int stc__eval_call_c_rest(eval_ctx *cx, int t, ir_loc loc, int code, stc_ctx *ccx, stc_value v, stc_value *out)
{
    return eval_c_result(cx, cx->p->threads[t], loc, code, ccx, v, out);
}

/* A C thread called with nargs args (consumed). */
static int eval_call_c_args(eval_ctx *cx, int t, size_t nargs, stc_value *args, ir_loc loc, stc_value *out)
{
    const ir_thread *th = cx->p->threads[t];
    if (!th->cdef || !th->cdef->fn || !cx->states[t].ready) {
        for (size_t i = 0; i < nargs; i++) val_release(args[i]);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: thread '%s' is not ready", th->name);
    }
    stc_value in;
    int rc = eval_c_input(cx, nargs, args, loc, &in);
    if (rc == 0) rc = eval_call_c(cx, t, &in, loc, out);
    val_release(in);
    return rc;
}

/* The values slots[idx[0..n-1]] (borrowed) as owned args in small (n <= 8)
 * or a malloc'd array; NULL when out of memory. */
static stc_value *eval_gather(const stc_value *slots, const int *idx, size_t n, stc_value *small)
{
    stc_value *args = n <= 8 ? small : malloc(n * sizeof *args);
    for (size_t i = 0; args && i < n; i++) args[i] = val_retain(slots[idx[i]]);
    return args;
}

/* A split C thread's output part (output_fn on the inputs from[idx[i]];
 * out != NULL) or state part (state_fn on the state). */
static int eval_c_part(eval_ctx *cx, int t, const stc_value *from, const int *idx, size_t nargs, ir_loc loc,
                       stc_value *out)
{
    const ir_thread *th = cx->p->threads[t];
    const stc_thread_def *def = th->cdef;
    struct stc_ctx ccx = {.def = def};
    stc_value v = eval_unit;
    int code;
    if (!out) {
        code = def->state_fn(cx->states[t].cstate, &ccx);
    } else if (nargs == 1) { /* the input itself, borrowed */
        code = def->output_fn(NULL, &from[idx[0]], &v, &ccx);
    } else {
        stc_value small[8], *args = eval_gather(from, idx, nargs, small), in;
        int rc = args ? eval_c_input(cx, nargs, args, loc, &in) : stc__eval_oom(cx, loc);
        if (args != small) free(args);
        if (rc) return rc;
        code = def->output_fn(NULL, &in, &v, &ccx);
        val_release(in);
    }
    return eval_c_result(cx, th, loc, code, &ccx, v, out);
}

/* A split lang thread's part: the output item (out != NULL; the inputs
 * from[idx[i]]) or the state item of its function's body, the pair
 * (g(x), h(s)), evaluated in a frame of that function as the whole call
 * would. */
static int eval_lang_part(eval_ctx *cx, int t, const stc_value *from, const int *idx, size_t nargs, ir_loc loc,
                          stc_value *out)
{
    const ir_program *p = cx->p;
    const ir_thread *th = p->threads[t];
    const ir_fun *fn = p->funs[th->fun];
    size_t k = (size_t)th->ninputs, nslots = (size_t)fn->nslots;
    if (cx->depth + 1 >= EVAL_MAX_DEPTH) return stc__eval_error(cx, STC_ELIMIT, loc, "call depth limit exceeded");
    stc_value small[EVAL_SMALL], *slots = nslots <= EVAL_SMALL ? small : malloc(nslots * sizeof *slots);
    if (!slots) return stc__eval_oom(cx, loc);
    for (size_t i = 0; i < nslots; i++) slots[i] = eval_unit;
    int rc = 0;
    if (!out) {
        slots[k] = val_retain(cx->states[t].value);
    } else if (nargs == k) { /* straight into the frame */
        for (size_t i = 0; i < k; i++) slots[i] = val_retain(from[idx[i]]);
    } else {
        stc_value asmall[8], *a = eval_gather(from, idx, nargs, asmall);
        rc = a ? stc__eval_adapt_args(cx, th->name, k, nargs, a, slots, loc) : stc__eval_oom(cx, loc);
        if (a != asmall) free(a);
    }
    const char *saved = cx->thread;
    cx->thread = th->name;
    cx->depth += 2; /* the call and the function's application */
    eval_frame ffr = {slots, fn};
    stc_value v = eval_unit;
    if (rc == 0) rc = stc__eval_expr(cx, fn->body->u.agg.items[out ? 0 : 1], &ffr, &v);
    cx->depth -= 2;
    cx->thread = saved;
    for (size_t i = 0; i < nslots; i++) val_release(slots[i]);
    if (slots != small) free(slots);
    if (rc) return rc;
    if (out) {
        *out = v;
    } else {
        val_release(cx->states[t].value);
        cx->states[t].value = v;
    }
    return 0;
}

int stc__eval_call_thread_part(eval_ctx *cx, int t, const stc_value *slots, const int *args, int nargs, ir_loc loc,
                          stc_value *out)
{
    size_t n = out && nargs > 0 ? (size_t)nargs : 0;
    if (cx->p->threads[t]->kind == THREAD_C) return eval_c_part(cx, t, slots, args, n, loc, out);
    return eval_lang_part(cx, t, slots, args, n, loc, out);
}

int stc__eval_call_thread(eval_ctx *cx, int t, size_t nargs, stc_value *args, ir_loc loc,
                     stc_value *out)
{
    *out = eval_unit;
    const ir_thread *th = cx->p->threads[t];
    const char *saved = cx->thread;
    cx->thread = th->name;
    int rc;
    if (!cx->states) {
        for (size_t i = 0; i < nargs; i++) val_release(args[i]);
        rc = stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: thread '%s' called without states",
                        th->name);
    } else if (th->keyed) {
        rc = stc__eval_keyed_call(cx, t, &cx->states[t].value, cx->states[t].init, nargs, args, loc, out);
    } else if (th->kind == THREAD_LANG) {
        rc = eval_call_lang(cx, t, nargs, args, loc, out);
    } else {
        rc = eval_call_c_args(cx, t, nargs, args, loc, out);
    }
    cx->thread = saved;
    return rc;
}

/* ---- States ------------------------------------------------------------------- */

void stc__eval_states_free(const ir_program *p, eval_tstate *st)
{
    if (!st) return;
    for (int i = 0; i < p->nthreads; i++) {
        const ir_thread *th = p->threads[i];
        val_release(st[i].value);
        val_release(st[i].init);
        if (st[i].cstate) {
            if (st[i].ready && th->cdef && th->cdef->state_free)
                th->cdef->state_free(st[i].cstate, th->cdef->user);
            free(st[i].cstate);
        }
    }
    free(st);
}

/* Initialises thread i's state from its init value (v borrowed, or NULL). */
static int eval_state_init(eval_ctx *cx, const ir_thread *th, eval_tstate *st, const stc_value *v)
{
    if (th->keyed) { /* no key seen yet: the empty map; init is each new key's state */
        st->value = stc__val_map_new();
        if (st->value.tag == STC_T_INVALID) {
            st->value = eval_unit;
            return stc__eval_oom(cx, th->loc);
        }
        st->init = v ? val_retain(*v) : eval_unit;
        st->ready = true;
        return 0;
    }
    if (th->kind == THREAD_LANG) {
        st->value = v ? val_retain(*v) : eval_unit;
        st->ready = true;
        return 0;
    }
    const stc_thread_def *def = th->cdef;
    if (!def) return stc__eval_error(cx, STC_ERUNTIME, th->loc, "internal error: unbound thread '%s'", th->name);
    st->cstate = calloc(1, def->state_size ? def->state_size : 1);
    if (!st->cstate) return stc__eval_oom(cx, th->loc);
    int code = def->state_init ? def->state_init(st->cstate, v, def->user) : 0;
    /* A failed state_init cleans up after itself: no state_free then. */
    if (code < 0)
        return stc__eval_error(cx, STC_ERUNTIME, th->loc, "thread '%s' failed to initialise: %s",
                          th->name, stc_strerror(code));
    st->ready = true;
    return 0;
}

int stc__eval_states_init(eval_ctx *cx, eval_tstate **out)
{
    const ir_program *p = cx->p;
    *out = NULL;
    size_t n = p->nthreads > 0 ? (size_t)p->nthreads : 0;
    size_t nslots = p->init_nslots > 0 ? (size_t)p->init_nslots : 0;
    ir_loc none = {0, 0};
    size_t bytes = (n ? n : 1) * sizeof(eval_tstate);
    bytes = (bytes + 63) / 64 * 64; /* aligned_alloc's size: a multiple of the alignment */
    eval_tstate *st = aligned_alloc(64, bytes); /* a line per state (eval_runtime.h) */
    if (st) memset(st, 0, bytes);
    stc_value small[EVAL_SMALL], *slots = small;
    if (nslots > EVAL_SMALL) slots = malloc(nslots * sizeof *slots);
    if (!st || !slots) {
        free(st);
        if (slots != small) free(slots);
        return stc__eval_oom(cx, none);
    }
    for (size_t i = 0; i < n; i++) st[i].value = st[i].init = eval_unit;
    for (size_t i = 0; i < nslots; i++) slots[i] = eval_unit;
    eval_frame fr = {slots, NULL};
    const char *saved = cx->thread;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const ir_thread *th = p->threads[i];
        cx->thread = th->name; /* errors in an init name the thread */
        stc_value v = eval_unit;
        if (th->init) rc = stc__eval_expr(cx, th->init, &fr, &v);
        if (rc == 0) rc = eval_state_init(cx, th, &st[i], th->init ? &v : NULL);
        val_release(v);
    }
    cx->thread = saved;
    for (size_t i = 0; i < nslots; i++) val_release(slots[i]);
    if (slots != small) free(slots);
    if (rc) {
        stc__eval_states_free(p, st);
        return rc;
    }
    *out = st;
    return 0;
}

int stc__eval_states_final(eval_ctx *cx, const eval_tstate *st, stc_value *out)
{
    const ir_program *p = cx->p;
    for (int i = 0; i < p->nthreads; i++) out[i] = eval_unit;
    for (int i = 0; i < p->nthreads; i++) {
        const ir_thread *th = p->threads[i];
        if (th->kind == THREAD_LANG) {
            out[i] = val_retain(st[i].value);
            continue;
        }
        const stc_thread_def *def = th->cdef;
        if (!def || !def->state_to_value || !st[i].ready) continue;
        stc_value v = eval_unit;
        int code = def->state_to_value(st[i].cstate, &v, def->user);
        if (code < 0 || v.tag == STC_T_INVALID) {
            val_release(v);
            const char *saved = cx->thread;
            cx->thread = th->name;
            stc__eval_error(cx, code == STC_ENOMEM ? STC_ENOMEM : STC_ERUNTIME, th->loc,
                       "thread '%s' failed to produce its final state: %s", th->name,
                       stc_strerror(code < 0 ? code : STC_ENOMEM));
            cx->thread = saved;
            for (int j = 0; j < i; j++) {
                val_release(out[j]);
                out[j] = eval_unit;
            }
            return cx->err.code;
        }
        out[i] = v;
    }
    return 0;
}

/* ---- The whole run --------------------------------------------------------------- */

static int eval_main(eval_ctx *cx, stc_value *out)
{
    const ir_program *p = cx->p;
    if (!p->main) return stc__eval_error(cx, STC_ERUNTIME, p->main_loc, "no 'main' declaration");
    size_t nslots = p->main_nslots > 0 ? (size_t)p->main_nslots : 0;
    stc_value small[EVAL_SMALL], *slots = small;
    if (nslots > EVAL_SMALL && !(slots = malloc(nslots * sizeof *slots))) return stc__eval_oom(cx, p->main_loc);
    for (size_t i = 0; i < nslots; i++) slots[i] = eval_unit;
    eval_frame fr = {slots, NULL};
    int rc = stc__eval_expr(cx, p->main, &fr, out);
    for (size_t i = 0; i < nslots; i++) val_release(slots[i]);
    if (slots != small) free(slots);
    return rc;
}

int stc__eval_run(const ir_program *p, stc_result *res) { return stc__eval_run_hooked(p, res, NULL, NULL, NULL); }

int stc__eval_run_hooked(const ir_program *p, stc_result *res, const eval_runtime_hooks *hooks, const stc_cancel *cancel,
                    const stc_stream *io)
{
    eval_ctx cx;
    stc__eval_ctx_init(&cx, p, NULL);
    cx.cancel = cancel;
    eval_tstate *st = NULL;
    stc_value v = eval_unit, *finals = NULL;
    size_t n = p->nthreads > 0 ? (size_t)p->nthreads : 0;
    int rc = stc__eval_states_init(&cx, &st);
    if (rc == 0) {
        cx.states = st;
        cx.hooks = hooks; /* not for inits: they cannot call threads */
        rc = p->main_param ? stc__eval_main_stream(&cx, io, &v, &res->input_items, &res->to_sink) : eval_main(&cx, &v);
    }
    if (rc == 0 && !(finals = calloc(n ? n : 1, sizeof *finals))) rc = stc__eval_oom(&cx, p->main_loc);
    if (rc == 0) rc = stc__eval_states_final(&cx, st, finals);
    if (rc == 0) {
        val_release(res->value);
        res->value = v;
        for (size_t i = 0; i < n; i++) {
            if (i < res->nstates) {
                val_release(res->states[i]);
                res->states[i] = finals[i];
            } else {
                val_release(finals[i]);
            }
        }
    } else {
        val_release(v);
        const eval_err *e = &cx.err;
        if (e->code) rc = e->code;
        stc__result_set_error(res, rc, p->file, e->loc.line, e->loc.col, e->thread, e->item, "%s",
                         e->message ? e->message : "out of memory");
    }
    free(finals);
    stc__eval_states_free(p, st);
    stc__eval_ctx_fini(&cx);
    return rc;
}
