/*
 * mpi_initfini.c - MPI_Init + MPI_Finalize and nothing else: the MPI side of the
 * startup comparison in bench/compare.sh (see tern_initfini.c).
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
