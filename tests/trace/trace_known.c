/*
 * trace_known.c - a program whose calls and messages are known exactly, for the tracing
 * tests (run_trace_test.sh checks its trace with check_trace.py and otf2-print).
 *
 * Every rank of an N-rank job (N >= 2), after MPI_Comm_rank and MPI_Comm_size:
 *   ROUNDS times: MPI_Isend of 25 ints (100 bytes, tag 7) to the next rank in a ring,
 *                 MPI_Recv of the same from the previous rank, MPI_Wait for the send;
 *   once more with 32768 ints (128 KiB, tag 9: rendezvous on shm);
 *   3 x MPI_Allreduce of one double (MPI_SUM);
 *   2 x MPI_Bcast of 16 ints (64 bytes) from root 1;
 *   1 x MPI_Barrier.
 * With TRACE_KNOWN_PAUSE_MS set, every rank sleeps that long before the barrier (a gap
 * between records too long for a 32-bit delta: the tracer must write the absolute time).
 * All data is checked; the trace must hold exactly these calls and the N * ROUNDS ring
 * + N large messages on MPI_COMM_WORLD (test_trace.py).
 */
#include <stdlib.h>
#include <unistd.h>

#include "../mpi/mpi_check.h"

#define ROUNDS 5

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECKF(np >= 2, "needs at least 2 ranks, got %d", np);
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    for (int k = 0; k < ROUNDS; k++) {
        int out[25], in[25];
        for (int i = 0; i < 25; i++)
            out[i] = me * 1000 + k * 100 + i;
        MPI_Request rq;
        CHECK(MPI_Isend(out, 25, MPI_INT, next, 7, MPI_COMM_WORLD, &rq) == MPI_SUCCESS);
        CHECK(MPI_Recv(in, 25, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        for (int i = 0; i < 25; i++)
            CHECKF(in[i] == prev * 1000 + k * 100 + i, "round %d: in[%d] = %d", k, i, in[i]);
    }
    {
        static int big_out[32768], big_in[32768];
        for (int i = 0; i < 32768; i++)
            big_out[i] = me * 100000 + i;
        MPI_Request rq;
        CHECK(MPI_Isend(big_out, 32768, MPI_INT, next, 9, MPI_COMM_WORLD, &rq) == MPI_SUCCESS);
        CHECK(MPI_Recv(big_in, 32768, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
        CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        for (int i = 0; i < 32768; i++)
            CHECKF(big_in[i] == prev * 100000 + i, "big: in[%d] = %d", i, big_in[i]);
    }
    for (int k = 0; k < 3; k++) {
        double x = me + k, sum = 0;
        CHECK(MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
        CHECKF(sum == (double)np * (np - 1) / 2 + (double)np * k, "allreduce %d: %g", k, sum);
    }
    for (int k = 0; k < 2; k++) {
        int b[16];
        for (int i = 0; i < 16; i++)
            b[i] = me == 1 ? 500 + k * 16 + i : -1;
        CHECK(MPI_Bcast(b, 16, MPI_INT, 1, MPI_COMM_WORLD) == MPI_SUCCESS);
        for (int i = 0; i < 16; i++)
            CHECKF(b[i] == 500 + k * 16 + i, "bcast %d: b[%d] = %d", k, i, b[i]);
    }
    const char *pause = getenv("TRACE_KNOWN_PAUSE_MS");
    if (pause != NULL) usleep((useconds_t)atoi(pause) * 1000u);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    return mt_done("trace_known");
}
