/* test_types.c - stc__types_check: inference, polymorphism, threads, defaults
 * and every error message, on programs parsed from source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/env.h"
#include "ir_build.h"
#include "test.h"

#define TY_OK(src) CHECK_COMPILE(src, true, "")
#define TY_ERR(src, msg) CHECK_COMPILE(src, true, msg)

/* The printed type of main (or the first diagnostic) for src. */
static void ty_main_is(const char *file, int line, const char *src, const stc_env *env, const char *want)
{
    irb_res r;
    char buf[512];
    irb_compile(&r, src, env, true);
    const char *got = r.stage == 0 ? irb_type_str(buf, sizeof buf, r.p->main->type) : r.msg;
    if (strcmp(got, want) != 0) test_fail(file, line, "main of `%s` has type \"%s\", expected \"%s\"", src, got, want);
    irb_free(&r);
}
#define TY_MAIN(src, want) ty_main_is(__FILE__, __LINE__, src, NULL, want)

/* The printed type of top-level function `name`. */
static void ty_fun_is(const char *file, int line, const char *src, const char *name, const char *want)
{
    irb_res r;
    char buf[512];
    irb_compile(&r, src, NULL, true);
    const char *got = r.msg;
    if (r.stage == 0) {
        int f = stc__ir_find_fun(r.p, name);
        got = f < 0 ? "(no such function)" : irb_type_str(buf, sizeof buf, r.p->funs[f]->type);
    }
    if (strcmp(got, want) != 0) test_fail(file, line, "'%s' in `%s` has type \"%s\", expected \"%s\"", name, src, got, want);
    irb_free(&r);
}
#define TY_FUN(src, name, want) ty_fun_is(__FILE__, __LINE__, src, name, want)

/* Every expression of e has a type without free variables. */
static bool ty_all_typed(ir_expr *e, bool concrete);

static bool ty_concrete(ir_type *t)
{
    t = stc__ir_type_resolve(t);
    if (!t || t->kind == TY_VAR) return false;
    for (int i = 0; i < t->n; i++)
        if (!ty_concrete(t->args[i])) return false;
    return true;
}

static bool ty_all_typed(ir_expr *e, bool concrete)
{
    if (!e) return true;
    if (!e->type || (concrete && !ty_concrete(e->type))) return false;
    switch (e->kind) {
    case IR_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            if (!ty_all_typed(e->u.call.args[i], concrete)) return false;
        return true;
    case IR_CASE:
        for (int i = 0; i < e->u.cas.nalts; i++) {
            ir_alt *a = &e->u.cas.alts[i];
            for (int j = 0; j < a->nvars; j++)
                if (!a->vars[j]->type) return false;
            if (!ty_all_typed(a->body, concrete)) return false;
        }
        return ty_all_typed(e->a, concrete);
    case IR_LAMBDA:
        for (int i = 0; i < e->u.fn->nparams; i++)
            if (!e->u.fn->params[i]->type) return false;
        return e->u.fn->type && ty_all_typed(e->u.fn->body, concrete);
    case IR_TUPLE:
    case IR_LIST:
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (!ty_all_typed(e->u.agg.items[i], concrete)) return false;
        return true;
    case IR_LET:
    case IR_LETTUPLE:
        for (int i = 0; i < e->u.let.nbinders; i++)
            if (!e->u.let.binders[i]->type) return false;
        break;
    default:
        break;
    }
    return ty_all_typed(e->a, concrete) && ty_all_typed(e->b, concrete) && ty_all_typed(e->c, concrete);
}

/* ---- The DESIGN.md examples ---------------------------------------------------- */

static void ty_check_threads(const char *src, const char *main_type, int nthreads, const char *in,
                             const char *out, const char *state)
{
    irb_res r;
    char buf[256];
    irb_compile(&r, src, NULL, true);
    CHECK_STR(r.msg, "");
    if (r.stage == 0) {
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->main->type), main_type);
        CHECK_INT(r.p->nthreads, nthreads);
        for (int i = 0; i < r.p->nthreads; i++) {
            CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[i]->in_type), in);
            CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[i]->out_type), out);
            CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[i]->state_type), state);
        }
        CHECK(ty_all_typed(r.p->main, true));
        for (int i = 0; i < r.p->nfuns; i++) CHECK(ty_all_typed(r.p->funs[i]->body, false));
    }
    irb_free(&r);
}

TEST(types_design_examples)
{
    ty_check_threads("fun foo(x, s) = (x + 2, s + 2)\n"
                     "fun bar(x, s) = (x * 3, s + 3)\n"
                     "thread f = foo init 0\n"
                     "thread g = bar init 0\n"
                     "main = smap(fn x => g(f(x)), [10, 10])\n",
                     "[int]", 2, "int", "int", "int");
    ty_check_threads("fun foo(x, s) = (x + 2, s + 2)\n"
                     "fun bar(x, s) = (x * 3, s + 3)\n"
                     "thread f  = foo init 0\n"
                     "thread b1 = bar init 0\n"
                     "thread b2 = bar init 0\n"
                     "main = smap(fn x => let y = f(x) in case y of 4 => b1(y) | 8 => b2(y), [2, 6])\n",
                     "[int]", 3, "int", "int", "int");
    ty_check_threads("fun acc(x, s) = (s * 10 + x, s * 10 + x)     -- order-sensitive state\n"
                     "thread a = acc init 0\n"
                     "main = smap(fn x => a(a(x)), [1, 2])          -- the same thread twice per item\n",
                     "[int]", 1, "int", "int", "int");
    /* a float state */
    ty_check_threads("fun addf(x, s) = (x, s + 3.34)\nthread t = addf init 2.5\nmain = t(1)\n", "int", 1,
                     "int", "int", "float");
}

/* ---- Polymorphism ------------------------------------------------------------------ */

TEST(types_polymorphism)
{
    static const char *defs = "fun id(x) = x\nfun fst(a, b) = a\nfun pair(x) = (x, x)\nfun k() = 1\n"
                              "fun sq(x) = x * x\nfun n(xs) = len(xs)\nfun apply(f, x) = f(x)\n";
    char src[1024];
    snprintf(src, sizeof src, "%smain = 1\n", defs);
    TY_FUN(src, "id", "'a -> 'a");
    TY_FUN(src, "fst", "('a, 'b) -> 'a");
    TY_FUN(src, "pair", "'a -> ('a, 'a)");
    TY_FUN(src, "k", "unit -> int");
    TY_FUN(src, "sq", "'a -> 'a");
    TY_FUN(src, "n", "'a -> int");
    TY_FUN(src, "apply", "('a -> 'b, 'a) -> 'b");
    snprintf(src, sizeof src, "%smain = (id(1), id(\"a\"), fst(true, 2.5), pair(()), sq(2), sq(2.5))\n", defs);
    TY_MAIN(src, "(int, str, bool, (unit, unit), int, float)");
    snprintf(src, sizeof src, "%smain = (smap(id, [1]), smap(id, [\"a\"]), smap(pair, [[1]]), apply(sq, 3))\n", defs);
    TY_MAIN(src, "([int], [str], [([int], [int])], int)");
    snprintf(src, sizeof src, "%smain = (id(id)(1), apply(id, id)(\"s\"))\n", defs);
    /* `id(id)(1)` is not in the grammar; use lets */
    snprintf(src, sizeof src, "%smain = let i = id(id) in let j = apply(id, sq) in (i(1), j(2.0))\n", defs);
    TY_MAIN(src, "(int, float)");
    /* the NUM constraint travels with the scheme */
    snprintf(src, sizeof src, "%smain = sq(\"a\")\n", defs);
    TY_ERR(src, "8:11: operator '*' needs int or float, not str");
    snprintf(src, sizeof src, "%smain = (n(\"abc\"), n([1]), smap(n, [\"x\"]))\n", defs);
    TY_MAIN(src, "(int, int, [int])");
    snprintf(src, sizeof src, "%smain = n(5)\n", defs);
    TY_ERR(src, "8:10: 'len' needs a list or str, not int");
    /* let-bound lambdas are monomorphic */
    TY_ERR("main = let id = fn x => x in (id(1), id(\"a\"))\n",
           "1:41: type mismatch in argument 1 of 'id': expected int, found str");
    /* a function used at two types by two other functions */
    TY_MAIN("fun id(x) = x\nfun a(x) = id(x) + 1\nfun b(x) = id(x) && true\nmain = (a(1), b(false))\n",
            "(int, bool)");
}

TEST(types_recursion)
{
    static const char evenodd[] = "fun even(n) = if n == 0 then true else odd(n - 1)\n"
                                  "fun odd(n) = if n == 0 then false else even(n - 1)\n"
                                  "main = (even(10), odd(3))\n";
    TY_FUN(evenodd, "even", "int -> bool");
    TY_FUN(evenodd, "odd", "int -> bool");
    TY_MAIN(evenodd, "(bool, bool)");
    TY_FUN("fun fact(n) = if n <= 1 then 1 else n * fact(n - 1)\nmain = fact(5)\n", "fact", "int -> int");
    TY_FUN("fun len2(xs) = if len(xs) == 0 then 0 else 1 + len2(xs)\nmain = len2([1.5])\n", "len2", "'a -> int");
    /* inside a component, functions are monomorphic */
    TY_ERR("fun f(x) = let a = g(1) in x\nfun g(y) = f(y)\nmain = f(\"a\")\n",
           "3:10: type mismatch in argument 1 of 'f': expected int, found str");
    TY_ERR("fun f(x) = x(x)\nmain = 1\n", "1:14: infinite type: 'a occurs in 'a -> 'b");
    TY_ERR("fun f(x) = [f]\nmain = 1\n", "1:12: infinite type: 'a occurs in ['b -> 'a]");
}

TEST(types_annotations)
{
    TY_FUN("fun f(x: int): int = x\nmain = f(1)\n", "f", "int -> int");
    TY_FUN("fun g(xs: [float], p: (int, str)) = xs\nmain = 1\n", "g", "([float], (int, str)) -> [float]");
    TY_FUN("fun h(f: int -> bool, x: int + str) = f\nmain = 1\n", "h", "(int -> bool, int + str) -> int -> bool");
    TY_ERR("fun g(x: float) = x + 1\nmain = 1\n", "1:21: operands of '+' have different types: float and int");
    TY_ERR("fun h(x): str = x + 1\nmain = 1\n", "1:19: 'h' is declared to return str, but its body has type int");
    TY_ERR("fun f(x: int): int = x\nmain = f(1.5)\n", "2:10: type mismatch in argument 1 of 'f': expected int, found float");
}

/* ---- Expressions and their error messages ---------------------------------------------- */

TEST(types_expressions)
{
    TY_MAIN("main = 1 + 2 * 3 - 4 / 2 % 3\n", "int");
    TY_MAIN("main = 1.5 * 2.0 - -0.5\n", "float");
    TY_MAIN("main = (1 < 2, 1.5 >= 2.5, \"a\" < \"b\", 1 == 1, [1] == [2], (1, \"a\") != (2, \"b\"))\n",
            "(bool, bool, bool, bool, bool, bool)");
    TY_MAIN("main = (inl 1 == inl 2, not true && false || true, ())\n", "(bool, bool, unit)");
    TY_MAIN("main = if 1 < 2 then \"a\" else \"b\"\n", "str");
    TY_MAIN("main = let (a, b, c) = (1, \"x\", 2.5) in (c, b, a)\n", "(float, str, int)");
    TY_MAIN("main = case inl 1 of inl x => x + 1 | inr y => len(y)\n", "int");
    TY_MAIN("main = case (1, \"a\") of (n, s) => s\n", "str");
    TY_MAIN("main = case 3 of 1 => \"one\" | n => \"many\"\n", "str");
    TY_MAIN("main = case 2.5 of 2.5 => true | _ => false\n", "bool");
    TY_MAIN("main = case \"s\" of \"s\" => 1 | _ => 2\n", "int");
    TY_MAIN("main = case true of true => 1 | false => 2\n", "int");
    TY_MAIN("main = case () of () => 1\n", "int");
    TY_MAIN("main = inr \"a\"\n", "unit + str");
    TY_MAIN("main = [inl 1, inr 2.5]\n", "[int + float]");
    TY_MAIN("main = (nth([\"a\"], 0), range(1, 3), float(3), int(2.5), int(3), round(2.5), sin_iter(10, 1.0))\n",
            "(str, [int], float, int, int, int, float)");
    TY_MAIN("main = (len(\"abc\"), len([1]), len([]))\n", "(int, int, int)");
    TY_MAIN("fun f(x) = case x of inl n => n + 1 | inr s => len(s)\nmain = (f(inl 41), f(inr \"abc\"), f(inr [1]))\n",
            "(int, int, int)");
    TY_MAIN("main = fn x => len(x)\n", "[unit] -> int");
    TY_MAIN("main = fn x => (len(x), x < x)\n", "str -> (int, bool)");
    TY_MAIN("main = []\n", "[unit]");
    TY_MAIN("main = smap(fn x => x, [])\n", "[unit]");
    TY_MAIN("main = let f = fn x => x + x in 1\n", "int");
    TY_MAIN("main = fn x => x < x\n", "int -> bool");
    TY_MAIN("main = fn (a, b) => a == b\n", "(unit, unit) -> bool");
    TY_MAIN("main = smap(fn (a, b) => a * b, [(1, 2), (3, 4)])\n", "[int]");
    TY_MAIN("fun add(a, b) = a + b\nmain = smap(add, [(1.5, 2.0)])\n", "[float]");
    TY_MAIN("fun add(a, b) = a + b\nmain = (add(1, 2), add((3, 4)))\n", "(int, int)");
    TY_MAIN("main = let f = fn (a, b) => a + b in (f(1, 2), f((1, 2)))\n", "(int, int)");
    TY_MAIN("main = smap(fn xs => smap(fn x => x + 1, xs), [[], [1, 2, 3]])\n", "[[int]]");
    TY_MAIN("main = let k = fn u => 5 in k(())\n", "int");
    TY_MAIN("main = let (x) = 5 in x\n", "int");
}

TEST(types_error_messages)
{
    TY_ERR("main = 1 + 2.0\n", "1:10: operands of '+' have different types: int and float");
    TY_ERR("main = \"a\" + \"b\"\n", "1:12: operator '+' needs int or float, not str");
    TY_ERR("main = true < false\n", "1:13: operator '<' needs int, float or str, not bool");
    TY_ERR("main = (fn x => x) == (fn y => y)\n", "1:20: operator '==' needs a type without functions, not 'a -> 'a");
    TY_ERR("main = [fn x => x] != []\n", "1:20: operator '!=' needs a type without functions, not ['a -> 'a]");
    TY_ERR("main = not 1\n", "1:8: operator 'not' needs bool, not int");
    TY_ERR("main = 1 && true\n", "1:10: operator '&&' needs bool, not int");
    TY_ERR("main = true || \"x\"\n", "1:13: operator '||' needs bool, not str");
    TY_ERR("main = -true\n", "1:8: operator '-' needs int or float, not bool");
    TY_ERR("main = if true then 1 else \"a\"\n", "1:8: 'if' branches have different types: int and str");
    TY_ERR("main = if 1 then 2 else 3\n", "1:11: condition of 'if' must be bool, not int");
    TY_ERR("main = case 1 of \"a\" => 1 | _ => 2\n",
           "1:18: case pattern of type str does not match scrutinee of type int");
    TY_ERR("main = case 1 of inl x => 1 | _ => 2\n",
           "1:18: case pattern of type 'a + 'b does not match scrutinee of type int");
    TY_ERR("main = case (1, 2) of (a, b, c) => 1\n",
           "1:23: case pattern of type ('a, 'b, 'c) does not match scrutinee of type (int, int)");
    TY_ERR("main = case 1 of 1 => 1 | _ => \"a\"\n", "1:32: case alternatives have different types: int and str");
    TY_ERR("main = let x = 1 in x(2)\n", "1:21: calling 'x' of type int, which is not a function");
    TY_ERR("main = [1, \"a\"]\n", "1:12: list items have different types: int and str");
    TY_ERR("main = let (a, b) = (1, 2, 3) in a\n", "1:21: let (...) with 2 names needs a 2-tuple, not (int, int, int)");
    TY_ERR("main = let (a, b) = 1 in a\n", "1:21: let (...) with 2 names needs a 2-tuple, not int");
    TY_ERR("fun f(x) = x + 1\nmain = f(\"a\")\n", "2:10: type mismatch in argument 1 of 'f': expected int, found str");
    TY_ERR("fun f(a, b) = a + b\nmain = f(1)\n",
           "2:10: type mismatch in argument 1 of 'f': expected ('a, 'a), found int");
    TY_ERR("fun f(a, b) = a + b\nmain = f(1, \"b\")\n",
           "2:13: type mismatch in argument 2 of 'f': expected int, found str");
    TY_ERR("fun f(a: int, b) = a + b\nmain = f(1, \"b\")\n",
           "2:13: type mismatch in argument 2 of 'f': expected int, found str");
    TY_ERR("main = nth([1], \"a\")\n", "1:17: type mismatch in argument 2 of 'nth': expected int, found str");
    TY_ERR("main = nth(1, 2)\n", "1:12: type mismatch in argument 1 of 'nth': expected ['a], found int");
    TY_ERR("main = float(1.0)\n", "1:14: type mismatch in argument 1 of 'float': expected int, found float");
    TY_ERR("main = round(1)\n", "1:14: type mismatch in argument 1 of 'round': expected float, found int");
    TY_ERR("main = sin_iter(1.0, 1.0)\n", "1:17: type mismatch in argument 1 of 'sin_iter': expected int, found float");
    TY_ERR("main = range(1, 2.0)\n", "1:17: type mismatch in argument 2 of 'range': expected int, found float");
    TY_ERR("main = int(\"a\")\n", "1:12: 'int' needs int or float, not str");
    TY_ERR("main = len(5)\n", "1:12: 'len' needs a list or str, not int");
    TY_ERR("fun f(x) = len(x) + x\nmain = 1\n", "1:19: 'len' needs a list or str, not int");
    TY_ERR("main = fn x => (len(x), x + x)\n", "1:27: a value cannot be both a number (int or float) and a list or str");
    TY_ERR("fun f(x) = case x of inl n => n + 1 | inr s => len(s)\nmain = f(inr 5)\n",
           "2:10: 'len' needs a list or str, not int");
    TY_ERR("main = smap(1, [1])\n", "1:13: smap needs a function as its first argument, not int");
    TY_ERR("main = smap(fn x => x + 1, [\"a\"])\n",
           "1:28: type mismatch in argument 2 of 'smap': expected [int], found [str]");
    TY_ERR("main = smap(fn (a, b) => a, [1])\n",
           "1:29: type mismatch in argument 2 of 'smap': expected [('a, 'b)], found [int]");
    TY_ERR("main = let f = fn x => x + 1 in f(1, 2)\n",
           "1:33: type mismatch in the arguments of 'f': expected int, found (int, int)");
}

TEST(types_errors_continue)
{
    irb_res r;
    /* one error per function; a failed function causes no follow-up errors */
    irb_compile(&r, "fun a(x) = x + \"s\"\nfun b(x) = if x then 1 else 2.0\nmain = a(1) + b(true) + 1\n", NULL, true);
    CHECK_INT(r.stage, 3);
    CHECK_INT(stc_diags_count(r.d), 2);
    char buf[256];
    CHECK_STR(irb_diag(&r, 0, buf, sizeof buf), "1:14: operator '+' needs int or float, not str");
    CHECK_STR(irb_diag(&r, 1, buf, sizeof buf), "2:12: 'if' branches have different types: int and float");
    irb_free(&r);
    /* errors in main and in an init are both reported */
    irb_compile(&r, "fun foo(x, s) = (x, s + 1)\nthread t = foo init 1.5\nmain = 1 + true\n", NULL, true);
    CHECK_INT(stc_diags_count(r.d), 2);
    CHECK_STR(irb_diag(&r, 0, buf, sizeof buf), "2:21: init of thread 't' has type float, but the state has type int");
    CHECK_STR(irb_diag(&r, 1, buf, sizeof buf), "3:10: operands of '+' have different types: int and bool");
    irb_free(&r);
}

/* ---- Threads ------------------------------------------------------------------------- */

TEST(types_threads)
{
    static const char two[] = "fun foo(x, y, s) = (x + y, s + 1)\nthread t = foo init 0\n";
    char src[512];
    snprintf(src, sizeof src, "%smain = (t(1, 2), t((3, 4)), smap(t, [(5, 6)]))\n", two);
    ty_check_threads(src, "(int, int, [int])", 1, "(int, int)", "int", "int");
    snprintf(src, sizeof src, "%smain = t(1, \"a\")\n", two);
    TY_ERR(src, "3:13: type mismatch in argument 2 of 't': expected int, found str");
    snprintf(src, sizeof src, "%smain = t(1)\n", two);
    TY_ERR(src, "3:10: type mismatch in argument 1 of 't': expected ('a, 'a), found int");
    snprintf(src, sizeof src, "%smain = smap(t, [1])\n", two);
    TY_ERR(src, "3:16: type mismatch in argument 2 of 'smap': expected [('a, 'a)], found [int]");
    /* zero inputs */
    ty_check_threads("fun tick(s) = (s, s + 1)\nthread c = tick init 0\nmain = [c(), c()]\n", "[int]", 1, "unit",
                     "int", "int");
    /* a polymorphic function bound to two threads at different types */
    irb_res r;
    char buf[256];
    irb_compile(&r, "fun keep(x, s) = (x, s)\nthread a = keep init 0\nthread b = keep init \"s\"\n"
                    "main = (a(1.5), b(true))\n", NULL, true);
    CHECK_STR(r.msg, "");
    if (r.stage == 0) {
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[0]->in_type), "float");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[0]->state_type), "int");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[1]->out_type), "bool");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[1]->state_type), "str");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->funs[0]->type), "('a, 'b) -> ('a, 'b)");
    }
    irb_free(&r);
    /* threads are monomorphic */
    TY_ERR("fun keep(x, s) = (x, s)\nthread a = keep init 0\nmain = (a(1), a(\"x\"))\n",
           "3:17: type mismatch in argument 1 of 'a': expected int, found str");
    /* unused inputs default to unit, NUM-constrained ones to int */
    ty_check_threads("fun keep(x, s) = (s, s)\nthread k = keep init 0\nmain = 1\n", "int", 1, "unit", "int", "int");
    irb_compile(&r, "fun dbl(x, s) = (x + x, s)\nthread t = dbl init ()\nmain = 1\n", NULL, true);
    CHECK_STR(r.msg, "");
    if (r.stage == 0) {
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[0]->in_type), "int");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[0]->out_type), "int");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[0]->state_type), "unit");
    }
    irb_free(&r);
    /* a thread called inside its own function, and from a function declared earlier */
    ty_check_threads("fun go(n) = t(n)\n"
                     "fun foo(x, s) = if x == 0 then (0, s) else (t(x - 1), s + 1)\n"
                     "thread t = foo init 0\nmain = go(3)\n",
                     "int", 1, "int", "int", "int");
    /* thread function errors */
    TY_ERR("fun foo(x, s) = x + 1\nthread t = foo init 0\nmain = 1\n",
           "2:12: thread function 'foo' must return a pair (output, state), not int");
    TY_ERR("fun foo(x, s) = (x, s, s)\nthread t = foo init 0\nmain = 1\n",
           "2:12: thread function 'foo' must return a pair (output, state), not ('a, 'b, 'b)");
    TY_ERR("fun foo(x, s) = (x, s + 1)\nthread t = foo init 2.5\nmain = 1\n",
           "2:21: init of thread 't' has type float, but the state has type int");
    TY_ERR("fun foo(x, s) = (x, [s])\nthread t = foo init 0\nmain = 1\n",
           "2:12: infinite type: 'a occurs in ['a]");
    TY_ERR("fun foo(x, s: int) = (x, \"s\")\nthread t = foo init 0\nmain = 1\n",
           "2:12: thread function 'foo' takes a state of type int but returns a state of type str");
    /* inits may call (polymorphic) functions */
    ty_check_threads("fun id(x) = x\nfun foo(x, s) = (x, s)\nthread t = foo init id([1])\nmain = t(id(2))\n", "int",
                     1, "int", "int", "[int]");
}

/* ---- C threads ------------------------------------------------------------------------- */

static int ty_cfn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state, (void)in, (void)cx;
    *out = stc_value_int(0);
    return 0;
}

TEST(types_c_threads)
{
    stc_env *env = stc_env_new();
    CHECK_INT(stc_env_add_thread(env, &(stc_thread_def){.name = "count", .fn = ty_cfn, .type = "str -> int",
                                                         .state_type = "int"}), 0);
    CHECK_INT(stc_env_add_thread(env, &(stc_thread_def){.name = "pairs", .fn = ty_cfn,
                                                         .type = "(int, float) -> [float]"}), 0);
    CHECK_INT(stc_env_add_thread(env, &(stc_thread_def){.name = "tick", .fn = ty_cfn, .type = "unit -> int"}), 0);
    irb_res r;
    char buf[256];
    irb_compile(&r, "thread c = count init 0\nthread p = pairs\nthread k = tick\n"
                    "main = (smap(c, [\"a\", \"b\"]), p(1, 2.0), p((1, 2.0)), k(), c(\"x\"))\n", env, true);
    CHECK_STR(r.msg, "");
    if (r.stage == 0) {
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->main->type), "([int], [float], [float], int, int)");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[0]->in_type), "str");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[0]->state_type), "int");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[1]->in_type), "(int, float)");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[1]->state_type), "unit");
        CHECK_STR(irb_type_str(buf, sizeof buf, r.p->threads[2]->in_type), "unit");
    }
    irb_free(&r);
    irb_compile(&r, "thread c = count init \"x\"\nmain = 1\n", env, true);
    CHECK_STR(r.msg, "1:23: init of thread 'c' has type str, but the state has type int");
    irb_free(&r);
    irb_compile(&r, "thread c = count\nmain = c(1)\n", env, true);
    CHECK_STR(r.msg, "2:10: type mismatch in argument 1 of 'c': expected str, found int");
    irb_free(&r);
    irb_compile(&r, "thread p = pairs\nmain = p(1)\n", env, true);
    CHECK_STR(r.msg, "2:10: type mismatch in argument 1 of 'p': expected (int, float), found int");
    irb_free(&r);
    irb_compile(&r, "thread p = pairs\nmain = p(1, 2.0, 3)\n", env, true);
    CHECK_STR(r.msg, "2:8: type mismatch in the arguments of 'p': expected (int, float), found (int, float, int)");
    irb_free(&r);
    irb_compile(&r, "thread c = count\nmain = c(\"a\", \"b\")\n", env, true);
    CHECK_STR(r.msg, "2:8: type mismatch in the arguments of 'c': expected str, found (str, str)");
    irb_free(&r);
    stc_env_free(env);
}

/* ---- Limits -------------------------------------------------------------------------------- */

TEST(types_exponential_types_are_bounded)
{
    /* f_i doubles the type of f_{i-1}: printed sizes grow as 2^i, so the
     * checker must stop by its work budget instead of hanging. */
    char *src = malloc(64 * 1024);
    size_t n = 0;
    n += (size_t)sprintf(src + n, "fun f0(x) = (x, x)\n");
    for (int i = 1; i < 60; i++) n += (size_t)sprintf(src + n, "fun f%d(x) = f%d(f%d(x))\n", i, i - 1, i - 1);
    sprintf(src + n, "main = f59(1)\n");
    irb_res r;
    irb_compile(&r, src, NULL, true);
    CHECK_INT(r.stage, 3);
    CHECK_CONTAINS(r.msg, "types are too large or too deeply nested to check");
    irb_free(&r);
    free(src);
}
