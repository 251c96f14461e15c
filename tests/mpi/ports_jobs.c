/*
 * ports_jobs.c - an MPI port of another job (run by ports_jobs.sh as two ternrun jobs):
 *   ports_jobs open FILE     world rank 0 opens a port and writes its name to FILE, then
 *                            waits (at most 60 s) for FILE.done before closing it.
 *   ports_jobs connect FILE  reads the name from FILE (waiting for it at most 60 s) and
 *                            connects to it with all of MPI_COMM_WORLD: every rank must
 *                            get MPI_ERR_PORT (connecting across jobs is unsupported,
 *                            docs/MPI.md) within 5 s, not wait; then writes FILE.done.
 */
#include <time.h>
#include <unistd.h>

#include "mpi_check.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wait for path to exist, at most 60 s. */
static int wait_file(const char *path)
{
    for (double t0 = now(); now() - t0 < 60.0; usleep(10000))
        if (access(path, F_OK) == 0) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    CHECKF(argc == 3, "usage: ports_jobs open|connect FILE");
    const char *file = argv[2];
    char done[4096], port[MPI_MAX_PORT_NAME] = "";
    snprintf(done, sizeof done, "%s.done", file);
    if (strcmp(argv[1], "open") == 0) {
        if (mt_rank == 0) {
            OK(MPI_Open_port(MPI_INFO_NULL, port));
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", file);
            FILE *f = fopen(tmp, "w");
            CHECK(f != NULL);
            fprintf(f, "%s\n", port);
            CHECK(fclose(f) == 0 && rename(tmp, file) == 0);
            CHECKF(wait_file(done), "no %s within 60 s", done);
            OK(MPI_Close_port(port));
        }
        return mt_done("ports_jobs open");
    }
    CHECKF(strcmp(argv[1], "connect") == 0, "unknown mode %s", argv[1]);
    if (mt_rank == 0) {
        CHECKF(wait_file(file), "no %s within 60 s", file);
        FILE *f = fopen(file, "r");
        CHECK(f != NULL && fgets(port, sizeof port, f) != NULL);
        fclose(f);
        port[strcspn(port, "\n")] = '\0';
    }
    OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
    CHECKF(strncmp(port, "tern-port:", 10) == 0, "port name %s", port);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm inter = MPI_COMM_NULL;
    double t0 = now();
    FAILS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), MPI_ERR_PORT);
    double dt = now() - t0;
    CHECKF(dt < 5.0, "MPI_Comm_connect took %.2f s to fail", dt);
    CHECK(inter == MPI_COMM_NULL);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        printf("connect to %s: MPI_ERR_PORT after %.3f s\n", port, dt);
        FILE *f = fopen(done, "w");
        CHECK(f != NULL && fclose(f) == 0);
    }
    return mt_done("ports_jobs connect");
}
