/*
 * self.c - the transport to myself. Frames are queued and handed back on the next
 * poll (never from inside send, so the core is never re-entered), and get() is a
 * plain memcpy within this address space.
 */
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "tern.h"
#include "transport/transport.h"
#include "util/mem.h"

struct self_frame {
    struct self_frame *next;
    size_t len;
    char data[];
};

static struct {
    tl_recv_fn recv;
    int rank;
    struct self_frame *head, *tail;
} self;

static int self_reaches(const struct boot *boot, int rank)
{
    return rank == boot->rank;
}

static int self_open(const struct tl_env *env, const int *peers, int n)
{
    (void)peers, (void)n;
    self.recv = env->recv;
    self.rank = env->boot->rank;
    self.head = self.tail = NULL;
    return 0;
}

static int self_send(int dest, const struct iovec *iov, int iovcnt, size_t total)
{
    (void)dest;
    struct self_frame *f = malloc(sizeof *f + total);
    if (f == NULL) return TERN_ERR_NOMEM;
    f->next = NULL;
    f->len = total;
    tl_iov_copy(f->data, iov, iovcnt);
    if (self.tail)
        self.tail->next = f;
    else
        self.head = f;
    self.tail = f;
    return 0;
}

static int self_poll(void)
{
    int n = 0;
    /* Deliver only what was queued before this poll, so a frame sent from inside the
     * up-call waits for the next poll. */
    struct self_frame *last = self.tail;
    while (self.head) {
        struct self_frame *f = self.head;
        self.head = f->next;
        if (self.head == NULL) self.tail = NULL;
        int was_last = (f == last);
        self.recv(self.rank, f->data, f->len);
        free(f);
        n++;
        if (was_last) break;
    }
    return n;
}

static int self_get(int src, void *local, uint64_t remote, size_t len)
{
    (void)src;
    if (len) util_copy(local, (const void *)(uintptr_t)remote, len);
    return 0;
}

static int self_getv(int src, const struct iovec *local, int nl, const struct iovec *remote, int nr,
                     size_t total)
{
    (void)src;
    tl_iov_move(local, nl, remote, nr, total);
    return 0;
}

static void self_limits(struct tl_limits *out)
{
    /* My own memory: mapped by definition, and get() is a memcpy. No doorbell: a frame
     * to myself is found by my own next poll. */
    *out = (struct tl_limits){.max_frame = 1u << 20,
                              .max_inline = 64,
                              .eager_max = 4096,
                              .caps = TL_CAP_MAP | TL_CAP_ATOMIC | TL_CAP_GET};
}

static void self_close(void)
{
    while (self.head) {
        struct self_frame *f = self.head;
        self.head = f->next;
        free(f);
    }
    self.tail = NULL;
}

const struct tl_ops tl_self_ops = {
    .size = sizeof(struct tl_ops),
    .name = "self",
    .implicit = 1,
    .reaches = self_reaches,
    .open = self_open,
    .connect = tl_stub_noop,
    .ready = tl_stub_noop,
    .send = self_send,
    .send_ref = tl_stub_send_ref,
    .unref = tl_stub_unref,
    .place_abort = tl_stub_unref,
    .poll = self_poll,
    .get = self_get,
    .getv = self_getv,
    .sleep_begin = tl_stub_sleep_begin,
    .sleep_wait = tl_stub_sleep_wait,
    .sleep_end = tl_stub_sleep_end,
    .wake = tl_stub_wake,
    .busy = tl_stub_noop,
    .health = tl_stub_noop,
    .limits = self_limits,
    .close = self_close,
    .wake_self = tl_stub_wake_self,
};
