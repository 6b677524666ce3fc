/* kernel.c - a thread's compiled form (issue 18 item 1; docs/DESIGN.md 2,
 * "A thread call's compiled form").  An STCLang thread whose function's
 * body is lets, let-tuples of the state, ifs and int cases down to an
 * (output, state) pair, over ints, floats, bools, units and strings with
 * operators that cannot fail and no call at all, is compiled once
 * (stc__eval_prepare) into a small tree of tk_node, typed from the
 * thread's input and state types.  Nothing in such a body can call, fail
 * or recurse past the tree's small height, so its depth units, stack
 * checks and evaluation order cannot be seen: a call runs it with the
 * call's own depth and cancel checks only (calls.c), the state's items
 * bound straight into the frame (moved when the state is held once), the
 * new state written into the old tuple's block, scalar slots neither
 * filled nor released.  The tags of the args and of the state are checked
 * against the compiled types first; any other value (or body) takes the
 * evaluator's path. */
#include <math.h>
#include <string.h>

#include "eval/eval_internal.h"
#include "util/arena.h"
#include "util/cancel.h"

enum {
    /* Expressions: a value, borrowed (a str is a slot's or a literal's). */
    TK_VAR,
    TK_LIT,
    TK_ADD_I, TK_SUB_I, TK_MUL_I, TK_DIV_I, TK_MOD_I, /* DIV, MOD: b a literal, not 0 nor -1 */
    TK_EQ_I, TK_NE_I, TK_LT_I, TK_LE_I, TK_GT_I, TK_GE_I,
    TK_ADD_F, TK_SUB_F, TK_MUL_F, TK_DIV_F, TK_MOD_F,
    TK_LT_F, TK_LE_F, TK_GT_F, TK_GE_F,
    TK_EQ_S, TK_NE_S, TK_EQ_B, TK_NE_B,
    TK_AND, TK_OR, TK_NOT, TK_NEG_I, TK_NEG_F,
    TK_IF, /* a ? b : c */
    /* The body: each binds or chooses, then goes on (b, or c, or an alt),
     * down to the pair. */
    TK_LET,    /* slot = a */
    TK_LETT,   /* the state's items into slots[] */
    TK_BRANCH, /* a ? b : c */
    TK_CASE,   /* an int a: alts[i] for keys[i], alts[n] else (binding slot) */
    TK_PAIR    /* output a, or oitems[0..on-1] into a tuple (on > 0); the state:
                  items[0..n-1] into a tuple, or b (n 0) */
};

/* Deepest expression compiled (the tree is evaluated by recursion on the
 * C stack, under eval_pair's half-segment check); widest state tuple;
 * most inputs. */
#define TK_MAX_HEIGHT 12
#define TK_MAX_ITEMS 16
#define TK_MAX_IN 4
#define TK_MAX_SLOTS 24 /* a frame on the C stack, for the evaluator's path too */

typedef struct tk_node tk_node;
struct tk_node {
    uint8_t op;
    bool heap;             /* an expression whose value is a str (retained to be kept) */
    bool move;             /* TK_LETT: the state's one mention (EVAL_X_LET_MOVE) */
    int slot;              /* TK_VAR; TK_LET's binder, TK_CASE's default binder (-1: none) */
    int n;                 /* TK_LETT binders; TK_CASE keys; TK_PAIR state items */
    stc_value lit;         /* TK_LIT: the IR's literal (borrowed) */
    const tk_node *a, *b, *c;
    const int *slots;      /* TK_LETT: a binder's slot (-1: none) per item */
    const int64_t *keys;   /* TK_CASE */
    const tk_node **items; /* TK_PAIR: the state's items; TK_CASE: the alts */
    const tk_node **oitems; /* TK_PAIR: the output's items */
    int on;
    ir_loc loc, oloc;      /* TK_PAIR: the state tuple's, the output tuple's (out of memory) */
};

struct eval_tk {
    const tk_node *body;
    int ninputs;
    stc_tag in_tag[TK_MAX_IN];
    int state_slot;
    int nstate;                  /* the state tuple's arity; 0: a scalar or str state */
    stc_tag st_tag[TK_MAX_ITEMS]; /* its items' tags (nstate 0: st_tag[0] the state's) */
    int nbind, nrel;             /* str binders (set to unit first); str slots to release */
    const int *bind, *rel;
};

/* ---- Running --------------------------------------------------------------- */

static stc_value tk_val(const tk_node *x, const stc_value *s);

static inline int64_t tk_int(const tk_node *x, const stc_value *s)
{
    return x->op == TK_VAR ? s[x->slot].as.i : x->op == TK_LIT ? x->lit.as.i : tk_val(x, s).as.i;
}

static inline double tk_float(const tk_node *x, const stc_value *s)
{
    return x->op == TK_VAR ? s[x->slot].as.f : x->op == TK_LIT ? x->lit.as.f : tk_val(x, s).as.f;
}

static inline bool tk_bool(const tk_node *x, const stc_value *s)
{
    return x->op == TK_VAR ? s[x->slot].as.b : tk_val(x, s).as.b;
}

/* The operators' meaning is eval_arith's and eval_compare's (operators.c)
 * on the tags the compiler proved: ints wrap, floats are IEEE. */
static stc_value tk_val(const tk_node *x, const stc_value *s)
{
    switch (x->op) {
    case TK_VAR: return s[x->slot];
    case TK_LIT: return x->lit;
    case TK_ADD_I: return eval_int((int64_t)((uint64_t)tk_int(x->a, s) + (uint64_t)tk_int(x->b, s)));
    case TK_SUB_I: return eval_int((int64_t)((uint64_t)tk_int(x->a, s) - (uint64_t)tk_int(x->b, s)));
    case TK_MUL_I: return eval_int((int64_t)((uint64_t)tk_int(x->a, s) * (uint64_t)tk_int(x->b, s)));
    case TK_DIV_I: return eval_int(tk_int(x->a, s) / x->b->lit.as.i);
    case TK_MOD_I: return eval_int(tk_int(x->a, s) % x->b->lit.as.i);
    case TK_EQ_I: return eval_bool(tk_int(x->a, s) == tk_int(x->b, s));
    case TK_NE_I: return eval_bool(tk_int(x->a, s) != tk_int(x->b, s));
    case TK_LT_I: return eval_bool(tk_int(x->a, s) < tk_int(x->b, s));
    case TK_LE_I: return eval_bool(tk_int(x->a, s) <= tk_int(x->b, s));
    case TK_GT_I: return eval_bool(tk_int(x->a, s) > tk_int(x->b, s));
    case TK_GE_I: return eval_bool(tk_int(x->a, s) >= tk_int(x->b, s));
    case TK_ADD_F: return eval_float(tk_float(x->a, s) + tk_float(x->b, s));
    case TK_SUB_F: return eval_float(tk_float(x->a, s) - tk_float(x->b, s));
    case TK_MUL_F: return eval_float(tk_float(x->a, s) * tk_float(x->b, s));
    case TK_DIV_F: return eval_float(tk_float(x->a, s) / tk_float(x->b, s));
    case TK_MOD_F: return eval_float(fmod(tk_float(x->a, s), tk_float(x->b, s)));
    case TK_LT_F: return eval_bool(tk_float(x->a, s) < tk_float(x->b, s));
    case TK_LE_F: return eval_bool(tk_float(x->a, s) <= tk_float(x->b, s));
    case TK_GT_F: return eval_bool(tk_float(x->a, s) > tk_float(x->b, s));
    case TK_GE_F: return eval_bool(tk_float(x->a, s) >= tk_float(x->b, s));
    case TK_EQ_S:
    case TK_NE_S: {
        const val_str *p = val_as_str(tk_val(x->a, s)), *q = val_as_str(tk_val(x->b, s));
        bool eq = p == q || (p->len == q->len && memcmp(p->data, q->data, p->len) == 0);
        return eval_bool(eq == (x->op == TK_EQ_S));
    }
    case TK_EQ_B: return eval_bool(tk_bool(x->a, s) == tk_bool(x->b, s));
    case TK_NE_B: return eval_bool(tk_bool(x->a, s) != tk_bool(x->b, s));
    case TK_AND: return tk_bool(x->a, s) ? tk_val(x->b, s) : eval_bool(false);
    case TK_OR: return tk_bool(x->a, s) ? eval_bool(true) : tk_val(x->b, s);
    case TK_NOT: return eval_bool(!tk_bool(x->a, s));
    case TK_NEG_I: return eval_int((int64_t)(0 - (uint64_t)tk_int(x->a, s)));
    case TK_NEG_F: return eval_float(-tk_float(x->a, s));
    default: /* TK_IF */ return tk_bool(x->a, s) ? tk_val(x->b, s) : tk_val(x->c, s);
    }
}

/* A value to keep (an output, a state item, a binder's): variables and
 * literals without the call. */
static inline stc_value tk_keep(const tk_node *x, const stc_value *s)
{
    stc_value v = x->op == TK_VAR ? s[x->slot] : x->op == TK_LIT ? x->lit : tk_val(x, s);
    return x->heap ? val_retain(v) : v;
}

/* The frame's values that need a release: its str slots, and the state's
 * slot (unit once its block was reused). */
static inline void tk_release(const eval_tk *k, stc_value *s)
{
    for (int i = 0; i < k->nrel; i++) val_release(s[k->rel[i]]);
    val_release(s[k->state_slot]);
}

/* Out of memory for a tuple at loc, inside thread t's call: the error the
 * evaluator's stc__eval_seq gives there; o (made before) and the frame
 * released; a state moved into the call stays unit, as there. */
EVAL_NOINLINE static int tk_oom(eval_ctx *cx, int t, const eval_tk *k, stc_value *s, ir_loc loc, stc_value o)
{
    const char *saved = cx->thread;
    cx->thread = cx->p->threads[t]->name;
    int rc = stc__eval_oom(cx, loc);
    cx->thread = saved;
    val_release(o);
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

int stc__eval_tk_call(eval_ctx *cx, const ir_expr *e, eval_frame *fr, const eval_tk *k, stc_value *out)
{
    stc_value s[TK_MAX_SLOTS]; /* the function's frame: written in order, scalars never released */
    int t = e->u.call.callee.index;
    for (int i = 0; i < k->ninputs; i++) {
        int rc = eval_quick(cx, e->u.call.args[i], fr, &s[i]);
        if (rc) { /* s[i] holds nothing */
            eval_release_n(s, (size_t)i);
            return rc;
        }
    }
    /* The call's checks, the stack, and the compiled types on the values:
     * when any is due or wrong, the evaluator's path (which reports the
     * check's error). */
    eval_tstate *ts = &cx->states[t];
    stc_value st = ts->value;
    if (cx->depth >= EVAL_MAX_DEPTH || cancel_raised(cx->cancel) || tk_far(cx)) goto declined;
    for (int i = 0; i < k->ninputs; i++)
        if (s[i].tag != k->in_tag[i]) goto declined;
    if (k->nstate) {
        if (st.tag != STC_T_TUPLE || val_seq_len(st) != (size_t)k->nstate) goto declined;
        const stc_value *items = val_seq_items(st);
        for (int i = 0; i < k->nstate; i++)
            if (items[i].tag != k->st_tag[i]) goto declined;
        ts->value = (stc_value){.tag = STC_T_UNIT}; /* moved in, as eval_state_take */
    } else {
        if (st.tag != k->st_tag[0]) goto declined;
        st = val_retain(st);
    }
    s[k->state_slot] = st;
    for (int i = 0; i < k->nbind; i++) s[k->bind[i]] = (stc_value){.tag = STC_T_UNIT};
    bool moved = false;
    const tk_node *x = k->body;
    for (;;) {
        switch (x->op) {
        case TK_LET: {
            stc_value v = tk_keep(x->a, s);
            if (x->slot >= 0) s[x->slot] = v;
            else val_release(v);
            x = x->b;
            continue;
        }
        case TK_LETT: {
            stc_value *items = val_seq_items(s[k->state_slot]);
            if (x->move && eval_unique(s[k->state_slot])) {
                /* as eval_let_enter's move; the items left in the block
                 * are overwritten by the pair's state (of the same arity:
                 * the state's type), never released */
                moved = true;
                for (int i = 0; i < x->n; i++) {
                    if (x->slots[i] >= 0) s[x->slots[i]] = items[i];
                    else val_release(items[i]);
                }
            } else {
                for (int i = 0; i < x->n; i++)
                    if (x->slots[i] >= 0) s[x->slots[i]] = val_retain(items[i]);
            }
            x = x->b;
            continue;
        }
        case TK_BRANCH: x = tk_bool(x->a, s) ? x->b : x->c; continue;
        case TK_CASE: {
            int64_t v = tk_int(x->a, s);
            int i = 0;
            while (i < x->n && x->keys[i] != v) i++;
            if (i == x->n && x->slot >= 0) s[x->slot] = eval_int(v);
            x = x->items[i];
            continue;
        }
        default: break; /* TK_PAIR */
        }
        break;
    }
    stc_value o, next;
    if (x->on) { /* first, as the pair's first item */
        o = val_seq_new_unset(STC_T_TUPLE, (size_t)x->on);
        if (o.tag == STC_T_INVALID) return tk_oom(cx, t, k, s, x->oloc, o);
        stc_value *items = val_seq_items(o);
        for (int i = 0; i < x->on; i++) items[i] = tk_keep(x->oitems[i], s);
    } else {
        o = tk_keep(x->a, s);
    }
    if (x->n) {
        if (moved) { /* the old block, held by the slot alone, its items moved out */
            next = s[k->state_slot];
            s[k->state_slot] = (stc_value){.tag = STC_T_UNIT};
        } else {
            next = val_seq_new_unset(STC_T_TUPLE, (size_t)x->n);
            if (next.tag == STC_T_INVALID) return tk_oom(cx, t, k, s, x->loc, o);
        }
        stc_value *items = val_seq_items(next);
        for (int i = 0; i < x->n; i++) items[i] = tk_keep(x->items[i], s);
        ts->value = next; /* was unit since the state moved in: nothing to compare or drop */
        *out = o;
    } else {
        eval_thread_store(cx, t, o, tk_keep(x->b, s), out);
    }
    tk_release(k, s);
    return 0;
declined:
    return stc__eval_thread_body(cx, t, s, e->u.call.callee_loc, out);
}

/* ---- Compiling ------------------------------------------------------------- */

typedef struct tk_comp {
    ir_program *p;
    const ir_fun *fn;
    eval_tk *k;
    stc_tag *stag;  /* per slot: the tag of its value once bound (0: none, or the tuple state) */
    int *bind;      /* str binders */
    int nbind;
} tk_comp;

static tk_node *tk_new(tk_comp *c, int op)
{
    tk_node *x = stc__arena_alloc(c->p->arena, sizeof *x);
    if (x) {
        memset(x, 0, sizeof *x);
        x->op = (uint8_t)op;
        x->slot = -1;
    }
    return x;
}

static stc_tag tk_type_tag(ir_type *ty)
{
    ty = ty ? stc__ir_type_resolve(ty) : NULL;
    if (!ty) return STC_T_INVALID;
    switch (ty->kind) {
    case TY_INT: return STC_T_INT;
    case TY_FLOAT: return STC_T_FLOAT;
    case TY_BOOL: return STC_T_BOOL;
    case TY_STR: return STC_T_STR;
    case TY_UNIT: return STC_T_UNIT;
    default: return STC_T_INVALID;
    }
}

static bool tk_scalar_tag(stc_tag g)
{
    return g == STC_T_UNIT || g == STC_T_INT || g == STC_T_FLOAT || g == STC_T_BOOL || g == STC_T_STR;
}

/* A binder's slot for a value of tag g: -1 for none; -2 when it cannot be. */
static int tk_binder(tk_comp *c, const ir_var *v, stc_tag g)
{
    if (!v || v->slot < 0) return -1;
    if (v->slot >= c->fn->nslots || v->slot < c->fn->nparams || c->stag[v->slot]) return -2;
    c->stag[v->slot] = g;
    if (g == STC_T_STR) c->bind[c->nbind++] = v->slot;
    return v->slot;
}

static const tk_node *tk_expr(tk_comp *c, const ir_expr *e, int height, stc_tag *tag);

static tk_node *tk_binop(tk_comp *c, const ir_expr *e, int height, stc_tag *tag)
{
    stc_tag ga, gb;
    const tk_node *a = tk_expr(c, e->a, height + 1, &ga);
    const tk_node *b = a ? tk_expr(c, e->b, height + 1, &gb) : NULL;
    if (!b || ga != gb) return NULL;
    ir_binop op = e->u.binop;
    int k = -1;
    *tag = STC_T_BOOL;
    if (op == OP_AND || op == OP_OR) {
        if (ga == STC_T_BOOL) k = op == OP_AND ? TK_AND : TK_OR;
    } else if (ga == STC_T_INT) {
        if (op >= OP_ADD) *tag = STC_T_INT;
        bool lit_div = e->b->kind == IR_LIT && e->b->u.lit.as.i != 0 && e->b->u.lit.as.i != -1;
        switch (op) {
        case OP_ADD: k = TK_ADD_I; break;
        case OP_SUB: k = TK_SUB_I; break;
        case OP_MUL: k = TK_MUL_I; break;
        case OP_DIV: k = lit_div ? TK_DIV_I : -1; break; /* else it may fail */
        case OP_MOD: k = lit_div ? TK_MOD_I : -1; break;
        default: k = TK_EQ_I + (int)(op - OP_EQ); break;
        }
    } else if (ga == STC_T_FLOAT) {
        if (op >= OP_ADD) {
            *tag = STC_T_FLOAT;
            k = TK_ADD_F + (int)(op - OP_ADD);
        } else if (op >= OP_LT) {
            k = TK_LT_F + (int)(op - OP_LT); /* not == != (stc_value_equal's meaning) */
        }
    } else if (ga == STC_T_STR || ga == STC_T_BOOL) {
        if (op == OP_EQ || op == OP_NE)
            k = ga == STC_T_STR ? (op == OP_EQ ? TK_EQ_S : TK_NE_S) : (op == OP_EQ ? TK_EQ_B : TK_NE_B);
    }
    if (k < 0) return NULL;
    tk_node *x = tk_new(c, k);
    if (x) {
        x->a = a;
        x->b = b;
    }
    return x;
}

static const tk_node *tk_expr(tk_comp *c, const ir_expr *e, int height, stc_tag *tag)
{
    if (height > TK_MAX_HEIGHT) return NULL;
    tk_node *x = NULL;
    switch (e->kind) {
    case IR_VAR: {
        int sl = e->u.var->slot;
        if (sl < 0 || sl >= c->fn->nslots || !c->stag[sl]) return NULL; /* the tuple state */
        *tag = c->stag[sl];
        if ((x = tk_new(c, TK_VAR))) x->slot = sl;
        break;
    }
    case IR_LIT:
        if (!tk_scalar_tag(e->u.lit.tag)) return NULL;
        *tag = e->u.lit.tag;
        if ((x = tk_new(c, TK_LIT))) x->lit = e->u.lit;
        break;
    case IR_BINOP: x = tk_binop(c, e, height, tag); break;
    case IR_UNOP: {
        stc_tag g;
        const tk_node *a = tk_expr(c, e->a, height + 1, &g);
        int k = !a ? -1
                : e->u.unop == OP_NOT ? (g == STC_T_BOOL ? TK_NOT : -1)
                : g == STC_T_INT ? TK_NEG_I
                : g == STC_T_FLOAT ? TK_NEG_F : -1;
        if (k < 0) return NULL;
        *tag = g;
        if ((x = tk_new(c, k))) x->a = a;
        break;
    }
    case IR_IF: {
        stc_tag g0, g1, g2;
        const tk_node *a = tk_expr(c, e->a, height + 1, &g0);
        const tk_node *b = a ? tk_expr(c, e->b, height + 1, &g1) : NULL;
        const tk_node *d = b ? tk_expr(c, e->c, height + 1, &g2) : NULL;
        if (!d || g0 != STC_T_BOOL || g1 != g2) return NULL;
        *tag = g1;
        if ((x = tk_new(c, TK_IF))) {
            x->a = a;
            x->b = b;
            x->c = d;
        }
        break;
    }
    default: return NULL;
    }
    if (x) x->heap = *tag == STC_T_STR;
    return x;
}

/* Tuple e's items, of the tags want[i] (NULL: any). */
static const tk_node **tk_items(tk_comp *c, const ir_expr *e, const stc_tag *want)
{
    int n = e->u.agg.nitems;
    const tk_node **items = n <= TK_MAX_ITEMS ? stc__arena_alloc(c->p->arena, (size_t)n * sizeof *items) : NULL;
    stc_tag g;
    for (int i = 0; items && i < n; i++)
        if (!(items[i] = tk_expr(c, e->u.agg.items[i], 0, &g)) || (want && g != want[i])) return NULL;
    return items;
}

static const tk_node *tk_body(tk_comp *c, const ir_expr *e, int height)
{
    if (height > IR_MAX_DEPTH) return NULL;
    eval_tk *k = c->k;
    tk_node *x;
    stc_tag g;
    switch (e->kind) {
    case IR_LET: {
        if (e->u.let.nbinders > 1) return NULL;
        const tk_node *a = tk_expr(c, e->a, 0, &g);
        if (!a || !(x = tk_new(c, TK_LET))) return NULL;
        x->a = a;
        x->slot = tk_binder(c, e->u.let.nbinders ? e->u.let.binders[0] : NULL, g);
        if (x->slot == -2 || !(x->b = tk_body(c, e->b, height + 1))) return NULL;
        return x;
    }
    case IR_LETTUPLE: {
        int n = e->u.let.nbinders;
        if (e->a->kind != IR_VAR || e->a->u.var->slot != k->state_slot || n != k->nstate) return NULL;
        int *slots = stc__arena_alloc(c->p->arena, (size_t)n * sizeof *slots);
        if (!slots || !(x = tk_new(c, TK_LETT))) return NULL;
        for (int i = 0; i < n; i++)
            if ((slots[i] = tk_binder(c, e->u.let.binders[i], k->st_tag[i])) == -2) return NULL;
        x->n = n;
        x->slots = slots;
        x->move = e->xop == EVAL_X_LET_MOVE;
        if (!(x->b = tk_body(c, e->b, height + 1))) return NULL;
        return x;
    }
    case IR_IF: {
        const tk_node *a = tk_expr(c, e->a, 0, &g);
        if (!a || g != STC_T_BOOL || !(x = tk_new(c, TK_BRANCH))) return NULL;
        x->a = a;
        if (!(x->b = tk_body(c, e->b, height + 1)) || !(x->c = tk_body(c, e->c, height + 1))) return NULL;
        return x;
    }
    case IR_CASE: {
        int n = e->u.cas.nalts;
        const tk_node *a = tk_expr(c, e->a, 0, &g);
        int64_t *keys = stc__arena_alloc(c->p->arena, (size_t)n * sizeof *keys);
        const tk_node **alts = stc__arena_alloc(c->p->arena, (size_t)n * sizeof *alts);
        if (!a || g != STC_T_INT || !keys || !alts || !(x = tk_new(c, TK_CASE))) return NULL;
        x->a = a;
        x->keys = keys;
        x->items = alts;
        for (int i = 0; i < n; i++) { /* literals up to the first catch-all, which must come */
            const ir_alt *alt = &e->u.cas.alts[i];
            if (alt->pat == PAT_LIT && alt->lit.tag == STC_T_INT) {
                keys[i] = alt->lit.as.i;
                if (!(alts[i] = tk_body(c, alt->body, height + 1))) return NULL;
                continue;
            }
            if (alt->pat == PAT_VAR) x->slot = tk_binder(c, alt->nvars ? alt->vars[0] : NULL, STC_T_INT);
            else if (alt->pat != PAT_WILD) return NULL;
            if (x->slot == -2 || !(alts[i] = tk_body(c, alt->body, height + 1))) return NULL;
            x->n = i;
            return x;
        }
        return NULL;
    }
    case IR_TUPLE: {
        if (e->u.agg.nitems != 2 || !(x = tk_new(c, TK_PAIR))) return NULL;
        const ir_expr *oe = e->u.agg.items[0];
        if (oe->kind == IR_TUPLE) { /* a tuple of scalars: built here */
            if (!(x->oitems = tk_items(c, oe, NULL))) return NULL;
            x->on = oe->u.agg.nitems;
            x->oloc = oe->loc;
        } else if (!(x->a = tk_expr(c, oe, 0, &g))) {
            return NULL;
        }
        const ir_expr *se = e->u.agg.items[1];
        if (!k->nstate) {
            x->b = tk_expr(c, se, 0, &g);
            return x->b && g == k->st_tag[0] ? x : NULL;
        }
        if (se->kind != IR_TUPLE || se->u.agg.nitems != k->nstate) return NULL;
        if (!(x->items = tk_items(c, se, k->st_tag))) return NULL;
        x->n = k->nstate;
        x->loc = se->loc;
        return x;
    }
    default: return NULL;
    }
}

/* Thread th's compiled form, or NULL (the evaluator's path). */
static const eval_tk *tk_compile(ir_program *p, const ir_thread *th)
{
    if (th->kind != THREAD_LANG || th->keyed || th->fun < 0 || th->fun >= p->nfuns) return NULL;
    const ir_fun *fn = p->funs[th->fun];
    if (!fn || !fn->body || fn->ncaptures > 0 || fn->nparams < 1 || fn->nparams - 1 > TK_MAX_IN ||
        !eval_direct_layout(fn) || fn->nslots > TK_MAX_SLOTS)
        return NULL;
    eval_tk *k = stc__arena_alloc(p->arena, sizeof *k);
    stc_tag *stag = stc__arena_alloc(p->arena, (size_t)fn->nslots * sizeof *stag);
    int *bind = stc__arena_alloc(p->arena, (size_t)fn->nslots * sizeof *bind);
    int *rel = stc__arena_alloc(p->arena, (size_t)fn->nslots * sizeof *rel);
    if (!k || !stag || !bind || !rel) return NULL;
    memset(k, 0, sizeof *k);
    memset(stag, 0, (size_t)fn->nslots * sizeof *stag);
    tk_comp c = {p, fn, k, stag, bind, 0};
    /* the inputs' tags */
    k->ninputs = fn->nparams - 1;
    ir_type *in = th->in_type ? stc__ir_type_resolve(th->in_type) : NULL;
    for (int i = 0; i < k->ninputs; i++) {
        ir_type *ty = k->ninputs == 1 ? in : in && in->kind == TY_TUPLE && in->n == k->ninputs ? in->args[i] : NULL;
        if (!(k->in_tag[i] = tk_type_tag(ty))) return NULL;
        stag[i] = k->in_tag[i];
    }
    /* the state's */
    k->state_slot = fn->nparams - 1;
    ir_type *sty = th->state_type ? stc__ir_type_resolve(th->state_type) : NULL;
    if (sty && sty->kind == TY_TUPLE) {
        if (sty->n > TK_MAX_ITEMS) return NULL;
        k->nstate = sty->n;
        for (int i = 0; i < sty->n; i++)
            if (!(k->st_tag[i] = tk_type_tag(sty->args[i]))) return NULL;
        if (!th->state_moves) return NULL; /* (never so for a body that fits) */
    } else if (!(k->st_tag[0] = stag[k->state_slot] = tk_type_tag(sty))) {
        return NULL;
    }
    if (!(k->body = tk_body(&c, fn->body, 0))) return NULL;
    k->nbind = c.nbind;
    k->bind = bind;
    for (int i = 0; i < k->ninputs; i++) /* the state's slot is released apart */
        if (stag[i] == STC_T_STR) rel[k->nrel++] = i;
    for (int i = 0; i < c.nbind; i++) rel[k->nrel++] = bind[i];
    k->rel = rel;
    return k;
}

void stc__eval_tk_prepare(ir_program *p)
{
    for (int i = 0; i < p->nthreads; i++) p->threads[i]->xtk = tk_compile(p, p->threads[i]);
}
