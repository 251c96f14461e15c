/*
 * test_boot_bulk.c - the client side of the bulk get (boot_prefetch, ternrun's
 * tern_getall): a scripted launcher on a socketpair answers boot_init and the bulk
 * requests, well or badly. A good reply of two pages fills the cache (boot_get then
 * sends nothing); truncated, malformed or refused replies give TERN_ERR_BOOT; an older
 * ternrun's unknown_command and a launcher without tern=1 leave the gets key by key.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot/boot.h"
#include "tern.h"
#include "unit.h"
#include "util/tunables.h"

/* What a launcher answers to boot_init; tern=1 says it speaks the extensions. */
#define INIT_TERN                                                                                  \
    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0 tern=1\n"                            \
    "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n"                               \
    "cmd=my_kvsname kvsname=kv1 rc=0\n"                                                            \
    "cmd=get_result rc=0 value=(vector,(0,1,3))\n"
#define INIT_PLAIN                                                                                 \
    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"                                   \
    "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n"                               \
    "cmd=my_kvsname kvsname=kv1 rc=0\n"                                                            \
    "cmd=get_result rc=0 value=(vector,(0,1,3))\n"

static int launcher_fd = -1;

/* Start a job of 3 whose launcher has already written `script`; eof: then hang up. */
static int start(struct boot *b, const char *script, int eof)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("socketpair");
        exit(1);
    }
    size_t len = strlen(script);
    if (write(sv[1], script, len) != (ssize_t)len) {
        perror("write");
        exit(1);
    }
    if (eof) shutdown(sv[1], SHUT_WR);
    char v[16];
    snprintf(v, sizeof v, "%d", sv[0]);
    setenv("PMI_FD", v, 1);
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "3", 1);
    launcher_fd = sv[1];
    return boot_init(b);
}

/* Everything the client sent, as one string (the caller frees it). */
static char *sent(void)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL) exit(1);
    struct pollfd p = {.fd = launcher_fd, .events = POLLIN};
    while (len + 1 < cap && poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
        ssize_t n = read(launcher_fd, buf + len, cap - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

static void stop(struct boot *b)
{
    boot_release(b);
    close(launcher_fd);
    launcher_fd = -1;
}

static void test_two_pages(void)
{
    struct boot b;
    CHECK_EQ(start(&b,
                   INIT_TERN "cmd=tern_getall_result rc=0 count=2 next=5\n"
                             "cmd=tern_kv key=tern-shm-0 value=11:ab\n"
                             "cmd=tern_kv key=tern-shm-1 value=12:cd=x\n"
                             "cmd=tern_peer_failed rank=2\n" /* news between entries */
                             "cmd=tern_getall_result rc=0 count=1 next=-1\n"
                             "cmd=tern_kv key=tern-tcp-2 value=127.0.0.1/8:5000\n",
                   0),
             0);
    CHECK_EQ(b.ternrun, 1);
    long before = b.nrequests;
    CHECK_EQ(boot_prefetch(&b, "tern-"), 0);
    CHECK_EQ(b.nrequests - before, 2);
    char *req = sent();
    CHECK(strstr(req, "cmd=tern_getall kvsname=kv1 prefix=tern- start=0\n") != NULL);
    CHECK(strstr(req, "cmd=tern_getall kvsname=kv1 prefix=tern- start=5\n") != NULL);
    free(req);
    char val[64];
    before = b.nrequests;
    CHECK_EQ(boot_get(&b, "tern-shm-0", val, sizeof val), 0);
    CHECK(strcmp(val, "11:ab") == 0);
    CHECK_EQ(boot_get(&b, "tern-shm-1", val, sizeof val), 0);
    CHECK(strcmp(val, "12:cd=x") == 0);
    CHECK_EQ(boot_get(&b, "tern-tcp-2", val, sizeof val), 0);
    CHECK(strcmp(val, "127.0.0.1/8:5000") == 0);
    CHECK_EQ(boot_get(&b, "tern-shm-1", val, 4), TERN_ERR_BOOT); /* does not fit */
    CHECK_EQ(b.nrequests - before, 0);                           /* all from the cache */
    CHECK_EQ(b.nfailed_news, 1);                                 /* the news was kept */
    stop(&b);
}

/* A reply the client must refuse with TERN_ERR_BOOT. */
static void refused(const char *what, const char *reply, int eof)
{
    struct boot b;
    char script[4096];
    snprintf(script, sizeof script, "%s%s", INIT_TERN, reply);
    CHECK_EQ(start(&b, script, eof), 0);
    int rc = boot_prefetch(&b, "tern-");
    if (rc != TERN_ERR_BOOT) fprintf(stderr, "case '%s': rc %d\n", what, rc);
    CHECK_EQ(rc, TERN_ERR_BOOT);
    stop(&b);
}

static void test_bad_replies(void)
{
    refused("truncated",
            "cmd=tern_getall_result rc=0 count=3 next=-1\ncmd=tern_kv key=tern-a value=1\n", 1);
    refused("cut mid-line", "cmd=tern_getall_result rc=0 count=1 next=-1\ncmd=tern_kv key=te", 1);
    refused("no reply", "", 1);
    refused("refused", "cmd=tern_getall_result rc=-1 msg=bad_start\n", 1);
    refused("other cmd", "cmd=get_result rc=0 value=x\n", 1);
    refused("no count", "cmd=tern_getall_result rc=0 next=-1\n", 1);
    refused("negative count", "cmd=tern_getall_result rc=0 count=-1 next=-1\n", 1);
    refused("huge count", "cmd=tern_getall_result rc=0 count=999999 next=-1\n", 1);
    refused("next not ahead", "cmd=tern_getall_result rc=0 count=0 next=0\n", 1);
    refused("next junk", "cmd=tern_getall_result rc=0 count=0 next=1x\n", 1);
    refused("wrong prefix",
            "cmd=tern_getall_result rc=0 count=1 next=-1\ncmd=tern_kv key=other value=1\n", 1);
    refused("entry without value",
            "cmd=tern_getall_result rc=0 count=1 next=-1\ncmd=tern_kv key=tern-a\n", 1);
    refused("entry with extra word",
            "cmd=tern_getall_result rc=0 count=1 next=-1\ncmd=tern_kv key=tern-a value=1 x=2\n", 1);
    refused("entry of another cmd",
            "cmd=tern_getall_result rc=0 count=1 next=-1\ncmd=get_result key=tern-a value=1\n", 1);
    refused("unparsable entry", "cmd=tern_getall_result rc=0 count=1 next=-1\nnot a pmi line\n", 1);
    /* unknown_command on a later page is no old server: refused too. */
    refused("unknown on page 2",
            "cmd=tern_getall_result rc=0 count=1 next=4\ncmd=tern_kv key=tern-a value=1\n"
            "cmd=tern_getall_result rc=-1 msg=unknown_command\n",
            1);
}

static void test_fallbacks(void)
{
    struct boot b;
    char val[64];
    /* A ternrun from before tern_getall: key by key afterwards. */
    CHECK_EQ(start(&b,
                   INIT_TERN "cmd=tern_getall_result rc=-1 msg=unknown_command\n"
                             "cmd=get_result rc=0 value=v0\n",
                   1),
             0);
    CHECK_EQ(boot_prefetch(&b, "tern-"), 0);
    CHECK_EQ(boot_get(&b, "tern-shm-0", val, sizeof val), 0);
    CHECK(strcmp(val, "v0") == 0);
    stop(&b);

    /* A launcher without tern=1 (Hydra, Slurm) is never asked. */
    CHECK_EQ(start(&b, INIT_PLAIN "cmd=get_result rc=0 value=v1\n", 1), 0);
    long before = b.nrequests;
    CHECK_EQ(boot_prefetch(&b, "tern-"), 0);
    CHECK_EQ(b.nrequests, before);
    CHECK_EQ(boot_get(&b, "tern-shm-1", val, sizeof val), 0);
    CHECK(strcmp(val, "v1") == 0);
    char *req = sent();
    CHECK(strstr(req, "tern_getall") == NULL);
    free(req);
    stop(&b);

    /* TERN_PMI_BULK=0: not asked either. */
    util_tun.pmi_bulk = 0;
    CHECK_EQ(start(&b, INIT_TERN "cmd=get_result rc=0 value=v2\n", 1), 0);
    CHECK_EQ(boot_prefetch(&b, "tern-"), 0);
    CHECK_EQ(boot_get(&b, "tern-shm-2", val, sizeof val), 0);
    CHECK(strcmp(val, "v2") == 0);
    req = sent();
    CHECK(strstr(req, "tern_getall") == NULL);
    free(req);
    stop(&b);
    util_tun.pmi_bulk = 1;
}

int main(void)
{
    unsetenv("TERN_PMI_BULK");
    if (util_tunables_load(stderr) != 0) return 1;
    CHECK_EQ(util_tun.pmi_bulk, 1);
    test_two_pages();
    test_bad_replies();
    test_fallbacks();
    return unit_done("test_boot_bulk");
}
