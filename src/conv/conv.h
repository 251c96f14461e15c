/*
 * conv.h - conversations (named channels processes join and leave at will): the wire
 * format of the conversation active messages and the calls between the three files of
 * this layer.
 *
 *   conv_wire.c    the one AM handler: reassembles chunked messages, dispatches by op;
 *                  chunked sends; init and finalize of the layer
 *   conv_home.c    the home of a conversation (name hash -> rank): members, the FCFS
 *                  queue and its "wants", broadcast forwarding, the queue bound
 *   conv_api.c     tern_conv_* (checks at the door), handles and the member side
 *
 * A conversation lives at its home rank; members reach it only with AMs, so the home
 * serves only while it is inside some tern call (any blocking call serves).
 */
#ifndef TERN_CONV_H
#define TERN_CONV_H

#include <stddef.h>
#include <stdint.h>

/* The AM handler id conversations use (core.h's one table; users include core.h). */
#define CONV_AM_HANDLER CORE_AM_CONV

enum conv_op {
    CONV_OP_OPEN = 1, /* member -> home: join (mode, hid; name follows) */
    CONV_OP_OPENED,   /* home -> member: status, cid, mid */
    CONV_OP_CLOSE,    /* member -> home: leave (flags: CONV_FLAG_LINGER) */
    CONV_OP_CLOSED,   /* home -> member */
    CONV_OP_SEND,     /* member -> home: a message (len: whole size; data follows) */
    CONV_OP_SENT,     /* home -> sender: status OK or TERN_ERR_AGAIN (queue full) */
    CONV_OP_ROOM,     /* home -> sender refused earlier: room was freed, try again */
    CONV_OP_WANT,     /* FCFS member -> home: hand me the next message */
    CONV_OP_DELIVER,  /* home -> receiver: a message (src: original sender) */
    CONV_OP_CONSUMED, /* broadcast member -> home: len more bytes were read */
    CONV_OP_PEEK,     /* member -> home: how many messages wait in the FCFS queue? */
    CONV_OP_PEEKED,   /* home -> member: len = that number */
    CONV_OP_MORE,     /* the next piece of the message being reassembled from src */
    CONV_OP_FAILED,   /* home -> receiver: sender src of the conversation died; len: how
                       * many of this receiver's wants the home dropped (FCFS) */
    CONV_OP_CREDIT,   /* home -> sender: `credit` more bytes may be sent unanswered */
    CONV_OP_REVOKE,   /* home -> sender: hand back all your credit (a receiver joins) */
    CONV_OP_RETURN,   /* sender -> home: `credit` unused bytes handed back */
    CONV_OP_FLUSH,    /* sender -> home: `credit` handed back; answer when all has arrived */
    CONV_OP_FLUSHED,  /* home -> sender */
};

#define CONV_FLAG_LINGER   0x1
#define CONV_FLAG_CREDITED 0x2 /* SEND: paid from credit; accepted without an answer */

/* Member modes (the SEND one is internal; the receive ones are TERN_FCFS/TERN_BROADCAST). */
#define CONV_MODE_SEND 0x10

/* What a message costs against TERN_CONV_MAX_QUEUED_BYTES: its bytes plus bookkeeping,
 * so that even empty messages cannot pile up without bound. */
#define CONV_MSG_COST(len) ((size_t)(len) + 64)

/* Every conversation AM payload starts with this. */
struct conv_wire {
    uint8_t op;
    uint8_t mode;
    uint8_t flags;
    uint8_t pad;
    int32_t status;
    uint32_t cid;    /* the home's id of the conversation */
    uint32_t mid;    /* the home's id of the member */
    uint32_t hid;    /* the member's own id of its handle */
    int32_t src;     /* DELIVER: world rank that sent the message */
    uint64_t len;    /* SEND/DELIVER: whole message bytes; OPEN: name bytes; PEEKED: count */
    uint64_t credit; /* SEND/RETURN/FLUSH: credit handed back; SENT/CREDIT: credit granted */
};

/* conv_wire.c */
int conv_init(void);
/* Send one conversation AM to dest: w, then `len` bytes of data, in as many frames as
 * the peer's transport needs (continuations are CONV_OP_MORE). */
int conv_wire_send(int dest, const struct conv_wire *w, const void *data, size_t len);

/* conv_home.c: a whole message for the home from src (data is malloc'd, taken over;
 * NULL when len is 0). */
void conv_home_recv(int src, const struct conv_wire *w, unsigned char *data, size_t len);
void conv_home_fini(void);
/* Rank `rank` died: it leaves every conversation homed here. */
void conv_home_failed(int rank);

/* conv_api.c: a whole message for a member */
void conv_member_recv(int src, const struct conv_wire *w, unsigned char *data, size_t len);
void conv_member_fini(void);
/* Rank `rank` died: handles on conversations homed there fail. */
void conv_member_failed(int rank);

/* FNV-1a of a name; the home is hash % world size. */
static inline uint32_t conv_hash(const char *name, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)name[i];
        h *= 16777619u;
    }
    return h;
}

#endif
