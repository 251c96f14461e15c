/*
 * stress.c - randomized all-to-all traffic with wildcard receives.
 *
 * Every rank draws a plan from a seed (MP_STRESS_SEED, default fixed so a failure can be
 * replayed) and its rank: MP_STRESS_COUNT messages in all (default 3000, shared among the
 * ranks), each with a random destination (itself included), a random tag (0..31, now
 * and then TERN_TAG_UB) and a random size from 0 B to 4 MiB, mostly small. A payload is a
 * function of (source, sequence number): from 8 bytes on it starts with the sender and
 * the sequence number, from 16 with a checksum of the rest too.
 *
 * Every rank first tells every other rank how many messages it will send it. Then each
 * runs one loop that keeps a window of isends and a window of ANY_SOURCE/ANY_TAG irecvs
 * going, completing them with tern_waitany, or with tern_testall when everything in
 * flight happens to be done. Because every rank can rebuild every other rank's plan, a
 * receiver checks each message completely, and because receives posted earlier match
 * earlier messages of a source, it checks that each source's messages came in the order
 * sent: nothing lost, duplicated, reordered or corrupted.
 *
 * Soak (MP_SOAK_SECONDS=S, or MP_SOAK_LONG=S from the caller's environment to run longer
 * than the test list says): rounds of the above until S seconds have passed, each with a
 * new seed and MP_STRESS_COUNT messages (default 2000 in a soak) on one of three
 * communicators in turn (comm, a duplicate, a split with the ranks reversed),
 * so every (source, communicator) stream is checked. Each round also runs a
 * non-blocking allreduce and bcast on that communicator while its traffic flows (checked
 * when done), and ends with an allreduce proving the job-wide message and byte counts
 * sent and received agree. After every round each rank counts its open file descriptors
 * and the bytes its heap holds (mallinfo2; not under AddressSanitizer, whose
 * LeakSanitizer checks leaks at exit instead): from the third round on, the descriptors
 * must stay exactly as they were and the heap must not grow by more than SOAK_HEAP_SLACK.
 * Rank 0 prints the volume: rounds, messages, bytes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <malloc.h>

#include "mp_check.h"

#if defined(__SANITIZE_ADDRESS__)
#define SOAK_HEAP_CHECK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_HEAP_CHECK 0
#endif
#endif
#ifndef SOAK_HEAP_CHECK
#define SOAK_HEAP_CHECK 1
#endif
/* Heap growth allowed after the warm-up rounds: request tables and caches settle at the
 * largest burst seen; a leak of a few bytes per message exceeds it within rounds. Over
 * tcp each connection also keeps a send and a receive buffer that grow once to the
 * largest frame (512 KiB): SOAK_TCP_SLACK more per tcp peer. */
#define SOAK_HEAP_SLACK ((size_t)256 << 10)
#define SOAK_TCP_SLACK  ((size_t)1280 << 10)

#define MAX_MSG   ((size_t)4 << 20)
#define SEND_WIN  8
#define RECV_WIN  8
#define TAG_COUNT 77

struct msg {
    int dest;
    int tag;
    size_t size;
};

static int me, np;
static uint64_t seed0;
static tern_comm_t comm; /* the round's communicator; me and np are ranks in it */

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    return mp_mix64(*s);
}

/* The whole plan of rank `src`: nmsg messages. */
static struct msg *make_plan(int src, int nmsg)
{
    struct msg *m = mp_malloc(sizeof *m * (size_t)(nmsg ? nmsg : 1));
    uint64_t s = mp_seed(seed0, (uint64_t)src, 0x57e5, 0);
    for (int j = 0; j < nmsg; j++) {
        m[j].dest = (int)(rng_next(&s) % (uint64_t)np);
        uint64_t t = rng_next(&s) % 64;
        m[j].tag = t == 63 ? TERN_TAG_UB : (int)(t % 32);
        uint64_t r = rng_next(&s) % 1000, x = rng_next(&s);
        if (r < 600)
            m[j].size = (size_t)(x % 257);
        else if (r < 900)
            m[j].size = (size_t)(x % 65537);
        else if (r < 985)
            m[j].size = (size_t)(x % (1 << 20));
        else
            m[j].size = (size_t)(x % (MAX_MSG + 1));
    }
    return m;
}

static uint64_t body_seed(int src, int seq)
{
    return mp_seed(seed0, (uint64_t)src, (uint64_t)seq, 0xb0d7);
}

static uint64_t checksum(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* Header: u32 src, u32 seq (from 8 bytes), u64 checksum of bytes 16.. (from 16 bytes). */
static size_t body_off(size_t size)
{
    return size >= 16 ? 16 : size >= 8 ? 8 : 0;
}

static void make_payload(uint8_t *p, int src, int seq, size_t size)
{
    size_t off = body_off(size);
    mp_fill(p + off, size - off, body_seed(src, seq));
    if (size >= 8) {
        uint32_t h[2] = {(uint32_t)src, (uint32_t)seq};
        memcpy(p, h, 8);
    }
    if (size >= 16) {
        uint64_t c = checksum(p + 16, size - 16);
        memcpy(p + 8, &c, 8);
    }
}

/* A completed receive, kept until the end for the per-source order check. */
struct got {
    int source, tag;
    size_t bytes;
    int seq; /* from the header, -1 for messages under 8 bytes */
    uint8_t tiny[8];
};

static struct msg **plan;
static int *nplan;

/* Check a completed receive (buffer p, status st) and record it as got[post]. */
static void handle_recv(const uint8_t *p, const tern_status_t *st, struct got *g)
{
    int src = st->source;
    CHECKF(src >= 0 && src < np, "status.source %d", src);
    CHECKF(st->bytes <= MAX_MSG, "status.bytes %zu", st->bytes);
    g->source = src;
    g->tag = st->tag;
    g->bytes = st->bytes;
    g->seq = -1;
    memset(g->tiny, 0, sizeof g->tiny);
    if (st->bytes < 8) {
        memcpy(g->tiny, p, st->bytes);
        return;
    }
    uint32_t h[2];
    memcpy(h, p, 8);
    CHECKF(h[0] == (uint32_t)src, "payload from rank %u reported as source %d", h[0], src);
    CHECKF(h[1] < (uint32_t)nplan[src], "sequence number %u, rank %d sends %d", h[1], src,
           nplan[src]);
    g->seq = (int)h[1];
    const struct msg *m = &plan[src][g->seq];
    CHECKF(m->dest == me && m->size == st->bytes && m->tag == st->tag,
           "message %d of rank %d: got %zu bytes tag %d, it sent %zu bytes tag %d to rank %d",
           g->seq, src, st->bytes, st->tag, m->size, m->tag, m->dest);
    if (st->bytes >= 16) {
        uint64_t c;
        memcpy(&c, p + 8, 8);
        CHECKF(c == checksum(p + 16, st->bytes - 16),
               "checksum of message %d of rank %d (%zu bytes) is wrong", g->seq, src, st->bytes);
    }
    size_t off = body_off(st->bytes);
    CHECK_PATTERN(p + off, st->bytes - off, body_seed(src, g->seq),
                  "message %d of rank %d, bytes %zu..", g->seq, src, off);
}

/*
 * Receives posted earlier match earlier messages of a source, so walking the receives in
 * posting order must give each source's messages to me exactly in its plan's order.
 */
static void check_order(const struct got *got, uint64_t n)
{
    int *next = calloc((size_t)np, sizeof(int));
    for (uint64_t i = 0; i < n; i++) {
        const struct got *g = &got[i];
        int src = g->source;
        while (next[src] < nplan[src] && plan[src][next[src]].dest != me)
            next[src]++;
        CHECKF(next[src] < nplan[src],
               "receive #%llu got a message from rank %d (%zu bytes, tag %d, seq %d) but all its "
               "messages to me were already received (duplicate?)",
               (unsigned long long)i, src, g->bytes, g->tag, g->seq);
        int seq = next[src]++;
        const struct msg *m = &plan[src][seq];
        if (g->seq >= 0)
            CHECKF(g->seq == seq,
                   "receive #%llu got message %d of rank %d where its message %d was due "
                   "(lost, duplicated or overtaken)",
                   (unsigned long long)i, g->seq, src, seq);
        CHECKF(g->bytes == m->size && g->tag == m->tag,
               "receive #%llu: message %d of rank %d should be %zu bytes tag %d, got %zu bytes "
               "tag %d",
               (unsigned long long)i, seq, src, m->size, m->tag, g->bytes, g->tag);
        if (g->seq < 0) {
            uint8_t want[8];
            make_payload(want, src, seq, m->size);
            for (size_t b = 0; b < g->bytes; b++)
                CHECKF(g->tiny[b] == want[b],
                       "message %d of rank %d (%zu bytes): byte %zu is 0x%02x, expected 0x%02x",
                       seq, src, g->bytes, b, g->tiny[b], want[b]);
        }
    }
    for (int src = 0; src < np; src++) {
        while (next[src] < nplan[src] && plan[src][next[src]].dest != me)
            next[src]++;
        CHECKF(next[src] == nplan[src], "message %d of rank %d to me never arrived", next[src],
               src);
    }
    free(next);
}

/* What one round moved, summed over the job at its end. */
struct volume {
    uint64_t sent_msgs, sent_bytes, recv_msgs, recv_bytes;
};

static void run_round(int total, int quiet, struct volume *vol)
{
    MP_WHERE("seed %llu, planning", (unsigned long long)seed0);
    double t0 = mp_now();
    CHECK_OK(tern_comm_rank(comm, &me));
    CHECK_OK(tern_comm_size(comm, &np));

    /* Everyone's plan, and from it what I must receive. */
    plan = mp_malloc(sizeof *plan * (size_t)np);
    nplan = mp_malloc(sizeof(int) * (size_t)np);
    for (int r = 0; r < np; r++) {
        nplan[r] = total / np + (r < total % np);
        plan[r] = make_plan(r, nplan[r]);
    }
    int nmine = nplan[me];
    uint64_t *count_to = calloc((size_t)np, sizeof(uint64_t));
    uint64_t *count_from = calloc((size_t)np, sizeof(uint64_t));
    for (int j = 0; j < nmine; j++)
        count_to[plan[me][j].dest]++;

    /* 1. Tell every rank how many messages it gets from me, and check what I am told
     * against the sender's plan (which proves the counts travelled intact). */
    MP_WHERE("seed %llu, exchanging counts", (unsigned long long)seed0);
    tern_request_t *cr = mp_malloc(sizeof *cr * 2 * (size_t)np);
    size_t ncr = 0;
    for (int r = 0; r < np; r++) {
        if (r == me) continue;
        CHECK_OK(tern_irecv(&count_from[r], sizeof(uint64_t), r, TAG_COUNT, comm, &cr[ncr++]));
        CHECK_OK(tern_isend(&count_to[r], sizeof(uint64_t), r, TAG_COUNT, comm, &cr[ncr++]));
    }
    CHECK_OK(tern_waitall(ncr, cr, NULL));
    /* Collectives on the same communicator, under way while the traffic flows. */
    int64_t ared_in[2] = {me + 1, (int64_t)seed0 & 0xffff}, ared_out[2] = {0, 0};
    uint64_t bc = me == np - 1 ? mp_mix64(seed0) : 0;
    tern_request_t creq[2];
    CHECK_OK(tern_iallreduce(ared_in, ared_out, 2, TERN_INT64, TERN_SUM, comm, &creq[0]));
    CHECK_OK(tern_ibcast(&bc, sizeof bc, np - 1, comm, &creq[1]));
    count_from[me] = count_to[me];
    uint64_t expect_total = 0;
    for (int r = 0; r < np; r++) {
        uint64_t n = 0;
        for (int j = 0; j < nplan[r]; j++)
            n += plan[r][j].dest == me;
        CHECKF(count_from[r] == n, "rank %d said it sends me %llu messages, its plan has %llu", r,
               (unsigned long long)count_from[r], (unsigned long long)n);
        expect_total += n;
    }

    /* 2. Traffic. Request slots 0..RECV_WIN-1 receive, the others send. */
    enum { NREQ = RECV_WIN + SEND_WIN };
    tern_request_t req[NREQ];
    uint8_t *rbuf[RECV_WIN], *sbuf[SEND_WIN];
    uint64_t rpost[RECV_WIN]; /* posting number of the receive in each slot */
    struct got *got = mp_malloc(sizeof *got * (size_t)(expect_total ? expect_total : 1));
    for (int i = 0; i < NREQ; i++)
        req[i] = TERN_REQUEST_NULL;
    for (int i = 0; i < RECV_WIN; i++)
        rbuf[i] = mp_malloc(MAX_MSG);
    for (int i = 0; i < SEND_WIN; i++)
        sbuf[i] = NULL;
    uint64_t posted = 0, received = 0;
    int next_send = 0, sends_open = 0, testalls = 0, waitanys = 0;
    uint64_t rng = mp_seed(seed0, (uint64_t)me, 0x1009, 0);
    size_t volume = 0;

    while (received < expect_total || next_send < nmine || sends_open > 0) {
        MP_WHERE("seed %llu: %llu/%llu received, %d/%d sends started, %d open",
                 (unsigned long long)seed0, (unsigned long long)received,
                 (unsigned long long)expect_total, next_send, nmine, sends_open);
        for (int i = 0; i < RECV_WIN && posted < expect_total; i++) {
            if (req[i] != TERN_REQUEST_NULL) continue;
            CHECK_OK(tern_irecv(rbuf[i], MAX_MSG, TERN_ANY_SOURCE, TERN_ANY_TAG, comm, &req[i]));
            rpost[i] = posted++;
        }
        for (int i = 0; i < SEND_WIN && next_send < nmine; i++) {
            tern_request_t *sr = &req[RECV_WIN + i];
            if (*sr != TERN_REQUEST_NULL) continue;
            const struct msg *m = &plan[me][next_send];
            free(sbuf[i]);
            sbuf[i] = mp_malloc(m->size);
            make_payload(sbuf[i], me, next_send, m->size);
            CHECK_OK(tern_isend(sbuf[i], m->size, m->dest, m->tag, comm, sr));
            volume += m->size;
            next_send++;
            sends_open++;
        }

        /* Now and then see whether everything in flight is done (tern_testall); in any
         * case complete at least one request with tern_waitany. */
        if (rng_next(&rng) % 4 == 0) {
            tern_status_t sts[NREQ];
            tern_request_t before[NREQ];
            int flag = 0;
            memcpy(before, req, sizeof req);
            CHECK_OK(tern_testall(NREQ, req, &flag, sts));
            if (!flag) {
                CHECKF(!memcmp(before, req, sizeof req),
                       "tern_testall reported flag 0 but changed the requests");
            } else {
                testalls++;
                for (int i = 0; i < NREQ; i++) {
                    CHECK(req[i] == TERN_REQUEST_NULL);
                    if (before[i] == TERN_REQUEST_NULL) continue;
                    CHECK_EQ_INT(sts[i].error, TERN_OK);
                    if (i >= RECV_WIN) {
                        sends_open--;
                    } else {
                        handle_recv(rbuf[i], &sts[i], &got[rpost[i]]);
                        received++;
                    }
                }
                continue;
            }
        }
        size_t idx = SIZE_MAX;
        tern_status_t st = mp_status_poison();
        CHECK_OK(tern_waitany(NREQ, req, &idx, &st));
        CHECKF(idx < NREQ, "waitany returned index %zu with requests in flight", idx);
        CHECK(req[idx] == TERN_REQUEST_NULL);
        waitanys++;
        if (idx >= RECV_WIN) {
            sends_open--;
        } else {
            handle_recv(rbuf[idx], &st, &got[rpost[idx]]);
            received++;
        }
    }
    MP_WHERE("seed %llu: order check", (unsigned long long)seed0);
    check_order(got, expect_total);
    MP_WHERE("seed %llu: collectives", (unsigned long long)seed0);
    CHECK_OK(tern_waitall(2, creq, NULL));
    CHECK_EQ_INT(ared_out[0], (int64_t)np * (np + 1) / 2);
    CHECK_EQ_INT(ared_out[1], (int64_t)np * (int64_t)(seed0 & 0xffff));
    CHECKF(bc == mp_mix64(seed0), "ibcast delivered %llx", (unsigned long long)bc);
    size_t rbytes = 0;
    for (uint64_t i = 0; i < expect_total; i++)
        rbytes += got[i].bytes;
    uint64_t mine[4] = {(uint64_t)nmine, volume, received, rbytes}, all[4];
    CHECK_OK(tern_allreduce(mine, all, 4, TERN_UINT64, TERN_SUM, comm));
    CHECKF(all[0] == all[2] && all[1] == all[3],
           "job-wide: %llu messages (%llu bytes) sent, %llu (%llu bytes) received",
           (unsigned long long)all[0], (unsigned long long)all[1], (unsigned long long)all[2],
           (unsigned long long)all[3]);
    vol->sent_msgs += all[0];
    vol->sent_bytes += all[1];
    vol->recv_msgs += all[2];
    vol->recv_bytes += all[3];

    /* Nothing else may arrive. */
    CHECK_OK(tern_barrier(comm));
    int flag = 1;
    tern_status_t st = mp_status_poison();
    CHECK_OK(tern_iprobe(TERN_ANY_SOURCE, TERN_ANY_TAG, comm, &flag, &st));
    CHECKF(!flag, "unexpected extra message from %d, tag %d, %zu bytes", st.source, st.tag,
           st.bytes);
    CHECK_OK(tern_barrier(comm));
    if (!quiet)
        printf(
            "stress: rank %d sent %d messages (%zu bytes), received %llu; %d waitany, %d testall; "
            "%.2f s\n",
            me, nmine, volume, (unsigned long long)received, waitanys, testalls, mp_now() - t0);

    for (int i = 0; i < RECV_WIN; i++)
        free(rbuf[i]);
    for (int i = 0; i < SEND_WIN; i++)
        free(sbuf[i]);
    for (int r = 0; r < np; r++)
        free(plan[r]);
    free(plan);
    free(nplan);
    free(got);
    free(cr);
    free(count_to);
    free(count_from);
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static size_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    seed0 = (uint64_t)mp_env_int("MP_STRESS_SEED", 20240601);
    double soak = mp_env_int("MP_SOAK_SECONDS", 0);
    if (getenv("MP_SOAK_LONG")) soak = mp_env_int("MP_SOAK_LONG", 0);
    int total = mp_env_int("MP_STRESS_COUNT", soak > 0 ? 2000 : 3000);
    comm = TERN_COMM_WORLD;
    if (soak <= 0) {
        struct volume v = {0};
        run_round(total, 0, &v);
        CHECK_OK(tern_finalize());
        return 0;
    }

    mp_watchdog((int)soak + 120);
    int wme = tern_rank(), wnp = tern_size();
    tern_comm_t comms[3] = {TERN_COMM_WORLD, TERN_COMM_NULL, TERN_COMM_NULL};
    CHECK_OK(tern_comm_dup(TERN_COMM_WORLD, &comms[1]));
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, 0, wnp - 1 - wme, &comms[2]));
    /* Does tcp carry some of my traffic? Only if allowed, and shm is not or some peer is
     * on another host. */
    const char *tl = getenv("TERN_TRANSPORTS") ? getenv("TERN_TRANSPORTS") : "self,shm,tcp";
    int lsize = mp_env_int("TERN_LOCAL_SIZE", wnp);
    int tcp_peers = strstr(tl, "tcp") == NULL   ? 0
                    : strstr(tl, "shm") == NULL ? wnp - 1
                                                : wnp - lsize;
    size_t slack =
        (size_t)mp_env_int("MP_SOAK_HEAP_SLACK_KIB", (int)(SOAK_HEAP_SLACK >> 10)) * 1024 +
        (size_t)tcp_peers * SOAK_TCP_SLACK;
    struct volume v = {0};
    int fd0 = -1;
    size_t heap0 = 0;
    int heap_steps = 0; /* rounds whose heap grew past the slack (each one re-bases heap0) */
    double start = mp_now();
    uint64_t base_seed = seed0;
    int round = 0;
    for (;; round++) {
        seed0 = base_seed + (uint64_t)round * 1000003u;
        comm = comms[round % 3];
        run_round(total, 1, &v);
        comm = TERN_COMM_WORLD;
        int fds = count_fds();
        size_t heap = heap_bytes();
        if (wme == 0)
            printf("soak: round %d (%s) done at %.1f s: %llu messages, %llu bytes so far; "
                   "rank 0 has %d fds, heap %zu bytes, RSS %ld KiB\n",
                   round,
                   round % 3 == 0   ? "world"
                   : round % 3 == 1 ? "dup"
                                    : "split reversed",
                   mp_now() - start, (unsigned long long)v.sent_msgs,
                   (unsigned long long)v.sent_bytes, fds, heap, rss_kib());
        MP_WHERE("soak round %d: resources", round);
        if (round == 2) {
            fd0 = fds;
            heap0 = heap;
        } else if (round > 2 && getenv("MP_SOAK_TRACE")) {
            printf("soak: rank %d round %d: heap %zu (%+ld since round 2), fds %d\n", wme, round,
                   heap, (long)heap - (long)heap0, fds);
        }
        if (round > 2) {
            CHECKF(fds == fd0, "round %d: %d file descriptors open, %d after round 2", round, fds,
                   fd0);
            /* A leak grows the heap round after round. A provider's buffer pool may grow
             * once when a descheduled rank lets operations pile up (libfabric's rxm over
             * tcp, loaded: +17 MB in one round, flat after), so up to two steps past the
             * slack are taken as new bases; a third is a leak. */
            if (SOAK_HEAP_CHECK && heap > heap0 + slack) {
                heap_steps++;
                CHECKF(heap_steps <= 2,
                       "round %d: the heap holds %zu bytes, %zu at the last base, more than "
                       "%zu bytes of growth for the third time (leak?)",
                       round, heap, heap0, slack);
                heap0 = heap;
            }
        }
        /* Rank 0's clock decides, so every rank runs the same number of rounds. */
        int more = mp_now() - start < soak || round < 4;
        CHECK_OK(tern_bcast(&more, sizeof more, 0, TERN_COMM_WORLD));
        if (!more) break;
    }
    if (wme == 0) {
        printf("soak: %d rounds in %.1f s on %d ranks: %llu messages, %llu bytes, all checked; "
               "0 lost, duplicated, reordered or corrupted; fds flat; heap %s\n",
               round + 1, mp_now() - start, wnp, (unsigned long long)v.sent_msgs,
               (unsigned long long)v.sent_bytes,
               SOAK_HEAP_CHECK ? "flat" : "not checked (AddressSanitizer: LeakSanitizer at exit)");
        if (!SOAK_HEAP_CHECK) printf("soak: heap check skipped under AddressSanitizer\n");
    }
    CHECK_OK(tern_comm_free(&comms[1]));
    CHECK_OK(tern_comm_free(&comms[2]));
    CHECK_OK(tern_finalize());
    return 0;
}
