/*
 * admission.c - strangers knocking on a tcp listener mid-job are refused, and the job
 * goes on. Run with TERN_TRANSPORTS=self,tcp by admission.sh, which also checks that
 * every refusal was logged.
 *
 * Rank 0 reads rank 1's listening address (tern-tcp-1) and the job secret from the
 * key-value store, like any process of the job could, and opens one connection per
 * attack: nothing at all, a proof made with a wrong secret, a wrong version, a bad rank,
 * a rank that may not connect, garbage, an HTTP request, a MSG before the handshake, a
 * truncated HELLO, a huge length, an AUTH before the HELLO, a connection that stays
 * silent (closed by the handshake timeout, admission.sh sets 2 s), and a correct proof
 * for a rank that is already connected (the secret must not be in anything rank 1
 * sends). With 3 ranks or more, at the end the last rank dies (failures tolerated) and a
 * correct proof claiming the dead rank must be refused too. For each it waits until
 * rank 1 closes the connection, having sent at most its HELLO (the challenge) and never
 * its AUTH (rank 1 is meanwhile blocked in tern_recv, so its progress engine does the
 * refusing), then checks that rank 0 and rank 1 still exchange a small and a
 * rendezvous-size message correctly. At the end the survivors do a ring exchange.
 * Prints "ATTACKS <n>" for admission.sh.
 */
#define _GNU_SOURCE
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

/* Read what rank 1 sends until it closes the connection (within 10 s); fail if that
 * is anything but at most its HELLO (the challenge: never its AUTH, never the secret). */
static void expect_closed(int fd, const char *what)
{
    MP_WHERE("waiting for rank 1 to refuse: %s", what);
    uint8_t b[256];
    size_t have = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, 10000);
        CHECKF(rc == 1, "rank 1 did not close the connection (%s) within 10 s", what);
        ssize_t got = recv(fd, b + have, sizeof b - have, 0);
        if (got <= 0) break;
        have += (size_t)got;
        CHECKF(have <= sizeof(struct tcp_hello_frame),
               "rank 1 sent a stranger (%s) %zu bytes: more than its challenge", what, have);
    }
    if (have) {
        struct tcp_fhdr h;
        memcpy(&h, b, sizeof h);
        CHECKF(have == sizeof(struct tcp_hello_frame) && h.type == TCP_FRAME_HELLO,
               "rank 1 sent a stranger (%s) %zu bytes that are not its HELLO", what, have);
        CHECKF(memmem(b, have, secret, sizeof secret) == NULL, "the secret went on the wire");
    }
    close(fd);
}

/* Connect claiming `rank`, read rank 1's challenge and answer it with a proof made
 * under `key`; returns the socket for expect_closed. */
static int knock_proof(int rank, int np, const uint8_t key[TCP_SECRET_BYTES])
{
    uint8_t nc[TCP_NONCE_BYTES], na[TCP_NONCE_BYTES];
    mp_fill(nc, sizeof nc, (uint64_t)rank + 77);
    struct tcp_hello_frame f;
    tcp_hello_make(&f, nc, rank, np);
    int fd = knock(&f, sizeof f, 0);
    struct tcp_hello_frame a;
    size_t have = 0;
    while (have < sizeof a) {
        ssize_t got = recv(fd, (char *)&a + have, sizeof a - have, 0);
        if (got <= 0) return fd; /* refused at the HELLO already */
        have += (size_t)got;
    }
    CHECKF(a.h.type == TCP_FRAME_HELLO && a.hello.rank == 1, "rank 1's challenge is wrong");
    CHECKF(memmem(&a, sizeof a, secret, sizeof secret) == NULL, "the secret went on the wire");
    memcpy(na, a.hello.nonce, sizeof na);
    uint8_t mac[TCP_MAC_BYTES];
    tcp_auth_mac(key, TCP_ROLE_CONNECTOR, nc, na, rank, 1, mac);
    struct tcp_auth_frame af;
    tcp_auth_make(&af, mac);
    CHECKF(send(fd, &af, sizeof af, MSG_NOSIGNAL) == (ssize_t)sizeof af, "send: %s",
           strerror(errno));
    return fd;
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
    uint8_t wrong[TCP_SECRET_BYTES], nonce[TCP_NONCE_BYTES] = {1, 2, 3};
    if (np >= 3) CHECK_OK(tern_tolerate_failures()); /* the last rank dies at the end */
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
                what = "a proof under a wrong secret";
                memcpy(wrong, secret, sizeof wrong);
                wrong[5] ^= 0x40;
                fd = knock_proof(np - 1, np, wrong);
                break;
            case 3:
                what = "a proof under a zero secret";
                memset(wrong, 0, sizeof wrong);
                fd = knock_proof(np - 1, np, wrong);
                break;
            case 4:
                what = "wrong protocol version";
                tcp_hello_make(&f, nonce, np - 1, np);
                f.hello.version = TCP_PROTO_VERSION + 1;
                fd = knock(&f, sizeof f, 0);
                break;
            case 5:
                what = "rank out of range";
                tcp_hello_make(&f, nonce, np + 5, np);
                fd = knock(&f, sizeof f, 0);
                break;
            case 6:
                what = "a rank that does not connect to rank 1 (rank 0)";
                tcp_hello_make(&f, nonce, 0, np);
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
                tcp_hello_make(&f, nonce, np - 1, np);
                fd = knock(&f, 20, 1);
                break;
            case 11:
                what = "a huge frame length";
                tcp_hello_make(&f, nonce, np - 1, np);
                f.h.len = 0xfffffff0u;
                fd = knock(&f, sizeof f, 0);
                break;
            case 12: {
                what = "an AUTH before the HELLO";
                struct tcp_auth_frame af;
                uint8_t mac[TCP_MAC_BYTES] = {0};
                tcp_auth_make(&af, mac);
                fd = knock(&af, sizeof af, 0);
                break;
            }
            case 13:
                what = "a connection that never sends (handshake timeout)";
                fd = knock(NULL, 0, 0);
                break;
            case 14:
                what = "a correct proof for a rank already connected";
                fd = knock_proof(np - 1, np, secret);
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

    int alive = np;
    if (np >= 3) {
        /* A dead rank's place cannot be taken, even with the secret. */
        int victim = np - 1, token = 0;
        MP_WHERE("an impostor for dead rank %d", victim);
        if (me == victim) _exit(0);
        alive = np - 1;
        if (me == 1) {
            int y;
            CHECK_ERR(tern_recv(&y, sizeof y, victim, 99, TERN_COMM_WORLD, NULL),
                      TERN_ERR_PEER_FAILED);
            CHECK_OK(tern_send(&token, sizeof token, 0, 98, TERN_COMM_WORLD));
            CHECK_OK(tern_recv(&token, sizeof token, 0, 97, TERN_COMM_WORLD, NULL));
        } else if (me == 0) {
            CHECK_OK(tern_recv(&token, sizeof token, 1, 98, TERN_COMM_WORLD, NULL));
            expect_closed(knock_proof(victim, np, secret), "a correct proof for a dead rank");
            attacks++;
            CHECK_OK(tern_send(&token, sizeof token, 1, 97, TERN_COMM_WORLD));
        }
    }

    /* Every survivor still talks to every other. */
    MP_WHERE("final ring");
    int right = (me + 1) % alive, left = (me + alive - 1) % alive, x = me, y = -1;
    CHECK_OK(tern_sendrecv(&x, sizeof x, right, 7, &y, sizeof y, left, 7, TERN_COMM_WORLD, NULL));
    CHECK_EQ_INT(y, left);
    if (alive == np) CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0) {
        printf("ATTACKS %d\n", attacks);
        fflush(stdout);
    }
    free(big);
    CHECK_OK(tern_finalize());
    return 0;
}
