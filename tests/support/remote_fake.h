/* remote_fake.h - a remote executor without MPI for the tests (stc_remote,
 * include/stc.h): each request is handed to a server thread answering
 * with its own compile of the same text (stc_remote_server), as another
 * rank of `stc run --mpi` would; callers wait for their reply, or (the
 * TFAKE_ASYNC modes) are told of it by a callback. */
#ifndef STC_TESTS_REMOTE_FAKE_H
#define STC_TESTS_REMOTE_FAKE_H

#include <stddef.h>

#include "stc.h"

typedef enum tfake_mode {
    TFAKE_SERVE,    /* answer every request */
    TFAKE_FAIL,     /* the transport fails every call (nothing is served) */
    TFAKE_TRUNCATE, /* answer, but cut every reply short */
    /* Asynchronous (stc_remote.start), at most TFAKE_SLOTS requests held: */
    TFAKE_ASYNC,          /* answered by the server thread */
    TFAKE_ASYNC_NOW,      /* answered inside start, before it returns */
    TFAKE_ASYNC_TRUNCATE  /* answered by the server thread, cut short */
} tfake_mode;

#define TFAKE_SLOTS 2

typedef struct tfake tfake;

/* Starts the server thread over twin (a compile of the caller's program
 * text; it must outlive the fake).  NULL when out of resources. */
tfake *tfake_start(stc_program *twin, tfake_mode mode);
/* The asynchronous modes: offers `peers` (at most TFAKE_PEERS) peers
 * that may own serial stages (stc_remote.start_to), each with a server
 * of its own, and the placement rule serial_min_ns (stc_remote).  Call
 * before the first run. */
#define TFAKE_PEERS 3
void tfake_set_peers(tfake *f, int peers, long long serial_min_ns);
/* The requests the peers served so far (serial stages' batches and their
 * states coming back). */
long long tfake_peer_served(tfake *f);
/* A copy of the first request a peer got (malloc'd, *len its length; NULL
 * if none), taken: the caller frees it. */
void *tfake_take_first_peer(tfake *f, size_t *len);
/* A copy of the longest request start or call got so far (malloc'd, *len
 * its length; NULL if none), taken: the caller frees it. */
void *tfake_take_largest(tfake *f, size_t *len);
/* The server answering start's and call's requests (peer -1), or peer's;
 * read it only between runs (its counts, stc_remote_server_stage). */
stc_remote_server *tfake_server(tfake *f, int peer);
/* The executor to put in stc_run_opts.remote (valid until tfake_stop). */
const stc_remote *tfake_remote(tfake *f);
/* Hands server s every strict prefix of request q (len bytes), then n
 * corruptions of one byte each (drawn from seed; q is restored): returns
 * how many answers were wrong (a prefix answered, or a corruption's code
 * other than 0, STC_EINVAL or STC_ELIMIT).  Under ASan, a leak or an
 * overflow is the other failure it looks for. */
int tfake_hammer(stc_remote_server *s, unsigned char *q, size_t len, unsigned seed, int n);
/* Stops and frees the fake; returns the requests it served.  *first (may
 * be NULL): a copy of the first request (malloc'd; NULL if none). */
long long tfake_stop(tfake *f, void **first, size_t *first_len);

#endif
