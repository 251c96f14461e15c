/*
 * topo.c - the processor topology read from sysfs, and the placement of a node's ranks
 * on it (see topo.h). Every file read is a small text file of sysfs; a tree lacking the
 * optional ones (caches, NUMA) still gives a usable topology.
 */
#define _GNU_SOURCE
#include "util/topo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tern.h"
#include "util/tunables.h"

/* Read the small file root/path (printf-style) into buf, NUL-terminated. 0 or -1. */
static int topo_read(const char *root, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int topo_read(const char *root, char *buf, size_t len, const char *fmt, ...)
{
    char rel[256], path[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s/%s", root, rel);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n;
    do
        n = read(fd, buf, len - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0) return -1;
    buf[n] = '\0';
    return 0;
}

static int topo_read_int(const char *root, long *v, const char *fmt, int a, int b)
{
    char buf[64], rel[200];
    snprintf(rel, sizeof rel, fmt, a, b);
    if (topo_read(root, buf, sizeof buf, "%s", rel) != 0) return -1;
    char *end;
    errno = 0;
    *v = strtol(buf, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    return errno || end == buf || *end ? -1 : 0;
}

int topo_cpulist_parse(const char *text, cpu_set_t *out)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p)) return TERN_ERR_INVAL;
        long a = strtol(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p)) return TERN_ERR_INVAL;
            b = strtol(p, &end, 10);
            p = end;
        }
        if (a < 0 || b < a || b >= CPU_SETSIZE) return TERN_ERR_INVAL;
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, &set);
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',') {
            p++;
            if (!isdigit((unsigned char)*p)) return TERN_ERR_INVAL;
        } else if (*p) {
            return TERN_ERR_INVAL;
        }
    }
    *out = set;
    return 0;
}

void topo_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
    size_t off = 0;
    if (len) buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int n = e == c ? snprintf(buf + off, off < len ? len - off : 0, "%s%d", off ? "," : "", c)
                       : snprintf(buf + off, off < len ? len - off : 0, "%s%d-%d", off ? "," : "",
                                  c, e);
        if (n < 0 || off + (size_t)n >= len) return; /* truncated: snprintf left it terminated */
        off += (size_t)n;
        c = e;
    }
}

static int topo_set_min(const cpu_set_t *s)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, s)) return c;
    return -1;
}

/* The cgroup's cpuset: v2's cpuset.cpus.effective of this process's cgroup (real tree
 * only: a fake one has no /proc of its own), else the tree's top one, else v1's. */
static int topo_read_cpuset(const char *root, int real, cpu_set_t *out)
{
    char buf[4096];
    if (real) {
        char cg[1024];
        FILE *f = fopen("/proc/self/cgroup", "re");
        int found = 0;
        if (f) {
            while (!found && fgets(cg, sizeof cg, f))
                if (strncmp(cg, "0::", 3) == 0) {
                    cg[strcspn(cg, "\n")] = '\0';
                    found = 1;
                }
            fclose(f);
        }
        if (found && strlen(cg + 3) < 512 &&
            topo_read(root, buf, sizeof buf, "fs/cgroup%s/cpuset.cpus.effective", cg + 3) == 0 &&
            topo_cpulist_parse(buf, out) == 0 && CPU_COUNT(out) > 0)
            return 0;
    }
    if ((topo_read(root, buf, sizeof buf, "fs/cgroup/cpuset.cpus.effective") == 0 ||
         topo_read(root, buf, sizeof buf, "fs/cgroup/cpuset/cpuset.effective_cpus") == 0) &&
        topo_cpulist_parse(buf, out) == 0 && CPU_COUNT(out) > 0)
        return 0;
    return -1;
}

/* What one PU is made of before logical numbering. */
struct topo_raw {
    int os, socket, numa, l3, core;
};

static int topo_raw_cmp(const void *a, const void *b)
{
    const struct topo_raw *x = a, *y = b;
    int kx[5] = {x->socket, x->numa, x->l3, x->core, x->os};
    int ky[5] = {y->socket, y->numa, y->l3, y->core, y->os};
    for (int i = 0; i < 5; i++)
        if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* The caches of PU os: fills t->cache when `record`; returns the L3 key (its lowest PU)
 * and the PUs sharing it in *l3set, or -1 without an L3. */
static int topo_read_caches(struct topo *t, int os, int record, cpu_set_t *l3set)
{
    int l3 = -1;
    for (int k = 0; k < 16; k++) {
        long level;
        char buf[4096], type[32] = "";
        if (topo_read_int(t->root, &level, "devices/system/cpu/cpu%d/cache/index%d/level", os, k))
            break;
        if (topo_read(t->root, type, sizeof type, "devices/system/cpu/cpu%d/cache/index%d/type", os,
                      k))
            continue;
        cpu_set_t shared;
        CPU_ZERO(&shared);
        if (topo_read(t->root, buf, sizeof buf,
                      "devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", os, k) ||
            topo_cpulist_parse(buf, &shared))
            CPU_SET(os, &shared);
        if (level == 3 && type[0] != 'I') {
            l3 = topo_set_min(&shared);
            *l3set = shared;
        }
        if (record && t->ncache < (int)(sizeof t->cache / sizeof t->cache[0])) {
            struct topo_cache *c = &t->cache[t->ncache++];
            c->level = (int)level;
            c->type = type[0] == 'D' ? 'd' : type[0] == 'I' ? 'i' : 'u';
            c->kib = 0;
            if (topo_read(t->root, buf, sizeof buf, "devices/system/cpu/cpu%d/cache/index%d/size",
                          os, k) == 0) {
                char *end;
                c->kib = strtol(buf, &end, 10);
                if (*end == 'M') c->kib *= 1024;
            }
            c->sharing = CPU_COUNT(&shared);
        }
    }
    return l3;
}

int topo_load(struct topo *t, const char *root, const cpu_set_t *affinity)
{
    memset(t, 0, sizeof *t);
    if (root == NULL)
        root = util_tun.topo_sysfs && *util_tun.topo_sysfs ? util_tun.topo_sysfs : "/sys";
    snprintf(t->root, sizeof t->root, "%s", root);
    int real = strcmp(root, "/sys") == 0;

    char buf[4096];
    cpu_set_t online;
    if (topo_read(root, buf, sizeof buf, "devices/system/cpu/online") != 0)
        return TERN_ERR_UNSUPPORTED;
    if (topo_cpulist_parse(buf, &online) != 0) return TERN_ERR_INVAL;
    int n = CPU_COUNT(&online);
    if (n == 0) return TERN_ERR_UNSUPPORTED;

    struct topo_raw *raw = calloc((size_t)n, sizeof *raw);
    t->pu = calloc((size_t)n, sizeof *t->pu);
    if (raw == NULL || t->pu == NULL) {
        free(raw);
        topo_free(t);
        return TERN_ERR_NOMEM;
    }
    /* NUMA nodes: each node's cpulist names its PUs. */
    int numa_of[CPU_SETSIZE];
    for (int c = 0; c < CPU_SETSIZE; c++)
        numa_of[c] = 0;
    cpu_set_t nodes;
    if (topo_read(root, buf, sizeof buf, "devices/system/node/online") == 0 &&
        topo_cpulist_parse(buf, &nodes) == 0)
        for (int k = 0; k < CPU_SETSIZE; k++) {
            cpu_set_t cpus;
            if (!CPU_ISSET(k, &nodes) ||
                topo_read(root, buf, sizeof buf, "devices/system/node/node%d/cpulist", k) ||
                topo_cpulist_parse(buf, &cpus))
                continue;
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &cpus)) numa_of[c] = k;
        }

    /* A core's (an L3's) list names every PU of it: read once per core (L3), not per PU,
     * so a 384-thread node costs some 700 small reads, not 5000. */
    int core_key[CPU_SETSIZE], l3_key[CPU_SETSIZE];
    for (int c = 0; c < CPU_SETSIZE; c++)
        core_key[c] = l3_key[c] = -2;
    int i = 0;
    for (int c = 0; c < CPU_SETSIZE && i < n; c++) {
        if (!CPU_ISSET(c, &online)) continue;
        struct topo_raw *r = &raw[i++];
        long v;
        r->os = c;
        r->numa = numa_of[c];
        r->socket = topo_read_int(root, &v, "devices/system/cpu/cpu%d/topology/physical_package_id",
                                  c, 0) == 0 &&
                            v >= 0
                        ? (int)v
                        : 0;
        cpu_set_t sib;
        if (core_key[c] == -2) {
            core_key[c] = c;
            if ((topo_read(root, buf, sizeof buf,
                           "devices/system/cpu/cpu%d/topology/core_cpus_list", c) == 0 ||
                 topo_read(root, buf, sizeof buf,
                           "devices/system/cpu/cpu%d/topology/thread_siblings_list", c) == 0) &&
                topo_cpulist_parse(buf, &sib) == 0 && CPU_ISSET(c, &sib))
                for (int d = 0; d < CPU_SETSIZE; d++)
                    if (CPU_ISSET(d, &sib)) core_key[d] = topo_set_min(&sib);
        }
        r->core = core_key[c];
        if (l3_key[c] == -2 || i == 1) {
            cpu_set_t l3set;
            CPU_ZERO(&l3set);
            l3_key[c] = topo_read_caches(t, c, i == 1, &l3set);
            for (int d = 0; d < CPU_SETSIZE; d++)
                if (CPU_ISSET(d, &l3set)) l3_key[d] = l3_key[c];
        }
        r->l3 = l3_key[c];
    }
    qsort(raw, (size_t)n, sizeof *raw, topo_raw_cmp);

    /* Logical numbering: a new object of a level wherever the keys from socket down to
     * that level change. */
    for (i = 0; i < n; i++) {
        const struct topo_raw *r = &raw[i], *q = i ? &raw[i - 1] : NULL;
        int change_socket = !q || q->socket != r->socket;
        int change_numa = change_socket || q->numa != r->numa;
        int change_l3 = change_numa || q->l3 != r->l3;
        int change_core = change_l3 || q->core != r->core;
        int changed[TOPO_NLEVELS] = {1, change_core, change_l3, change_numa, change_socket};
        struct topo_pu *pu = &t->pu[i];
        pu->os = r->os;
        pu->numa_os = r->numa;
        for (int l = 0; l < TOPO_NLEVELS; l++) {
            if (changed[l]) t->count[l]++;
            pu->idx[l] = t->count[l] - 1;
        }
    }
    t->npu = n;
    free(raw);

    /* Allowed: online, in the cgroup's cpuset, in the affinity mask. */
    cpu_set_t cpuset, aff;
    t->allowed = online;
    if (topo_read_cpuset(root, real, &cpuset) == 0) {
        cpu_set_t both;
        CPU_AND(&both, &t->allowed, &cpuset);
        t->cpuset_limited = !CPU_EQUAL(&both, &t->allowed);
        t->allowed = both;
    }
    if (affinity)
        aff = *affinity;
    else if (sched_getaffinity(0, sizeof aff, &aff) != 0)
        aff = t->allowed;
    cpu_set_t both;
    CPU_AND(&both, &t->allowed, &aff);
    t->affinity_limited = !CPU_EQUAL(&both, &t->allowed);
    t->allowed = both;
    if (CPU_COUNT(&t->allowed) == 0) {
        topo_free(t);
        return TERN_ERR_UNSUPPORTED;
    }
    int last[TOPO_NLEVELS];
    for (int l = 0; l < TOPO_NLEVELS; l++)
        last[l] = -1;
    for (i = 0; i < n; i++) {
        struct topo_pu *pu = &t->pu[i];
        pu->allowed = CPU_ISSET(pu->os, &t->allowed);
        if (!pu->allowed) continue;
        /* Logical order keeps each object's PUs together, so a new index is a new object. */
        for (int l = 0; l < TOPO_NLEVELS; l++)
            if (pu->idx[l] != last[l]) {
                t->count_allowed[l]++;
                last[l] = pu->idx[l];
            }
    }
    return 0;
}

void topo_free(struct topo *t)
{
    free(t->pu);
    memset(t, 0, sizeof *t);
}

const char *topo_level_name(enum topo_level l)
{
    static const char *const names[TOPO_NLEVELS] = {"hwthread", "core", "l3cache", "numa",
                                                    "socket"};
    return l >= 0 && l < TOPO_NLEVELS ? names[l] : "none";
}

void topo_policy_default(struct topo_policy *p)
{
    p->bind = TOPO_BIND_AUTO;
    p->map = TOPO_CORE;
    p->pe = 1;
    p->explicit_bind = 0;
}

/* A level by any of the names people use; -1 if none. `slot` and `node` (every rank on
 * this node) map to -2: the plain order of cores. */
static int topo_level_parse(const char *s, size_t len)
{
    static const struct {
        const char *name;
        int level;
    } names[] = {
        {"hwthread", TOPO_PU},
        {"hwthreads", TOPO_PU},
        {"thread", TOPO_PU},
        {"threads", TOPO_PU},
        {"pu", TOPO_PU},
        {"hwt", TOPO_PU},
        {"core", TOPO_CORE},
        {"cores", TOPO_CORE},
        {"cpu", TOPO_CORE},
        {"l3cache", TOPO_L3},
        {"l3", TOPO_L3},
        {"numa", TOPO_NUMA},
        {"numanode", TOPO_NUMA},
        {"numa-node", TOPO_NUMA},
        {"socket", TOPO_SOCKET},
        {"sockets", TOPO_SOCKET},
        {"package", TOPO_SOCKET},
        {"slot", -2},
        {"node", -2},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && strncasecmp(s, names[i].name, len) == 0)
            return names[i].level;
    return -1;
}

/* A count of 1..4096 after the ':' of "core:2" or the '=' of "PE=2"; -1 if not one. */
static int topo_count_parse(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || end == s || *end || v < 1 || v > 4096 ? -1 : (int)v;
}

int topo_policy_parse(struct topo_policy *p, const char *bind, const char *map, char *err,
                      size_t errlen)
{
    struct topo_policy q = *p;
    if (bind) {
        size_t len = strcspn(bind, ":");
        const char *qual = bind[len] ? bind + len + 1 : NULL;
        int lvl = topo_level_parse(bind, len);
        if (len == 4 && strncasecmp(bind, "none", 4) == 0)
            q.bind = TOPO_BIND_NONE;
        else if (len == 4 && strncasecmp(bind, "auto", 4) == 0)
            q.bind = TOPO_BIND_AUTO;
        else if (lvl >= 0)
            q.bind = lvl;
        else {
            snprintf(err, errlen,
                     "'%s' is not a binding; use core, hwthread, l3cache, numa, "
                     "socket or none",
                     bind);
            return TERN_ERR_INVAL;
        }
        /* Open MPI's qualifiers change nothing here (overloading never fails); Hydra's
         * core:2 binds each rank to 2 of them. */
        if (qual && strcasecmp(qual, "overload-allowed") != 0 &&
            strcasecmp(qual, "if-supported") != 0) {
            int c = topo_count_parse(qual);
            if (c < 0 || q.bind < 0) {
                snprintf(err, errlen,
                         "'%s': after ':' comes a count (core:2), overload-allowed "
                         "or if-supported",
                         bind);
                return TERN_ERR_INVAL;
            }
            q.pe = c;
        }
        q.explicit_bind = q.bind != TOPO_BIND_AUTO;
    }
    if (map) {
        size_t len = strcspn(map, ":");
        int lvl = topo_level_parse(map, len);
        if (lvl == -1) {
            snprintf(err, errlen,
                     "'%s' is not a mapping; use core, hwthread, l3cache, numa, "
                     "socket or slot, optionally with :PE=n",
                     map);
            return TERN_ERR_INVAL;
        }
        q.map = lvl == -2 ? TOPO_CORE : lvl;
        const char *qual = map[len] ? map + len + 1 : NULL;
        while (qual && *qual) {
            size_t ql = strcspn(qual, ",:");
            char one[64];
            snprintf(one, sizeof one, "%.*s", (int)(ql < 63 ? ql : 63), qual);
            int c = strncasecmp(one, "pe=", 3) == 0 ? topo_count_parse(one + 3) : -1;
            if (c < 0) {
                snprintf(err, errlen,
                         "'%s': the only qualifier understood is PE=n (n cores per "
                         "rank, 1 to 4096)",
                         map);
                return TERN_ERR_INVAL;
            }
            q.pe = c;
            qual += ql;
            if (*qual) qual++;
        }
    }
    *p = q;
    return 0;
}

int topo_policy_resolve(const struct topo *t, const struct topo_policy *p, int lsize)
{
    if (p->bind != TOPO_BIND_AUTO) return p->bind;
    long need = (long)lsize * p->pe;
    if (need <= t->count_allowed[TOPO_CORE]) return p->map == TOPO_PU ? TOPO_PU : TOPO_CORE;
    if (need <= t->count_allowed[TOPO_PU]) return TOPO_PU;
    return TOPO_BIND_NONE;
}

int topo_place(const struct topo *t, const struct topo_policy *p, int lrank, int lsize,
               struct topo_binding *b)
{
    if (lsize < 1 || lrank < 0 || lrank >= lsize || p->pe < 1) return TERN_ERR_INVAL;
    memset(b, 0, sizeof *b);
    CPU_ZERO(&b->mask);
    int bind = topo_policy_resolve(t, p, lsize);
    /* The unit a rank is dealt: a core, or a PU when binding or mapping to PUs. */
    int unit = bind == TOPO_PU || p->map == TOPO_PU ? TOPO_PU : TOPO_CORE;
    int map = p->map < unit ? unit : p->map;
    int nunits = t->count_allowed[unit];
    b->oversub = (long)lsize * p->pe > nunits;
    if (bind == TOPO_BIND_NONE) return 0;
    if (b->oversub && bind <= TOPO_CORE) return 0;

    /* The allowed units in dealing order: round-robin over the map objects (a round
     * takes the next free unit of each), each object's units in logical order. first[u]
     * is unit u's first allowed PU. */
    int *first = malloc((size_t)nunits * sizeof *first);
    int *seq = malloc((size_t)nunits * sizeof *seq);
    if (first == NULL || seq == NULL) {
        free(first);
        free(seq);
        return TERN_ERR_NOMEM;
    }
    int nu = 0, lastidx = -1;
    for (int i = 0; i < t->npu; i++)
        if (t->pu[i].allowed && t->pu[i].idx[unit] != lastidx) {
            lastidx = t->pu[i].idx[unit];
            first[nu++] = i;
        }
    int ns = 0;
    int *nextu = malloc((size_t)t->count[map] * sizeof *nextu);
    if (nextu == NULL) {
        free(first);
        free(seq);
        return TERN_ERR_NOMEM;
    }
    for (int o = 0; o < t->count[map]; o++)
        nextu[o] = -1;
    for (int u = nu - 1; u >= 0; u--) /* first unit of each object */
        nextu[t->pu[first[u]].idx[map]] = u;
    while (ns < nu)
        for (int o = 0; o < t->count[map]; o++) {
            int u = nextu[o];
            if (u < 0) continue;
            seq[ns++] = u;
            nextu[o] = u + 1 < nu && t->pu[first[u + 1]].idx[map] == o ? u + 1 : -1;
        }
    free(nextu);

    for (int j = 0; j < p->pe; j++) {
        int u = seq[((long)lrank * p->pe + j) % nu];
        const struct topo_pu *pu = &t->pu[first[u]];
        if (j == 0) b->obj = pu->idx[bind];
        for (int i = 0; i < t->npu; i++) {
            const struct topo_pu *q = &t->pu[i];
            if (!q->allowed) continue;
            if (bind == TOPO_PU ? q == pu : q->idx[bind] == pu->idx[bind]) CPU_SET(q->os, &b->mask);
        }
    }
    b->bound = 1;
    b->level = bind;
    free(first);
    free(seq);
    return 0;
}

int topo_numa_node_of(const char *root, const cpu_set_t *mask)
{
    if (root == NULL)
        root = util_tun.topo_sysfs && *util_tun.topo_sysfs ? util_tun.topo_sysfs : "/sys";
    char buf[4096];
    cpu_set_t nodes;
    if (topo_read(root, buf, sizeof buf, "devices/system/node/online") != 0 ||
        topo_cpulist_parse(buf, &nodes) != 0 || CPU_COUNT(&nodes) < 2)
        return -1;
    int found = -1;
    for (int k = 0; k < CPU_SETSIZE; k++) {
        cpu_set_t cpus, both;
        if (!CPU_ISSET(k, &nodes) ||
            topo_read(root, buf, sizeof buf, "devices/system/node/node%d/cpulist", k) ||
            topo_cpulist_parse(buf, &cpus))
            continue;
        CPU_AND(&both, &cpus, mask);
        if (CPU_COUNT(&both) == 0) continue;
        if (found >= 0 || !CPU_EQUAL(&both, mask)) return -1; /* spans nodes */
        found = k;
    }
    return found;
}

int topo_threads_per_core(const char *root)
{
    if (root == NULL)
        root = util_tun.topo_sysfs && *util_tun.topo_sysfs ? util_tun.topo_sysfs : "/sys";
    char buf[4096];
    cpu_set_t sib;
    if (topo_read(root, buf, sizeof buf, "devices/system/cpu/cpu0/topology/thread_siblings_list") ||
        topo_cpulist_parse(buf, &sib) != 0 || CPU_COUNT(&sib) < 1)
        return 1;
    return CPU_COUNT(&sib);
}

int topo_my_numa_node(void)
{
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) return -1;
    return topo_numa_node_of(NULL, &mine);
}
