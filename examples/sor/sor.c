/*
 * sor.c - successive over-relaxation for Poisson's equation over conversations.
 *
 * Solves -(u_xx + u_yy) = f on the unit square, u = 0 on the boundary, on a P x P grid of
 * interior points (h = 1 / (P + 1)), with f = 2 pi^2 sin(pi x) sin(pi y) so that the exact
 * solution is sin(pi x) sin(pi y). The grid is split into px x py subgrids, one per
 * process (N x N when the process count is a square N^2; otherwise the most nearly square
 * factorisation). Red-black ordering with the optimal omega = 2 / (1 + sin(pi h)): every
 * half sweep updates one colour from the other, so the result does not depend on the
 * decomposition and the parallel solution equals the serial one bit for bit.
 *
 * Each half sweep exchanges the subgrid's boundary with its four neighbours: with tern
 * point-to-point by default, or (halo=conv) through one conversation per receiving side,
 * "sor.h.<rank>.<side>", with the neighbour as its only sender and the owner as FCFS
 * receiver. Every `every` iterations each process reports its largest change to the
 * monitor (rank 0, also a worker) over the FCFS conversation "sor.report"; the monitor
 * answers "go" or "stop" to everyone over the BROADCAST conversation "sor.ctl".
 *
 * Usage: sor [P] [check] [halo=p2p|conv] [tol=1e-8] [every=10] [maxit=100000]
 *   P defaults to 64; check (default 1 when P <= 512) runs the same iteration serially
 *   at rank 0 and compares every point (they must be equal). Prints time, iterations,
 *   million point updates per second and the error against the exact solution.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "sor: " __VA_ARGS__);                                                      \
        fputc('\n', stderr);                                                                       \
        tern_abort(1);                                                                             \
    } while (0)
#define TRY(call)                                                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_) DIE("%s: %s", #call, tern_strerror(rc_));                                         \
    } while (0)

enum { NORTH, SOUTH, WEST, EAST }; /* the side of my subgrid a neighbour touches */

struct report {
    int32_t iter;
    int32_t rank;
    double delta; /* largest |change| of the last iteration */
};

struct ctl {
    int32_t iter;
    int32_t stop;
};

/* A subgrid: rows [r0, r1) and columns [c0, c1) of the interior, 0-based, stored with
 * one halo line on each side: u[(i - r0 + 1) * ld + (j - c0 + 1)]. */
struct grid {
    int P, r0, r1, c0, c1, nr, nc, ld;
    double h, omega;
    double *u, *f;
};

static void grid_init(struct grid *g, int P, int r0, int r1, int c0, int c1)
{
    g->P = P;
    g->r0 = r0, g->r1 = r1, g->c0 = c0, g->c1 = c1;
    g->nr = r1 - r0, g->nc = c1 - c0, g->ld = g->nc + 2;
    g->h = 1.0 / (P + 1);
    g->omega = 2.0 / (1.0 + sin(M_PI * g->h));
    size_t n = (size_t)(g->nr + 2) * (size_t)g->ld;
    g->u = calloc(n, sizeof *g->u);
    g->f = calloc(n, sizeof *g->f);
    if (!g->u || !g->f) DIE("out of memory");
    for (int i = 0; i < g->nr; i++)
        for (int j = 0; j < g->nc; j++) {
            double x = (r0 + i + 1) * g->h, y = (c0 + j + 1) * g->h;
            g->f[(size_t)(i + 1) * g->ld + j + 1] =
                g->h * g->h * 2.0 * M_PI * M_PI * sin(M_PI * x) * sin(M_PI * y);
        }
}

/* Update every point of one colour ((i + j) % 2 == colour, global indices); returns the
 * largest change. */
static double grid_sweep(struct grid *g, int colour)
{
    double dmax = 0, w = g->omega;
    int ld = g->ld;
    for (int i = 1; i <= g->nr; i++) {
        int gi = g->r0 + i - 1;
        int j0 = 1 + ((colour - gi - g->c0) % 2 + 2) % 2;
        double *u = &g->u[(size_t)i * ld];
        const double *f = &g->f[(size_t)i * ld];
        for (int j = j0; j <= g->nc; j += 2) {
            double nu = 0.25 * (u[j - ld] + u[j + ld] + u[j - 1] + u[j + 1] + f[j]);
            double d = w * (nu - u[j]);
            u[j] += d;
            d = fabs(d);
            if (d > dmax) dmax = d;
        }
    }
    return dmax;
}

static void grid_free(struct grid *g)
{
    free(g->u);
    free(g->f);
}

/* ---- the halo exchange ----------------------------------------------------------- */

struct halo {
    int conv;         /* through conversations, else point-to-point */
    int nbr[4];       /* neighbour rank on each side, or -1 */
    double *out[4];   /* packed boundary lines to send */
    double *in[4];    /* received halo lines */
    int len[4];       /* doubles per line */
    tern_conv_t s[4]; /* conv: to the neighbour on that side */
    tern_conv_t r[4]; /* conv: from the neighbour on that side */
};

static const int opposite[4] = {SOUTH, NORTH, EAST, WEST};

static void halo_open(struct halo *x, int rank)
{
    char name[64];
    for (int s = 0; s < 4; s++) {
        x->s[s] = x->r[s] = TERN_CONV_NULL;
        if (x->nbr[s] < 0 || !x->conv) continue;
        snprintf(name, sizeof name, "sor.h.%d.%d", rank, s);
        TRY(tern_conv_open_recv(name, TERN_FCFS, &x->r[s]));
        snprintf(name, sizeof name, "sor.h.%d.%d", x->nbr[s], opposite[s]);
        TRY(tern_conv_open_send(name, &x->s[s]));
    }
}

static void halo_close(struct halo *x)
{
    for (int s = 0; s < 4; s++) {
        if (x->s[s]) TRY(tern_conv_close(&x->s[s]));
        if (x->r[s]) TRY(tern_conv_close(&x->r[s]));
    }
}

static void halo_exchange(struct halo *x, struct grid *g)
{
    int ld = g->ld;
    for (int s = 0; s < 4; s++) {
        if (x->nbr[s] < 0) continue;
        for (int k = 0; k < x->len[s]; k++) {
            int i = s == NORTH ? 1 : s == SOUTH ? g->nr : k + 1;
            int j = s == WEST ? 1 : s == EAST ? g->nc : k + 1;
            x->out[s][k] = g->u[(size_t)i * ld + j];
        }
    }
    size_t bytes[4];
    for (int s = 0; s < 4; s++)
        bytes[s] = (size_t)x->len[s] * sizeof(double);
    if (x->conv) {
        for (int s = 0; s < 4; s++)
            if (x->nbr[s] >= 0) TRY(tern_conv_send(x->s[s], x->out[s], bytes[s]));
        for (int s = 0; s < 4; s++) {
            if (x->nbr[s] < 0) continue;
            size_t got = 0;
            TRY(tern_conv_recv(x->r[s], x->in[s], bytes[s], &got));
            if (got != bytes[s]) DIE("halo of %zu bytes, expected %zu", got, bytes[s]);
        }
    } else {
        tern_request_t rq[8];
        int n = 0;
        for (int s = 0; s < 4; s++) {
            if (x->nbr[s] < 0) continue;
            TRY(tern_irecv(x->in[s], bytes[s], x->nbr[s], opposite[s], TERN_COMM_WORLD, &rq[n++]));
            TRY(tern_isend(x->out[s], bytes[s], x->nbr[s], s, TERN_COMM_WORLD, &rq[n++]));
        }
        for (int k = 0; k < n; k++)
            TRY(tern_wait(&rq[k], NULL));
    }
    for (int s = 0; s < 4; s++) {
        if (x->nbr[s] < 0) continue;
        for (int k = 0; k < x->len[s]; k++) {
            int i = s == NORTH ? 0 : s == SOUTH ? g->nr + 1 : k + 1;
            int j = s == WEST ? 0 : s == EAST ? g->nc + 1 : k + 1;
            g->u[(size_t)i * ld + j] = x->in[s][k];
        }
    }
}

/* ---- serial reference -------------------------------------------------------------- */

/* The same iteration on the whole grid, checking convergence at the same iterations. */
static int serial_solve(struct grid *g, double tol, int every, int maxit)
{
    int it = 0;
    while (it < maxit) {
        double d = grid_sweep(g, 0);
        double d1 = grid_sweep(g, 1);
        if (d1 > d) d = d1;
        it++;
        if (it % every == 0 && d < tol) break;
    }
    return it;
}

/* px x py = size, as nearly square as possible, px <= py. */
static void factor(int size, int *px, int *py)
{
    int a = (int)sqrt((double)size);
    while (a > 1 && size % a)
        a--;
    *px = a;
    *py = size / a;
}

int main(int argc, char **argv)
{
    TRY(tern_init(&argc, &argv));
    int rank = tern_rank(), size = tern_size();
    int P = 64, check = -1, every = 10, maxit = 100000, conv_halo = 0;
    double tol = 1e-8;
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "halo=", 5) == 0) {
            if (strcmp(argv[i] + 5, "conv") == 0)
                conv_halo = 1;
            else if (strcmp(argv[i] + 5, "p2p") != 0)
                DIE("halo must be p2p or conv");
        } else if (strncmp(argv[i], "tol=", 4) == 0) {
            tol = atof(argv[i] + 4);
        } else if (strncmp(argv[i], "every=", 6) == 0) {
            every = atoi(argv[i] + 6);
        } else if (strncmp(argv[i], "maxit=", 6) == 0) {
            maxit = atoi(argv[i] + 6);
        } else if (pos == 0) {
            P = atoi(argv[i]), pos++;
        } else if (pos == 1) {
            check = atoi(argv[i]), pos++;
        } else {
            DIE("usage: sor [P] [check] [halo=p2p|conv] [tol=T] [every=K] [maxit=M]");
        }
    }
    if (check < 0) check = P <= 512;
    if (every < 1 || maxit < 1 || !(tol > 0)) DIE("every, maxit and tol must be positive");
    int px, py;
    factor(size, &px, &py);
    if (P < px || P < py) DIE("P = %d is smaller than the %d x %d process grid", P, px, py);
    int pr = rank / py, pc = rank % py;
    struct grid g;
    grid_init(&g, P, (int)((long)P * pr / px), (int)((long)P * (pr + 1) / px),
              (int)((long)P * pc / py), (int)((long)P * (pc + 1) / py));

    struct halo x = {.conv = conv_halo};
    x.nbr[NORTH] = pr > 0 ? rank - py : -1;
    x.nbr[SOUTH] = pr < px - 1 ? rank + py : -1;
    x.nbr[WEST] = pc > 0 ? rank - 1 : -1;
    x.nbr[EAST] = pc < py - 1 ? rank + 1 : -1;
    for (int s = 0; s < 4; s++) {
        x.len[s] = s == NORTH || s == SOUTH ? g.nc : g.nr;
        x.out[s] = malloc((size_t)x.len[s] * sizeof(double));
        x.in[s] = malloc((size_t)x.len[s] * sizeof(double));
        if (!x.out[s] || !x.in[s]) DIE("out of memory");
    }
    halo_open(&x, rank);

    tern_conv_t rep_s, rep_r = TERN_CONV_NULL, ctl_s = TERN_CONV_NULL, ctl_r;
    TRY(tern_conv_open_send("sor.report", &rep_s));
    TRY(tern_conv_open_recv("sor.ctl", TERN_BROADCAST, &ctl_r));
    if (rank == 0) {
        TRY(tern_conv_open_recv("sor.report", TERN_FCFS, &rep_r));
        TRY(tern_conv_open_send("sor.ctl", &ctl_s));
    }
    /* Every broadcast receiver has joined before the monitor first speaks. */
    TRY(tern_barrier(TERN_COMM_WORLD));
    double t0 = tern_wtime();

    int it = 0, stop = 0;
    while (!stop && it < maxit) {
        halo_exchange(&x, &g);
        double d = grid_sweep(&g, 0);
        halo_exchange(&x, &g);
        double d1 = grid_sweep(&g, 1);
        if (d1 > d) d = d1;
        it++;
        if (it % every != 0 && it < maxit) continue;
        struct report rp = {it, rank, d};
        TRY(tern_conv_send(rep_s, &rp, sizeof rp));
        if (rank == 0) { /* the monitor */
            double dmax = 0;
            for (int k = 0; k < size; k++) {
                struct report in;
                size_t got = 0;
                TRY(tern_conv_recv(rep_r, &in, sizeof in, &got));
                if (got != sizeof in || in.iter != it) DIE("stray report at iteration %d", it);
                if (in.delta > dmax) dmax = in.delta;
            }
            struct ctl c = {it, dmax < tol};
            TRY(tern_conv_send(ctl_s, &c, sizeof c));
        }
        struct ctl c;
        size_t got = 0;
        TRY(tern_conv_recv(ctl_r, &c, sizeof c, &got));
        if (got != sizeof c || c.iter != it) DIE("stray control message at iteration %d", it);
        stop = c.stop;
    }
    double t1 = tern_wtime();

    /* Error against the exact solution, and the comparison with the serial solve. */
    double err = 0;
    for (int i = 1; i <= g.nr; i++)
        for (int j = 1; j <= g.nc; j++) {
            double xx = (g.r0 + i) * g.h, yy = (g.c0 + j) * g.h;
            err = fmax(err, fabs(g.u[(size_t)i * g.ld + j] - sin(M_PI * xx) * sin(M_PI * yy)));
        }
    TRY(tern_allreduce(TERN_IN_PLACE, &err, 1, TERN_DOUBLE, TERN_MAX, TERN_COMM_WORLD));
    int bad = 0;
    if (rank == 0)
        printf("sor: P %d, %d processes (%d x %d), halo %s: %d iterations in %.3f s "
               "(%.1f Mupdates/s), max error vs exact %.3g\n",
               P, size, px, py, conv_halo ? "conv" : "p2p", it, t1 - t0,
               (double)P * P * it / (t1 - t0) / 1e6, err);
    if (check) {
        /* Every process sends its block to rank 0, which compares it with its own
         * serial solve point by point. */
        size_t blk = (size_t)g.nr * (size_t)g.nc;
        double *mine = malloc((blk ? blk : 1) * sizeof *mine);
        if (!mine) DIE("out of memory");
        for (int i = 0; i < g.nr; i++)
            memcpy(&mine[(size_t)i * g.nc], &g.u[(size_t)(i + 1) * g.ld + 1],
                   (size_t)g.nc * sizeof(double));
        if (rank == 0) {
            struct grid sg;
            grid_init(&sg, P, 0, P, 0, P);
            double s0 = tern_wtime();
            int sit = serial_solve(&sg, tol, every, maxit);
            double s1 = tern_wtime(), diff = 0;
            if (sit != it) {
                fprintf(stderr, "sor: FAIL: serial took %d iterations, parallel %d\n", sit, it);
                bad = 1;
            }
            for (int q = 0; q < size; q++) {
                int qr = q / py, qc = q % py;
                int r0 = (int)((long)P * qr / px), r1 = (int)((long)P * (qr + 1) / px);
                int c0 = (int)((long)P * qc / py), c1 = (int)((long)P * (qc + 1) / py);
                size_t qn = (size_t)(r1 - r0) * (size_t)(c1 - c0);
                double *b = q == 0 ? mine : malloc((qn ? qn : 1) * sizeof *b);
                if (!b) DIE("out of memory");
                if (q) TRY(tern_recv(b, qn * sizeof *b, q, 99, TERN_COMM_WORLD, NULL));
                for (int i = r0; i < r1; i++)
                    for (int j = c0; j < c1; j++)
                        diff = fmax(diff, fabs(b[(size_t)(i - r0) * (c1 - c0) + (j - c0)] -
                                               sg.u[(size_t)(i + 1) * sg.ld + j + 1]));
                if (q) free(b);
            }
            printf("sor: serial %d iterations in %.3f s, max |u - u_serial| = %.3g\n", sit, s1 - s0,
                   diff);
            if (diff != 0) {
                fprintf(stderr, "sor: FAIL: parallel and serial solutions differ\n");
                bad = 1;
            }
            grid_free(&sg);
        } else {
            TRY(tern_send(mine, blk * sizeof *mine, 0, 99, TERN_COMM_WORLD));
        }
        free(mine);
    }
    if (rank == 0 && err > 10 * g.h * g.h) {
        fprintf(stderr, "sor: FAIL: error %.3g against the exact solution exceeds 10 h^2\n", err);
        bad = 1;
    }
    TRY(tern_bcast(&bad, sizeof bad, 0, TERN_COMM_WORLD));

    halo_close(&x);
    TRY(tern_conv_close(&rep_s));
    TRY(tern_conv_close(&ctl_r));
    if (rank == 0) {
        TRY(tern_conv_close(&rep_r));
        TRY(tern_conv_close(&ctl_s));
    }
    TRY(tern_barrier(TERN_COMM_WORLD));
    for (int s = 0; s < 4; s++) {
        free(x.out[s]);
        free(x.in[s]);
    }
    grid_free(&g);
    TRY(tern_finalize());
    return bad;
}
