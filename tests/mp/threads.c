/*
 * threads.c - TERN_THREAD_MULTIPLE: several threads per rank use tern at once.
 *
 * Ranks are paired (0-1, 2-3, ...). On each rank, after tern_init_thread(MULTIPLE):
 *  - NP2P point-to-point threads. Thread t first dups its own communicator from a
 *    parent the main thread made (so NP2P context-id agreements run concurrently), then
 *    ping-pongs every size of a list that crosses the eager/rendezvous limits, checked
 *    byte for byte: on its own communicator with ANY_SOURCE/ANY_TAG receives (half the
 *    time after a blocking probe or an iprobe loop), and on TERN_COMM_WORLD with a tag of
 *    its own. Then it posts an exchange and hands the two requests to the next thread,
 *    which waits on them (concurrent waits on requests other threads made), while it
 *    waits on the ones the previous thread handed over. Last, thread 0 sends messages to
 *    its own rank that the other threads wait for, asleep (no doorbell rings for those).
 *  - one collective thread: allreduce, bcast, allgather and barrier on its own dup'd
 *    communicator, checked, while the others do point-to-point;
 *  - one conversation thread: a checked stream of messages from the even to the odd
 *    rank of each pair through a named conversation.
 * Every rank prints nothing unless a check fails (then the job ends non-zero).
 */
#include <pthread.h>

#include "mp_check.h"

#define NP2P   3
#define ITERS  6
#define NSIZES 9
static const size_t sizes[NSIZES] = {0, 1, 8, 57, 4000, 61000, 70000, 300000, 1u << 20};

static int me, np, partner;
static tern_comm_t parent[NP2P + 1], comms[NP2P + 1];

/* Hand-over of an exchange's requests from thread t to thread t+1 (mod NP2P). */
static struct handoff {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tern_request_t req[2];
    int posted, waited;
    int err;
} box[NP2P];

static uint64_t seed_of(int from, int t, int iter, size_t size)
{
    return mp_seed((uint64_t)from, (uint64_t)t, (uint64_t)iter, size);
}

/* One checked exchange of `size` bytes with the partner: the lower rank sends first. */
static void pingpong(int t, tern_comm_t comm, int tag, int wild, int iter, size_t size,
                     unsigned char *sbuf, unsigned char *rbuf)
{
    int peer = partner; /* every communicator here is a dup of the world */
    mp_fill(sbuf, size, seed_of(me, t, iter, size));
    for (int turn = 0; turn < 2; turn++) {
        if ((me & 1) == turn) {
            CHECK_OK(tern_send(sbuf, size, peer, tag, comm));
            continue;
        }
        tern_status_t st;
        int src = wild ? TERN_ANY_SOURCE : peer, rtag = wild ? TERN_ANY_TAG : tag;
        if (iter % 3 == 1) {
            CHECK_OK(tern_probe(src, rtag, comm, &st));
            CHECKF(st.bytes == size && st.tag == tag, "thread %d probe: %zu bytes tag %d", t,
                   st.bytes, st.tag);
        } else if (iter % 3 == 2) {
            int flag = 0;
            while (!flag)
                CHECK_OK(tern_iprobe(src, rtag, comm, &flag, &st));
            CHECKF(st.bytes == size, "thread %d iprobe: %zu bytes", t, st.bytes);
        }
        memset(rbuf, 0xee, size + 1);
        CHECK_OK(tern_recv(rbuf, size, src, rtag, comm, &st));
        CHECKF(st.source == peer && st.tag == tag && st.bytes == size,
               "thread %d: source %d tag %d bytes %zu, want %d %d %zu", t, st.source, st.tag,
               st.bytes, peer, tag, size);
        size_t bad = mp_pattern_mismatch(rbuf, size, seed_of(partner, t, iter, size));
        CHECKF(bad == size, "thread %d size %zu iter %d: byte %zu differs", t, size, iter, bad);
        CHECKF(rbuf[size] == 0xee, "thread %d size %zu: wrote past the buffer", t, size);
    }
}

static void *p2p_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    CHECK_OK(tern_comm_dup(parent[t], &comms[t]));
    size_t max = sizes[NSIZES - 1];
    unsigned char *sbuf = mp_malloc(max + 1), *rbuf = mp_malloc(max + 1);
    for (int iter = 0; iter < ITERS; iter++)
        for (int k = 0; k < NSIZES; k++) {
            pingpong(t, comms[t], 7 + iter, 1, iter, sizes[k], sbuf, rbuf);
            pingpong(t, TERN_COMM_WORLD, 100 + t, 0, iter + ITERS, sizes[k], sbuf, rbuf);
        }

    /* Exchanges whose requests another thread completes. */
    struct handoff *mine = &box[t], *prev = &box[(t + NP2P - 1) % NP2P];
    for (int iter = 0; iter < ITERS; iter++) {
        size_t size = sizes[(iter * 5 + t) % NSIZES];
        mp_fill(sbuf, size, seed_of(me, t, 1000 + iter, size));
        memset(rbuf, 0xee, size);
        pthread_mutex_lock(&mine->mu);
        CHECK_OK(tern_irecv(rbuf, size, partner, 200 + t, TERN_COMM_WORLD, &mine->req[0]));
        CHECK_OK(tern_isend(sbuf, size, partner, 200 + t, TERN_COMM_WORLD, &mine->req[1]));
        mine->posted = 1;
        pthread_cond_broadcast(&mine->cv);
        pthread_mutex_unlock(&mine->mu);

        /* Complete the previous thread's exchange. */
        pthread_mutex_lock(&prev->mu);
        while (!prev->posted)
            pthread_cond_wait(&prev->cv, &prev->mu);
        tern_request_t r[2] = {prev->req[0], prev->req[1]};
        pthread_mutex_unlock(&prev->mu);
        tern_status_t st[2];
        int err = iter % 2 ? tern_waitall(2, r, st) : tern_wait(&r[1], NULL);
        if (iter % 2 == 0 && err == 0) err = tern_wait(&r[0], &st[0]);
        pthread_mutex_lock(&prev->mu);
        prev->err = err;
        prev->posted = 0;
        prev->waited = 1;
        pthread_cond_broadcast(&prev->cv);
        pthread_mutex_unlock(&prev->mu);

        /* Mine, completed by the next thread. */
        pthread_mutex_lock(&mine->mu);
        while (!mine->waited)
            pthread_cond_wait(&mine->cv, &mine->mu);
        mine->waited = 0;
        CHECKF(mine->err == 0, "thread %d: waiting on my exchange gave %s", t,
               tern_err_name(mine->err));
        pthread_mutex_unlock(&mine->mu);
        size_t bad = mp_pattern_mismatch(rbuf, size, seed_of(partner, t, 1000 + iter, size));
        CHECKF(bad == size, "thread %d handed-over exchange of %zu: byte %zu differs", t, size,
               bad);
    }
    /* A message to myself rings no doorbell: thread 0 sends one to each other thread,
     * synchronously, 100 ms after they started waiting for it (asleep by then). */
    if (t == 0) {
        mp_sleep_ms(100);
        for (int u = 1; u < NP2P; u++) {
            mp_fill(sbuf, 1000, seed_of(me, u, 2000, 1000));
            CHECK_OK(tern_send(sbuf, 1000, me, 400 + u, TERN_COMM_WORLD));
        }
    } else {
        tern_status_t st;
        CHECK_OK(tern_recv(rbuf, 1000, me, 400 + t, TERN_COMM_WORLD, &st));
        size_t bad = mp_pattern_mismatch(rbuf, 1000, seed_of(me, t, 2000, 1000));
        CHECKF(bad == 1000 && st.bytes == 1000, "thread %d: message to self: byte %zu", t, bad);
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

/* Conversations: the even rank of each pair sends a stream into "threads-pair-<k>", the
 * odd one receives it (FCFS), in order and intact, while the other threads work. */
#define NCONV 40
static void *conv_main(void *arg)
{
    (void)arg;
    char name[64];
    snprintf(name, sizeof name, "threads-pair-%d", me / 2);
    size_t max = 120000;
    unsigned char *b = mp_malloc(max);
    tern_conv_t cv;
    if (me % 2 == 0) {
        CHECK_OK(tern_conv_open_send(name, &cv));
        for (int i = 0; i < NCONV; i++) {
            size_t n = (size_t)i * 2999 % max;
            mp_fill(b, n, seed_of(me, 77, i, n));
            CHECK_OK(tern_conv_send(cv, b, n));
        }
        CHECK_OK(tern_conv_linger(cv, 1)); /* the receiver may not have joined yet */
    } else {
        CHECK_OK(tern_conv_open_recv(name, TERN_FCFS, &cv));
        for (int i = 0; i < NCONV; i++) {
            size_t n = (size_t)i * 2999 % max, got = 0;
            CHECK_OK(tern_conv_recv(cv, b, max, &got));
            CHECKF(got == n, "conversation message %d: %zu bytes, want %zu", i, got, n);
            size_t bad = mp_pattern_mismatch(b, n, seed_of(partner, 77, i, n));
            CHECKF(bad == n, "conversation message %d: byte %zu differs", i, bad);
        }
    }
    CHECK_OK(tern_conv_close(&cv));
    free(b);
    return NULL;
}

static void *coll_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    CHECK_OK(tern_comm_dup(parent[t], &comms[t]));
    tern_comm_t c = comms[t];
    size_t blen = 100000;
    unsigned char *b = mp_malloc(blen);
    int64_t *all = mp_malloc((size_t)np * sizeof *all);
    for (int iter = 0; iter < 4 * ITERS; iter++) {
        int64_t x = me * 1000 + iter, sum = 0;
        CHECK_OK(tern_allreduce(&x, &sum, 1, TERN_INT64, TERN_SUM, c));
        int64_t want = 1000LL * np * (np - 1) / 2 + (int64_t)np * iter;
        CHECKF(sum == want, "allreduce iter %d: %lld, want %lld", iter, (long long)sum,
               (long long)want);
        int root = iter % np;
        uint64_t seed = seed_of(root, t, iter, blen);
        if (me == root)
            mp_fill(b, blen, seed);
        else
            memset(b, 0, blen);
        CHECK_OK(tern_bcast(b, blen, root, c));
        size_t bad = mp_pattern_mismatch(b, blen, seed);
        CHECKF(bad == blen, "bcast iter %d: byte %zu differs", iter, bad);
        CHECK_OK(tern_allgather(&x, all, sizeof x, c));
        for (int r = 0; r < np; r++)
            CHECKF(all[r] == r * 1000 + iter, "allgather iter %d: [%d] = %lld", iter, r,
                   (long long)all[r]);
        CHECK_OK(tern_barrier(c));
    }
    free(b);
    free(all);
    return NULL;
}

int main(int argc, char **argv)
{
    mp_watchdog(200);
    int provided = -1;
    CHECK_OK(tern_init_thread(&argc, &argv, TERN_THREAD_MULTIPLE, &provided));
    CHECK_EQ_INT(provided, TERN_THREAD_MULTIPLE);
    mp_rank = me = tern_rank();
    np = tern_size();
    CHECKF(np % 2 == 0, "needs an even number of ranks, got %d", np);
    partner = me ^ 1;
    for (int t = 0; t <= NP2P; t++)
        CHECK_OK(tern_comm_dup(TERN_COMM_WORLD, &parent[t]));
    for (int t = 0; t < NP2P; t++) {
        CHECK_OK(pthread_mutex_init(&box[t].mu, NULL));
        CHECK_OK(pthread_cond_init(&box[t].cv, NULL));
    }
    pthread_t th[NP2P + 2];
    for (int t = 0; t < NP2P; t++)
        CHECK_OK(pthread_create(&th[t], NULL, p2p_main, (void *)(intptr_t)t));
    CHECK_OK(pthread_create(&th[NP2P], NULL, coll_main, (void *)(intptr_t)NP2P));
    CHECK_OK(pthread_create(&th[NP2P + 1], NULL, conv_main, NULL));
    for (int t = 0; t <= NP2P + 1; t++)
        CHECK_OK(pthread_join(th[t], NULL));
    /* Every dup'd communicator got a context of its own: a message on one is never
     * received on another (the ping-pongs above would have mixed them up). */
    for (int t = 0; t <= NP2P; t++) {
        CHECK_OK(tern_comm_free(&comms[t]));
        CHECK_OK(tern_comm_free(&parent[t]));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_finalize());
    printf("threads: rank %d ok\n", me);
    return 0;
}
