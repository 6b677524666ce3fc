/* remote_cost.c - what a remote stage's trip costs, without MPI: runs a
 * stream program over a file's lines with an in-process transport whose
 * `start` answers each request at once with a server of the same program
 * (stc_remote_server_handle, on the calling worker), so a callgrind of it
 * shows the request's encoding, the serving (decode, steps, encode) and
 * the reply's adoption per batch, repeatably (docs/DESIGN.md 7c).
 *
 *   remote_cost [--local] [--workers N] [--serial] [--cap N] PROGRAM.stc INPUT
 *
 * --local runs without the transport (the baseline: the difference is
 * the transport's cost); --serial lets every serial stage that may be
 * owned go too (serial_min_ns -1, one peer); --cap N makes batches of at
 * most N items (queue_capacity; with a build whose FLOW_TIME_SCALE makes
 * the measured batches bigger, every batch has N items under callgrind).  Prints the run's remote
 * counts and bytes per batch and per item to standard error; the results
 * are dropped.
 *
 *   cmake -S . -B build-cg -DSTC_BENCH=ON -DCMAKE_C_FLAGS=-DFLOW_TIME_SCALE=100
 *   valgrind --tool=callgrind --dump-instr=no build-cg/bench/remote_cost \
 *       --cap 240 examples/logstats/logstats.stc access.log
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stc.h>

typedef struct fake {
    stc_remote_server *server;
    long long requests;
} fake;

static int fake_call(void *ud, const void *req, size_t len, void **reply, size_t *reply_len)
{
    fake *f = ud;
    f->requests++;
    return stc_remote_server_handle(f->server, req, len, reply, reply_len);
}

static int fake_start(void *ud, const void *req, size_t len, void (*done)(void *, int, void *, size_t), void *token)
{
    void *rep = NULL;
    size_t rlen = 0;
    int rc = fake_call(ud, req, len, &rep, &rlen);
    done(token, rc, rep, rlen);
    return 0;
}

static int fake_start_to(void *ud, int peer, const void *req, size_t len, void (*done)(void *, int, void *, size_t),
                         void *token)
{
    (void)peer;
    return fake_start(ud, req, len, done, token);
}

typedef struct lines {
    FILE *in;
    char *buf;
    size_t cap;
} lines;

static int source(void *ud, stc_value *item, stc_ctx *cx)
{
    (void)cx;
    lines *l = ud;
    ssize_t n = getline(&l->buf, &l->cap, l->in);
    if (n < 0) return 0;
    if (n > 0 && l->buf[n - 1] == '\n') n--;
    *item = stc_value_new_str(l->buf, (size_t)n);
    return 1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t got;
    while (s && (got = fread(s + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) free(s);
            s = t;
        }
    }
    fclose(f);
    *len = n;
    return s;
}

int main(int argc, char **argv)
{
    bool local = false, serial = false;
    int workers = 1, cap = 0, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--local")) local = true;
        else if (!strcmp(argv[a], "--serial")) serial = true;
        else if (!strcmp(argv[a], "--workers") && a + 1 < argc) workers = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--cap") && a + 1 < argc) cap = atoi(argv[++a]);
        else break;
    }
    if (argc - a != 2) {
        fprintf(stderr, "usage: remote_cost [--local] [--workers N] [--serial] [--cap N] PROGRAM.stc INPUT\n");
        return 64;
    }
    size_t len;
    char *src = slurp(argv[a], &len);
    if (!src) {
        perror(argv[a]);
        return 66;
    }
    stc_env *env = stc_env_new();
    stc_program *prog = NULL, *twin = NULL;
    stc_diags *d = NULL;
    if (stc_compile(env, src, len, argv[a], &prog, &d) || stc_compile(env, src, len, argv[a], &twin, NULL)) {
        char *m = d ? stc_diags_format(d) : NULL;
        fprintf(stderr, "%s", m ? m : "remote_cost: compile failed\n");
        return 65;
    }
    fake f = {.server = stc_remote_server_new(twin)};
    stc_remote remote = {.call = fake_call, .start = fake_start, .ud = &f, .slots = 4};
    if (serial) remote.peers = 1, remote.start_to = fake_start_to, remote.serial_min_ns = -1;
    lines l = {.in = fopen(argv[a + 1], "r")};
    if (!l.in || !f.server) {
        perror(argv[a + 1]);
        return 66;
    }
    stc_run_opts o = {.workers = workers, .queue_capacity = cap, .remote = local ? NULL : &remote};
    stc_stream io = {.source = source, .source_ud = &l};
    stc_result *r = NULL;
    int rc = stc_run_stream(prog, &o, &io, &r);
    stc_run_stats st = r ? stc_result_stats(r) : (stc_run_stats){0};
    double nb = st.remote_batches ? (double)st.remote_batches : 1;
    fprintf(stderr, "rc %d, remote batches %lld (requests %lld), declined %lld, bytes sent %lld (%.0f a batch), received %lld (%.0f a batch)\n",
            rc, st.remote_batches, f.requests, st.remote_declined, st.remote_bytes_sent, st.remote_bytes_sent / nb,
            st.remote_bytes_received, st.remote_bytes_received / nb);
    stc_result_free(r);
    fclose(l.in);
    free(l.buf);
    stc_remote_server_free(f.server);
    stc_program_free(prog);
    stc_program_free(twin);
    stc_diags_free(d);
    stc_env_free(env);
    free(src);
    return rc ? 1 : 0;
}
