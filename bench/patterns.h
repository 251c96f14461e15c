/*
 * patterns.h - the benchmark patterns themselves (ping-pong, streaming,
 * bidirectional streaming, ring),
 * written once against the bp_* primitives so that tern and every MPI run exactly
 * the same loops with exactly the same timing. Include prims_tern.h or prims_mpi.h
 * first, then this file; the program's main() is then one call to
 * bench_pingpong_main() or bench_ring_main().
 *
 * Timing method (identical for all libraries): for each message size, a warm-up of
 * about a tenth of the iterations, then `trials` timed trials; each trial starts
 * after a barrier and is timed by rank 0 with bench_now(); the average time per
 * operation of each trial is kept, and the minimum and median over trials are
 * printed.
 */
#ifndef TERN_BENCH_PATTERNS_H
#define TERN_BENCH_PATTERNS_H

#include <fcntl.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_util.h"

enum { BP_TAG_DATA = 1, BP_TAG_ACK = 2, BP_TAG_RING = 3, BP_TAG_PLAN = 4 };

/* Streaming keeps at most this many bytes in flight per window (but >= 2 messages, if -w allows).
 */
#define BP_WINDOW_BYTES ((size_t)64 << 20)
#define BP_MAX_SIZES    256
#define BP_MAX_TRIALS   1000

struct bp_opts {
    size_t min, max, budget;
    long max_iters;
    int trials, window, sync, csv, perturb;
    int do_pingpong, do_stream, do_bibw;
    int meta; /* --meta: first print "# library: <version>" (for ternbench) */
    const char *label;
    const char *size_list; /* --sizes: explicit comma-separated list, overrides -m/-M/-p */
    size_t offset;         /* --offset: the receive buffer starts this far into a page */
    double seconds;        /* --seconds: fit each trial's iterations to about this long (0: off) */
    int probe;             /* --probe: time a raw cache line between ranks 0 and 1 per point */
    /* ring */
    size_t ring_bytes;
    double ring_seconds;
};

static inline int bp_window_for(const struct bp_opts *o, size_t len)
{
    int w = o->window;
    if (len > 0 && (size_t)w * len > BP_WINDOW_BYTES) {
        w = (int)(BP_WINDOW_BYTES / len);
        if (w < 2) w = 2;
        if (w > o->window) w = o->window;
    }
    return w;
}

/* "# library: <version>": which library ran, for ternbench's run metadata. */
static inline void bp_print_meta(void)
{
    printf("# library: %s\n", bp_lib_version());
    fflush(stdout);
}

static inline size_t bp_stride(size_t len)
{
    return (len + 63) & ~(size_t)63;
}

/*
 * The host's phase at each point (--probe). On some virtual machines the time a cache line
 * takes between the two CPUs changes 3x from one minute, or one second, to the next, and
 * every library's small-message times follow it. So before each point ranks 0 and 1 pass a
 * raw cache line back and forth (through a file in /dev/shm, outside any library) and rank
 * 0 prints the one-way time as "# point_probe_us: T" before the point's row: ternbench
 * sweep then compares libraries at points the host ran equally fast. At most about 3 ms
 * per point; nothing when the line cannot be shared or the ranks are not both running.
 */
struct bp_probe_line {
    _Alignas(64) _Atomic uint64_t seq; /* odd: rank 0's ping; even: rank 1's answer */
    _Atomic uint64_t stop;             /* the generation rank 1 stops answering at */
};

/* Collective: the shared line, or NULL (then bp_probe_run measures nothing). */
static inline struct bp_probe_line *bp_probe_open(int me)
{
    char name[64] = "";
    struct bp_probe_line *l = NULL;
    int ok = 0;
    if (me == 0) {
        snprintf(name, sizeof name, "/dev/shm/ternbench-probe-%ld", (long)getpid());
        int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && ftruncate(fd, 4096) == 0) {
            void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            l = m == MAP_FAILED ? NULL : m;
        }
        if (fd >= 0) close(fd);
        if (l == NULL) name[0] = '\0';
        bp_send(name, sizeof name, 1, BP_TAG_PLAN, 0);
        bp_recv(&ok, sizeof ok, 1, BP_TAG_PLAN);
    } else if (me == 1) {
        bp_recv(name, sizeof name, 0, BP_TAG_PLAN);
        name[sizeof name - 1] = '\0';
        int fd = name[0] ? open(name, O_RDWR) : -1;
        if (fd >= 0) {
            void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            l = m == MAP_FAILED ? NULL : m;
            close(fd);
        }
        ok = l != NULL;
        bp_send(&ok, sizeof ok, 0, BP_TAG_PLAN, 0);
    }
    bp_barrier();
    if (me == 0 && name[0]) unlink(name);
    if (me < 2 && !ok && l) {
        munmap(l, 4096);
        l = NULL;
    }
    return l;
}

/* Ranks 0 and 1 (after a barrier): the best of 3 trials of 200 round trips, one-way us, on
 * rank 0 (0 elsewhere, or when the trials took more than BP_PROBE_CAP_S). */
#define BP_PROBE_CAP_S 0.003
static inline double bp_probe_run(struct bp_probe_line *l, int me, uint64_t gen)
{
    if (l == NULL || me > 1) return 0;
    if (me == 1) {
        for (;;) {
            uint64_t v = atomic_load_explicit(&l->seq, memory_order_acquire);
            if (v & 1)
                atomic_store_explicit(&l->seq, v + 1, memory_order_release);
            else if (atomic_load_explicit(&l->stop, memory_order_acquire) == gen)
                return 0;
        }
    }
    double best = 0, start = bench_now();
    uint64_t v = atomic_load_explicit(&l->seq, memory_order_relaxed);
    for (int t = 0; t < 3 && bench_now() - start < BP_PROBE_CAP_S; t++) {
        double t0 = bench_now();
        int i;
        for (i = 0; i < 200; i++) {
            atomic_store_explicit(&l->seq, v + 1, memory_order_release);
            while (atomic_load_explicit(&l->seq, memory_order_acquire) != v + 2)
                ;
            v += 2;
            if ((i & 31) == 31 && bench_now() - start > BP_PROBE_CAP_S) break;
        }
        if (i < 200) break;
        double one = (bench_now() - t0) / 400.0 * 1e6;
        if (best == 0 || one < best) best = one;
    }
    atomic_store_explicit(&l->stop, gen, memory_order_release);
    return best;
}

/* Rank 0, before a point's row: its probe, if it has one (csv output only). */
static inline void bp_probe_print(const struct bp_opts *o, double us)
{
    if (o->csv && us > 0) printf("# point_probe_us: %.4f\n", us);
}

/* ---- ping-pong: rank 0 <-> rank 1, one message each way per iteration ---- */

static inline void bp_pingpong_iters(const struct bp_opts *o, char *sbuf, char *rbuf, size_t len,
                                     long n, int me)
{
    if (me == 0) {
        for (long i = 0; i < n; i++) {
            bp_send(sbuf, len, 1, BP_TAG_DATA, o->sync);
            bp_recv(rbuf, len, 1, BP_TAG_DATA);
        }
    } else if (me == 1) {
        for (long i = 0; i < n; i++) {
            bp_recv(rbuf, len, 0, BP_TAG_DATA);
            bp_send(sbuf, len, 0, BP_TAG_DATA, o->sync);
        }
    }
}

/* ---- streaming: rank 0 keeps a window of sends in flight, rank 1 acks each window ---- */

static inline void bp_stream_iters(const struct bp_opts *o, char *sbuf, char *rbuf, bp_req_t *reqs,
                                   size_t len, int w, long windows, int me)
{
    char ack[8] = {0};
    size_t stride = bp_stride(len);
    if (me == 0) {
        for (long k = 0; k < windows; k++) {
            /* Every send of a window reads the same buffer, as in OSU's osu_bw. */
            for (int j = 0; j < w; j++)
                bp_isend(sbuf, len, 1, BP_TAG_DATA, o->sync, &reqs[j]);
            bp_waitall(w, reqs);
            bp_recv(ack, 0, 1, BP_TAG_ACK);
        }
    } else if (me == 1) {
        for (long k = 0; k < windows; k++) {
            for (int j = 0; j < w; j++)
                bp_irecv(rbuf + (size_t)j * stride, len, 0, BP_TAG_DATA, &reqs[j]);
            bp_waitall(w, reqs);
            bp_send(ack, 0, 0, BP_TAG_ACK, 0);
        }
    }
}

/*
 * ---- bidirectional: both ranks keep a window of sends and a window of receives in flight
 * at once, then exchange an ack. Time per message counts the messages of both directions,
 * so bytes / time is the aggregate of the two directions.
 */
static inline void bp_bibw_iters(const struct bp_opts *o, char *sbuf, char *rbuf, bp_req_t *reqs,
                                 size_t len, int w, long windows, int me)
{
    char ack[8] = {0};
    size_t stride = bp_stride(len);
    int peer = 1 - me;
    if (me > 1) return;
    for (long k = 0; k < windows; k++) {
        for (int j = 0; j < w; j++)
            bp_irecv(rbuf + (size_t)j * stride, len, peer, BP_TAG_DATA, &reqs[j]);
        for (int j = 0; j < w; j++)
            bp_isend(sbuf, len, peer, BP_TAG_DATA, o->sync, &reqs[w + j]);
        bp_waitall(2 * w, reqs);
        if (me == 0) {
            bp_send(ack, 0, 1, BP_TAG_ACK, 0);
            bp_recv(ack, 0, 1, BP_TAG_ACK);
        } else {
            bp_recv(ack, 0, 0, BP_TAG_ACK);
            bp_send(ack, 0, 0, BP_TAG_ACK, 0);
        }
    }
}

enum bp_kind { BP_PINGPONG, BP_STREAM, BP_BIBW };

/* n iterations of one point-to-point pattern (windows, for stream and bibw). */
static inline void bp_run(enum bp_kind k, const struct bp_opts *o, char *sbuf, char *rbuf,
                          bp_req_t *reqs, size_t len, int w, long n, int me)
{
    if (k == BP_PINGPONG)
        bp_pingpong_iters(o, sbuf, rbuf, len, n, me);
    else if (k == BP_STREAM)
        bp_stream_iters(o, sbuf, rbuf, reqs, len, w, n, me);
    else
        bp_bibw_iters(o, sbuf, rbuf, reqs, len, w, n, me);
}

/*
 * The warm-up of one size; returns the iterations of each timed trial. Without --seconds:
 * bench_warmup(n) iterations, then n per trial. With --seconds S: rank 0 times two
 * iterations, keeps as many as fill about S (at least 2, at most n), tells rank 1 (one
 * 8-byte message, tag BP_TAG_PLAN) and a tenth of that is the warm-up. A sweep over every
 * size then takes a bounded time even where a library is slow (a loaded machine, a TCP
 * path that sleeps), which a fixed iteration count cannot promise.
 */
static inline long bp_warmup_plan(enum bp_kind k, const struct bp_opts *o, char *sbuf, char *rbuf,
                                  bp_req_t *reqs, size_t len, int w, long n, int me)
{
    if (o->seconds <= 0) {
        bp_run(k, o, sbuf, rbuf, reqs, len, w, bench_warmup(n), me);
        return n;
    }
    double t0 = bench_now();
    bp_run(k, o, sbuf, rbuf, reqs, len, w, 2, me);
    double per = (bench_now() - t0) / 2.0;
    int64_t fit = n;
    if (me == 0 && per > 0 && o->seconds / per < (double)n) {
        fit = (int64_t)(o->seconds / per);
        if (fit < 2) fit = 2;
    }
    if (me == 0)
        bp_send(&fit, sizeof fit, 1, BP_TAG_PLAN, 0);
    else if (me == 1)
        bp_recv(&fit, sizeof fit, 0, BP_TAG_PLAN);
    bp_run(k, o, sbuf, rbuf, reqs, len, w, bench_warmup((long)fit), me);
    return (long)fit;
}

/* "8,1M,64M" -> sizes; returns how many, or -1 if the list is malformed. */
static inline int bp_size_list(const char *list, size_t *out, int cap)
{
    char tmp[1024];
    int n = 0;
    if (strlen(list) >= sizeof tmp) return -1;
    strcpy(tmp, list);
    for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == cap || bench_parse_size(tok, &out[n]) != 0) return -1;
        n++;
    }
    return n;
}

static inline void bp_usage_pingpong(const char *prog)
{
    fprintf(stderr,
            "usage: %s [options]   (run with 2 processes; extra ranks idle)\n"
            "  -m, --min SIZE      smallest message (default 0; K/M/G suffixes)\n"
            "  -M, --max SIZE      largest message (default 64M)\n"
            "  -p, --perturb       also sizes 2^k-3 and 2^k+3 (NetPIPE style)\n"
            "  -s, --sizes LIST    exactly these sizes, e.g. 8,1M,64M (instead of -m/-M/-p)\n"
            "  -i, --iters N       iterations per trial for small messages (default 20000)\n"
            "  -b, --budget SIZE   bytes per trial that set iterations for large messages\n"
            "                      (default 256M; at least 4 iterations)\n"
            "  -t, --trials N      timed trials per size (default 5)\n"
            "  -w, --window N      sends in flight when streaming (default 64)\n"
            "  -T, --seconds S     fit each trial's iterations (at most -i/-b's) to about S\n"
            "                      seconds, from two timed ones (default: fixed counts)\n"
            "      --sync          synchronous sends (default: standard mode)\n"
            "      --only LIST     of pingpong,stream,bibw (default: pingpong,stream)\n"
            "      --csv           machine-readable output\n"
            "      --meta          first print the library version as a # comment\n"
            "      --label NAME    value of the lib column\n"
            "      --probe         before each point, time a raw cache line between ranks 0\n"
            "                      and 1 (the host's phase; printed with --csv)\n"
            "      --offset N      receive buffer N bytes past a page boundary (default 0;\n"
            "                      the send buffer is page-aligned, so a ping-pong's copies\n"
            "                      land N bytes above their source modulo 4 KiB)\n",
            prog);
}

static inline int bp_parse_pingpong(int argc, char **argv, struct bp_opts *o)
{
    static const struct option lo[] = {
        {"min", required_argument, 0, 'm'},    {"max", required_argument, 0, 'M'},
        {"perturb", no_argument, 0, 'p'},      {"iters", required_argument, 0, 'i'},
        {"budget", required_argument, 0, 'b'}, {"trials", required_argument, 0, 't'},
        {"window", required_argument, 0, 'w'}, {"seconds", required_argument, 0, 'T'},
        {"sync", no_argument, 0, 'S'},         {"only", required_argument, 0, 'O'},
        {"csv", no_argument, 0, 'C'},          {"label", required_argument, 0, 'L'},
        {"sizes", required_argument, 0, 's'},  {"meta", no_argument, 0, 'V'},
        {"offset", required_argument, 0, 'F'}, {"probe", no_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int c;
    *o = (struct bp_opts){.min = 0,
                          .max = (size_t)64 << 20,
                          .budget = (size_t)256 << 20,
                          .max_iters = 20000,
                          .trials = 5,
                          .window = 64,
                          .do_pingpong = 1,
                          .do_stream = 1};
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:M:pi:b:t:w:T:s:h", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            o->size_list = optarg;
            break;
        case 'm':
            if (bench_parse_size(optarg, &o->min)) return -1;
            break;
        case 'M':
            if (bench_parse_size(optarg, &o->max)) return -1;
            break;
        case 'p':
            o->perturb = 1;
            break;
        case 'i':
            o->max_iters = atol(optarg);
            break;
        case 'b':
            if (bench_parse_size(optarg, &o->budget)) return -1;
            break;
        case 't':
            o->trials = atoi(optarg);
            break;
        case 'w':
            o->window = atoi(optarg);
            break;
        case 'T':
            o->seconds = atof(optarg);
            if (!(o->seconds >= 0)) return -1;
            break;
        case 'S':
            o->sync = 1;
            break;
        case 'O': {
            char tmp[64];
            if (strlen(optarg) >= sizeof tmp) return -1;
            strcpy(tmp, optarg);
            o->do_pingpong = o->do_stream = o->do_bibw = 0;
            for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                if (!strcmp(tok, "pingpong"))
                    o->do_pingpong = 1;
                else if (!strcmp(tok, "stream"))
                    o->do_stream = 1;
                else if (!strcmp(tok, "bibw"))
                    o->do_bibw = 1;
                else
                    return -1;
            }
            break;
        }
        case 'F':
            o->offset = (size_t)strtoull(optarg, NULL, 0) % 4096;
            break;
        case 'P':
            o->probe = 1;
            break;
        case 'V':
            o->meta = 1;
            break;
        case 'C':
            o->csv = 1;
            break;
        case 'L':
            o->label = optarg;
            break;
        default:
            return -1;
        }
    }
    if (o->size_list) {
        /* Check the list now; -M becomes its largest size, for the buffers. */
        size_t sizes[BP_MAX_SIZES];
        int n = bp_size_list(o->size_list, sizes, BP_MAX_SIZES);
        if (n <= 0) return -1;
        o->max = 0;
        for (int k = 0; k < n; k++)
            o->max = sizes[k] > o->max ? sizes[k] : o->max;
        o->min = 0;
    }
    if (o->max_iters < 1 || o->trials < 1 || o->trials > BP_MAX_TRIALS || o->window < 1 ||
        o->min > o->max || optind != argc)
        return -1;
    return 0;
}

static inline int bench_pingpong_main(int argc, char **argv)
{
    struct bp_opts o;
    size_t sizes[BP_MAX_SIZES];
    double samples[BP_MAX_TRIALS];

    bp_init(&argc, &argv);
    int me = bp_rank(), np = bp_size();
    if (bp_parse_pingpong(argc, argv, &o) != 0) {
        if (me == 0) bp_usage_pingpong(argv[0]);
        bp_finalize();
        return 2;
    }
    if (np < 2) {
        if (me == 0) fprintf(stderr, "%s: needs at least 2 processes (got %d)\n", argv[0], np);
        bp_finalize();
        return 2;
    }
    const char *lib = o.label ? o.label : bp_lib_name();
    const char *mode = o.sync ? "sync" : "standard";
    int nsizes = o.size_list ? bp_size_list(o.size_list, sizes, BP_MAX_SIZES)
                             : bench_sizes(o.min, o.max, o.perturb, sizes, BP_MAX_SIZES);

    /* One allocation per role for the whole run, touched before any timing. */
    size_t stream_bytes = 64;
    for (int k = 0; k < nsizes; k++) {
        size_t need = (size_t)bp_window_for(&o, sizes[k]) * bp_stride(sizes[k]);
        if (need > stream_bytes) stream_bytes = need;
    }
    char *sbuf = bench_alloc(o.max);
    char *rbuf = bench_alloc(
        ((o.do_stream && me == 1) || (o.do_bibw && me < 2) ? stream_bytes : o.max) + o.offset);
    bp_req_t *reqs = calloc(2 * (size_t)o.window, sizeof *reqs);
    if (!sbuf || !rbuf || !reqs) {
        fprintf(stderr, "%s: rank %d: out of memory\n", argv[0], me);
        bp_abort(2);
    }
    char *rbuf_alloc = rbuf;
    rbuf += o.offset;
    struct bp_probe_line *probe = o.probe ? bp_probe_open(me) : NULL;
    uint64_t gen = 0;
    double pr;
    if (me == 0 && o.meta) bp_print_meta();
    if (me == 0 && o.csv) printf("%s\n", bench_csv_header);

    if (o.do_pingpong) {
        if (me == 0)
            bench_print_heading(o.csv, lib, "pingpong", mode, 2,
                                "one-way time per message = round trip / 2");
        for (int k = 0; k < nsizes; k++) {
            size_t len = sizes[k];
            long n = bench_iters(len, o.budget, o.max_iters, 4);
            bp_barrier();
            pr = bp_probe_run(probe, me, ++gen);
            n = bp_warmup_plan(BP_PINGPONG, &o, sbuf, rbuf, reqs, len, 0, n, me);
            for (int t = 0; t < o.trials; t++) {
                bp_barrier();
                double t0 = bench_now();
                bp_pingpong_iters(&o, sbuf, rbuf, len, n, me);
                samples[t] = (bench_now() - t0) / (2.0 * (double)n);
            }
            if (me == 0) {
                struct bench_row r = {lib, "pingpong", mode, 2, len, n, o.trials, 0, 0, 0, 0};
                bench_stats_row(samples, o.trials, &r);
                bp_probe_print(&o, pr);
                bench_print_row(o.csv, &r);
            }
        }
    }

    if (o.do_stream) {
        if (me == 0)
            bench_print_heading(o.csv, lib, "stream", mode, 2,
                                "per message, window of isends + 1 ack per window");
        for (int k = 0; k < nsizes; k++) {
            size_t len = sizes[k];
            int w = bp_window_for(&o, len);
            long maxw = 2 * o.max_iters / w;
            long windows = bench_iters(len * (size_t)w, o.budget, maxw < 4 ? 4 : maxw, 4);
            bp_barrier();
            pr = bp_probe_run(probe, me, ++gen);
            windows = bp_warmup_plan(BP_STREAM, &o, sbuf, rbuf, reqs, len, w, windows, me);
            for (int t = 0; t < o.trials; t++) {
                bp_barrier();
                double t0 = bench_now();
                bp_stream_iters(&o, sbuf, rbuf, reqs, len, w, windows, me);
                samples[t] = (bench_now() - t0) / ((double)windows * w);
            }
            if (me == 0) {
                struct bench_row r = {lib,      "stream", mode, 2, len, windows * w,
                                      o.trials, 0,        0,    0, 0};
                bench_stats_row(samples, o.trials, &r);
                bp_probe_print(&o, pr);
                bench_print_row(o.csv, &r);
            }
        }
    }

    if (o.do_bibw) {
        if (me == 0)
            bench_print_heading(o.csv, lib, "bibw", mode, 2,
                                "per message of either direction, both ranks stream at once");
        for (int k = 0; k < nsizes; k++) {
            size_t len = sizes[k];
            int w = bp_window_for(&o, len);
            long maxw = 2 * o.max_iters / w;
            long windows = bench_iters(len * (size_t)w, o.budget, maxw < 4 ? 4 : maxw, 4);
            bp_barrier();
            pr = bp_probe_run(probe, me, ++gen);
            windows = bp_warmup_plan(BP_BIBW, &o, sbuf, rbuf, reqs, len, w, windows, me);
            for (int t = 0; t < o.trials; t++) {
                bp_barrier();
                double t0 = bench_now();
                bp_bibw_iters(&o, sbuf, rbuf, reqs, len, w, windows, me);
                samples[t] = (bench_now() - t0) / ((double)windows * w * 2);
            }
            if (me == 0) {
                struct bench_row r = {lib, "bibw", mode, 2, len, windows * w, o.trials, 0, 0, 0, 0};
                bench_stats_row(samples, o.trials, &r);
                bp_probe_print(&o, pr);
                bench_print_row(o.csv, &r);
            }
        }
    }

    bp_barrier();
    if (probe) munmap(probe, 4096);
    free(reqs);
    free(rbuf_alloc);
    free(sbuf);
    bp_finalize();
    return 0;
}

/* ---- ring: a token goes 0 -> 1 -> ... -> N-1 -> 0, many laps ---- */

/*
 * One trial: at most max_laps laps, and rank 0 stops early once `seconds` have
 * passed, so a library that is very slow when oversubscribed still finishes in
 * bounded time. The token carries the decision: a lap number, or -1 for "stop",
 * which makes one last (untimed) lap so every rank leaves the loop.
 * Returns the laps timed; *elapsed gets their time (rank 0 only).
 */
static inline long bp_ring_trial(const struct bp_opts *o, char *buf, long max_laps, double seconds,
                                 int me, int np, double *elapsed)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    size_t len = o->ring_bytes;
    long laps = 0;
    int64_t tok;

    if (me == 0) {
        double t0 = bench_now(), t1 = t0;
        for (;;) {
            t1 = bench_now();
            tok = (laps >= max_laps || t1 - t0 > seconds) ? -1 : laps;
            memcpy(buf, &tok, sizeof tok);
            bp_send(buf, len, right, BP_TAG_RING, o->sync);
            if (tok < 0) break;
            bp_recv(buf, len, left, BP_TAG_RING);
            laps++;
        }
        bp_recv(buf, len, left, BP_TAG_RING); /* the stop token's lap */
        *elapsed = t1 - t0;
    } else {
        for (;;) {
            bp_recv(buf, len, left, BP_TAG_RING);
            memcpy(&tok, buf, sizeof tok);
            bp_send(buf, len, right, BP_TAG_RING, o->sync);
            if (tok < 0) break;
            laps++;
        }
    }
    return laps;
}

static inline void bp_usage_ring(const char *prog)
{
    fprintf(stderr,
            "usage: %s [options]   (run with N >= 2 processes)\n"
            "  -s, --size SIZE     message size (default 8, at least 8)\n"
            "  -i, --iters N       most laps per trial (default 20000)\n"
            "  -T, --seconds S     a trial stops after S seconds (default 1.0)\n"
            "  -t, --trials N      timed trials (default 5)\n"
            "      --sync          synchronous sends (default: standard mode)\n"
            "      --csv           machine-readable output\n"
            "      --label NAME    value of the lib column\n",
            prog);
}

static inline int bp_parse_ring(int argc, char **argv, struct bp_opts *o)
{
    static const struct option lo[] = {{"size", required_argument, 0, 's'},
                                       {"iters", required_argument, 0, 'i'},
                                       {"seconds", required_argument, 0, 'T'},
                                       {"trials", required_argument, 0, 't'},
                                       {"sync", no_argument, 0, 'S'},
                                       {"csv", no_argument, 0, 'C'},
                                       {"label", required_argument, 0, 'L'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    *o = (struct bp_opts){.ring_bytes = 8, .max_iters = 20000, .ring_seconds = 1.0, .trials = 5};
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:i:T:t:h", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            if (bench_parse_size(optarg, &o->ring_bytes)) return -1;
            break;
        case 'i':
            o->max_iters = atol(optarg);
            break;
        case 'T':
            o->ring_seconds = atof(optarg);
            break;
        case 't':
            o->trials = atoi(optarg);
            break;
        case 'S':
            o->sync = 1;
            break;
        case 'C':
            o->csv = 1;
            break;
        case 'L':
            o->label = optarg;
            break;
        default:
            return -1;
        }
    }
    if (o->ring_bytes < 8 || o->max_iters < 1 || o->trials < 1 || o->trials > BP_MAX_TRIALS ||
        o->ring_seconds <= 0 || optind != argc)
        return -1;
    return 0;
}

static inline int bench_ring_main(int argc, char **argv)
{
    struct bp_opts o;
    double samples[BP_MAX_TRIALS];

    bp_init(&argc, &argv);
    int me = bp_rank(), np = bp_size();
    if (bp_parse_ring(argc, argv, &o) != 0) {
        if (me == 0) bp_usage_ring(argv[0]);
        bp_finalize();
        return 2;
    }
    if (np < 2) {
        if (me == 0) fprintf(stderr, "%s: needs at least 2 processes (got %d)\n", argv[0], np);
        bp_finalize();
        return 2;
    }
    const char *lib = o.label ? o.label : bp_lib_name();
    const char *mode = o.sync ? "sync" : "standard";
    char *buf = bench_alloc(o.ring_bytes);
    if (!buf) bp_abort(2);

    double dummy;
    long warm = o.max_iters / 10 < 1 ? 1 : o.max_iters / 10;
    bp_barrier();
    bp_ring_trial(&o, buf, warm, o.ring_seconds / 10, me, np, &dummy);

    long min_laps = -1;
    for (int t = 0; t < o.trials; t++) {
        double el = 0;
        bp_barrier();
        long laps = bp_ring_trial(&o, buf, o.max_iters, o.ring_seconds, me, np, &el);
        if (laps < 1) laps = 1; /* only if one lap took longer than the time limit */
        samples[t] = el / ((double)laps * np);
        if (min_laps < 0 || laps < min_laps) min_laps = laps;
    }
    if (me == 0) {
        if (o.csv) printf("%s\n", bench_csv_header);
        bench_print_heading(o.csv, lib, "ring", mode, np, "per hop = lap time / nprocs");
        struct bench_row r = {lib, "ring", mode, np, o.ring_bytes, min_laps * np, o.trials,
                              0,   0,      0,    0};
        bench_stats_row(samples, o.trials, &r);
        bench_print_row(o.csv, &r);
    }
    bp_barrier();
    free(buf);
    bp_finalize();
    return 0;
}

#endif /* TERN_BENCH_PATTERNS_H */
