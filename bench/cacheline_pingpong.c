/*
 * cacheline_pingpong.c - the floor under every shared-memory message library on
 * this machine, so the report can say how close tern gets to it:
 *
 *  - cacheline: two processes (fork) bounce one 64-byte cache line of a MAP_SHARED
 *    mapping; the sequence word that says "your turn" sits in the same line as the
 *    56-byte payload, so one line transfer carries flag and data, which is the best
 *    any fastbox can do. Reported as one-way latency (round trip / 2), with the two
 *    processes pinned to different cores and unpinned.
 *  - memcpy: single-process copy rate from one large buffer to another at
 *    1 MiB ... 64 MiB, the ceiling of a single-copy large-message transfer.
 *
 * Output uses the same rows (and --csv columns) as the message benchmarks, with
 * lib "raw". Waiting is a pure spin on a load (no pause instruction): this is a
 * floor, not a recommendation.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_TRIALS 1000
#define STOP       UINT64_MAX

struct line {
    _Atomic uint64_t seq; /* odd: the ping is there; even: the pong is there */
    char payload[56];
} __attribute__((aligned(64)));

struct opts {
    long iters;
    int trials, csv, do_cacheline, do_memcpy, pinned_only;
    size_t min, max, budget;
};

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [options]\n"
            "  -i, --iters N      round trips per trial (default 200000)\n"
            "  -t, --trials N     timed trials (default 5)\n"
            "  -m, --min SIZE     smallest memcpy size (default 1M)\n"
            "  -M, --max SIZE     largest memcpy size (default 64M)\n"
            "  -b, --budget SIZE  bytes copied per memcpy trial (default 1G)\n"
            "      --only WHAT    cacheline, memcpy (default: both) or pinned (the pinned\n"
            "                     cache line alone: a quick look at the host's phase)\n"
            "      --csv          machine-readable output\n",
            prog);
}

/* The pong side: answer every ping until told to stop. Runs in the child. */
static void pong(struct line *l)
{
    char local[sizeof l->payload];
    uint64_t want = 1;
    for (;;) {
        uint64_t s;
        while ((s = atomic_load_explicit(&l->seq, memory_order_acquire)) != want)
            if (s == STOP) return;
        memcpy(local, l->payload, sizeof local);
        local[0]++;
        memcpy(l->payload, local, sizeof local);
        atomic_store_explicit(&l->seq, want + 1, memory_order_release);
        want += 2;
    }
}

/* Returns 0 and fills *r, or -1 if the processes could not be set up as asked. */
static int run_cacheline(const struct opts *o, int pinned, const cpu_set_t *all,
                         struct bench_row *r)
{
    double samples[MAX_TRIALS];
    int cpus[2] = {-1, -1};
    if (pinned) {
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
            if (CPU_ISSET(c, all)) cpus[k++] = c;
        if (cpus[1] < 0) return -1;
    }
    struct line *l = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) return -1;
    atomic_store(&l->seq, 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(l, 4096);
        return -1;
    }
    if (pid == 0) {
        /* The pong spins until told to stop: it must not outlive a parent that was
         * killed (by a timeout, say). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1) _exit(1);
        if (pinned) {
            cpu_set_t s;
            CPU_ZERO(&s);
            CPU_SET(cpus[1], &s);
            sched_setaffinity(0, sizeof s, &s);
        }
        pong(l);
        _exit(0);
    }
    cpu_set_t s;
    if (pinned) {
        CPU_ZERO(&s);
        CPU_SET(cpus[0], &s);
    } else {
        s = *all;
    }
    sched_setaffinity(0, sizeof s, &s);

    char local[sizeof l->payload];
    memset(local, 1, sizeof local);
    uint64_t seq = 1;
    long n = o->iters;
    for (int t = -1; t < o->trials; t++) { /* trial -1 is the warm-up */
        long iters = t < 0 ? bench_warmup(n) : n;
        double t0 = bench_now();
        for (long i = 0; i < iters; i++) {
            memcpy(l->payload, local, sizeof local);
            atomic_store_explicit(&l->seq, seq, memory_order_release);
            while (atomic_load_explicit(&l->seq, memory_order_acquire) != seq + 1)
                ;
            memcpy(local, l->payload, sizeof local);
            seq += 2;
        }
        if (t >= 0) samples[t] = (bench_now() - t0) / (2.0 * (double)iters);
    }
    atomic_store_explicit(&l->seq, STOP, memory_order_release);
    waitpid(pid, NULL, 0);
    munmap(l, 4096);
    sched_setaffinity(0, sizeof *all, all);

    *r = (struct bench_row){
        "raw", "cacheline", pinned ? "pinned" : "unpinned", 2, 64, n, o->trials, 0, 0, 0, 0};
    bench_stats_row(samples, o->trials, r);
    return 0;
}

static void run_memcpy(const struct opts *o)
{
    double samples[MAX_TRIALS];
    size_t sizes[64];
    int nsizes = bench_sizes(o->min ? o->min : 1, o->max, 0, sizes, 64);
    char *src = bench_alloc(o->max), *dst = bench_alloc(o->max);
    if (!src || !dst) {
        fprintf(stderr, "memcpy: out of memory\n");
        exit(1);
    }
    bench_print_heading(o->csv, "raw", "memcpy", "-", 1, "per copy of `bytes`, one process");
    for (int k = 0; k < nsizes; k++) {
        size_t len = sizes[k];
        if (len < o->min) continue;
        long n = bench_iters(len, o->budget, 100000, 4);
        for (int t = -1; t < o->trials; t++) {
            long iters = t < 0 ? bench_warmup(n) : n;
            double t0 = bench_now();
            for (long i = 0; i < iters; i++) {
                memcpy(dst, src, len);
                __asm__ __volatile__("" ::: "memory"); /* keep every copy */
            }
            if (t >= 0) samples[t] = (bench_now() - t0) / (double)iters;
        }
        struct bench_row r = {"raw", "memcpy", "-", 1, len, n, o->trials, 0, 0, 0, 0};
        bench_stats_row(samples, o->trials, &r);
        bench_print_row(o->csv, &r);
    }
    free(dst);
    free(src);
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"iters", required_argument, 0, 'i'},
                                       {"trials", required_argument, 0, 't'},
                                       {"min", required_argument, 0, 'm'},
                                       {"max", required_argument, 0, 'M'},
                                       {"budget", required_argument, 0, 'b'},
                                       {"only", required_argument, 0, 'O'},
                                       {"csv", no_argument, 0, 'C'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct opts o = {.iters = 200000,
                     .trials = 5,
                     .do_cacheline = 1,
                     .do_memcpy = 1,
                     .min = (size_t)1 << 20,
                     .max = (size_t)64 << 20,
                     .budget = (size_t)1 << 30};
    int c;
    while ((c = getopt_long(argc, argv, "i:t:m:M:b:h", lo, NULL)) != -1) {
        switch (c) {
        case 'i':
            o.iters = atol(optarg);
            break;
        case 't':
            o.trials = atoi(optarg);
            break;
        case 'm':
            if (bench_parse_size(optarg, &o.min)) goto bad;
            break;
        case 'M':
            if (bench_parse_size(optarg, &o.max)) goto bad;
            break;
        case 'b':
            if (bench_parse_size(optarg, &o.budget)) goto bad;
            break;
        case 'O':
            o.pinned_only = !strcmp(optarg, "pinned");
            o.do_cacheline = !strcmp(optarg, "cacheline") || o.pinned_only;
            o.do_memcpy = !strcmp(optarg, "memcpy");
            if (!o.do_cacheline && !o.do_memcpy) goto bad;
            break;
        case 'C':
            o.csv = 1;
            break;
        default:
            goto bad;
        }
    }
    if (o.iters < 1 || o.trials < 1 || o.trials > MAX_TRIALS || o.min > o.max || optind != argc)
        goto bad;

    if (o.csv) printf("%s\n", bench_csv_header);
    if (o.do_cacheline) {
        cpu_set_t all;
        if (sched_getaffinity(0, sizeof all, &all) != 0) CPU_ZERO(&all);
        for (int pinned = 1; pinned >= o.pinned_only; pinned--) {
            struct bench_row r;
            bench_print_heading(o.csv, "raw", "cacheline", pinned ? "pinned" : "unpinned", 2,
                                "one-way = round trip / 2, 64-byte line, flag in the line");
            if (run_cacheline(&o, pinned, &all, &r) == 0)
                bench_print_row(o.csv, &r);
            else
                fprintf(stderr, "cacheline %s: skipped (%s)\n", pinned ? "pinned" : "unpinned",
                        pinned ? "fewer than 2 usable CPUs" : "mmap or fork failed");
        }
    }
    if (o.do_memcpy) run_memcpy(&o);
    return 0;
bad:
    usage(argv[0]);
    return 2;
}
