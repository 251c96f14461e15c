/*
 * shmem_impl.h - internals of the SHMEM layer (include/shmem.h): its state, the
 * symmetric-heap allocator, address translation and the one-sided protocol.
 *
 * The layer sits on the core like the native API: the same process may use both. PEs
 * whose memory this process can map (core_peer_can_map: this node, shm) have their heap
 * mapped here (direct loads, stores and CPU atomics); every other PE, and globals of
 * other PEs, are reached by active messages (handlers OSH_AM_REQ and OSH_AM_REP) served by the
 * target's progress engine.
 */
#ifndef TERN_SHMEM_IMPL_H
#define TERN_SHMEM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "shmem.h"
#include "util/shmseg.h"

/* Active-message handler ids of this layer (core.h's one table). */
#define OSH_AM_REQ CORE_AM_SHMEM_REQ /* a request to the target: put, get, atomic */
#define OSH_AM_REP CORE_AM_SHMEM_REP /* the target's answer: ack, data, fetched value */

/* Outstanding requests per target before an issuing PE waits for acks (flow control,
 * so a long stream of puts does not pile up unbounded in the core's pending queues). */
#define OSH_WINDOW 64

/* Blocks of the symmetric heap are aligned to this (a cache line: no false sharing). */
#define OSH_ALIGN 64

/* Where a symmetric object lives, in terms every PE understands. */
enum osh_kind { OSH_HEAP = 0, OSH_DATA = 1 };

struct osh_loc {
    int kind;
    uint64_t off; /* from the heap base, or from the executable's load base */
};

/* ---- heap allocator (shmem_heap.c): deterministic, so equal calls give equal offsets -- */

struct osh_blk {
    uint64_t off, size;
    int used;
};

/* Blocks sorted by offset that tile [0, size) exactly; free neighbours never touch. */
struct osh_heap {
    struct osh_blk *b;
    size_t n, cap;
    uint64_t size;
};

int osh_heap_init(struct osh_heap *h, uint64_t size);
void osh_heap_release(struct osh_heap *h);
/* First fit: *off of a block of `size` bytes aligned to `align` (a power of two >=
 * OSH_ALIGN). TERN_ERR_NOMEM when no free block holds it. */
int osh_heap_alloc(struct osh_heap *h, uint64_t align, uint64_t size, uint64_t *off);
/* Free the used block starting at off (coalescing). TERN_ERR_INVAL if there is none. */
int osh_heap_free(struct osh_heap *h, uint64_t off);
/* Size of the used block at off, or 0 if off starts no used block. */
uint64_t osh_heap_size_of(const struct osh_heap *h, uint64_t off);
/* Grow or shrink the used block at off in place: 0, or TERN_ERR_NOMEM if the next block
 * is not free or not large enough. */
int osh_heap_resize(struct osh_heap *h, uint64_t off, uint64_t size);

/* ---- state -------------------------------------------------------------------------- */

/* A get or fetching atomic waiting for its reply. */
struct osh_slot {
    char *dest;        /* where reply data goes */
    size_t esize;      /* element size of reply data */
    ptrdiff_t dstride; /* bytes between elements at dest */
    size_t remaining;  /* bytes still to come */
    uint64_t val;      /* fetched value */
    int pe;
    int used;
    int done;
    int nbi; /* freed by the reply handler when done */
    int err;
    uint32_t next_free;
};

#define OSH_NO_SLOT UINT32_MAX

struct osh_state {
    int up;        /* between shmem_init and shmem_finalize */
    int done;      /* shmem_finalize ran */
    int owns_core; /* shmem_init started tern, shmem_finalize ends it */
    int me, npes;
    size_t heap_size;
    char *heap;     /* my symmetric heap */
    struct shmseg heap_seg; /* my heap's segment, while it has a name in /dev/shm */
    char **base;         /* per PE: its heap mapped here, or NULL (reach it by messages) */
    uintptr_t load_base; /* of the executable (globals) */
    uintptr_t data_lo[4], data_hi[4];
    int ndata;
    uintptr_t relro_lo, relro_hi; /* read-only after relocation, inside the data segment */
    /* Globals shared on this node (TERN_SHMEM_SHARE_GLOBALS): the executable's writable
     * segment [data_pg_lo, data_pg_lo + data_len) is a shared mapping, and data_base[pe]
     * maps PE pe's copy here (NULL: reach its globals by message). */
    uintptr_t data_pg_lo;
    size_t data_len;
    char **data_base;
    struct shmseg data_seg; /* my globals' segment, while it has a name (never unmapped) */
    int data_ok;          /* every PE runs the same executable layout: globals are symmetric */
    uint64_t nout;        /* requests not yet acknowledged / replied */
    uint64_t nout_direct; /* of those, to PEs whose heap is mapped (fence must wait) */
    uint64_t *pe_out;     /* per PE */
    struct osh_slot *slots;
    uint32_t nslots, slot_free;
    int err;          /* sticky, for shmemx_error */
    unsigned nfailed; /* core.nfailed when last looked at */
    int nremote;      /* PEs that may send us requests (any other PE: globals always go by
                       * message), so direct operations also serve them */
    unsigned pokes;
    struct osh_heap alloc;
};

extern struct osh_state osh;

/* ---- shmem_env.c ---------------------------------------------------------------------- */

void osh_fatal(const char *fn, int err, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
void osh_error(int err); /* remember the first error for shmemx_error */

/* The entry checks of every routine: initialised, PE in range. */
static inline void osh_check(const char *fn)
{
    if (__builtin_expect(!osh.up, 0))
        osh_fatal(fn, TERN_ERR_NOT_INIT, "shmem_init has not been called (or shmem_finalize has)");
}

static inline void osh_check_pe(const char *fn, int pe)
{
    osh_check(fn);
    if (__builtin_expect((unsigned)pe >= (unsigned)osh.npes, 0))
        osh_fatal(fn, TERN_ERR_RANK, "PE %d out of range (0..%d)", pe, osh.npes - 1);
}

/* Translate a symmetric address of len bytes: 0, or TERN_ERR_INVAL if it is not one. */
static inline int osh_loc(const void *addr, size_t len, struct osh_loc *l)
{
    uintptr_t a = (uintptr_t)addr, h = (uintptr_t)osh.heap;
    if (a - h < osh.heap_size && len <= osh.heap_size - (a - h)) {
        l->kind = OSH_HEAP;
        l->off = a - h;
        return 0;
    }
    for (int i = 0; i < osh.ndata; i++)
        if (a >= osh.data_lo[i] && a < osh.data_hi[i] && len <= osh.data_hi[i] - a) {
            l->kind = OSH_DATA;
            l->off = a - osh.load_base;
            return 0;
        }
    return TERN_ERR_INVAL;
}

/* osh_loc or the fatal "not symmetric" error naming the routine. */
void osh_loc_must(const char *fn, const void *addr, size_t len, struct osh_loc *l);

/* A PE busy with direct operations (on itself or its node) still serves the PEs that
 * reach it by messages (remote PEs, and any PE writing our globals): every 64th direct
 * operation runs the progress engine once. */
static inline void osh_poke(void)
{
    if (osh.nremote && (++osh.pokes & 63) == 0) (void)core_progress();
}

/* Where a PE's object is directly addressable from here: NULL if only by messages. */
static inline char *osh_direct(const void *addr, const struct osh_loc *l, int pe)
{
    if (pe == osh.me) return (char *)(uintptr_t)addr;
    if (l->kind == OSH_HEAP) return osh.base[pe] ? osh.base[pe] + l->off : NULL;
    if (osh.data_base && osh.data_base[pe])
        return osh.data_base[pe] + (l->off - (osh.data_pg_lo - osh.load_base));
    return NULL;
}

/* ---- shmem_rma.c ---------------------------------------------------------------------- */

enum osh_amo_op {
    OSH_AMO_FETCH = 1,
    OSH_AMO_SET,
    OSH_AMO_SWAP,
    OSH_AMO_CSWAP,
    OSH_AMO_ADD,
    OSH_AMO_AND,
    OSH_AMO_OR,
    OSH_AMO_XOR,
};

int osh_rma_init(void);
/* Contiguous (esize 1, strides 1) or strided transfers; strides in bytes. */
void osh_put(const char *fn, void *dest, const void *src, size_t nelems, size_t esize,
             ptrdiff_t dstride, ptrdiff_t sstride, int pe);
void osh_get(const char *fn, void *dest, const void *src, size_t nelems, size_t esize,
             ptrdiff_t dstride, ptrdiff_t sstride, int pe, int nbi);
void osh_put_signal(const char *fn, void *dest, const void *src, size_t nbytes, uint64_t *sig,
                    uint64_t signal, int sig_op, int pe);
/* An atomic of size 4 or 8 bytes; returns the old value when fetch is set. */
uint64_t osh_amo(const char *fn, int op, void *dest, size_t size, uint64_t v1, uint64_t v2, int pe,
                 int fetch);
void osh_quiet(void);
void osh_rma_release(void);

/* ---- shmem_coll.c --------------------------------------------------------------------- */

#define OSH_TEAM_MAGIC 0x7465616du /* "team" */

struct shmem_team {
    uint32_t magic;
    tern_comm_t comm; /* members only */
    int owns_comm;
};

int osh_teams_init(void);
/* shmem_aset.c: the active sets' teams (made at the first use of each set). */
int osh_aset_init(void);
void osh_aset_release(int free_comms);
void osh_teams_release(int free_comms);

#endif
