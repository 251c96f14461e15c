/*
 * mpi_pingpong.c - ping-pong latency/bandwidth and streaming bandwidth over
 * MPI (MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv; --sync: MPI_Ssend/MPI_Issend); built by
 * bench/compare.sh with each MPI's mpicc, not by CMake. The loops and the timing live in
 * patterns.h, shared with the other libraries' versions so that every library is measured the same
 * way. Run with 2 processes.
 */
#include "prims_mpi.h"

#include "patterns.h"

int main(int argc, char **argv)
{
    return bench_pingpong_main(argc, argv);
}
