/* test_map.c - persistent maps (value/map.c): balance and order after
 * random puts and removes against a plain array, in-place updates of a
 * uniquely held map versus copies of a shared one, the key order, and the
 * public C API (stc_map_*) with a C thread taking and returning maps. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "stc.h"
#include "ir/resolve.h"
#include "lang/lang.h"
#include "util/diag.h"
#include "value/map.h"
#include "value/value.h"

/* The reference: present[k] and val[k] for keys 0..KEYS-1. */
#define KEYS 200

static bool map_matches(stc_value m, const bool *present, const int64_t *val)
{
    size_t n = 0;
    for (int k = 0; k < KEYS; k++) {
        const stc_value *v = stc__val_map_find(m, stc_value_int(k));
        if (present[k] != (v != NULL) || (v && v->as.i != val[k])) return false;
        n += present[k];
    }
    if (val_map_len(m) != n) return false;
    /* iteration: ascending keys, exactly the present ones */
    val_map_iter it;
    stc__val_map_iter_init(&it, m);
    stc_value k, v;
    int64_t last = -1;
    size_t seen = 0;
    while (stc__val_map_iter_next(&it, &k, &v)) {
        if (k.as.i <= last || !present[k.as.i] || v.as.i != val[k.as.i]) return false;
        last = k.as.i;
        seen++;
    }
    return seen == n;
}

TEST(map_random_against_reference)
{
    bool present[KEYS] = {false};
    int64_t val[KEYS] = {0};
    unsigned seed = 12345;
    stc_value m = stc__val_map_new();
    CHECK(m.tag == STC_T_MAP);
    bool ok = true;
    for (int step = 0; step < 20000 && ok; step++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % KEYS);
        bool put = ((seed >> 20) % 3) != 0;
        if (put) {
            CHECK_INT(stc__val_map_put(m, stc_value_int(k), stc_value_int(step), &m), 0);
            present[k] = true;
            val[k] = step;
        } else {
            CHECK_INT(stc__val_map_remove(m, stc_value_int(k), &m), 0);
            present[k] = false;
        }
        if (!stc__val_map_check(m) || (step % 97 == 0 && !map_matches(m, present, val))) ok = false;
    }
    CHECK(ok);
    CHECK(map_matches(m, present, val));
    stc_value_release(m);
}

/* A map held once is changed in place (the same object); a shared one is
 * copied along one path and the original keeps its contents. */
TEST(map_in_place_and_shared)
{
    stc_value m = stc__val_map_new();
    for (int i = 0; i < 100; i++) CHECK_INT(stc__val_map_put(m, stc_value_int(i), stc_value_int(i), &m), 0);
    const stc_obj *before = m.as.obj;
    CHECK_INT(stc__val_map_put(m, stc_value_int(1000), stc_value_int(1), &m), 0);
    CHECK(m.as.obj == before); /* unique: in place */
    stc_value shared = stc_value_retain(m);
    stc_value copy;
    CHECK_INT(stc__val_map_put(m, stc_value_int(5), stc_value_int(-5), &copy), 0);
    CHECK(copy.as.obj != shared.as.obj);
    CHECK_INT(stc__val_map_find(shared, stc_value_int(5))->as.i, 5);
    CHECK_INT(stc__val_map_find(copy, stc_value_int(5))->as.i, -5);
    CHECK_INT(val_map_len(shared), 101);
    stc_value_retain(copy);
    stc_value removed;
    CHECK_INT(stc__val_map_remove(copy, stc_value_int(50), &removed), 0);
    CHECK(stc__val_map_find(copy, stc_value_int(50)) != NULL);
    CHECK(stc__val_map_find(removed, stc_value_int(50)) == NULL);
    CHECK(stc__val_map_check(shared) && stc__val_map_check(copy) && stc__val_map_check(removed));
    CHECK_INT(val_map_len(removed), 100);
    /* the untouched nodes are shared, not copied: the root differs, a
     * leaf far from key 5 is the same node */
    const val_map *a = (const val_map *)shared.as.obj, *b = (const val_map *)copy.as.obj;
    CHECK(a->root != b->root);
    const val_map_node *ra = a->root, *rb = b->root;
    while (ra->right && rb->right) ra = ra->right, rb = rb->right;
    CHECK(ra == rb);
    stc_value_release(shared);
    stc_value_release(copy);
    stc_value_release(removed);
}

TEST(map_key_order)
{
    /* floats by totalOrder: -nan < -inf < -1 < -0.0 < 0.0 < 1 < inf < nan */
    double fs[] = {-__builtin_nan(""), -__builtin_inf(), -1.0, -0.0, 0.0, 1.0, __builtin_inf(), __builtin_nan("")};
    for (size_t i = 0; i + 1 < sizeof fs / sizeof fs[0]; i++)
        CHECK(stc__val_key_compare(stc_value_float(fs[i]), stc_value_float(fs[i + 1])) < 0);
    CHECK_INT(stc__val_key_compare(stc_value_float(__builtin_nan("")), stc_value_float(__builtin_nan(""))), 0);
    stc_value ab = stc_value_new_str("ab", 2), a = stc_value_new_str("a", 1), b = stc_value_new_str("b", 1);
    CHECK(stc__val_key_compare(a, ab) < 0 && stc__val_key_compare(ab, b) < 0 && stc__val_key_compare(b, a) > 0);
    stc_value l1 = stc_value_new_list(1, (stc_value[]){stc_value_int(1)});
    stc_value l12 = stc_value_new_list(2, (stc_value[]){stc_value_int(1), stc_value_int(2)});
    stc_value l2 = stc_value_new_list(1, (stc_value[]){stc_value_int(2)});
    CHECK(stc__val_key_compare(l1, l12) < 0 && stc__val_key_compare(l12, l2) < 0);
    stc_value il = stc_value_new_inl(stc_value_int(9)), ir = stc_value_new_inr(stc_value_int(0));
    CHECK(stc__val_key_compare(il, ir) < 0);
    CHECK(stc__val_key_compare(stc_value_bool(false), stc_value_bool(true)) < 0);
    /* a value nested 100000 deep through its last item compares without recursion */
    stc_value x = stc_value_int(0), y = stc_value_int(1);
    for (int i = 0; i < 100000; i++) {
        x = stc_value_new_tuple(2, (stc_value[]){stc_value_int(i), x});
        y = stc_value_new_tuple(2, (stc_value[]){stc_value_int(i), y});
    }
    CHECK(stc__val_key_compare(x, y) < 0);
    /* released level by level: releasing a deep value recurses (value.c) */
    for (stc_value *z = &x; z; z = z == &x ? &y : NULL)
        while (z->tag == STC_T_TUPLE) {
            stc_value inner = stc_value_retain(stc_value_at(*z, 1));
            stc_value_release(*z);
            *z = inner;
        }
    stc_value vals[] = {ab, a, b, l1, l12, l2, il, ir};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) stc_value_release(vals[i]);
}

TEST(map_c_api)
{
    stc_value m = stc_map_new();
    const char *words[] = {"pear", "apple", "fig", "apple"};
    for (int i = 0; i < 4; i++) m = stc_map_put(m, stc_value_new_str(words[i], strlen(words[i])), stc_value_int(i));
    CHECK(m.tag == STC_T_MAP);
    CHECK_INT(stc_map_len(m), 3);
    CHECK_INT(stc_value_len(m), 3);
    stc_value k = stc_value_new_str("apple", 5);
    CHECK_INT(stc_map_get(m, k).as.i, 3);
    stc_value shared = stc_value_retain(m);
    stc_value smaller = stc_map_remove(m, k);
    CHECK_INT(stc_map_len(smaller), 2);
    CHECK_INT(stc_map_len(shared), 3);
    CHECK(stc_map_get(smaller, k).tag == STC_T_INVALID);
    stc_value_release(k);
    char *text = stc_value_to_text(shared), *json = stc_value_to_json(smaller);
    CHECK_STR(text, "{\"apple\": 3, \"fig\": 2, \"pear\": 0}");
    CHECK_STR(json, "{\"fig\": 2, \"pear\": 0}");
    free(text);
    free(json);
    stc_map_iter it;
    stc_map_iter_init(&it, shared);
    stc_value kk, vv;
    const char *order[] = {"apple", "fig", "pear"};
    int i = 0;
    while (stc_map_iter_next(&it, &kk, &vv)) {
        CHECK(i < 3 && strcmp(stc_value_str(kk, NULL), order[i]) == 0);
        i++;
    }
    CHECK_INT(i, 3);
    CHECK(stc_map_put(stc_value_int(1), stc_value_int(1), stc_value_int(1)).tag == STC_T_INVALID);
    CHECK_INT(stc_map_len(stc_value_int(3)), 0);
    stc_value_release(shared);
    stc_value_release(smaller);
}

/* A C thread keeps a count per word in a map it receives and returns. */
static int tally_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state;
    (void)cx;
    stc_value m = stc_value_retain(stc_value_at(*in, 0)), w = stc_value_retain(stc_value_at(*in, 1));
    stc_value old = stc_map_get(m, w);
    *out = stc_map_put(m, w, stc_value_int(old.tag == STC_T_INT ? old.as.i + 1 : 1));
    return out->tag == STC_T_INVALID ? STC_ENOMEM : 0;
}

TEST(map_c_thread)
{
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "tally", .fn = tally_fn, .type = "({str: int}, str) -> {str: int}",
                          .access = STC_PURE};
    CHECK_INT(stc_env_add_thread(env, &def), 0);
    const char *src = "thread t = tally\nfun add(m, w) = t(m, w)\n"
                      "main = add(add(add({}, \"b\"), \"a\"), \"b\")\n";
    stc_program *prog = NULL;
    CHECK_INT(stc_compile(env, src, strlen(src), "t.stc", &prog, NULL), 0);
    for (int workers = 0; prog && workers <= 2; workers++) {
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.reference = workers == 0, .workers = workers}, &res), 0);
        char *j = stc_value_to_json(stc_result_value(res));
        CHECK_STR(j, "{\"a\": 1, \"b\": 2}");
        free(j);
        stc_result_free(res);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* The builder's map literal and the map builtins called by name. */
TEST(map_builder)
{
    stc_builder *b = stc_builder_new(NULL);
    stc_b_expr *m = stc_b_map(b, 3, (stc_b_expr *[]){stc_b_str(b, "b"), stc_b_str(b, "a"), stc_b_str(b, "b")},
                              (stc_b_expr *[]){stc_b_int(b, 1), stc_b_int(b, 2), stc_b_int(b, 3)});
    stc_b_expr *put = stc_b_call(b, "put", 3, (stc_b_expr *[]){m, stc_b_str(b, "c"), stc_b_int(b, 4)});
    stc_b_expr *empty = stc_b_map(b, 0, NULL, NULL);
    stc_b_expr *len = stc_b_call(b, "len", 1, (stc_b_expr *[]){empty});
    CHECK_INT(stc_b_main(b, stc_b_tuple(b, 2, (stc_b_expr *[]){put, len})), 0);
    stc_program *prog = NULL;
    CHECK_INT(stc_builder_finish(b, &prog, NULL), 0);
    stc_builder_free(b);
    if (!prog) return;
    stc_result *res = NULL;
    CHECK_INT(stc_run(prog, NULL, &res), 0);
    char *j = stc_result_to_json(res);
    CHECK_STR(j, "{\"result\": [{\"a\": 2, \"b\": 3, \"c\": 4}, 0], \"states\": {}}");
    free(j);
    stc_result_free(res);
    stc_program_free(prog);
}

/* The move marks of put/remove/update (ir/moves.c): in textual order of
 * the calls, whether each one's map variable is taken over. */
static void moves_collect(const ir_expr *e, char *out, size_t cap)
{
    if (!e) return;
    if (e->kind == IR_CALL) {
        for (int i = 0; i < e->u.call.nargs; i++) moves_collect(e->u.call.args[i], out, cap);
        int b = e->u.call.callee.index;
        if (e->u.call.kind == CALL_BUILTIN && (b == BI_PUT || b == BI_REMOVE || b == BI_UPDATE) &&
            e->u.call.args[0]->kind == IR_VAR && strlen(out) + 1 < cap)
            strcat(out, e->u.call.args[0]->move ? "M" : "-");
        return;
    }
    if (e->kind == IR_TUPLE || e->kind == IR_LIST) {
        for (int i = 0; i < e->u.agg.nitems; i++) moves_collect(e->u.agg.items[i], out, cap);
        return;
    }
    if (e->kind == IR_CASE) {
        moves_collect(e->a, out, cap);
        for (int i = 0; i < e->u.cas.nalts; i++) moves_collect(e->u.cas.alts[i].body, out, cap);
        return;
    }
    if (e->kind == IR_LAMBDA) { moves_collect(e->u.fn->body, out, cap); return; }
    moves_collect(e->a, out, cap);
    moves_collect(e->b, out, cap);
    moves_collect(e->c, out, cap);
}

static void check_moves(const char *src, const char *want, bool thread_moves, int line)
{
    stc_diags *d = stc__diags_new("t.stc", src, strlen(src));
    ir_program *p = d ? stc__lang_parse(src, strlen(src), "t.stc", NULL, d) : NULL;
    if (p && !diags_any(d)) stc__ir_resolve(p, d);
    if (!p || diags_any(d)) {
        test_fail(__FILE__, line, "does not resolve: %s", src);
    } else {
        char got[64] = "";
        for (int i = 0; i < p->nfuns; i++) moves_collect(p->funs[i]->body, got, sizeof got);
        moves_collect(p->main, got, sizeof got);
        if (strcmp(got, want) != 0) test_fail(__FILE__, line, "moves %s, expected %s: %s", got, want, src);
        if (p->nthreads > 0 && p->threads[0]->state_moves != thread_moves)
            test_fail(__FILE__, line, "thread state_moves %d, expected %d", p->threads[0]->state_moves, thread_moves);
    }
    stc__ir_program_free(p);
    stc_diags_free(d);
}

TEST(map_moves_last_use)
{
    /* a chain of lets: each map's last use */
    check_moves("main = let a = put({}, 1, 1) in let b = put(a, 2, 2) in remove(b, 1)", "MM", false, __LINE__);
    /* used after, or beside (a borrowed operand) */
    check_moves("main = let a = {1: 1} in (put(a, 2, 2), a)", "-", false, __LINE__);
    check_moves("main = let a = {1: 1} in let b = put(a, 2, 2) in len(a)", "-", false, __LINE__);
    check_moves("fun f(m) = put(m, 1, get(m, 1, 0) + 1)\nmain = f({})", "M", false, __LINE__);
    check_moves("fun f(m, k) = if has(m, k) then put(m, k, 1) else remove(m, 0)\nmain = f({}, 1)", "MM", false, __LINE__);
    check_moves("fun f(m) = let x = get(m, 1, 0) in put(m, 1, x)\nmain = f({})", "M", false, __LINE__);
    /* in main an earlier let's use counts (lets run as tasks) */
    check_moves("main = let m = {1: 1} in let x = get(m, 1, 0) in put(m, 1, x)", "-", false, __LINE__);
    /* a captured map never moves */
    check_moves("fun f(m) = smap(fn k => put(m, k, 1), [1, 2])\nmain = f({})", "-", false, __LINE__);
    /* a thread's map state: lent to each call unless the thread is read-only or calls threads */
    check_moves("fun c(w, m) = ((), update(m, w, 0, fn n => n + 1))\nthread t = c init {}\nmain = t(\"a\")",
                "M", true, __LINE__);
    check_moves("fun c(w, m) = (get(m, w, 0), m)\nthread t = c init {}\nmain = t(\"a\")", "", false, __LINE__);
    check_moves("fun c(w, m) = (u(w), put(m, w, 1))\nfun d(x, s) = (x, s)\nthread t = c init {}\n"
                "thread u = d init 0\nmain = t(1)", "M", false, __LINE__);
}

/* stc__val_map_take moves a value out of a map held once (a keyed
 * thread's per-key state), and refuses when the map or a node on the
 * key's path is shared; stc__val_key_hash agrees with the key order. */
TEST(map_take_and_key_hash)
{
    stc_value m = stc__val_map_new();
    for (int i = 0; i < 50; i++)
        CHECK_INT(stc__val_map_put(m, stc_value_int(i), stc_value_new_str("v", 1), &m), 0);
    stc_value v = stc_value_unit();
    CHECK(stc__val_map_take(m, stc_value_int(7), &v));
    CHECK_INT(v.tag, STC_T_STR);
    CHECK_INT(stc__val_map_find(m, stc_value_int(7))->tag, STC_T_UNIT);
    CHECK(!stc__val_map_take(m, stc_value_int(99), &v)); /* absent: v unchanged */
    CHECK_INT(stc__val_map_put(m, stc_value_int(7), v, &m), 0);
    stc_value shared = stc_value_retain(m);
    stc_value w = stc_value_unit();
    CHECK(!stc__val_map_take(m, stc_value_int(7), &w)); /* the header is shared */
    CHECK_INT(w.tag, STC_T_UNIT);
    stc_value m2 = stc_value_unit();
    CHECK_INT(stc__val_map_put(shared, stc_value_int(1000), stc_value_int(1), &m2), 0); /* copies a path */
    CHECK(!stc__val_map_take(m, stc_value_int(25), &w) || w.tag == STC_T_STR); /* m's root is shared now */
    if (w.tag == STC_T_STR) CHECK_INT(stc__val_map_put(m, stc_value_int(25), w, &m), 0);
    CHECK(stc__val_map_check(m));
    CHECK(stc__val_map_check(m2));
    stc_value_release(m);
    stc_value_release(m2);
    /* take_slot: one walk, the new value stored in place; absent keys said */
    stc_value s = stc__val_map_new();
    const char *ws[] = {"pear", "apple", "fig", "apples", "app", "a", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz1",
                        "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz0"};
    for (int i = 0; i < 8; i++)
        CHECK_INT(stc__val_map_put(s, stc_value_new_str(ws[i], strlen(ws[i])), stc_value_int(i), &s), 0);
    CHECK(stc__val_map_check(s));
    bool absent = true;
    stc_value x = stc_value_unit(), key = stc_value_new_str("apple", 5);
    stc_value *slot = stc__val_map_take_slot(s, key, &x, &absent);
    CHECK(slot != NULL && !absent);
    CHECK_INT(x.as.i, 1);
    *slot = stc_value_int(41);
    CHECK_INT(stc__val_map_find(s, key)->as.i, 41);
    stc_value_release(key);
    key = stc_value_new_str("appl", 4);
    CHECK(stc__val_map_take_slot(s, key, &x, &absent) == NULL);
    CHECK(absent);
    stc_value held = stc_value_retain(s);
    CHECK(stc__val_map_take_slot(s, key, &x, &absent) == NULL);
    CHECK(!absent); /* shared: not known */
    stc_value_release(held);
    stc_value_release(key);
    CHECK_INT((int)val_map_len(s), 8);
    CHECK(stc__val_map_check(s));
    stc_value_release(s);
    /* equal keys hash alike, whatever their sharing; -0.0 and 0.0 are different keys */
    stc_value a = stc_value_new_str("word", 4), b = stc_value_new_str("word", 4);
    CHECK(stc__val_key_hash(a) == stc__val_key_hash(b));
    CHECK(stc__val_key_hash(stc_value_int(5)) == stc__val_key_hash(stc_value_int(5)));
    CHECK(stc__val_key_hash(stc_value_float(0.0)) != stc__val_key_hash(stc_value_float(-0.0)));
    stc_value_release(a);
    stc_value_release(b);
}

static int regroup_mod3(stc_value k, void *ud)
{
    (void)ud;
    return (int)(k.as.i % 3);
}

/* stc__val_map_regroup: a map split three ways by key and merged back is
 * the map it was, each part a valid tree in key order; a map held once
 * gives its nodes (relinked), a shared one keeps its own (copied). */
TEST(map_regroup_split_and_merge)
{
    stc_value m = stc__val_map_new();
    for (int i = 0; i < 1000; i++)
        CHECK_INT(stc__val_map_put(m, stc_value_int((i * 7919) % 1000), stc_value_new_str("v", 1), &m), 0);
    stc_value copy = stc__val_map_new(); /* the same items, built apart */
    for (int i = 0; i < 1000; i++) CHECK_INT(stc__val_map_put(copy, stc_value_int(i), stc_value_new_str("v", 1), &copy), 0);
    stc_value parts[3], whole;
    CHECK_INT(stc__val_map_regroup(&m, 1, parts, 3, regroup_mod3, NULL), 0);
    CHECK_INT(m.tag, STC_T_UNIT); /* consumed */
    for (int o = 0; o < 3; o++) {
        CHECK(stc__val_map_check(parts[o]));
        CHECK_INT((int)val_map_len(parts[o]), o == 0 ? 334 : 333);
        val_map_iter it;
        stc_value k, v;
        stc__val_map_iter_init(&it, parts[o]);
        while (stc__val_map_iter_next(&it, &k, &v)) CHECK_INT((int)(k.as.i % 3), o);
    }
    /* a shared part: merged by copying, the holder's part unchanged */
    stc_value held = stc_value_retain(parts[1]);
    CHECK_INT(stc__val_map_regroup(parts, 3, &whole, 1, NULL, NULL), 0);
    CHECK(stc__val_map_check(whole));
    CHECK_INT((int)val_map_len(whole), 1000);
    CHECK(stc__val_map_equal(whole, copy));
    CHECK(stc__val_map_check(held));
    CHECK_INT((int)val_map_len(held), 333);
    stc_value_release(held);
    /* empty inputs and outputs; bad arguments leave the inputs */
    stc_value e[2] = {stc__val_map_new(), stc__val_map_new()}, out[4];
    CHECK_INT(stc__val_map_regroup(e, 2, out, 4, regroup_mod3, NULL), 0);
    for (int o = 0; o < 4; o++) {
        CHECK_INT((int)val_map_len(out[o]), 0);
        stc_value_release(out[o]);
    }
    stc_value bad[2] = {whole, stc_value_int(3)};
    CHECK_INT(stc__val_map_regroup(bad, 2, out, 1, NULL, NULL), STC_EINVAL);
    CHECK_INT((int)val_map_len(whole), 1000);
    stc_value_release(whole);
    stc_value_release(copy);
}
