/*
 * mpi_startup.c - job start-up only: the launcher's spawn (launch) and MPI_Init (init:
 * the PMI exchange and transport set-up), the slowest rank of each, then MPI_Finalize.
 * Built with terncc and mpicc.openmpi by bench/startup.sh, which exports STARTUP_T0,
 * the wall-clock time (s since the epoch) just before it started the launcher.
 * Rank 0 prints "launch <us>" and "init <us>".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double wall(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    double t_main = wall();
    const char *t0s = getenv("STARTUP_T0");
    double t0 = t0s ? atof(t0s) : t_main;
    MPI_Init(&argc, &argv);
    double t[2] = {t_main - t0, wall() - t_main}, worst[2];
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Reduce(t, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0) printf("launch %.0f\ninit %.0f\n", worst[0] * 1e6, worst[1] * 1e6);
    MPI_Finalize();
    return 0;
}
