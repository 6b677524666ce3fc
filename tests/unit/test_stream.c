/* test_stream.c - stream programs through the public API: a C source and
 * sink, results in order and equal to the reference evaluator's at every
 * worker count and capacity, bounded items in flight on a long stream,
 * failing sources, sinks and threads at the start, middle and end, wrong
 * item types, cancellation, merged sources. */
#include <stdio.h>
#include <stdlib.h>

#include "run_check.h"
#include "stc.h"
#include "test.h"
#include "value/value.h"

#define stream_compile(env, src) UNIT_COMPILE(env, src, "stream.stc")

/* A source of the ints 0..n-1 (or of strs when as_str), failing at item
 * fail_at (-1: never). */
typedef struct int_source {
    long long next, n, fail_at;
    bool as_str;
    bool wrong_type_at_end; /* the last item is a float */
} int_source;

static int int_source_fn(void *ud, stc_value *item, stc_ctx *cx)
{
    int_source *s = ud;
    if (s->next == s->fail_at) return stc_ctx_error(cx, "source broke at %lld", s->next);
    if (s->next >= s->n) return 0;
    long long i = s->next++;
    if (s->wrong_type_at_end && s->next == s->n) {
        *item = stc_value_float(1.5);
    } else if (s->as_str) {
        char text[32];
        int len = snprintf(text, sizeof text, "%lld", i);
        *item = stc_value_new_str(text, (size_t)len);
    } else {
        *item = stc_value_int(i);
    }
    return 1;
}

/* A sink that records the results as text, one per line, and checks
 * that indexes come in order; fails at item fail_at (-1: never). */
typedef struct text_sink {
    char *text;
    size_t len, cap;
    long long expect, fail_at;
    bool out_of_order;
} text_sink;

static int text_sink_fn(void *ud, long long index, stc_value v, stc_ctx *cx)
{
    text_sink *k = ud;
    if (index != k->expect) k->out_of_order = true;
    k->expect = index + 1;
    if (index == k->fail_at) return stc_ctx_error(cx, "sink full at %lld", index);
    char *t = stc_value_to_text(v);
    if (!t) return STC_ENOMEM;
    size_t n = strlen(t);
    if (k->len + n + 2 > k->cap) {
        k->cap = 2 * (k->len + n + 2);
        char *nt = realloc(k->text, k->cap);
        if (!nt) {
            free(t);
            return STC_ENOMEM;
        }
        k->text = nt;
    }
    memcpy(k->text + k->len, t, n);
    k->len += n;
    k->text[k->len++] = '\n';
    k->text[k->len] = 0;
    free(t);
    return 0;
}

/* Everything a stream run produced: sink text, then "ok " and the JSON
 * line or "error: " and the error (malloc'd). */
static char *stream_outcome_aided(stc_program *prog, stc_run_opts opts, const trun_mode *aids, int_source src,
                                  long long sink_fail, stc_run_stats *stats)
{
    text_sink k = {.fail_at = sink_fail};
    stc_stream io = {int_source_fn, &src, text_sink_fn, &k};
    trun_outcome o;
    trun_run(prog, &opts, aids, &io, &o);
    const char *tail = o.rc == 0 ? o.json : o.error;
    if (stats) *stats = o.stats;
    size_t n = (k.text ? k.len : 0) + (tail ? strlen(tail) : 8) + 32;
    char *out = malloc(n);
    snprintf(out, n, "%s%s%s", k.text ? k.text : "", o.rc == 0 ? "ok " : "error: ", tail ? tail : "(null)");
    if (k.out_of_order) test_fail(__FILE__, __LINE__, "sink called out of order");
    trun_outcome_free(&o);
    free(k.text);
    return out;
}

static char *stream_outcome(stc_program *prog, stc_run_opts opts, int_source src, long long sink_fail,
                            stc_run_stats *stats)
{
    return stream_outcome_aided(prog, opts, NULL, src, sink_fail, stats);
}

typedef struct stream_case {
    int_source src;
    long long sink_fail;
} stream_case;

static char *stream_runner(stc_program *prog, const trun_mode *m, void *ud)
{
    stream_case *c = ud;
    return stream_outcome(prog, trun_opts(m), c->src, c->sink_fail, NULL);
}

/* The reference's outcome, then every worker count and capacity must give
 * the same. Returns the reference outcome (malloc'd). */
static char *stream_check_modes(stc_program *prog, int_source src, long long sink_fail)
{
    stream_case c = {src, sink_fail};
    return CHECK_MODES(prog, "1,2,4", "1,3,0", stream_runner, &c);
}

static const char pipeline_src[] =
    "fun acc(x, s) = (s * 10 + x, (s * 10 + x) % 1000003)  -- order-sensitive\n"
    "fun cnt(x, s) = (x, s + 1)\n"
    "thread a = acc init 0\n"
    "thread c = cnt init 0\n"
    "fun check(x) = if x == 77 then nth([], 0) else x\n"
    "fun main(xs) = smap(fn x => c(a(check(x * 2)) % 1000), xs)\n";

TEST(stream_results_in_order_at_every_worker_count)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, pipeline_src);
    if (prog) {
        char *ref = stream_check_modes(prog, (int_source){.n = 30, .fail_at = -1}, -1);
        /* 30 lines of results, then the states. */
        int lines = 0;
        for (const char *p = ref; *p; p++) lines += *p == '\n';
        CHECK_INT(lines, 30);
        CHECK_CONTAINS(ref, "ok {\"result\": null, \"states\": {\"a\": ");
        CHECK_CONTAINS(ref, "\"c\": 30}}");
        free(ref);
        /* An empty stream: no results, states untouched. */
        ref = stream_check_modes(prog, (int_source){.n = 0, .fail_at = -1}, -1);
        CHECK_STR(ref, "ok {\"result\": null, \"states\": {\"a\": 0, \"c\": 0}}");
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* Source, sink and thread failures at the first, second, middle and last
 * items: the reference's error, and exactly the results before it. */
TEST(stream_failures_at_every_position)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, pipeline_src);
    static const long long at[] = {0, 1, 20, 39};
    for (size_t i = 0; prog && i < sizeof at / sizeof *at; i++) {
        /* source */
        char *ref = stream_check_modes(prog, (int_source){.n = 40, .fail_at = at[i]}, -1);
        char want[128];
        snprintf(want, sizeof want, "error: stream.stc:6:10: error: input failed: source broke at %lld (smap item %lld)",
                 at[i], at[i]);
        CHECK_CONTAINS(ref, want);
        int lines = 0;
        for (const char *p = ref; *p; p++) lines += *p == '\n';
        CHECK_INT(lines, at[i]);
        free(ref);
        /* sink */
        ref = stream_check_modes(prog, (int_source){.n = 40, .fail_at = -1}, at[i]);
        snprintf(want, sizeof want, "error: output failed: sink full at %lld (smap item %lld)", at[i], at[i]);
        CHECK_CONTAINS(ref, want);
        free(ref);
    }
    /* A thread's error in the middle (check(x) fails for x == 77: never for
     * ints 2x; a str source makes `x * 2` fail to type... so use item 38/2). */
    stc_program_free(prog);
    prog = stream_compile(env,
                          "fun acc(x, s) = (s * 10 + x, (s * 10 + x) % 1000003)\n"
                          "thread a = acc init 0\n"
                          "fun main(xs) = smap(fn x => a(100 / (x - 17)), xs)\n");
    if (prog) {
        char *ref = stream_check_modes(prog, (int_source){.n = 40, .fail_at = -1}, -1);
        CHECK_CONTAINS(ref, "division by zero");
        CHECK_CONTAINS(ref, "smap item 17");
        free(ref);
        /* The source failing later than the thread: the thread's error wins. */
        ref = stream_check_modes(prog, (int_source){.n = 40, .fail_at = 25}, -1);
        CHECK_CONTAINS(ref, "smap item 17");
        free(ref);
        /* The sink failing earlier than the thread: the sink's error wins. */
        ref = stream_check_modes(prog, (int_source){.n = 40, .fail_at = -1}, 5);
        CHECK_CONTAINS(ref, "sink full at 5");
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

TEST(stream_wrong_item_type_and_str_items)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, "thread n = cnt init 0\nfun cnt(x, s) = (len(x), s + 1)\n"
                                            "fun main(lines) = smap(fn l => n(l), lines)\n");
    if (prog) {
        char *ref = stream_check_modes(prog, (int_source){.n = 12, .fail_at = -1, .as_str = true}, -1);
        CHECK_CONTAINS(ref, "1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n2\n2\nok ");
        free(ref);
        ref = stream_check_modes(prog, (int_source){.n = 12, .fail_at = -1}, -1);
        CHECK_CONTAINS(ref, "input item of the wrong type: main's input items are str (smap item 0)");
        free(ref);
        ref = stream_check_modes(prog, (int_source){.n = 12, .fail_at = -1, .as_str = true, .wrong_type_at_end = true},
                                 -1);
        CHECK_CONTAINS(ref, "(smap item 11)");
        free(ref);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* A main that uses its input otherwise than as smap's list reads it all
 * first; a list result still goes to the sink, anything else is the value. */
TEST(stream_non_streamed_main)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, "fun main(xs) = let n = len(xs) in smap(fn x => x + n, xs)\n");
    if (prog) {
        char *ref = stream_check_modes(prog, (int_source){.n = 3, .fail_at = -1}, -1);
        CHECK_STR(ref, "3\n4\n5\nok {\"result\": null, \"states\": {}}");
        free(ref);
        ref = stream_check_modes(prog, (int_source){.n = 3, .fail_at = 1}, -1);
        CHECK_CONTAINS(ref, "error: stream.stc:1:10: error: input failed: source broke at 1 (smap item 1)");
        free(ref);
    }
    stc_program_free(prog);
    prog = stream_compile(env, "fun main(xs) = len(xs) * 2\n");
    if (prog) {
        char *ref = stream_check_modes(prog, (int_source){.n = 21, .fail_at = -1, .as_str = true}, -1);
        CHECK_STR(ref, "ok {\"result\": 42, \"states\": {}}");
        free(ref);
        /* Nothing says what the items are: any will do. */
        ref = stream_check_modes(prog, (int_source){.n = 21, .fail_at = -1}, -1);
        CHECK_STR(ref, "ok {\"result\": 42, \"states\": {}}");
        free(ref);
        /* stc_run gives a stream program an empty input. */
        stc_result *res = NULL;
        CHECK_INT(stc_run(prog, NULL, &res), 0);
        CHECK_INT(stc_result_value(res).as.i, 0);
        CHECK(!stc_result_streamed(res));
        stc_result_free(res);
        CHECK(stc_program_takes_input(prog));
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* 1,000,000 items through a pipeline with capacity 8 and 4 batches: the
 * items alive at once stay under the bound, and all results arrive. */
TEST(stream_million_items_bounded)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, "fun acc(x, s) = (s + x, s + x)\nthread a = acc init 0\n"
                                            "fun sq(x) = x * x\n"
                                            "fun main(xs) = smap(fn x => a(sq(x)), xs)\n");
    if (prog) {
        int_source src = {.n = 1000000, .fail_at = -1};
        text_sink k = {.fail_at = -1};
        stc_stream io = {int_source_fn, &src, text_sink_fn, &k};
        stc_result *res = NULL;
        stc_run_opts o = {.workers = 2, .queue_capacity = 8, .max_batches = 4};
        CHECK_INT(stc_run_stream(prog, &o, &io, &res), 0);
        stc_run_stats st = stc_result_stats(res);
        CHECK_INT(st.items, 1000000);
        CHECK(st.peak_in_flight <= 32);
        CHECK_INT(st.max_in_flight, 32);
        CHECK_INT(k.expect, 1000000);
        CHECK_INT(stc_result_input_items(res), 1000000);
        CHECK(!k.out_of_order);
        /* sum of squares 0..999999 */
        CHECK_INT(stc_result_state(res, 0).as.i, 333332833333500000LL);
        stc_result_free(res);
        free(k.text);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* A source of n references to the host's str s. */
typedef struct same_source {
    stc_value s;
    long long next, n;
} same_source;

static int same_source_fn(void *ud, stc_value *item, stc_ctx *cx)
{
    (void)cx;
    same_source *src = ud;
    if (src->next >= src->n) return 0;
    src->next++;
    *item = stc_value_retain(src->s);
    return 1;
}

/* A batch's release empties only the frame slots that may hold a counted
 * value (compile.c flow_heap_slots: scalar slots keep a stale int): every
 * reference an item's frame took (its parameter, a let's pieces, a tuple
 * holding the line) is dropped, so the host's str ends with its own
 * reference alone, stage by stage (profiled), item by item, and in the
 * pipeline.  It keeps 2 or more when a str slot is left out. */
TEST(stream_frames_release_what_they_held)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, "fun acc(x, s) = (s + x, s + x)\nthread a = acc init 0\n"
                                            "fun main(ls) = smap(fn l => let w = words(l) in let n = a(len(w)) in\n"
                                            "  let p = (l, n) in let (m, k) = p in if k > 0 then nth(w, k % 2) else m, ls)\n");
    stc_run_opts opts[] = {{.workers = 1, .profile = true}, {.workers = 1},
                           {.workers = 2, .profile = true, .queue_capacity = 4}, {.workers = 2, .queue_capacity = 4}};
    for (size_t i = 0; prog && i < sizeof opts / sizeof *opts; i++) {
        same_source src = {.s = stc_value_new_str("a b c", 5), .n = 2000};
        text_sink k = {.fail_at = -1};
        stc_stream io = {same_source_fn, &src, text_sink_fn, &k};
        stc_result *res = NULL;
        CHECK_INT(stc_run_stream(prog, &opts[i], &io, &res), 0);
        CHECK_INT(k.expect, 2000);
        stc_result_free(res);
        CHECK_INT((long long)src.s.as.obj->refs, 1);
        stc_value_release(src.s);
        free(k.text);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* Lets above main's smap that do not read the input are evaluated first,
 * and the smap still streams: constant memory, nothing read before. */
TEST(stream_under_lets)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, "fun acc(x, s) = (s * 10 + x, (s * 10 + x) % 1000003)\n"
                                            "thread a = acc init 0\n"
                                            "fun main(xs) = let k = 3 in let (p, q) = (k * 2, 7) in\n"
                                            "  smap(fn x => a(x + k + p + q) % 100, xs)\n");
    if (prog) {
        char *ref = stream_check_modes(prog, (int_source){.n = 4, .fail_at = -1}, -1);
        /* a's outputs: 16, 177, 1788, 17899 (s*10+x with x = 16..19) */
        CHECK_STR(ref, "16\n77\n88\n99\nok {\"result\": null, \"states\": {\"a\": 17899}}");
        free(ref);
        int_source src = {.n = 1000000, .fail_at = -1};
        text_sink k = {.fail_at = -1};
        stc_stream io = {int_source_fn, &src, text_sink_fn, &k};
        stc_result *res = NULL;
        stc_run_opts o = {.workers = 2, .queue_capacity = 8, .max_batches = 4};
        CHECK_INT(stc_run_stream(prog, &o, &io, &res), 0);
        CHECK(stc_result_streamed(res));
        CHECK(stc_result_stats(res).peak_in_flight <= 32);
        CHECK_INT(k.expect, 1000000);
        stc_result_free(res);
        free(k.text);
    }
    stc_program_free(prog);
    /* A failing let stops the run before the first item is read. */
    prog = stream_compile(env, "fun main(xs) = let z = nth([1], 5) in smap(fn x => x + z, xs)\n");
    if (prog) {
        for (int ref = 0; ref < 2; ref++) {
            int_source src = {.n = 10, .fail_at = -1};
            text_sink k = {.fail_at = -1};
            stc_stream io = {int_source_fn, &src, text_sink_fn, &k};
            stc_result *res = NULL;
            stc_run_opts o = {.reference = ref, .workers = 2};
            CHECK_INT(stc_run_stream(prog, &o, &io, &res), STC_ERUNTIME);
            char *msg = stc_result_error_format(res);
            CHECK_CONTAINS(msg, "nth: index 5 out of range");
            free(msg);
            CHECK_INT(src.next, 0);
            stc_result_free(res);
            free(k.text);
        }
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* A source that raises the cancel flag at item 500. */
typedef struct cancel_source {
    int_source inner;
    stc_cancel *cancel;
} cancel_source;

static int cancel_source_fn(void *ud, stc_value *item, stc_ctx *cx)
{
    cancel_source *s = ud;
    if (s->inner.next == 500) stc_cancel_request(s->cancel);
    return int_source_fn(&s->inner, item, cx);
}

TEST(stream_cancel_mid_stream)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, pipeline_src);
    for (int w = 0; prog && w < 3; w++) {
        cancel_source src = {{.n = 100000000, .fail_at = -1}, stc_cancel_new()};
        text_sink k = {.fail_at = -1};
        stc_stream io = {cancel_source_fn, &src, text_sink_fn, &k};
        stc_result *res = NULL;
        stc_run_opts o = {.workers = w, .reference = w == 0, .cancel = src.cancel};
        CHECK_INT(stc_run_stream(prog, &o, &io, &res), STC_ECANCELED);
        CHECK(src.inner.next < 100000);
        stc_result_free(res);
        stc_cancel_free(src.cancel);
        free(k.text);
    }
    stc_program_free(prog);
    stc_env_free(env);
}

/* Merged sources: (index, item) events, round robin, AGAIN skipped. */
typedef struct again_source {
    int_source inner;
    int calls;
} again_source;

static int again_source_fn(void *ud, stc_value *item, stc_ctx *cx)
{
    again_source *s = ud;
    if (++s->calls % 3 != 0) return STC_STREAM_AGAIN; /* an item every third call */
    return int_source_fn(&s->inner, item, cx);
}

TEST(stream_merged_sources)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env,
                                       "fun last(e, s) = let (src, x) = e in if src == 0 then (x, x) else (s, s)\n"
                                       "thread hold = last init -1\n"
                                       "fun main(events) = smap(fn e => hold(e), events)\n");
    if (prog) {
        int_source a = {.n = 3, .fail_at = -1}, b = {.n = 5, .fail_at = -1};
        stc_source_fn fns[2] = {int_source_fn, int_source_fn};
        void *uds[2] = {&a, &b};
        stc_merge *m = stc_merge_new(2, fns, uds, NULL, NULL);
        CHECK(m != NULL);
        text_sink k = {.fail_at = -1};
        stc_stream io = {stc_merge_source, m, text_sink_fn, &k};
        stc_result *res = NULL;
        stc_run_opts o = {.workers = 2, .queue_capacity = 1};
        CHECK_INT(stc_run_stream(prog, &o, &io, &res), 0);
        /* events (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) (1,3) (1,4): the filter
         * forwards source 0 and re-emits its last value for source 1. */
        CHECK_STR(k.text, "0\n0\n1\n1\n2\n2\n2\n2\n");
        stc_result_free(res);
        stc_merge_free(m);
        free(k.text);

        again_source c = {{.n = 4, .fail_at = -1}, 0};
        int_source d = {.n = 2, .fail_at = -1};
        stc_source_fn fns2[2] = {again_source_fn, int_source_fn};
        void *uds2[2] = {&c, &d};
        m = stc_merge_new(2, fns2, uds2, NULL, NULL);
        k = (text_sink){.fail_at = -1};
        io = (stc_stream){stc_merge_source, m, text_sink_fn, &k};
        CHECK_INT(stc_run_stream(prog, &(stc_run_opts){.reference = true}, &io, &res), 0);
        /* every item arrives: 4 from c, 2 from d */
        CHECK_INT(k.expect, 6);
        stc_result_free(res);
        stc_merge_free(m);
        free(k.text);

        int_source e = {.n = 5, .fail_at = 2}, f = {.n = 5, .fail_at = -1};
        void *uds3[2] = {&e, &f};
        m = stc_merge_new(2, fns, uds3, NULL, NULL);
        k = (text_sink){.fail_at = -1};
        io = (stc_stream){stc_merge_source, m, text_sink_fn, &k};
        CHECK_INT(stc_run_stream(prog, &(stc_run_opts){.workers = 2}, &io, &res), STC_ERUNTIME);
        char *err = stc_result_error_format(res);
        CHECK_CONTAINS(err, "input failed: source broke at 2 (smap item 4)");
        free(err);
        stc_result_free(res);
        stc_merge_free(m);
        free(k.text);
    }
    CHECK(stc_merge_new(0, NULL, NULL, NULL, NULL) == NULL);
    stc_merge_free(NULL);
    stc_program_free(prog);
    stc_env_free(env);
}

/* A sink that records, at each result, how many items the source had
 * given: item by item, result k of input item i arrives when exactly
 * i + 1 items were read. */
typedef struct lag_sink {
    text_sink text;
    const int_source *src;
    long long read_at[16];
} lag_sink;

static int lag_sink_fn(void *ud, long long index, stc_value v, stc_ctx *cx)
{
    lag_sink *k = ud;
    if (index >= 0 && index < 16) k->read_at[index] = k->src->next;
    return text_sink_fn(&k->text, index, v, cx);
}

/* Runs prog on the ints 0..n-1 in the reference (ref) or at 2 workers;
 * the sink's text and read_at[0..3] as "i,j,k,l". */
static void stream_lag(stc_program *prog, bool ref, long long n, char *text, size_t cap, char *lag, size_t lcap)
{
    int_source src = {.n = n, .fail_at = -1};
    lag_sink k = {.text = {.fail_at = -1}, .src = &src};
    stc_stream io = {int_source_fn, &src, lag_sink_fn, &k};
    stc_result *res = NULL;
    stc_run_opts o = {.reference = ref, .workers = 2};
    CHECK_INT(stc_run_stream(prog, &o, &io, &res), 0);
    snprintf(text, cap, "%s", k.text.text ? k.text.text : "");
    snprintf(lag, lcap, "%lld,%lld,%lld,%lld", k.read_at[0], k.read_at[1], k.read_at[2], k.read_at[3]);
    stc_result_free(res);
    free(k.text.text);
}

/* filter(P, smap(F, xs)) and smap(F, filter(P, xs)) stream item by item
 * (each result leaves before the next item is read) when F or P calls no
 * thread; when both do, the input is read whole first (a thread would
 * otherwise see its calls in another order). */
TEST(stream_filters_item_by_item)
{
    static const char *const srcs[] = {
        /* a's outputs on 0..9: 0 1 12 123 1234 12345 123456 1234567 2345648 3456429 */
        "fun acc(x, s) = (s * 10 + x, (s * 10 + x) % 1000003)\nthread a = acc init 0\n"
        "fun main(xs) = filter(fn y => y % 3 == 0, smap(fn x => a(x), xs))\n",
        "fun acc(x, s) = (s * 10 + x, (s * 10 + x) % 1000003)\nthread a = acc init 0\n"
        "fun main(xs) = smap(a, filter(fn x => x % 2 == 1, xs))\n",
        "fun acc(x, s) = (s * 10 + x, (s * 10 + x) % 1000003)\nthread a = acc init 0\nthread b = acc init 0\n"
        "fun main(xs) = filter(fn y => b(y) % 2 == 0, smap(fn x => a(x), xs))\n",
    };
    static const char *const want[] = {
        "0\n12\n123\n12345\n123456\n3456429\nok {\"result\": null, \"states\": {\"a\": 456420}}",
        "1\n13\n135\n1357\n13579\nok {\"result\": null, \"states\": {\"a\": 13579}}",
        NULL,
    };
    static const char *const lags[] = {"1,3,4,6", "2,4,6,8", "10,10,10,10"};
    stc_env *env = stc_env_new();
    for (int i = 0; i < 3; i++) {
        stc_program *prog = stream_compile(env, srcs[i]);
        if (!prog) continue;
        char *ref = stream_check_modes(prog, (int_source){.n = 10, .fail_at = -1}, -1);
        if (want[i]) CHECK_STR(ref, want[i]);
        free(ref);
        for (int r = 0; r < 2; r++) {
            char text[512], lag[128];
            stream_lag(prog, r == 0, 10, text, sizeof text, lag, sizeof lag);
            CHECK_STR(lag, lags[i]);
        }
        stc_program_free(prog);
    }
    stc_env_free(env);
}

/* A longer stream whose function fails in the body (run whole at once by
 * one worker's fused path once items are cheap, steps.c
 * flow_direct_items): the results before the failing item, exactly the
 * reference's, then its error; the same through a tail call the body
 * ends in, and with the sink failing first. */
TEST(stream_direct_body_fails_mid_stream)
{
    stc_env *env = stc_env_new();
    static const long long at[] = {0, 900, 2500, 2999};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        char src[512];
        snprintf(src, sizeof src,
                 "fun acc(x, s) = (s * 10 + x, (s * 10 + x) %% 1000003)\nthread a = acc init 0\n"
                 "fun last(x, y) = y - x\n"
                 "fun main(xs) = smap(fn x => last(x, a(100 / (x - %lld)) %% 1000), xs)\n",
                 at[i]);
        stc_program *prog = stream_compile(env, src);
        if (!prog) continue;
        char *ref = stream_check_modes(prog, (int_source){.n = 3000, .fail_at = -1}, -1);
        char want[64];
        snprintf(want, sizeof want, "division by zero (smap item %lld)", at[i]);
        CHECK_CONTAINS(ref, want);
        int lines = 0;
        for (const char *p = ref; p && *p; p++) lines += *p == '\n';
        CHECK_INT(lines, at[i]);
        free(ref);
        if (at[i] > 10) { /* the sink fails before the body: its error */
            ref = stream_check_modes(prog, (int_source){.n = 3000, .fail_at = -1}, at[i] - 10);
            snprintf(want, sizeof want, "sink full at %lld", at[i] - 10);
            CHECK_CONTAINS(ref, want);
            free(ref);
        }
        stc_program_free(prog);
    }
    stc_env_free(env);
}

/* A stream whose pipeline goes back to fused and on again every few items
 * (the shuttle testing aid: exec.c's probe, whatever the times): the same
 * lines, states and errors as the reference, whether the source, the sink
 * or the thread fails, and the trips counted (stats.smaps_retreated). */
TEST(stream_back_and_forth_between_fused_and_pipeline)
{
    stc_env *env = stc_env_new();
    stc_program *prog = stream_compile(env, pipeline_src);
    if (prog) {
        static const struct { long long n, src_fail, sink_fail; } cases[] = {
            {5000, -1, -1}, {5000, 3100, -1}, {5000, -1, 4321}, {60, -1, -1}};
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            int_source src = {.n = cases[i].n, .fail_at = cases[i].src_fail};
            char *ref = stream_outcome(prog, (stc_run_opts){.reference = true}, src, cases[i].sink_fail, NULL);
            for (int w = 2; w <= 3; w++)
                for (int qc = 0; qc <= 4; qc += 4) {
                    trun_mode m = {.workers = w, .queue_capacity = qc, .shuttle_items = 40};
                    stc_run_stats st;
                    char *got = stream_outcome_aided(prog, trun_opts(&m), &m, src, cases[i].sink_fail, &st);
                    CHECK_STR(got, ref);
                    CHECK(st.smaps_retreated >= (cases[i].n > 1000 ? 2 : 0)); /* every other probe stays fused */
                    free(got);
                }
            free(ref);
        }
    }
    stc_program_free(prog);
    stc_env_free(env);
}
