/*
 * test_hostfile.c - the --host and --hostfile parsers (tools/ternrun/hostfile.c):
 * the accepted forms, one error per kind of bad line naming file:line, and a
 * fuzz-style loop that feeds mutated and random bytes and checks that the parser
 * either accepts with sane results or refuses with a message - never crashes (run
 * it under ASan), never loops, never accepts a host name with a byte it forbids.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/unit.h"
#include "hostfile.h"

static int parse_text(const char *text, struct run_hostlist *hl, char *err, size_t cap)
{
    memset(hl, 0, sizeof *hl);
    err[0] = '\0';
    return run_hosts_parse_text(hl, text, strlen(text), "hf", err, cap);
}

static void test_good(void)
{
    struct run_hostlist hl;
    char err[512];
    CHECK_EQ(parse_text("# cluster\nnode1 slots=2\nnode2:3   # three\n\n  node3  \n"
                        "node1\tslots=1\r\n",
                        &hl, err, sizeof err),
             0);
    CHECK_EQ(hl.n, 3);
    CHECK(hl.n == 3 && strcmp(hl.v[0].name, "node1") == 0 && hl.v[0].slots == 3);
    CHECK(hl.n == 3 && strcmp(hl.v[1].name, "node2") == 0 && hl.v[1].slots == 3);
    CHECK(hl.n == 3 && strcmp(hl.v[2].name, "node3") == 0 && hl.v[2].slots == 1);
    CHECK_EQ(run_hosts_slots(&hl), 7);
    run_hosts_free(&hl);

    memset(&hl, 0, sizeof hl);
    CHECK_EQ(run_hosts_parse_list(&hl, "a,a,b", err, sizeof err), 0);
    CHECK(hl.n == 2 && hl.v[0].slots == 2 && hl.v[1].slots == 1);
    CHECK_EQ(run_hosts_parse_list(&hl, "c:4,user@d.example.org:1", err, sizeof err), 0);
    CHECK(hl.n == 4 && hl.v[2].slots == 4 && strcmp(hl.v[3].name, "user@d.example.org") == 0);
    run_hosts_free(&hl);

    memset(&hl, 0, sizeof hl);
    CHECK_EQ(run_hosts_parse_list(&hl, "10.0.0.1:2,ternA123", err, sizeof err), 0);
    CHECK(hl.n == 2 && hl.v[0].slots == 2);
    run_hosts_free(&hl);
}

/* Each bad text must fail with a message starting with `where`. */
static void bad_text(const char *text, const char *where)
{
    struct run_hostlist hl;
    char err[512];
    int rc = parse_text(text, &hl, err, sizeof err);
    CHECK_EQ(rc, -1);
    if (strncmp(err, where, strlen(where)) != 0) {
        fprintf(stderr, "for %s: message '%s' does not start with '%s'\n", text, err, where);
        unit_failures++;
    }
    run_hosts_free(&hl);
}

static void bad_list(const char *text)
{
    struct run_hostlist hl = {0};
    char err[512] = "";
    CHECK_EQ(run_hosts_parse_list(&hl, text, err, sizeof err), -1);
    CHECK(strncmp(err, "--host: ", 8) == 0);
    run_hosts_free(&hl);
}

static void test_bad(void)
{
    bad_text("", "hf: no hosts");
    bad_text("# only a comment\n\n", "hf: no hosts");
    bad_text("a\nb slots=0\n", "hf:2: ");
    bad_text("a\n\nb slots=x\n", "hf:3: ");
    bad_text("a:0\n", "hf:1: ");
    bad_text("a:\n", "hf:1: ");
    bad_text("a:2x\n", "hf:1: ");
    bad_text("a:99999999\n", "hf:1: ");
    bad_text("a slots=70000\n", "hf:1: ");
    bad_text("a:2 slots=2\n", "hf:1: ");
    bad_text("a max_slots=2\n", "hf:1: ");
    bad_text("a slots=2 extra\n", "hf:1: ");
    bad_text("a;rm -rf /\n", "hf:1: ");
    bad_text("a\n$(reboot)\n", "hf:2: ");
    bad_text("`x`\n", "hf:1: ");
    bad_text("a b\n", "hf:1: ");
    bad_text(":3\n", "hf:1: ");
    bad_list("");
    bad_list("a,,b");
    bad_list("a,");
    bad_list("a:0");
    bad_list("a b");
    bad_list("a:1:2");
    bad_list("a'b");

    /* A NUL byte in the file is refused, with its line. */
    struct run_hostlist hl = {0};
    char err[512];
    CHECK_EQ(run_hosts_parse_text(&hl, "a\nb\0c\n", 6, "hf", err, sizeof err), -1);
    CHECK(strncmp(err, "hf:2: ", 6) == 0);
    run_hosts_free(&hl);

    /* Slots add up to at most the limit. */
    memset(&hl, 0, sizeof hl);
    CHECK_EQ(run_hosts_parse_list(&hl, "a:65536,a:1", err, sizeof err), -1);
    run_hosts_free(&hl);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

/* Whatever was accepted must be sane. */
static void check_sane(const struct run_hostlist *hl)
{
    for (int i = 0; i < hl->n; i++) {
        const char *s = hl->v[i].name;
        CHECK(*s != '\0' && strlen(s) <= RUN_HOST_NAME_MAX);
        CHECK(hl->v[i].slots >= 1 && hl->v[i].slots <= RUN_HOST_SLOTS_MAX);
        CHECK(strpbrk(s, " \t\r\n:;'\"`$()|&<>#=\\/*?") == NULL);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(hl->v[j].name, s) != 0);
    }
}

static void test_fuzz(void)
{
    static const char *seeds[] = {
        "node1 slots=2\nnode2:3\n# c\n",           "a,a,b", "a:2,b:2", "x slots=65536\n",
        "h-1.example.org\n\th_2 slots=4 # four\n",
    };
    static const char alphabet[] = "ab:,=#\n \t\r019slots=x.@-_\0\xff$;";
    char buf[512];
    int accepted = 0;
    for (int iter = 0; iter < 200000; iter++) {
        size_t len;
        if (iter % 3 == 0) { /* random bytes from a hostile alphabet */
            len = rnd(64);
            for (size_t i = 0; i < len; i++)
                buf[i] = alphabet[rnd(sizeof alphabet - 1)];
        } else { /* a seed with a few mutations */
            const char *s = seeds[rnd(sizeof seeds / sizeof seeds[0])];
            len = strlen(s);
            memcpy(buf, s, len);
            for (int m = rnd(4) + 1; m > 0; m--) {
                size_t at = len ? rnd((unsigned)len) : 0;
                switch (rnd(3)) {
                case 0:
                    buf[at] = (char)rnd(256);
                    break;
                case 1:
                    if (len < sizeof buf - 1) {
                        memmove(buf + at + 1, buf + at, len - at);
                        buf[at] = alphabet[rnd(sizeof alphabet - 1)];
                        len++;
                    }
                    break;
                default:
                    if (len) {
                        memmove(buf + at, buf + at + 1, len - at - 1);
                        len--;
                    }
                    break;
                }
            }
        }
        buf[len] = '\0';
        struct run_hostlist hl = {0};
        char err[512] = "";
        int rc = run_hosts_parse_text(&hl, buf, len, "fz", err, sizeof err);
        if (rc == 0) {
            accepted++;
            check_sane(&hl);
        } else {
            CHECK(strncmp(err, "fz", 2) == 0);
        }
        run_hosts_free(&hl);
        /* The same bytes as a --host list (up to the first NUL). */
        memset(&hl, 0, sizeof hl);
        if (run_hosts_parse_list(&hl, buf, err, sizeof err) == 0)
            check_sane(&hl);
        else
            CHECK(strncmp(err, "--host: ", 8) == 0);
        run_hosts_free(&hl);
        if (unit_failures > 20) break;
    }
    CHECK(accepted > 1000); /* the mutations keep many inputs valid */
}

int main(void)
{
    test_good();
    test_bad();
    test_fuzz();
    return unit_done("test_hostfile");
}
