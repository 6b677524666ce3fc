/* kernel_code.c - a thread's compiled form, compiled (docs/DESIGN.md 2,
 * "A thread call's compiled form" and "The register code"): once, at
 * stc__eval_prepare, each STCLang thread whose body fits becomes one
 * register code (kernel.h) that kernel.c runs; any other thread is left
 * to the evaluator (ir_thread.xtk NULL). */
#include <stdlib.h>
#include <string.h>

#include "eval/kernel.h"
#include "util/arena.h"

/* ---- Compiling ------------------------------------------------------------- */

typedef struct tk_comp {
    ir_program *p;
    const ir_fun *fn;
    eval_tk *k;
    stc_tag *stag;  /* per slot: the tag of its value once bound (0: none, or the tuple state) */
    int *bind;      /* str binders */
    int nbind;
    tk_op *code;    /* TK_MAX_OPS */
    int n, top;     /* ops so far; the first free temporary */
} tk_comp;

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

/* Appends an op; its index, or -1 when the code is full. */
static int tk_emit(tk_comp *c, int op, int d, int a, int b)
{
    if (c->n >= TK_MAX_OPS) return -1;
    c->code[c->n] = (tk_op){.op = (uint8_t)op, .d = (uint8_t)d, .a = (uint8_t)a, .b = (uint8_t)b};
    return c->n++;
}

/* A temporary register, or -1 when there is none left. */
static int tk_temp(tk_comp *c)
{
    return c->top < TK_MAX_REGS ? c->top++ : -1;
}

/* The op of binop e on operands of tag g (b the immediate when imm), or
 * -1 when it may fail or is not compiled; *tag its result's. */
static int tk_binop_op(const ir_expr *e, stc_tag g, bool imm, stc_tag *tag)
{
    ir_binop op = e->u.binop;
    *tag = STC_T_BOOL;
    if (g == STC_T_INT) {
        if (op >= OP_ADD) *tag = STC_T_INT;
        int base = imm ? TK_ADD_IK : TK_ADD_I;
        switch (op) {
        case OP_ADD: return base;
        case OP_SUB: return base + 1;
        case OP_MUL: return base + 2;
        case OP_DIV: return imm ? TK_DIV_IK : -1; /* else it may fail */
        case OP_MOD: return imm ? TK_MOD_IK : -1;
        default: return base + 3 + (int)(op - OP_EQ);
        }
    }
    if (imm) return -1;
    if (g == STC_T_FLOAT) {
        if (op >= OP_ADD) {
            *tag = STC_T_FLOAT;
            return TK_ADD_F + (int)(op - OP_ADD);
        }
        return op >= OP_LT ? TK_LT_F + (int)(op - OP_LT) : -1; /* not == != (stc_value_equal's meaning) */
    }
    if ((g == STC_T_STR || g == STC_T_BOOL) && (op == OP_EQ || op == OP_NE))
        return g == STC_T_STR ? (op == OP_EQ ? TK_EQ_S : TK_NE_S) : (op == OP_EQ ? TK_EQ_B : TK_NE_B);
    return -1;
}

/* Register r's value into d (a temporary; -1: leave it in r). */
static int tk_into(tk_comp *c, int d, int r)
{
    if (d < 0 || d == r) return r;
    return tk_emit(c, TK_MOV, d, r, 0) < 0 ? -1 : d;
}

/* Whether e's code is at most one op (its operands variables, or an int
 * literal b). */
static bool tk_one_op(const ir_expr *e)
{
    if (e->kind == IR_VAR || e->kind == IR_LIT) return true;
    if (e->kind == IR_UNOP) return e->a->kind == IR_VAR;
    return e->kind == IR_BINOP && e->u.binop != OP_AND && e->u.binop != OP_OR && e->a->kind == IR_VAR &&
           (e->b->kind == IR_VAR || (e->b->kind == IR_LIT && e->b->u.lit.tag == STC_T_INT));
}

/* Code for expression e: the register its value is in (a variable's
 * slot, or want, or a new temporary when want is -1; the temporaries
 * below it stay held), or -1 when e is not compiled. */
static int tk_reg(tk_comp *c, const ir_expr *e, int want, int height, stc_tag *tag)
{
    if (height > TK_MAX_HEIGHT) return -1;
    int save = c->top, d, i;
    stc_tag ga, gb, g;
    switch (e->kind) {
    case IR_VAR: {
        int sl = e->u.var->slot;
        if (sl < 0 || sl >= c->fn->nslots || !c->stag[sl]) return -1; /* the tuple state */
        *tag = c->stag[sl];
        return tk_into(c, want, sl);
    }
    case IR_LIT:
        if (!tk_scalar_tag(e->u.lit.tag)) return -1;
        *tag = e->u.lit.tag;
        d = want >= 0 ? want : tk_temp(c);
        if (d < 0 || (i = tk_emit(c, TK_LOADK, d, 0, 0)) < 0) return -1;
        c->code[i].u.k = e->u.lit;
        return d;
    case IR_BINOP: {
        ir_binop op = e->u.binop;
        if (op == OP_AND || op == OP_OR) {
            /* b of at most one op: both, then d (nothing in b can fail
             * or be seen); else a into d, then b into d unless a decides */
            if (tk_one_op(e->b)) {
                int a = tk_reg(c, e->a, -1, height + 1, &ga);
                int b = a < 0 ? -1 : tk_reg(c, e->b, -1, height + 1, &gb);
                c->top = save;
                d = want >= 0 ? want : tk_temp(c);
                if (b < 0 || ga != STC_T_BOOL || gb != STC_T_BOOL || d < 0 ||
                    tk_emit(c, op == OP_AND ? TK_AND : TK_OR, d, a, b) < 0)
                    return -1;
                *tag = STC_T_BOOL;
                return d;
            }
            d = want >= 0 ? want : tk_temp(c);
            if (d < 0 || tk_reg(c, e->a, d, height + 1, &ga) < 0 || ga != STC_T_BOOL) return -1;
            int jmp = tk_emit(c, op == OP_AND ? TK_JF : TK_JT, 0, d, 0);
            if (jmp < 0 || tk_reg(c, e->b, d, height + 1, &gb) < 0 || gb != STC_T_BOOL) return -1;
            c->code[jmp].j = c->n;
            c->top = d >= save ? d + 1 : save;
            *tag = STC_T_BOOL;
            return d;
        }
        int a = tk_reg(c, e->a, -1, height + 1, &ga), b = 0;
        if (a < 0) return -1;
        bool divides = op == OP_DIV || op == OP_MOD;
        bool imm = ga == STC_T_INT && e->b->kind == IR_LIT && e->b->u.lit.tag == STC_T_INT &&
                   (!divides || (e->b->u.lit.as.i != 0 && e->b->u.lit.as.i != -1));
        if (!imm && ((b = tk_reg(c, e->b, -1, height + 1, &gb)) < 0 || gb != ga)) return -1;
        int k = tk_binop_op(e, ga, imm, tag);
        c->top = save; /* the operands are read before d is written */
        d = want >= 0 ? want : tk_temp(c);
        if (k < 0 || d < 0 || (i = tk_emit(c, k, d, a, b)) < 0) return -1;
        if (imm) c->code[i].u.k = e->b->u.lit;
        return d;
    }
    case IR_UNOP: {
        int a = tk_reg(c, e->a, -1, height + 1, &g);
        int k = a < 0 ? -1
                : e->u.unop == OP_NOT ? (g == STC_T_BOOL ? TK_NOT : -1)
                : g == STC_T_INT ? TK_NEG_I
                : g == STC_T_FLOAT ? TK_NEG_F : -1;
        c->top = save;
        d = want >= 0 ? want : tk_temp(c);
        if (k < 0 || d < 0 || tk_emit(c, k, d, a, 0) < 0) return -1;
        *tag = g;
        return d;
    }
    case IR_IF: {
        /* branches of at most one op each: both, then d = a ? b : c
         * (nothing in them can fail or be seen); else the condition,
         * then either branch into d */
        int r = tk_reg(c, e->a, -1, height + 1, &g);
        if (r < 0 || g != STC_T_BOOL) return -1;
        if (tk_one_op(e->b) && tk_one_op(e->c)) {
            int rb = tk_reg(c, e->b, -1, height + 1, &ga);
            int rc = rb < 0 ? -1 : tk_reg(c, e->c, -1, height + 1, &gb);
            c->top = save;
            d = want >= 0 ? want : tk_temp(c);
            if (rc < 0 || ga != gb || d < 0 || (i = tk_emit(c, TK_SEL, d, r, rb)) < 0) return -1;
            c->code[i].j = rc;
            *tag = ga;
            return d;
        }
        c->top = save;
        d = want >= 0 ? want : tk_temp(c);
        int jf = d < 0 ? -1 : tk_emit(c, TK_JF, 0, r, 0);
        if (jf < 0 || tk_reg(c, e->b, d, height + 1, &ga) < 0) return -1;
        int jmp = tk_emit(c, TK_JMP, 0, 0, 0);
        if (jmp < 0) return -1;
        c->code[jf].j = c->n;
        if (tk_reg(c, e->c, d, height + 1, &gb) < 0 || ga != gb) return -1;
        c->code[jmp].j = c->n;
        c->top = d >= save ? d + 1 : save;
        *tag = ga;
        return d;
    }
    default: return -1;
    }
}

/* Room for n copies in *l. */
static bool tk_copies_new(tk_comp *c, tk_copies *l, int n)
{
    *l = (tk_copies){0, false, stc__arena_alloc(c->p->arena, (size_t)(n ? n : 1) * sizeof *l->c)};
    return l->c != NULL;
}

static void tk_copies_add(tk_copies *l, int to, int from, bool heap)
{
    l->c[l->n++] = (tk_copy){(uint8_t)to, (uint8_t)from, heap};
    l->any |= heap;
}

/* Tuple e's items into registers, held, and the copies of them into a
 * tuple's items (*l), of the tags want[i] (NULL: any). */
static bool tk_items(tk_comp *c, const ir_expr *e, const stc_tag *want, tk_copies *l)
{
    int n = e->u.agg.nitems;
    stc_tag g;
    if (n > TK_MAX_ITEMS || !tk_copies_new(c, l, n)) return false;
    for (int i = 0; i < n; i++) {
        int r = tk_reg(c, e->u.agg.items[i], -1, 0, &g);
        if (r < 0 || (want && g != want[i])) return false;
        tk_copies_add(l, i, r, g == STC_T_STR);
    }
    return true;
}

/* The pair e: its output's and its state's code, then TK_PAIR. */
static bool tk_pair_code(tk_comp *c, const ir_expr *e)
{
    eval_tk *k = c->k;
    tk_pair *x = stc__arena_alloc(c->p->arena, sizeof *x);
    if (!x || e->u.agg.nitems != 2) return false;
    memset(x, 0, sizeof *x);
    const ir_expr *oe = e->u.agg.items[0], *se = e->u.agg.items[1];
    stc_tag g;
    if (oe->kind == IR_TUPLE) { /* a tuple of scalars: built here */
        if (!tk_items(c, oe, NULL, &x->out)) return false;
        x->on = oe->u.agg.nitems;
        x->oloc = oe->loc;
    } else if (oe->kind == IR_LIT) {
        if (!tk_scalar_tag(oe->u.lit.tag)) return false;
        x->oreg = -1;
        x->olit = oe->u.lit;
        x->oheap = oe->u.lit.tag == STC_T_STR;
    } else {
        if ((x->oreg = tk_reg(c, oe, -1, 0, &g)) < 0) return false;
        x->oheap = g == STC_T_STR;
    }
    if (!k->nstate) {
        int r = tk_reg(c, se, -1, 0, &g);
        if (r < 0 || g != k->st_tag[0]) return false;
        x->st = r;
        x->sheap = g == STC_T_STR;
    } else {
        if (se->kind != IR_TUPLE || se->u.agg.nitems != k->nstate) return false;
        if (!tk_items(c, se, k->st_tag, &x->all) || !tk_copies_new(c, &x->mall, k->nstate)) return false;
        x->n = k->nstate;
        x->loc = se->loc;
    }
    int i = tk_emit(c, TK_PAIR, 0, 0, 0);
    if (i < 0) return false;
    c->code[i].u.pair = x;
    return true;
}

/* Body e's code, down to its pairs. */
static bool tk_body(tk_comp *c, const ir_expr *e, int height)
{
    if (height > IR_MAX_DEPTH) return false;
    eval_tk *k = c->k;
    c->top = c->fn->nslots; /* no temporary lives across the body's steps */
    stc_tag g;
    int i;
    switch (e->kind) {
    case IR_LET: {
        if (e->u.let.nbinders > 1) return false;
        int n0 = c->n, r = tk_reg(c, e->a, -1, 0, &g);
        int slot = r < 0 ? -2 : tk_binder(c, e->u.let.nbinders ? e->u.let.binders[0] : NULL, g);
        if (slot == -2) return false;
        if (slot < 0) { /* a value nobody reads, which cannot fail: not computed */
            c->n = n0;
        } else if (g != STC_T_STR) { /* again, straight into the binder's slot */
            c->n = n0;
            c->top = c->fn->nslots;
            if (tk_reg(c, e->a, slot, 0, &g) != slot) return false;
        } else if (tk_emit(c, TK_KEEP, slot, r, 1) < 0) {
            return false;
        }
        return tk_body(c, e->b, height + 1);
    }
    case IR_LETTUPLE: {
        int n = e->u.let.nbinders;
        if (e->a->kind != IR_VAR || e->a->u.var->slot != k->state_slot || n != k->nstate) return false;
        tk_lett *x = stc__arena_alloc(c->p->arena, sizeof *x);
        if (!x || !tk_copies_new(c, &x->bind, n) || !tk_copies_new(c, &x->mbind, n) ||
            !tk_copies_new(c, &x->drop, n) || (i = tk_emit(c, TK_LETT, 0, 0, 0)) < 0)
            return false;
        x->move = e->xop == EVAL_X_LET_MOVE;
        for (int j = 0; j < n; j++) {
            int slot = tk_binder(c, e->u.let.binders[j], k->st_tag[j]);
            bool str = k->st_tag[j] == STC_T_STR;
            if (slot == -2) return false;
            if (slot >= 0) tk_copies_add(&x->bind, slot, j, str);
            else if (str) tk_copies_add(&x->drop, 0, j, true);
        }
        c->code[i].u.lett = x;
        return tk_body(c, e->b, height + 1);
    }
    case IR_IF: {
        int r = tk_reg(c, e->a, -1, 0, &g);
        int jf = r < 0 || g != STC_T_BOOL ? -1 : tk_emit(c, TK_JF, 0, r, 0);
        if (jf < 0 || !tk_body(c, e->b, height + 1)) return false;
        c->code[jf].j = c->n;
        return tk_body(c, e->c, height + 1);
    }
    case IR_CASE: {
        int n = e->u.cas.nalts;
        int r = tk_reg(c, e->a, -1, 0, &g);
        int64_t *keys = stc__arena_alloc(c->p->arena, (size_t)n * sizeof *keys);
        int32_t *to = stc__arena_alloc(c->p->arena, (size_t)n * sizeof *to);
        tk_case *x = stc__arena_alloc(c->p->arena, sizeof *x);
        if (r < 0 || g != STC_T_INT || !keys || !to || !x || (i = tk_emit(c, TK_CASE, 0, r, 0)) < 0)
            return false;
        *x = (tk_case){0, -1, keys, to};
        c->code[i].u.cas = x;
        for (int j = 0; j < n; j++) { /* literals up to the first catch-all, which must come */
            const ir_alt *alt = &e->u.cas.alts[j];
            to[j] = c->n;
            if (alt->pat == PAT_LIT && alt->lit.tag == STC_T_INT) {
                keys[j] = alt->lit.as.i;
                if (!tk_body(c, alt->body, height + 1)) return false;
                continue;
            }
            if (alt->pat == PAT_VAR) x->slot = tk_binder(c, alt->nvars ? alt->vars[0] : NULL, STC_T_INT);
            else if (alt->pat != PAT_WILD) return false;
            if (x->slot == -2 || !tk_body(c, alt->body, height + 1)) return false;
            x->n = j;
            return true;
        }
        return false;
    }
    case IR_TUPLE: return tk_pair_code(c, e);
    default: return false;
    }
}

/* The moves' lists (tk_lett.mbind, tk_pair.mall).  When the state moved
 * in, its block becomes the new state and keeps the items it held; an
 * item the pair puts back where it was (item j of the pair the binder of
 * item j) need not be written: a scalar's bits are there, and a str
 * stays owned by the block, its binder never filled (unit, released as
 * such) when nothing else reads it and every pair puts it back (else a
 * pair would write over it unreleased).  A scalar nothing else reads is
 * not copied out either.  Reads are counted over the whole code (a binder
 * is bound once, by one let-tuple; at most one moves on a path, the
 * state's one mention); counting too many only copies more. */
static void tk_refine(tk_comp *c)
{
    int at[TK_MAX_REGS], reads[TK_MAX_REGS] = {0}, same[TK_MAX_REGS] = {0}, npairs = 0;
    for (int r = 0; r < TK_MAX_REGS; r++) at[r] = -1; /* a binder's item */
    for (int i = 0; i < c->n; i++)
        if (c->code[i].op == TK_LETT)
            for (int j = 0; j < c->code[i].u.lett->bind.n; j++)
                at[c->code[i].u.lett->bind.c[j].to] = c->code[i].u.lett->bind.c[j].from;
    for (int i = 0; i < c->n; i++) {
        const tk_op *o = &c->code[i];
        switch (o->op) {
        case TK_LOADK: case TK_JMP: case TK_LETT: break;
        case TK_PAIR: {
            const tk_pair *x = o->u.pair;
            npairs += x->n > 0;
            for (int j = 0; j < x->out.n; j++) reads[x->out.c[j].from]++;
            if (!x->on && x->oreg >= 0) reads[x->oreg]++;
            if (!x->n) reads[x->st]++;
            for (int j = 0; j < x->all.n; j++) {
                int r = x->all.c[j].from;
                reads[r]++;
                same[r] += at[r] == j;
            }
            break;
        }
        case TK_SEL: reads[o->j]++; /* fall through */
        default: reads[o->a]++; reads[o->b]++; break;
        }
    }
    for (int i = 0; i < c->n; i++) {
        if (c->code[i].op == TK_LETT) {
            tk_lett *x = c->code[i].u.lett;
            for (int j = 0; j < x->bind.n; j++) {
                int r = x->bind.c[j].to;
                if (reads[r] != same[r] || (x->bind.c[j].heap && same[r] != npairs))
                    tk_copies_add(&x->mbind, r, x->bind.c[j].from, false);
            }
        } else if (c->code[i].op == TK_PAIR && c->code[i].u.pair->n) {
            tk_pair *x = c->code[i].u.pair;
            for (int j = 0; j < x->all.n; j++) {
                tk_copy y = x->all.c[j];
                if (at[y.from] != j || (y.heap && (reads[y.from] != same[y.from] || same[y.from] != npairs)))
                    tk_copies_add(&x->mall, y.to, y.from, y.heap);
            }
        }
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
    tk_comp c = {.p = p, .fn = fn, .k = k, .stag = stag, .bind = bind};
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
    tk_op *buf = malloc(TK_MAX_OPS * sizeof *buf); /* the code, copied to the arena once whole */
    c.code = buf;
    bool ok = buf && tk_body(&c, fn->body, 0);
    if (ok) tk_refine(&c);
    tk_op *code = ok ? stc__arena_alloc(p->arena, (size_t)c.n * sizeof *code) : NULL;
    if (code) memcpy(code, buf, (size_t)c.n * sizeof *code);
    free(buf);
    if (!(k->code = code)) return NULL;
    k->nops = c.n;
    k->nbind = c.nbind;
    k->bind = bind;
    for (int i = 0; i < k->ninputs; i++) /* the state's slot is released apart */
        if (stag[i] == STC_T_STR) rel[k->nrel++] = i;
    for (int i = 0; i < c.nbind; i++) rel[k->nrel++] = bind[i];
    k->rel = rel;
    return k;
}

void stc__eval_tk_shape(const eval_tk *k, int *ops, int *copies, int *moved_copies)
{
    *ops = k->nops;
    *copies = *moved_copies = 0;
    for (int i = 0; i < k->nops; i++) {
        const tk_op *o = &k->code[i];
        if (o->op == TK_LETT) {
            *copies += o->u.lett->bind.n;
            *moved_copies += o->u.lett->mbind.n;
        } else if (o->op == TK_PAIR) {
            *copies += o->u.pair->all.n;
            *moved_copies += o->u.pair->mall.n;
        }
    }
}

void stc__eval_tk_prepare(ir_program *p)
{
    for (int i = 0; i < p->nthreads; i++) p->threads[i]->xtk = tk_compile(p, p->threads[i]);
}
