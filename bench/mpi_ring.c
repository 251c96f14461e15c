/*
 * mpi_ring.c - an 8-byte token passed around a ring of N processes; reports the
 * time per hop. Uses MPI (MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv; --sync: MPI_Ssend/MPI_Issend);
 * built by bench/compare.sh with each MPI's mpicc, not by CMake. The loop and the timing live in
 * patterns.h, shared with the other libraries' versions.
 */
#include "prims_mpi.h"

#include "patterns.h"

int main(int argc, char **argv)
{
    return bench_ring_main(argc, argv);
}
