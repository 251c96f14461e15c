/*
 * threads_names.c - MPI_THREAD_MULTIPLE calls that wait for an answer from another
 * process, several threads at once: the name service (publish / lookup / unpublish, asked
 * of world rank 0) and MPI_Cancel of a send (asked of the receiver). Each waiting call
 * must get its own answer: a lookup returns exactly the port its thread published, an
 * unpublished name is MPI_ERR_NAME to its thread, and every cancel of a message nobody
 * receives says cancelled. NTHR threads per rank, NITER rounds each.
 */
#include <pthread.h>
#include <string.h>

#include "mpi_check.h"

#define NTHR  4
#define NITER 25

static int size;

static void *worker(void *arg)
{
    int t = (int)(long)arg, peer = (mt_rank + 1) % size;
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME], svc[64];
    OK(MPI_Open_port(MPI_INFO_NULL, port));
    for (int it = 0; it < NITER; it++) {
        snprintf(svc, sizeof svc, "tn-%d-%d-%d", mt_rank, t, it);
        OK(MPI_Publish_name(svc, MPI_INFO_NULL, port));
        memset(found, 0, sizeof found);
        OK(MPI_Lookup_name(svc, MPI_INFO_NULL, found));
        CHECKF(strcmp(found, port) == 0, "thread %d round %d: lookup gave '%s', published '%s'", t,
               it, found, port);
        OK(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
        FAILS(MPI_Lookup_name(svc, MPI_INFO_NULL, found), MPI_ERR_NAME);

        /* A message no one receives (its tag is never posted): the cancel must win. */
        int data[4] = {mt_rank, t, it, 7};
        MPI_Request rq;
        MPI_Status st;
        int cancelled = 0;
        OK(MPI_Isend(data, 4, MPI_INT, peer, 5000 + t * NITER + it, MPI_COMM_WORLD, &rq));
        OK(MPI_Cancel(&rq));
        OK(MPI_Wait(&rq, &st));
        OK(MPI_Test_cancelled(&st, &cancelled));
        CHECKF(cancelled, "thread %d round %d: the send to %d was not cancelled", t, it, peer);
    }
    OK(MPI_Close_port(port));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECKF(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pthread_t th[NTHR];
    for (long t = 0; t < NTHR; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0);
    for (int t = 0; t < NTHR; t++)
        CHECK(pthread_join(th[t], NULL) == 0);
    /* Nothing cancelled may arrive later: a probe for any of those tags finds nothing. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int flag = 1;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECKF(!flag, "a cancelled message was delivered");
    return mt_done("threads_names");
}
