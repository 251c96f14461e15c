/*
 * ports.c - MPI ports inside one job (mpi_port.c): the world splits into evens and odds;
 * world rank 0 opens a port and sends its name to world rank 1; the evens accept on it,
 * the odds connect to it; the intercommunicator has the right sizes and carries data both
 * ways (point-to-point and a rooted broadcast, byte for byte). Then the roles turn: an odd
 * rank opens, the odds accept and the evens connect. Errors: a malformed name and a port
 * of another job are MPI_ERR_PORT for connect (at every member of the group, not only its
 * root), accept on a port another process opened is MPI_ERR_PORT, closing a port twice
 * is MPI_ERR_PORT. (The name service has its own test, names.c.)
 */
#include <string.h>

#include "mpi_check.h"

static int size;

/* One accept/connect round: `acceptors` (0 evens, 1 odds) accept on a port their first
 * member (world rank `acceptors`) opens. */
static void join(MPI_Comm half, int color, int acceptors)
{
    char port[MPI_MAX_PORT_NAME] = "";
    int opener = acceptors, connector_root = 1 - acceptors;
    MPI_Comm inter;
    if (mt_rank == opener) {
        OK(MPI_Open_port(MPI_INFO_NULL, port));
        CHECKF(strncmp(port, "tern-port:", 10) == 0, "port name %s", port);
        OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, connector_root, 7, MPI_COMM_WORLD));
    } else if (mt_rank == connector_root) {
        OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, opener, 7, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    }
    int mine = 0, theirs = 0; /* the halves' sizes */
    for (int r = 0; r < size; r++) {
        if (r % 2 == color)
            mine++;
        else
            theirs++;
    }
    if (color == acceptors)
        OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
    else
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    int flag, ls, rs, lr;
    OK(MPI_Comm_test_inter(inter, &flag));
    OK(MPI_Comm_size(inter, &ls));
    OK(MPI_Comm_remote_size(inter, &rs));
    OK(MPI_Comm_rank(inter, &lr));
    CHECK(flag);
    CHECKF(ls == mine && rs == theirs && lr == mt_rank / 2, "sizes %d/%d rank %d", ls, rs, lr);

    /* Point-to-point both ways: local rank i sends to remote rank i % rs and receives from
     * every remote rank j with j % ls == i. */
    enum { N = 1000 };
    static unsigned char out[N], in[N];
    for (int k = 0; k < N; k++)
        out[k] = (unsigned char)(k * 13 + mt_rank);
    MPI_Request q;
    OK(MPI_Isend(out, N, MPI_BYTE, lr % rs, 3, inter, &q));
    for (int j = 0; j < rs; j++) {
        if (j % ls != lr) continue;
        MPI_Status st;
        OK(MPI_Recv(in, N, MPI_BYTE, j, 3, inter, &st));
        int from_world = 2 * j + (1 - color);
        for (int k = 0; k < N; k++)
            CHECKF(in[k] == (unsigned char)(k * 13 + from_world), "byte %d from %d", k, j);
    }
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));

    /* A broadcast from the acceptors' root to every connector. */
    int v[4] = {0, 0, 0, 0};
    if (color == acceptors) {
        if (lr == 0) v[0] = 11, v[1] = 22, v[2] = 33, v[3] = 44 + acceptors;
        OK(MPI_Bcast(v, 4, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    } else {
        OK(MPI_Bcast(v, 4, MPI_INT, 0, inter));
        CHECKF(v[0] == 11 && v[1] == 22 && v[2] == 33 && v[3] == 44 + acceptors, "bcast %d %d",
               v[0], v[3]);
    }
    OK(MPI_Comm_free(&inter));
    if (mt_rank == opener) {
        OK(MPI_Close_port(port));
        FAILS(MPI_Close_port(port), MPI_ERR_PORT); /* closed already */
    }
}

static void errors(MPI_Comm half, int color)
{
    MPI_Comm inter = MPI_COMM_NULL;
    /* Every member of the connecting group gets the root's verdict. */
    FAILS(
        MPI_Comm_connect(mt_rank / 2 == 0 ? "no such port" : NULL, MPI_INFO_NULL, 0, half, &inter),
        MPI_ERR_PORT);
    FAILS(MPI_Comm_connect("tern-port:another-job:0:1", MPI_INFO_NULL, 0, half, &inter),
          MPI_ERR_PORT);
    CHECK(inter == MPI_COMM_NULL);
    /* Accept only on a port of one's own: the other half's opener made this one. */
    char port[MPI_MAX_PORT_NAME];
    if (mt_rank == 1) {
        OK(MPI_Open_port(MPI_INFO_NULL, port));
        OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 8, MPI_COMM_WORLD));
    } else if (mt_rank == 0) {
        OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    if (color == 0) FAILS(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter), MPI_ERR_PORT);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 1) OK(MPI_Close_port(port));
    if (mt_rank == 0) FAILS(MPI_Close_port(port), MPI_ERR_PORT); /* not its port */
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECKF(size >= 2, "needs 2 ranks, has %d", size);
    int color = mt_rank % 2;
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, mt_rank, &half));
    OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    join(half, color, 0);
    join(half, color, 1);
    errors(half, color);
    OK(MPI_Comm_free(&half));
    return mt_done("ports");
}
