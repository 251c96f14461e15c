/*
 * boot.c - PMI-1 "simple" wire-protocol client. The same binary therefore starts under
 * ternrun, MPICH's Hydra and anything else that serves PMI-1; with no PMI environment
 * the process is a singleton job of size 1 with a local key-value store.
 */
#define _GNU_SOURCE
#include "boot/boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/pmi_wire.h"
#include "tern.h"
#include "util/log.h"
#include "util/tunables.h"

struct boot_kv {
    struct boot_kv *next;
    char *key;
    char *val;
};

static struct pmi_reader boot_reader;

/* News the launcher sends unasked, between replies: cmd=tern_peer_failed rank=R. Kept
 * until boot_poll hands it to core. Returns 1 if the line was news. */
static int boot_news(struct boot *b, const struct pmi_msg *msg)
{
    const char *cmd = pmi_msg_get(msg, "cmd");
    int rank;
    if (cmd == NULL || strcmp(cmd, "tern_peer_failed") != 0) return 0;
    if (pmi_msg_get_int(msg, "rank", &rank) != 0 || rank < 0 || rank >= b->size) return 1;
    if (b->nfailed_news == b->failed_news_cap) {
        int cap = b->failed_news_cap ? 2 * b->failed_news_cap : 8;
        int *n = realloc(b->failed_news, (size_t)cap * sizeof *n);
        if (n == NULL) return 1; /* the liveness check still finds a local rank */
        b->failed_news = n;
        b->failed_news_cap = cap;
    }
    b->failed_news[b->nfailed_news++] = rank;
    return 1;
}

/* Send one command line and read the one-line reply whose cmd= is `expect`. */
static int boot_call_wait(struct boot *b, const char *req, const char *expect, char *line_out,
                          struct pmi_msg *msg);

/* A PMI call, recorded for the hang report while it waits (a stuck barrier shows). */
static int boot_call(struct boot *b, const char *req, const char *expect, char *line_out,
                     struct pmi_msg *msg)
{
    b->in_call = expect;
    int rc = boot_call_wait(b, req, expect, line_out, msg);
    b->in_call = NULL;
    return rc;
}

/* The next line from the launcher that is not news, parsed into msg (its text in
 * line_out). Returns 0 or TERN_ERR_BOOT. */
static int boot_next_msg(struct boot *b, char *line_out, struct pmi_msg *msg)
{
    for (;;) {
        char *line;
        int got = pmi_reader_line(&boot_reader, &line);
        if (got < 0) return TERN_ERR_BOOT;
        if (got == 0) {
            ssize_t n = pmi_reader_fill(&boot_reader, b->fd);
            if (n <= 0) {
                UTIL_ERROR("PMI connection to the launcher lost");
                return TERN_ERR_BOOT;
            }
            continue;
        }
        size_t len = strlen(line);
        if (len >= PMI_WIRE_MAX_LINE) return TERN_ERR_BOOT;
        memcpy(line_out, line, len + 1);
        if (pmi_wire_parse(line_out, msg) != 0) return TERN_ERR_BOOT;
        if (boot_news(b, msg)) continue;
        return 0;
    }
}

static int boot_call_wait(struct boot *b, const char *req, const char *expect, char *line_out,
                          struct pmi_msg *msg)
{
    b->nrequests++;
    if (pmi_write_all(b->fd, req, strlen(req)) != 0) {
        UTIL_ERROR("PMI write failed: %s", strerror(errno));
        return TERN_ERR_BOOT;
    }
    int rc = boot_next_msg(b, line_out, msg);
    if (rc) return rc;
    const char *cmd = pmi_msg_get(msg, "cmd");
    if (cmd == NULL || strcmp(cmd, expect) != 0) {
        UTIL_ERROR("PMI: expected cmd=%s, got %s", expect, cmd ? cmd : "(none)");
        return TERN_ERR_BOOT;
    }
    if (pmi_msg_get(msg, "rc") && (pmi_msg_get_int(msg, "rc", &rc) != 0 || rc != 0))
        return TERN_ERR_BOOT;
    return 0;
}

static int env_int(const char *name, int *out)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return -1;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end != '\0' || x < 0 || x > 0x7fffffff) return -1;
    *out = (int)x;
    return 0;
}

/* Fill node_of from PMI_process_mapping, or from published host names. */
static int boot_layout(struct boot *b)
{
    char val[PMI_WIRE_VAL_MAX];
    b->node_of = calloc((size_t)b->size, sizeof(int));
    b->local_ranks = calloc((size_t)b->size, sizeof(int));
    if (b->node_of == NULL || b->local_ranks == NULL) return TERN_ERR_NOMEM;
    if (b->singleton) {
        b->node_of[0] = 0;
    } else if (boot_get(b, "PMI_process_mapping", val, sizeof val) == 0 &&
               pmi_wire_parse_mapping(val, b->size, b->node_of) == 0) {
        UTIL_DEBUG(1, "process mapping %s", val);
    } else {
        /* No mapping: publish our host name and compare. */
        char host[256], key[64];
        if (gethostname(host, sizeof host) != 0) strcpy(host, "localhost");
        host[sizeof host - 1] = '\0';
        snprintf(key, sizeof key, "tern-host-%d", b->rank);
        int rc = boot_put(b, key, host);
        if (rc == 0) rc = boot_fence(b);
        if (rc != 0) return rc;
        char(*hosts)[256] = calloc((size_t)b->size, sizeof *hosts);
        if (hosts == NULL) return TERN_ERR_NOMEM;
        int nodes = 0;
        for (int r = 0; r < b->size && rc == 0; r++) {
            snprintf(key, sizeof key, "tern-host-%d", r);
            rc = boot_get(b, key, hosts[r], sizeof hosts[r]);
            b->node_of[r] = -1;
            for (int q = 0; q < r; q++)
                if (strcmp(hosts[q], hosts[r]) == 0) {
                    b->node_of[r] = b->node_of[q];
                    break;
                }
            if (b->node_of[r] < 0) b->node_of[r] = nodes++;
        }
        free(hosts);
        if (rc != 0) return rc;
    }
    b->local_size = 0;
    for (int r = 0; r < b->size; r++) {
        if (b->node_of[r] != b->node_of[b->rank]) continue;
        if (r == b->rank) b->local_rank = b->local_size;
        b->local_ranks[b->local_size++] = r;
    }
    return 0;
}

int boot_init(struct boot *b)
{
    memset(b, 0, sizeof *b);
    memset(&boot_reader, 0, sizeof boot_reader);
    b->fd = -1;
    int fd;
    if (env_int("PMI_FD", &fd) != 0) {
        b->singleton = 1;
        b->rank = 0;
        b->size = 1;
        snprintf(b->kvsname, sizeof b->kvsname, "single%ld", (long)getpid());
        return boot_layout(b);
    }
    b->fd = fd;
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (env_int("PMI_RANK", &b->rank) != 0 || env_int("PMI_SIZE", &b->size) != 0 || b->size < 1 ||
        b->rank >= b->size) {
        UTIL_ERROR("PMI_FD is set but PMI_RANK/PMI_SIZE are missing or invalid");
        return TERN_ERR_BOOT;
    }
    util_log_rank = b->rank;
    char line[PMI_WIRE_MAX_LINE + 1];
    struct pmi_msg msg;
    int rc =
        boot_call(b, "cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", line, &msg);
    if (rc) return rc;
    b->ternrun = pmi_msg_get(&msg, "tern") != NULL;
    rc = boot_call(b, "cmd=get_maxes\n", "maxes", line, &msg);
    if (rc) return rc;
    rc = boot_call(b, "cmd=get_my_kvsname\n", "my_kvsname", line, &msg);
    if (rc) return rc;
    const char *kvs = pmi_msg_get(&msg, "kvsname");
    if (kvs == NULL || strlen(kvs) >= sizeof b->kvsname) return TERN_ERR_BOOT;
    strcpy(b->kvsname, kvs);
    return boot_layout(b);
}

int boot_put(struct boot *b, const char *key, const char *val)
{
    if (b->singleton) {
        struct boot_kv *kv = calloc(1, sizeof *kv);
        if (kv == NULL) return TERN_ERR_NOMEM;
        kv->key = strdup(key);
        kv->val = strdup(val);
        if (!kv->key || !kv->val) {
            free(kv->key);
            free(kv->val);
            free(kv);
            return TERN_ERR_NOMEM;
        }
        kv->next = b->local_kv;
        b->local_kv = kv;
        return 0;
    }
    char req[PMI_WIRE_MAX_LINE], line[PMI_WIRE_MAX_LINE + 1];
    struct pmi_msg msg;
    int n = snprintf(req, sizeof req, "cmd=put kvsname=%s key=%s value=%s\n", b->kvsname, key, val);
    if (n < 0 || (size_t)n >= sizeof req) return TERN_ERR_BOOT;
    return boot_call(b, req, "put_result", line, &msg);
}

int boot_fence(struct boot *b)
{
    if (b->singleton) return 0;
    char line[PMI_WIRE_MAX_LINE + 1];
    struct pmi_msg msg;
    return boot_call(b, "cmd=barrier_in\n", "barrier_out", line, &msg);
}

/* The cache slot of key: the entry holding it, or the empty slot where it goes. */
static struct boot_kv **boot_cache_slot(struct boot_kv **tab, size_t cap, const char *key)
{
    size_t i = (size_t)pmi_wire_hash(key) & (cap - 1);
    while (tab[i] != NULL && strcmp(tab[i]->key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static const char *boot_cache_get(const struct boot *b, const char *key)
{
    if (b->cache == NULL) return NULL;
    struct boot_kv *kv = *boot_cache_slot(b->cache, b->cache_cap, key);
    return kv ? kv->val : NULL;
}

/* Add key=val to the cache (a key already there keeps its value: keys never change). */
static int boot_cache_put(struct boot *b, const char *key, const char *val)
{
    if ((b->cache_count + 1) * 2 > b->cache_cap) {
        size_t cap = b->cache_cap ? 2 * b->cache_cap : 256;
        struct boot_kv **tab = calloc(cap, sizeof *tab);
        if (tab == NULL) return TERN_ERR_NOMEM;
        for (size_t i = 0; i < b->cache_cap; i++)
            if (b->cache[i]) *boot_cache_slot(tab, cap, b->cache[i]->key) = b->cache[i];
        free(b->cache);
        b->cache = tab;
        b->cache_cap = cap;
    }
    struct boot_kv **slot = boot_cache_slot(b->cache, b->cache_cap, key);
    if (*slot) return 0;
    size_t kl = strlen(key) + 1, vl = strlen(val) + 1;
    struct boot_kv *kv = malloc(sizeof *kv + kl + vl); /* one allocation: key, value after */
    if (kv == NULL) return TERN_ERR_NOMEM;
    kv->next = NULL;
    kv->key = (char *)(kv + 1);
    kv->val = kv->key + kl;
    memcpy(kv->key, key, kl);
    memcpy(kv->val, val, vl);
    *slot = kv;
    b->cache_count++;
    return 0;
}

int boot_prefetch(struct boot *b, const char *prefix)
{
    if (b->singleton || b->fd < 0 || !b->ternrun || !util_tun.pmi_bulk) return 0;
    char req[PMI_WIRE_MAX_LINE], line[PMI_WIRE_MAX_LINE + 1];
    struct pmi_msg msg;
    int start = 0, got = 0;
    size_t bytes = 0;
    while (start >= 0) {
        msg.npairs = 0;
        int n = snprintf(req, sizeof req, "cmd=tern_getall kvsname=%s prefix=%s start=%d\n",
                         b->kvsname, prefix, start);
        if (n < 0 || (size_t)n >= sizeof req) return TERN_ERR_BOOT;
        int rc = boot_call(b, req, "tern_getall_result", line, &msg);
        if (rc) {
            /* A ternrun from before tern_getall: fall back to gets, key by key. */
            const char *why = pmi_msg_get(&msg, "msg");
            if (why && strcmp(why, "unknown_command") == 0 && start == 0) return 0;
            if (why) UTIL_ERROR("PMI: bulk get of '%s*' refused (%s)", prefix, why);
            return TERN_ERR_BOOT;
        }
        int count, next;
        if (pmi_wire_bulk_head(&msg, start, &count, &next) != 0) {
            UTIL_ERROR("PMI: malformed bulk reply head");
            return TERN_ERR_BOOT;
        }
        b->in_call = "tern_kv";
        for (int i = 0; i < count; i++) {
            const char *key = NULL, *val = NULL;
            rc = boot_next_msg(b, line, &msg);
            if (rc || pmi_wire_bulk_entry(&msg, prefix, &key, &val) != 0) {
                UTIL_ERROR("PMI: bulk reply cut short or malformed at entry %d of %d", i + 1,
                           count);
                rc = TERN_ERR_BOOT;
            }
            if (rc == 0 && (bytes += strlen(key) + strlen(val)) > PMI_WIRE_BULK_TOTAL_MAX) {
                UTIL_ERROR("PMI: bulk reply of more than %zu bytes of keys",
                           PMI_WIRE_BULK_TOTAL_MAX);
                rc = TERN_ERR_BOOT;
            }
            if (rc == 0) rc = boot_cache_put(b, key, val);
            if (rc) {
                b->in_call = NULL;
                return rc;
            }
        }
        b->in_call = NULL;
        got += count;
        start = next;
    }
    UTIL_DEBUG(1, "boot: %d key(s) '%s*' taken in bulk", got, prefix);
    return 0;
}

int boot_get(struct boot *b, const char *key, char *val, size_t cap)
{
    const char *v = boot_cache_get(b, key);
    if (v != NULL) {
        if (strlen(v) >= cap) return TERN_ERR_BOOT;
        strcpy(val, v);
        return 0;
    }
    char req[PMI_WIRE_MAX_LINE], line[PMI_WIRE_MAX_LINE + 1];
    struct pmi_msg msg;
    if (b->singleton) {
        for (struct boot_kv *kv = b->local_kv; kv; kv = kv->next)
            if (strcmp(kv->key, key) == 0) {
                v = kv->val;
                break;
            }
    } else {
        int n = snprintf(req, sizeof req, "cmd=get kvsname=%s key=%s\n", b->kvsname, key);
        if (n < 0 || (size_t)n >= sizeof req) return TERN_ERR_BOOT;
        int rc = boot_call(b, req, "get_result", line, &msg);
        if (rc) return rc;
        v = pmi_msg_get(&msg, "value");
    }
    if (v == NULL || strlen(v) >= cap) return TERN_ERR_BOOT;
    strcpy(val, v);
    return 0;
}

int boot_finalize(struct boot *b)
{
    int rc = 0;
    if (!b->singleton && b->fd >= 0) {
        char line[PMI_WIRE_MAX_LINE + 1];
        struct pmi_msg msg;
        rc = boot_call(b, "cmd=finalize\n", "finalize_ack", line, &msg);
        close(b->fd);
        b->fd = -1;
    }
    return rc;
}

void boot_abort(struct boot *b, int code, const char *msg)
{
    if (b->singleton || b->fd < 0) return;
    char req[512];
    char clean[400];
    /* Values carry no spaces: escape them (ternrun decodes; other launchers show it). */
    pmi_wire_escape(msg, clean, sizeof clean);
    int n = snprintf(req, sizeof req, "cmd=abort exitcode=%d msg=%s\n", code, clean);
    if (n > 0) (void)pmi_write_all(b->fd, req, (size_t)n < sizeof req ? (size_t)n : sizeof req - 1);
}

int boot_tolerate(struct boot *b)
{
    if (b->singleton || b->fd < 0 || !b->ternrun) return 0;
    static const char req[] = "cmd=tern_tolerate\n"; /* no reply */
    return pmi_write_all(b->fd, req, sizeof req - 1) == 0 ? 0 : TERN_ERR_BOOT;
}

int boot_report_ready(struct boot *b, int sig)
{
    if (b->singleton || b->fd < 0 || !b->ternrun) return 0;
    char req[64];
    int n = snprintf(req, sizeof req, "cmd=tern_report_ready sig=%d\n", sig); /* no reply */
    return pmi_write_all(b->fd, req, (size_t)n) == 0 ? 0 : TERN_ERR_BOOT;
}

int boot_poll(struct boot *b, void (*failed)(int rank))
{
    if (b->singleton || b->fd < 0) return 0;
    int gone = 0;
    struct pollfd p = {.fd = b->fd, .events = POLLIN};
    if (poll(&p, 1, 0) > 0) {
        if (p.revents & POLLIN) {
            /* Readable: one read takes what is there (the launcher's news is short). */
            if (pmi_reader_fill(&boot_reader, b->fd) <= 0) gone = 1;
        } else if (p.revents & (POLLHUP | POLLERR)) {
            gone = 1;
        }
        char *line;
        while (pmi_reader_line(&boot_reader, &line) > 0) {
            struct pmi_msg msg;
            if (pmi_wire_parse(line, &msg) == 0) (void)boot_news(b, &msg);
        }
    }
    /* Hand the news over one at a time: failed() may call back into boot. */
    while (b->nfailed_news > 0)
        failed(b->failed_news[--b->nfailed_news]);
    return gone ? TERN_ERR_PEER_FAILED : 0;
}

void boot_release(struct boot *b)
{
    free(b->failed_news);
    b->failed_news = NULL;
    b->nfailed_news = b->failed_news_cap = 0;
    free(b->node_of);
    free(b->local_ranks);
    while (b->local_kv) {
        struct boot_kv *kv = b->local_kv;
        b->local_kv = kv->next;
        free(kv->key);
        free(kv->val);
        free(kv);
    }
    for (size_t i = 0; i < b->cache_cap; i++)
        free(b->cache ? b->cache[i] : NULL);
    free(b->cache);
    b->cache = NULL;
    b->cache_cap = b->cache_count = 0;
    b->node_of = b->local_ranks = NULL;
    if (b->fd >= 0) close(b->fd);
    b->fd = -1;
}
