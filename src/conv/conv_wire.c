/*
 * conv_wire.c - the wire of conversations: one active-message handler for every
 * conversation operation, chunking of messages larger than a transport frame, and the
 * layer's init/finalize.
 *
 * A message larger than one frame travels as a first frame (the header, whose len is the
 * whole size, and the first piece) followed by CONV_OP_MORE frames. Frames between one
 * pair of processes arrive in order, and a chunked message is always sent in one go
 * (nothing else is sent to that peer in between), so the receiver needs just one
 * reassembly buffer per source rank.
 */
#include <stdlib.h>
#include <string.h>

#include "conv/conv.h"
#include "core/core.h"
#include "util/log.h"

struct conv_part {
    struct conv_wire w;  /* header of the message being reassembled */
    unsigned char *data; /* whole message */
    size_t got;
    int active;
};

static struct conv_part *conv_parts; /* by source world rank */

/* Bytes of data per frame to dest. */
static size_t conv_wire_room(int dest)
{
    return core_am_room(dest) - sizeof(struct conv_wire);
}

int conv_wire_send(int dest, const struct conv_wire *w, const void *data, size_t len)
{
    size_t room = conv_wire_room(dest);
    struct conv_wire more = {.op = CONV_OP_MORE};
    const unsigned char *p = data;
    size_t off = 0;
    do {
        size_t n = len - off < room ? len - off : room;
        struct iovec iov[2] = {{(void *)(off ? &more : w), sizeof *w}, {(void *)(p + off), n}};
        int rc = core_am_sendv(dest, CONV_AM_HANDLER, iov, 2);
        if (rc) return rc;
        off += n;
    } while (off < len);
    return 0;
}

static void conv_dispatch(int src, const struct conv_wire *w, unsigned char *data, size_t len)
{
    switch (w->op) {
    case CONV_OP_OPEN:
    case CONV_OP_CLOSE:
    case CONV_OP_SEND:
    case CONV_OP_WANT:
    case CONV_OP_CONSUMED:
    case CONV_OP_PEEK:
    case CONV_OP_RETURN:
    case CONV_OP_FLUSH:
        conv_home_recv(src, w, data, len);
        return;
    case CONV_OP_OPENED:
    case CONV_OP_CLOSED:
    case CONV_OP_SENT:
    case CONV_OP_ROOM:
    case CONV_OP_DELIVER:
    case CONV_OP_PEEKED:
    case CONV_OP_FAILED:
    case CONV_OP_CREDIT:
    case CONV_OP_REVOKE:
    case CONV_OP_FLUSHED:
        conv_member_recv(src, w, data, len);
        return;
    default:
        UTIL_ERROR("dropping a conversation frame with unknown op %u from rank %d", (unsigned)w->op,
                   src);
        free(data);
    }
}

/* Ops whose header len counts data bytes that follow. */
static int conv_op_has_data(uint8_t op)
{
    return op == CONV_OP_OPEN || op == CONV_OP_SEND || op == CONV_OP_DELIVER;
}

static void conv_am(int src, const void *payload, size_t plen)
{
    struct conv_wire w;
    if (plen < sizeof w || src < 0 || src >= core.size) {
        UTIL_ERROR("dropping a %zu-byte conversation frame from rank %d", plen, src);
        return;
    }
    memcpy(&w, payload, sizeof w);
    const unsigned char *piece = (const unsigned char *)payload + sizeof w;
    size_t n = plen - sizeof w;
    struct conv_part *pt = &conv_parts[src];

    if (w.op == CONV_OP_MORE) {
        if (!pt->active || n > pt->w.len - pt->got) {
            UTIL_ERROR("dropping a stray conversation continuation from rank %d", src);
            return;
        }
        memcpy(pt->data + pt->got, piece, n);
        pt->got += n;
        if (pt->got == pt->w.len) {
            pt->active = 0;
            conv_dispatch(src, &pt->w, pt->data, pt->got);
            pt->data = NULL;
        }
        return;
    }
    if (pt->active) {
        UTIL_ERROR("conversation message from rank %d cut short (%zu of %zu bytes)", src, pt->got,
                   (size_t)pt->w.len);
        free(pt->data);
        pt->data = NULL;
        pt->active = 0;
    }
    size_t len = conv_op_has_data(w.op) ? (size_t)w.len : 0;
    if (n > len) {
        UTIL_ERROR("dropping a malformed conversation frame (op %u) from rank %d", (unsigned)w.op,
                   src);
        return;
    }
    unsigned char *data = NULL;
    if (len) {
        data = malloc(len);
        if (data == NULL) core_fatal("out of memory receiving a conversation message");
        memcpy(data, piece, n);
    }
    if (n < len) {
        pt->w = w;
        pt->data = data;
        pt->got = n;
        pt->active = 1;
        return;
    }
    conv_dispatch(src, &w, data, len);
}

/* A peer died: drop what it was sending us, and let the home and member sides react. */
static void conv_failed(int rank)
{
    struct conv_part *pt = &conv_parts[rank];
    free(pt->data);
    pt->data = NULL;
    pt->active = 0;
    conv_home_failed(rank);
    conv_member_failed(rank);
}

static void conv_fini(void)
{
    conv_member_fini();
    conv_home_fini();
    if (conv_parts) {
        for (int r = 0; r < core.size; r++)
            free(conv_parts[r].data);
        free(conv_parts);
    }
    conv_parts = NULL;
}

int conv_init(void)
{
    conv_parts = calloc((size_t)core.size, sizeof *conv_parts);
    if (conv_parts == NULL) return TERN_ERR_NOMEM;
    int rc = core_am_register(CONV_AM_HANDLER, conv_am);
    if (rc == 0) rc = core_atfini(conv_fini);
    if (rc == 0) rc = core_failure_hook_add(conv_failed);
    if (rc) {
        free(conv_parts);
        conv_parts = NULL;
    }
    return rc;
}
