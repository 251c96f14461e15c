/*
 * dropin.c - what running existing MPI programs (mpi4py's test suite) found wrong in
 * tern's MPI layer, written here as plain MPI:
 *   buffered sends into a buffer sized exactly as the standard says (MPI_Pack_size +
 *   MPI_BSEND_OVERHEAD per message), unaligned, with many messages in flight at once.
 */
#include <stdint.h>

#include "mpi_check.h"

static int size;

/* ---- buffered sends -------------------------------------------------------------------- */

#define BS_N 40

/* Message i's length in ints: odd sizes, a few past every eager threshold. */
static int bs_len(int i)
{
    return i % 10 == 9 ? 20000 + i : 1 + 3 * i;
}

static void test_bsend(void)
{
    int to = (mt_rank + 1) % size, from = (mt_rank + size - 1) % size;
    /* One message sized exactly, the buffer one byte off 16-byte alignment. */
    int ps = 0;
    OK(MPI_Pack_size(13, MPI_CHAR, MPI_COMM_WORLD, &ps));
    char *raw = malloc((size_t)ps + MPI_BSEND_OVERHEAD + 16);
    CHECK(raw != NULL);
    char *b1 = (char *)(((uintptr_t)raw + 16) & ~(uintptr_t)15) + 1;
    OK(MPI_Buffer_attach(b1, ps + MPI_BSEND_OVERHEAD));
    char m[13], r[13];
    for (int i = 0; i < 13; i++) m[i] = (char)(mt_rank * 13 + i);
    OK(MPI_Bsend(m, 13, MPI_CHAR, to, 5, MPI_COMM_WORLD));
    OK(MPI_Recv(r, 13, MPI_CHAR, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 13; i++) CHECK(r[i] == (char)(from * 13 + i));
    void *got = NULL;
    int gsize = -1;
    OK(MPI_Buffer_detach(&got, &gsize));
    CHECK(got == b1 && gsize == ps + MPI_BSEND_OVERHEAD);
    free(raw);

    /* BS_N messages of odd sizes all buffered before the receiver posts anything. */
    int total = 0;
    for (int i = 0; i < BS_N; i++) {
        OK(MPI_Pack_size(bs_len(i), MPI_INT, MPI_COMM_WORLD, &ps));
        total += ps + MPI_BSEND_OVERHEAD;
    }
    raw = malloc((size_t)total + 8);
    CHECK(raw != NULL);
    OK(MPI_Buffer_attach(raw + 3, total));
    int *msg = malloc(sizeof(int) * 20000 * 2), *in = malloc(sizeof(int) * 20000 * 2);
    CHECK(msg != NULL && in != NULL);
    for (int i = 0; i < BS_N; i++) {
        for (int k = 0; k < bs_len(i); k++) msg[k] = mt_rank * 1000000 + i * 50000 + k;
        OK(MPI_Bsend(msg, bs_len(i), MPI_INT, to, i, MPI_COMM_WORLD));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < BS_N; i++) {
        MPI_Status st;
        OK(MPI_Recv(in, bs_len(i), MPI_INT, from, i, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == bs_len(i));
        for (int k = 0; k < bs_len(i); k++)
            CHECKF(in[k] == from * 1000000 + i * 50000 + k, "message %d int %d", i, k);
    }
    OK(MPI_Buffer_detach(&got, &gsize));
    CHECK(got == raw + 3 && gsize == total);
    free(raw);
    free(msg);
    free(in);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_bsend();
    return mt_done("dropin");
}
