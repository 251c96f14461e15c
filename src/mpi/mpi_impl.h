/*
 * mpi_impl.h - internals of tern's MPI layer (include/mpi.h): the handle tables
 * (communicators, groups, datatypes, requests, operations), argument checks shared by
 * the files of src/mpi, and error reporting through the communicator's error handler.
 *
 * The MPI layer calls the core (src/core) and the collectives (src/coll) directly; it
 * never goes through the native tern_* API. Handles are small integers indexing tables
 * of pointers (objects never move once made).
 */
#ifndef TERN_MPI_IMPL_H
#define TERN_MPI_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "core/core.h"
#include "mpi.h"

/* MPI_X is a weak alias of PMPI_X, so profiling libraries can intercept MPI_X. */
#define MPI_ALIAS(name)                                                                            \
    extern __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)));

/* ---- errors ------------------------------------------------------------------ */

/* Report `code` (an MPI error class) raised by function `fn` on `comm` through its error
 * handler: abort the job (MPI_ERRORS_ARE_FATAL), call the user's handler, or just return
 * the code (MPI_ERRORS_RETURN). MPI_SUCCESS passes through untouched. */
int mpi_err(MPI_Comm comm, const char *fn, int code);
/* The MPI error class of a tern error code. */
int mpi_from_tern(int terr);
/* MPI_SUCCESS when the library is initialized and not finalized, else MPI_ERR_OTHER. */
static inline int mpi_state(void)
{
    return __builtin_expect(core.initialized, 1) ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* ---- communicators ----------------------------------------------------------- */

struct mpi_attr {
    struct mpi_attr *next;
    int keyval;
    void *val;
};

struct mpi_comm {
    struct tern_comm *tc;
    MPI_Comm handle;
    MPI_Errhandler errh;
    char name[MPI_MAX_OBJECT_NAME];
    int ndims; /* Cartesian topology: > 0, or 0 (none), -1 for a 0-dimensional one */
    int *dims, *periods;
    struct mpi_attr *attrs;
};

extern struct mpi_comm **mpi_comms;
extern int mpi_ncomms;

/*
 * A communicator handle is its slot + MPI_COMM_SLOTS * generation (the predefined ones
 * have generation 0), so the handle of a freed communicator stays MPI_ERR_COMM after
 * its slot holds a new one.
 */
#define MPI_COMM_SLOTS (1 << 16)
static inline struct mpi_comm *mpi_comm_get(MPI_Comm h)
{
    if (h < 0) return NULL;
    int slot = h % MPI_COMM_SLOTS;
    struct mpi_comm *c = slot < mpi_ncomms ? mpi_comms[slot] : NULL;
    return c && c->handle == h ? c : NULL;
}
/* Wrap a core communicator in a new handle (NULL tc gives MPI_COMM_NULL). */
int mpi_comm_wrap(struct tern_comm *tc, const struct mpi_comm *parent, MPI_Comm *out);
int mpi_comm_init(void);
void mpi_comm_fini(void);

/* ---- datatypes ----------------------------------------------------------------- */

/* A datatype's blocks are the core's (struct core_blk: offset, length), so the core walks
 * them itself when a non-contiguous message moves (core_isend_lay, core_irecv_lay). */
#define mpi_blk core_blk

struct mpi_type {
    int refs; /* the handle (until MPI_Type_free) + pending operations */
    int committed;
    int predefined;
    MPI_Datatype handle;
    MPI_Count size;
    MPI_Aint lb, ub;           /* extent = ub - lb */
    MPI_Aint true_lb, true_ub; /* of the data itself */
    int nblk;
    struct mpi_blk *blk; /* one instance, in type-map order, adjacent pieces merged */
    int contig;          /* count instances are one block of count*size bytes at contig_off */
    MPI_Aint contig_off;
    int tdt;             /* the coll datatype of a predefined type, -1 if none */
    MPI_Aint basic_size; /* size of the basic type when the type holds one kind only, else 0 */
    MPI_Datatype basic;  /* the predefined type it is made of when only one, else NULL */
    int combiner;
    char name[MPI_MAX_OBJECT_NAME];
    struct core_layout lay; /* blk, nblk, extent, size for the core (set by commit) */
};

extern struct mpi_type **mpi_types;
extern int mpi_ntypes;

static inline struct mpi_type *mpi_type_get(MPI_Datatype h)
{
    return (unsigned)h < (unsigned)mpi_ntypes ? mpi_types[h] : NULL;
}
static inline MPI_Aint mpi_type_extent(const struct mpi_type *t)
{
    return t->ub - t->lb;
}
/* A committed datatype or NULL. */
static inline struct mpi_type *mpi_type_ok(MPI_Datatype h)
{
    struct mpi_type *t = mpi_type_get(h);
    return t && t->committed ? t : NULL;
}
int mpi_type_init(void);
void mpi_type_fini(void);
void mpi_type_ref(struct mpi_type *t);
void mpi_type_unref(struct mpi_type *t);
/* Pack count instances at `in` into `out` (count * size bytes). */
void mpi_pack(const void *in, MPI_Count count, const struct mpi_type *t, void *out);
/* Unpack at most `bytes` bytes of packed data into count instances at `out`. */
void mpi_unpack(const void *in, size_t bytes, void *out, MPI_Count count, const struct mpi_type *t);

/* ---- requests -------------------------------------------------------------------- */

enum mpi_req_kind {
    MPI_RK_SEND = 1,
    MPI_RK_RECV,
    MPI_RK_COLL,
    MPI_RK_DONE, /* complete without a core request (MPI_PROC_NULL, buffered send) */
};

struct mpi_req {
    core_req_t *r; /* NULL: inactive persistent request, or MPI_RK_DONE */
    MPI_Request handle;
    uint8_t kind;
    uint8_t persistent;
    uint8_t active; /* persistent: started and not yet completed */
    uint8_t cancelled;
    uint8_t mode;      /* sends: enum mpi_send_mode */
    uint8_t proc_null; /* peer is MPI_PROC_NULL: completes at once */
    uint8_t unpack;    /* unpack tmp into ubuf at completion (ubuf may be MPI_BOTTOM) */
    MPI_Comm comm;
    /* receives into non-contiguous types and collectives with them: unpack at completion */
    void *tmp;              /* freed at completion */
    void *ubuf;             /* where to unpack (NULL: nothing to unpack) */
    MPI_Count ucount;       /* instances to unpack */
    struct mpi_type *utype; /* referenced while the request lives */
    size_t uoff;            /* where the packed data starts in tmp */
    /* persistent requests: the arguments of every start */
    const void *pbuf;
    MPI_Count pcount;
    struct mpi_type *ptype; /* referenced */
    int peer, tag;
    struct mpi_req *next_free;
};

enum mpi_send_mode { MPI_SM_STANDARD = 0, MPI_SM_SYNC, MPI_SM_READY, MPI_SM_BUFFERED };

extern struct mpi_req **mpi_reqs;
extern int mpi_nreqs;

static inline struct mpi_req *mpi_req_get(MPI_Request h)
{
    return (unsigned)h < (unsigned)mpi_nreqs ? mpi_reqs[h] : NULL;
}
/* A request object from the pool (no allocation in the steady state). */
struct mpi_req *mpi_req_new(int kind, MPI_Comm comm);
void mpi_req_release(struct mpi_req *mr);
void mpi_p2p_fini(void);
/* Finish a done request: unpack, fill the status, free what it owns. Returns its MPI error. */
int mpi_req_complete(struct mpi_req *mr, MPI_Status *st);

/* ---- reductions ------------------------------------------------------------------- */

/* Resolve an MPI operation on a datatype into the collectives' form. MPI_ERR_OP or
 * MPI_ERR_TYPE when the pair is not defined. */
int mpi_op_resolve(MPI_Op op, MPI_Datatype dt, struct coll_op *out);
void mpi_coll_fini(void);
void mpi_win_fini(void); /* mpi_win.c: windows left at MPI_Finalize */

/* ---- helpers ---------------------------------------------------------------------- */

static inline void mpi_status_set(MPI_Status *st, int source, int tag, int err, MPI_Count bytes)
{
    if (st == MPI_STATUS_IGNORE) return;
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = err;
    st->tern_cancelled = 0;
    st->tern_bytes = bytes;
}
/* The empty status of MPI (a null or inactive request). */
static inline void mpi_status_empty(MPI_Status *st)
{
    mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
}

#endif
