/*
 * hostfile.c - parsers for --host lists and hostfiles (see hostfile.h).
 *
 * Host names end up as words of the launch agent's command (ssh, ip netns exec), so
 * only the characters of DNS names, IPv4 addresses, user@host and namespace names
 * are accepted: letters, digits and ". - _ @". Anything else is refused with the
 * place it was found rather than passed to a shell.
 */
#include "hostfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hosts_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_' || c == '@';
}

static void hosts_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void hosts_err(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

static int hosts_add(struct run_hostlist *hl, const char *name, size_t len, int slots)
{
    for (int i = 0; i < hl->n; i++) {
        if (strlen(hl->v[i].name) == len && memcmp(hl->v[i].name, name, len) == 0) {
            if (hl->v[i].slots > RUN_HOST_SLOTS_MAX - slots) return -2;
            hl->v[i].slots += slots;
            return 0;
        }
    }
    if (hl->n == hl->cap) {
        int cap = hl->cap ? hl->cap * 2 : 8;
        struct run_hostspec *v = realloc(hl->v, (size_t)cap * sizeof *v);
        if (v == NULL) return -1;
        hl->v = v;
        hl->cap = cap;
    }
    char *copy = strndup(name, len);
    if (copy == NULL) return -1;
    hl->v[hl->n].name = copy;
    hl->v[hl->n].slots = slots;
    hl->n++;
    return 0;
}

/* A slot count: decimal digits only, 1..RUN_HOST_SLOTS_MAX. Returns it or -1. */
static int hosts_slots(const char *s, size_t len)
{
    if (len == 0 || len > 6) return -1;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= RUN_HOST_SLOTS_MAX ? (int)v : -1;
}

/*
 * Check name[0..len) and add it with `slots`. `where` prefixes messages.
 * Returns 0 or -1 with err filled.
 */
static int hosts_take(struct run_hostlist *hl, const char *name, size_t len, int slots,
                      const char *where, char *err, size_t errcap)
{
    if (len == 0) {
        hosts_err(err, errcap, "%s: empty host name", where);
        return -1;
    }
    if (len > RUN_HOST_NAME_MAX) {
        hosts_err(err, errcap, "%s: host name longer than %d characters", where, RUN_HOST_NAME_MAX);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (!hosts_name_char(name[i])) {
            unsigned char c = (unsigned char)name[i];
            if (c > ' ' && c < 127)
                hosts_err(err, errcap, "%s: character '%c' is not allowed in a host name", where,
                          c);
            else
                hosts_err(err, errcap, "%s: byte 0x%02x is not allowed in a host name", where, c);
            return -1;
        }
    }
    int rc = hosts_add(hl, name, len, slots);
    if (rc == -2)
        hosts_err(err, errcap, "%s: more than %d slots on host '%.*s'", where, RUN_HOST_SLOTS_MAX,
                  (int)len, name);
    else if (rc != 0)
        hosts_err(err, errcap, "%s: out of memory", where);
    return rc ? -1 : 0;
}

/* "name" or "name:N" in item[0..len). */
static int hosts_item(struct run_hostlist *hl, const char *item, size_t len, const char *where,
                      char *err, size_t errcap)
{
    const char *colon = memchr(item, ':', len);
    int slots = 1;
    size_t nlen = len;
    if (colon) {
        nlen = (size_t)(colon - item);
        slots = hosts_slots(colon + 1, len - nlen - 1);
        if (slots < 0) {
            hosts_err(err, errcap, "%s: '%.*s' needs a slot count from 1 to %d after ':'", where,
                      (int)(len > 300 ? 300 : len), item, RUN_HOST_SLOTS_MAX);
            return -1;
        }
    }
    return hosts_take(hl, item, nlen, slots, where, err, errcap);
}

int run_hosts_parse_list(struct run_hostlist *hl, const char *text, char *err, size_t errcap)
{
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (hosts_item(hl, p, len, "--host", err, errcap) != 0) return -1;
        if (comma == NULL) return 0;
        p = comma + 1;
    }
}

static int hosts_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* One hostfile line, comment already removed. */
static int hosts_line(struct run_hostlist *hl, const char *s, size_t len, const char *where,
                      char *err, size_t errcap)
{
    size_t i = 0;
    while (i < len && hosts_space(s[i]))
        i++;
    while (len > i && hosts_space(s[len - 1]))
        len--;
    if (i == len) return 0; /* blank */
    const char *word = s + i;
    size_t wlen = 0;
    while (i + wlen < len && !hosts_space(word[wlen]))
        wlen++;
    i += wlen;
    while (i < len && hosts_space(s[i]))
        i++;
    if (i == len) return hosts_item(hl, word, wlen, where, err, errcap);

    /* "name slots=N": a second word, and only that. */
    const char *kv = s + i;
    size_t kvlen = len - i;
    if (memchr(word, ':', wlen)) {
        hosts_err(err, errcap, "%s: give the slots as 'name:N' or 'name slots=N', not both", where);
        return -1;
    }
    if (kvlen < 6 || memcmp(kv, "slots=", 6) != 0) {
        hosts_err(err, errcap, "%s: expected 'slots=N' after the host name, found '%.*s'", where,
                  (int)(kvlen > 60 ? 60 : kvlen), kv);
        return -1;
    }
    int slots = hosts_slots(kv + 6, kvlen - 6);
    if (slots < 0) {
        hosts_err(err, errcap, "%s: slots= needs a number from 1 to %d", where, RUN_HOST_SLOTS_MAX);
        return -1;
    }
    return hosts_take(hl, word, wlen, slots, where, err, errcap);
}

int run_hosts_parse_text(struct run_hostlist *hl, const char *text, size_t len, const char *file,
                         char *err, size_t errcap)
{
    size_t pos = 0;
    int lineno = 0;
    while (pos < len) {
        lineno++;
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t llen = nl ? (size_t)(nl - line) : len - pos;
        pos += llen + (nl != NULL);
        char where[320];
        snprintf(where, sizeof where, "%.256s:%d", file, lineno);
        const char *hash = memchr(line, '#', llen);
        if (hash) llen = (size_t)(hash - line);
        if (hosts_line(hl, line, llen, where, err, errcap) != 0) return -1;
    }
    if (hl->n == 0) {
        hosts_err(err, errcap, "%.256s: no hosts in the file", file);
        return -1;
    }
    return 0;
}

int run_hosts_parse_file(struct run_hostlist *hl, const char *path, char *err, size_t errcap)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        hosts_err(err, errcap, "%.256s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (len < cap) break;
        if (cap >= (64u << 20)) { /* no hostfile is this big */
            free(buf);
            buf = NULL;
            break;
        }
        char *nb = realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (buf == NULL || bad) {
        free(buf);
        hosts_err(err, errcap, "%.256s: cannot read the file", path);
        return -1;
    }
    int rc = run_hosts_parse_text(hl, buf, len, path, err, errcap);
    free(buf);
    return rc;
}

long run_hosts_slots(const struct run_hostlist *hl)
{
    long n = 0;
    for (int i = 0; i < hl->n; i++)
        n += hl->v[i].slots;
    return n;
}

void run_hosts_free(struct run_hostlist *hl)
{
    for (int i = 0; i < hl->n; i++)
        free(hl->v[i].name);
    free(hl->v);
    hl->v = NULL;
    hl->n = hl->cap = 0;
}
