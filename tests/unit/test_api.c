/* test_api.c - the public C API end to end: env, C threads, compile,
 * builder, run, results, diagnostics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"

/* ---- a C state thread: a running sum of its inputs ---- */
typedef struct summer { int64_t sum; int *freed; } summer;

static int summer_init(void *state, const stc_value *init, void *user)
{
    summer *s = state;
    s->freed = user;
    s->sum = init ? init->as.i : 100;
    return 0;
}
static void summer_free(void *state, void *user) { (void)state; (*(int *)user)++; }
static int summer_to_value(const void *state, stc_value *out, void *user)
{
    (void)user;
    *out = stc_value_int(((const summer *)state)->sum);
    return 0;
}
static int summer_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    summer *s = state;
    if (in->as.i < 0) return stc_ctx_error(cx, "negative input %lld", (long long)in->as.i);
    s->sum = s->sum * 10 + in->as.i; /* order-sensitive */
    *out = stc_value_int(s->sum);
    return 0;
}

static stc_env *env_with_summer(int *freed)
{
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "summer", .fn = summer_fn, .type = "int -> int", .state_type = "int",
                          .state_size = sizeof(summer), .state_init = summer_init, .state_free = summer_free,
                          .state_to_value = summer_to_value, .access = STC_WRITES, .user = freed};
    CHECK_INT(stc_env_add_thread(env, &def), 0);
    CHECK_INT(stc_env_add_thread(env, &def), STC_EEXIST);
    return env;
}

/* Runs src at 2 workers, expecting expect_rc: the JSON line or the error. */
static char *run_json(stc_env *env, const char *src, int expect_rc)
{
    stc_program *prog = UNIT_COMPILE(env, src, "t.stc");
    if (!prog) return NULL;
    trun_outcome o;
    CHECK_INT(trun_run(prog, &(stc_run_opts){.workers = 2}, NULL, NULL, &o), expect_rc);
    char *out = o.rc == 0 ? o.json : o.error; /* taken from o */
    if (o.rc == 0) o.json = NULL;
    else o.error = NULL;
    trun_outcome_free(&o);
    stc_program_free(prog);
    return out;
}

/* The codes are ABI: their values and texts must not move when the table
 * in stc.h (STC_ERROR_MAP) is edited. */
TEST(api_error_codes_keep_their_values)
{
    static const struct { int code, value; const char *text; } want[] = {
        {STC_OK, 0, "success"}, {STC_ENOMEM, -1, "out of memory"}, {STC_EINVAL, -2, "invalid argument"},
        {STC_ECOMPILE, -3, "the program does not compile"}, {STC_ERUNTIME, -4, "runtime error"},
        {STC_EIO, -5, "input/output error"}, {STC_ETYPE, -6, "value has the wrong type"},
        {STC_ERANGE, -7, "out of range"}, {STC_EEXIST, -8, "name already defined"},
        {STC_ENOENT, -9, "name not defined"}, {STC_ECANCELED, -10, "run cancelled"},
        {STC_ELIMIT, -11, "limit exceeded"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_INT(want[i].code, want[i].value);
        CHECK_STR(stc_strerror(want[i].code), want[i].text);
    }
    CHECK_STR(stc_strerror(-12), "unknown error");
    CHECK_STR(stc_strerror(1), "unknown error");
}

TEST(api_env_rejects_bad_defs)
{
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "t", .fn = summer_fn, .type = "int -> int"};
    CHECK_INT(stc_env_add_thread(NULL, &def), STC_EINVAL);
    CHECK_INT(stc_env_add_thread(env, NULL), STC_EINVAL);
    def.type = "int";
    CHECK_INT(stc_env_add_thread(env, &def), STC_EINVAL); /* not a function type */
    def.type = "int ->";
    CHECK_INT(stc_env_add_thread(env, &def), STC_EINVAL);
    def.type = "int -> int";
    def.name = "9x";
    CHECK_INT(stc_env_add_thread(env, &def), STC_EINVAL);
    def.name = "smap";
    CHECK_INT(stc_env_add_thread(env, &def), STC_EEXIST);
    def.name = "ok";
    def.fn = NULL;
    CHECK_INT(stc_env_add_thread(env, &def), STC_EINVAL);
    stc_env_free(env);
    stc_env_free(NULL);
}

static int inc_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state;
    (void)cx;
    *out = stc_value_int(in->as.i + 1);
    return 0;
}

/* A compiled program keeps its C threads when the env registers more after
 * it (the env's table grows and moves; the threads must not). */
TEST(api_env_grows_after_compile)
{
    stc_env *env = stc_env_new();
    CHECK_INT(stc_env_add_thread(env, &(stc_thread_def){.name = "inc", .fn = inc_fn, .type = "int -> int",
                                                        .access = STC_PURE}), 0);
    const char *src = "thread t = inc\nmain = smap(fn x => t(x), [1, 2, 3])\n";
    stc_program *prog = NULL;
    CHECK_INT(stc_compile(env, src, strlen(src), "t.stc", &prog, NULL), 0);
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "other%d", i);
        CHECK_INT(stc_env_add_thread(env, &(stc_thread_def){.name = name, .fn = inc_fn,
                                                            .type = "(int, str) -> [int]"}), 0);
    }
    for (int reference = 0; reference < 2; reference++) {
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = 2, .reference = reference}, &res), 0);
        char *j = stc_result_to_json(res);
        CHECK_STR(j, "{\"result\": [2, 3, 4], \"states\": {\"t\": null}}");
        free(j);
        stc_result_free(res);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(api_c_thread_in_smap)
{
    int freed = 0;
    stc_env *env = env_with_summer(&freed);
    char *j = run_json(env, "thread a = summer init 0\nthread b = summer\n"
                            "main = smap(fn x => (a(x), b(x)), [1, 2, 3])", 0);
    CHECK_STR(j, "{\"result\": [[1, 1001], [12, 10012], [123, 100123]], \"states\": {\"a\": 123, \"b\": 100123}}");
    free(j);
    CHECK_INT(freed, 2);
    stc_env_free(env);
}

TEST(api_c_thread_error_names_thread_and_item)
{
    int freed = 0;
    stc_env *env = env_with_summer(&freed);
    char *e = run_json(env, "thread a = summer init 0\nmain = smap(fn x => a(x), [1, -2, 3])", STC_ERUNTIME);
    CHECK_CONTAINS(e, "t.stc:2:");
    CHECK_CONTAINS(e, "negative input -2");
    CHECK_CONTAINS(e, "thread 'a'");
    CHECK_CONTAINS(e, "smap item 1");
    free(e);
    CHECK_INT(freed, 1);
    stc_env_free(env);
}

TEST(api_compile_errors_are_located)
{
    stc_program *prog = (stc_program *)1;
    stc_diags *d = NULL;
    const char *src = "main = 1 +\n";
    CHECK_INT(stc_compile(NULL, src, strlen(src), "bad.stc", &prog, &d), STC_ECOMPILE);
    CHECK(prog == NULL);
    CHECK(stc_diags_count(d) >= 1);
    CHECK_STR(stc_diags_file(d, 0), "bad.stc");
    CHECK(stc_diags_line(d, 0) >= 1);
    char *f = stc_diags_format(d);
    CHECK_CONTAINS(f, "bad.stc:");
    CHECK_CONTAINS(f, ": error: ");
    CHECK_CONTAINS(f, "^");
    free(f);
    stc_diags_free(d);
    CHECK_INT(stc_compile(NULL, NULL, 5, "x", &prog, NULL), STC_EINVAL);
    stc_diags_free(NULL);
    stc_program_free(NULL);
    stc_result_free(NULL);
}

/* Formats the diagnostics of compiling src (which must not compile). */
static char *api_diags_of(const char *src, size_t len)
{
    stc_program *prog = NULL;
    stc_diags *d = NULL;
    CHECK_INT(stc_compile(NULL, src, len, "t.stc", &prog, &d), STC_ECOMPILE);
    char *f = stc_diags_format(d);
    stc_diags_free(d);
    stc_program_free(prog);
    return f;
}

/* A 10 MB line or a 1 MB name is not echoed whole: the line is shown 120
 * bytes around the column with "..." marks, names are cut after 64 bytes. */
TEST(api_diagnostics_cut_long_lines_and_names)
{
    size_t n = 10u << 20;
    char *src = malloc(n + 64);
    CHECK(src != NULL);
    if (!src) return;
    /* main = [1, 1, ..., 1, x, 1, ...] : the error at x, mid-line */
    size_t len = (size_t)sprintf(src, "main = [1");
    while (len < n / 2) len += (size_t)sprintf(src + len, ", 1");
    size_t col = len + 3;
    len += (size_t)sprintf(src + len, ", x");
    while (len < n) len += (size_t)sprintf(src + len, ", 1");
    len += (size_t)sprintf(src + len, "]");
    char *f = api_diags_of(src, len);
    char want[256];
    snprintf(want, sizeof want, "t.stc:1:%zu: error: undefined name 'x'\n", col);
    CHECK(f && strncmp(f, want, strlen(want)) == 0);
    CHECK(f && strlen(f) < 400);
    /* the shown line: "..." + 120 bytes + "...", the caret under the x */
    const char *line = f ? strchr(f, '\n') : NULL;
    const char *caret = line ? strchr(line + 1, '\n') : NULL;
    CHECK(line && caret && caret - line - 1 == 1 + 3 + 120 + 3);
    CHECK(line && strncmp(line + 1, " ...", 4) == 0 && strncmp(caret - 3, "...", 3) == 0);
    const char *hat = caret ? strchr(caret, '^') : NULL;
    CHECK(hat && line && line[1 + (hat - caret - 1)] == 'x');
    free(f);

    /* a short line is shown whole; a 1 MB name is cut in the message and the line */
    memset(src, 0, n);
    len = (size_t)sprintf(src, "main = ");
    memset(src + len, 'a', 1u << 20);
    len += 1u << 20;
    f = api_diags_of(src, len);
    CHECK(f && strlen(f) < 400);
    snprintf(want, sizeof want, "t.stc:1:8: error: undefined name '%.64s...'\n", src + 7);
    CHECK(f && strncmp(f, want, strlen(want)) == 0);
    CHECK_CONTAINS(f, "\n main = aaaa");
    free(f);
    /* a runtime error names the thread cut the same way */
    char name[1001];
    memset(name, 't', 1000);
    name[1000] = '\0';
    len = (size_t)sprintf(src, "fun g(x, s) = (x / 0, s)\nthread %s = g init 0\nmain = smap(%s, [5])\n", name, name);
    stc_program *prog = NULL;
    stc_result *res = NULL;
    CHECK_INT(stc_compile(NULL, src, len, "t.stc", &prog, NULL), 0);
    for (int workers = 0; workers <= 2; workers += 2) {
        CHECK_INT(stc_run(prog, &(stc_run_opts){.reference = workers == 0, .workers = workers}, &res), STC_ERUNTIME);
        f = stc_result_error_format(res);
        snprintf(want, sizeof want, "t.stc:1:18: error: division by zero (in thread '%.64s...', smap item 0)", name);
        CHECK_STR(f, want);
        free(f);
        stc_result_free(res);
    }
    stc_program_free(prog);
    f = api_diags_of("main = 1 +\n", 11);
    CHECK_STR(f, "t.stc:1:11: error: expected an expression, found end of input\n main = 1 +\n           ^\n");
    free(f);
    free(src);
}

/* ---- builder: the first DESIGN.md example built from C ---- */
static stc_b_expr *foo_body(stc_builder *b, stc_b_var *const *p, void *ud)
{
    int64_t k = *(int64_t *)ud;
    stc_b_expr *items[2] = {
        stc_b_binop(b, k == 2 ? "+" : "*", stc_b_ref(b, p[0]), stc_b_int(b, k)),
        stc_b_binop(b, "+", stc_b_ref(b, p[1]), stc_b_int(b, k == 2 ? 2 : 3))};
    return stc_b_tuple(b, 2, items);
}

static stc_b_expr *item_body(stc_builder *b, stc_b_var *x, void *ud)
{
    (void)ud;
    stc_b_expr *fx = stc_b_call(b, "f", 1, (stc_b_expr *[]){stc_b_ref(b, x)});
    return stc_b_call(b, "g", 1, (stc_b_expr *[]){fx});
}

TEST(api_builder_design_example)
{
    stc_builder *b = stc_builder_new(NULL);
    int64_t two = 2, three = 3;
    const char *params[2] = {"x", "s"};
    CHECK_INT(stc_b_fun(b, "foo", 2, params, foo_body, &two), 0);
    CHECK_INT(stc_b_fun(b, "bar", 2, params, foo_body, &three), 0);
    CHECK_INT(stc_b_thread(b, "f", "foo", stc_b_int(b, 0)), 0);
    CHECK_INT(stc_b_thread(b, "g", "bar", stc_b_int(b, 0)), 0);
    stc_b_expr *xs = stc_b_list(b, 2, (stc_b_expr *[]){stc_b_int(b, 10), stc_b_int(b, 10)});
    CHECK_INT(stc_b_main(b, stc_b_smap(b, xs, item_body, NULL)), 0);
    stc_program *prog = NULL;
    stc_diags *d = NULL;
    int rc = stc_builder_finish(b, &prog, &d);
    CHECK_INT(rc, 0);
    if (rc != 0) {
        char *m = stc_diags_format(d);
        fprintf(stderr, "%s", m ? m : "");
        free(m);
    }
    stc_builder_free(b);
    stc_diags_free(d);
    if (!prog) return;
    CHECK_INT(stc_program_thread_count(prog), 2);
    CHECK_STR(stc_program_thread_name(prog, 1), "g");
    stc_result *res = NULL;
    CHECK_INT(stc_run(prog, NULL, &res), 0);
    char *j = stc_result_to_json(res);
    CHECK_STR(j, "{\"result\": [36, 36], \"states\": {\"f\": 4, \"g\": 6}}");
    free(j);
    CHECK_INT(stc_value_at(stc_result_value(res), 1).as.i, 36);
    CHECK_STR(stc_result_state_name(res, 0), "f");
    CHECK_INT(stc_result_state(res, 1).as.i, 6);
    stc_result_free(res);
    stc_program_free(prog);
}

TEST(api_builder_reports_null_children_and_type_errors)
{
    stc_builder *b = stc_builder_new(NULL);
    /* NULL child: reported at finish, no crash. */
    CHECK(stc_b_binop(b, "+", stc_b_int(b, 1), NULL) == NULL);
    CHECK(stc_b_binop(b, "**", stc_b_int(b, 1), stc_b_int(b, 2)) == NULL);
    stc_program *prog = NULL;
    stc_diags *d = NULL;
    CHECK_INT(stc_builder_finish(b, &prog, &d), STC_ECOMPILE);
    CHECK_CONTAINS(stc_diags_message(d, 0), "builder:");
    stc_diags_free(d);
    stc_builder_free(b);

    b = stc_builder_new(NULL);
    stc_b_main(b, stc_b_binop(b, "+", stc_b_int(b, 1), stc_b_str(b, "x")));
    CHECK_INT(stc_builder_finish(b, &prog, &d), STC_ECOMPILE);
    CHECK(stc_diags_count(d) >= 1);
    stc_diags_free(d);
    stc_builder_free(b);
    stc_builder_free(NULL);
}

static stc_b_expr *case_inl(stc_builder *b, stc_b_var *v, void *ud)
{
    (void)ud;
    return stc_b_binop(b, "*", stc_b_ref(b, v), stc_b_int(b, 2));
}
static stc_b_expr *case_inr(stc_builder *b, stc_b_var *v, void *ud)
{
    (void)ud;
    (void)v;
    return stc_b_int(b, -1);
}
static stc_b_expr *let_body(stc_builder *b, stc_b_var *v, void *ud)
{
    (void)ud;
    stc_b_expr *l = stc_b_case_sum(b, stc_b_inl(b, stc_b_ref(b, v)), case_inl, case_inr, NULL);
    stc_b_expr *c = stc_b_case_lit(b, stc_b_ref(b, v), 1, (stc_b_expr *[]){stc_b_int(b, 21)},
                                   (stc_b_expr *[]){stc_b_str(b, "yes")}, stc_b_str(b, "no"));
    return stc_b_tuple(b, 2, (stc_b_expr *[]){l, c});
}

TEST(api_builder_let_case_if)
{
    stc_builder *b = stc_builder_new(NULL);
    stc_b_main(b, stc_b_if(b, stc_b_bool(b, true), stc_b_let(b, "v", stc_b_int(b, 21), let_body, NULL),
                           stc_b_tuple(b, 2, (stc_b_expr *[]){stc_b_int(b, 0), stc_b_str(b, "")})));
    stc_program *prog = NULL;
    CHECK_INT(stc_builder_finish(b, &prog, NULL), 0);
    stc_builder_free(b);
    if (!prog) return;
    stc_result *res = NULL;
    CHECK_INT(stc_run(prog, NULL, &res), 0);
    char *t = stc_value_to_text(stc_result_value(res));
    CHECK_STR(t, "(42, \"yes\")");
    free(t);
    stc_result_free(res);
    stc_program_free(prog);
}

/* ---- values with sharing from a C thread (fuzz finding 3) ---- */

/* in -> d^40(in), d(x) = [x, x]: 40 objects, 2^40 leaves. */
static int sharer_fn(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)state;
    (void)cx;
    stc_value x = *in;
    for (int i = 0; i < 40 && x.tag != STC_T_INVALID; i++)
        x = stc_value_new_list(2, (stc_value[]){stc_value_retain(x), x});
    *out = x;
    return x.tag == STC_T_INVALID ? STC_ENOMEM : 0;
}

TEST(api_shared_values_from_c_thread)
{
    /* The runtime checks the value against the declared type (once per
     * object), compares it and refuses to print it, all at once. */
    char type[200] = "int -> ";
    for (int i = 0; i < 40; i++) strcat(type, "[");
    strcat(type, "int");
    for (int i = 0; i < 40; i++) strcat(type, "]");
    stc_env *env = stc_env_new();
    stc_thread_def def = {.name = "sharer", .fn = sharer_fn, .type = type, .access = STC_PURE};
    CHECK_INT(stc_env_add_thread(env, &def), 0);
    char *out = run_json(env, "thread s = sharer\nmain = (len(s(1)), s(1) == s(1), s(1) != s(2))", 0);
    CHECK_STR(out, "{\"result\": [2, true, true], \"states\": {\"s\": null}}");
    free(out);
    out = run_json(env, "thread s = sharer\nmain = smap(fn x => s(x) == s(1), [2, 1])", 0);
    CHECK_STR(out, "{\"result\": [false, true], \"states\": {\"s\": null}}");
    free(out);
    out = run_json(env, "thread s = sharer\nmain = len(str(s(1)))", STC_ERUNTIME);
    CHECK_STR(out, "t.stc:2:12: error: str: value too large to print (over 1073741824 bytes)");
    free(out);
    /* A result too large to print: the run succeeds, printing fails. */
    stc_program *prog = NULL;
    const char *src = "thread s = sharer\nmain = s(3)";
    CHECK_INT(stc_compile(env, src, strlen(src), "t.stc", &prog, NULL), 0);
    stc_result *res = NULL;
    CHECK_INT(stc_run(prog, NULL, &res), 0);
    errno = 0;
    CHECK(stc_result_to_json(res) == NULL);
    CHECK_INT(errno, E2BIG);
    CHECK(stc_value_to_text(stc_result_value(res)) == NULL);
    CHECK_INT(errno, E2BIG);
    stc_result_free(res);
    stc_program_free(prog);
    stc_env_free(env);
}

/* A keyed thread's final state is a map the host reads with stc_map_*
 * (docs/LANGUAGE.md, keyed threads), the same at 1 and 3 workers. */
TEST(api_keyed_thread_final_state_is_a_map)
{
    const char *src = "fun count(w, n) = (n + 1, n + 1)\nkeyed thread counts = count init 0\n"
                      "main = smap(fn l => smap(counts, words(l)), [\"a b a\", \"c a\", \"b\"])\n";
    for (int workers = 1; workers <= 3; workers += 2) {
        stc_program *prog = NULL;
        CHECK_INT(stc_compile(NULL, src, strlen(src), "k.stc", &prog, NULL), 0);
        if (!prog) return;
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, &(stc_run_opts){.workers = workers}, &res), 0);
        CHECK_STR(stc_result_state_name(res, 0), "counts");
        stc_value m = stc_result_state(res, 0);
        CHECK_INT(m.tag, STC_T_MAP);
        CHECK_INT((long long)stc_map_len(m), 3);
        stc_value k = stc_value_new_str("a", 1);
        CHECK_INT(stc_map_get(m, k).as.i, 3);
        stc_value_release(k);
        stc_map_iter it;
        stc_value key, val;
        long long total = 0;
        stc_map_iter_init(&it, m);
        while (stc_map_iter_next(&it, &key, &val)) total += val.as.i;
        CHECK_INT(total, 6);
        stc_result_free(res);
        stc_program_free(prog);
    }
}

/* A keyed thread over a C thread is refused at compile time, located. */
TEST(api_keyed_thread_over_c_thread_refused)
{
    int freed = 0;
    stc_env *env = env_with_summer(&freed);
    const char *src = "keyed thread t = summer init 0\nmain = t(1)\n";
    stc_program *prog = NULL;
    stc_diags *d = NULL;
    CHECK_INT(stc_compile(env, src, strlen(src), "k.stc", &prog, &d), STC_ECOMPILE);
    CHECK(prog == NULL);
    CHECK_CONTAINS(stc_diags_message(d, 0), "keyed thread 't' cannot run C thread 'summer'");
    stc_diags_free(d);
    stc_env_free(env);
}
