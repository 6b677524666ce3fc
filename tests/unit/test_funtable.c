/* test_funtable.c - a program's functions numbered alike by every compile
 * of its text (src/ir/funtable.c), so closures travel between processes
 * as numbers through the wire encoding. */
#include <stdlib.h>

#include "test.h"
#include "stc.h"
#include "api/program.h"
#include "ir/funtable.h"
#include "value/value.h"
#include "value/wire.h"

static const char funtable_src[] =
    "fun add(x, y) = x + y\n"
    "fun mk(k) = fn x => x + k\n"
    "fun step(x, s) = (x + s, s + 1)\n"
    "thread t = step init let id = fn z => z in id(0)\n"
    "main = let k = 3 in\n"
    "       let g = fn x => fn y => x + y + k in\n"
    "       smap(fn x => let h = g(x) in t(h(1)), [1, 2])\n";

static stc_program *compile_it(stc_env *env)
{
    stc_program *p = NULL;
    CHECK_INT(stc_compile(env, funtable_src, sizeof funtable_src - 1, "f.stc", &p, NULL), 0);
    return p;
}

TEST(funtable_numbers_alike_across_compiles)
{
    stc_env *env = stc_env_new();
    stc_program *a = compile_it(env), *b = compile_it(env);
    if (!a || !b) {
        stc_program_free(a);
        stc_program_free(b);
        stc_env_free(env);
        return;
    }
    ir_fun_table ta, tb;
    CHECK_INT(stc__ir_fun_table_build(a->ir, &ta), 0);
    CHECK_INT(stc__ir_fun_table_build(b->ir, &tb), 0);
    /* 3 functions, then mk's lambda, the init's, main's g, g's inner one, smap's */
    CHECK_INT(ta.n, 8);
    CHECK_INT(tb.n, ta.n);
    for (size_t i = 0; i < ta.n && i < tb.n; i++) {
        CHECK(ta.funs[i] != tb.funs[i]);
        CHECK_INT(ta.funs[i]->loc.line, tb.funs[i]->loc.line);
        CHECK_INT(ta.funs[i]->loc.col, tb.funs[i]->loc.col);
        CHECK_INT(ta.funs[i]->index, i < 3 ? (int)i : -1);
    }
    int lines[] = {1, 2, 3, 2, 4, 6, 6, 7};
    for (size_t i = 0; i < 8 && i < ta.n; i++) CHECK_INT(ta.funs[i]->loc.line, lines[i]);

    /* A closure of g's inner lambda (captures x and k) and of `add` made
     * by compile a, decoded by compile b: b's own functions. */
    wire_funcs wa = stc__ir_fun_table_wire(&ta), wb = stc__ir_fun_table_wire(&tb);
    ir_fun *inner = ta.funs[6];
    CHECK_INT(inner->ncaptures, 2);
    stc_value c = stc__val_func_alloc(inner, 2);
    val_as_func(c)->caps[0] = stc_value_int(5);
    val_as_func(c)->caps[1] = stc_value_int(3);
    stc_value add = stc__val_func_alloc(ta.funs[0], 0);
    stc_value v = stc_value_new_tuple(2, (stc_value[]){c, add});
    buf bytes = BUF_INIT;
    CHECK_INT(stc__val_wire_encode(&bytes, v, &wa), 0);
    stc_value back;
    CHECK_INT(stc__val_wire_decode(bytes.data, bytes.len, NULL, &back, &wb), 0);
    if (back.tag == STC_T_TUPLE) {
        stc_value c2 = stc_value_at(back, 0), add2 = stc_value_at(back, 1);
        CHECK(val_as_func(c2)->code == tb.funs[6]);
        CHECK_INT(val_as_func(c2)->caps[0].as.i, 5);
        CHECK(val_as_func(add2)->code == tb.funs[0]);
        stc_value_release(back);
    }
    /* a capture count that does not fit the function is malformed */
    unsigned char bad[] = {WIRE_FUNC, 6, 1, WIRE_UNIT};
    CHECK_INT(stc__val_wire_decode(bad, sizeof bad, NULL, &back, &wb), STC_EINVAL);
    unsigned char far[] = {WIRE_FUNC, 8, 0};
    CHECK_INT(stc__val_wire_decode(far, sizeof far, NULL, &back, &wb), STC_EINVAL);
    stc__buf_free(&bytes);
    stc_value_release(v);
    stc__ir_fun_table_free(&ta);
    stc__ir_fun_table_free(&tb);
    stc_program_free(a);
    stc_program_free(b);
    stc_env_free(env);
}
