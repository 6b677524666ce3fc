/* transport.c - rank 0's end of libstc_mpi (include/stc_mpi.h): the
 * session, and the remote executor (stc_remote) over the other ranks.
 *
 * Rank 0's pool workers hand a batch to mpi_start (stc_remote.start) and
 * go on with other work; the transport thread (mpi_loop) watches the sends
 * and the replies and gives each reply back to libstc (done), which
 * resumes the batch.  Every MPI call during the run holds m->lock
 * (MPI_THREAD_SERIALIZED is enough: Open MPI 4.1 gives MULTIPLE, but its
 * TCP transport has a lock-order inversion under TSan, tests/mpi/tsan.supp).
 * Waiting polls with short sleeps that grow while nothing happens, since
 * Open MPI's blocking calls spin a core.  A request goes to the rank with
 * the fewest batches away, at most STC_MPI_CREDITS per rank; with every
 * credit in use it is not taken and the batch runs on rank 0 (so rank 0's
 * workers never wait for a credit), and memory stays bounded for any
 * stream length.  Its tag is its credit slot + 1, unique while it is away,
 * so each reply finds its request (docs/DESIGN.md 7c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "mpi_session.h"

/* Rank 0's transport thread sleeps until a reply is due, then polls.  Each
 * wake is a system call and a context switch that a working thread on
 * this core pays for (in a VM, 5-15 us: polling every 100-500 us took 4%
 * of the serving rank's compute on the conditional benchmark, and at 20
 * us 8% of rank 0's time on logstats).  A peer answers its requests one
 * at a time in the order sent, so its next reply is due one service time
 * (a moving average of the time between the start of a request's turn and
 * its reply) after the later of its oldest request's send and its last
 * reply.  The thread sleeps until 3/4 of that (the estimate only falls
 * when a reply is already there at the first look, so it must look early
 * to follow a peer that got faster), then polls every REPLY_POLL_MIN_NS,
 * doubling up to REPLY_POLL_MAX_NS.  A request not yet sent in full (a
 * large one goes as MPI's rendezvous, which needs rank 0's polls) is
 * polled at once.  A new request wakes the thread only if its reply is due
 * before the thread's next look. */
#define REPLY_POLL_MIN_NS 20000
#define REPLY_POLL_MAX_NS 500000
#define REPLY_SLEEP_MAX_NS 20000000 /* a look every 20 ms at least (faults) */

long long stc__mpi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void stc__mpi_nap(long ns) { nanosleep(&(struct timespec){0, ns}, NULL); }

int stc__mpi_fail(stc_mpi *m, const char *what, int mpi_rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(mpi_rc, text, &n) != MPI_SUCCESS) n = 0;
    text[n] = '\0';
    dprintf(m->fault_fd, "stc: rank %d: %s failed: %s\n", m->rank, what, n ? text : "MPI error");
    MPI_Abort(m->comm, STC__MPI_EXIT_OSERR);
    return STC_EIO; /* not reached */
}

int stc__mpi_oom(stc_mpi *m)
{
    dprintf(m->fault_fd, "stc: rank %d: out of memory\n", m->rank);
    MPI_Abort(m->comm, STC__MPI_EXIT_OSERR);
    return STC_ENOMEM; /* not reached */
}

int stc_mpi_open(MPI_Comm comm, const stc_mpi_opts *opts, stc_mpi **out)
{
    *out = NULL;
    int inited = 0, provided = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited || comm == MPI_COMM_NULL) return STC_EINVAL;
    stc_mpi *m = calloc(1, sizeof *m);
    if (!m) return STC_ENOMEM;
    m->fault_fd = opts && opts->fault_fd > 0 ? opts->fault_fd : 2;
    m->local = opts && opts->local;
    m->remote.serial_min_ns = opts ? opts->serial_min_ns : 0;
    if (MPI_Comm_dup(comm, &m->comm) != MPI_SUCCESS) {
        free(m);
        return STC_EIO;
    }
    /* Errors come back as codes, to be said with the rank, not abort. */
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    MPI_Query_thread(&provided);
    m->threads_ok = provided >= MPI_THREAD_SERIALIZED;
    pthread_mutex_init(&m->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* stc__mpi_now's clock, for the timed waits */
    pthread_cond_init(&m->work, &ca);
    pthread_condattr_destroy(&ca);
    *out = m;
    return 0;
}

int stc_mpi_rank(const stc_mpi *m) { return m->rank; }

int stc_mpi_size(const stc_mpi *m) { return m->size; }

static long nap_next(long ns, long max) { return ns * 2 > max ? max : ns * 2; }

/* When the transport thread should look for rank pp's next reply (see
 * REPLY_POLL_MIN_NS): LLONG_MAX with nothing away there, 0 at once (a send
 * not complete, or no service time yet); lock held. */
static long long peer_due(const stc__mpi_peer *pp)
{
    long long oldest = LLONG_MAX;
    bool unsent = false;
    for (int k = 0; k < STC_MPI_CREDITS; k++)
        if (pp->slot[k].used) {
            if (pp->slot[k].t0 < oldest) oldest = pp->slot[k].t0;
            unsent |= !pp->slot[k].sent;
        }
    for (int i = 0; i < pp->fcount; i++) {
        const stc__mpi_away *a = &pp->fifo[(pp->fhead + i) % pp->fcap];
        if (a->t0 < oldest) oldest = a->t0;
        unsent |= !a->sent;
    }
    if (oldest == LLONG_MAX) return LLONG_MAX;
    if (unsent || !pp->service_ns) return 0;
    return (oldest > pp->last_reply_ns ? oldest : pp->last_reply_ns) + pp->service_ns - 20000;
}

/* A request just went to pp: wakes the transport thread if its reply may
 * come before the thread's next look; lock held. */
static void wake_for(stc_mpi *m, const stc__mpi_peer *pp)
{
    if (peer_due(pp) < m->wake_at) pthread_cond_signal(&m->work);
}

static int mpi_start(void *ud, const void *req, size_t len, stc__mpi_done_fn *done, void *token)
{
    stc_mpi *m = ud;
    if (len > INT_MAX) return STC_ELIMIT; /* runs on rank 0 */
    pthread_mutex_lock(&m->lock);
    /* Not to a rank with batches of a serial stage it owns away: it
     * answers in order, one at a time, so this batch would wait behind
     * them (milliseconds each, or they would not have gone) while rank 0
     * could run it at once (docs/DESIGN.md 7c, "conditional"). */
    int peer = -1;
    for (int r = 1; r < m->size; r++)
        if (m->peers[r].away < STC_MPI_CREDITS && m->peers[r].fcount == 0 &&
            (peer < 0 || m->peers[r].away < m->peers[peer].away))
            peer = r;
    if (peer < 0 || m->stop) {
        m->kept++;
        pthread_mutex_unlock(&m->lock);
        return STC_ELIMIT;
    }
    stc__mpi_peer *pp = &m->peers[peer];
    int slot = 0;
    while (pp->slot[slot].used) slot++;
    stc__mpi_away *a = &pp->slot[slot];
    int rc = MPI_Isend(req, (int)len, MPI_BYTE, peer, slot + 1, m->comm, &a->sreq);
    if (rc != MPI_SUCCESS) stc__mpi_fail(m, "sending a batch", rc);
    *a = (stc__mpi_away){.used = true, .sreq = a->sreq, .len = len, .t0 = stc__mpi_now(), .done = done, .token = token};
    int sent = 0; /* (a small one is sent at once: then no need to wake the thread for it) */
    if ((rc = MPI_Test(&a->sreq, &sent, MPI_STATUS_IGNORE)) != MPI_SUCCESS) stc__mpi_fail(m, "sending a batch", rc);
    a->sent = sent;
    pp->away++;
    m->nawait++;
    wake_for(m, pp);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

/* stc_remote.start_to: a batch (or a state fetch) of a serial stage that
 * rank peer + 1 owns.  Always taken (libstc cannot run the stage here: its
 * states are there); MPI keeps the order of one sender's messages to one
 * receiver, and the serving rank answers in that order. */
static int mpi_start_to(void *ud, int peer, const void *req, size_t len, stc__mpi_done_fn *done, void *token)
{
    stc_mpi *m = ud;
    int rank = peer + 1;
    if (len > INT_MAX || rank < 1 || rank >= m->size) return STC_ELIMIT;
    pthread_mutex_lock(&m->lock);
    stc__mpi_peer *pp = &m->peers[rank];
    if (m->stop) {
        pthread_mutex_unlock(&m->lock);
        return STC_ELIMIT;
    }
    if (pp->fcount == pp->fcap) { /* grow the ring, unrolled from its head */
        int ncap = pp->fcap ? 2 * pp->fcap : 16;
        stc__mpi_away *f = malloc((size_t)ncap * sizeof *f);
        if (!f) {
            pthread_mutex_unlock(&m->lock);
            return STC_ENOMEM;
        }
        for (int i = 0; i < pp->fcount; i++) f[i] = pp->fifo[(pp->fhead + i) % pp->fcap];
        free(pp->fifo);
        pp->fifo = f, pp->fcap = ncap, pp->fhead = 0;
    }
    stc__mpi_away *a = &pp->fifo[(pp->fhead + pp->fcount) % pp->fcap];
    *a = (stc__mpi_away){.used = true, .len = len, .t0 = stc__mpi_now(), .done = done, .token = token};
    int rc = MPI_Isend(req, (int)len, MPI_BYTE, rank, STC__MPI_SERIAL_TAG, m->comm, &a->sreq);
    int sent = 0;
    if (rc == MPI_SUCCESS) rc = MPI_Test(&a->sreq, &sent, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) stc__mpi_fail(m, "sending a batch of a serial stage", rc);
    a->sent = sent;
    pp->fcount++;
    m->nawait++;
    wake_for(m, pp);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

/* The reply to a, tagged tag, from rank r if it came: *buf malloc'd; lock held. */
static bool reply_came(stc_mpi *m, int r, int tag, void **buf, int *count, const char *what)
{
    MPI_Message msg;
    MPI_Status st;
    int got = 0, rc;
    if ((rc = MPI_Improbe(r, tag, m->comm, &got, &msg, &st)) != MPI_SUCCESS) stc__mpi_fail(m, what, rc);
    if (!got) return false;
    MPI_Get_count(&st, MPI_BYTE, count);
    if (!(*buf = malloc(*count > 0 ? (size_t)*count : 1))) stc__mpi_oom(m);
    if ((rc = MPI_Mrecv(*buf, *count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)) != MPI_SUCCESS) stc__mpi_fail(m, what, rc);
    return true;
}

/* A reply to a from pp, found by the look at time now; lock held. */
static void count_reply(stc__mpi_peer *pp, const stc__mpi_away *a, int count, long long now)
{
    /* Its turn began when it went or at the peer's previous reply.  A
     * second reply found by the same look says nothing of the time. */
    if (pp->last_reply_ns != now) {
        long long sample = now - (a->t0 > pp->last_reply_ns ? a->t0 : pp->last_reply_ns);
        pp->service_ns = pp->service_ns ? (3 * pp->service_ns + sample) / 4 : sample;
        if (pp->service_ns < 1) pp->service_ns = 1;
    }
    pp->last_reply_ns = now;
    pp->st.batches++;
    pp->st.bytes_sent += (long long)a->len;
    pp->st.bytes_received += count;
    pp->st.away_ns += stc__mpi_now() - a->t0;
}

/* A reply of a serial stage from rank r, if one came: its request (the
 * ring's head) is done; lock held. */
static bool serial_reply(stc_mpi *m, int r, long long now, stc__mpi_done_fn **done, void **token, void **buf, int *count)
{
    stc__mpi_peer *pp = &m->peers[r];
    if (!pp->fcount) return false;
    stc__mpi_away *a = &pp->fifo[pp->fhead];
    if (!reply_came(m, r, STC__MPI_SERIAL_TAG, buf, count, "receiving a batch of a serial stage")) return false;
    /* its request was received, so its send completes now */
    for (int sent = 0, rc; !sent;) {
        if ((rc = MPI_Test(&a->sreq, &sent, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            stc__mpi_fail(m, "sending a batch of a serial stage", rc);
        if (!sent) stc__mpi_nap(20000);
    }
    *done = a->done, *token = a->token;
    count_reply(pp, a, *count, now);
    pp->st.serial++;
    *a = (stc__mpi_away){0};
    pp->fhead = (pp->fhead + 1) % pp->fcap;
    pp->fcount--;
    m->nawait--;
    return true;
}

typedef struct back {
    stc__mpi_done_fn *done;
    void *token;
    void *buf;
    int count;
} back;

/* Replies of replicated stages that came (at most STC_MPI_CREDITS); lock held. */
static int replies(stc_mpi *m, long long now, back *b)
{
    int n = 0;
    for (int r = 1; r < m->size; r++)
        for (int k = 0; k < STC_MPI_CREDITS && n < STC_MPI_CREDITS; k++) {
            stc__mpi_peer *pp = &m->peers[r];
            stc__mpi_away *a = &pp->slot[k];
            int done = 0, rc;
            if (!a->used) continue;
            if (!a->sent) {
                if ((rc = MPI_Test(&a->sreq, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                    stc__mpi_fail(m, "sending a batch", rc);
                if (!(a->sent = done)) continue;
            }
            if (!reply_came(m, r, k + 1, &b[n].buf, &b[n].count, "receiving a batch")) continue;
            count_reply(pp, a, b[n].count, now);
            pp->away--;
            m->nawait--;
            b[n].done = a->done, b[n].token = a->token;
            n++;
            *a = (stc__mpi_away){0};
        }
    return n;
}

/* Tests the sends of the serial stages' requests not yet complete, so
 * that peer_due sees them; lock held. */
static void progress_sends(stc_mpi *m)
{
    for (int r = 1; r < m->size; r++) {
        stc__mpi_peer *pp = &m->peers[r];
        for (int i = 0; i < pp->fcount; i++) {
            stc__mpi_away *a = &pp->fifo[(pp->fhead + i) % pp->fcap];
            int done = 0, rc;
            if (a->sent) continue;
            if ((rc = MPI_Test(&a->sreq, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                stc__mpi_fail(m, "sending a batch of a serial stage", rc);
            a->sent = done;
        }
    }
}

/* The transport thread: until stopped, finds the replies that came and
 * hands them back (outside the lock: done resumes the batch in libstc),
 * sleeping until the next is due (see REPLY_POLL_MIN_NS). */
static void *mpi_loop(void *ud)
{
    stc_mpi *m = ud;
#ifdef __linux__
    /* Sleeps as long as asked: the default slack (50 us) is longer than a poll. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
    long poll = REPLY_POLL_MIN_NS;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        m->wake_at = LLONG_MAX;
        while (!m->stop && m->nawait == 0) pthread_cond_wait(&m->work, &m->lock);
        m->wake_at = 0;
        if (m->nawait == 0) break; /* stopped, nothing away */
        long long now = stc__mpi_now();
        back b[STC_MPI_CREDITS];
        int n = 0;
        progress_sends(m);
        for (int r = 1; r < m->size && !n; r++)
            if (serial_reply(m, r, now, &b[0].done, &b[0].token, &b[0].buf, &b[0].count)) n = 1;
        if (!n) n = replies(m, now, b);
        if (n) {
            pthread_mutex_unlock(&m->lock);
            /* An empty reply: the rank refused it (the batch runs on rank 0). */
            for (int i = 0; i < n; i++) b[i].done(b[i].token, 0, b[i].buf, (size_t)b[i].count);
            poll = REPLY_POLL_MIN_NS;
            pthread_mutex_lock(&m->lock);
            continue;
        }
        long long due = LLONG_MAX, until;
        for (int r = 1; r < m->size; r++) {
            long long d = peer_due(&m->peers[r]);
            if (d < due) due = d;
        }
        if (due > now + REPLY_POLL_MIN_NS) { /* a reply is due later: sleep until then */
            until = due;
            poll = REPLY_POLL_MIN_NS;
        } else { /* overdue: look again soon, less often the longer it takes */
            until = now + poll;
            poll = nap_next(poll, REPLY_POLL_MAX_NS);
        }
        if (until > now + REPLY_SLEEP_MAX_NS) until = now + REPLY_SLEEP_MAX_NS;
        m->wake_at = until;
        struct timespec ts = {.tv_sec = until / 1000000000LL, .tv_nsec = until % 1000000000LL};
        pthread_cond_timedwait(&m->work, &m->lock, &ts);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* stc_remote.call, which libstc uses only without start: start, then wait. */
typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    int rc;
    void *reply;
    size_t len;
} waiter;

static void waiter_done(void *token, int rc, void *reply, size_t reply_len)
{
    waiter *w = token;
    pthread_mutex_lock(&w->lock);
    w->rc = rc, w->reply = reply, w->len = reply_len, w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static int mpi_call(void *ud, const void *req, size_t len, void **reply, size_t *reply_len)
{
    waiter w = {.done = false};
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    int rc = mpi_start(ud, req, len, waiter_done, &w);
    if (rc == 0) {
        pthread_mutex_lock(&w.lock);
        while (!w.done) pthread_cond_wait(&w.cond, &w.lock);
        pthread_mutex_unlock(&w.lock);
        *reply = w.reply, *reply_len = w.len, rc = w.rc;
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return rc;
}

const stc_remote *stc_mpi_remote(stc_mpi *m)
{
    if (m->rank != 0 || m->size < 2 || !m->threads_ok || m->local) return NULL;
    if (!m->peers && !(m->peers = calloc((size_t)m->size, sizeof *m->peers))) return NULL;
    if (!m->thread_on) {
        m->stop = false;
        if (pthread_create(&m->thread, NULL, mpi_loop, m) != 0) return NULL;
        m->thread_on = true;
    }
    m->remote.call = mpi_call;
    m->remote.start = mpi_start;
    m->remote.start_to = mpi_start_to;
    m->remote.ud = m;
    m->remote.slots = STC_MPI_CREDITS * (m->size - 1);
    m->remote.peers = m->size - 1;
    return &m->remote;
}

int stc_mpi_stop(stc_mpi *m)
{
    if (m->rank != 0) return STC_EINVAL;
    if (m->thread_on) { /* every batch is back: the runs are over */
        pthread_mutex_lock(&m->lock);
        m->stop = true;
        pthread_cond_signal(&m->work);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
        m->thread_on = false;
    }
    for (int r = 1; r < m->size; r++) {
        int rc = stc__mpi_send(m, "", 0, r, 0, "stopping the ranks");
        if (rc) return rc;
    }
    return 0;
}

stc_mpi_peer_stats stc_mpi_peer(const stc_mpi *m, int rank)
{
    if (!m->peers || rank < 1 || rank >= m->size) return (stc_mpi_peer_stats){0};
    return m->peers[rank].st;
}

long long stc_mpi_kept(const stc_mpi *m) { return m->kept; }

void stc_mpi_close(stc_mpi *m)
{
    if (!m) return;
    if (m->thread_on) { /* a rank 0 that did not stop */
        pthread_mutex_lock(&m->lock);
        m->stop = true;
        pthread_cond_signal(&m->work);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
    }
    for (int r = 1; m->peers && r < m->size; r++) free(m->peers[r].fifo);
    free(m->peers);
    MPI_Comm_free(&m->comm);
    pthread_cond_destroy(&m->work);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
