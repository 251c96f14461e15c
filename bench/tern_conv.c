/*
 * tern_conv.c - the classic conversation benchmarks (tern.h, "Conversations"), message
 * sizes 16 B ... 64 KiB, reported as MB/s (1e6 bytes per second) of payload:
 *
 *   loopback   one process sends through one conversation to itself: a window of
 *              messages in, then the same number out (rank 0 alone, whatever -n is)
 *   fcfs       rank 0 sends, ranks 1..N-1 are FCFS receivers and take what they can;
 *              MB/s of the sender's stream (every message reaches one receiver)
 *   broadcast  rank 0 sends, ranks 1..N-1 are broadcast receivers; MB/s of the
 *              sender's stream (each receiver gets all of it: multiply by N-1 for
 *              the bytes delivered)
 *   random     every rank owns a conversation and sends to the conversations of
 *              random others (fully connected), each rank 1/N of the messages;
 *              MB/s of all payload moved, summed
 *   p2p        the same one-to-many stream as fcfs but with tern_send to the
 *              receivers in turn: the ceiling the conversation layer is measured against
 *
 * Each size runs `trials` trials (default 3) of a message count chosen so that a trial
 * moves about 4 MiB (at least 200, at most 5000 messages); a trial is timed from a
 * barrier to the barrier after the last receive, and a row reports the best and median
 * trial. Usage: ternrun -n N tern_conv [-t trials] [-m maxsize] [--csv] [pattern ...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tern.h"

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "tern_conv: " __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                                       \
        tern_abort(1);                                                                             \
    } while (0)
#define TRY(call)                                                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_) DIE("%s: %s", #call, tern_strerror(rc_));                                         \
    } while (0)

#define STOP_LEN 1 /* a 1-byte message ends a receiver's loop; data messages are >= 16 B */

static int rank, size, csv;
static unsigned char *sbuf, *rbuf;
static size_t maxlen = 64 * 1024;

static int msg_count(size_t len)
{
    size_t n = (4u << 20) / len;
    if (n < 200) n = 200;
    if (n > 5000) n = 5000;
    return (int)n;
}

/* Deterministic per (trial, rank, i) destination for the random pattern. */
static int rand_dest(uint64_t seed, int from, int i)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)from * 0xbf58476d1ce4e5b9ULL +
                 (uint64_t)i * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    x *= 0xd6e8feb86659fd35ULL;
    x ^= x >> 29;
    int d = (int)(x % (uint64_t)(size - 1));
    return d >= from ? d + 1 : d;
}

static void recv_until_stop(tern_conv_t c)
{
    for (;;) {
        size_t got = 0;
        TRY(tern_conv_recv(c, rbuf, maxlen, &got));
        if (got == STOP_LEN) return;
    }
}

/* One trial of `pattern` at `len`: seconds, and payload bytes it moved in *bytes. */
static double trial(const char *pattern, size_t len, int n, int t, double *bytes)
{
    char name[64];
    tern_conv_t s = TERN_CONV_NULL, r = TERN_CONV_NULL;
    double t0 = 0, t1 = 0;
    *bytes = (double)len * n;

    if (strcmp(pattern, "loopback") == 0) {
        if (rank == 0) {
            snprintf(name, sizeof name, "bench.loop.%d", t);
            TRY(tern_conv_open_send(name, &s));
            TRY(tern_conv_open_recv(name, TERN_FCFS, &r));
            /* A window that stays well within the default queue bound (4 MiB). */
            int win = (int)((1u << 20) / (len + 64));
            if (win > 64) win = 64;
            t0 = bench_now();
            for (int i = 0; i < n; i += win) {
                int k = n - i < win ? n - i : win;
                for (int j = 0; j < k; j++)
                    TRY(tern_conv_send(s, sbuf, len));
                for (int j = 0; j < k; j++)
                    TRY(tern_conv_recv(r, rbuf, maxlen, NULL));
            }
            t1 = bench_now();
            TRY(tern_conv_close(&s));
            TRY(tern_conv_close(&r));
        }
        TRY(tern_barrier(TERN_COMM_WORLD));
        return t1 - t0;
    }

    if (strcmp(pattern, "p2p") == 0) {
        TRY(tern_barrier(TERN_COMM_WORLD));
        t0 = bench_now();
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                TRY(tern_send(sbuf, len, 1 + i % (size - 1), 1, TERN_COMM_WORLD));
            for (int d = 1; d < size; d++)
                TRY(tern_send(sbuf, STOP_LEN, d, 1, TERN_COMM_WORLD));
        } else {
            for (;;) {
                tern_status_t st;
                TRY(tern_recv(rbuf, maxlen, 0, 1, TERN_COMM_WORLD, &st));
                if (st.bytes == STOP_LEN) break;
            }
        }
        TRY(tern_barrier(TERN_COMM_WORLD));
        return bench_now() - t0;
    }

    if (strcmp(pattern, "fcfs") == 0 || strcmp(pattern, "broadcast") == 0) {
        int bc = pattern[0] == 'b';
        snprintf(name, sizeof name, "bench.%s.%d.%zu", pattern, t, len);
        if (rank == 0)
            TRY(tern_conv_open_send(name, &s));
        else
            TRY(tern_conv_open_recv(name, bc ? TERN_BROADCAST : TERN_FCFS, &r));
        TRY(tern_barrier(TERN_COMM_WORLD)); /* every receiver has joined */
        t0 = bench_now();
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                TRY(tern_conv_send(s, sbuf, len));
            /* FCFS: one stop per receiver (each takes exactly one, after the data, since
             * FCFS receivers see the queue in order); broadcast: one stop for all. */
            for (int d = bc ? size - 1 : 1; d < size; d++)
                TRY(tern_conv_send(s, sbuf, STOP_LEN));
        } else {
            recv_until_stop(r);
        }
        TRY(tern_barrier(TERN_COMM_WORLD));
        t1 = bench_now();
        TRY(tern_conv_close(rank == 0 ? &s : &r));
        TRY(tern_barrier(TERN_COMM_WORLD));
        return t1 - t0;
    }

    if (strcmp(pattern, "random") == 0) {
        tern_conv_t *out = malloc((size_t)size * sizeof *out);
        if (!out) DIE("out of memory");
        for (int d = 0; d < size; d++) {
            out[d] = TERN_CONV_NULL;
            snprintf(name, sizeof name, "bench.rand.%d.%zu.%d", t, len, d);
            if (d == rank)
                TRY(tern_conv_open_recv(name, TERN_FCFS, &r));
            else
                TRY(tern_conv_open_send(name, &out[d]));
        }
        /* n messages in all, n / size from each rank (at least 50). */
        n = n / size < 50 ? 50 : n / size;
        /* How many messages come to me: the schedule is known to everyone. */
        int expect = 0;
        for (int f = 0; f < size; f++)
            if (f != rank)
                for (int i = 0; i < n; i++)
                    expect += rand_dest((uint64_t)t + 1, f, i) == rank;
        *bytes = (double)len * n * size;
        TRY(tern_barrier(TERN_COMM_WORLD));
        t0 = bench_now();
        /* Interleave sending and receiving so that no rank only sends while the
         * conversations it is home to fill up. */
        int got = 0;
        tern_request_t rq;
        int posted = 0;
        for (int i = 0; i < n || got < expect;) {
            if (!posted && got < expect) {
                TRY(tern_conv_irecv(r, rbuf, maxlen, &rq));
                posted = 1;
            }
            if (posted && i == n) { /* all sent: wait (blocking calls yield the core) */
                TRY(tern_wait(&rq, NULL));
                posted = 0;
                got++;
                continue;
            }
            if (posted) {
                int flag = 0;
                TRY(tern_test(&rq, &flag, NULL));
                if (flag) {
                    posted = 0;
                    got++;
                    continue;
                }
            }
            if (i < n) {
                TRY(tern_conv_send(out[rand_dest((uint64_t)t + 1, rank, i)], sbuf, len));
                i++;
            }
        }
        TRY(tern_barrier(TERN_COMM_WORLD));
        t1 = bench_now();
        for (int d = 0; d < size; d++)
            if (d != rank) TRY(tern_conv_close(&out[d]));
        TRY(tern_conv_close(&r));
        free(out);
        TRY(tern_barrier(TERN_COMM_WORLD));
        return t1 - t0;
    }
    DIE("unknown pattern '%s' (loopback, fcfs, broadcast, random, p2p)", pattern);
}

static void run(const char *pattern, int trials)
{
    if (strcmp(pattern, "loopback") != 0 && size < 2) {
        if (rank == 0) printf("# %s needs at least 2 processes: skipped\n", pattern);
        return;
    }
    if (!csv && rank == 0)
        printf("# %s, %d processes: MB/s (1e6 B/s) of payload, best and median of %d trials\n"
               "%10s %8s %12s %12s %12s\n",
               pattern, size, trials, "bytes", "msgs", "t_min_us", "MBps_best", "MBps_med");
    for (size_t len = 16; len <= maxlen; len *= 4) {
        int n = msg_count(len);
        double tt[64], bytes = 0;
        for (int t = 0; t < trials; t++)
            tt[t] = trial(pattern, len, n, t, &bytes);
        /* Every rank must agree: take the slowest rank's time for each trial. */
        TRY(tern_allreduce(TERN_IN_PLACE, tt, (size_t)trials, TERN_DOUBLE, TERN_MAX,
                           TERN_COMM_WORLD));
        double mn, med;
        bench_stats(tt, trials, &mn, &med);
        if (rank == 0) {
            if (csv)
                printf("tern,conv_%s,standard,%d,%zu,%d,%d,%.3f,%.3f,%.2f,%.2f\n", pattern, size,
                       len, n, trials, mn * 1e6 / n, med * 1e6 / n, bytes / mn / 1e6,
                       bytes / med / 1e6);
            else
                printf("%10zu %8d %12.3f %12.1f %12.1f\n", len, n, mn * 1e6 / n, bytes / mn / 1e6,
                       bytes / med / 1e6);
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv)
{
    TRY(tern_init(&argc, &argv));
    rank = tern_rank();
    size = tern_size();
    int trials = 3;
    const char *patterns[8];
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            trials = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) {
            if (bench_parse_size(argv[++i], &maxlen) || maxlen < 16) DIE("bad size %s", argv[i]);
        } else if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (rank == 0)
                printf("usage: ternrun -n N tern_conv [-t trials] [-m maxsize] [--csv] "
                       "[loopback|fcfs|broadcast|random|p2p ...]\n");
            tern_finalize();
            return 0;
        } else if (np < 8) {
            patterns[np++] = argv[i];
        }
    }
    if (trials < 1 || trials > 64) DIE("trials must be 1..64");
    if (np == 0) {
        static const char *all[] = {"loopback", "fcfs", "broadcast", "random", "p2p"};
        for (int i = 0; i < 5; i++)
            patterns[np++] = all[i];
    }
    sbuf = malloc(maxlen);
    rbuf = malloc(maxlen);
    if (!sbuf || !rbuf) DIE("out of memory");
    memset(sbuf, 0x5a, maxlen);
    memset(rbuf, 0, maxlen);
    if (csv && rank == 0)
        printf("lib,pattern,mode,nprocs,bytes,iters,trials,t_min_us,t_med_us,MBps_max,MBps_med\n");
    for (int i = 0; i < np; i++)
        run(patterns[i], trials);
    free(sbuf);
    free(rbuf);
    TRY(tern_finalize());
    return 0;
}
