/*
 * fuzz_pmi_wire.c - libFuzzer target for the PMI-1 wire code both sides share
 * (src/boot/pmi_wire.c): the line reader fed a byte stream in chunks, the key=value
 * splitter, the integer getter, the PMI_process_mapping parser and the checks of a
 * bulk reply's head and entry lines (tern_getall).
 *
 * The first input byte picks the read chunk size and the job size given to the
 * mapping parser; the rest is what arrives on the socket. A line the reader hands out
 * must be NUL-terminated, free of '\n' and at most PMI_WIRE_MAX_LINE long; a parsed
 * message must have non-empty keys without '='; a mapping that parses must give every
 * rank a node index in [0, INT_MAX]; a bulk head that passes has a count in
 * [0, PMI_WIRE_BULK_MAX] and a next of -1 or past its start; a bulk entry that passes
 * has a key with the prefix, within the wire's bounds.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/pmi_wire.h"

#define FUZZ_ASSERT(c)                                                                             \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_line(char *line)
{
    size_t n = strlen(line);
    FUZZ_ASSERT(n <= PMI_WIRE_MAX_LINE);
    FUZZ_ASSERT(memchr(line, '\n', n) == NULL);

    /* The mapping parser sees the line as a value, before the splitter edits it. */
    static int node_of[97];
    int size = 1 + (int)(n % 97);
    if (pmi_wire_parse_mapping(line, size, node_of) == 0)
        for (int r = 0; r < size; r++)
            FUZZ_ASSERT(node_of[r] >= 0);

    struct pmi_msg m;
    if (pmi_wire_parse(line, &m) != 0) return;
    FUZZ_ASSERT(m.npairs > 0 && m.npairs <= PMI_WIRE_MAX_PAIRS);
    for (int i = 0; i < m.npairs; i++) {
        FUZZ_ASSERT(m.pairs[i].key[0] != '\0');
        FUZZ_ASSERT(strchr(m.pairs[i].key, '=') == NULL);
        FUZZ_ASSERT(strpbrk(m.pairs[i].key, " \t\r") == NULL);
        FUZZ_ASSERT(strpbrk(m.pairs[i].val, " \t\r") == NULL);
        FUZZ_ASSERT(pmi_msg_get(&m, m.pairs[i].key) != NULL);
        int v;
        (void)pmi_msg_get_int(&m, m.pairs[i].key, &v);
    }
    const char *cmd = pmi_msg_get(&m, "cmd");
    if (cmd) (void)strlen(cmd);

    int start = (int)(n % 7), count, next;
    if (pmi_wire_bulk_head(&m, start, &count, &next) == 0) {
        FUZZ_ASSERT(count >= 0 && count <= PMI_WIRE_BULK_MAX);
        FUZZ_ASSERT(next == -1 || next > start);
    }
    static const char *const prefixes[] = {"", "tern-", "r"};
    const char *prefix = prefixes[n % 3], *k, *v;
    if (pmi_wire_bulk_entry(&m, prefix, &k, &v) == 0) {
        FUZZ_ASSERT(*k != '\0' && strncmp(k, prefix, strlen(prefix)) == 0);
        FUZZ_ASSERT(strlen(k) <= PMI_WIRE_KEY_MAX && strlen(v) <= PMI_WIRE_VAL_MAX);
        FUZZ_ASSERT(strchr(k, '=') == NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    size_t chunk = 1 + data[0] * 17u; /* 1 .. 4336 bytes a read */
    data++;
    size--;

    static struct pmi_reader r;
    memset(&r, 0, offsetof(struct pmi_reader, buf));
    size_t off = 0;
    int lines = 0;
    while (off < size) {
        /* What pmi_reader_fill does, without a socket. */
        if (r.skip) {
            memmove(r.buf, r.buf + r.skip, r.len - r.skip);
            r.len -= r.skip;
            r.skip = 0;
        }
        size_t room = PMI_WIRE_MAX_LINE - r.len;
        size_t k = size - off < chunk ? size - off : chunk;
        if (k > room) k = room;
        memcpy(r.buf + r.len, data + off, k);
        r.len += k;
        off += k;
        char *line;
        int rc;
        while ((rc = pmi_reader_line(&r, &line)) == 1) {
            fuzz_line(line);
            lines++;
        }
        if (rc < 0) {
            /* Refused: the buffer is full of one line without its end. */
            FUZZ_ASSERT(r.len >= PMI_WIRE_MAX_LINE);
            return 0;
        }
        FUZZ_ASSERT(r.len - r.skip < PMI_WIRE_MAX_LINE);
    }
    (void)lines;
    return 0;
}
