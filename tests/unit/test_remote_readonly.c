/* test_remote_readonly.c - replicated stages that call read-only threads
 * (or read their states with state(t)) run by a remote executor
 * (src/flow/remote.c, owned.c job_states, remote_serve.c): the states go
 * with every batch, the peer lends them to the batch and keeps nothing.
 * The fake transport (tests/support/remote_fake.c) answers with its own
 * compile of the same text; the outcome must be the reference's, errors
 * inside a read-only call included. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/program.h"
#include "flow/flow.h"
#include "remote_fake.h"
#include "run_check.h"
#include "stc.h"
#include "test.h"

/* Runs src under the reference and at `workers` with the fake in `mode`
 * (peers > 0: that many peers that may own serial stages, every such stage
 * going), checks the outcome is the reference's; *stats, and *outcome (if
 * not NULL: the reference's, malloc'd) for the caller. */
static void ro_check(const char *src, tfake_mode mode, int workers, int peers, stc_run_stats *stats, char **outcome)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "ro.stc"), *twin = UNIT_COMPILE(env, src, "ro.stc");
    tfake *f = prog && twin ? tfake_start(twin, mode) : NULL;
    CHECK(f != NULL);
    if (f) {
        if (peers > 0) tfake_set_peers(f, peers, -1);
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = workers, .remote = tfake_remote(f)}, stats);
        CHECK_STR(got, ref);
        if (outcome) *outcome = ref;
        else free(ref);
        free(got);
        long long served = tfake_stop(f, NULL, NULL);
        CHECK_INT(stats->remote_batches, served);
    }
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

static char *answer(stc_remote_server *s, const void *q, size_t len, size_t *rl);

/* Read-only threads with a list state and a float state, called and read
 * by state(t) in replicated stages of two smaps; main calls r and a
 * writing thread between them.  Both smaps' stages need the states. */
static const char ro_src[] =
    "fun look(x, s) = (x * 3 + fold(fn (a, y) => a + y, 0, s), s)\n"
    "thread r = look init [1, 2, 3]\n"
    "fun scale(x, s) = (float(x) * s, s)\n"
    "thread k = scale init 1.5\n"
    "fun acc(x, s) = (x + s, (x + s) % 1000003)\n"
    "thread total = acc init 0\n"
    "main = let a = smap(fn x => (r(x), k(x), len(state(r))), range(0, 2000)) in\n"
    "       let c = total(r(1)) in\n"
    "       let b = smap(fn x => let y = r(x) in total(y) + len(state(r)), range(0, 1500)) in\n"
    "       (a, c, b, state(total), state(k))\n";

TEST(remote_readonly_stages_run_remotely_alike)
{
    static const tfake_mode modes[] = {TFAKE_SERVE, TFAKE_ASYNC, TFAKE_ASYNC_NOW};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (int workers = 1; workers <= 3; workers += 2) {
            stc_run_stats st = {0};
            ro_check(ro_src, modes[m], workers, 0, &st, NULL);
            /* the first smap's one stage reads r and k: it went */
            CHECK(st.remote_batches > (modes[m] == TFAKE_SERVE ? 20 : 0));
            CHECK_INT(st.remote_declined, 0);
        }
}

/* An error inside a read-only call is the reference's: same text, item and
 * thread, at items 0, 1 and later, the earliest failing item winning. */
TEST(remote_readonly_errors_are_the_references)
{
    static const int bad[] = {0, 1, 17, 999};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (int mode = 0; mode < 3; mode++) {
            char src[512];
            snprintf(src, sizeof src,
                     "fun look(x, s) = (1000 / (x - %d) + s, s)\n"
                     "thread r = look init 5\n"
                     "main = smap(fn x => r(x) * 2 + r(x + 1500), range(0, 1500))\n",
                     bad[i]);
            stc_run_stats st = {0};
            char *out = NULL;
            ro_check(src, mode == 0 ? TFAKE_SERVE : TFAKE_ASYNC, mode == 2 ? 2 : 1, 0, &st, &out);
            CHECK(st.remote_batches > 0);
            CHECK_CONTAINS(out, "division by zero");
            CHECK_CONTAINS(out, "in thread 'r'");
            char item[64];
            snprintf(item, sizeof item, "smap item %d)", bad[i]);
            CHECK_CONTAINS(out, item);
            free(out);
        }
}

/* A read-only thread whose state a serial stage took to a peer in the
 * first smap (t's function calls r: t's stage is owned with r's and t's
 * states, which come back at its end), then read by a replicated stage of
 * the second smap: the state it sends is the one back on rank 0. */
TEST(remote_readonly_after_an_owned_stage)
{
    static const char src[] = "fun look(x, s) = (x + s, s)\n"
                              "thread r = look init 7\n"
                              "fun acc(x, s) = (x + s + r(0), (x + s) % 1000003)\n"
                              "thread t = acc init 0\n"
                              "main = let a = smap(fn x => t(x * 2), range(0, 800)) in\n"
                              "       let b = smap(fn x => r(x) * 2 + len(str(state(r))), range(0, 800)) in\n"
                              "       (a, b, state(t), state(r))\n";
    for (int workers = 1; workers <= 3; workers += 2) {
        stc_run_stats st = {0};
        ro_check(src, TFAKE_ASYNC, workers, 1, &st, NULL);
        CHECK_INT(st.remote_moves, 1);
        CHECK(st.remote_batches - st.remote_serial > 0); /* the second smap's went too */
        CHECK_INT(st.remote_declined, 0);
    }
}

/* A stage's context (its read-only threads' states and captures) of more
 * than FLOW_CTX_SMALL (1 KiB) encoded goes to each peer once and is named
 * by its key after: its batches go, the outcome is the reference's, and
 * far fewer bytes travel than a copy of the state a batch (a state of
 * 30,000 ints is 30,000 bytes at least, which a request carrying it
 * would add to the average; the transport holds at most 2 requests, so a
 * few go with the bytes, however many batches).  A small one goes with
 * every batch, as before. */
TEST(remote_readonly_large_states_go_once)
{
    static const char fmt[] = "fun look(x, s) = (x * 3 + len(s), s)\n"
                              "thread r = look init range(0, %d)\n"
                              "main = smap(fn x => r(x) + nth(state(r), x %% 100), range(0, 20000))\n";
    static const int sizes[] = {100, 30000};
    static const tfake_mode modes[] = {TFAKE_SERVE, TFAKE_ASYNC, TFAKE_ASYNC_NOW};
    for (int i = 0; i < 2; i++)
        for (int m = 0; m < 3; m++)
            for (int workers = 1; workers <= 3; workers += 2) {
                char src[256];
                snprintf(src, sizeof src, fmt, sizes[i]);
                stc_run_stats st = {0};
                ro_check(src, modes[m], workers, 0, &st, NULL);
                CHECK(st.remote_batches > 0);
                CHECK_INT(st.remote_declined, 0);
                /* (the context is ~3.7 bytes an int: at most 6 copies however many batches) */
                if (sizes[i] > 1000) CHECK(st.remote_bytes_sent < 6LL * 4 * sizes[i] + st.remote_batches * 4000);
            }
}

/* The join a user writes: a table made in main, captured by the mapped
 * function.  Its batches go, its context once a peer (bytes as above). */
TEST(remote_captured_table_goes_once)
{
    static const char src[] =
        "fun main_of(n) =\n"
        "  let table = to_map(smap(fn i => (concat(\"k\", str(i)), i * 7), range(0, n))) in\n"
        "  smap(fn x => get(table, concat(\"k\", str(x % 3000)), -1) + x, range(0, 20000))\n"
        "main = main_of(3000)\n";
    static const tfake_mode modes[] = {TFAKE_SERVE, TFAKE_ASYNC, TFAKE_ASYNC_NOW};
    for (int m = 0; m < 3; m++)
        for (int workers = 1; workers <= 3; workers += 2) {
            stc_run_stats st = {0};
            ro_check(src, modes[m], workers, 0, &st, NULL);
            CHECK(st.remote_batches > 0);
            CHECK_INT(st.remote_declined, 0);
            CHECK(st.remote_bytes_sent < 6LL * 3000 * 14 + st.remote_batches * 4000); /* the table: ~12 bytes a key */
        }
}

/* A captured table read by one stage only: the replicated stage that
 * joins against it sends it once (its context), and the serial stage
 * after it, owned by the peer, sends () in its place with every batch
 * (flow_capture_sent; when it sent the whole table with each, its 32-68
 * batches made 1.1-2.3 MB in all, against 0.16-0.19 MB). */
TEST(remote_unread_capture_stays_here)
{
    static const char src[] =
        "fun tally(x, s) = (s + x, (s + x) % 1000003)\n"
        "thread t = tally init 0\n"
        "fun main_of(n) =\n"
        "  let table = to_map(smap(fn i => (concat(\"k\", str(i)), i * 7), range(0, n))) in\n"
        "  smap(fn x => t(get(table, concat(\"k\", str(x % 3000)), -1)), range(0, 20000))\n"
        "main = (main_of(3000), state(t))\n";
    for (int workers = 1; workers <= 3; workers += 2) {
        stc_run_stats st = {0};
        ro_check(src, TFAKE_ASYNC, workers, 1, &st, NULL);
        CHECK(st.remote_serial > 4); /* the owned stage's batches went */
        CHECK(st.remote_batches - st.remote_serial > 0);
        CHECK_INT(st.remote_declined, 0);
        CHECK(st.remote_bytes_sent < 6LL * 3000 * 14 + st.remote_batches * 4000);
    }
}

/* Ten smaps, each capturing a list of its own (ten contexts, more than a
 * peer keeps: FLOW_CTX_KEPT, 8), run twice: in the second round each was
 * dropped by the later ones (least recently used) and goes again; with
 * eight the second round finds them all.  The outcome is the reference's
 * either way. */
static long long kept_round_bytes(int lists, int rounds)
{
    char src[2048];
    /* (pick is a function: a stage calling only nth would stay here, remote.c) */
    int at = snprintf(src, sizeof src, "fun pick(t, x) = nth(t, x %% 50)\nfun go(k) = (");
    for (int i = 0; i < lists; i++)
        at += snprintf(src + at, sizeof src - (size_t)at,
                       "%slet t = range(k + %d, k + %d) in smap(fn x => x + pick(t, x), range(0, 300))",
                       i ? ", " : "", i, i + 1500);
    snprintf(src + at, sizeof src - (size_t)at, ")\nmain = (go(0)%s)\n", rounds == 2 ? ", go(0)" : "");
    stc_run_stats st = {0};
    ro_check(src, TFAKE_SERVE, 1, 0, &st, NULL);
    CHECK_INT(st.remote_declined, 0);
    return st.remote_bytes_sent;
}

TEST(remote_contexts_dropped_least_recently_used)
{
    long long ten1 = kept_round_bytes(10, 1), ten2 = kept_round_bytes(10, 2);
    long long eight1 = kept_round_bytes(8, 1), eight2 = kept_round_bytes(8, 2);
    CHECK(ten1 > 10 * 1500 && eight1 > 8 * 1500); /* every list went once */
    CHECK(ten2 * 10 > ten1 * 17);                  /* all ten again */
    /* None of the eight again: their second round sends, per smap, at
     * least a list's 1500 items fewer than the ten's.  (Compared with the
     * first round's total instead, 1.33x under TSan, the batches' own
     * bytes passed the 1.4x bound once in CI as the load cut batches
     * smaller.) */
    CHECK((ten2 - ten1) * 8 - (eight2 - eight1) * 10 > 80LL * 1500);
}

/* What a peer does with a context: a request naming one it does not hold
 * is answered "STCn" and runs nothing; once a request brought it, the
 * first request is answered as the one that brought it (the same batch);
 * every prefix and corruptions of the bringing request are refused or
 * answered, never a crash or a leak (a context whose bytes do not match
 * its key is refused). */
TEST(remote_context_asked_for_then_kept)
{
    static const char src[] = "fun look(x, s) = (x * 3 + len(s), s)\n"
                              "thread r = look init range(0, 5000)\n"
                              "main = smap(fn x => r(x), range(0, 3000))\n";
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "ro.stc"), *twin = UNIT_COMPILE(env, src, "ro.stc");
    tfake *f = prog && twin ? tfake_start(twin, TFAKE_SERVE) : NULL;
    unsigned char *first = NULL, *keep = NULL;
    size_t lf = 0, lk = 0;
    if (f) {
        stc_run_stats st = {0};
        free(unit_outcome(prog, (stc_run_opts){.workers = 1, .remote = tfake_remote(f)}, &st));
        keep = tfake_take_largest(f, &lk);
        tfake_stop(f, (void **)&first, &lf);
    }
    CHECK(first != NULL && keep != NULL && lk > lf + 5000);
    stc_remote_server *s = prog ? stc_remote_server_new(prog) : NULL, *t = prog ? stc_remote_server_new(prog) : NULL;
    CHECK(s != NULL && t != NULL);
    if (first && keep && s && t) {
        size_t l1, l2, l3;
        char *ask = answer(s, first, lf, &l1), *ra = answer(s, keep, lk, &l2), *rb = answer(s, first, lf, &l3);
        CHECK(ask && l1 == 4 && memcmp(ask, "STCn", 4) == 0);
        CHECK(ra && rb && l2 > 4 && memcmp(ra, "STCa", 4) == 0 && l2 == l3 && memcmp(ra, rb, l2) == 0);
        free(ask), free(ra), free(rb);
        CHECK_INT(tfake_hammer(t, keep, lk, 17, 300), 0);
    }
    stc_remote_server_free(s);
    stc_remote_server_free(t);
    free(first);
    free(keep);
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

/* The first request of src's run (malloc'd; NULL if none). */
static void *first_request(const char *src, size_t *len)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "ro.stc"), *twin = UNIT_COMPILE(env, src, "ro.stc");
    tfake *f = prog && twin ? tfake_start(twin, TFAKE_SERVE) : NULL;
    void *first = NULL;
    *len = 0;
    if (f) {
        stc_run_stats st = {0};
        free(unit_outcome(prog, (stc_run_opts){.workers = 1, .remote = tfake_remote(f)}, &st));
        tfake_stop(f, &first, len);
    }
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
    return first;
}

static char *answer(stc_remote_server *s, const void *q, size_t len, size_t *rl)
{
    void *rep = NULL;
    *rl = 0;
    CHECK_INT(stc_remote_server_handle(s, q, len, &rep, rl), 0);
    return rep;
}

/* The peer uses the state a request brings and keeps none: requests of
 * the same stage with two different states (two texts that differ only in
 * the init), answered in turn by one server, are each answered as by a
 * fresh server; so a state that changed between jobs can never be met by
 * an older one on the peer.  Every prefix and corruptions of such a
 * request are refused or answered, never a crash or a leak. */
TEST(remote_readonly_peer_keeps_no_state)
{
    static const char fmt[] = "fun look(x, s) = (x * 10 + s, s)\n"
                              "thread r = look init %d\n"
                              "main = smap(fn x => r(x), range(0, 3000))\n";
    char a[256], b[256];
    snprintf(a, sizeof a, fmt, 5);
    snprintf(b, sizeof b, fmt, 6);
    size_t la, lb;
    unsigned char *qa = first_request(a, &la), *qb = first_request(b, &lb);
    CHECK(qa != NULL && qb != NULL);
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, a, "ro.stc");
    stc_remote_server *s = prog ? stc_remote_server_new(prog) : NULL, *fresh = prog ? stc_remote_server_new(prog) : NULL;
    CHECK(s != NULL && fresh != NULL);
    if (qa && qb && s && fresh) {
        size_t l1, l2, l3, l4;
        char *ra = answer(s, qa, la, &l1), *rb = answer(s, qb, lb, &l2), *ra2 = answer(s, qa, la, &l3);
        char *rbf = answer(fresh, qb, lb, &l4);
        CHECK(ra && rb && ra2 && rbf);
        if (ra && rb && ra2 && rbf) {
            CHECK(l1 != l2 || memcmp(ra, rb, l1) != 0); /* the states differ, so do the outputs */
            CHECK(l1 == l3 && memcmp(ra, ra2, l1) == 0);
            CHECK(l2 == l4 && memcmp(rb, rbf, l2) == 0);
        }
        free(ra), free(rb), free(ra2), free(rbf);
        CHECK_INT(tfake_hammer(s, qa, la, 13, 1000), 0);
    }
    stc_remote_server_free(s);
    stc_remote_server_free(fresh);
    free(qa);
    free(qb);
    stc_program_free(prog);
    stc_env_free(env);
}

/* C threads never go, read-only ones included (their state is the
 * host's): a stage calling a C reader, or a lang read-only thread whose
 * function does, stays on rank 0; the lang reader alone goes. */
static int c_read(void *state, const stc_value *in, stc_value *out, stc_ctx *cx)
{
    (void)cx;
    *out = stc_value_int(in->as.i + *(const long long *)state);
    return 0;
}

static void c_smap(const ir_expr *smap, void *ud)
{
    const ir_expr **out = ud;
    if (!*out) *out = smap;
}

static uint64_t c_mask(const char *src)
{
    stc_env *env = stc_env_new();
    stc_thread_def d = {.name = "cread", .fn = c_read, .type = "int -> int", .state_size = sizeof(long long),
                        .access = STC_READS};
    CHECK_INT(stc_env_add_thread(env, &d), 0);
    stc_program *prog = UNIT_COMPILE(env, src, "c.stc");
    uint64_t mask = ~(uint64_t)0;
    flow_info *fi = prog ? stc__flow_info_new(prog->ir) : NULL;
    if (fi) {
        const ir_expr *smap = NULL;
        stc__flow_each_smap(prog->ir, c_smap, &smap);
        flow_plan *pl = smap ? stc__flow_plan_static(fi, smap) : NULL;
        CHECK(pl != NULL);
        if (pl) mask = pl->remote_ok;
    }
    stc__flow_info_free(fi);
    stc_program_free(prog);
    stc_env_free(env);
    return mask;
}

TEST(remote_readonly_c_threads_stay)
{
    CHECK_INT(c_mask("thread c = cread\n"
                     "main = smap(fn x => c(x * 2) + 1, range(0, 10))\n"),
              0);
    CHECK_INT(c_mask("thread c = cread\n"
                     "fun look(x, s) = (c(x) + s, s)\n"
                     "thread r = look init 5\n"
                     "main = smap(fn x => r(x * 2), range(0, 10))\n"),
              0);
    CHECK_INT(c_mask("thread c = cread\n"
                     "fun look(x, s) = (x + s, s)\n"
                     "thread r = look init 5\n"
                     "main = smap(fn x => r(x * 2), range(0, 10))\n"),
              1);
}
