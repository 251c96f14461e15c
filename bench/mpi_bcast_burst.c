/*
 * mpi_bcast_burst.c - back-to-back small MPI_Bcast from rank 0 in bursts of 32 calls,
 * each burst timed on every rank; prints the slowest rank's time per call at the best,
 * 10th-percentile and median burst, and the context switches per call (getrusage,
 * summed over ranks). Plain MPI: build it with terncc, mpicc.openmpi or mpicc.mpich.
 *
 * Why bursts: with more ranks than cores (4 on 2) on a shared machine, a mean over
 * thousands of calls mostly measures whoever else holds the CPUs; a burst of 32 calls is
 * short enough that the best and 10th-percentile bursts show the library's own cost,
 * and the context switches per call show whether the readers take the calls in batches
 * or one at a time. Every call's data is checked.
 *
 * usage: mpirun -n 4 mpi_bcast_burst [label [bursts [bytes]]]   (defaults: lib 300 8)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define BURST 32

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *label = argc > 1 ? argv[1] : "lib";
    int nb = argc > 2 ? atoi(argv[2]) : 300;
    int n = argc > 3 ? atoi(argv[3]) : 8;
    if (nb < 10 || n < 1 || n > 4096) {
        if (me == 0) fprintf(stderr, "usage: %s [label [bursts>=10 [bytes 1-4096]]]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char buf[4096];
    double *t = malloc(sizeof(double) * (size_t)nb), *all = malloc(sizeof(double) * (size_t)nb);
    struct rusage r0, r1;
    long call = 0;
    for (int k = -20; k < nb; k++) { /* 20 warm-up bursts */
        if (k == 0) getrusage(RUSAGE_SELF, &r0);
        double t0 = now();
        for (int i = 0; i < BURST; i++, call++) {
            memset(buf, me == 0 ? (int)(call & 0xff) : 0xee, (size_t)n);
            MPI_Bcast(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD);
            for (int j = 0; j < n; j++)
                if (buf[j] != (unsigned char)(call & 0xff)) {
                    fprintf(stderr, "rank %d: call %ld byte %d is %u\n", me, call, j, buf[j]);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
        }
        if (k >= 0) t[k] = now() - t0;
    }
    getrusage(RUSAGE_SELF, &r1);
    MPI_Reduce(t, all, nb, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    long cs = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw), tot = 0;
    MPI_Reduce(&cs, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        qsort(all, (size_t)nb, sizeof *all, cmp_double);
        printf("%s ranks=%d bcast %d B: best %.3f p10 %.3f median %.3f us/call, "
               "context switches/call %.3f\n",
               label, np, n, all[0] / BURST * 1e6, all[nb / 10] / BURST * 1e6,
               all[nb / 2] / BURST * 1e6, (double)tot / nb / BURST);
    }
    free(t);
    free(all);
    MPI_Finalize();
    return 0;
}
