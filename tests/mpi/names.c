/*
 * names.c - the MPI name service inside one job (mpi_name.c). Every rank publishes a
 * service of its own under a port it opened; every rank looks up every service and gets
 * exactly the port its owner published (checked against an all-gather of the names).
 * Errors: publishing a taken service is MPI_ERR_SERVICE, looking up an unknown one is
 * MPI_ERR_NAME, unpublishing under another port name or twice is MPI_ERR_SERVICE, and a
 * name longer than MPI_MAX_PORT_NAME - 1 is MPI_ERR_ARG. After unpublishing, the service
 * is gone for everyone. Then the names do their job: the odd ranks accept on a port
 * published as "names-test", the evens look it up and connect, and the intercommunicator
 * carries data both ways.
 */
#include <string.h>

#include "mpi_check.h"

#define FAILS_CLASS(expr, cls)                                                                     \
    do {                                                                                           \
        int rc_ = (expr), c_ = -1;                                                                 \
        MPI_Error_class(rc_, &c_);                                                                 \
        CHECKF(c_ == (cls), "%s: class %d, wanted %s (%d)", #expr, c_, #cls, cls);                 \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    char port[MPI_MAX_PORT_NAME], svc[64], found[MPI_MAX_PORT_NAME];
    OK(MPI_Open_port(MPI_INFO_NULL, port));
    snprintf(svc, sizeof svc, "names-rank-%d", mt_rank);
    OK(MPI_Publish_name(svc, MPI_INFO_NULL, port));
    FAILS_CLASS(MPI_Publish_name(svc, MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    char *all = malloc((size_t)size * MPI_MAX_PORT_NAME);
    CHECK(all != NULL);
    OK(MPI_Allgather(port, MPI_MAX_PORT_NAME, MPI_CHAR, all, MPI_MAX_PORT_NAME, MPI_CHAR,
                     MPI_COMM_WORLD)); /* also: every rank has published */
    for (int r = 0; r < size; r++) {
        snprintf(svc, sizeof svc, "names-rank-%d", r);
        memset(found, 'x', sizeof found);
        OK(MPI_Lookup_name(svc, MPI_INFO_NULL, found));
        CHECKF(strcmp(found, all + (size_t)r * MPI_MAX_PORT_NAME) == 0,
               "service %s: port '%s', rank %d published '%s'", svc, found, r,
               all + (size_t)r * MPI_MAX_PORT_NAME);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone has looked up every service */
    FAILS_CLASS(MPI_Lookup_name("names-nobody", MPI_INFO_NULL, found), MPI_ERR_NAME);
    char longname[MPI_MAX_PORT_NAME + 8];
    memset(longname, 's', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    FAILS_CLASS(MPI_Publish_name(longname, MPI_INFO_NULL, port), MPI_ERR_ARG);
    snprintf(svc, sizeof svc, "names-rank-%d", mt_rank);
    FAILS_CLASS(MPI_Unpublish_name(svc, MPI_INFO_NULL, "tern-port:other:0:1"), MPI_ERR_SERVICE);
    OK(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
    FAILS_CLASS(MPI_Unpublish_name(svc, MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* every service is gone now */
    for (int r = 0; r < size; r++) {
        snprintf(svc, sizeof svc, "names-rank-%d", r);
        FAILS_CLASS(MPI_Lookup_name(svc, MPI_INFO_NULL, found), MPI_ERR_NAME);
    }
    OK(MPI_Close_port(port));
    free(all);

    if (size >= 2) { /* odds accept on a published port, evens find it and connect */
        MPI_Comm half, inter;
        int odd = mt_rank % 2;
        OK(MPI_Comm_split(MPI_COMM_WORLD, odd, mt_rank, &half));
        if (odd) {
            if (mt_rank == 1) {
                OK(MPI_Open_port(MPI_INFO_NULL, port));
                OK(MPI_Publish_name("names-test", MPI_INFO_NULL, port));
            }
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
        } else {
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* published by now */
            if (mt_rank == 0) OK(MPI_Lookup_name("names-test", MPI_INFO_NULL, port));
            OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
        }
        int rs;
        OK(MPI_Comm_remote_size(inter, &rs));
        CHECKF(rs == (odd ? (size + 1) / 2 : size / 2), "remote size %d", rs);
        int mine = 1000 + mt_rank, theirs = -1, hr;
        OK(MPI_Comm_rank(half, &hr));
        if (hr < rs) { /* pair local rank i with remote rank i */
            OK(MPI_Sendrecv(&mine, 1, MPI_INT, hr, 5, &theirs, 1, MPI_INT, hr, 5, inter,
                            MPI_STATUS_IGNORE));
            int peer_world = odd ? 2 * hr : 2 * hr + 1;
            CHECKF(theirs == 1000 + peer_world, "got %d from remote rank %d", theirs, hr);
        }
        if (mt_rank == 1) {
            OK(MPI_Unpublish_name("names-test", MPI_INFO_NULL, port));
            OK(MPI_Close_port(port));
        }
        OK(MPI_Comm_free(&inter));
        OK(MPI_Comm_free(&half));
    }
    OK(MPI_Finalize());
    if (mt_rank == 0) printf("names: ok\n");
    return 0;
}
