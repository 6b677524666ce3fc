/* builtins.c - the evaluator's builtins: smap len nth range float int
 * round sin_iter state (docs/LANGUAGE.md 7), and the dispatch to the others: the
 * string builtins in strings.c and text.c, the list library in lists.c,
 * the math in math.c. Errors are reported at the callee name. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "util/buf.h"

static const stc_value eval_unit = {.tag = STC_T_UNIT};

static int eval_range(eval_ctx *cx, ir_loc loc, int64_t a, int64_t b, stc_value *out);

/* smap(f, range(a, b)) with a and b literals or variables: the ints are
 * offered to the hook without building the list.  Reading a and b can
 * neither fail nor touch a thread, and a range over the size limit is
 * declined, so when the hook declines the caller evaluates range(a, b)
 * as usual and nothing differs from the reference. */
static int eval_smap_range(eval_ctx *cx, const ir_expr *le, eval_frame *fr, int thread, const ir_expr *e,
                           stc_value fnv, bool *offered, stc_value *out)
{
    stc_value a[2];
    for (int i = 0; i < 2; i++) {
        const ir_expr *arg = le->u.call.args[i];
        if (arg->kind == IR_LIT) a[i] = arg->u.lit;
        else if (arg->kind == IR_VAR) a[i] = fr->slots[arg->u.var->slot];
        else return EVAL_DECLINED;
        if (a[i].tag != STC_T_INT) return EVAL_DECLINED;
    }
    uint64_t n = a[1].as.i > a[0].as.i ? (uint64_t)a[1].as.i - (uint64_t)a[0].as.i : 0;
    if (n > (uint64_t)EVAL_MAX_RANGE) return EVAL_DECLINED; /* the evaluator reports it */
    eval_items items = {NULL, a[0].as.i, (size_t)n};
    *offered = true;
    return cx->hooks->smap(cx->hooks->ud, cx, e, thread, fnv, &items, out);
}

/* smap(f, xs): item by item, each through the whole body before the next,
 * so every thread's state is threaded through the items in list order. */
static int eval_smap(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    ir_loc loc = e->u.call.callee_loc;
    const ir_expr *fe = e->u.call.args[0];
    int thread = -1;
    stc_value fnv = eval_unit, xs;
    int rc = 0;
    if (fe->kind == IR_THREADREF) {
        thread = fe->u.index;
        if (thread < 0 || thread >= cx->p->nthreads)
            return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad thread reference");
    } else if ((rc = stc__eval_expr(cx, fe, fr, &fnv))) {
        return rc;
    }
    const ir_expr *le = e->u.call.args[1];
    bool offered = false; /* a declined offer of the ints is not made again with the list */
    if (cx->hooks && le->kind == IR_CALL && le->u.call.kind == CALL_BUILTIN &&
        le->u.call.callee.index == BI_RANGE) {
        /* smap(f, range(a, b)): offer the ints without building the list. */
        rc = eval_smap_range(cx, le, fr, thread, e, fnv, &offered, out);
        if (rc != EVAL_DECLINED) {
            val_release(fnv);
            return rc;
        }
        rc = 0;
    }
    if ((rc = stc__eval_expr(cx, le, fr, &xs))) {
        val_release(fnv);
        return rc;
    }
    if (xs.tag != STC_T_LIST) {
        val_release(fnv);
        val_release(xs);
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: smap over a non-list");
    }
    if (cx->hooks && !offered) {
        eval_items items = {val_seq_items(xs), 0, val_seq_len(xs)};
        rc = cx->hooks->smap(cx->hooks->ud, cx, e, thread, fnv, &items, out);
        if (rc != EVAL_DECLINED) {
            val_release(fnv);
            val_release(xs);
            return rc;
        }
        rc = 0;
    }
    eval_items items = {val_seq_items(xs), 0, val_seq_len(xs)};
    rc = stc__eval_smap_seq(cx, loc, thread, fnv, &items, out);
    val_release(fnv);
    val_release(xs);
    return rc;
}

int stc__eval_smap_seq(eval_ctx *cx, ir_loc loc, int thread, stc_value fnv, const eval_items *xs, stc_value *out)
{
    size_t n = xs->n;
    stc_value r = stc__val_seq_alloc(STC_T_LIST, n);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    long long saved = cx->item;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        cx->item = (long long)i;
        if ((rc = stc__eval_check_cancel(cx, loc))) break;
        stc_value arg = xs->items ? val_retain(xs->items[i]) : eval_int(xs->start + (int64_t)i);
        if (thread >= 0) rc = stc__eval_call_thread(cx, thread, 1, &arg, loc, &val_seq_items(r)[i]);
        else rc = stc__eval_apply(cx, fnv, 1, &arg, loc, &val_seq_items(r)[i]);
    }
    cx->item = saved;
    if (rc) {
        val_release(r);
        return rc;
    }
    *out = r;
    return 0;
}

int stc__eval_to_int(eval_ctx *cx, ir_loc loc, const char *name, double x, double r, stc_value *out)
{
    /* [-2^63, 2^63): exactly the doubles that fit an int64_t. */
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) {
        buf b = BUF_INIT;
        stc__val_print_float(&b, x);
        char *text = stc__buf_take(&b);
        if (!text) return stc__eval_oom(cx, loc);
        int rc = stc__eval_error(cx, STC_ERUNTIME, loc, "%s: %s cannot be converted to int", name, text);
        free(text);
        return rc;
    }
    *out = eval_int((int64_t)r);
    return 0;
}

static int eval_range(eval_ctx *cx, ir_loc loc, int64_t a, int64_t b, stc_value *out)
{
    uint64_t n = b > a ? (uint64_t)b - (uint64_t)a : 0;
    if (n > (uint64_t)EVAL_MAX_RANGE)
        return stc__eval_error(cx, STC_ELIMIT, loc, "range: %" PRIu64 " items exceed the limit of %" PRId64,
                          n, (int64_t)EVAL_MAX_RANGE);
    stc_value r = stc__val_seq_alloc(STC_T_LIST, (size_t)n);
    if (r.tag == STC_T_INVALID) return stc__eval_oom(cx, loc);
    for (uint64_t i = 0; i < n; i++) val_seq_items(r)[i] = eval_int((int64_t)((uint64_t)a + i));
    *out = r;
    return 0;
}

static int eval_bad(eval_ctx *cx, ir_loc loc, const char *name)
{
    return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad arguments to '%s'", name);
}

/* state(t): t's current state, shared (a later in-place update of a map
 * state copies what it changes, since this reference holds it too).  The
 * flow analysis counts state(t) as a write of t, so in the parallel
 * runtime it runs in t's serial stage, ordered with t's calls.  (A keyed
 * thread will read as the map of its key states here.) */
static int eval_state(eval_ctx *cx, const ir_expr *e, stc_value *out)
{
    const ir_expr *a = e->u.call.args[0];
    int t = a->kind == IR_THREADREF ? a->u.index : -1;
    if (t < 0 || t >= cx->p->nthreads || cx->p->threads[t]->kind != THREAD_LANG || !cx->states[t].ready)
        return eval_bad(cx, e->u.call.callee_loc, "state");
    *out = val_retain(cx->states[t].value);
    return 0;
}

/* The builtins other than smap, on evaluated args (borrowed). */
EVAL_INLINE int eval_simple(eval_ctx *cx, ir_builtin bi, ir_loc loc, const stc_value *a, stc_value *out)
{
    switch (bi) {
    case BI_LEN:
        if (a[0].tag == STC_T_LIST) *out = eval_int((int64_t)val_seq_len(a[0]));
        else if (a[0].tag == STC_T_STR) *out = eval_int((int64_t)val_as_str(a[0])->len);
        else if (a[0].tag == STC_T_MAP) *out = eval_int((int64_t)stc_value_len(a[0]));
        else return eval_bad(cx, loc, "len");
        return 0;
    case BI_NTH: {
        if (a[0].tag != STC_T_LIST || a[1].tag != STC_T_INT) return eval_bad(cx, loc, "nth");
        size_t n = val_seq_len(a[0]);
        int64_t i = a[1].as.i;
        if (i < 0 || (uint64_t)i >= n)
            return stc__eval_error(cx, STC_ERUNTIME, loc,
                              "nth: index %" PRId64 " out of range for a list of length %zu", i, n);
        *out = val_retain(val_seq_items(a[0])[i]);
        return 0;
    }
    case BI_RANGE:
        if (a[0].tag != STC_T_INT || a[1].tag != STC_T_INT) return eval_bad(cx, loc, "range");
        return eval_range(cx, loc, a[0].as.i, a[1].as.i, out);
    case BI_FLOAT:
        if (a[0].tag == STC_T_INT) *out = eval_float((double)a[0].as.i);
        else if (a[0].tag == STC_T_FLOAT) *out = a[0];
        else return eval_bad(cx, loc, "float");
        return 0;
    case BI_INT:
    case BI_ROUND: {
        const char *name = bi == BI_INT ? "int" : "round";
        if (a[0].tag == STC_T_INT) {
            *out = a[0];
            return 0;
        }
        if (a[0].tag != STC_T_FLOAT) return eval_bad(cx, loc, name);
        double x = a[0].as.f; /* trunc/round keep NaN and inf, which the range check rejects */
        return stc__eval_to_int(cx, loc, name, x, bi == BI_INT ? trunc(x) : round(x), out);
    }
    case BI_SIN_ITER: {
        if (a[0].tag != STC_T_INT || a[1].tag != STC_T_FLOAT) return eval_bad(cx, loc, "sin_iter");
        int64_t n = a[0].as.i;
        if (n < 0) return stc__eval_error(cx, STC_ERUNTIME, loc, "sin_iter: negative count %" PRId64, n);
        double x = a[1].as.f;
        for (int64_t i = 0; i < n; i++) x += sin(x);
        *out = eval_float(x);
        return 0;
    }
    case BI_WORDS:
        if (a[0].tag == STC_T_STR) return stc__eval_words(cx, loc, a[0], out);
        return stc__eval_string_builtin(cx, bi, loc, a, out);
    case BI_PARSE_INT:
        if (a[0].tag == STC_T_STR) return stc__eval_parse_int(cx, loc, a[0], out);
        return stc__eval_string_builtin(cx, bi, loc, a, out);
    case BI_PARSE_FLOAT:
        if (a[0].tag == STC_T_STR) return stc__eval_parse_float(cx, loc, a[0], out);
        return stc__eval_string_builtin(cx, bi, loc, a, out);
    case BI_SLICE:
        if (a[0].tag == STC_T_STR && a[1].tag == STC_T_INT && a[2].tag == STC_T_INT)
            return stc__eval_slice(cx, loc, a[0], a[1].as.i, a[2].as.i, out);
        return stc__eval_text_builtin(cx, bi, loc, a, out);
    case BI_SPLIT:
    case BI_STR:
    case BI_CONCAT:
    case BI_TRY_INT:
    case BI_TRY_FLOAT: return stc__eval_string_builtin(cx, bi, loc, a, out);
    case BI_FOLD:
    case BI_FILTER:
    case BI_APPEND:
    case BI_REVERSE:
    case BI_SORT:
    case BI_ZIP:
    case BI_TAKE:
    case BI_DROP: return stc__eval_list_builtin(cx, bi, loc, a, out);
    case BI_FIND:
    case BI_STARTS_WITH:
    case BI_ENDS_WITH:
    case BI_CONTAINS:
    case BI_LOWER:
    case BI_UPPER:
    case BI_TRIM:
    case BI_JOIN:
    case BI_REPLACE: return stc__eval_text_builtin(cx, bi, loc, a, out);
    case BI_ABS:
    case BI_MIN:
    case BI_MAX:
    case BI_SQRT:
    case BI_FLOOR:
    case BI_CEIL:
    case BI_POW:
    case BI_EXP:
    case BI_LOG: return stc__eval_math_builtin(cx, bi, loc, a, out);
    default: return eval_bad(cx, loc, "?");
    }
}

int stc__eval_builtin(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    ir_loc loc = e->u.call.callee_loc;
    int bi = e->u.call.callee.index;
    if (bi < 0 || bi >= BI_COUNT_ || e->u.call.nargs != stc__ir_builtins[bi].arity)
        return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad builtin call");
    if (bi >= BI_GET && bi <= BI_TO_MAP) return stc__eval_map_builtin(cx, e, fr, out);
    if (e->u.call.nargs > 3) return stc__eval_error(cx, STC_ERUNTIME, loc, "internal error: bad builtin call");
    if (bi == BI_SMAP) return eval_smap(cx, e, fr, out);
    if (bi == BI_STATE) return eval_state(cx, e, out);
    stc_value a[3] = {eval_unit, eval_unit, eval_unit};
    bool owned[3] = {false, false, false};
    int n = e->u.call.nargs, rc = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = eval_operand(cx, e->u.call.args[i], fr, &a[i], &owned[i]);
    if (rc == 0) rc = eval_simple(cx, (ir_builtin)bi, loc, a, out);
    for (int i = 0; i < n; i++)
        if (owned[i]) val_release(a[i]);
    return rc;
}

/* A variable's or a literal's value, borrowed; false for other nodes. */
static inline bool eval_x_leaf(const ir_expr *a, const eval_frame *fr, stc_value *v)
{
    if (a->kind == IR_VAR) { *v = fr->slots[a->u.var->slot]; return true; }
    if (a->kind == IR_LIT) { *v = a->u.lit; return true; }
    return false;
}

/* nth(xs, i) with xs and i variables or literals and i in range: the item,
 * borrowed from the list as the list is from its slot (the list is
 * immutable and its slot outlives the call that reads the item), without
 * the call and the retain and release of the item: parse_int(nth(w, 4)).
 * False for anything else, which the call itself evaluates (and reports). */
static inline bool eval_x_nth(const ir_expr *a, const eval_frame *fr, stc_value *v)
{
    stc_value xs, i;
    if (a->u.call.callee.index != BI_NTH || !eval_x_leaf(a->u.call.args[0], fr, &xs) ||
        !eval_x_leaf(a->u.call.args[1], fr, &i) || xs.tag != STC_T_LIST || i.tag != STC_T_INT ||
        (uint64_t)i.as.i >= val_seq_len(xs))
        return false;
    *v = val_seq_items(xs)[i.as.i];
    return true;
}

/* An argument of an EVAL_X_BUILTIN call: variables and literals borrowed
 * (as eval_operand), and items that nth reads from them (eval_x_nth), a
 * nested call of this form evaluated here with the depth unit
 * stc__eval_expr would count, anything else by stc__eval_expr. */
static inline int eval_x_arg(eval_ctx *cx, const ir_expr *a, eval_frame *fr, stc_value *v, bool *owned)
{
    *owned = false;
    if (eval_x_leaf(a, fr, v)) return 0;
    if (a->xop == EVAL_X_BUILTIN && eval_x_nth(a, fr, v)) return 0;
    *owned = true;
    if (a->xop == EVAL_X_BUILTIN && eval_stack_room(cx, EVAL_STACK_POS())) {
        *v = eval_unit;
        cx->depth++;
        int rc = stc__eval_builtin_x(cx, a, fr, v);
        cx->depth--;
        return rc;
    }
    return stc__eval_expr(cx, a, fr, v);
}

/* ---- The words form (eval_internal.h) -------------------------------------- */

/* e, words(s), len(w) or nth(w, K) of the words form, on its evaluated
 * args a (a[0] a string: s, or w bound to s): words stores s's summary
 * in slots xslot - 1 and xslot and gives s (moved from a[0] when owned:
 * bit 0 of *own); len and nth read the summary.  The same values and
 * errors as words' list would give. */
static EVAL_NOINLINE int eval_x_words(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *a,
                                      unsigned *own, stc_value *out)
{
    const val_str *vs = val_as_str(a[0]);
    if (e->xslot == EVAL_XW_SLICE) { /* slice(v, i, j) in a tail position */
        if (a[1].tag != STC_T_INT || a[2].tag != STC_T_INT || cx->hooks || !eval_unique(a[0]))
            return eval_simple(cx, BI_SLICE, e->u.call.callee_loc, a, out);
        int64_t i = a[1].as.i, j = a[2].as.i;
        if (i < 0 || j < i || (uint64_t)j > vs->len) return stc__eval_slice(cx, e->u.call.callee_loc, a[0], i, j, out);
        val_str *w = val_as_str(a[0]); /* held by v's slot alone, which nothing reads again */
        if (i > 0) memmove(w->data, w->data + i, (size_t)(j - i));
        w->len = (size_t)(j - i);
        w->data[w->len] = '\0';
        *out = val_retain(a[0]);
        return 0;
    }
    stc_value *h = &fr->slots[e->xslot - 1];
    switch (e->u.call.callee.index) {
    case BI_WORDS:
        stc__str_words_pack(vs, h); /* (the slots hold no heap value) */
        *out = *own & 1u ? a[0] : val_retain(a[0]);
        *own &= ~1u;
        return 0;
    case BI_LEN: *out = eval_int((int64_t)stc__str_words_count(vs, h)); return 0;
    default: { /* BI_NTH */
        if (a[1].tag != STC_T_INT) return eval_bad(cx, e->u.call.callee_loc, "nth"); /* as eval_simple */
        size_t n = stc__str_words_count(vs, h), from, to;
        int64_t i = a[1].as.i;
        if (i < 0 || (uint64_t)i >= n)
            return stc__eval_error(cx, STC_ERUNTIME, e->u.call.callee_loc,
                                   "nth: index %" PRId64 " out of range for a list of length %zu", i, n);
        stc__str_words_bounds(vs, h, (size_t)i, &from, &to);
        stc_value v = from == 0 && to == vs->len ? val_retain(a[0]) : val_str_new(vs->data + from, to - from);
        if (v.tag == STC_T_INVALID) return stc__eval_oom(cx, e->u.call.callee_loc);
        *out = v;
        return 0;
    }
    }
}

/* parse_int(nth(w, K)) or parse_float(...) of the words form, w and K
 * variables or literals, K in range: the word parsed in place (*rc).
 * False otherwise: the call then runs as usual (its nth gives the word
 * as a string, or the error). */
static inline bool eval_x_parse_word(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out, int *rc)
{
    const ir_expr *nth = e->u.call.args[0];
    stc_value s, k;
    if (!eval_x_leaf(nth->u.call.args[0], fr, &s) || !eval_x_leaf(nth->u.call.args[1], fr, &k) ||
        s.tag != STC_T_STR || k.tag != STC_T_INT)
        return false;
    const val_str *vs = val_as_str(s);
    const stc_value *h = &fr->slots[nth->xslot - 1];
    if ((uint64_t)k.as.i >= stc__str_words_count(vs, h)) return false;
    size_t from, to;
    stc__str_words_bounds(vs, h, (size_t)k.as.i, &from, &to);
    *rc = stc__eval_parse_piece(cx, (ir_builtin)e->u.call.callee.index, e->u.call.callee_loc, s, from, to, out);
    return true;
}

int stc__eval_builtin_x(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    int n = e->u.call.nargs, rc = 0;
    if (e->xslot == EVAL_XW_PARSE && eval_x_parse_word(cx, e, fr, out, &rc)) return rc;
    stc_value a[3]; /* eval_simple reads no more than n */
    unsigned own = 0; /* bit i: a[i] is owned (most args are borrowed) */
    for (int i = 0; i < n; i++) {
        bool owned;
        if ((rc = eval_x_arg(cx, e->u.call.args[i], fr, &a[i], &owned))) break;
        own |= (unsigned)owned << i;
    }
    if (rc == 0)
        rc = (e->xslot > 0 || e->xslot == EVAL_XW_SLICE) && a[0].tag == STC_T_STR
                 ? eval_x_words(cx, e, fr, a, &own, out)
                 : eval_simple(cx, (ir_builtin)e->u.call.callee.index, e->u.call.callee_loc, a, out);
    for (int i = 0; own; i++, own >>= 1)
        if (own & 1u) val_release(a[i]);
    return rc;
}
