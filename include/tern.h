/*
 * tern.h - the native tern API: the whole contract of the library for programs
 * that use tern directly (not through mpi.h or shmem.h).
 *
 * Conventions that hold for every function below:
 *  - A function returns TERN_OK (0) on success or one of the negative TERN_ERR_*
 *    codes. tern_strerror() turns a code into a sentence, tern_err_name() into its
 *    name ("TERN_ERR_TRUNCATE").
 *  - Output parameters come last and are written only on success, except the status
 *    of a receive that was truncated (TERN_ERR_TRUNCATE), which reports the size of
 *    the incoming message in status->bytes.
 *  - Byte counts are size_t: messages larger than 2 GiB work.
 *  - Ranks are ranks in the communicator passed (TERN_COMM_WORLD for the whole job).
 *  - Thread safety (see tern_init_thread() for the levels). Below TERN_THREAD_MULTIPLE
 *    the library takes no lock: calls must not overlap in time. Under MULTIPLE, by class:
 *      environment: tern_init*, tern_finalize are called once, by one thread, with no
 *        other call under way; tern_rank, tern_size, tern_initialized, tern_wtime,
 *        tern_wtick, tern_strerror, tern_err_name are safe from any thread at any time.
 *      point-to-point, probes, waits and tests: from any thread, concurrently; a blocked
 *        call lets other threads in while it waits. One request is completed (wait,
 *        test, waitall, ...) by one thread at a time; any thread may complete a request
 *        another thread started.
 *      communicators and collectives: concurrently on different communicators. The
 *        collective calls on one communicator (tern_comm_dup, tern_comm_split and
 *        tern_comm_free included) must be issued in the same order on every member, so
 *        in practice from one thread per communicator at a time.
 *      conversations: concurrently on different handles; one handle is used by one
 *        thread at a time.
 *      reductions: user operations run with the library's lock held; they may call tern.
 */
#ifndef TERN_H
#define TERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from libtern, which hides all else. */
/* TERN__HIDE_API: only inside libtern built with tracing, where these names are the
 * hidden real definitions behind the tracing entry points (src/trace). */
#ifndef TERN__HIDE_API
#pragma GCC visibility push(default)
#endif

#define TERN_VERSION_MAJOR 0
#define TERN_VERSION_MINOR 1
#define TERN_VERSION_PATCH 0

/*
 * Error codes. One list generates the enum, tern_strerror() and tern_err_name().
 * X(NAME, value, sentence)
 */
#define TERN_ERRNO_MAP(X)                                                                          \
    X(INVAL, -1, "invalid argument")                                                               \
    X(RANK, -2, "rank out of range for the communicator")                                          \
    X(TAG, -3, "invalid tag (negative, or above TERN_TAG_UB)")                                     \
    X(BUFFER, -4, "NULL buffer with a non-zero length")                                            \
    X(TRUNCATE, -5, "message larger than the receive buffer")                                      \
    X(NOT_INIT, -6, "tern_init has not been called")                                               \
    X(FINALIZED, -7, "tern_finalize has already been called")                                      \
    X(NOMEM, -8, "out of memory")                                                                  \
    X(PEER_FAILED, -9, "a peer process failed or the launcher went away")                          \
    X(AGAIN, -10, "resource temporarily unavailable, try again")                                   \
    X(BOOT, -11, "launcher (PMI) protocol error")                                                  \
    X(TRANSPORT, -12, "transport failure")                                                         \
    X(COMM, -13, "invalid communicator")                                                           \
    X(REQUEST, -14, "invalid request")                                                             \
    X(TUNABLE, -15, "invalid value in a TERN_* environment variable")                              \
    X(UNSUPPORTED, -16, "operation not supported")                                                 \
    X(INTERNAL, -17, "internal error")                                                             \
    X(BUSY, -18, "resource busy (operations still pending)")                                       \
    X(INIT, -19, "tern_init has already been called")                                              \
    X(EXISTS, -20, "already registered (an identifier another user holds)")                        \
    X(NOSPACE, -21, "no space left in /dev/shm for a shared-memory segment")                       \
    X(FAULT, -22, "a send buffer could not be read (bad address)")

/** Status codes: TERN_OK or a negative TERN_ERR_* value. */
typedef enum tern_errno {
    TERN_OK = 0,
#define TERN__ERRNO_ENUM(name, value, text) TERN_ERR_##name = (value),
    TERN_ERRNO_MAP(TERN__ERRNO_ENUM)
#undef TERN__ERRNO_ENUM
} tern_errno_t;

/** Receive from any source (tern_recv, tern_irecv, tern_probe, tern_iprobe). */
#define TERN_ANY_SOURCE (-1)
/** Receive with any tag. Tags chosen by programs are 0 ... TERN_TAG_UB. */
#define TERN_ANY_TAG (-1)
/** Largest tag a program may use (INT_MAX: every non-negative int is a valid tag). */
#define TERN_TAG_UB 0x7fffffff
/** Colour passed to tern_comm_split by processes that want no new communicator. */
#define TERN_UNDEFINED (-32766)

/** A communicator: a group of processes and a private matching space. */
typedef struct tern_comm *tern_comm_t;
/** The communicator of every process in the job. Valid between init and finalize. */
extern struct tern_comm tern__comm_world;
#define TERN_COMM_WORLD (&tern__comm_world)
/** The communicator of the calling process alone. */
extern struct tern_comm tern__comm_self;
#define TERN_COMM_SELF (&tern__comm_self)
/** A handle that names no communicator. */
#define TERN_COMM_NULL ((tern_comm_t)0)

/** A pending non-blocking operation. Completion functions set it to TERN_REQUEST_NULL. */
typedef struct tern_request *tern_request_t;
#define TERN_REQUEST_NULL ((tern_request_t)0)

/** What a completed receive or a probe reports. */
typedef struct tern_status {
    int source;   /**< rank of the sender in the communicator */
    int tag;      /**< tag of the message */
    int error;    /**< TERN_OK, or the error of this operation */
    size_t bytes; /**< bytes received; on TERN_ERR_TRUNCATE, the size of the incoming message */
} tern_status_t;

/* ------------------------------------------------------------------------- */
/* Environment                                                               */
/* ------------------------------------------------------------------------- */

/**
 * Start tern in this process (once: calling it again, or after tern_finalize, returns
 * TERN_ERR_INIT or TERN_ERR_FINALIZED). Joins the job started by ternrun (or by any PMI-1
 * launcher such as MPICH's Hydra); with no launcher the process is a job of size 1.
 * argc/argv may be NULL. Reads the TERN_* tunables from the environment. In an MPI
 * program (after MPI_Init) it joins MPI's job instead, on the one core of the process, and
 * MPI_Init after tern_init joins tern's; the last of tern_finalize and MPI_Finalize
 * finalizes the core.
 * Errors: TERN_ERR_INIT (called twice), TERN_ERR_TUNABLE (bad TERN_* value, the message
 * naming it goes to stderr), TERN_ERR_BOOT (launcher protocol failed), TERN_ERR_TRANSPORT,
 * TERN_ERR_NOMEM.
 */
int tern_init(int *argc, char ***argv);

/* Thread levels (the same values and meaning as MPI's). */
#define TERN_THREAD_SINGLE     0 /* one thread in the process */
#define TERN_THREAD_FUNNELED   1 /* several threads, only the one that called init calls tern */
#define TERN_THREAD_SERIALIZED 2 /* any thread calls tern, never two at the same time */
#define TERN_THREAD_MULTIPLE   3 /* any thread calls tern at any time */

/**
 * tern_init, asking for thread level `required` (TERN_THREAD_*); *provided (may be
 * NULL) gets the level granted, which is always the one asked for (a value above
 * MULTIPLE is taken as MULTIPLE, below SINGLE as SINGLE). Below MULTIPLE no lock is
 * ever taken and calls cost what they cost in tern_init; MULTIPLE makes every call take
 * the library's one lock (a blocked call lets it go while it waits). With
 * TERN_PROGRESS_THREAD=1 the library runs its own progress thread and locks at every
 * level. Errors: those of tern_init.
 */
int tern_init_thread(int *argc, char ***argv, int required, int *provided);

/**
 * Finish: completes outstanding standard-mode sends that are already under way,
 * synchronises with every other process and releases every resource (while MPI still
 * uses the core, the core stays up and MPI_Finalize does this).
 * Errors: TERN_ERR_NOT_INIT, TERN_ERR_FINALIZED, TERN_ERR_PEER_FAILED.
 */
int tern_finalize(void);

/** 1 between tern_init and tern_finalize, 0 otherwise. */
int tern_initialized(void);

/** Rank of the calling process in TERN_COMM_WORLD, or TERN_ERR_NOT_INIT / TERN_ERR_FINALIZED. */
int tern_rank(void);

/** Number of processes in TERN_COMM_WORLD, or TERN_ERR_NOT_INIT / TERN_ERR_FINALIZED. */
int tern_size(void);

/**
 * Wall-clock time in seconds (CLOCK_MONOTONIC): never goes back, and values from
 * processes on one node are comparable; across nodes they are not.
 */
double tern_wtime(void);

/** Resolution of tern_wtime in seconds. */
double tern_wtick(void);

/**
 * End the whole job: every process exits, the launcher returns `code`.
 * This is the documented fatal path; it does not return.
 */
void tern_abort(int code) __attribute__((noreturn));

/**
 * Declare that this process handles the failure of other processes itself.
 *
 * By default (as with other MPI launchers) ternrun ends the whole job when a rank dies
 * (exits non-zero, is killed, or exits without tern_finalize), printing one line that
 * names the rank, its host and pid, and the cause. Once every surviving rank has called
 * tern_tolerate_failures, the job goes on instead: ternrun still prints the line and
 * exits with that failure's status at the end, and the survivors hear of the death
 * within about TERN_FAILURE_CHECK_MS + TERN_SLEEP_MS (on shared memory a liveness check
 * finds it even without ternrun; over TCP the closed connection does). Then:
 *  - every operation that waits on the dead process (a send to it, a receive from it, a
 *    wildcard receive that was posted when it died on a communicator that includes it,
 *    a collective, a conversation or SHMEM operation involving it) completes with
 *    TERN_ERR_PEER_FAILED;
 *  - collectives on any communicator that includes it fail at once with
 *    TERN_ERR_PEER_FAILED; communicators without it keep working, as does
 *    point-to-point between survivors;
 *  - messages it sent that had wholly arrived before it died are still delivered.
 * tern_finalize still returns (with TERN_ERR_PEER_FAILED). Under other launchers the
 * call has no effect on the job and returns TERN_OK. In MPI programs, setting an error
 * handler other than MPI_ERRORS_ARE_FATAL does the same.
 * Errors: TERN_ERR_NOT_INIT, TERN_ERR_FINALIZED, TERN_ERR_BOOT (launcher gone).
 */
int tern_tolerate_failures(void);

/** A sentence describing an error code ("success" for TERN_OK, "unknown error" for
 * codes that are not tern's; never NULL). */
const char *tern_strerror(int err);

/** The name of an error code, such as "TERN_ERR_TRUNCATE"; "TERN_OK" for 0 and
 * "TERN_ERR_UNKNOWN" for codes that are not tern's (never NULL). */
const char *tern_err_name(int err);

/* ------------------------------------------------------------------------- */
/* Point-to-point                                                            */
/* ------------------------------------------------------------------------- */
/*
 * Common errors of every point-to-point call: TERN_ERR_NOT_INIT, TERN_ERR_FINALIZED,
 * TERN_ERR_COMM (NULL or freed communicator), TERN_ERR_RANK (peer out of range; the
 * wildcard is allowed only on receives and probes), TERN_ERR_TAG (negative tag on a send,
 * or a tag below TERN_ANY_TAG / above TERN_TAG_UB on a receive), TERN_ERR_BUFFER (NULL
 * buffer with non-zero length, or TERN_IN_PLACE, which only collectives take),
 * TERN_ERR_INVAL (NULL request or flag pointer, or a length or capacity above
 * PTRDIFF_MAX: a negative number passed on),
 * TERN_ERR_REQUEST (a request handle that is not a live request, or a stale copy of a
 * handle whose request has completed: handles carry a generation),
 * TERN_ERR_PEER_FAILED (the peer died or the launcher went away),
 * TERN_ERR_FAULT (sends: the kernel could not read the buffer, a bad address; the
 * receiver still gets the message, with undefined contents, and nothing else fails; on
 * shm without cross-memory attach the sender's own copy faults instead: SIGSEGV).
 * Before tern_init every call returns TERN_ERR_NOT_INIT, after tern_finalize
 * TERN_ERR_FINALIZED.
 *
 * Matching follows MPI: an arriving message goes to the earliest-posted receive whose
 * source and tag accept it; a receive (or probe) takes the earliest-arrived message it
 * accepts. Messages between one pair of processes on one communicator are therefore
 * received in the order they were sent (non-overtaking).
 * A completed receive's status has error TERN_OK or the receive's error.
 */

/**
 * Synchronous blocking send: returns once the receiver has matched the message and
 * the data is in its buffer (or, for a truncated receive, once the receiver is done).
 * Large messages move without an intermediate copy where the transport allows.
 */
int tern_send(const void *buf, size_t len, int dest, int tag, tern_comm_t comm);

/**
 * Standard-mode non-blocking send. The request completes when `buf` may be reused:
 * at once for small messages, after the receiver pulled the data for large ones.
 */
int tern_isend(const void *buf, size_t len, int dest, int tag, tern_comm_t comm,
               tern_request_t *req);

/** Synchronous-mode non-blocking send: completes only once the receiver has matched. */
int tern_issend(const void *buf, size_t len, int dest, int tag, tern_comm_t comm,
                tern_request_t *req);

/**
 * Blocking receive into buf (capacity `cap` bytes). source may be TERN_ANY_SOURCE and
 * tag TERN_ANY_TAG. status may be NULL. Returns TERN_ERR_TRUNCATE if the message is
 * larger than cap: the first cap bytes are stored, status->bytes holds the full size.
 */
int tern_recv(void *buf, size_t cap, int source, int tag, tern_comm_t comm, tern_status_t *status);

/** Non-blocking receive; completes in tern_wait/tern_test and friends. */
int tern_irecv(void *buf, size_t cap, int source, int tag, tern_comm_t comm, tern_request_t *req);

/**
 * Wait for a request to complete, free it and set *req to TERN_REQUEST_NULL.
 * A NULL request completes at once with an empty status. Returns the operation's
 * result (TERN_ERR_TRUNCATE for a truncated receive). status may be NULL.
 */
int tern_wait(tern_request_t *req, tern_status_t *status);

/**
 * Drive progress once and report in *flag whether the request completed. When it
 * did, the request is freed and set to TERN_REQUEST_NULL and its result returned.
 */
int tern_test(tern_request_t *req, int *flag, tern_status_t *status);

/**
 * Wait for all n requests. statuses may be NULL. Returns TERN_OK if all succeeded,
 * otherwise the first error; each status->error says which one failed.
 */
int tern_waitall(size_t n, tern_request_t reqs[], tern_status_t statuses[]);

/**
 * Wait for any one of n requests; *index names it. If every request is
 * TERN_REQUEST_NULL, returns TERN_OK at once with *index = SIZE_MAX and an empty status
 * (source TERN_ANY_SOURCE, tag TERN_ANY_TAG, bytes 0). Returns that operation's result.
 */
int tern_waitany(size_t n, tern_request_t reqs[], size_t *index, tern_status_t *status);

/**
 * *flag = 1 and every request freed if all n requests completed; otherwise *flag = 0
 * and no request is touched. Returns the first error when flag is 1.
 */
int tern_testall(size_t n, tern_request_t reqs[], int *flag, tern_status_t statuses[]);

/** Block until a matching message is there; its source, tag and size go to status. */
int tern_probe(int source, int tag, tern_comm_t comm, tern_status_t *status);

/** Like tern_probe but returns at once; *flag says whether a message was found. */
int tern_iprobe(int source, int tag, tern_comm_t comm, int *flag, tern_status_t *status);

/**
 * Send and receive at once (the send is standard mode, so two processes may
 * exchange with each other without deadlock).
 */
int tern_sendrecv(const void *sbuf, size_t slen, int dest, int stag, void *rbuf, size_t rcap,
                  int source, int rtag, tern_comm_t comm, tern_status_t *status);

/* ------------------------------------------------------------------------- */
/* Communicators                                                             */
/* ------------------------------------------------------------------------- */

/** Rank of the calling process in comm. Errors: TERN_ERR_COMM, TERN_ERR_INVAL (NULL). */
int tern_comm_rank(tern_comm_t comm, int *rank);

/** Number of processes in comm. Errors: TERN_ERR_COMM, TERN_ERR_INVAL (NULL). */
int tern_comm_size(tern_comm_t comm, int *size);

/**
 * Collective over comm: a new communicator with the same processes and a private
 * matching space (messages on one never match receives on the other).
 */
int tern_comm_dup(tern_comm_t comm, tern_comm_t *newcomm);

/**
 * Collective over comm: processes passing the same colour form a new communicator,
 * ranked by key (ties broken by rank in comm). TERN_UNDEFINED gives TERN_COMM_NULL;
 * any other negative colour is TERN_ERR_INVAL.
 */
int tern_comm_split(tern_comm_t comm, int color, int key, tern_comm_t *newcomm);

/**
 * Free a communicator made by dup or split and set *comm to TERN_COMM_NULL.
 * TERN_COMM_WORLD and TERN_COMM_SELF cannot be freed (TERN_ERR_COMM).
 */
int tern_comm_free(tern_comm_t *comm);

/**
 * Translate a rank of comm to its rank in TERN_COMM_WORLD.
 * Errors: TERN_ERR_COMM, TERN_ERR_RANK, TERN_ERR_INVAL.
 */
int tern_comm_world_rank(tern_comm_t comm, int rank, int *world_rank);

/** Wait until every process of comm has called it (collective; dissemination
 * algorithm, TERN_COLL_BARRIER). */
int tern_barrier(tern_comm_t comm);

/* ------------------------------------------------------------------------- */
/* Collectives                                                               */
/* ------------------------------------------------------------------------- */
/*
 * Every process of the communicator calls the same collectives in the same order
 * (blocking and non-blocking alike), with matching sizes, roots and operations.
 * Data-movement collectives (bcast, gather, scatter, allgather, alltoall and their
 * "v" forms) count bytes; reductions count elements of a tern_datatype_t.
 * The algorithm is chosen by operation, size and process count; TERN_COLL_<OP>
 * (for example TERN_COLL_ALLREDUCE=ring) forces one, see `ternrun --info`.
 *
 * Common errors: TERN_ERR_NOT_INIT, TERN_ERR_FINALIZED, TERN_ERR_COMM (NULL or freed
 * communicator), TERN_ERR_RANK (root out of range), TERN_ERR_BUFFER (NULL buffer with a
 * non-zero size, or TERN_IN_PLACE where it is not allowed), TERN_ERR_INVAL (unknown
 * datatype or operation, an operation not defined on the datatype, NULL count or
 * displacement arrays, NULL request), TERN_ERR_TUNABLE (TERN_COLL_<OP> names no algorithm
 * of that collective; a line naming it goes to stderr), TERN_ERR_NOMEM,
 * TERN_ERR_PEER_FAILED, TERN_ERR_TRUNCATE (sizes did not match between processes).
 */

/** Pass as the send buffer (the receive buffer for scatter at the root) to work in place. */
#define TERN_IN_PLACE ((void *)-1) /* MPI_IN_PLACE's value too (mpi.h) */

/** Element types of reductions. */
typedef enum tern_datatype {
    TERN_INT8 = 0,
    TERN_INT16,
    TERN_INT32,
    TERN_INT64,
    TERN_UINT8,
    TERN_UINT16,
    TERN_UINT32,
    TERN_UINT64,
    TERN_FLOAT,
    TERN_DOUBLE,
    TERN_FLOAT_INT,  /**< tern_float_int_t, for TERN_MINLOC / TERN_MAXLOC */
    TERN_DOUBLE_INT, /**< tern_double_int_t */
    TERN_INT_INT,    /**< tern_int_int_t */
    TERN_LONG_INT,   /**< tern_long_int_t */
    TERN_DATATYPE_COUNT
} tern_datatype_t;

/** Value/index pairs of TERN_MINLOC and TERN_MAXLOC (the layout of the C struct). */
typedef struct {
    float val;
    int idx;
} tern_float_int_t;
typedef struct {
    double val;
    int idx;
} tern_double_int_t;
typedef struct {
    int val;
    int idx;
} tern_int_int_t;
typedef struct {
    long val;
    int idx;
} tern_long_int_t;

/**
 * Reduction operations. SUM, PROD, MIN, MAX apply to every integer and floating type;
 * LAND, LOR, LXOR (result 0 or 1) and BAND, BOR, BXOR to integer types; MINLOC and
 * MAXLOC to the pair types (the smallest index wins a tie). Integer SUM and PROD wrap
 * modulo 2^bits on overflow, signed types included. Values from tern_op_create() name
 * user operations.
 */
typedef enum tern_op {
    TERN_OP_NULL = -1,
    TERN_SUM = 0,
    TERN_PROD,
    TERN_MIN,
    TERN_MAX,
    TERN_LAND,
    TERN_LOR,
    TERN_LXOR,
    TERN_BAND,
    TERN_BOR,
    TERN_BXOR,
    TERN_MINLOC,
    TERN_MAXLOC,
    TERN_OP_BUILTIN_COUNT,
    TERN__OP_MAX = 0x7fffffff
} tern_op_t;

/**
 * A user reduction: inout[i] = in[i] op inout[i] for count elements of dt, where `in`
 * holds the contribution of lower ranks than `inout` (MPI order).
 */
typedef void (*tern_user_fn)(const void *in, void *inout, size_t count, tern_datatype_t dt);

/**
 * Make a user operation. commute = 0 promises nothing: results combine strictly in rank
 * order (rank 0 op rank 1 op ...); commute = 1 lets the library reorder.
 * Errors: TERN_ERR_INVAL (NULL fn or op), TERN_ERR_NOMEM, plus NOT_INIT/FINALIZED.
 */
int tern_op_create(tern_user_fn fn, int commute, tern_op_t *op);

/** Release a user operation and set *op to TERN_OP_NULL. Built-ins: TERN_ERR_INVAL. */
int tern_op_free(tern_op_t *op);

/** Bytes per element of a datatype, or 0 for an unknown one. */
size_t tern_datatype_size(tern_datatype_t dt);

/**
 * Broadcast `bytes` bytes of buf from root to every process of comm.
 * Algorithms (TERN_COLL_BCAST): binomial, scatter_ring, scatter_recursive_doubling.
 */
int tern_bcast(void *buf, size_t bytes, int root, tern_comm_t comm);

/**
 * Combine `count` elements of dt from every process with op; the result goes to rbuf
 * at root (rbuf is ignored elsewhere). At the root sbuf may be TERN_IN_PLACE: the input
 * is taken from rbuf. Algorithms (TERN_COLL_REDUCE): binomial, rabenseifner.
 */
int tern_reduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                int root, tern_comm_t comm);

/**
 * Like tern_reduce, with the result on every process. sbuf may be TERN_IN_PLACE.
 * Algorithms (TERN_COLL_ALLREDUCE): recursive_doubling, rabenseifner, ring (ring needs a
 * commutative op; with a non-commutative one rabenseifner runs instead).
 */
int tern_allreduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                   tern_comm_t comm);

/**
 * Every process sends `bytes` bytes; the root receives them in rank order in rbuf
 * (size * bytes). At the root sbuf may be TERN_IN_PLACE (its block is already in place).
 * Algorithms (TERN_COLL_GATHER): binomial, linear.
 */
int tern_gather(const void *sbuf, size_t bytes, void *rbuf, int root, tern_comm_t comm);

/**
 * Gather with a size per process: process i sends sbytes (counts[i] at the root), which
 * land at rbuf + displs[i]. counts and displs (bytes) matter only at the root.
 */
int tern_gatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                 const size_t displs[], int root, tern_comm_t comm);

/**
 * The root sends block i of sbuf (size * bytes) to process i, into rbuf. At the root
 * rbuf may be TERN_IN_PLACE (its block stays in sbuf). Algorithms (TERN_COLL_SCATTER):
 * binomial, linear.
 */
int tern_scatter(const void *sbuf, void *rbuf, size_t bytes, int root, tern_comm_t comm);

/** Scatter with a size per process: counts[i] bytes from sbuf + displs[i] (root only). */
int tern_scatterv(const void *sbuf, const size_t counts[], const size_t displs[], void *rbuf,
                  size_t rbytes, int root, tern_comm_t comm);

/**
 * Every process contributes `bytes` bytes; all get every block in rank order in rbuf.
 * sbuf may be TERN_IN_PLACE (the block is already at rbuf + rank * bytes).
 * Algorithms (TERN_COLL_ALLGATHER): recursive_doubling (power-of-two sizes; otherwise
 * bruck runs), bruck, ring.
 */
int tern_allgather(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm);

/** Allgather with a size per process: block i is counts[i] bytes at rbuf + displs[i]. */
int tern_allgatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                    const size_t displs[], tern_comm_t comm);

/**
 * Block i of sbuf (bytes each) goes to process i; block j of rbuf comes from process j.
 * sbuf may be TERN_IN_PLACE. Algorithms (TERN_COLL_ALLTOALL): bruck, pairwise.
 */
int tern_alltoall(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm);

/** Alltoall with sizes and displacements (bytes) per process. sbuf may be TERN_IN_PLACE
 * (the data, and its layout, are those of rbuf). */
int tern_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[], void *rbuf,
                   const size_t rcounts[], const size_t rdispls[], tern_comm_t comm);

/**
 * Reduce sum(counts) elements elementwise, then process i gets the counts[i] elements
 * that start at sum(counts[0..i-1]) in rbuf. sbuf may be TERN_IN_PLACE (the input is in
 * rbuf). Algorithms (TERN_COLL_REDUCE_SCATTER): recursive_halving, pairwise; both need
 * a commutative op (otherwise a rank-ordered reduce then scatter runs).
 */
int tern_reduce_scatter(const void *sbuf, void *rbuf, const size_t counts[], tern_datatype_t dt,
                        tern_op_t op, tern_comm_t comm);

/** tern_reduce_scatter with count elements for every process (input size * count). */
int tern_reduce_scatter_block(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt,
                              tern_op_t op, tern_comm_t comm);

/**
 * Inclusive prefix reduction: process i gets the reduction of processes 0..i.
 * sbuf may be TERN_IN_PLACE. Algorithm (TERN_COLL_SCAN): recursive_doubling.
 */
int tern_scan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
              tern_comm_t comm);

/** Exclusive prefix reduction: process i > 0 gets processes 0..i-1; rank 0's rbuf is
 * left untouched. */
int tern_exscan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                tern_comm_t comm);

/*
 * Non-blocking collectives: same arguments plus a request that completes through
 * tern_wait, tern_test and friends (its status reports 0 bytes). Buffers must not be
 * touched until then. They progress whenever any tern call drives progress.
 */
int tern_ibarrier(tern_comm_t comm, tern_request_t *req);
int tern_ibcast(void *buf, size_t bytes, int root, tern_comm_t comm, tern_request_t *req);
int tern_ireduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                 int root, tern_comm_t comm, tern_request_t *req);
int tern_iallreduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                    tern_comm_t comm, tern_request_t *req);
int tern_igather(const void *sbuf, size_t bytes, void *rbuf, int root, tern_comm_t comm,
                 tern_request_t *req);
int tern_igatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                  const size_t displs[], int root, tern_comm_t comm, tern_request_t *req);
int tern_iscatter(const void *sbuf, void *rbuf, size_t bytes, int root, tern_comm_t comm,
                  tern_request_t *req);
int tern_iscatterv(const void *sbuf, const size_t counts[], const size_t displs[], void *rbuf,
                   size_t rbytes, int root, tern_comm_t comm, tern_request_t *req);
int tern_iallgather(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm,
                    tern_request_t *req);
int tern_iallgatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                     const size_t displs[], tern_comm_t comm, tern_request_t *req);
int tern_ialltoall(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm,
                   tern_request_t *req);
int tern_ialltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[], void *rbuf,
                    const size_t rcounts[], const size_t rdispls[], tern_comm_t comm,
                    tern_request_t *req);
int tern_ireduce_scatter(const void *sbuf, void *rbuf, const size_t counts[], tern_datatype_t dt,
                         tern_op_t op, tern_comm_t comm, tern_request_t *req);
int tern_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt,
                               tern_op_t op, tern_comm_t comm, tern_request_t *req);
int tern_iscan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
               tern_comm_t comm, tern_request_t *req);
int tern_iexscan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                 tern_comm_t comm, tern_request_t *req);

/* ------------------------------------------------------------------------- */
/* Conversations                                                             */
/* ------------------------------------------------------------------------- */
/*
 * A conversation is a named channel that processes join and leave at will. Messages are
 * addressed to the conversation, not to a process. A conversation exists while anyone
 * is in it: opening a name that does not exist creates it.
 *
 * Members are senders (tern_conv_open_send) or receivers (tern_conv_open_recv) of one of
 * two kinds:
 *  - TERN_FCFS: each message goes to exactly one FCFS receiver, the first that waits
 *    for one (first come, first served). Each FCFS receiver sees the messages it gets in
 *    the order they were sent (an order-preserving sub-stream).
 *  - TERN_BROADCAST: every broadcast receiver gets every message sent after it joined
 *    (that is, after its tern_conv_open_recv returned), in send order.
 * A message goes to one FCFS receiver (if there is one) and to every broadcast receiver.
 * When the conversation has broadcast receivers but no FCFS receiver, a message goes to
 * the broadcast receivers only. When it has no receiver at all, messages wait in the
 * conversation for the first FCFS receiver. "Send order" is the order the messages reach
 * the conversation: one sender's messages keep their order; the messages of different
 * senders interleave.
 *
 * One process may hold several handles on one conversation (for example one to send and
 * one to receive) but cannot be both an FCFS and a broadcast receiver of it.
 *
 * Lifetime: when the last member closes, unread messages are discarded, unless a
 * sender asked to linger (tern_conv_linger): then the conversation stays, with its
 * unread messages, until FCFS receivers have taken them all. So a sender may send and
 * close before any receiver has joined without its messages being lost.
 *
 * Memory: each conversation holds at most TERN_CONV_MAX_QUEUED_BYTES of unread messages
 * (each message counts its length plus 64 bytes): the FCFS queue plus what any one
 * broadcast receiver has been sent but not yet received. A message is always accepted
 * into an empty conversation, whatever its size. A sender that would exceed the bound
 * blocks in tern_conv_send, or gets TERN_ERR_AGAIN from tern_conv_trysend; nothing is
 * ever dropped silently.
 *
 * Sending: tern_conv_send returns once the message is accepted - for messages up to a
 * quarter of TERN_CONV_CREDIT (32 KiB by default) usually at once, paid from credit the
 * home lent the sender, the message then still on its way to the home; otherwise after a
 * round trip to the home. Either way it will reach the conversation, in order with the sender's
 * other messages, and counts as sent before anything the sender does afterwards as far
 * as joining receivers are concerned (a receiver's open waits for such messages). To
 * know that the home holds them (before telling another process to send a "last"
 * message, say), call tern_conv_flush.
 *
 * Failure (after tern_tolerate_failures): a member that dies leaves every conversation
 * as if it had closed without lingering (messages the home had from it stay). When a
 * sender dies, the receives its conversation's receivers have waiting at that moment
 * complete with TERN_ERR_PEER_FAILED (they may have waited for it); later ones wait
 * normally. When the home dies, its conversations are gone: every operation on a handle
 * of them returns TERN_ERR_PEER_FAILED (waiting ones end with it; a broadcast receiver
 * can still receive what had been delivered to it), tern_conv_close releases the handle
 * and returns TERN_OK, and opening the name fails. Conversations homed elsewhere go on.
 *
 * Where it lives: each name has a home process (a hash of the name modulo the job size)
 * that keeps the conversation and serves it from its progress engine. The home serves
 * only while it is inside a tern call (any blocking call - a receive, a wait, a barrier -
 * serves all the time), so a process that computes for long without calling tern delays
 * the conversations it is home to. Homes stop serving in tern_finalize: finish
 * conversation traffic (for example with tern_barrier) before calling it.
 * Conversations work across every transport and in a job of one process.
 *
 * Common errors: TERN_ERR_NOT_INIT, TERN_ERR_FINALIZED, TERN_ERR_INVAL (NULL or closed
 * handle, NULL output pointer, bad name or mode, a receive on a send handle or the other
 * way round), TERN_ERR_BUFFER (NULL buffer with a non-zero length, or TERN_IN_PLACE),
 * TERN_ERR_NOMEM,
 * TERN_ERR_PEER_FAILED (the home process failed).
 */

/** Receive mode: each message goes to one of the FCFS receivers. */
#define TERN_FCFS 1
/** Receive mode: every broadcast receiver gets every message (sent after it joined). */
#define TERN_BROADCAST 2
/** Longest conversation name in bytes, not counting the terminating NUL. */
#define TERN_CONV_NAME_MAX 255

/** A process's handle on a conversation. */
typedef struct tern_conv *tern_conv_t;
#define TERN_CONV_NULL ((tern_conv_t)0)

/**
 * Join conversation `name` (a NUL-terminated string of 1 ... TERN_CONV_NAME_MAX bytes)
 * as a sender, creating it if needed. Blocks until the conversation's home has answered.
 * Errors: TERN_ERR_INVAL (NULL or empty name, name too long, NULL conv), common errors.
 */
int tern_conv_open_send(const char *name, tern_conv_t *conv);

/**
 * Join conversation `name` as a receiver; mode is TERN_FCFS or TERN_BROADCAST (exactly
 * one). Blocks until the home has answered; a broadcast receiver gets every message
 * that reaches the conversation after this call returns.
 * Errors: TERN_ERR_INVAL (bad name, a mode that is not exactly one of the two, NULL
 * conv, or this process already receives from `name` in the other mode), common errors.
 */
int tern_conv_open_recv(const char *name, int mode, tern_conv_t *conv);

/**
 * Leave the conversation, release the handle and set *conv to TERN_CONV_NULL. Messages
 * that were delivered to this handle and not received are discarded. When this was the
 * last member, the conversation ends and its unread messages are discarded (unless it
 * lingers, see tern_conv_linger). Blocks until the home has answered.
 * Errors: TERN_ERR_INVAL (NULL pointer, closed handle), TERN_ERR_BUSY (a tern_conv_irecv
 * on this handle has not completed: wait for it first), common errors.
 */
int tern_conv_close(tern_conv_t *conv);

/**
 * on = 1: when this handle is closed, the conversation lingers: if it is then left
 * without members and with unread messages, it keeps them until FCFS receivers that join
 * later have taken them all (it still ends when the last message is taken and nobody is
 * in it). on = 0 undoes the request before the close. Local; it never blocks.
 * Errors: TERN_ERR_INVAL (bad handle), common errors.
 */
int tern_conv_linger(tern_conv_t conv, int on);

/**
 * Send `len` bytes of buf to the conversation (conv must come from tern_conv_open_send).
 * Returns once the message is accepted (buf may then be reused): paid from credit, or
 * answered by the home (see "Sending" above); if the conversation is full
 * (TERN_CONV_MAX_QUEUED_BYTES), it blocks until receivers have made room. It does not
 * wait for a receiver to take the message.
 * Errors: TERN_ERR_INVAL (bad handle or not a send handle), TERN_ERR_BUFFER, common errors.
 */
int tern_conv_send(tern_conv_t conv, const void *buf, size_t len);

/**
 * Like tern_conv_send, but when the conversation is full it returns TERN_ERR_AGAIN at
 * once (after one round trip to the home) and the message is not sent. A message paid
 * from credit is never refused.
 */
int tern_conv_trysend(tern_conv_t conv, const void *buf, size_t len);

/**
 * Wait until every message sent on this handle has reached the conversation's home
 * (tern_conv_send may return while a message is still on its way, see "Sending" above).
 * After it, a tern_conv_check by anyone counts them. A receiver's tern_conv_open_recv
 * never needs it: joining waits for messages already sent on their way.
 * Errors: TERN_ERR_INVAL (bad handle or not a send handle), common errors.
 */
int tern_conv_flush(tern_conv_t conv);

/**
 * Receive the next message for this handle into buf (capacity cap bytes), blocking until
 * there is one; *len gets its size. A message larger than cap is still consumed: the
 * first cap bytes are stored, TERN_ERR_TRUNCATE is returned and *len holds the full
 * size. len may be NULL.
 * Errors: TERN_ERR_INVAL (bad handle or not a receive handle), TERN_ERR_BUFFER,
 * TERN_ERR_TRUNCATE, common errors.
 */
int tern_conv_recv(tern_conv_t conv, void *buf, size_t cap, size_t *len);

/**
 * Non-blocking receive: *req completes (tern_wait, tern_test and friends) with the next
 * message for this handle. The status reports the size in bytes (the full size with
 * TERN_ERR_TRUNCATE), the sender's rank in TERN_COMM_WORLD as source and tag 0. Several
 * receives may be posted on one handle; they complete in the order they were posted.
 * On an FCFS conversation a posted receive reserves the next message for this process:
 * it is the safe way to ask "is there a message for me?" (see tern_conv_check).
 * Errors: TERN_ERR_INVAL (bad handle, not a receive handle, NULL req), TERN_ERR_BUFFER,
 * common errors.
 */
int tern_conv_irecv(tern_conv_t conv, void *buf, size_t cap, tern_request_t *req);

/**
 * Non-blocking test: *flag = 1 if a message is waiting for this handle, else 0.
 * For a broadcast receiver this looks at what was delivered to it (after one progress
 * step). For an FCFS receiver it asks the home (one round trip) whether its queue holds
 * a message; that message is not reserved, so another FCFS receiver may still take it
 * first and a tern_conv_recv that follows may block. Use tern_conv_irecv + tern_test
 * to be sure. A message whose send returned but that is still on its way to the home is
 * not counted yet (its sender's tern_conv_flush makes sure it is).
 * Errors: TERN_ERR_INVAL (bad handle, not a receive handle, NULL flag), common errors.
 */
int tern_conv_check(tern_conv_t conv, int *flag);

#ifndef TERN__HIDE_API
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* TERN_H */
