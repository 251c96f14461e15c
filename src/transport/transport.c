/*
 * transport.c - the registry of transports and the shared "not supported" stubs.
 */
#include "transport/transport.h"

#include <string.h>

#include "tern.h"
#include "util/mem.h"

/* ofi before tcp: a job that lists both takes the fabric (ofi exists only in builds with
 * libfabric, and is not in TERN_TRANSPORTS's default list). */
#ifdef TERN_HAVE_OFI
void tl_ofi_info(FILE *out); /* ofi.c */
#endif

void tl_fabric_info(FILE *out)
{
#ifdef TERN_HAVE_OFI
    tl_ofi_info(out);
#else
    fprintf(out, "  ofi: not built (no libfabric at build time)\n");
#endif
}

const struct tl_ops *const tl_registry[] = {&tl_self_ops, &tl_shm_ops, TL_OFI_ENTRY &tl_tcp_ops,
                                            NULL};

int tl_stub_get(int src, void *local, uint64_t remote, size_t len)
{
    (void)src, (void)local, (void)remote, (void)len;
    return TERN_ERR_UNSUPPORTED;
}

int tl_stub_getv(int src, const struct iovec *local, int nl, const struct iovec *remote, int nr,
                 size_t total)
{
    (void)src, (void)local, (void)nl, (void)remote, (void)nr, (void)total;
    return TERN_ERR_UNSUPPORTED;
}

int tl_stub_send_ref(int dest, const struct iovec *iov, int iovcnt, size_t total, void *cookie)
{
    (void)dest, (void)iov, (void)iovcnt, (void)total, (void)cookie;
    return TERN_ERR_UNSUPPORTED;
}

void tl_stub_unref(int rank)
{
    (void)rank;
}

void tl_stub_sleep_begin(void) {}
void tl_stub_sleep_wait(int timeout_ms)
{
    (void)timeout_ms;
}
void tl_stub_sleep_end(void) {}
void tl_stub_wake_self(void) {}
int tl_stub_noop(void)
{
    return 0;
}
void tl_stub_wake(int rank)
{
    (void)rank;
}

/* Both helpers move message payloads into frames and back (ofi's send buffers sit 8 bytes
 * of its header plus the core's ahead of a page-aligned user buffer: the distance where
 * glibc's rep movsb is slow on AMD Zen), so they copy with util_copy; pieces under 1 KiB
 * (headers) still go to memcpy there. */
void tl_iov_copy(void *dst, const struct iovec *iov, int iovcnt)
{
    char *d = dst;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len) util_copy(d, iov[i].iov_base, iov[i].iov_len);
        d += iov[i].iov_len;
    }
}

void tl_iov_move(const struct iovec *dst, int nd, const struct iovec *src, int ns, size_t total)
{
    int i = 0, j = 0;
    size_t di = 0, sj = 0; /* bytes used of dst[i], src[j] */
    while (total > 0 && i < nd && j < ns) {
        size_t a = dst[i].iov_len - di, b = src[j].iov_len - sj;
        size_t n = a < b ? a : b;
        if (n > total) n = total;
        if (n) util_copy((char *)dst[i].iov_base + di, (const char *)src[j].iov_base + sj, n);
        total -= n;
        di += n;
        sj += n;
        if (di == dst[i].iov_len) i++, di = 0;
        if (sj == src[j].iov_len) j++, sj = 0;
    }
}
