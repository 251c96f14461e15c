/*
 * tcp_attack.c - rank 0's tcp listener under attack from inside the job's own host, one
 * attack per run, chosen by TCP_ATTACK (run with TERN_TRANSPORTS=self,tcp, 2 ranks):
 *
 *   emfile   rank 0 runs out of file descriptors (RLIMIT_NOFILE lowered to what it has
 *            open) while a stranger connects: the connection must be dropped (the
 *            stranger sees it closed), the refusal logged once (not once per poll: the
 *            queued connection keeps the listener readable), and the job go on.
 *   flood    80 strangers connect and never speak (TERN_TCP_HANDSHAKE_TIMEOUT=1): the 64
 *            that fit the handshake table are closed when their time is up, the rest at
 *            once, and only the first 20 refusals are logged (the rest are counted).
 *
 * Rank 0 finds its listener among its own descriptors (a listening AF_INET socket) and
 * catches its own log lines by pointing descriptor 2 at a file for the attack's span.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "mp_check.h"

#define TAG_GO 5

/* The address of my tcp listener (the first listening IPv4 socket I hold). */
static struct sockaddr_in attack_listener(void)
{
    for (int fd = 3; fd < 4096; fd++) {
        int on = 0;
        socklen_t ol = sizeof on;
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) != 0 || !on) continue;
        if (getsockname(fd, (struct sockaddr *)&sa, &sl) != 0 || sa.sin_family != AF_INET)
            continue;
        return sa;
    }
    MP_FAIL("no listening tcp socket found (is tcp in TERN_TRANSPORTS?)");
}

/* Point descriptor 2 at a fresh file (returns the saved descriptor 2), or back. */
static int attack_catch_log(FILE **log)
{
    *log = tmpfile();
    CHECK(*log != NULL);
    int saved = dup(2);
    CHECK(saved >= 0 && dup2(fileno(*log), 2) == 2);
    return saved;
}

/* Restore descriptor 2; count the caught lines containing `what`, echoing them. */
static int attack_release_log(FILE *log, int saved, const char *what)
{
    CHECK(dup2(saved, 2) == 2);
    close(saved);
    rewind(log);
    char line[1024];
    int n = 0, shown = 0;
    while (fgets(line, sizeof line, log)) {
        if (!strstr(line, what)) continue;
        if (shown++ < 5) fprintf(stderr, "caught: %s", line);
        n++;
    }
    fclose(log);
    return n;
}

static void attack_emfile(int me)
{
    char go[4] = "go";
    if (me == 1) {
        sleep(1); /* rank 0 waits (asleep in epoll) with the stranger queued */
        CHECK_OK(tern_send(go, sizeof go, 0, TAG_GO, TERN_COMM_WORLD));
        return;
    }
    struct sockaddr_in sa = attack_listener();
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(s >= 0);
    FILE *log;
    int saved = attack_catch_log(&log);
    /* No descriptor free below the limit: the lowest free one is the limit. */
    int lowest = dup(0);
    CHECK(lowest >= 0);
    close(lowest);
    struct rlimit old, low;
    CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
    low = old;
    low.rlim_cur = (rlim_t)lowest;
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    CHECK(connect(s, (struct sockaddr *)&sa, sizeof sa) == 0); /* queued by the kernel */
    char buf[4];
    CHECK_OK(tern_recv(buf, sizeof buf, 1, TAG_GO, TERN_COMM_WORLD, NULL));
    CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
    int lines = attack_release_log(log, saved, "accept");
    CHECKF(lines == 1, "%d log lines about accept during 1 s, wanted 1", lines);
    /* The stranger was dropped, not left queued. */
    ssize_t r = recv(s, buf, sizeof buf, MSG_DONTWAIT);
    CHECKF(r == 0 || (r < 0 && errno == ECONNRESET),
           "the stranger's connection is still queued (recv %zd, %s)", r,
           r < 0 ? strerror(errno) : "data");
    close(s);
}

static void attack_flood(int me)
{
    enum { N = 80 };
    char go[4] = "go";
    if (me == 1) {
        sleep(3); /* rank 0 waits with the strangers connected */
        CHECK_OK(tern_send(go, sizeof go, 0, TAG_GO, TERN_COMM_WORLD));
        return;
    }
    struct sockaddr_in sa = attack_listener();
    int s[N];
    FILE *log;
    int saved = attack_catch_log(&log);
    for (int i = 0; i < N; i++) {
        s[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(s[i] >= 0);
        CHECK(connect(s[i], (struct sockaddr *)&sa, sizeof sa) == 0);
    }
    char buf[4];
    CHECK_OK(tern_recv(buf, sizeof buf, 1, TAG_GO, TERN_COMM_WORLD, NULL));
    int lines = attack_release_log(log, saved, "refused connection");
    for (int i = 0; i < N; i++) {
        ssize_t r = recv(s[i], buf, sizeof buf, MSG_DONTWAIT);
        CHECKF(r == 0 || (r < 0 && errno == ECONNRESET),
               "stranger %d is still connected 3 s later (recv %zd, %s)", i, r,
               r < 0 ? strerror(errno) : "data");
        close(s[i]);
    }
    CHECKF(lines == 20, "%d refusals logged, wanted the first 20 of %d", lines, N);
}

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    CHECKF(tern_size() == 2, "needs 2 ranks");
    const char *what = getenv("TCP_ATTACK") ? getenv("TCP_ATTACK") : "";
    if (strcmp(what, "emfile") == 0)
        attack_emfile(mp_rank);
    else if (strcmp(what, "flood") == 0)
        attack_flood(mp_rank);
    else
        MP_FAIL("unknown TCP_ATTACK '%s'", what);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", mp_rank);
    return 0;
}
