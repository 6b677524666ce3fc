/* compile.c - an smap body as a plan: steps in evaluation order, cut into
 * pipeline stages.
 *
 * The body is flattened only where it calls threads: a sub-expression that
 * writes no thread is one FS_EVAL step, whatever its size.  Elsewhere the
 * children of a node are evaluated into temporary slots, left to right, and
 * the node itself is re-evaluated as a synthetic copy whose children read
 * those slots; so every step is ordinary evaluator code and errors keep
 * their locations.  Steps keep the reference evaluator's order, so the
 * first failing step of an item is the reference's error for that item.
 *
 * Stages: a thread's steps, from its first use to its last, and everything
 * between, form one serial stage (overlapping spans merge); the steps
 * between serial spans form replicated stages. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow.h"

typedef struct flow_cc {
    flow_info *fi;
    flow_plan *plan;
    int cap;          /* steps allocated */
    int base;         /* where the frame of the body being compiled starts (flow_step.base) */
    int inlined;      /* calls planned in place so far (FLOW_MAX_INLINED at most) */
    int body_depth;   /* the evaluator's depth of the body being compiled: a tail
                         call's callee runs at it (eval_tail_loop) */
    bool oom;
} flow_cc;

/* Calls planned in place per plan at most: a helper calling two helpers
 * that each call two more ... would otherwise grow the plan
 * exponentially; beyond it, calls are steps. */
#define FLOW_MAX_INLINED 4096

static flow_step *flow_emit(flow_cc *c, flow_step_kind kind, const ir_expr *e, int dst, int guard, int depth,
                            flow_set writes)
{
    flow_plan *pl = c->plan;
    if (c->oom) return NULL;
    /* A C thread called on one variable: the fast path. */
    int *arg = NULL;
    if (kind == FS_EVAL && e->kind == IR_CALL && e->u.call.kind == CALL_THREAD && e->u.call.nargs == 1 &&
        e->u.call.args[0]->kind == IR_VAR && c->fi->p->threads[e->u.call.callee.index]->kind == THREAD_C &&
        (arg = stc__arena_alloc(c->fi->mem, sizeof *arg))) {
        kind = FS_CALL_C;
        *arg = e->u.call.args[0]->u.var->slot + c->base;
    }
    if (pl->nsteps == c->cap) {
        int ncap = c->cap ? 2 * c->cap : 16;
        flow_step *n = stc__arena_alloc(c->fi->mem, (size_t)ncap * sizeof *n);
        if (!n) {
            c->oom = true;
            return NULL;
        }
        if (pl->nsteps) memcpy(n, pl->steps, (size_t)pl->nsteps * sizeof *n);
        pl->steps = n;
        c->cap = ncap;
    }
    flow_step *s = &pl->steps[pl->nsteps++];
    *s = (flow_step){.kind = kind, .e = e, .src = -1, .dst = dst, .guard = guard, .flag0 = -1,
                     .thread = -1, .depth = depth, .base = c->base, .writes = writes};
    if (kind == FS_CALL_C) {
        s->thread = e->u.call.callee.index;
        s->args = arg;
        s->nargs = 1;
    }
    return s;
}

static int flow_temp(flow_cc *c) { return c->plan->nslots++; }

/* A synthetic variable reference reading item slot `slot`, from a step of
 * the body being compiled (whose frame starts at c->base). */
static ir_expr *flow_slot_ref(flow_cc *c, const ir_expr *like, int slot)
{
    ir_expr *r = stc__arena_alloc(c->fi->mem, sizeof *r);
    ir_var *v = stc__arena_alloc(c->fi->mem, sizeof *v);
    if (!r || !v) {
        c->oom = true;
        return NULL;
    }
    v->name = "<tmp>";
    v->loc = like->loc;
    v->slot = slot - c->base;
    v->type = like->type;
    r->kind = IR_VAR;
    r->loc = like->loc;
    r->type = like->type;
    r->u.var = v;
    return r;
}

static int flow_compile(flow_cc *c, const ir_expr *e, int dst, int guard, int depth);

/* Evaluates the n children into fresh temporaries, in order; stores their
 * slots in slots[] and synthetic references to them in refs[].  With
 * in_place, leaves (literals, variables) are referenced as they are
 * (slot -1): they cannot fail or touch a thread, so no step is needed. */
static bool flow_is_leaf(const ir_expr *e)
{
    return e->kind == IR_LIT || e->kind == IR_VAR || e->kind == IR_FUNREF;
}

/* A variable of the frame being compiled (its slot past c->base). */
static bool flow_is_var(const ir_expr *e)
{
    return e->kind == IR_VAR && e->u.var && e->u.var->slot >= 0;
}

static void flow_children(flow_cc *c, ir_expr *const *kids, int n, int guard, int depth, int *slots,
                          ir_expr **refs, bool in_place)
{
    for (int i = 0; i < n && !c->oom; i++) {
        if (in_place && flow_is_leaf(kids[i])) { /* cannot fail or touch anything: used in place */
            slots[i] = -1;
            refs[i] = kids[i];
            continue;
        }
        slots[i] = flow_temp(c);
        flow_compile(c, kids[i], slots[i], guard, depth);
        refs[i] = flow_slot_ref(c, kids[i], slots[i]);
    }
}

/* Cuts node e: its n children kids go to steps of their own (see
 * flow_children); *copy is a copy of e for the caller to point at refs. */
static int flow_cut(flow_cc *c, const ir_expr *e, ir_expr *const *kids, int n, int guard, int depth, bool in_place,
                    int **slots, ir_expr ***refs, ir_expr **copy)
{
    arena *mem = c->fi->mem;
    *slots = stc__arena_alloc(mem, (size_t)(n + 1) * sizeof **slots);
    *refs = stc__arena_alloc(mem, (size_t)(n + 1) * sizeof **refs);
    *copy = stc__arena_alloc(mem, sizeof **copy);
    if (!*slots || !*refs || !*copy) {
        c->oom = true;
        return -1;
    }
    **copy = *e;
    flow_children(c, kids, n, guard, depth + 1, *slots, *refs, in_place);
    return c->oom ? -1 : 0;
}

/* A g x h thread call with its inputs in slots: output step, state step. */
static void flow_split_call(flow_cc *c, const ir_expr *call, const int *args, int nargs, int dst, int guard,
                            int depth)
{
    flow_info *fi = c->fi;
    int t = call->u.call.callee.index;
    flow_step *o = flow_emit(c, FS_SPLIT_OUT, call, dst, guard, depth, flow_set_none());
    if (o) {
        o->thread = t;
        o->args = args;
        o->nargs = nargs;
    }
    flow_step *s = flow_emit(c, FS_SPLIT_STATE, call, -1, guard, depth, fi->thread_sets[t]);
    if (s) s->thread = t;
}

/* A chain a + b + c + ... (ir_chain in ir.h) by loops, as the evaluator
 * folds it (eval_chain): every operand one level below the chain, the
 * nodes cut as flow_compile cuts a single binop (each node's step reads
 * its operands from slots). From the top, the nodes that write a thread
 * and are not && or || are cut; the rest of the chain below them is one
 * step at the chain's own depth. Sets are found bottom up, each operand
 * once: a long chain costs linear time, not quadratic. */
static int flow_compile_chain(flow_cc *c, const ir_expr *e, int dst, int guard, int depth)
{
    flow_info *fi = c->fi;
    arena *mem = fi->mem;
    ir_chain ch;
    bool *cut = NULL;
    int **slots = NULL;
    ir_expr ***refs = NULL, **copies = NULL;
    if (!stc__ir_chain_init(&ch, e)) goto oom;
    size_t n = ch.n, m = 0; /* nodes[0..m] are cut */
    cut = malloc(n);
    if (!cut) goto oom;
    bool any = false, all = false;
    flow_set s = stc__flow_expr_set(fi, ch.nodes[n - 1]->a);
    any = !stc__flow_set_empty(fi, s);
    all = s.all;
    for (size_t i = n; i-- > 0;) {
        s = stc__flow_expr_set(fi, ch.nodes[i]->b);
        any |= !stc__flow_set_empty(fi, s);
        all |= s.all;
        ir_binop op = ch.nodes[i]->u.binop;
        cut[i] = op != OP_AND && op != OP_OR && any && !all;
    }
    while (m + 1 < n && cut[m + 1]) m++;
    slots = malloc((m + 1) * sizeof *slots);
    refs = malloc((m + 1) * sizeof *refs);
    copies = malloc((m + 1) * sizeof *copies);
    if (!slots || !refs || !copies) goto oom;
    /* Top down: each node's copy, and the slot of its left operand (the
     * node below), in the order flow_cut would allocate them. */
    for (size_t i = 0; i <= m; i++) {
        slots[i] = stc__arena_alloc(mem, 2 * sizeof **slots);
        refs[i] = stc__arena_alloc(mem, 2 * sizeof **refs);
        copies[i] = stc__arena_alloc(mem, sizeof **copies);
        if (!slots[i] || !refs[i] || !copies[i]) goto oom;
        *copies[i] = *ch.nodes[i];
        if (i < m) slots[i][0] = flow_temp(c);
    }
    /* The bottom cut node's left operand: the uncut rest of the chain (one
     * step at the chain's depth), or the chain's first operand. */
    ir_expr *first = ch.nodes[m]->a;
    if (m + 1 < n || !flow_is_leaf(first)) {
        slots[m][0] = flow_temp(c);
        flow_compile(c, first, slots[m][0], guard, m + 1 < n ? depth : depth + 1);
        refs[m][0] = flow_slot_ref(c, first, slots[m][0]);
    } else {
        slots[m][0] = -1;
        refs[m][0] = first;
    }
    /* Bottom up: each node's right operand, then the node itself. */
    for (size_t i = m + 1; i-- > 0 && !c->oom;) {
        if (i < m) refs[i][0] = flow_slot_ref(c, ch.nodes[i + 1], slots[i][0]);
        flow_children(c, &ch.nodes[i]->b, 1, guard, depth + 1, &slots[i][1], &refs[i][1], true);
        copies[i]->a = refs[i][0];
        copies[i]->b = refs[i][1];
        flow_emit(c, FS_EVAL, copies[i], i == 0 ? dst : slots[i - 1][0], guard, depth, flow_set_none());
    }
    if (c->oom) goto oom;
    free(cut);
    free(slots);
    free(refs);
    free(copies);
    stc__ir_chain_free(&ch);
    return 0;
oom:
    c->oom = true;
    free(cut);
    free(slots);
    free(refs);
    free(copies);
    stc__ir_chain_free(&ch);
    return -1;
}

/* Whether call e (CALL_FUN) may be planned as its callee's body written in
 * place: the callee is not recursive (so planning through calls ends), its
 * arguments go straight into its parameters (as eval_call passes them) and
 * none of them may carry a closure (its writes are counted where it was
 * written: see stc__flow_type_may_hold_fun). */
static bool flow_can_inline(const flow_cc *c, const ir_expr *e)
{
    const ir_program *p = c->fi->p;
    int idx = e->u.call.callee.index;
    if (idx < 0 || idx >= p->nfuns || c->fi->fun_recursive[idx] || c->inlined >= FLOW_MAX_INLINED) return false;
    const ir_fun *fn = p->funs[idx];
    if (!fn->body || fn->ncaptures > 0 || fn->nparams != e->u.call.nargs || fn->nslots < fn->nparams) return false;
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i]->slot != i || stc__flow_type_may_hold_fun(e->u.call.args[i]->type)) return false;
    return true;
}

/* Call e planned in place: its callee gets a block of the item's frame;
 * the arguments are evaluated into the block's parameter slots, in order,
 * then the callee's body is compiled with its steps evaluating in the
 * block, one evaluator level inside the call (eval_invoke), as the
 * evaluator would run it.  Locations stay the callee's own. */
static int flow_inline(flow_cc *c, const ir_expr *e, int dst, int guard, int depth)
{
    const ir_fun *fn = c->fi->p->funs[e->u.call.callee.index];
    int block = c->plan->nslots;
    c->plan->nslots += fn->nslots;
    c->inlined++;
    for (int i = 0; i < fn->nparams && !c->oom; i++) flow_compile(c, e->u.call.args[i], block + i, guard, depth + 1);
    /* The evaluator checks the depth limit at the call, at depth + 1, and
     * runs the body at depth + 2; a tail call's body runs at the depth of
     * the body the call ends, without a check (eval_tail_loop). */
    bool tail = e->u.call.tail;
    if (!tail && depth + 1 > c->plan->call_depth) c->plan->call_depth = depth + 1;
    int saved = c->base, saved_body = c->body_depth;
    c->base = block;
    if (!tail) c->body_depth = depth + 2;
    int rc = flow_compile(c, fn->body, dst, guard, c->body_depth);
    c->base = saved;
    c->body_depth = saved_body;
    return rc;
}

static int flow_compile(flow_cc *c, const ir_expr *e, int dst, int guard, int depth)
{
    flow_info *fi = c->fi;
    if (c->oom) return -1;
    flow_set w = stc__flow_expr_set(fi, e);
    if (stc__flow_set_empty(fi, w) || w.all) {
        /* Nothing to cut (pure), or unknown calls: one step. */
        flow_emit(c, FS_EVAL, e, dst, guard, depth, w);
        return 0;
    }
    switch (e->kind) {
    case IR_LET: {
        ir_var *v = e->u.let.nbinders > 0 ? e->u.let.binders[0] : NULL;
        flow_compile(c, e->a, v && v->slot >= 0 ? v->slot + c->base : flow_temp(c), guard, depth + 1);
        return flow_compile(c, e->b, dst, guard, depth + 1);
    }
    case IR_LETTUPLE: {
        /* A variable's tuple is bound from its own slot (borrowed: the
         * variable lives on); anything else is evaluated into a temporary
         * the binding moves the tuple out of. */
        bool var = flow_is_var(e->a);
        int t = var ? e->a->u.var->slot + c->base : flow_temp(c);
        if (!var) flow_compile(c, e->a, t, guard, depth + 1);
        flow_step *s = flow_emit(c, FS_DESTRUCT, e, -1, guard, depth, flow_set_none());
        if (s) s->borrow = var;
        int n = e->u.let.nbinders, *at = n > 0 ? stc__arena_alloc(fi->mem, (size_t)n * sizeof *at) : NULL;
        if (s) s->src = t;
        if (s && at) { /* the binders' item slots, for steps.c flow_destruct */
            for (int i = 0; i < n; i++) {
                const ir_var *v = e->u.let.binders[i];
                at[i] = v && v->slot >= 0 ? v->slot + c->base : -1;
            }
            s->args = at;
            s->nargs = n;
        }
        return flow_compile(c, e->b, dst, guard, depth + 1);
    }
    case IR_IF:
    case IR_CASE: {
        /* A variable is chosen on in its own slot (a select only reads
         * it): no step copying it into a temporary. */
        bool var = flow_is_var(e->a);
        int t = var ? e->a->u.var->slot + c->base : flow_temp(c);
        if (!var) flow_compile(c, e->a, t, guard, depth + 1);
        int nb = e->kind == IR_IF ? 2 : e->u.cas.nalts;
        int flag0 = c->plan->nflags;
        c->plan->nflags += nb;
        flow_step *s = flow_emit(c, e->kind == IR_IF ? FS_SELECT_IF : FS_SELECT_CASE, e, -1, guard, depth,
                                 flow_set_none());
        if (s) {
            s->src = t;
            s->flag0 = flag0;
        }
        for (int i = 0; i < nb && !c->oom; i++) {
            const ir_expr *body = e->kind == IR_CASE ? e->u.cas.alts[i].body : i == 0 ? e->b : e->c;
            flow_compile(c, body, dst, flag0 + i, depth + 1);
        }
        return 0;
    }
    case IR_CALL: {
        int n = e->u.call.nargs;
        bool thread = e->u.call.kind == CALL_THREAD;
        bool split = thread && fi->split[e->u.call.callee.index];
        if (e->u.call.kind == CALL_FUN && flow_can_inline(c, e)) return flow_inline(c, e, dst, guard, depth);
        if (e->u.call.kind == CALL_VALUE || e->u.call.kind == CALL_NAME ||
            (e->u.call.kind == CALL_BUILTIN &&
             (e->u.call.callee.index == BI_SMAP || e->u.call.callee.index == BI_STATE)))
            break; /* smap inside the body runs whole, in one step; state(t) is one step */
        /* Arguments that compute something get steps of their own, so that
         * pure work does not run inside the serial stage of the call. */
        bool leaves = true;
        for (int i = 0; i < n; i++) leaves &= flow_is_leaf(e->u.call.args[i]);
        if (leaves && !split) break; /* the call itself is the step */
        int *slots;
        ir_expr **refs, *copy;
        if (flow_cut(c, e, e->u.call.args, n, guard, depth, !split, &slots, &refs, &copy) != 0) return -1;
        if (split) {
            flow_split_call(c, e, slots, n, dst, guard, depth);
            return 0;
        }
        copy->u.call.args = refs;
        /* What the call itself writes, its arguments being done. */
        flow_emit(c, FS_EVAL, copy, dst, guard, depth, stc__flow_expr_set(fi, copy));
        return 0;
    }
    case IR_TUPLE:
    case IR_LIST:
    case IR_INL:
    case IR_INR:
    case IR_UNOP:
    case IR_BINOP: {
        if (e->kind == IR_BINOP && (e->u.binop == OP_AND || e->u.binop == OP_OR)) break; /* short-circuit */
        if (e->kind == IR_BINOP && e->a->kind == IR_BINOP) return flow_compile_chain(c, e, dst, guard, depth);
        bool agg = e->kind == IR_TUPLE || e->kind == IR_LIST;
        int n = agg ? e->u.agg.nitems : e->kind == IR_BINOP ? 2 : 1;
        ir_expr *kids[2] = {e->a, e->b};
        int *slots;
        ir_expr **refs, *copy;
        if (flow_cut(c, e, agg ? e->u.agg.items : kids, n, guard, depth, true, &slots, &refs, &copy) != 0) return -1;
        if (agg) copy->u.agg.items = refs;
        else {
            copy->a = refs[0];
            copy->b = n > 1 ? refs[1] : NULL;
        }
        flow_emit(c, FS_EVAL, copy, dst, guard, depth, flow_set_none());
        return 0;
    }
    default: break;
    }
    flow_emit(c, FS_EVAL, e, dst, guard, depth, w);
    return 0;
}

/* Whether two sets share a thread. */
static bool flow_overlap(const flow_info *fi, flow_set a, flow_set b)
{
    if (a.all || b.all) return !stc__flow_set_empty(fi, a) && !stc__flow_set_empty(fi, b);
    for (int i = 0; a.bits && b.bits && i < fi->nwords; i++)
        if (a.bits[i] & b.bits[i]) return true;
    return false;
}

/* Whether step s only copies a variable or a literal into a slot (an
 * argument passed to a call planned in place, a let's body that names its
 * binder): too cheap to be a stage of its own. */
static bool flow_step_trivial(const flow_step *s)
{
    return s->kind == FS_EVAL && flow_is_leaf(s->e);
}

/* Cuts the steps into stages (see the file comment).  A run of steps that
 * write nothing and only copy leaves (flow_step_trivial) is not a stage of
 * its own: it joins the serial stage after it, or the stage before it at
 * the end, so that planning a call in place gives the stages of its body
 * written in place. */
static int flow_stages(flow_cc *c)
{
    flow_plan *pl = c->plan;
    const flow_info *fi = c->fi;
    pl->stages = stc__arena_alloc(fi->mem, (size_t)(pl->nsteps + 1) * sizeof *pl->stages);
    if (!pl->stages) return -1;
    int i = 0;
    while (i < pl->nsteps) {
        int first = i, j = i;
        bool trivial = true;
        for (; j < pl->nsteps && stc__flow_set_empty(fi, pl->steps[j].writes); j++) trivial &= flow_step_trivial(&pl->steps[j]);
        if (j > i && (!trivial || (j == pl->nsteps && pl->nstages == 0))) {
            pl->stages[pl->nstages++] = (flow_stage){.first = i, .count = j - i, .serial = false};
            i = j;
            continue;
        }
        if (j == pl->nsteps) { /* trivial steps at the end: the stage before takes them */
            pl->stages[pl->nstages - 1].count += j - i;
            break;
        }
        /* A serial span from step j: extend to the last step sharing a
         * thread with any step already in it. */
        int end = j; /* inclusive */
        for (int k = j; k <= end; k++) {
            if (stc__flow_set_empty(fi, pl->steps[k].writes)) continue;
            for (int m = pl->nsteps - 1; m > end; m--)
                if (flow_overlap(fi, pl->steps[k].writes, pl->steps[m].writes)) {
                    end = m;
                    break;
                }
        }
        i = end + 1;
        pl->stages[pl->nstages++] = (flow_stage){.first = first, .count = i - first, .serial = true};
        pl->nserial++;
    }
    return 0;
}

/* ---- Which slots may hold a counted value ----------------------------------- */

/* kind[slot]: 0 nothing seen writes it, 1 only scalars (int, float, bool,
 * unit), 2 anything else or an unknown type. */
static void flow_slot_note(uint8_t *kind, int nslots, int slot, ir_type *t)
{
    if (slot < 0 || slot >= nslots) return;
    const ir_type *r = stc__ir_type_resolve(t);
    bool scalar = r && (r->kind == TY_INT || r->kind == TY_FLOAT || r->kind == TY_BOOL || r->kind == TY_UNIT);
    if (!scalar) kind[slot] = 2;
    else if (kind[slot] == 0) kind[slot] = 1;
}

static void flow_vars_note(uint8_t *kind, int nslots, int base, ir_var *const *vars, int n)
{
    for (int i = 0; i < n; i++)
        if (vars[i] && vars[i]->slot >= 0) flow_slot_note(kind, nslots, vars[i]->slot + base, vars[i]->type);
}

/* The binders of e's subtree (lambdas' bodies excepted: their frames are
 * their own), bound at slot + base; without recursion, since operator
 * chains nest deeply.  -1 when out of memory. */
static int flow_binders_note(uint8_t *kind, int nslots, int base, const ir_expr *e)
{
    size_t n = 0, cap = 64;
    const ir_expr **stack = malloc(cap * sizeof *stack);
    if (!stack) return -1;
    stack[n++] = e;
    while (n > 0) {
        e = stack[--n];
        if (!e) continue;
        if (n + 3 > cap) { /* room for the three children pushed at once below */
            const ir_expr **more = realloc(stack, 2 * cap * sizeof *stack);
            if (!more) {
                free(stack);
                return -1;
            }
            stack = more, cap *= 2;
        }
        switch (e->kind) {
        case IR_LAMBDA: continue;
        case IR_LET:
        case IR_LETTUPLE: flow_vars_note(kind, nslots, base, e->u.let.binders, e->u.let.nbinders); break;
        default: break;
        }
        stack[n++] = e->a, stack[n++] = e->b, stack[n++] = e->c;
        int m = e->kind == IR_CASE ? e->u.cas.nalts
                : e->kind == IR_CALL ? e->u.call.nargs
                : e->kind == IR_TUPLE || e->kind == IR_LIST ? e->u.agg.nitems
                                                            : 0;
        for (int i = 0; i < m; i++) {
            if (n + 1 > cap) {
                const ir_expr **more = realloc(stack, 2 * cap * sizeof *stack);
                if (!more) {
                    free(stack);
                    return -1;
                }
                stack = more, cap *= 2;
            }
            if (e->kind == IR_CASE) {
                flow_vars_note(kind, nslots, base, e->u.cas.alts[i].vars, e->u.cas.alts[i].nvars);
                stack[n++] = e->u.cas.alts[i].body;
            } else {
                stack[n++] = e->kind == IR_CALL ? e->u.call.args[i] : e->u.agg.items[i];
            }
        }
    }
    free(stack);
    return 0;
}

/* Fills pl->heap_slots: every slot past the captures but those only ever
 * written with scalars.  Every writer of an item slot is a step's dst, a
 * parameter (flow_load), a binder of a step's expression or of a
 * select's or let-tuple's step; plans with steps of other kinds (keyed
 * shards) keep every slot.  -1 when out of memory. */
static int flow_heap_slots(flow_info *fi, flow_plan *pl)
{
    int ncaps = pl->fn ? pl->fn->ncaptures : 0, ns = pl->nslots;
    uint8_t *kind = calloc((size_t)ns + 1, 1);
    pl->heap_slots = stc__arena_alloc(fi->mem, ((size_t)ns + 1) * sizeof *pl->heap_slots);
    if (!kind || !pl->heap_slots) {
        free(kind);
        return -1;
    }
    bool typed = pl->nshard_maps == 0;
    if (pl->fn)
        for (int i = 0; i < pl->fn->nparams; i++)
            flow_slot_note(kind, ns, pl->fn->params[i]->slot, pl->fn->params[i]->type);
    else
        typed = false;
    for (int k = 0; typed && k < pl->nsteps; k++) {
        const flow_step *s = &pl->steps[k];
        switch (s->kind) {
        case FS_EVAL:
            if (flow_binders_note(kind, ns, s->base, s->e) != 0) typed = false;
            /* fall through */
        case FS_SPLIT_OUT:
        case FS_CALL_C: flow_slot_note(kind, ns, s->dst, s->e->type); break;
        case FS_SELECT_CASE:
            for (int i = 0; i < s->e->u.cas.nalts; i++)
                flow_vars_note(kind, ns, s->base, s->e->u.cas.alts[i].vars, s->e->u.cas.alts[i].nvars);
            break;
        case FS_DESTRUCT: flow_vars_note(kind, ns, s->base, s->e->u.let.binders, s->e->u.let.nbinders); break;
        case FS_SELECT_IF:
        case FS_SPLIT_STATE: break;
        default: typed = false; break;
        }
    }
    pl->nheap = 0;
    for (int j = ncaps; j < ns; j++)
        if (!typed || kind[j] != 1) pl->heap_slots[pl->nheap++] = j;
    free(kind);
    return 0;
}

flow_plan *stc__flow_plan_build(flow_info *fi, const ir_expr *smap, const ir_fun *fn, int thread)
{
    flow_plan *pl = stc__arena_alloc(fi->mem, sizeof *pl);
    if (!pl) return NULL;
    pl->smap = smap;
    pl->fn = fn;
    pl->thread = fn ? -1 : thread;
    pl->call_depth = -1;
    flow_cc c = {.fi = fi, .plan = pl};
    if (fn) {
        pl->nslots = fn->nslots > 0 ? fn->nslots : 0;
        pl->result = flow_temp(&c);
        c.body_depth = 1;
        flow_compile(&c, fn->body, pl->result, -1, 1); /* a body runs one level inside its call */
    } else {
        /* thread(x) with the item in slot 0: a synthetic call node. */
        int in = flow_temp(&c);
        pl->result = flow_temp(&c);
        ir_expr *call = stc__arena_alloc(fi->mem, sizeof *call);
        ir_expr **args = stc__arena_alloc(fi->mem, sizeof *args);
        if (!call || !args) return NULL;
        *call = *smap;
        call->u.call.kind = CALL_THREAD;
        call->u.call.callee.index = thread;
        call->u.call.nargs = 1;
        call->u.call.args = args;
        call->type = fi->p->threads[thread]->out_type;
        args[0] = flow_slot_ref(&c, smap->u.call.args[1], in);
        if (fi->split[thread]) {
            int *slots = stc__arena_alloc(fi->mem, sizeof *slots);
            if (!slots) return NULL;
            slots[0] = in;
            flow_split_call(&c, call, slots, 1, pl->result, -1, -1);
        } else {
            flow_emit(&c, FS_EVAL, call, pl->result, -1, -1, fi->thread_sets[thread]);
        }
    }
    if (c.oom || flow_stages(&c) != 0 || stc__flow_shard_plan(fi, pl) != 0 || flow_heap_slots(fi, pl) != 0)
        return NULL;
    pl->remote_ok = fn ? stc__flow_remote_stages(fi, pl) : 0;
    pl->remote_owned = fn ? stc__flow_remote_owned_stages(fi, pl) : 0;
    return pl;
}
