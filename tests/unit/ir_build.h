/* ir_build.h - test-only helpers that build pre-resolve IR by hand (as the
 * parser would), and print types with normalised variable names. */
#ifndef STC_TEST_IR_BUILD_H
#define STC_TEST_IR_BUILD_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/resolve.h"
#include "ir/types.h"
#include "lang/lang.h"
#include "util/diag.h"

static inline ir_loc irb_at(int line, int col) { return (ir_loc){line, col}; }

static inline ir_expr *irb_int(ir_program *p, int64_t i, ir_loc l) { return stc__ir_lit(p, stc_value_int(i), l); }

static inline ir_expr *irb_str(ir_program *p, const char *s, ir_loc l)
{
    return stc__ir_lit(p, stc_value_new_str(s, strlen(s)), l);
}

static inline ir_expr *irb_name(ir_program *p, const char *name, ir_loc l)
{
    ir_expr *e = stc__ir_expr_new(p, IR_NAME, l);
    e->u.name = stc__arena_strdup(p->arena, name);
    return e;
}

static inline ir_expr *irb_bin(ir_program *p, ir_binop op, ir_expr *a, ir_expr *b, ir_loc l)
{
    ir_expr *e = stc__ir_expr_new(p, IR_BINOP, l);
    e->u.binop = op;
    e->a = a;
    e->b = b;
    return e;
}

/* callee(args...), n args given as varargs ir_expr*. */
static inline ir_expr *irb_call(ir_program *p, const char *callee, ir_loc l, int n, ...)
{
    ir_expr *e = stc__ir_expr_new(p, IR_CALL, l);
    e->u.call.kind = CALL_NAME;
    e->u.call.callee.name = stc__arena_strdup(p->arena, callee);
    e->u.call.callee_loc = l;
    e->u.call.nargs = n;
    e->u.call.args = stc__ir_array(p, (size_t)n, sizeof(ir_expr *));
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) e->u.call.args[i] = va_arg(ap, ir_expr *);
    va_end(ap);
    return e;
}

static inline ir_expr *irb_agg(ir_program *p, ir_kind kind, ir_loc l, int n, ...)
{
    ir_expr *e = stc__ir_expr_new(p, kind, l);
    e->u.agg.nitems = n;
    e->u.agg.items = stc__ir_array(p, (size_t)n, sizeof(ir_expr *));
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) e->u.agg.items[i] = va_arg(ap, ir_expr *);
    va_end(ap);
    return e;
}

static inline ir_expr *irb_let(ir_program *p, const char *name, ir_expr *a, ir_expr *b, ir_loc l)
{
    ir_expr *e = stc__ir_expr_new(p, IR_LET, l);
    e->u.let.binders = stc__ir_array(p, 1, sizeof(ir_var *));
    e->u.let.binders[0] = stc__ir_var_new(p, name, l);
    e->u.let.nbinders = 1;
    e->a = a;
    e->b = b;
    return e;
}

/* fun with n parameter names (varargs const char*); body set later. */
static inline ir_fun *irb_fun(ir_program *p, const char *name, ir_loc l, int n, ...)
{
    ir_fun *f = stc__ir_fun_new(p, name, l, n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) f->params[i] = stc__ir_var_new(p, va_arg(ap, const char *), l);
    va_end(ap);
    return f;
}

static inline ir_expr *irb_lambda(ir_program *p, ir_fun *f, ir_loc l)
{
    ir_expr *e = stc__ir_expr_new(p, IR_LAMBDA, l);
    e->u.fn = f;
    return e;
}

static inline ir_thread *irb_thread(ir_program *p, const char *name, const char *target, ir_expr *init,
                                    ir_loc l)
{
    ir_thread *t = stc__ir_thread_new(p, name, l);
    t->target = stc__arena_strdup(p->arena, target);
    t->target_loc = l;
    t->init = init;
    stc__ir_add_thread(p, t);
    return t;
}

/* Prints t with variables renamed 'a, 'b, ... in order of appearance. */
typedef struct irb_names {
    const ir_type *v[32];
    int n;
} irb_names;

static inline void irb_type_put(char *out, size_t cap, irb_names *nm, ir_type *t, bool atom)
{
    size_t len = strlen(out);
    t = stc__ir_type_resolve(t);
#define IRB_PUT(s) snprintf(out + strlen(out), cap - strlen(out), "%s", s)
    if (!t) { IRB_PUT("NULL"); return; }
    (void)len;
    switch (t->kind) {
    case TY_VAR: {
        int i = 0;
        while (i < nm->n && nm->v[i] != t) i++;
        if (i == nm->n && i < 32) nm->v[nm->n++] = t;
        char s[8];
        snprintf(s, sizeof s, "'%c", 'a' + i);
        IRB_PUT(s);
        break;
    }
    case TY_INT: IRB_PUT("int"); break;
    case TY_FLOAT: IRB_PUT("float"); break;
    case TY_BOOL: IRB_PUT("bool"); break;
    case TY_STR: IRB_PUT("str"); break;
    case TY_UNIT: IRB_PUT("unit"); break;
    case TY_LIST:
        IRB_PUT("[");
        irb_type_put(out, cap, nm, t->args[0], false);
        IRB_PUT("]");
        break;
    case TY_TUPLE:
        IRB_PUT("(");
        for (int i = 0; i < t->n; i++) {
            if (i) IRB_PUT(", ");
            irb_type_put(out, cap, nm, t->args[i], false);
        }
        IRB_PUT(")");
        break;
    case TY_MAP:
        IRB_PUT("{");
        irb_type_put(out, cap, nm, t->args[0], false);
        IRB_PUT(": ");
        irb_type_put(out, cap, nm, t->args[1], false);
        IRB_PUT("}");
        break;
    case TY_SUM:
    case TY_FUN:
        if (atom) IRB_PUT("(");
        irb_type_put(out, cap, nm, t->args[0], true);
        IRB_PUT(t->kind == TY_SUM ? " + " : " -> ");
        irb_type_put(out, cap, nm, t->args[1], t->kind == TY_SUM);
        if (atom) IRB_PUT(")");
        break;
    }
#undef IRB_PUT
}

/* Into out (cap bytes); returns out. */
static inline const char *irb_type_str(char *out, size_t cap, ir_type *t)
{
    irb_names nm = {.n = 0};
    out[0] = '\0';
    irb_type_put(out, cap, &nm, t, false);
    return out;
}

/* ---- Compiling source text through parse -> resolve [-> types] ---------- */

typedef struct irb_res {
    ir_program *p;
    stc_diags *d;
    int stage;      /* 0: all passes succeeded; 1 parse, 2 resolve, 3 types failed */
    char msg[512];  /* the first diagnostic as "L:C: message", or "" */
} irb_res;

static inline void irb_compile(irb_res *r, const char *src, const stc_env *env, bool types)
{
    memset(r, 0, sizeof *r);
    r->d = stc__diags_new("t.stc", src, strlen(src));
    r->p = r->d ? stc__lang_parse(src, strlen(src), "t.stc", env, r->d) : NULL;
    if (!r->p || diags_any(r->d)) r->stage = 1;
    else if (stc__ir_resolve(r->p, r->d) != 0) r->stage = 2;
    else if (types && stc__types_check(r->p, r->d) != 0) r->stage = 3;
    if (r->stage && r->d && stc_diags_count(r->d) == 0) snprintf(r->msg, sizeof r->msg, "(no diagnostic)");
    if (r->d && stc_diags_count(r->d) > 0)
        snprintf(r->msg, sizeof r->msg, "%d:%d: %s", stc_diags_line(r->d, 0), stc_diags_col(r->d, 0),
                 stc_diags_message(r->d, 0));
}

static inline void irb_free(irb_res *r)
{
    stc__ir_program_free(r->p);
    stc_diags_free(r->d);
}

/* Diagnostic i as "L:C: message" into out. */
static inline const char *irb_diag(const irb_res *r, size_t i, char *out, size_t cap)
{
    snprintf(out, cap, "%d:%d: %s", stc_diags_line(r->d, i), stc_diags_col(r->d, i),
             stc_diags_message(r->d, i));
    return out;
}

/* The first diagnostic of compiling src ("" when it compiles). */
#define CHECK_COMPILE(src, types, expect)                                                   \
    do {                                                                                    \
        irb_res r_;                                                                         \
        irb_compile(&r_, src, NULL, types);                                                 \
        CHECK_STR(r_.msg, expect);                                                          \
        irb_free(&r_);                                                                      \
    } while (0)

#endif
