/*
 * join.c - MPI_Comm_join between two processes of one job (mpi_port.c). Rank 0 listens on
 * loopback and sends its port to every other rank; each connects, and the two ends of
 * every socket join: an intercommunicator of one process on each side, which carries a
 * checked value both ways. Two joins between the same pair one after the other each get
 * their own intercommunicator. A socket whose other end is not a process of this job
 * (bytes written by the test) is MPI_ERR_PORT, and the data written is not taken for a
 * join.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpi_check.h"

static void check_inter(MPI_Comm inter, int peer_world)
{
    int flag, ls, rs, mine = 5000 + mt_rank, theirs = -1;
    OK(MPI_Comm_test_inter(inter, &flag));
    OK(MPI_Comm_size(inter, &ls));
    OK(MPI_Comm_remote_size(inter, &rs));
    CHECKF(flag && ls == 1 && rs == 1, "inter %d sizes %d/%d", flag, ls, rs);
    OK(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 3, &theirs, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE));
    CHECKF(theirs == 5000 + peer_world, "got %d, wanted %d", theirs, 5000 + peer_world);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Not a tern process at the other end: a record of garbage. */
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    char junk[128];
    memset(junk, 'j', sizeof junk);
    CHECK(write(sv[1], junk, sizeof junk) == (ssize_t)sizeof junk);
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Comm_join(sv[0], &inter), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECKF(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL, "join with junk: class %d", cls);
    close(sv[0]);
    close(sv[1]);

    if (size >= 2) {
        int port = 0, lfd = -1;
        if (mt_rank == 0) {
            struct sockaddr_in a = {.sin_family = AF_INET};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            socklen_t al = sizeof a;
            lfd = socket(AF_INET, SOCK_STREAM, 0);
            CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0);
            CHECK(listen(lfd, 16) == 0 && getsockname(lfd, (struct sockaddr *)&a, &al) == 0);
            port = ntohs(a.sin_port);
        }
        OK(MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD));
        for (int r = 1; r < size; r++) { /* rank 0 joins with each in turn, twice */
            for (int round = 0; round < 2; round++) {
                if (mt_rank != 0 && mt_rank != r) continue;
                int fd;
                int go = round;
                if (mt_rank == 0) { /* one connection at a time: this one is r's */
                    OK(MPI_Send(&go, 1, MPI_INT, r, 9, MPI_COMM_WORLD));
                    fd = accept(lfd, NULL, NULL);
                } else {
                    OK(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
                    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                    fd = socket(AF_INET, SOCK_STREAM, 0);
                    CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
                }
                CHECK(fd >= 0);
                OK(MPI_Comm_join(fd, &inter));
                check_inter(inter, mt_rank == 0 ? r : 0);
                OK(MPI_Comm_free(&inter));
                close(fd);
            }
        }
        if (lfd >= 0) close(lfd);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Finalize());
    if (mt_rank == 0) printf("join: ok\n");
    return 0;
}
