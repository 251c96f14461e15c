/*
 * pmi_wire.c - parser and line reader for the PMI-1 simple wire protocol.
 * Everything here is pure (no global state) so the fuzz and unit tests can drive it.
 */
#include "pmi_wire.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int pmi_wire_parse(char *line, struct pmi_msg *msg)
{
    msg->npairs = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p == '\0') break;
        char *word = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (*p) *p++ = '\0';
        char *eq = strchr(word, '=');
        if (eq == NULL || eq == word) return -1;
        if (msg->npairs == PMI_WIRE_MAX_PAIRS) return -1;
        *eq = '\0';
        msg->pairs[msg->npairs].key = word;
        msg->pairs[msg->npairs].val = eq + 1;
        msg->npairs++;
    }
    return msg->npairs > 0 ? 0 : -1;
}

const char *pmi_msg_get(const struct pmi_msg *msg, const char *key)
{
    for (int i = 0; i < msg->npairs; i++)
        if (strcmp(msg->pairs[i].key, key) == 0) return msg->pairs[i].val;
    return NULL;
}

int pmi_msg_get_int(const struct pmi_msg *msg, const char *key, int *out)
{
    const char *v = pmi_msg_get(msg, key);
    if (v == NULL || *v == '\0') return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end != '\0' || x < INT_MIN || x > INT_MAX) return -1;
    *out = (int)x;
    return 0;
}

int pmi_reader_line(struct pmi_reader *r, char **line)
{
    if (r->skip) {
        memmove(r->buf, r->buf + r->skip, r->len - r->skip);
        r->len -= r->skip;
        r->skip = 0;
    }
    char *nl = memchr(r->buf, '\n', r->len);
    if (nl == NULL) return r->len >= PMI_WIRE_MAX_LINE ? -1 : 0;
    *nl = '\0';
    r->skip = (size_t)(nl - r->buf) + 1;
    *line = r->buf;
    return 1;
}

ssize_t pmi_reader_fill(struct pmi_reader *r, int fd)
{
    if (r->skip) {
        memmove(r->buf, r->buf + r->skip, r->len - r->skip);
        r->len -= r->skip;
        r->skip = 0;
    }
    if (r->len >= PMI_WIRE_MAX_LINE) {
        errno = EMSGSIZE;
        return -1;
    }
    ssize_t n;
    do {
        n = read(fd, r->buf + r->len, PMI_WIRE_MAX_LINE - r->len);
    } while (n < 0 && errno == EINTR);
    if (n > 0) r->len += (size_t)n;
    return n;
}

size_t pmi_wire_escape(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    if (cap == 0) return 0;
    for (; in && *in; in++) {
        unsigned char c = (unsigned char)*in;
        int plain = c > ' ' && c < 0x7f && c != '%' && c != '=';
        size_t need = plain ? 1 : 3;
        if (n + need >= cap) break;
        if (plain) {
            out[n++] = (char)c;
        } else {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
    return n;
}

static int pmi_hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

void pmi_wire_unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        int hi, lo;
        if (*s == '%' && (hi = pmi_hexval(s[1])) >= 0 && (lo = pmi_hexval(s[2])) >= 0) {
            *o++ = (char)(hi << 4 | lo);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

int pmi_write_all(int fd, const char *buf, size_t len)
{
    int sock = 1;
    while (len > 0) {
        /* send(MSG_NOSIGNAL): a closed peer is an error to report, not a SIGPIPE that
         * kills the process. Plain write() for fds that are not sockets (tests, pipes). */
        ssize_t n = sock ? send(fd, buf, len, MSG_NOSIGNAL) : write(fd, buf, len);
        if (n < 0 && sock && errno == ENOTSOCK) {
            sock = 0;
            continue;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Parse a non-negative decimal int at *p, advancing it. */
static int parse_uint(const char **p, int *out)
{
    const char *s = *p;
    long v = 0;
    if (*s < '0' || *s > '9') return -1;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > INT_MAX) return -1;
        s++;
    }
    *p = s;
    *out = (int)v;
    return 0;
}

int pmi_wire_parse_mapping(const char *text, int size, int *node_of)
{
    const char *p = text;
    const char prefix[] = "(vector";
    if (size <= 0 || strncmp(p, prefix, sizeof prefix - 1) != 0) return -1;
    p += sizeof prefix - 1;
    int rank = 0;
    while (*p == ',') {
        int start, count, ppn;
        p++;
        while (*p == ' ')
            p++;
        if (*p++ != '(') return -1;
        if (parse_uint(&p, &start) || *p++ != ',') return -1;
        if (parse_uint(&p, &count) || *p++ != ',') return -1;
        if (parse_uint(&p, &ppn) || *p++ != ')') return -1;
        if (count <= 0 || ppn <= 0) return -1;
        if (start > INT_MAX - count) return -1;
        for (int n = 0; n < count && rank < size; n++)
            for (int k = 0; k < ppn && rank < size; k++)
                node_of[rank++] = start + n;
    }
    if (*p != ')' || p[1] != '\0' || rank == 0) return -1;
    /* A mapping shorter than the job repeats, as Hydra's cyclic placement does. */
    for (int r = rank; r < size; r++)
        node_of[r] = node_of[r % rank];
    return 0;
}

int pmi_wire_bulk_head(const struct pmi_msg *m, int start, int *count, int *next)
{
    const char *cmd = pmi_msg_get(m, "cmd");
    int rc, n, t;
    if (cmd == NULL || strcmp(cmd, "tern_getall_result") != 0) return -1;
    if (pmi_msg_get_int(m, "rc", &rc) != 0 || rc != 0) return -1;
    if (pmi_msg_get_int(m, "count", &n) != 0 || n < 0 || n > PMI_WIRE_BULK_MAX) return -1;
    if (pmi_msg_get_int(m, "next", &t) != 0 || (t != -1 && t <= start)) return -1;
    *count = n;
    *next = t;
    return 0;
}

int pmi_wire_bulk_entry(const struct pmi_msg *m, const char *prefix, const char **key,
                        const char **val)
{
    if (m->npairs != 3) return -1;
    const char *cmd = pmi_msg_get(m, "cmd");
    const char *k = pmi_msg_get(m, "key");
    const char *v = pmi_msg_get(m, "value");
    if (cmd == NULL || strcmp(cmd, "tern_kv") != 0 || k == NULL || *k == '\0' || v == NULL)
        return -1;
    if (strncmp(k, prefix, strlen(prefix)) != 0 || strlen(k) > PMI_WIRE_KEY_MAX || strchr(k, '=') ||
        strlen(v) > PMI_WIRE_VAL_MAX)
        return -1;
    *key = k;
    *val = v;
    return 0;
}

uint64_t pmi_wire_hash(const char *key)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 0x100000001b3ull;
    return h;
}
