/*
 * hello.c - the README's example: every rank sends a greeting around a ring and
 * rank 0 checks the token that comes back.
 */
#include <stdio.h>
#include <string.h>
#include <tern.h>

int main(int argc, char **argv)
{
    int rc = tern_init(&argc, &argv);
    if (rc) {
        fprintf(stderr, "tern_init: %s\n", tern_strerror(rc));
        return 1;
    }
    int rank = tern_rank(), size = tern_size();
    long token = 0;
    if (rank == 0) {
        long first = 1;
        tern_request_t req;
        /* Non-blocking, so a job of one rank can send to itself and then receive. */
        tern_isend(&first, sizeof first, 1 % size, 0, TERN_COMM_WORLD, &req);
        tern_recv(&token, sizeof token, size - 1, 0, TERN_COMM_WORLD, NULL);
        tern_wait(&req, NULL);
        printf("tern: %d ranks, token came back as %ld (expected %d)\n", size, token, size);
    } else {
        tern_recv(&token, sizeof token, rank - 1, 0, TERN_COMM_WORLD, NULL);
        token++;
        tern_send(&token, sizeof token, (rank + 1) % size, 0, TERN_COMM_WORLD);
    }
    rc = tern_finalize();
    return rc == 0 && (rank != 0 || token == size) ? 0 : 1;
}
