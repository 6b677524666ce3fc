/* test_eval.c - the reference evaluator on hand-built IR (slots set by
 * hand, as stc__ir_resolve would): core semantics, error reports, C threads,
 * closures, recursion, the depth limit and its C stack cost.  Programs
 * from source text are in test_eval_lang.c. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval/eval.h"
#include "ir/ir.h"
#include "test.h"
#include "value/result.h"
#include "value/value.h"

/* ---- IR construction helpers ---------------------------------------------- */

static ir_loc at(int line, int col) { return (ir_loc){line, col}; }

static ir_expr *h_lit(ir_program *p, stc_value v) { return stc__ir_lit(p, v, at(0, 0)); }
static ir_expr *h_int(ir_program *p, int64_t i) { return h_lit(p, stc_value_int(i)); }

static ir_expr *h_var(ir_program *p, ir_var *v)
{
    ir_expr *e = stc__ir_expr_new(p, IR_VAR, v->loc);
    e->u.var = v;
    return e;
}

static ir_expr *h_bin(ir_program *p, ir_binop op, ir_expr *a, ir_expr *b, int line, int col)
{
    ir_expr *e = stc__ir_expr_new(p, IR_BINOP, at(line, col));
    e->u.binop = op;
    e->a = a;
    e->b = b;
    return e;
}

static ir_expr *h_if(ir_program *p, ir_expr *c, ir_expr *t, ir_expr *f)
{
    ir_expr *e = stc__ir_expr_new(p, IR_IF, at(0, 0));
    e->a = c;
    e->b = t;
    e->c = f;
    return e;
}

static ir_expr **h_items(ir_program *p, int n, va_list ap)
{
    ir_expr **items = stc__ir_array(p, (size_t)n, sizeof *items);
    for (int i = 0; i < n; i++) items[i] = va_arg(ap, ir_expr *);
    return items;
}

/* A call of kind k to index idx (or to the local var for CALL_VALUE). */
static ir_expr *h_call(ir_program *p, ir_callee_kind k, int idx, ir_var *var, int line, int col, int n, ...)
{
    ir_expr *e = stc__ir_expr_new(p, IR_CALL, at(line, col));
    e->u.call.kind = k;
    if (k == CALL_VALUE) e->u.call.callee.var = var;
    else e->u.call.callee.index = idx;
    e->u.call.callee_loc = at(line, col);
    va_list ap;
    va_start(ap, n);
    e->u.call.args = h_items(p, n, ap);
    va_end(ap);
    e->u.call.nargs = n;
    return e;
}

static ir_expr *h_seq(ir_program *p, ir_kind kind, int n, ...)
{
    ir_expr *e = stc__ir_expr_new(p, kind, at(0, 0));
    va_list ap;
    va_start(ap, n);
    e->u.agg.items = h_items(p, n, ap);
    va_end(ap);
    e->u.agg.nitems = n;
    return e;
}

static ir_expr *h_ref(ir_program *p, ir_kind kind, int index)
{
    ir_expr *e = stc__ir_expr_new(p, kind, at(0, 0));
    e->u.index = index;
    return e;
}

/* A function whose params take slots 0..n-1 (after ncaps captures) and
 * whose frame has nslots slots; top-level when top. */
static ir_fun *h_fun(ir_program *p, const char *name, int nparams, int ncaps, int nslots, bool top)
{
    ir_fun *f = stc__ir_fun_new(p, name, at(1, 1), nparams);
    for (int i = 0; i < nparams; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "p%d", i);
        f->params[i] = stc__ir_var_new(p, nm, at(1, 1));
        f->params[i]->slot = ncaps + i;
        f->params[i]->owner = f;
    }
    f->nslots = nslots;
    f->ncaptures = ncaps;
    if (ncaps) f->captures = stc__ir_array(p, (size_t)ncaps, sizeof *f->captures);
    if (top) stc__ir_add_fun(p, f);
    return f;
}

static ir_expr *h_lambda(ir_program *p, ir_fun *fn)
{
    ir_expr *e = stc__ir_expr_new(p, IR_LAMBDA, at(0, 0));
    e->u.fn = fn;
    return e;
}

static ir_thread *h_thread(ir_program *p, const char *name, int fun, ir_expr *init)
{
    ir_thread *t = stc__ir_thread_new(p, name, at(2, 1));
    t->kind = THREAD_LANG;
    t->fun = fun;
    t->ninputs = p->funs[fun]->nparams - 1;
    t->init = init;
    stc__ir_add_thread(p, t);
    return t;
}

/* fun NAME(x, s) = (x OP1 a, s + b) */
static int h_stepfun(ir_program *p, const char *name, ir_binop op, int64_t a, int64_t b)
{
    ir_fun *f = h_fun(p, name, 2, 0, 2, true);
    f->body = h_seq(p, IR_TUPLE, 2, h_bin(p, op, h_var(p, f->params[0]), h_int(p, a), 1, 20),
                    h_bin(p, OP_ADD, h_var(p, f->params[1]), h_int(p, b), 1, 30));
    return f->index;
}

static stc_result *h_run(ir_program *p, int *rc)
{
    const char *names[16];
    for (int i = 0; i < p->nthreads && i < 16; i++) names[i] = p->threads[i]->name;
    stc_result *res = stc__result_new((size_t)p->nthreads, names);
    *rc = stc__eval_run(p, res);
    return res;
}

static char *h_text(stc_value v) { return stc_value_to_text(v); }

/* Runs p and checks the result text and every state's text ("0, 3"). */
static void h_expect(ir_program *p, const char *value, const char *states)
{
    int rc;
    stc_result *res = h_run(p, &rc);
    CHECK_INT(rc, 0);
    if (rc) fprintf(stderr, "  error: %s\n", res->err.message ? res->err.message : "?");
    char *t = h_text(res->value);
    CHECK_STR(t, value);
    free(t);
    char all[512] = "";
    for (size_t i = 0; i < res->nstates; i++) {
        char *s = h_text(res->states[i]);
        if (i) strcat(all, ", ");
        if (s && strlen(all) + strlen(s) < 400) strcat(all, s);
        free(s);
    }
    CHECK_STR(all, states);
    stc_result_free(res);
}

/* Runs p and checks the error (message, line, col, thread or NULL, item). */
static void h_expect_error(ir_program *p, int code, const char *msg, int line, int col,
                           const char *thread, long long item)
{
    int rc;
    stc_result *res = h_run(p, &rc);
    CHECK_INT(rc, code);
    CHECK_INT(res->err.code, code);
    CHECK_STR(res->err.message, msg);
    CHECK_INT(res->err.line, line);
    CHECK_INT(res->err.col, col);
    if (thread) CHECK_STR(res->err.thread, thread);
    else CHECK(res->err.thread == NULL);
    CHECK_INT(res->err.item, item);
    CHECK(res->value.tag == STC_T_INVALID);
    for (size_t i = 0; i < res->nstates; i++) CHECK(res->states[i].tag == STC_T_UNIT);
    stc_result_free(res);
}

/* ---- Tests ---------------------------------------------------------------- */

/* DESIGN.md example 1, built by hand. */
TEST(eval_hand_example1)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    int foo = h_stepfun(p, "foo", OP_ADD, 2, 2);
    int bar = h_stepfun(p, "bar", OP_MUL, 3, 3);
    h_thread(p, "f", foo, h_int(p, 0));
    h_thread(p, "g", bar, h_int(p, 0));
    ir_fun *lam = h_fun(p, "<fn>", 1, 0, 1, false);
    lam->body = h_call(p, CALL_THREAD, 1, NULL, 5, 20, 1,
                       h_call(p, CALL_THREAD, 0, NULL, 5, 22, 1, h_var(p, lam->params[0])));
    p->main = h_call(p, CALL_BUILTIN, BI_SMAP, NULL, 5, 8, 2, h_lambda(p, lam),
                     h_seq(p, IR_LIST, 2, h_int(p, 10), h_int(p, 10)));
    h_expect(p, "[36, 36]", "4, 6");
    stc__ir_program_free(p);
}

static ir_program *h_binop_prog(ir_binop op, stc_value a, stc_value b)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    p->main = h_bin(p, op, h_lit(p, a), h_lit(p, b), 3, 9);
    return p;
}

static void h_check_binop(ir_binop op, stc_value a, stc_value b, const char *want)
{
    ir_program *p = h_binop_prog(op, a, b);
    h_expect(p, want, "");
    stc__ir_program_free(p);
}

TEST(eval_hand_int_arith)
{
    h_check_binop(OP_ADD, stc_value_int(INT64_MAX), stc_value_int(1), "-9223372036854775808");
    h_check_binop(OP_SUB, stc_value_int(INT64_MIN), stc_value_int(1), "9223372036854775807");
    h_check_binop(OP_MUL, stc_value_int(INT64_MAX), stc_value_int(2), "-2");
    h_check_binop(OP_MUL, stc_value_int(INT64_MIN), stc_value_int(-1), "-9223372036854775808");
    h_check_binop(OP_DIV, stc_value_int(INT64_MIN), stc_value_int(-1), "-9223372036854775808");
    h_check_binop(OP_MOD, stc_value_int(INT64_MIN), stc_value_int(-1), "0");
    h_check_binop(OP_DIV, stc_value_int(-7), stc_value_int(2), "-3");
    h_check_binop(OP_MOD, stc_value_int(-7), stc_value_int(2), "-1");
    h_check_binop(OP_MOD, stc_value_int(7), stc_value_int(-2), "1");
    h_check_binop(OP_DIV, stc_value_float(1), stc_value_float(0), "inf");
    h_check_binop(OP_MOD, stc_value_float(7.5), stc_value_float(2), "1.5");
    h_check_binop(OP_LT, stc_value_float(NAN), stc_value_float(1), "false");
    h_check_binop(OP_GE, stc_value_float(NAN), stc_value_float(NAN), "false");
    h_check_binop(OP_NE, stc_value_float(NAN), stc_value_float(NAN), "true");
    h_check_binop(OP_LE, stc_value_new_str("ab", 2), stc_value_new_str("b", 1), "true");
    h_check_binop(OP_GT, stc_value_new_str("ab", 2), stc_value_new_str("a", 1), "true");
    h_check_binop(OP_EQ, stc_value_new_str("ab", 2), stc_value_new_str("ab", 2), "true");
}

TEST(eval_hand_division_errors)
{
    ir_program *p = h_binop_prog(OP_DIV, stc_value_int(1), stc_value_int(0));
    h_expect_error(p, STC_ERUNTIME, "division by zero", 3, 9, NULL, -1);
    stc__ir_program_free(p);
    p = h_binop_prog(OP_MOD, stc_value_int(1), stc_value_int(0));
    h_expect_error(p, STC_ERUNTIME, "modulo by zero", 3, 9, NULL, -1);
    stc__ir_program_free(p);
}

/* fun mk(a) = fn x => x + a; main = let g = mk(5) in g(10): a closure
 * capturing a parameter, called through CALL_VALUE. */
TEST(eval_hand_closure)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    ir_fun *mk = h_fun(p, "mk", 1, 0, 1, true);
    ir_fun *lam = h_fun(p, "<fn>", 1, 1, 2, false);
    lam->captures[0] = mk->params[0];
    ir_var *cap = stc__ir_var_new(p, "a", at(1, 1));
    cap->slot = 0;
    lam->body = h_bin(p, OP_ADD, h_var(p, lam->params[0]), h_var(p, cap), 1, 20);
    mk->body = h_lambda(p, lam);
    ir_var *g = stc__ir_var_new(p, "g", at(2, 5));
    g->slot = 0;
    ir_expr *let = stc__ir_expr_new(p, IR_LET, at(2, 1));
    let->u.let.binders = stc__ir_array(p, 1, sizeof(ir_var *));
    let->u.let.binders[0] = g;
    let->u.let.nbinders = 1;
    let->a = h_call(p, CALL_FUN, mk->index, NULL, 2, 9, 1, h_int(p, 5));
    let->b = h_seq(p, IR_TUPLE, 2, h_call(p, CALL_VALUE, 0, g, 2, 20, 1, h_int(p, 10)),
                   h_call(p, CALL_VALUE, 0, g, 2, 30, 1, h_int(p, 100)));
    p->main = let;
    p->main_nslots = 1;
    h_expect(p, "(15, 105)", "");
    stc__ir_program_free(p);
}

/* fun down(n) = if n == 0 then 0 else 1 + down(n - 1) */
static ir_program *h_down_prog(int64_t n)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    ir_fun *f = h_fun(p, "down", 1, 0, 1, true);
    ir_var *x = f->params[0];
    f->body = h_if(p, h_bin(p, OP_EQ, h_var(p, x), h_int(p, 0), 1, 20), h_int(p, 0),
                   h_bin(p, OP_ADD, h_int(p, 1),
                         h_call(p, CALL_FUN, f->index, NULL, 1, 40, 1,
                                h_bin(p, OP_SUB, h_var(p, x), h_int(p, 1), 1, 50)),
                         1, 30));
    p->main = h_call(p, CALL_FUN, f->index, NULL, 3, 8, 1, h_int(p, n));
    return p;
}

TEST(eval_hand_recursion)
{
    ir_program *p = h_down_prog(1000);
    h_expect(p, "1000", "");
    stc__ir_program_free(p);
    p = h_down_prog(1000000);
    h_expect_error(p, STC_ELIMIT, "call depth limit exceeded", 1, 40, NULL, -1);
    stc__ir_program_free(p);
}

/* ---- The C stack cost of the depth limit --------------------------------- */

typedef struct h_stack_job {
    ir_program *p;
    int rc;
} h_stack_job;

static void *h_stack_run(void *arg)
{
    h_stack_job *j = arg;
    stc_result *res = h_run(j->p, &j->rc);
    stc_result_free(res);
    return NULL;
}

/* Runs p on a thread with a stack of `size` bytes pre-filled with a
 * pattern; returns the bytes of stack the run touched. */
static size_t h_stack_used(ir_program *p, size_t size, int *rc)
{
    char *stack = malloc(size);
    memset(stack, 0xA5, size);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, size);
    h_stack_job j = {p, 0};
    pthread_t t;
    CHECK_INT(pthread_create(&t, &attr, h_stack_run, &j), 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    size_t untouched = 0;
    while (untouched < size && (unsigned char)stack[untouched] == 0xA5) untouched++;
    free(stack);
    *rc = j.rc;
    return size - untouched;
}

/* fun r(n) = if n == 0 then 0 else nth(smap(fn x => r(x), [n - 1]), 0) + 1:
 * recursion through smap, the costliest path per depth unit. */
static ir_program *h_smap_rec_prog(int64_t n)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    ir_fun *f = h_fun(p, "r", 1, 0, 1, true);
    ir_fun *lam = h_fun(p, "<fn>", 1, 0, 1, false);
    lam->body = h_call(p, CALL_FUN, f->index, NULL, 1, 60, 1, h_var(p, lam->params[0]));
    ir_expr *sm = h_call(p, CALL_BUILTIN, BI_SMAP, NULL, 1, 40, 2, h_lambda(p, lam),
                         h_seq(p, IR_LIST, 1, h_bin(p, OP_SUB, h_var(p, f->params[0]), h_int(p, 1), 1, 70)));
    f->body = h_if(p, h_bin(p, OP_EQ, h_var(p, f->params[0]), h_int(p, 0), 1, 20), h_int(p, 0),
                   h_bin(p, OP_ADD, h_call(p, CALL_BUILTIN, BI_NTH, NULL, 1, 30, 2, sm, h_int(p, 0)),
                         h_int(p, 1), 1, 35));
    p->main = h_call(p, CALL_FUN, f->index, NULL, 3, 8, 1, h_int(p, n));
    return p;
}

/* The limit must stop every recursion well inside a 2 MiB worker stack
 * (with ASan's bigger frames too): recursion to the limit is measured on
 * a thread whose stack is big enough to see the real use. */
static void h_check_stack(const char *what, ir_program *(*mk)(int64_t), int64_t ok_n)
{
    int rc;
    ir_program *p = mk(ok_n);
    (void)h_stack_used(p, (size_t)16 << 20, &rc);
    CHECK_INT(rc, 0);
    stc__ir_program_free(p);
    p = mk(100000000);
    size_t big = h_stack_used(p, (size_t)2 << 20, &rc); /* a 2 MiB worker stack */
    CHECK_INT(rc, STC_ELIMIT);
    stc__ir_program_free(p);
    /* Only one segment is on the first stack. */
    if (getenv("STC_EVAL_STACK_REPORT"))
        fprintf(stderr, "  eval stack (%s): %zu bytes used on the first stack\n", what, big);
    CHECK(big < ((size_t)2 << 20) * 3 / 4);
}

TEST(eval_depth_limit_stack)
{
    h_check_stack("down", h_down_prog, 500);
    h_check_stack("smap", h_smap_rec_prog, 100);
}

/* smap over a function name and over a thread name; 2-param function
 * items are destructured; an error inside names thread and item. */
TEST(eval_hand_smap_refs)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    int foo = h_stepfun(p, "foo", OP_DIV, 2, 1);  /* (x / 2, s + 1) */
    ir_fun *add = h_fun(p, "add", 2, 0, 2, true); /* add(a, b) = a - b */
    add->body = h_bin(p, OP_SUB, h_var(p, add->params[0]), h_var(p, add->params[1]), 1, 9);
    h_thread(p, "f", foo, h_int(p, 0));
    ir_expr *pairs = h_seq(p, IR_LIST, 2, h_seq(p, IR_TUPLE, 2, h_int(p, 5), h_int(p, 1)),
                           h_seq(p, IR_TUPLE, 2, h_int(p, 7), h_int(p, 10)));
    p->main = h_seq(p, IR_TUPLE, 2,
                    h_call(p, CALL_BUILTIN, BI_SMAP, NULL, 4, 1, 2, h_ref(p, IR_FUNREF, add->index), pairs),
                    h_call(p, CALL_BUILTIN, BI_SMAP, NULL, 4, 30, 2, h_ref(p, IR_THREADREF, 0),
                           h_seq(p, IR_LIST, 3, h_int(p, 8), h_int(p, 9), h_int(p, -4))));
    h_expect(p, "([4, -3], [4, 4, -2])", "3");
    stc__ir_program_free(p);

    /* the same with a zero in the thread's input list: x / 0 in foo */
    p = stc__ir_program_new("t.stc", NULL);
    foo = h_stepfun(p, "foo", OP_DIV, 0, 1);
    h_thread(p, "f", foo, h_int(p, 0));
    p->main = h_call(p, CALL_BUILTIN, BI_SMAP, NULL, 4, 30, 2, h_ref(p, IR_THREADREF, 0),
                     h_seq(p, IR_LIST, 3, h_int(p, 8), h_int(p, 9), h_int(p, -4)));
    h_expect_error(p, STC_ERUNTIME, "division by zero", 1, 20, "f", 0);
    stc__ir_program_free(p);
}

/* ---- C threads -------------------------------------------------------------- */

typedef struct h_counter {
    int64_t sum;
} h_counter;

typedef struct h_counts {
    int inits, frees;
    int fail_init, fail_final;
    stc_thread_def def;
} h_counts;

static int h_counter_init(void *state, const stc_value *init, void *user)
{
    h_counts *c = user;
    if (c->fail_init) return STC_EINVAL;
    c->inits++;
    ((h_counter *)state)->sum = init ? init->as.i : 100;
    return 0;
}

static void h_counter_free(void *state, void *user)
{
    (void)state;
    ((h_counts *)user)->frees++;
}

static int h_counter_final(const void *state, stc_value *out, void *user)
{
    if (((h_counts *)user)->fail_final) return STC_ERANGE;
    *out = stc_value_int(((const h_counter *)state)->sum);
    return 0;
}

/* in: int (order-sensitive sum) or (int, int) (adds both); -1 fails with a
 * message, -2 without, -3 returns a str (the wrong type). */
static int h_counter_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    h_counter *s = state;
    CHECK(stc_ctx_user(cx) != NULL);
    int64_t x;
    if (in->tag == STC_T_TUPLE) x = stc_value_at(*in, 0).as.i + stc_value_at(*in, 1).as.i;
    else x = in->as.i;
    if (x == -1) return stc_ctx_error(cx, "negative input %lld", (long long)x);
    if (x == -2) return STC_EINVAL;
    if (x == -3) {
        *out = stc_value_new_str("oops", 4);
        return 0;
    }
    s->sum = s->sum * 10 + x;
    *out = stc_value_int(s->sum);
    return 0;
}

static const stc_thread_def *h_counter_def(h_counts *counts)
{
    counts->def = (stc_thread_def){.name = "counter", .fn = h_counter_fn, .type = "int -> int",
                           .state_type = "int", .state_size = sizeof(h_counter),
                           .state_init = h_counter_init, .state_free = h_counter_free,
                           .state_to_value = h_counter_final, .access = STC_WRITES, .user = counts};
    return &counts->def;
}

/* thread c = counter [init 1]; main = (c(a), c(b)) (or c(a, b) when pair) */
static ir_program *h_c_prog(h_counts *counts, bool init, int64_t a, int64_t b, bool pair)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    ir_thread *t = stc__ir_thread_new(p, "c", at(2, 1));
    t->kind = THREAD_C;
    t->cdef = h_counter_def(counts);
    t->ninputs = 1;
    t->init = init ? h_int(p, 1) : NULL;
    t->out_type = stc__ir_type_new(p, TY_INT, 0);
    stc__ir_add_thread(p, t);
    if (pair)
        p->main = h_call(p, CALL_THREAD, 0, NULL, 4, 2, 2, h_int(p, a), h_int(p, b));
    else
        p->main = h_seq(p, IR_TUPLE, 2, h_call(p, CALL_THREAD, 0, NULL, 4, 2, 1, h_int(p, a)),
                        h_call(p, CALL_THREAD, 0, NULL, 4, 9, 1, h_int(p, b)));
    return p;
}

TEST(eval_hand_c_thread)
{
    h_counts counts = {0};
    ir_program *p = h_c_prog(&counts, true, 2, 3, false);
    h_expect(p, "(12, 123)", "123");
    stc__ir_program_free(p);
    CHECK_INT(counts.inits, 1);
    CHECK_INT(counts.frees, 1);

    counts = (h_counts){0};
    p = h_c_prog(&counts, false, 2, 3, false); /* no init: state_init gets NULL */
    h_expect(p, "(1002, 10023)", "10023");
    stc__ir_program_free(p);
    CHECK_INT(counts.frees, 1);

    counts = (h_counts){0};
    p = h_c_prog(&counts, true, 2, 3, true); /* c(2, 3): the tuple (2, 3) */
    h_expect(p, "15", "15");
    stc__ir_program_free(p);
    CHECK_INT(counts.frees, 1);
}

TEST(eval_hand_c_thread_errors)
{
    h_counts counts = {0};
    ir_program *p = h_c_prog(&counts, true, 2, -1, false);
    h_expect_error(p, STC_ERUNTIME, "thread 'c' failed: negative input -1", 4, 9, "c", -1);
    stc__ir_program_free(p);
    CHECK_INT(counts.frees, 1);

    counts = (h_counts){0};
    p = h_c_prog(&counts, true, -2, 1, false);
    h_expect_error(p, STC_ERUNTIME, "thread 'c' failed: invalid argument", 4, 2, "c", -1);
    stc__ir_program_free(p);
    CHECK_INT(counts.frees, 1);

    counts = (h_counts){0};
    p = h_c_prog(&counts, true, 1, -3, false);
    h_expect_error(p, STC_ERUNTIME, "thread 'c' returned a value of the wrong type", 4, 9, "c", -1);
    stc__ir_program_free(p);
    CHECK_INT(counts.frees, 1);

    counts = (h_counts){.fail_init = 1};
    p = h_c_prog(&counts, true, 1, 2, false);
    h_expect_error(p, STC_ERUNTIME, "thread 'c' failed to initialise: invalid argument", 2, 1, "c", -1);
    stc__ir_program_free(p);
    CHECK_INT(counts.frees, 0);

    counts = (h_counts){.fail_final = 1};
    p = h_c_prog(&counts, true, 1, 2, false);
    h_expect_error(p, STC_ERUNTIME, "thread 'c' failed to produce its final state: out of range", 2, 1,
                   "c", -1);
    stc__ir_program_free(p);
    CHECK_INT(counts.frees, 1);
}

/* A lang thread of two inputs: t(a, b) directly and through smap over
 * pairs (destructured); fun step(a, b, s) = (a - b + s, s + 1). */
TEST(eval_hand_thread_two_inputs)
{
    ir_program *p = stc__ir_program_new("t.stc", NULL);
    ir_fun *f = h_fun(p, "step", 3, 0, 3, true);
    ir_expr *ab = h_bin(p, OP_SUB, h_var(p, f->params[0]), h_var(p, f->params[1]), 1, 5);
    f->body = h_seq(p, IR_TUPLE, 2, h_bin(p, OP_ADD, ab, h_var(p, f->params[2]), 1, 6),
                    h_bin(p, OP_ADD, h_var(p, f->params[2]), h_int(p, 1), 1, 7));
    h_thread(p, "t", f->index, h_int(p, 10));
    ir_expr *pairs = h_seq(p, IR_LIST, 2, h_seq(p, IR_TUPLE, 2, h_int(p, 5), h_int(p, 1)),
                           h_seq(p, IR_TUPLE, 2, h_int(p, 7), h_int(p, 10)));
    p->main = h_seq(p, IR_TUPLE, 3, h_call(p, CALL_THREAD, 0, NULL, 3, 1, 2, h_int(p, 1), h_int(p, 2)),
                    h_call(p, CALL_BUILTIN, BI_SMAP, NULL, 3, 9, 2, h_ref(p, IR_THREADREF, 0), pairs),
                    h_call(p, CALL_THREAD, 0, NULL, 3, 1, 1, h_seq(p, IR_TUPLE, 2, h_int(p, 0), h_int(p, 0))));
    h_expect(p, "(9, [15, 9], 13)", "14");
    stc__ir_program_free(p);
}
