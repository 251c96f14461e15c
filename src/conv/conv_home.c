/*
 * conv_home.c - the home of conversations. Each name hashes to one rank (FNV-1a % world
 * size), which keeps that conversation's state and serves it from its progress engine:
 *
 *   members     who joined, as sender, FCFS receiver or broadcast receiver
 *   FCFS queue  messages waiting for an FCFS receiver, in arrival order
 *   wants       FCFS receivers waiting for a message, in the order they asked
 *
 * FCFS delivery is pull-based: a receiver that waits sends WANT, and the home hands the
 * head of the queue to the oldest want. So each message goes to exactly one FCFS receiver
 * and each receiver sees an order-preserving sub-stream. Broadcast delivery is pushed:
 * every accepted message is forwarded at once to every broadcast member present, and
 * frames between two processes are ordered, so each sees every later message in order.
 *
 * The bound (TERN_CONV_MAX_QUEUED_BYTES) counts, per conversation, the FCFS queue plus
 * the largest number of bytes forwarded to one broadcast member and not yet read by it
 * (members report reads with CONSUMED). A SEND that would exceed it is refused (SENT
 * with TERN_ERR_AGAIN, the data dropped here but still held by the sender, which is
 * blocked in its call) and the sender is told when room appears (ROOM). A message is
 * always accepted into an empty conversation, so no size is refused forever.
 */
#include <stdlib.h>
#include <string.h>

#include "conv/conv.h"
#include "core/core.h"
#include "util/log.h"
#include "util/tunables.h"

struct conv_msg {
    struct conv_msg *next;
    int src;
    size_t len;
    unsigned char *data;
};

struct conv_member {
    int rank;
    uint32_t hid;
    uint8_t mode; /* 0: free slot */
    uint8_t wait_room;
    uint8_t revoked;    /* sender: REVOKE sent, RETURN not yet here */
    size_t outstanding; /* broadcast: forwarded, not yet reported read */
    size_t credit;      /* sender: bytes of the bound lent to it and not yet used */
};

/* A receiver's OPEN waiting until every sender has handed its credit back. */
struct conv_join {
    struct conv_join *next;
    int src;
    uint32_t hid;
    uint8_t mode;
};

struct conv_conv {
    struct conv_conv *hnext; /* hash chain */
    char *name;
    size_t namelen;
    uint32_t hash;
    uint32_t cid;
    struct conv_member *m;
    uint32_t nm, capm;
    uint32_t nmembers, nfcfs, nbcast;
    uint32_t *wants; /* FIFO of member ids: wants[whead .. whead + wcount) */
    size_t wcap, whead, wcount;
    struct conv_msg *qhead, *qtail;
    size_t qbytes, qcount;
    size_t reserved; /* sum of the members' credit */
    struct conv_join *joins, *joins_tail;
    int linger;
};

static struct {
    struct conv_conv **by_cid;
    uint32_t ncid;
    uint32_t *free_cids;
    uint32_t nfree;
    struct conv_conv **buckets;
    size_t nbuckets, nconvs;
} home;

static void home_reply(int dest, uint8_t op, uint32_t hid, int32_t status, uint32_t cid,
                       uint32_t mid, uint64_t len)
{
    struct conv_wire w = {
        .op = op, .status = status, .cid = cid, .mid = mid, .hid = hid, .len = len};
    int rc = conv_wire_send(dest, &w, NULL, 0);
    if (rc && rc != TERN_ERR_PEER_FAILED)
        UTIL_ERROR("conversation: cannot answer rank %d: %s", dest, tern_strerror(rc));
}

static struct conv_conv *home_find(const char *name, size_t len, uint32_t hash)
{
    if (home.nbuckets == 0) return NULL;
    for (struct conv_conv *c = home.buckets[hash % home.nbuckets]; c; c = c->hnext)
        if (c->hash == hash && c->namelen == len && memcmp(c->name, name, len) == 0) return c;
    return NULL;
}

static int home_rehash(size_t nb)
{
    struct conv_conv **b = calloc(nb, sizeof *b);
    if (b == NULL) return TERN_ERR_NOMEM;
    for (size_t i = 0; i < home.nbuckets; i++) {
        struct conv_conv *c = home.buckets[i];
        while (c) {
            struct conv_conv *next = c->hnext;
            c->hnext = b[c->hash % nb];
            b[c->hash % nb] = c;
            c = next;
        }
    }
    free(home.buckets);
    home.buckets = b;
    home.nbuckets = nb;
    return 0;
}

static struct conv_conv *home_create(const char *name, size_t len, uint32_t hash)
{
    if (home.nconvs + 1 > 2 * home.nbuckets &&
        home_rehash(home.nbuckets ? 4 * home.nbuckets : 64) != 0)
        return NULL;
    struct conv_conv *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->name = malloc(len);
    if (c->name == NULL) goto fail_conv;
    memcpy(c->name, name, len);
    c->namelen = len;
    c->hash = hash;
    if (home.nfree) {
        c->cid = home.free_cids[--home.nfree];
    } else {
        struct conv_conv **t = realloc(home.by_cid, (home.ncid + 1) * sizeof *t);
        if (t == NULL) goto fail_name;
        home.by_cid = t;
        uint32_t *f = realloc(home.free_cids, (home.ncid + 1) * sizeof *f);
        if (f == NULL) goto fail_name;
        home.free_cids = f;
        c->cid = home.ncid++;
    }
    home.by_cid[c->cid] = c;
    c->hnext = home.buckets[hash % home.nbuckets];
    home.buckets[hash % home.nbuckets] = c;
    home.nconvs++;
    return c;

fail_name:
    free(c->name);
fail_conv:
    free(c);
    return NULL;
}

static void home_destroy(struct conv_conv *c)
{
    struct conv_conv **pp = &home.buckets[c->hash % home.nbuckets];
    while (*pp != c)
        pp = &(*pp)->hnext;
    *pp = c->hnext;
    home.by_cid[c->cid] = NULL;
    home.free_cids[home.nfree++] = c->cid;
    home.nconvs--;
    if (c->qcount)
        UTIL_DEBUG(2, "conversation '%.*s' ends: %zu unread message(s) discarded", (int)c->namelen,
                   c->name, c->qcount);
    while (c->qhead) {
        struct conv_msg *q = c->qhead;
        c->qhead = q->next;
        free(q->data);
        free(q);
    }
    while (c->joins) {
        struct conv_join *j = c->joins;
        c->joins = j->next;
        free(j);
    }
    free(c->wants);
    free(c->m);
    free(c->name);
    free(c);
}

/* The conversation and member an AM from src names, or NULL for a stale or forged one. */
static struct conv_conv *home_lookup(int src, const struct conv_wire *w, struct conv_member **mp)
{
    if (w->cid >= home.ncid || home.by_cid[w->cid] == NULL) return NULL;
    struct conv_conv *c = home.by_cid[w->cid];
    if (w->mid >= c->nm || c->m[w->mid].mode == 0 || c->m[w->mid].rank != src) return NULL;
    *mp = &c->m[w->mid];
    return c;
}

/* Bytes the conversation holds: its FCFS queue plus the most one broadcast member has
 * not read. */
static size_t home_held(const struct conv_conv *c)
{
    size_t q = 0;
    for (uint32_t i = 0; i < c->nm; i++)
        if (c->m[i].mode == TERN_BROADCAST && c->m[i].outstanding > q) q = c->m[i].outstanding;
    return c->qbytes + q;
}

/* What counts against the bound: what it holds and what it has lent to senders. */
static size_t home_queued(const struct conv_conv *c)
{
    return home_held(c) + c->reserved;
}

/* Room for a message of cost len? A conversation that holds nothing accepts any size (so
 * that no message is refused forever, whatever others hold in credit). */
static int home_room(const struct conv_conv *c, size_t len)
{
    size_t q = home_queued(c);
    return home_held(c) == 0 ||
           (q <= util_tun.conv_max_queued_bytes && len <= util_tun.conv_max_queued_bytes - q);
}

/* How much credit one sender may hold: none while a receiver waits to join (see
 * home_open) or while FCFS and broadcast receivers share the conversation (a message
 * then counts twice against the bound, once in the queue and once per broadcast member,
 * while credit pays for it once). */
static size_t home_credit_target(const struct conv_conv *c)
{
    if (c->joins || (c->nfcfs && c->nbcast)) return 0;
    size_t t = util_tun.conv_max_queued_bytes / 4;
    return util_tun.conv_credit < t ? util_tun.conv_credit : t;
}

/* Lend member m more credit, up to the target and the room left; returns the amount. */
static size_t home_grant(struct conv_conv *c, struct conv_member *m)
{
    size_t t = home_credit_target(c);
    if (m->mode != CONV_MODE_SEND || m->revoked || m->credit >= t) return 0;
    size_t q = home_queued(c), bound = util_tun.conv_max_queued_bytes;
    size_t g = t - m->credit, avail = q < bound ? bound - q : 0;
    if (g > avail) g = avail;
    m->credit += g;
    c->reserved += g;
    return g;
}

/* Member m hands back x bytes of credit. */
static void home_release(struct conv_conv *c, struct conv_member *m, size_t x)
{
    if (x > m->credit) {
        UTIL_ERROR("conversation: rank %d returned %zu bytes of credit, it held %zu", m->rank, x,
                   m->credit);
        x = m->credit;
    }
    m->credit -= x;
    c->reserved -= x;
}

static void home_add_member(struct conv_conv *c, int src, uint32_t hid, uint8_t mode);

/* Receivers waiting to join come in once no sender holds credit any more. */
static void home_joins_maybe(struct conv_conv *c)
{
    if (c->reserved) return;
    while (c->joins) {
        struct conv_join *j = c->joins;
        c->joins = j->next;
        if (c->joins == NULL) c->joins_tail = NULL;
        home_add_member(c, j->src, j->hid, j->mode);
        free(j);
    }
}

/* Tell every refused sender that something left the conversation's queue. */
static void home_wake_senders(struct conv_conv *c)
{
    for (uint32_t i = 0; i < c->nm; i++) {
        struct conv_member *m = &c->m[i];
        if (m->mode && m->wait_room) {
            m->wait_room = 0;
            home_reply(m->rank, CONV_OP_ROOM, m->hid, 0, c->cid, i, 0);
        }
    }
}

/* Hand queued messages to waiting FCFS receivers, oldest want first. */
static void home_match(struct conv_conv *c)
{
    int moved = 0;
    while (c->qhead && c->wcount) {
        uint32_t mid = c->wants[c->whead];
        c->whead++;
        c->wcount--;
        struct conv_member *m = &c->m[mid];
        if (m->mode != TERN_FCFS) continue;
        struct conv_msg *q = c->qhead;
        c->qhead = q->next;
        if (c->qhead == NULL) c->qtail = NULL;
        c->qbytes -= CONV_MSG_COST(q->len);
        c->qcount--;
        struct conv_wire w = {.op = CONV_OP_DELIVER, .hid = m->hid, .src = q->src, .len = q->len};
        int rc = conv_wire_send(m->rank, &w, q->data, q->len);
        if (rc && rc != TERN_ERR_PEER_FAILED)
            UTIL_ERROR("conversation: cannot deliver to rank %d: %s", m->rank, tern_strerror(rc));
        free(q->data);
        free(q);
        moved = 1;
    }
    if (c->wcount == 0) c->whead = 0;
    if (moved) home_wake_senders(c);
}

/* Remove a conversation nobody is in, unless it lingers with unread messages. */
static void home_maybe_destroy(struct conv_conv *c)
{
    if (c->nmembers == 0 && (!c->linger || c->qhead == NULL)) home_destroy(c);
}

/* Make src (its handle hid) a member and answer its OPEN. */
static void home_add_member(struct conv_conv *c, int src, uint32_t hid, uint8_t mode)
{
    uint32_t mid = 0;
    while (mid < c->nm && c->m[mid].mode != 0)
        mid++;
    if (mid == c->nm) {
        if (c->nm == c->capm) {
            uint32_t cap = c->capm ? 2 * c->capm : 4;
            struct conv_member *t = realloc(c->m, cap * sizeof *t);
            if (t == NULL) {
                home_reply(src, CONV_OP_OPENED, hid, TERN_ERR_NOMEM, 0, 0, 0);
                return;
            }
            c->m = t;
            c->capm = cap;
        }
        c->nm++;
    }
    c->m[mid] = (struct conv_member){.rank = src, .hid = hid, .mode = mode};
    c->nmembers++;
    if (mode == TERN_FCFS) c->nfcfs++;
    if (mode == TERN_BROADCAST) c->nbcast++;
    home_reply(src, CONV_OP_OPENED, hid, 0, c->cid, mid, 0);
}

static void home_open(int src, const struct conv_wire *w, const char *name, size_t len)
{
    uint32_t hash = conv_hash(name, len);
    struct conv_conv *c = home_find(name, len, hash);
    if (c == NULL) c = home_create(name, len, hash);
    if (c == NULL) {
        home_reply(src, CONV_OP_OPENED, w->hid, TERN_ERR_NOMEM, 0, 0, 0);
        return;
    }
    /* One process is FCFS or broadcast receiver of a conversation, never both. */
    if (w->mode != CONV_MODE_SEND) {
        int clash = 0;
        for (uint32_t i = 0; i < c->nm; i++)
            if (c->m[i].rank == src && c->m[i].mode != 0 && c->m[i].mode != CONV_MODE_SEND &&
                c->m[i].mode != w->mode)
                clash = 1;
        for (struct conv_join *j = c->joins; j; j = j->next)
            if (j->src == src && j->mode != w->mode) clash = 1;
        if (clash) {
            home_reply(src, CONV_OP_OPENED, w->hid, TERN_ERR_INVAL, 0, 0, 0);
            home_maybe_destroy(c);
            return;
        }
    }
    /* A receiver joining changes where messages go (and a broadcast receiver sees only
     * what reaches the conversation after it joined). A message a sender paid from
     * credit may still be on its way; its tern_conv_send has returned, so the sender
     * counts it as sent before this join. So the join waits until every sender has
     * handed its credit back (REVOKE / RETURN): RETURN travels behind the sender's
     * messages, so by then they have all arrived. */
    if (w->mode != CONV_MODE_SEND && c->reserved) {
        struct conv_join *j = malloc(sizeof *j);
        if (j == NULL) {
            home_reply(src, CONV_OP_OPENED, w->hid, TERN_ERR_NOMEM, 0, 0, 0);
            return;
        }
        *j = (struct conv_join){.src = src, .hid = w->hid, .mode = w->mode};
        if (c->joins_tail)
            c->joins_tail->next = j;
        else
            c->joins = j;
        c->joins_tail = j;
        for (uint32_t i = 0; i < c->nm; i++) {
            struct conv_member *m = &c->m[i];
            if (m->mode != CONV_MODE_SEND || m->credit == 0 || m->revoked) continue;
            m->revoked = 1;
            home_reply(m->rank, CONV_OP_REVOKE, m->hid, 0, c->cid, i, 0);
        }
        return;
    }
    home_add_member(c, src, w->hid, w->mode);
    if (c->nmembers == 0) home_maybe_destroy(c); /* the member could not be added */
}

static void home_close(int src, struct conv_conv *c, struct conv_member *m,
                       const struct conv_wire *w)
{
    uint32_t hid = m->hid;
    home_release(c, m, m->credit); /* its credited messages arrived before the CLOSE */
    if (m->mode == TERN_FCFS) c->nfcfs--;
    if (m->mode == TERN_BROADCAST) c->nbcast--;
    m->mode = 0;
    c->nmembers--;
    while (c->nm && c->m[c->nm - 1].mode == 0)
        c->nm--;
    if (w->flags & CONV_FLAG_LINGER) c->linger = 1;
    home_reply(src, CONV_OP_CLOSED, hid, 0, 0, 0, 0);
    home_wake_senders(c); /* its outstanding bytes no longer count */
    home_joins_maybe(c);
    home_maybe_destroy(c);
}

static void home_credit_reply(int dest, uint8_t op, struct conv_conv *c, struct conv_member *m,
                              int32_t status, size_t credit)
{
    struct conv_wire w = {.op = op,
                          .status = status,
                          .cid = c->cid,
                          .mid = (uint32_t)(m - c->m),
                          .hid = m->hid,
                          .credit = credit};
    int rc = conv_wire_send(dest, &w, NULL, 0);
    if (rc && rc != TERN_ERR_PEER_FAILED)
        UTIL_ERROR("conversation: cannot answer rank %d: %s", dest, tern_strerror(rc));
}

static void home_enqueue(int src, struct conv_conv *c, unsigned char *data, size_t len);

/*
 * A message from sender m. Credited: already paid from m's credit, so accepted without
 * an answer; when m's credit runs below half its target the home lends it more
 * (CREDIT), so a steady stream never waits for the home. Otherwise the sender waits for
 * SENT: it hands back the credit it had left (too little for this message), and the
 * answer lends it new credit.
 */
static void home_send(int src, struct conv_conv *c, struct conv_member *m,
                      const struct conv_wire *w, unsigned char *data, size_t len)
{
    size_t cost = CONV_MSG_COST(len);
    if (w->flags & CONV_FLAG_CREDITED) {
        home_release(c, m, cost < m->credit ? cost : m->credit);
        home_enqueue(src, c, data, len);
        size_t t = home_credit_target(c);
        if (t && m->credit <= t / 2 && !m->revoked) {
            size_t g = home_grant(c, m);
            if (g) home_credit_reply(src, CONV_OP_CREDIT, c, m, 0, g);
        }
        home_joins_maybe(c);
        return;
    }
    home_release(c, m, (size_t)w->credit);
    if (!home_room(c, cost)) {
        m->wait_room = 1;
        home_credit_reply(src, CONV_OP_SENT, c, m, TERN_ERR_AGAIN, 0);
        free(data);
        home_joins_maybe(c);
        return;
    }
    home_enqueue(src, c, data, len);
    home_credit_reply(src, CONV_OP_SENT, c, m, 0, home_grant(c, m));
    home_joins_maybe(c);
}

/* Forward an accepted message to every broadcast member and queue it for FCFS. */
static void home_enqueue(int src, struct conv_conv *c, unsigned char *data, size_t len)
{
    for (uint32_t i = 0; i < c->nm; i++) {
        struct conv_member *b = &c->m[i];
        if (b->mode != TERN_BROADCAST) continue;
        struct conv_wire d = {.op = CONV_OP_DELIVER, .hid = b->hid, .src = src, .len = len};
        int rc = conv_wire_send(b->rank, &d, data, len);
        if (rc && rc != TERN_ERR_PEER_FAILED)
            UTIL_ERROR("conversation: cannot forward to rank %d: %s", b->rank, tern_strerror(rc));
        b->outstanding += CONV_MSG_COST(len);
    }
    /* FCFS receivers get it if there are any; with no receiver at all it waits for the
     * first FCFS one. Broadcast-only conversations keep nothing. */
    if (c->nfcfs == 0 && c->nbcast > 0) {
        free(data);
        return;
    }
    struct conv_msg *q = malloc(sizeof *q);
    if (q == NULL) core_fatal("out of memory queueing a conversation message");
    *q = (struct conv_msg){.src = src, .len = len, .data = data};
    if (c->qtail)
        c->qtail->next = q;
    else
        c->qhead = q;
    c->qtail = q;
    c->qbytes += CONV_MSG_COST(len);
    c->qcount++;
    home_match(c);
}

static void home_want(struct conv_conv *c, uint32_t mid)
{
    if (c->whead + c->wcount == c->wcap) {
        if (c->whead > 0) {
            memmove(c->wants, c->wants + c->whead, c->wcount * sizeof *c->wants);
            c->whead = 0;
        } else {
            size_t cap = c->wcap ? 2 * c->wcap : 8;
            uint32_t *t = realloc(c->wants, cap * sizeof *t);
            if (t == NULL) core_fatal("out of memory recording a conversation receive");
            c->wants = t;
            c->wcap = cap;
        }
    }
    c->wants[c->whead + c->wcount++] = mid;
    home_match(c);
}

void conv_home_recv(int src, const struct conv_wire *w, unsigned char *data, size_t len)
{
    if (w->op == CONV_OP_OPEN) {
        home_open(src, w, (const char *)data, len);
        free(data);
        return;
    }
    struct conv_member *m = NULL;
    struct conv_conv *c = home_lookup(src, w, &m);
    if (c == NULL) {
        UTIL_ERROR("dropping a conversation op %u from rank %d for an unknown member",
                   (unsigned)w->op, src);
        free(data);
        return;
    }
    switch (w->op) {
    case CONV_OP_CLOSE:
        home_close(src, c, m, w);
        break;
    case CONV_OP_SEND:
        home_send(src, c, m, w, data, len);
        return;
    case CONV_OP_RETURN:
    case CONV_OP_FLUSH:
        home_release(c, m, (size_t)w->credit);
        if (w->op == CONV_OP_RETURN) m->revoked = 0;
        if (w->op == CONV_OP_FLUSH) home_credit_reply(src, CONV_OP_FLUSHED, c, m, 0, 0);
        home_wake_senders(c);
        home_joins_maybe(c);
        break;
    case CONV_OP_WANT:
        home_want(c, w->mid);
        break;
    case CONV_OP_CONSUMED:
        m->outstanding = w->len < m->outstanding ? m->outstanding - w->len : 0;
        home_wake_senders(c);
        break;
    case CONV_OP_PEEK:
        home_reply(src, CONV_OP_PEEKED, m->hid, 0, 0, 0, c->qcount);
        break;
    }
    free(data);
}

/* How many wants of member mid wait; with drop, remove them (and any of members that
 * are gone) from the FIFO, keeping the order of the rest. */
static size_t home_wants_filter(struct conv_conv *c, uint32_t mid, int drop)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < c->wcount; i++) {
        uint32_t w = c->wants[c->whead + i];
        if (w == mid) n++;
        if ((drop && w == mid) || c->m[w].mode != TERN_FCFS) continue;
        c->wants[k++] = w;
    }
    c->whead = 0;
    c->wcount = k;
    return n;
}

/*
 * Rank `rank` died: it leaves every conversation homed here, as if it had closed without
 * lingering. Messages it had sent and the home had accepted stay. When it was a sender,
 * every receiver is told (FAILED): a receive it has waiting may have been waiting for a
 * message of the dead sender, so those fail with TERN_ERR_PEER_FAILED, like a wildcard
 * receive in core; receives posted later wait normally. The home drops that receiver's
 * wants and says how many, so the member fails exactly the receives they stood for (a
 * WANT still in flight is matched later as usual).
 */
void conv_home_failed(int rank)
{
    for (uint32_t cid = 0; cid < home.ncid; cid++) {
        struct conv_conv *c = home.by_cid[cid];
        if (c == NULL) continue;
        int gone = 0, sender = 0;
        for (struct conv_join **jp = &c->joins; *jp;) {
            struct conv_join *j = *jp;
            if (j->src != rank) {
                jp = &j->next;
                continue;
            }
            *jp = j->next;
            free(j);
        }
        c->joins_tail = NULL;
        for (struct conv_join *j = c->joins; j; j = j->next)
            c->joins_tail = j;
        for (uint32_t i = 0; i < c->nm; i++) {
            struct conv_member *m = &c->m[i];
            if (m->mode == 0 || m->rank != rank) continue;
            if (m->mode == CONV_MODE_SEND) sender = 1;
            home_release(c, m, m->credit);
            if (m->mode == TERN_FCFS) c->nfcfs--;
            if (m->mode == TERN_BROADCAST) c->nbcast--;
            m->mode = 0;
            c->nmembers--;
            gone = 1;
        }
        if (!gone) continue;
        (void)home_wants_filter(c, UINT32_MAX, 0);
        if (sender)
            for (uint32_t i = 0; i < c->nm; i++) {
                struct conv_member *m = &c->m[i];
                if (m->mode != TERN_FCFS && m->mode != TERN_BROADCAST) continue;
                size_t dropped = m->mode == TERN_FCFS ? home_wants_filter(c, i, 1) : 0;
                struct conv_wire w = {
                    .op = CONV_OP_FAILED, .hid = m->hid, .src = rank, .len = dropped};
                int rc = conv_wire_send(m->rank, &w, NULL, 0);
                if (rc && rc != TERN_ERR_PEER_FAILED)
                    UTIL_ERROR("conversation: cannot tell rank %d of a failure: %s", m->rank,
                               tern_strerror(rc));
            }
        while (c->nm && c->m[c->nm - 1].mode == 0)
            c->nm--;
        UTIL_DEBUG(1, "conversation '%.*s': member rank %d failed", (int)c->namelen, c->name, rank);
        home_wake_senders(c); /* its unread broadcast bytes no longer count */
        home_match(c);
        home_joins_maybe(c);
        home_maybe_destroy(c);
    }
}

void conv_home_fini(void)
{
    for (uint32_t i = 0; i < home.ncid; i++)
        if (home.by_cid[i]) {
            struct conv_conv *c = home.by_cid[i];
            c->nmembers = 0;
            c->linger = 0;
            home_destroy(c);
        }
    free(home.by_cid);
    free(home.free_cids);
    free(home.buckets);
    memset(&home, 0, sizeof home);
}
