/* kernel.c - a thread's compiled form, run (issue 18 item 1; docs/DESIGN.md
 * 2, "A thread call's compiled form").  An STCLang thread whose function's
 * body is lets, let-tuples of the state, ifs and int cases down to an
 * (output, state) pair, over ints, floats, bools, units and strings with
 * operators that cannot fail and no call at all, is compiled once
 * (stc__eval_prepare, kernel_code.c) into one short register code (tk_op,
 * kernel.h) over the frame's slots and temporaries above them, typed from
 * the thread's input and state types.  Nothing in such a body can call,
 * fail or recurse, so its depth units, stack checks and evaluation order
 * cannot be seen: a call runs it with the call's own depth and cancel
 * checks only (calls.c), the state's items bound straight into the frame
 * (moved when the state is held once), the new state written into the old
 * tuple's block, scalar slots neither filled nor released.  The tags of
 * the args and of the state are checked against the compiled types first;
 * any other value (or body) takes the evaluator's path. */
#include <math.h>
#include <string.h>

#include "eval/kernel.h"
#include "util/cancel.h"

/* ---- Running --------------------------------------------------------------- */

/* The frame's values that need a release: its str slots, and the state's
 * slot (unit once its block was reused). */
static inline void tk_release(const eval_tk *k, stc_value *s)
{
    for (int i = 0; i < k->nrel; i++) val_release(s[k->rel[i]]);
    val_release(s[k->state_slot]);
}

/* Out of memory for a tuple at loc, inside thread t's call: the error the
 * evaluator's stc__eval_seq gives there; o (made before) and the frame
 * released; a state moved into the call stays unit, as there.  When the
 * state moved in through let-tuple x, the block in its slot still has the
 * bits of the items taken out or dropped: unit first, so that releasing it
 * releases only the items left in place. */
EVAL_NOINLINE static int tk_oom(eval_ctx *cx, int t, const eval_tk *k, stc_value *s, ir_loc loc, stc_value o,
                                const tk_lett *x)
{
    const char *saved = cx->thread;
    cx->thread = cx->p->threads[t]->name;
    int rc = stc__eval_oom(cx, loc);
    cx->thread = saved;
    val_release(o);
    if (x) {
        stc_value *items = val_seq_items(s[k->state_slot]);
        for (int i = 0; i < x->mbind.n; i++) items[x->mbind.c[i].from] = (stc_value){.tag = STC_T_UNIT};
        for (int i = 0; i < x->drop.n; i++) items[x->drop.c[i].from] = (stc_value){.tag = STC_T_UNIT};
    }
    tk_release(k, s);
    return rc;
}

/* Whether the stack segment is past its half (eval_pair_far's test):
 * then the evaluator's path, which moves to a new segment in time. */
static inline bool tk_far(const eval_ctx *cx)
{
    uintptr_t pos = EVAL_STACK_POS(), base = cx->stack_base;
    return base && (pos < base ? base - pos : pos - base) > EVAL_SEGMENT_BYTES / 2;
}

static inline void tk_copy_run(stc_value *dst, const stc_value *src, const tk_copies *l)
{
    if (!l->any) {
        for (int i = 0; i < l->n; i++) dst[l->c[i].to] = src[l->c[i].from];
        return;
    }
    for (int i = 0; i < l->n; i++) {
        stc_value v = src[l->c[i].from];
        dst[l->c[i].to] = l->c[i].heap ? val_retain(v) : v;
    }
}

int stc__eval_tk_call(eval_ctx *cx, const ir_expr *e, eval_frame *fr, const eval_tk *k, stc_value *out)
{
    stc_value s[TK_MAX_REGS]; /* the function's frame, then temporaries: written in order, scalars never released */
    int t = e->u.call.callee.index;
    bool other = false; /* an arg of another type than compiled */
    for (int i = 0; i < k->ninputs; i++) {
        int rc = eval_quick(cx, e->u.call.args[i], fr, &s[i]);
        if (rc) { /* s[i] holds nothing */
            eval_release_n(s, (size_t)i);
            return rc;
        }
        other |= s[i].tag != k->in_tag[i];
    }
    /* The call's checks, the stack, and the compiled types on the values:
     * when any is due or wrong, the evaluator's path (which reports the
     * check's error). */
    eval_tstate *ts = &cx->states[t];
    stc_value st = ts->value;
    if (other || cx->depth >= EVAL_MAX_DEPTH || cancel_raised(cx->cancel) || tk_far(cx)) goto declined;
    if (k->nstate) {
        if (st.tag != STC_T_TUPLE || val_seq_len(st) != (size_t)k->nstate) goto declined;
        const stc_value *items = val_seq_items(st);
        for (int i = 0; i < k->nstate; i++) other |= items[i].tag != k->st_tag[i];
        if (other) goto declined;
        ts->value = (stc_value){.tag = STC_T_UNIT}; /* moved in, as eval_state_take */
    } else {
        if (st.tag != k->st_tag[0]) goto declined;
        st = val_retain(st);
    }
    s[k->state_slot] = st;
    for (int i = 0; i < k->nbind; i++) s[k->bind[i]] = (stc_value){.tag = STC_T_UNIT};
    const tk_lett *moved = NULL; /* the let-tuple the state moved in through */
    const tk_op *code = k->code, *o = code;
/* an op's registers */
#define D s[o->d]
#define A s[o->a]
#define B s[o->b]
    for (;; o++) {
        switch (o->op) {
        case TK_LOADK: D = o->u.k; continue;
        case TK_MOV: D = A; continue;
        case TK_KEEP: D = val_retain(A); continue;
        case TK_ADD_I: D = eval_int((int64_t)((uint64_t)A.as.i + (uint64_t)B.as.i)); continue;
        case TK_SUB_I: D = eval_int((int64_t)((uint64_t)A.as.i - (uint64_t)B.as.i)); continue;
        case TK_MUL_I: D = eval_int((int64_t)((uint64_t)A.as.i * (uint64_t)B.as.i)); continue;
        case TK_EQ_I: D = eval_bool(A.as.i == B.as.i); continue;
        case TK_NE_I: D = eval_bool(A.as.i != B.as.i); continue;
        case TK_LT_I: D = eval_bool(A.as.i < B.as.i); continue;
        case TK_LE_I: D = eval_bool(A.as.i <= B.as.i); continue;
        case TK_GT_I: D = eval_bool(A.as.i > B.as.i); continue;
        case TK_GE_I: D = eval_bool(A.as.i >= B.as.i); continue;
        case TK_ADD_IK: D = eval_int((int64_t)((uint64_t)A.as.i + (uint64_t)o->u.k.as.i)); continue;
        case TK_SUB_IK: D = eval_int((int64_t)((uint64_t)A.as.i - (uint64_t)o->u.k.as.i)); continue;
        case TK_MUL_IK: D = eval_int((int64_t)((uint64_t)A.as.i * (uint64_t)o->u.k.as.i)); continue;
        case TK_EQ_IK: D = eval_bool(A.as.i == o->u.k.as.i); continue;
        case TK_NE_IK: D = eval_bool(A.as.i != o->u.k.as.i); continue;
        case TK_LT_IK: D = eval_bool(A.as.i < o->u.k.as.i); continue;
        case TK_LE_IK: D = eval_bool(A.as.i <= o->u.k.as.i); continue;
        case TK_GT_IK: D = eval_bool(A.as.i > o->u.k.as.i); continue;
        case TK_GE_IK: D = eval_bool(A.as.i >= o->u.k.as.i); continue;
        case TK_DIV_IK: D = eval_int(A.as.i / o->u.k.as.i); continue;
        case TK_MOD_IK: D = eval_int(A.as.i % o->u.k.as.i); continue;
        case TK_ADD_F: D = eval_float(A.as.f + B.as.f); continue;
        case TK_SUB_F: D = eval_float(A.as.f - B.as.f); continue;
        case TK_MUL_F: D = eval_float(A.as.f * B.as.f); continue;
        case TK_DIV_F: D = eval_float(A.as.f / B.as.f); continue;
        case TK_MOD_F: D = eval_float(fmod(A.as.f, B.as.f)); continue;
        case TK_LT_F: D = eval_bool(A.as.f < B.as.f); continue;
        case TK_LE_F: D = eval_bool(A.as.f <= B.as.f); continue;
        case TK_GT_F: D = eval_bool(A.as.f > B.as.f); continue;
        case TK_GE_F: D = eval_bool(A.as.f >= B.as.f); continue;
        case TK_EQ_S:
        case TK_NE_S: {
            const val_str *p = val_as_str(A), *q = val_as_str(B);
            bool eq = p == q || (p->len == q->len && memcmp(p->data, q->data, p->len) == 0);
            D = eval_bool(eq == (o->op == TK_EQ_S));
            continue;
        }
        case TK_EQ_B: D = eval_bool(A.as.b == B.as.b); continue;
        case TK_NE_B: D = eval_bool(A.as.b != B.as.b); continue;
        case TK_NOT: D = eval_bool(!A.as.b); continue;
        case TK_NEG_I: D = eval_int((int64_t)(0 - (uint64_t)A.as.i)); continue;
        case TK_NEG_F: D = eval_float(-A.as.f); continue;
        case TK_AND: D = eval_bool(A.as.b && B.as.b); continue;
        case TK_OR: D = eval_bool(A.as.b || B.as.b); continue;
        case TK_SEL: D = A.as.b ? B : s[o->j]; continue;
        case TK_JF: if (!A.as.b) o = code + o->j - 1; continue;
        case TK_JT: if (A.as.b) o = code + o->j - 1; continue;
        case TK_JMP: o = code + o->j - 1; continue;
        case TK_LETT: {
            const tk_lett *x = o->u.lett;
            stc_value *items = val_seq_items(s[k->state_slot]);
            if (x->move && eval_unique(s[k->state_slot])) {
                /* as eval_let_enter's move; the items left in the block
                 * are overwritten by the pair's state (of the same arity:
                 * the state's type), never released, or stay */
                moved = x;
                tk_copy_run(s, items, &x->mbind);
                for (int i = 0; i < x->drop.n; i++) val_release(items[x->drop.c[i].from]);
            } else {
                tk_copy_run(s, items, &x->bind);
            }
            continue;
        }
        case TK_CASE: {
            const tk_case *x = o->u.cas;
            int64_t v = A.as.i;
            int i = 0;
            while (i < x->n && x->keys[i] != v) i++;
            if (i == x->n && x->slot >= 0) s[x->slot] = eval_int(v);
            o = code + x->to[i] - 1;
            continue;
        }
        default: break; /* TK_PAIR */
        }
        break;
    }
#undef D
#undef A
#undef B
    const tk_pair *x = o->u.pair;
    stc_value ov, next;
    if (x->on) { /* first, as the pair's first item */
        ov = val_seq_new_unset(STC_T_TUPLE, (size_t)x->on);
        if (ov.tag == STC_T_INVALID) return tk_oom(cx, t, k, s, x->oloc, ov, moved);
        tk_copy_run(val_seq_items(ov), s, &x->out);
    } else {
        ov = x->oreg < 0 ? x->olit : s[x->oreg];
        if (x->oheap) ov = val_retain(ov);
    }
    if (x->n) {
        if (moved) { /* the old block, held by the slot alone, its items moved out */
            next = s[k->state_slot];
            s[k->state_slot] = (stc_value){.tag = STC_T_UNIT};
        } else {
            next = val_seq_new_unset(STC_T_TUPLE, (size_t)x->n);
            if (next.tag == STC_T_INVALID) return tk_oom(cx, t, k, s, x->loc, ov, NULL);
        }
        tk_copy_run(val_seq_items(next), s, moved ? &x->mall : &x->all);
        ts->value = next; /* was unit since the state moved in: nothing to compare or drop */
        *out = ov;
    } else {
        eval_thread_store(cx, t, ov, x->sheap ? val_retain(s[x->st]) : s[x->st], out);
    }
    tk_release(k, s);
    return 0;
declined:
    return stc__eval_thread_body(cx, t, s, e->u.call.callee_loc, out);
}
