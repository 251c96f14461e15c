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
 *  - Thread safety: tern_init() and tern_finalize() must be called by the main
 *    thread; all other calls must come from one thread at a time (the library does
 *    not lock).
 */
#ifndef TERN_H
#define TERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from libtern, which hides all else. */
#pragma GCC visibility push(default)

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
    X(INIT, -19, "tern_init has already been called")

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
/** Largest tag a program may use. */
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
 * Start tern in this process. Joins the job started by ternrun (or by any PMI-1
 * launcher such as MPICH's Hydra); with no launcher the process is a job of size 1.
 * argc/argv may be NULL. Reads the TERN_* tunables from the environment.
 * Errors: TERN_ERR_INIT (called twice), TERN_ERR_TUNABLE (bad TERN_* value, the message
 * naming it goes to stderr), TERN_ERR_BOOT (launcher protocol failed), TERN_ERR_TRANSPORT,
 * TERN_ERR_NOMEM.
 */
int tern_init(int *argc, char ***argv);

/**
 * Finish: completes outstanding standard-mode sends that are already under way,
 * synchronises with every other process and releases every resource.
 * Errors: TERN_ERR_NOT_INIT, TERN_ERR_FINALIZED, TERN_ERR_PEER_FAILED.
 */
int tern_finalize(void);

/** 1 between tern_init and tern_finalize, 0 otherwise. */
int tern_initialized(void);

/** Rank of the calling process in TERN_COMM_WORLD, or TERN_ERR_NOT_INIT. */
int tern_rank(void);

/** Number of processes in TERN_COMM_WORLD, or TERN_ERR_NOT_INIT. */
int tern_size(void);

/** Wall-clock time in seconds from an arbitrary fixed point (monotonic). */
double tern_wtime(void);

/** Resolution of tern_wtime in seconds. */
double tern_wtick(void);

/**
 * End the whole job: every process exits, the launcher returns `code`.
 * This is the documented fatal path; it does not return.
 */
void tern_abort(int code) __attribute__((noreturn));

/** A sentence describing an error code (never NULL; "unknown error" for others). */
const char *tern_strerror(int err);

/** The name of an error code, such as "TERN_ERR_TRUNCATE" (never NULL). */
const char *tern_err_name(int err);

/* ------------------------------------------------------------------------- */
/* Point-to-point                                                            */
/* ------------------------------------------------------------------------- */
/*
 * Common errors of every point-to-point call: TERN_ERR_NOT_INIT, TERN_ERR_FINALIZED,
 * TERN_ERR_COMM (NULL or freed communicator), TERN_ERR_RANK (peer out of range; the
 * wildcard is allowed only on receives and probes), TERN_ERR_TAG (negative tag on a send,
 * or a tag below TERN_ANY_TAG / above TERN_TAG_UB on a receive), TERN_ERR_BUFFER (NULL
 * buffer with non-zero length), TERN_ERR_PEER_FAILED (the peer died).
 * Messages between one pair of processes on one communicator are received in the
 * order they were sent (non-overtaking).
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
int tern_recv(void *buf, size_t cap, int source, int tag, tern_comm_t comm,
              tern_status_t *status);

/** Non-blocking receive; completes in tern_wait/tern_test and friends. */
int tern_irecv(void *buf, size_t cap, int source, int tag, tern_comm_t comm,
               tern_request_t *req);

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
 * Wait for any one of n requests; *index names it (SIZE_MAX if every request was
 * TERN_REQUEST_NULL). Returns that operation's result.
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
 * ranked by key (ties broken by rank in comm). TERN_UNDEFINED gives TERN_COMM_NULL.
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

/** Wait until every process of comm has called it (collective). */
int tern_barrier(tern_comm_t comm);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* TERN_H */
