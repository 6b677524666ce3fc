/* test_remote_keyed.c - keyed threads' shard stages owned by peers
 * (src/flow/owned.c, remote_send.c, remote_serve.c, shards.c): a shard's
 * map goes with its stage's first batch, the peer runs that shard's later
 * batches on it, and it comes back before the job merges the shards.  The
 * fake transport (tests/support/remote_fake.c) answers with its own compile
 * of the same text; the outcome must be the reference's, errors included
 * (the earliest failing item, and element of an inner smap). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/program.h"
#include "flow/flow.h"
#include "remote_fake.h"
#include "run_check.h"
#include "stc.h"
#include "test.h"

/* Runs src under the reference and at `workers` with the asynchronous fake
 * in `mode` offering `peers` peers, every stage that may go going (-1);
 * checks the outcome is the reference's and the counts agree; *stats, and
 * *outcome (if not NULL: the reference's, malloc'd). */
static void keyed_check(const char *src, tfake_mode mode, int workers, int peers, stc_run_stats *stats, char **outcome)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "keyed.stc"), *twin = UNIT_COMPILE(env, src, "keyed.stc");
    tfake *f = prog && twin ? tfake_start(twin, mode) : NULL;
    CHECK(f != NULL);
    if (f) {
        tfake_set_peers(f, peers, -1);
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = workers, .remote = tfake_remote(f)}, stats);
        CHECK_STR(got, ref);
        CHECK_INT(stats->remote_serial, tfake_peer_served(f));
        CHECK_INT(stats->remote_declined, 0);
        if (outcome) *outcome = ref;
        else free(ref);
        free(got);
        size_t qlen = 0;
        unsigned char *q = tfake_take_first_peer(f, &qlen);
        tfake_stop(f, NULL, NULL);
        /* A peer's first request (a shard map and a batch), every strict
         * prefix of it and corruptions of it: answered or refused, never a
         * crash or a leak (ASan). */
        stc_remote_server *server = q ? stc_remote_server_new(twin) : NULL;
        if (server) {
            void *rep = NULL;
            size_t rl = 0;
            CHECK_INT(stc_remote_server_handle(server, q, qlen, &rep, &rl), 0);
            free(rep);
            CHECK_INT(tfake_hammer(server, q, qlen, 5, 300), 0); /* prefixes refused, corruptions survived */
            stc_remote_server_free(server);
        }
        free(q);
    }
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

/* The word count's shape: an inner smap of the keyed thread over a line's
 * words (FS_ISHARD / FS_IKEYED), run twice with main's own keyed call
 * between; state(t) read after.  Then a window of the last three values
 * per key (a direct keyed call, FS_KEYED, over a list state). */
static const char count_src[] =
    "fun count(w, n) = (n + 1, n + 1)\n"
    "keyed thread counts = count init 0\n"
    "fun line(i) = concat(concat(\"w\", str(i % 37)), concat(\" x\", concat(str(i % 11), concat(\" w\", str(i % 5)))))\n"
    "main = let a = smap(fn i => smap(counts, words(line(i))), range(0, 1200)) in\n"
    "       let c = counts(\"w3\") in\n"
    "       let b = smap(fn i => smap(fn w => counts(w), words(line(i * 7))), range(0, 900)) in\n"
    "       (a, c, b, len(items(state(counts))), get(state(counts), \"x3\", 0))\n";

static const char window_src[] =
    "fun win(k, x, s) = let t = if len(s) < 3 then append(s, [x]) else append(drop(s, 1), [x]) in (fold(fn (a, v) => a + v, 0, t), t)\n"
    "keyed thread w = win init []\n"
    "fun heavy(x) = fold(fn (a, i) => (a * 31 + i * x) % 1000003, 7, range(0, 20))\n"
    "main = let a = smap(fn x => let h = heavy(x) in w(x % 13, h), range(0, 1500)) in\n"
    "       let b = smap(fn x => w(x % 5, x), range(0, 600)) in\n"
    "       (a, b, state(w))\n";

/* An inner smap's lambda with a capture (it travels as a closure in the
 * item's temporaries). */
static const char capture_src[] =
    "fun add(w, x, n) = (n + x, n + x)\n"
    "keyed thread t = add init 100\n"
    "fun line(i) = concat(concat(\"a\", str(i % 29)), concat(\" b\", str(i % 7)))\n"
    "main = smap(fn l => let k = len(l) in smap(fn w => t(w, k), words(l)), smap(line, range(0, 1000)))\n";

/* Two keyed threads in one pipeline: each its own shard stages, a peer
 * holding shards of both (by thread and shard). */
static const char two_src[] =
    "fun sum(k, x, s) = (s + x, s + x)\n"
    "fun cnt(k, x, n) = (n, n + 1)\n"
    "keyed thread a = sum init 0\n"
    "keyed thread b = cnt init 10\n"
    "main = smap(fn x => let p = a(x % 31, x) in let q = b(str(x % 37), p) in (p, q), range(0, 1200))\n";

TEST(remote_keyed_shards_owned_by_peers)
{
    static const char *const srcs[] = {count_src, window_src, capture_src, two_src};
    static const int jobs[] = {2, 2, 1, 2}; /* (two_src: one job, two threads' shards) */
    /* each job's shards: one per worker and one per peer (runtime.c) */
    for (size_t p = 0; p < sizeof srcs / sizeof srcs[0]; p++)
        for (int mo = 0; mo < 2; mo++)
            for (int workers = 1; workers <= 3; workers += 2)
                for (int peers = 1; peers <= 2; peers++) {
                    stc_run_stats st = {0};
                    keyed_check(srcs[p], mo ? TFAKE_ASYNC_NOW : TFAKE_ASYNC, workers, peers, &st, NULL);
                    int shards = workers + peers;
                    CHECK_INT(st.remote_shard_moves, shards * jobs[p]);
                    CHECK_INT(st.remote_moves, shards * jobs[p]);
                    /* their batches, and each map back once */
                    CHECK(st.remote_shard_serial > 6 * jobs[p]);
                    CHECK_INT(st.remote_shard_serial, st.remote_serial);
                }
}

/* Errors in a shard owned by a peer: a direct keyed call failing at item k
 * (and again later), and an inner smap's elements failing in two shards of
 * one item and in a later item: the reference's error, the earliest item
 * and element. */
TEST(remote_keyed_shard_errors_are_the_references)
{
    static const int bad[] = {0, 1, 17, 999};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (int workers = 2; workers <= 3; workers++) {
            char src[1024];
            stc_run_stats st = {0};
            char *out = NULL;
            snprintf(src, sizeof src,
                     "fun acc(k, x, s) = (1000 / ((x - %d) * (x - %d)) + s, s + 1)\n"
                     "keyed thread t = acc init 0\n"
                     "main = smap(fn x => t(x %% 7, x), range(0, 1500))\n",
                     bad[i], bad[i] + 101);
            keyed_check(src, TFAKE_ASYNC, workers, 2, &st, &out);
            CHECK_CONTAINS(out, "division by zero for key");
            char item[64];
            snprintf(item, sizeof item, "smap item %d)", bad[i]);
            CHECK_CONTAINS(out, item);
            CHECK(st.remote_shard_serial > 0);
            free(out);
            /* a later replicated stage failing while the shards are away */
            snprintf(src, sizeof src,
                     "fun acc(k, x, s) = (s + x, s + 1)\n"
                     "keyed thread t = acc init 0\n"
                     "main = smap(fn x => let a = t(x %% 7, x) in 10 / (x - %d) + a, range(0, 1500))\n",
                     bad[i]);
            st = (stc_run_stats){0};
            keyed_check(src, TFAKE_ASYNC, workers, 2, &st, &out);
            snprintf(item, sizeof item, "smap item %d)", bad[i]);
            CHECK_CONTAINS(out, item);
            CHECK(st.remote_shard_serial > 0);
            free(out);
            /* inner: item bad[i] has words failing at elements 2 and 4
             * (keys bad1, bad2: 4 letters), item bad[i] + 3 at element 0 */
            snprintf(src, sizeof src,
                     "fun cnt(w, n) = (n + 1000 / (len(w) - 4), n + 1)\n"
                     "keyed thread c = cnt init 0\n"
                     "fun line(i) = if i == %d then \"w1 x2 bad1 w3 bad2 w5\" else if i == %d then \"bad3 w1\"\n"
                     "              else concat(concat(\"w\", str(i %% 37)), concat(\" x\", str(i %% 11)))\n"
                     "main = smap(fn i => smap(c, words(line(i))), range(0, 1200))\n",
                     bad[i], bad[i] + 3);
            st = (stc_run_stats){0};
            keyed_check(src, TFAKE_ASYNC, workers, workers == 2 ? 1 : 2, &st, &out);
            CHECK_CONTAINS(out, "division by zero for key \"bad1\"");
            CHECK_CONTAINS(out, "smap item 2)");
            CHECK(st.remote_shard_serial > 0);
            free(out);
        }
}

/* Which shard stages may be owned (stc__flow_remote_owned_stages; plans
 * as `stc graph` makes them, with 2 shards). */
static void first_smap(const ir_expr *smap, void *ud)
{
    const ir_expr **out = ud;
    if (!*out) *out = smap;
}

static uint64_t owned_mask(const char *src)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "mask.stc");
    uint64_t mask = ~(uint64_t)0;
    flow_info *fi = prog ? stc__flow_info_new(prog->ir) : NULL;
    if (fi) {
        const ir_expr *smap = NULL;
        stc__flow_each_smap(prog->ir, first_smap, &smap);
        flow_plan *pl = smap ? stc__flow_plan_static(fi, smap) : NULL;
        CHECK(pl != NULL);
        if (pl) mask = pl->remote_owned;
    }
    stc__flow_info_free(fi);
    stc_program_free(prog);
    stc_env_free(env);
    return mask;
}

TEST(remote_which_shard_stages_may_be_owned)
{
    /* the shard choice (replicated), then shards 1/2 and 2/2 */
    CHECK_INT(owned_mask("fun count(w, x, n) = (n + x, n + x)\n"
                         "keyed thread c = count init 0\n"
                         "main = smap(fn x => c(str(x % 3), x), range(0, 10))\n"),
              6);
    /* an inner smap of it (stages 3 and 4), beside an ordinary thread's
     * stage (1) */
    CHECK_INT(owned_mask("fun count(w, n) = (n + 1, n + 1)\n"
                         "keyed thread c = count init 0\n"
                         "fun acc(x, s) = (x + s, x + s)\n"
                         "thread t = acc init 0\n"
                         "main = smap(fn l => let n = t(len(l)) in (n, smap(c, words(l))), [\"a b\", \"c\"])\n"),
              2 | 8 | 16);
    /* its function reads a read-only thread: the shards stay */
    CHECK_INT(owned_mask("fun look(x, s) = (x + s, s)\n"
                         "thread r = look init 5\n"
                         "fun count(w, x, n) = (n + x + r(1), n + x)\n"
                         "keyed thread c = count init 0\n"
                         "main = smap(fn x => c(str(x % 3), x), range(0, 10))\n") &
                  6,
              0);
}
