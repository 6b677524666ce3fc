/* test_parser.c - STCLang text -> IR (before stc__ir_resolve): every construct,
 * precedence, locations, error messages, recovery and robustness. */
#include <stdio.h>
#include <stdlib.h>

#include "ir_dump.h"
#include "lang/lang.h"
#include "lang/lexer.h"
#include "test.h"
#include "util/buf.h"

/* Diagnostics as "L:C: message; ..." ("" when none). */
static char *parser_diags(const stc_diags *d)
{
    buf b = BUF_INIT;
    for (size_t i = 0; i < stc_diags_count(d); i++)
        stc__buf_printf(&b, "%s%d:%d: %s", i ? "; " : "", stc_diags_line(d, i), stc_diags_col(d, i),
                   stc_diags_message(d, i));
    return stc__buf_take(&b);
}

/* Parses src; returns the program dump (locs or not) and the diagnostics. */
static void parser_run(const char *src, size_t len, bool locs, char **dump, char **diags)
{
    stc_diags *d = stc__diags_new("t.stc", src, len);
    ir_program *p = stc__lang_parse(src, len, "t.stc", NULL, d);
    *dump = p ? ir_dump_program(p, locs) : NULL;
    *diags = parser_diags(d);
    stc__ir_program_free(p);
    stc_diags_free(d);
}

#define CHECK_PROGRAM_(src, locs, expected)                                               \
    do {                                                                                  \
        char *dump_, *diags_;                                                             \
        parser_run((src), strlen(src), (locs), &dump_, &diags_);                          \
        CHECK_STR(diags_, "");                                                            \
        CHECK_STR(dump_, (expected));                                                     \
        free(dump_);                                                                      \
        free(diags_);                                                                     \
    } while (0)
/* Whole program, no errors, dump without / with locations. */
#define CHECK_PROGRAM(src, expected) CHECK_PROGRAM_(src, false, expected)
#define CHECK_PROGRAM_LOCS(src, expected) CHECK_PROGRAM_(src, true, expected)
/* `main = EXPR`: dump of main's expression (the line is "(main ...)\n"). */
#define CHECK_EXPR(expr, expected) CHECK_PROGRAM("main = " expr, "(main " expected ")\n")

/* The diagnostics of src, exactly ("L:C: msg; ..."). */
#define CHECK_ERRORS_LEN(src, len, expected)                                              \
    do {                                                                                  \
        char *dump_, *diags_;                                                             \
        parser_run((src), (len), false, &dump_, &diags_);                                 \
        CHECK_STR(diags_, (expected));                                                    \
        free(dump_);                                                                      \
        free(diags_);                                                                     \
    } while (0)
#define CHECK_ERRORS(src, expected) CHECK_ERRORS_LEN(src, strlen(src), expected)

/* ---- the DESIGN.md section 3 examples ----------------------------------- */

static const char parser_example1[] =
    "fun foo(x, s) = (x + 2, s + 2)\n"
    "fun bar(x, s) = (x * 3, s + 3)\n"
    "thread f = foo init 0\n"
    "thread g = bar init 0\n"
    "main = smap(fn x => g(f(x)), [10, 10])\n"
    "-- result [36, 36]; final states f = 4, g = 6\n";

static const char parser_example2[] =
    "fun foo(x, s) = (x + 2, s + 2)\n"
    "fun bar(x, s) = (x * 3, s + 3)\n"
    "thread f  = foo init 0\n"
    "thread b1 = bar init 0\n"
    "thread b2 = bar init 0\n"
    "main = smap(fn x => let y = f(x) in case y of 4 => b1(y) | 8 => b2(y), [2, 6])\n"
    "-- result [12, 24]; final states f = 4, b1 = 3, b2 = 3\n";

static const char parser_example3[] =
    "fun acc(x, s) = (s * 10 + x, s * 10 + x)     -- order-sensitive state\n"
    "thread a = acc init 0\n"
    "main = smap(fn x => a(a(x)), [1, 2])          -- the same thread twice per item\n"
    "-- result [11, 1232]; final state a = 1232\n";

TEST(parser_design_example1)
{
    CHECK_PROGRAM_LOCS(parser_example1,
        "(fun foo@1:5 (x@1:9 s@1:12) (tuple@1:17 (+@1:20 x@1:18 2@1:22) (+@1:27 s@1:25 2@1:29)))\n"
        "(fun bar@2:5 (x@2:9 s@2:12) (tuple@2:17 (*@2:20 x@2:18 3@2:22) (+@2:27 s@2:25 3@2:29)))\n"
        "(thread f@3:8 foo@3:12 0@3:21)\n"
        "(thread g@4:8 bar@4:12 0@4:21)\n"
        "(main@5:1 (call@5:8 smap@5:8 (fn@5:13 (x@5:16) (call@5:21 g@5:21 (call@5:23 f@5:23 x@5:25)))"
        " (list@5:30 10@5:31 10@5:35)))\n");

    /* the shape, field by field */
    stc_diags *d = stc__diags_new("t.stc", NULL, 0);
    ir_program *p = stc__lang_parse(parser_example1, strlen(parser_example1), "ex1.stc", NULL, d);
    CHECK(p != NULL);
    if (!p) return;
    CHECK_INT(stc_diags_count(d), 0);
    CHECK_STR(p->file, "ex1.stc");
    CHECK_INT(p->nfuns, 2);
    CHECK_INT(p->nthreads, 2);
    CHECK_STR(p->funs[1]->name, "bar");
    CHECK_INT(p->funs[1]->index, 1);
    CHECK_INT(p->funs[1]->nparams, 2);
    CHECK(p->funs[1]->param_annots[0] == NULL && p->funs[1]->ret_annot == NULL);
    CHECK_STR(p->threads[0]->target, "foo");
    CHECK_INT(p->threads[0]->target_loc.col, 12);
    ir_expr *m = p->main;
    CHECK(m && m->kind == IR_CALL && m->u.call.kind == CALL_NAME && m->u.call.nargs == 2);
    CHECK_STR(m->u.call.callee.name, "smap");
    CHECK(m->u.call.callee_loc.line == 5 && m->u.call.callee_loc.col == 8);
    CHECK(m->loc.line == 5 && m->loc.col == 8);
    CHECK(p->main_loc.line == 5 && p->main_loc.col == 1);
    ir_expr *lam = m->u.call.args[0];
    CHECK(lam->kind == IR_LAMBDA && lam->u.fn->index == -1 && lam->u.fn->nparams == 1);
    CHECK_STR(lam->u.fn->name, "<fn>");
    CHECK_STR(lam->u.fn->params[0]->name, "x");
    CHECK(lam->u.fn->params[0]->slot == -1);
    ir_expr *lst = m->u.call.args[1];
    CHECK(lst->kind == IR_LIST && lst->u.agg.nitems == 2);
    CHECK(lst->u.agg.items[0]->kind == IR_LIT && lst->u.agg.items[0]->u.lit.tag == STC_T_INT &&
          lst->u.agg.items[0]->u.lit.as.i == 10);
    stc__ir_program_free(p);
    stc_diags_free(d);
}

TEST(parser_design_example2)
{
    CHECK_PROGRAM_LOCS(parser_example2,
        "(fun foo@1:5 (x@1:9 s@1:12) (tuple@1:17 (+@1:20 x@1:18 2@1:22) (+@1:27 s@1:25 2@1:29)))\n"
        "(fun bar@2:5 (x@2:9 s@2:12) (tuple@2:17 (*@2:20 x@2:18 3@2:22) (+@2:27 s@2:25 3@2:29)))\n"
        "(thread f@3:8 foo@3:13 0@3:22)\n"
        "(thread b1@4:8 bar@4:13 0@4:22)\n"
        "(thread b2@5:8 bar@5:13 0@5:22)\n"
        "(main@6:1 (call@6:8 smap@6:8 (fn@6:13 (x@6:16) (let@6:21 y@6:25 (call@6:29 f@6:29 x@6:31)"
        " (case@6:37 y@6:42 (4@6:47 => (call@6:52 b1@6:52 y@6:55))"
        " (8@6:60 => (call@6:65 b2@6:65 y@6:68))))) (list@6:72 2@6:73 6@6:76)))\n");
}

TEST(parser_design_example3)
{
    CHECK_PROGRAM_LOCS(parser_example3,
        "(fun acc@1:5 (x@1:9 s@1:12) (tuple@1:17 (+@1:25 (*@1:20 s@1:18 10@1:22) x@1:27)"
        " (+@1:37 (*@1:32 s@1:30 10@1:34) x@1:39)))\n"
        "(thread a@2:8 acc@2:12 0@2:21)\n"
        "(main@3:1 (call@3:8 smap@3:8 (fn@3:13 (x@3:16) (call@3:21 a@3:21 (call@3:23 a@3:23 x@3:25)))"
        " (list@3:30 1@3:31 2@3:34)))\n");
}

/* ---- declarations -------------------------------------------------------- */

TEST(parser_declarations)
{
    CHECK_PROGRAM("fun zero() = 0\n"
                  "fun one(x) = x\n"
                  "fun ann(x: int, s: [float]): (int, [float]) = (x, s)\n"
                  "fun higher(f: int -> int, v: int + bool, u: unit, s: str, b: bool) = f(1)\n"
                  "thread t = one init 1\n"
                  "thread c = cthread\n"
                  "main = zero()\n",
                  "(fun zero () 0)\n"
                  "(fun one (x) x)\n"
                  "(fun ann (x:int s:[float]) : (int, [float]) (tuple x s))\n"
                  "(fun higher (f:int -> int v:int + bool u:unit s:str b:bool) (call f 1))\n"
                  "(thread t one 1)\n"
                  "(thread c cthread)\n"
                  "(main (call zero))\n");
    /* declarations need not start in column 1, and main may come first;
     * `main` is an ordinary name elsewhere */
    CHECK_PROGRAM("  main = main(1)\n  fun main(x) = let main = x in main\n",
                  "(fun main (x) (let main x main))\n(main (call main 1))\n");
    /* annotations keep their structure */
    stc_diags *d = stc__diags_new("t", NULL, 0);
    const char *src = "fun f(a: (int, str) -> [bool], b): int + float -> unit = a";
    ir_program *p = stc__lang_parse(src, strlen(src), NULL, NULL, d);
    CHECK(p && stc_diags_count(d) == 0);
    if (p) {
        ir_fun *f = p->funs[0];
        CHECK(f->param_annots[0]->kind == TY_FUN && f->param_annots[0]->args[0]->kind == TY_TUPLE);
        CHECK(f->param_annots[1] == NULL);
        CHECK(f->ret_annot->kind == TY_FUN && f->ret_annot->args[0]->kind == TY_SUM);
        CHECK(f->loc.line == 1 && f->loc.col == 5);
        CHECK(f->params[1]->loc.col == 32);
        CHECK_STR(p->file, "<input>");
    }
    stc__ir_program_free(p);
    stc_diags_free(d);
    /* an empty program, or only comments */
    CHECK_PROGRAM("", "");
    CHECK_PROGRAM("-- nothing\n\n", "");
}

/* ---- expressions ------------------------------------------------------- */

TEST(parser_literals)
{
    CHECK_EXPR("42", "42");
    CHECK_EXPR("1.5", "1.5");
    CHECK_EXPR("2.5e-3", "0.0025");
    CHECK_EXPR("\"a\\n\\\"b\\x41\"", "\"a\\n\\\"bA\"");
    CHECK_EXPR("true", "true");
    CHECK_EXPR("false", "false");
    CHECK_EXPR("()", "()");
    CHECK_EXPR("( )", "()");
    CHECK_EXPR("-3", "-3");
    CHECK_EXPR("-1.5", "-1.5");
    CHECK_EXPR("- 7", "-7");
    CHECK_EXPR("-9223372036854775808", "-9223372036854775808");
    CHECK_EXPR("9223372036854775807", "9223372036854775807");
    CHECK_EXPR("-(3)", "(- 3)");
    CHECK_EXPR("- -3", "(- -3)");
    /* the literal values themselves */
    stc_diags *d = stc__diags_new("t", NULL, 0);
    const char *src = "main = (\"x\\0y\", -9223372036854775808, 0.1, ())";
    ir_program *p = stc__lang_parse(src, strlen(src), NULL, NULL, d);
    CHECK(p && p->main && p->main->kind == IR_TUPLE && p->main->u.agg.nitems == 4);
    if (p && p->main) {
        ir_expr **it = p->main->u.agg.items;
        size_t len = 0;
        const char *s = stc_value_str(it[0]->u.lit, &len);
        CHECK(s && len == 3 && s[1] == '\0' && s[2] == 'y');
        CHECK(it[1]->u.lit.tag == STC_T_INT && it[1]->u.lit.as.i == INT64_MIN);
        CHECK(it[1]->loc.col == 17);
        CHECK(it[2]->u.lit.tag == STC_T_FLOAT && it[2]->u.lit.as.f == 0.1);
        CHECK(it[3]->u.lit.tag == STC_T_UNIT && it[3]->loc.col == 44);
    }
    stc__ir_program_free(p);
    stc_diags_free(d);
}

TEST(parser_names_calls_aggregates)
{
    CHECK_EXPR("x", "x");
    CHECK_EXPR("f()", "(call f)");
    CHECK_EXPR("f (1)", "(call f 1)");
    CHECK_EXPR("nth(xs, i + 1)", "(call nth xs (+ i 1))");
    CHECK_EXPR("f(g(h(x)), (1, 2), [])", "(call f (call g (call h x)) (tuple 1 2) (list))");
    CHECK_EXPR("(x)", "x");
    CHECK_EXPR("((((x))))", "x");
    CHECK_EXPR("(1, \"a\", (), [x])", "(tuple 1 \"a\" () (list x))");
    CHECK_EXPR("((1, 2), 3)", "(tuple (tuple 1 2) 3)");
    CHECK_EXPR("[1]", "(list 1)");
    CHECK_EXPR("[[1, 2], [], [3]]", "(list (list 1 2) (list) (list 3))");
    CHECK_EXPR("[(1, 2), (3, 4)]", "(list (tuple 1 2) (tuple 3 4))");
    CHECK_PROGRAM_LOCS("main =\n  f(a,\n    b)",
                       "(main@1:1 (call@2:3 f@2:3 a@2:5 b@3:5))\n");
    CHECK_PROGRAM_LOCS("main = ([1], (2, 3))",
                       "(main@1:1 (tuple@1:8 (list@1:9 1@1:10) (tuple@1:14 2@1:15 3@1:18)))\n");
}

TEST(parser_let_if_fn_inl)
{
    CHECK_EXPR("let x = 1 in x", "(let x 1 x)");
    CHECK_EXPR("let (a, b) = p in a + b", "(let (a b) p (+ a b))");
    CHECK_EXPR("let (a, b, c) = t in c", "(let (a b c) t c)");
    CHECK_EXPR("let (a) = p in a", "(let a p a)");
    CHECK_EXPR("let x = let y = 1 in y in x", "(let x (let y 1 y) x)");
    CHECK_EXPR("if a then b else c", "(if a b c)");
    CHECK_EXPR("if a then if b then c else d else e", "(if a (if b c d) e)");
    CHECK_EXPR("if x < 1 then 0 else f(x - 1) + 1", "(if (< x 1) 0 (+ (call f (- x 1)) 1))");
    CHECK_EXPR("fn x => x + 1", "(fn (x) (+ x 1))");
    CHECK_EXPR("fn (a, b) => a * b", "(fn (a b) (* a b))");
    CHECK_EXPR("fn (a) => a", "(fn (a) a)");
    CHECK_EXPR("fn () => 1", "(fn () 1)");
    CHECK_EXPR("fn x => fn y => (x, y)", "(fn (x) (fn (y) (tuple x y)))");
    CHECK_EXPR("inl 1", "(inl 1)");
    CHECK_EXPR("inr (1, 2)", "(inr (tuple 1 2))");
    CHECK_EXPR("inl inr x", "(inl (inr x))");
    CHECK_EXPR("not x", "(not x)");
    CHECK_EXPR("not not x", "(not (not x))");
    CHECK_EXPR("-x", "(- x)");
    CHECK_PROGRAM_LOCS("main = let (a, b) = p in\n  fn (c) => inl not a",
                       "(main@1:1 (let@1:8 (a@1:13 b@1:16) p@1:21 (fn@2:3 (c@2:7) "
                       "(inl@2:13 (not@2:17 a@2:21)))))\n");
    CHECK_PROGRAM_LOCS("main = if c then -x else - 1.5",
                       "(main@1:1 (if@1:8 c@1:11 (-@1:18 x@1:19) -1.5@1:26))\n");
    /* the lambda's ir_fun */
    stc_diags *d = stc__diags_new("t", NULL, 0);
    const char *src = "main = fn (a, b) => a";
    ir_program *p = stc__lang_parse(src, strlen(src), NULL, NULL, d);
    CHECK(p && p->main && p->main->kind == IR_LAMBDA);
    if (p && p->main) {
        ir_fun *fn = p->main->u.fn;
        CHECK_INT(fn->nparams, 2);
        CHECK_INT(fn->index, -1);
        CHECK(fn->loc.line == 1 && fn->loc.col == 8);
        CHECK(fn->ret_annot == NULL && fn->param_annots[1] == NULL);
        CHECK(fn->body->kind == IR_NAME && fn->params[1]->loc.col == 15);
        CHECK_INT(p->nfuns, 0); /* lambdas are not top-level functions */
    }
    stc__ir_program_free(p);
    stc_diags_free(d);
}

TEST(parser_case)
{
    CHECK_EXPR("case x of 1 => a | _ => b", "(case x (1 => a) (_ => b))");
    CHECK_EXPR("case x of | 1 => a | 2 => b", "(case x (1 => a) (2 => b))");
    CHECK_EXPR("case v of inl l => l | inr r => r", "(case v ((inl l) => l) ((inr r) => r))");
    CHECK_EXPR("case p of (a, b) => a | (c) => c | y => y",
               "(case p ((a b) => a) (c => c) (y => y))");
    CHECK_EXPR("case x of -3 => a | -1.5 => b | 2.5 => c | \"s\" => d | true => e | false => f"
               " | () => g | - 4 => h | -9223372036854775808 => i",
               "(case x (-3 => a) (-1.5 => b) (2.5 => c) (\"s\" => d) (true => e) (false => f)"
               " (() => g) (-4 => h) (-9223372036854775808 => i))");
    /* bodies extend as far as possible: a case in the last alternative takes
     * the following alternatives */
    CHECK_EXPR("case a of 1 => case b of 2 => x | 3 => y",
               "(case a (1 => (case b (2 => x) (3 => y))))");
    CHECK_EXPR("case a of 1 => (case b of 2 => x) | 3 => y",
               "(case a (1 => (case b (2 => x))) (3 => y))");
    CHECK_EXPR("case a of 1 => x + 1 | _ => if c then 1 else 2 || d",
               "(case a (1 => (+ x 1)) (_ => (if c 1 (|| 2 d))))");
    CHECK_EXPR("(case a of 1 => 2 | _ => 3, 4)", "(tuple (case a (1 => 2) (_ => 3)) 4)");
    CHECK_EXPR("f(case a of _ => 1, 2)", "(call f (case a (_ => 1)) 2)");
    CHECK_PROGRAM_LOCS("main = case e of\n  | inl x => x\n  | (a, b) => a",
                       "(main@1:1 (case@1:8 e@1:13 ((inl x@2:9)@2:5 => x@2:14)"
                       " ((a@3:6 b@3:9)@3:5 => a@3:15)))\n");
    /* the alternatives' fields */
    stc_diags *d = stc__diags_new("t", NULL, 0);
    const char *src = "main = case e of \"k\" => 1 | (a, b, c) => 2 | inr z => 3 | _ => 4";
    ir_program *p = stc__lang_parse(src, strlen(src), NULL, NULL, d);
    CHECK(p && p->main && p->main->kind == IR_CASE && p->main->u.cas.nalts == 4);
    if (p && p->main) {
        ir_alt *a = p->main->u.cas.alts;
        CHECK(a[0].pat == PAT_LIT && a[0].lit.tag == STC_T_STR && a[0].loc.col == 18);
        CHECK_STR(stc_value_str(a[0].lit, NULL), "k");
        CHECK(a[1].pat == PAT_TUPLE && a[1].nvars == 3);
        CHECK_STR(a[1].vars[2]->name, "c");
        CHECK(a[2].pat == PAT_INR && a[2].nvars == 1);
        CHECK_STR(a[2].vars[0]->name, "z");
        CHECK(a[3].pat == PAT_WILD && a[3].nvars == 0 && a[3].body->kind == IR_LIT);
    }
    stc__ir_program_free(p);
    stc_diags_free(d);
}

/* ---- precedence and associativity -------------------------------------- */

TEST(parser_precedence)
{
    CHECK_EXPR("a || b && c", "(|| a (&& b c))");
    CHECK_EXPR("a && b || c", "(|| (&& a b) c)");
    CHECK_EXPR("a || b || c", "(|| (|| a b) c)");
    CHECK_EXPR("a && b && c", "(&& (&& a b) c)");
    CHECK_EXPR("a == b && c != d", "(&& (== a b) (!= c d))");
    CHECK_EXPR("a < b || c <= d && e > f", "(|| (< a b) (&& (<= c d) (> e f)))");
    CHECK_EXPR("a >= b + c", "(>= a (+ b c))");
    CHECK_EXPR("a + b == c * d", "(== (+ a b) (* c d))");
    CHECK_EXPR("a + b * c", "(+ a (* b c))");
    CHECK_EXPR("a * b + c", "(+ (* a b) c)");
    CHECK_EXPR("a - b - c", "(- (- a b) c)");
    CHECK_EXPR("a - b + c", "(+ (- a b) c)");
    CHECK_EXPR("a / b * c % d", "(% (* (/ a b) c) d)");
    CHECK_EXPR("a * (b + c)", "(* a (+ b c))");
    CHECK_EXPR("-a * b", "(* (- a) b)");
    CHECK_EXPR("-2 * 3", "(* -2 3)");
    CHECK_EXPR("a - -2", "(- a -2)");
    CHECK_EXPR("a--2", "a"); /* -- starts a comment */
    CHECK_EXPR("- - a", "(- (- a))");
    CHECK_EXPR("not a && b", "(&& (not a) b)");
    CHECK_EXPR("not a == b", "(== (not a) b)");
    CHECK_EXPR("inl x + 1", "(+ (inl x) 1)");
    CHECK_EXPR("inl -x * 2", "(* (inl (- x)) 2)");
    CHECK_EXPR("(a < b) == c", "(== (< a b) c)");
    CHECK_EXPR("a < (b < c)", "(< a (< b c))");
    /* let / if / case / fn bodies extend as far right as possible */
    CHECK_EXPR("1 + if c then 2 else 3 + 4", "(+ 1 (if c 2 (+ 3 4)))");
    CHECK_EXPR("let x = 1 in x + 2 * 3", "(let x 1 (+ x (* 2 3)))");
    CHECK_EXPR("x * let y = 2 in y + 1", "(* x (let y 2 (+ y 1)))");
    CHECK_EXPR("fn x => x || y", "(fn (x) (|| x y))");
    CHECK_EXPR("-fn x => x", "(- (fn (x) x))");
    CHECK_EXPR("a && case b of _ => c || d", "(&& a (case b (_ => (|| c d))))");
    CHECK_PROGRAM_LOCS("main = a - b * -c",
                       "(main@1:1 (-@1:10 a@1:8 (*@1:14 b@1:12 (-@1:16 c@1:17))))\n");
}

/* ---- types ------------------------------------------------------------- */

static char *parser_type(const char *text, char **diags)
{
    ir_program *p = stc__ir_program_new("t", NULL);
    stc_diags *d = stc__diags_new("t", NULL, 0);
    ir_type *t = stc__lang_parse_type(p, text, d);
    char *s = t ? stc__ir_type_to_string(t) : NULL;
    *diags = parser_diags(d);
    CHECK((t == NULL) == (stc_diags_count(d) > 0));
    stc_diags_free(d);
    stc__ir_program_free(p);
    return s;
}

#define CHECK_TYPE(text, expected)                                                        \
    do {                                                                                  \
        char *dg_;                                                                        \
        char *s_ = parser_type((text), &dg_);                                             \
        CHECK_STR(s_, (expected));                                                        \
        CHECK_STR(dg_, "");                                                               \
        free(s_);                                                                         \
        free(dg_);                                                                        \
    } while (0)

#define CHECK_TYPE_ERROR(text, expected)                                                  \
    do {                                                                                  \
        char *dg_;                                                                        \
        char *s_ = parser_type((text), &dg_);                                             \
        CHECK(s_ == NULL);                                                                \
        CHECK_STR(dg_, (expected));                                                       \
        free(s_);                                                                         \
        free(dg_);                                                                        \
    } while (0)

TEST(parser_types)
{
    CHECK_TYPE("int", "int");
    CHECK_TYPE("  float ", "float");
    CHECK_TYPE("bool", "bool");
    CHECK_TYPE("str", "str");
    CHECK_TYPE("unit", "unit");
    CHECK_TYPE("[int]", "[int]");
    CHECK_TYPE("[[str]]", "[[str]]");
    CHECK_TYPE("(int, float)", "(int, float)");
    CHECK_TYPE("(int, (bool, str), [unit])", "(int, (bool, str), [unit])");
    CHECK_TYPE("(int)", "int");
    CHECK_TYPE("int -> int", "int -> int");
    CHECK_TYPE("int -> int -> int", "int -> int -> int");     /* right-associative */
    CHECK_TYPE("(int -> int) -> int", "(int -> int) -> int");
    CHECK_TYPE("int + bool", "int + bool");
    CHECK_TYPE("int + bool + str", "(int + bool) + str");      /* left-associative */
    CHECK_TYPE("int + (bool + str)", "int + (bool + str)");
    CHECK_TYPE("int + bool -> str + unit", "(int + bool) -> str + unit"); /* + binds tighter */
    CHECK_TYPE("(int, str) -> [(int, str)]", "(int, str) -> [(int, str)]");
    CHECK_TYPE("[int -> int]", "[int -> int]");
    CHECK_TYPE("-- comment\nint", "int");

    /* the structure itself */
    ir_program *p = stc__ir_program_new("t", NULL);
    ir_type *t = stc__lang_parse_type(p, "int -> bool -> str", NULL);
    CHECK(t && t->kind == TY_FUN && t->args[0]->kind == TY_INT && t->args[1]->kind == TY_FUN);
    t = stc__lang_parse_type(p, "int + bool + str", NULL);
    CHECK(t && t->kind == TY_SUM && t->args[0]->kind == TY_SUM && t->args[1]->kind == TY_STR);
    t = stc__lang_parse_type(p, "(int, bool, [str])", NULL);
    CHECK(t && t->kind == TY_TUPLE && t->n == 3 && t->args[2]->kind == TY_LIST &&
          t->args[2]->args[0]->kind == TY_STR);
    CHECK(stc__lang_parse_type(p, "nope", NULL) == NULL); /* NULL diags are fine */
    CHECK(stc__lang_parse_type(NULL, "int", NULL) == NULL);
    stc__ir_program_free(p);
}

TEST(parser_type_errors)
{
    CHECK_TYPE_ERROR("", "1:1: expected a type, found end of input");
    CHECK_TYPE_ERROR("integer", "1:1: unknown type 'integer'");
    CHECK_TYPE_ERROR("int int", "1:5: expected end of the type, found 'int'");
    CHECK_TYPE_ERROR("[int", "1:5: expected ']' after the list element type, found end of input");
    CHECK_TYPE_ERROR("(int, str", "1:10: expected ')' after the tuple types, found end of input");
    CHECK_TYPE_ERROR("(int", "1:5: expected ')' after the type, found end of input");
    CHECK_TYPE_ERROR("int ->", "1:7: expected a type, found end of input");
    CHECK_TYPE_ERROR("int + -> int", "1:7: expected a type, found '->'");
    CHECK_TYPE_ERROR("()", "1:2: expected a type, found ')'");
    CHECK_TYPE_ERROR("int $", "1:5: unexpected character '$'");
    CHECK_TYPE_ERROR("[str", "1:5: expected ']' after the list element type, found end of input");
    char *dg;
    char *s = parser_type(NULL, &dg);
    CHECK(s == NULL);
    CHECK_STR(dg, "1:1: expected a type, found nothing");
    free(dg);
    /* nesting: by recursion ([[[...) and by a long left-associative chain */
    buf b = BUF_INIT;
    for (int i = 0; i < 5000; i++) stc__buf_putc(&b, '[');
    stc__buf_puts(&b, "int");
    s = parser_type(b.data, &dg);
    CHECK(s == NULL);
    CHECK_STR(dg, "1:1001: type nested too deeply (limit 1000)");
    free(dg);
    stc__buf_free(&b);
    stc__buf_puts(&b, "int");
    for (int i = 0; i < 1500; i++) stc__buf_puts(&b, " + int");
    s = parser_type(b.data, &dg);
    CHECK(s == NULL);
    CHECK_STR(dg, "1:1: type nested too deeply (limit 1000)");
    free(dg);
    stc__buf_free(&b);
    /* 998 levels are fine */
    for (int i = 0; i < 998; i++) stc__buf_putc(&b, '[');
    stc__buf_puts(&b, "int");
    for (int i = 0; i < 998; i++) stc__buf_putc(&b, ']');
    s = parser_type(b.data, &dg);
    CHECK(s != NULL);
    CHECK_STR(dg, "");
    free(s);
    free(dg);
    stc__buf_free(&b);
}

/* ---- errors ------------------------------------------------------------ */

TEST(parser_error_messages)
{
    /* declarations */
    CHECK_ERRORS("foo", "1:1: expected a declaration ('fun', 'thread' or 'main ='), found 'foo'");
    CHECK_ERRORS("42", "1:1: expected a declaration ('fun', 'thread' or 'main ='), found '42'");
    CHECK_ERRORS("\"s\"", "1:1: expected a declaration ('fun', 'thread' or 'main ='), found string literal");
    CHECK_ERRORS("fun (x) = x", "1:5: expected a function name after 'fun', found '('");
    CHECK_ERRORS("fun f x = x", "1:7: expected '(' after the function name, found 'x'");
    CHECK_ERRORS("fun f(1) = x", "1:7: expected a parameter name, found '1'");
    CHECK_ERRORS("fun f(x,) = x", "1:9: expected a parameter name, found ')'");
    CHECK_ERRORS("fun f(x y) = x", "1:9: expected ',' or ')' after a parameter, found 'y'");
    CHECK_ERRORS("fun f(x) x", "1:10: expected '=' before the function body, found 'x'");
    CHECK_ERRORS("fun f(x: foo) = x", "1:10: unknown type 'foo'");
    CHECK_ERRORS("fun f(x): = x", "1:11: expected a type, found '='");
    CHECK_ERRORS("fun f(x) =", "1:11: expected an expression, found end of input");
    CHECK_ERRORS("thread = f", "1:8: expected a thread name after 'thread', found '='");
    CHECK_ERRORS("thread t f", "1:10: expected '=' after the thread name, found 'f'");
    CHECK_ERRORS("thread t = 3", "1:12: expected the name of the thread's function after '=', found '3'");
    CHECK_ERRORS("thread t = f init", "1:18: expected an expression, found end of input");
    CHECK_ERRORS("main", "1:5: expected '=' after 'main', found end of input");
    CHECK_ERRORS("main(1)", "1:5: expected '=' after 'main', found '('");
    CHECK_ERRORS("main = 1\nmain = 2", "2:1: 'main' is already defined at 1:1");
    CHECK_ERRORS("main = 1 2", "1:10: expected a declaration ('fun', 'thread' or 'main ='), found '2'");
    /* expressions */
    CHECK_ERRORS("main = f(1 in 2", "1:12: expected ')' after arguments, found 'in'");
    CHECK_ERRORS("main = f(1,)", "1:12: expected an expression, found ')'");
    CHECK_ERRORS("main = (1, 2", "1:13: expected ')' after the tuple items, found end of input");
    CHECK_ERRORS("main = (1 2)", "1:11: expected ')' after the expression, found '2'");
    CHECK_ERRORS("main = [1 2]", "1:11: expected ']' after the list items, found '2'");
    CHECK_ERRORS("main = [1,]", "1:11: expected an expression, found ']'");
    CHECK_ERRORS("main = )", "1:8: expected an expression, found ')'");
    CHECK_ERRORS("main = 1 +", "1:11: expected an expression, found end of input");
    CHECK_ERRORS("main = 1 +\n\n-- trailing comment\n", "1:11: expected an expression, found end of input");
    CHECK_ERRORS("main = 1 < 2 < 3", "1:14: comparison operators cannot be chained (use parentheses)");
    CHECK_ERRORS("main = a == b != c", "1:15: comparison operators cannot be chained (use parentheses)");
    CHECK_ERRORS("main = a < b + 1 >= c", "1:18: comparison operators cannot be chained (use parentheses)");
    CHECK_ERRORS("main = let = 1 in 2", "1:12: expected a name after 'let', found '='");
    CHECK_ERRORS("main = let x 1 in 2", "1:14: expected '=' after the name bound by 'let', found '1'");
    CHECK_ERRORS("main = let x = 1 x", "1:18: expected 'in' after the value of 'let', found 'x'");
    CHECK_ERRORS("main = let (a, 1) = p in a", "1:16: expected a name in 'let (...)', found '1'");
    CHECK_ERRORS("main = let () = p in a", "1:13: expected a name in 'let (...)', found ')'");
    CHECK_ERRORS("main = let (a b) = p in a", "1:15: expected ',' or ')' after a name, found 'b'");
    CHECK_ERRORS("main = if a b else c", "1:13: expected 'then' after the condition of 'if', found 'b'");
    CHECK_ERRORS("main = if a then b", "1:19: expected 'else' after the 'then' branch, found end of input");
    CHECK_ERRORS("main = case x 1 => 2", "1:15: expected 'of' after the expression of 'case', found '1'");
    CHECK_ERRORS("main = case x of 1 2", "1:20: expected '=>' after the pattern, found '2'");
    CHECK_ERRORS("main = case x of 1 => 2 |", "1:26: expected a pattern, found end of input");
    CHECK_ERRORS("main = case x of f(y) => 2", "1:19: expected '=>' after the pattern, found '('");
    CHECK_ERRORS("main = case x of [] => 2", "1:18: expected a pattern, found '['");
    CHECK_ERRORS("main = case x of - y => 2", "1:20: expected a number after '-' in a pattern, found 'y'");
    CHECK_ERRORS("main = case x of inl 1 => 2", "1:22: expected a name after 'inl' in a pattern, found '1'");
    CHECK_ERRORS("main = case x of inr (a) => 2", "1:22: expected a name after 'inr' in a pattern, found '('");
    CHECK_ERRORS("main = case x of (a, 1) => 2", "1:22: expected a name in a tuple pattern, found '1'");
    CHECK_ERRORS("main = case x of 9223372036854775808 => 2", "1:18: integer literal out of range");
    CHECK_ERRORS("main = fn => 1", "1:11: expected a parameter name or '(' after 'fn', found '=>'");
    CHECK_ERRORS("main = fn (a, ) => 1", "1:15: expected a parameter name after 'fn (', found ')'");
    CHECK_ERRORS("main = fn x -> 1", "1:13: expected '=>' after the parameters of 'fn', found '->'");
    CHECK_ERRORS("main = fn x = 1", "1:13: expected '=>' after the parameters of 'fn', found '='");
    CHECK_ERRORS("main = not", "1:11: expected an expression, found end of input");
    CHECK_ERRORS("main = inl", "1:11: expected an expression, found end of input");
    CHECK_ERRORS("main = f(x)(y)", "1:12: calling the result of a call is not supported (bind it first: let g = f(x) in g(y))");
    CHECK_ERRORS("main = thread", "1:8: expected an expression, found 'thread'");
    CHECK_ERRORS("main = averyveryverylongidentifiername_abcdefgh +",
                 "1:50: expected an expression, found end of input");
    CHECK_ERRORS("main = 1 + averyveryverylongidentifiername_abcdefgh(",
                 "1:53: expected an expression, found end of input");
    CHECK_ERRORS("main = (1 averyveryverylongidentifiername_abcdefgh",
                 "1:11: expected ')' after the expression, found 'averyveryverylongidentif...'");
    /* literals */
    CHECK_ERRORS("main = 9223372036854775808", "1:8: integer literal out of range");
    CHECK_ERRORS("main = -(9223372036854775808)", "1:10: integer literal out of range");
    CHECK_ERRORS("main = 1 - 9223372036854775808", "1:12: integer literal out of range");
    CHECK_ERRORS("main = 18446744073709551616", "1:8: integer literal out of range");
    CHECK_ERRORS("main = -18446744073709551617", "1:9: integer literal out of range");
    CHECK_ERRORS("main = 1e400", "1:8: float literal out of range");
    CHECK_ERRORS("main = 1.", "1:9: malformed number: expected a digit after '.'");
    CHECK_ERRORS("main = \"abc", "1:8: unterminated string literal");
    CHECK_ERRORS("main = \"ab\ncd\"", "1:11: newline in string literal (write \\n); 2:3: unterminated string literal");
    CHECK_ERRORS("main = \"a\\e\"", "1:10: invalid escape sequence '\\e' in string literal");
    CHECK_ERRORS("main = 1 \x01 2", "1:10: unexpected character '\\x01'");
    CHECK_ERRORS_LEN("main = \0", 8, "1:8: unexpected character '\\x00'");
    CHECK_ERRORS("main = \xff\xfe", "1:8: unexpected character '\\xff'");
    CHECK_ERRORS("main = a & b", "1:10: unexpected character '&'");
    CHECK_ERRORS("main = a ! b", "1:10: unexpected character '!'");
    /* the parse error caused by skipped bytes is not reported twice */
    CHECK_ERRORS("main = 1 $ 2", "1:10: unexpected character '$'");
    CHECK_ERRORS("main = f($)", "1:10: unexpected character '$'");
    CHECK_ERRORS("main = \"abc\n  + 1", "1:12: newline in string literal (write \\n)");
}

TEST(parser_error_recovery)
{
    /* two broken declarations: two diagnostics; the good ones are kept */
    const char *src = "fun f(x) = x +\n"
                      "fun g(x) = x\n"
                      "thread t = 3\n"
                      "main = g(1)\n";
    stc_diags *d = stc__diags_new("t", NULL, 0);
    ir_program *p = stc__lang_parse(src, strlen(src), NULL, NULL, d);
    char *dg = parser_diags(d);
    CHECK_STR(dg, "2:1: expected an expression, found 'fun'; "
                  "3:12: expected the name of the thread's function after '=', found '3'");
    free(dg);
    CHECK(p && p->nfuns == 1 && p->nthreads == 0 && p->main != NULL);
    if (p && p->nfuns == 1) CHECK_STR(p->funs[0]->name, "g");
    stc__ir_program_free(p);
    stc_diags_free(d);

    /* recovery resumes only at a declaration in column 1 */
    CHECK_ERRORS("fun f(x) = (x\n  fun g(y) = y\nmain = (1\n",
                 "2:3: expected ')' after the expression, found 'fun'; "
                 "3:10: expected ')' after the expression, found end of input");
    CHECK_ERRORS("main = 1 2\nthread t = f\nfun f(, ) = 1\nmain = 3 3\nmain = 4",
                 "1:10: expected a declaration ('fun', 'thread' or 'main ='), found '2'; "
                 "3:7: expected a parameter name, found ','; "
                 "4:1: 'main' is already defined at 1:1; "
                 "5:1: 'main' is already defined at 1:1");
    /* `main` not followed by '=' does not restart parsing */
    CHECK_ERRORS("main = )\nmain + 1\nmain = 2\n", "1:8: expected an expression, found ')'");
    CHECK_ERRORS("main = (\nmain + 1\nmain = 2\n", "3:1: expected ')' after the expression, found 'main'");
    CHECK_ERRORS("fun f(x) = )\nfun g(x) = ]\nfun h(x) = }\nfun k(x) = x\n",
                 "1:12: expected an expression, found ')'; 2:12: expected an expression, found ']'; "
                 "3:12: expected an expression, found '}'");
    /* many errors: at most DIAG_MAX are kept */
    buf b = BUF_INIT;
    for (int i = 0; i < 200; i++) stc__buf_puts(&b, "fun f( = 1\n");
    d = stc__diags_new("t", NULL, 0);
    p = stc__lang_parse(b.data, b.len, NULL, NULL, d);
    CHECK(p != NULL);
    CHECK_INT(stc_diags_count(d), DIAG_MAX);
    CHECK_INT(d->dropped, 200 - DIAG_MAX);
    CHECK_INT(stc_diags_line(d, 49), 50);
    stc__ir_program_free(p);
    stc_diags_free(d);
    stc__buf_free(&b);
}

/* ---- nesting and robustness --------------------------------------------- */

static char *parser_first_diag(const char *src, size_t len)
{
    stc_diags *d = stc__diags_new("t", NULL, 0);
    ir_program *p = stc__lang_parse(src, len, NULL, NULL, d);
    CHECK(p != NULL);
    char *s = NULL;
    if (stc_diags_count(d) > 0) {
        buf b = BUF_INIT;
        stc__buf_printf(&b, "%d:%d: %s", stc_diags_line(d, 0), stc_diags_col(d, 0), stc_diags_message(d, 0));
        s = stc__buf_take(&b);
    }
    stc__ir_program_free(p);
    stc_diags_free(d);
    return s;
}

static void parser_check_deep(const char *prefix, const char *unit, int n, const char *suffix,
                              const char *expected)
{
    buf b = BUF_INIT;
    stc__buf_puts(&b, prefix);
    for (int i = 0; i < n; i++) stc__buf_puts(&b, unit);
    stc__buf_puts(&b, suffix);
    char *s = parser_first_diag(b.data, b.len);
    if (expected) CHECK_STR(s, expected);
    else CHECK(s == NULL);
    if (expected == NULL && s) fprintf(stderr, "unexpected: %s (%s x %d)\n", s, unit, n);
    free(s);
    stc__buf_free(&b);
}

TEST(parser_nesting_limits)
{
    /* The recursion guard: the 1001st nested expression is refused, at the
     * token where it starts.  100000 '(' : no stack overflow. */
    parser_check_deep("main = ", "(", 100000, "", "1:1008: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "[", 100000, "", "1:1008: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "- ", 100000, "x", "1:2008: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "not ", 5000, "x", "1:4008: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "inr ", 5000, "x", "1:4008: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "f(", 5000, "", "1:2008: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "fn x => ", 5000, "x", "1:8008: expression nested too deeply (limit 1000)");
    /* the 1000th let/if/case is accepted, its first sub-expression is not */
    parser_check_deep("main = ", "let x = 1 in ", 5000, "x",
                      "1:13003: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "if c then 1 else ", 5000, "x",
                      "1:16994: expression nested too deeply (limit 1000)");
    parser_check_deep("main = ", "case x of _ => ", 5000, "x",
                      "1:14998: expression nested too deeply (limit 1000)");
    parser_check_deep("fun f(x: ", "[", 100000, "int]) = 1", "1:1010: type nested too deeply (limit 1000)");
    parser_check_deep("fun f(x: int", " -> int", 100000, ") = 1",
                      "1:7010: type nested too deeply (limit 1000)");
    /* A left-associative chain is one level however long (built by a
     * loop, walked by loops): 100000 terms are no nesting; its operands
     * are one level down. */
    parser_check_deep("main = 1", " + 1", 2000, "", NULL);
    parser_check_deep("main = 1", " || 1", 2000, "", NULL);
    parser_check_deep("main = 1", " + 1", 100000, "", NULL);
    parser_check_deep("main = 1", " * 2 - 1", 100000, "", NULL);
    parser_check_deep("main = 1 + 2 * ", "(", 100000, "", "1:1016: expression nested too deeply (limit 1000)");
    parser_check_deep("main = 1 + ", "-(1 + ", 5000, "1", "1:3008: expression nested too deeply (limit 1000)");
    parser_check_deep("fun f(x: int", " + int", 5000, ") = 1",
                      "1:10: type nested too deeply (limit 1000)");
    parser_check_deep("thread t = f init 1", " * 1", 2000, "", NULL);
    /* just under the limits is fine */
    buf b = BUF_INIT;
    for (int i = 0; i < 999; i++) stc__buf_putc(&b, '(');
    stc__buf_putc(&b, '1');
    for (int i = 0; i < 999; i++) stc__buf_putc(&b, ')');
    parser_check_deep("main = ", b.data, 1, "", NULL);
    stc__buf_free(&b);
    parser_check_deep("main = 1", " + 1", 999, "", NULL);
    parser_check_deep("main = 1", " + 1", 1000, "", NULL);
    parser_check_deep("main = ", "- ", 999, "x", NULL);
    parser_check_deep("main = ", "let x = 1 in ", 999, "x", NULL);
    /* wide is not deep */
    parser_check_deep("main = [0", ", 1", 100000, "]", NULL);
    parser_check_deep("main = f(0", ", (1, 2)", 20000, ")", NULL);
    parser_check_deep("main = case x of 0 => 0", " | 1 => 1", 20000, "", NULL);
    parser_check_deep("", "main = 1\n", 1, "", NULL);
}

/* ---- fuzzing ------------------------------------------------------------- */

static uint64_t parser_rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static const char parser_all_constructs[] =
    "-- every construct\n"
    "fun f(x: int, s: [float]): (int, [float]) = (x + 1, s)\n"
    "fun g() = let (a, b) = (1, 2.5) in if a < 2 && not false || true then a else -b\n"
    "fun h(v: int + str, k: (int, bool) -> unit) = case v of | inl x => x * 2 / 3 % 4\n"
    "  | inr s => len(s) | 0 => -1 | -2 => 2.5 | \"x\\n\" => 3 | () => 0 | _ => 1\n"
    "  | (p, q) => p - q | true => 1 | y => case y of 1 => 2 | _ => 3\n"
    "thread t = f init [1.0, 2.0e3]\n"
    "thread u = cfun\n"
    "main = smap(fn (a, b) => (inl a, inr b, a != b, a == b, a >= b, a <= b, a > b), "
    "[(1, 2), (3, 4)]) -- done\n";

/* Structural invariants of an accepted program's IR (no NULL holes). */
static bool parser_shape_ok(const ir_expr *e, int depth)
{
    if (!e || depth > IR_MAX_DEPTH) return false;
    switch (e->kind) {
    case IR_LIT: return e->u.lit.tag != STC_T_INVALID;
    case IR_NAME: return e->u.name && e->u.name[0];
    case IR_LET:
    case IR_LETTUPLE:
        if (e->u.let.nbinders != (e->kind == IR_LET ? 1 : e->u.let.nbinders) ||
            (e->kind == IR_LETTUPLE && e->u.let.nbinders < 2))
            return false;
        for (int i = 0; i < e->u.let.nbinders; i++)
            if (!e->u.let.binders[i]) return false;
        return parser_shape_ok(e->a, depth + 1) && parser_shape_ok(e->b, depth + 1);
    case IR_IF:
        return parser_shape_ok(e->a, depth + 1) && parser_shape_ok(e->b, depth + 1) &&
               parser_shape_ok(e->c, depth + 1);
    case IR_CASE:
        if (e->u.cas.nalts < 1) return false;
        for (int i = 0; i < e->u.cas.nalts; i++) {
            const ir_alt *a = &e->u.cas.alts[i];
            int want = a->pat == PAT_LIT || a->pat == PAT_WILD ? 0 : a->pat == PAT_TUPLE ? -1 : 1;
            if ((want >= 0 && a->nvars != want) || (want < 0 && a->nvars < 2)) return false;
            for (int j = 0; j < a->nvars; j++)
                if (!a->vars[j]) return false;
            if (!parser_shape_ok(a->body, depth + 1)) return false;
        }
        return parser_shape_ok(e->a, depth + 1);
    case IR_LAMBDA:
        for (int i = 0; i < e->u.fn->nparams; i++)
            if (!e->u.fn->params[i]) return false;
        return e->u.fn->index == -1 && parser_shape_ok(e->u.fn->body, depth + 1);
    case IR_INL:
    case IR_INR:
    case IR_UNOP: return parser_shape_ok(e->a, depth + 1);
    case IR_BINOP: return parser_shape_ok(e->a, depth + 1) && parser_shape_ok(e->b, depth + 1);
    case IR_CALL:
        if (e->u.call.kind != CALL_NAME || !e->u.call.callee.name) return false;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (!parser_shape_ok(e->u.call.args[i], depth + 1)) return false;
        return true;
    case IR_TUPLE:
    case IR_LIST:
        if (e->kind == IR_TUPLE && e->u.agg.nitems < 2) return false;
        for (int i = 0; i < e->u.agg.nitems; i++)
            if (!parser_shape_ok(e->u.agg.items[i], depth + 1)) return false;
        return true;
    default: return false;
    }
}

typedef struct parser_fuzz_stats {
    int accepted, rejected, roundtrips;
} parser_fuzz_stats;

/* Parses one input and checks the invariants: every diagnostic located;
 * an accepted program is complete and prints back to source that parses
 * to the same IR. */
static void parser_fuzz_one(const char *src, size_t len, parser_fuzz_stats *st)
{
    stc_diags *d = stc__diags_new("t", src, len);
    ir_program *p = stc__lang_parse(src, len, "t", NULL, d);
    CHECK(p != NULL);
    if (!p) { stc_diags_free(d); return; }
    size_t n = stc_diags_count(d);
    for (size_t i = 0; i < n; i++) {
        CHECK(stc_diags_line(d, i) >= 1 && stc_diags_col(d, i) >= 1);
        CHECK(stc_diags_message(d, i) && stc_diags_message(d, i)[0]);
    }
    char *fmt = stc_diags_format(d); /* exercises the caret printer */
    CHECK((fmt != NULL) == (n > 0));
    free(fmt);
    if (n > 0) {
        st->rejected++;
    } else {
        st->accepted++;
        for (int i = 0; i < p->nfuns; i++) CHECK(parser_shape_ok(p->funs[i]->body, 1));
        for (int i = 0; i < p->nthreads; i++)
            CHECK(!p->threads[i]->init || parser_shape_ok(p->threads[i]->init, 1));
        CHECK(!p->main || parser_shape_ok(p->main, 1));
        char *dump = ir_dump_program(p, false);
        char *again = ir_dump_source(p);
        stc_diags *d2 = stc__diags_new("t", NULL, 0);
        ir_program *p2 = again ? stc__lang_parse(again, strlen(again), "t", NULL, d2) : NULL;
        if (p2 && stc_diags_count(d2) == 0) {
            char *dump2 = ir_dump_program(p2, false);
            CHECK_STR(dump2, dump);
            free(dump2);
            st->roundtrips++;
        } else {
            /* only the nesting limit may stop the reparse (parentheses nest deeper) */
            CHECK(p2 && stc_diags_count(d2) > 0);
            if (p2 && stc_diags_count(d2) > 0) CHECK_CONTAINS(stc_diags_message(d2, 0), "nested too deeply");
        }
        stc__ir_program_free(p2);
        stc_diags_free(d2);
        free(again);
        free(dump);
    }
    stc__ir_program_free(p);
    stc_diags_free(d);
}

/* Token spans of a valid program, for token-level mutations. */
typedef struct parser_span {
    size_t start, len;
} parser_span;

static int parser_tokens(const char *src, size_t len, parser_span *out, int max)
{
    lexer lx;
    stc__lex_init(&lx, src, len, NULL);
    int n = 0;
    for (;;) {
        lex_token t = stc__lex_next(&lx);
        if (t.kind == TOK_EOF || n == max) return n;
        out[n++] = (parser_span){t.start, t.len};
    }
}

TEST(parser_roundtrip_corpus)
{
    parser_fuzz_stats st = {0, 0, 0};
    const char *corpus[] = {parser_example1, parser_example2, parser_example3, parser_all_constructs};
    for (int i = 0; i < 4; i++) parser_fuzz_one(corpus[i], strlen(corpus[i]), &st);
    CHECK_INT(st.accepted, 4);
    CHECK_INT(st.roundtrips, 4);
}

TEST(parser_fuzz_random_bytes)
{
    uint64_t seed = 0x51a7e5eedULL;
    parser_fuzz_stats st = {0, 0, 0};
    static const char alphabet[] = "fun thread main let in if then else case of fn inl inr not "
                                   "true false init x y 0 1 2.5 \"s\" ( ) [ ] , : = => | _ || && "
                                   "== != < <= > >= + - * / % -> -- \n";
    char src[512];
    for (int iter = 0; iter < 8000; iter++) {
        size_t len = (size_t)(parser_rng(&seed) % sizeof src);
        int mode = iter % 3;
        for (size_t i = 0; i < len; i++) {
            uint64_t r = parser_rng(&seed);
            if (mode == 0) src[i] = (char)(r & 0xff);                          /* any byte */
            else if (mode == 1) src[i] = (char)(0x20 + r % 0x5f);               /* printable */
            else src[i] = alphabet[r % (sizeof alphabet - 1)];                  /* token soup */
        }
        parser_fuzz_one(src, len, &st);
    }
    CHECK(st.rejected > 7000);
}

TEST(parser_fuzz_mutations)
{
    uint64_t seed = 0xc0ffee1234ULL;
    parser_fuzz_stats st = {0, 0, 0};
    const char *corpus[] = {parser_example1, parser_example2, parser_example3, parser_all_constructs};
    static const char *const snippets[] = {"(", ")", "[", "]", ",", "let", "in", "case", "of", "|",
                                           "=>", "fn", "if", "then", "else", "-", "not", "inl",
                                           "x", "1", "\"", "--", "\n", "fun", "main =", "_", "=",
                                           "9223372036854775808", "1.", "\\", "\xc3", "\0"};
    parser_span spans[512];
    buf b = BUF_INIT;
    for (int iter = 0; iter < 12000; iter++) {
        const char *base = corpus[iter % 4];
        size_t blen = strlen(base);
        int ntok = parser_tokens(base, blen, spans, 512);
        stc__buf_free(&b);
        stc__buf_put(&b, base, blen);
        int nmut = 1 + (int)(parser_rng(&seed) % 3);
        for (int m = 0; m < nmut && b.len > 0; m++) {
            uint64_t r = parser_rng(&seed);
            size_t pos = (size_t)(parser_rng(&seed) % b.len);
            switch (r % 6) {
            case 0: /* flip a byte */
                b.data[pos] = (char)(b.data[pos] ^ (1 << (parser_rng(&seed) % 8)));
                break;
            case 1: /* truncate */
                b.len = pos;
                break;
            case 2: /* delete a token of the original (spans may be stale after other edits) */
            case 3: {
                parser_span sp = spans[parser_rng(&seed) % (uint64_t)ntok];
                if (sp.start + sp.len <= b.len) {
                    memmove(b.data + sp.start, b.data + sp.start + sp.len, b.len - sp.start - sp.len);
                    b.len -= sp.len;
                }
                break;
            }
            case 4: { /* insert a snippet */
                const char *s = snippets[parser_rng(&seed) % (sizeof snippets / sizeof snippets[0])];
                size_t sl = s[0] ? strlen(s) : 1;
                buf tmp = BUF_INIT;
                stc__buf_put(&tmp, b.data, pos);
                stc__buf_put(&tmp, s, sl);
                stc__buf_put(&tmp, b.data + pos, b.len - pos);
                stc__buf_free(&b);
                b = tmp;
                break;
            }
            default: { /* duplicate a token */
                parser_span sp = spans[parser_rng(&seed) % (uint64_t)ntok];
                if (sp.start + sp.len <= b.len) {
                    buf tmp = BUF_INIT;
                    stc__buf_put(&tmp, b.data, sp.start + sp.len);
                    stc__buf_putc(&tmp, ' ');
                    stc__buf_put(&tmp, b.data + sp.start, b.len - sp.start);
                    stc__buf_free(&b);
                    b = tmp;
                }
            }
            }
        }
        parser_fuzz_one(b.data ? b.data : "", b.len, &st);
    }
    stc__buf_free(&b);
    /* both outcomes are exercised */
    CHECK(st.accepted > 300);
    CHECK(st.rejected > 6000);
    CHECK(st.roundtrips > 300);
}

TEST(parser_huge_input)
{
    /* 20000 declarations, then 1 MB of garbage: linear, no crash */
    buf b = BUF_INIT;
    for (int i = 0; i < 20000; i++)
        stc__buf_printf(&b, "fun f%d(x, s) = (x + %d, s)\nthread t%d = f%d init %d\n", i, i, i, i, i);
    stc__buf_puts(&b, "main = smap(fn x => t0(x), range(0, 10))\n");
    stc_diags *d = stc__diags_new("t", NULL, 0);
    ir_program *p = stc__lang_parse(b.data, b.len, NULL, NULL, d);
    CHECK(p && p->nfuns == 20000 && p->nthreads == 20000 && p->main);
    CHECK_INT(stc_diags_count(d), 0);
    if (p && p->nfuns == 20000) CHECK_STR(p->funs[19999]->name, "f19999");
    stc__ir_program_free(p);
    stc_diags_free(d);
    uint64_t seed = 42;
    for (int i = 0; i < (1 << 20); i++) stc__buf_putc(&b, (char)(parser_rng(&seed) & 0xff));
    d = stc__diags_new("t", NULL, 0);
    p = stc__lang_parse(b.data, b.len, NULL, NULL, d);
    CHECK(p != NULL);
    CHECK(stc_diags_count(d) > 0);
    stc__ir_program_free(p);
    stc_diags_free(d);
    stc__buf_free(&b);
}
