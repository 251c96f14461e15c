/*
 * test_shmseg_place.c - shmseg_place puts a segment's pages on a NUMA node.
 *
 * On node 0 (every Linux machine has it) the segment's policy must read back as "preferably
 * node 0" and every page must lie there, with the data intact; a node the kernel does not
 * have is TERN_ERR_UNSUPPORTED and leaves the policy alone; bad arguments are named errors.
 * Exits 77 when the kernel or a seccomp filter refuses mbind altogether.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tern.h"
#include "util/shmseg.h"
#include "util/topo.h"

#define MPOL_PREFERRED 1
#define MPOL_F_NODE    1
#define MPOL_F_ADDR    2

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The policy of the page at p: mode and the first word of its node mask. */
static int policy_of(void *p, int *mode, unsigned long *mask0)
{
    unsigned long mask[16];
    memset(mask, 0, sizeof mask);
    if (syscall(SYS_get_mempolicy, mode, mask, 8 * sizeof mask + 1, p, MPOL_F_ADDR) != 0) return -1;
    *mask0 = mask[0];
    return 0;
}

int main(void)
{
    const size_t size = 1u << 20, page = (size_t)sysconf(_SC_PAGESIZE);
    char job[64];
    snprintf(job, sizeof job, "placetest%d", (int)getpid());
    struct shmseg s;
    int rc = shmseg_create(&s, job, "place", 0, shmseg_nonce(), size, "test segment");
    if (rc) {
        fprintf(stderr, "cannot create the test segment: %s\n", tern_err_name(rc));
        return 1;
    }
    for (size_t i = 0; i < size; i++)
        ((unsigned char *)s.base)[i] = (unsigned char)(i * 7 + 3);

    rc = shmseg_place(&s, 0);
    if (rc == TERN_ERR_UNSUPPORTED) {
        /* Tell a refused syscall (container seccomp, no CONFIG_NUMA) from a bug. */
        unsigned long one = 1;
        long r = syscall(SYS_mbind, s.base, page, MPOL_PREFERRED, &one, 65, 0);
        if (r != 0 && (errno == EPERM || errno == ENOSYS)) {
            printf("mbind is not available here (%s): skipped\n", strerror(errno));
            shmseg_close(&s);
            return 77;
        }
    }
    CHECK(rc == 0, "place on node 0: %s", tern_err_name(rc));
    int mode = -1;
    unsigned long mask = 0;
    CHECK(policy_of(s.base, &mode, &mask) == 0 && mode == MPOL_PREFERRED && mask == 1,
          "policy after placing on node 0: mode %d mask %#lx (%s)", mode, mask, strerror(errno));
    for (size_t off = 0; off < size; off += page) {
        int node = -1;
        long r = syscall(SYS_get_mempolicy, &node, NULL, 0, (char *)s.base + off,
                         MPOL_F_NODE | MPOL_F_ADDR);
        CHECK(r == 0 && node == 0, "page at +%zu on node %d", off, node);
        if (r != 0 || node != 0) break;
    }
    size_t bad = size;
    for (size_t i = 0; i < size && bad == size; i++)
        if (((unsigned char *)s.base)[i] != (unsigned char)(i * 7 + 3)) bad = i;
    CHECK(bad == size, "data changed at byte %zu", bad);

    /* A node this kernel does not have: the one after its highest. */
    char buf[256] = "";
    FILE *f = fopen("/sys/devices/system/node/online", "re");
    cpu_set_t nodes;
    CPU_ZERO(&nodes);
    if (f) {
        if (fgets(buf, sizeof buf, f) == NULL) buf[0] = '\0';
        fclose(f);
    }
    int missing = 1;
    if (topo_cpulist_parse(buf, &nodes) == 0)
        for (int n = 0; n < 1023; n++)
            if (CPU_ISSET(n, &nodes)) missing = n + 1;
    rc = shmseg_place(&s, missing);
    CHECK(rc == TERN_ERR_UNSUPPORTED, "place on missing node %d: %s", missing, tern_err_name(rc));
    CHECK(policy_of(s.base, &mode, &mask) == 0 && mode == MPOL_PREFERRED && mask == 1,
          "policy after a refused placement: mode %d mask %#lx", mode, mask);

    CHECK(shmseg_place(&s, -1) == 0, "node -1 is 'nowhere in particular'");
    CHECK(shmseg_place(&s, 1024) == TERN_ERR_INVAL, "node 1024 accepted");
    char name[SHMSEG_NAME_MAX + 16];
    snprintf(name, sizeof name, "/dev/shm%s", s.name);
    shmseg_close(&s);
    CHECK(shmseg_place(&s, 0) == TERN_ERR_INVAL, "an empty segment placed");
    struct stat st;
    CHECK(stat(name, &st) != 0, "%s left behind", name);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("shmseg_place: all checks passed\n");
    return 0;
}
