/*
 * shm_rndv_both.c - a large message is never streamed through cells while the traffic
 * between the two ranks goes both ways (core_recv_rndv, CORE_FLAG_BOTH), and is while it
 * goes one way at a time. Run with TERN_ADAPT_REPORT=1 by 2 ranks.
 *
 * Both ranks exchange EXCHANGES messages of BOTH_SIZE (class 2-4 MiB) the way a halo
 * exchange or MPI_Sendrecv does: a receive posted, then a send, then a wait for both. The
 * peer's RTS can reach a receiver before its own send is posted (here always: rank 1
 * probes for it first), where the receiver once saw a message "alone" and answered with a
 * CTS: two streams through the cells at once
 * then took 25-45x a pull (docs/PERFORMANCE.md). Then a ping-pong of PP_SIZE (class 4-8
 * MiB), one message at a time, which explores streaming. Every message is checked byte
 * for byte with a guard after it. At finalize tern prints each class's timings on
 * stderr (TERN_ADAPT_REPORT); this test catches its own stderr in a file and requires: no
 * stream timed in the 2-4 MiB class, and streams timed in the 4-8 MiB class (so the
 * report is there and a message alone still streams).
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "mp_check.h"

#define EXCHANGES 40
#define ROUNDS    12
#define TAG       23
#define BOTH_SIZE (((size_t)2 << 20) + 5)
#define PP_SIZE   (((size_t)5 << 20) + 3)
#define SLOT      (PP_SIZE + 4096 + MP_GUARD_LEN)

/* The value of `key=` in a tern-adapt line, or -1. */
static long field(const char *line, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *at = strstr(line, pat);
    return at ? strtol(at + strlen(pat), NULL, 10) : -1;
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = tern_rank(), np = tern_size();
    if (np != 2) MP_FAIL("run with 2 ranks, not %d", np);
    int peer = 1 - me;
    uint8_t *sbuf = mp_malloc(SLOT), *rbuf = mp_malloc(SLOT);

    for (int r = 0; r < EXCHANGES; r++) {
        MP_WHERE("exchange %d", r);
        /* Rank 1 posts its receive only once rank 0's RTS is in (it is then matched before
         * rank 1's own send is posted: the case that once streamed); rank 0 posts first. */
        tern_status_t st;
        if (me == 1) CHECK_OK(tern_probe(peer, TAG, TERN_COMM_WORLD, &st));
        mp_window(sbuf, rbuf, SLOT, 1, BOTH_SIZE, me, peer, 0, 1, r, TAG);
    }
    for (int r = 0; r < ROUNDS; r++) {
        MP_WHERE("ping-pong round %d", r);
        for (int leg = 0; leg < 2; leg++)
            mp_window(sbuf, rbuf, SLOT, 1, PP_SIZE, me, peer, leg, 0, 1000 + 2 * r + leg, TAG);
    }

    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    char path[] = "/tmp/tern-rndv-both-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) MP_FAIL("mkstemp: %s", strerror(errno));
    fflush(stderr);
    int saved = dup(2);
    if (saved < 0 || dup2(fd, 2) < 0) MP_FAIL("dup2: %s", strerror(errno));
    int rc = tern_finalize();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK_OK(rc);

    FILE *f = fdopen(fd, "r");
    if (f == NULL) MP_FAIL("fdopen: %s", strerror(errno));
    rewind(f);
    char line[512];
    int both_streams = 0, pp_lines = 0, pp_streams = 0, lines = 0;
    while (fgets(line, sizeof line, f)) {
        fputs(line, stderr); /* as it would have appeared */
        if (strncmp(line, "tern-adapt ", 11) != 0 || !strstr(line, " kind=rv ")) continue;
        lines++;
        long lo = field(line, "lo"), streams = field(line, "stream_n");
        if (lo == (2l << 20) + 1 && streams > 0) both_streams += (int)streams;
        if (lo == (4l << 20) + 1) {
            pp_lines++;
            if (streams > 0) pp_streams += (int)streams;
        }
    }
    fclose(f);
    unlink(path);
    if (both_streams)
        MP_FAIL("rank %d streamed %d message(s) of the both-ways exchange (2-4 MiB class)", me,
                both_streams);
    if (pp_lines != 1 || pp_streams == 0)
        MP_FAIL("rank %d: the one-at-a-time 4-8 MiB class has %d report line(s) and %d "
                "stream(s); want 1 line with streams timed (TERN_ADAPT_REPORT=1, single copy)",
                me, pp_lines, pp_streams);
    printf("shm_rndv_both: rank %d: %d rendezvous class line(s), none of the exchange's "
           "streamed; ping-pong streams timed %d\n",
           me, lines, pp_streams);
    free(sbuf);
    free(rbuf);
    return 0;
}
