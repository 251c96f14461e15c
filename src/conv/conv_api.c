/*
 * conv_api.c - tern_conv_* (tern.h, "Conversations"): argument checks at the door, the
 * process's handles, and the member side of the conversation protocol.
 *
 * A handle is a member of one conversation at its home. Open, close and send are
 * request/answer exchanges with the home (the caller blocks in core_block until the
 * answer arrives, serving everything else meanwhile). Receives are core requests of kind
 * RECV that no matching queue knows of: they wait in the handle's own FIFO and are
 * completed here, so tern_wait/tern_test/tern_waitany work on them unchanged.
 *
 * Handles are never returned to malloc while the library runs (like requests): a closed
 * handle keeps its memory, marked closed, so using it again is a clean TERN_ERR_INVAL.
 */
#include <stdlib.h>
#include <string.h>

#include "conv/conv.h"
#include "core/core.h"
#include "util/log.h"
#include "util/tunables.h"

#define CONV_MAGIC 0x636f6e76u /* "conv" */

enum conv_hstate { CONV_H_FREE = 0, CONV_H_OPENING, CONV_H_OPEN, CONV_H_CLOSING };

/* A message delivered to a broadcast receiver before it asked for one. */
struct conv_in {
    struct conv_in *next;
    int src;
    size_t len;
    unsigned char *data;
};

struct tern_conv {
    uint32_t magic;
    uint32_t hid; /* index in memb.tab */
    uint8_t state;
    uint8_t mode; /* TERN_FCFS, TERN_BROADCAST or CONV_MODE_SEND */
    uint8_t linger;
    uint8_t home_failed; /* the home died: every later operation fails */
    int home;
    uint32_t cid, mid; /* the home's ids */
    /* answers of the home */
    int op_done, op_status;
    int sent_done, sent_status, room;
    int peek_done, flush_done;
    size_t credit; /* sender: bytes it may send without waiting for the home */
    uint64_t peek;
    /* receives posted and not yet completed, oldest first */
    core_req_t *pend_head, *pend_tail;
    size_t npend;
    /* broadcast: delivered, not yet received */
    struct conv_in *in_head, *in_tail;
    size_t unacked; /* received, not yet reported to the home */
    struct tern_conv *next_free;
};

static struct {
    struct tern_conv **tab;
    uint32_t n;
    struct tern_conv *free;
} memb;

/* ---- handles ------------------------------------------------------------------ */

static struct tern_conv *conv_handle_alloc(void)
{
    struct tern_conv *h = memb.free;
    if (h) {
        memb.free = h->next_free;
    } else {
        struct tern_conv **t = realloc(memb.tab, (memb.n + 1) * sizeof *t);
        if (t == NULL) return NULL;
        memb.tab = t;
        h = malloc(sizeof *h);
        if (h == NULL) return NULL;
        h->hid = memb.n++;
        memb.tab[h->hid] = h;
    }
    uint32_t hid = h->hid;
    memset(h, 0, sizeof *h);
    h->hid = hid;
    h->magic = CONV_MAGIC;
    return h;
}

static void conv_inbox_clear(struct tern_conv *h)
{
    while (h->in_head) {
        struct conv_in *in = h->in_head;
        h->in_head = in->next;
        free(in->data);
        free(in);
    }
    h->in_tail = NULL;
}

static void conv_handle_release(struct tern_conv *h)
{
    conv_inbox_clear(h);
    h->state = CONV_H_FREE;
    h->next_free = memb.free;
    memb.free = h;
}

void conv_member_fini(void)
{
    for (uint32_t i = 0; i < memb.n; i++) {
        conv_inbox_clear(memb.tab[i]);
        free(memb.tab[i]);
    }
    free(memb.tab);
    memset(&memb, 0, sizeof memb);
}

/* ---- the member side of the protocol --------------------------------------------- */

static void conv_to_home(struct tern_conv *h, uint8_t op, uint8_t flags, uint64_t len,
                         uint64_t credit)
{
    struct conv_wire w = {.op = op,
                          .flags = flags,
                          .cid = h->cid,
                          .mid = h->mid,
                          .hid = h->hid,
                          .len = len,
                          .credit = credit};
    int rc = conv_wire_send(h->home, &w, NULL, 0);
    if (rc && rc != TERN_ERR_PEER_FAILED)
        UTIL_ERROR("conversation: cannot reach home rank %d: %s", h->home, tern_strerror(rc));
}

/* Hand a message to the oldest posted receive. */
static void conv_complete(core_req_t *r, int src, const unsigned char *data, size_t len)
{
    size_t n = len < r->len ? len : r->len;
    if (n) memcpy(r->buf, data, n);
    r->bytes = len;
    r->src = src;
    r->msg_tag = 0;
    r->user = NULL;
    core_req_complete(r, len > r->len ? TERN_ERR_TRUNCATE : 0);
}

/* A broadcast receiver read a message: report reads to the home now and then, so the
 * bytes stop counting against the bound. Reporting whenever the inbox runs dry keeps a
 * blocked sender live; reporting at half the bound keeps a busy stream flowing. */
static void conv_consumed(struct tern_conv *h, size_t len)
{
    h->unacked += CONV_MSG_COST(len);
    if (h->in_head == NULL || 2 * h->unacked >= util_tun.conv_max_queued_bytes) {
        conv_to_home(h, CONV_OP_CONSUMED, 0, h->unacked, 0);
        h->unacked = 0;
    }
}

/* Fail the oldest n posted receives of h with err. */
static void conv_fail_pending(struct tern_conv *h, size_t n, int err)
{
    while (n-- && h->pend_head) {
        core_req_t *r = h->pend_head;
        h->pend_head = r->next;
        if (h->pend_head == NULL) h->pend_tail = NULL;
        h->npend--;
        r->user = NULL;
        core_req_complete(r, err);
    }
}

/* The home of some of our handles died: they lose their conversation. What a broadcast
 * receiver already holds in its inbox can still be received; everything else, waiting
 * or later, ends with TERN_ERR_PEER_FAILED (tern_conv_close just releases the handle). */
void conv_member_failed(int rank)
{
    for (uint32_t i = 0; i < memb.n; i++) {
        struct tern_conv *h = memb.tab[i];
        if (h->state == CONV_H_FREE || h->home != rank) continue;
        h->home_failed = 1;
        conv_fail_pending(h, SIZE_MAX, TERN_ERR_PEER_FAILED);
    }
}

void conv_member_recv(int src, const struct conv_wire *w, unsigned char *data, size_t len)
{
    struct tern_conv *h = w->hid < memb.n ? memb.tab[w->hid] : NULL;
    if (h == NULL || h->state == CONV_H_FREE || h->home != src) {
        UTIL_ERROR("dropping a conversation op %u from rank %d for an unknown handle",
                   (unsigned)w->op, src);
        free(data);
        return;
    }
    switch (w->op) {
    case CONV_OP_OPENED:
        h->op_status = w->status;
        h->cid = w->cid;
        h->mid = w->mid;
        h->op_done = 1;
        break;
    case CONV_OP_CLOSED:
        h->op_done = 1;
        break;
    case CONV_OP_SENT:
        h->sent_status = w->status;
        h->sent_done = 1;
        h->credit += w->credit;
        break;
    case CONV_OP_CREDIT:
        if (h->state == CONV_H_OPEN) h->credit += w->credit;
        break;
    case CONV_OP_REVOKE:
        /* A receiver is joining: hand every unused byte back (behind what we sent). A
         * closing handle's CLOSE already gives it all back. */
        if (h->state == CONV_H_OPEN) {
            uint64_t x = h->credit;
            h->credit = 0;
            conv_to_home(h, CONV_OP_RETURN, 0, 0, x);
        }
        break;
    case CONV_OP_FLUSHED:
        h->flush_done = 1;
        break;
    case CONV_OP_ROOM:
        h->room = 1;
        break;
    case CONV_OP_PEEKED:
        h->peek = w->len;
        h->peek_done = 1;
        break;
    case CONV_OP_FAILED:
        /* Sender w->src died: the receives waiting now may have waited for it. */
        conv_fail_pending(h, h->mode == TERN_FCFS ? (size_t)w->len : SIZE_MAX,
                          TERN_ERR_PEER_FAILED);
        break;
    case CONV_OP_DELIVER: {
        core_req_t *r = h->pend_head;
        if (r) {
            h->pend_head = r->next;
            if (h->pend_head == NULL) h->pend_tail = NULL;
            h->npend--;
            conv_complete(r, w->src, data, len);
            if (h->mode == TERN_BROADCAST) conv_consumed(h, len);
            break;
        }
        if (h->mode != TERN_BROADCAST) {
            UTIL_ERROR("conversation: a message from rank %d nobody asked for", src);
            break;
        }
        struct conv_in *in = malloc(sizeof *in);
        if (in == NULL) core_fatal("out of memory keeping a conversation message");
        *in = (struct conv_in){.src = w->src, .len = len, .data = data};
        if (h->in_tail)
            h->in_tail->next = in;
        else
            h->in_head = in;
        h->in_tail = in;
        return; /* the inbox keeps data */
    }
    }
    free(data);
}

/* ---- waits --------------------------------------------------------------------- */

static int conv_op_done(const void *arg)
{
    const struct tern_conv *h = arg;
    return h->op_done || h->home_failed;
}

static int conv_sent_done(const void *arg)
{
    const struct tern_conv *h = arg;
    return h->sent_done || h->home_failed;
}

static int conv_room_done(const void *arg)
{
    const struct tern_conv *h = arg;
    return h->room || h->home_failed;
}

static int conv_flush_done(const void *arg)
{
    const struct tern_conv *h = arg;
    return h->flush_done || h->home_failed;
}

static int conv_peek_done(const void *arg)
{
    const struct tern_conv *h = arg;
    return h->peek_done || h->home_failed;
}

/* ---- checks --------------------------------------------------------------------- */

static inline int conv_api_state(void)
{
    if (__builtin_expect(core.initialized, 1)) return 0;
    return core.finalized ? TERN_ERR_FINALIZED : TERN_ERR_NOT_INIT;
}

static inline int conv_valid(const struct tern_conv *h)
{
    return h && h->magic == CONV_MAGIC && h->state == CONV_H_OPEN;
}

static int conv_name_len(const char *name, size_t *len)
{
    if (name == NULL) return TERN_ERR_INVAL;
    size_t n = strnlen(name, TERN_CONV_NAME_MAX + 1);
    if (n == 0 || n > TERN_CONV_NAME_MAX) return TERN_ERR_INVAL;
    *len = n;
    return 0;
}

/* ---- the API ------------------------------------------------------------------- */

static int conv_open(const char *name, int mode, tern_conv_t *conv)
{
    size_t len = 0;
    int rc = conv_name_len(name, &len);
    if (rc) return rc;
    if (conv == NULL) return TERN_ERR_INVAL;
    struct tern_conv *h = conv_handle_alloc();
    if (h == NULL) return TERN_ERR_NOMEM;
    h->state = CONV_H_OPENING;
    h->mode = (uint8_t)mode;
    h->home = (int)(conv_hash(name, len) % (uint32_t)core.size);
    struct conv_wire w = {.op = CONV_OP_OPEN, .mode = (uint8_t)mode, .hid = h->hid, .len = len};
    rc = conv_wire_send(h->home, &w, name, len);
    if (rc == 0) rc = core_block(conv_op_done, h);
    if (rc == 0) rc = h->home_failed ? TERN_ERR_PEER_FAILED : h->op_status;
    if (rc) {
        /* Refused, or the home died: nothing of it lives at home. Only when the whole
         * job is failing may an answer still come, so the handle is kept. */
        if (h->op_done || h->home_failed || core.peers[h->home].failed ||
            rc != TERN_ERR_PEER_FAILED)
            conv_handle_release(h);
        return rc;
    }
    h->state = CONV_H_OPEN;
    *conv = h;
    return 0;
}

int tern_conv_open_send(const char *name, tern_conv_t *conv)
{
    CORE_CS_SCOPE();
    int rc = conv_api_state();
    if (rc) return rc;
    return conv_open(name, CONV_MODE_SEND, conv);
}

int tern_conv_open_recv(const char *name, int mode, tern_conv_t *conv)
{
    CORE_CS_SCOPE();
    int rc = conv_api_state();
    if (rc) return rc;
    if (mode != TERN_FCFS && mode != TERN_BROADCAST) return TERN_ERR_INVAL;
    return conv_open(name, mode, conv);
}

int tern_conv_close(tern_conv_t *conv)
{
    CORE_CS_SCOPE();
    int rc = conv_api_state();
    if (rc) return rc;
    if (conv == NULL || !conv_valid(*conv)) return TERN_ERR_INVAL;
    struct tern_conv *h = *conv;
    if (h->npend) return TERN_ERR_BUSY;
    h->state = CONV_H_CLOSING;
    h->op_done = 0;
    if (!h->home_failed) {
        conv_to_home(h, CONV_OP_CLOSE, h->linger ? CONV_FLAG_LINGER : 0, 0, 0);
        rc = core_block(conv_op_done, h);
        if (rc) return rc;
    }
    conv_handle_release(h);
    *conv = TERN_CONV_NULL;
    return 0;
}

int tern_conv_linger(tern_conv_t conv, int on)
{
    CORE_CS_SCOPE();
    int rc = conv_api_state();
    if (rc) return rc;
    if (!conv_valid(conv)) return TERN_ERR_INVAL;
    conv->linger = on != 0;
    return 0;
}

static int conv_send(tern_conv_t h, const void *buf, size_t len, int block)
{
    int rc = conv_api_state();
    if (rc) return rc;
    if (!conv_valid(h) || h->mode != CONV_MODE_SEND) return TERN_ERR_INVAL;
    if ((buf == NULL && len > 0) || buf == TERN_IN_PLACE) return TERN_ERR_BUFFER;
    if (len > PTRDIFF_MAX) return TERN_ERR_INVAL; /* a negative length passed on (api.c) */
    size_t cost = CONV_MSG_COST(len);
    /* Paid from credit: on its way, and accepted when it arrives (the home lent us the
     * room). The home tops the credit up as it goes; pick up what has come. Only
     * messages of at most a quarter of the credit go this way: pipelining pays where the
     * round trip costs more than the copies, and deep queues of large messages through
     * the home measured slower (cache-cold copies) than one at a time. */
    size_t pipe_max = util_tun.conv_max_queued_bytes / 4;
    if (util_tun.conv_credit < pipe_max) pipe_max = util_tun.conv_credit;
    pipe_max /= 4;
    if (cost <= pipe_max && h->credit < cost && h->credit > 0) core_progress();
    if (cost <= pipe_max && h->credit >= cost && !h->home_failed) {
        h->credit -= cost;
        struct conv_wire w = {.op = CONV_OP_SEND,
                              .flags = CONV_FLAG_CREDITED,
                              .cid = h->cid,
                              .mid = h->mid,
                              .hid = h->hid,
                              .len = len};
        return conv_wire_send(h->home, &w, buf, len);
    }
    for (;;) {
        if (h->home_failed) return TERN_ERR_PEER_FAILED;
        h->sent_done = 0;
        h->room = 0;
        /* Too little credit for this one: hand it back and wait for the answer. */
        struct conv_wire w = {.op = CONV_OP_SEND,
                              .cid = h->cid,
                              .mid = h->mid,
                              .hid = h->hid,
                              .len = len,
                              .credit = h->credit};
        h->credit = 0;
        rc = conv_wire_send(h->home, &w, buf, len);
        if (rc == 0) rc = core_block(conv_sent_done, h);
        if (rc) return rc;
        if (h->home_failed) return TERN_ERR_PEER_FAILED;
        if (h->sent_status != TERN_ERR_AGAIN) return h->sent_status;
        if (!block) return TERN_ERR_AGAIN;
        rc = core_block(conv_room_done, h);
        if (rc) return rc;
    }
}

int tern_conv_send(tern_conv_t conv, const void *buf, size_t len)
{
    CORE_CS_SCOPE();
    return conv_send(conv, buf, len, 1);
}

int tern_conv_trysend(tern_conv_t conv, const void *buf, size_t len)
{
    CORE_CS_SCOPE();
    return conv_send(conv, buf, len, 0);
}

int tern_conv_flush(tern_conv_t h)
{
    CORE_CS_SCOPE();
    int rc = conv_api_state();
    if (rc) return rc;
    if (!conv_valid(h) || h->mode != CONV_MODE_SEND) return TERN_ERR_INVAL;
    if (h->home_failed) return TERN_ERR_PEER_FAILED;
    h->flush_done = 0;
    uint64_t x = h->credit;
    h->credit = 0;
    conv_to_home(h, CONV_OP_FLUSH, 0, 0, x);
    rc = core_block(conv_flush_done, h);
    if (rc) return rc;
    return h->home_failed ? TERN_ERR_PEER_FAILED : 0;
}

static inline int conv_check_recv(tern_conv_t h, const void *buf, size_t cap)
{
    int rc = conv_api_state();
    if (rc) return rc;
    if (!conv_valid(h) || h->mode == CONV_MODE_SEND) return TERN_ERR_INVAL;
    if ((buf == NULL && cap > 0) || buf == TERN_IN_PLACE) return TERN_ERR_BUFFER;
    if (cap > PTRDIFF_MAX) return TERN_ERR_INVAL;
    return 0;
}

static int conv_irecv(tern_conv_t h, void *buf, size_t cap, core_req_t **out)
{
    if (h->home_failed && h->in_head == NULL) return TERN_ERR_PEER_FAILED;
    core_req_t *r = core_req_alloc(CORE_REQ_RECV);
    if (r == NULL) return TERN_ERR_NOMEM;
    r->state = CORE_RS_POSTED;
    r->peer = -1;
    r->ctx = CORE_CTX_NONE; /* in no matching queue: core_peer_failed leaves it to us */
    r->src = -1;
    r->buf = buf;
    r->len = cap;
    r->user = h;
    *out = r;
    if (h->mode == TERN_BROADCAST && h->in_head) {
        struct conv_in *in = h->in_head;
        h->in_head = in->next;
        if (h->in_head == NULL) h->in_tail = NULL;
        conv_complete(r, in->src, in->data, in->len);
        conv_consumed(h, in->len);
        free(in->data);
        free(in);
        return 0;
    }
    r->next = NULL;
    if (h->pend_tail)
        h->pend_tail->next = r;
    else
        h->pend_head = r;
    h->pend_tail = r;
    h->npend++;
    if (h->mode == TERN_FCFS) conv_to_home(h, CONV_OP_WANT, 0, 0, 0);
    return 0;
}

int tern_conv_irecv(tern_conv_t conv, void *buf, size_t cap, tern_request_t *req)
{
    CORE_CS_SCOPE();
    int rc = conv_check_recv(conv, buf, cap);
    if (rc) return rc;
    if (req == NULL) return TERN_ERR_INVAL;
    rc = conv_irecv(conv, buf, cap, req);
    if (rc == 0) *req = core_req_handle(*req); /* a public handle carries its generation */
    return rc;
}

int tern_conv_recv(tern_conv_t conv, void *buf, size_t cap, size_t *len)
{
    CORE_CS_SCOPE();
    int rc = conv_check_recv(conv, buf, cap);
    if (rc) return rc;
    core_req_t *r;
    rc = conv_irecv(conv, buf, cap, &r);
    if (rc) return rc;
    rc = core_wait(r);
    if (rc) return rc;
    rc = r->err;
    if (len && (rc == 0 || rc == TERN_ERR_TRUNCATE)) *len = r->bytes;
    core_req_free(r);
    return rc;
}

int tern_conv_check(tern_conv_t conv, int *flag)
{
    CORE_CS_SCOPE();
    int rc = conv_api_state();
    if (rc) return rc;
    if (!conv_valid(conv) || conv->mode == CONV_MODE_SEND || flag == NULL) return TERN_ERR_INVAL;
    if (conv->mode == TERN_BROADCAST) {
        if (conv->in_head == NULL) core_progress();
        if (conv->in_head == NULL && conv->home_failed) return TERN_ERR_PEER_FAILED;
        *flag = conv->in_head != NULL;
        return 0;
    }
    if (conv->home_failed) return TERN_ERR_PEER_FAILED;
    conv->peek_done = 0;
    conv_to_home(conv, CONV_OP_PEEK, 0, 0, 0);
    rc = core_block(conv_peek_done, conv);
    if (rc) return rc;
    if (conv->home_failed) return TERN_ERR_PEER_FAILED;
    *flag = conv->peek > 0;
    return 0;
}
