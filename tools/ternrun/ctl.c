/*
 * ctl.c - framing and queueing of the root <-> proxy control channel (see ctl.h).
 */
#include "ctl.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

long run_ctl_fill(struct run_ctl_reader *r, int fd)
{
    if (r->skip) {
        memmove(r->buf, r->buf + r->skip, r->len - r->skip);
        r->len -= r->skip;
        r->skip = 0;
    }
    if (r->cap - r->len < 65536) {
        size_t cap = r->cap ? r->cap * 2 : 131072;
        char *b = realloc(r->buf, cap);
        if (b == NULL) return -1;
        r->buf = b;
        r->cap = cap;
    }
    ssize_t n;
    do {
        n = read(fd, r->buf + r->len, r->cap - r->len);
    } while (n < 0 && errno == EINTR);
    if (n > 0) r->len += (size_t)n;
    return (long)n;
}

int run_ctl_next(struct run_ctl_reader *r, struct run_ctl_hdr *h, char **payload)
{
    size_t avail = r->len - r->skip;
    if (avail < sizeof *h) return 0;
    memcpy(h, r->buf + r->skip, sizeof *h);
    if (h->zero != 0 || h->len > RUN_CTL_MAX_PAYLOAD) return -1;
    if (avail < sizeof *h + h->len) return 0; /* run_ctl_fill grows the buffer */
    /* Copied out so the payload can end in a NUL without touching the next frame. */
    if (r->frame_cap < (size_t)h->len + 1) {
        char *f = realloc(r->frame, (size_t)h->len + 1);
        if (f == NULL) return -1;
        r->frame = f;
        r->frame_cap = (size_t)h->len + 1;
    }
    memcpy(r->frame, r->buf + r->skip + sizeof *h, h->len);
    r->frame[h->len] = '\0';
    r->skip += sizeof *h + h->len;
    *payload = r->frame;
    return 1;
}

void run_ctl_reader_free(struct run_ctl_reader *r)
{
    free(r->buf);
    free(r->frame);
    r->buf = r->frame = NULL;
    r->len = r->cap = r->skip = r->frame_cap = 0;
}

int run_ctl_flush(struct run_ctl_queue *q)
{
    if (q->broken) return -1;
    while (q->off < q->len) {
        ssize_t n = send(q->fd, q->buf + q->off, q->len - q->off, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) n = write(q->fd, q->buf + q->off, q->len - q->off);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
            q->broken = 1;
            return -1;
        }
        q->off += (size_t)n;
    }
    q->off = q->len = 0;
    return 0;
}

int run_ctl_send(struct run_ctl_queue *q, int type, int arg, int arg2, const void *payload,
                 size_t len)
{
    if (q->broken) return -1;
    if (len > RUN_CTL_MAX_PAYLOAD) return -1;
    struct run_ctl_hdr h = {.len = (uint32_t)len, .type = (uint16_t)type, .arg = arg, .arg2 = arg2};
    size_t need = q->len + sizeof h + len;
    if (need > q->cap) {
        if (q->off > 0) { /* reclaim what was written */
            memmove(q->buf, q->buf + q->off, q->len - q->off);
            q->len -= q->off;
            q->off = 0;
            need = q->len + sizeof h + len;
        }
        if (need > q->cap) {
            size_t cap = q->cap ? q->cap : 65536;
            while (cap < need)
                cap *= 2;
            char *b = realloc(q->buf, cap);
            if (b == NULL) {
                q->broken = 1;
                return -1;
            }
            q->buf = b;
            q->cap = cap;
        }
    }
    memcpy(q->buf + q->len, &h, sizeof h);
    if (len) memcpy(q->buf + q->len + sizeof h, payload, len);
    q->len += sizeof h + len;
    return run_ctl_flush(q) < 0 ? -1 : 0;
}

void run_ctl_flush_blocking(struct run_ctl_queue *q, int timeout_ms)
{
    while (run_ctl_flush(q) == 1) {
        struct pollfd p = {.fd = q->fd, .events = POLLOUT};
        if (poll(&p, 1, timeout_ms) <= 0) return;
    }
}

void run_ctl_queue_free(struct run_ctl_queue *q)
{
    free(q->buf);
    q->buf = NULL;
    q->len = q->off = q->cap = 0;
}

const char *run_ctl_str(const char *payload, size_t len, size_t *pos)
{
    if (*pos >= len) return NULL;
    const char *s = payload + *pos;
    *pos += strlen(s) + 1;
    return s;
}
