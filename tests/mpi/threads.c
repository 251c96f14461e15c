/*
 * threads.c - an MPI_THREAD_MULTIPLE program: several threads per rank call MPI at once.
 *
 * Ranks are paired (0-1, 2-3, ...). Per rank, NP2P point-to-point threads and one
 * collective thread. Each thread dups its own communicator concurrently (from a parent
 * the main thread made), sets and reads an attribute on it, then:
 *  - p2p threads ping-pong sizes across the eager and rendezvous limits, checked byte for
 *    byte: MPI_Send/MPI_Recv with MPI_ANY_SOURCE/MPI_ANY_TAG on their own communicator
 *    (after MPI_Probe or an MPI_Iprobe loop every other time), MPI_Ssend and MPI_Bsend
 *    (one attached buffer shared by all threads) and MPI_Sendrecv on MPI_COMM_WORLD with a
 *    tag of their own, then Isend/Irecv exchanges whose requests the next thread
 *    completes with MPI_Waitall or MPI_Waitany/MPI_Testany, and last MPI_Ssend to their
 *    own rank received by a thread that waits asleep;
 *  - the collective thread runs Allreduce, Bcast, Allgather and Barrier on its communicator.
 * Portable MPI: it also runs on Open MPI (tests/mpi/openmpi.sh).
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "mpi_check.h"

#define NP2P   3
#define ITERS  5
#define NSIZES 8
static const int sizes[NSIZES] = {0, 1, 8, 100, 5000, 61000, 200000, 1 << 20};

static int me, np, partner, keyval;
static MPI_Comm parent[NP2P + 1], comms[NP2P + 1];

static struct handoff {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    MPI_Request req[2];
    int posted, waited;
} box[NP2P];

static unsigned char pat(int from, int t, int iter, int i)
{
    return (unsigned char)((from * 131 + t * 31 + iter * 7 + i * 13 + (i >> 8)) & 0xff);
}

static void fill(unsigned char *b, int n, int from, int t, int iter)
{
    for (int i = 0; i < n; i++)
        b[i] = pat(from, t, iter, i);
}

static void check(const unsigned char *b, int n, int from, int t, int iter, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECKF(b[i] == pat(from, t, iter, i), "thread %d %s of %d bytes iter %d: byte %d is %d", t,
               what, n, iter, i, b[i]);
}

static void recv_checked(unsigned char *rbuf, int n, int src, int tag, int want_tag, MPI_Comm comm,
                         int t, int iter, int probe, const char *what)
{
    MPI_Status st;
    int count;
    if (probe == 1) {
        OK(MPI_Probe(src, tag, comm, &st));
        OK(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECKF(count == n && st.MPI_TAG == want_tag, "thread %d probe: %d bytes tag %d", t, count,
               st.MPI_TAG);
    } else if (probe == 2) {
        int flag = 0;
        while (!flag)
            OK(MPI_Iprobe(src, tag, comm, &flag, &st));
        OK(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECKF(count == n, "thread %d iprobe: %d bytes", t, count);
    }
    memset(rbuf, 0xee, (size_t)n + 1);
    OK(MPI_Recv(rbuf, n, MPI_BYTE, src, tag, comm, &st));
    OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(st.MPI_SOURCE == partner && st.MPI_TAG == want_tag && count == n,
           "thread %d %s: source %d tag %d count %d", t, what, st.MPI_SOURCE, st.MPI_TAG, count);
    check(rbuf, n, partner, t, iter, what);
    CHECKF(rbuf[n] == 0xee, "thread %d %s: wrote past %d bytes", t, what, n);
}

static void *p2p_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    OK(MPI_Comm_dup(parent[t], &comms[t]));
    MPI_Comm c = comms[t];
    OK(MPI_Comm_set_attr(c, keyval, (void *)(intptr_t)(t + 1)));
    int max = sizes[NSIZES - 1];
    unsigned char *sbuf = malloc((size_t)max + 1), *rbuf = malloc((size_t)max + 1);
    CHECK(sbuf && rbuf);
    for (int iter = 0; iter < ITERS; iter++)
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k], tag = 5 + iter;
            fill(sbuf, n, me, t, iter);
            /* Own communicator, wildcards. */
            if (me & 1) {
                recv_checked(rbuf, n, MPI_ANY_SOURCE, MPI_ANY_TAG, tag, c, t, iter, iter % 3,
                             "wildcard recv");
                OK(MPI_Send(sbuf, n, MPI_BYTE, partner, tag, c));
            } else {
                OK(MPI_Send(sbuf, n, MPI_BYTE, partner, tag, c));
                recv_checked(rbuf, n, MPI_ANY_SOURCE, MPI_ANY_TAG, tag, c, t, iter, iter % 3,
                             "wildcard recv");
            }
            /* World, a tag per thread: synchronous one way, buffered the other. */
            int wtag = 100 + t;
            if (me & 1) {
                recv_checked(rbuf, n, partner, wtag, wtag, MPI_COMM_WORLD, t, iter, 0, "ssend");
                OK(MPI_Bsend(sbuf, n, MPI_BYTE, partner, wtag, MPI_COMM_WORLD));
            } else {
                OK(MPI_Ssend(sbuf, n, MPI_BYTE, partner, wtag, MPI_COMM_WORLD));
                recv_checked(rbuf, n, partner, wtag, wtag, MPI_COMM_WORLD, t, iter, 0, "bsend");
            }
            /* Both at once. */
            MPI_Status st;
            memset(rbuf, 0, (size_t)n);
            OK(MPI_Sendrecv(sbuf, n, MPI_BYTE, partner, 300 + t, rbuf, n, MPI_BYTE, partner,
                            300 + t, MPI_COMM_WORLD, &st));
            check(rbuf, n, partner, t, iter, "sendrecv");
        }

    /* Exchanges completed by the next thread. */
    struct handoff *mine = &box[t], *prev = &box[(t + NP2P - 1) % NP2P];
    for (int iter = 0; iter < 2 * ITERS; iter++) {
        int n = sizes[(iter * 3 + t) % NSIZES];
        fill(sbuf, n, me, t, 1000 + iter);
        memset(rbuf, 0, (size_t)n);
        pthread_mutex_lock(&mine->mu);
        OK(MPI_Irecv(rbuf, n, MPI_BYTE, partner, 200 + t, c, &mine->req[0]));
        OK(MPI_Isend(sbuf, n, MPI_BYTE, partner, 200 + t, c, &mine->req[1]));
        mine->posted = 1;
        pthread_cond_broadcast(&mine->cv);
        pthread_mutex_unlock(&mine->mu);

        pthread_mutex_lock(&prev->mu);
        while (!prev->posted)
            pthread_cond_wait(&prev->cv, &prev->mu);
        MPI_Request r[2] = {prev->req[0], prev->req[1]};
        pthread_mutex_unlock(&prev->mu);
        if (iter % 2) {
            OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        } else {
            /* One by Waitany, the other by polling Testany. */
            int idx, flag = 0;
            OK(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE));
            CHECK(idx == 0 || idx == 1);
            while (!flag)
                OK(MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE));
            CHECK(idx == 0 || idx == 1);
        }
        CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
        pthread_mutex_lock(&prev->mu);
        prev->posted = 0;
        prev->waited = 1;
        pthread_cond_broadcast(&prev->cv);
        pthread_mutex_unlock(&prev->mu);

        pthread_mutex_lock(&mine->mu);
        while (!mine->waited)
            pthread_cond_wait(&mine->cv, &mine->mu);
        mine->waited = 0;
        pthread_mutex_unlock(&mine->mu);
        check(rbuf, n, partner, t, 1000 + iter, "handed-over exchange");
    }
    /* A message to my own rank, waited for by another thread that went to sleep. */
    if (t == 0) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        for (int u = 1; u < NP2P; u++) {
            fill(sbuf, 1000, me, u, 2000);
            OK(MPI_Ssend(sbuf, 1000, MPI_BYTE, me, 400 + u, MPI_COMM_WORLD));
        }
    } else {
        OK(MPI_Recv(rbuf, 1000, MPI_BYTE, me, 400 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check(rbuf, 1000, me, t, 2000, "message to self");
    }
    void *val;
    int flag;
    OK(MPI_Comm_get_attr(c, keyval, &val, &flag));
    CHECKF(flag && (intptr_t)val == t + 1, "thread %d: attribute %d %ld", t, flag,
           (long)(intptr_t)val);
    free(sbuf);
    free(rbuf);
    return NULL;
}

static void *coll_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    OK(MPI_Comm_dup(parent[t], &comms[t]));
    MPI_Comm c = comms[t];
    int blen = 100000;
    unsigned char *b = malloc((size_t)blen);
    long *all = malloc((size_t)np * sizeof *all);
    CHECK(b && all);
    for (int iter = 0; iter < 4 * ITERS; iter++) {
        long x = me * 1000L + iter, sum = 0;
        OK(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, c));
        long want = 1000L * np * (np - 1) / 2 + (long)np * iter;
        CHECKF(sum == want, "allreduce iter %d: %ld, want %ld", iter, sum, want);
        int root = iter % np;
        if (me == root)
            fill(b, blen, root, t, iter);
        else
            memset(b, 0, (size_t)blen);
        OK(MPI_Bcast(b, blen, MPI_BYTE, root, c));
        check(b, blen, root, t, iter, "bcast");
        OK(MPI_Allgather(&x, 1, MPI_LONG, all, 1, MPI_LONG, c));
        for (int r = 0; r < np; r++)
            CHECKF(all[r] == r * 1000L + iter, "allgather iter %d: [%d] = %ld", iter, r, all[r]);
        OK(MPI_Barrier(c));
    }
    free(b);
    free(all);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    mt_rank = me;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECKF(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int q = -1;
    OK(MPI_Query_thread(&q));
    CHECK(q == MPI_THREAD_MULTIPLE);
    CHECKF(np % 2 == 0, "needs an even number of ranks, got %d", np);
    partner = me ^ 1;
    /* Every Bsend of every thread may be in flight at once. */
    int bsize = NP2P * ((1 << 20) + MPI_BSEND_OVERHEAD) * 4;
    void *bbuf = malloc((size_t)bsize);
    CHECK(bbuf);
    OK(MPI_Buffer_attach(bbuf, bsize));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
    for (int t = 0; t <= NP2P; t++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]));
    for (int t = 0; t < NP2P; t++) {
        CHECK(pthread_mutex_init(&box[t].mu, NULL) == 0);
        CHECK(pthread_cond_init(&box[t].cv, NULL) == 0);
    }
    pthread_t th[NP2P + 1];
    for (int t = 0; t < NP2P; t++)
        CHECK(pthread_create(&th[t], NULL, p2p_main, (void *)(intptr_t)t) == 0);
    CHECK(pthread_create(&th[NP2P], NULL, coll_main, (void *)(intptr_t)NP2P) == 0);
    for (int t = 0; t <= NP2P; t++)
        CHECK(pthread_join(th[t], NULL) == 0);
    for (int t = 0; t <= NP2P; t++) {
        OK(MPI_Comm_free(&comms[t]));
        OK(MPI_Comm_free(&parent[t]));
    }
    OK(MPI_Comm_free_keyval(&keyval));
    void *b;
    int bs;
    OK(MPI_Buffer_detach(&b, &bs));
    free(b);
    return mt_done("threads");
}
