/* test_eval_kernel.c - a thread call's compiled form (src/eval/kernel.c;
 * docs/DESIGN.md 2, "A thread call's compiled form").  Each program runs
 * twice through the reference evaluator, with its threads compiled and
 * with the compiled forms taken away (the evaluator's path): the results
 * and final states must be the same, and every thread must have compiled.
 * The code's size is checked for the shapes that make it smaller (selects,
 * && || of one-op sides, a moved state's items left in place). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/eval_internal.h"
#include "ir/resolve.h"
#include "ir/types.h"
#include "lang/lang.h"
#include "test.h"
#include "util/diag.h"
#include "value/result.h"
#include "value/value.h"

/* src compiled and prepared (stc__eval_prepare); NULL if it does not compile. */
static ir_program *k_compile(const char *src, int line)
{
    size_t len = strlen(src);
    stc_diags *d = stc__diags_new("t.stc", src, len);
    ir_program *p = d ? stc__lang_parse(src, len, "t.stc", NULL, d) : NULL;
    if (p && !diags_any(d)) stc__ir_resolve(p, d);
    if (p && !diags_any(d)) stc__types_check(p, d);
    if (!p || diags_any(d)) {
        test_fail(__FILE__, line, "does not compile");
        stc__ir_program_free(p);
        p = NULL;
    } else {
        stc__eval_prepare(p);
    }
    stc_diags_free(d);
    return p;
}

/* The result and the states of p's run as text (malloc'd), or NULL. */
static char *k_run(ir_program *p)
{
    const char *names[64];
    for (int i = 0; i < p->nthreads && i < 64; i++) names[i] = p->threads[i]->name;
    stc_result *res = stc__result_new((size_t)p->nthreads, names);
    if (!res) return NULL;
    int rc = stc__eval_run(p, res);
    char *v = rc ? NULL : stc_value_to_text(res->value);
    char buf[4096];
    snprintf(buf, sizeof buf, "rc %d: %s", rc, v ? v : (res->err.message ? res->err.message : "?"));
    for (size_t i = 0; i < res->nstates; i++) {
        char *s = stc_value_to_text(res->states[i]);
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "; %s = %s", res->names[i], s ? s : "?");
        free(s);
    }
    free(v);
    stc_result_free(res);
    return strdup(buf);
}

/* src's run compiled and on the evaluator's path: the same text, every
 * thread compiled. */
static void k_same(const char *src, int line)
{
    ir_program *p = k_compile(src, line), *q = k_compile(src, line);
    if (p && q) {
        for (int i = 0; i < p->nthreads; i++) {
            if (!p->threads[i]->xtk) test_fail(__FILE__, line, "thread %s not compiled", p->threads[i]->name);
            q->threads[i]->xtk = NULL;
        }
        char *a = k_run(p), *b = k_run(q);
        if (!a || !b || strcmp(a, b) != 0)
            test_fail(__FILE__, line, "compiled: %s\nevaluator: %s", a ? a : "?", b ? b : "?");
        free(a);
        free(b);
    }
    stc__ir_program_free(p);
    stc__ir_program_free(q);
}

/* Thread 0 of src compiled to ops ops copying copies items, moved_copies
 * when its state moves in. */
static void k_shape(const char *src, int ops, int copies, int moved_copies, int line)
{
    ir_program *p = k_compile(src, line);
    const eval_tk *k = p && p->nthreads ? p->threads[0]->xtk : NULL;
    if (!k) {
        test_fail(__FILE__, line, "not compiled");
    } else {
        int o, c, m;
        stc__eval_tk_shape(k, &o, &c, &m);
        if (o != ops || c != copies || m != moved_copies)
            test_fail(__FILE__, line, "%d ops, %d copies, %d moved; expected %d, %d, %d", o, c, m, ops,
                      copies, moved_copies);
    }
    stc__ir_program_free(p);
}

#define SAME(src) k_same(src, __LINE__)
#define SHAPE(src, ops, copies, moved) k_shape(src, ops, copies, moved, __LINE__)

#define LOGSTATS                                                                                  \
    "fun tally(good, s) = let (n, bad) = s in ((), (n + 1, if good then bad else bad + 1))\n"     \
    "thread lines = tally init (0, 0)\n"                                                          \
    "fun classify(status, s) = let (c2, c3, c4, c5) = s in case status / 100 of\n"               \
    "  | 2 => (\"2xx\", (c2 + 1, c3, c4, c5)) | 3 => (\"3xx\", (c2, c3 + 1, c4, c5))\n"          \
    "  | 4 => (\"4xx\", (c2, c3, c4 + 1, c5)) | _ => (\"5xx\", (c2, c3, c4, c5 + 1))\n"          \
    "thread classes = classify init (0, 0, 0, 0)\n"                                               \
    "fun add(b, total) = ((), total + b)\n"                                                       \
    "thread bytes = add init 0\n"                                                                 \
    "fun lat(ms, s) = let (sum, mx) = s in ((), (sum + ms, if ms > mx then ms else mx))\n"        \
    "thread latency = lat init (0.0, 0.0)\n"                                                      \
    "fun peak(m, s) = let (cur, n, best, best_n) = s in\n"                                        \
    "  let n2 = if m == cur then n + 1 else 1 in\n"                                               \
    "  if n2 > best_n then ((), (m, n2, m, n2)) else ((), (m, n2, best, best_n))\n"               \
    "thread busiest = peak init (\"\", 0, \"\", 0)\n"

TEST(eval_kernel_same_as_evaluator)
{
    SAME(LOGSTATS "main = smap(fn x => (lines(x % 7 != 0), classes(x % 5 * 100 + 150), bytes(x),\n"
                  "  latency(float(x % 13) * 1.5), busiest(str(x / 4 % 3))), range(0, 40))");
    /* held twice: nothing moves */
    SAME(LOGSTATS "main = smap(fn x => let k = (state(lines), state(classes), state(latency), state(busiest)) in\n"
                  "  (lines(x % 7 != 0), classes(x % 5 * 100 + 150), latency(float(x) * 0.5),\n"
                  "   busiest(str(x / 3 % 2)), k), range(0, 12))");
    /* items put back at other places, strs left in place or dropped */
    SAME("fun f(x, s) = let (a, b, c, w) = s in (w, (b, a, c + x, w))\n"
         "fun g(x, s) = let (a, _, w, v) = s in (w == x, (x, a, w, if w == x then v else x))\n"
         "thread t = f init (1, 2, 0, \"w\")\n"
         "thread u = g init (\"p\", \"q\", \"r\", \"v\")\n"
         "main = smap(fn x => (t(x), u(str(x % 3)), if x == 4 then state(u) else (\"\", \"\", \"\", \"\")),\n"
         "  range(0, 9))");
    /* strs nothing reads, written over by the pair (released once), or
     * put back on one path and written over on the other */
    SAME("fun f(x, s) = let (a, w, u, v) = s in ((a, w), (a + 1, x, x, v))\n"
         "fun g(x, s) = let (a, w, u, v) = s in if a > 1 then (a, (a + 1, w, u, v)) else (a, (a + 1, x, x, x))\n"
         "thread t = f init (0, \"\", \"\", \"v\")\n"
         "thread u = g init (0, \"\", \"\", \"v\")\n"
         "main = smap(fn x => (t(str(x)), u(str(x))), [1, 2, 3, 4])");
    /* selects, && || of one-op and longer sides, cases, every type */
    SAME("fun f(x, s) = let (i, fl, b, w) = s in\n"
         "  let inside = x >= 0 && x <= 10 in\n"
         "  let far = not inside && (x < -5 || x > 15) in\n"
         "  ((if x > 2 then i else i + 1, if x > 2 then fl * 2.0 else -fl, if x == 3 then not b else b,\n"
         "    if x > 1 then w else \"lit\", if x > 1 then (if x > 3 then 10 else 20) else 30, inside, far,\n"
         "    inside || x == 100, (x > 0 && x < 3) || i > 2),\n"
         "   (if x > 2 then i + x else i - x, if x > 1 then fl + 0.5 else fl, if far then not b else b,\n"
         "    if x > 2 then \"big\" else w))\n"
         "fun g(x, s) = let (a, b) = s in case x % 4 of\n"
         "  | 0 => let y = a + 1 in (y, (y, b)) | 1 => if b > 2 then (0, (a, b)) else (1, (a, b + 1))\n"
         "  | k => (k, (a, b + k))\n"
         "thread t = f init (5, 1.5, true, \"w\")\n"
         "thread u = g init (0, 0)\n"
         "main = smap(fn x => (t(x), u(x)), [1, 2, 3, 4, 0, -7, 17, 100, 5, 9])");
}

TEST(eval_kernel_code_shape)
{
    /* LETT, ADD_F, GT_F, SEL, PAIR; nothing left in place */
    SHAPE("fun lat(ms, s) = let (sum, mx) = s in ((), (sum + ms, if ms > mx then ms else mx))\n"
          "thread t = lat init (0.0, 0.0)\nmain = t(1.0)",
          5, 4, 4);
    /* LETT, GE_IK, LE_IK, AND, NOT, PAIR */
    SHAPE("fun f(x, s) = let (lo, hi) = s in (not (x >= 0 && x <= 9), (lo, hi))\n"
          "thread t = f init (0, 0)\nmain = t(1)",
          6, 4, 0);
    /* each pair writes one item back when the state moved in; the
     * let-tuple copies all four out (each is read in one pair) */
    SHAPE("fun classify(status, s) = let (c2, c3, c4, c5) = s in case status / 100 of\n"
          "  | 2 => (\"2xx\", (c2 + 1, c3, c4, c5)) | 3 => (\"3xx\", (c2, c3 + 1, c4, c5))\n"
          "  | 4 => (\"4xx\", (c2, c3, c4 + 1, c5)) | _ => (\"5xx\", (c2, c3, c4, c5 + 1))\n"
          "thread t = classify init (0, 0, 0, 0)\nmain = t(200)",
          11, 20, 8);
    /* a str left in place and read nowhere else (v) is not copied out;
     * one read elsewhere (w == x) is copied out and written back, as n
     * is and n + 1 */
    SHAPE("fun f(x, s) = let (w, v, n) = s in (w == x, (w, v, n + 1))\n"
          "thread t = f init (\"a\", \"b\", 0)\nmain = t(\"a\")",
          4, 6, 4);
}
