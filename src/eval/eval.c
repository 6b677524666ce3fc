/* eval.c - the reference evaluator: its contexts and errors, the C stack
 * segments and the dispatch of a node to its evaluator.
 *
 * Plain call-by-value, left to right.  Frames follow stc__ir_resolve's layout
 * (captures, then params, then binders); slots hold owned references and
 * are released when their scope ends and again (for safety) when the
 * activation returns.  The node evaluators are in calls.c (applications),
 * tail.c (tail calls), operators.c and control.c (binders, patterns,
 * constructors, if); threads and thread states in threads.c, builtins
 * (smap included) in builtins.c. */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "util/buf.h"
#include "util/cancel.h"

static const stc_value eval_unit = {.tag = STC_T_UNIT};

/* ---- Context and errors ------------------------------------------------ */

void stc__eval_ctx_init(eval_ctx *cx, const ir_program *p, eval_tstate *states)
{
    memset(cx, 0, sizeof *cx);
    cx->p = p;
    cx->states = states;
    cx->item = -1;
    cx->err.item = -1;
}


void stc__eval_ctx_fini(eval_ctx *cx)
{
    stc__eval_tail_drop(cx);
    free(cx->err.message);
    cx->err.message = NULL;
    for (int i = 0; i < cx->nseg_stacks; i++) free(cx->seg_stacks[i]);
    free(cx->seg_stacks);
    cx->seg_stacks = NULL;
    cx->nseg_stacks = 0;
}

static int eval_verror(eval_ctx *cx, int code, ir_loc loc, const char *fmt, va_list ap)
{
    if (cx->err.code) return code;
    buf b = BUF_INIT;
    stc__buf_vprintf(&b, fmt, ap);
    cx->err.message = stc__buf_take(&b);
    /* Without memory for the message the error is reported as what it became. */
    cx->err.code = cx->err.message ? code : STC_ENOMEM;
    cx->err.loc = loc;
    cx->err.thread = cx->thread;
    cx->err.item = cx->item;
    return code;
}

int stc__eval_error(eval_ctx *cx, int code, ir_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    eval_verror(cx, code, loc, fmt, ap);
    va_end(ap);
    return code;
}

int stc__eval_check_cancel(eval_ctx *cx, ir_loc loc)
{
    return cancel_raised(cx->cancel) ? stc__eval_error(cx, STC_ECANCELED, loc, "run cancelled") : 0;
}

int stc__eval_oom(eval_ctx *cx, ir_loc loc) { return stc__eval_error(cx, STC_ENOMEM, loc, "out of memory"); }

eval_err stc__eval_error_take(eval_ctx *cx)
{
    eval_err err = cx->err;
    cx->err = (eval_err){.item = -1};
    return err;
}

int stc__eval_error_adopt(eval_ctx *cx, eval_err err)
{
    if (cx->err.code == 0) cx->err = err;
    else free(err.message);
    return err.code;
}

void stc__eval_ctx_share(eval_ctx *wcx, const eval_ctx *cx)
{
    wcx->states = cx->states;
    wcx->cancel = cx->cancel;
}

/* ---- C stack segments ------------------------------------------------------
 * Deep evaluation continues on a fresh stack: when the current segment has
 * used EVAL_SEGMENT_BYTES, the expression is evaluated on a new thread with
 * a stack of EVAL_SEGMENT_STACK bytes while the caller waits (joined at once:
 * evaluation stays sequential).  Segments are invisible to the program: the
 * depth limit alone decides where deep recursion stops, and the evaluator
 * is safe on any thread with EVAL_SEGMENT_BYTES + a margin of free stack,
 * whatever the compiler's frame sizes (ASan at -O0 makes them 10x bigger). */

typedef struct eval_segment {
    eval_ctx *cx;
    const ir_expr *e;
    eval_frame *fr;
    stc_value *out;
    int rc;
    bool plain_counts; /* the parent's counting mode (value.h) */
} eval_segment;

static void *eval_segment_main(void *arg)
{
    eval_segment *sg = arg;
    /* The parent waits in pthread_join: its values are this thread's now. */
    stc__val_counts_set_plain(sg->plain_counts);
    sg->rc = stc__eval_expr(sg->cx, sg->e, sg->fr, sg->out); /* sets the new stack base */
    return NULL;
}

/* The stack for segment level `level`: allocated once per context and
 * reused (a fresh thread stack would be page-faulted in again each time). */
static void *eval_segment_stack(eval_ctx *cx, int level)
{
    if (level < cx->nseg_stacks) return cx->seg_stacks[level];
    if (level != cx->nseg_stacks) return NULL;
    void **grown = realloc(cx->seg_stacks, (size_t)(level + 1) * sizeof *grown);
    if (!grown) return NULL;
    cx->seg_stacks = grown;
    void *stack = NULL;
    if (posix_memalign(&stack, 4096, EVAL_SEGMENT_STACK) != 0) return NULL;
    cx->seg_stacks[cx->nseg_stacks++] = stack;
    return stack;
}

EVAL_NOINLINE static int eval_on_new_stack(eval_ctx *cx, const ir_expr *e, eval_frame *fr, 
                                           stc_value *out)
{
    eval_segment sg = {cx, e, fr, out, 0, stc__val_counts_plain};
    void *stack = eval_segment_stack(cx, cx->seg_level);
    pthread_attr_t attr;
    pthread_t th;
    if (!stack || pthread_attr_init(&attr) != 0) return stc__eval_oom(cx, e->loc);
    int err = pthread_attr_setstack(&attr, stack, EVAL_SEGMENT_STACK);
    uintptr_t saved = cx->stack_base;
    cx->stack_base = 0;
    cx->seg_level++;
    if (err == 0) err = pthread_create(&th, &attr, eval_segment_main, &sg);
    pthread_attr_destroy(&attr);
    if (err == 0) pthread_join(th, NULL);
    cx->seg_level--;
    cx->stack_base = saved;
    if (err != 0) return stc__eval_error(cx, STC_ENOMEM, e->loc, "out of memory (cannot grow the stack)");
    return sg.rc;
}

/* ---- Dispatch -------------------------------------------------------------- */

int stc__eval_expr(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    *out = eval_unit;
    switch (e->kind) { /* leaves first: they do not recurse */
    case IR_LIT: *out = val_retain(e->u.lit); return 0;
    case IR_VAR: *out = val_retain(fr->slots[e->u.var->slot]); return 0;
    case IR_FUNREF:
        if (e->u.index < 0 || e->u.index >= cx->p->nfuns) break;
        *out = stc__val_func_alloc(cx->p->funs[e->u.index], 0);
        return out->tag == STC_T_INVALID ? stc__eval_oom(cx, e->loc) : 0;
    case IR_LAMBDA: return stc__eval_lambda(cx, e, fr, out);
    default: break;
    }
    uintptr_t pos = EVAL_STACK_POS();
    if (!cx->stack_base) cx->stack_base = pos;
    if ((pos < cx->stack_base ? cx->stack_base - pos : pos - cx->stack_base) > EVAL_SEGMENT_BYTES)
        return eval_on_new_stack(cx, e, fr, out);
    int rc;
    cx->depth++;
    switch (e->kind) {
    case IR_LET:
    case IR_LETTUPLE: rc = stc__eval_let(cx, e, fr, out); break;
    case IR_IF: rc = stc__eval_if(cx, e, fr, out); break;
    case IR_CASE: rc = stc__eval_case(cx, e, fr, out); break;
    case IR_INL:
    case IR_INR: rc = stc__eval_box(cx, e, fr, out); break;
    case IR_BINOP:
        rc = e->xop == EVAL_X_BINOP ? stc__eval_fast_binop(cx, e, fr, out) : stc__eval_binop(cx, e, fr, out);
        break;
    case IR_UNOP: rc = stc__eval_unop(cx, e, fr, out); break;
    case IR_CALL: /* builtins apart: stc__eval_call's frame would weigh on smap's recursion */
        rc = e->xop == EVAL_X_CALL_FUN          ? stc__eval_call_direct(cx, e, fr, out)
             : e->xop == EVAL_X_CALL_THREAD   ? stc__eval_call_thread_direct(cx, e, fr, out)
             : e->xop == EVAL_X_BUILTIN       ? stc__eval_builtin_x(cx, e, fr, out)
             : e->u.call.kind == CALL_BUILTIN ? stc__eval_builtin(cx, e, fr, out)
                                              : stc__eval_call(cx, e, fr, out);
        break;
    case IR_TUPLE:
    case IR_LIST: rc = stc__eval_seq(cx, e, fr, out); break;
    default: /* IR_NAME, IR_THREADREF outside smap, bad indices: a malformed IR */
        rc = stc__eval_error(cx, STC_ERUNTIME, e->loc, "internal error: unexpected expression kind %d",
                        (int)e->kind);
        break;
    }
    cx->depth--;
    return rc;
}

/* eval_runtime.h.  A step is one of the runtime's pieces of an smap body,
 * evaluated at the top of its activation's stack (or a whole body, as
 * flow_direct_items runs it): most are a call of a known function or
 * thread, or an operator, whose node form eval_quick takes at once (one
 * depth unit, as stc__eval_expr counts it).  Its stack check is made here
 * as stc__eval_expr makes it; a context whose base is not set yet, any
 * other node and a segment due go to stc__eval_expr. */
int stc__eval_step(eval_ctx *cx, const ir_expr *e, eval_frame *fr, stc_value *out)
{
    if ((unsigned)e->xop - 1u < (unsigned)EVAL_X_BUILTIN && eval_stack_room(cx, EVAL_STACK_POS()))
        return eval_quick(cx, e, fr, out);
    return stc__eval_expr(cx, e, fr, out);
}
