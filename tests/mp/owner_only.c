/*
 * owner_only.c - what a job exposes to other users of the machine while it runs:
 *  - every shared-memory segment a rank has mapped from /dev/shm (its own and its
 *    peers', found in /proc/self/maps and stat'ed through /proc/self/map_files, so
 *    even an unlinked one is seen) is a regular file owned by us with mode 0600;
 *  - every socket of this process that listens for TCP (found by matching the inodes
 *    of /proc/self/fd with /proc/net/tcp and tcp6) is bound to a loopback address in
 *    a single-host job, and no unix socket of ours has a path others could open
 *    unless it is owner-only.
 * With OWNER_EXPECT=shm at least one segment must have been checked; with =tcp at
 * least one listening socket (TERN_TRANSPORTS=tcp), so the test cannot pass by
 * finding nothing.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include "mp_check.h"

/* Inodes of the sockets this process holds. */
static unsigned long sock_inodes[256];
static int nsock;

static void collect_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], link[128];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0) continue;
        link[n] = '\0';
        unsigned long ino;
        if (sscanf(link, "socket:[%lu]", &ino) == 1 && nsock < 256) sock_inodes[nsock++] = ino;
    }
    closedir(d);
}

static int ours(unsigned long ino)
{
    for (int i = 0; i < nsock; i++)
        if (sock_inodes[i] == ino) return 1;
    return 0;
}

/* Listening TCP sockets of ours in /proc/net/tcp{,6}; each must be on loopback. */
static int check_listeners(void)
{
    int found = 0;
    FILE *f = fopen("/proc/net/tcp", "r");
    CHECK(f != NULL);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned addr, port, st;
        unsigned long ino;
        if (sscanf(line, " %*d: %8X:%X %*X:%*X %X %*X:%*X %*X:%*X %*X %*d %*d %lu", &addr, &port,
                   &st, &ino) != 4)
            continue;
        if (st != 0x0A || !ours(ino)) continue; /* 0A: TCP_LISTEN */
        struct in_addr a = {.s_addr = addr};    /* printed as the raw 32-bit value */
        CHECKF((ntohl(a.s_addr) >> 24) == 127, "rank %d listens on %s:%u in a single-host job",
               mp_rank, inet_ntoa(a), port);
        found++;
    }
    fclose(f);
    f = fopen("/proc/net/tcp6", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            char addr[40];
            unsigned port, st;
            unsigned long ino;
            if (sscanf(line, " %*d: %32[0-9A-Fa-f]:%X %*s %X %*X:%*X %*X:%*X %*X %*d %*d %lu", addr,
                       &port, &st, &ino) != 4)
                continue;
            if (st != 0x0A || !ours(ino)) continue;
            /* ::1 as printed by the kernel */
            CHECKF(!strcmp(addr, "00000000000000000000000001000000"),
                   "rank %d listens on IPv6 [%s]:%u in a single-host job", mp_rank, addr, port);
            found++;
        }
        fclose(f);
    }
    return found;
}

/* Unix sockets of ours bound to a path in the file system: owner-only. */
static void check_unix_paths(void)
{
    FILE *f = fopen("/proc/net/unix", "r");
    if (f == NULL) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long ino;
        char path[300] = "";
        if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %299s", &ino, path) < 1) continue;
        if (!ours(ino) || path[0] != '/') continue;
        struct stat sb;
        CHECKF(stat(path, &sb) == 0 && (sb.st_mode & 077) == 0,
               "rank %d has a unix socket at %s with mode %o", mp_rank, path,
               (unsigned)(sb.st_mode & 07777));
    }
    fclose(f);
}

/* Shared segments this process maps from /dev/shm: regular files of ours, mode 0600. */
static int check_segments(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[1024];
    int found = 0;
    char seen[64][64];
    int nseen = 0;
    while (fgets(line, sizeof line, f)) {
        char range[64], path[512] = "";
        if (sscanf(line, "%63s %*s %*s %*s %*s %511[^\n]", range, path) < 2) continue;
        if (strncmp(path, "/dev/shm/", 9) != 0) continue;
        int dup = 0;
        for (int i = 0; i < nseen; i++)
            dup |= !strcmp(seen[i], path + 9);
        if (dup) continue;
        if (nseen < 64) snprintf(seen[nseen++], sizeof seen[0], "%.60s", path + 9);
        char mf[128];
        snprintf(mf, sizeof mf, "/proc/self/map_files/%s", range);
        struct stat sb;
        CHECKF(stat(mf, &sb) == 0, "stat %s (%s): %s", mf, path, strerror(errno));
        CHECKF(S_ISREG(sb.st_mode) && sb.st_uid == getuid() && (sb.st_mode & 07777) == 0600,
               "rank %d maps %s with mode %o, owner %d: must be 0600 and ours", mp_rank, path,
               (unsigned)(sb.st_mode & 07777), (int)sb.st_uid);
        found++;
    }
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int np = tern_size();
    /* Traffic with every peer so every transport has set up what it lazily makes. */
    char b = 1;
    for (int p = 0; p < np; p++) {
        tern_request_t r;
        CHECK_OK(tern_isend(&b, 1, p, 1, TERN_COMM_WORLD, &r));
        char in;
        CHECK_OK(tern_recv(&in, 1, TERN_ANY_SOURCE, 1, TERN_COMM_WORLD, NULL));
        CHECK_OK(tern_wait(&r, NULL));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    collect_sockets();
    int segs = check_segments();
    int listeners = check_listeners();
    check_unix_paths();
    const char *want = getenv("OWNER_EXPECT") ? getenv("OWNER_EXPECT") : "";
    if (!strcmp(want, "shm"))
        CHECKF(segs > 0, "rank %d: no /dev/shm segment mapped (nothing was checked)", mp_rank);
    if (!strcmp(want, "tcp"))
        CHECKF(listeners > 0, "rank %d: no listening socket found (nothing was checked)", mp_rank);
    printf("owner_only rank %d: %d segments 0600, %d listening sockets on loopback, %d sockets\n",
           mp_rank, segs, listeners, nsock);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_finalize());
    return 0;
}
