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
#include "tunables.def"
#undef TERN_TUNABLE
};

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
    for (size_t i = 0; i < sizeof tunable_table / sizeof tunable_table[0]; i++) {
        const struct tunable_desc *d = &tunable_table[i];
        void *slot = (char *)&util_tun + d->offset;
        int drc = util_tunable_parse(d->kind, d->def, slot);
        (void)drc; /* defaults are checked by the unit tests */
        const char *val = getenv(d->env);
        if (val == NULL) continue;
        if (util_tunable_parse(d->kind, val, slot) != 0) {
            if (err)
                fprintf(err, "tern: %s=\"%s\" is not a valid %s value (default %s)\n", d->env, val,
                        kind_name(d->kind), d->def);
            util_tunable_parse(d->kind, d->def, slot);
            rc = TERN_ERR_TUNABLE;
        }
    }
    return rc;
}

void util_tunables_print(FILE *out)
{
    for (size_t i = 0; i < sizeof tunable_table / sizeof tunable_table[0]; i++) {
        const struct tunable_desc *d = &tunable_table[i];
        const char *val = getenv(d->env);
        fprintf(out, "  %-24s %-7s default %-10s%s%s%s\n      %s\n", d->env, kind_name(d->kind),
                d->def, val ? " (set: " : "", val ? val : "", val ? ")" : "", d->help);
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
