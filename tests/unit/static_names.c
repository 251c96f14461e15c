/*
 * static_names.c - a program that defines names tern uses inside (core, boot_init,
 * util_log, util_tun, conv_init, mpi_err) links statically against libtern.a and
 * libtern_mpi.a (tests/unit/CMakeLists.txt, both archives) and runs. The archives keep
 * only the public API global (one relocatable object, internals made local), so the link
 * succeeds and each side keeps its own meaning of these names; with the internals global
 * the link would fail on duplicate definitions, or tern would call the program's
 * functions. Runs as a job of one process (no launcher): MPI_Init, tern_init joins the
 * same core, a message goes from MPI_Send to tern_recv and back, bytes checked.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "tern.h"

/* The program's own objects under tern's internal names, with other types. */
double core[4] = {1.5, 2.5, 3.5, 4.5};
int util_tun = 77;
static int boot_calls, log_calls, conv_calls, err_calls;
int boot_init(const char *who)
{
    boot_calls++;
    return who ? (int)strlen(who) : -1;
}
void util_log(const char *fmt, ...)
{
    (void)fmt;
    log_calls++;
}
int conv_init(void)
{
    return ++conv_calls;
}
int mpi_err(int a, int b)
{
    err_calls++;
    return a * b;
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
    CHECK(tern_init(&argc, &argv) == TERN_OK);
    CHECK(tern_size() == 1 && tern_rank() == 0);
    /* tern's own start-up went to its own functions, not to the program's. */
    CHECK(boot_calls == 0 && conv_calls == 0 && log_calls == 0 && err_calls == 0);

    char out[5000], in[5000 + 8];
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = (char)(i * 13 + 5);
    MPI_Request r;
    CHECK(MPI_Isend(out, (int)sizeof out, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
    tern_status_t st;
    CHECK(tern_recv(in, sizeof in, 0, 3, TERN_COMM_WORLD, &st) == TERN_OK);
    CHECK(st.bytes == sizeof out && memcmp(in, out, sizeof out) == 0);
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    tern_request_t tr;
    CHECK(tern_isend(out, 100, 0, 4, TERN_COMM_WORLD, &tr) == TERN_OK);
    CHECK(MPI_Recv(in, 100, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(memcmp(in, out, 100) == 0);
    CHECK(tern_wait(&tr, NULL) == TERN_OK);

    /* An error path: tern's errors are still its own (TERN_ERR_* names). */
    CHECK(tern_send(out, 1, 5, 0, TERN_COMM_WORLD) == TERN_ERR_RANK);
    CHECK(tern_finalize() == TERN_OK);
    CHECK(MPI_Finalize() == MPI_SUCCESS);

    /* The program's objects are untouched and its functions still its own. */
    CHECK(core[0] == 1.5 && core[3] == 4.5 && util_tun == 77);
    CHECK(boot_init("abc") == 3 && conv_init() == 1 && mpi_err(6, 7) == 42);
    util_log("x");
    CHECK(boot_calls == 1 && log_calls == 1 && err_calls == 1);
    printf("static_names: ok\n");
    return 0;
}
