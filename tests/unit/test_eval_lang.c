/* test_eval_lang.c - the reference evaluator on programs from source text:
 * stc__lang_parse -> stc__ir_resolve -> stc__types_check -> stc__eval_run.  Exact results,
 * final states and runtime error reports (message, line:col, thread,
 * smap item).  Leaks on every path are caught by running under ASan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/env.h"
#include "eval/eval.h"
#include "eval/eval_internal.h"
#include "ir/resolve.h"
#include "ir/types.h"
#include "lang/lang.h"
#include "test.h"
#include "util/diag.h"
#include "value/result.h"
#include "value/value.h"

/* Compiles src; NULL (after reporting the diagnostics) if it does not. */
static ir_program *l_compile(stc_env *env, const char *src, int line)
{
    size_t len = strlen(src);
    stc_diags *d = stc__diags_new("t.stc", src, len);
    ir_program *p = d ? stc__lang_parse(src, len, "t.stc", env, d) : NULL;
    if (p && !diags_any(d)) stc__ir_resolve(p, d);
    if (p && !diags_any(d)) stc__types_check(p, d);
    if (!p || diags_any(d)) {
        char *msg = d ? stc_diags_format(d) : NULL;
        test_fail(__FILE__, line, "does not compile: %s", msg ? msg : "(out of memory)");
        free(msg);
        stc__ir_program_free(p);
        p = NULL;
    }
    stc_diags_free(d);
    return p;
}

static stc_result *l_run(stc_env *env, const char *src, int line, int *rc)
{
    ir_program *p = l_compile(env, src, line);
    if (!p) return NULL;
    const char *names[64];
    for (int i = 0; i < p->nthreads && i < 64; i++) names[i] = p->threads[i]->name;
    stc_result *res = stc__result_new((size_t)p->nthreads, names);
    *rc = stc__eval_run(p, res);
    stc__ir_program_free(p);
    return res;
}

/* The states as "a = 1, b = 2". */
static void l_states(const stc_result *res, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i < res->nstates; i++) {
        char *s = stc_value_to_text(res->states[i]);
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s%s = %s", i ? ", " : "", res->names[i], s ? s : "?");
        free(s);
    }
}

static void l_expect_env(stc_env *env, const char *src, const char *value, const char *states, int line)
{
    int rc = 0;
    stc_result *res = l_run(env, src, line, &rc);
    if (!res) return;
    if (rc != 0) {
        test_fail(__FILE__, line, "run failed (%d): %s at %d:%d", rc,
                  res->err.message ? res->err.message : "?", res->err.line, res->err.col);
    } else {
        char *v = stc_value_to_text(res->value);
        char st[1024];
        l_states(res, st, sizeof st);
        if (!v || strcmp(v, value) != 0)
            test_fail(__FILE__, line, "result %s, expected %s", v ? v : "(null)", value);
        if (states && strcmp(st, states) != 0)
            test_fail(__FILE__, line, "states \"%s\", expected \"%s\"", st, states);
        free(v);
    }
    stc_result_free(res);
}

static void l_expect_error_env(stc_env *env, const char *src, int code, const char *msg, int eline,
                               int ecol, const char *thread, long long item, int line)
{
    int rc = 0;
    stc_result *res = l_run(env, src, line, &rc);
    if (!res) return;
    const stc_error_info *e = &res->err;
    if (rc != code || e->code != code || !e->message || strcmp(e->message, msg) != 0 ||
        e->line != eline || e->col != ecol || e->item != item ||
        (thread ? !e->thread || strcmp(e->thread, thread) != 0 : e->thread != NULL))
        test_fail(__FILE__, line, "error %d \"%s\" at %d:%d thread %s item %lld; expected %d \"%s\" at %d:%d thread %s item %lld",
                  rc, e->message ? e->message : "(none)", e->line, e->col, e->thread ? e->thread : "-",
                  e->item, code, msg, eline, ecol, thread ? thread : "-", item);
    CHECK(res->value.tag == STC_T_INVALID);
    for (size_t i = 0; i < res->nstates; i++) CHECK(res->states[i].tag == STC_T_UNIT);
    stc_result_free(res);
}

#define EXPECT(src, value, states) l_expect_env(NULL, src, value, states, __LINE__)
#define EXPECT_ERR(src, code, msg, l, c, thread, item) \
    l_expect_error_env(NULL, src, code, msg, l, c, thread, item, __LINE__)

#define FOO_BAR                                                                                  \
    "fun foo(x, s) = (x + 2, s + 2)\n"                                                           \
    "fun bar(x, s) = (x * 3, s + 3)\n"

/* ---- DESIGN.md section 3 and the brief's scenarios ---------------------------- */

TEST(eval_design_examples)
{
    EXPECT(FOO_BAR "thread f = foo init 0\n"
                   "thread g = bar init 0\n"
                   "main = smap(fn x => g(f(x)), [10, 10])\n",
           "[36, 36]", "f = 4, g = 6");
    EXPECT(FOO_BAR "thread f  = foo init 0\n"
                   "thread b1 = bar init 0\n"
                   "thread b2 = bar init 0\n"
                   "main = smap(fn x => let y = f(x) in case y of 4 => b1(y) | 8 => b2(y), [2, 6])\n",
           "[12, 24]", "f = 4, b1 = 3, b2 = 3");
    EXPECT("fun acc(x, s) = (s * 10 + x, s * 10 + x)     -- order-sensitive state\n"
           "thread a = acc init 0\n"
           "main = smap(fn x => a(a(x)), [1, 2])          -- the same thread twice per item\n",
           "[11, 1232]", "a = 1232");
}

TEST(eval_scenarios)
{
    EXPECT(FOO_BAR "thread f = foo init 0\nthread g = bar init 0\nmain = g(f(10))\n", "36",
           "f = 2, g = 3");
    const char *cased = FOO_BAR "thread f = foo init 0\nthread b1 = bar init 0\nthread b2 = bar init 0\n"
                                "main = let y = f(%d) in case y of 4 => b1(y) | 8 => b2(y)\n";
    char src[512];
    snprintf(src, sizeof src, cased, 2);
    EXPECT(src, "12", "f = 2, b1 = 3, b2 = 0");
    snprintf(src, sizeof src, cased, 6);
    EXPECT(src, "24", "f = 2, b1 = 0, b2 = 3");
    EXPECT("fun inc(x, s) = (x, s + 3.34)\nthread t = inc init 2.5\nmain = t(1)\n", "1", "t = 5.84");
    /* smap over [] then over [len(previous)] */
    EXPECT(FOO_BAR "thread f = foo init 0\n"
                   "main = let a = smap(fn x => f(x), []) in smap(fn n => f(n), [len(a)])\n",
           "[2]", "f = 2");
    EXPECT(FOO_BAR "thread f = foo init 0\n"
                   "main = smap(fn xs => smap(fn x => f(x), xs), [[], [1, 2, 3]])\n",
           "[[], [3, 4, 5]]", "f = 6");
    EXPECT(FOO_BAR "thread f = foo init 0\n"
                   "main = smap(fn xs => len(smap(fn x => f(x), xs)), [[], [1, 2, 3]])\n",
           "[0, 3]", "f = 6");
    EXPECT("main = smap(fn x => x, [])\n", "[]", "");
}

/* ---- Core semantics ------------------------------------------------------------ */

TEST(eval_arith_and_compare)
{
    EXPECT("main = (1 + 2 * 3, 7 / 2, -7 / 2, -7 % 2, 7 % -2, 2 - 5)\n", "(7, 3, -3, -1, 1, -3)", "");
    EXPECT("main = (9223372036854775807 + 1, -9223372036854775808 - 1, 4611686018427387904 * 4)\n",
           "(-9223372036854775808, 9223372036854775807, 0)", "");
    EXPECT("main = (-9223372036854775808 / -1, -9223372036854775808 % -1, -(-9223372036854775808))\n",
           "(-9223372036854775808, 0, -9223372036854775808)", "");
    EXPECT("main = (1.5 + 2.25, 1.0 / 0.0, 7.5 % 2.0, -(0.5), 0.1 + 0.2)\n",
           "(3.75, inf, 1.5, -0.5, 0.30000000000000004)", "");
    EXPECT("main = (1 < 2, 2 <= 2, 3 > 4, 4 >= 5, \"ab\" < \"b\", \"b\" > \"ab\", 1.5 < 2.5)\n",
           "(true, true, false, false, true, true, true)", "");
    EXPECT("main = ([1, 2] == [1, 2], (1, \"a\") != (1, \"b\"), inl 1 == inl 1, [[1]] == [[2]], () == ())\n",
           "(true, true, true, false, true)", "");
    EXPECT("main = (not true, true && false, false || true, not (1 == 2))\n", "(false, false, true, true)", "");
}

TEST(eval_let_if_case)
{
    EXPECT("main = let x = 2 in let (a, b, c) = (x, x + 1, \"s\") in (a * b, c)\n", "(6, \"s\")", "");
    EXPECT("main = if 1 < 2 then \"yes\" else \"no\"\n", "\"yes\"", "");
    EXPECT("fun f(v: int + str) = case v of inl x => x + 1 | inr y => len(y)\n"
           "main = (f(inl 41), f(inr \"abc\"))\n",
           "(42, 3)", "");
    EXPECT("fun g(t) = case t of (a, b) => a - b\nmain = g((5, 3))\n", "2", "");
    EXPECT("fun h(s) = case s of \"a\" => 1 | \"b\" => 2 | other => len(other)\n"
           "main = (h(\"a\"), h(\"b\"), h(\"hello\"))\n",
           "(1, 2, 5)", "");
    EXPECT("fun k(b) = case b of true => 1 | false => 0\nmain = (k(true), k(false))\n", "(1, 0)", "");
    EXPECT("fun m(x) = case x of 1.5 => \"a\" | _ => \"b\"\nmain = (m(1.5), m(2.0))\n", "(\"a\", \"b\")", "");
    EXPECT("main = case () of () => 7\n", "7", "");
    /* the first matching alternative wins */
    EXPECT("main = case 3 of x => x | 3 => 0\n", "3", "");
}

TEST(eval_functions_and_closures)
{
    EXPECT("fun fact(n) = if n <= 1 then 1 else n * fact(n - 1)\nmain = fact(20)\n",
           "2432902008176640000", "");
    EXPECT("fun even(n) = if n == 0 then true else odd(n - 1)\n"
           "fun odd(n) = if n == 0 then false else even(n - 1)\n"
           "main = (even(10), odd(7), even(3))\n",
           "(true, true, false)", "");
    EXPECT("fun id(x) = x\nmain = (id(1), id(\"a\"), id([2.5]))\n", "(1, \"a\", [2.5])", "");
    EXPECT("fun mk(a) = fn x => fn y => a * 100 + x * 10 + y\n"
           "main = let f = mk(1) in let g = f(2) in (g(3), g(4))\n",
           "(123, 124)", "");
    EXPECT("main = let k = 5 in let j = 2 in smap(fn x => x * k + j, [1, 2])\n", "[7, 12]", "");
    EXPECT("fun add(a, b) = a + b\nmain = (smap(add, [(1, 2), (3, 4)]), let p = (5, 6) in add(p))\n",
           "([3, 7], 11)", "");
    EXPECT("main = let g = fn (a, b) => a * b in (g(3, 4), g((5, 6)), smap(g, [(1, 1), (2, 3)]))\n",
           "(12, 30, [1, 6])", "");
    EXPECT("fun zero() = 0\nmain = (zero(), smap(zero, [(), ()]))\n", "(0, [0, 0])", "");
    EXPECT("fun twice(f, x) = f(f(x))\nfun inc(x) = x + 1\nmain = (twice(inc, 1), twice(fn s => s + s, 3))\n",
           "(3, 12)", "");
    /* a local shadows a global function */
    EXPECT("fun inc(x) = x + 1\nmain = let inc = fn x => x - 1 in inc(10)\n", "9", "");
}

TEST(eval_threads)
{
    /* zero inputs; calls thread the state left to right */
    EXPECT("fun tick(s) = (s, s + 1)\nthread c = tick init 0\nmain = (c(), c(), smap(c, [(), ()]), c())\n",
           "(0, 1, [2, 3], 4)", "c = 5");
    /* two inputs: direct, from a tuple, and through smap */
    EXPECT("fun step(a, b, s) = (a - b + s, s + 1)\nthread t = step init 10\n"
           "main = (t(1, 2), smap(t, [(5, 1), (7, 10)]), let p = (0, 0) in t(p))\n",
           "(9, [15, 9], 13)", "t = 14");
    /* two threads on one function are two states; init calls functions */
    EXPECT(FOO_BAR "fun start(n) = n * 100\nthread f1 = foo init start(1)\nthread f2 = foo init 0\n"
                   "main = (f1(0), f2(0), f1(0))\n",
           "(2, 2, 2)", "f1 = 104, f2 = 2");
    /* untaken branches and short-circuits leave states untouched */
    EXPECT(FOO_BAR "thread f = foo init 0\nthread g = bar init 0\n"
                   "main = (if false then f(1) else 0, false && f(1) == 3, true || g(1) == 3, "
                   "case 1 of 2 => g(0) | _ => 5)\n",
           "(0, false, true, 5)", "f = 0, g = 0");
    /* a thread's fun calling another thread; a thread re-entering itself */
    EXPECT(FOO_BAR "thread f = foo init 0\n"
                   "fun viaf(x, s) = (f(x) + s, s + 1)\nthread v = viaf init 100\n"
                   "main = (v(1), v(1))\n",
           "(103, 104)", "f = 4, v = 102");
    EXPECT("fun self(x, s) = if x == 0 then (s, s + 1) else (r(x - 1) + s * 1000, s + 10)\n"
           "thread r = self init 1\nmain = r(1)\n",
           "1001", "r = 11"); /* the outer call's s' overwrites the inner one's */
    /* states of any type */
    EXPECT("fun pr(x, s) = (s, (x, x + 1))\nthread p = pr init (0, 0)\n"
           "fun cat(x, s) = (s, s + x)\nthread c = cat init 0.5\n"
           "fun lst(x, s) = (x, [x])\nthread l = lst init [\"z\"]\n"
           "main = (c(1.0), l(\"a\"), l(\"b\"))\n",
           "(0.5, \"a\", \"b\")", "p = (0, 0), c = 1.5, l = [\"b\"]");
    /* smap threads the state through the items in list order */
    EXPECT("fun acc(x, s) = (s * 10 + x, s * 10 + x)\nthread a = acc init 0\n"
           "main = smap(fn x => a(x), [1, 2, 3, 4])\n",
           "[1, 12, 123, 1234]", "a = 1234");
}

/* Each thread's state on a cache line of its own (eval_runtime.h): the
 * parallel runtime's serial stages write their states at every item, two
 * workers at once, and states sharing a line moved it between the cores
 * at every item. */
TEST(eval_thread_states_on_lines_of_their_own)
{
    stc_env *env = stc_env_new();
    ir_program *p = l_compile(env,
                              "fun add(x, s) = ((), s + x)\nthread a = add init 0\nthread b = add init 1\n"
                              "thread c = add init 2\nmain = (a(1), b(2), c(3))\n",
                              __LINE__);
    CHECK(p != NULL);
    if (p) {
        eval_ctx cx;
        stc__eval_ctx_init(&cx, p, NULL);
        eval_tstate *st = NULL;
        CHECK_INT(stc__eval_states_init(&cx, &st), 0);
        CHECK(st != NULL);
        for (int i = 0; st && i < p->nthreads; i++) { /* each value alone on its line */
            CHECK_INT((uintptr_t)&st[i] % 64, 0);
            CHECK_INT((uintptr_t)&st[i].value / 64, ((uintptr_t)&st[i].value + sizeof st[i].value - 1) / 64);
            if (i > 0) CHECK((uintptr_t)&st[i].value / 64 != (uintptr_t)&st[i - 1].value / 64);
        }
        CHECK_INT(st ? st[2].value.as.i : -1, 2);
        stc__eval_states_free(p, st);
        stc__eval_ctx_fini(&cx);
        stc__ir_program_free(p);
    }
    stc_env_free(env);
}

TEST(eval_builtins)
{
    EXPECT("main = (len([1, 2, 3]), len(\"h\\xc3\\xa9llo\"), len([]), len(\"\"))\n", "(3, 6, 0, 0)", "");
    EXPECT("main = (nth([10, 20, 30], 0), nth([10, 20, 30], 2))\n", "(10, 30)", "");
    EXPECT("main = (range(0, 3), range(3, 0), range(-2, 1), range(5, 5))\n",
           "([0, 1, 2], [], [-2, -1, 0], [])", "");
    EXPECT("main = (float(3), float(-9007199254740993), int(-2.7), int(2.7), int(5))\n",
           "(3.0, -9007199254740992.0, -2, 2, 5)", "");
    EXPECT("main = (round(2.5), round(-2.5), round(0.49999999999999994), round(-0.4), round(1.5))\n",
           "(3, -3, 0, 0, 2)", "");
    EXPECT("main = (sin_iter(0, 1.5), sin_iter(1, 0.0))\n", "(1.5, 0.0)", "");
    double x = 1.0;
    for (int i = 0; i < 1000; i++) x += sin(x);
    char want[64];
    snprintf(want, sizeof want, "%.17g", x);
    int rc = 0;
    stc_result *res = l_run(NULL, "main = sin_iter(1000, 1.0)\n", __LINE__, &rc);
    if (res) {
        CHECK_INT(rc, 0);
        CHECK(res->value.tag == STC_T_FLOAT && res->value.as.f == x);
        stc_result_free(res);
    }
    EXPECT("main = smap(fn i => i * i, range(0, 5))\n", "[0, 1, 4, 9, 16]", "");
}

/* ---- Runtime errors ------------------------------------------------------------ */

TEST(eval_runtime_errors)
{
    EXPECT_ERR("main = 1 / 0\n", STC_ERUNTIME, "division by zero", 1, 10, NULL, -1);
    EXPECT_ERR("main = 1 % (2 - 2)\n", STC_ERUNTIME, "modulo by zero", 1, 10, NULL, -1);
    EXPECT_ERR("main = nth([1, 2], 2)\n", STC_ERUNTIME, "nth: index 2 out of range for a list of length 2",
               1, 8, NULL, -1);
    EXPECT_ERR("main = nth([], -1)\n", STC_ERUNTIME, "nth: index -1 out of range for a list of length 0",
               1, 8, NULL, -1);
    EXPECT_ERR("main = case 5 of 1 => 0 | 2 => 1\n", STC_ERUNTIME, "no case alternative matches 5", 1, 8,
               NULL, -1);
    EXPECT_ERR("main = case inl \"x\" of inr y => y\n", STC_ERUNTIME,
               "no case alternative matches inl \"x\"", 1, 8, NULL, -1);
    EXPECT_ERR("main = int(0.0 / 0.0)\n", STC_ERUNTIME, "int: nan cannot be converted to int", 1, 8, NULL, -1);
    EXPECT_ERR("main = round(1.0 / 0.0)\n", STC_ERUNTIME, "round: inf cannot be converted to int", 1, 8,
               NULL, -1);
    EXPECT_ERR("main = int(9223372036854775808.0)\n", STC_ERUNTIME,
               "int: 9.223372036854776e+18 cannot be converted to int", 1, 8, NULL, -1);
    EXPECT("main = int(-9223372036854775808.0)\n", "-9223372036854775808", "");
    EXPECT_ERR("main = sin_iter(-1, 1.0)\n", STC_ERUNTIME, "sin_iter: negative count -1", 1, 8, NULL, -1);
    EXPECT_ERR("main = range(0, 1000000000000)\n", STC_ELIMIT,
               "range: 1000000000000 items exceed the limit of 268435456", 1, 8, NULL, -1);
    /* inside a thread inside smap: the thread and the item are named */
    EXPECT_ERR("fun d(x, s) = (s / x, s)\nthread t = d init 10\n"
               "main = smap(fn x => t(x), [5, 2, 0, 1])\n",
               STC_ERUNTIME, "division by zero", 1, 18, "t", 2);
    /* nested smap: the innermost item; the thread is the innermost running one */
    EXPECT_ERR(FOO_BAR "fun d(x, s) = (nth([1], x), s)\nthread t = d init 0\nthread f = foo init 0\n"
                       "main = smap(fn xs => smap(fn x => f(t(x)), xs), [[0], [0, 0, 1]])\n",
               STC_ERUNTIME, "nth: index 1 out of range for a list of length 1", 3, 16, "t", 2);
    /* the error in an argument of a thread call is outside that thread */
    EXPECT_ERR(FOO_BAR "thread f = foo init 0\nmain = smap(fn x => f(10 / x), [1, 0])\n", STC_ERUNTIME,
               "division by zero", 4, 26, NULL, 1);
    /* an error in an init names the thread being initialised */
    EXPECT_ERR(FOO_BAR "thread f = foo init 1 / 0\nmain = f(1)\n", STC_ERUNTIME, "division by zero", 3, 23,
               "f", -1);
    /* the first error in evaluation order is the one reported */
    EXPECT_ERR("main = (nth([], 0), 1 / 0)\n", STC_ERUNTIME,
               "nth: index 0 out of range for a list of length 0", 1, 9, NULL, -1);
}

TEST(eval_depth_limit)
{
    EXPECT_ERR("fun loop(n) = 1 + loop(n + 1)\nmain = loop(0)\n", STC_ELIMIT, "call depth limit exceeded", 1,
               19, NULL, -1);
    EXPECT_ERR("fun loop(x, s) = (1 + l(x), s)\nthread l = loop init 0\nmain = smap(fn x => l(x), [7])\n",
               STC_ELIMIT, "call depth limit exceeded", 1, 23, "l", 0);
    /* r(x) is a tail call of the lambda (no depth of its own): the limit
     * trips where smap applies the lambda */
    EXPECT_ERR("fun r(n) = len(smap(fn x => r(x), [n]))\nmain = r(1)\n", STC_ELIMIT,
               "call depth limit exceeded", 1, 16, NULL, 0);
    /* a deep but finite recursion is fine (several stack segments) */
    EXPECT("fun down(n) = if n == 0 then 0 else 1 + down(n - 1)\nmain = down(10000)\n", "10000", "");
}

/* ---- C threads through an env ----------------------------------------------------- */

typedef struct l_sum {
    int64_t sum;
    int *frees;
} l_sum;

static int l_sum_init(void *state, const stc_value *init, void *user)
{
    l_sum *s = state;
    s->frees = user;
    s->sum = init ? init->as.i : 7;
    return 0;
}
static void l_sum_free(void *state, void *user)
{
    (void)state;
    (*(int *)user)++;
}
static int l_sum_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_int(((const l_sum *)state)->sum);
    return 0;
}
static int l_sum_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    l_sum *s = state;
    if (in->as.i < 0) return stc_ctx_error(cx, "negative input %lld", (long long)in->as.i);
    s->sum = s->sum * 10 + in->as.i;
    *out = stc_value_int(s->sum);
    return 0;
}
static int l_pair_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state;
    (void)cx;
    stc_value items[2] = {stc_value_retain(stc_value_at(*in, 1)), stc_value_retain(stc_value_at(*in, 0))};
    *out = stc_value_new_tuple(2, items);
    return out->tag == STC_T_INVALID ? STC_ENOMEM : 0;
}

TEST(eval_c_threads)
{
    int frees = 0;
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "summer", .fn = l_sum_fn, .type = "int -> int", .state_type = "int",
                          .state_size = sizeof(l_sum), .state_init = l_sum_init, .state_free = l_sum_free,
                          .state_to_value = l_sum_value, .access = STC_WRITES, .user = &frees};
    CHECK_INT(stc_env_add_thread(env, &def), 0);
    stc_thread_def swap = {.name = "swap", .fn = l_pair_fn, .type = "(int, str) -> (str, int)",
                           .access = STC_PURE};
    CHECK_INT(stc_env_add_thread(env, &swap), 0);
    l_expect_env(env, "thread a = summer init 1\nthread b = summer\nthread w = swap\n"
                      "main = (smap(fn x => a(x), [2, 3]), b(1), w(1, \"x\"), smap(w, [(2, \"y\")]))\n",
                 "([12, 123], 71, (\"x\", 1), [(\"y\", 2)])", "a = 123, b = 71, w = ()", __LINE__);
    CHECK_INT(frees, 2);
    frees = 0;
    l_expect_error_env(env, "thread a = summer init 1\nmain = smap(fn x => a(x), [2, -3])\n", STC_ERUNTIME,
                       "thread 'a' failed: negative input -3", 2, 21, "a", 1, __LINE__);
    CHECK_INT(frees, 1);
    stc_env_free(env);
}
