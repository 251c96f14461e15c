/*
 * core.h - the core of tern: requests, matching, protocols, communicators and the
 * progress engine. Every programming model (native API, MPI, SHMEM, conversations)
 * calls in here; transports are reached only through their ops tables, which only the
 * core's own files see (they include transport/transport.h themselves). The layers above
 * ask what a peer's transport can do (core_peer_caps() and friends), never which one it is.
 *
 * Calls into the core assume valid arguments: the API layers check at the door.
 */
#ifndef TERN_CORE_H
#define TERN_CORE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "boot/boot.h"
#include "core/adapt.h" /* eager or rendezvous for middle sizes */
#include "core/wait.h"  /* the wait engine, for every layer that blocks */
#include "tern.h"

struct tl_ops; /* transport/transport.h: for the core's own files only */

/* ---- frames ------------------------------------------------------------- */

enum core_frame_type {
    CORE_FRAME_EAGER = 1, /* header + whole payload */
    CORE_FRAME_RTS,       /* rendezvous request: length and sender's address */
    CORE_FRAME_CTS,       /* receiver matched, no single copy: stream DATA to rreq */
    CORE_FRAME_DATA,      /* a piece of a streamed message at an offset */
    CORE_FRAME_FIN,       /* receiver pulled the data: sender's request completes */
    CORE_FRAME_ACK,       /* receiver matched a synchronous eager message */
    CORE_FRAME_AM,        /* active message for a registered handler */
};

#define CORE_FLAG_SYNC   0x1
#define CORE_FLAG_LAYOUT 0x2 /* RTS: a struct core_rlay follows (non-contiguous sender) */
#define CORE_FLAG_FAULT  0x4 /* FIN: the sender's buffer could not be read (TERN_ERR_FAULT) */
#define CORE_FLAG_NT     0x2 /* EAGER: the payload was written around the caches (send_nt) */
#define CORE_FLAG_BOTH   0x4 /* RTS: the sender has receives from you posted (traffic both ways) */

/* Every frame starts with this 16-byte header. */
struct core_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t ctx;  /* context id (matching space) */
    int32_t tag;   /* EAGER/RTS: tag; AM: handler id */
    uint32_t sreq; /* sender's request id (SYNC, RTS, CTS, FIN, ACK, DATA) */
    uint32_t rreq; /* receiver's request id (CTS, DATA) */
};

struct core_rts {
    struct core_hdr h;
    uint64_t len;  /* whole message */
    uint64_t addr; /* sender's buffer, for single-copy get */
};

/* The sender's layout in a non-contiguous RTS: the receiver reads the block list at
 * `blk` in the sender's memory (it lives as long as the send) and walks it. */
struct core_rlay {
    uint64_t blk;   /* sender's address of its struct core_blk array */
    int64_t extent; /* bytes between instances */
    uint64_t size;  /* data bytes of one instance */
    uint32_t nblk;  /* blocks per instance */
    uint32_t unused;
};

struct core_data {
    struct core_hdr h;
    uint64_t offset;
};

/* ---- active messages ----------------------------------------------------------
 *
 * Every active-message handler id of the library, in one table, so two layers can never
 * pick the same one: core_am_register refuses an id another handler holds. Ids are
 * indexes into core.am[] (0..CORE_AM_MAX-1); a new user takes a free one here. */
enum core_am_id {
    CORE_AM_SHMEM_REQ = 2,       /* SHMEM: a request to the target: put, get, atomic */
    CORE_AM_SHMEM_REP = 3,       /* SHMEM: the target's answer: ack, data, fetched value */
    CORE_AM_RMA_REQ = 4,         /* MPI windows: origin -> target */
    CORE_AM_RMA_REP = 5,         /* MPI windows: target -> origin */
    CORE_AM_MPI_NAME_REQ = 6,    /* MPI name service: a request to world rank 0 */
    CORE_AM_MPI_NAME_REP = 7,    /* and its answer */
    CORE_AM_MPI_CANCEL_REQ = 10, /* MPI_Cancel of a send: sender -> receiver */
    CORE_AM_MPI_CANCEL_REP = 11, /* and its answer */
    CORE_AM_CONV = 12,           /* conversations: every message of that layer */
    CORE_AM_TEST = 15,           /* unit tests only (tests/unit/test_am_ids.c) */
    CORE_AM_MAX = 16             /* size of the table: ids are below this */
};

/* ---- non-contiguous buffers ------------------------------------------------ */

/* A block: `len` bytes at `off` from the start of an instance. */
struct core_blk {
    intptr_t off, len;
};

/* A non-contiguous buffer (an MPI datatype, flattened): instances `extent` bytes apart,
 * each the blocks blk[0..nblk) in order; its byte stream (what travels) is instance 0's
 * blocks, then instance 1's, ... `size` is the bytes of one instance (sum of lengths). */
struct core_layout {
    const struct core_blk *blk;
    int nblk;
    intptr_t extent;
    size_t size;
};

/* A position in a layout's byte stream: byte `pos` is byte `in` of block `b` of
 * instance `inst`. Walks forward cheaply; going back starts over. */
struct core_cur {
    size_t pos;
    size_t inst;
    size_t in;
    int b;
};

/* ---- requests ------------------------------------------------------------ */

enum core_req_kind {
    CORE_REQ_SEND = 1,
    CORE_REQ_RECV,
    CORE_REQ_COLL /* non-blocking collective (src/coll), r->user: its schedule */
};

enum core_req_state {
    CORE_RS_FREE = 0,
    CORE_RS_POSTED,   /* recv: in the posted queue */
    CORE_RS_QUEUED,   /* send: waiting in the peer's pending queue */
    CORE_RS_WAIT_ACK, /* send: sync eager sent, waiting for ACK */
    CORE_RS_WAIT_CTS, /* send: RTS sent, waiting for FIN or CTS */
    CORE_RS_STREAM,   /* send: streaming DATA; recv: receiving DATA or a placed frame */
    CORE_RS_SENDING,  /* send: protocol done, the transport still reads buf (send_ref) */
    CORE_RS_DONE,
};

/* Every request is 64-byte aligned and its fields up to `lay` (what a plain send or
 * receive uses, 120 bytes) fit two cache lines; core_req_alloc clears only those.
 * `lay` and `cur`, for non-contiguous buffers, stay last: `cur` is set only with `lay`. */
struct tern_request {
    _Alignas(64) uint8_t kind;
    uint8_t state;
    uint8_t sync;
    uint8_t rndv;  /* send: rendezvous (else eager) */
    uint8_t ref;   /* send: the transport points into buf until its sent() up-call */
    uint8_t fault; /* send: part of buf could not be read; completes with TERN_ERR_FAULT */
    uint8_t nt;    /* send, eager: written around the caches (the transport's send_nt) */
    uint16_t gen;  /* bumped at each free: stale public handles are told apart (api.c) */
    uint32_t id;   /* index in the request table, carried in frames */
    int err;       /* result once DONE */
    int peer;      /* send: destination world rank; recv: source world rank or -1 */
    int tag;       /* send: tag; recv: tag or TERN_ANY_TAG */
    uint16_t ctx;
    struct tern_comm *comm;
    void *buf;
    size_t len;                /* send: bytes; recv: capacity */
    size_t bytes;              /* recv: incoming message size */
    size_t offset;             /* streaming progress */
    int src;                   /* recv: world rank the message came from */
    int msg_tag;               /* recv: tag of the message */
    uint32_t rsreq;            /* recv: sender's request id; streaming send: receiver's id */
    struct tern_request *next; /* posted queue / free list */
    struct tern_request *prev;
    void (*on_complete)(struct tern_request *r); /* internal users; NULL for API requests */
    void *user;                                  /* internal users' context */
    const struct core_layout *lay; /* buf is non-contiguous (len bytes of it); NULL: plain */
    struct core_cur cur;           /* with lay: where the last scatter/gather into buf stopped */
    /* recv, streamed rendezvous whose time is taken for the pull-or-stream choice
     * (core_rv_*): when its CTS went (clock ticks); else 0. Set by core_recv_rndv. */
    double rv_t0;
};
typedef struct tern_request core_req_t;
_Static_assert(offsetof(struct tern_request, lay) <= 128,
               "a plain request's fields fit the two cache lines core_req_alloc clears");

/* ---- communicators -------------------------------------------------------- */

#define CORE_COMM_MAGIC 0x636f6d6du /* "comm" */
#define CORE_CTX_MAX    4096        /* context ids; a communicator takes two */
/* The ctx of a receive no matching queue knows (conversations keep their own FIFO):
 * core_peer_failed leaves it to the layer that owns it. */
#define CORE_CTX_NONE 0xffff
/* The context pair every process reserves at start for MPI's ports (src/mpi/mpi_port.c):
 * a world-sized communicator no user message reaches, made without an agreement. */
#define CORE_CTX_PORTS (CORE_CTX_MAX - 2)

struct tern_comm {
    uint32_t magic;
    uint16_t ctx; /* point-to-point; ctx + 1 is for collectives */
    int rank;     /* mine */
    int size;
    int *world_of;       /* comm rank -> world rank; NULL: identity (world) */
    int *comm_of;        /* world rank -> comm rank or -1; NULL: identity */
    uint32_t coll_seq;   /* blocking collectives started on this communicator */
    uint32_t coll_nbseq; /* non-blocking (and persistent) ones: numbered apart (coll_sched.c) */
    int agree_tag;       /* added to comm.c's internal tags (MPI_Comm_create_group's tag:
                            concurrent calls on one parent stay apart); usually 0 */
    void *coll_shm;      /* the collectives' shared region (coll_shm.c), or NULL */
    int coll_shm_state;  /* 0 not tried, 1 attached, -1 unavailable */
    void *coll_hier;     /* the hierarchical collectives' sub-communicators (coll_hier.c) */
    int coll_hier_state; /* 0 not looked at, 1 spans nodes, -1 flat only */
    void (*on_free)(struct tern_comm *c); /* set by a layer that hangs state on c */
    struct tern_comm *next_alloc;         /* every communicator made by dup/split, for finalize */
};

static inline int core_comm_world(const struct tern_comm *c, int rank)
{
    return c->world_of ? c->world_of[rank] : rank;
}

static inline int core_comm_rank_of(const struct tern_comm *c, int world)
{
    return c->comm_of ? c->comm_of[world] : world;
}

/* ---- matching ------------------------------------------------------------- */

/* A message that arrived before its receive was posted. */
struct core_unexp {
    struct core_unexp *next;
    int src; /* world rank */
    int tag;
    uint8_t type; /* EAGER or RTS */
    uint8_t flags;
    uint32_t sreq;
    size_t len;           /* whole message */
    uint64_t addr;        /* RTS: sender's buffer */
    unsigned char data[]; /* EAGER: payload */
};

struct core_match {
    core_req_t *posted_head, *posted_tail;
    struct core_unexp *unexp_head, *unexp_tail;
};

/* ---- peers and the global state ------------------------------------------- */

/* Something waiting for room in a transport, in send order. */
struct core_pend {
    struct core_pend *next;
    core_req_t *req; /* a send request to (re)start, or NULL for a control frame */
    size_t len;
    unsigned char frame[]; /* control frame bytes */
};

struct core_peer {
    const struct tl_ops *tl;
    size_t max_frame;  /* largest frame its transport takes, header included */
    unsigned caps;     /* CORE_CAP_*: what its transport can do (the transport's limits) */
    size_t eager_max;  /* payload bytes sent eagerly to this peer */
    size_t stream_max; /* ... while rndv_inflight (>= eager_max) */
    int rndv_inflight; /* rendezvous sends to this peer waiting for their FIN */
    int posted_from;   /* receives posted for this source alone (not ANY_SOURCE) */
    int recv_both;     /* of those, posted when a rendezvous send to it started: the next
                        * this many rendezvous receives from it overlap my sends */
    size_t chunk;      /* payload bytes per streamed DATA frame */
    /* With no get() (tcp): payloads above eager_max and up to big_max also go eagerly
     * while this peer says its receives are posted in time (core_big_*), one at a time:
     * none while another has gone since the last frame from it (big_unheard, below).
     * 0: never. */
    size_t big_max;
    /* Payloads in (adapt_min, adapt_max] go eagerly or by rendezvous as this peer, their
     * receiver, advises from its timings (adapt.h), and so do those up to adapt_top (the
     * larger of adapt_max and stream_max) in a one-way stream; both are timed. adapt_max
     * 0: never (adapt_top 0 too). */
    size_t adapt_min, adapt_max, adapt_top;
    size_t nt_max;     /* ...and those up to this may be written around the caches (send_nt) */
    uint8_t adv_heard; /* advice flag bits last heard from this peer */
    uint8_t adv_out;   /* advice flag bits put in the frames to it */
    struct core_adapt_tally adapt_tally[CORE_ADAPT_CLASSES]; /* messages of those sizes sent */
    uint32_t adapt_copies; /* my eager copies into its frames, for core_adapt_sampled */
    uint32_t sent_run;     /* messages sent to it since its last EAGER or RTS came */
    /* Beside sent_run, whose line every EAGER frame from the peer writes: a big eager
     * message went to it since its last frame; large messages from it in a row that
     * found their receive posted (big_max). */
    uint8_t big_unheard, big_posted;
    struct core_adapt adapt; /* timings of the copies between us at those sizes */
    /* Rendezvous payloads from this peer above rv_min (0: none) are pulled or streamed as
     * the timings of both say (adapt.h, core_rv_*). */
    size_t rv_min;
    struct core_rv_class rv[CORE_ADAPT_CLASSES];
    struct core_pend *pend_head, *pend_tail;
    core_req_t *placing; /* receive whose buffer the transport is writing (place()) */
    struct iovec place1; /* place()'s answer for a contiguous buffer */
    struct iovec *piov;  /* place()'s answer for a non-contiguous one, grown as needed */
    int piov_cap;
    int failed;
};

typedef void (*core_am_fn)(int src, const void *payload, size_t len);

/*
 * What this process is blocked in, for the hang report (diag.c). core_block keeps it;
 * callers that know more name the wait first. A few stores per blocking call, nothing
 * per progress poll; `since` is read from the clock only once a wait stops spinning.
 */
struct core_doing {
    const char *what;             /* "recv", "tern_allreduce", ...; NULL: not blocked */
    const core_req_t *req;        /* the request waited for, if one */
    const struct tern_comm *comm; /* a collective's communicator */
    double since;                 /* when the wait began to yield (monotonic s); 0: spinning */
};

struct core_state {
    int initialized;
    int finalized;
    unsigned users;      /* CORE_USER_* layers that started or joined the core */
    unsigned users_done; /* layers that left it (they may not come back) */
    struct boot boot;
    int rank, size;
    struct core_peer *peers;
    const struct tl_ops *tls[8]; /* transports in use */
    int ntls;
    int npending;       /* peers with a non-empty pending queue */
    int oversubscribed; /* 0, or ranks per core on this node (rounded up) when > 1 */
    struct core_match *match[CORE_CTX_MAX]; /* by context id, allocated on first use */
    uint64_t ctx_used[CORE_CTX_MAX / 64];   /* context ids in use here */
    core_req_t **reqs;                      /* request table, by id */
    uint32_t nreqs;
    core_req_t *req_free;
    core_am_fn am[CORE_AM_MAX];
    int (*hooks[8])(void); /* run by every core_progress(); return >0 when they advanced */
    int nhooks;
    void (*finis[8])(void); /* run by core_finalize, last registered first */
    int nfinis;
    void (*failhooks[8])(int rank); /* told by core_peer_failed, after core's own requests */
    int nfailhooks;
    /* Threads (thread.c); all under the critical section. */
    unsigned long ncomplete; /* requests completed so far (a waiting thread compares) */
    int tl_sleeper;          /* a thread sleeps on the doorbells (kind: thread.c) */
    int cond_waiters;        /* threads asleep on the critical section's condition */
    int nblocked;            /* threads inside core_block (with core_mt) */
    int thread_level;        /* TERN_THREAD_* granted */
    int in_progress;         /* guards against re-entering poll from an up-call */
    unsigned health_tick;    /* progress calls since the clock was last read for health */
    double health_last;      /* when core_health last ran (seconds, monotonic) */
    int launcher_gone;       /* the PMI connection closed: the job is over */
    int nfailed;             /* peers known failed */
    struct core_doing doing; /* what the caller waits in (diag.c reads it) */
    int kernel_wait;         /* every sleeping transport has CORE_CAP_KERNEL_WAIT */
    /* The next core_block waits for a blocking all-to-all's schedule: its waits are
     * CORE_WAIT_BULK (wait.h). Set just before that wait by coll_sched_run; the wait
     * reads and clears it as it starts. */
    int wait_bulk;
    /* This rank's CPUs are fewer than those the node's ranks share, and they do not
     * outnumber cores: it is bound apart from its peers (wait.c's loaded tcp spin). */
    int bound;
    /* This process leads its session (ternrun's TERN_RANK_SESSION, Hydra) and the
     * kernel's autogroup sets its CPU share (core_wait_autogroup): a scheduling group of
     * its own (wait.c's loaded tcp spin). */
    int own_autogroup;
    /* The node's ranks outnumber its cores, so some share a core's hardware threads
     * (core_wait_smt_shared): waits keep the pause between spin polls. */
    int smt_shared;
};

extern struct core_state core;

/* ---- what a peer's transport can do --------------------------------------------
 *
 * Capabilities of the transport that reaches a world rank, decided once at init (the
 * same bits as transport.h's TL_CAP_*; core_tl.h checks they agree). A layer that wants
 * shared memory, a doorbell or a single copy asks for that, so a new transport with the
 * same abilities serves it with no change above the core. */
#define CORE_CAP_WAKE        0x01u /* core_wake() rings its doorbell if it sleeps */
#define CORE_CAP_MAP         0x02u /* its memory can be mapped here (shared segments) */
#define CORE_CAP_SEND_REF    0x04u /* sends may keep pointing at the payload */
#define CORE_CAP_KERNEL_WAIT 0x08u /* a sleeper on it waits in the kernel (epoll) */
#define CORE_CAP_GET         0x10u /* single-copy pull from its memory */
#define CORE_CAP_PUT         0x20u /* single-copy push into its memory (none yet) */
#define CORE_CAP_ATOMIC      0x40u /* CPU atomics on its mapped memory are atomic with its own */

static inline unsigned core_peer_caps(int rank)
{
    return core.peers[rank].caps;
}
/* Can this process map world rank's memory (a shared segment it creates) and reach it
 * with loads, stores and CPU atomics? True for myself. */
static inline int core_peer_can_map(int rank)
{
    return (core.peers[rank].caps & CORE_CAP_MAP) != 0;
}
/* Is world rank on my node (by the launcher's layout, whatever transport reaches it)? */
static inline int core_peer_on_node(int rank)
{
    return core.boot.node_of == NULL || core.boot.node_of[rank] == core.boot.node_of[core.rank];
}

/* ---- the critical section (thread.c) ------------------------------------------
 *
 * One lock for the whole library (MPICH's "global" granularity), taken at every API
 * entry only when several threads may call in (thread level MULTIPLE, or the progress
 * thread runs); otherwise entering is one test of core_mt. It is recursive, so an API
 * function may call another. A blocked call (core_block) lets it go while it yields or
 * sleeps and takes it back to poll, so other threads progress meanwhile.
 *
 * Layers above the core wrap each public entry point with
 *     CORE_CS_SCOPE();            -- first statement; released on every return
 * or, where a scope does not fit, CORE_CS_ENTER(); ... CORE_CS_EXIT(); in one block.
 * Inside, everything the core owns may be touched; a pointer kept across a call that
 * may block (core_block, core_wait, a blocking collective) must name an object another
 * thread cannot free meanwhile (requests and communicators never move). */
extern int core_mt; /* nonzero: lock at API entry */
void core_cs_lock(void);
void core_cs_unlock(void);
static inline int core_cs_enter(void)
{
    if (__builtin_expect(!core_mt, 1)) return 0;
    core_cs_lock();
    return 1;
}
static inline void core_cs_leave(int *held)
{
    if (*held) core_cs_unlock();
}
#define CORE_CS_SCOPE()                                                                            \
    int core_cs_held_ __attribute__((cleanup(core_cs_leave), unused)) = core_cs_enter()
#define CORE_CS_ENTER() int core_cs_token_ = core_cs_enter()
#define CORE_CS_EXIT()  core_cs_leave(&core_cs_token_)
/* Grant thread level `required` (TERN_THREAD_*), or the level already granted if higher:
 * sets core_mt for MULTIPLE. Called by core_start once core_init succeeded. Returns the
 * level granted. */
int core_thread_setup(int required);
/* Start the progress thread if TERN_PROGRESS_THREAD asks (after init); stop it (first
 * thing in finalize). */
int core_progress_thread_start(void);
void core_progress_thread_stop(void);
/* Wake the threads that may wait for what this thread just did (core_mt only): frames
 * arrived (CORE_WAKE_FRAMES), a request completed (CORE_WAKE_DONE), or a frame was sent
 * to this very process, which rings no doorbell: someone must poll (CORE_WAKE_ALL). */
enum { CORE_WAKE_FRAMES, CORE_WAKE_DONE, CORE_WAKE_ALL };
void core_mt_wake(int why);
/* core_block for several threads: releases the critical section while it waits;
 * reqs_only: done() turns true only when a request completes. */
int core_block_mt(int (*done)(const void *), const void *arg, int reqs_only);

/* core.c */
void core_fatal(const char *what) __attribute__((noreturn));
/* The layers that start the core. A process has one core (one library holds every
 * model): the native API and MPI each start it or join the one the other started, so a
 * library on tern.h works inside an MPI program and the other way round. */
enum { CORE_USER_API = 1u, CORE_USER_MPI = 2u };
/* Start the core for `user` at thread level `required` (TERN_THREAD_*), or join the core
 * another layer started (the thread level granted is then the higher of the two).
 * setup(fresh) (may be NULL) sets up the layer before the progress thread starts; fresh
 * is 1 when this call started the core (then what every process needs once, such as
 * conv_init, is set up too). A failed setup leaves the core as it was. Returns 1 (started),
 * 0 (joined), TERN_ERR_INIT (user is in already), TERN_ERR_FINALIZED (user left already,
 * or the core is finalized), or the error of the start or of setup. *level (may be NULL)
 * gets the thread level granted. */
int core_start(unsigned user, int required, int *level, int (*setup)(int fresh));
/* `user` leaves the core: TERN_ERR_NOT_INIT if it was not in; the last layer to leave
 * finalizes the core (collective) and returns its result, the others return 0. */
int core_stop(unsigned user);

/* req.c */
extern volatile sig_atomic_t core_req_growing; /* the table is being reallocated */
core_req_t *core_req_alloc(int kind);
void core_req_free(core_req_t *r);
core_req_t *core_req_lookup(uint32_t id, int kind);

/*
 * Public request handles (tern_request_t) are the request's address with its generation
 * in the top 16 bits (user addresses on Linux fit in 47), so a stale copy of a handle -
 * its request completed, freed and reused - is TERN_ERR_REQUEST, not someone else's
 * request. Request memory is never returned to the system while tern runs, so reading
 * a stale handle's request is safe. On 32-bit hosts there is no room: no generation.
 */
#if UINTPTR_MAX > 0xffffffffu
#define CORE_REQ_GEN_SHIFT 48
static inline tern_request_t core_req_handle(core_req_t *r)
{
    return (tern_request_t)((uintptr_t)r | (uintptr_t)r->gen << CORE_REQ_GEN_SHIFT);
}
static inline core_req_t *core_req_of(tern_request_t h)
{
    return (core_req_t *)((uintptr_t)h & (((uintptr_t)1 << CORE_REQ_GEN_SHIFT) - 1));
}
static inline int core_req_handle_gen_ok(tern_request_t h)
{
    return core_req_of(h)->gen == (uint16_t)((uintptr_t)h >> CORE_REQ_GEN_SHIFT);
}
#else
static inline tern_request_t core_req_handle(core_req_t *r)
{
    return r;
}
static inline core_req_t *core_req_of(tern_request_t h)
{
    return h;
}
static inline int core_req_handle_gen_ok(tern_request_t h)
{
    (void)h;
    return 1;
}
#endif
void core_req_complete(core_req_t *r, int err);
/* Give up on r (a layer's operation failed midway): a posted receive is withdrawn, one
 * under way finishes later without touching its buffer again and frees itself. */
void core_req_abandon(core_req_t *r);
void core_req_release_all(void);

/* match.c */
struct core_match *core_match_get(uint16_t ctx);
void core_match_post(struct core_match *m, core_req_t *r);
void core_match_unpost(struct core_match *m, core_req_t *r);
core_req_t *core_match_find_posted(struct core_match *m, int src, int tag);
core_req_t *core_match_peek_posted(struct core_match *m, int src, int tag);
struct core_unexp *core_match_find_unexp(struct core_match *m, int src, int tag, int remove);
void core_match_append_unexp(struct core_match *m, struct core_unexp *u);
void core_match_release_all(void);

/* proto.c: point-to-point on world ranks and context ids */
int core_isend(const void *buf, size_t len, int dest, int tag, uint16_t ctx, int sync,
               core_req_t **out);
/*
 * A blocking standard send's short cut: the whole message handed to the transport at
 * once, with no request, when it goes eagerly at a size the adaptive rules leave alone,
 * nothing to dest waits before it, the transport has room and copies it (no send by
 * reference) and no trace is being written. Its frame names no request (sreq 0), so
 * nothing can cancel or acknowledge it. Returns 0 (sent: buf may be reused), an error
 * (the frame did not go, or went with unreadable bytes as 0: TERN_ERR_FAULT), or
 * TERN_ERR_AGAIN, having done nothing: the caller takes core_isend and waits. At 8 B it
 * saves about 200 of a send's 540 instructions (callgrind, 2026-11-29). core_isend takes
 * the same short cut, with its request completed before it returns.
 */
int core_send_now(const void *buf, size_t len, int dest, int tag, uint16_t ctx);
/* An eager send gathered from the caller's pieces (a non-contiguous datatype) with no
 * temporary: at most CORE_SENDV_MAX_IOV pieces of len bytes in all, len <= the peer's
 * eager_max. The pieces may be reused when it returns. TERN_ERR_UNSUPPORTED when the
 * message does not qualify (the caller packs and calls core_isend). */
#define CORE_MAX_IOV       64 /* pieces of one frame (transport.h's TL_MAX_IOV) */
#define CORE_SENDV_MAX_IOV (CORE_MAX_IOV - 1)
int core_isendv(const struct iovec *iov, int iovcnt, size_t len, int dest, int tag, uint16_t ctx,
                int sync, core_req_t **out);
int core_irecv(void *buf, size_t cap, int src, int tag, uint16_t ctx, struct tern_comm *comm,
               core_req_t **out);
/* Send and receive with a non-contiguous buffer: count instances of layout `lay` at buf
 * (len = count * lay->size bytes). lay must stay valid until the request is freed.
 * A received message is scattered into the blocks as it arrives (from an eager frame, a
 * stream, or by the transport itself: place(), getv()); a rendezvous send offers its
 * blocks to the receiver's getv(), or gathers the DATA frames it streams.
 * core_isend_lay answers TERN_ERR_UNSUPPORTED for a message the peer takes eagerly (the
 * caller gathers it with core_isendv or packs it). */
int core_isend_lay(const void *buf, const struct core_layout *lay, size_t len, int dest, int tag,
                   uint16_t ctx, int sync, core_req_t **out);
int core_irecv_lay(void *buf, const struct core_layout *lay, size_t cap, int src, int tag,
                   uint16_t ctx, struct tern_comm *comm, core_req_t **out);
int core_iprobe(int src, int tag, uint16_t ctx, int *flag, int *out_src, int *out_tag,
                size_t *out_len);
/* Matched probe: take the first message matching (src, tag) on ctx out of the unexpected
 * queue (*out NULL when none), so that only core_imrecv can receive it. */
int core_improbe(int src, int tag, uint16_t ctx, struct core_unexp **out);
/* Receive the message core_improbe took (consumes u). */
int core_imrecv(struct core_unexp *u, void *buf, size_t cap, uint16_t ctx, struct tern_comm *comm,
                core_req_t **out);
void core_frame_recv(int src, const void *frame, size_t len);
/* Pick the adaptive timings' clock (proto.c); once, before the first message. */
void core_adapt_clock_init(void);
/* At TERN_DEBUG=1, each receiver's adaptive timings and choices per sender and class. */
void core_adapt_report(void);
/* Transport up-calls (transport.h): where a frame's payload goes, that it arrived, and
 * that a send_ref() frame is out. */
int core_frame_place(int src, const void *head, size_t hlen, size_t len, struct iovec **iov);
void core_frame_placed(int src, const void *head, size_t hlen, size_t len);
void core_frame_sent(void *cookie, int err);
void core_peer_failed(int rank); /* up-call: the transport lost `rank` */
/* Up-call and launcher news: `rank` died. Inside core_health it is acted on at the end,
 * after what the transports hold from it is received (progress.c); elsewhere at once. */
void core_peer_news(int rank);
void core_pend_drain(void);
/* Send an active message (gathered from iov, at most 7 pieces and core_am_room(dest)
 * bytes) to the handler registered under `handler` on dest; ordered with every other
 * frame to dest. */
int core_am_sendv(int dest, int handler, const struct iovec *iov, int iovcnt);
size_t core_am_room(int dest);
/* Make fn the handler of active messages with id `handler` (enum core_am_id). Returns 0,
 * TERN_ERR_INVAL for an id outside the table or a NULL fn, or TERN_ERR_EXISTS when
 * another function holds the id (registering the same function again is a no-op, so a
 * layer may register at each of its inits; core_init empties the table). */
int core_am_register(int handler, core_am_fn fn);
/* Free the active messages still waiting for a handler that never came (finalize). */
void core_am_early_free(void);

/* layout.c: walking non-contiguous buffers */
/* Move c to byte pos of the stream (forward from where it is, or from the start). */
void core_cur_seek(const struct core_layout *L, struct core_cur *c, size_t pos);
/* The pieces of bytes [c->pos, c->pos + max) of buf, at most nmax of them (adjacent ones
 * merged); c moves past them and *bytes says how many bytes they hold. */
int core_cur_iov(const struct core_layout *L, char *buf, struct core_cur *c, size_t max,
                 struct iovec *iov, int nmax, size_t *bytes);
/* Copy n stream bytes at pos between packed memory and the layout at buf. */
void core_lay_scatter(const struct core_layout *L, char *buf, struct core_cur *c, size_t pos,
                      const void *src, size_t n);
void core_lay_gather(const struct core_layout *L, const char *buf, struct core_cur *c, size_t pos,
                     void *dst, size_t n);
/* Single-copy pull of the first n bytes of a rendezvous message from src into receive r,
 * with the transport's getv(): r's layout (or its plain buffer) on my side, the
 * sender's (rl, read from its memory in windows) or its plain buffer at addr on the
 * other. TERN_ERR_UNSUPPORTED when the transport cannot. */
int core_lay_get(int src, core_req_t *r, const struct core_rlay *rl, uint64_t addr, size_t n);
/* Copy the pieces iov[0..iovcnt) one after another into dst. */
void core_iov_copy(void *dst, const struct iovec *iov, int iovcnt);
/* A scratch buffer of at least n bytes, the core's own (under the critical section). */
void *core_scratch(size_t n);
void core_scratch_free(void);

/* progress.c */
typedef int (*core_done_fn)(const void *arg);
int core_progress(void);
int core_block(core_done_fn done, const void *arg); /* spin, yield, sleep until done(arg) */
/* Register a function every core_progress() calls (e.g. to advance non-blocking
 * collectives). It may send and post receives but must not call core_progress.
 * Returns TERN_ERR_NOMEM when all slots are taken. */
int core_progress_hook_add(int (*hook)(void));
/* Register a function core_finalize() calls to release a layer's caches (once each). */
int core_atfini(void (*fn)(void));
/* Register a function core_peer_failed() calls (once per failed rank, after core has
 * failed its own requests to and from that rank) so a layer above (collectives,
 * conversations, SHMEM) can fail what it waits for. TERN_ERR_NOMEM when slots run out. */
int core_failure_hook_add(void (*fn)(int rank));
/* Failure detection: take the launcher's news of failed ranks and run the transports'
 * liveness checks; core_peer_failed() follows for every rank found dead. Returns
 * TERN_ERR_PEER_FAILED when the launcher itself is gone, else 0. core_progress runs it
 * every TERN_FAILURE_CHECK_MS; blocked and polling callers also call it. */
int core_health(void);
/* What a polling caller (test) reports when its operation is not done yet: 0, or
 * TERN_ERR_PEER_FAILED once core_health found the launcher gone. No system call. */
/* Does communicator c include a failed process? (cheap while nothing failed) */
static inline int core_comm_has_failed(const struct tern_comm *c)
{
    if (core.nfailed == 0) return 0;
    for (int i = 0; i < c->size; i++)
        if (core.peers[core_comm_world(c, i)].failed) return 1;
    return 0;
}

/* Ring world rank's doorbell if it sleeps (after publishing to it outside frames; a
 * no-op unless core_peer_caps(rank) has CORE_CAP_WAKE). */
void core_wake(int rank);

static inline int core_alive(void)
{
    return core.launcher_gone ? TERN_ERR_PEER_FAILED : 0;
}
int core_wait(core_req_t *r);
int core_wait_any(core_req_t *const *reqs, size_t n, size_t *index);
int core_wait_pending(void); /* until every pending queue is empty, transports drained */

/* diag.c: answer the launcher's "what are you blocked in" (ternrun --timeout, kill -USR1
 * of ternrun) from a signal handler: the wait above, the requests under way, a stack. */
void core_diag_init(void);
double core_diag_now(void);

/* comm.c */
int core_comm_init_builtin(void);
int core_comm_dup(struct tern_comm *comm, struct tern_comm **out);
int core_comm_split(struct tern_comm *comm, int color, int key, struct tern_comm **out);
int core_comm_free(struct tern_comm *comm);
/* Context ids agreed by a layer above (MPI intercommunicators, whose two groups have no
 * common parent): the free mask of context pairs here (bit i: pair i, ids 2i and 2i+1),
 * CORE_CTX_PAIR_WORDS words; and a communicator on an agreed pair (ctx even), rank `rank`,
 * whose ranks address the `size` world ranks of world_of. */
#define CORE_CTX_PAIR_WORDS (CORE_CTX_MAX / 2 / 64)
/* A non-blocking core_comm_dup (MPI_Comm_idup), advanced by core_progress: start it
 * (`done`, if not NULL, is completed with the outcome); test it (0 pending, 1 done with
 * *out the new communicator, or a negative TERN_ERR_*); free it once done. */
struct core_ctx_nb;
int core_comm_idup_start(struct tern_comm *comm, core_req_t *done, struct core_ctx_nb **out);
int core_comm_idup_test(struct core_ctx_nb *nb, struct tern_comm **out);
void core_comm_idup_free(struct core_ctx_nb *nb);
/* The same agreement over any two-level set of processes, for the layers above: my group
 * is the lsize world ranks lworld (mine at lrank; member 0 gathers the offers and answers)
 * and, for an intercommunicator, rleader is the world rank of the other group's leader,
 * with whom my leader swaps the group's result (-1: one group). `comm` is held by every
 * member of both groups: its ctx orders overlapping agreements, its collective context
 * (ctx + 1) carries the messages and its coll_seq numbers them. nctx (1..3) pairs are
 * agreed. Test: 0 pending, 1 done with ctx[0..nctx-1] taken here (a communicator made on
 * them keeps them), or a negative TERN_ERR_*. Freed with core_comm_idup_free. */
int core_ctx_agree_start(struct tern_comm *comm, const int *lworld, int lsize, int lrank,
                         int rleader, int nctx, core_req_t *done, struct core_ctx_nb **out);
int core_ctx_agree_test(struct core_ctx_nb *nb, uint16_t *ctx);
/* For agreements made by a layer above with core_ctx_free_mask (MPI intercommunicators),
 * in rounds as comm.c's own: pick n candidate pairs from an agreed mask, the same way on
 * every member (parent: a context id all members share, or 0; 0 if fewer than n are
 * free); reserve them here if all are still free (1) or not (0, nothing taken); take
 * (used 1) or give back (0) n pairs. */
int core_ctx_pick(uint64_t *mask, uint16_t parent, int n, uint16_t *ctx);
int core_ctx_reserve(const uint16_t *ctx, int n);
void core_ctx_take(const uint16_t *ctx, int n, int used);
void core_ctx_free_mask(uint64_t *words);
int core_comm_make(uint16_t ctx, int rank, int size, const int *world_of, struct tern_comm **out);
void core_comm_fini(void);

#endif
