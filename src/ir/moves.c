/* moves.c - marks the map argument of put/remove/update as a move when it
 * is a variable's last use (ir_expr.move), so the evaluator hands the map
 * over instead of counting another reference, and a map held only by that
 * variable is updated in place (value/map.h).
 *
 * Conservative: the variable must belong to the function whose body holds
 * the call (not a capture), and no other part of the body that runs after
 * the call, or that is still in use while it runs (another operand of an
 * enclosing call, tuple, list or operator, which the evaluator may borrow
 * from the slot), may mention it.  The parts of a let's value, an if's
 * condition and a case's scrutinee (unless it is the variable itself) are
 * finished before what follows them, except in main and the inits, where
 * the bound expressions of a chain of lets may run at once as tasks
 * (flow/tasks.c), so a use in an earlier let counts too.  Operator chains are not searched
 * (no mark inside them). */
#include "ir/resolve.h"

#include <stdlib.h>

#include "ir/ir.h"

enum { MOVE_ABSENT = 0, MOVE_LAST, MOVE_USED };

static bool moves_is_write(const ir_expr *e)
{
    if (e->kind != IR_CALL || e->u.call.kind != CALL_BUILTIN || e->u.call.nargs < 1) return false;
    int b = e->u.call.callee.index;
    return b == BI_PUT || b == BI_REMOVE || b == BI_UPDATE;
}

/* Where p (a call whose map argument is v) is in e: MOVE_ABSENT, or
 * whether v is used after (or beside) it. */
static int moves_scan(const ir_expr *e, const ir_expr *p, const ir_var *v, bool strict)
{
    if (!e) return MOVE_ABSENT;
    if (e == p) return MOVE_LAST;
    int r;
    switch (e->kind) {
    case IR_LET:
    case IR_LETTUPLE:
        if ((r = moves_scan(e->a, p, v, strict))) return r == MOVE_USED || stc__ir_expr_uses(e->b, v) ? MOVE_USED : MOVE_LAST;
        /* main's chains of lets run their bound expressions as tasks at
         * once (flow/tasks.c): there, an earlier let's use is beside */
        if ((r = moves_scan(e->b, p, v, strict)) && strict && stc__ir_expr_uses(e->a, v)) return MOVE_USED;
        return r;
    case IR_IF:
        if ((r = moves_scan(e->a, p, v, strict)))
            return r == MOVE_USED || stc__ir_expr_uses(e->b, v) || stc__ir_expr_uses(e->c, v) ? MOVE_USED : MOVE_LAST;
        if ((r = moves_scan(e->b, p, v, strict))) return r;
        return moves_scan(e->c, p, v, strict);
    case IR_CASE:
        if ((r = moves_scan(e->a, p, v, strict))) {
            for (int i = 0; r == MOVE_LAST && i < e->u.cas.nalts; i++)
                if (stc__ir_expr_uses(e->u.cas.alts[i].body, v)) r = MOVE_USED;
            return r;
        }
        for (int i = 0; i < e->u.cas.nalts; i++)
            if ((r = moves_scan(e->u.cas.alts[i].body, p, v, strict)))
                return e->a->kind == IR_VAR && e->a->u.var == v ? MOVE_USED : r;
        return MOVE_ABSENT;
    case IR_UNOP:
    case IR_INL:
    case IR_INR: return moves_scan(e->a, p, v, strict);
    case IR_CALL:
    case IR_TUPLE:
    case IR_LIST: {
        ir_expr *const *xs = e->kind == IR_CALL ? e->u.call.args : e->u.agg.items;
        int n = e->kind == IR_CALL ? e->u.call.nargs : e->u.agg.nitems;
        for (int i = 0; i < n; i++) {
            if (!(r = moves_scan(xs[i], p, v, strict))) continue;
            for (int j = 0; r == MOVE_LAST && j < n; j++)
                if (j != i && stc__ir_expr_uses(xs[j], v)) r = MOVE_USED;
            return r;
        }
        return MOVE_ABSENT;
    }
    default: return MOVE_ABSENT; /* leaves, lambdas (other bodies), operator chains */
    }
}

static bool moves_is_capture(const ir_fun *fn, const ir_var *v)
{
    for (int i = 0; fn && i < fn->ncaptures; i++)
        if (fn->capture_slots[i] == v) return true;
    return false;
}

static void moves_body(ir_fun *fn, ir_expr *body);

/* Finds the candidate calls under e (body of fn, whose root is root) and
 * the lambdas, whose bodies are done on their own. */
static void moves_walk(ir_fun *fn, const ir_expr *root, ir_expr *e)
{
    while (e && e->kind == IR_BINOP) { /* a chain: its left spine by a loop */
        moves_walk(fn, root, e->b);
        e = e->a;
    }
    if (!e) return;
    switch (e->kind) {
    case IR_LAMBDA: moves_body(e->u.fn, e->u.fn->body); return;
    case IR_CASE:
        moves_walk(fn, root, e->a);
        for (int i = 0; i < e->u.cas.nalts; i++) moves_walk(fn, root, e->u.cas.alts[i].body);
        return;
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) moves_walk(fn, root, e->u.call.args[i]);
        if (moves_is_write(e)) {
            ir_expr *m = e->u.call.args[0];
            if (m->kind == IR_VAR && m->u.var->owner == fn && !moves_is_capture(fn, m->u.var))
                m->move = moves_scan(root, e, m->u.var, fn == NULL) == MOVE_LAST;
        }
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) moves_walk(fn, root, e->u.agg.items[i]);
        return;
    default:
        moves_walk(fn, root, e->a);
        moves_walk(fn, root, e->b);
        moves_walk(fn, root, e->c);
        return;
    }
}

static void moves_body(ir_fun *fn, ir_expr *body) { moves_walk(fn, body, body); }

/* Whether e may call a thread (directly, through smap, a function value
 * or a function known to in calls[]). */
static bool moves_calls_thread(const ir_program *p, const bool *calls, const ir_expr *e)
{
    while (e && e->kind == IR_BINOP) {
        if (moves_calls_thread(p, calls, e->b)) return true;
        e = e->a;
    }
    if (!e) return false;
    switch (e->kind) {
    case IR_THREADREF: return true;
    case IR_FUNREF: return calls[e->u.index];
    case IR_LAMBDA: return moves_calls_thread(p, calls, e->u.fn->body);
    case IR_CASE:
        if (moves_calls_thread(p, calls, e->a)) return true;
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (moves_calls_thread(p, calls, e->u.cas.alts[i].body)) return true;
        return false;
    case IR_CALL:
        if (e->u.call.kind == CALL_THREAD || e->u.call.kind == CALL_VALUE) return true;
        if (e->u.call.kind == CALL_FUN && calls[e->u.call.callee.index]) return true;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (moves_calls_thread(p, calls, e->u.call.args[i])) return true;
        return false;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (moves_calls_thread(p, calls, e->u.agg.items[i])) return true;
        return false;
    default:
        return moves_calls_thread(p, calls, e->a) || moves_calls_thread(p, calls, e->b) ||
               moves_calls_thread(p, calls, e->c);
    }
}

/* The read-only test of the flow analysis (flow/analyze.c): every path of
 * e ends in a pair whose second item is the state variable s. */
static bool moves_returns_state(const ir_expr *e, const ir_var *s)
{
    switch (e->kind) {
    case IR_LET:
    case IR_LETTUPLE: return moves_returns_state(e->b, s);
    case IR_IF: return moves_returns_state(e->b, s) && moves_returns_state(e->c, s);
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (!moves_returns_state(e->u.cas.alts[i].body, s)) return false;
        return e->u.cas.nalts > 0;
    case IR_TUPLE:
        return e->u.agg.nitems == 2 && e->u.agg.items[1]->kind == IR_VAR && e->u.agg.items[1]->u.var == s;
    default: return false;
    }
}

/* Sets state_moves on the threads whose calls can never overlap: no call
 * inside reaches any thread (so none re-enters its own thread while its
 * state is lent out), and the runtime never replicates it (read-only
 * threads run on several workers at once).  Iterated to a fixpoint over
 * mutually recursive functions. */
static void moves_threads(ir_program *p)
{
    bool *calls = calloc((size_t)p->nfuns + 1, sizeof *calls);
    if (!calls) return; /* no moves: only slower */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < p->nfuns; i++)
            if (!calls[i] && moves_calls_thread(p, calls, p->funs[i]->body)) calls[i] = changed = true;
    }
    for (int i = 0; i < p->nthreads; i++) {
        ir_thread *th = p->threads[i];
        if (th->kind != THREAD_LANG || th->fun < 0 || th->fun >= p->nfuns) continue;
        const ir_fun *fn = p->funs[th->fun];
        /* a keyed thread always writes its map (a new key), never runs replicated */
        th->state_moves = !calls[th->fun] && fn->nparams >= 1 && fn->body &&
                          (th->keyed || !moves_returns_state(fn->body, fn->params[fn->nparams - 1]));
    }
    free(calls);
}

void stc__ir_mark_moves(ir_program *p)
{
    moves_threads(p);
    for (int i = 0; i < p->nfuns; i++) moves_body(p->funs[i], p->funs[i]->body);
    for (int i = 0; i < p->nthreads; i++)
        if (p->threads[i]->init) moves_body(NULL, p->threads[i]->init);
    if (p->main) moves_body(NULL, p->main);
}
