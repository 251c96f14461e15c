/*
 * test_pmi_wire.c - the PMI-1 wire parser, line reader and process-mapping parser,
 * including malformed input.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "boot/pmi_wire.h"
#include "unit.h"

static void test_parse(void)
{
    struct pmi_msg m;
    char l1[] = "cmd=put kvsname=k1 key=a value=b=c";
    CHECK_EQ(pmi_wire_parse(l1, &m), 0);
    CHECK_EQ(m.npairs, 4);
    CHECK(strcmp(pmi_msg_get(&m, "cmd"), "put") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "b=c") == 0); /* split at the first '=' */
    CHECK(pmi_msg_get(&m, "nope") == NULL);

    char l2[] = "  cmd=barrier_out   rc=0  ";
    CHECK_EQ(pmi_wire_parse(l2, &m), 0);
    int rc = -5;
    CHECK_EQ(pmi_msg_get_int(&m, "rc", &rc), 0);
    CHECK_EQ(rc, 0);
    CHECK(pmi_msg_get_int(&m, "cmd", &rc) != 0); /* not a number */

    char empty_val[] = "cmd=get value=";
    CHECK_EQ(pmi_wire_parse(empty_val, &m), 0);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "") == 0);
    CHECK(pmi_msg_get_int(&m, "value", &rc) != 0);

    char bad1[] = "cmd=init garbage";
    CHECK(pmi_wire_parse(bad1, &m) != 0);
    char bad2[] = "=x";
    CHECK(pmi_wire_parse(bad2, &m) != 0);
    char bad3[] = "";
    CHECK(pmi_wire_parse(bad3, &m) != 0);
    char many[PMI_WIRE_MAX_LINE];
    many[0] = '\0';
    for (int i = 0; i < PMI_WIRE_MAX_PAIRS + 1; i++)
        strcat(many, "a=b ");
    CHECK(pmi_wire_parse(many, &m) != 0);
}

static void test_reader(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    struct pmi_reader r;
    memset(&r, 0, sizeof r);
    char *line;
    /* A line split across two writes, then two lines in one write. */
    CHECK(write(p[1], "cmd=a x", 7) == 7);
    CHECK(pmi_reader_fill(&r, p[0]) == 7);
    CHECK_EQ(pmi_reader_line(&r, &line), 0);
    CHECK(write(p[1], "=1\ncmd=b\ncmd=c", 14) == 14);
    CHECK(pmi_reader_fill(&r, p[0]) == 14);
    CHECK_EQ(pmi_reader_line(&r, &line), 1);
    CHECK(strcmp(line, "cmd=a x=1") == 0);
    CHECK_EQ(pmi_reader_line(&r, &line), 1);
    CHECK(strcmp(line, "cmd=b") == 0);
    CHECK_EQ(pmi_reader_line(&r, &line), 0);
    CHECK(write(p[1], "\n", 1) == 1);
    CHECK(pmi_reader_fill(&r, p[0]) == 1);
    CHECK_EQ(pmi_reader_line(&r, &line), 1);
    CHECK(strcmp(line, "cmd=c") == 0);
    /* An over-long line is reported, not overflowed. */
    char junk[PMI_WIRE_MAX_LINE + 10];
    memset(junk, 'x', sizeof junk);
    CHECK(write(p[1], junk, sizeof junk) == (ssize_t)sizeof junk);
    while (pmi_reader_fill(&r, p[0]) > 0) {
    }
    CHECK_EQ(pmi_reader_line(&r, &line), -1);
    close(p[1]);
    close(p[0]);
}

static void test_mapping(void)
{
    int node[8];
    CHECK_EQ(pmi_wire_parse_mapping("(vector,(0,1,4))", 4, node), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(node[i], 0);
    CHECK_EQ(pmi_wire_parse_mapping("(vector,(0,2,2))", 4, node), 0);
    CHECK_EQ(node[0], 0);
    CHECK_EQ(node[1], 0);
    CHECK_EQ(node[2], 1);
    CHECK_EQ(node[3], 1);
    CHECK_EQ(pmi_wire_parse_mapping("(vector,(0,2,1),(2,1,3))", 5, node), 0);
    CHECK_EQ(node[0], 0);
    CHECK_EQ(node[1], 1);
    CHECK_EQ(node[2], 2);
    CHECK_EQ(node[4], 2);
    /* Cyclic: the mapping repeats when the job is larger. */
    CHECK_EQ(pmi_wire_parse_mapping("(vector,(0,2,1))", 5, node), 0);
    CHECK_EQ(node[2], 0);
    CHECK_EQ(node[3], 1);
    CHECK(pmi_wire_parse_mapping("(vector)", 2, node) != 0);
    CHECK(pmi_wire_parse_mapping("(vector,(0,1))", 2, node) != 0);
    CHECK(pmi_wire_parse_mapping("(vector,(0,1,2)", 2, node) != 0);
    CHECK(pmi_wire_parse_mapping("(vector,(0,0,2))", 2, node) != 0);
    CHECK(pmi_wire_parse_mapping("(vector,(a,1,2))", 2, node) != 0);
    CHECK(pmi_wire_parse_mapping("(vector,(0,1,99999999999))", 2, node) != 0);
    CHECK(pmi_wire_parse_mapping("(vector,(0,1,2))x", 2, node) != 0);
    CHECK(pmi_wire_parse_mapping("", 2, node) != 0);
}

static void test_escape(void)
{
    char b[64];
    CHECK_EQ(pmi_wire_escape("MPI_Send: bad rank=3 50%", b, sizeof b), strlen(b));
    CHECK(strcmp(b, "MPI_Send:%20bad%20rank%3D3%2050%25") == 0);
    char line[128];
    snprintf(line, sizeof line, "cmd=abort exitcode=1 msg=%s", b);
    struct pmi_msg m;
    CHECK_EQ(pmi_wire_parse(line, &m), 0); /* still one word */
    char v[64];
    snprintf(v, sizeof v, "%s", pmi_msg_get(&m, "msg"));
    pmi_wire_unescape(v);
    CHECK(strcmp(v, "MPI_Send: bad rank=3 50%") == 0);
    CHECK_EQ(pmi_wire_escape("a b c", b, 6), 5); /* never cuts an escape: "a%20b" */
    CHECK(strcmp(b, "a%20b") == 0);
    strcpy(v, "x%2 y%zz%41");
    pmi_wire_unescape(v);
    CHECK(strcmp(v, "x%2 y%zzA") == 0);
}

/* Parse `text` (copied) and run the bulk head check on it. */
static int head_of(const char *text, int start, int *count, int *next)
{
    static char line[PMI_WIRE_MAX_LINE];
    struct pmi_msg m;
    snprintf(line, sizeof line, "%s", text);
    if (pmi_wire_parse(line, &m) != 0) return -2;
    return pmi_wire_bulk_head(&m, start, count, next);
}

static int entry_of(const char *text, const char *prefix, const char **k, const char **v)
{
    static char line[PMI_WIRE_MAX_LINE];
    struct pmi_msg m;
    snprintf(line, sizeof line, "%s", text);
    if (pmi_wire_parse(line, &m) != 0) return -2;
    return pmi_wire_bulk_entry(&m, prefix, k, v);
}

static void test_bulk(void)
{
    int count = -9, next = -9;
    CHECK_EQ(head_of("cmd=tern_getall_result rc=0 count=3 next=-1", 0, &count, &next), 0);
    CHECK_EQ(count, 3);
    CHECK_EQ(next, -1);
    CHECK_EQ(head_of("cmd=tern_getall_result rc=0 count=0 next=9", 4, &count, &next), 0);
    CHECK_EQ(next, 9);
    CHECK_EQ(head_of("cmd=tern_getall_result rc=0 count=0 next=4", 4, &count, &next), -1);
    CHECK_EQ(head_of("cmd=tern_getall_result rc=0 count=0 next=-2", 0, &count, &next), -1);
    CHECK_EQ(head_of("cmd=tern_getall_result rc=-1 msg=bad_start", 0, &count, &next), -1);
    CHECK_EQ(head_of("cmd=tern_getall_result count=1 next=-1", 0, &count, &next), -1);
    CHECK_EQ(head_of("cmd=get_result rc=0 count=1 next=-1", 0, &count, &next), -1);
    CHECK_EQ(head_of("cmd=tern_getall_result rc=0 count=-1 next=-1", 0, &count, &next), -1);
    char big[128];
    snprintf(big, sizeof big, "cmd=tern_getall_result rc=0 count=%d next=-1",
             PMI_WIRE_BULK_MAX + 1);
    CHECK_EQ(head_of(big, 0, &count, &next), -1);
    CHECK_EQ(head_of("cmd=tern_getall_result rc=0 count=2", 0, &count, &next), -1);

    const char *k = NULL, *v = NULL;
    CHECK_EQ(entry_of("cmd=tern_kv key=tern-shm-3 value=9:a=b", "tern-", &k, &v), 0);
    CHECK(k && strcmp(k, "tern-shm-3") == 0);
    CHECK(v && strcmp(v, "9:a=b") == 0);
    CHECK_EQ(entry_of("cmd=tern_kv key=tern-x value=", "tern-", &k, &v), 0); /* empty value */
    CHECK_EQ(entry_of("cmd=tern_kv key=other value=1", "tern-", &k, &v), -1);
    CHECK_EQ(entry_of("cmd=tern_kv key= value=1", "", &k, &v), -1);
    CHECK_EQ(entry_of("cmd=tern_kv key=tern-x", "tern-", &k, &v), -1);
    CHECK_EQ(entry_of("cmd=tern_kv key=tern-x=y value=1", "tern-", &k, &v), -1);
    CHECK_EQ(entry_of("cmd=tern_kv key=tern-x value=1 more=2", "tern-", &k, &v), -1);
    CHECK_EQ(entry_of("cmd=tern_kv value=1 value=2", "", &k, &v), -1);
    CHECK_EQ(entry_of("cmd=get_result key=tern-x value=1", "tern-", &k, &v), -1);
    static char line[PMI_WIRE_MAX_LINE];
    int n = snprintf(line, sizeof line, "cmd=tern_kv key=tern-x value=");
    memset(line + n, 'v', PMI_WIRE_VAL_MAX + 1);
    line[n + PMI_WIRE_VAL_MAX + 1] = '\0';
    CHECK_EQ(entry_of(line, "tern-", &k, &v), -1); /* value too long */
    line[n + PMI_WIRE_VAL_MAX] = '\0';
    CHECK_EQ(entry_of(line, "tern-", &k, &v), 0); /* the longest allowed */
}

int main(void)
{
    test_bulk();
    test_escape();
    test_parse();
    test_reader();
    test_mapping();
    return unit_done("test_pmi_wire");
}
