/* stream.c - stream programs: `fun main(xs) = ...` with xs read from a C
 * source and main's list result written to a C sink (stc_run_stream).
 *
 * The meaning is that of main applied to the list of all input items,
 * with its result list handed to the sink item by item.  When main is
 * `smap(F, xs)` (xs used nowhere else) nothing needs the whole list, so
 * the reference evaluator reads one item, runs it through F, hands the
 * result to the sink and only then reads the next: the run takes constant
 * memory, and the first failure (source, thread or sink, in item order)
 * is the one reported.  The parallel runtime (hooks->stream) reads ahead
 * and overlaps items but reports the same.  The smap may sit under lets
 * that do not read xs (`let sep = " " in smap(F, xs)`): they are
 * evaluated first, before any item is read.  `filter(P, smap(F, xs))` and
 * `smap(F, filter(P, xs))` stream too, item by item in both modes (the
 * runtime still runs F's inner smaps in parallel), when F or P calls no
 * thread: then every thread sees its calls in the order the list's
 * meaning gives; the runtime runs filter(P, smap(F, xs)) as a streamed
 * smap with P applied at its serial output stage (eval_stream.keep).
 * Either form may be the value of a let whose name the rest of main does
 * not read, nor xs (`let _ = smap(F, xs) in BODY`): a stream that
 * finishes.  It streams with no sink (its items are dropped, as the list's
 * meaning never reads them), then BODY is main's value.  Any other main
 * reads the whole input first. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/eval_internal.h"

static const stc_value eval_unit = {.tag = STC_T_UNIT};

/* Turns a source or sink failure into the evaluator's error. */
static int eval_stream_fail(eval_ctx *cx, int code, struct stc_ctx *ccx, ir_loc loc, const char *what)
{
    if (ccx->error_oom || (code == STC_ENOMEM && !ccx->message)) {
        free(ccx->message);
        return stc__eval_oom(cx, loc);
    }
    if (code >= 0 || code < STC_ELIMIT) code = STC_ERUNTIME;
    int rc = stc__eval_error(cx, code, loc, "%s failed: %s", what, ccx->message ? ccx->message : stc_strerror(code));
    free(ccx->message);
    return rc;
}

int stc__eval_stream_pull(eval_ctx *cx, const eval_stream *s, long long index, stc_value *item)
{
    *item = eval_unit;
    if (!s->io || !s->io->source) return 0;
    long long saved = cx->item;
    const char *saved_thread = cx->thread;
    cx->item = index;
    cx->thread = NULL;
    int rc;
    for (;;) {
        struct stc_ctx ccx = {0};
        stc_value v = eval_unit;
        int code = s->io->source(s->io->source_ud, &v, &ccx);
        if (code == STC_STREAM_AGAIN) { /* nothing yet: wait a little, unless cancelled */
            val_release(v);
            free(ccx.message);
            if ((rc = stc__eval_check_cancel(cx, s->in_loc))) break;
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (code < 0) {
            val_release(v);
            /* A source interrupted by a cancel (a signal) reports the cancel. */
            rc = stc__eval_check_cancel(cx, s->in_loc);
            if (rc) free(ccx.message);
            else rc = eval_stream_fail(cx, code, &ccx, s->in_loc, "input");
            break;
        }
        if (ccx.message) free(ccx.message);
        if (code == 0) {
            val_release(v);
            rc = 0;
            break;
        }
        /* A str item of a str stream (every line of a file) needs no walk. */
        bool str_ok = v.tag == STC_T_STR && s->item_str;
        if (!str_ok && !stc__eval_value_has_type(v, s->item_type)) {
            val_release(v);
            char *t = stc__ir_type_to_string(s->item_type);
            rc = stc__eval_error(cx, STC_ERUNTIME, s->in_loc, "input item of the wrong type: main's input items are %s",
                            t ? t : "?");
            free(t);
            break;
        }
        *item = v;
        rc = 1;
        break;
    }
    cx->item = saved;
    cx->thread = saved_thread;
    return rc;
}

/* filter's P on result v (borrowed) at the sink: *keep says whether it
 * goes out.  Evaluated as the list's meaning evaluates it: as main's code,
 * not an smap item's. */
static int eval_stream_keep(eval_ctx *cx, const eval_stream *s, stc_value v, bool *keep)
{
    long long saved = cx->item;
    const char *saved_thread = cx->thread;
    int saved_depth = cx->depth;
    cx->item = s->keep_item;
    cx->thread = NULL;
    cx->depth = s->keep_depth; /* the depth limit as in the reference */
    stc_value arg = val_retain(v), r = eval_unit;
    int rc = stc__eval_apply(cx, s->keep, 1, &arg, s->keep_loc, &r);
    *keep = rc == 0 && r.tag == STC_T_BOOL && r.as.b;
    val_release(r);
    cx->item = saved;
    cx->thread = saved_thread;
    cx->depth = saved_depth;
    return rc;
}

int stc__eval_stream_push(eval_ctx *cx, const eval_stream *s, long long index, stc_value v)
{
    if (s->keep.tag == STC_T_FUNC) {
        bool keep;
        int rc = eval_stream_keep(cx, s, v, &keep);
        if (rc || !keep) return rc;
        index = (*s->kept)++;
    }
    if (!s->io || !s->io->sink) return 0;
    struct stc_ctx ccx = {0};
    int code = s->io->sink(s->io->sink_ud, index, v, &ccx);
    if (code >= 0) {
        if (ccx.message) free(ccx.message);
        return 0;
    }
    long long saved = cx->item;
    const char *saved_thread = cx->thread;
    cx->item = index;
    cx->thread = NULL;
    int rc = eval_stream_fail(cx, code, &ccx, s->out_loc, "output");
    cx->item = saved;
    cx->thread = saved_thread;
    return rc;
}

/* Whether evaluating e can call no thread, following the functions it
 * calls or names (seen: one flag per top-level function).  Conservative:
 * a call through a function value, or smap/fold/filter over one, may call
 * anything. */
static bool eval_calls_no_thread(const ir_program *p, const ir_expr *e, unsigned char *seen)
{
    if (!e) return true;
    while (e->kind == IR_BINOP) { /* a chain: its left spine by a loop */
        if (!eval_calls_no_thread(p, e->b, seen)) return false;
        e = e->a;
        if (!e) return true;
    }
    switch (e->kind) {
    case IR_THREADREF: return false;
    case IR_FUNREF: {
        int f = e->u.index;
        if (f < 0 || f >= p->nfuns) return false;
        if (seen[f]) return true;
        seen[f] = 1;
        return eval_calls_no_thread(p, p->funs[f]->body, seen);
    }
    case IR_LAMBDA: return eval_calls_no_thread(p, e->u.fn->body, seen);
    case IR_CALL: {
        int idx = e->u.call.callee.index;
        switch (e->u.call.kind) {
        case CALL_THREAD: return false;
        case CALL_FUN:
            if (idx < 0 || idx >= p->nfuns) return false;
            if (!seen[idx]) {
                seen[idx] = 1;
                if (!eval_calls_no_thread(p, p->funs[idx]->body, seen)) return false;
            }
            break;
        case CALL_BUILTIN:
            if ((idx == BI_SMAP || idx == BI_FOLD || idx == BI_FILTER) && e->u.call.nargs > 0 &&
                e->u.call.args[0]->kind != IR_LAMBDA && e->u.call.args[0]->kind != IR_FUNREF)
                return false;
            break;
        default: return false; /* through a value */
        }
        for (int i = 0; i < e->u.call.nargs; i++)
            if (!eval_calls_no_thread(p, e->u.call.args[i], seen)) return false;
        return true;
    }
    case IR_CASE:
        if (!eval_calls_no_thread(p, e->a, seen)) return false;
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (!eval_calls_no_thread(p, e->u.cas.alts[i].body, seen)) return false;
        return true;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (!eval_calls_no_thread(p, e->u.agg.items[i], seen)) return false;
        return true;
    default:
        return eval_calls_no_thread(p, e->a, seen) && eval_calls_no_thread(p, e->b, seen) &&
               eval_calls_no_thread(p, e->c, seen);
    }
}

static bool eval_is_builtin(const ir_expr *e, int bi)
{
    return e && e->kind == IR_CALL && e->u.call.kind == CALL_BUILTIN && e->u.call.callee.index == bi &&
           e->u.call.nargs == 2;
}

/* Whether e is `smap(F, xs)` or `filter(P, xs)` over main's parameter, with
 * F or P not mentioning it. */
static bool eval_over_param(const ir_program *p, const ir_expr *e, int bi)
{
    if (!eval_is_builtin(e, bi)) return false;
    const ir_expr *xs = e->u.call.args[1];
    return xs->kind == IR_VAR && xs->u.var == p->main_param && !stc__ir_expr_uses(e->u.call.args[0], p->main_param);
}

/* Whether e is a stream form (smap, or a filter with it); fills form. */
static bool eval_stream_expr(const ir_program *p, const ir_expr *e, eval_stream_form *form);

bool stc__eval_stream_shape(const ir_program *p, eval_stream_form *form)
{
    *form = (eval_stream_form){NULL, NULL, false, NULL};
    const ir_expr *e = p->main;
    if (!p->main_param) return false;
    for (; e && (e->kind == IR_LET || e->kind == IR_LETTUPLE); e = e->b) {
        if (!stc__ir_expr_uses(e->a, p->main_param)) continue;
        /* The first let that reads xs: `let r = S in BODY`, S a stream
         * form, BODY reading neither r nor xs, streams S and drops its
         * items (the list's meaning computes them and never uses them). */
        if (e->kind != IR_LET || e->u.let.nbinders != 1 || stc__ir_expr_uses(e->b, e->u.let.binders[0]) ||
            stc__ir_expr_uses(e->b, p->main_param) || !eval_stream_expr(p, e->a, form))
            return false;
        form->let = e;
        return true;
    }
    return eval_stream_expr(p, e, form);
}

static bool eval_stream_expr(const ir_program *p, const ir_expr *e, eval_stream_form *form)
{
    if (eval_over_param(p, e, BI_SMAP)) {
        form->smap = e;
        return true;
    }
    /* filter(P, smap(F, xs)) or smap(F, filter(P, xs)): item by item when P
     * or F calls no thread, so no thread sees its calls in another order
     * than the list's meaning gives them. */
    const ir_expr *inner = eval_is_builtin(e, BI_FILTER) || eval_is_builtin(e, BI_SMAP) ? e->u.call.args[1] : NULL;
    bool filter_first = eval_is_builtin(e, BI_SMAP);
    if (!inner || !eval_over_param(p, inner, filter_first ? BI_FILTER : BI_SMAP) ||
        stc__ir_expr_uses(e->u.call.args[0], p->main_param))
        return false;
    const ir_expr *sm = filter_first ? e : inner, *fl = filter_first ? inner : e;
    unsigned char *seen = calloc((size_t)(p->nfuns > 0 ? p->nfuns : 1), 1);
    if (!seen) return false; /* then it reads the whole input: slower, same meaning */
    bool pure_f = eval_calls_no_thread(p, sm->u.call.args[0], seen) && sm->u.call.args[0]->kind != IR_THREADREF;
    memset(seen, 0, (size_t)(p->nfuns > 0 ? p->nfuns : 1));
    bool pure_p = eval_calls_no_thread(p, fl->u.call.args[0], seen);
    free(seen);
    if (!pure_f && !pure_p) return false;
    *form = (eval_stream_form){sm, fl, filter_first, NULL};
    return true;
}

const ir_expr *stc__eval_stream_smap(const ir_program *p)
{
    eval_stream_form form;
    return stc__eval_stream_shape(p, &form) && !form.filter && !form.let ? form.smap : NULL;
}

/* The reference evaluator's streamed smap: one item at a time. */
static int eval_smap_stream_seq(eval_ctx *cx, const eval_stream *s, ir_loc loc, int thread, stc_value fnv,
                                long long *count)
{
    long long saved = cx->item;
    int rc = 0;
    for (long long i = 0;; i++) {
        cx->item = i;
        if ((rc = stc__eval_check_cancel(cx, loc))) break;
        stc_value x, r = eval_unit;
        rc = stc__eval_stream_pull(cx, s, i, &x);
        if (rc <= 0) break;
        *count = i + 1;
        if (thread >= 0) rc = stc__eval_call_thread(cx, thread, 1, &x, loc, &r);
        else rc = stc__eval_apply(cx, fnv, 1, &x, loc, &r);
        if (rc == 0) rc = stc__eval_stream_push(cx, s, i, r);
        val_release(r);
        if (rc) break;
    }
    cx->item = saved;
    return rc;
}

/* The filtered forms, one item at a time in both modes: the item goes
 * through F and P (in the order of form->filter_first) and, when P keeps
 * it, its result to the sink as output item k.  As in the list's meaning,
 * an error in F names the smap item (k when the filter came first, else
 * the input index) and one in P no smap item. */
static int eval_filter_stream_seq(eval_ctx *cx, const eval_stream *s, const eval_stream_form *form,
                                  stc_value fnv, stc_value pv, long long *count)
{
    ir_loc floc = form->smap->u.call.callee_loc, ploc = form->filter->u.call.callee_loc;
    int thread = form->smap->u.call.args[0]->kind == IR_THREADREF ? form->smap->u.call.args[0]->u.index : -1;
    long long saved = cx->item, k = 0;
    int rc = 0;
    for (long long i = 0;; i++) {
        cx->item = saved;
        if ((rc = stc__eval_check_cancel(cx, floc))) break;
        stc_value x, y = eval_unit, keep = eval_unit;
        rc = stc__eval_stream_pull(cx, s, i, &x);
        if (rc <= 0) break;
        *count = i + 1;
        if (!form->filter_first) { /* y = F(x), then P(y) */
            cx->item = i;
            if (thread >= 0) rc = stc__eval_call_thread(cx, thread, 1, &x, floc, &y);
            else rc = stc__eval_apply(cx, fnv, 1, &x, floc, &y);
            cx->item = saved;
            if (rc == 0) {
                stc_value arg = val_retain(y);
                rc = stc__eval_apply(cx, pv, 1, &arg, ploc, &keep);
            }
        } else { /* P(x), then y = F(x) when kept */
            stc_value arg = val_retain(x);
            rc = stc__eval_apply(cx, pv, 1, &arg, ploc, &keep);
            if (rc == 0 && keep.tag == STC_T_BOOL && keep.as.b) {
                cx->item = k;
                if (thread >= 0) rc = stc__eval_call_thread(cx, thread, 1, &x, floc, &y);
                else rc = stc__eval_apply(cx, fnv, 1, &x, floc, &y);
                x = eval_unit;
            }
            val_release(x);
        }
        cx->item = saved;
        if (rc == 0 && keep.tag == STC_T_BOOL && keep.as.b) rc = stc__eval_stream_push(cx, s, k++, y);
        val_release(y);
        val_release(keep);
        if (rc) break;
    }
    cx->item = saved;
    return rc;
}

/* main = filter(P, smap(F, xs)) or smap(F, filter(P, xs)) over the stream. */
static int eval_main_filtered(eval_ctx *cx, const eval_stream *s, const eval_stream_form *form, eval_frame *fr,
                              long long *count)
{
    const ir_expr *fe = form->smap->u.call.args[0];
    stc_value fnv = eval_unit, pv = eval_unit;
    int rc = 0;
    /* The arguments in the order the list's meaning evaluates them. */
    if (form->filter_first) {
        if (fe->kind != IR_THREADREF) rc = stc__eval_expr(cx, fe, fr, &fnv);
        if (rc == 0) rc = stc__eval_expr(cx, form->filter->u.call.args[0], fr, &pv);
    } else {
        rc = stc__eval_expr(cx, form->filter->u.call.args[0], fr, &pv);
        if (rc == 0 && fe->kind != IR_THREADREF) rc = stc__eval_expr(cx, fe, fr, &fnv);
    }
    rc = rc ? rc : EVAL_DECLINED;
    if (!form->filter_first && cx->hooks && cx->hooks->stream && rc == EVAL_DECLINED) {
        /* The runtime runs the smap as any streamed smap, P at its output. */
        long long kept = 0;
        eval_stream sp = *s;
        sp.keep = pv;
        sp.keep_loc = form->filter->u.call.callee_loc;
        sp.keep_item = cx->item;
        sp.keep_depth = cx->depth;
        sp.kept = &kept;
        const ir_expr *fe = form->smap->u.call.args[0];
        int thread = fe->kind == IR_THREADREF ? fe->u.index : -1;
        rc = cx->hooks->stream(cx->hooks->ud, cx, form->smap, thread, fnv, &sp, count);
    }
    if (rc == EVAL_DECLINED) rc = eval_filter_stream_seq(cx, s, form, fnv, pv, count);
    val_release(fnv);
    val_release(pv);
    return rc;
}

/* Evaluates and binds the lets of main above its streamed smap sm. */
static int eval_stream_lets(eval_ctx *cx, const ir_expr *main, const ir_expr *sm, eval_frame *fr)
{
    for (const ir_expr *e = main; e != sm; e = e->b) {
        stc_value v;
        int rc = stc__eval_expr(cx, e->a, fr, &v);
        if (rc) return rc;
        if ((rc = eval_let_bind(cx, e, fr, v))) return rc;
    }
    return 0;
}

/* main = smap(F, xs) over the stream. */
static int eval_main_streamed(eval_ctx *cx, const eval_stream *s, const ir_expr *e, eval_frame *fr, long long *count)
{
    const ir_expr *fe = e->u.call.args[0];
    ir_loc loc = e->u.call.callee_loc;
    int thread = -1, rc;
    stc_value fnv = eval_unit;
    if (fe->kind == IR_THREADREF) thread = fe->u.index;
    else if ((rc = stc__eval_expr(cx, fe, fr, &fnv))) return rc;
    rc = EVAL_DECLINED;
    if (cx->hooks && cx->hooks->stream)
        rc = cx->hooks->stream(cx->hooks->ud, cx, e, thread, fnv, s, count);
    if (rc == EVAL_DECLINED) rc = eval_smap_stream_seq(cx, s, loc, thread, fnv, count);
    val_release(fnv);
    return rc;
}

/* Reads the whole input into a list. */
static int eval_stream_drain(eval_ctx *cx, const eval_stream *s, stc_value *out, long long *count)
{
    size_t n = 0, cap = 64;
    stc_value *items = malloc(cap * sizeof *items);
    if (!items) return stc__eval_oom(cx, s->in_loc);
    int rc;
    for (;;) {
        if ((rc = stc__eval_check_cancel(cx, s->in_loc))) break;
        stc_value x;
        if ((rc = stc__eval_stream_pull(cx, s, (long long)n, &x)) <= 0) break;
        if (n == cap) {
            stc_value *grown = realloc(items, 2 * cap * sizeof *items);
            if (!grown) {
                val_release(x);
                rc = stc__eval_oom(cx, s->in_loc);
                break;
            }
            items = grown;
            cap *= 2;
        }
        items[n++] = x;
    }
    *count = (long long)n;
    if (rc == 0) {
        *out = stc_value_new_list(n, items); /* consumes the items */
        free(items);
        return out->tag == STC_T_INVALID ? stc__eval_oom(cx, s->in_loc) : 0;
    }
    for (size_t i = 0; i < n; i++) val_release(items[i]);
    free(items);
    return rc;
}

/* Evaluates e (main, or the rest of it after a discarded stream) as main's
 * value: a list goes to the sink item by item (*to_sink), else to *out. */
static int eval_stream_result(eval_ctx *cx, const eval_stream *s, const ir_expr *e, eval_frame *fr, stc_value *out,
                              bool *to_sink)
{
    stc_value v = eval_unit;
    int rc = stc__eval_expr(cx, e, fr, &v);
    if (rc == 0 && v.tag == STC_T_LIST) {
        /* The result list goes to the sink. */
        size_t n = val_seq_len(v);
        long long saved = cx->item;
        for (size_t i = 0; i < n && rc == 0; i++) rc = stc__eval_stream_push(cx, s, (long long)i, val_seq_items(v)[i]);
        cx->item = saved;
        val_release(v);
        v = eval_unit;
        *to_sink = true;
    }
    if (rc == 0) *out = v;
    else val_release(v);
    return rc;
}

int stc__eval_main_stream(eval_ctx *cx, const stc_stream *io, stc_value *out, long long *count, bool *to_sink)
{
    const ir_program *p = cx->p;
    *count = 0;
    *to_sink = false;
    eval_stream s = {.io = io, .in_loc = p->main_param->loc, .out_loc = p->main_loc, .keep = eval_unit};
    ir_type *lt = stc__ir_type_resolve(p->main_param->type);
    s.item_type = lt && lt->kind == TY_LIST ? lt->args[0] : NULL;
    const ir_type *it = stc__ir_type_resolve(s.item_type);
    s.item_str = it && it->kind == TY_STR;
    size_t nslots = p->main_nslots > 0 ? (size_t)p->main_nslots : 1;
    stc_value *slots = calloc(nslots, sizeof *slots);
    if (!slots) return stc__eval_oom(cx, p->main_loc);
    for (size_t i = 0; i < nslots; i++) slots[i] = eval_unit;
    eval_frame fr = {slots, NULL};
    int rc;
    eval_stream_form form;
    if (stc__eval_stream_shape(p, &form)) {
        const ir_expr *top = form.let ? form.let : form.filter && !form.filter_first ? form.filter : form.smap;
        /* A discarded stream's items go nowhere: the same stream, no sink. */
        stc_stream quiet = io ? *io : (stc_stream){0};
        quiet.sink = NULL;
        eval_stream sq = s;
        sq.io = &quiet;
        const eval_stream *ss = form.let ? &sq : &s;
        rc = eval_stream_lets(cx, p->main, top, &fr);
        if (rc == 0 && form.filter) rc = eval_main_filtered(cx, ss, &form, &fr, count);
        else if (rc == 0) rc = eval_main_streamed(cx, ss, form.smap, &fr, count);
        if (rc == 0 && form.let) { /* main's value: the rest, after the input's end */
            if ((rc = eval_let_bind(cx, form.let, &fr, eval_unit)) == 0) rc = eval_stream_result(cx, &s, form.let->b, &fr, out, to_sink);
        } else {
            if (rc == 0) *out = eval_unit;
            *to_sink = true;
        }
    } else {
        rc = eval_stream_drain(cx, &s, &slots[p->main_param->slot], count);
        if (rc == 0) rc = eval_stream_result(cx, &s, p->main, &fr, out, to_sink);
    }
    for (size_t i = 0; i < nslots; i++) val_release(slots[i]);
    free(slots);
    return rc;
}
