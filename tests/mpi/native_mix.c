/*
 * native_mix.c - MPI and the native API (tern.h) in one program, as when a library built
 * on tern.h runs inside an MPI program. The program links libtern and libtern_mpi (the
 * same library: tests/mpi/CMakeLists.txt links both names, libtern first) and must find
 * one core: MPI_Send is received by tern_recv and tern_send by MPI_Recv, checked byte for
 * byte, both orders of init and finalize. Were libtern_mpi a second copy of the core,
 * tern_init would start a second job in the process and the messages would never meet.
 *
 *   native_mix mpi_first     MPI_Init, tern_init joins; tern_finalize, MPI still works,
 *                            MPI_Finalize finalizes the core
 *   native_mix native_first  tern_init, MPI_Init joins; MPI_Finalize, tern.h still works,
 *                            tern_finalize finalizes the core
 * tern only (it uses tern.h): its tests.list lines carry arg=, so openmpi.sh skips them.
 */
#include <stdint.h>

#include "mpi_check.h"
#include "tern.h"

/* A tern.h call that must return `want`. */
#define TOK(expr, want)                                                                            \
    do {                                                                                           \
        int nm_rc_ = (expr);                                                                       \
        CHECKF(nm_rc_ == (want), "%s returned %d (%s), expected %d", #expr, nm_rc_,                \
               tern_err_name(nm_rc_), (want));                                                     \
    } while (0)

/* Sizes across the protocols: empty, eager, and large enough for rendezvous/streaming. */
static const size_t sizes[] = {0, 1, 7, 4096, 65536 + 3, 1u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static unsigned char pattern(int from, int round, size_t i)
{
    return (unsigned char)((size_t)from * 131u + (size_t)round * 17u + i * 7u + (i >> 9));
}

static void fill(unsigned char *b, size_t n, int from, int round)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(from, round, i);
}

static void check_bytes(const unsigned char *b, size_t n, int from, int round)
{
    for (size_t i = 0; i < n; i++)
        CHECKF(b[i] == pattern(from, round, i), "round %d from %d: byte %zu of %zu is %u", round,
               from, i, n, b[i]);
}

/* Ring exchange: MPI_Send to the right, tern_recv from the left; then tern_send to the
 * right, MPI_Recv from the left. MPI_COMM_WORLD and TERN_COMM_WORLD are one group. */
static void exchange(int rank, int size, int round)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *sb = malloc(sizes[NSIZES - 1] + 1), *rb = malloc(sizes[NSIZES - 1] + 16);
    CHECK(sb && rb);
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        int tag = 100 + (int)k + 16 * round;
        fill(sb, n, rank, round + (int)k);
        memset(rb, 0xee, n + 16);
        MPI_Request sreq;
        OK(MPI_Isend(sb, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sreq));
        tern_status_t st;
        TOK(tern_recv(rb, n + 16, left, tag, TERN_COMM_WORLD, &st), TERN_OK);
        CHECKF(st.bytes == n && st.source == left && st.tag == tag,
               "tern_recv status: %zu bytes from %d tag %d, expected %zu from %d tag %d",
               (size_t)st.bytes, st.source, st.tag, n, left, tag);
        check_bytes(rb, n, left, round + (int)k);
        CHECK(n == 0 || rb[n] == 0xee); /* nothing written past the message */
        OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

        fill(sb, n, rank, round + (int)k + 1);
        memset(rb, 0xee, n + 16);
        tern_request_t treq;
        TOK(tern_isend(sb, n, right, tag + 8, TERN_COMM_WORLD, &treq), TERN_OK);
        MPI_Status ms;
        OK(MPI_Recv(rb, (int)n + 16, MPI_BYTE, left, tag + 8, MPI_COMM_WORLD, &ms));
        int got = -1;
        MPI_Get_count(&ms, MPI_BYTE, &got);
        CHECKF(got == (int)n && ms.MPI_SOURCE == left, "MPI_Recv got %d bytes from %d", got,
               ms.MPI_SOURCE);
        check_bytes(rb, n, left, round + (int)k + 1);
        TOK(tern_wait(&treq, NULL), TERN_OK);
    }
    /* A typed message too: MPI_INT array to a native receive of the same bytes. */
    int ints[257];
    for (int i = 0; i < 257; i++)
        ints[i] = rank * 100000 + i * 3 - 77;
    MPI_Request sreq;
    OK(MPI_Isend(ints, 257, MPI_INT, right, 99, MPI_COMM_WORLD, &sreq));
    int in[257];
    TOK(tern_recv(in, sizeof in, left, 99, TERN_COMM_WORLD, NULL), TERN_OK);
    for (int i = 0; i < 257; i++)
        CHECKF(in[i] == left * 100000 + i * 3 - 77, "int %d is %d", i, in[i]);
    OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    int native_first = argc > 1 && strcmp(argv[1], "native_first") == 0;
    CHECK(argc > 1 && (native_first || strcmp(argv[1], "mpi_first") == 0));
    int flag = -1, rank, size;

    if (native_first) {
        /* A library started tern first: MPI must not think it is initialized. */
        TOK(tern_init(&argc, &argv), TERN_OK);
        OK(MPI_Initialized(&flag));
        CHECKF(flag == 0, "MPI_Initialized says %d after tern_init alone", flag);
        mt_init(&argc, &argv);
    } else {
        mt_init(&argc, &argv);
        CHECKF(tern_initialized() == 0, "tern_initialized() is 1 before tern_init");
        TOK(tern_init(&argc, &argv), TERN_OK);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(tern_initialized() == 1);
    TOK(tern_init(&argc, &argv), TERN_ERR_INIT);
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1);
    FAILS(MPI_Init(&argc, &argv), MPI_ERR_OTHER);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECKF(tern_rank() == rank && tern_size() == size, "tern says rank %d of %d, MPI %d of %d",
           tern_rank(), tern_size(), rank, size);

    exchange(rank, size, 0);
    /* Collectives of both on the one world. */
    int64_t v = rank + 1, sum = 0;
    TOK(tern_allreduce(&v, &sum, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD), TERN_OK);
    CHECK(sum == (int64_t)size * (size + 1) / 2);
    long mv = rank + 1, msum = 0;
    OK(MPI_Allreduce(&mv, &msum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(msum == (long)size * (size + 1) / 2);

    if (native_first) {
        /* MPI leaves first; the core stays up for tern.h. */
        OK(MPI_Finalize());
        OK(MPI_Finalized(&flag));
        CHECK(flag == 1);
        OK(MPI_Initialized(&flag));
        CHECK(flag == 1);
        CHECK(tern_initialized() == 1);
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        unsigned char sb[3000], rb[3000];
        fill(sb, sizeof sb, rank, 42);
        tern_request_t r;
        TOK(tern_isend(sb, sizeof sb, right, 5, TERN_COMM_WORLD, &r), TERN_OK);
        TOK(tern_recv(rb, sizeof rb, left, 5, TERN_COMM_WORLD, NULL), TERN_OK);
        TOK(tern_wait(&r, NULL), TERN_OK);
        check_bytes(rb, sizeof rb, left, 42);
        TOK(tern_barrier(TERN_COMM_WORLD), TERN_OK);
        TOK(tern_finalize(), TERN_OK);
        TOK(tern_finalize(), TERN_ERR_FINALIZED);
        if (rank == 0) printf("native_mix native_first: ok\n");
        return 0;
    }
    /* tern.h leaves first; MPI keeps working on the core. */
    TOK(tern_finalize(), TERN_OK);
    CHECK(tern_initialized() == 0);
    TOK(tern_finalize(), TERN_ERR_FINALIZED);
    TOK(tern_init(&argc, &argv), TERN_ERR_FINALIZED);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int token = rank * 7 + 1, got = -1;
    OK(MPI_Sendrecv(&token, 1, MPI_INT, right, 6, &got, 1, MPI_INT, left, 6, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(got == left * 7 + 1);
    OK(MPI_Finalized(&flag));
    CHECK(flag == 0);
    return mt_done("native_mix mpi_first") == 0 ? 0 : 1;
}
