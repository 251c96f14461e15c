/*
 * pmi_client_test.c - a PMI-1 client written against boot/pmi_wire.h alone, run as
 * every rank of a ternrun job to prove ternrun's PMI server byte for byte.
 *
 *   pmi_client_test [mode]
 *
 * normal    init, maxes, kvsname, universe size, appnum, puts (enough keys to make
 *           the server's table grow), a duplicate put, barrier, gets of every other
 *           rank's keys, PMI_process_mapping, a missing key, the same keys in bulk
 *           (tern_getall, in pages), a second barrier, finalize; and the environment
 *           and descriptors ternrun gave the rank
 * malformed recoverable protocol errors (bulk gets included) each get an rc=-1 reply
 *           and the session
 *           goes on; after finalize, an unparsable line gets the connection closed
 * toolong   a line longer than the protocol allows: the connection is closed
 * binary    random bytes with NULs and newlines: the connection is closed
 * deadlock  rank 1 exits 0 without entering the barrier the others wait in
 * abort     rank 1 calls abort exitcode=7; the others wait in a barrier
 * kvsfull   rank 0 puts 1 KiB values until the server answers rc=-1 msg=kvs_full (it
 *           must, before 200,000 puts: the key-value space is bounded); its first key
 *           is still there and the session goes on
 * noread    rank 1 sends gets and never reads the replies: the server drops it, saying
 *           so (the script checks the line); the others finish normally
 * shmleak   each rank leaves /dev/shm/tern-<kvsname>-<rank> behind, then rank 0
 *           kills itself with SIGKILL; prints the kvsname for the script to check
 *
 * Exits 0 when every check holds; a failed check prints one line and exits 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot/pmi_wire.h"

#define EXTRA_KEYS 50

static int rank = -1, size = -1, pmi_fd = -1;
static struct pmi_reader reader;
static char kvsname[PMI_WIRE_KVSNAME_MAX + 1];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "pmi_client_test rank %d: ", rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void send_raw(const char *buf, size_t len)
{
    if (pmi_write_all(pmi_fd, buf, len) != 0) fail("write to PMI_FD: %s", strerror(errno));
}

static void send_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void send_line(const char *fmt, ...)
{
    char buf[PMI_WIRE_MAX_LINE * 2];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) fail("line too long to format");
    send_raw(buf, (size_t)n);
}

/*
 * Next line from the server, parsed into m. Returns 0, or -1 at end of stream.
 * Waits at most 10 s, so a server that neither answers nor closes fails the test
 * instead of hanging it.
 */
static int recv_msg(struct pmi_msg *m)
{
    for (;;) {
        char *line;
        int rc = pmi_reader_line(&reader, &line);
        if (rc < 0) fail("reply longer than %d bytes", PMI_WIRE_MAX_LINE);
        if (rc == 1) {
            if (pmi_wire_parse(line, m) != 0) fail("unparsable reply '%s'", line);
            return 0;
        }
        struct pollfd p = {.fd = pmi_fd, .events = POLLIN};
        if (poll(&p, 1, 10000) != 1) fail("no reply from the server within 10 s");
        ssize_t n = pmi_reader_fill(&reader, pmi_fd);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) return -1;
        if (n < 0) fail("read PMI_FD: %s", strerror(errno));
    }
}

static void expect_val(const struct pmi_msg *m, const char *key, const char *want)
{
    const char *v = pmi_msg_get(m, key);
    if (v == NULL) fail("reply '%s' lacks %s= (wanted '%s')", pmi_msg_get(m, "cmd"), key, want);
    if (strcmp(v, want) != 0)
        fail("reply '%s': %s='%s', wanted '%s'", pmi_msg_get(m, "cmd"), key, v, want);
}

/* Send a command and check the reply's cmd and rc; returns with m filled. */
static void call(struct pmi_msg *m, const char *reply, const char *rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void call(struct pmi_msg *m, const char *reply, const char *rc, const char *fmt, ...)
{
    char buf[PMI_WIRE_MAX_LINE * 2];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) fail("line too long to format");
    send_raw(buf, (size_t)n);
    if (recv_msg(m) != 0) fail("server closed the connection after '%.60s'", buf);
    expect_val(m, "cmd", reply);
    if (rc) expect_val(m, "rc", rc);
}

/* The value rank r puts under key i: long, and different per rank, key and job. */
static void value_of(int r, int i, char *out, size_t len)
{
    int n = snprintf(out, len, "r%d-i%d-%s-", r, i, kvsname);
    size_t want = i == 0 ? PMI_WIRE_VAL_MAX : 40; /* key 0 has the longest value allowed */
    for (size_t k = (size_t)n; k < want && k + 1 < len; k++)
        out[k] = (char)('a' + (k * 7 + (size_t)r) % 26);
    out[want < len ? want : len - 1] = '\0';
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL) fail("%s is not set", name);
    return atoi(v);
}

static void do_init(void)
{
    struct pmi_msg m;
    call(&m, "response_to_init", "0", "cmd=init pmi_version=1 pmi_subversion=1\n");
    expect_val(&m, "pmi_version", "1");
    expect_val(&m, "pmi_subversion", "1");
    call(&m, "my_kvsname", "0", "cmd=get_my_kvsname\n");
    const char *k = pmi_msg_get(&m, "kvsname");
    if (k == NULL || strlen(k) == 0 || strlen(k) > 40) fail("bad kvsname");
    for (const char *p = k; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            fail("kvsname '%s' is not alphanumeric", k);
    strcpy(kvsname, k);
}

static void barrier(void)
{
    struct pmi_msg m;
    call(&m, "barrier_out", NULL, "cmd=barrier_in\n");
}

static void finalize(void)
{
    struct pmi_msg m;
    call(&m, "finalize_ack", NULL, "cmd=finalize\n");
}

/* The only socket a rank holds must be its own PMI end: no other rank's. */
static void check_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == pmi_fd || fd == dirfd(d)) continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
            fail("descriptor %d is a socket besides PMI_FD %d (another rank's?)", fd, pmi_fd);
    }
    closedir(d);
}

/*
 * Every "r<rank>k<i>" key through tern_getall prefix=r, page by page: each exactly once
 * with its value, no other key, pages within PMI_WIRE_BULK_BYTES, and more than one
 * page once the keys outgrow one (the 1 KiB value of every rank's key 0 sees to it).
 */
static void bulk_check(void)
{
    static unsigned char seen[4096][EXTRA_KEYS];
    char want[PMI_WIRE_VAL_MAX + 1];
    struct pmi_msg m;
    if (size > 4096) fail("too many ranks for the bulk check");
    memset(seen, 0, sizeof seen);
    int start = 0, pages = 0, total = 0;
    size_t bytes_all = 0;
    while (start >= 0) {
        int count, next;
        call(&m, "tern_getall_result", "0", "cmd=tern_getall kvsname=%s prefix=r start=%d\n",
             kvsname, start);
        if (pmi_wire_bulk_head(&m, start, &count, &next) != 0)
            fail("bad bulk head at start=%d", start);
        size_t bytes = 0;
        for (int i = 0; i < count; i++) {
            const char *k, *v;
            if (recv_msg(&m) != 0) fail("bulk reply cut after %d of %d entries", i, count);
            if (pmi_wire_bulk_entry(&m, "r", &k, &v) != 0) fail("bad bulk entry %d", i);
            int r, ki, used = 0;
            if (sscanf(k, "r%dk%d%n", &r, &ki, &used) != 2 || k[used] != '\0' || r < 0 ||
                r >= size || ki < 0 || ki >= EXTRA_KEYS)
                fail("bulk reply holds key '%s', not one of ours", k);
            if (seen[r][ki]++) fail("bulk reply gave key '%s' twice", k);
            value_of(r, ki, want, sizeof want);
            if (strcmp(v, want) != 0) fail("bulk value of '%s' differs from the put", k);
            bytes += strlen(k) + strlen(v) + sizeof "cmd=tern_kv key= value=\n" - 1;
        }
        if (bytes > PMI_WIRE_BULK_BYTES) fail("bulk page of %zu bytes", bytes);
        bytes_all += bytes;
        total += count;
        pages++;
        start = next;
    }
    if (total != size * EXTRA_KEYS)
        fail("bulk get gave %d keys, want %d", total, size * EXTRA_KEYS);
    if (bytes_all > PMI_WIRE_BULK_BYTES && pages < 2) fail("%zu bytes in one page", bytes_all);
    /* A prefix nothing has: an empty, final page. */
    call(&m, "tern_getall_result", "0", "cmd=tern_getall kvsname=%s prefix=zz-none start=0\n",
         kvsname);
    expect_val(&m, "count", "0");
    expect_val(&m, "next", "-1");
}

static void mode_normal(void)
{
    struct pmi_msg m;
    char key[PMI_WIRE_KEY_MAX + 1], val[PMI_WIRE_VAL_MAX + 1], want[PMI_WIRE_VAL_MAX + 1];

    if (env_int("TERN_LOCAL_RANK") != rank || env_int("TERN_LOCAL_SIZE") != size)
        fail("TERN_LOCAL_RANK/SIZE do not match PMI_RANK/SIZE");
    check_fds();
    do_init();
    call(&m, "maxes", "0", "cmd=get_maxes\n");
    expect_val(&m, "kvsname_max", "256");
    expect_val(&m, "keylen_max", "64");
    expect_val(&m, "vallen_max", "1024");
    call(&m, "universe_size", "0", "cmd=get_universe_size\n");
    snprintf(val, sizeof val, "%d", size);
    expect_val(&m, "size", val);
    call(&m, "appnum", "0", "cmd=get_appnum\n");
    expect_val(&m, "appnum", "0");

    for (int i = 0; i < EXTRA_KEYS; i++) {
        snprintf(key, sizeof key, "r%dk%d", rank, i);
        value_of(rank, i, val, sizeof val);
        call(&m, "put_result", "0", "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, val);
    }
    /* The longest key allowed. */
    memset(key, 'K', PMI_WIRE_KEY_MAX);
    snprintf(key, sizeof key, "%d", rank);
    key[strlen(key)] = 'K';
    key[PMI_WIRE_KEY_MAX] = '\0';
    call(&m, "put_result", "0", "cmd=put kvsname=%s key=%s value=long-key-%d\n", kvsname, key,
         rank);
    call(&m, "put_result", "-1", "cmd=put kvsname=%s key=r%dk0 value=again\n", kvsname, rank);

    barrier();

    for (int r = 0; r < size; r++) {
        for (int i = 0; i < EXTRA_KEYS; i++) {
            call(&m, "get_result", "0", "cmd=get kvsname=%s key=r%dk%d\n", kvsname, r, i);
            value_of(r, i, want, sizeof want);
            expect_val(&m, "value", want);
        }
        memset(key, 'K', PMI_WIRE_KEY_MAX);
        snprintf(key, sizeof key, "%d", r);
        key[strlen(key)] = 'K';
        key[PMI_WIRE_KEY_MAX] = '\0';
        call(&m, "get_result", "0", "cmd=get kvsname=%s key=%s\n", kvsname, key);
        snprintf(want, sizeof want, "long-key-%d", r);
        expect_val(&m, "value", want);
    }
    call(&m, "get_result", "0", "cmd=get kvsname=%s key=PMI_process_mapping\n", kvsname);
    snprintf(want, sizeof want, "(vector,(0,1,%d))", size);
    expect_val(&m, "value", want);
    int node_of[4096];
    if (size > 4096 || pmi_wire_parse_mapping(pmi_msg_get(&m, "value"), size, node_of) != 0)
        fail("PMI_process_mapping does not parse");
    for (int r = 0; r < size; r++)
        if (node_of[r] != 0) fail("rank %d is not on node 0", r);
    call(&m, "get_result", "-1", "cmd=get kvsname=%s key=no-such-key\n", kvsname);
    expect_val(&m, "msg", "key_not_found");

    bulk_check();

    barrier(); /* a second barrier: the server resets its count */
    finalize();
}

static void mode_malformed(void)
{
    struct pmi_msg m;
    char big[PMI_WIRE_VAL_MAX + 2];
    do_init();
    call(&m, "frobnicate_result", "-1", "cmd=frobnicate a=b\n");
    call(&m, "put_result", "-1", "cmd=put kvsname=%s key=x\n", kvsname);
    call(&m, "put_result", "-1", "cmd=put kvsname=wrong%s key=x value=y\n", kvsname);
    call(&m, "put_result", "-1", "cmd=put kvsname=%s key=PMI_process_mapping value=y\n", kvsname);
    call(&m, "get_result", "-1", "cmd=get kvsname=%s key=\n", kvsname);
    call(&m, "get_result", "-1", "cmd=get kvsname=wrong key=x\n");
    memset(big, 'k', PMI_WIRE_KEY_MAX + 1);
    big[PMI_WIRE_KEY_MAX + 1] = '\0';
    call(&m, "put_result", "-1", "cmd=put kvsname=%s key=%s value=y\n", kvsname, big);
    memset(big, 'v', PMI_WIRE_VAL_MAX + 1);
    big[PMI_WIRE_VAL_MAX + 1] = '\0';
    call(&m, "put_result", "-1", "cmd=put kvsname=%s key=big value=%s\n", kvsname, big);
    call(&m, "response_to_init", "-1", "cmd=init pmi_version=2 pmi_subversion=0\n");
    call(&m, "tern_getall_result", "-1", "cmd=tern_getall kvsname=%s start=0\n", kvsname);
    expect_val(&m, "msg", "missing_prefix");
    call(&m, "tern_getall_result", "-1", "cmd=tern_getall kvsname=%s prefix=a=b start=0\n",
         kvsname);
    expect_val(&m, "msg", "bad_prefix");
    call(&m, "tern_getall_result", "-1", "cmd=tern_getall kvsname=x%s prefix=a start=0\n", kvsname);
    expect_val(&m, "msg", "unknown_kvsname");
    call(&m, "tern_getall_result", "-1", "cmd=tern_getall kvsname=%s prefix=a\n", kvsname);
    expect_val(&m, "msg", "bad_start");
    call(&m, "tern_getall_result", "-1", "cmd=tern_getall kvsname=%s prefix=a start=-1\n", kvsname);
    expect_val(&m, "msg", "bad_start");
    call(&m, "tern_getall_result", "-1", "cmd=tern_getall kvsname=%s prefix=a start=99999999\n",
         kvsname);
    expect_val(&m, "msg", "bad_start");
    memset(big, 'p', PMI_WIRE_KEY_MAX + 1);
    big[PMI_WIRE_KEY_MAX + 1] = '\0';
    call(&m, "tern_getall_result", "-1", "cmd=tern_getall kvsname=%s prefix=%s start=0\n", kvsname,
         big);
    expect_val(&m, "msg", "bad_prefix");
    /* Blank lines are no commands: no reply, and the next reply is still in step. */
    send_raw("\n   \n", 5);
    call(&m, "maxes", "0", "cmd=get_maxes\n");
    barrier();
    finalize();
    send_raw("this is not pmi\n", 16);
    if (recv_msg(&m) != -1) fail("server answered an unparsable line instead of closing");
}

static void mode_toolong(void)
{
    struct pmi_msg m;
    static char line[PMI_WIRE_MAX_LINE + 100];
    do_init();
    memcpy(line, "cmd=put key=", 12);
    memset(line + 12, 'z', sizeof line - 13);
    line[sizeof line - 1] = '\n';
    send_raw(line, sizeof line);
    if (recv_msg(&m) != -1) fail("server answered an over-long line instead of closing");
}

static void mode_binary(void)
{
    struct pmi_msg m;
    char junk[512];
    unsigned s = 12345u + (unsigned)rank;
    for (size_t i = 0; i < sizeof junk; i++) {
        s = s * 1103515245u + 12345u;
        junk[i] = (char)(s >> 16);
        if (i % 37 == 0) junk[i] = '\0';
        if (i % 53 == 0) junk[i] = '\n';
    }
    junk[0] = '=';
    do_init();
    /* The server may close mid-way: a failed write is expected, not fatal. */
    signal(SIGPIPE, SIG_IGN);
    if (pmi_write_all(pmi_fd, junk, sizeof junk) == 0) pmi_write_all(pmi_fd, "\n", 1);
    /* Replies to whatever happened to parse may come first; the end must come. */
    while (recv_msg(&m) == 0) {
    }
}

static void mode_deadlock(void)
{
    do_init();
    if (rank == 1) exit(0); /* leaves without the barrier */
    barrier();
    fail("barrier completed although rank 1 never entered it");
}

static void mode_abort(void)
{
    do_init();
    if (rank == 1) {
        send_line("cmd=abort exitcode=7 msg=test_abort\n");
        pause();
    }
    barrier();
    fail("barrier completed although rank 1 aborted");
}

static void mode_shmleak(void)
{
    char path[PMI_WIRE_KVSNAME_MAX + 64];
    do_init();
    snprintf(path, sizeof path, "/dev/shm/tern-%s-%d", kvsname, rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) fail("cannot create %s: %s", path, strerror(errno));
    close(fd);
    if (rank == 0) {
        printf("kvsname=%s\n", kvsname);
        fflush(stdout);
    }
    barrier(); /* every segment exists before anyone dies */
    if (rank == 0) raise(SIGKILL);
    pause();
}

static void mode_kvsfull(void)
{
    struct pmi_msg m;
    static char val[PMI_WIRE_VAL_MAX + 1];
    do_init();
    if (rank == 0) {
        memset(val, 'v', PMI_WIRE_VAL_MAX);
        int i;
        for (i = 0; i < 200000; i++) {
            call(&m, "put_result", NULL, "cmd=put kvsname=%s key=flood%d value=%s\n", kvsname, i,
                 val);
            if (strcmp(pmi_msg_get(&m, "rc"), "0") != 0) break;
        }
        if (i == 200000) fail("200000 puts of 1 KiB accepted: the key-value space has no limit");
        expect_val(&m, "msg", "kvs_full");
        call(&m, "get_result", "0", "cmd=get kvsname=%s key=flood0\n", kvsname);
        printf("kvs full after %d puts\n", i);
    }
    barrier();
    finalize();
}

static void mode_noread(void)
{
    do_init();
    if (rank == 1) {
        signal(SIGPIPE, SIG_IGN);
        char line[128];
        int n =
            snprintf(line, sizeof line, "cmd=get kvsname=%s key=PMI_process_mapping\n", kvsname);
        /* Until the server gives up on us: our socket's buffers fill with its replies. */
        for (int i = 0; i < 10000000; i++)
            if (pmi_write_all(pmi_fd, line, (size_t)n) != 0) return;
        fail("the server never dropped a client that does not read");
    }
    finalize();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "normal";
    rank = env_int("PMI_RANK");
    size = env_int("PMI_SIZE");
    pmi_fd = env_int("PMI_FD");
    if (rank < 0 || rank >= size) fail("PMI_RANK %d outside PMI_SIZE %d", rank, size);
    struct stat st;
    if (fstat(pmi_fd, &st) != 0 || !S_ISSOCK(st.st_mode)) fail("PMI_FD %d is not a socket", pmi_fd);
    if (fcntl(pmi_fd, F_GETFD) & FD_CLOEXEC) fail("PMI_FD is close-on-exec");

    if (strcmp(mode, "normal") == 0)
        mode_normal();
    else if (strcmp(mode, "malformed") == 0)
        mode_malformed();
    else if (strcmp(mode, "toolong") == 0)
        mode_toolong();
    else if (strcmp(mode, "binary") == 0)
        mode_binary();
    else if (strcmp(mode, "deadlock") == 0)
        mode_deadlock();
    else if (strcmp(mode, "abort") == 0)
        mode_abort();
    else if (strcmp(mode, "kvsfull") == 0)
        mode_kvsfull();
    else if (strcmp(mode, "noread") == 0)
        mode_noread();
    else if (strcmp(mode, "shmleak") == 0)
        mode_shmleak();
    else
        fail("unknown mode '%s'", mode);
    return 0;
}
