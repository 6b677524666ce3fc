/* ir.c - constructors and small helpers for the program IR. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "value/value.h"

ir_program *stc__ir_program_new(const char *file, const stc_env *env)
{
    arena *a = stc__arena_new();
    if (!a) return NULL;
    ir_program *p = stc__arena_alloc(a, sizeof *p);
    if (!p) { stc__arena_free(a); return NULL; }
    p->arena = a;
    p->env = env;
    p->file = stc__arena_strdup(a, file ? file : "<input>");
    if (!p->file) { stc__arena_free(a); return NULL; }
    return p;
}

static void ir_free_ptr(void *ptr) { free(ptr); }

void stc__ir_program_free(ir_program *p)
{
    if (p) stc__arena_free(p->arena);
}

ir_expr *stc__ir_expr_new(ir_program *p, ir_kind kind, ir_loc loc)
{
    ir_expr *e = stc__arena_alloc(p->arena, sizeof *e);
    if (!e) return NULL;
    e->kind = kind;
    e->loc = loc;
    return e;
}

ir_var *stc__ir_var_new(ir_program *p, const char *name, ir_loc loc)
{
    ir_var *v = stc__arena_alloc(p->arena, sizeof *v);
    if (!v) return NULL;
    v->name = stc__arena_strdup(p->arena, name ? name : "_");
    if (!v->name) return NULL;
    v->loc = loc;
    v->slot = -1;
    return v;
}

ir_fun *stc__ir_fun_new(ir_program *p, const char *name, ir_loc loc, int nparams)
{
    ir_fun *f = stc__arena_alloc(p->arena, sizeof *f);
    if (!f) return NULL;
    f->name = stc__arena_strdup(p->arena, name ? name : "<fn>");
    f->loc = loc;
    f->index = -1;
    f->nparams = nparams;
    if (nparams > 0) {
        f->params = stc__ir_array(p, (size_t)nparams, sizeof *f->params);
        f->param_annots = stc__ir_array(p, (size_t)nparams, sizeof *f->param_annots);
        if (!f->params || !f->param_annots) return NULL;
    }
    if (!f->name) return NULL;
    return f;
}

ir_thread *stc__ir_thread_new(ir_program *p, const char *name, ir_loc loc)
{
    ir_thread *t = stc__arena_alloc(p->arena, sizeof *t);
    if (!t) return NULL;
    t->name = stc__arena_strdup(p->arena, name);
    if (!t->name) return NULL;
    t->loc = loc;
    t->fun = -1;
    return t;
}

void *stc__ir_array(ir_program *p, size_t n, size_t elem_size)
{
    if (n == 0) n = 1;
    if (elem_size && n > ((size_t)-1) / 2 / elem_size) return NULL;
    return stc__arena_alloc(p->arena, n * elem_size);
}

static void ir_release_lit(void *ptr)
{
    stc_value *v = ptr;
    val_release(*v);
}

ir_expr *stc__ir_lit(ir_program *p, stc_value v, ir_loc loc)
{
    ir_expr *e = stc__ir_expr_new(p, IR_LIT, loc);
    if (!e) { val_release(v); return NULL; }
    /* Concurrent runs of the program share its literals: counted
     * atomically (value.h, "Reference counts"). */
    stc__val_mark_shared(v);
    e->u.lit = v;
    if (v.tag >= STC_T_STR && stc__arena_on_free(p->arena, ir_release_lit, &e->u.lit) != 0) return NULL;
    return e;
}

/* Grows a malloc'd pointer array whose memory is released with the arena. */
static int ir_push(ir_program *p, void ***items, int *n, int *cap, void *item)
{
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        void **old = *items;
        void **grown = malloc((size_t)ncap * sizeof *grown);
        if (!grown) return -1;
        if (old) memcpy(grown, old, (size_t)*n * sizeof *grown);
        if (stc__arena_on_free(p->arena, ir_free_ptr, grown) != 0) return -1;
        *items = grown; /* the old array is freed by its own hook */
        *cap = ncap;
    }
    (*items)[(*n)++] = item;
    return 0;
}

int stc__ir_add_fun(ir_program *p, ir_fun *f)
{
    f->index = p->nfuns;
    return ir_push(p, (void ***)&p->funs, &p->nfuns, &p->funs_cap, f);
}

int stc__ir_add_thread(ir_program *p, ir_thread *t)
{
    return ir_push(p, (void ***)&p->threads, &p->nthreads, &p->threads_cap, t);
}

int stc__ir_find_fun(const ir_program *p, const char *name)
{
    for (int i = 0; i < p->nfuns; i++)
        if (strcmp(p->funs[i]->name, name) == 0) return i;
    return -1;
}

int stc__ir_find_thread(const ir_program *p, const char *name)
{
    for (int i = 0; i < p->nthreads; i++)
        if (strcmp(p->threads[i]->name, name) == 0) return i;
    return -1;
}

ir_type *stc__ir_type_new(ir_program *p, ir_type_kind kind, int n)
{
    ir_type *t = stc__arena_alloc(p->arena, sizeof *t);
    if (!t) return NULL;
    t->kind = kind;
    t->n = n;
    if (n > 0) {
        t->args = stc__ir_array(p, (size_t)n, sizeof *t->args);
        if (!t->args) return NULL;
    }
    return t;
}

ir_type *stc__ir_type_var(ir_program *p, int level)
{
    ir_type *t = stc__ir_type_new(p, TY_VAR, 0);
    if (!t) return NULL;
    t->id = p->next_type_id++;
    t->level = level;
    return t;
}

ir_type *stc__ir_type_resolve(ir_type *t)
{
    while (t && t->kind == TY_VAR && t->ref) t = t->ref;
    return t;
}

static void ir_type_print(buf *b, ir_type *t, int depth, bool atom)
{
    t = stc__ir_type_resolve(t);
    if (!t) { stc__buf_puts(b, "?"); return; }
    if (depth > IR_MAX_DEPTH) { stc__buf_puts(b, "..."); return; }
    switch (t->kind) {
    case TY_VAR:
        if (t->id < 26) stc__buf_printf(b, "'%c", 'a' + t->id);
        else stc__buf_printf(b, "'t%d", t->id);
        break;
    case TY_INT: stc__buf_puts(b, "int"); break;
    case TY_FLOAT: stc__buf_puts(b, "float"); break;
    case TY_BOOL: stc__buf_puts(b, "bool"); break;
    case TY_STR: stc__buf_puts(b, "str"); break;
    case TY_UNIT: stc__buf_puts(b, "unit"); break;
    case TY_LIST:
        stc__buf_putc(b, '[');
        ir_type_print(b, t->args[0], depth + 1, false);
        stc__buf_putc(b, ']');
        break;
    case TY_TUPLE:
        stc__buf_putc(b, '(');
        for (int i = 0; i < t->n; i++) {
            if (i) stc__buf_puts(b, ", ");
            ir_type_print(b, t->args[i], depth + 1, false);
        }
        stc__buf_putc(b, ')');
        break;
    case TY_MAP:
        stc__buf_putc(b, '{');
        ir_type_print(b, t->args[0], depth + 1, false);
        stc__buf_puts(b, ": ");
        ir_type_print(b, t->args[1], depth + 1, false);
        stc__buf_putc(b, '}');
        break;
    case TY_SUM:
    case TY_FUN:
        if (atom) stc__buf_putc(b, '(');
        ir_type_print(b, t->args[0], depth + 1, true);
        stc__buf_puts(b, t->kind == TY_SUM ? " + " : " -> ");
        ir_type_print(b, t->args[1], depth + 1, t->kind == TY_SUM);
        if (atom) stc__buf_putc(b, ')');
        break;
    }
}

char *stc__ir_type_to_string(ir_type *t)
{
    buf b = BUF_INIT;
    ir_type_print(&b, t, 0, false);
    return stc__buf_take(&b);
}

const char *stc__ir_binop_name(ir_binop op)
{
    static const char *const names[] = {"||", "&&", "==", "!=", "<", "<=", ">", ">=",
                                        "+",  "-",  "*",  "/",  "%"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

const char *stc__ir_unop_name(ir_unop op) { return op == OP_NEG ? "-" : "not"; }

const ir_builtin_info stc__ir_builtins[BI_COUNT_] = {
    [BI_SMAP] = {"smap", 2},   [BI_LEN] = {"len", 1},     [BI_NTH] = {"nth", 2},
    [BI_RANGE] = {"range", 2}, [BI_FLOAT] = {"float", 1}, [BI_INT] = {"int", 1},
    [BI_ROUND] = {"round", 1}, [BI_SIN_ITER] = {"sin_iter", 2},
    [BI_WORDS] = {"words", 1}, [BI_SPLIT] = {"split", 2},     [BI_STR] = {"str", 1},
    [BI_CONCAT] = {"concat", 2}, [BI_PARSE_INT] = {"parse_int", 1},
    [BI_PARSE_FLOAT] = {"parse_float", 1},
    /* the library (docs/LANGUAGE.md 7) */
    [BI_FOLD] = {"fold", 3}, [BI_FILTER] = {"filter", 2}, [BI_APPEND] = {"append", 2},
    [BI_REVERSE] = {"reverse", 1}, [BI_SORT] = {"sort", 1}, [BI_ZIP] = {"zip", 2},
    [BI_TAKE] = {"take", 2}, [BI_DROP] = {"drop", 2},
    [BI_SLICE] = {"slice", 3}, [BI_FIND] = {"find", 2}, [BI_STARTS_WITH] = {"starts_with", 2},
    [BI_ENDS_WITH] = {"ends_with", 2}, [BI_CONTAINS] = {"contains", 2}, [BI_LOWER] = {"lower", 1},
    [BI_UPPER] = {"upper", 1}, [BI_TRIM] = {"trim", 1}, [BI_JOIN] = {"join", 2},
    [BI_REPLACE] = {"replace", 3}, [BI_TRY_INT] = {"try_int", 1}, [BI_TRY_FLOAT] = {"try_float", 1},
    [BI_ABS] = {"abs", 1}, [BI_MIN] = {"min", 2}, [BI_MAX] = {"max", 2}, [BI_SQRT] = {"sqrt", 1},
    [BI_FLOOR] = {"floor", 1}, [BI_CEIL] = {"ceil", 1}, [BI_POW] = {"pow", 2}, [BI_EXP] = {"exp", 1},
    [BI_LOG] = {"log", 1},
    [BI_GET] = {"get", 3}, [BI_LOOKUP] = {"lookup", 2}, [BI_HAS] = {"has", 2}, [BI_PUT] = {"put", 3},
    [BI_REMOVE] = {"remove", 2}, [BI_UPDATE] = {"update", 4}, [BI_KEYS] = {"keys", 1},
    [BI_VALUES] = {"values", 1}, [BI_ITEMS] = {"items", 1}, [BI_TO_MAP] = {"to_map", 1},
    [BI_STATE] = {"state", 1},
};

int stc__ir_builtin_lookup(const char *name)
{
    for (int i = 0; i < BI_COUNT_; i++)
        if (strcmp(stc__ir_builtins[i].name, name) == 0) return i;
    return -1;
}

bool stc__ir_chain_init(ir_chain *c, const ir_expr *e)
{
    size_t n = 0;
    for (const ir_expr *x = e; x && x->kind == IR_BINOP; x = x->a) n++;
    c->n = 0;
    c->nodes = n <= sizeof c->small / sizeof c->small[0] ? c->small : malloc(n * sizeof *c->nodes);
    if (!c->nodes) return false;
    for (const ir_expr *x = e; x && x->kind == IR_BINOP; x = x->a) c->nodes[c->n++] = (ir_expr *)x;
    return true;
}

void stc__ir_chain_free(ir_chain *c)
{
    if (c->nodes != c->small) free(c->nodes);
    c->nodes = NULL;
    c->n = 0;
}

bool stc__ir_expr_uses(const ir_expr *e, const ir_var *v)
{
    if (!e) return false;
    while (e->kind == IR_BINOP) { /* a chain: its left spine by a loop */
        if (stc__ir_expr_uses(e->b, v)) return true;
        e = e->a;
        if (!e) return false;
    }
    switch (e->kind) {
    case IR_VAR: return e->u.var == v;
    case IR_LAMBDA:
        for (int i = 0; i < e->u.fn->ncaptures; i++)
            if (e->u.fn->captures[i] == v) return true;
        return false;
    case IR_CALL:
        if (e->u.call.kind == CALL_VALUE && e->u.call.callee.var == v) return true;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (stc__ir_expr_uses(e->u.call.args[i], v)) return true;
        return false;
    case IR_CASE:
        if (stc__ir_expr_uses(e->a, v)) return true;
        for (int i = 0; i < e->u.cas.nalts; i++)
            if (stc__ir_expr_uses(e->u.cas.alts[i].body, v)) return true;
        return false;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (stc__ir_expr_uses(e->u.agg.items[i], v)) return true;
        return false;
    default: return stc__ir_expr_uses(e->a, v) || stc__ir_expr_uses(e->b, v) || stc__ir_expr_uses(e->c, v);
    }
}

/* Adds e's uses of v to *n, stopping once *n reaches limit. */
static void ir_count_uses(const ir_expr *e, const ir_var *v, int limit, int *n)
{
    while (e && *n < limit && e->kind == IR_BINOP) { /* a chain: its left spine by a loop */
        ir_count_uses(e->b, v, limit, n);
        e = e->a;
    }
    if (!e || *n >= limit) return;
    switch (e->kind) {
    case IR_VAR: *n += e->u.var == v; return;
    case IR_LAMBDA:
        for (int i = 0; i < e->u.fn->ncaptures; i++) *n += e->u.fn->captures[i] == v;
        return;
    case IR_CALL:
        *n += e->u.call.kind == CALL_VALUE && e->u.call.callee.var == v;
        for (int i = 0; i < e->u.call.nargs; i++) ir_count_uses(e->u.call.args[i], v, limit, n);
        return;
    case IR_CASE:
        ir_count_uses(e->a, v, limit, n);
        for (int i = 0; i < e->u.cas.nalts; i++) ir_count_uses(e->u.cas.alts[i].body, v, limit, n);
        return;
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++) ir_count_uses(e->u.agg.items[i], v, limit, n);
        return;
    default:
        ir_count_uses(e->a, v, limit, n);
        ir_count_uses(e->b, v, limit, n);
        ir_count_uses(e->c, v, limit, n);
        return;
    }
}

int stc__ir_expr_count_uses(const ir_expr *e, const ir_var *v, int limit)
{
    int n = 0;
    ir_count_uses(e, v, limit, &n);
    return n < limit ? n : limit;
}

void stc__ir_mark_tail_calls(ir_expr *e)
{
    while (e) { /* down the last tail position; the others recurse */
        switch (e->kind) {
        case IR_LET:
        case IR_LETTUPLE: e = e->b; break;
        case IR_IF:
            stc__ir_mark_tail_calls(e->b);
            e = e->c;
            break;
        case IR_CASE:
            for (int i = 0; i + 1 < e->u.cas.nalts; i++) stc__ir_mark_tail_calls(e->u.cas.alts[i].body);
            e = e->u.cas.nalts > 0 ? e->u.cas.alts[e->u.cas.nalts - 1].body : NULL;
            break;
        case IR_CALL:
            e->u.call.tail = e->u.call.kind == CALL_FUN || e->u.call.kind == CALL_VALUE;
            return;
        default: return;
        }
    }
}
