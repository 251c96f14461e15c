/*
 * tunables.c - environment parsing and listing for the table in tunables.def.
 */
#include "tunables.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tern.h"

struct util_tunables util_tun;

struct tunable_desc {
    const char *env;
    enum util_tunable_kind kind;
    const char *def;
    const char *help;
    size_t offset;
};

static const struct tunable_desc tunable_table[] = {
#define TERN_TUNABLE(field, env, kind, def, help)                                                  \
    {#env, UTIL_TUNABLE_##kind, def, help, offsetof(struct util_tunables, field)},
#define TERN_TUNABLE_RANGE(field, min, max, pow2)
#include "tunables.def"
#undef TERN_TUNABLE_RANGE
#undef TERN_TUNABLE
};

/* The limits of the numeric tunables that have them (TERN_TUNABLE_RANGE in tunables.def). */
struct tunable_range {
    size_t offset;
    unsigned long long min, max;
    int pow2;
};

static const struct tunable_range range_table[] = {
#define TERN_TUNABLE(field, env, kind, def, help)
#define TERN_TUNABLE_RANGE(field, lo, hi, p2)                                                      \
    {offsetof(struct util_tunables, field), (unsigned long long)(lo), (unsigned long long)(hi), p2},
#include "tunables.def"
#undef TERN_TUNABLE_RANGE
#undef TERN_TUNABLE
};

#define NTUNABLES (sizeof tunable_table / sizeof tunable_table[0])
#define NRANGES   (sizeof range_table / sizeof range_table[0])

static const struct tunable_range *range_of(const struct tunable_desc *d)
{
    for (size_t i = 0; i < NRANGES; i++)
        if (range_table[i].offset == d->offset) return &range_table[i];
    return NULL;
}

/* The numeric value a parsed INT or SIZE tunable holds. */
static unsigned long long numeric_value(const struct tunable_desc *d, const void *slot)
{
    return d->kind == UTIL_TUNABLE_INT ? (unsigned long long)*(const long *)slot
                                       : (unsigned long long)*(const size_t *)slot;
}

/* Is the parsed value of `d` in `slot` within its declared range? */
static int in_range(const struct tunable_desc *d, const void *slot)
{
    const struct tunable_range *r = range_of(d);
    if (r == NULL || (d->kind != UTIL_TUNABLE_INT && d->kind != UTIL_TUNABLE_SIZE)) return 1;
    unsigned long long v = numeric_value(d, slot);
    return v >= r->min && v <= r->max && (!r->pow2 || (v & (v - 1)) == 0);
}

/* A limit as a user would write it: 65536, 64k, 1g. */
static void format_limit(char *buf, size_t n, enum util_tunable_kind kind, unsigned long long v)
{
    static const char suffix[] = "kmg";
    int s = -1;
    while (kind == UTIL_TUNABLE_SIZE && s < 2 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        s++;
    }
    if (s >= 0)
        snprintf(buf, n, "%llu%c", v, suffix[s]);
    else
        snprintf(buf, n, "%llu", v);
}

/* "from 4 to 65536, a power of two" for `d`, or "" when it has no range. */
static void format_range(char *buf, size_t n, const struct tunable_desc *d)
{
    const struct tunable_range *r = range_of(d);
    buf[0] = '\0';
    if (r == NULL) return;
    char lo[32], hi[32];
    format_limit(lo, sizeof lo, d->kind, r->min);
    format_limit(hi, sizeof hi, d->kind, r->max);
    snprintf(buf, n, "from %s to %s%s", lo, hi, r->pow2 ? ", a power of two" : "");
}

static const char *kind_name(enum util_tunable_kind kind)
{
    switch (kind) {
    case UTIL_TUNABLE_INT:
        return "int";
    case UTIL_TUNABLE_SIZE:
        return "size";
    case UTIL_TUNABLE_BOOL:
        return "bool";
    case UTIL_TUNABLE_STR:
        return "string";
    }
    return "?";
}

int util_tunable_parse(enum util_tunable_kind kind, const char *text, void *out)
{
    char *end = NULL;
    if (text == NULL) return TERN_ERR_TUNABLE;
    switch (kind) {
    case UTIL_TUNABLE_INT: {
        errno = 0;
        long v = strtol(text, &end, 0);
        if (errno != 0 || end == text || *end != '\0' || v < 0) return TERN_ERR_TUNABLE;
        *(long *)out = v;
        return 0;
    }
    case UTIL_TUNABLE_SIZE: {
        /* Digits, then at most one k/m/g suffix (powers of 1024), optional trailing 'b'. */
        if (!isdigit((unsigned char)text[0])) return TERN_ERR_TUNABLE;
        errno = 0;
        unsigned long long v = strtoull(text, &end, 10);
        if (errno != 0 || end == text) return TERN_ERR_TUNABLE;
        unsigned shift = 0;
        switch (tolower((unsigned char)*end)) {
        case 'k':
            shift = 10;
            end++;
            break;
        case 'm':
            shift = 20;
            end++;
            break;
        case 'g':
            shift = 30;
            end++;
            break;
        default:
            break;
        }
        if (shift && tolower((unsigned char)*end) == 'b') end++;
        if (*end != '\0') return TERN_ERR_TUNABLE;
        if (shift && v > (SIZE_MAX >> shift)) return TERN_ERR_TUNABLE;
        *(size_t *)out = (size_t)(v << shift);
        return 0;
    }
    case UTIL_TUNABLE_BOOL: {
        static const char *const yes[] = {"1", "yes", "on", "true"};
        static const char *const no[] = {"0", "no", "off", "false"};
        for (size_t i = 0; i < 4; i++) {
            if (strcasecmp(text, yes[i]) == 0) {
                *(int *)out = 1;
                return 0;
            }
            if (strcasecmp(text, no[i]) == 0) {
                *(int *)out = 0;
                return 0;
            }
        }
        return TERN_ERR_TUNABLE;
    }
    case UTIL_TUNABLE_STR:
        *(const char **)out = text;
        return 0;
    }
    return TERN_ERR_TUNABLE;
}

int util_tunables_load(FILE *err)
{
    int rc = 0;
    for (size_t i = 0; i < NTUNABLES; i++) {
        const struct tunable_desc *d = &tunable_table[i];
        void *slot = (char *)&util_tun + d->offset;
        if (util_tunable_parse(d->kind, d->def, slot) != 0 || !in_range(d, slot)) {
            /* A mistake in tunables.def (test_tunables catches it before a release). */
            if (err) fprintf(err, "tern: the default of %s (%s) is invalid\n", d->env, d->def);
            rc = TERN_ERR_INTERNAL;
        }
        const char *val = getenv(d->env);
        if (val == NULL) continue;
        if (util_tunable_parse(d->kind, val, slot) != 0) {
            if (err)
                fprintf(err, "tern: %s=\"%s\" is not a valid %s value (default %s)\n", d->env, val,
                        kind_name(d->kind), d->def);
            util_tunable_parse(d->kind, d->def, slot);
            rc = TERN_ERR_TUNABLE;
        } else if (!in_range(d, slot)) {
            char range[96];
            format_range(range, sizeof range, d);
            if (err)
                fprintf(err, "tern: %s=\"%s\" is out of range: it must be %s (default %s)\n",
                        d->env, val, range, d->def);
            util_tunable_parse(d->kind, d->def, slot);
            rc = TERN_ERR_TUNABLE;
        }
    }
    return rc;
}

void util_tunables_print(FILE *out)
{
    for (size_t i = 0; i < NTUNABLES; i++) {
        const struct tunable_desc *d = &tunable_table[i];
        const char *val = getenv(d->env);
        char range[96];
        format_range(range, sizeof range, d);
        fprintf(out, "  %-24s %-7s default %-10s%s%s%s\n      %s%s%s%s\n", d->env,
                kind_name(d->kind), d->def, val ? " (set: " : "", val ? val : "", val ? ")" : "",
                d->help, range[0] ? " (" : "", range, range[0] ? ")" : "");
    }
}

int util_list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}
