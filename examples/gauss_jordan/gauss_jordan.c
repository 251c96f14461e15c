/*
 * gauss_jordan.c - Gauss-Jordan elimination with partial pivoting over conversations.
 *
 * Each process owns a block of rows of the augmented matrix [A | b]. At step k every
 * process sends its best pivot candidate for column k (the largest |a_ik| among its rows
 * not yet used as pivots, with that row's entries from column k on) to the arbiter over
 * the FCFS conversation "gj.colmax". The arbiter (rank 0, also a worker) takes one
 * candidate from each process, picks the largest, and announces the pivot row over the
 * BROADCAST conversation "gj.pivot"; every process then eliminates column k from all its
 * other rows. Rows are never swapped: each remembers the column it is pivot of. At the
 * end x_k = b_i / a_ik for the pivot row i of column k.
 *
 * Usage: gauss_jordan [n] [check]   n defaults to 64; check (default 1 when n <= 1000)
 * compares with a serial solve at rank 0. Prints the parallel time and, when checked,
 * the serial time and the largest difference.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "gauss_jordan: " __VA_ARGS__);                                             \
        fputc('\n', stderr);                                                                       \
        tern_abort(1);                                                                             \
    } while (0)
#define TRY(call)                                                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_) DIE("%s: %s", #call, tern_strerror(rc_));                                         \
    } while (0)

/* Entry (i, j) of [A | b] (j == n is b): uniform in [-1, 1), reproducible anywhere. */
static double entry(int n, int i, int j)
{
    uint64_t x = (uint64_t)i * (uint64_t)(n + 1) + (uint64_t)j + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) / (double)(1ULL << 52) - 1.0;
}

/* Candidate / pivot message: header then the row from column k to n. */
struct cand {
    double val; /* |a_ik|, or -1 when the process has no unused row */
    int32_t row;
    int32_t rank;
};

static void serial_solve(int n, double *x)
{
    double *a = malloc((size_t)n * (size_t)(n + 1) * sizeof *a);
    if (!a) DIE("out of memory");
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= n; j++)
            a[(size_t)i * (n + 1) + j] = entry(n, i, j);
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(a[(size_t)i * (n + 1) + k]) > fabs(a[(size_t)p * (n + 1) + k])) p = i;
        if (p != k)
            for (int j = 0; j <= n; j++) {
                double t = a[(size_t)k * (n + 1) + j];
                a[(size_t)k * (n + 1) + j] = a[(size_t)p * (n + 1) + j];
                a[(size_t)p * (n + 1) + j] = t;
            }
        double *pr = &a[(size_t)k * (n + 1)];
        for (int i = k + 1; i < n; i++) {
            double *r = &a[(size_t)i * (n + 1)];
            double f = r[k] / pr[k];
            for (int j = k; j <= n; j++)
                r[j] -= f * pr[j];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = a[(size_t)i * (n + 1) + n];
        for (int j = i + 1; j < n; j++)
            s -= a[(size_t)i * (n + 1) + j] * x[j];
        x[i] = s / a[(size_t)i * (n + 1) + i];
    }
    free(a);
}

int main(int argc, char **argv)
{
    TRY(tern_init(&argc, &argv));
    int rank = tern_rank(), size = tern_size();
    int n = argc > 1 ? atoi(argv[1]) : 64;
    int check = argc > 2 ? atoi(argv[2]) : n <= 1000;
    if (n < 1) DIE("n must be positive");
    int lo = (int)((long)n * rank / size), hi = (int)((long)n * (rank + 1) / size);
    int nl = hi - lo, w = n + 1;
    double *a = malloc((size_t)(nl ? nl : 1) * (size_t)w * sizeof *a);
    int *pivot_of = malloc((size_t)(nl ? nl : 1) * sizeof *pivot_of); /* column, or -1 */
    size_t msgmax = sizeof(struct cand) + (size_t)w * sizeof(double);
    unsigned char *msg = malloc(msgmax), *best = malloc(msgmax), *in = malloc(msgmax);
    double *x = calloc((size_t)n, sizeof *x), *xs = calloc((size_t)n, sizeof *xs);
    if (!a || !pivot_of || !msg || !best || !in || !x || !xs) DIE("out of memory");
    for (int i = 0; i < nl; i++) {
        pivot_of[i] = -1;
        for (int j = 0; j < w; j++)
            a[(size_t)i * w + j] = entry(n, lo + i, j);
    }

    tern_conv_t colmax_s, colmax_r = TERN_CONV_NULL, piv_r, piv_s = TERN_CONV_NULL;
    TRY(tern_conv_open_send("gj.colmax", &colmax_s));
    TRY(tern_conv_open_recv("gj.pivot", TERN_BROADCAST, &piv_r));
    if (rank == 0) {
        TRY(tern_conv_open_recv("gj.colmax", TERN_FCFS, &colmax_r));
        TRY(tern_conv_open_send("gj.pivot", &piv_s));
    }
    /* Every broadcast receiver has joined before the first pivot is announced. */
    TRY(tern_barrier(TERN_COMM_WORLD));
    double t0 = tern_wtime();

    for (int k = 0; k < n; k++) {
        size_t len = sizeof(struct cand) + (size_t)(w - k) * sizeof(double);
        /* My candidate. */
        struct cand c = {-1.0, -1, rank};
        int li = -1;
        for (int i = 0; i < nl; i++)
            if (pivot_of[i] < 0 && fabs(a[(size_t)i * w + k]) > c.val) {
                c.val = fabs(a[(size_t)i * w + k]);
                li = i;
            }
        if (li >= 0) {
            c.row = lo + li;
            memcpy(msg + sizeof c, &a[(size_t)li * w + k], (size_t)(w - k) * sizeof(double));
        } else {
            memset(msg + sizeof c, 0, (size_t)(w - k) * sizeof(double));
        }
        memcpy(msg, &c, sizeof c);
        TRY(tern_conv_send(colmax_s, msg, len));

        /* The arbiter picks and announces. */
        if (rank == 0) {
            double bv = -2.0;
            for (int p = 0; p < size; p++) {
                size_t got;
                TRY(tern_conv_recv(colmax_r, in, msgmax, &got));
                struct cand ic;
                memcpy(&ic, in, sizeof ic);
                if (got != len) DIE("candidate of %zu bytes at step %d", got, k);
                if (ic.val > bv || (ic.val == bv && ic.row < ((struct cand *)best)->row)) {
                    bv = ic.val;
                    memcpy(best, in, len);
                }
            }
            if (bv <= 0) DIE("matrix is singular at column %d", k);
            TRY(tern_conv_send(piv_s, best, len));
        }

        /* Everyone eliminates column k with the announced pivot row. */
        size_t got;
        TRY(tern_conv_recv(piv_r, in, msgmax, &got));
        struct cand pc;
        memcpy(&pc, in, sizeof pc);
        const double *pr = (const double *)(in + sizeof pc); /* pr[j - k] = a_pj */
        if (pc.row >= lo && pc.row < hi) pivot_of[pc.row - lo] = k;
        for (int i = 0; i < nl; i++) {
            if (lo + i == pc.row) continue;
            double *r = &a[(size_t)i * w];
            double f = r[k] / pr[0];
            if (f == 0.0) continue;
            for (int j = k; j < w; j++)
                r[j] -= f * pr[j - k];
        }
    }
    for (int i = 0; i < nl; i++)
        x[pivot_of[i]] = a[(size_t)i * w + n] / a[(size_t)i * w + pivot_of[i]];
    TRY(tern_allreduce(TERN_IN_PLACE, x, (size_t)n, TERN_DOUBLE, TERN_SUM, TERN_COMM_WORLD));
    double t1 = tern_wtime();

    int bad = 0;
    if (rank == 0) {
        printf("gauss_jordan: n %d, %d processes: %.3f s (%.1f us per column)\n", n, size, t1 - t0,
               (t1 - t0) * 1e6 / n);
        if (check) {
            double s0 = tern_wtime();
            serial_solve(n, xs);
            double s1 = tern_wtime(), diff = 0, norm = 0;
            for (int i = 0; i < n; i++) {
                diff = fmax(diff, fabs(x[i] - xs[i]));
                norm = fmax(norm, fabs(xs[i]));
            }
            printf("gauss_jordan: serial %.3f s, max |x - x_serial| = %.3g (|x| max %.3g)\n",
                   s1 - s0, diff, norm);
            if (!(diff <= 1e-9 * (norm > 1 ? norm : 1) * n)) {
                fprintf(stderr, "gauss_jordan: FAIL: parallel and serial solutions differ\n");
                bad = 1;
            }
        }
    }
    TRY(tern_bcast(&bad, sizeof bad, 0, TERN_COMM_WORLD));
    TRY(tern_conv_close(&colmax_s));
    TRY(tern_conv_close(&piv_r));
    if (rank == 0) {
        TRY(tern_conv_close(&colmax_r));
        TRY(tern_conv_close(&piv_s));
    }
    TRY(tern_barrier(TERN_COMM_WORLD));
    free(a);
    free(pivot_of);
    free(msg);
    free(best);
    free(in);
    free(x);
    free(xs);
    TRY(tern_finalize());
    return bad;
}
