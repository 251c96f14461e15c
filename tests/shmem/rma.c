/*
 * rma.c - put and get of every size between every pair of PEs (self included), through
 * every entry point (putmem/getmem, _nbi, sized, typed, _p/_g, iput/iget), into the
 * symmetric heap and into global variables, each byte checked against a pattern that
 * names the writer, the size and the round.
 */
#include "shmem_check.h"

#define MAXSZ  (4u << 20) /* fragments over tcp: frames are 512 KiB */
#define GLOBSZ 4096

static char gbuf[16][GLOBSZ]; /* symmetric: a global, one slot per writer */
static char gsrc[GLOBSZ];

static const size_t sizes[] = {0,     1,      2,      3,       7,        8,        9,
                               63,    64,     65,     1000,    4096,     4097,     65536,
                               65537, 524288, 524289, 1000000, 3u << 20, MAXSZ - 5};

static void test_sizes(char *dst, char *src_heap, char *local)
{
    int n = sh_n, me = sh_me;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t sz = sizes[si];
        if ((size_t)n * MAXSZ > 64u << 20 && sz > (1u << 20)) continue;
        MP_WHERE("put size %zu", sz);
        mp_fill(local, sz, mp_seed(sz, 1, (uint64_t)me, 0));
        int variant = (int)(si % 4);
        for (int t = 0; t < n; t++) {
            char *d = dst + (size_t)me * MAXSZ;
            switch (variant) {
            case 0:
                shmem_putmem(d, local, sz, t);
                break;
            case 1:
                shmem_putmem_nbi(d, local, sz, t);
                break;
            case 2:
                shmem_put8(d, local, sz / 2, t);
                shmem_put8_nbi(d + sz / 2, local + sz / 2, sz - sz / 2, t);
                break;
            default:
                shmem_char_put(d, local, sz, t);
            }
        }
        if (variant == 1) shmem_quiet();
        shmem_barrier_all();
        for (int s = 0; s < n; s++)
            CHECK_PATTERN(dst + (size_t)s * MAXSZ, sz, mp_seed(sz, 1, (uint64_t)s, 0),
                          "put of %zu bytes from PE %d (variant %d)", sz, s, variant);

        MP_WHERE("get size %zu", sz);
        mp_fill(src_heap, sz, mp_seed(sz, 2, (uint64_t)me, 0));
        shmem_barrier_all();
        for (int t = 0; t < n; t++) {
            memset(local, 0x5a, sz + 16);
            if (variant == 1) {
                shmem_getmem_nbi(local, src_heap, sz, t);
                shmem_quiet();
            } else if (variant == 2 && sz % 8 == 0) {
                shmem_get64(local, src_heap, sz / 8, t);
            } else {
                shmem_getmem(local, src_heap, sz, t);
            }
            CHECK_PATTERN(local, sz, mp_seed(sz, 2, (uint64_t)t, 0), "get of %zu bytes from PE %d",
                          sz, t);
            for (int g = 0; g < 16; g++)
                CHECKF((uint8_t)local[sz + g] == 0x5a, "get of %zu bytes wrote past the end", sz);
        }
        shmem_barrier_all();
    }
}

/* Globals (static storage): symmetric through the executable's load base. */
static void test_globals(void)
{
    MP_WHERE("globals");
    int n = sh_n, me = sh_me;
    char local[GLOBSZ];
    mp_fill(gsrc, GLOBSZ, mp_seed(7, 7, (uint64_t)me, 0));
    mp_fill(local, GLOBSZ, mp_seed(8, 8, (uint64_t)me, 0));
    shmem_barrier_all();
    for (int t = 0; t < n; t++)
        shmem_putmem(gbuf[me % 16], local, GLOBSZ - (size_t)t, t);
    shmem_barrier_all();
    for (int s = 0; s < n && s < 16; s++)
        CHECK_PATTERN(gbuf[s], GLOBSZ - (size_t)me, mp_seed(8, 8, (uint64_t)s, 0),
                      "put into a global from PE %d", s);
    for (int t = 0; t < n; t++) {
        shmem_getmem(local, gsrc, GLOBSZ, t);
        CHECK_PATTERN(local, GLOBSZ, mp_seed(7, 7, (uint64_t)t, 0), "get of a global from PE %d",
                      t);
    }
    shmem_barrier_all();
}

/* Bytes of a T that survive a trip by value (a long double keeps 10 of its 16). */
#define VALBYTES(T) (((T)0.5 != 0 && sizeof(T) > 8) ? 10 : sizeof(T))

/* Every typed entry point once: put, get, p, g, iput, iget, nbi. */
#define TYPED(N, T)                                                                                \
    do {                                                                                           \
        MP_WHERE("typed " #N);                                                                     \
        T *h = shmem_malloc(64 * sizeof(T));                                                       \
        CHECK(h != NULL);                                                                          \
        T src[64], got[64], want[64];                                                              \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        mp_fill(src, sizeof src, mp_seed(sizeof(T), 3, (uint64_t)me, __LINE__));                   \
        memset(h, 0, 64 * sizeof(T));                                                              \
        shmem_barrier_all();                                                                       \
        shmem_##N##_put(h, src, 16, right);                                                        \
        shmem_##N##_put_nbi(h + 16, src + 16, 8, right);                                           \
        shmem_##N##_p(h + 24, src[24], right);                                                     \
        shmem_##N##_iput(h + 32, src + 32, 2, 3, 8, right); /* h[32+2i] = src[32+3i] */            \
        shmem_barrier_all();                                                                       \
        mp_fill(want, sizeof want, mp_seed(sizeof(T), 3, (uint64_t)left, __LINE__));               \
        CHECK(memcmp(h, want, 24 * sizeof(T)) == 0);                                               \
        /* A long double passed by value goes through an x87 register: 10 value bytes. */          \
        CHECK(memcmp(&h[24], &want[24], VALBYTES(T)) == 0);                                        \
        for (int i = 0; i < 8; i++)                                                                \
            CHECK(memcmp(&h[32 + 2 * i], &want[32 + 3 * i], sizeof(T)) == 0);                      \
        memset(got, 0, sizeof got);                                                                \
        shmem_##N##_get(got, h, 16, right);                                                        \
        shmem_##N##_get_nbi(got + 16, h + 16, 8, right);                                           \
        shmem_quiet();                                                                             \
        got[24] = shmem_##N##_g(h + 24, right);                                                    \
        mp_fill(want, sizeof want, mp_seed(sizeof(T), 3, (uint64_t)me, __LINE__));                 \
        CHECK(memcmp(got, want, 24 * sizeof(T)) == 0);                                             \
        /* A long double comes back in an x87 register: only its 10 value bytes survive. */        \
        CHECK(memcmp(&got[24], &want[24], ((T)0.5 != 0 && sizeof(T) > 8) ? 10 : sizeof(T)) == 0);  \
        shmem_##N##_iget(got + 32, h + 32, 3, 2, 8, right); /* got[32+3i] = h[32+2i] */            \
        for (int i = 0; i < 8; i++)                                                                \
            CHECK(memcmp(&got[32 + 3 * i], &want[32 + 3 * i], sizeof(T)) == 0);                    \
        shmem_free(h);                                                                             \
    } while (0)

static void test_typed(void)
{
    int n = sh_n, me = sh_me;
#define TYPED_ONE(N, T) TYPED(N, T);
    SHMEM__RMA_TYPES(TYPED_ONE)
}

int main(void)
{
    sh_init();
    char *dst = shmem_malloc((size_t)sh_n * MAXSZ);
    char *src_heap = shmem_malloc(MAXSZ);
    char *local = mp_malloc(MAXSZ + 16);
    CHECK(dst != NULL && src_heap != NULL);
    test_sizes(dst, src_heap, local);
    test_globals();
    test_typed();
    free(local);
    shmem_free(src_heap);
    shmem_free(dst);
    sh_finish();
    return 0;
}
