/*
 * shm.c - the shared-memory transport between processes of one node.
 *
 * Every process owns one segment: its inbox, with room for a channel per local sender,
 * and its pool of cells. Memory grows with the number of processes and with the pairs
 * that talk, not with the square of the processes (shm_ring.h):
 *   - a channel is a single-producer/single-consumer ring of half-cache-line slots (the
 *     fastbox ring): a frame of up to 24 bytes (an MPI message of up to 8) travels inside
 *     the slot together with its sequence word, so one release store publishes it, and
 *     two such frames share a line; a longer one runs on over the next slots. Its pages
 *     are touched by the sender on its first send (and as the first lap goes on), never
 *     before: a pair that never talks costs nothing;
 *   - larger frames go into a cell of the sender's own pool and their slot only says
 *     which; the receiver gives the cell back when it is done (a lock-free return stack).
 *     A sender whose pool is empty gets TERN_ERR_AGAIN and the core queues the frame and
 *     keeps progressing, so cells come back as long as every process polls: there is no
 *     cycle to deadlock in. Cells held by a receiver that died are taken back when the
 *     death is seen (shm_health).
 * Slots are the single ordered queue, so small and large frames never overtake.
 *
 * A receiver learns of a new sender from its segment's list of senders: the sender
 * counts itself on `nsenders` and takes the list's first free entry before its first
 * frame (shm_senders_join: safe when a sender dies half-way), and the receiver
 * polls only the channels on that list; one load of `nsenders` per poll notices newcomers.
 *
 * Single-copy transfer of large messages is get(): Linux cross-memory attach
 * (process_vm_readv) from the sender's buffer straight into the receiver's; getv() does
 * the same between two lists of blocks (non-contiguous datatypes on either side). When
 * the kernel forbids it the core streams the data through cells instead.
 *
 * Cooperative copy: a sender waiting for its rendezvous has nothing else to do, and a
 * single copy leaves memory bandwidth unused. For large gets the receiver publishes a
 * chunk ticket in the channel's transport lines and sends the sender a HELP control
 * frame; both then take chunks (receiver: process_vm_readv, sender: process_vm_writev)
 * until none is left. A sender busy elsewhere never answers and the receiver simply
 * takes every chunk, so nobody ever waits on the helper to start.
 *
 * Waiting: a receiver about to sleep sets `sleeping` in its segment and waits on the
 * `bell` futex; a sender rings the bell only when it sees `sleeping` set, so the fast
 * path has no system call. Segments are unlinked once every peer has attached: even
 * kill -9 of every rank leaves nothing in /dev/shm.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sched.h>
#include <signal.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "tern.h"
#include "transport/shm/shm_coop.h"
#include "transport/shm/shm_ring.h"
#include "transport/transport.h"
#include "util/log.h"
#include "util/shmseg.h"
#include "util/topo.h"
#include "util/tunables.h"

#define SHM_MAGIC 0x7465726eu /* "tern" */
#define SHM_VERSION                                                                                \
    11u /* 3: channels on first use, a pool of cells per process; 4: packed small rings;           \
          5: the consumer leaves continuation slots as they are; 6: mid cells;                     \
          7: a frame's offset in its cell, in the slot; 8: and in its first slot;                  \
          9: a skip slot sends a frame that would wrap to slot 0; 10: asym (membarrier);           \
          11: slots of half a cache line */
#define SHM_HDR_SIZE 4096u

/*
 * The segment header, at offset 0 of every segment. Then, each part page-aligned:
 *   [senders : int32 x nlocal][next : uint32 per cell][channels : nlocal x chan_stride]
 *   [pool : nsmall cells of cell_size, nbig of SHM_FRAME_CELLS x cell_size, nmid of
 *    mid_size]
 * Only the first three parts are reserved at creation (a few pages); channels and cells
 * are touched as they are used (shm_touch).
 */
struct shm_seg {
    uint32_t magic;
    uint32_t version;
    int32_t owner;
    int32_t nlocal;
    uint64_t nlines;
    uint64_t nsmall, nbig;
    uint64_t cell_size;
    uint64_t list_off, next_off, chan_off, chan_stride, pool_off;
    uint64_t seg_size;
    uint64_t nmid, mid_size; /* mid cells (shm_ring.h); none: 0, 0 */
    uint32_t asym; /* 1: the owner calls membarrier before it sleeps (senders need no fence) */
    _Alignas(64) _Atomic uint32_t sleeping; /* owner is (about to be) asleep on bell */
    _Alignas(64) _Atomic uint32_t bell;     /* futex word senders ring */
    _Alignas(64) _Atomic uint32_t nsenders; /* entries taken in the senders list */
    _Alignas(64) _Atomic uint32_t ret_head; /* the pool's return stack */
};
_Static_assert(sizeof(struct shm_seg) <= SHM_HDR_SIZE, "the header fits its page");

/* The cooperative-copy descriptor, in the transport lines of the receiver's channel
 * from this sender. Only the receiver writes the fields; `ticket` hands out chunks. */
struct shm_coop {
    _Alignas(64) _Atomic uint64_t ticket; /* generation << 32 | next chunk */
    _Atomic uint32_t done;                /* chunks the sender finished */
    _Atomic uint32_t redo;                /* 1 + a chunk the sender could not copy, or 0 */
    _Alignas(64) uint32_t nchunks;
    uint16_t nl, nr; /* vectored (getv): pieces of the two lists, else 0 */
    uint64_t chunk;
    uint64_t len;
    uint64_t dst; /* receiver's buffer; vectored: the receiver's list of its pieces */
    uint64_t src; /* sender's buffer; vectored: the receiver's list of the sender's pieces */
    uint64_t off; /* vectored: where in the lists' bytes chunk 0 starts */
};
_Static_assert(sizeof(struct shm_coop) <= 128, "the coop descriptor has two transport lines");

struct shm_ctrl_help {
    uint32_t gen;
};

struct shm_peer {
    int world_rank;
    pid_t pid;
    uint32_t coop_gen;         /* last generation I (as receiver) published to this peer */
    struct shm_seg *seg;       /* the peer's segment, mapped */
    size_t seg_len;            /* bytes mapped */
    struct shm_chan out;       /* my channel in the peer's inbox (I produce) */
    struct shm_chan in;        /* the peer's channel in my inbox (I consume) */
    struct shm_pool_view pool; /* the peer's pool (its cells in my inbox's frames) */
    int out_on;                /* I am on the peer's list of senders */
    int cma;                   /* single copy from this peer: 1 yes, 0 forbidden */
    int cma_seen;              /* ... and one has worked (no permission probe needed) */
    uint32_t coop_skip;        /* plain gets left before the next cooperative one */
    uint32_t coop_backoff;     /* the last skip (the peer declined to help: 1, 2, .. 64) */
    int pidfd;                 /* readable once the peer has exited; -1: use kill(pid, 0) */
    int dead;                  /* reported through env->failed */
    int nofence;               /* publish without a fence: see shm_wake */
};

static struct {
    tl_recv_fn recv;
    tl_failed_fn failed;
    struct boot *boot;
    int nlocal;
    int *lidx_of;           /* world rank -> local index, -1 if not on my node */
    struct shm_peer *peers; /* by local index */
    int *active;            /* local indexes of peers (not me) */
    int nactive;
    int *talk; /* local indexes of the peers that send to me, as they came */
    uint32_t ntalk;
    struct shm_seg *my_seg;
    _Atomic int32_t *senders; /* my segment's list of senders (local index + 1) */
    size_t my_size;
    struct shmseg mine;   /* my inbox segment (unlinked once every peer attached) */
    struct shm_pool pool; /* my cells */
    uint32_t bell_seen;
    int my_li;       /* my local index */
    int populate;    /* madvise(MADV_POPULATE_WRITE) works here */
    int asym;        /* I registered for membarrier and call it before I sleep (shm_wake) */
    int asym_failed; /* a membarrier before a sleep failed: sleeps are short (shm_sleep_wait) */
    /* Every peer's pidfd, so that a liveness check is one epoll_wait, not a poll() per
     * peer: at 128 ranks on a node the per-peer polls were 127 system calls per rank
     * every TERN_FAILURE_CHECK_MS (p^2 in all), ~10% of a barrier's time. -1: not made
     * yet; -2: none (epoll failed: every peer is checked on its own). */
    int health_ep;
    /* TERN_SHM_ALIAS_BOUNCE bytes + a page, mapped on first use (shm_cma_bounced). */
    unsigned char *bounce;
    size_t bounce_len;
} shm;

static int shm_reaches(const struct boot *boot, int rank)
{
    return rank != boot->rank && boot->node_of[rank] == boot->node_of[boot->rank];
}

static size_t shm_round(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* The layout of a segment (struct shm_seg) from its geometry; true if it is consistent. */
static int shm_layout(struct shm_seg *s)
{
    uint64_t ncells = s->nsmall + s->nbig + s->nmid;
    if (s->nlocal < 1 || s->nlines < 4 || (s->nlines & (s->nlines - 1)) || s->nlines > (1u << 20) ||
        s->nsmall < 1 || s->nbig >= SHM_CELL_NONE || s->nmid >= SHM_CELL_NONE ||
        ncells >= SHM_CELL_NONE || s->cell_size < 256 || s->cell_size > (1u << 26) ||
        s->cell_size % 64 ||
        (s->nmid && (s->mid_size < 64 || s->mid_size >= s->cell_size || s->mid_size % 64)))
        return 0;
    s->list_off = SHM_HDR_SIZE;
    s->next_off = s->list_off + shm_round((size_t)s->nlocal * sizeof(int32_t), SHM_PAGE);
    s->chan_off = s->next_off + shm_round((size_t)ncells * sizeof(uint32_t), SHM_PAGE);
    /* A ring of a page or more starts on a page of its own; smaller ones (many senders,
     * shm_ring_lines) are packed, so that a pair that talks costs its ring, not a page. */
    size_t cb = shm_chan_bytes(s->nlines);
    s->chan_stride = cb < SHM_PAGE ? shm_round(cb, 64) : shm_round(cb, SHM_PAGE);
    s->pool_off = shm_round(s->chan_off + s->chan_stride * (uint64_t)s->nlocal, SHM_PAGE);
    s->seg_size = s->pool_off + shm_round(shm_pool_bytes(s->nsmall, s->nbig, s->cell_size) +
                                              s->nmid * s->mid_size,
                                          SHM_PAGE);
    return 1;
}

/*
 * Make [addr, addr + len) of a segment real memory before its first write. tmpfs hands
 * out pages on first touch, and one it cannot give (a full /dev/shm) would be a SIGBUS
 * in the middle of a copy; MADV_POPULATE_WRITE (Linux 5.14) says so with an error
 * instead. Older kernels: touch each page (the risk the reservation used to cover).
 */
static int shm_touch(void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(SHM_PAGE - 1);
    size_t n = shm_round((uintptr_t)addr + len - a, SHM_PAGE);
    while (shm.populate) {
        if (madvise((void *)a, n, MADV_POPULATE_WRITE) == 0) return 0;
        if (errno == EINTR || errno == EAGAIN) continue;
        if (errno == EINVAL || errno == ENOSYS) {
            shm.populate = 0;
            break;
        }
        UTIL_ERROR("shm: no space in /dev/shm for the shm transport's channels and cells: it "
                   "needs %zu bytes more (%s); enlarge /dev/shm (mount -o remount,size=...) or "
                   "end what uses it",
                   n, strerror(errno));
        return -1;
    }
    for (size_t off = 0; off < n; off += SHM_PAGE)
        __atomic_fetch_or((unsigned char *)(a + off), 0, __ATOMIC_RELAXED);
    return 0;
}

/*
 * Slots per ring with nlocal processes on the node: TERN_SHM_LINES, halved while the
 * nlocal - 1 rings of one inbox would hold more than TERN_SHM_RING_BUDGET bytes of
 * slots, but never below SHM_RING_MIN_LINES. Each pair that talks touches at least its
 * ring's first page, or with packed rings its share of one: at 128 ranks, 128 x 127
 * pairs x 4 KiB was 66 MB (more than Open MPI 4.1's whole 93 MB), 1 KiB rings (32 slots
 * of 32 bytes; 16 of 64 before SHM_VERSION 11) make it 21 MB.
 * A ring holds what a sender may have in flight to one receiver before it waits; with
 * ranks sharing cores that is a handful of frames per pair between two polls. Every
 * process computes the same value; peers take it from the receiver's segment anyway.
 */
#define SHM_RING_MIN_LINES 32
static uint64_t shm_ring_lines(int nlocal)
{
    uint64_t lines = (uint64_t)util_tun.shm_lines;
    if (util_tun.shm_ring_budget == 0 || nlocal < 2) return lines;
    uint64_t cap = util_tun.shm_ring_budget / ((uint64_t)(nlocal - 1) * sizeof(struct shm_line));
    while (lines > SHM_RING_MIN_LINES && lines > cap)
        lines /= 2;
    return lines;
}

/*
 * Asymmetric fences. A sender's publish and its read of the receiver's `sleeping` word
 * must not be reordered (Dekker's pattern with shm_sleep_begin's store and last look), and
 * the fence that keeps them apart waits until the frame's line has come over from the
 * receiver's cache: in a stream of small messages that wait was a tenth of each send
 * (8-64 B streams 0.122-0.143 -> 0.107-0.127 us per message without it). Where every rank
 * on the node has registered for membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), the rare
 * side pays instead: a rank about to sleep stores `sleeping`, then has the kernel run a
 * full barrier on every CPU that runs a registered process, then looks at its inbox a
 * last time. A sender that read `sleeping` as 0 ran that barrier (or a context switch,
 * which is one) either after its publish, which was then visible before the last look,
 * or before its read, which then saw the 1. The call costs the sleeper about 5 us and an
 * IPI to each core running a rank, once per sleep, so it is used only up to
 * TERN_SHM_MEMBARRIER_MAX ranks on a node. A peer that did not register (or says it does
 * not call membarrier: shm_seg.asym) keeps the fence.
 */
static void shm_asym_setup(void)
{
    if (shm.nlocal < 2 || shm.nlocal > util_tun.shm_membarrier_max) return;
    long need = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || (cmds & need) != need) return; /* before Linux 4.16, or filtered */
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) != 0) return;
    shm.asym = 1;
}

static int shm_open_fn(const struct tl_env *env, const int *peers, int n)
{
    struct boot *b = env->boot;
    memset(&shm, 0, sizeof shm);
    shm.recv = env->recv;
    shm.failed = env->failed;
    shm.boot = b;
    shm.nlocal = b->local_size;
    shm.lidx_of = malloc((size_t)b->size * sizeof(int));
    shm.peers = calloc((size_t)b->local_size, sizeof *shm.peers);
    shm.active = calloc((size_t)b->local_size, sizeof(int));
    shm.talk = calloc((size_t)b->local_size, sizeof(int));
    shm.populate = 1;
    shm.health_ep = -1;
    if (!shm.lidx_of || !shm.peers || !shm.active || !shm.talk) return TERN_ERR_NOMEM;
    for (int r = 0; r < b->size; r++)
        shm.lidx_of[r] = -1;
    for (int i = 0; i < b->local_size; i++) {
        shm.lidx_of[b->local_ranks[i]] = i;
        shm.peers[i].world_rank = b->local_ranks[i];
        shm.peers[i].pidfd = -1;
    }
    shm.my_li = shm.lidx_of[b->rank];
    for (int i = 0; i < n; i++) {
        int li = shm.lidx_of[peers[i]];
        if (li < 0) return TERN_ERR_INTERNAL;
        shm.active[shm.nactive++] = li;
    }

    struct shm_seg geo = {.nlocal = shm.nlocal,
                          .nlines = shm_ring_lines(b->local_size),
                          .nsmall = (uint64_t)util_tun.shm_cells,
                          .nbig = (uint64_t)util_tun.shm_big_cells,
                          .cell_size = shm_round(util_tun.shm_cell_size, 64)};
    if (util_tun.shm_mid_cells > 0 && util_tun.shm_mid_cell_size > 0) {
        geo.nmid = (uint64_t)util_tun.shm_mid_cells;
        geo.mid_size = shm_round(util_tun.shm_mid_cell_size, 64);
    }
    if (util_tun.shm_lines < 4 || util_tun.shm_cells < 1 || util_tun.shm_big_cells < 0 ||
        util_tun.shm_mid_cells < 0 || !shm_layout(&geo)) {
        UTIL_ERROR("shm: TERN_SHM_LINES must be a power of two between 4 and 2^20, "
                   "TERN_SHM_CELLS >= 1, TERN_SHM_BIG_CELLS >= 0, TERN_SHM_MID_CELLS >= 0 "
                   "(fewer than 2^32 cells), TERN_SHM_CELL_SIZE between 256 bytes and 64 MiB, "
                   "TERN_SHM_MID_CELL_SIZE 0 or below TERN_SHM_CELL_SIZE");
        return TERN_ERR_TUNABLE;
    }
    shm.my_size = geo.seg_size;

    /* The nonce travels to the peers with my pid (tern-shm-<rank>). Only the header, the
     * senders list and the pool's next words are reserved now; channels and cells are
     * taken from /dev/shm as they are first used (shm_touch). */
    uint64_t nonce = shmseg_nonce();
    int rc = shmseg_create_reserve(&shm.mine, b->kvsname, "shm", b->rank, nonce, shm.my_size,
                                   geo.chan_off, "shm transport inbox");
    if (rc) return rc;
    /* I read my inbox: its pages belong on my NUMA node (advisory; see shmseg_place). */
    if (util_tun.shm_place) (void)shmseg_place(&shm.mine, topo_my_numa_node());
    unsigned char *p = shm.mine.base;
    shm.my_seg = (struct shm_seg *)p;
    struct shm_seg *s = shm.my_seg;
    *s = geo;
    s->owner = b->rank;
    atomic_store(&s->sleeping, 0);
    atomic_store(&s->bell, 0);
    atomic_store(&s->nsenders, 0);
    atomic_store(&s->ret_head, SHM_CELL_NONE);
    shm.senders = (_Atomic int32_t *)(p + s->list_off);
    struct shm_pool_view v;
    shm_pool_view_init(&v, p + s->pool_off, (_Atomic uint32_t *)(p + s->next_off), &s->ret_head,
                       (uint32_t)s->nsmall, (uint32_t)s->nbig, s->cell_size);
    shm_pool_view_mid(&v, (uint32_t)s->nmid, s->mid_size);
    rc = shm_pool_init(&shm.pool, &v, shm_touch);
    if (rc) return rc;
    shm.pool.spread_ok = shm.nlocal <= SHM_SPREAD_RANKS;
    shm_asym_setup();
    s->asym = (uint32_t)shm.asym;
    s->version = SHM_VERSION;
    atomic_thread_fence(memory_order_release);
    s->magic = SHM_MAGIC;
    for (int i = 0; i < shm.nlocal; i++) {
        shm_chan_init(&shm.peers[i].in, p + s->chan_off + s->chan_stride * (size_t)i, s->nlines);
        shm.peers[i].in.src = &shm.peers[i].pool;
    }

    char key[64], val[64];
    snprintf(key, sizeof key, "tern-shm-%d", b->rank);
    snprintf(val, sizeof val, "%ld:%llx", (long)getpid(), (unsigned long long)nonce);
    return boot_put(b, key, val);
}

/* Put peer k's pidfd (of shm.active) in the liveness set, made at the first one. A peer
 * that cannot join it (no pidfd, no epoll) is checked on its own by shm_health. */
static void shm_health_watch(struct shm_peer *pe, int k)
{
    if (pe->pidfd < 0 || shm.health_ep == -2) return;
    if (shm.health_ep == -1) shm.health_ep = epoll_create1(EPOLL_CLOEXEC);
    if (shm.health_ep < 0) {
        shm.health_ep = -2; /* never again: peers already passed over are not in a set */
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)k};
    if (epoll_ctl(shm.health_ep, EPOLL_CTL_ADD, pe->pidfd, &ev) != 0) {
        /* One peer outside the set would be missed: check every peer one by one. */
        close(shm.health_ep);
        shm.health_ep = -2;
    }
}

static int shm_connect(void)
{
    struct boot *b = shm.boot;
    int my_li = shm.lidx_of[b->rank];
    for (int k = 0; k < shm.nactive; k++) {
        struct shm_peer *pe = &shm.peers[shm.active[k]];
        char key[64], val[64];
        snprintf(key, sizeof key, "tern-shm-%d", pe->world_rank);
        int rc = boot_get(b, key, val, sizeof val);
        if (rc) return rc;
        pe->pid = (pid_t)strtol(val, NULL, 10);
        /* A pidfd says "exited" even while the process is an unreaped zombie, and cannot
         * be fooled by a recycled pid; kernels before 5.3 fall back to kill(pid, 0). */
#ifdef SYS_pidfd_open
        pe->pidfd = (int)syscall(SYS_pidfd_open, pe->pid, 0);
#endif
        shm_health_watch(pe, k);
        pe->cma = util_tun.shm_cma ? 1 : 0;
        char *colon = strchr(val, ':');
        struct shmseg seg;
        if (colon == NULL) return TERN_ERR_TRANSPORT;
        rc = shmseg_attach(&seg, b->kvsname, "shm", pe->world_rank, strtoull(colon + 1, NULL, 16),
                           0, "shm transport inbox");
        if (rc) return rc;
        unsigned char *p = seg.base;
        pe->seg_len = seg.size;
        struct shm_seg *s = (struct shm_seg *)p;
        pe->seg = s;
        struct shm_seg geo = {0};
        if (seg.size >= SHM_HDR_SIZE) {
            geo.nlocal = s->nlocal;
            geo.nlines = s->nlines;
            geo.nsmall = s->nsmall;
            geo.nbig = s->nbig;
            geo.cell_size = s->cell_size;
            geo.nmid = s->nmid;
            geo.mid_size = s->mid_size;
        }
        if (seg.size < SHM_HDR_SIZE || s->magic != SHM_MAGIC || s->version != SHM_VERSION ||
            s->nlocal != shm.nlocal || !shm_layout(&geo) || geo.seg_size != (uint64_t)seg.size ||
            geo.seg_size != s->seg_size || geo.chan_off != s->chan_off ||
            geo.chan_stride != s->chan_stride || geo.pool_off != s->pool_off ||
            geo.next_off != s->next_off || geo.list_off != s->list_off) {
            UTIL_ERROR("shm: rank %d's segment is not a tern segment of this version",
                       pe->world_rank);
            return TERN_ERR_TRANSPORT;
        }
        /* Its barrier reaches me only if I registered too. */
        pe->nofence = shm.asym && s->asym == 1;
        /* Geometry from the checked copy: the peer's memory could change under us. */
        shm_chan_init(&pe->out, p + geo.chan_off + geo.chan_stride * (size_t)my_li, geo.nlines);
        pe->out.pool = &shm.pool;
        pe->out.dest = shm.active[k];
        pe->out.touch = shm_touch;
        pe->out.lines_ready = 0;
        pe->out.wrap = (uint64_t)util_tun.shm_wrap_lines;
        shm_pool_view_init(&pe->pool, p + geo.pool_off, (_Atomic uint32_t *)(p + geo.next_off),
                           &s->ret_head, (uint32_t)geo.nsmall, (uint32_t)geo.nbig, geo.cell_size);
        shm_pool_view_mid(&pe->pool, (uint32_t)geo.nmid, geo.mid_size);
    }
    return 0;
}

static int shm_ready(void)
{
    /* Everyone has attached: remove the name so nothing can be left behind. */
    shmseg_unlink(&shm.mine);
    return 0;
}

static long shm_futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* After publishing to pe: ring its bell, but only if it said it sleeps. The fence (or,
 * with pe->nofence, the sleeper's membarrier: shm_asym_setup) orders our publish before
 * our read of `sleeping`, pairing with shm_sleep_begin. */
static void shm_wake(struct shm_peer *pe)
{
    if (pe->nofence)
        atomic_signal_fence(memory_order_seq_cst); /* the compiler's order only */
    else
        atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&pe->seg->sleeping, memory_order_relaxed)) {
        atomic_fetch_add(&pe->seg->bell, 1);
        shm_futex(&pe->seg->bell, FUTEX_WAKE, INT_MAX, NULL);
    }
}

/* After giving cells back to pe's pool: ring its bell if it sleeps. No fence: the
 * sequentially consistent exchange that returned the last cell (shm_pool_view_put) and
 * this sequentially consistent load pair with the fence in shm_sleep_begin, which
 * precedes the sleeper's last look at its return stack; so either it sees the cell or
 * we see it asleep. */
static void shm_wake_after_put(struct shm_peer *pe)
{
    if (atomic_load_explicit(&pe->seg->sleeping, memory_order_seq_cst)) {
        atomic_fetch_add(&pe->seg->bell, 1);
        shm_futex(&pe->seg->bell, FUTEX_WAKE, INT_MAX, NULL);
    }
}

/* Before my first frame to pe: put myself on its list of senders (the channel's first
 * page is touched first, so the receiver never reads a page that is not there). */
static int shm_out_open(struct shm_peer *pe)
{
    int rc = shm_chan_grow(&pe->out, 1);
    if (rc) return rc;
    _Atomic int32_t *list = (_Atomic int32_t *)((unsigned char *)pe->seg + SHM_HDR_SIZE);
    rc = shm_senders_join(&pe->seg->nsenders, list, (uint32_t)shm.nlocal, shm.my_li);
    if (rc) return rc; /* not what peers write */
    pe->out_on = 1;
    return 0;
}

/* Push one frame to pe (see shm_chan_push_ctrl). */
static inline int shm_push(struct shm_peer *pe, const struct iovec *iov, int iovcnt, size_t total,
                           int ctrl)
{
    if (__builtin_expect(!pe->out_on, 0)) {
        if (pe->dead) return TERN_ERR_PEER_FAILED;
        int rc = shm_out_open(pe);
        if (rc) return rc;
    }
    return shm_chan_push_ctrl(&pe->out, iov, iovcnt, total, ctrl);
}

static int shm_send(int dest, const struct iovec *iov, int iovcnt, size_t total)
{
    struct shm_peer *pe = &shm.peers[shm.lidx_of[dest]];
    if (__builtin_expect(pe->dead, 0)) return TERN_ERR_PEER_FAILED;
    int rc = shm_push(pe, iov, iovcnt, total, 0);
    if (rc) return rc;
    shm_wake(pe);
    return 0;
}

static int shm_send_nt(int dest, const struct iovec *iov, int iovcnt, size_t total)
{
    struct shm_peer *pe = &shm.peers[shm.lidx_of[dest]];
    pe->out.copy_nt = 1;
    int rc = shm_send(dest, iov, iovcnt, total);
    pe->out.copy_nt = 0;
    return rc;
}

static struct shm_coop *shm_coop_of(const struct shm_chan *c)
{
    return (struct shm_coop *)((unsigned char *)c->line_head + 128);
}

/* Take the next chunk of generation gen, or -1 when there is none (or gen is over). */
static int64_t shm_coop_take(struct shm_coop *co, uint32_t gen, uint32_t nchunks)
{
    uint64_t v = atomic_load_explicit(&co->ticket, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(v >> 32) != gen || (uint32_t)v >= nchunks) return -1;
        if (atomic_compare_exchange_weak_explicit(&co->ticket, &v, v + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            return (int64_t)(uint32_t)v;
    }
}

/* The error of a failed pull from pe (rank src), from errno. Not permitted: this peer's
 * rendezvous stream through cells from now on. */
static int shm_get_err(struct shm_peer *pe, int src)
{
    if (errno == EPERM || errno == ENOSYS || errno == EACCES) {
        UTIL_DEBUG(1,
                   "shm: cross-memory attach from rank %d not permitted (%s); "
                   "streaming through cells instead",
                   src, strerror(errno));
        pe->cma = 0;
        return TERN_ERR_UNSUPPORTED;
    }
    if (errno == ESRCH) return TERN_ERR_PEER_FAILED;
    if (errno == EFAULT) return TERN_ERR_FAULT; /* the sender's buffer: its send fails */
    UTIL_ERROR("shm: process_vm_readv from rank %d failed: %s", src, strerror(errno));
    return TERN_ERR_TRANSPORT;
}

/* Copy one chunk between this process and pe (write: push mine into theirs) in one
 * system call (more if the kernel copies less). 0, or -1 with errno set. */
static int shm_cma_direct(struct shm_peer *pe, int write, uint64_t local, uint64_t remote,
                          size_t len)
{
    size_t done = 0;
    while (done < len) {
        struct iovec l = {(void *)(uintptr_t)(local + done), len - done};
        struct iovec r = {(void *)(uintptr_t)(remote + done), len - done};
        ssize_t got = write ? process_vm_writev(pe->pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pe->pid, &l, 1, &r, 1, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        done += (size_t)got;
    }
    return 0;
}

/*
 * A pull whose destination (mine) lies 1-31 bytes above its source modulo 4 KiB: the
 * kernel copies with rep movsb, which AMD Zen runs about 4x slower at that distance
 * (util_copy in src/util/mem.h; 1 MiB 479 vs 116 us). Pull through a buffer placed at the
 * source's page offset, in pieces of TERN_SHM_ALIAS_BOUNCE: the kernel then copies at
 * distance 0, and util_copy moves each piece on while it is in this core's cache (1 MiB
 * 133 us). Only pulls: a sender pushing from its own buffer must get EFAULT from the kernel
 * where that buffer cannot be read, not fault in util_copy; so such copies are never
 * cooperative (shm_get). Returns 0, -1 with errno set, or 1 (no buffer: pull directly).
 */
static int shm_cma_bounced(struct shm_peer *pe, uint64_t local, uint64_t remote, size_t len)
{
    size_t piece = util_tun.shm_alias_bounce;
    if (shm.bounce == NULL) {
        size_t n = piece + 4096;
        void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return 1;
        shm.bounce = m;
        shm.bounce_len = n;
    }
    for (size_t off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        unsigned char *b = shm.bounce + ((remote + off) & 4095);
        if (shm_cma_direct(pe, 0, (uint64_t)(uintptr_t)b, remote + off, n) != 0) return -1;
        util_copy((char *)(uintptr_t)(local + off), b, n);
    }
    return 0;
}

/* Does a pull of len bytes from remote into local meet the slow distance? */
static inline int shm_aliased(uint64_t local, uint64_t remote, size_t len)
{
    return util_tun.shm_alias_bounce && len >= 4096 && util_alias_slow(local, remote);
}

/* Copy one chunk between this process and pe (write: push mine into theirs): 0, or -1
 * with errno set. */
static int shm_cma_chunk(struct shm_peer *pe, int write, uint64_t local, uint64_t remote,
                         size_t len)
{
    if (__builtin_expect(!write && shm_aliased(local, remote, len), 0)) {
        int rc = shm_cma_bounced(pe, local, remote, len);
        if (rc <= 0) return rc;
    }
    return shm_cma_direct(pe, write, local, remote, len);
}

/* Skip `n` bytes at the front of the pieces *v[0..*cnt) (after a partial transfer). */
static void shm_iov_skip(struct iovec **v, int *cnt, size_t n)
{
    while (*cnt > 0 && n >= (*v)->iov_len) {
        n -= (*v)->iov_len;
        (*v)++;
        (*cnt)--;
    }
    if (*cnt > 0 && n) {
        (*v)->iov_base = (char *)(*v)->iov_base + n;
        (*v)->iov_len -= n;
    }
}

/* The pieces of bytes [off, off + len) of the list v[0..n): their count, in out. */
static int shm_iov_sub(const struct iovec *v, int n, size_t off, size_t len, struct iovec *out)
{
    int i = 0, k = 0;
    while (i < n && off >= v[i].iov_len)
        off -= v[i++].iov_len;
    while (i < n && len > 0) {
        size_t take = v[i].iov_len - off < len ? v[i].iov_len - off : len;
        out[k++] = (struct iovec){(char *)v[i].iov_base + off, take};
        len -= take;
        off = 0;
        i++;
    }
    return k;
}

/* Copy bytes [off, off + n) of a vectored cooperative copy: the receiver reads (write 0),
 * the sender writes (write 1). mine/theirs: the lists in my and the peer's memory. */
static int shm_coopv_chunk(struct shm_peer *pe, int write, const struct iovec *mine, int nm,
                           const struct iovec *theirs, int nt, size_t off, size_t n)
{
    static struct iovec a[TL_GETV_MAX_IOV], b[TL_GETV_MAX_IOV];
    int na = shm_iov_sub(mine, nm, off, n, a), nb = shm_iov_sub(theirs, nt, off, n, b);
    size_t done = 0;
    struct iovec *pa = a, *pb = b;
    while (done < n) {
        ssize_t got =
            write ? process_vm_writev(pe->pid, pa, (unsigned long)na, pb, (unsigned long)nb, 0)
                  : process_vm_readv(pe->pid, pa, (unsigned long)na, pb, (unsigned long)nb, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        done += (size_t)got;
        shm_iov_skip(&pa, &na, (size_t)got);
        shm_iov_skip(&pb, &nb, (size_t)got);
    }
    return 0;
}

/* Sender side of a vectored cooperative copy: fetch the receiver's two lists (its
 * pieces and mine, as it built them), then push the chunks I take. */
static void shm_coopv_help(struct shm_peer *pe, struct shm_coop *co, uint32_t gen)
{
    static struct iovec lists[2 * TL_GETV_MAX_IOV];
    uint32_t nchunks = co->nchunks;
    int nl = co->nl, nr = co->nr;
    uint64_t chunk = co->chunk, len = co->len, off = co->off;
    if (nl > TL_GETV_MAX_IOV || nr > TL_GETV_MAX_IOV) return;
    struct iovec l[2] = {{lists, (size_t)nl * sizeof *lists},
                         {lists + nl, (size_t)nr * sizeof *lists}};
    struct iovec r[2] = {{(void *)(uintptr_t)co->dst, l[0].iov_len},
                         {(void *)(uintptr_t)co->src, l[1].iov_len}};
    /* Lists of an older generation are harmless: no chunk of it can be taken. */
    if (process_vm_readv(pe->pid, l, 2, r, 2, 0) != (ssize_t)(l[0].iov_len + l[1].iov_len)) return;
    int64_t c;
    while ((c = shm_coop_take(co, gen, nchunks)) >= 0) {
        uint64_t o = (uint64_t)c * chunk;
        size_t n = (size_t)(len - o < chunk ? len - o : chunk);
        /* mine: the sender's pieces (the receiver's remote list); theirs: its own */
        if (shm_coopv_chunk(pe, 1, lists + nl, nr, lists, nl, off + o, n) != 0) {
            atomic_store_explicit(&co->redo, (uint32_t)c + 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&co->done, 1, memory_order_release);
            return;
        }
        atomic_fetch_add_explicit(&co->done, 1, memory_order_release);
    }
}

/* Sender side: the receiver asked for help with generation gen of our channel. */
static void shm_coop_help(struct shm_peer *pe, uint32_t gen)
{
    struct shm_coop *co = shm_coop_of(&pe->out);
    if (co->nl) {
        shm_coopv_help(pe, co, gen);
        return;
    }
    uint32_t nchunks = co->nchunks;
    uint64_t chunk = co->chunk, len = co->len, dst = co->dst, src = co->src;
    int64_t c;
    while ((c = shm_coop_take(co, gen, nchunks)) >= 0) {
        uint64_t off = (uint64_t)c * chunk;
        size_t n = (size_t)(len - off < chunk ? len - off : chunk);
        if (shm_cma_chunk(pe, 1, src + off, dst + off, n) != 0) {
            /* The receiver will copy this one itself; stop helping. */
            atomic_store_explicit(&co->redo, (uint32_t)c + 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&co->done, 1, memory_order_release);
            return;
        }
        atomic_fetch_add_explicit(&co->done, 1, memory_order_release);
    }
}

/* Take the senders that put themselves on my list since the last look. */
static void shm_adopt(uint32_t n)
{
    int me = shm.my_li;
    while (shm.ntalk < n && shm.ntalk < (uint32_t)shm.nlocal) {
        int32_t li = shm_senders_at(shm.senders, shm.ntalk);
        /* Nobody wrote it yet: a sender is joining (next poll), or one died after it
         * counted itself (shm_senders_join), and the next to join takes this entry. */
        if (li == -1) return;
        if (li < 0 || li >= shm.nlocal || li == me || shm.peers[li].seg == NULL) {
            UTIL_ERROR("shm: a sender wrote %d in my list of senders", (int)li + 1);
            li = me; /* an entry no peer wrote: ignore it, keep the list in step */
        }
        shm.talk[shm.ntalk++] = li;
    }
}

static int shm_poll(void)
{
    int n = 0;
    uint32_t ns = atomic_load_explicit(&shm.my_seg->nsenders, memory_order_relaxed);
    if (__builtin_expect(ns != shm.ntalk, 0)) shm_adopt(ns);
    for (uint32_t k = 0; k < shm.ntalk; k++) {
        if (shm.talk[k] == shm.my_li) continue;
        struct shm_peer *pe = &shm.peers[shm.talk[k]];
        int cells = 0;
        /* A bounded batch per peer keeps one busy sender from starving the others. */
        for (int i = 0; i < 32; i++) {
            const void *data;
            size_t len;
            if (!shm_chan_peek(&pe->in, &data, &len)) break;
            if (pe->in.cur_ctrl) {
                struct shm_ctrl_help h;
                if (len == sizeof h) {
                    memcpy(&h, data, sizeof h);
                    shm_chan_release(&pe->in);
                    /* Help only when idle: with frames of its own from that peer waiting
                     * (traffic both ways), this core is better spent on them; the
                     * receiver then takes every chunk itself (bidirectional 4 MiB
                     * streams: 375 -> 318 us per message). */
                    const void *next;
                    size_t nlen;
                    if (!shm_chan_peek(&pe->in, &next, &nlen)) shm_coop_help(pe, h.gen);
                } else {
                    shm_chan_release(&pe->in);
                }
                continue;
            }
            cells |= pe->in.cur_cell != SHM_CELL_NONE;
            shm_chan_answered(&pe->out);
            shm.recv(pe->world_rank, data, len);
            shm_chan_release(&pe->in);
            n++;
        }
        /* Cells went back to that peer's pool: if it sleeps, it may be waiting for them
         * (a stream whose frames wait for cells in its pending queue), and no frame of
         * ours would wake it before its sleep times out. */
        if (cells) shm_wake_after_put(pe);
    }
    return n;
}

/* The error a failed cross-memory copy stands for (errno of the failed call). */
static int shm_cma_err(int e)
{
    return e == ESRCH ? TERN_ERR_PEER_FAILED : e == EFAULT ? TERN_ERR_FAULT : TERN_ERR_TRANSPORT;
}

/* Piece size of a cooperative copy of len bytes: TERN_SHM_COOP_CHUNK, but a copy shorter
 * than two of those is cut in two halves (page-rounded), so that a 128 KiB message is
 * shared at all and a 192 KiB one evenly; more pieces would cost a system call each. */
static uint64_t shm_coop_chunk_for(size_t len)
{
    uint64_t chunk = util_tun.shm_coop_chunk;
    if (len < 2 * chunk) chunk = shm_round((len + 1) / 2, 4096);
    return chunk;
}

/* Monotonic seconds (vDSO: tens of ns, against a cooperative copy's tens of us). */
static double shm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Is a get of len bytes from pe worth sharing with the sender? From TERN_SHM_COOP_MIN
 * on, unless the sender lately declined: a sender busy with traffic of its own (both
 * sides streaming) answers no HELP, and each offer costs me a frame and a system call
 * more than one plain pull. After a declined offer the next 1, 2, 4 .. 64 large gets
 * from that peer are plain; an offer taken halves that number (a one-way stream, whose
 * sender always helps, never skips). An offer taken by a helper that then held the copy
 * up (it lost its CPU half-way, on a loaded machine: shm_coop.h) counts as declined. */
static int shm_coop_wanted(struct shm_peer *pe, size_t len)
{
    if (!util_tun.shm_coop_min || len < util_tun.shm_coop_min || len <= 8192 ||
        util_tun.shm_coop_chunk < 4096)
        return 0;
    if (pe->coop_skip) {
        pe->coop_skip--;
        return 0;
    }
    return 1;
}

/* The sender took `theirs` chunks of my last offer: back off, or offer again next time. */
static void shm_coop_outcome(struct shm_peer *pe, uint32_t theirs)
{
    if (theirs) {
        pe->coop_backoff /= 2; /* one taken offer among many declined is no trend */
        return;
    }
    pe->coop_backoff = pe->coop_backoff ? pe->coop_backoff * 2 : 1;
    if (pe->coop_backoff > 64) pe->coop_backoff = 64;
    pe->coop_skip = pe->coop_backoff;
}

/* Receiver side of a cooperative copy: publish the ticket, ask for help, take chunks,
 * then wait for the chunks the sender took. */
static int shm_get_coop(struct shm_peer *pe, void *local, uint64_t remote, size_t len)
{
    struct shm_coop *co = shm_coop_of(&pe->in);
    uint64_t chunk = shm_coop_chunk_for(len);
    uint32_t nchunks = (uint32_t)((len + chunk - 1) / chunk);
    uint32_t gen = ++pe->coop_gen;
    /* Close the ticket under the new generation before changing the fields, so a late
     * helper of an older generation can never take a chunk of this one. */
    atomic_store_explicit(&co->ticket, (uint64_t)gen << 32 | UINT32_MAX, memory_order_release);
    co->nchunks = nchunks;
    co->chunk = chunk;
    co->len = len;
    co->nl = co->nr = 0;
    co->dst = (uint64_t)(uintptr_t)local;
    co->src = remote;
    atomic_store_explicit(&co->done, 0, memory_order_relaxed);
    atomic_store_explicit(&co->redo, 0, memory_order_relaxed);
    atomic_store_explicit(&co->ticket, (uint64_t)gen << 32, memory_order_release);
    struct shm_ctrl_help h = {gen};
    struct iovec iov = {&h, sizeof h};
    if (shm_push(pe, &iov, 1, sizeof h, 1) == 0) shm_wake(pe);

    double t0 = shm_now();
    uint32_t mine = 0, taken = nchunks;
    int err = 0;
    int64_t c;
    while ((c = shm_coop_take(co, gen, nchunks)) >= 0) {
        uint64_t off = (uint64_t)c * chunk;
        size_t n = (size_t)(len - off < chunk ? len - off : chunk);
        mine++;
        if (shm_cma_chunk(pe, 0, (uint64_t)(uintptr_t)local + off, remote + off, n) != 0) {
            err = shm_cma_err(errno);
            /* Close the ticket; the helper finishes only what it already took. */
            uint64_t prev = atomic_exchange(&co->ticket, (uint64_t)gen << 32 | UINT32_MAX);
            taken = (uint32_t)prev < nchunks ? (uint32_t)prev : nchunks;
            break;
        }
    }
    /* Wait for the chunks the sender took and is still copying. */
    double t1 = shm_now();
    uint32_t theirs = taken - mine;
    unsigned spins = 0;
    while (atomic_load_explicit(&co->done, memory_order_acquire) != theirs) {
        if (++spins % 1024 == 0) {
            if (kill(pe->pid, 0) != 0 && errno == ESRCH) return TERN_ERR_PEER_FAILED;
            sched_yield();
        }
    }
    if (err) return err;
    /* A helper that lost its CPU half-way held us longer than pulling alone would have:
     * count it as a declined offer (shm_coop.h). */
    shm_coop_outcome(pe, shm_coop_was_slower(t1 - t0, shm_now() - t0, mine, nchunks) ? 0 : theirs);
    uint32_t redo = atomic_load_explicit(&co->redo, memory_order_relaxed);
    if (redo) {
        uint64_t off = (uint64_t)(redo - 1) * chunk;
        size_t n = (size_t)(len - off < chunk ? len - off : chunk);
        if (shm_cma_chunk(pe, 0, (uint64_t)(uintptr_t)local + off, remote + off, n) != 0)
            return shm_cma_err(errno);
    }
    return 0;
}

static int shm_get(int src, void *local, uint64_t remote, size_t len)
{
    struct shm_peer *pe = &shm.peers[shm.lidx_of[src]];
    if (!pe->cma) return TERN_ERR_UNSUPPORTED;
    /* At the slow distance the receiver pulls alone, through its bounce buffer. */
    int coop = !shm_aliased((uint64_t)(uintptr_t)local, remote, len) && shm_coop_wanted(pe, len);
    /* The first pull from a peer probes permission with a first piece before involving
     * the sender in a cooperative copy (a refused one moved nothing either way); once
     * one has worked, a cooperative copy starts at once and a plain one is one call. */
    size_t first = !coop ? len : pe->cma_seen ? 0 : 4096;
    if (first && shm_cma_chunk(pe, 0, (uint64_t)(uintptr_t)local, remote, first) != 0)
        return shm_get_err(pe, src);
    if (first) pe->cma_seen = 1;
    if (len == first) return 0;
    char *dst = (char *)local + first;
    remote += first;
    len -= first;
    return shm_get_coop(pe, dst, remote, len);
}

/* Receiver side of a vectored cooperative copy of bytes [off, total) of the two lists
 * (as shm_get_coop: ticket, HELP, take chunks, wait for the sender's). */
static int shm_getv_coop(struct shm_peer *pe, const struct iovec *local, int nl,
                         const struct iovec *remote, int nr, size_t off, size_t total)
{
    struct shm_coop *co = shm_coop_of(&pe->in);
    uint64_t len = total - off, chunk = shm_coop_chunk_for(len);
    uint32_t nchunks = (uint32_t)((len + chunk - 1) / chunk);
    uint32_t gen = ++pe->coop_gen;
    atomic_store_explicit(&co->ticket, (uint64_t)gen << 32 | UINT32_MAX, memory_order_release);
    co->nchunks = nchunks;
    co->nl = (uint16_t)nl;
    co->nr = (uint16_t)nr;
    co->chunk = chunk;
    co->len = len;
    co->dst = (uint64_t)(uintptr_t)local;
    co->src = (uint64_t)(uintptr_t)remote;
    co->off = off;
    atomic_store_explicit(&co->done, 0, memory_order_relaxed);
    atomic_store_explicit(&co->redo, 0, memory_order_relaxed);
    atomic_store_explicit(&co->ticket, (uint64_t)gen << 32, memory_order_release);
    struct shm_ctrl_help h = {gen};
    struct iovec iov = {&h, sizeof h};
    if (shm_push(pe, &iov, 1, sizeof h, 1) == 0) shm_wake(pe);

    uint32_t mine = 0, taken = nchunks;
    int err = 0;
    int64_t c;
    while ((c = shm_coop_take(co, gen, nchunks)) >= 0) {
        uint64_t o = (uint64_t)c * chunk;
        mine++;
        if (shm_coopv_chunk(pe, 0, local, nl, remote, nr, off + o,
                            (size_t)(len - o < chunk ? len - o : chunk)) != 0) {
            err = errno == ESRCH ? TERN_ERR_PEER_FAILED : TERN_ERR_TRANSPORT;
            uint64_t prev = atomic_exchange(&co->ticket, (uint64_t)gen << 32 | UINT32_MAX);
            taken = (uint32_t)prev < nchunks ? (uint32_t)prev : nchunks;
            break;
        }
    }
    uint32_t theirs = taken - mine;
    unsigned spins = 0;
    while (atomic_load_explicit(&co->done, memory_order_acquire) != theirs) {
        if (++spins % 1024 == 0) {
            if (kill(pe->pid, 0) != 0 && errno == ESRCH) return TERN_ERR_PEER_FAILED;
            sched_yield();
        }
    }
    if (err) return err;
    uint32_t redo = atomic_load_explicit(&co->redo, memory_order_relaxed);
    if (redo) {
        uint64_t o = (uint64_t)(redo - 1) * chunk;
        if (shm_coopv_chunk(pe, 0, local, nl, remote, nr, off + o,
                            (size_t)(len - o < chunk ? len - o : chunk)) != 0)
            return TERN_ERR_TRANSPORT;
    }
    return 0;
}

/* One process_vm_readv over both block lists: the kernel walks the sender's pieces and
 * mine together, so a non-contiguous message moves user memory to user memory once.
 * Large ones are shared with the sender (cooperative copy) after a 4 KiB probe. */
static int shm_getv(int src, const struct iovec *local, int nl, const struct iovec *remote, int nr,
                    size_t total)
{
    struct shm_peer *pe = &shm.peers[shm.lidx_of[src]];
    if (!pe->cma) return TERN_ERR_UNSUPPORTED;
    int coop = util_tun.shm_coop_min && total >= util_tun.shm_coop_min &&
               util_tun.shm_coop_chunk >= 4096 && total > 8192;
    size_t want = coop ? 4096 : total; /* bytes of the first transfer */
    static struct iovec lv[TL_GETV_MAX_IOV], rv[TL_GETV_MAX_IOV];
    int n1 = shm_iov_sub(local, nl, 0, want, lv), m1 = shm_iov_sub(remote, nr, 0, want, rv);
    struct iovec *l = lv, *r = rv;
    size_t done = 0;
    ssize_t got;
    for (;;) {
        do
            got = process_vm_readv(pe->pid, l, (unsigned long)n1, r, (unsigned long)m1, 0);
        while (got < 0 && errno == EINTR);
        if (got <= 0) break;
        done += (size_t)got;
        if (done >= want) break;
        /* A partial transfer (rare: the kernel stops at a fault): go on after it. */
        shm_iov_skip(&l, &n1, (size_t)got);
        shm_iov_skip(&r, &m1, (size_t)got);
    }
    if (done >= want) return coop ? shm_getv_coop(pe, local, nl, remote, nr, want, total) : 0;
    /* Refused before any byte moved: stream through cells; a dead sender or its
     * unreadable buffer: say so, however far it got. */
    if (got < 0 && (done == 0 || errno == ESRCH || errno == EFAULT)) return shm_get_err(pe, src);
    UTIL_ERROR("shm: process_vm_readv from rank %d stopped after %zu of %zu bytes: %s", src, done,
               want, got < 0 ? strerror(errno) : "no progress");
    return TERN_ERR_TRANSPORT;
}

static void shm_sleep_begin(void)
{
    atomic_store_explicit(&shm.my_seg->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    /* My senders publish without a fence (shm_wake): have the kernel fence them. Should
     * the call ever fail, a frame may stay unseen while I sleep: sleeps become short. */
    if (shm.asym && !shm.asym_failed &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0) {
        shm.asym_failed = 1;
        UTIL_ERROR("shm: membarrier failed (%s); sleeps are cut to 1 ms", strerror(errno));
    }
    shm.bell_seen = atomic_load_explicit(&shm.my_seg->bell, memory_order_relaxed);
}

static void shm_sleep_wait(int timeout_ms)
{
    if (shm.asym_failed && timeout_ms > 1) timeout_ms = 1;
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    shm_futex(&shm.my_seg->bell, FUTEX_WAIT, shm.bell_seen, &ts);
}

static void shm_sleep_end(void)
{
    atomic_store_explicit(&shm.my_seg->sleeping, 0, memory_order_relaxed);
}

/* Another thread wants the sleeper up: ring our own bell (the futex wait sees the word
 * change even if it has not started yet). */
static void shm_wake_self(void)
{
    atomic_fetch_add(&shm.my_seg->bell, 1);
    shm_futex(&shm.my_seg->bell, FUTEX_WAKE, INT_MAX, NULL);
}

static void shm_limits(struct tl_limits *out)
{
    size_t cell = shm_round(util_tun.shm_cell_size, 64);
    /* A peer on this node: its segments can be mapped (and its memory shared with CPU
     * atomics), its doorbell rung; get() needs cross-memory attach, which TERN_SHM_CMA=0
     * turns off. */
    *out = (struct tl_limits){
        .max_frame = shm_pool_max_frame(
            util_tun.shm_big_cells > 0 ? (uint64_t)util_tun.shm_big_cells : 0, cell),
        .max_inline = SHM_LINE_INLINE,
        .eager_max = util_tun.shm_eager_max,
        .stream_max = util_tun.shm_stream_eager_max,
        .adapt_min = util_tun.shm_adapt_min,
        .adapt_max = util_tun.shm_adapt_max, /* the core needs get() too (TL_CAP_GET) */
        .rv_min = util_tun.shm_rndv_adapt_min,
        .nt_max = util_tun.shm_nt_max,
        .caps = TL_CAP_WAKE | TL_CAP_MAP | TL_CAP_ATOMIC | (util_tun.shm_cma ? TL_CAP_GET : 0)};
}

/* Ring a local peer's doorbell (it published nothing through us: the collectives'
 * shared region did). */
static void shm_wake_rank(int rank)
{
    int li = shm.lidx_of[rank];
    if (li >= 0 && shm.peers[li].seg) shm_wake(&shm.peers[li]);
}

/* Peer k (of shm.active) has exited: it can give nothing back now, so the cells it held
 * are mine again and the pool does not shrink by what a dead peer took with it. */
static void shm_health_dead(int k)
{
    struct shm_peer *pe = &shm.peers[shm.active[k]];
    pe->dead = 1;
    if (shm.health_ep >= 0 && pe->pidfd >= 0)
        (void)epoll_ctl(shm.health_ep, EPOLL_CTL_DEL, pe->pidfd, NULL);
    uint32_t back = shm_pool_reclaim(&shm.pool, shm.active[k]);
    UTIL_DEBUG(1, "shm: rank %d (pid %d) has exited (%u cells taken back)", pe->world_rank,
               (int)pe->pid, back);
    shm.failed(pe->world_rank);
}

/* The liveness check behind the launcher's news: find peers that exited. With every
 * pidfd in one epoll set (the usual case) a check that finds nobody dead is one system
 * call whatever the number of peers. */
static int shm_health(void)
{
    int n = 0;
    if (shm.health_ep >= 0) {
        struct epoll_event ev[16];
        int got = epoll_wait(shm.health_ep, ev, 16, 0);
        for (int i = 0; i < got; i++) {
            int k = (int)ev[i].data.u32;
            if (k < 0 || k >= shm.nactive || shm.peers[shm.active[k]].dead) continue;
            shm_health_dead(k);
            n++;
        }
    }
    for (int k = 0; k < shm.nactive; k++) {
        struct shm_peer *pe = &shm.peers[shm.active[k]];
        if (pe->dead || pe->pid <= 0 || (pe->pidfd >= 0 && shm.health_ep >= 0)) continue;
        int gone;
        if (pe->pidfd >= 0) {
            struct pollfd p = {.fd = pe->pidfd, .events = POLLIN};
            gone = poll(&p, 1, 0) > 0;
        } else {
            gone = kill(pe->pid, 0) != 0 && errno == ESRCH;
        }
        if (!gone) continue;
        shm_health_dead(k);
        n++;
    }
    return n;
}

static void shm_close(void)
{
    for (int k = 0; k < shm.nactive; k++) {
        struct shm_peer *pe = &shm.peers[shm.active[k]];
        if (pe->seg) munmap(pe->seg, pe->seg_len);
        if (pe->pidfd >= 0) close(pe->pidfd);
    }
    if (shm.health_ep >= 0) close(shm.health_ep);
    shmseg_close(&shm.mine);
    shm_pool_fini(&shm.pool);
    if (shm.bounce) munmap(shm.bounce, shm.bounce_len);
    free(shm.lidx_of);
    free(shm.peers);
    free(shm.active);
    free(shm.talk);
    memset(&shm, 0, sizeof shm);
}

const struct tl_ops tl_shm_ops = {
    .size = sizeof(struct tl_ops),
    .name = "shm",
    .reaches = shm_reaches,
    .open = shm_open_fn,
    .connect = shm_connect,
    .ready = shm_ready,
    .send = shm_send,
    .send_nt = shm_send_nt,
    .send_ref = tl_stub_send_ref,
    .unref = tl_stub_unref,
    .place_abort = tl_stub_unref,
    .poll = shm_poll,
    .get = shm_get,
    .getv = shm_getv,
    .sleep_begin = shm_sleep_begin,
    .sleep_wait = shm_sleep_wait,
    .sleep_end = shm_sleep_end,
    .wake = shm_wake_rank,
    .busy = tl_stub_noop,
    .health = shm_health,
    .limits = shm_limits,
    .close = shm_close,
    .wake_self = shm_wake_self,
};
