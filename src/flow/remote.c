/* remote.c - replicated stages run by another process (stc_remote in
 * include/stc.h; docs/DESIGN.md 7c).
 *
 * A worker at a stage that may go remote (flow_plan.remote_ok) encodes the
 * batch as a request, hands it to the host's transport and waits for the
 * reply; the serving process (stc__flow_remote_serve, the same program
 * text compiled there) builds the same plan from the same numbers, runs
 * the stage's steps on each item's frame with an evaluation context of
 * its own and answers with the frames the stage left, or with the first
 * failing item's error.  The worker then adopts the reply as if the stage
 * had run here: the frames replace the batch's, an error is recorded for
 * its item, so the earliest failing item still wins.  A stage that calls
 * read-only lang threads (or reads their states) sends their states with
 * each batch, and the server lends them to that batch alone (owned.c
 * job_states, remote_serve.c).
 *
 * This file: which stages may go, and the names both ends agree on; the
 * sending side is remote_send.c, the answering side remote_serve.c, the
 * messages' layout remote_wire.h. */
#include <stdlib.h>
#include <string.h>

#include "flow/remote_wire.h"

/* ---- Which stages may go ------------------------------------------------- */

/* Whether thread t is a lang thread whose state never changes (analyze.c:
 * every path of its function returns the state it got; not keyed, so not
 * split): its calls and state(t) may run elsewhere with a copy of the
 * state, which travels with the batch (remote_send.c). */
static bool remote_readonly(const flow_info *fi, int t)
{
    const ir_program *p = fi->p;
    if (t < 0 || t >= p->nthreads || !fi->readonly[t]) return false;
    const ir_thread *th = p->threads[t];
    return th->kind == THREAD_LANG && !th->keyed && th->fun >= 0 && th->fun < p->nfuns;
}

/* Whether evaluating e may call a thread other than a read-only lang
 * thread, a function value or smap, read a state other than such a
 * thread's, or hand a builtin a function it does not see (through called
 * functions and read-only threads' functions; seen[f]: function f is being
 * or was checked). */
static bool remote_unsafe(const flow_info *fi, const ir_expr *e, bool *seen)
{
    const ir_program *p = fi->p;
    while (e) {
        switch (e->kind) {
        case IR_THREADREF: return true;
        case IR_FUNREF: {
            int f = e->u.index;
            if (f < 0 || f >= p->nfuns) return true;
            if (seen[f]) return false;
            seen[f] = true;
            e = p->funs[f]->body;
            continue;
        }
        case IR_LAMBDA: e = e->u.fn->body; continue;
        case IR_CALL: {
            int idx = e->u.call.callee.index;
            switch (e->u.call.kind) {
            case CALL_BUILTIN:
                /* (Allowed, with its function checked as fold's, ysb's parse
                 * stage, whose fields() maps over a line's parts, went: the same
                 * output, and -np 2 took 0.53-0.55 s against 0.52-0.58 s on
                 * 200,000 events, quiet: rank 1 parsed 2/3 of them, but each
                 * parsed map is ~240 bytes to encode there and decode here,
                 * about what the parse saves rank 0.  Kept out until a stage
                 * cost model weighs that.) */
                if (idx == BI_SMAP) return true;
                if (idx == BI_STATE) { /* state(t): t's state must travel */
                    const ir_expr *a = e->u.call.nargs == 1 ? e->u.call.args[0] : NULL;
                    return !a || a->kind != IR_THREADREF || !remote_readonly(fi, a->u.index);
                }
                if (idx == BI_FOLD || idx == BI_FILTER || idx == BI_UPDATE) {
                    const ir_expr *f = idx == BI_UPDATE ? (e->u.call.nargs == 4 ? e->u.call.args[3] : NULL)
                                                        : (e->u.call.nargs > 0 ? e->u.call.args[0] : NULL);
                    if (!f || (f->kind != IR_LAMBDA && f->kind != IR_FUNREF)) return true;
                }
                break;
            case CALL_FUN:
                if (idx < 0 || idx >= p->nfuns) return true;
                if (!seen[idx]) {
                    seen[idx] = true;
                    if (remote_unsafe(fi, p->funs[idx]->body, seen)) return true;
                }
                break;
            case CALL_THREAD: { /* a read-only lang thread: its function, with its state */
                if (!remote_readonly(fi, idx)) return true;
                int f = p->threads[idx]->fun;
                if (!seen[f]) {
                    seen[f] = true;
                    if (remote_unsafe(fi, p->funs[f]->body, seen)) return true;
                }
                break;
            }
            default: return true; /* a function value */
            }
            for (int i = 0; i < e->u.call.nargs; i++)
                if (remote_unsafe(fi, e->u.call.args[i], seen)) return true;
            return false;
        }
        case IR_CASE:
            for (int i = 0; i < e->u.cas.nalts; i++)
                if (remote_unsafe(fi, e->u.cas.alts[i].body, seen)) return true;
            e = e->a;
            continue;
        case IR_TUPLE:
        case IR_LIST:
            for (int i = 0; i < e->u.agg.nitems; i++)
                if (remote_unsafe(fi, e->u.agg.items[i], seen)) return true;
            return false;
        default:
            if (remote_unsafe(fi, e->b, seen) || remote_unsafe(fi, e->c, seen)) return true;
            e = e->a;
            continue;
        }
    }
    return false;
}

/* Builtins that take a constant time on their arguments (numbers, an
 * item of a list): a call of one costs what an operator does. */
static bool cheap_builtin(int b)
{
    switch (b) {
    case BI_LEN: case BI_NTH: case BI_FLOAT: case BI_INT: case BI_ROUND: case BI_ABS: case BI_MIN:
    case BI_MAX: case BI_SQRT: case BI_FLOOR: case BI_CEIL: case BI_POW: case BI_EXP: case BI_LOG:
        return true;
    default: return false;
    }
}

/* Whether e calls a function or a builtin that may take long anywhere
 * (not looking inside lambdas: making a closure is cheap). */
static bool has_call(const ir_expr *e)
{
    if (!e) return false;
    switch (e->kind) {
    case IR_CALL:
        if (e->u.call.kind != CALL_BUILTIN || !cheap_builtin(e->u.call.callee.index)) return true;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (has_call(e->u.call.args[i])) return true;
        return false;
    case IR_LAMBDA: return false;
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (has_call(e->u.cas.alts[i].body)) return true;
        return has_call(e->a);
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (has_call(e->u.agg.items[i])) return true;
        return false;
    default: return has_call(e->a) || has_call(e->b) || has_call(e->c);
    }
}

uint64_t stc__flow_remote_stages(flow_info *fi, const flow_plan *pl)
{
    const ir_program *p = fi->p;
    bool *seen = malloc((size_t)(p->nfuns > 0 ? p->nfuns : 1));
    if (!seen) return 0;
    uint64_t ok = 0;
    for (int t = 0; t < pl->nstages && t < 64; t++) {
        const flow_stage *st = &pl->stages[t];
        bool safe = !st->serial && st->count > 0, calls = false;
        for (int k = st->first; safe && k < st->first + st->count; k++) {
            const flow_step *s = &pl->steps[k];
            memset(seen, 0, (size_t)(p->nfuns > 0 ? p->nfuns : 1));
            /* The selects and a let-tuple's binding evaluate nothing but
             * patterns on a slot; an expression step may call anything. */
            if (s->kind == FS_EVAL) safe = !remote_unsafe(fi, s->e, seen), calls = calls || has_call(s->e);
            else safe = s->kind == FS_SELECT_IF || s->kind == FS_SELECT_CASE || s->kind == FS_DESTRUCT;
        }
        /* A stage that calls nothing (patterns, arithmetic on a slot, a
         * builtin of constant time) costs less here than its frames' trip
         * (logstats's `case` stage went remote too, and doubled the bytes;
         * conditional's `if`, `round(x) / 10 % 2 == 0`, held its first
         * f item ~1 ms at -np 2 while its batches were away). */
        if (safe && calls) ok |= (uint64_t)1 << t;
    }
    free(seen);
    return ok;
}

/* ---- Names both ends agree on ----------------------------------------------- */

static void names_add(const ir_expr *smap, void *ud)
{
    flow_remote_names *n = ud;
    if (n->oom) return;
    if (n->nsmaps == n->cap) {
        int ncap = n->cap ? 2 * n->cap : 16;
        const ir_expr **m = realloc(n->smaps, (size_t)ncap * sizeof *m);
        if (!m) {
            n->oom = true;
            return;
        }
        n->smaps = m;
        n->cap = ncap;
    }
    n->smaps[n->nsmaps++] = smap;
}

flow_remote_names *stc__flow_remote_names_new(const ir_program *p)
{
    flow_remote_names *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    if (stc__ir_fun_table_build(p, &n->ft) != 0) {
        free(n);
        return NULL;
    }
    n->wf = stc__ir_fun_table_wire(&n->ft);
    stc__flow_each_smap(p, names_add, n);
    if (n->oom) {
        stc__flow_remote_names_free(n);
        return NULL;
    }
    return n;
}

void stc__flow_remote_names_free(flow_remote_names *n)
{
    if (!n) return;
    stc__ir_fun_table_free(&n->ft);
    free(n->smaps);
    free(n);
}

int stc__flow_remote_smap_number(const flow_remote_names *n, const ir_expr *e)
{
    for (int i = 0; i < n->nsmaps; i++)
        if (n->smaps[i] == e) return i;
    return -1;
}

int stc__flow_remote_thread_number(const ir_program *p, const char *name)
{
    for (int i = 0; name && i < p->nthreads; i++)
        if (p->threads[i]->name == name || strcmp(p->threads[i]->name, name) == 0) return i;
    return -1;
}
