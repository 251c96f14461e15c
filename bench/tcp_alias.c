/*
 * tcp_alias.c - loopback TCP ping-pong with a chosen number of header bytes in front of a
 * page-aligned payload, to show the kernel's copy at a 1-31 byte distance mod 4 KiB
 * (docs/PERFORMANCE.md, "TCP on the AMD machine"). Two processes, TCP_NODELAY, reno,
 * 4 MiB socket buffers, non-blocking sockets polled in a loop; each message is one
 * sendmsg of [8 B][HL B][payload] (tern's layout when HL=16); the receiver reads 32 bytes,
 * then the rest. Prints the best of 5 timed blocks, one-way us.
 *
 * build: cc -O2 -o /tmp/tcp_alias bench/tcp_alias.c
 * usage: HL=16 chrt -f 20 /tmp/tcp_alias BYTES [ITERS]   (compare HL=16 with HL=24)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static size_t hl = 16;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void opts(int fd)
{
    int one = 1, buf = 4 << 20;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4);
}

static void get(int fd, char *b, size_t n)
{
    for (size_t g = 0; g < n;) {
        ssize_t k = recv(fd, b + g, n - g, 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (k <= 0) {
            perror("recv");
            exit(1);
        }
        g += (size_t)k;
    }
}

/* One message of n bytes: the receiver takes a 32-byte head, then the rest. */
static void rd(int fd, char *b, size_t n)
{
    get(fd, b, 32);
    get(fd, b + 32, n - 32);
}

static void wr(int fd, char *b, size_t n)
{
    char h[128] = {0};
    struct iovec v[3] = {{h, 8}, {h + 8, hl}, {b, n - 8 - hl}};
    struct msghdr m = {.msg_iov = v, .msg_iovlen = 3};
    ssize_t k;
    do
        k = sendmsg(fd, &m, MSG_NOSIGNAL);
    while (k < 0 && (errno == EAGAIN || errno == EINTR));
    if (k != (ssize_t)n) {
        fprintf(stderr, "tcp_alias: partial or failed write (%zd)\n", k);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: HL=16 %s BYTES [ITERS]\n", argv[0]);
        return 2;
    }
    size_t n = strtoul(argv[1], NULL, 0);
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    if (getenv("HL")) hl = strtoul(getenv("HL"), NULL, 0);
    if (hl > 120 || n < 8 + hl + 32 || iters < 5) {
        fprintf(stderr, "tcp_alias: BYTES must exceed HL + 40, HL be at most 120\n");
        return 2;
    }
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t al = sizeof a;
    opts(l);
    if (bind(l, (void *)&a, sizeof a) || listen(l, 1) || getsockname(l, (void *)&a, &al)) {
        perror("listen");
        return 1;
    }
    char *b;
    if (posix_memalign((void **)&b, 4096, n)) return 1;
    memset(b, 1, n);
    pid_t p = fork();
    if (p == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        opts(s);
        if (connect(s, (void *)&a, sizeof a)) {
            perror("connect");
            _exit(1);
        }
        fcntl(s, F_SETFL, O_NONBLOCK);
        for (int i = 0; i < iters + 100; i++) {
            rd(s, b, n);
            wr(s, b, n);
        }
        _exit(0);
    }
    int s = accept(l, NULL, NULL);
    opts(s);
    fcntl(s, F_SETFL, O_NONBLOCK);
    for (int i = 0; i < 100; i++) {
        wr(s, b, n);
        rd(s, b, n);
    }
    double best = 1e30;
    int per = iters / 5;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int i = 0; i < per; i++) {
            wr(s, b, n);
            rd(s, b, n);
        }
        double t = (now() - t0) / per / 2 * 1e6;
        if (t < best) best = t;
    }
    for (int i = 5 * per; i < iters; i++) { /* the child's remaining round trips */
        wr(s, b, n);
        rd(s, b, n);
    }
    printf("%zu B, %zu header bytes: %.2f us one way (best of 5)\n", n, 8 + hl, best);
    waitpid(p, NULL, 0);
    return 0;
}
