/* resolve.c - name resolution, arity checks, thread binding, frame slots.
 *
 * One walk over every function body, every init and main, with a scope
 * stack of local binders and a stack of function contexts (one per
 * top-level fun or lambda being walked; main and each init form a context
 * with fn == NULL).  A reference to a binder owned by an enclosing function
 * makes every lambda in between capture it: each such lambda gets its own
 * ir_var copy (fn->capture_slots[i], slot i) and references inside it are
 * rewritten to that copy, while fn->captures[i] names the variable of the
 * enclosing frame the closure is built from.  Parameters and binders are
 * numbered from 0 while walking and shifted by ncaptures at the end, since
 * captures are only known once the whole body has been seen.
 */
#include "ir/resolve.h"

#include <stdlib.h>
#include <string.h>

#include "ir/cthread.h"

/* Deeper expressions are rejected instead of risking the C stack. */
#define RESOLVE_MAX_DEPTH (2 * IR_MAX_DEPTH)

typedef struct resolve_ent { /* a local binder in scope */
    const char *name;
    ir_var *var;
} resolve_ent;

typedef struct resolve_fctx { /* a function (or main/init) being walked */
    struct resolve_fctx *parent;
    ir_fun *fn;        /* NULL: main or an init */
    int nlocal;        /* parameters and binders so far */
    ir_var **locals;   /* all of them (malloc'd), shifted by ncaps at the end */
    int nlocals_cap;
    ir_var **caps, **copies; /* malloc'd; outer variables and this function's copies */
    int ncaps, caps_cap;
} resolve_fctx;

typedef struct resolve_glob { /* hash table entry of a top-level name */
    const char *name;
    int fun, thread;   /* indices or -1 */
} resolve_glob;

typedef struct resolve_st {
    ir_program *p;
    stc_diags *d;
    resolve_ent *scope;
    int nscope, scope_cap;
    resolve_fctx *fx;
    resolve_glob *globs;
    size_t nglobs_cap;  /* power of two */
    int cur_fun;        /* top-level fun being walked, or -1 */
    const ir_thread *init_of; /* thread whose init is being walked, or NULL */
    int *fun_thread;    /* per fun: a thread it calls (directly or not), or -1 */
    int *edges;         /* fun -> fun call edges as pairs (from, to) */
    int nedges, edges_cap;
    bool oom;
    bool failed;
} resolve_st;

static void resolve_err(resolve_st *r, ir_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void resolve_err(resolve_st *r, ir_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stc__diags_vadd(r->d, loc.line, loc.col, fmt, ap);
    va_end(ap);
    r->failed = true;
}

/* Doubles a malloc'd array when full; false (and r->oom) on failure. */
static bool resolve_grow(resolve_st *r, void **arr, int n, int *cap, size_t elem)
{
    if (n < *cap) return true;
    int ncap = *cap ? *cap * 2 : 16;
    void *g = realloc(*arr, (size_t)ncap * elem);
    if (!g) { r->oom = true; return false; }
    *arr = g;
    *cap = ncap;
    return true;
}

/* ---- Top-level names ----------------------------------------------------- */

static size_t resolve_hash(const char *s)
{
    size_t h = 5381;
    for (; *s; s++) h = h * 33 + (unsigned char)*s;
    return h;
}

/* The entry for name: the existing one, or a new one when add (else NULL). */
static resolve_glob *resolve_glob_slot(resolve_st *r, const char *name, bool add)
{
    size_t mask = r->nglobs_cap - 1;
    for (size_t i = resolve_hash(name) & mask;; i = (i + 1) & mask) {
        resolve_glob *g = &r->globs[i];
        if (!g->name) {
            if (!add) return NULL;
            *g = (resolve_glob){name, -1, -1};
            return g;
        }
        if (strcmp(g->name, name) == 0) return g;
    }
}

static bool resolve_loc_before(ir_loc a, ir_loc b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* Duplicate and builtin names; fills the table (first definitions win). */
static void resolve_globals(resolve_st *r)
{
    ir_program *p = r->p;
    for (int i = 0; i < p->nfuns; i++) {
        ir_fun *f = p->funs[i];
        if (stc__ir_builtin_lookup(f->name) >= 0) {
            resolve_err(r, f->loc, "'%s' is a builtin function and cannot be redefined", f->name);
            continue;
        }
        resolve_glob *g = resolve_glob_slot(r, f->name, true);
        if (g->fun >= 0) {
            ir_loc at = p->funs[g->fun]->loc;
            resolve_err(r, f->loc, "'%s' is already defined at %d:%d", f->name, at.line, at.col);
        } else {
            g->fun = i;
        }
    }
    for (int i = 0; i < p->nthreads; i++) {
        ir_thread *t = p->threads[i];
        if (stc__ir_builtin_lookup(t->name) >= 0) {
            resolve_err(r, t->loc, "'%s' is a builtin function and cannot be redefined", t->name);
            continue;
        }
        resolve_glob *g = resolve_glob_slot(r, t->name, true);
        if (g->thread >= 0) {
            ir_loc at = p->threads[g->thread]->loc;
            resolve_err(r, t->loc, "'%s' is already defined at %d:%d", t->name, at.line, at.col);
            continue;
        }
        g->thread = i;
        if (g->fun >= 0) { /* report at whichever comes second in the file */
            ir_loc floc = p->funs[g->fun]->loc;
            if (resolve_loc_before(t->loc, floc))
                resolve_err(r, floc, "'%s' is already defined at %d:%d", t->name, t->loc.line, t->loc.col);
            else
                resolve_err(r, t->loc, "'%s' is already defined at %d:%d", t->name, floc.line, floc.col);
        }
    }
    if (!p->main) stc__diags_add(r->d, 1, 1, "no 'main' declaration"), r->failed = true;
}

static int resolve_find_fun(resolve_st *r, const char *name)
{
    resolve_glob *g = resolve_glob_slot(r, name, false);
    return g ? g->fun : -1;
}

static int resolve_find_thread(resolve_st *r, const char *name)
{
    resolve_glob *g = resolve_glob_slot(r, name, false);
    return g && g->fun < 0 ? g->thread : -1;
}

static void resolve_bind_threads(resolve_st *r)
{
    ir_program *p = r->p;
    for (int i = 0; i < p->nthreads; i++) {
        ir_thread *t = p->threads[i];
        t->access = STC_WRITES;
        int f = t->target ? resolve_find_fun(r, t->target) : -1;
        const ir_cthread *ct = NULL;
        if (f >= 0) {
            t->kind = THREAD_LANG;
            t->fun = f;
            t->ninputs = p->funs[f]->nparams - 1;
            if (p->funs[f]->nparams == 0)
                resolve_err(r, t->target_loc,
                            "function '%s' has no parameters and cannot be a thread (its last "
                            "parameter is the state)", t->target);
            if (!t->init) resolve_err(r, t->loc, "thread '%s' needs an init value", t->name);
            if (t->keyed && p->funs[f]->nparams == 1)
                resolve_err(r, t->target_loc,
                            "function '%s' of keyed thread '%s' takes 1 parameter, but needs the key "
                            "first and the state last", t->target, t->name);
        } else if (t->keyed && t->target && stc__ir_cthread_find(p->env, t->target)) {
            resolve_err(r, t->target_loc,
                        "keyed thread '%s' cannot run C thread '%s': a keyed thread's function is "
                        "an STCLang function", t->name, t->target);
        } else if (t->target && (ct = stc__ir_cthread_find(p->env, t->target)) != NULL) {
            const stc_thread_def *def = &ct->def;
            t->kind = THREAD_C;
            t->cthread = ct;
            t->cdef = def;
            t->ninputs = 1;
            t->access = def->access;
            if (t->init && !def->state_type)
                resolve_err(r, t->init->loc,
                            "thread '%s' cannot have an init value: C thread '%s' declares no state type",
                            t->name, t->target);
        } else {
            resolve_err(r, t->target_loc, "unknown function '%s' in thread declaration",
                        t->target ? t->target : "?");
        }
    }
}

/* ---- Scopes, frames and captures ------------------------------------------ */

static bool resolve_push_local(resolve_st *r, ir_var *v)
{
    resolve_fctx *fx = r->fx;
    if (!resolve_grow(r, (void **)&fx->locals, fx->nlocal, &fx->nlocals_cap, sizeof *fx->locals))
        return false;
    if (!resolve_grow(r, (void **)&r->scope, r->nscope, &r->scope_cap, sizeof *r->scope)) return false;
    v->owner = fx->fn;
    v->slot = fx->nlocal;
    fx->locals[fx->nlocal++] = v;
    r->scope[r->nscope++] = (resolve_ent){v->name, v};
    return true;
}

/* Binds a group of binders that must have distinct names (parameters,
 * a let-tuple, a tuple pattern). */
static bool resolve_bind_group(resolve_st *r, ir_var **vars, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        if (!vars[i]) { r->oom = true; return false; }
        for (int j = 0; j < i; j++)
            if (strcmp(vars[i]->name, "_") != 0 && strcmp(vars[i]->name, vars[j]->name) == 0) {
                resolve_err(r, vars[i]->loc, "'%s' is bound twice in this %s", vars[i]->name, what);
                break;
            }
        if (!resolve_push_local(r, vars[i])) return false;
    }
    return true;
}

static resolve_ent *resolve_lookup(resolve_st *r, const char *name)
{
    for (int i = r->nscope - 1; i >= 0; i--)
        if (strcmp(r->scope[i].name, name) == 0) return &r->scope[i];
    return NULL;
}

/* The variable that stands for v inside the function of context fx,
 * adding captures to fx and the contexts between it and v's owner. */
static ir_var *resolve_capture(resolve_st *r, resolve_fctx *fx, ir_var *v)
{
    if (v->owner == fx->fn || !fx->parent) return v;
    ir_var *outer = resolve_capture(r, fx->parent, v);
    if (!outer) return NULL;
    for (int i = 0; i < fx->ncaps; i++)
        if (fx->caps[i] == outer) return fx->copies[i];
    int cap = fx->caps_cap;
    if (!resolve_grow(r, (void **)&fx->caps, fx->ncaps, &cap, sizeof *fx->caps)) return NULL;
    if (!resolve_grow(r, (void **)&fx->copies, fx->ncaps, &fx->caps_cap, sizeof *fx->copies)) return NULL;
    ir_var *copy = stc__ir_var_new(r->p, v->name, v->loc);
    if (!copy) { r->oom = true; return NULL; }
    copy->owner = fx->fn;
    copy->slot = fx->ncaps;
    fx->caps[fx->ncaps] = outer;
    fx->copies[fx->ncaps++] = copy;
    return copy;
}

static void resolve_fctx_free(resolve_fctx *fx)
{
    free(fx->locals);
    free(fx->caps);
    free(fx->copies);
}

/* Shifts the locals behind the captures and stores the frame layout. */
static bool resolve_fctx_finish(resolve_st *r, resolve_fctx *fx)
{
    ir_fun *fn = fx->fn;
    for (int i = 0; i < fx->nlocal; i++) fx->locals[i]->slot += fx->ncaps;
    fn->nslots = fx->ncaps + fx->nlocal;
    fn->ncaptures = fx->ncaps;
    if (fx->ncaps > 0) {
        fn->captures = stc__ir_array(r->p, (size_t)fx->ncaps, sizeof *fn->captures);
        fn->capture_slots = stc__ir_array(r->p, (size_t)fx->ncaps, sizeof *fn->capture_slots);
        if (!fn->captures || !fn->capture_slots) { r->oom = true; return false; }
        memcpy(fn->captures, fx->caps, (size_t)fx->ncaps * sizeof *fn->captures);
        memcpy(fn->capture_slots, fx->copies, (size_t)fx->ncaps * sizeof *fn->capture_slots);
    }
    return true;
}

/* ---- Expressions ------------------------------------------------------------ */

static bool resolve_expr(resolve_st *r, ir_expr *e, int depth);

static ir_loc resolve_call_loc(const ir_expr *e)
{
    return e->u.call.callee_loc.line > 0 ? e->u.call.callee_loc : e->loc;
}

static void resolve_edge(resolve_st *r, int to)
{
    if (r->cur_fun < 0) return;
    if (!resolve_grow(r, (void **)&r->edges, r->nedges + 1, &r->edges_cap, sizeof *r->edges)) return;
    r->edges[r->nedges++] = r->cur_fun;
    r->edges[r->nedges++] = to;
}

/* A reference to thread t (call or smap argument) at loc. */
static void resolve_thread_use(resolve_st *r, int t, ir_loc loc)
{
    if (r->init_of)
        resolve_err(r, loc, "init of '%s' cannot call thread '%s'", r->init_of->name,
                    r->p->threads[t]->name);
    if (r->cur_fun >= 0 && r->fun_thread[r->cur_fun] < 0) r->fun_thread[r->cur_fun] = t;
}

/* A reference to top-level fun f (call or value) at loc. */
static void resolve_fun_use(resolve_st *r, int f, ir_loc loc)
{
    resolve_edge(r, f);
    if (r->init_of && r->fun_thread[f] >= 0)
        resolve_err(r, loc, "init of '%s' cannot call thread '%s' (called through '%s')",
                    r->init_of->name, r->p->threads[r->fun_thread[f]]->name, r->p->funs[f]->name);
}

/* IR_NAME -> IR_VAR / IR_FUNREF / IR_THREADREF. */
static bool resolve_name(resolve_st *r, ir_expr *e, bool thread_ok)
{
    const char *name = e->u.name;
    resolve_ent *ent = resolve_lookup(r, name);
    if (ent) {
        ir_var *v = resolve_capture(r, r->fx, ent->var);
        if (!v) return false;
        e->kind = IR_VAR;
        e->u.var = v;
        return true;
    }
    int f = resolve_find_fun(r, name);
    if (f >= 0) {
        e->kind = IR_FUNREF;
        e->u.index = f;
        resolve_fun_use(r, f, e->loc);
        return true;
    }
    int t = resolve_find_thread(r, name);
    if (t >= 0) {
        if (!thread_ok) {
            resolve_err(r, e->loc, "thread '%s' can only be called or passed to smap", name);
            return true;
        }
        e->kind = IR_THREADREF;
        e->u.index = t;
        resolve_thread_use(r, t, e->loc);
        return true;
    }
    if (stc__ir_builtin_lookup(name) >= 0)
        resolve_err(r, e->loc, "builtin '%s' can only be called", name);
    else
        resolve_err(r, e->loc, "undefined name '%s'", name);
    return true;
}

static void resolve_arity(resolve_st *r, const ir_expr *e, const char *what, const char *name,
                          int want)
{
    int n = e->u.call.nargs;
    resolve_err(r, resolve_call_loc(e), "%s'%s' takes %d argument%s, %d given", what, name, want,
                want == 1 ? "" : "s", n);
}

/* state(t)'s argument: the name of a thread declared in the program with
 * an STCLang function (a C thread's state is opaque bytes), not a value;
 * a local of the same name shadows the thread and is an error here.  The
 * state is read in the evaluation order like a call of t, so an init (run
 * before the states exist) may not read one.  (A keyed thread, once it
 * exists, reads as the map of its key states: its IR_THREADREF is the
 * hook.) */
static void resolve_state_arg(resolve_st *r, ir_expr *a)
{
    int t = a->kind == IR_NAME && !resolve_lookup(r, a->u.name) ? resolve_find_thread(r, a->u.name) : -1;
    if (t < 0) {
        resolve_err(r, a->loc, "state needs the name of a thread declared in the program, as in state(counts)");
        return;
    }
    const ir_thread *th = r->p->threads[t];
    if (th->kind != THREAD_LANG) {
        resolve_err(r, a->loc, "state(%s): '%s' is a C thread, whose state only its host can read", th->name,
                    th->name);
        return;
    }
    if (r->init_of) {
        resolve_err(r, a->loc, "init of '%s' cannot read the state of thread '%s'", r->init_of->name, th->name);
        return;
    }
    a->kind = IR_THREADREF;
    a->u.index = t;
    resolve_thread_use(r, t, a->loc);
}

static bool resolve_call(resolve_st *r, ir_expr *e, int depth)
{
    int nargs = e->u.call.nargs;
    if (e->u.call.kind == CALL_NAME) {
        const char *name = e->u.call.callee.name;
        ir_loc loc = resolve_call_loc(e);
        resolve_ent *ent = resolve_lookup(r, name);
        int f, t, b;
        if (ent) {
            ir_var *v = resolve_capture(r, r->fx, ent->var);
            if (!v) return false;
            e->u.call.kind = CALL_VALUE;
            e->u.call.callee.var = v;
        } else if ((f = resolve_find_fun(r, name)) >= 0) {
            e->u.call.kind = CALL_FUN;
            e->u.call.callee.index = f;
            resolve_fun_use(r, f, loc);
            int k = r->p->funs[f]->nparams;
            if (nargs != k && !(k >= 2 && nargs == 1)) resolve_arity(r, e, "", name, k);
        } else if ((t = resolve_find_thread(r, name)) >= 0) {
            ir_thread *th = r->p->threads[t];
            e->u.call.kind = CALL_THREAD;
            e->u.call.callee.index = t;
            resolve_thread_use(r, t, loc);
            int k = th->ninputs;
            /* A C thread's tuple input may be given as several arguments:
             * the type checker decides. */
            if (th->kind == THREAD_LANG && th->fun >= 0 && k >= 0 && nargs != k && !(k >= 2 && nargs == 1)) {
                if (th->keyed) /* the key counts as an argument: say so, it is the usual slip */
                    resolve_err(r, loc,
                                "keyed thread '%s' takes %d argument%s, %d given (the key, then the inputs "
                                "of '%s' between its key and its state)",
                                name, k, k == 1 ? "" : "s", nargs, r->p->funs[th->fun]->name);
                else
                    resolve_arity(r, e, "thread ", name, k);
            }
        } else if ((b = stc__ir_builtin_lookup(name)) >= 0) {
            e->u.call.kind = CALL_BUILTIN;
            e->u.call.callee.index = b;
            if (nargs != stc__ir_builtins[b].arity) resolve_arity(r, e, "", name, stc__ir_builtins[b].arity);
        } else {
            resolve_err(r, loc, "undefined function '%s'", name);
        }
    } else if (e->u.call.kind == CALL_VALUE) {
        return false; /* already resolved: not a valid input */
    }
    for (int i = 0; i < nargs; i++) {
        ir_expr *a = e->u.call.args[i];
        if (!a) { r->oom = true; return false; }
        if (i == 0 && a->kind == IR_NAME && e->u.call.kind == CALL_BUILTIN &&
            e->u.call.callee.index == BI_SMAP) {
            if (!resolve_name(r, a, true)) return false;
        } else if (i == 0 && e->u.call.kind == CALL_BUILTIN && e->u.call.callee.index == BI_STATE) {
            resolve_state_arg(r, a);
        } else if (!resolve_expr(r, a, depth + 1)) {
            return false;
        }
    }
    return true;
}

/* Walks fn (a lambda or a top-level fun) in a new function context. */
static bool resolve_fun(resolve_st *r, ir_fun *fn, int depth)
{
    resolve_fctx fx = {.parent = r->fx, .fn = fn};
    int scope_mark = r->nscope;
    r->fx = &fx;
    bool ok = resolve_bind_group(r, fn->params, fn->nparams, "parameter list");
    if (ok && !fn->body) { r->oom = true; ok = false; }
    if (ok) ok = resolve_expr(r, fn->body, depth + 1);
    if (ok) ok = resolve_fctx_finish(r, &fx);
    if (ok) stc__ir_mark_tail_calls(fn->body);
    r->fx = fx.parent;
    r->nscope = scope_mark;
    resolve_fctx_free(&fx);
    return ok;
}

static bool resolve_alt(resolve_st *r, ir_alt *alt, int depth)
{
    int mark = r->nscope;
    bool ok = true;
    switch (alt->pat) {
    case PAT_LIT:
    case PAT_WILD:
        break;
    case PAT_VAR:
    case PAT_INL:
    case PAT_INR:
        if (alt->nvars != 1 || !alt->vars) { r->oom = true; return false; }
        ok = resolve_bind_group(r, alt->vars, 1, "pattern");
        break;
    case PAT_TUPLE:
        ok = resolve_bind_group(r, alt->vars, alt->nvars, "pattern");
        break;
    }
    if (ok && !alt->body) { r->oom = true; ok = false; }
    if (ok) ok = resolve_expr(r, alt->body, depth + 1);
    r->nscope = mark;
    return ok;
}

/* false only for out of memory or malformed IR; errors in the program are
 * reported and the walk goes on. */
static bool resolve_expr(resolve_st *r, ir_expr *e, int depth)
{
    if (!e) { r->oom = true; return false; }
    if (depth > RESOLVE_MAX_DEPTH) {
        resolve_err(r, e->loc, "expression nested too deeply (limit %d)", RESOLVE_MAX_DEPTH);
        return true; /* reported; the rest of the program is still checked */
    }
    switch (e->kind) {
    case IR_LIT:
    case IR_VAR:
    case IR_FUNREF:
    case IR_THREADREF:
        return true;
    case IR_NAME:
        return resolve_name(r, e, false);
    case IR_LET:
    case IR_LETTUPLE: {
        if (!resolve_expr(r, e->a, depth + 1)) return false;
        int mark = r->nscope;
        bool ok = resolve_bind_group(r, e->u.let.binders, e->u.let.nbinders, "pattern") &&
                  resolve_expr(r, e->b, depth + 1);
        r->nscope = mark;
        return ok;
    }
    case IR_IF:
        return resolve_expr(r, e->a, depth + 1) && resolve_expr(r, e->b, depth + 1) &&
               resolve_expr(r, e->c, depth + 1);
    case IR_CASE:
        if (!resolve_expr(r, e->a, depth + 1)) return false;
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (!resolve_alt(r, &e->u.cas.alts[i], depth)) return false;
        return true;
    case IR_LAMBDA:
        if (!e->u.fn) { r->oom = true; return false; }
        return resolve_fun(r, e->u.fn, depth);
    case IR_INL:
    case IR_INR:
    case IR_UNOP:
        return resolve_expr(r, e->a, depth + 1);
    case IR_BINOP: { /* a chain by a loop, its operands in order (ir_chain) */
        ir_chain c;
        if (!stc__ir_chain_init(&c, e)) {
            stc__ir_chain_free(&c);
            r->oom = true;
            return false;
        }
        bool ok = resolve_expr(r, c.nodes[c.n - 1]->a, depth + 1);
        for (size_t i = c.n; ok && i-- > 0;) ok = resolve_expr(r, c.nodes[i]->b, depth + 1);
        stc__ir_chain_free(&c);
        return ok;
    }
    case IR_CALL:
        return resolve_call(r, e, depth);
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (!resolve_expr(r, e->u.agg.items[i], depth + 1)) return false;
        return true;
    }
    return true;
}

/* Walks e (main or an init) in a frame of its own that starts at slot
 * `base`; returns the frame's end, or -1. */
static int resolve_toplevel_expr(resolve_st *r, ir_expr *e, int base, ir_var *param)
{
    resolve_fctx fx = {.fn = NULL};
    r->fx = &fx;
    r->nscope = 0;
    bool ok = !param || resolve_push_local(r, param);
    ok = ok && resolve_expr(r, e, 0);
    int end = base + fx.nlocal;
    for (int i = 0; i < fx.nlocal; i++) fx.locals[i]->slot += base;
    r->fx = NULL;
    resolve_fctx_free(&fx);
    return ok ? end : -1;
}

/* fun_thread[f]: a thread f reaches through calls (for the init check). */
static bool resolve_propagate_threads(resolve_st *r)
{
    int n = r->p->nfuns, ne = r->nedges / 2;
    int *start = calloc((size_t)n + 1, sizeof *start);
    int *from = malloc(((size_t)ne + 1) * sizeof *from);
    int *queue = malloc(((size_t)n + 1) * sizeof *queue);
    if (!start || !from || !queue) {
        free(start), free(from), free(queue);
        r->oom = true;
        return false;
    }
    /* Reverse adjacency in CSR form: callers of each callee. */
    for (int i = 0; i < ne; i++) start[r->edges[2 * i + 1] + 1]++;
    for (int i = 0; i < n; i++) start[i + 1] += start[i];
    for (int i = 0; i < ne; i++) from[start[r->edges[2 * i + 1]]++] = r->edges[2 * i];
    for (int i = n; i > 0; i--) start[i] = start[i - 1];
    start[0] = 0;
    int qh = 0, qt = 0;
    for (int f = 0; f < n; f++)
        if (r->fun_thread[f] >= 0) queue[qt++] = f;
    while (qh < qt) {
        int g = queue[qh++];
        for (int j = start[g]; j < start[g + 1]; j++) {
            int f = from[j];
            if (r->fun_thread[f] >= 0) continue;
            r->fun_thread[f] = r->fun_thread[g];
            queue[qt++] = f;
        }
    }
    free(start), free(from), free(queue);
    return true;
}

int stc__ir_resolve(ir_program *p, stc_diags *d)
{
    resolve_st r = {.p = p, .d = d, .cur_fun = -1};
    size_t cap = 16;
    while (cap < 2 * ((size_t)p->nfuns + (size_t)p->nthreads) + 2) cap *= 2;
    r.nglobs_cap = cap;
    r.globs = calloc(cap, sizeof *r.globs);
    r.fun_thread = malloc(((size_t)p->nfuns + 1) * sizeof *r.fun_thread);
    bool ok = r.globs && r.fun_thread;
    if (!ok) r.oom = true;
    for (int i = 0; ok && i < p->nfuns; i++) r.fun_thread[i] = -1;
    if (ok) {
        resolve_globals(&r);
        resolve_bind_threads(&r);
    }
    for (int i = 0; ok && i < p->nfuns; i++) {
        r.cur_fun = i;
        r.nscope = 0;
        r.fx = NULL;
        ok = resolve_fun(&r, p->funs[i], 0) && !r.oom;
    }
    r.cur_fun = -1;
    if (ok) ok = resolve_propagate_threads(&r);
    int nslots = 0;
    for (int i = 0; ok && i < p->nthreads; i++) {
        if (!p->threads[i]->init) continue;
        r.init_of = p->threads[i];
        nslots = resolve_toplevel_expr(&r, p->threads[i]->init, nslots, NULL);
        ok = nslots >= 0 && !r.oom;
    }
    r.init_of = NULL;
    if (ok) p->init_nslots = nslots;
    if (ok && p->main) {
        nslots = resolve_toplevel_expr(&r, p->main, 0, p->main_param);
        ok = nslots >= 0 && !r.oom;
        if (ok) p->main_nslots = nslots;
    }
    if (r.oom) stc__diags_add(d, 0, 0, "out of memory during name resolution");
    else if (!ok && !r.failed) stc__diags_add(d, 0, 0, "malformed program IR");
    free(r.globs);
    free(r.scope);
    free(r.fun_thread);
    free(r.edges);
    if (ok && !r.failed && !r.oom) stc__ir_mark_moves(p);
    return ok && !r.failed && !r.oom ? 0 : -1;
}
