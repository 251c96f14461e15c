/*
 * admission.c - strangers knocking on a tcp listener mid-job are refused, and the job
 * goes on. Run with TERN_TRANSPORTS=self,tcp by admission.sh, which also checks that
 * every refusal was logged.
 *
 * Rank 0 reads rank 1's listening address (tern-tcp-1) and the job secret from the
 * key-value store, like any process of the job could, and opens one connection per
 * attack: nothing at all, a wrong secret, a wrong version, a bad rank, a rank that may
 * not connect, garbage, an HTTP request, a MSG before the handshake, a truncated HELLO.
 * For each it waits until rank 1 closes the connection (rank 1 is meanwhile blocked in
 * tern_recv, so its progress engine does the refusing), then checks that rank 0 and
 * rank 1 still exchange a small and a rendezvous-size message correctly. At the end
 * every rank does a ring exchange. Prints "ATTACKS <n>" for admission.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "../mp/mp_check.h"
#include "core/core.h"
#include "transport/tcp/tcp_frame.h"

#define BIG ((size_t)1 << 20)

static struct sockaddr_in peer_addr;
static uint8_t secret[TCP_SECRET_BYTES];

static int knock(const void *bytes, size_t len, int half_close)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECKF(fd >= 0, "socket: %s", strerror(errno));
    CHECKF(connect(fd, (struct sockaddr *)&peer_addr, sizeof peer_addr) == 0, "connect: %s",
           strerror(errno));
    if (len)
        CHECKF(send(fd, bytes, len, MSG_NOSIGNAL) == (ssize_t)len, "send: %s", strerror(errno));
    if (half_close) shutdown(fd, SHUT_WR);
    return fd;
}

/* Wait until the listener's side closes the connection; fail if it answers with data
 * (it must never send its HELLO to a stranger) or keeps it open for 10 s. */
static void expect_closed(int fd, const char *what)
{
    MP_WHERE("waiting for rank 1 to refuse: %s", what);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc = poll(&p, 1, 10000);
    CHECKF(rc == 1, "rank 1 did not close the connection (%s) within 10 s", what);
    char b[64];
    ssize_t got = recv(fd, b, sizeof b, 0);
    CHECKF(got <= 0, "rank 1 answered a stranger (%s) with %zd bytes", what, got);
    close(fd);
}

static void exchange(int round, uint8_t *big)
{
    int me = mp_rank, x = round * 10 + me;
    MP_WHERE("exchange after attack %d", round);
    if (me == 0) {
        CHECK_OK(tern_send(&x, sizeof x, 1, round, TERN_COMM_WORLD));
        CHECK_OK(tern_recv(&x, sizeof x, 1, round, TERN_COMM_WORLD, NULL));
        CHECK_EQ_INT(x, round * 10 + 1);
        mp_fill(big, BIG, (uint64_t)round);
        CHECK_OK(tern_send(big, BIG, 1, round, TERN_COMM_WORLD));
    } else if (me == 1) {
        int y;
        CHECK_OK(tern_recv(&y, sizeof y, 0, round, TERN_COMM_WORLD, NULL));
        CHECK_EQ_INT(y, round * 10);
        CHECK_OK(tern_send(&x, sizeof x, 0, round, TERN_COMM_WORLD));
        memset(big, 0, BIG);
        CHECK_OK(tern_recv(big, BIG, 0, round, TERN_COMM_WORLD, NULL));
        CHECK_PATTERN(big, BIG, (uint64_t)round, "rendezvous message after an attack");
    }
}

int main(int argc, char **argv)
{
    mp_watchdog(60);
    mp_init(&argc, &argv);
    int me = mp_rank, np = tern_size();
    CHECKF(np >= 2, "needs at least 2 ranks");
    uint8_t *big = mp_malloc(BIG);
    int attacks = 0;

    if (me == 0) {
        char val[128];
        CHECK_OK(boot_get(&core.boot, "tern-tcp-1", val, sizeof val));
        /* "ip/prefix:port[,...]": the first is the peer's preferred address. */
        char *comma = strchr(val, ',');
        if (comma) *comma = '\0';
        char *colon = strrchr(val, ':'), *slash = strchr(val, '/');
        CHECKF(colon != NULL && slash != NULL, "bad address '%s'", val);
        *colon = *slash = '\0';
        peer_addr.sin_family = AF_INET;
        peer_addr.sin_port = htons((uint16_t)atoi(colon + 1));
        CHECKF(inet_pton(AF_INET, val, &peer_addr.sin_addr) == 1, "bad address '%s'", val);
        CHECK_OK(boot_get(&core.boot, "tern-secret", val, sizeof val));
        CHECKF(tcp_secret_parse(val, secret) == 0, "bad secret '%s'", val);
    }

    struct tcp_hello_frame f;
    uint8_t wrong[TCP_SECRET_BYTES];
    for (int round = 1;; round++) {
        int done = 0;
        if (me == 0) {
            int fd = -1;
            const char *what = "";
            switch (round) {
            case 1:
                what = "no handshake at all";
                fd = knock(NULL, 0, 1);
                break;
            case 2:
                what = "wrong secret";
                memcpy(wrong, secret, sizeof wrong);
                wrong[5] ^= 0x40;
                tcp_hello_make(&f, wrong, np - 1, np);
                fd = knock(&f, sizeof f, 0);
                break;
            case 3:
                what = "zero secret";
                memset(wrong, 0, sizeof wrong);
                tcp_hello_make(&f, wrong, np - 1, np);
                fd = knock(&f, sizeof f, 0);
                break;
            case 4:
                what = "wrong protocol version";
                tcp_hello_make(&f, secret, np - 1, np);
                f.hello.version = TCP_PROTO_VERSION + 1;
                fd = knock(&f, sizeof f, 0);
                break;
            case 5:
                what = "rank out of range";
                tcp_hello_make(&f, secret, np + 5, np);
                fd = knock(&f, sizeof f, 0);
                break;
            case 6:
                what = "a rank that does not connect to rank 1 (rank 0)";
                tcp_hello_make(&f, secret, 0, np);
                fd = knock(&f, sizeof f, 0);
                break;
            case 7: {
                what = "random garbage";
                uint8_t junk[1024];
                mp_fill(junk, sizeof junk, 99);
                fd = knock(junk, sizeof junk, 0);
                break;
            }
            case 8: {
                what = "an HTTP request";
                static const char http[] = "GET / HTTP/1.0\r\nHost: x\r\n\r\n";
                fd = knock(http, sizeof http - 1, 0);
                break;
            }
            case 9: {
                what = "a MSG frame before the handshake";
                struct {
                    struct tcp_fhdr h;
                    char body[16];
                } m = {{TCP_FRAME_MAGIC, TCP_FRAME_MSG, 0, 16}, "hello, rank 1!"};
                fd = knock(&m, sizeof m, 0);
                break;
            }
            case 10:
                what = "a truncated handshake";
                tcp_hello_make(&f, secret, np - 1, np);
                fd = knock(&f, 20, 1);
                break;
            case 11:
                what = "a huge frame length";
                tcp_hello_make(&f, secret, np - 1, np);
                f.h.len = 0xfffffff0u;
                fd = knock(&f, sizeof f, 0);
                break;
            default:
                done = 1;
                break;
            }
            if (!done) {
                expect_closed(fd, what);
                attacks++;
            }
        }
        /* Rank 1 does the refusing while it waits here. */
        if (me == 0) {
            for (int r = 1; r < np; r++)
                CHECK_OK(tern_send(&done, sizeof done, r, 0, TERN_COMM_WORLD));
        } else {
            CHECK_OK(tern_recv(&done, sizeof done, 0, 0, TERN_COMM_WORLD, NULL));
        }
        if (done) break;
        exchange(round, big);
    }

    /* Everyone still talks to everyone. */
    MP_WHERE("final ring");
    int right = (me + 1) % np, left = (me + np - 1) % np, x = me, y = -1;
    CHECK_OK(tern_sendrecv(&x, sizeof x, right, 7, &y, sizeof y, left, 7, TERN_COMM_WORLD, NULL));
    CHECK_EQ_INT(y, left);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0) {
        printf("ATTACKS %d\n", attacks);
        fflush(stdout);
    }
    free(big);
    CHECK_OK(tern_finalize());
    return 0;
}
