/* remote_fake.c - see remote_fake.h.  One request at a time goes through
 * a slot guarded by `lock`. */
#include "remote_fake.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tfake {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    stc_remote_server *server; /* the server thread's */
    stc_program *twin;
    tfake_mode mode;           /* set before the thread starts */
    stc_remote remote;
    const void *req;           /* (lock) the request being answered; NULL: none */
    size_t len;                /* (lock) */
    void *reply;               /* (lock) */
    size_t reply_len;          /* (lock) */
    int rc;                    /* (lock) */
    bool busy, answered, stop; /* (lock) */
    long long served;          /* (lock) */
    long long peer_served;     /* (lock) of served: by the peers */
    void *first_peer;          /* (lock) a copy of the first request to a peer */
    size_t first_peer_len;     /* (lock) */
    void *first;               /* (lock) a copy of the first request */
    size_t first_len;          /* (lock) */
    void *largest;             /* (lock) a copy of the longest request (peer -1) */
    size_t largest_len;        /* (lock) */
    stc_remote_server *peer_server[TFAKE_PEERS]; /* the peers' (start_to) */
    struct tfake_away {        /* (lock) asynchronous requests held, in order */
        int peer;              /* -1: start's (a slot), else start_to's */
        const void *req;
        size_t len;
        void (*done)(void *token, int rc, void *reply, size_t reply_len);
        void *token;
    } *away;
    int naway, away_cap;       /* (lock) */
    int nslots;                /* (lock) start's requests among them (at most TFAKE_SLOTS) */
};

/* Answers one request (the server is used by one thread at a time: lock
 * held, or the only caller). */
static int tfake_answer(tfake *f, int peer, const void *req, size_t len, void **rep, size_t *rlen)
{
    *rep = NULL;
    *rlen = 0;
    int rc = stc_remote_server_handle(peer >= 0 ? f->peer_server[peer] : f->server, req, len, rep, rlen);
    if (rc == 0 && (f->mode == TFAKE_TRUNCATE || f->mode == TFAKE_ASYNC_TRUNCATE) && *rlen > 0) *rlen -= 1 + *rlen / 3;
    return rc;
}

static void tfake_keep_first(tfake *f, const void *req, size_t len)
{
    if (!f->first && (f->first = malloc(len ? len : 1))) {
        memcpy(f->first, req, len);
        f->first_len = len;
    }
    void *copy;
    if (len > f->largest_len && (copy = malloc(len))) {
        memcpy(copy, req, len);
        free(f->largest);
        f->largest = copy;
        f->largest_len = len;
    }
}

static void *tfake_serve(void *ud)
{
    tfake *f = ud;
    pthread_mutex_lock(&f->lock);
    for (;;) {
        while (!f->stop && (!f->req || f->answered) && !f->naway) pthread_cond_wait(&f->cond, &f->lock);
        if (f->naway) { /* the oldest asynchronous request; its reply outside the lock */
            struct tfake_away a = f->away[0];
            void *rep;
            size_t rlen;
            int rc = tfake_answer(f, a.peer, a.req, a.len, &rep, &rlen);
            f->served++;
            f->peer_served += a.peer >= 0;
            f->nslots -= a.peer < 0;
            memmove(f->away, f->away + 1, (size_t)--f->naway * sizeof *f->away);
            pthread_mutex_unlock(&f->lock);
            a.done(a.token, rc, rep, rlen);
            pthread_mutex_lock(&f->lock);
            continue;
        }
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

static int tfake_call(void *ud, const void *req, size_t len, void **reply, size_t *reply_len)
{
    tfake *f = ud;
    if (f->mode == TFAKE_FAIL) return STC_EIO;
    pthread_mutex_lock(&f->lock);
    while (f->busy) pthread_cond_wait(&f->cond, &f->lock);
    f->busy = true;
    tfake_keep_first(f, req, len);
    f->req = req, f->len = len, f->answered = false;
    pthread_cond_broadcast(&f->cond);
    while (!f->answered) pthread_cond_wait(&f->cond, &f->lock);
    *reply = f->reply, *reply_len = f->reply_len;
    int rc = f->rc;
    f->req = NULL, f->reply = NULL, f->busy = false;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    if (rc == 0 && f->mode == TFAKE_TRUNCATE && *reply_len > 0) *reply_len -= 1 + *reply_len / 3;
    return rc;
}

/* start (peer -1: at most TFAKE_SLOTS held) or start_to (every request
 * taken, answered in order with the others). */
static int tfake_start_at(tfake *f, int peer, const void *req, size_t len,
                          void (*done)(void *token, int rc, void *reply, size_t reply_len), void *token)
{
    pthread_mutex_lock(&f->lock);
    if (peer < 0 && f->nslots == TFAKE_SLOTS) { /* full: the batch runs there */
        pthread_mutex_unlock(&f->lock);
        return STC_ELIMIT;
    }
    if (peer < 0) tfake_keep_first(f, req, len);
    else if (!f->first_peer && (f->first_peer = malloc(len ? len : 1))) {
        memcpy(f->first_peer, req, len);
        f->first_peer_len = len;
    }
    if (f->mode == TFAKE_ASYNC_NOW) {
        void *rep;
        size_t rlen;
        int rc = tfake_answer(f, peer, req, len, &rep, &rlen);
        f->served++;
        f->peer_served += peer >= 0;
        pthread_mutex_unlock(&f->lock);
        done(token, rc, rep, rlen);
        return 0;
    }
    if (f->naway == f->away_cap) {
        int ncap = f->away_cap ? 2 * f->away_cap : 16;
        struct tfake_away *m = realloc(f->away, (size_t)ncap * sizeof *m);
        if (!m) {
            pthread_mutex_unlock(&f->lock);
            return STC_ENOMEM;
        }
        f->away = m, f->away_cap = ncap;
    }
    f->away[f->naway++] = (struct tfake_away){peer, req, len, done, token};
    f->nslots += peer < 0;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    return 0;
}

static int tfake_start_one(void *ud, const void *req, size_t len,
                           void (*done)(void *token, int rc, void *reply, size_t reply_len), void *token)
{
    return tfake_start_at(ud, -1, req, len, done, token);
}

static int tfake_start_to(void *ud, int peer, const void *req, size_t len,
                          void (*done)(void *token, int rc, void *reply, size_t reply_len), void *token)
{
    tfake *f = ud;
    if (peer < 0 || peer >= f->remote.peers) return STC_EINVAL;
    return tfake_start_at(f, peer, req, len, done, token);
}

void tfake_set_peers(tfake *f, int peers, long long serial_min_ns)
{
    if (!f->remote.start || peers < 1) return;
    if (peers > TFAKE_PEERS) peers = TFAKE_PEERS;
    for (int i = f->remote.peers; i < peers; i++)
        if (!(f->peer_server[i] = stc_remote_server_new(f->twin))) peers = i;
    f->remote.peers = peers;
    f->remote.start_to = peers > 0 ? tfake_start_to : NULL;
    f->remote.serial_min_ns = serial_min_ns;
}

tfake *tfake_start(stc_program *twin, tfake_mode mode)
{
    tfake *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    if (!(f->server = stc_remote_server_new(twin))) {
        free(f);
        return NULL;
    }
    f->mode = mode;
    bool async = mode == TFAKE_ASYNC || mode == TFAKE_ASYNC_NOW || mode == TFAKE_ASYNC_TRUNCATE;
    f->remote = (stc_remote){.call = tfake_call, .ud = f, .start = async ? tfake_start_one : NULL,
                             .slots = async ? TFAKE_SLOTS : 0};
    f->twin = twin;
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    if (pthread_create(&f->thread, NULL, tfake_serve, f) != 0) {
        pthread_cond_destroy(&f->cond);
        pthread_mutex_destroy(&f->lock);
        stc_remote_server_free(f->server);
        free(f);
        return NULL;
    }
    return f;
}

const stc_remote *tfake_remote(tfake *f) { return &f->remote; }

stc_remote_server *tfake_server(tfake *f, int peer)
{
    pthread_mutex_lock(&f->lock); /* after the server thread's last answer */
    stc_remote_server *s = peer < 0 ? f->server : peer < TFAKE_PEERS ? f->peer_server[peer] : NULL;
    pthread_mutex_unlock(&f->lock);
    return s;
}

void *tfake_take_first_peer(tfake *f, size_t *len)
{
    pthread_mutex_lock(&f->lock);
    void *p = f->first_peer;
    *len = f->first_peer_len;
    f->first_peer = NULL;
    pthread_mutex_unlock(&f->lock);
    return p;
}

void *tfake_take_largest(tfake *f, size_t *len)
{
    pthread_mutex_lock(&f->lock);
    void *p = f->largest;
    *len = f->largest_len;
    f->largest = NULL;
    f->largest_len = 0;
    pthread_mutex_unlock(&f->lock);
    return p;
}

long long tfake_peer_served(tfake *f)
{
    pthread_mutex_lock(&f->lock);
    long long n = f->peer_served;
    pthread_mutex_unlock(&f->lock);
    return n;
}

long long tfake_stop(tfake *f, void **first, size_t *first_len)
{
    pthread_mutex_lock(&f->lock);
    f->stop = true;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    pthread_join(f->thread, NULL);
    long long served = f->served;
    if (first) {
        *first = f->first;
        *first_len = f->first_len;
    } else {
        free(f->first);
    }
    stc_remote_server_free(f->server);
    for (int i = 0; i < TFAKE_PEERS; i++) stc_remote_server_free(f->peer_server[i]);
    free(f->away);
    free(f->first_peer);
    free(f->largest);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    free(f);
    return served;
}

int tfake_hammer(stc_remote_server *s, unsigned char *q, size_t len, unsigned seed, int n)
{
    int wrong = 0;
    for (size_t k = 0; k < len; k++) {
        void *rep = NULL;
        size_t rl = 0;
        wrong += stc_remote_server_handle(s, q, k, &rep, &rl) >= 0;
        free(rep);
    }
    for (int i = 0; i < n && len > 0; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t at = (seed >> 8) % len;
        unsigned char was = q[at];
        q[at] = (unsigned char)(seed >> 20);
        void *rep = NULL;
        size_t rl = 0;
        int rc = stc_remote_server_handle(s, q, len, &rep, &rl);
        wrong += !(rc == 0 || rc == STC_EINVAL || rc == STC_ELIMIT);
        free(rep);
        q[at] = was;
    }
    return wrong;
}
