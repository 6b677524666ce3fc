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
    tfake_mode mode;           /* set before the thread starts */
    stc_remote remote;
    const void *req;           /* (lock) the request being answered; NULL: none */
    size_t len;                /* (lock) */
    void *reply;               /* (lock) */
    size_t reply_len;          /* (lock) */
    int rc;                    /* (lock) */
    bool busy, answered, stop; /* (lock) */
    long long served;          /* (lock) */
    void *first;               /* (lock) a copy of the first request */
    size_t first_len;          /* (lock) */
};

static void *tfake_serve(void *ud)
{
    tfake *f = ud;
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

static int tfake_call(void *ud, const void *req, size_t len, void **reply, size_t *reply_len)
{
    tfake *f = ud;
    if (f->mode == TFAKE_FAIL) return STC_EIO;
    pthread_mutex_lock(&f->lock);
    while (f->busy) pthread_cond_wait(&f->cond, &f->lock);
    f->busy = true;
    if (!f->first && (f->first = malloc(len ? len : 1))) {
        memcpy(f->first, req, len);
        f->first_len = len;
    }
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

tfake *tfake_start(stc_program *twin, tfake_mode mode)
{
    tfake *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    if (!(f->server = stc_remote_server_new(twin))) {
        free(f);
        return NULL;
    }
    f->mode = mode;
    f->remote = (stc_remote){tfake_call, f};
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
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    free(f);
    return served;
}
