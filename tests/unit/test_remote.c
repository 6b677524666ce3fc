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
#include "run_check.h"
#include "stc.h"
#include "test.h"

/* The fake transport: one request at a time through a slot, answered by
 * the server thread (so the workers wait, as for an MPI rank). */
typedef struct fake {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    stc_remote_server *server;
    const void *req;     /* (lock) the request being answered, NULL: none */
    size_t len;
    void *reply;         /* (lock) */
    size_t reply_len;
    int rc;
    bool busy, answered, stop; /* (lock) */
    long long served;    /* (lock) */
    int mode;            /* 0: normal, 1: fail every call, 2: truncate replies */
    void *first_req;     /* a copy of the first request (lock) */
    size_t first_len;
} fake;

static void *fake_serve(void *ud)
{
    fake *f = ud;
    pthread_mutex_lock(&f->lock);
    for (;;) {
        while (!f->stop && (!f->req || f->answered)) pthread_cond_wait(&f->cond, &f->lock);
        if (f->stop) break;
        const void *req = f->req;
        size_t len = f->len;
        pthread_mutex_unlock(&f->lock);
        void *rep = NULL;
        size_t rlen = 0;
        int rc = stc_remote_server_handle(f->server, req, len, &rep, &rlen);
        pthread_mutex_lock(&f->lock);
        f->reply = rep, f->reply_len = rlen, f->rc = rc;
        f->answered = true;
        f->served++;
        pthread_cond_broadcast(&f->cond);
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

static int fake_call(void *ud, const void *req, size_t len, void **reply, size_t *reply_len)
{
    fake *f = ud;
    if (f->mode == 1) return STC_EIO;
    pthread_mutex_lock(&f->lock);
    while (f->busy) pthread_cond_wait(&f->cond, &f->lock);
    f->busy = true;
    if (!f->first_req && (f->first_req = malloc(len))) {
        memcpy(f->first_req, req, len);
        f->first_len = len;
    }
    f->req = req, f->len = len, f->answered = false;
    pthread_cond_broadcast(&f->cond);
    while (!f->answered) pthread_cond_wait(&f->cond, &f->lock);
    *reply = f->reply, *reply_len = f->reply_len;
    int rc = f->rc;
    f->req = NULL, f->busy = false, f->reply = NULL;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    if (rc == 0 && f->mode == 2 && *reply_len > 0) *reply_len -= 1 + *reply_len / 3;
    return rc;
}

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
 * outcome against the reference; *stats gets the run's. */
static void remote_check(const char *src, int mode, stc_run_stats *stats, long long *served, char **outcome)
{
    stc_env *env = stc_env_new();
    stc_program *prog = UNIT_COMPILE(env, src, "remote.stc"), *twin = UNIT_COMPILE(env, src, "remote.stc");
    if (!prog || !twin) goto done;
    fake f = {.mode = mode};
    pthread_mutex_init(&f.lock, NULL);
    pthread_cond_init(&f.cond, NULL);
    CHECK((f.server = stc_remote_server_new(twin)) != NULL);
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, fake_serve, &f), 0);
    char *ref = unit_outcome(prog, (stc_run_opts){.reference = true}, NULL);
    stc_remote rem = {fake_call, &f};
    char *got = unit_outcome(prog, (stc_run_opts){.workers = 3, .remote = &rem}, stats);
    CHECK_STR(got, ref);
    if (getenv("STC_TEST_REMOTE_SHOW")) fprintf(stderr, "%s\n", ref);
    if (outcome) *outcome = ref;
    else free(ref);
    free(got);
    pthread_mutex_lock(&f.lock);
    f.stop = true;
    pthread_cond_broadcast(&f.cond);
    *served = f.served;
    pthread_mutex_unlock(&f.lock);
    pthread_join(th, NULL);
    if (mode == 0 && f.first_req) {
        /* Every strict prefix of a real request, and single corruptions of
         * it, are answered or refused, never a crash or a leak. */
        unsigned char *q = f.first_req;
        for (size_t n = 0; n < f.first_len; n++) {
            void *rep = NULL;
            size_t rl = 0;
            CHECK(stc_remote_server_handle(f.server, q, n, &rep, &rl) < 0);
            free(rep);
        }
        unsigned seed = 7;
        for (int i = 0; i < 2000; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % f.first_len;
            unsigned char was = q[at];
            q[at] = (unsigned char)(seed >> 20);
            void *rep = NULL;
            size_t rl = 0;
            int rc = stc_remote_server_handle(f.server, q, f.first_len, &rep, &rl);
            CHECK(rc == 0 || rc == STC_EINVAL || rc == STC_ELIMIT);
            free(rep);
            q[at] = was;
        }
    }
    free(f.first_req);
    stc_remote_server_free(f.server);
    pthread_cond_destroy(&f.cond);
    pthread_mutex_destroy(&f.lock);
done:
    stc_program_free(prog);
    stc_program_free(twin);
    stc_env_free(env);
}

TEST(remote_stages_run_remotely_alike)
{
    stc_run_stats st = {0};
    long long served = 0;
    remote_check(remote_src, 0, &st, &served, NULL);
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
    remote_check(remote_err_src, 0, &st, &served, &out);
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
    remote_check(remote_src, 1, &st, &served, NULL);
    CHECK_INT(st.remote_batches, 0);
    CHECK(st.remote_declined > 0);
    CHECK_INT(served, 0);
}

TEST(remote_truncated_replies_run_here)
{
    stc_run_stats st = {0};
    long long served = 0;
    remote_check(remote_src, 2, &st, &served, NULL);
    CHECK_INT(st.remote_batches, 0);
    CHECK(st.remote_declined > 0);
    CHECK_INT(st.remote_declined, served);
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
 * work, through called functions and lambdas handed to fold; not a stage
 * calling a read-only thread, a function value, or a function that does. */
static void first_smap(const ir_expr *smap, void *ud)
{
    const ir_expr **out = ud;
    if (!*out) *out = smap;
}

static uint64_t remote_mask(const char *src)
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
        if (pl) mask = pl->remote_ok;
    }
    stc__flow_info_free(fi);
    stc_program_free(prog);
    stc_env_free(env);
    return mask;
}

TEST(remote_which_stages_may_go)
{
    /* pure work through a function and a lambda given to fold: stage 0 */
    CHECK_INT(remote_mask("fun sq(x) = x * x\n"
                          "fun sum(xs) = fold(fn (a, x) => a + sq(x), 0, xs)\n"
                          "main = smap(fn x => sum([x, x + 1]), range(0, 10))\n"),
              1);
    /* a read-only thread's state lives on rank 0: nothing goes */
    CHECK_INT(remote_mask("fun look(x, s) = (x + s, s)\n"
                          "thread r = look init 5\n"
                          "main = smap(fn x => r(x * 2), range(0, 10))\n"),
              0);
    /* a function value called inside a called function: nothing goes */
    CHECK_INT(remote_mask("fun ap(f, x) = f(x)\n"
                          "main = smap(fn x => ap(fn y => y + 1, x), range(0, 10))\n"),
              0);
    /* pure, then a writing thread, then pure: stages 0 and 2 */
    CHECK_INT(remote_mask("fun acc(x, s) = (x + s, x + s)\n"
                          "thread t = acc init 0\n"
                          "main = smap(fn x => let a = x * 3 in let b = t(a) in str(b), range(0, 10))\n"),
              5);
}
