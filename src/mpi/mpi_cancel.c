/*
 * mpi_cancel.c - MPI_Cancel of a send: withdraw a message the receiver has not matched.
 *
 * A sent message the receiver has not matched sits in its unexpected queue (the data of
 * an eager message, or the request-to-send of a rendezvous one), named by the sender's
 * request id. The sender asks the receiver (an active message, ordered after the
 * message itself, through the loopback when it is this process) to take it out; the receiver
 * answers whether it did. On "yes" the send is cancelled (MPI_Test_cancelled says so) and its core
 * request completes if it still waited for the receiver; on "no" the message was matched and the
 * send completes normally, which MPI allows. MPI_Cancel waits for the answer (the receiver answers
 * from any MPI call that makes progress); a failed receiver ends the wait.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_impl.h"

enum { CANCEL_AM_REQ = CORE_AM_MPI_CANCEL_REQ, CANCEL_AM_REP = CORE_AM_MPI_CANCEL_REP };

struct cancel_msg {
    uint32_t sreq;
    uint16_t ctx;
    uint8_t ok;
    uint8_t pad;
};

/* The cancels this process waits for: one per thread in MPI_Cancel (each on its stack;
 * the list is touched under the core's critical section, which the handlers run in). */
struct cancel_wait {
    struct cancel_wait *next;
    uint32_t sreq;
    int peer, answered, ok;
};
static struct cancel_wait *cancel_waits;

/* Take the unexpected message of `src` with request id `sreq` out of ctx's queue. */
static int cancel_take(int src, uint16_t ctx, uint32_t sreq)
{
    struct core_match *m = core_match_get(ctx);
    if (m == NULL) return 0;
    struct core_unexp *prev = NULL;
    for (struct core_unexp *u = m->unexp_head; u; prev = u, u = u->next) {
        if (u->src != src || u->sreq != sreq) continue;
        if (prev)
            prev->next = u->next;
        else
            m->unexp_head = u->next;
        if (m->unexp_tail == u) m->unexp_tail = prev;
        free(u);
        return 1;
    }
    return 0;
}

static void cancel_am_req(int src, const void *p, size_t n)
{
    struct cancel_msg m;
    if (n < sizeof m) return;
    memcpy(&m, p, sizeof m);
    m.ok = (uint8_t)cancel_take(src, m.ctx, m.sreq);
    struct iovec v = {&m, sizeof m};
    core_am_sendv(src, CANCEL_AM_REP, &v, 1);
}

static void cancel_am_rep(int src, const void *p, size_t n)
{
    struct cancel_msg m;
    if (n < sizeof m) return;
    memcpy(&m, p, sizeof m);
    for (struct cancel_wait *w = cancel_waits; w; w = w->next)
        if (src == w->peer && m.sreq == w->sreq && !w->answered) {
            w->ok = m.ok;
            w->answered = 1;
            return;
        }
}

int mpi_cancel_init(void)
{
    return core_am_register(CANCEL_AM_REQ, cancel_am_req) ||
                   core_am_register(CANCEL_AM_REP, cancel_am_rep)
               ? MPI_ERR_INTERN
               : MPI_SUCCESS;
}

static int cancel_answered(const void *arg)
{
    const struct cancel_wait *w = arg;
    return w->answered || core.peers[w->peer].failed;
}

int mpi_cancel_send(uint32_t id, int peer, uint16_t ctx, core_req_t *r, int *cancelled)
{
    *cancelled = 0;
    if (r && (r->kind != CORE_REQ_SEND || r->state == CORE_RS_SENDING)) return 0;
    /* to myself too: the request follows the message through the loopback */
    struct cancel_wait w = {.next = cancel_waits, .sreq = id, .peer = peer};
    struct cancel_msg m = {id, ctx, 0, 0};
    struct iovec v = {&m, sizeof m};
    cancel_waits = &w;
    int rc = core_am_sendv(peer, CANCEL_AM_REQ, &v, 1);
    if (rc == 0) rc = core_block(cancel_answered, &w);
    for (struct cancel_wait **pp = &cancel_waits; *pp; pp = &(*pp)->next)
        if (*pp == &w) {
            *pp = w.next;
            break;
        }
    if (rc) return mpi_from_tern(rc);
    if (!w.answered) return MPI_ERR_OTHER; /* the receiver failed */
    if (!w.ok) return MPI_SUCCESS;
    *cancelled = 1;
    if (r == NULL) return MPI_SUCCESS;
    if (r->state == CORE_RS_WAIT_CTS) { /* the rendezvous the receiver dropped */
        core.peers[r->peer].rndv_inflight--;
        core_req_complete(r, TERN_OK);
    } else if (r->state == CORE_RS_WAIT_ACK) { /* a synchronous eager message */
        core_req_complete(r, TERN_OK);
    }
    return MPI_SUCCESS;
}
