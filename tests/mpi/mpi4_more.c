/*
 * mpi4_more.c - what MPICH's test suite and mpi4py's found after the MPI 4.0 work:
 * - persistent collectives whose count/displacement/type arrays the program frees (or
 *   changes) right after the init call, as mpi4py does when it converts the MPI_Count
 *   arrays of the _c forms: each start must still use the arrays given at init;
 * - MPI_Comm_idup_with_info (a bad info is MPI_ERR_INFO; the new communicator works);
 * - MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED ("mpi_shared_memory" is the node,
 *   an unknown value or no key gives MPI_COMM_NULL) and MPI_COMM_TYPE_HW_UNGUIDED;
 * - one-sided accumulates on MPI_SHORT_INT, whose padding splits each element: MAXLOC,
 *   MINLOC and REPLACE through a strided target type, with Get_accumulate and
 *   Fetch_and_op returning whole old elements, on an allocated window (memory the origin
 *   maps) and on a created one (updated by the target through messages).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

static int size;

static void persistent_arrays(void)
{
    int n = size;
    int *rc = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        rc[i] = i + 1;
    int total = n * (n + 1) / 2;
    int *sb = calloc((size_t)total, sizeof(int)), rb[64];
    MPI_Request r[2];
    OK(MPI_Reduce_scatter_init(sb, rb, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    /* Alltoallv: rank j gets j+1 ints from everyone */
    int *sc = malloc((size_t)n * sizeof(int)), *sd = malloc((size_t)n * sizeof(int));
    int *rcv = malloc((size_t)n * sizeof(int)), *rd = malloc((size_t)n * sizeof(int));
    int *a2s = malloc((size_t)total * sizeof(int));
    int *a2r = malloc((size_t)n * (size_t)(mt_rank + 1) * sizeof(int));
    for (int j = 0, off = 0; j < n; off += j + 1, j++) {
        sc[j] = j + 1;
        sd[j] = off;
        rcv[j] = mt_rank + 1;
        rd[j] = j * (mt_rank + 1);
    }
    OK(MPI_Alltoallv_init(a2s, sc, sd, MPI_INT, a2r, rcv, rd, MPI_INT, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &r[1]));
    /* the arrays are gone (scribbled on first, so stale reads show) */
    memset(rc, 0x7f, (size_t)n * sizeof(int));
    memset(sc, 0x7f, (size_t)n * sizeof(int));
    memset(rd, 0x7f, (size_t)n * sizeof(int));
    free(rc);
    free(sc);
    free(sd);
    free(rcv);
    free(rd);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < total; i++) {
            sb[i] = (mt_rank + 1) * (i + 1) + round;
            a2s[i] = 1000 * mt_rank + i + round;
        }
        OK(MPI_Startall(2, r));
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        /* my block of the reduce-scatter starts at element my_rank*(my_rank+1)/2 */
        int first = mt_rank * (mt_rank + 1) / 2;
        for (int k = 0; k <= mt_rank; k++) {
            int i = first + k, want = (i + 1) * total + n * round;
            CHECKF(rb[k] == want, "round %d reduce_scatter[%d] = %d, want %d", round, k, rb[k],
                   want);
        }
        for (int j = 0; j < n; j++) {
            for (int k = 0; k <= mt_rank; k++) {
                int want = 1000 * j + (mt_rank * (mt_rank + 1) / 2 + k) + round;
                CHECKF(a2r[j * (mt_rank + 1) + k] == want,
                       "round %d alltoallv from %d [%d] = %d, want %d", round, j, k,
                       a2r[j * (mt_rank + 1) + k], want);
            }
        }
    }
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));
    free(sb);
    free(a2s);
    free(a2r);
}

static void idup_with_info(void)
{
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Request r;
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c, &r));
    MPI_Info stale = info;
    OK(MPI_Info_free(&info));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(c != MPI_COMM_NULL && c != MPI_COMM_WORLD);
    int res = -1, sum = 0;
    OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT);
    OK(MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2);
    OK(MPI_Comm_free(&c));
    /* a freed info handle is an error, named */
    MPI_Comm c2 = MPI_COMM_NULL;
    FAILS(MPI_Comm_idup_with_info(MPI_COMM_WORLD, stale, &c2, &r), MPI_ERR_INFO);
    FAILS(MPI_Comm_idup_with_info(MPI_COMM_NULL, MPI_INFO_NULL, &c2, &r), MPI_ERR_COMM);
}

static void split_hw(void)
{
    MPI_Comm c;
    MPI_Info info;
    int n = -1;
    /* every rank of a ternrun job on one host shares memory */
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c != MPI_COMM_NULL);
    if (c != MPI_COMM_NULL) {
        OK(MPI_Comm_size(c, &n));
        CHECKF(n == size, "shared-memory split of %d ranks has %d", size, n);
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Info_free(&info));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL);
    /* unguided: a strict subset or nothing; one host here, so nothing */
    OK(MPI_Info_create(&info));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    if (c != MPI_COMM_NULL) {
        OK(MPI_Comm_size(c, &n));
        CHECK(n < size);
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Info_free(&info));
    FAILS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
}

struct si {
    short v;
    int i;
};
#define NEL 40 /* elements per rank's target region: several records' worth of segments */

/* One window kind: rank 0 holds 2*NEL elements; the target type picks every other one. */
static void short_int_acc(int allocate)
{
    struct si *base;
    MPI_Win win;
    MPI_Aint bytes = 2 * NEL * (MPI_Aint)sizeof(struct si);
    if (allocate) {
        OK(MPI_Win_allocate(mt_rank == 0 ? bytes : 0, (int)sizeof(struct si), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &base, &win));
    } else {
        base = malloc((size_t)bytes);
        OK(MPI_Win_create(base, mt_rank == 0 ? bytes : 0, (int)sizeof(struct si), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    }
    if (mt_rank == 0)
        for (int k = 0; k < 2 * NEL; k++) {
            base[k].v = -1;
            base[k].i = -1;
        }
    MPI_Datatype every2;
    OK(MPI_Type_vector(NEL, 1, 2, MPI_SHORT_INT, &every2));
    OK(MPI_Type_commit(&every2));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Barrier(MPI_COMM_WORLD);
    /* MAXLOC: element k gets (k + rank) % size from each rank: the largest value is
     * size-1, first reached by the lowest rank r with (k + r) % size == size - 1 */
    struct si mine[NEL], got[NEL], old;
    for (int k = 0; k < NEL; k++) {
        mine[k].v = (short)((k + mt_rank) % size);
        mine[k].i = mt_rank;
    }
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Accumulate(mine, NEL, MPI_SHORT_INT, 0, 0, 1, every2, MPI_MAXLOC, win));
    OK(MPI_Win_unlock(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Get_accumulate(NULL, 0, MPI_SHORT_INT, got, NEL, MPI_SHORT_INT, 0, 0, 1, every2,
                          MPI_NO_OP, win));
    OK(MPI_Win_unlock(0, win));
    for (int k = 0; k < NEL; k++) {
        int want_r = ((size - 1 - k) % size + size) % size;
        CHECKF(got[k].v == size - 1 && got[k].i == want_r,
               "%s maxloc[%d] = (%d, %d), want (%d, %d)", allocate ? "allocate" : "create", k,
               got[k].v, got[k].i, size - 1, want_r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* MINLOC from the last rank only, with the old values fetched: (k % 7 - 10, 1000 + k)
     * replaces the elements where it is smaller than size-1 (all of them) */
    if (mt_rank == size - 1) {
        for (int k = 0; k < NEL; k++) {
            mine[k].v = (short)(k % 7 - 10);
            mine[k].i = 1000 + k;
        }
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Get_accumulate(mine, NEL, MPI_SHORT_INT, got, NEL, MPI_SHORT_INT, 0, 0, 1, every2,
                              MPI_MINLOC, win));
        OK(MPI_Win_unlock(0, win));
        for (int k = 0; k < NEL; k++)
            CHECKF(got[k].v == size - 1, "old value [%d] = %d", k, got[k].v);
        /* Fetch_and_op REPLACE on the element between two accumulated ones (untouched
         * so far: (-1, -1)) */
        struct si nv = {.v = 77, .i = 7700};
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Fetch_and_op(&nv, &old, MPI_SHORT_INT, 0, 1, MPI_REPLACE, win));
        OK(MPI_Win_unlock(0, win));
        CHECKF(old.v == -1 && old.i == -1, "fetch_and_op old (%d, %d)", old.v, old.i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Get_accumulate(NULL, 0, MPI_SHORT_INT, got, NEL, MPI_SHORT_INT, 0, 0, 1, every2,
                          MPI_NO_OP, win));
    OK(MPI_Fetch_and_op(NULL, &old, MPI_SHORT_INT, 0, 1, MPI_NO_OP, win));
    OK(MPI_Win_unlock(0, win));
    for (int k = 0; k < NEL; k++)
        CHECKF(got[k].v == k % 7 - 10 && got[k].i == 1000 + k, "minloc[%d] = (%d, %d)", k, got[k].v,
               got[k].i);
    CHECKF(old.v == 77 && old.i == 7700, "replaced element (%d, %d)", old.v, old.i);
    /* a sum is no operation on a pair type */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    FAILS(MPI_Accumulate(mine, 1, MPI_SHORT_INT, 0, 0, 1, MPI_SHORT_INT, MPI_SUM, win), MPI_ERR_OP);
    OK(MPI_Win_unlock(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 0) /* the padding between the pieces was left alone: element 1 intact */
        CHECK(base[1].v == 77 && base[1].i == 7700 && base[3].v == -1 && base[3].i == -1);
    OK(MPI_Type_free(&every2));
    OK(MPI_Win_free(&win));
    if (!allocate) free(base);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    persistent_arrays();
    idup_with_info();
    split_hw();
    short_int_acc(1);
    short_int_acc(0);
    return mt_done("mpi4_more");
}
