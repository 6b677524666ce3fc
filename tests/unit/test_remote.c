/* test_remote.c - replicated stages run by a remote executor (stc_remote,
 * src/flow/remote.c) without MPI: a fake transport hands each request to
 * a server thread answering with its own compile of the same text
 * (stc_remote_server), as another rank would.  The outcome must be the
 * reference's, errors included; bad transports and bad bytes must change
 * nothing but where the work ran. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/program.h"
#include "flow/flow.h"
#include "remote_fake.h"
#include "run_check.h"
#include "stc.h"
#include "test.h"
#include "value/wire.h"

static const char remote_src[] =
    "fun poly(x, k) = x * x + k\n"
    "fun label(s, x) = concat(s, concat(\":\", str(x)))\n"
    "fun acc(x, s) = (x + s, x + s)\n"
    "thread total = acc init 0\n"
    "main = let k = 7 in\n"
    "       let tag = \"n\" in\n"
    "       let g = fn y => y + k in\n"
    "       smap(fn x => let a = poly(x, k) in\n"
    "                    let b = if a % 3 == 0 then float(a) / 2.0 else 1.5 in\n"
    "                    let t = total(a) in\n"
    "                    (label(tag, a), b, t, g), range(0, 3000))\n";

static const char remote_err_src[] =
    "fun inv(x) = 1000 / (x - 1234)\n"
    "main = smap(fn x => inv(x) + inv(x + 1), range(0, 3000))\n";

/* Runs src at 3 workers with the fake transport in `mode` and checks the
 * outcome against the reference; *stats gets the run's, *served the
 * requests the fake answered, *outcome (if not NULL) the outcome. */
static void remote_check_at(const char *src, tfake_mode mode, int workers, stc_run_stats *stats, long long *served,
                            char **outcome)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "remote.stc"), *twin = UNIT_COMPILE(env, src, "remote.stc");
    tfake *f = prog && twin ? tfake_start(twin, mode) : NULL;
    CHECK(f != NULL);
    if (!f) goto done;
    char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
    char *got = unit_outcome(prog, (stc_run_opts){.workers = workers, .remote = tfake_remote(f)}, stats);
    CHECK_STR(got, ref);
    if (outcome) *outcome = ref;
    else free(ref);
    free(got);
    void *first = NULL;
    size_t first_len = 0;
    *served = tfake_stop(f, &first, &first_len);
    stc_remote_server *server = stc_remote_server_new(twin);
    CHECK(server != NULL);
    if (mode == TFAKE_SERVE && first && server) {
        /* Every strict prefix of a real request, and single corruptions of
         * it, are answered or refused, never a crash or a leak. */
        CHECK_INT(tfake_hammer(server, first, first_len, 7, 2000), 0);
    }
    free(first);
    stc_remote_server_free(server);
done:
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

static void remote_check(const char *src, tfake_mode mode, stc_run_stats *stats, long long *served, char **outcome)
{
    remote_check_at(src, mode, 3, stats, served, outcome);
}

TEST(remote_stages_run_remotely_alike)
{
    stc_run_stats st = {0};
    long long served = 0;
    remote_check(remote_src, TFAKE_SERVE, &st, &served, NULL);
    CHECK(st.remote_batches > 0);
    CHECK_INT(st.remote_batches, served);
    CHECK(st.remote_bytes_sent > 0);
    CHECK(st.remote_bytes_received > 0);
    CHECK_INT(st.remote_declined, 0);
}

TEST(remote_stage_error_is_the_references)
{
    stc_run_stats st = {0};
    long long served = 0;
    char *out = NULL;
    remote_check(remote_err_src, TFAKE_SERVE, &st, &served, &out);
    CHECK(st.remote_batches > 0);
    /* item 1233 fails first (its second call), in a batch that went away */
    CHECK_CONTAINS(out, "division by zero");
    CHECK_CONTAINS(out, "smap item 1233");
    free(out);
}

TEST(remote_failing_transport_runs_here)
{
    stc_run_stats st = {0};
    long long served = 0;
    remote_check(remote_src, TFAKE_FAIL, &st, &served, NULL);
    CHECK_INT(st.remote_batches, 0);
    CHECK(st.remote_declined > 0);
    CHECK_INT(served, 0);
}

TEST(remote_truncated_replies_run_here)
{
    stc_run_stats st = {0};
    long long served = 0;
    remote_check(remote_src, TFAKE_TRUNCATE, &st, &served, NULL);
    CHECK_INT(st.remote_batches, 0);
    CHECK(st.remote_declined > 0);
    CHECK_INT(st.remote_declined, served);
}

/* A transport answering with a server, then rewriting each reply whose
 * first item ran and changed a slot: that slot's entry written `reps`
 * times (indices must increase), or with the index `past` (beyond the
 * frame) when it is not 0.  Such replies must be refused, so the batch
 * runs here: a reply that could name a slot twice or past the frame
 * would write out of bounds (the decoder's buffer holds every slot of
 * every item once). */
typedef struct bad_reply {
    pthread_mutex_t lock; /* workers call at once; the server answers one at a time */
    stc_remote_server *server;
    int reps;
    uint64_t past;
    long long calls, rewritten;
} bad_reply;

/* The varint at p[at, n): its length (0: none) and value in *x. */
static size_t uv_at(const unsigned char *p, size_t n, size_t at, uint64_t *x)
{
    size_t used = 0;
    return at < n && stc__val_wire_get_uvarint(p + at, n - at, &used, x) == 0 ? used : 0;
}

static int bad_reply_answer(bad_reply *b, const void *req, size_t len, void **reply, size_t *reply_len)
{
    b->calls++;
    int rc = stc_remote_server_handle(b->server, req, len, reply, reply_len);
    if (rc) return rc;
    const unsigned char *q = req, *p = *reply;
    size_t n = *reply_len, at = 4, k = 0, used;
    uint64_t x = 0, nslots = 0, nflags = 0, idx = 0;
    for (int i = 0; i < 9; i++, at += k) { /* "STCq" smap fn nshards stage depth first n nslots nflags */
        if (!(k = uv_at(q, len, at, &x))) return 0;
        if (i == 7) nslots = x;
        if (i == 8) nflags = x;
    }
    if (!(k = uv_at(p, n, 4, &x)) || 4 + k >= n || p[4 + k] != 0) return 0; /* nran, an item that ran */
    size_t entry = 4 + k + 1 + (size_t)nflags, vat;
    if (!(k = uv_at(p, n, entry, &idx)) || idx == 0) return 0; /* it changed no slot */
    vat = entry + k;
    stc_value v;
    if (stc__val_wire_decode(p + vat, n - vat, &used, &v, NULL) != 0) return 0;
    stc_value_release(v);
    size_t one = vat + used - entry, rest = n - (vat + used);
    unsigned char *out = malloc(entry + (size_t)b->reps * (one + 10) + rest + 1);
    if (!out) return 0;
    size_t m = entry;
    memcpy(out, p, entry);
    for (int r = 0; r < b->reps; r++) {
        if (b->past) { /* the index past the frame, as a varint */
            uint64_t j = nslots + b->past;
            do {
                out[m++] = (unsigned char)((j & 0x7f) | (j > 0x7f ? 0x80 : 0));
                j >>= 7;
            } while (j);
            memcpy(out + m, p + vat, used);
            m += used;
        } else {
            memcpy(out + m, p + entry, one);
            m += one;
        }
    }
    memcpy(out + m, p + vat + used, rest);
    free(*reply);
    *reply = out;
    *reply_len = m + rest;
    b->rewritten++;
    return 0;
}

static int bad_reply_call(void *ud, const void *req, size_t len, void **reply, size_t *reply_len)
{
    bad_reply *b = ud;
    pthread_mutex_lock(&b->lock);
    int rc = bad_reply_answer(b, req, len, reply, reply_len);
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static void bad_reply_check(int reps, uint64_t past)
{
    static const char src[] = "fun poly(x, k) = x * x + k\n"
                              "main = smap(fn x => let a = poly(x, 3) in (a, a + 1), range(0, 3000))\n";
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "bad.stc"), *twin = UNIT_COMPILE(env, src, "bad.stc");
    bad_reply b = {.lock = PTHREAD_MUTEX_INITIALIZER, .server = twin ? stc_remote_server_new(twin) : NULL,
                   .reps = reps, .past = past};
    CHECK(prog && b.server);
    if (prog && b.server) {
        stc_remote remote = {.call = bad_reply_call, .ud = &b};
        stc_run_stats st = {0};
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome(prog, (stc_run_opts){.workers = 2, .remote = &remote}, &st);
        CHECK_STR(got, ref);
        CHECK(b.rewritten > 0);
        CHECK_INT(st.remote_declined, b.rewritten);
        CHECK_INT(st.remote_batches, b.calls - b.rewritten);
        free(ref);
        free(got);
    }
    stc_remote_server_free(b.server);
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

TEST(remote_replies_naming_a_slot_twice_run_here)
{
    bad_reply_check(2, 0);
    bad_reply_check(40, 0); /* more entries than the frame has slots */
}

TEST(remote_replies_naming_a_slot_past_the_frame_run_here)
{
    bad_reply_check(1, 1);
    bad_reply_check(1, 1000);
}

/* Asynchronous transports (stc_remote.start): a batch away holds no
 * worker, so even one worker keeps TFAKE_SLOTS batches away and works on
 * others; a reply that comes before start returns, a full transport and
 * bad replies change nothing but where the work ran. */
TEST(remote_async_stages_run_remotely_alike)
{
    static const tfake_mode modes[] = {TFAKE_ASYNC, TFAKE_ASYNC_NOW};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (int workers = 1; workers <= 3; workers += 2) {
            stc_run_stats st = {0};
            long long served = 0;
            remote_check_at(remote_src, modes[m], workers, &st, &served, NULL);
            CHECK(st.remote_batches > 0);
            CHECK_INT(st.remote_batches, served);
            CHECK(st.remote_bytes_sent > 0);
            CHECK_INT(st.remote_declined, 0);
        }
}

TEST(remote_async_error_is_the_references)
{
    for (int workers = 1; workers <= 2; workers++) {
        stc_run_stats st = {0};
        long long served = 0;
        char *out = NULL;
        remote_check_at(remote_err_src, TFAKE_ASYNC, workers, &st, &served, &out);
        CHECK(st.remote_batches > 0);
        CHECK_CONTAINS(out, "division by zero");
        CHECK_CONTAINS(out, "smap item 1233");
        free(out);
    }
}

TEST(remote_async_truncated_replies_run_here)
{
    stc_run_stats st = {0};
    long long served = 0;
    remote_check_at(remote_src, TFAKE_ASYNC_TRUNCATE, 1, &st, &served, NULL);
    CHECK_INT(st.remote_batches, 0);
    CHECK(st.remote_declined > 0);
    CHECK_INT(st.remote_declined, served);
}

/* A slot the stage leaves as it came does not travel back: items of 300
 * characters each, a stage that keeps them and computes a small number,
 * so the replies are far smaller than the requests. */
TEST(remote_unchanged_slots_stay_here)
{
    static const char src[] = "fun big(i) = concat(str(i), \"|................................................"
                              "..................................................................................."
                              "..................................................................................."
                              "..................................\")\n"
                              "fun digits(s) = len(split(s, \"|\")) + len(s)\n"
                              "main = let xs = fold(fn (a, i) => append(a, [big(i)]), [], range(0, 2000)) in\n"
                              "       smap(fn s => digits(s), xs)\n";
    stc_run_stats st = {0};
    long long served = 0;
    remote_check_at(src, TFAKE_ASYNC, 1, &st, &served, NULL);
    CHECK(st.remote_batches > 0);
    CHECK(st.remote_bytes_sent > st.remote_batches * 200); /* the strings went (250 bytes an item) */
    CHECK(st.remote_bytes_received * 4 < st.remote_bytes_sent);
}

TEST(remote_server_refuses_bad_requests)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, remote_src, "remote.stc");
    stc_remote_server *s = prog ? stc_remote_server_new(prog) : NULL;
    CHECK(s != NULL);
    void *rep = NULL;
    size_t rl = 0;
    CHECK_INT(stc_remote_server_handle(s, "", 0, &rep, &rl), STC_EINVAL);
    CHECK_INT(stc_remote_server_handle(s, "STCq\x63", 5, &rep, &rl), STC_EINVAL);
    /* smap 0, function 99: no such function */
    CHECK_INT(stc_remote_server_handle(s, "STCq\x00\x63\x00\x00\x00\x00\x00\x00\x00\x00", 14, &rep, &rl), STC_EINVAL);
    CHECK(rep == NULL);
    stc_remote_server_free(s);
    stc_program_free(prog);
    stc_env_free(env);
}

/* Which stages may go (stc__flow_remote_stages): replicated stages of pure
 * work, through called functions and lambdas handed to fold, and calls of
 * read-only lang threads and state(t) of them (their states travel with
 * the batch); not a stage calling a function value, or a function that
 * does, or a thread that writes a state. */
static void first_smap(const ir_expr *smap, void *ud)
{
    const ir_expr **out = ud;
    if (!*out) *out = smap;
}

/* The plan of src's first smap: its remote_owned mask when owned, else
 * its remote_ok (all ones when it has no plan). */
static uint64_t plan_mask(const char *src, bool owned)
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
        if (pl) mask = owned ? pl->remote_owned : pl->remote_ok;
    }
    stc__flow_info_free(fi);
    stc_program_free(prog);
    stc_env_free(env);
    return mask;
}

static uint64_t remote_mask(const char *src) { return plan_mask(src, false); }

TEST(remote_which_stages_may_go)
{
    /* pure work through a function and a lambda given to fold: stage 0 */
    CHECK_INT(remote_mask("fun sq(x) = x * x\n"
                          "fun sum(xs) = fold(fn (a, x) => a + sq(x), 0, xs)\n"
                          "main = smap(fn x => sum([x, x + 1]), range(0, 10))\n"),
              1);
    /* a read-only thread: its state goes with the batch */
    CHECK_INT(remote_mask("fun look(x, s) = (x + s, s)\n"
                          "thread r = look init 5\n"
                          "main = smap(fn x => r(x * 2), range(0, 10))\n"),
              1);
    /* state(t) of a read-only thread, and one whose function calls another */
    CHECK_INT(remote_mask("fun look(x, s) = (x + s, s)\n"
                          "thread r = look init 5\n"
                          "fun via(x, s) = (r(x) * s, s)\n"
                          "thread v = via init 2\n"
                          "main = smap(fn x => v(x) + state(r), range(0, 10))\n"),
              1);
    /* a read-only thread whose function calls a function value: stays */
    CHECK_INT(remote_mask("fun ap(f, x) = f(x)\n"
                          "fun look(x, s) = (ap(fn y => y + s, x), s)\n"
                          "thread r = look init 5\n"
                          "main = smap(fn x => r(x * 2), range(0, 10))\n"),
              0);
    /* a read-only thread whose function calls a writing thread: serial */
    CHECK_INT(remote_mask("fun acc(x, s) = (x + s, x + s)\n"
                          "thread t = acc init 0\n"
                          "fun look(x, s) = (t(x) + s, s)\n"
                          "thread r = look init 5\n"
                          "main = smap(fn x => r(x * 2), range(0, 10))\n"),
              0);
    /* a keyed thread (never read-only) stays */
    CHECK_INT(remote_mask("fun peek(k, x, s) = (x + s, s)\n"
                          "keyed thread c = peek init 0\n"
                          "main = smap(fn x => c(str(x % 3), x), range(0, 10))\n") & 1,
              0);
    /* a function value called inside a called function: nothing goes */
    CHECK_INT(remote_mask("fun ap(f, x) = f(x)\n"
                          "main = smap(fn x => ap(fn y => y + 1, x), range(0, 10))\n"),
              0);
    /* pure, then a writing thread, then pure: stages 0 and 2 */
    CHECK_INT(remote_mask("fun acc(x, s) = (x + s, x + s)\n"
                          "fun tri(x) = x * 3\n"
                          "thread t = acc init 0\n"
                          "main = smap(fn x => let a = tri(x) in let b = t(a) in str(b), range(0, 10))\n"),
              5);
    /* a stage that calls nothing costs less here than the trip: only
     * stage 2 (it calls str) goes */
    CHECK_INT(remote_mask("fun acc(x, s) = (x + s, x + s)\n"
                          "thread t = acc init 0\n"
                          "main = smap(fn x => let a = x * 3 in let b = t(a) in str(b), range(0, 10))\n"),
              4);
    /* nor one that calls only builtins of constant time (conditional's
     * `if`): stage 0 stays; stage 2 calls sin_iter, which loops, and goes */
    CHECK_INT(remote_mask("fun acc(x, s) = (x + s, x + s)\n"
                          "thread t = acc init 0\n"
                          "main = smap(fn x => let a = round(sqrt(float(len([x, x])))) + abs(x) in\n"
                          "  let b = t(a) in sin_iter(10, float(b)), range(0, 10))\n"),
              4);
}

/* ---- Serial stages owned by a peer (stc_remote.start_to, src/flow/owned.c) ---- */

/* One run of serial_check: the fake's mode, the run's workers and queue
 * capacity, the peers offered and the placement (min: stc_remote.
 * serial_min_ns; fed: the figures it decides on, per plan stage, ns an
 * item: run_testing_opts.owned_item_ns, 0 the clock); and what came out:
 * the run's stats, the requests the peers answered, and the items the
 * peers ran of the stages called names[i] ("m (line 6)"). */
typedef struct serial_case {
    tfake_mode mode;
    int workers, capacity, peers;
    long long min;
    long long fed[8];
    const char *names[2];
    stc_run_stats st;
    long long served;
    long long items[2];
} serial_case;

/* Items of the stage called name that f's first `peers` peers ran. */
static long long peer_stage_items(tfake *f, int peers, const char *name)
{
    long long n = 0;
    for (int p = 0; name && p < peers; p++) {
        stc_remote_server *s = tfake_server(f, p);
        for (size_t i = 0; s && i < stc_remote_server_stage_count(s); i++) {
            stc_remote_stage_stats st = stc_remote_server_stage(s, i);
            if (!strcmp(st.name, name)) n += st.items;
        }
    }
    return n;
}

/* Runs src under the reference and as c says with the asynchronous fake,
 * checks the outcome is the reference's; c's results filled; *outcome
 * (if not NULL) the reference's outcome. */
static void serial_run(const char *src, serial_case *c, char **outcome)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "serial.stc"), *twin = UNIT_COMPILE(env, src, "serial.stc");
    tfake *f = prog && twin ? tfake_start(twin, c->mode) : NULL;
    CHECK(f != NULL);
    if (f) {
        tfake_set_peers(f, c->peers, c->min);
        trun_mode aids = {.workers = c->workers};
        memcpy(aids.owned_item_ns, c->fed, sizeof aids.owned_item_ns);
        char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
        char *got = unit_outcome_aided(
            prog, (stc_run_opts){.workers = c->workers, .queue_capacity = c->capacity, .remote = tfake_remote(f)}, &aids,
            &c->st);
        CHECK_STR(got, ref);
        c->served = tfake_peer_served(f);
        for (int i = 0; i < 2; i++) c->items[i] = peer_stage_items(f, c->peers, c->names[i]);
        if (outcome) *outcome = ref;
        else free(ref);
        free(got);
        size_t qlen = 0;
        unsigned char *q = tfake_take_first_peer(f, &qlen);
        tfake_stop(f, NULL, NULL);
        /* A peer's first request (states and a batch), every strict prefix
         * of it, corruptions of it and a fetch of every thread: answered or
         * refused, never a crash or a leak (ASan). */
        stc_remote_server *server = q ? stc_remote_server_new(twin) : NULL;
        if (server) {
            void *rep = NULL;
            size_t rl = 0;
            CHECK_INT(stc_remote_server_handle(server, q, qlen, &rep, &rl), 0);
            free(rep);
            CHECK_INT(tfake_hammer(server, q, qlen, 11, 500), 0); /* prefixes refused, corruptions survived */
            static const unsigned char fetch[] = {'S', 'T', 'C', 'f', 1, 0}, bad_fetch[] = {'S', 'T', 'C', 'f', 1, 9};
            rep = NULL;
            CHECK_INT(stc_remote_server_handle(server, fetch, sizeof fetch, &rep, &rl), 0);
            CHECK(rep != NULL && rl > 4 && memcmp(rep, "STCs", 4) == 0);
            free(rep);
            rep = NULL;
            CHECK_INT(stc_remote_server_handle(server, bad_fetch, sizeof bad_fetch, &rep, &rl), STC_EINVAL);
            CHECK(rep == NULL);
            stc_remote_server_free(server);
        }
        free(q);
    }
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

/* serial_run with every stage going and staying (serial_min_ns -1). */
static void serial_check(const char *src, tfake_mode mode, int workers, int peers, long long serial_min_ns,
                         stc_run_stats *stats, long long *peer_served, char **outcome)
{
    serial_case c = {.mode = mode, .workers = workers, .peers = peers, .min = serial_min_ns};
    serial_run(src, &c, outcome);
    *stats = c.st;
    *peer_served = c.served;
}

/* Two serial stages (threads total and m) between replicated work, run
 * twice: the second smap calls total again from the state the first left,
 * main calls m between them, and state(t) reads both after. */
static const char serial_src[] =
    "fun heavy(x) = fold(fn (a, i) => (a * 31 + i * x) % 1000003, 7, range(0, 30))\n"
    "fun acc(x, s) = (x + s, (x + s) % 1000003)\n"
    "fun mix(x, s) = (x * 2 + len(s) % 7, concat(str(x % 10), s))\n"
    "thread total = acc init 0\n"
    "thread m = mix init \"\"\n"
    "fun body(x) = let h = heavy(x) in let t = total(h) in let y = m(t) in (h, t, y)\n"
    "main = let a = smap(body, range(0, 1500)) in\n"
    "       let c = m(5) in\n"
    "       let b = smap(fn x => total(heavy(x)), range(0, 700)) in\n"
    "       (a, c, b, state(total), len(state(m)))\n";

TEST(remote_serial_stages_owned_by_peers)
{
    static const tfake_mode modes[] = {TFAKE_ASYNC, TFAKE_ASYNC_NOW};
    for (size_t mo = 0; mo < sizeof modes / sizeof modes[0]; mo++)
        for (int workers = 1; workers <= 3; workers += 2)
            for (int peers = 1; peers <= 2; peers++) {
                stc_run_stats st = {0};
                long long served = 0;
                serial_check(serial_src, modes[mo], workers, peers, -1, &st, &served, NULL);
                /* both stages in both smaps (the second has one): 3 moves,
                 * each state back once */
                CHECK_INT(st.remote_moves, 3);
                CHECK(st.remote_serial > 6);
                CHECK_INT(st.remote_serial, served);
                CHECK_INT(st.remote_declined, 0);
            }
}

/* The cost model on fed figures (run_testing_opts.owned_item_ns: what
 * the peers' replies say is replaced, so the clock decides nothing).
 * total (stage 1) at 10 ms an item is dear: it goes to its peer from its
 * first batch and stays there for the job, every one of the first smap's
 * 1,500 items run there; m (stage 2) at 1 ns an item is cheap: it goes,
 * and after its first batches are back its state comes back and it runs
 * here, so its peer ran only its first batches (batches of 10 items at
 * most: 150 of them, against a few in flight when the figures come).  The
 * outcome (results, final states, m(5) between the smaps) is the
 * reference's, at 1 and 3 workers, with the fake answering from its thread
 * and inside start_to.  A model that keeps cheap stages away, or brings
 * dear ones back, fails the item counts. */
TEST(remote_serial_cost_model_dear_stays_cheap_comes_back)
{
    static const tfake_mode modes[] = {TFAKE_ASYNC, TFAKE_ASYNC_NOW};
    for (size_t mo = 0; mo < sizeof modes / sizeof modes[0]; mo++)
        for (int workers = 1; workers <= 3; workers += 2) {
            serial_case c = {.mode = modes[mo], .workers = workers, .capacity = 10, .peers = 2,
                             .fed = {0, 10000000, 1}, .names = {"total (line 6)", "m (line 6)"}};
            serial_run(serial_src, &c, NULL);
            CHECK_INT(c.items[0], 1500);
            CHECK(c.items[1] > 0);
            CHECK(c.items[1] <= 200);
            CHECK_INT(c.st.remote_declined, 0);
            /* the other way round: m stays there, total comes back */
            serial_case d = {.mode = modes[mo], .workers = workers, .capacity = 10, .peers = 2,
                             .fed = {0, 1, 10000000}, .names = {"total (line 6)", "m (line 6)"}};
            serial_run(serial_src, &d, NULL);
            CHECK(d.items[0] > 0);
            CHECK(d.items[0] <= 200);
            CHECK_INT(d.items[1], 1500);
        }
}

/* serial_min_ns > 0 is the threshold, ns an item, on the same fed figures:
 * 999 under 1,000 brings the stages back, 1,000 keeps them there. */
TEST(remote_serial_threshold_on_fed_figures)
{
    for (long long fed = 999; fed <= 1000; fed++) {
        serial_case c = {.mode = TFAKE_ASYNC, .workers = 1, .capacity = 10, .peers = 2, .min = 1000,
                         .fed = {fed, fed, fed, fed}, .names = {"total (line 6)", "m (line 6)"}};
        serial_run(serial_src, &c, NULL);
        if (fed < 1000) {
            CHECK(c.items[0] > 0 && c.items[0] <= 200);
            CHECK(c.items[1] > 0 && c.items[1] <= 200);
        } else {
            CHECK_INT(c.items[0], 1500);
            CHECK_INT(c.items[1], 1500);
        }
    }
}

/* A stage found cheap is kept here in its plan's later jobs, without a
 * turn: the same smap run three times with one peer goes once (a dear one
 * goes in every job whose turn is the peer: jobs 1 and 3 of 3, turns
 * alternating between the peer and here). */
TEST(remote_serial_cheap_stage_kept_here_in_later_jobs)
{
    static const char src[] =
        "fun heavy(x) = fold(fn (a, i) => (a * 31 + i * x) % 1000003, 7, range(0, 30))\n"
        "fun mix(x, s) = (x * 2 + len(s) % 7, concat(str(x % 10), s))\n"
        "thread m = mix init \"\"\n"
        "fun run(k) = smap(fn x => m(heavy(x) + k), range(0, 300))\n"
        "main = let a = run(1) in let b = run(2) in let c = run(3) in (a, b, c, len(state(m)))\n";
    for (int dear = 0; dear <= 1; dear++) {
        serial_case c = {.mode = TFAKE_ASYNC, .workers = 1, .capacity = 10, .peers = 1,
                         .fed = {dear ? 10000000 : 1, dear ? 10000000 : 1}};
        serial_run(src, &c, NULL);
        CHECK_INT(c.st.remote_moves, dear ? 2 : 1);
    }
}

/* The one check on the real clock: serial_src's stages take about a
 * microsecond an item, under the threshold (4 x (25 us a batch + 1 us an
 * item) over batches of at most 4 items: 29 us an item), so they come back
 * after their first batches.  The peer measures its CPU time, which a
 * preempted batch does not inflate, but a sanitizer's slowdown does: they
 * must come back in one of 3 runs, which a model that keeps cheap stages
 * away never does. */
TEST(remote_serial_cost_model_brings_cheap_stages_back)
{
    serial_case c;
    for (int attempt = 0; attempt < 3; attempt++) {
        c = (serial_case){.mode = TFAKE_ASYNC, .workers = 1, .capacity = 4, .peers = 2,
                          .names = {"total (line 6)", "m (line 6)"}};
        serial_run(serial_src, &c, NULL);
        if (c.items[0] < 1500 && c.items[1] < 1500) break;
    }
    CHECK(c.items[0] < 1500);
    CHECK(c.items[1] < 1500);
    CHECK(c.st.remote_moves > 0);
}

/* An error in an owned stage is the reference's: at several items, the
 * earliest failing one wins, also when a replicated stage fails later. */
TEST(remote_serial_errors_are_the_references)
{
    static const int bad[] = {0, 1, 17, 999, 1499};
    /* placements: every stage there for the job; the model on fed figures,
     * t (stage 0) cheap: it comes back after its first batches (items 0, 1
     * and 17 fail on the peer or here, 999 here), or dear: it stays */
    static const long long fed[] = {-1, 1, 10000000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (int workers = 1; workers <= 2; workers++)
            for (size_t k = 0; k < sizeof fed / sizeof fed[0]; k++) {
                char src[1024];
                snprintf(src, sizeof src,
                         "fun acc(x, s) = (1000 / (x - %d) + s, s + 1)\n"
                         "fun other(x) = 10 / (x - 1400)\n"
                         "thread t = acc init 0\n"
                         "main = smap(fn x => let a = t(x) in let b = other(x + a * 0) in (a, b), range(0, 1500))\n",
                         bad[i]);
                serial_case c = {.mode = TFAKE_ASYNC, .workers = workers, .capacity = fed[k] < 0 ? 0 : 10, .peers = 2,
                                 .min = fed[k] < 0 ? -1 : 0, .fed = {fed[k] < 0 ? 0 : fed[k]}};
                char *out = NULL;
                serial_run(src, &c, &out);
                CHECK_CONTAINS(out, "division by zero");
                char item[64];
                snprintf(item, sizeof item, "smap item %d", bad[i] < 1400 ? bad[i] : 1400);
                CHECK_CONTAINS(out, item);
                CHECK(c.st.remote_serial > 0);
                free(out);
            }
}

/* Which serial stages may be owned elsewhere (stc__flow_remote_owned_stages). */
static uint64_t owned_mask(const char *src) { return plan_mask(src, true); }

TEST(remote_which_serial_stages_may_be_owned)
{
    /* pure, a writing thread, pure: stage 1 */
    CHECK_INT(owned_mask("fun acc(x, s) = (x + s, x + s)\n"
                         "fun tri(x) = x * 3\n"
                         "thread t = acc init 0\n"
                         "main = smap(fn x => let a = tri(x) in let b = t(a) in str(b), range(0, 10))\n"),
              2);
    /* a read-only thread read by a replicated stage and by t's function:
     * t's stage reaches r, so it stays */
    CHECK_INT(owned_mask("fun look(x, s) = (x + s, s)\n"
                         "thread r = look init 5\n"
                         "fun acc(x, s) = (x + s + r(1), x + s)\n"
                         "thread t = acc init 0\n"
                         "main = smap(fn x => let a = r(x) in let b = t(a) in str(b), range(0, 10))\n"),
              0);
    /* (a keyed thread's shard stages: test_remote_keyed.c) */
    /* a function value called in the stage: it stays */
    CHECK_INT(owned_mask("fun acc(x, s) = (x + s, x + s)\n"
                         "thread t = acc init 0\n"
                         "fun ap(f, x) = f(x)\n"
                         "main = smap(fn x => let a = x * 2 in t(ap(fn y => y + 1, a)), range(0, 10))\n"),
              0);
}

/* ---- What a server answered (stc_remote_server_stage, _span) ---------------- */

/* Sums a server's rows; *named: every batch row is named "... (line N)". */
static stc_remote_stage_stats server_sum(const stc_remote_server *s, bool *named)
{
    stc_remote_stage_stats sum = {0};
    *named = true;
    for (size_t i = 0; i < stc_remote_server_stage_count(s); i++) {
        stc_remote_stage_stats st = stc_remote_server_stage(s, i);
        sum.batches += st.batches, sum.items += st.items, sum.busy_ms += st.busy_ms;
        sum.bytes_in += st.bytes_in, sum.bytes_out += st.bytes_out;
        if (st.line > 0) *named = *named && strstr(st.name, " (line ") && strstr(st.smap, "remote.stc:") && *st.kind;
    }
    return sum;
}

/* The rows add up to what the run sent and got back; spans are kept up to
 * the cap and the rest counted; a refused request has its own row. */
TEST(remote_server_counts_each_stage)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, remote_src, "remote.stc"), *twin = UNIT_COMPILE(env, remote_src, "remote.stc");
    tfake *f = prog && twin ? tfake_start(twin, TFAKE_ASYNC) : NULL;
    CHECK(f != NULL);
    if (f) {
        stc_remote_server *s = tfake_server(f, -1);
        /* How many batches go away follows the clock (as few as 4 of the
         * 3,000 items' batches on a quiet machine): the cap is 2. */
        stc_remote_server_record(s, 2);
        stc_run_stats st = {0};
        free(unit_outcome(prog, (stc_run_opts){.workers = 3, .remote = tfake_remote(f)}, &st));
        s = tfake_server(f, -1);
        bool named = false;
        stc_remote_stage_stats sum = server_sum(s, &named);
        CHECK(st.remote_batches >= 1);
        long long kept = st.remote_batches < 2 ? st.remote_batches : 2;
        CHECK_INT(sum.batches, st.remote_batches);
        CHECK_INT(sum.bytes_in, st.remote_bytes_sent);
        CHECK_INT(sum.bytes_out, st.remote_bytes_received);
        CHECK(sum.items >= sum.batches && sum.items <= 2 * 3000);
        CHECK(sum.busy_ms > 0);
        CHECK(named);
        CHECK(stc_remote_server_stage_count(s) >= 1);
        CHECK_INT((long long)stc_remote_server_span_count(s), kept);
        CHECK_INT(stc_remote_server_spans_dropped(s), st.remote_batches - kept);
        for (size_t i = 0; i < (size_t)kept; i++) {
            stc_remote_span sp = stc_remote_server_span(s, i);
            CHECK(sp.stage < stc_remote_server_stage_count(s));
            CHECK(sp.end_ns >= sp.start_ns && sp.start_ns > 0 && sp.items > 0);
            if (i) CHECK(sp.start_ns >= stc_remote_server_span(s, i - 1).end_ns);
        }
        CHECK(stc_remote_server_span(s, (size_t)kept).end_ns == 0);
        CHECK(stc_remote_server_stage(s, stc_remote_server_stage_count(s)).name == NULL);
        /* a refused request: a row of its own, its bytes in, none out */
        size_t rows = stc_remote_server_stage_count(s);
        void *rep = NULL;
        size_t rl = 0;
        CHECK(stc_remote_server_handle(s, "STCqjunk", 8, &rep, &rl) < 0);
        free(rep);
        CHECK_INT((long long)stc_remote_server_stage_count(s), (long long)rows + 1);
        stc_remote_stage_stats r = stc_remote_server_stage(s, rows);
        CHECK_STR(r.name, "refused");
        CHECK(r.batches == 1 && r.bytes_in == 8 && r.bytes_out == 0 && r.items == 0 && r.line == 0);
        long long answered = st.remote_batches + 1; /* and the refused one: a span too, or dropped */
        CHECK_INT(stc_remote_server_spans_dropped(s), answered - (answered < 2 ? answered : 2));
        tfake_stop(f, NULL, NULL);
    }
    CHECK(stc_remote_server_stage_count(NULL) == 0 && stc_remote_server_span_count(NULL) == 0);
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

/* A peer owning serial stages: rows for them (serial) and "states back". */
TEST(remote_server_counts_owned_stages)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, serial_src, "remote.stc"), *twin = UNIT_COMPILE(env, serial_src, "remote.stc");
    tfake *f = prog && twin ? tfake_start(twin, TFAKE_ASYNC) : NULL;
    CHECK(f != NULL);
    if (f) {
        tfake_set_peers(f, 1, -1);
        stc_run_stats st = {0};
        free(unit_outcome(prog, (stc_run_opts){.workers = 2, .remote = tfake_remote(f)}, &st));
        stc_remote_server *s = tfake_server(f, 0);
        bool named = false, serial = false, back = false;
        stc_remote_stage_stats sum = server_sum(s, &named);
        CHECK(named);
        CHECK_INT(sum.batches, tfake_peer_served(f));
        for (size_t i = 0; i < stc_remote_server_stage_count(s); i++) {
            stc_remote_stage_stats row = stc_remote_server_stage(s, i);
            serial = serial || (row.serial && row.batches > 0 && row.items > 0);
            if (!strcmp(row.name, "states back")) back = row.batches == st.remote_moves && row.bytes_out > 0;
        }
        CHECK(serial);
        CHECK(back);
        tfake_stop(f, NULL, NULL);
    }
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}
