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
 * evaluated first, before any item is read.  Any other main reads the
 * whole input first. */
#include <stdlib.h>
#include <time.h>

#include "eval/eval_internal.h"

static const stc_value eval_unit = {.tag = STC_T_UNIT};

/* Turns a source or sink failure into the evaluator's error. */
static int eval_stream_fail(eval_ctx *cx, int code, struct stc_ctx *ccx, ir_loc loc, const char *what)
{
    if (ccx->error_oom || (code == STC_ENOMEM && !ccx->message)) {
        free(ccx->message);
        return eval_oom(cx, loc);
    }
    if (code >= 0 || code < STC_ELIMIT) code = STC_ERUNTIME;
    int rc = eval_error(cx, code, loc, "%s failed: %s", what, ccx->message ? ccx->message : stc_strerror(code));
    free(ccx->message);
    return rc;
}

int eval_stream_pull(eval_ctx *cx, const eval_stream *s, long long index, stc_value *item)
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
            if ((rc = eval_check_cancel(cx, s->in_loc))) break;
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (code < 0) {
            val_release(v);
            /* A source interrupted by a cancel (a signal) reports the cancel. */
            rc = eval_check_cancel(cx, s->in_loc);
            if (rc) free(ccx.message);
            else rc = eval_stream_fail(cx, code, &ccx, s->in_loc, "input");
            break;
        }
        free(ccx.message);
        if (code == 0) {
            val_release(v);
            rc = 0;
            break;
        }
        if (!eval_value_has_type(v, s->item_type)) {
            val_release(v);
            char *t = ir_type_to_string(s->item_type);
            rc = eval_error(cx, STC_ERUNTIME, s->in_loc, "input item of the wrong type: main's input items are %s",
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

int eval_stream_push(eval_ctx *cx, const eval_stream *s, long long index, stc_value v)
{
    if (!s->io || !s->io->sink) return 0;
    struct stc_ctx ccx = {0};
    int code = s->io->sink(s->io->sink_ud, index, v, &ccx);
    if (code >= 0) {
        free(ccx.message);
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

const ir_expr *eval_stream_smap(const ir_program *p)
{
    const ir_expr *e = p->main;
    if (!p->main_param) return NULL;
    for (; e && (e->kind == IR_LET || e->kind == IR_LETTUPLE); e = e->b)
        if (ir_expr_uses(e->a, p->main_param)) return NULL;
    if (!e || e->kind != IR_CALL || e->u.call.kind != CALL_BUILTIN ||
        e->u.call.callee.index != BI_SMAP || e->u.call.nargs != 2)
        return NULL;
    const ir_expr *xs = e->u.call.args[1];
    if (xs->kind != IR_VAR || xs->u.var != p->main_param) return NULL;
    return ir_expr_uses(e->u.call.args[0], p->main_param) ? NULL : e;
}

/* The reference evaluator's streamed smap: one item at a time. */
static int eval_smap_stream_seq(eval_ctx *cx, const eval_stream *s, ir_loc loc, int thread, stc_value fnv,
                                long long *count)
{
    long long saved = cx->item;
    int rc = 0;
    for (long long i = 0;; i++) {
        cx->item = i;
        if ((rc = eval_check_cancel(cx, loc))) break;
        stc_value x, r = eval_unit;
        rc = eval_stream_pull(cx, s, i, &x);
        if (rc <= 0) break;
        *count = i + 1;
        if (thread >= 0) rc = eval_call_thread(cx, thread, 1, &x, loc, &r);
        else rc = eval_apply(cx, fnv, 1, &x, loc, &r);
        if (rc == 0) rc = eval_stream_push(cx, s, i, r);
        val_release(r);
        if (rc) break;
    }
    cx->item = saved;
    return rc;
}

/* Evaluates and binds the lets of main above its streamed smap sm. */
static int eval_stream_lets(eval_ctx *cx, const ir_expr *main, const ir_expr *sm, eval_frame *fr)
{
    for (const ir_expr *e = main; e != sm; e = e->b) {
        stc_value v;
        int rc = eval_expr(cx, e->a, fr, &v);
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
    else if ((rc = eval_expr(cx, fe, fr, &fnv))) return rc;
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
    if (!items) return eval_oom(cx, s->in_loc);
    int rc;
    for (;;) {
        if ((rc = eval_check_cancel(cx, s->in_loc))) break;
        stc_value x;
        if ((rc = eval_stream_pull(cx, s, (long long)n, &x)) <= 0) break;
        if (n == cap) {
            stc_value *grown = realloc(items, 2 * cap * sizeof *items);
            if (!grown) {
                val_release(x);
                rc = eval_oom(cx, s->in_loc);
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
        return out->tag == STC_T_INVALID ? eval_oom(cx, s->in_loc) : 0;
    }
    for (size_t i = 0; i < n; i++) val_release(items[i]);
    free(items);
    return rc;
}

int eval_main_stream(eval_ctx *cx, const stc_stream *io, stc_value *out, long long *count, bool *to_sink)
{
    const ir_program *p = cx->p;
    *count = 0;
    *to_sink = false;
    eval_stream s = {.io = io, .in_loc = p->main_param->loc, .out_loc = p->main_loc};
    ir_type *lt = ir_type_resolve(p->main_param->type);
    s.item_type = lt && lt->kind == TY_LIST ? lt->args[0] : NULL;
    size_t nslots = p->main_nslots > 0 ? (size_t)p->main_nslots : 1;
    stc_value *slots = calloc(nslots, sizeof *slots);
    if (!slots) return eval_oom(cx, p->main_loc);
    for (size_t i = 0; i < nslots; i++) slots[i] = eval_unit;
    eval_frame fr = {slots, NULL};
    int rc;
    const ir_expr *sm = eval_stream_smap(p);
    if (sm) {
        rc = eval_stream_lets(cx, p->main, sm, &fr);
        if (rc == 0) rc = eval_main_streamed(cx, &s, sm, &fr, count);
        if (rc == 0) *out = eval_unit;
        *to_sink = true;
    } else {
        stc_value v = eval_unit;
        rc = eval_stream_drain(cx, &s, &slots[p->main_param->slot], count);
        if (rc == 0) rc = eval_expr(cx, p->main, &fr, &v);
        if (rc == 0 && v.tag == STC_T_LIST) {
            /* The result list goes to the sink. */
            size_t n = val_seq_len(v);
            long long saved = cx->item;
            for (size_t i = 0; i < n && rc == 0; i++) rc = eval_stream_push(cx, &s, (long long)i, val_seq_items(v)[i]);
            cx->item = saved;
            val_release(v);
            v = eval_unit;
            *to_sink = true;
        }
        if (rc == 0) *out = v;
        else val_release(v);
    }
    for (size_t i = 0; i < nslots; i++) val_release(slots[i]);
    free(slots);
    return rc;
}
