/*
 * abi_mpich.c - built with MPICH's mpicc (tests/mpi/mpich_abi.sh) and run by
 * `ternrun --mpi-abi mpich`: the program must have loaded tern (library version and
 * /proc/self/maps), and what crosses the binary interface must mean what MPICH's header
 * says: predefined handles, MPI_Status fields and counts, MPI_STATUS(ES)_IGNORE,
 * MPI_IN_PLACE, MPI_UNWEIGHTED, MPI_COMM_DUP_FN, error classes, attribute keys, string
 * lengths. Data moved by ping-pong, collectives and derived datatypes is checked.
 */
#include <stdint.h>

#include "mpi_check.h"

static int size;

static void check_tern_loaded(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    OK(MPI_Get_library_version(v, &len));
    CHECKF(strncmp(v, "tern", 4) == 0, "library version '%s' is not tern's", v);
    CHECK(len == (int)strlen(v) && len < MPI_MAX_LIBRARY_VERSION_STRING);
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[4096];
    int tern = 0, mpich = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "/libtern.so")) tern = 1;
        if (strstr(line, "/libmpich.so.12.")) mpich = 1; /* MPICH's own file */
    }
    fclose(f);
    CHECK(tern && !mpich);
    char name[MPI_MAX_PROCESSOR_NAME];
    OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME);
}

/* Ping-pong with ANY_SOURCE/ANY_TAG receives: status fields and counts. */
static void check_pingpong(void)
{
    enum { N = 1000 };
    int buf[N];
    if (size < 2) return;
    for (int round = 0; round < 20; round++) {
        int n = round * 50 + 1;
        if (mt_rank == 0) {
            for (int i = 0; i < n; i++)
                buf[i] = round * 100000 + i;
            OK(MPI_Send(buf, n, MPI_INT, 1, 7 + round, MPI_COMM_WORLD));
            MPI_Status st;
            memset(buf, 0, sizeof buf);
            OK(MPI_Recv(buf, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 1000 + round);
            int count = -1;
            OK(MPI_Get_count(&st, MPI_INT, &count));
            CHECK(count == n);
            OK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK(count == n * 4);
            for (int i = 0; i < n; i++)
                CHECKF(buf[i] == -(round * 100000 + i), "round %d element %d: %d", round, i,
                       buf[i]);
        } else if (mt_rank == 1) {
            MPI_Status st;
            OK(MPI_Recv(buf, N, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 7 + round);
            int count = -1;
            OK(MPI_Get_count(&st, MPI_INT, &count));
            CHECK(count == n);
            for (int i = 0; i < n; i++)
                buf[i] = -buf[i];
            OK(MPI_Send(buf, n, MPI_INT, 0, 1000 + round, MPI_COMM_WORLD));
        }
    }
    /* Non-blocking with MPI_STATUSES_IGNORE and MPI_STATUS_IGNORE. */
    int peer = mt_rank ^ 1, out = mt_rank * 11, in = -1, in2 = -1;
    if (peer < size) {
        MPI_Request q[2];
        OK(MPI_Irecv(&in, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &q[0]));
        OK(MPI_Isend(&out, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &q[1]));
        OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL && in == peer * 11);
        OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, 4, &in2, 1, MPI_INT, peer, 4, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        CHECK(in2 == peer * 11);
    }
    /* MPI_PROC_NULL gives MPICH's empty-receive status. */
    MPI_Status st;
    OK(MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    int count = -1, flag = 1;
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0);
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0);
}

static void check_collectives(void)
{
    int v = mt_rank + 1, sum = 0;
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size + 1) / 2);
    double d[3] = {mt_rank, -mt_rank, 2.5};
    OK(MPI_Allreduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(d[0] == size - 1 && d[1] == 0 && d[2] == 2.5);
    struct {
        double val;
        int rank;
    } in = {(double)(mt_rank % 2 ? 100 - mt_rank : mt_rank), mt_rank}, out;
    OK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(out.val == (size > 1 ? 99 : 0) && out.rank == (size > 1 ? 1 : 0));
    long long big = mt_rank == 0 ? 0x123456789abLL : 0;
    OK(MPI_Bcast(&big, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    CHECK(big == 0x123456789abLL);
    int *all = malloc((size_t)size * sizeof *all), *a2a = malloc((size_t)size * sizeof *a2a),
        *sendv = malloc((size_t)size * sizeof *sendv);
    CHECK(all && a2a && sendv);
    OK(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++) {
        CHECK(all[i] == i + 1);
        sendv[i] = mt_rank * 1000 + i;
    }
    OK(MPI_Alltoall(sendv, 1, MPI_INT, a2a, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(a2a[i] == i * 1000 + mt_rank);
    free(all);
    free(a2a);
    free(sendv);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A vector type sent and received as a different shape: the bytes land where they should. */
static void check_datatypes(void)
{
    MPI_Datatype vec, col;
    OK(MPI_Type_vector(4, 2, 5, MPI_SHORT, &vec));
    OK(MPI_Type_commit(&vec));
    int sz = 0;
    MPI_Aint lb = -1, ext = 0;
    OK(MPI_Type_size(vec, &sz));
    OK(MPI_Type_get_extent(vec, &lb, &ext));
    CHECK(sz == 16 && lb == 0 && ext == (3 * 5 + 2) * 2);
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && nd == 1);
    OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED);
    OK(MPI_Type_size(MPI_LONG_DOUBLE_INT, &sz));
    CHECK(sz == (int)(sizeof(long double) + sizeof(int)));
    char tname[MPI_MAX_OBJECT_NAME];
    int tl;
    OK(MPI_Type_get_name(MPI_DOUBLE, tname, &tl));
    CHECK(strcmp(tname, "MPI_DOUBLE") == 0);
    OK(MPI_Type_contiguous(8, MPI_SHORT, &col));
    OK(MPI_Type_commit(&col));
    short src[20], dst[8];
    for (int i = 0; i < 20; i++)
        src[i] = (short)(i * 3 + 1);
    if (size >= 2 && mt_rank < 2) {
        MPI_Status st;
        if (mt_rank == 0) {
            OK(MPI_Send(src, 1, vec, 1, 9, MPI_COMM_WORLD));
        } else {
            OK(MPI_Recv(dst, 1, col, 0, 9, MPI_COMM_WORLD, &st));
            int k = 0;
            for (int b = 0; b < 4; b++)
                for (int j = 0; j < 2; j++, k++)
                    CHECK(dst[k] == src[b * 5 + j]);
            int n = -1;
            OK(MPI_Get_elements(&st, MPI_SHORT, &n));
            CHECK(n == 8);
        }
    }
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&col));
    CHECK(vec == MPI_DATATYPE_NULL && col == MPI_DATATYPE_NULL);
}

static int attr_deleted;
static int del_fn(MPI_Comm c, int k, void *v, void *x)
{
    (void)c, (void)k, (void)v, (void)x;
    attr_deleted++;
    return MPI_SUCCESS;
}

static void check_comm_and_errors(void)
{
    void *ub;
    int flag = 0;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *(int *)ub >= 32767);
    int key;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_fn, &key, NULL));
    static int val = 42;
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &val));
    MPI_Comm dup, split;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int *got = NULL;
    OK(MPI_Comm_get_attr(dup, key, &got, &flag));
    CHECK(flag && got == &val);
    int cmp;
    OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    OK(MPI_Comm_split(dup, mt_rank % 2, -mt_rank, &split));
    int srank, ssize;
    OK(MPI_Comm_rank(split, &srank));
    OK(MPI_Comm_size(split, &ssize));
    CHECK(ssize == (size - mt_rank % 2 + 1) / 2 && srank == ssize - 1 - mt_rank / 2);
    OK(MPI_Comm_free(&split));
    OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL && attr_deleted == 1);
    OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    OK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    /* Error classes with MPICH's numbers. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 0;
    FAILS(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    FAILS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    FAILS(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    FAILS(MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK(MPI_ERR_RANK == 6 && MPI_ERR_OP == 9 && MPI_ERR_TRUNCATE == 14);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* A graph with MPI_UNWEIGHTED (an address the library exports). */
    int right = (mt_rank + 1) % size, left = (mt_rank + size - 1) % size;
    MPI_Comm ring;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring));
    int indeg, outdeg, weighted = -1;
    OK(MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted == 0);
    int from = -1;
    OK(MPI_Neighbor_allgather(&mt_rank, 1, MPI_INT, &from, 1, MPI_INT, ring));
    CHECK(from == left);
    OK(MPI_Comm_free(&ring));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(sizeof(MPI_Status) == 5 * sizeof(int));
    check_tern_loaded();
    check_pingpong();
    check_collectives();
    check_datatypes();
    check_comm_and_errors();
    return mt_done("abi_mpich");
}
