/*
 * fuzz_pmi_server.c - libFuzzer target for ternrun's PMI-1 server
 * (tools/ternrun/pmi_server.c): what ranks send on their PMI sockets, arriving in
 * arbitrary pieces on real socketpairs and handled by run_pmi_readable exactly as
 * the event loop calls it (bulk gets, tern_getall, included), plus a proxy's key-value
 * payload (run_pmi_kvs_merge).
 *
 * The first byte picks the number of ranks (1..4), whether this server is a proxy,
 * and the piece size; each piece goes to the next rank in turn. Properties: the
 * server never crashes or leaks; every reply is a whole line starting "cmd="; a
 * rank whose connection was closed gets nothing more. The rest of ternrun is
 * replaced by the few stubs below, which record what the server asked of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ternrun.h"

#define FUZZ_ASSERT(c)                                                                             \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- stubs for the parts of ternrun the server calls ---- */
static int fuzz_barriers_out, fuzz_proxy_frames;

void run_job_fail(struct run_job *job, int code, const char *fmt, ...)
{
    (void)fmt;
    if (job->exit_code < 0) job->exit_code = code;
}

void run_job_note_failure(struct run_job *job, int code, const char *fmt, ...)
{
    (void)fmt;
    if (job->exit_code < 0) job->exit_code = code;
}

const char *run_rank_where(const struct run_job *job, const struct run_rank *r)
{
    (void)job;
    (void)r;
    return "pid 0";
}

void run_proxy_send(struct run_job *job, int type, int arg, int arg2, const void *p, size_t len)
{
    (void)job;
    (void)type;
    (void)arg;
    (void)arg2;
    if (len) FUZZ_ASSERT(p != NULL);
    fuzz_proxy_frames++;
}

void run_remote_barrier_out(struct run_job *job, const char *buf, size_t len)
{
    (void)job;
    (void)buf;
    (void)len;
    fuzz_barriers_out++;
}

void run_remote_peer_failed(struct run_job *job, int rank)
{
    (void)job;
    FUZZ_ASSERT(rank >= 0);
}

void run_report_answer(struct run_job *job, struct run_rank *r, const struct pmi_msg *m)
{
    (void)job;
    FUZZ_ASSERT(r != NULL && m != NULL);
}

/* ---- the target ---- */

/* Read every reply waiting at a rank's end and check it is made of whole lines. */
static void fuzz_drain(int fd)
{
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) return;
        FUZZ_ASSERT(buf[n - 1] == '\n');
        for (ssize_t i = 0; i < n;) {
            FUZZ_ASSERT(n - i >= 4 && memcmp(buf + i, "cmd=", 4) == 0);
            char *nl = memchr(buf + i, '\n', (size_t)(n - i));
            FUZZ_ASSERT(nl != NULL);
            i = nl - buf + 1;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    int nranks = 1 + (mode & 3);
    int proxy = (mode >> 2) & 1;
    size_t piece = 1 + (size_t)(mode >> 3) * 37u;

    /* Bytes after a 0xff 0xfe marker are a proxy's KVS payload instead. */
    const uint8_t *kv = NULL;
    size_t kvlen = 0;
    for (size_t i = 0; i + 1 < size; i++)
        if (data[i] == 0xff && data[i + 1] == 0xfe) {
            kv = data + i + 2;
            kvlen = size - i - 2;
            size = i;
            break;
        }

    struct run_job job;
    memset(&job, 0, sizeof job);
    job.size = nranks;
    job.nranks = nranks;
    job.proxy = proxy;
    job.exit_code = -1;
    snprintf(job.kvsname, sizeof job.kvsname, "tern-fuzz");
    struct run_rank ranks[4];
    int peer[4];
    memset(ranks, 0, sizeof ranks);
    job.ranks = ranks;
    for (int i = 0; i < nranks; i++) {
        int sv[2];
        FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
        ranks[i].rank = i;
        ranks[i].alive = 1;
        ranks[i].pmi_fd = sv[0];
        peer[i] = sv[1];
    }
    FUZZ_ASSERT(run_pmi_init(&job) == 0);

    if (kv) {
        char *copy = malloc(kvlen + 1);
        FUZZ_ASSERT(copy != NULL);
        memcpy(copy, kv, kvlen);
        copy[kvlen] = '\0';
        (void)run_pmi_kvs_merge(&job, copy, kvlen, 1);
        free(copy);
    }

    size_t off = 0;
    for (int turn = 0; off < size; turn++) {
        struct run_rank *r = &ranks[turn % nranks];
        size_t k = size - off < piece ? size - off : piece;
        if (r->pmi_fd >= 0) {
            ssize_t w = write(peer[turn % nranks], data + off, k);
            FUZZ_ASSERT(w == (ssize_t)k);
            run_pmi_readable(&job, r);
        }
        off += k;
        fuzz_drain(peer[turn % nranks]);
    }
    /* Every rank hangs up; the server sees EOF and closes its end. */
    for (int i = 0; i < nranks; i++) {
        fuzz_drain(peer[i]);
        close(peer[i]);
        if (ranks[i].pmi_fd >= 0) run_pmi_readable(&job, &ranks[i]);
        FUZZ_ASSERT(ranks[i].pmi_fd < 0);
        ranks[i].alive = 0;
        run_pmi_rank_gone(&job);
    }

    char *dump;
    size_t dlen;
    if (run_pmi_kvs_dump(&job, 0, &dump, &dlen) == 0) {
        /* A dump is NUL-separated pairs that merge back into a fresh space. */
        struct run_job j2;
        memset(&j2, 0, sizeof j2);
        j2.size = 1;
        j2.nranks = 0;
        j2.proxy = 1;
        j2.exit_code = -1;
        FUZZ_ASSERT(run_pmi_init(&j2) == 0);
        FUZZ_ASSERT(run_pmi_kvs_merge(&j2, dump, dlen, 0) == 0);
        run_pmi_fini(&j2);
        free(dump);
    }
    run_pmi_fini(&job);
    return 0;
}
