/*
 * test_topo.c - the sysfs topology reader and the placement rules on fake machines.
 *
 *   test_topo TREES_DIR
 *
 * TREES_DIR holds the trees mktree.py writes (2s2n-smt, cpuset). Every structure and
 * binding checked here is worked out by hand from mktree.py's description of the machine.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"
#include "util/topo.h"

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

static cpu_set_t set_of(const char *list)
{
    cpu_set_t s;
    if (topo_cpulist_parse(list, &s) != 0) {
        fprintf(stderr, "bad list in the test: %s\n", list);
        exit(1);
    }
    return s;
}

static cpu_set_t all_cpus(void)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &s);
    return s;
}

/* The binding of local rank r of n under (bind, map) is `want` ("" for unbound). */
static void expect_place(const struct topo *t, const char *bind, const char *map, int r, int n,
                         const char *want)
{
    struct topo_policy p;
    char err[300], got[256] = "";
    topo_policy_default(&p);
    int rc = topo_policy_parse(&p, bind, map, err, sizeof err);
    CHECK(rc == 0, "policy %s/%s: %s", bind, map, err);
    struct topo_binding b;
    rc = topo_place(t, &p, r, n, &b);
    CHECK(rc == 0, "topo_place %s", tern_err_name(rc));
    if (b.bound) topo_cpulist_format(&b.mask, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "--bind-to %s --map-by %s, rank %d of %d: cpus '%s', want '%s'",
          bind ? bind : "(default)", map ? map : "(default)", r, n, got, want);
}

static void test_cpulist(void)
{
    cpu_set_t s;
    char buf[64];
    CHECK(topo_cpulist_parse("0-3,8,10-11\n", &s) == 0 && CPU_COUNT(&s) == 7, "list");
    topo_cpulist_format(&s, buf, sizeof buf);
    CHECK(strcmp(buf, "0-3,8,10-11") == 0, "formatted as %s", buf);
    CHECK(topo_cpulist_parse("", &s) == 0 && CPU_COUNT(&s) == 0, "empty list");
    const char *bad[] = {"1-", "3-1", "a", "0,,1", "1024", "0-", ",1", "1 2", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(topo_cpulist_parse(bad[i], &s) == TERN_ERR_INVAL, "'%s' accepted", bad[i]);
}

static void test_policy_parse(void)
{
    struct topo_policy p, q;
    char err[300];
    /* The spellings of Open MPI and Hydra that mean the same binding. */
    const char *core[] = {"core", "cores", "CORE", "core:overload-allowed", "core:if-supported"};
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
        topo_policy_default(&p);
        CHECK(topo_policy_parse(&p, core[i], NULL, err, sizeof err) == 0 && p.bind == TOPO_CORE &&
                  p.pe == 1 && p.explicit_bind,
              "%s: %s", core[i], err);
    }
    const struct {
        const char *text;
        int level;
    } lv[] = {{"hwthread", TOPO_PU},   {"hwthreads", TOPO_PU},   {"thread", TOPO_PU},
              {"l3cache", TOPO_L3},    {"l3", TOPO_L3},          {"numa", TOPO_NUMA},
              {"socket", TOPO_SOCKET}, {"package", TOPO_SOCKET}, {"none", TOPO_BIND_NONE},
              {"auto", TOPO_BIND_AUTO}};
    for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++) {
        topo_policy_default(&p);
        CHECK(topo_policy_parse(&p, lv[i].text, NULL, err, sizeof err) == 0 &&
                  p.bind == lv[i].level,
              "bind %s gave %d", lv[i].text, p.bind);
    }
    topo_policy_default(&p);
    CHECK(topo_policy_parse(&p, "core:2", "socket:PE=3", err, sizeof err) == 0 &&
              p.map == TOPO_SOCKET && p.pe == 3,
          "core:2 with socket:PE=3 (the map's PE wins, it comes last): pe %d", p.pe);
    topo_policy_default(&p);
    CHECK(topo_policy_parse(&p, NULL, "slot", err, sizeof err) == 0 && p.map == TOPO_CORE, "slot");
    CHECK(topo_policy_parse(&p, NULL, "node", err, sizeof err) == 0 && p.map == TOPO_CORE, "node");
    CHECK(topo_policy_parse(&p, NULL, "numa:pe=2", err, sizeof err) == 0 && p.map == TOPO_NUMA &&
              p.pe == 2,
          "numa:pe=2");
    /* Bad values: a named error, a sentence naming the value, and p left as it was. */
    const char *badbind[] = {"cor", "core:x", "none:2", "core:0", "", "board"};
    for (size_t i = 0; i < sizeof badbind / sizeof badbind[0]; i++) {
        topo_policy_default(&p);
        q = p;
        err[0] = '\0';
        CHECK(topo_policy_parse(&p, badbind[i], NULL, err, sizeof err) == TERN_ERR_INVAL,
              "bind '%s' accepted", badbind[i]);
        CHECK(strstr(err, "binding") || strstr(err, "count"), "message: %s", err);
        CHECK(strstr(err, badbind[i]) != NULL, "message: %s", err);
        CHECK(memcmp(&p, &q, sizeof p) == 0, "policy changed by a bad bind '%s'", badbind[i]);
    }
    const char *badmap[] = {"ppr:2:socket", "core:PE=0", "core:PE=x", "core:span", "sockets:PE="};
    for (size_t i = 0; i < sizeof badmap / sizeof badmap[0]; i++) {
        topo_policy_default(&p);
        err[0] = '\0';
        CHECK(topo_policy_parse(&p, NULL, badmap[i], err, sizeof err) == TERN_ERR_INVAL,
              "map '%s' accepted", badmap[i]);
        CHECK(strstr(err, "mapping") || strstr(err, "PE=n"), "message: %s", err);
        CHECK(strstr(err, badmap[i]) != NULL, "message: %s", err);
    }
}

static void test_2s2n(const char *dir)
{
    char root[1024];
    snprintf(root, sizeof root, "%s/2s2n-smt", dir);
    cpu_set_t all = all_cpus();
    struct topo t;
    int rc = topo_load(&t, root, &all);
    CHECK(rc == 0, "load %s: %s", root, tern_err_name(rc));
    if (rc) return;
    int want[TOPO_NLEVELS] = {16, 8, 2, 2, 2};
    for (int l = 0; l < TOPO_NLEVELS; l++) {
        CHECK(t.count[l] == want[l], "%s: %d objects, want %d", topo_level_name(l), t.count[l],
              want[l]);
        CHECK(t.count_allowed[l] == want[l], "%s: %d allowed", topo_level_name(l),
              t.count_allowed[l]);
    }
    CHECK(!t.cpuset_limited && !t.affinity_limited, "limits %d %d", t.cpuset_limited,
          t.affinity_limited);
    /* Logical order: socket 0's cores (kernel cpus 0/8, 2/10, 4/12, 6/14), then socket 1's. */
    const int order[16] = {0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15};
    for (int i = 0; i < 16; i++) {
        const struct topo_pu *pu = &t.pu[i];
        int sock = i / 8;
        CHECK(pu->os == order[i], "pu %d is cpu %d, want %d", i, pu->os, order[i]);
        CHECK(pu->idx[TOPO_PU] == i && pu->idx[TOPO_CORE] == i / 2 && pu->idx[TOPO_L3] == sock &&
                  pu->idx[TOPO_NUMA] == sock && pu->idx[TOPO_SOCKET] == sock &&
                  pu->numa_os == sock && pu->allowed,
              "pu %d (cpu %d): core %d l3 %d numa %d socket %d node %d", i, pu->os,
              pu->idx[TOPO_CORE], pu->idx[TOPO_L3], pu->idx[TOPO_NUMA], pu->idx[TOPO_SOCKET],
              pu->numa_os);
    }
    CHECK(t.ncache == 4 && t.cache[0].level == 1 && t.cache[0].type == 'd' &&
              t.cache[1].type == 'i' && t.cache[2].level == 2 && t.cache[3].level == 3 &&
              t.cache[3].kib == 32768 && t.cache[3].sharing == 8 && t.cache[0].sharing == 2,
          "caches: %d", t.ncache);

    /* Placement. Default (auto): one core per rank while they fit. */
    expect_place(&t, NULL, NULL, 0, 4, "0,8");
    expect_place(&t, NULL, NULL, 3, 4, "6,14");
    expect_place(&t, "core", "core", 1, 2, "2,10");
    /* By socket: ranks alternate sockets. */
    expect_place(&t, "core", "socket", 1, 4, "1,9");
    expect_place(&t, "core", "socket", 2, 4, "2,10");
    expect_place(&t, "core", "numa", 3, 4, "3,11");
    /* NUMA binding: by core, ranks 0 and 1 share node 0; by numa, they take one each. */
    expect_place(&t, "numa", "core", 1, 2, "0,2,4,6,8,10,12,14");
    expect_place(&t, "numa", "numa", 1, 2, "1,3,5,7,9,11,13,15");
    expect_place(&t, "socket", "socket", 0, 2, "0,2,4,6,8,10,12,14");
    expect_place(&t, "l3cache", "l3cache", 1, 2, "1,3,5,7,9,11,13,15");
    /* Hardware threads: by core, one thread of each core first; by hwthread, siblings. */
    expect_place(&t, "hwthread", "core", 1, 2, "2");
    expect_place(&t, "hwthread", "core", 8, 16, "8");
    expect_place(&t, NULL, "hwthread", 1, 2, "8");
    /* PE=2: two cores each. */
    expect_place(&t, "core", "core:PE=2", 0, 2, "0,2,8,10");
    expect_place(&t, "core", "core:PE=2", 1, 2, "4,6,12,14");
    /* More ranks than cores: auto goes to threads, then to none; an explicit core binding
     * is dropped; a socket binding wraps round. */
    expect_place(&t, NULL, NULL, 1, 12, "2");
    expect_place(&t, NULL, NULL, 8, 12, "8");
    expect_place(&t, NULL, NULL, 0, 17, "");
    expect_place(&t, "core", NULL, 0, 9, "");
    expect_place(&t, "socket", "socket", 3, 20, "1,3,5,7,9,11,13,15");
    expect_place(&t, "none", NULL, 0, 2, "");
    struct topo_policy p;
    struct topo_binding b;
    topo_policy_default(&p);
    CHECK(topo_place(&t, &p, 2, 2, &b) == TERN_ERR_INVAL, "rank 2 of 2 placed");
    CHECK(topo_place(&t, &p, -1, 2, &b) == TERN_ERR_INVAL, "rank -1 placed");
    CHECK(topo_place(&t, &p, 0, 17, &b) == 0 && !b.bound && b.oversub, "17 ranks: oversub");

    /* The NUMA node of a mask, as the library finds it. */
    cpu_set_t m = set_of("1");
    CHECK(topo_numa_node_of(root, &m) == 1, "node of cpu 1");
    m = set_of("0,8");
    CHECK(topo_numa_node_of(root, &m) == 0, "node of cpus 0,8");
    m = set_of("0-1");
    CHECK(topo_numa_node_of(root, &m) == -1, "cpus 0-1 span nodes");
    topo_free(&t);

    /* A process allowed only cpus 0 and 1: one core on each socket. */
    cpu_set_t two = set_of("0-1");
    rc = topo_load(&t, root, &two);
    CHECK(rc == 0, "load with 0-1: %s", tern_err_name(rc));
    if (rc) return;
    int want2[TOPO_NLEVELS] = {2, 2, 2, 2, 2};
    for (int l = 0; l < TOPO_NLEVELS; l++)
        CHECK(t.count_allowed[l] == want2[l], "%s: %d allowed of cpus 0-1", topo_level_name(l),
              t.count_allowed[l]);
    CHECK(t.count[TOPO_PU] == 16 && t.affinity_limited, "the machine is still all there");
    expect_place(&t, "core", NULL, 0, 2, "0");
    expect_place(&t, "core", NULL, 1, 2, "1");
    expect_place(&t, NULL, NULL, 0, 3, "");
    topo_free(&t);
}

static void test_cpuset(const char *dir)
{
    char root[1024];
    snprintf(root, sizeof root, "%s/cpuset", dir);
    cpu_set_t all = all_cpus();
    struct topo t;
    int rc = topo_load(&t, root, &all);
    CHECK(rc == 0, "load %s: %s", root, tern_err_name(rc));
    if (rc) return;
    int want[TOPO_NLEVELS] = {8, 4, 2, 1, 1}, allowed[TOPO_NLEVELS] = {4, 2, 1, 1, 1};
    for (int l = 0; l < TOPO_NLEVELS; l++)
        CHECK(t.count[l] == want[l] && t.count_allowed[l] == allowed[l],
              "%s: %d objects (%d allowed), want %d (%d)", topo_level_name(l), t.count[l],
              t.count_allowed[l], want[l], allowed[l]);
    char buf[64];
    topo_cpulist_format(&t.allowed, buf, sizeof buf);
    CHECK(strcmp(buf, "2-3,6-7") == 0 && t.cpuset_limited && !t.affinity_limited,
          "allowed %s, cpuset limited %d", buf, t.cpuset_limited);
    /* No devices/system/node: one node, kernel number 0. */
    for (int i = 0; i < t.npu; i++)
        CHECK(t.pu[i].numa_os == 0 && t.pu[i].allowed == (t.pu[i].os % 4 >= 2), "cpu %d",
              t.pu[i].os);
    /* Ranks go only to the cpuset's cores. */
    expect_place(&t, NULL, NULL, 0, 2, "2,6");
    expect_place(&t, NULL, NULL, 1, 2, "3,7");
    expect_place(&t, NULL, NULL, 2, 3, "6");
    expect_place(&t, NULL, NULL, 0, 5, "");
    expect_place(&t, "l3cache", NULL, 1, 2, "2-3,6-7");
    cpu_set_t m = set_of("2");
    CHECK(topo_numa_node_of(root, &m) == -1, "no NUMA information: no node");
    topo_free(&t);

    /* The cpuset and the affinity mask do not meet: nothing to bind to. */
    cpu_set_t none = set_of("0-1");
    CHECK(topo_load(&t, root, &none) == TERN_ERR_UNSUPPORTED, "empty allowed set loaded");
    CHECK(t.pu == NULL && t.npu == 0, "t not left empty");
    /* No tree at all. */
    snprintf(root, sizeof root, "%s/no-such-tree", dir);
    CHECK(topo_load(&t, root, &all) == TERN_ERR_UNSUPPORTED, "missing tree loaded");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_topo TREES_DIR\n");
        return 2;
    }
    test_cpulist();
    test_policy_parse();
    test_2s2n(argv[1]);
    test_cpuset(argv[1]);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("topo: all checks passed\n");
    return 0;
}
