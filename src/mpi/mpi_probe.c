/*
 * mpi_probe.c - MPI probes: MPI_Probe and MPI_Iprobe, and the matched probes with their
 * receives (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_p2p_impl.h"

/* The status of a probe or receive from MPI_PROC_NULL (MPI_ERROR stays as it was). */
static void mpi_status_proc_null(MPI_Status *st)
{
    mpi_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
}
#include "util/mem.h"
#include "util/tunables.h"

/* ---- probe, sendrecv, counts ------------------------------------------------------------ */

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Iprobe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (flag == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        mpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    core_progress();
    int src = 0, mtag = 0;
    size_t len = 0;
    rc = core_iprobe(mpi_src_world(c->tc, source), tag, c->tc->ctx, flag, &src, &mtag, &len);
    if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    if (*flag) mpi_status_set(status, core_comm_rank_of(c->tc, src), mtag, (MPI_Count)len);
    return MPI_SUCCESS;
}
MPI_ALIAS(Iprobe)

struct mpi_probe {
    int src, tag;
    uint16_t ctx;
};

static int mpi_probe_found(const void *arg)
{
    const struct mpi_probe *p = arg;
    struct core_match *m = core.match[p->ctx];
    return m && core_match_find_unexp(m, p->src, p->tag, 0) != NULL;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Probe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (source != MPI_PROC_NULL) {
        struct mpi_probe p = {mpi_src_world(c->tc, source), tag, c->tc->ctx};
        rc = core_block(mpi_probe_found, &p);
        if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    }
    int flag;
    return PMPI_Iprobe(source, tag, comm, &flag, status);
}
MPI_ALIAS(Probe)

/* ---- matched probe: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv ----------------------
 * A matching probe takes the message out of the core's unexpected queue (core_improbe),
 * so no other receive or probe, in this thread or another, can match it; the message
 * handle then holds it until MPI_Mrecv/MPI_Imrecv receive exactly that message. Handles
 * are slots of a table (0 and 1 are MPI_MESSAGE_NULL and MPI_MESSAGE_NO_PROC); all of it
 * runs under the library's lock like every other call. */

struct mpi_msg {
    struct core_unexp *u; /* NULL: free slot */
    MPI_Comm comm;
    uint16_t ctx;
    struct tern_comm *tc;
};
static struct mpi_msg *mpi_msgs;
static int mpi_nmsgs;

/* At finalize: messages matched and never received, and the table. */
static void mpi_msg_fini(void)
{
    for (int i = 2; i < mpi_nmsgs; i++)
        free(mpi_msgs[i].u);
    free(mpi_msgs);
    mpi_msgs = NULL;
    mpi_nmsgs = 0;
}

static int mpi_msg_new(struct core_unexp *u, const struct mpi_comm *c, MPI_Message *out)
{
    if (mpi_nmsgs == 0 && core_atfini(mpi_msg_fini)) return MPI_ERR_NO_MEM;
    int slot = 2;
    while (slot < mpi_nmsgs && mpi_msgs[slot].u)
        slot++;
    if (slot >= mpi_nmsgs) {
        int cap = mpi_nmsgs ? 2 * mpi_nmsgs : 16;
        struct mpi_msg *t = realloc(mpi_msgs, (size_t)cap * sizeof *t);
        if (t == NULL) return MPI_ERR_NO_MEM;
        memset(t + mpi_nmsgs, 0, (size_t)(cap - mpi_nmsgs) * sizeof *t);
        mpi_msgs = t;
        mpi_nmsgs = cap;
    }
    mpi_msgs[slot] = (struct mpi_msg){u, c->handle, c->tc->ctx, c->tc};
    *out = slot;
    return MPI_SUCCESS;
}

/* A member of tc has failed. */
static int mpi_comm_member_failed(const struct tern_comm *tc)
{
    if (core.nfailed == 0) return 0;
    for (int r = 0; r < tc->size; r++)
        if (core.peers[core_comm_world(tc, r)].failed) return 1;
    return 0;
}

/* What MPI_Mprobe waits for: a matching message, or the failure that means none will
 * come (its source, or any member for MPI_ANY_SOURCE). */
struct mpi_mprobe_wait {
    struct mpi_probe p;
    const struct tern_comm *tc;
};

static int mpi_mprobe_ready(const void *arg)
{
    const struct mpi_mprobe_wait *w = arg;
    if (mpi_probe_found(&w->p)) return 1;
    return w->p.src >= 0 ? core.peers[w->p.src].failed : mpi_comm_member_failed(w->tc);
}

/* Improbe's work; *flag says whether a message was taken. */
static int mpi_improbe(int source, int tag, struct mpi_comm *c, int *flag, MPI_Message *message,
                       MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        mpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    struct core_unexp *u;
    int rc = core_improbe(mpi_src_world(c->tc, source), tag, c->tc->ctx, &u);
    if (rc) return mpi_from_tern(rc);
    *flag = u != NULL;
    if (u == NULL) /* nothing more will come from a dead source */
        return source >= 0 && core.peers[core_comm_world(c->tc, source)].failed
                   ? MPI_ERR_PROC_FAILED
                   : MPI_SUCCESS;
    if ((rc = mpi_msg_new(u, c, message))) {
        core_match_append_unexp(core_match_get(c->tc->ctx), u); /* not taken after all */
        *flag = 0;
        return rc;
    }
    mpi_status_set(status, core_comm_rank_of(c->tc, u->src), u->tag, (MPI_Count)u->len);
    return MPI_SUCCESS;
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Improbe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (flag == NULL || message == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    core_progress();
    return mpi_err(comm, fn, mpi_improbe(source, tag, c, flag, message, status));
}
MPI_ALIAS(Improbe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Mprobe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (message == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    for (;;) {
        int flag = 0;
        if ((rc = mpi_improbe(source, tag, c, &flag, message, status)))
            return mpi_err(comm, fn, rc);
        if (flag) return MPI_SUCCESS;
        /* A wildcard probe waiting when a member died fails too (the message it waits
         * for may have been that one's), like a wildcard receive. */
        if (source == MPI_ANY_SOURCE && mpi_comm_member_failed(c->tc))
            return mpi_err(comm, fn, MPI_ERR_PROC_FAILED);
        /* Another thread may take the message first: then wait again. */
        struct mpi_mprobe_wait p = {{mpi_src_world(c->tc, source), tag, c->tc->ctx}, c->tc};
        if ((rc = core_block(mpi_mprobe_ready, &p))) return mpi_err(comm, fn, mpi_from_tern(rc));
    }
}
MPI_ALIAS(Mprobe)

/* Start the receive of a matched message into mr (like mpi_recv_post for a message). */
static int mpi_mrecv_post(void *buf, MPI_Count count, struct mpi_type *t, struct mpi_msg *m,
                          struct mpi_req *mr)
{
    size_t n = (size_t)(count * t->size);
    void *p = (void *)((uintptr_t)buf + (uintptr_t)t->contig_off);
    if (!t->contig && count > 0) {
        if ((mr->tmp = malloc(n ? n : 1)) == NULL) return MPI_ERR_NO_MEM;
        p = mr->tmp;
        mr->unpack = 1;
        mr->ubuf = buf;
        mr->ucount = count;
        mr->uoff = 0;
        mr->utype = t;
        mpi_type_ref(t);
    }
    int rc = core_imrecv(m->u, p, n, m->ctx, m->tc, &mr->r);
    if (rc) {
        free(mr->tmp);
        mr->tmp = NULL;
        return mpi_from_tern(rc);
    }
    m->u = NULL; /* the receive owns it now; the slot is free */
    mr->active = 1;
    return MPI_SUCCESS;
}

/* Common checks of Mrecv/Imrecv: *m NULL for MPI_MESSAGE_NO_PROC. */
static int mpi_mrecv_check(const void *buf, MPI_Count count, MPI_Datatype dt,
                           const MPI_Message *message, struct mpi_type **t, struct mpi_msg **m)
{
    if (mpi_state()) return MPI_ERR_OTHER;
    if (message == NULL) return MPI_ERR_ARG;
    if (count < 0) return MPI_ERR_COUNT;
    if ((*t = mpi_type_ok(dt)) == NULL) return MPI_ERR_TYPE;
    *m = NULL;
    if (*message == MPI_MESSAGE_NO_PROC) return MPI_SUCCESS;
    if (*message < 2 || *message >= mpi_nmsgs || mpi_msgs[*message].u == NULL)
        return MPI_ERR_REQUEST;
    if (buf == NULL && count > 0 && (*t)->predefined && (*t)->size > 0) return MPI_ERR_BUFFER;
    *m = &mpi_msgs[*message];
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Mrecv";
    struct mpi_type *t;
    struct mpi_msg *m;
    int rc = mpi_mrecv_check(buf, count, datatype, message, &t, &m);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (m == NULL) {
        *message = MPI_MESSAGE_NULL;
        mpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = m->comm;
    struct mpi_req mr;
    util_zero(&mr, sizeof mr);
    mr.comm = comm;
    if ((rc = mpi_mrecv_post(buf, count, t, m, &mr))) return mpi_err(comm, fn, rc);
    *message = MPI_MESSAGE_NULL;
    if (mr.r->state != CORE_RS_DONE && (rc = core_wait(mr.r)))
        return mpi_err(comm, fn, mpi_from_tern(rc));
    return mpi_err(comm, fn, mpi_req_finish_op(&mr, status));
}
MPI_ALIAS(Mrecv)

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Imrecv";
    struct mpi_type *t;
    struct mpi_msg *m;
    int rc = mpi_mrecv_check(buf, count, datatype, message, &t, &m);
    if (rc == 0 && request == NULL) rc = MPI_ERR_ARG;
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    MPI_Comm comm = m ? m->comm : MPI_COMM_WORLD;
    struct mpi_req *mr = mpi_req_new(MPI_RK_RECV, comm);
    if (mr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    if (m == NULL) { /* MPI_MESSAGE_NO_PROC: a receive from MPI_PROC_NULL */
        mr->active = 1;
        mr->proc_null = 1;
    } else if ((rc = mpi_mrecv_post(buf, count, t, m, mr))) {
        mpi_req_release(mr);
        return mpi_err(comm, fn, rc);
    }
    *message = MPI_MESSAGE_NULL;
    *request = mr->handle;
    return MPI_SUCCESS;
}
MPI_ALIAS(Imrecv)
