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

/* MPI_X is a weak alias of PMPI_X, so profiling libraries can intercept MPI_X. Built with
 * tracing (TERN_TRACE_WRAP), MPI_X is instead a weak wrapper (src/trace/trace_wrap_mpi.c)
 * that reaches PMPI_X through this hidden alias, a direct call. */
#ifdef TERN_TRACE_WRAP
#define MPI_ALIAS(name)                                                                            \
    extern __typeof__(PMPI_##name) tern__pmpi_##name                                               \
        __attribute__((alias("PMPI_" #name), visibility("hidden")));
#else
#define MPI_ALIAS(name)                                                                            \
    extern __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)));
#endif

/* ---- errors ------------------------------------------------------------------ */

/* Report `code` (an MPI error class) raised by function `fn` on `comm` through its error
 * handler: abort the job (MPI_ERRORS_ARE_FATAL), call the user's handler, or just return
 * the code (MPI_ERRORS_RETURN). MPI_SUCCESS passes through untouched. */
int mpi_err(MPI_Comm comm, const char *fn, int code);
/* The MPI error code of a tern error code: an MPI error class, or MPI_ERR_TERN_TUNABLE. */
int mpi_from_tern(int terr);
/* tern's one predefined error code that is not a class: MPI_Init found a TERN_* environment
 * value it cannot use (TERN_ERR_TUNABLE). Its class is MPI_ERR_OTHER; MPI_Error_string says
 * what happened. Below MPI_ERR_LASTCODE, far above the classes. */
#define MPI_ERR_TERN_TUNABLE (MPI_ERR_LASTCODE - 1)
/* The highest error code in use (MPI_LASTUSEDCODE, grown by MPI_Add_error_*). */
extern int mpi_lastusedcode;
/* An info handle a call may take: MPI_INFO_NULL, MPI_INFO_ENV or a live one. */
int mpi_info_valid(MPI_Info info);
/* MPI_SUCCESS when the library is initialized and not finalized, else MPI_ERR_OTHER. */
static inline int mpi_state(void)
{
    return __builtin_expect((core.users & CORE_USER_MPI) != 0, 1) ? MPI_SUCCESS : MPI_ERR_OTHER;
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
    struct mpi_topo *topo; /* graph or distributed-graph topology (mpi_topo.c), or NULL */
    MPI_Win win;           /* a window's private communicator: its window (user error
                              handlers get the window's handle), else MPI_WIN_NULL */
    /* Intercommunicators (mpi_inter.c): tc's ranks address the remote group (its rank is
     * mine in the local group); ltc is the local group, as the hidden intra-communicator
     * ic_local; ic_coll is a hidden twin of tc for the collectives' own messages. */
    int inter;
    MPI_Comm ic_local, ic_coll;
    struct tern_comm *ltc;
};

extern struct mpi_comm **mpi_comms;
extern int mpi_ncomms;

/*
 * A communicator handle is its slot + MPI_COMM_SLOTS * generation, so the handle of a
 * freed communicator stays MPI_ERR_COMM after its slot holds a new one. MPI_COMM_WORLD
 * and MPI_COMM_SELF (MPICH's values, mpi.h) have slots 0 and 1 in their low bits.
 */
#define MPI_COMM_SLOTS   (1 << 16)
#define MPI_COMM_NPREDEF 2
static inline struct mpi_comm *mpi_comm_get(MPI_Comm h)
{
    int slot = h & (MPI_COMM_SLOTS - 1);
    struct mpi_comm *c = slot < mpi_ncomms ? mpi_comms[slot] : NULL;
    return c && c->handle == h ? c : NULL;
}
int mpi_comm_init(void);
/* mpi_topo.c: graph topologies kept with a communicator, copied by MPI_Comm_dup. */
struct mpi_topo;
int mpi_topo_kind(const struct mpi_topo *t); /* MPI_GRAPH or MPI_DIST_GRAPH */
int mpi_topo_copy(const struct mpi_topo *t, struct mpi_topo **out);
void mpi_topo_free(struct mpi_topo *t);
int mpi_comm_self_attrs_free(void); /* MPI_Finalize: delete MPI_COMM_SELF's attributes */
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
    int align; /* the strictest alignment of its basic types (pads struct extents) */
    char name[MPI_MAX_OBJECT_NAME];
    struct core_layout lay; /* blk, nblk, extent, size for the core (set by commit) */
};

extern struct mpi_type **mpi_types;
extern int mpi_ntypes;

/*
 * Request and derived-datatype handles carry a generation above the table slot, so a
 * handle kept after MPI_Request_free / completion / MPI_Type_free is refused with
 * MPI_ERR_REQUEST / MPI_ERR_TYPE instead of naming whatever object took its slot (a
 * stale handle matches again only after 511 reuses of the same slot). Predefined types
 * have generation 0: their handles are the compile-time constants of mpi.h.
 */
#define MPI_HANDLE_SLOT_BITS 22
#define MPI_HANDLE_SLOT_MASK ((1 << MPI_HANDLE_SLOT_BITS) - 1)
#define MPI_HANDLE_GEN_MASK  0x1ff /* bits 22..30: handles stay positive ints */
static inline int mpi_handle_slot(int h)
{
    return h & MPI_HANDLE_SLOT_MASK;
}
/* The handle of `slot` one generation after `old` (never generation 0). */
static inline int mpi_handle_next(int old, int slot)
{
    int gen = ((unsigned)old >> MPI_HANDLE_SLOT_BITS) & MPI_HANDLE_GEN_MASK;
    gen = gen == MPI_HANDLE_GEN_MASK ? 1 : gen + 1;
    return slot | (gen << MPI_HANDLE_SLOT_BITS);
}

/* Predefined datatypes have MPICH's handles (mpi.h); the low MPI_HANDLE_SLOT_BITS bits of
 * each are its slot (0x4c000405, MPI_INT: 0x405; the pair types 0x8c00000N: N), all below
 * MPI_TYPE_USER_SLOT0, where the slots of derived types start. */
#define MPI_TYPE_USER_SLOT0 0x2100
static inline struct mpi_type *mpi_type_get(MPI_Datatype h)
{
    int slot = mpi_handle_slot(h);
    struct mpi_type *t = slot < mpi_ntypes ? mpi_types[slot] : NULL;
    return t && t->handle == h ? t : NULL;
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
/* Datatype envelopes (mpi_type_decode.c): how datatype h was made, for MPI_Type_get_envelope and
 * MPI_Type_get_contents; each constructor records its arguments. */
void mpi_type_env_set(MPI_Datatype h, int combiner, int ni, const int *ints, int na,
                      const MPI_Aint *aints, int nt, const MPI_Datatype *types);
void mpi_type_env_list(MPI_Datatype h, int combiner, int count, const int *bls, int bl,
                       const int *idisp, const MPI_Aint *adisp, MPI_Datatype old);
void mpi_type_env_struct(MPI_Datatype h, int count, const int *bls, const MPI_Aint *disps,
                         const MPI_Datatype *types);
void mpi_type_env_subarray(MPI_Datatype h, int ndims, const int *sizes, const int *subsizes,
                           const int *starts, int order, MPI_Datatype old);
void mpi_type_env_drop(MPI_Datatype h); /* MPI_Type_free */
/* The envelope of a type of MPI_Type_create_f90_*: its combiner and (p, r) or (r), and
 * the named type it is (walked as such by MPI_Get_elements). */
void mpi_type_env_set_f90(MPI_Datatype h, int combiner, int ni, const int *ints,
                          MPI_Datatype named);
void mpi_type_env_fini(void);
/* A new handle for the same type map, without attributes or envelope. */
int mpi_type_dup_plain(MPI_Datatype oldtype, MPI_Datatype *newtype);
/* Basic elements in `bytes` bytes of dt instances (MPI_UNDEFINED for a piece of one), and
 * the bytes of `elems` elements: 0, or -1 when dt's make-up is not known. */
int mpi_type_elements(MPI_Datatype dt, MPI_Count bytes, MPI_Count *count);
int mpi_type_elements_bytes(MPI_Datatype dt, MPI_Count elems, MPI_Count *bytes);
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
    MPI_RK_DONE,     /* complete without a core request (MPI_PROC_NULL, buffered send) */
    MPI_RK_GREQ,     /* generalized request (mpi_greq.c) */
    MPI_RK_SENDRECV, /* MPI_Isendrecv(_replace): r receives, r2 sends */
    MPI_RK_IDUP,     /* MPI_Comm_idup: r completes when the context id is agreed */
};

/*
 * An MPI request. Objects in the free pool are all zero but for handle and next_free, so
 * mpi_req_new only sets what differs; mpi_req_release zeroes a used one.
 * mpi_req_complete_fast (mpi_req.c) releases plain sends/receives by resetting r, active,
 * kind and comm only: a new field that a plain request may set must be excluded there.
 */
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
    /* MPI_RK_SENDRECV: the send (ptype holds its datatype) and its packed copy */
    core_req_t *r2;
    void *tmp2;
    struct mpi_pcoll *pcoll; /* a persistent collective's arguments (mpi_pcoll.c) */
    uint32_t bsend_id;       /* a buffered send: its message's id and world destination */
    int bsend_peer;
};
/* mpi_cancel.c: withdraw an unmatched send (MPI_Cancel): its request id, world peer and
 * context, and its core request when it still has one (completed if withdrawn). */
int mpi_cancel_init(void);
int mpi_name_init(void); /* mpi_name.c: the name service (MPI_Publish_name, ...) */
/* At MPI_Finalize: every process's requests to the name server have been answered. */
void mpi_name_quiesce(void);
/* mpi_port.c: the world-sized communicator on CORE_CTX_PORTS (ports, MPI_Comm_join). */
int mpi_port_bridge(MPI_Comm *out);
/* mpi_comm.c: an MPI_Comm_idup whose agreement is over: the new handle into the
 * program's variable, attributes copied. Returns an MPI error. */
int mpi_idup_finish(struct mpi_req *mr);
int mpi_cancel_send(uint32_t id, int peer, uint16_t ctx, core_req_t *r, int *cancelled);
/* mpi_pcoll.c: start a persistent collective (MPI_Start); free its arguments. */
struct mpi_pcoll;
int mpi_pcoll_start(struct mpi_req *mr);
void mpi_pcoll_free(struct mpi_pcoll *pc);

enum mpi_send_mode { MPI_SM_STANDARD = 0, MPI_SM_SYNC, MPI_SM_READY, MPI_SM_BUFFERED };

extern struct mpi_req **mpi_reqs;
extern int mpi_nreqs;
/* The object behind a handle already checked with mpi_req_get. */
static inline struct mpi_req *mpi_req_at(MPI_Request h)
{
    return mpi_reqs[mpi_handle_slot(h)];
}

static inline struct mpi_req *mpi_req_get(MPI_Request h)
{
    if (h <= 0) return NULL;
    int slot = mpi_handle_slot(h);
    struct mpi_req *mr = slot < mpi_nreqs ? mpi_reqs[slot] : NULL;
    return mr && mr->handle == h ? mr : NULL;
}
/* A request object from the pool (no allocation in the steady state). */
struct mpi_req *mpi_req_new(int kind, MPI_Comm comm);
void mpi_req_release(struct mpi_req *mr);
void mpi_p2p_fini(void);
/* mpi_greq.c, for a generalized request: its query_fn into st; query_fn and free_fn,
 * then the core request freed (completion); cancel_fn. Each returns an MPI error. */
int mpi_greq_query(struct mpi_req *mr, MPI_Status *st);
int mpi_greq_finish(struct mpi_req *mr, MPI_Status *st);
int mpi_greq_cancel(struct mpi_req *mr);

/* ---- reductions ------------------------------------------------------------------- */

/* Resolve an MPI operation on a datatype into the collectives' form. MPI_ERR_OP or
 * MPI_ERR_TYPE when the pair is not defined. */
int mpi_op_resolve(MPI_Op op, MPI_Datatype dt, struct coll_op *out);
void mpi_coll_fini(void);
void mpi_win_fini(void);            /* mpi_win.c: windows left at MPI_Finalize */
MPI_Comm mpi_win_comm(MPI_Win win); /* its error communicator, MPI_COMM_NULL if not live */

/* ---- attributes of windows and datatypes (mpi_attr.c) ------------------------------ */
enum { MPI_ATTR_WIN = 1, MPI_ATTR_TYPE = 2 };
/* MPI_X_get_attr of a program's keyval: MPI_ERR_KEYVAL if it is not one of that kind. */
int mpi_attr_get(int kind, int obj, int keyval, void *attribute_val, int *flag);
/* An object goes: delete callbacks of its attributes (in set order), which are dropped. */
void mpi_attr_free_all(int kind, int obj);
/* An object is duplicated: copy callbacks decide what new receives. */
int mpi_attr_copy_all(int kind, int old, int new_obj);

/* ---- helpers ---------------------------------------------------------------------- */

/* The private fields of a status (mpi.h: the MPICH ABI's layout): the byte count is split
 * into the low 32 bits and the high bits above the cancelled flag. */
static inline MPI_Count mpi_status_bytes(const MPI_Status *st)
{
    return (MPI_Count)((uint64_t)(uint32_t)st->count_lo |
                       (uint64_t)((uint32_t)st->count_hi_and_cancelled >> 1) << 32);
}
static inline int mpi_status_cancelled(const MPI_Status *st)
{
    return st->count_hi_and_cancelled & 1;
}
static inline void mpi_status_set_bytes(MPI_Status *st, MPI_Count bytes)
{
    st->count_lo = (int)(uint32_t)(uint64_t)bytes;
    st->count_hi_and_cancelled =
        (st->count_hi_and_cancelled & 1) | (int)(uint32_t)((uint64_t)bytes >> 32 << 1);
}
static inline void mpi_status_set_cancelled(MPI_Status *st, int cancelled)
{
    st->count_hi_and_cancelled = (st->count_hi_and_cancelled & ~1) | (cancelled != 0);
}

/* Fill a status, all but MPI_ERROR: MPI 3.2.5 lets only the multiple-completion calls set
 * that field, and only when they return MPI_ERR_IN_STATUS (mpi_status_set_error). */
static inline void mpi_status_set(MPI_Status *st, int source, int tag, MPI_Count bytes)
{
    if (st == MPI_STATUS_IGNORE) return;
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->count_lo = (int)(uint32_t)(uint64_t)bytes;
    st->count_hi_and_cancelled = (int)(uint32_t)((uint64_t)bytes >> 32 << 1);
}
/* The empty status of MPI (a null or inactive request). */
static inline void mpi_status_empty(MPI_Status *st)
{
    mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
}

#endif
