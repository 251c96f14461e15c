/*
 * ofi.c - the fabric transport: peers reached through libfabric (OFI), the library that
 * drives InfiniBand, Slingshot, EFA, Omni-Path and RoCE (and, for testing on one host,
 * its tcp, udp and sockets providers). Built only when CMake finds libfabric through
 * pkg-config. It is in the default TERN_TRANSPORTS, but unless the user names it
 * (TERN_TRANSPORTS, TERN_OFI_PROVIDER) it takes a peer only over a fabric provider, not
 * a software one (tcp, sockets, udp), where tern's own tcp transport serves (FABRIC.md).
 *
 * Endpoint. One reliable-datagram endpoint (FI_EP_RDM) with plain messages (FI_MSG; the
 * core does the matching, so no tagged interface), one completion queue for both
 * directions and one address vector. The provider is the first fi_getinfo offers for
 * that which is not shm (a node-local provider; peers on the node take tern's own shm
 * transport), narrowed by TERN_OFI_PROVIDER or libfabric's FI_PROVIDER. Every rank
 * must end up with the same provider: the card says which, and connect() refuses a
 * peer on another one.
 *
 * Addresses. open() publishes tern-ofi-<rank> = "<provider>:<hex of fi_getname>"; after
 * the fence connect() inserts every peer's address into the address vector. RDM
 * endpoints need no connection per peer (a provider such as tcp;ofi_rxm makes its
 * connections lazily, on the first message).
 *
 * Frames. Each core frame travels as one message, behind an 8-byte header naming the
 * sender's world rank (so no FI_SOURCE is needed, and the frame stays 8-byte aligned in
 * the receive buffer), and its sequence number for that peer: a provider may complete
 * messages out of order (ofi_rxm finishes a large message through its own rendezvous
 * after smaller ones sent later), so a frame that arrives ahead of its turn keeps its
 * buffer until those before it are delivered. A frame up to the provider's inject size
 * goes by fi_inject (ofi_inject); a larger one is copied into a send buffer that stays
 * ours until its send completes, up to TERN_OFI_FRAME (capped by the provider's
 * max_msg_size).
 *
 * Large frames. Where the provider has FI_RMA (and TERN_OFI_RMA is on), a larger frame
 * goes as an RTS: its head, and the address and key of the rest, registered (ofi_mr.c).
 * The receiver asks the core's place() where it goes, fi_read()s it there and answers
 * FIN; the sender's send_ref() completes at the FIN. Without FI_RMA the core sends large
 * messages as CTS + DATA frames of one receive buffer, as it picks from limits().
 *
 * Receiving. TERN_OFI_RECVS buffers of one maximal frame each stay posted; a completed
 * one is handed to the core's recv up-call from poll() and posted again right after.
 *
 * Sleeping. If the provider gives the completion queue a file descriptor (FI_WAIT_FD,
 * fi_control FI_GETWAIT), a blocked process sleeps in epoll_wait on it (after
 * fi_trywait says nothing is pending) plus an eventfd other threads ring; the
 * transport then reports TL_CAP_KERNEL_WAIT. Otherwise it has no doorbell and the core
 * keeps polling it.
 *
 * Failure. A send that completes with an error (the provider could not reach the peer:
 * connection refused or reset under ofi_rxm once the peer died) marks that peer failed
 * through env->failed from poll(); sends to it then answer TERN_ERR_PEER_FAILED. ofi_rxm
 * gives no such error for a dead peer (its sends just never complete), so health() also
 * takes a peer whose sends have made no progress for TERN_OFI_SEND_TIMEOUT_MS for dead.
 * A peer that dies while nothing is being sent to it is not noticed here: the
 * launcher's news (ternrun) covers that, as for tcp.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "boot/boot.h"
#include "transport/ofi/ofi_mr.h"
#include "tern.h"
#include "transport/transport.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/tunables.h"

/*
 * libfabric is loaded with dlopen when a job first asks for this transport, never linked:
 * loading it runs its providers' constructors (PSM's clock calibration alone measured
 * ~200 ms), which every tern program would otherwise pay at start, fabric or not. Only
 * these functions are real symbols; the rest of the API (fi_send, fi_cq_read, ...) are
 * inline calls through the objects' ops tables.
 */
static struct {
    void *dl;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} ofi_lib;

/* Bytes of headers a receive buffer holds beyond TERN_OFI_FRAME in passthru mode and
 * when ofi_rxm's eager limit covers a whole frame (ofi_rxm_eager_set). */
#define OFI_FRAME_SLACK 128

/* 1: FI_OFI_RXM_EAGER_LIMIT covers a whole receive buffer (TERN_OFI_FRAME + slack). */
static int ofi_rxm_eager;

/*
 * TERN_OFI_RXM_EAGER: ofi_rxm sends a message above its eager limit (16 KiB in libfabric
 * 1.17) as segments of its SAR protocol, each a message of its own with a completion
 * inside rxm: a 32 KiB tern frame cost 39 system calls per round trip against 13 as one
 * message (PERFORMANCE.md). Raising the limit to a whole tern frame makes every frame one
 * eager message. Over tcp that costs no memory up front: rxm's receive buffers grow with
 * the limit, but the tcp provider places an expected message straight into the buffer
 * tern posted, so their pages stay untouched (FI_OFI_RXM_BUFFER_SIZE, which also sizes the
 * send and inject pools, stays as it is: raising it cost 230 MB per process). Only for a
 * provider named tcp: over verbs rxm wants the limit equal to its registered buffer size.
 * A limit the user set is kept (and used only when it covers a frame). Not with
 * TERN_OFI_SEND_TIMEOUT_MS, as passthru.
 */
static void ofi_rxm_eager_set(void)
{
    const char *prov = util_tun.ofi_provider[0] ? util_tun.ofi_provider : getenv("FI_PROVIDER");
    size_t need = util_tun.ofi_frame + OFI_FRAME_SLACK;
    if (!util_tun.ofi_rxm_eager || prov == NULL || strncmp(prov, "tcp", 3) != 0) return;
    /* TERN_OFI_SEND_TIMEOUT_MS needs sends to a stopped peer to stay in flight: an eager
     * message completes once it is in the socket, SAR segments wait (mp.ofi_stall). */
    if (util_tun.ofi_send_timeout_ms > 0) return;
    const char *have = getenv("FI_OFI_RXM_EAGER_LIMIT");
    if (have == NULL) {
        char v[32];
        snprintf(v, sizeof v, "%zu", need);
        setenv("FI_OFI_RXM_EAGER_LIMIT", v, 0);
        ofi_rxm_eager = 1;
    } else {
        ofi_rxm_eager = strtoull(have, NULL, 0) >= need;
    }
}

/* dlopen one candidate library and find the functions tern calls; 0, or -1 (closed). */
static int ofi_lib_try(const char *lib)
{
    ofi_lib.dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (ofi_lib.dl == NULL) {
        UTIL_DEBUG(1, "ofi: cannot load %s (%s)", lib, dlerror());
        return -1;
    }
    ofi_lib.getinfo = (__typeof__(ofi_lib.getinfo))dlsym(ofi_lib.dl, "fi_getinfo");
    ofi_lib.freeinfo = (__typeof__(ofi_lib.freeinfo))dlsym(ofi_lib.dl, "fi_freeinfo");
    ofi_lib.dupinfo = (__typeof__(ofi_lib.dupinfo))dlsym(ofi_lib.dl, "fi_dupinfo");
    ofi_lib.fabric = (__typeof__(ofi_lib.fabric))dlsym(ofi_lib.dl, "fi_fabric");
    ofi_lib.strerror = (__typeof__(ofi_lib.strerror))dlsym(ofi_lib.dl, "fi_strerror");
    if (ofi_lib.getinfo && ofi_lib.freeinfo && ofi_lib.dupinfo && ofi_lib.fabric &&
        ofi_lib.strerror)
        return 0;
    UTIL_DEBUG(1, "ofi: %s lacks a function tern needs", lib);
    dlclose(ofi_lib.dl);
    ofi_lib.dl = NULL;
    return -1;
}

/* Load libfabric (once). Returns 0, or -1 when it is not installed or lacks a symbol. */
static int ofi_lib_load(void)
{
    static int tried, ok;
    if (tried) return ok ? 0 : -1;
    tried = 1;
    /* TERN_OFI_PASSTHRU: ofi_rxm over tcp hands data calls straight to the tcp provider's
     * endpoints (FI_OFI_RXM_ENABLE_PASSTHRU; rxm's own eager/SAR/rendezvous layer and its
     * inner completion queue are skipped: FABRIC.md, measured). The provider reads the
     * variable when fi_getinfo first initialises it, so it is set before; a value the user
     * gave is kept. Providers other than tcp;ofi_rxm ignore it. */
    if (util_tun.ofi_passthru && util_tun.ofi_send_timeout_ms <= 0)
        setenv("FI_OFI_RXM_ENABLE_PASSTHRU", "1", 0);
    ofi_rxm_eager_set();
    /* TERN_OFI_LIBRARY: another build of libfabric (FABRIC.md: a lean one starts ~0.7 s
     * faster per process than Debian's, and a newer one's tcp provider, RDM without
     * ofi_rxm, makes half the system calls per message). A ':' list is tried in order,
     * so a site can name the better build first and keep the system's as the fallback
     * on nodes that lack it. */
    const char *list = util_tun.ofi_library[0] ? util_tun.ofi_library : "libfabric.so.1";
    char lib[4096];
    for (const char *p = list; !ok && *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n < sizeof lib) {
            memcpy(lib, p, n);
            lib[n] = '\0';
            ok = ofi_lib_try(lib) == 0;
            if (ok) UTIL_DEBUG(1, "ofi: libfabric from %s", lib);
        }
        p += n;
        if (*p == ':') p++;
    }
    if (!ok && util_tun.ofi_library[0])
        UTIL_ERROR("ofi: cannot load TERN_OFI_LIBRARY=%s (TERN_DEBUG=1 says why)", list);
    return ok ? 0 : -1;
}
#define fi_getinfo  ofi_lib.getinfo
#define fi_freeinfo ofi_lib.freeinfo
#define fi_fabric   ofi_lib.fabric
#define fi_strerror ofi_lib.strerror

/* Bytes in front of every frame: the sender's world rank and the frame's sequence number. */
#define OFI_HDR 8
/* Sends in flight (not yet completed) before send() answers TERN_ERR_AGAIN: a pool of
 * contexts and frame buffers made once at open (its pages are touched as used), so the
 * heap does not grow with the traffic. */
#define OFI_MAX_TX 64
/* max_inline reported to the core: at most this, and the provider's inject size. */
#define OFI_INJECT_MAX 512
/* Completions taken per fi_cq_read. */
#define OFI_CQ_BATCH 16
/* Longest close() waits for sends still in flight (ms). */
#define OFI_DRAIN_MS 2000
#define OFI_KEY_FMT  "tern-ofi-%d"
#define OFI_ADDR_MAX 256

struct ofi_hdr {
    uint32_t src; /* the sender's world rank, the message's type in the top 4 bits */
    uint32_t seq; /* FRAME, RTS: per (sender, receiver) pair, from 0; FIN: the slot */
};

/* Message types (ofi_hdr.src >> 28). A FRAME carries a core frame; an RTS announces one
 * the receiver reads from the sender's registered memory (single copy); a FIN tells the
 * sender that read is over. FIN has no place in the frame order. */
enum { OFI_T_FRAME = 0, OFI_T_RTS = 1, OFI_T_FIN = 2, OFI_T_NOP = 3 };
#define OFI_SRC_MASK 0x0fffffffu

/* What follows the header of an RTS: the frame is `inl` bytes carried here (at least the
 * core's place_head) followed by total - inl bytes at (raddr, rkey) in the sender. */
struct ofi_rts {
    uint64_t total;
    uint64_t raddr;
    uint64_t rkey;
    uint32_t inl;
    uint32_t slot; /* the sender's rendezvous slot, named again by the FIN */
};

/* Rendezvous slots of a sender (RTS sent, FIN not yet back). */
#define OFI_MAX_RDV 256
/* Bytes one fi_read moves at most, and reads in flight per message. */
#define OFI_RD_CHUNK  (4u << 20)
#define OFI_RD_MAXOPS 4
/* Largest frame reported to the core when reads are on: frames above TERN_OFI_FRAME up to
 * this go by RTS + read; larger messages are the core's rendezvous, in DATA frames of this
 * size (each read into the posted buffer: no temporary larger than this at the receiver). */
#define OFI_RMA_FRAME (8u << 20)

/* Eager limit reported with reads on: one RTS + read instead of the core's RTS + CTS + DATA
 * (+ RTS + read). Not higher: above it an unexpected message would sit in a temporary, and
 * the MPI layer packs non-contiguous eager sends (rendezvous reads their blocks). */
#define OFI_RMA_EAGER (256u << 10)

enum { OFI_RX = 1, OFI_TX = 2, OFI_RD = 3, OFI_CTL = 4 };

struct ofi_rdv_tx {
    int used;
    int dest;
    void *cookie;      /* send_ref's, NULL after unref or for a copy */
    struct ofi_mr *mr; /* the registration the peer reads */
    void *copy;        /* send() of a large frame: our copy, freed at the FIN */
};

/* A read under way: the frame src announced in an RTS (one per sender at a time: frames
 * after it wait in the held list). */
struct ofi_rdv_rx {
    int src;
    uint32_t slot;
    size_t total, hlen;
    uint64_t raddr, rkey;
    size_t rlen, roff; /* bytes to read, bytes asked so far */
    struct iovec *iov; /* where they land (the core's array after place(), or `one`) */
    int niov, ki;      /* pieces, the piece being asked into */
    size_t koff;       /* bytes of iov[ki] already asked */
    struct iovec one;
    char *tmp; /* the whole frame, when place() declined */
    int ops, err, placed;
    struct ofi_rdv_rx *next; /* the list of reads under way */
    char head[128];
};

/* The context of one posted operation: the provider hands it back in the completion. */
struct ofi_ctx {
    struct fi_context2 fctx; /* first: providers that ask for FI_CONTEXT(2) use this space */
    int kind;                /* OFI_RX or OFI_TX */
    int peer;                /* TX: destination rank */
    char *buf;               /* RX: receive buffer; TX: the frame's copy */
    size_t len;              /* RX held back: bytes received */
    uint32_t seq;            /* RX held back: its sequence number */
    struct ofi_ctx *next;    /* free list (TX), repost list or a peer's held list (RX) */
    struct ofi_rdv_rx *rd;   /* RD: the read it belongs to */
    void *cookie;            /* TX by reference (ofi_send_zref): send_ref's; NULL after unref */
};

static struct {
    struct boot *boot;
    tl_recv_fn recv;
    tl_failed_fn failed;
    struct fi_info *info; /* the provider chosen (owned; the whole fi_getinfo list) */
    struct fi_info *all;
    int probed; /* 1: fi_getinfo was asked (info NULL if nothing fits) */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    fi_addr_t *addr;       /* per world rank; FI_ADDR_NOTAVAIL for non-peers */
    char *is_peer;         /* per world rank */
    char *dead;            /* per world rank: failed (reported once) */
    uint32_t *txseq;       /* per world rank: sequence number of the next frame to it */
    uint32_t *rxseq;       /* per world rank: sequence number of the next frame to deliver */
    struct ofi_ctx **held; /* per world rank: frames that arrived ahead of their turn */
    int *txpend;           /* per world rank: sends posted to it and not completed */
    long *txmoved;         /* per world rank: ms clock when a send to it last posted into an idle
                              pipe or completed */
    size_t frame;          /* bytes of a receive buffer (header included) */
    size_t inject;         /* the provider's inject size, capped at OFI_INJECT_MAX */
    int nrx;
    struct ofi_ctx *rx;     /* nrx receive contexts */
    char *rxbuf;            /* nrx * frame bytes */
    struct ofi_ctx *repost; /* receives that could not be posted again yet */
    struct ofi_ctx *txfree;
    struct ofi_ctx *tx; /* OFI_MAX_TX send contexts */
    char *txbuf;        /* OFI_MAX_TX * frame bytes */
    int inflight;       /* sends posted and not completed */
    int waitfd;         /* the completion queue's fd, or -1 (no kernel wait) */
    int epfd;
    tl_place_fn place;
    tl_placed_fn placed;
    size_t place_head;
    tl_sent_fn sent;
    int rma;                 /* 1: large frames by RTS + fi_read */
    struct ofi_mr_cache mrc; /* registrations of what peers read */
    struct ofi_rdv_tx rdvtx[OFI_MAX_RDV];
    int nrdvtx;                 /* slots in use */
    char *refpend;              /* per world rank: a send_ref's slot is in use */
    struct ofi_rdv_rx **rdvrx;  /* per world rank: the read under way from it */
    struct ofi_rdv_rx *reading; /* every read under way */
    struct ofi_ctx *ctlq;       /* FINs waiting for room to be sent */
    int nctl;                   /* FINs posted or waiting */
    int closing;                /* close() drains: no more up-calls */
    unsigned long n_small, n_copy, n_err, n_held, n_rts, n_read_bytes;
    unsigned long n_comp, n_trywait_retry, n_sleep, n_nosleep; /* waiting: see sleep_begin */
    int use_inject; /* frames up to `inject` bytes go by fi_inject (no completion) */
    int passthru;   /* ofi_rxm hands data calls to tcp (FI_PROTO_RXM_TCP): see sleep_wait */
    int tx_again;   /* a send found no room since the last send completion */
    char *injected; /* per world rank: frames injected since close() last flushed */
    unsigned long n_inject;
    int zref;             /* 1: frames may go by reference (ofi_send_zref) */
    unsigned long n_zref; /* frames sent by reference */
} ofi = {.waitfd = -1, .epfd = -1};

static int ofi_wakefd = -1;
/* Whether a thread may sleep in ofi_sleep_wait, and how long: set by ofi_sleep_begin and
 * cleared by ofi_sleep_end, both under the library's lock (ofi_sleep_wait runs without
 * it and only reads it). A nap is the short sleep of passthru mode (see ofi_sleep_wait). */
enum ofi_sleep { OFI_AWAKE, OFI_SLEEP_FULL, OFI_SLEEP_NAP };
static enum ofi_sleep ofi_sleep_state;
static void ofi_wake_self(void);
/* A thread sleeps its full length in passthru mode: a send posted now must wake it. */
static inline int ofi_long_sleeper(void)
{
    return ofi.passthru && ofi_sleep_state == OFI_SLEEP_FULL;
}

/* Ask libfabric once for the RDM endpoints it offers and pick one. */
static struct fi_info *ofi_probe(void)
{
    if (ofi.probed) return ofi.info;
    ofi.probed = 1;
    if (ofi_lib_load() != 0) return NULL;
    /* First with reads of registered memory (single-copy large messages), then, where no
     * provider offers them or TERN_OFI_RMA=0, messages alone (large ones then go as the
     * core's CTS + DATA frames). */
    int rc = -FI_ENODATA;
    for (int rma = util_tun.ofi_rma ? 1 : 0; rma >= 0 && rc != 0; rma--) {
        struct fi_info *hints = ofi_lib.dupinfo(NULL); /* fi_allocinfo(), without linking */
        if (hints == NULL) return NULL;
        hints->caps = FI_MSG | (rma ? FI_RMA | FI_READ | FI_REMOTE_READ : 0);
        hints->mode = FI_CONTEXT | FI_CONTEXT2;
        hints->ep_attr->type = FI_EP_RDM;
        hints->domain_attr->threading = FI_THREAD_DOMAIN;
        /* Messages come from our own buffers, never registered (no FI_MR_LOCAL); what a
         * peer reads is registered the way the provider wants it (ofi_mr.c). */
        hints->domain_attr->mr_mode =
            rma ? FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT : 0;
        hints->tx_attr->msg_order = FI_ORDER_SAS;
        hints->rx_attr->msg_order = FI_ORDER_SAS;
        if (util_tun.ofi_provider && util_tun.ofi_provider[0])
            hints->fabric_attr->prov_name = strdup(util_tun.ofi_provider);
        rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &ofi.all);
        fi_freeinfo(hints);
        ofi.rma = rma;
    }
    if (rc != 0) {
        UTIL_DEBUG(1, "ofi: fi_getinfo found no RDM provider (%s)", fi_strerror(-rc));
        ofi.all = NULL;
        return NULL;
    }
    int asked = (util_tun.ofi_provider && util_tun.ofi_provider[0]) || getenv("FI_PROVIDER");
    for (struct fi_info *i = ofi.all; i; i = i->next) {
        /* shm reaches only this node, where tern's own shm transport serves: take it
         * only when the user named it. */
        if (!asked && strcmp(i->fabric_attr->prov_name, "shm") == 0) continue;
        ofi.info = i;
        break;
    }
    if (ofi.info)
        UTIL_DEBUG(1, "ofi: provider %s, fabric %s, domain %s, %s (protocol %u)",
                   ofi.info->fabric_attr->prov_name, ofi.info->fabric_attr->name,
                   ofi.info->domain_attr->name,
                   ofi.rma ? "large frames read from registered memory (FI_RMA)"
                           : "no FI_RMA: large frames as CTS + DATA",
                   ofi.info->ep_attr->protocol);
    return ofi.info;
}

/* A provider that rides on the kernel's sockets (or stays on the node): tern's own tcp
 * transport serves as well or better, so such a provider is used only when asked for. */
static int ofi_prov_is_software(const char *prov)
{
    static const char *const soft[] = {"tcp", "sockets", "udp", "net", "shm", NULL};
    size_t n = strcspn(prov, ";");
    for (int i = 0; soft[i]; i++)
        if (strlen(soft[i]) == n && strncmp(prov, soft[i], n) == 0) return 1;
    return 0;
}

/* Did the user ask for ofi by name (TERN_TRANSPORTS lists it, or TERN_OFI_PROVIDER is
 * set)? Otherwise ofi is in the list by default and takes only real fabrics. */
static int ofi_asked(void)
{
    const char *t = getenv("TERN_TRANSPORTS");
    if (util_tun.ofi_provider && util_tun.ofi_provider[0]) return 1;
    if (t == NULL) return 0;
    for (const char *p = strstr(t, "ofi"); p; p = strstr(p + 1, "ofi"))
        if ((p == t || p[-1] == ',') && (p[3] == '\0' || p[3] == ',')) return 1;
    return 0;
}

/*
 * Peers reached: every other rank once a provider is found - which the core asks only
 * for peers shm does not reach (other nodes), so a one-node job never loads libfabric,
 * nor does a job on nodes without fabric hardware that did not name ofi.
 * By default (ofi not named by the user) only a real fabric provider is taken; a
 * software one (tcp, sockets, udp) leaves the peer to tern's tcp transport.
 */
/* Does this node have fabric hardware at all? InfiniBand, RoCE, Omni-Path (hfi1) and EFA
 * devices appear under /sys/class/infiniband, Slingshot's under /sys/class/cxi. Without
 * any, a job that did not name ofi does not load libfabric (its providers' constructors
 * cost ~1 s here: FABRIC.md). */
static int ofi_node_has_fabric(void)
{
    static const char *const dirs[] = {"/sys/class/infiniband", "/sys/class/cxi", NULL};
    for (int i = 0; dirs[i]; i++) {
        DIR *d = opendir(dirs[i]);
        if (d == NULL) continue;
        struct dirent *e;
        int found = 0;
        while (!found && (e = readdir(d)) != NULL)
            found = e->d_name[0] != '.';
        closedir(d);
        if (found) return 1;
    }
    return 0;
}

static int ofi_reaches(const struct boot *boot, int rank)
{
    static int hw = -1;
    if (rank == boot->rank) return 0;
    if (!ofi_asked()) {
        if (hw < 0) hw = ofi_node_has_fabric();
        if (!hw) return 0;
    }
    if (ofi_probe() == NULL) return 0;
    if (!ofi_asked() && ofi_prov_is_software(ofi.info->fabric_attr->prov_name)) return 0;
    return 1;
}

static const char *ofi_mr_mode_str(uint64_t m, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s%s%s", m ? "" : "none", (m & FI_MR_LOCAL) ? " local" : "",
             (m & FI_MR_VIRT_ADDR) ? " virt_addr" : "", (m & FI_MR_ALLOCATED) ? " allocated" : "",
             (m & FI_MR_PROV_KEY) ? " prov_key" : "", (m & FI_MR_ENDPOINT) ? " endpoint" : "");
    return buf[0] == ' ' ? buf + 1 : buf;
}

void tl_ofi_info(FILE *out)
{
    util_tunables_load(NULL); /* in ternrun: TERN_OFI_* as a job of this shell would see them */
    if (ofi_lib_load() != 0) {
        fprintf(out, "  ofi: libfabric.so.1 not found (the ofi transport is unavailable)\n");
        return;
    }
    /* Which provider/domain pairs offer reads, then every one with messages. */
    struct fi_info *all = NULL;
    char rmaset[1024] = "";
    int rc = -FI_ENODATA;
    for (int rma = 1; rma >= 0; rma--) {
        struct fi_info *hints = ofi_lib.dupinfo(NULL);
        if (hints == NULL) return;
        hints->caps = FI_MSG | (rma ? FI_RMA | FI_READ | FI_REMOTE_READ : 0);
        hints->mode = FI_CONTEXT | FI_CONTEXT2;
        hints->ep_attr->type = FI_EP_RDM;
        hints->domain_attr->mr_mode =
            FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
        rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &all);
        fi_freeinfo(hints);
        if (!rma) break;
        for (struct fi_info *i = all; rc == 0 && i; i = i->next) {
            char key[160];
            snprintf(key, sizeof key, "|%s/%s|", i->fabric_attr->prov_name, i->domain_attr->name);
            if (!strstr(rmaset, key) && strlen(rmaset) + strlen(key) < sizeof rmaset)
                strcat(rmaset, key);
        }
        if (rc == 0) fi_freeinfo(all);
        all = NULL;
    }
    fprintf(out, "  ofi: libfabric providers with reliable-datagram messaging%s:\n",
            getenv("FI_PROVIDER") ? " (as FI_PROVIDER filters them)" : "");
    if (rc != 0) fprintf(out, "    none (%s)\n", fi_strerror(-rc));
    char seen[1024] = "", mm[96];
    for (struct fi_info *i = all; i; i = i->next) {
        char key[160];
        snprintf(key, sizeof key, "|%s/%s|", i->fabric_attr->prov_name, i->domain_attr->name);
        if (strstr(seen, key)) continue;
        if (strlen(seen) + strlen(key) < sizeof seen) strcat(seen, key);
        fprintf(
            out, "    %-14s domain %-10s %s, inject %zu B, max message %zu B, %s, mr_mode %s%s\n",
            i->fabric_attr->prov_name, i->domain_attr->name, strstr(rmaset, key) ? "RMA" : "no RMA",
            i->tx_attr->inject_size, i->ep_attr->max_msg_size,
            i->domain_attr->data_progress == FI_PROGRESS_AUTO ? "auto progress" : "manual progress",
            ofi_mr_mode_str(i->domain_attr->mr_mode, mm, sizeof mm),
            ofi_prov_is_software(i->fabric_attr->prov_name) ? " (software)" : "");
    }
    if (all) fi_freeinfo(all);
    struct fi_info *pick = ofi_probe();
    if (pick == NULL) {
        fprintf(out, "  ofi: chosen: none\n");
        return;
    }
    fprintf(out,
            "  ofi: chosen: %s (domain %s), %s; frames of %zu B, inject %zu B, tx queue %zu, rx "
            "queue %zu\n",
            pick->fabric_attr->prov_name, pick->domain_attr->name,
            ofi.rma ? "large messages read from registered memory (FI_RMA)"
                    : "large messages as CTS + DATA (no FI_RMA or TERN_OFI_RMA=0)",
            util_tun.ofi_frame, pick->tx_attr->inject_size, pick->tx_attr->size,
            pick->rx_attr->size);
    fprintf(out, "  ofi: used for peers on other nodes %s\n",
            ofi_asked() ? "(named in TERN_TRANSPORTS or TERN_OFI_PROVIDER)"
            : ofi_prov_is_software(pick->fabric_attr->prov_name)
                ? "only when named: a software provider, so tern's tcp serves by default"
            : !ofi_node_has_fabric()
                ? "only when named: no fabric device (/sys/class/infiniband, /sys/class/cxi)"
                : "by default (a fabric provider)");
}

static int ofi_err(const char *what, int rc)
{
    UTIL_ERROR("ofi: %s failed: %s", what, fi_strerror(rc < 0 ? -rc : rc));
    return TERN_ERR_TRANSPORT;
}

static int ofi_post_recv(struct ofi_ctx *c)
{
    ssize_t rc = fi_recv(ofi.ep, c->buf, ofi.frame, NULL, FI_ADDR_UNSPEC, c);
    if (rc == -FI_EAGAIN) {
        c->next = ofi.repost;
        ofi.repost = c;
        return 0;
    }
    return rc == 0 ? 0 : ofi_err("fi_recv", (int)rc);
}

/* The completion queue's file descriptor, where the provider has one. */
static void ofi_wait_init(void)
{
    int fd = -1;
    if (fi_control(&ofi.cq->fid, FI_GETWAIT, &fd) != 0 || fd < 0) return;
    ofi.epfd = epoll_create1(EPOLL_CLOEXEC);
    ofi_wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    struct epoll_event wev = {.events = EPOLLIN, .data.fd = ofi_wakefd};
    if (ofi.epfd < 0 || ofi_wakefd < 0 || epoll_ctl(ofi.epfd, EPOLL_CTL_ADD, fd, &ev) != 0 ||
        epoll_ctl(ofi.epfd, EPOLL_CTL_ADD, ofi_wakefd, &wev) != 0) {
        if (ofi.epfd >= 0) close(ofi.epfd);
        if (ofi_wakefd >= 0) close(ofi_wakefd);
        ofi.epfd = ofi_wakefd = -1;
        return;
    }
    ofi.waitfd = fd;
}

static int ofi_open(const struct tl_env *env, const int *peers, int n)
{
    struct boot *b = env->boot;
    struct fi_info *info = ofi_probe();
    if (info == NULL) {
        UTIL_ERROR("ofi: no libfabric provider offers reliable-datagram messaging%s%s",
                   util_tun.ofi_provider[0] ? " for TERN_OFI_PROVIDER=" : "",
                   util_tun.ofi_provider);
        return TERN_ERR_TRANSPORT;
    }
    ofi.boot = b;
    ofi.recv = env->recv;
    ofi.failed = env->failed;
    ofi.place = env->place;
    ofi.placed = env->placed;
    ofi.place_head = env->place ? env->place_head : 0;
    ofi.sent = env->sent;
    /* The receiver gives the core's place() a frame's head from the RTS: it must fit. */
    if (ofi.place_head > sizeof((struct ofi_rdv_rx *)0)->head) ofi.rma = 0;
    if (env->sent == NULL) ofi.rma = 0;
    ofi.addr = malloc((size_t)b->size * sizeof *ofi.addr);
    ofi.is_peer = calloc((size_t)b->size, 1);
    ofi.dead = calloc((size_t)b->size, 1);
    ofi.txseq = calloc((size_t)b->size, sizeof *ofi.txseq);
    ofi.rxseq = calloc((size_t)b->size, sizeof *ofi.rxseq);
    ofi.held = calloc((size_t)b->size, sizeof *ofi.held);
    ofi.txpend = calloc((size_t)b->size, sizeof *ofi.txpend);
    ofi.txmoved = calloc((size_t)b->size, sizeof *ofi.txmoved);
    ofi.refpend = calloc((size_t)b->size, 1);
    ofi.rdvrx = calloc((size_t)b->size, sizeof *ofi.rdvrx);
    ofi.injected = calloc((size_t)b->size, 1);
    if (!ofi.injected || !ofi.addr || !ofi.is_peer || !ofi.dead || !ofi.txseq || !ofi.rxseq ||
        !ofi.held || !ofi.txpend || !ofi.txmoved || !ofi.refpend || !ofi.rdvrx)
        return TERN_ERR_NOMEM;
    for (int r = 0; r < b->size; r++)
        ofi.addr[r] = FI_ADDR_NOTAVAIL;
    for (int i = 0; i < n; i++)
        ofi.is_peer[peers[i]] = 1;

    /* In passthru mode, and through rxm when its eager limit covers a frame
     * (ofi_rxm_eager_set), a receive buffer holds TERN_OFI_FRAME bytes of payload plus the
     * headers in front (ours and the core's), so a 64 KiB message is one frame (12.6
     * system calls per round trip in passthru mode) rather than an RTS and a read (34).
     * Through rxm's SAR protocol (16 KiB segments) one frame measured no better (40), so
     * with rxm's own limit the buffer stays TERN_OFI_FRAME. */
    ofi.passthru = info->ep_attr->protocol == FI_PROTO_RXM_TCP;
    size_t frame = util_tun.ofi_frame + (ofi.passthru || ofi_rxm_eager ? OFI_FRAME_SLACK : 0);
    if (frame < 4096) frame = 4096;
    if (info->ep_attr->max_msg_size && frame > info->ep_attr->max_msg_size)
        frame = info->ep_attr->max_msg_size;
    ofi.frame = frame;
    ofi.inject =
        info->tx_attr->inject_size < OFI_INJECT_MAX ? info->tx_attr->inject_size : OFI_INJECT_MAX;
    /* In passthru mode every frame is sent with a completion: an injected frame the tcp
     * provider still holds would be invisible to the nap of sleep_wait. */
    ofi.use_inject = util_tun.ofi_inject && ofi.inject > OFI_HDR && !ofi.passthru;
    /* Frames by reference (ofi_send_zref) need two pieces per send and no local
     * registration (FI_MR_LOCAL would want a descriptor for the user's buffer). */
    ofi.zref = util_tun.ofi_zcopy_min > 0 && !ofi.passthru && info->tx_attr->iov_limit >= 2 &&
               !(info->domain_attr->mr_mode & FI_MR_LOCAL) && !(info->mode & FI_LOCAL_MR);
    ofi.nrx = util_tun.ofi_recvs > 0 ? (int)util_tun.ofi_recvs : 1;
    if (info->rx_attr->size && (size_t)ofi.nrx > info->rx_attr->size)
        ofi.nrx = (int)info->rx_attr->size;

    int rc = fi_fabric(info->fabric_attr, &ofi.fabric, NULL);
    if (rc) return ofi_err("fi_fabric", rc);
    rc = fi_domain(ofi.fabric, info, &ofi.domain, NULL);
    if (rc) return ofi_err("fi_domain", rc);
    struct fi_av_attr av_attr = {.type = info->domain_attr->av_type, .count = (size_t)b->size};
    rc = fi_av_open(ofi.domain, &av_attr, &ofi.av, NULL);
    if (rc) return ofi_err("fi_av_open", rc);
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_MSG,
                                 .size = (size_t)ofi.nrx + OFI_MAX_TX + 64,
                                 .wait_obj = FI_WAIT_FD};
    rc = fi_cq_open(ofi.domain, &cq_attr, &ofi.cq, NULL);
    if (rc) { /* no fd to wait on: poll only */
        cq_attr.wait_obj = FI_WAIT_NONE;
        rc = fi_cq_open(ofi.domain, &cq_attr, &ofi.cq, NULL);
        if (rc) return ofi_err("fi_cq_open", rc);
    }
    rc = fi_endpoint(ofi.domain, info, &ofi.ep, NULL);
    if (rc) return ofi_err("fi_endpoint", rc);
    rc = fi_ep_bind(ofi.ep, &ofi.av->fid, 0);
    if (rc) return ofi_err("fi_ep_bind(av)", rc);
    rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc) return ofi_err("fi_ep_bind(cq)", rc);
    rc = fi_enable(ofi.ep);
    if (rc) return ofi_err("fi_enable", rc);
    if (cq_attr.wait_obj == FI_WAIT_FD) ofi_wait_init();
    /* Pinning providers (FI_MR_ALLOCATED) cache in libfabric, which sees unmaps (ofi_mr.c). */
    uint64_t mode = info->domain_attr->mr_mode;
    ofi_mr_cache_init(&ofi.mrc, ofi.domain, ofi.ep, mode,
                      (mode & FI_MR_ALLOCATED) ? 0 : (int)util_tun.ofi_mr_cache);

    ofi.rx = calloc((size_t)ofi.nrx, sizeof *ofi.rx);
    ofi.rxbuf = aligned_alloc(64, (size_t)ofi.nrx * frame);
    if (!ofi.rx || !ofi.rxbuf) return TERN_ERR_NOMEM;
    ofi.tx = calloc(OFI_MAX_TX, sizeof *ofi.tx);
    ofi.txbuf = aligned_alloc(64, (size_t)OFI_MAX_TX * frame);
    if (!ofi.tx || !ofi.txbuf) return TERN_ERR_NOMEM;
    for (int i = OFI_MAX_TX - 1; i >= 0; i--) {
        ofi.tx[i].kind = OFI_TX;
        ofi.tx[i].buf = ofi.txbuf + (size_t)i * frame;
        ofi.tx[i].next = ofi.txfree;
        ofi.txfree = &ofi.tx[i];
    }
    for (int i = 0; i < ofi.nrx; i++) {
        ofi.rx[i].kind = OFI_RX;
        ofi.rx[i].buf = ofi.rxbuf + (size_t)i * frame;
        rc = ofi_post_recv(&ofi.rx[i]);
        if (rc) return rc;
    }

    unsigned char name[OFI_ADDR_MAX];
    size_t len = sizeof name;
    rc = fi_getname(&ofi.ep->fid, name, &len);
    if (rc) return ofi_err("fi_getname", rc);
    char key[64], card[2 * OFI_ADDR_MAX + 64];
    int off =
        snprintf(card, sizeof card, "%s%s:", info->fabric_attr->prov_name, ofi.rma ? "+rma" : "");
    for (size_t i = 0; i < len; i++)
        off += snprintf(card + off, sizeof card - (size_t)off, "%02x", name[i]);
    snprintf(key, sizeof key, OFI_KEY_FMT, b->rank);
    UTIL_DEBUG(1, "ofi: %d peer(s), frames of %zu B, inject %zu B, %d receives, %s, %s", n, frame,
               ofi.inject, ofi.nrx, ofi.waitfd >= 0 ? "sleeps on the CQ fd" : "polls only",
               ofi.rma ? "reads above it" : "no reads");
    return boot_put(b, key, card);
}

static int ofi_hex(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static int ofi_connect(void)
{
    char prov[128];
    snprintf(prov, sizeof prov, "%s%s", ofi.info->fabric_attr->prov_name, ofi.rma ? "+rma" : "");
    size_t plen = strlen(prov);
    for (int r = 0; r < ofi.boot->size; r++) {
        if (!ofi.is_peer[r]) continue;
        char key[64], card[2 * OFI_ADDR_MAX + 64];
        snprintf(key, sizeof key, OFI_KEY_FMT, r);
        int rc = boot_get(ofi.boot, key, card, sizeof card);
        if (rc) {
            UTIL_ERROR("ofi: rank %d published no address (%s)", r, key);
            return rc;
        }
        if (strncmp(card, prov, plen) != 0 || card[plen] != ':') {
            UTIL_ERROR("ofi: rank %d uses another provider (%s; mine is %s): set "
                       "TERN_OFI_PROVIDER, FI_PROVIDER and TERN_OFI_RMA alike on every node",
                       r, card, prov);
            return TERN_ERR_TRANSPORT;
        }
        unsigned char name[OFI_ADDR_MAX];
        const char *h = card + plen + 1;
        size_t len = 0;
        for (; h[0] && h[1] && len < sizeof name; h += 2) {
            int hi = ofi_hex(h[0]), lo = ofi_hex(h[1]);
            if (hi < 0 || lo < 0) break;
            name[len++] = (unsigned char)(hi << 4 | lo);
        }
        if (h[0] != '\0' || len == 0) {
            UTIL_ERROR("ofi: rank %d's address card is malformed", r);
            return TERN_ERR_TRANSPORT;
        }
        rc = fi_av_insert(ofi.av, name, 1, &ofi.addr[r], 0, NULL);
        if (rc != 1) return ofi_err("fi_av_insert", rc < 0 ? rc : -FI_EINVAL);
    }
    return 0;
}

static long ofi_ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static long ofi_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static struct ofi_ctx *ofi_tx_get(void)
{
    struct ofi_ctx *c = ofi.txfree;
    if (c) ofi.txfree = c->next;
    return c;
}

static void ofi_tx_put(struct ofi_ctx *c)
{
    c->next = ofi.txfree;
    ofi.txfree = c;
}

/* Post one message to dest: len bytes already in c->buf (header included), or with
 * v != NULL the nv pieces of v (len bytes in all). */
static int ofi_post_send(int dest, struct ofi_ctx *c, size_t len, const struct iovec *v, int nv)
{
    ssize_t rc = v ? fi_sendv(ofi.ep, v, NULL, (size_t)nv, ofi.addr[dest], c)
                   : fi_send(ofi.ep, c->buf, len, NULL, ofi.addr[dest], c);
    if (rc == 0) {
        if (len <= ofi.inject)
            ofi.n_small++;
        else
            ofi.n_copy++;
        ofi.inflight++;
        if (ofi.txpend[dest]++ == 0) ofi.txmoved[dest] = ofi_now_ms();
        /* Passthru: another thread asleep in ofi_sleep_wait chose its length before this
         * send existed (ofi_sleep_begin); wake it so that it takes the short nap. */
        if (ofi_long_sleeper()) ofi_wake_self();
        return 0;
    }
    UTIL_DEBUG(3, "ofi: send to %d: %s", dest, fi_strerror((int)-rc));
    if (rc == -FI_EAGAIN) {
        ofi.tx_again = 1;
        return TERN_ERR_AGAIN;
    }
    return ofi_err("fi_send", (int)rc);
}

static int ofi_send(int dest, const struct iovec *iov, int iovcnt, size_t total);

/*
 * A frame too large for one message goes by RTS: its first `inl` bytes (the pieces before
 * the last, and at least the core's place_head) travel in the RTS, the rest stays where
 * it is - the last iov piece, registered - and the receiver reads it with fi_read. `copy`
 * non-NULL: iov is one piece, our own copy of the frame, freed at the FIN; else the
 * caller's payload stays referenced and env->sent(cookie) reports the FIN.
 */
static int ofi_send_rts(int dest, const struct iovec *iov, int iovcnt, size_t total, void *cookie,
                        void *copy)
{
    size_t last = iov[iovcnt - 1].iov_len, pre = total - last;
    size_t inl = pre;
    if (inl < ofi.place_head) inl = ofi.place_head < total ? ofi.place_head : total;
    if (inl >= total || OFI_HDR + sizeof(struct ofi_rts) + inl > ofi.frame)
        return TERN_ERR_UNSUPPORTED; /* the caller copies instead */
    int slot = -1;
    for (int i = 0; i < OFI_MAX_RDV; i++)
        if (!ofi.rdvtx[i].used) {
            slot = i;
            break;
        }
    if (slot < 0) return TERN_ERR_AGAIN;
    struct ofi_ctx *c = ofi_tx_get();
    if (c == NULL) return TERN_ERR_AGAIN;
    const char *rbase = (const char *)iov[iovcnt - 1].iov_base + (inl - pre);
    struct ofi_mr *mr;
    int rc = ofi_mr_get(&ofi.mrc, rbase, total - inl, copy == NULL, &mr);
    if (rc) {
        ofi_tx_put(c);
        return ofi_err("fi_mr_reg", rc);
    }
    struct ofi_hdr h = {.src = (uint32_t)ofi.boot->rank | (uint32_t)OFI_T_RTS << 28,
                        .seq = ofi.txseq[dest]};
    struct ofi_rts m = {.total = total,
                        .raddr = ofi_mr_remote(&ofi.mrc, mr, rbase),
                        .rkey = mr->key,
                        .inl = (uint32_t)inl,
                        .slot = (uint32_t)slot};
    c->peer = dest;
    memcpy(c->buf, &h, OFI_HDR);
    memcpy(c->buf + OFI_HDR, &m, sizeof m);
    struct iovec v[TL_MAX_IOV];
    memcpy(v, iov, (size_t)iovcnt * sizeof *v);
    v[iovcnt - 1].iov_len = inl - pre;
    tl_iov_copy(c->buf + OFI_HDR + sizeof m, v, iovcnt);
    rc = ofi_post_send(dest, c, OFI_HDR + sizeof m + inl, NULL, 0);
    if (rc) {
        ofi_tx_put(c);
        ofi_mr_put(&ofi.mrc, mr);
        return rc;
    }
    ofi.txseq[dest]++;
    ofi.rdvtx[slot] =
        (struct ofi_rdv_tx){.used = 1, .dest = dest, .cookie = cookie, .mr = mr, .copy = copy};
    ofi.nrdvtx++;
    ofi.n_rts++;
    if (cookie) ofi.refpend[dest] = 1;
    return 0;
}

/*
 * A frame up to the provider's inject size goes by fi_inject: the provider copies it and
 * reports no completion, so a small message costs no send completion - under
 * tcp;ofi_rxm none of the completion queue's signal write and read, and no trip through
 * rxm's inner queue (measured in FABRIC.md). busy() does not see these frames; close()
 * makes sure they left (ofi_flush_injected). A provider that still reports a completion
 * for them (udp;ofi_rxd does, without a context) has it skipped by progress.
 */
static int ofi_inject(int dest, const struct ofi_hdr *h, const struct iovec *iov, int iovcnt,
                      size_t len)
{
    char buf[OFI_INJECT_MAX];
    memcpy(buf, h, OFI_HDR);
    tl_iov_copy(buf + OFI_HDR, iov, iovcnt);
    ssize_t rc = fi_inject(ofi.ep, buf, len, ofi.addr[dest]);
    if (rc == 0) {
        ofi.txseq[dest]++;
        ofi.injected[dest] = 1;
        ofi.n_inject++;
        return 0;
    }
    UTIL_DEBUG(3, "ofi: inject to %d: %s", dest, fi_strerror((int)-rc));
    if (rc == -FI_EAGAIN) {
        ofi.tx_again = 1;
        return TERN_ERR_AGAIN;
    }
    return ofi_err("fi_inject", (int)rc);
}

static int ofi_send(int dest, const struct iovec *iov, int iovcnt, size_t total)
{
    if (ofi.dead[dest]) return TERN_ERR_PEER_FAILED;
    size_t len = OFI_HDR + total;
    if (len > ofi.frame) {
        /* Larger than a receive buffer (only with reads on): the frame is copied once
         * here, since send() lets go of iov at return, and the peer reads the copy. */
        if (!ofi.rma || total > OFI_RMA_FRAME) return TERN_ERR_INVAL;
        if (ofi.nrdvtx >= OFI_MAX_RDV || ofi.txfree == NULL) return TERN_ERR_AGAIN;
        void *copy = malloc(total);
        if (copy == NULL) return TERN_ERR_NOMEM;
        tl_iov_copy(copy, iov, iovcnt);
        struct iovec one = {copy, total};
        int rc = ofi_send_rts(dest, &one, 1, total, NULL, copy);
        if (rc) free(copy);
        return rc == TERN_ERR_UNSUPPORTED ? TERN_ERR_INVAL : rc;
    }
    struct ofi_hdr h = {.src = (uint32_t)ofi.boot->rank, .seq = ofi.txseq[dest]};
    if (ofi.use_inject && len <= ofi.inject) return ofi_inject(dest, &h, iov, iovcnt, len);
    struct ofi_ctx *c = ofi_tx_get();
    if (c == NULL) return TERN_ERR_AGAIN;
    c->peer = dest;
    /* Larger frames are copied into a buffer of the context and sent with a completion,
     * which gives the buffer back and tells health() the peer takes them. */
    memcpy(c->buf, &h, OFI_HDR);
    tl_iov_copy(c->buf + OFI_HDR, iov, iovcnt);
    int rc = ofi_post_send(dest, c, len, NULL, 0);
    if (rc == 0) {
        ofi.txseq[dest]++;
        return 0;
    }
    ofi_tx_put(c);
    return rc;
}

/*
 * A frame that fits a receive buffer, its payload (the last piece) sent from where it is:
 * the headers are copied into a send context, the payload is the second piece of an
 * fi_sendv, and the core hears sent(cookie) at the send's completion, so a 16-64 KiB
 * frame costs the sender no copy (tcp's send_ref does the same). One per peer at a
 * time, as reads (unref names no cookie); while one is out, frames are copied. Returns
 * 1 (sent(cookie) follows), or what send() returns when it copies instead.
 */
static int ofi_send_zref(int dest, const struct iovec *iov, int iovcnt, size_t total, void *cookie)
{
    struct ofi_ctx *c = ofi.txfree;
    if (c == NULL || ofi.refpend[dest]) return ofi_send(dest, iov, iovcnt, total);
    const struct iovec *pay = &iov[iovcnt - 1];
    size_t head = OFI_HDR + total - pay->iov_len;
    ofi_tx_get();
    c->peer = dest;
    struct ofi_hdr h = {.src = (uint32_t)ofi.boot->rank, .seq = ofi.txseq[dest]};
    memcpy(c->buf, &h, OFI_HDR);
    tl_iov_copy(c->buf + OFI_HDR, iov, iovcnt - 1);
    struct iovec v[2] = {{c->buf, head}, *pay};
    int rc = ofi_post_send(dest, c, OFI_HDR + total, v, 2);
    if (rc) {
        ofi_tx_put(c);
        return rc;
    }
    ofi.txseq[dest]++;
    ofi.n_zref++;
    c->cookie = cookie;
    ofi.refpend[dest] = 1;
    return 1;
}

/* send_ref: frames above one receive buffer leave their payload where it is (the peer
 * reads it); smaller ones are copied as by send() and are out at return, or with
 * TERN_OFI_ZCOPY_MIN sent from where they are (ofi_send_zref). */
static int ofi_send_ref(int dest, const struct iovec *iov, int iovcnt, size_t total, void *cookie)
{
    if (!ofi.rma || OFI_HDR + total <= ofi.frame) {
        if (ofi.zref && !ofi.dead[dest] && iovcnt >= 1 &&
            iov[iovcnt - 1].iov_len >= util_tun.ofi_zcopy_min && OFI_HDR + total <= ofi.frame)
            return ofi_send_zref(dest, iov, iovcnt, total, cookie);
        return ofi_send(dest, iov, iovcnt, total);
    }
    if (ofi.dead[dest]) return TERN_ERR_PEER_FAILED;
    /* One referenced payload per peer: unref(dest) names no cookie. */
    if (ofi.refpend[dest]) return TERN_ERR_AGAIN;
    int rc = ofi_send_rts(dest, iov, iovcnt, total, cookie, NULL);
    if (rc == TERN_ERR_UNSUPPORTED) return ofi_send(dest, iov, iovcnt, total);
    return rc == 0 ? 1 : rc;
}

/* The payload a send_ref to dest referenced is the caller's again. The peer may still
 * read it (an RMA read cannot be called back): the registration stays until the FIN
 * or the peer's failure, and the read sees whatever the buffer holds then. */
static void ofi_unref(int dest)
{
    for (int i = 0; i < OFI_MAX_RDV; i++)
        if (ofi.rdvtx[i].used && ofi.rdvtx[i].dest == dest) ofi.rdvtx[i].cookie = NULL;
    /* A frame sent by reference cannot be called back either: the provider may still
     * send from the payload, as a read may still read it. */
    for (int i = 0; ofi.tx && i < OFI_MAX_TX; i++)
        if (ofi.tx[i].cookie && ofi.tx[i].peer == dest) ofi.tx[i].cookie = NULL;
    ofi.refpend[dest] = 0;
}

/* A sender's slot is done (FIN, or its peer failed): release it, and tell the core. */
static void ofi_rdv_tx_done(int slot, int report)
{
    struct ofi_rdv_tx *t = &ofi.rdvtx[slot];
    if (!t->used) return;
    ofi_mr_put(&ofi.mrc, t->mr);
    free(t->copy);
    void *cookie = t->cookie;
    if (cookie) ofi.refpend[t->dest] = 0;
    *t = (struct ofi_rdv_tx){0};
    ofi.nrdvtx--;
    if (cookie && report && ofi.sent) ofi.sent(cookie, 0);
}

/* Send a control message (FIN for a slot, or NOP) to dest (queued when the provider
 * has no room). */
static void ofi_send_ctl(int dest, uint32_t type, uint32_t slot)
{
    struct ofi_ctx *c = calloc(1, sizeof *c + OFI_HDR);
    if (c == NULL) {
        UTIL_ERROR("ofi: out of memory for a FIN to rank %d", dest);
        return;
    }
    c->kind = OFI_CTL;
    c->peer = dest;
    c->buf = (char *)(c + 1);
    struct ofi_hdr h = {.src = (uint32_t)ofi.boot->rank | type << 28, .seq = slot};
    memcpy(c->buf, &h, OFI_HDR);
    ofi.nctl++;
    ssize_t rc = fi_send(ofi.ep, c->buf, OFI_HDR, NULL, ofi.addr[dest], c);
    if (rc == -FI_EAGAIN) {
        c->next = ofi.ctlq;
        ofi.ctlq = c;
    } else if (rc != 0) {
        ofi.nctl--;
        free(c);
        ofi_err("fi_send(control)", (int)rc);
    }
}

static void ofi_send_fin(int dest, uint32_t slot)
{
    ofi_send_ctl(dest, OFI_T_FIN, slot);
}

/*
 * Injected frames have no completion, and closing the endpoint drops what the provider
 * still queues. A NOP with a completion behind them, to every peer that had some, says
 * they left: the provider sends to a peer in order (the connection of ofi_rxm, the
 * socket of sockets) or - reliable-datagram providers that do not - has by then at
 * least taken them (udp;ofi_rxd retransmits until close). close() waits for the NOPs
 * as for FINs.
 */
static void ofi_flush_injected(void)
{
    for (int r = 0; r < ofi.boot->size; r++)
        if (ofi.injected[r] && !ofi.dead[r]) {
            ofi.injected[r] = 0;
            ofi_send_ctl(r, OFI_T_NOP, 0);
        }
}

/* FINs that found no room: try again. */
static void ofi_ctl_retry(void)
{
    while (ofi.ctlq) {
        struct ofi_ctx *c = ofi.ctlq;
        ssize_t rc = fi_send(ofi.ep, c->buf, OFI_HDR, NULL, ofi.addr[c->peer], c);
        if (rc == -FI_EAGAIN) return;
        ofi.ctlq = c->next;
        if (rc != 0) {
            ofi.nctl--;
            free(c);
        }
    }
}

static void ofi_rd_finish(struct ofi_rdv_rx *rd);

/* A peer could not be reached: report it once. */
static void ofi_peer_dead(int rank, int err)
{
    if (rank < 0 || rank >= ofi.boot->size || ofi.dead[rank]) return;
    ofi.dead[rank] = 1;
    while (ofi.held[rank]) { /* frames that will never be delivered: their buffers back */
        struct ofi_ctx *c = ofi.held[rank];
        ofi.held[rank] = c->next;
        if (ofi.ep) ofi_post_recv(c);
    }
    UTIL_DEBUG(1, "ofi: a send to rank %d failed (%s): peer failed", rank, fi_strerror(err));
    if (ofi.failed) ofi.failed(rank);
    /* Its reads of my memory will not come, nor will its FINs. */
    for (int i = 0; i < OFI_MAX_RDV; i++)
        if (ofi.rdvtx[i].used && ofi.rdvtx[i].dest == rank) ofi_rdv_tx_done(i, 0);
    struct ofi_rdv_rx *rd = ofi.rdvrx[rank];
    if (rd) {
        rd->err = 1;
        if (rd->ops == 0) ofi_rd_finish(rd);
    }
}

static void ofi_rd_post(struct ofi_rdv_rx *rd);
static void ofi_deliver(int src, struct ofi_ctx *c, size_t len);

/* An RTS from src is at its turn: ask the core where the frame goes (place), or read it
 * whole into a temporary, and start the reads. The RTS's buffer is posted again at once;
 * src's later frames wait until the read is over (rxseq stays at the RTS). */
static void ofi_rd_start(int src, struct ofi_ctx *c, size_t len)
{
    struct ofi_rts m;
    struct ofi_rdv_rx *rd = NULL;
    if (len >= OFI_HDR + sizeof m) memcpy(&m, c->buf + OFI_HDR, sizeof m);
    if (len < OFI_HDR + sizeof m || m.inl > len - OFI_HDR - sizeof m || m.inl > m.total ||
        m.total > OFI_RMA_FRAME || (rd = calloc(1, sizeof *rd)) == NULL) {
        UTIL_ERROR("ofi: a malformed or unaffordable RTS from rank %d", src);
        if (ofi.ep) ofi_post_recv(c);
        ofi_peer_dead(src, FI_EINVAL);
        return;
    }
    const char *inl = c->buf + OFI_HDR + sizeof m;
    rd->src = src;
    rd->slot = m.slot;
    rd->total = m.total;
    rd->raddr = m.raddr;
    rd->rkey = m.rkey;
    rd->rlen = m.total - m.inl;
    rd->hlen = ofi.place_head < m.total ? ofi.place_head : m.total;
    if (rd->hlen > m.inl) rd->hlen = m.inl;
    memcpy(rd->head, inl, rd->hlen);
    struct iovec *iov = NULL;
    int n = ofi.place && rd->hlen == ofi.place_head
                ? ofi.place(src, rd->head, rd->hlen, rd->total, &iov)
                : 0;
    if (n > 0) {
        /* Bytes [hlen, inl) came with the RTS: they go first. */
        size_t rest = m.inl - rd->hlen;
        const char *from = inl + rd->hlen;
        int k = 0;
        size_t off = 0;
        while (rest > 0 && k < n) {
            size_t take = iov[k].iov_len - off < rest ? iov[k].iov_len - off : rest;
            util_copy((char *)iov[k].iov_base + off, from, take);
            from += take;
            rest -= take;
            off += take;
            if (off == iov[k].iov_len) k++, off = 0;
        }
        rd->iov = iov;
        rd->niov = n;
        rd->ki = k;
        rd->koff = off;
        rd->placed = 1;
    } else {
        rd->tmp = malloc(m.total ? m.total : 1);
        if (rd->tmp == NULL) {
            UTIL_ERROR("ofi: out of memory for a %llu-byte frame from rank %d",
                       (unsigned long long)m.total, src);
            free(rd);
            if (ofi.ep) ofi_post_recv(c);
            ofi_peer_dead(src, FI_ENOMEM);
            return;
        }
        util_copy(rd->tmp, inl, m.inl);
        rd->one = (struct iovec){rd->tmp + m.inl, rd->rlen};
        rd->iov = &rd->one;
        rd->niov = 1;
    }
    if (ofi.ep) ofi_post_recv(c);
    ofi.rdvrx[src] = rd;
    rd->next = ofi.reading;
    ofi.reading = rd;
    ofi_rd_post(rd);
    if (rd->ops == 0 && rd->roff == rd->rlen) ofi_rd_finish(rd);
}

/* Ask for more of rd's bytes: up to OFI_RD_MAXOPS reads of OFI_RD_CHUNK at once. */
static void ofi_rd_post(struct ofi_rdv_rx *rd)
{
    while (!rd->err && rd->ops < OFI_RD_MAXOPS && rd->roff < rd->rlen && rd->ki < rd->niov) {
        struct iovec *v = &rd->iov[rd->ki];
        size_t n = v->iov_len - rd->koff;
        if (n > OFI_RD_CHUNK) n = OFI_RD_CHUNK;
        if (n > rd->rlen - rd->roff) n = rd->rlen - rd->roff;
        if (n == 0) {
            rd->ki++, rd->koff = 0;
            continue;
        }
        struct ofi_ctx *c = calloc(1, sizeof *c);
        if (c == NULL) return; /* tried again from progress */
        c->kind = OFI_RD;
        c->peer = rd->src;
        c->rd = rd;
        c->len = n;
        ssize_t rc = fi_read(ofi.ep, (char *)v->iov_base + rd->koff, n, NULL, ofi.addr[rd->src],
                             rd->raddr + rd->roff, rd->rkey, c);
        if (rc == -FI_EAGAIN) {
            free(c);
            return;
        }
        if (rc != 0) {
            free(c);
            ofi_err("fi_read", (int)rc);
            rd->err = 1;
            return;
        }
        rd->ops++;
        rd->roff += n;
        rd->koff += n;
        if (rd->koff == v->iov_len) rd->ki++, rd->koff = 0;
    }
    if (rd->roff < rd->rlen && rd->ki >= rd->niov) {
        UTIL_ERROR("ofi: rank %d announced %zu bytes more than the destination holds", rd->src,
                   rd->rlen - rd->roff);
        rd->err = 1;
    }
}

/* Every byte of rd is in (or it failed): hand the frame to the core, FIN the sender,
 * and deliver src's frames that waited behind it. */
static void ofi_rd_finish(struct ofi_rdv_rx *rd)
{
    int src = rd->src;
    struct ofi_rdv_rx **pp = &ofi.reading;
    while (*pp != rd)
        pp = &(*pp)->next;
    *pp = rd->next;
    if (ofi.rdvrx[src] == rd) ofi.rdvrx[src] = NULL;
    if (rd->err || ofi.dead[src] || ofi.closing) {
        free(rd->tmp);
        free(rd);
        if (!ofi.dead[src] && !ofi.closing) ofi_peer_dead(src, FI_EIO);
        return;
    }
    ofi.n_read_bytes += rd->rlen;
    ofi.rxseq[src]++;
    ofi_send_fin(src, rd->slot);
    if (rd->placed)
        ofi.placed(src, rd->head, rd->hlen, rd->total);
    else
        ofi.recv(src, rd->tmp, rd->total);
    free(rd->tmp);
    free(rd);
    /* The frames that arrived behind it. */
    struct ofi_ctx **hp = &ofi.held[src];
    while (*hp && (*hp)->seq != ofi.rxseq[src])
        hp = &(*hp)->next;
    if (*hp == NULL || ofi.dead[src]) return;
    struct ofi_ctx *c = *hp;
    *hp = c->next;
    ofi_deliver(src, c, c->len);
}

/* Hand the frame in c (the one src's turn is at) to the core, then every held frame
 * whose turn follows; their buffers are posted again. An RTS stops the walk until its
 * read is over. */
static void ofi_deliver(int src, struct ofi_ctx *c, size_t len)
{
    for (;;) {
        uint32_t type;
        memcpy(&type, c->buf, sizeof type);
        if (type >> 28 == OFI_T_RTS) {
            ofi_rd_start(src, c, len);
            return;
        }
        ofi.rxseq[src]++;
        ofi.recv(src, c->buf + OFI_HDR, len - OFI_HDR);
        if (ofi.ep) ofi_post_recv(c);
        struct ofi_ctx **pp = &ofi.held[src];
        while (*pp && (*pp)->seq != ofi.rxseq[src])
            pp = &(*pp)->next;
        if (*pp == NULL || ofi.dead[src]) return;
        c = *pp;
        *pp = c->next;
        len = c->len;
    }
}

static void ofi_complete(struct ofi_ctx *c, size_t len, int deliver)
{
    if (c->kind == OFI_TX) {
        ofi.tx_again = 0;
        ofi.inflight--;
        ofi.txpend[c->peer]--;
        ofi.txmoved[c->peer] = ofi_now_ms();
        void *cookie = c->cookie; /* sent by reference: the payload is the caller's again */
        c->cookie = NULL;
        if (cookie) ofi.refpend[c->peer] = 0;
        ofi_tx_put(c);
        if (cookie && ofi.sent) ofi.sent(cookie, 0);
        return;
    }
    if (c->kind == OFI_CTL) {
        ofi.nctl--;
        free(c);
        return;
    }
    if (c->kind == OFI_RD) {
        struct ofi_rdv_rx *rd = c->rd;
        free(c);
        rd->ops--;
        if (len == (size_t)-1) rd->err = 1; /* from ofi_cq_error */
        ofi_rd_post(rd);
        if (rd->ops == 0 && (rd->err || rd->roff == rd->rlen)) ofi_rd_finish(rd);
        return;
    }
    struct ofi_hdr h = {0};
    if (len >= OFI_HDR) memcpy(&h, c->buf, sizeof h);
    uint32_t type = h.src >> 28;
    h.src &= OFI_SRC_MASK;
    if (len >= OFI_HDR && type == OFI_T_FIN && h.src < (uint32_t)ofi.boot->size &&
        h.seq < OFI_MAX_RDV && ofi.rdvtx[h.seq].used && ofi.rdvtx[h.seq].dest == (int)h.src) {
        /* Taken at close too (deliver 0): it ends a send that busy() waits for. */
        if (ofi.ep) ofi_post_recv(c);
        ofi_rdv_tx_done((int)h.seq, 1);
        return;
    }
    if (len >= OFI_HDR && type == OFI_T_NOP) { /* a peer's close() flushing its injects */
        if (ofi.ep) ofi_post_recv(c);
        return;
    }
    if (deliver && len >= OFI_HDR) {
        if (type <= OFI_T_RTS && h.src < (uint32_t)ofi.boot->size && ofi.is_peer[h.src] &&
            !ofi.dead[h.src]) {
            int src = (int)h.src;
            if (h.seq != ofi.rxseq[src]) {
                /* Ahead of its turn: a provider may complete a large message (its own
                 * rendezvous) after a smaller one sent later. Keep the buffer until the
                 * frames before it are in. */
                c->seq = h.seq;
                c->len = len;
                c->next = ofi.held[src];
                ofi.held[src] = c;
                ofi.n_held++;
                return;
            }
            ofi_deliver(src, c, len);
            return;
        }
        UTIL_DEBUG(1, "ofi: dropped a frame from unknown or failed rank %u", h.src);
    }
    if (ofi.ep) ofi_post_recv(c);
}

/* Take one error completion. */
static void ofi_cq_error(int deliver)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof e);
    if (fi_cq_readerr(ofi.cq, &e, 0) != 1) return;
    struct ofi_ctx *c = e.op_context;
    ofi.n_err++;
    if (c == NULL) return;
    if (c->kind == OFI_TX || c->kind == OFI_CTL) {
        int peer = c->peer;
        /* A frame sent by reference did not arrive: no sent() (it would complete the send
         * as delivered); the peer's failure ends its request, and unref comes then. */
        if (c->kind == OFI_TX && c->cookie) {
            c->cookie = NULL;
            ofi.refpend[peer] = 0;
        }
        ofi_complete(c, 0, 0);
        if (deliver) ofi_peer_dead(peer, e.err);
        return;
    }
    if (c->kind == OFI_RD) { /* the sender's memory could not be read: it is gone */
        UTIL_DEBUG(1, "ofi: a read from rank %d failed: %s", c->peer, fi_strerror(e.err));
        ofi_complete(c, (size_t)-1, deliver);
        return;
    }
    /* A receive that failed (cancelled at close, or truncated: a frame too large, which
     * a peer of this build never sends) is posted again while the endpoint lives. */
    if (e.err != FI_ECANCELED) UTIL_ERROR("ofi: a receive failed: %s", fi_strerror(e.err));
    if (e.err != FI_ECANCELED && ofi.ep) ofi_post_recv(c);
}

/* Read completions; deliver frames through the up-call when `deliver`. */
static int ofi_progress(int deliver)
{
    int got = 0;
    if (ofi.ctlq) ofi_ctl_retry();
    for (struct ofi_rdv_rx *rd = ofi.reading; rd; rd = rd->next)
        if (rd->ops < OFI_RD_MAXOPS && rd->roff < rd->rlen) ofi_rd_post(rd);
    while (ofi.repost) {
        struct ofi_ctx *c = ofi.repost;
        ofi.repost = c->next;
        if (fi_recv(ofi.ep, c->buf, ofi.frame, NULL, FI_ADDR_UNSPEC, c) == -FI_EAGAIN) {
            c->next = ofi.repost;
            ofi.repost = c;
            break;
        }
    }
    for (;;) {
        struct fi_cq_msg_entry e[OFI_CQ_BATCH];
        ssize_t n = fi_cq_read(ofi.cq, e, OFI_CQ_BATCH);
        if (n == -FI_EAGAIN) break;
        if (n == -FI_EAVAIL) {
            ofi.n_comp++;
            ofi_cq_error(deliver);
            continue;
        }
        if (n < 0) return ofi_err("fi_cq_read", (int)n);
        for (ssize_t i = 0; i < n; i++) {
            struct ofi_ctx *c = e[i].op_context;
            if (c == NULL) {
                UTIL_DEBUG(1, "ofi: completion without context (flags %#llx)",
                           (unsigned long long)e[i].flags);
                continue;
            }
            if (c->kind == OFI_RX) got++;
            ofi.n_comp++;
            ofi_complete(c, e[i].len, deliver);
        }
        if (n < OFI_CQ_BATCH) break;
    }
    return got;
}

static int ofi_poll(void)
{
    return ofi_progress(1);
}

/*
 * Liveness. ofi_rxm reports no error for sends to a peer that died: they stay in flight
 * for good (measured: 256 sends to a killed peer, no completion in 30 s). So a peer
 * with sends in flight none of which completed for TERN_OFI_SEND_TIMEOUT_MS is taken
 * for dead. The core calls this while it waits, every TERN_FAILURE_CHECK_MS.
 */
static int ofi_health(void)
{
    if (util_tun.ofi_send_timeout_ms <= 0 || ofi.inflight == 0) return 0;
    long now = ofi_now_ms();
    for (int r = 0; r < ofi.boot->size; r++)
        if (ofi.txpend[r] > 0 && !ofi.dead[r] &&
            now - ofi.txmoved[r] > util_tun.ofi_send_timeout_ms) {
            UTIL_ERROR("ofi: %d send(s) to rank %d not completed in %ld ms: taking it for "
                       "dead (TERN_OFI_SEND_TIMEOUT_MS)",
                       ofi.txpend[r], r, now - ofi.txmoved[r]);
            ofi_peer_dead(r, FI_ETIMEDOUT);
        }
    return 0;
}

static int ofi_busy(void)
{
    /* Sends to a failed peer never leave: finalize must not wait for them. */
    int n = ofi.inflight;
    for (int r = 0; n > 0 && r < ofi.boot->size; r++)
        if (ofi.dead[r]) n -= ofi.txpend[r];
    /* A frame a peer reads is out only at its FIN; a FIN must leave too. */
    return n > 0 || ofi.nrdvtx > 0 || ofi.nctl > 0 || ofi.reading != NULL;
}

/*
 * Sleeping (only with the CQ's fd). fi_trywait answers whether it is safe to block on
 * the fd: -FI_EAGAIN means completions are pending or the provider needs progress
 * first, and then the sleep is skipped. With threads, sleep_wait runs outside the
 * core's lock and touches only the epoll set and the eventfd.
 */
/*
 * fi_trywait refuses while the provider has work it has not progressed (under
 * tcp;ofi_rxm: bytes its tcp layer has read ahead, completions of its own inner queue),
 * and that work is moved only by reading the completion queue. So on a refusal progress
 * once more: anything that completes ends this sleep (the core looks at it first);
 * nothing, and the provider is asked again. (Measured under tcp;ofi_rxm: 0 refusals in
 * about 16,000 sleeps per rank of a ping-pong - the zero-timeout epoll_waits seen there
 * are the provider polling its own sockets; the retry is for providers that do refuse.)
 */
#define OFI_TRYWAIT_TRIES 3

static void ofi_sleep_begin(void)
{
    struct fid *f = &ofi.cq->fid;
    ofi_sleep_state = OFI_AWAKE;
    if (ofi.waitfd < 0) return;
    for (int i = 0; i < OFI_TRYWAIT_TRIES; i++) {
        if (ofi.repost == NULL && fi_trywait(ofi.fabric, &f, 1) == FI_SUCCESS) {
            /* Read here, under the library's lock: ofi_sleep_wait runs without it. */
            /* In passthru mode every sleep is a nap (see ofi_sleep_wait). */
            int nap = ofi.passthru;
            ofi_sleep_state = nap ? OFI_SLEEP_NAP : OFI_SLEEP_FULL;
            ofi.n_sleep++;
            return;
        }
        unsigned long before = ofi.n_comp;
        ofi_progress(1);
        if (ofi.n_comp != before) return; /* something came: no sleep */
        ofi.n_trywait_retry++;
    }
    ofi.n_nosleep++;
}

/* Longest sleep (ms) in passthru mode while something of ours is still to leave. */
#define OFI_PASSTHRU_NAP_MS 1

static void ofi_sleep_wait(int timeout_ms)
{
    enum ofi_sleep state = ofi_sleep_state;
    if (state == OFI_AWAKE) return;
    /* In rxm's passthru mode the completion queue's fd was seen not to wake a process
     * whose send the tcp provider still held (1 run in 3-6 of mp.threads with minute-long
     * sleeps hung: both ranks asleep, a 256-byte send pending), nor one whose peer's
     * data had arrived: mp.stress.3 hung in 2 of 8 runs with naps only while our own
     * sends were under way, every rank asleep with receives open. So in passthru mode
     * every sleep is a nap of OFI_PASSTHRU_NAP_MS (then 12 of 12 passed): an
     * idle rank wakes 1000 times a second, the price of the opt-in mode. A send posted
     * meanwhile by another thread wakes this one (ofi_post_send). */
    if (state == OFI_SLEEP_NAP && (timeout_ms < 0 || timeout_ms > OFI_PASSTHRU_NAP_MS))
        timeout_ms = OFI_PASSTHRU_NAP_MS;
    struct epoll_event ev[2];
    int k = epoll_wait(ofi.epfd, ev, 2, timeout_ms);
    for (int i = 0; i < k; i++)
        if (ev[i].data.fd == ofi_wakefd) {
            uint64_t v;
            if (read(ofi_wakefd, &v, sizeof v) < 0) { /* already drained */
            }
        }
}

static void ofi_sleep_end(void)
{
    ofi_sleep_state = OFI_AWAKE;
}

static void ofi_wake_self(void)
{
    uint64_t one = 1;
    if (ofi_wakefd >= 0 && write(ofi_wakefd, &one, sizeof one) < 0) { /* a wake-up is pending */
    }
}

static void ofi_limits(struct tl_limits *out)
{
    /* Peers on other nodes: no shared memory, no get(). With reads, messages up to
     * OFI_RMA_EAGER are one eager frame (copied up to a receive buffer, read above: one
     * trip fewer than the core's RTS + CTS, whose DATA frames would be read anyway);
     * without, frames are whole messages of at most one receive buffer. */
    size_t max_frame = ofi.rma ? OFI_RMA_FRAME : ofi.frame - OFI_HDR;
    unsigned caps = ofi.waitfd >= 0 ? TL_CAP_KERNEL_WAIT : 0;
    if (ofi.rma) caps |= TL_CAP_SEND_REF;
    *out = (struct tl_limits){.max_frame = max_frame,
                              .max_inline = ofi.inject > OFI_HDR ? ofi.inject - OFI_HDR : 0,
                              .eager_max = ofi.rma ? OFI_RMA_EAGER : util_tun.ofi_eager_max,
                              .caps = caps};
}

static void ofi_close(void)
{
    UTIL_DEBUG(1,
               "ofi: sent %lu frames by fi_inject, %lu with a completion up to the inject size, "
               "%lu larger (%lu of them by reference), %lu by RTS; read %lu B; "
               "%lu error completions; %lu frames arrived ahead of their turn; registrations: "
               "%lu hits, %lu misses, %lu evicted; sleeps %lu, refused %lu, trywait retries %lu",
               ofi.n_inject, ofi.n_small, ofi.n_copy, ofi.n_zref, ofi.n_rts, ofi.n_read_bytes,
               ofi.n_err, ofi.n_held, ofi.mrc.hits, ofi.mrc.misses, ofi.mrc.evictions, ofi.n_sleep,
               ofi.n_nosleep, ofi.n_trywait_retry);
    /* Sends still in flight (the last barrier's frames) must leave before the endpoint
     * goes; the provider moves them only while its queue is read. */
    if (ofi.cq) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ofi.failed = NULL;
        ofi.sent = NULL; /* FINs still arriving end their slots, with no up-call */
        ofi.closing = 1;
        ofi_flush_injected();
        while (ofi_busy() && ofi_ms_since(&t0) < OFI_DRAIN_MS)
            ofi_progress(0);
    }
    struct fid_ep *ep = ofi.ep;
    ofi.ep = NULL; /* no more reposts */
    for (int i = 0; i < OFI_MAX_RDV; i++)
        if (ofi.rdvtx[i].used) ofi_rdv_tx_done(i, 0);
    if (ep) fi_close(&ep->fid);
    /* Reads that never completed: their contexts are the provider's no more. */
    while (ofi.reading) {
        struct ofi_rdv_rx *rd = ofi.reading;
        ofi.reading = rd->next;
        free(rd->tmp);
        free(rd);
    }
    while (ofi.ctlq) {
        struct ofi_ctx *c = ofi.ctlq;
        ofi.ctlq = c->next;
        free(c);
    }
    ofi_mr_cache_fini(&ofi.mrc);
    if (ofi.av) fi_close(&ofi.av->fid);
    if (ofi.cq) fi_close(&ofi.cq->fid);
    if (ofi.domain) fi_close(&ofi.domain->fid);
    if (ofi.fabric) fi_close(&ofi.fabric->fid);
    if (ofi.epfd >= 0) close(ofi.epfd);
    if (ofi_wakefd >= 0) close(ofi_wakefd);
    ofi_wakefd = -1;
    free(ofi.tx);
    free(ofi.txbuf);
    free(ofi.rx);
    free(ofi.rxbuf);
    free(ofi.addr);
    free(ofi.is_peer);
    free(ofi.dead);
    free(ofi.txseq);
    free(ofi.rxseq);
    free(ofi.held);
    free(ofi.txpend);
    free(ofi.txmoved);
    free(ofi.refpend);
    free(ofi.rdvrx);
    free(ofi.injected);
    if (ofi.all) fi_freeinfo(ofi.all);
    memset(&ofi, 0, sizeof ofi);
    ofi.waitfd = ofi.epfd = -1;
}

const struct tl_ops tl_ofi_ops = {
    .size = sizeof(struct tl_ops),
    .name = "ofi",
    .reaches = ofi_reaches,
    .open = ofi_open,
    .connect = ofi_connect,
    .ready = tl_stub_noop,
    .send = ofi_send,
    .send_ref = ofi_send_ref,
    .unref = ofi_unref,
    .place_abort = tl_stub_unref,
    .poll = ofi_poll,
    .get = tl_stub_get,
    .getv = tl_stub_getv,
    .sleep_begin = ofi_sleep_begin,
    .sleep_wait = ofi_sleep_wait,
    .sleep_end = ofi_sleep_end,
    .wake = tl_stub_wake,
    .busy = ofi_busy,
    .health = ofi_health,
    .limits = ofi_limits,
    .close = ofi_close,
    .wake_self = ofi_wake_self,
};
