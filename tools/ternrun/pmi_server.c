/*
 * pmi_server.c - the PMI-1 "simple" wire protocol, server side: one key-value space
 * per job, the job-wide barrier, finalize and abort.
 *
 * Lines are read and split with the same code the client in libtern uses
 * (boot/pmi_wire.c), so both sides agree on one grammar. Every rank's socket is
 * non-blocking: a client that sends garbage gets an rc=-1 reply when the command is
 * recognisable and its connection closed when it is not, and a client that stops
 * reading its replies is disconnected rather than allowed to block the launcher.
 * Puts are visible at once, which is stronger than PMI-1's promise that puts made
 * before a barrier are visible after it.
 *
 * Across hosts the same server runs in every proxy, for its own ranks. Entries put
 * since the last barrier are marked new: a proxy sends its new entries to the root
 * with the host's barrier_in (once all its ranks are in), and the root sends all new
 * entries to every proxy with barrier_out, so a get is always answered on the host.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ternrun.h"

/* The key-value space: open addressing with linear probing, kept under half full.
 * Keys and values are bounded by the wire (PMI_WIRE_KEY_MAX, PMI_WIRE_VAL_MAX) and the
 * whole space by RUN_KVS_MAX_BYTES, each entry charged its bytes plus RUN_KVS_OVERHEAD
 * for its slot and allocations: a rank that puts without end gets rc=-1 msg=kvs_full
 * instead of growing ternrun without bound. 64 MiB holds ~60,000 entries of the
 * largest size, far more than any job's startup exchange (a few per rank). */
#define RUN_KVS_MAX_BYTES ((size_t)64 << 20)
#define RUN_KVS_OVERHEAD  64
struct run_kvs_slot {
    char *key; /* NULL if the slot is empty */
    char *val;
    int fresh; /* put since the last barrier: to be passed on */
};

struct run_kvs_entry {
    const char *key; /* the strings a slot owns */
    const char *val;
};

struct run_kvs {
    size_t cap; /* a power of two */
    size_t count;
    size_t bytes; /* charged so far, against RUN_KVS_MAX_BYTES */
    struct run_kvs_slot *slots;
    /* Every entry in the order it was put, for tern_getall: a position in it stays
     * valid however the table grows, so a bulk get can go on where its last reply
     * stopped. count entries, room for order_cap. */
    struct run_kvs_entry *order;
    size_t order_cap;
};

static struct run_kvs_slot *kvs_slot(struct run_kvs *kvs, const char *key)
{
    size_t i = (size_t)pmi_wire_hash(key) & (kvs->cap - 1);
    while (kvs->slots[i].key != NULL && strcmp(kvs->slots[i].key, key) != 0)
        i = (i + 1) & (kvs->cap - 1);
    return &kvs->slots[i];
}

static int kvs_grow(struct run_kvs *kvs)
{
    struct run_kvs old = *kvs;
    kvs->cap = old.cap * 2;
    kvs->slots = calloc(kvs->cap, sizeof *kvs->slots);
    if (kvs->slots == NULL) {
        *kvs = old;
        return -1;
    }
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].key) *kvs_slot(kvs, old.slots[i].key) = old.slots[i];
    free(old.slots);
    return 0;
}

static const char *kvs_get(struct run_kvs *kvs, const char *key)
{
    return kvs_slot(kvs, key)->val;
}

/* Returns 0, or a reason for the msg= of an rc=-1 reply. */
static const char *kvs_put(struct run_kvs *kvs, const char *key, const char *val, int fresh)
{
    size_t charge = strlen(key) + strlen(val) + 2 + RUN_KVS_OVERHEAD;
    struct run_kvs_slot *s = kvs_slot(kvs, key);
    if (s->key != NULL) return "duplicate_key";
    if (kvs->bytes + charge > RUN_KVS_MAX_BYTES) return "kvs_full";
    if ((kvs->count + 1) * 2 > kvs->cap) {
        if (kvs_grow(kvs) != 0) return "out_of_memory";
        s = kvs_slot(kvs, key);
    }
    if (kvs->count == kvs->order_cap) {
        size_t cap = kvs->order_cap ? 2 * kvs->order_cap : 64;
        struct run_kvs_entry *o = realloc(kvs->order, cap * sizeof *o);
        if (o == NULL) return "out_of_memory";
        kvs->order = o;
        kvs->order_cap = cap;
    }
    s->fresh = fresh;
    char *k = strdup(key), *v = strdup(val);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return "out_of_memory";
    }
    s->key = k;
    s->val = v;
    kvs->order[kvs->count].key = k;
    kvs->order[kvs->count].val = v;
    kvs->count++;
    kvs->bytes += charge;
    return NULL;
}

/*
 * The job secret: 128 random bits, in hex, under the key tern-secret. It reaches the
 * ranks only through this key-value space (never a command line or the environment);
 * the tcp transport refuses connections that do not present it.
 */
static int pmi_put_secret(struct run_kvs *kvs)
{
    unsigned char raw[16];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    static const char digits[] = "0123456789abcdef";
    char hex[2 * sizeof raw + 1];
    for (size_t i = 0; i < sizeof raw; i++) {
        hex[2 * i] = digits[raw[i] >> 4];
        hex[2 * i + 1] = digits[raw[i] & 15];
    }
    hex[2 * sizeof raw] = '\0';
    return kvs_put(kvs, "tern-secret", hex, 0) == NULL ? 0 : -1;
}

int run_pmi_init(struct run_job *job)
{
    job->kvs = calloc(1, sizeof *job->kvs);
    if (job->kvs == NULL) return -1;
    job->kvs->cap = 64;
    while (job->kvs->cap < (size_t)job->size * 8)
        job->kvs->cap *= 2;
    job->kvs->slots = calloc(job->kvs->cap, sizeof *job->kvs->slots);
    if (job->kvs->slots == NULL) {
        free(job->kvs);
        job->kvs = NULL;
        return -1;
    }
    if (job->proxy) return 0;    /* the root's entries come with the job */
    if (job->mapping[0] == '\0') /* one node holding every rank, as Hydra writes it */
        snprintf(job->mapping, sizeof job->mapping, "(vector,(0,1,%d))", job->size);
    if (kvs_put(job->kvs, "PMI_process_mapping", job->mapping, 0) != NULL) {
        run_pmi_fini(job);
        return -1;
    }
    if (pmi_put_secret(job->kvs) != 0) {
        fprintf(stderr, "ternrun: cannot make the job secret: %s\n", strerror(errno));
        run_pmi_fini(job);
        return -1;
    }
    return 0;
}

void run_pmi_fini(struct run_job *job)
{
    if (job->kvs == NULL) return;
    for (size_t i = 0; i < job->kvs->cap; i++) {
        free(job->kvs->slots[i].key);
        free(job->kvs->slots[i].val);
    }
    free(job->kvs->slots);
    free(job->kvs->order);
    free(job->kvs);
    job->kvs = NULL;
}

int run_pmi_kvs_dump(struct run_job *job, int only_new, char **buf, size_t *len)
{
    struct run_kvs *kvs = job->kvs;
    size_t need = 0;
    for (size_t i = 0; i < kvs->cap; i++)
        if (kvs->slots[i].key && (!only_new || kvs->slots[i].fresh))
            need += strlen(kvs->slots[i].key) + strlen(kvs->slots[i].val) + 2;
    char *b = malloc(need + 1);
    if (b == NULL) return -1;
    size_t used = 0;
    for (size_t i = 0; i < kvs->cap; i++) {
        struct run_kvs_slot *s = &kvs->slots[i];
        if (s->key == NULL || (only_new && !s->fresh)) continue;
        size_t kl = strlen(s->key) + 1, vl = strlen(s->val) + 1;
        memcpy(b + used, s->key, kl);
        memcpy(b + used + kl, s->val, vl);
        used += kl + vl;
        s->fresh = 0;
    }
    *buf = b;
    *len = used;
    return 0;
}

int run_pmi_kvs_merge(struct run_job *job, const char *buf, size_t len, int fresh)
{
    size_t pos = 0;
    const char *key;
    while ((key = run_ctl_str(buf, len, &pos)) != NULL) {
        const char *val = run_ctl_str(buf, len, &pos);
        if (val == NULL || *key == '\0' || strlen(key) > PMI_WIRE_KEY_MAX ||
            strlen(val) > PMI_WIRE_VAL_MAX || strpbrk(key, " \t\r\n=") || strpbrk(val, " \t\r\n"))
            return -1;
        /* An entry already here (this host's own, coming back) is kept as it is. */
        const char *why = kvs_put(job->kvs, key, val, fresh);
        if (why && strcmp(why, "duplicate_key") != 0) return -1;
    }
    return 0;
}

void run_pmi_close(struct run_job *job, struct run_rank *r)
{
    (void)job;
    if (r->pmi_fd < 0) return;
    close(r->pmi_fd); /* also removes it from the epoll set */
    r->pmi_fd = -1;
}

/* Close the connection of a client that broke the protocol, saying why once. */
static void pmi_drop(struct run_job *job, struct run_rank *r, const char *why)
{
    if (r->pmi_fd < 0) return;
    fprintf(stderr, "ternrun: rank %d (%s) %s; closing its PMI connection\n", r->rank,
            run_rank_where(job, r), why);
    run_pmi_close(job, r);
}

static void pmi_reply(struct run_job *job, struct run_rank *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pmi_reply(struct run_job *job, struct run_rank *r, const char *fmt, ...)
{
    char buf[PMI_WIRE_MAX_LINE + 256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (r->pmi_fd < 0 || n < 0) return;
    if ((size_t)n >= sizeof buf) { /* cannot happen with bounded fields; stay well-formed */
        n = (int)sizeof buf - 1;
        buf[n - 1] = '\n';
    }
    /* A client that does not read its replies fills the socket: EAGAIN drops it. */
    if (pmi_write_all(r->pmi_fd, buf, (size_t)n) != 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            pmi_drop(job, r, "does not read its PMI replies");
        else
            run_pmi_close(job, r); /* it is gone (EPIPE): its exit says the rest */
    }
}

/*
 * A barrier can complete only once all ranks are in it. If one has finalized or
 * exited without entering, the others would wait forever: end the job instead.
 */
static void pmi_barrier_check(struct run_job *job)
{
    if (job->barrier_count == 0 || job->ending) return;
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *g = &job->ranks[i];
        if (g->in_barrier || g->failed || (g->alive && !g->finalized)) continue;
        const struct run_rank *w = NULL;
        for (int j = 0; j < job->nranks && w == NULL; j++)
            if (job->ranks[j].in_barrier) w = &job->ranks[j];
        if (w == NULL) return; /* only a host's count, no rank of ours, is waiting */
        char wwhere[RUN_HOST_NAME_MAX + 64];
        snprintf(wwhere, sizeof wwhere, "%s", run_rank_where(job, w));
        run_job_fail(job, RUN_EXIT_FAIL,
                     "ternrun: rank %d (%s) waits in a PMI barrier that rank %d (%s) "
                     "can no longer enter (it %s)",
                     w->rank, wwhere, g->rank, run_rank_where(job, g),
                     g->finalized ? "called finalize" : "exited");
        return;
    }
}

static void pmi_barrier_in(struct run_job *job, struct run_rank *r)
{
    if (r->in_barrier) {
        pmi_drop(job, r, "entered the PMI barrier twice");
        return;
    }
    r->in_barrier = 1;
    run_pmi_barrier_add(job, 1);
}

void run_pmi_barrier_release_local(struct run_job *job)
{
    /* Reset first: a failed write closes a connection but must not disturb the count. */
    job->barrier_count = 0;
    job->up_barrier = 0;
    for (int i = 0; i < job->nranks; i++)
        job->ranks[i].in_barrier = 0;
    for (int i = 0; i < job->nhosts; i++)
        job->hosts[i].in_barrier = 0;
    for (int i = 0; i < job->nranks; i++)
        pmi_reply(job, &job->ranks[i], "cmd=barrier_out\n");
}

void run_pmi_barrier_add(struct run_job *job, int n)
{
    job->barrier_count += n;
    if (job->barrier_count == 0 || job->barrier_count + job->nfailed < job->nranks ||
        (job->proxy && job->up_barrier)) {
        pmi_barrier_check(job);
        return;
    }
    char *buf;
    size_t len;
    if (run_pmi_kvs_dump(job, 1, &buf, &len) != 0) {
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: out of memory in a PMI barrier");
        return;
    }
    if (job->proxy) {
        /* All of this host is in: the root decides when the whole job is. */
        job->up_barrier = 1;
        run_proxy_send(job, RUN_CTL_BARRIER_IN, 0, 0, buf, len);
    } else {
        run_remote_barrier_out(job, buf, len);
        run_pmi_barrier_release_local(job);
    }
    free(buf);
}

void run_pmi_mark_failed(struct run_job *job, int rank)
{
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].rank == rank && !job->ranks[i].failed) {
            job->ranks[i].failed = 1;
            job->nfailed++;
            if (job->ranks[i].host) job->ranks[i].host->nfailed++;
        }
}

int run_pmi_peer_failed(struct run_job *job, int rank)
{
    int all_tolerant = 1;
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *q = &job->ranks[i];
        if (!q->alive || q->rank == rank) continue;
        /* Only a client that said tern_tolerate expects news between replies; any other
         * PMI client would take it for the reply it waits for. */
        if (!q->tolerant) {
            all_tolerant = 0;
            continue;
        }
        pmi_reply(job, q, "cmd=tern_peer_failed rank=%d\n", rank);
    }
    if (all_tolerant && !job->proxy) {
        /* The survivors go on without it: its barriers are over. Ranks on other hosts
         * hear it from their proxies (which also stop counting it in their barriers). A
         * proxy never decides this: the root knows every host's ranks. */
        run_pmi_mark_failed(job, rank);
        run_remote_peer_failed(job, rank);
        run_pmi_barrier_add(job, 0);
        return 1;
    }
    return 0;
}

void run_pmi_rank_gone(struct run_job *job)
{
    pmi_barrier_check(job);
}

/* The reply command a client waits for after `cmd`, so errors reach it. */
static const char *pmi_reply_name(const char *cmd)
{
    static const char *const map[][2] = {
        {"init", "response_to_init"},
        {"get_maxes", "maxes"},
        {"get_my_kvsname", "my_kvsname"},
        {"get_appnum", "appnum"},
        {"get_universe_size", "universe_size"},
        {"put", "put_result"},
        {"get", "get_result"},
        {"finalize", "finalize_ack"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(cmd, map[i][0]) == 0) return map[i][1];
    return NULL;
}

/* rc=-1 reply for the command; msg must be one word. */
static void pmi_error(struct run_job *job, struct run_rank *r, const char *cmd, const char *msg)
{
    const char *name = pmi_reply_name(cmd);
    if (name)
        pmi_reply(job, r, "cmd=%s rc=-1 msg=%s\n", name, msg);
    else
        pmi_reply(job, r, "cmd=%.64s_result rc=-1 msg=%s\n", cmd, msg);
}

/* Checks shared by put and get. Returns NULL or the reason for an rc=-1 reply. */
static const char *pmi_check_key(struct run_job *job, const struct pmi_msg *m)
{
    const char *kvs = pmi_msg_get(m, "kvsname");
    const char *key = pmi_msg_get(m, "key");
    if (kvs != NULL && strcmp(kvs, job->kvsname) != 0) return "unknown_kvsname";
    if (key == NULL || *key == '\0') return "missing_key";
    if (strlen(key) > PMI_WIRE_KEY_MAX) return "key_too_long";
    /* The proxy <-> root channel refuses such keys (run_pmi_kvs_merge): a put that
     * works on one host must work on many. */
    if (strchr(key, '=') != NULL) return "bad_key";
    return NULL;
}

static void pmi_put(struct run_job *job, struct run_rank *r, const struct pmi_msg *m)
{
    const char *why = pmi_check_key(job, m);
    const char *val = pmi_msg_get(m, "value");
    if (why == NULL && val == NULL) why = "missing_value";
    if (why == NULL && strlen(val) > PMI_WIRE_VAL_MAX) why = "value_too_long";
    if (why == NULL && strcmp(pmi_msg_get(m, "key"), "PMI_process_mapping") == 0)
        why = "reserved_key";
    if (why == NULL) why = kvs_put(job->kvs, pmi_msg_get(m, "key"), val, 1);
    if (why)
        pmi_error(job, r, "put", why);
    else
        pmi_reply(job, r, "cmd=put_result rc=0\n");
}

static void pmi_get(struct run_job *job, struct run_rank *r, const struct pmi_msg *m)
{
    const char *why = pmi_check_key(job, m);
    if (why) {
        pmi_error(job, r, "get", why);
        return;
    }
    const char *key = pmi_msg_get(m, "key");
    const char *val = kvs_get(job->kvs, key);
    if (val == NULL)
        pmi_error(job, r, "get", "key_not_found");
    else
        pmi_reply(job, r, "cmd=get_result rc=0 value=%s\n", val);
}

/*
 * tern_getall (see boot/pmi_wire.h): the entries whose key starts with prefix=, from
 * position start= of the put order, in one write of at most PMI_WIRE_BULK_BYTES of
 * entries. Startup then costs each rank one request per 16 KiB of keys instead of one
 * per peer.
 */
static void pmi_getall(struct run_job *job, struct run_rank *r, const struct pmi_msg *m)
{
    const char *kvs = pmi_msg_get(m, "kvsname");
    const char *prefix = pmi_msg_get(m, "prefix");
    int start;
    const char *why = NULL;
    if (kvs != NULL && strcmp(kvs, job->kvsname) != 0)
        why = "unknown_kvsname";
    else if (prefix == NULL)
        why = "missing_prefix";
    else if (strlen(prefix) > PMI_WIRE_KEY_MAX || strchr(prefix, '='))
        why = "bad_prefix";
    else if (pmi_msg_get_int(m, "start", &start) != 0 || start < 0 ||
             (size_t)start > job->kvs->count)
        why = "bad_start";
    if (why) {
        pmi_reply(job, r, "cmd=tern_getall_result rc=-1 msg=%s\n", why);
        return;
    }
    if (r->pmi_fd < 0) return;
    enum { HEAD = 80 }; /* room for the head line, written last in front of the entries */
    char *buf = malloc(HEAD + PMI_WIRE_BULK_BYTES);
    if (buf == NULL) {
        pmi_reply(job, r, "cmd=tern_getall_result rc=-1 msg=out_of_memory\n");
        return;
    }
    size_t plen = strlen(prefix), used = 0, i = (size_t)start;
    int count = 0;
    for (; i < job->kvs->count; i++) {
        const struct run_kvs_entry *e = &job->kvs->order[i];
        if (strncmp(e->key, prefix, plen) != 0) continue;
        size_t need = strlen(e->key) + strlen(e->val) + sizeof "cmd=tern_kv key= value=\n" - 1;
        if (used + need > PMI_WIRE_BULK_BYTES || count == PMI_WIRE_BULK_MAX) break;
        used += (size_t)snprintf(buf + HEAD + used, need + 1, "cmd=tern_kv key=%s value=%s\n",
                                 e->key, e->val);
        count++;
    }
    long next = i < job->kvs->count ? (long)i : -1L;
    char head[HEAD];
    int hl =
        snprintf(head, sizeof head, "cmd=tern_getall_result rc=0 count=%d next=%ld\n", count, next);
    memcpy(buf + HEAD - hl, head, (size_t)hl);
    /* One write, as pmi_reply does: a client that does not read is dropped. */
    if (pmi_write_all(r->pmi_fd, buf + HEAD - hl, (size_t)hl + used) != 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            pmi_drop(job, r, "does not read its PMI replies");
        else
            run_pmi_close(job, r);
    }
    free(buf);
}

static void pmi_abort(struct run_job *job, struct run_rank *r, const struct pmi_msg *m)
{
    int code;
    /* Exit statuses are 8 bits; a code that would read as success or wrap becomes 1. */
    if (pmi_msg_get_int(m, "exitcode", &code) != 0 || code < 1 || code > 255) code = 1;
    const char *msg = pmi_msg_get(m, "msg");
    char text[PMI_WIRE_VAL_MAX];
    snprintf(text, sizeof text, "%s", msg ? msg : "");
    pmi_wire_unescape(text);      /* boot_abort escapes spaces and the like */
    for (char *c = text; *c; c++) /* one line of printable text whatever was sent */
        if ((unsigned char)*c < ' ' || *c == 0x7f) *c = '?';
    run_job_fail(job, code, "ternrun: rank %d (%s) called abort with code %d%s%.200s", r->rank,
                 run_rank_where(job, r), code, *text ? ": " : "", text);
}

static void pmi_handle(struct run_job *job, struct run_rank *r, char *line)
{
    struct pmi_msg m;
    const char *p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    if (*p == '\0') return; /* an empty line asks nothing */
    if (pmi_wire_parse(line, &m) != 0) {
        pmi_drop(job, r, "sent a malformed PMI line");
        return;
    }
    const char *cmd = pmi_msg_get(&m, "cmd");
    if (cmd == NULL) {
        pmi_drop(job, r, "sent a PMI line without cmd=");
        return;
    }
    if (strcmp(cmd, "init") == 0) {
        int v;
        if (pmi_msg_get_int(&m, "pmi_version", &v) != 0 || v != 1)
            pmi_reply(job, r,
                      "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 "
                      "msg=unsupported_version\n");
        else {
            r->inited = 1;
            /* tern=1: ternrun's extensions (tern_tolerate, tern_peer_failed) are spoken. */
            pmi_reply(job, r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0 tern=1\n");
        }
    } else if (strcmp(cmd, "get_maxes") == 0) {
        pmi_reply(job, r, "cmd=maxes kvsname_max=%d keylen_max=%d vallen_max=%d rc=0\n",
                  PMI_WIRE_KVSNAME_MAX, PMI_WIRE_KEY_MAX, PMI_WIRE_VAL_MAX);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        pmi_reply(job, r, "cmd=my_kvsname kvsname=%s rc=0\n", job->kvsname);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        pmi_reply(job, r, "cmd=appnum appnum=0 rc=0\n");
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        pmi_reply(job, r, "cmd=universe_size size=%d rc=0\n", job->size);
    } else if (strcmp(cmd, "put") == 0) {
        pmi_put(job, r, &m);
    } else if (strcmp(cmd, "get") == 0) {
        pmi_get(job, r, &m);
    } else if (strcmp(cmd, "tern_getall") == 0) {
        pmi_getall(job, r, &m);
    } else if (strcmp(cmd, "barrier_in") == 0) {
        pmi_barrier_in(job, r);
    } else if (strcmp(cmd, "finalize") == 0) {
        r->finalized = 1;
        pmi_reply(job, r, "cmd=finalize_ack\n");
        if (job->proxy) run_proxy_send(job, RUN_CTL_FINALIZED, r->rank, 0, NULL, 0);
        pmi_barrier_check(job);
    } else if (strcmp(cmd, "abort") == 0) {
        pmi_abort(job, r, &m);
    } else if (strcmp(cmd, "tern_report_ready") == 0) {
        int sig; /* no reply: the client does not wait */
        if (pmi_msg_get_int(&m, "sig", &sig) == 0 && sig >= SIGRTMIN && sig <= SIGRTMAX)
            r->report_sig = sig;
    } else if (strcmp(cmd, "tern_report") == 0) {
        run_report_answer(job, r, &m); /* unasked, from a signal handler: no reply */
    } else if (strcmp(cmd, "tern_tolerate") == 0) {
        r->tolerant = 1; /* no reply: the client does not wait */
        if (job->proxy) run_proxy_send(job, RUN_CTL_TOLERANT, r->rank, 0, NULL, 0);
    } else {
        pmi_error(job, r, cmd, "unknown_command");
    }
}

void run_pmi_readable(struct run_job *job, struct run_rank *r)
{
    /* Bounded so one chatty client cannot starve the others; epoll is level-triggered
     * and calls again. 1024 reads also empty the socket of a client that has died. */
    for (int round = 0; round < 1024 && r->pmi_fd >= 0; round++) {
        ssize_t n = pmi_reader_fill(&r->rd, r->pmi_fd);
        if (n == 0) {
            run_pmi_close(job, r); /* a partial last line is dropped with it */
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            run_pmi_close(job, r);
            return;
        }
        char *line;
        int rc = 0;
        while (r->pmi_fd >= 0 && (rc = pmi_reader_line(&r->rd, &line)) == 1)
            pmi_handle(job, r, line);
        if (r->pmi_fd >= 0 && rc < 0) {
            pmi_drop(job, r, "sent a PMI line longer than 4096 bytes");
            return;
        }
    }
}
