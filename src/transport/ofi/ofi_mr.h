/*
 * ofi_mr.h - registrations of the memory the ofi transport lets peers read (single-copy
 * large messages through FI_RMA), behind a small bounded cache.
 */
#ifndef TERN_OFI_MR_H
#define TERN_OFI_MR_H

#include <stddef.h>
#include <stdint.h>

struct fid_domain;
struct fid_ep;
struct fid_mr;

/* One registered range of whole pages. */
struct ofi_mr {
    uintptr_t base;    /* first byte (page aligned) */
    size_t len;        /* bytes (whole pages) */
    struct fid_mr *mr; /* the provider's registration */
    uint64_t key;      /* what a peer names it by (fi_mr_key) */
    int refs;          /* sends reading it now; an entry in use is never evicted */
    int cached;        /* 0: closed when refs drops to 0 */
    uint64_t used;     /* LRU clock of the last use */
};

/* The cache of one domain. */
struct ofi_mr_cache {
    struct fid_domain *domain;
    struct fid_ep *ep; /* bound to each registration when the provider asks (FI_MR_ENDPOINT) */
    uint64_t mode;     /* the provider's mr_mode (FI_MR_*) */
    int cap;           /* entries kept after their last use; 0: no caching */
    int n;             /* entries in ents */
    int room;          /* entries ents has room for */
    struct ofi_mr **ents;
    uint64_t clock;
    uint64_t next_key; /* keys tern picks when the provider does not (no FI_MR_PROV_KEY) */
    unsigned long hits, misses, evictions;
};

/* Start an empty cache for domain/ep holding at most cap idle entries. */
void ofi_mr_cache_init(struct ofi_mr_cache *c, struct fid_domain *domain, struct fid_ep *ep,
                       uint64_t mode, int cap);

/*
 * A registration that covers [addr, addr + len) for remote reads, taken from the cache or
 * made (whole pages) and kept: *out holds a reference until ofi_mr_put. `cacheable` 0
 * registers the range on its own and closes it at the put (memory tern frees itself).
 * Returns 0 or a negative libfabric error.
 */
int ofi_mr_get(struct ofi_mr_cache *c, const void *addr, size_t len, int cacheable,
               struct ofi_mr **out);

/* Drop a reference taken by ofi_mr_get. */
void ofi_mr_put(struct ofi_mr_cache *c, struct ofi_mr *m);

/* The address a peer reads byte `addr` of registration m at: the virtual address where the
 * provider wants them (FI_MR_VIRT_ADDR), else the offset into the registration. */
uint64_t ofi_mr_remote(const struct ofi_mr_cache *c, const struct ofi_mr *m, const void *addr);

/* Close every registration (at close; in-use ones too). */
void ofi_mr_cache_fini(struct ofi_mr_cache *c);

#endif
