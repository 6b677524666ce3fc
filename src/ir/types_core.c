/* types_core.c - unification over union-find type variables with levels
 * and constraint flags, type schemes, printing and error reports. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/types_internal.h"
#include "util/buf.h"

/* ---- Constructors -------------------------------------------------------- */

static ir_type *types_node(types_ck *ck, ir_type_kind kind, int n)
{
    ir_type *t = stc__ir_type_new(ck->p, kind, n);
    if (!t) ck->oom = true;
    return t;
}

static const char *types_origin(types_ck *ck, const ir_type *v)
{
    return v->id >= 0 && v->id < ck->norigins ? ck->origins[v->id] : NULL;
}

static bool types_set_origin(types_ck *ck, ir_type *v, const char *origin)
{
    if (!origin || v->id < 0) return true;
    if (v->id >= ck->norigins) {
        int n = ck->norigins ? ck->norigins : 64;
        while (n <= v->id) n *= 2;
        const char **o = realloc(ck->origins, (size_t)n * sizeof *o);
        if (!o) { ck->oom = true; return false; }
        memset(o + ck->norigins, 0, (size_t)(n - ck->norigins) * sizeof *o);
        ck->origins = o;
        ck->norigins = n;
    }
    ck->origins[v->id] = origin;
    return true;
}

ir_type *stc__types_fresh(types_ck *ck)
{
    ir_type *t = stc__ir_type_var(ck->p, ck->level);
    if (!t) ck->oom = true;
    return t;
}

ir_type *stc__types_fresh_flag(types_ck *ck, unsigned flags, const char *origin)
{
    ir_type *t = stc__types_fresh(ck);
    if (!t) return NULL;
    t->flags = flags;
    return types_set_origin(ck, t, origin) ? t : NULL;
}

static ir_type *types_node2(types_ck *ck, ir_type_kind kind, ir_type *a, ir_type *b)
{
    if (!a || (kind != TY_LIST && !b)) return NULL;
    ir_type *t = types_node(ck, kind, kind == TY_LIST ? 1 : 2);
    if (!t) return NULL;
    t->args[0] = a;
    if (kind != TY_LIST) t->args[1] = b;
    return t;
}

ir_type *stc__types_list(types_ck *ck, ir_type *elem) { return types_node2(ck, TY_LIST, elem, NULL); }
ir_type *stc__types_fun(types_ck *ck, ir_type *arg, ir_type *res) { return types_node2(ck, TY_FUN, arg, res); }
ir_type *stc__types_sum(types_ck *ck, ir_type *l, ir_type *r) { return types_node2(ck, TY_SUM, l, r); }
ir_type *stc__types_map(types_ck *ck, ir_type *k, ir_type *v) { return types_node2(ck, TY_MAP, k, v); }

ir_type *stc__types_pack(types_ck *ck, int n, ir_type **items)
{
    if (n == 0) return ck->t_unit;
    if (n == 1) return items[0];
    ir_type *t = types_node(ck, TY_TUPLE, n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        if (!items[i]) return NULL;
        t->args[i] = items[i];
    }
    return t;
}

ir_type *stc__types_tuple_fresh(types_ck *ck, int n)
{
    ir_type *t = types_node(ck, TY_TUPLE, n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++)
        if (!(t->args[i] = stc__types_fresh(ck))) return NULL;
    return t;
}

/* ---- Unification ------------------------------------------------------------ */

/* Counts one step; false when the work or depth budget is exhausted. */
static bool types_step(types_ck *ck, int depth)
{
    return ++ck->work <= TYPES_MAX_WORK && depth <= TYPES_MAX_TYPE_DEPTH;
}

/* Occurs check of v in t; lowers the levels of t's variables to v's. */
static int types_occurs(types_ck *ck, ir_type *v, ir_type *t, int depth)
{
    if (!types_step(ck, depth)) return TU_LIMIT;
    t = stc__ir_type_resolve(t);
    if (t == v) return TU_OCCURS;
    if (t->kind == TY_VAR) {
        if (t->level > v->level) t->level = v->level;
        return TU_OK;
    }
    for (int i = 0; i < t->n; i++) {
        int rc = types_occurs(ck, v, t->args[i], depth + 1);
        if (rc) return rc;
    }
    return TU_OK;
}

/* NUM and SIZED together: no type is both a number and a list or str. */
static int types_conflict(types_ck *ck, const ir_type *v)
{
    if ((v->flags & TYF_NUM) && (v->flags & TYF_SIZED)) {
        ck->u_flag = TYF_NUM | TYF_SIZED;
        return TU_FLAG;
    }
    return TU_OK;
}

/* Checks that t satisfies flags (a variable inherits them). */
static int types_check_flags(types_ck *ck, unsigned flags, const char *origin, ir_type *t, int depth)
{
    if (!types_step(ck, depth)) return TU_LIMIT;
    t = stc__ir_type_resolve(t);
    ir_type_kind k = t->kind;
    if (k == TY_VAR) {
        if (!t->generic && (flags & ~t->flags)) {
            t->flags |= flags;
            if (!types_origin(ck, t) && !types_set_origin(ck, t, origin)) return TU_OOM;
        }
        return types_conflict(ck, t);
    }
    unsigned bad = 0;
    if ((flags & TYF_NUM) && k != TY_INT && k != TY_FLOAT) bad = TYF_NUM;
    else if ((flags & TYF_ORD) && k != TY_INT && k != TY_FLOAT && k != TY_STR) bad = TYF_ORD;
    else if ((flags & TYF_SIZED) && k != TY_LIST && k != TY_STR && k != TY_MAP) bad = TYF_SIZED;
    else if ((flags & TYF_EQ) && k == TY_FUN) bad = TYF_EQ;
    if (bad) {
        ck->u_flag = bad;
        return TU_FLAG;
    }
    if (!(flags & TYF_EQ)) return TU_OK;
    for (int i = 0; i < t->n; i++) {
        int rc = types_check_flags(ck, TYF_EQ, origin, t->args[i], depth + 1);
        if (rc) return rc;
    }
    return TU_OK;
}

/* Binds the free variable v to t (already resolved, t != v). */
static int types_bind(types_ck *ck, ir_type *v, ir_type *t, int depth)
{
    if (t->kind == TY_VAR) {
        if (t->level > v->level) t->level = v->level;
        if (v->flags & ~t->flags) {
            t->flags |= v->flags;
            if (!types_origin(ck, t) && !types_set_origin(ck, t, types_origin(ck, v))) return TU_OOM;
        }
        v->ref = t;
        return types_conflict(ck, t);
    }
    int rc = types_occurs(ck, v, t, depth + 1);
    if (rc == TU_OCCURS) {
        ck->u_var = v;
        ck->u_type = t;
    }
    if (rc) return rc;
    if (v->flags) {
        rc = types_check_flags(ck, v->flags, types_origin(ck, v), t, depth + 1);
        if (rc == TU_FLAG) {
            ck->u_origin = types_origin(ck, v);
            ck->u_type = t;
        }
        if (rc) return rc;
    }
    v->ref = t;
    return TU_OK;
}

static int types_unify_at(types_ck *ck, ir_type *a, ir_type *b, int depth)
{
    if (!types_step(ck, depth)) return TU_LIMIT;
    a = stc__ir_type_resolve(a);
    b = stc__ir_type_resolve(b);
    if (!a || !b) return TU_OOM;
    if (a == b) return TU_OK;
    if (a->kind == TY_VAR) return types_bind(ck, a, b, depth);
    if (b->kind == TY_VAR) return types_bind(ck, b, a, depth);
    if (a->kind != b->kind || a->n != b->n) return TU_MISMATCH;
    for (int i = 0; i < a->n; i++) {
        int rc = types_unify_at(ck, a->args[i], b->args[i], depth + 1);
        if (rc) return rc;
    }
    return TU_OK;
}

int stc__types_unify(types_ck *ck, ir_type *a, ir_type *b)
{
    if (ck->fatal) return TU_LIMIT;
    return types_unify_at(ck, a, b, 0);
}

/* ---- Schemes ---------------------------------------------------------------- */

typedef struct types_inst {
    ir_type **from, **to;
    int n, cap;
} types_inst;

static ir_type *types_inst_at(types_ck *ck, types_inst *m, ir_type *t, int depth)
{
    if (!types_step(ck, depth)) { ck->fatal = true; return NULL; }
    t = stc__ir_type_resolve(t);
    if (t->kind == TY_VAR) {
        if (!t->generic) return t;
        for (int i = 0; i < m->n; i++)
            if (m->from[i] == t) return m->to[i];
        if (m->n == m->cap) {
            int cap = m->cap ? m->cap * 2 : 8;
            ir_type **f = realloc(m->from, (size_t)cap * sizeof *f);
            if (f) m->from = f;
            ir_type **o = f ? realloc(m->to, (size_t)cap * sizeof *o) : NULL;
            if (!o) { ck->oom = true; return NULL; }
            m->to = o;
            m->cap = cap;
        }
        ir_type *fresh = stc__types_fresh_flag(ck, t->flags, types_origin(ck, t));
        if (!fresh) return NULL;
        m->from[m->n] = t;
        m->to[m->n++] = fresh;
        return fresh;
    }
    ir_type *copy = NULL; /* made on the first changed argument */
    for (int i = 0; i < t->n; i++) {
        ir_type *a = types_inst_at(ck, m, t->args[i], depth + 1);
        if (!a) return NULL;
        if (a != t->args[i] && !copy) {
            copy = types_node(ck, t->kind, t->n);
            if (!copy) return NULL;
            memcpy(copy->args, t->args, (size_t)t->n * sizeof *copy->args);
        }
        if (copy) copy->args[i] = a;
    }
    return copy ? copy : t;
}

ir_type *stc__types_instantiate(types_ck *ck, ir_type *t)
{
    if (ck->fatal) return NULL;
    types_inst m = {0};
    ir_type *r = types_inst_at(ck, &m, t, 0);
    free(m.from);
    free(m.to);
    return r;
}

static void types_generalize_at(types_ck *ck, ir_type *t, int depth)
{
    if (!types_step(ck, depth)) { ck->fatal = true; return; }
    t = stc__ir_type_resolve(t);
    if (t->kind == TY_VAR) {
        if (t->level > 0) t->generic = true;
        return;
    }
    for (int i = 0; i < t->n && !ck->fatal; i++) types_generalize_at(ck, t->args[i], depth + 1);
}

void stc__types_generalize(types_ck *ck, ir_type *t)
{
    if (t && !ck->fatal) types_generalize_at(ck, t, 0);
}

static void types_default_at(types_ck *ck, ir_type *t, int depth)
{
    if (!types_step(ck, depth)) { ck->fatal = true; return; }
    t = stc__ir_type_resolve(t);
    if (t->kind == TY_VAR) {
        if (t->generic) return;
        if (t->flags & TYF_SIZED) {
            ir_type *l = (t->flags & TYF_ORD) ? ck->t_str : stc__types_list(ck, ck->t_unit);
            if (l) t->ref = l;
        } else {
            t->ref = (t->flags & (TYF_NUM | TYF_ORD)) ? ck->t_int : ck->t_unit;
        }
        return;
    }
    for (int i = 0; i < t->n && !ck->fatal; i++) types_default_at(ck, t->args[i], depth + 1);
}

void stc__types_default(types_ck *ck, ir_type *t)
{
    if (t && !ck->fatal) types_default_at(ck, t, 0);
}

/* ---- Printing and reports ----------------------------------------------------- */

#define TYPES_PRINT_BUDGET 400 /* nodes printed before "..." */
#define TYPES_PRINT_NAMES 64

typedef struct types_names { /* variables named 'a, 'b, ... by first appearance */
    const ir_type *vars[TYPES_PRINT_NAMES];
    int n;
    int budget;
} types_names;

static void types_print(buf *b, types_names *nm, ir_type *t, int depth, bool atom)
{
    t = stc__ir_type_resolve(t);
    if (!t) { stc__buf_puts(b, "?"); return; }
    if (--nm->budget < 0 || depth > 64) { stc__buf_puts(b, "..."); return; }
    switch (t->kind) {
    case TY_VAR: {
        int i = 0;
        while (i < nm->n && nm->vars[i] != t) i++;
        if (i == nm->n && i < TYPES_PRINT_NAMES) nm->vars[nm->n++] = t;
        if (i < 26) stc__buf_printf(b, "'%c", 'a' + i);
        else stc__buf_printf(b, "'t%d", i < TYPES_PRINT_NAMES ? i : t->id);
        break;
    }
    case TY_INT: stc__buf_puts(b, "int"); break;
    case TY_FLOAT: stc__buf_puts(b, "float"); break;
    case TY_BOOL: stc__buf_puts(b, "bool"); break;
    case TY_STR: stc__buf_puts(b, "str"); break;
    case TY_UNIT: stc__buf_puts(b, "unit"); break;
    case TY_LIST:
        stc__buf_putc(b, '[');
        types_print(b, nm, t->args[0], depth + 1, false);
        stc__buf_putc(b, ']');
        break;
    case TY_TUPLE:
        stc__buf_putc(b, '(');
        for (int i = 0; i < t->n; i++) {
            if (i) stc__buf_puts(b, ", ");
            types_print(b, nm, t->args[i], depth + 1, false);
        }
        stc__buf_putc(b, ')');
        break;
    case TY_MAP:
        stc__buf_putc(b, '{');
        types_print(b, nm, t->args[0], depth + 1, false);
        stc__buf_puts(b, ": ");
        types_print(b, nm, t->args[1], depth + 1, false);
        stc__buf_putc(b, '}');
        break;
    case TY_SUM:
    case TY_FUN:
        if (atom) stc__buf_putc(b, '(');
        types_print(b, nm, t->args[0], depth + 1, true);
        stc__buf_puts(b, t->kind == TY_SUM ? " + " : " -> ");
        types_print(b, nm, t->args[1], depth + 1, t->kind == TY_SUM);
        if (atom) stc__buf_putc(b, ')');
        break;
    }
}

/* t printed (malloc'd; NULL when out of memory). */
static char *types_str(types_names *nm, ir_type *t)
{
    buf b = BUF_INIT;
    nm->budget = TYPES_PRINT_BUDGET;
    types_print(&b, nm, t, 0, false);
    return stc__buf_take(&b);
}

void stc__types_error(types_ck *ck, ir_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stc__diags_vadd(ck->d, loc.line, loc.col, fmt, ap);
    va_end(ap);
    ck->failed = true;
}

/* Reports fmt with one or two printed types. */
static void types_report(types_ck *ck, ir_loc loc, const char *fmt, ir_type *x, ir_type *y)
{
    types_names nm = {.n = 0};
    char *sx = types_str(&nm, x);
    char *sy = y ? types_str(&nm, y) : NULL;
    if (!sx || (y && !sy)) ck->oom = true;
    else if (y) stc__diags_add(ck->d, loc.line, loc.col, fmt, sx, sy);
    else stc__diags_add(ck->d, loc.line, loc.col, fmt, sx);
    free(sx);
    free(sy);
    ck->failed = true;
}

ir_type *stc__types_error1(types_ck *ck, ir_loc loc, const char *fmt, ir_type *t)
{
    types_report(ck, loc, fmt, t, NULL);
    return NULL;
}

ir_type *stc__types_fail(types_ck *ck, ir_loc loc, int rc, const char *fmt, ir_type *x, ir_type *y)
{
    const char *origin = ck->u_origin ? ck->u_origin : "this operation";
    switch (rc) {
    case TU_OK:
        break;
    case TU_OOM:
        ck->oom = true;
        break;
    case TU_LIMIT:
        if (!ck->limit_reported) stc__types_error(ck, loc, "types are too large or too deeply nested to check");
        ck->limit_reported = true;
        ck->fatal = true;
        break;
    case TU_OCCURS:
        types_report(ck, loc, "infinite type: %s occurs in %s", ck->u_var, ck->u_type);
        break;
    case TU_FLAG: {
        /* origin is a fixed string ("operator '+'", "'int'"); keep it out of
         * the format string. */
        if (ck->u_flag == (TYF_NUM | TYF_SIZED)) {
            stc__types_error(ck, loc, "a value cannot be both a number (int or float) and a list or str");
            break;
        }
        const char *what = ck->u_flag == TYF_NUM     ? "int or float"
                           : ck->u_flag == TYF_ORD   ? "int, float or str"
                           : ck->u_flag == TYF_SIZED ? "a list or str"
                                                     : "a type without functions";
        types_names nm = {.n = 0};
        char *s = types_str(&nm, ck->u_type);
        if (!s) ck->oom = true;
        else stc__diags_add(ck->d, loc.line, loc.col, "%s needs %s, not %s", origin, what, s);
        free(s);
        ck->failed = true;
        break;
    }
    default:
        types_report(ck, loc, fmt, x, y);
        break;
    }
    ck->u_origin = NULL;
    return NULL;
}

/* ---- Message helpers ---------------------------------------------------------- */

ir_loc stc__types_loc(const ir_expr *e, ir_loc fallback)
{
    return e && e->loc.line > 0 ? e->loc : fallback;
}

ir_loc stc__types_call_loc(const ir_expr *e)
{
    return e->u.call.callee_loc.line > 0 ? e->u.call.callee_loc : e->loc;
}

/* name made safe for use inside a format string: '%' dropped, truncated. */
void stc__types_esc(char *out, size_t n, const char *name)
{
    size_t j = 0;
    for (const char *s = name ? name : "?"; *s && j + 4 < n; s++)
        if (*s != '%') out[j++] = *s;
    if (name && strlen(name) >= n - 4) out[j++] = '.', out[j++] = '.', out[j++] = '.';
    out[j] = '\0';
}

char *stc__types_fmt(const char *pattern, ...)
{
    buf b = BUF_INIT;
    va_list ap;
    va_start(ap, pattern);
    stc__buf_vprintf(&b, pattern, ap);
    va_end(ap);
    return stc__buf_take(&b);
}

/* stc__types_fail with a format built by stc__types_fmt. */
ir_type *stc__types_fail_fmt(types_ck *ck, ir_loc loc, int rc, char *fmt, ir_type *x, ir_type *y)
{
    if (!fmt) { ck->oom = true; return NULL; }
    stc__types_fail(ck, loc, rc, fmt, x, y);
    free(fmt);
    return NULL;
}
