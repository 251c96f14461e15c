/*
 * mpi_bsend.c - MPI buffered sends: the user's attached buffer (MPI_Buffer_attach,
 * MPI_Buffer_detach) and the sends that copy into it (the MPI_Bsend family starts them
 * here).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_p2p_impl.h"
#include "util/tunables.h"

/* ---- buffered sends ---------------------------------------------------------------- */

struct mpi_bsend {
    struct mpi_bsend *next; /* by offset */
    core_req_t *r;
    size_t off, len;
};
static char *mpi_bbuf;
static size_t mpi_bsize;
static struct mpi_bsend *mpi_bsends;
uint32_t mpi_bsend_last_id;
static void *mpi_bbuf_user; /* as attached, for MPI_Buffer_detach */
static int mpi_bbuf_usize;

static void mpi_bsend_reap(void)
{
    for (struct mpi_bsend **p = &mpi_bsends, *b; (b = *p) != NULL;) {
        if (b->r->state == CORE_RS_DONE) {
            core_req_free(b->r);
            *p = b->next;
            free(b);
        } else {
            p = &b->next;
        }
    }
}

/* Copy the message into the attached buffer and start a standard send from there. */
/* The core request of a buffered message still in the buffer, by id (NULL: gone). */
core_req_t *mpi_bsend_find(uint32_t id)
{
    for (struct mpi_bsend *b = mpi_bsends; b; b = b->next)
        if (b->r->id == id && b->r->state != CORE_RS_DONE) return b->r;
    return NULL;
}

int mpi_bsend_start(const void *buf, MPI_Count count, const struct mpi_type *t, int dest, int tag,
                    uint16_t ctx)
{
    size_t n = (size_t)(count * t->size);
    /*
     * The bookkeeping lives outside the user's buffer, so a message takes only its bytes
     * rounded up to 16 (areas stay 16-byte aligned). The standard sizes the buffer as
     * MPI_Pack_size + MPI_BSEND_OVERHEAD per message: the overhead covers the at most 15
     * bytes of rounding per message plus the at most 15 lost aligning the buffer itself.
     */
    size_t need = (n + 15) & ~(size_t)15;
    if (mpi_bbuf == NULL) return MPI_ERR_BUFFER;
    struct mpi_bsend **p;
    size_t off;
    for (int pass = 0;; pass++) {
        mpi_bsend_reap();
        off = 0;
        for (p = &mpi_bsends; *p; p = &(*p)->next) {
            if ((*p)->off >= off + need) break;
            off = (*p)->off + (*p)->len;
        }
        if (off + need <= mpi_bsize) break;
        /* Earlier messages may have left without our noticing: progress once, retry. */
        if (pass > 0) return MPI_ERR_BUFFER;
        core_progress();
    }
    struct mpi_bsend *b = malloc(sizeof *b);
    if (b == NULL) return MPI_ERR_NO_MEM;
    if (t->contig)
        memcpy(mpi_bbuf + off, (const void *)((uintptr_t)buf + (uintptr_t)t->contig_off), n);
    else
        mpi_pack(buf, count, t, mpi_bbuf + off);
    int rc = core_isend(mpi_bbuf + off, n, dest, tag, ctx, 0, &b->r);
    if (rc) {
        free(b);
        return mpi_from_tern(rc);
    }
    mpi_bsend_last_id = b->r->id;
    b->off = off;
    b->len = need;
    b->next = *p;
    *p = b;
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Buffer_attach";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (size < 0 || (buffer == NULL && size > 0)) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (mpi_bbuf) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_BUFFER);
    /* Keep the bsend areas 16-byte aligned inside the user's buffer. */
    uintptr_t a = (uintptr_t)buffer, al = (a + 15) & ~(uintptr_t)15;
    mpi_bbuf = buffer;
    mpi_bsize = (size_t)size;
    if (al - a <= (size_t)size) {
        mpi_bbuf = (char *)al;
        mpi_bsize = (size_t)size - (al - a);
    }
    mpi_bbuf_user = buffer;
    mpi_bbuf_usize = size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Buffer_attach)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Buffer_detach";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (buffer_addr == NULL || size == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    /* Detaching waits until every buffered message is on its way. */
    for (struct mpi_bsend *b = mpi_bsends; b; b = b->next) {
        int rc = core_wait(b->r);
        if (rc) return mpi_err(MPI_COMM_WORLD, fn, mpi_from_tern(rc));
    }
    mpi_bsend_reap();
    *(void **)buffer_addr = mpi_bbuf_user;
    *size = mpi_bbuf_usize;
    mpi_bbuf = NULL;
    mpi_bsize = 0;
    mpi_bbuf_user = NULL;
    mpi_bbuf_usize = 0;
    return MPI_SUCCESS;
}
MPI_ALIAS(Buffer_detach)
