/*
 * ofi_mr.c - the registration cache of the ofi transport.
 *
 * Registering memory costs a system call and, on hardware providers, pinning its pages;
 * a program that sends from the same buffers again and again (every benchmark, most
 * solvers) should pay it once. Entries cover whole pages, are found by a linear scan
 * (the cache is small: TERN_OFI_MR_CACHE entries), and the least recently used idle
 * entry is closed when a new one would exceed the bound. An entry in use (a peer may be
 * reading it) is never closed.
 *
 * What it does not see: a buffer freed and its addresses mapped again. Tern does not
 * intercept free/munmap. For the software providers (tcp, udp, sockets) a registration
 * is bookkeeping only - the bytes are read from the address at the time of the read - so
 * a stale entry reads the new memory, which is right. Providers that pin pages ask for
 * FI_MR_ALLOCATED (verbs, efa, cxi, psm3) and bring libfabric's own registration cache,
 * whose memory monitors do see unmaps: for them ofi.c turns this cache off
 * (cap 0) and every send registers through libfabric's cache. FABRIC.md says so.
 */
#include "transport/ofi/ofi_mr.h"

#include <stdlib.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

void ofi_mr_cache_init(struct ofi_mr_cache *c, struct fid_domain *domain, struct fid_ep *ep,
                       uint64_t mode, int cap)
{
    *c = (struct ofi_mr_cache){.domain = domain, .ep = ep, .mode = mode, .cap = cap < 0 ? 0 : cap};
    c->next_key = 1;
}

static void ofi_mr_close(struct ofi_mr *m)
{
    if (m->mr) fi_close(&m->mr->fid);
    free(m);
}

static int ofi_mr_make(struct ofi_mr_cache *c, uintptr_t base, size_t len, struct ofi_mr **out)
{
    struct ofi_mr *m = calloc(1, sizeof *m);
    if (m == NULL) return -FI_ENOMEM;
    m->base = base;
    m->len = len;
    uint64_t want = (c->mode & FI_MR_PROV_KEY) ? 0 : c->next_key++;
    int rc = fi_mr_reg(c->domain, (void *)base, len, FI_REMOTE_READ, 0, want, 0, &m->mr, NULL);
    if (rc == 0 && (c->mode & FI_MR_ENDPOINT)) {
        rc = fi_mr_bind(m->mr, &c->ep->fid, 0);
        if (rc == 0) rc = fi_mr_enable(m->mr);
    }
    if (rc) {
        ofi_mr_close(m);
        return rc;
    }
    m->key = fi_mr_key(m->mr);
    *out = m;
    return 0;
}

/* Close the least recently used idle entry. Returns 0 if there was none. */
static int ofi_mr_evict(struct ofi_mr_cache *c)
{
    int lru = -1;
    for (int i = 0; i < c->n; i++)
        if (c->ents[i]->refs == 0 && (lru < 0 || c->ents[i]->used < c->ents[lru]->used)) lru = i;
    if (lru < 0) return 0;
    ofi_mr_close(c->ents[lru]);
    c->ents[lru] = c->ents[--c->n];
    c->evictions++;
    return 1;
}

int ofi_mr_get(struct ofi_mr_cache *c, const void *addr, size_t len, int cacheable,
               struct ofi_mr **out)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)addr, end = a + (len ? len : 1);
    uintptr_t base = a & ~(page - 1), top = (end + page - 1) & ~(page - 1);
    if (!cacheable || c->cap == 0) {
        int rc = ofi_mr_make(c, base, top - base, out);
        if (rc == 0) (*out)->refs = 1;
        return rc;
    }
    for (int i = 0; i < c->n; i++) {
        struct ofi_mr *m = c->ents[i];
        if (m->base <= a && end <= m->base + m->len) {
            m->refs++;
            m->used = ++c->clock;
            c->hits++;
            *out = m;
            return 0;
        }
    }
    c->misses++;
    /* Room first: idle entries beyond the bound go, oldest first. Entries in use may
     * take the cache past it for a while. */
    while (c->n >= c->cap && ofi_mr_evict(c)) {
    }
    if (c->n == c->room) {
        int room = c->room ? 2 * c->room : 16;
        struct ofi_mr **e = realloc(c->ents, (size_t)room * sizeof *e);
        if (e == NULL) return -FI_ENOMEM;
        c->ents = e;
        c->room = room;
    }
    struct ofi_mr *m;
    int rc = ofi_mr_make(c, base, top - base, &m);
    if (rc) return rc;
    m->cached = 1;
    m->refs = 1;
    m->used = ++c->clock;
    c->ents[c->n++] = m;
    *out = m;
    return 0;
}

void ofi_mr_put(struct ofi_mr_cache *c, struct ofi_mr *m)
{
    (void)c;
    if (--m->refs > 0) return;
    if (!m->cached) ofi_mr_close(m);
}

uint64_t ofi_mr_remote(const struct ofi_mr_cache *c, const struct ofi_mr *m, const void *addr)
{
    if (c->mode & FI_MR_VIRT_ADDR) return (uint64_t)(uintptr_t)addr;
    return (uint64_t)((uintptr_t)addr - m->base);
}

void ofi_mr_cache_fini(struct ofi_mr_cache *c)
{
    for (int i = 0; i < c->n; i++)
        ofi_mr_close(c->ents[i]);
    free(c->ents);
    c->ents = NULL;
    c->n = c->room = 0;
}
