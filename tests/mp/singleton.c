/*
 * singleton.c - run without any launcher (no PMI_* variables): tern_init makes a job of
 * size 1, rank 0, in which self messages, TERN_COMM_SELF, barriers and dup work.
 */
#include "mp_check.h"

int main(int argc, char **argv)
{
    MP_WHERE("checking the environment");
    CHECKF(getenv("PMI_FD") == NULL, "PMI_FD is set: this test must run without a launcher");
    mp_init(&argc, &argv);
    MP_WHERE("singleton");
    CHECK_EQ_INT(tern_rank(), 0);
    CHECK_EQ_INT(tern_size(), 1);
    int x = -1;
    CHECK_OK(tern_comm_size(TERN_COMM_WORLD, &x));
    CHECK_EQ_INT(x, 1);
    CHECK_OK(tern_comm_rank(TERN_COMM_WORLD, &x));
    CHECK_EQ_INT(x, 0);
    CHECK_ERR(tern_send(&x, sizeof x, 1, 0, TERN_COMM_WORLD), TERN_ERR_RANK);

    static const size_t sizes[] = {0, 1, 100, 16385, 1 << 20, 9 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t size = sizes[i];
        tern_comm_t c = i & 1 ? TERN_COMM_SELF : TERN_COMM_WORLD;
        MP_WHERE("self message of %zu bytes", size);
        uint8_t *s = mp_malloc(size), *d = mp_malloc(size + MP_GUARD_LEN);
        mp_fill(s, size, mp_seed(size, 1, 2, 3));
        mp_guard_set(d, size);
        tern_request_t r;
        tern_status_t st = mp_status_poison();
        CHECK_OK(tern_isend(s, size, 0, 4, c, &r));
        CHECK_OK(tern_recv(d, size, TERN_ANY_SOURCE, TERN_ANY_TAG, c, &st));
        CHECK_OK(tern_wait(&r, NULL));
        CHECK_STATUS(st, 0, 4, size);
        CHECK_PATTERN(d, size, mp_seed(size, 1, 2, 3), "singleton self message");
        CHECK_GUARD(d, size, "singleton self receive");
        free(s);
        free(d);
    }
    MP_WHERE("barrier and dup");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    tern_comm_t dup = TERN_COMM_NULL;
    CHECK_OK(tern_comm_dup(TERN_COMM_WORLD, &dup));
    CHECK_OK(tern_comm_size(dup, &x));
    CHECK_EQ_INT(x, 1);
    CHECK_OK(tern_barrier(dup));
    CHECK_OK(tern_comm_free(&dup));
    MP_WHERE("finalize");
    CHECK_OK(tern_finalize());
    printf("singleton: ok\n");
    return 0;
}
