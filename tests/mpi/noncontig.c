/*
 * noncontig.c - point-to-point messages between non-contiguous datatypes: contiguous,
 * vector, indexed (blocks out of address order), struct (with a nested vector), resized
 * (negative lower bound) and hindexed layouts of the same type signature (ints), every
 * pair of them on the two sides, at sizes across the eager/rendezvous thresholds of shm
 * (60 KiB) and tcp (256 KiB) and up to 4 MiB; receives posted first and unexpected ones.
 * Each rank sends to its right neighbour (itself on one rank). Checked byte for byte,
 * including that the gaps of the receive buffer, and the bytes around it, are untouched.
 * A receive into a shorter layout fails with MPI_ERR_TRUNCATE and writes nothing outside
 * its buffer.
 *
 * On tern (TERN_MPI) it also reads the MPI layer's counter of packed temporaries: a
 * rendezvous-sized message and any message a contiguous sender sends must move with
 * none (the core gathers, scatters, or pulls between the blocks).
 */
#include <stdint.h>

#include "mpi_check.h"

enum {
    K_CONTIG,
    K_VECTOR,
    K_INDEXED,
    K_STRUCT,
    K_RESIZED,
    K_HINDEXED,
    K_HVEC_OF_IDX,
    K_BIGVEC,
    K_N
};
static const char *kname[K_N] = {
    "contig",  "vector",   "indexed",          "struct",
    "resized", "hindexed", "hvector(indexed)", "vector of 4 big blocks"};

/* Sizes in ints: all multiples of 60 (every layout's ints per instance divides them). */
static const int sizes[] = {60, 1020, 15300, 15420, 65520, 65580, 1048560};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define PAD    64 /* sentinel bytes before and after the layout's span */

struct lay {
    MPI_Datatype type;
    int count;
    size_t *pos; /* byte offset of int k from the buffer */
    size_t span; /* bytes from the buffer to the end of the last int */
};

/* Build layout `kind` holding n ints, with its own idea of where each int lies. */
static void lay_make(int kind, int n, struct lay *L)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, sub;
    L->pos = malloc((size_t)n * sizeof *L->pos);
    CHECK(L->pos != NULL);
    switch (kind) {
    case K_CONTIG:
        t = MPI_INT;
        L->count = n;
        for (int k = 0; k < n; k++)
            L->pos[k] = 4 * (size_t)k;
        break;
    case K_VECTOR: /* blocks of 3 ints every 5 */
        OK(MPI_Type_vector(n / 3, 3, 5, MPI_INT, &t));
        L->count = 1;
        for (int k = 0; k < n; k++)
            L->pos[k] = 4 * ((size_t)(k / 3) * 5 + (size_t)(k % 3));
        break;
    case K_INDEXED: { /* 10 ints per instance, blocks not in address order; extent 14 ints */
        int bl[4] = {1, 4, 2, 3}, dp[4] = {13, 0, 6, 9};
        OK(MPI_Type_indexed(4, bl, dp, MPI_INT, &t));
        L->count = n / 10;
        for (int k = 0; k < n; k++) {
            int i = k / 10, j = k % 10, b = 0;
            while (j >= bl[b])
                j -= bl[b++];
            L->pos[k] = 4 * ((size_t)i * 14 + (size_t)dp[b] + (size_t)j);
        }
        break;
    }
    case K_STRUCT: { /* 2 ints at 0; a vector (ints at +0, +12) at 16; 2 ints at 40 */
        OK(MPI_Type_vector(2, 1, 3, MPI_INT, &sub));
        int bl[3] = {2, 1, 2};
        MPI_Aint dp[3] = {0, 16, 40};
        MPI_Datatype ty[3] = {MPI_INT, sub, MPI_INT};
        OK(MPI_Type_create_struct(3, bl, dp, ty, &t));
        OK(MPI_Type_free(&sub));
        MPI_Aint lb, ext;
        OK(MPI_Type_get_extent(t, &lb, &ext));
        CHECK(lb == 0 && ext == 48);
        static const size_t off[6] = {0, 4, 16, 28, 40, 44};
        L->count = n / 6;
        for (int k = 0; k < n; k++)
            L->pos[k] = (size_t)(k / 6) * 48 + off[k % 6];
        break;
    }
    case K_RESIZED: /* 2 ints, instances 20 bytes apart, lower bound -4 */
        OK(MPI_Type_contiguous(2, MPI_INT, &sub));
        OK(MPI_Type_create_resized(sub, -4, 20, &t));
        OK(MPI_Type_free(&sub));
        L->count = n / 2;
        for (int k = 0; k < n; k++)
            L->pos[k] = (size_t)(k / 2) * 20 + 4 * (size_t)(k % 2);
        break;
    case K_HINDEXED: { /* 12 ints per instance: 5 at byte 72, 4 at 36, 3 at 0; extent 92 */
        int bl[3] = {5, 4, 3};
        MPI_Aint dp[3] = {72, 36, 0};
        OK(MPI_Type_create_hindexed(3, bl, dp, MPI_INT, &t));
        L->count = n / 12;
        for (int k = 0; k < n; k++) {
            int i = k / 12, j = k % 12, b = 0;
            while (j >= bl[b])
                j -= bl[b++];
            L->pos[k] = (size_t)i * 92 + (size_t)dp[b] + 4 * (size_t)j;
        }
        break;
    }
    case K_HVEC_OF_IDX: { /* large blocks: 2 blocks of 30 ints inside 64, hvector of them */
        int bl[2] = {30, 30}, dp[2] = {34, 0};
        OK(MPI_Type_indexed(2, bl, dp, MPI_INT, &sub));
        OK(MPI_Type_create_hvector(n / 60, 1, 64 * 4, sub, &t));
        OK(MPI_Type_free(&sub));
        L->count = 1;
        for (int k = 0; k < n; k++) {
            int i = k / 60, j = k % 60;
            L->pos[k] = (size_t)i * 256 + 4 * (size_t)(j < 30 ? 34 + j : j - 30);
        }
        break;
    }
    case K_BIGVEC: /* 4 blocks of n/4 ints, 7 ints apart: blocks up to 1 MiB */
        OK(MPI_Type_vector(4, n / 4, n / 4 + 7, MPI_INT, &t));
        L->count = 1;
        for (int k = 0; k < n; k++)
            L->pos[k] = 4 * ((size_t)(k / (n / 4)) * (size_t)(n / 4 + 7) + (size_t)(k % (n / 4)));
        break;
    }
    if (kind != K_CONTIG) OK(MPI_Type_commit(&t));
    L->type = t;
    L->span = 0;
    for (int k = 0; k < n; k++)
        if (L->pos[k] + 4 > L->span) L->span = L->pos[k] + 4;
}

static void lay_free(struct lay *L)
{
    if (L->type != MPI_INT) OK(MPI_Type_free(&L->type));
    free(L->pos);
}

static int value(int src, int n, int k)
{
    return (int)(0x5a000000u ^ (unsigned)src << 20 ^ (unsigned)n ^ (unsigned)k * 2654435761u);
}

/* The int values a message carries, placed where L puts them (the rest: sentinel). */
static unsigned char *buf_make(const struct lay *L, int n, int src)
{
    unsigned char *b = malloc(L->span + 2 * PAD);
    CHECK(b != NULL);
    memset(b, 0xee, L->span + 2 * PAD);
    if (src >= 0)
        for (int k = 0; k < n; k++) {
            int v = value(src, n, k);
            memcpy(b + PAD + L->pos[k], &v, 4);
        }
    return b;
}

/* Every int where it belongs, every other byte still the sentinel. */
static void buf_check(unsigned char *b, const struct lay *L, int n, int src, const char *what)
{
    for (int k = 0; k < n; k++) {
        int v;
        memcpy(&v, b + PAD + L->pos[k], 4);
        CHECKF(v == value(src, n, k), "%s: int %d of %d at byte %zu is %#x, expected %#x", what, k,
               n, L->pos[k], (unsigned)v, (unsigned)value(src, n, k));
        memset(b + PAD + L->pos[k], 0xee, 4);
    }
    for (size_t i = 0; i < L->span + 2 * PAD; i++)
        CHECKF(b[i] == 0xee, "%s: byte %ld of the receive buffer (a gap) was written", what,
               (long)i - PAD);
}

static long long temporaries(void)
{
#ifdef TERN_MPI
    return tern_mpi_stat("p2p_temporaries");
#else
    return 0;
#endif
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (mt_rank + 1) % size, left = (mt_rank + size - 1) % size;
#ifdef TERN_MPI
    CHECK(tern_mpi_stat("p2p_temporaries") >= 0 && tern_mpi_stat("no such counter") == -1);
#endif
    int exchanges = 0;
    for (int si = 0; si < NSIZES; si++) {
        int n = sizes[si];
        for (int sk = 0; sk < K_N; sk++)
            for (int rk = 0; rk < K_N; rk++) {
                /* The largest size: every layout against itself and its neighbour. */
                if (si == NSIZES - 1 && rk != sk && rk != (sk + 1) % K_N) continue;
                struct lay S, R;
                lay_make(sk, n, &S);
                lay_make(rk, n, &R);
                unsigned char *sb = buf_make(&S, n, mt_rank), *rb = buf_make(&R, n, -1);
                int unexpected = (exchanges++ + si) % 2;
                long long t0 = temporaries();
                MPI_Request rq[2];
                MPI_Status st;
                if (!unexpected) { /* receive posted before the send starts */
                    OK(MPI_Irecv(rb + PAD, R.count, R.type, left, si, MPI_COMM_WORLD, &rq[0]));
                    OK(MPI_Barrier(MPI_COMM_WORLD));
                    OK(MPI_Isend(sb + PAD, S.count, S.type, right, si, MPI_COMM_WORLD, &rq[1]));
                    OK(MPI_Wait(&rq[0], &st));
                    OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
                } else { /* the message (or its rendezvous request) waits for the receive */
                    OK(MPI_Isend(sb + PAD, S.count, S.type, right, si, MPI_COMM_WORLD, &rq[1]));
                    OK(MPI_Barrier(MPI_COMM_WORLD));
                    OK(MPI_Recv(rb + PAD, R.count, R.type, left, si, MPI_COMM_WORLD, &st));
                    OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
                }
                long long made = temporaries() - t0;
                char what[96];
                snprintf(what, sizeof what, "%d ints %s -> %s (%s)", n, kname[sk], kname[rk],
                         unexpected ? "unexpected" : "posted");
                int got = -1;
                OK(MPI_Get_count(&st, MPI_INT, &got));
                CHECKF(got == n && st.MPI_SOURCE == left && st.MPI_TAG == si, "%s: count %d", what,
                       got);
                buf_check(rb, &R, n, left, what);
                /* Sender's data is untouched too. */
                for (int k = 0; k < n; k += 97) {
                    int v;
                    memcpy(&v, sb + PAD + S.pos[k], 4);
                    CHECKF(v == value(mt_rank, n, k), "%s: the send buffer changed", what);
                }
                /* No packed copy: for rendezvous-sized messages on any default transport
                 * (> 256 KiB), and ever for a contiguous sender (receives never pack). */
                if ((size_t)n * 4 > 262144 || sk == K_CONTIG)
                    CHECKF(made == 0, "%s: %lld packed temporaries made", what, made);
                free(sb);
                free(rb);
                lay_free(&S);
                lay_free(&R);
            }
    }

    /* Absolute addresses: two separate arrays on each side, a rendezvous-sized message
     * sent from and received at MPI_BOTTOM (the blocks' offsets are their addresses). */
    {
        enum { A = 50000, B = 30000 }; /* 320 KB in all */
        int *s1 = malloc(A * sizeof(int)), *s2 = malloc(B * sizeof(int));
        int *r1 = malloc((B + 16) * sizeof(int)), *r2 = malloc((A + 16) * sizeof(int));
        CHECK(s1 && s2 && r1 && r2);
        for (int i = 0; i < A; i++)
            s1[i] = value(mt_rank, A, i);
        for (int i = 0; i < B; i++)
            s2[i] = value(mt_rank, B, i);
        memset(r1, 0xee, (B + 16) * sizeof(int));
        memset(r2, 0xee, (A + 16) * sizeof(int));
        MPI_Aint sd[2], rd[2];
        OK(MPI_Get_address(s1, &sd[0]));
        OK(MPI_Get_address(s2, &sd[1]));
        OK(MPI_Get_address(r1 + 8, &rd[0])); /* the first B ints land in r1, the rest in r2 */
        OK(MPI_Get_address(r2 + 8, &rd[1]));
        int sbl[2] = {A, B}, rbl[2] = {B, A};
        MPI_Datatype st, rt;
        OK(MPI_Type_create_hindexed(2, sbl, sd, MPI_INT, &st));
        OK(MPI_Type_create_hindexed(2, rbl, rd, MPI_INT, &rt));
        OK(MPI_Type_commit(&st));
        OK(MPI_Type_commit(&rt));
        long long t0 = temporaries();
        MPI_Request rq;
        OK(MPI_Irecv(MPI_BOTTOM, 1, rt, left, 50, MPI_COMM_WORLD, &rq));
        OK(MPI_Send(MPI_BOTTOM, 1, st, right, 50, MPI_COMM_WORLD));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECKF(temporaries() == t0, "MPI_BOTTOM: %lld packed temporaries", temporaries() - t0);
        for (int k = 0; k < A + B; k++) {
            int want = k < A ? value(left, A, k) : value(left, B, k - A);
            int got = k < B ? r1[8 + k] : r2[8 + k - B];
            CHECKF(got == want, "MPI_BOTTOM: int %d is %#x, expected %#x", k, (unsigned)got,
                   (unsigned)want);
        }
        for (int i = 0; i < 8; i++)
            CHECK(r1[i] == (int)0xeeeeeeee && r1[B + 8 + i] == (int)0xeeeeeeee &&
                  r2[i] == (int)0xeeeeeeee && r2[A + 8 + i] == (int)0xeeeeeeee);
        OK(MPI_Type_free(&st));
        OK(MPI_Type_free(&rt));
        free(s1);
        free(s2);
        free(r1);
        free(r2);
    }

    /* Truncation: a receive of half the ints into a vector; nothing written outside it. */
    for (int si = 0; si < NSIZES - 1; si++) {
        int n = sizes[si];
        struct lay S, R;
        lay_make(K_INDEXED, n, &S);
        lay_make(K_VECTOR, n / 2, &R);
        unsigned char *sb = buf_make(&S, n, mt_rank), *rb = buf_make(&R, n / 2, -1);
        MPI_Request rq;
        OK(MPI_Isend(sb + PAD, S.count, S.type, right, 100 + si, MPI_COMM_WORLD, &rq));
        MPI_Status st;
        FAILS(MPI_Recv(rb + PAD, R.count, R.type, left, 100 + si, MPI_COMM_WORLD, &st),
              MPI_ERR_TRUNCATE);
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < PAD; i++)
            CHECKF(rb[i] == 0xee && rb[PAD + R.span + i] == 0xee,
                   "truncated %d ints: written outside the receive buffer", n);
        free(sb);
        free(rb);
        lay_free(&S);
        lay_free(&R);
    }
    return mt_done("noncontig");
}
