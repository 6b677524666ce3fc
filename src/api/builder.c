/* builder.c - the C builder API: constructs the same IR the parser does.
 *
 * Variables made by the builder get internal names "NAME@N" (unique, and
 * '@' cannot occur in source identifiers), and references to them are
 * IR_NAME nodes, so stc__ir_resolve treats built and parsed programs alike.
 * Errors (NULL children, bad operators, out of memory) are recorded and
 * reported by stc_builder_finish. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/program.h"
#include "value/value.h"

struct stc_builder {
    ir_program *p;   /* NULL after finish */
    stc_diags *d;
    int next_var;
    bool failed;     /* a constructor failed: finish reports an error */
};

struct stc_b_expr { ir_expr e; };   /* never instantiated: stc_b_expr* is an ir_expr* */
struct stc_b_var { ir_var v; };

#define B_EXPR(x) ((stc_b_expr *)(x))
#define B_IR(x) ((ir_expr *)(x))

static const ir_loc builder_loc = {0, 0};

stc_builder *stc_builder_new(stc_env *env)
{
    stc_builder *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->p = stc__ir_program_new("<builder>", env);
    b->d = stc__diags_new("<builder>", NULL, 0);
    if (!b->p || !b->d) {
        stc_builder_free(b);
        return NULL;
    }
    return b;
}

void stc_builder_free(stc_builder *b)
{
    if (!b) return;
    stc__ir_program_free(b->p);
    stc_diags_free(b->d);
    free(b);
}

static stc_b_expr *builder_fail(stc_builder *b, const char *what)
{
    if (b && b->d && !b->failed) stc__diags_add(b->d, 0, 0, "builder: %s", what);
    if (b) b->failed = true;
    return NULL;
}

static bool builder_ready(stc_builder *b) { return b && b->p; }

static ir_expr *builder_node(stc_builder *b, ir_kind kind)
{
    ir_expr *e = stc__ir_expr_new(b->p, kind, builder_loc);
    if (!e) builder_fail(b, "out of memory");
    return e;
}

static stc_b_expr *builder_lit(stc_builder *b, stc_value v)
{
    if (!builder_ready(b)) { val_release(v); return NULL; }
    if (v.tag == STC_T_INVALID) return builder_fail(b, "out of memory");
    ir_expr *e = stc__ir_lit(b->p, v, builder_loc);
    return e ? B_EXPR(e) : builder_fail(b, "out of memory");
}

stc_b_expr *stc_b_int(stc_builder *b, int64_t i) { return builder_lit(b, stc_value_int(i)); }
stc_b_expr *stc_b_float(stc_builder *b, double f) { return builder_lit(b, stc_value_float(f)); }
stc_b_expr *stc_b_bool(stc_builder *b, bool v) { return builder_lit(b, stc_value_bool(v)); }
stc_b_expr *stc_b_unit(stc_builder *b) { return builder_lit(b, stc_value_unit()); }
stc_b_expr *stc_b_str(stc_builder *b, const char *s)
{
    if (!s) return builder_fail(b, "stc_b_str: NULL string");
    return builder_lit(b, stc_value_new_str(s, strlen(s)));
}

/* A fresh binder with a unique internal name. */
static ir_var *builder_var(stc_builder *b, const char *name)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%.120s@%d", name && *name ? name : "v", b->next_var++);
    ir_var *v = stc__ir_var_new(b->p, tmp, builder_loc);
    if (!v) builder_fail(b, "out of memory");
    return v;
}

stc_b_expr *stc_b_ref(stc_builder *b, stc_b_var *var)
{
    if (!builder_ready(b)) return NULL;
    if (!var) return builder_fail(b, "stc_b_ref: NULL variable");
    ir_expr *e = builder_node(b, IR_NAME);
    if (!e) return NULL;
    e->u.name = var->v.name;
    return B_EXPR(e);
}

stc_b_expr *stc_b_let(stc_builder *b, const char *name, stc_b_expr *value,
                      stc_b_expr *(*body)(stc_builder *, stc_b_var *, void *), void *ud)
{
    if (!builder_ready(b)) return NULL;
    if (!value || !body) return builder_fail(b, "stc_b_let: missing value or body");
    ir_var *v = builder_var(b, name);
    ir_expr *e = builder_node(b, IR_LET);
    ir_var **binders = stc__ir_array(b->p, 1, sizeof *binders);
    if (!v || !e || !binders) return builder_fail(b, "out of memory");
    binders[0] = v;
    stc_b_expr *bd = body(b, (stc_b_var *)v, ud);
    if (!bd) return builder_fail(b, "stc_b_let: body is NULL");
    e->u.let.binders = binders;
    e->u.let.nbinders = 1;
    e->a = B_IR(value);
    e->b = B_IR(bd);
    return B_EXPR(e);
}

static stc_b_expr *builder_agg(stc_builder *b, ir_kind kind, size_t n, stc_b_expr *const *items)
{
    if (!builder_ready(b)) return NULL;
    if (kind == IR_TUPLE && n < 2) return builder_fail(b, "stc_b_tuple: a tuple needs at least 2 items");
    if (n > 0 && !items) return builder_fail(b, "NULL item array");
    if (n > (size_t)1 << 30) return builder_fail(b, "too many items");
    ir_expr *e = builder_node(b, kind);
    ir_expr **arr = stc__ir_array(b->p, n, sizeof *arr);
    if (!e || !arr) return builder_fail(b, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!items[i]) return builder_fail(b, "NULL item");
        arr[i] = B_IR(items[i]);
    }
    e->u.agg.items = arr;
    e->u.agg.nitems = (int)n;
    return B_EXPR(e);
}

stc_b_expr *stc_b_tuple(stc_builder *b, size_t n, stc_b_expr *const *items) { return builder_agg(b, IR_TUPLE, n, items); }
stc_b_expr *stc_b_list(stc_builder *b, size_t n, stc_b_expr *const *items) { return builder_agg(b, IR_LIST, n, items); }

/* {keys[i]: vals[i], ...}: like the parser, to_map([(k, v), ...]) with the
 * builtin itself as callee. */
stc_b_expr *stc_b_map(stc_builder *b, size_t n, stc_b_expr *const *keys, stc_b_expr *const *vals)
{
    if (!builder_ready(b)) return NULL;
    if (n > 0 && (!keys || !vals)) return builder_fail(b, "stc_b_map: NULL key or value array");
    if (n > (size_t)1 << 30) return builder_fail(b, "too many items");
    ir_expr **pairs = stc__ir_array(b->p, n, sizeof *pairs);
    if (!pairs) return builder_fail(b, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!keys[i] || !vals[i]) return builder_fail(b, "stc_b_map: NULL key or value");
        stc_b_expr *kv[2] = {keys[i], vals[i]};
        stc_b_expr *pair = builder_agg(b, IR_TUPLE, 2, kv);
        if (!pair) return NULL;
        pairs[i] = B_IR(pair);
    }
    ir_expr *list = builder_node(b, IR_LIST), *call = builder_node(b, IR_CALL);
    ir_expr **args = stc__ir_array(b->p, 1, sizeof *args);
    if (!list || !call || !args) return builder_fail(b, "out of memory");
    list->u.agg.items = pairs;
    list->u.agg.nitems = (int)n;
    args[0] = list;
    call->u.call.kind = CALL_BUILTIN;
    call->u.call.callee.index = BI_TO_MAP;
    call->u.call.args = args;
    call->u.call.nargs = 1;
    return B_EXPR(call);
}

static stc_b_expr *builder_unary(stc_builder *b, ir_kind kind, stc_b_expr *x)
{
    if (!builder_ready(b)) return NULL;
    if (!x) return builder_fail(b, "NULL operand");
    ir_expr *e = builder_node(b, kind);
    if (!e) return NULL;
    e->a = B_IR(x);
    return B_EXPR(e);
}

stc_b_expr *stc_b_inl(stc_builder *b, stc_b_expr *x) { return builder_unary(b, IR_INL, x); }
stc_b_expr *stc_b_inr(stc_builder *b, stc_b_expr *x) { return builder_unary(b, IR_INR, x); }

stc_b_expr *stc_b_binop(stc_builder *b, const char *op, stc_b_expr *l, stc_b_expr *r)
{
    if (!builder_ready(b)) return NULL;
    int found = -1;
    for (int i = OP_OR; op && i <= OP_MOD; i++)
        if (strcmp(op, stc__ir_binop_name((ir_binop)i)) == 0) found = i;
    if (found < 0) return builder_fail(b, "stc_b_binop: unknown operator");
    if (!l || !r) return builder_fail(b, "stc_b_binop: NULL operand");
    ir_expr *e = builder_node(b, IR_BINOP);
    if (!e) return NULL;
    e->u.binop = (ir_binop)found;
    e->a = B_IR(l);
    e->b = B_IR(r);
    return B_EXPR(e);
}

stc_b_expr *stc_b_unop(stc_builder *b, const char *op, stc_b_expr *x)
{
    if (!builder_ready(b)) return NULL;
    if (!op || (strcmp(op, "-") != 0 && strcmp(op, "not") != 0))
        return builder_fail(b, "stc_b_unop: unknown operator");
    stc_b_expr *e = builder_unary(b, IR_UNOP, x);
    if (e) B_IR(e)->u.unop = strcmp(op, "-") == 0 ? OP_NEG : OP_NOT;
    return e;
}

stc_b_expr *stc_b_if(stc_builder *b, stc_b_expr *c, stc_b_expr *t, stc_b_expr *f)
{
    if (!builder_ready(b)) return NULL;
    if (!c || !t || !f) return builder_fail(b, "stc_b_if: NULL operand");
    ir_expr *e = builder_node(b, IR_IF);
    if (!e) return NULL;
    e->a = B_IR(c);
    e->b = B_IR(t);
    e->c = B_IR(f);
    return B_EXPR(e);
}

stc_b_expr *stc_b_call(stc_builder *b, const char *name, size_t n, stc_b_expr *const *args)
{
    if (!builder_ready(b)) return NULL;
    if (!name) return builder_fail(b, "stc_b_call: NULL name");
    if (n > 0 && !args) return builder_fail(b, "stc_b_call: NULL argument array");
    if (n > 255) return builder_fail(b, "stc_b_call: too many arguments");
    ir_expr *e = builder_node(b, IR_CALL);
    ir_expr **arr = stc__ir_array(b->p, n, sizeof *arr);
    const char *nm = stc__arena_strdup(b->p->arena, name);
    if (!e || !arr || !nm) return builder_fail(b, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!args[i]) return builder_fail(b, "stc_b_call: NULL argument");
        arr[i] = B_IR(args[i]);
    }
    e->u.call.kind = CALL_NAME;
    e->u.call.callee.name = nm;
    e->u.call.args = arr;
    e->u.call.nargs = (int)n;
    return B_EXPR(e);
}

stc_b_expr *stc_b_case_sum(stc_builder *b, stc_b_expr *scrutinee,
                           stc_b_expr *(*on_inl)(stc_builder *, stc_b_var *, void *),
                           stc_b_expr *(*on_inr)(stc_builder *, stc_b_var *, void *), void *ud)
{
    if (!builder_ready(b)) return NULL;
    if (!scrutinee || !on_inl || !on_inr) return builder_fail(b, "stc_b_case_sum: NULL operand");
    ir_expr *e = builder_node(b, IR_CASE);
    ir_alt *alts = stc__ir_array(b->p, 2, sizeof *alts);
    if (!e || !alts) return builder_fail(b, "out of memory");
    for (int i = 0; i < 2; i++) {
        ir_var *v = builder_var(b, i == 0 ? "l" : "r");
        ir_var **vars = stc__ir_array(b->p, 1, sizeof *vars);
        if (!v || !vars) return builder_fail(b, "out of memory");
        vars[0] = v;
        stc_b_expr *body = (i == 0 ? on_inl : on_inr)(b, (stc_b_var *)v, ud);
        if (!body) return builder_fail(b, "stc_b_case_sum: NULL branch");
        alts[i] = (ir_alt){.pat = i == 0 ? PAT_INL : PAT_INR, .vars = vars, .nvars = 1, .body = B_IR(body)};
    }
    e->a = B_IR(scrutinee);
    e->u.cas.alts = alts;
    e->u.cas.nalts = 2;
    return B_EXPR(e);
}

stc_b_expr *stc_b_case_lit(stc_builder *b, stc_b_expr *scrutinee, size_t n,
                           stc_b_expr *const *lits, stc_b_expr *const *arms, stc_b_expr *otherwise)
{
    if (!builder_ready(b)) return NULL;
    if (!scrutinee || (n > 0 && (!lits || !arms))) return builder_fail(b, "stc_b_case_lit: NULL operand");
    if (n == 0 && !otherwise) return builder_fail(b, "stc_b_case_lit: no alternatives");
    if (n > (size_t)1 << 20) return builder_fail(b, "stc_b_case_lit: too many alternatives");
    size_t nalts = n + (otherwise ? 1 : 0);
    ir_expr *e = builder_node(b, IR_CASE);
    ir_alt *alts = stc__ir_array(b->p, nalts, sizeof *alts);
    if (!e || !alts) return builder_fail(b, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!lits[i] || !arms[i]) return builder_fail(b, "stc_b_case_lit: NULL alternative");
        if (B_IR(lits[i])->kind != IR_LIT) return builder_fail(b, "stc_b_case_lit: pattern is not a literal");
        /* The literal node's value stays owned by its node (released with
         * the arena); the alternative borrows it. */
        alts[i] = (ir_alt){.pat = PAT_LIT, .lit = B_IR(lits[i])->u.lit, .body = B_IR(arms[i])};
    }
    if (otherwise) alts[n] = (ir_alt){.pat = PAT_WILD, .body = B_IR(otherwise)};
    e->a = B_IR(scrutinee);
    e->u.cas.alts = alts;
    e->u.cas.nalts = (int)nalts;
    return B_EXPR(e);
}

stc_b_expr *stc_b_smap(stc_builder *b, stc_b_expr *list,
                       stc_b_expr *(*body)(stc_builder *, stc_b_var *, void *), void *ud)
{
    if (!builder_ready(b)) return NULL;
    if (!list || !body) return builder_fail(b, "stc_b_smap: NULL operand");
    ir_fun *fn = stc__ir_fun_new(b->p, "<fn>", builder_loc, 1);
    ir_var *x = builder_var(b, "x");
    ir_expr *lam = builder_node(b, IR_LAMBDA);
    if (!fn || !x || !lam) return builder_fail(b, "out of memory");
    fn->params[0] = x;
    stc_b_expr *bd = body(b, (stc_b_var *)x, ud);
    if (!bd) return builder_fail(b, "stc_b_smap: body is NULL");
    fn->body = B_IR(bd);
    lam->u.fn = fn;
    stc_b_expr *args[2] = {B_EXPR(lam), list};
    return stc_b_call(b, "smap", 2, args);
}

int stc_b_fun(stc_builder *b, const char *name, size_t nparams, const char *const *params,
              stc_b_expr *(*body)(stc_builder *, stc_b_var *const *, void *), void *ud)
{
    if (!builder_ready(b)) return STC_EINVAL;
    if (!name || !body || (nparams > 0 && !params) || nparams > 255) {
        builder_fail(b, "stc_b_fun: bad arguments");
        return STC_EINVAL;
    }
    ir_fun *fn = stc__ir_fun_new(b->p, name, builder_loc, (int)nparams);
    if (!fn) { builder_fail(b, "out of memory"); return STC_ENOMEM; }
    for (size_t i = 0; i < nparams; i++) {
        fn->params[i] = builder_var(b, params[i]);
        if (!fn->params[i]) return STC_ENOMEM;
    }
    stc_b_expr *bd = body(b, (stc_b_var *const *)fn->params, ud);
    if (!bd) { builder_fail(b, "stc_b_fun: body is NULL"); return STC_EINVAL; }
    fn->body = B_IR(bd);
    if (stc__ir_add_fun(b->p, fn) != 0) { builder_fail(b, "out of memory"); return STC_ENOMEM; }
    return 0;
}

int stc_b_thread(stc_builder *b, const char *name, const char *fun, stc_b_expr *init)
{
    if (!builder_ready(b)) return STC_EINVAL;
    if (!name || !fun) { builder_fail(b, "stc_b_thread: NULL name"); return STC_EINVAL; }
    ir_thread *t = stc__ir_thread_new(b->p, name, builder_loc);
    const char *target = stc__arena_strdup(b->p->arena, fun);
    if (!t || !target || stc__ir_add_thread(b->p, t) != 0) { builder_fail(b, "out of memory"); return STC_ENOMEM; }
    t->target = target;
    t->init = B_IR(init);
    return 0;
}

int stc_b_main(stc_builder *b, stc_b_expr *body)
{
    if (!builder_ready(b)) return STC_EINVAL;
    if (!body) { builder_fail(b, "stc_b_main: NULL body"); return STC_EINVAL; }
    if (b->p->main) { builder_fail(b, "stc_b_main: main is already set"); return STC_EINVAL; }
    b->p->main = B_IR(body);
    return 0;
}

int stc_builder_finish(stc_builder *b, stc_program **out, stc_diags **diags)
{
    if (diags) *diags = NULL;
    if (!out || !builder_ready(b)) return STC_EINVAL;
    *out = NULL;
    ir_program *p = b->p;
    stc_diags *d = b->d;
    b->p = NULL;
    b->d = NULL;
    return stc__program_finish(p, d, out, diags);
}
