/*
 * tunables.h - the parsed values of every TERN_* tunable (see tunables.def).
 */
#ifndef TERN_UTIL_TUNABLES_H
#define TERN_UTIL_TUNABLES_H

#include <stddef.h>
#include <stdio.h>

enum util_tunable_kind { UTIL_TUNABLE_INT, UTIL_TUNABLE_SIZE, UTIL_TUNABLE_BOOL, UTIL_TUNABLE_STR };

struct util_tunables {
#define UTIL_TUNABLE_FIELD_INT(f)                 long f;
#define UTIL_TUNABLE_FIELD_SIZE(f)                size_t f;
#define UTIL_TUNABLE_FIELD_BOOL(f)                int f;
#define UTIL_TUNABLE_FIELD_STR(f)                 const char *f;
#define TERN_TUNABLE(field, env, kind, def, help) UTIL_TUNABLE_FIELD_##kind(field)
#define TERN_TUNABLE_RANGE(field, min, max, pow2)
#include "tunables.def"
#undef TERN_TUNABLE_RANGE
#undef TERN_TUNABLE
};

/* The values in force, filled by util_tunables_load(). */
extern struct util_tunables util_tun;

/*
 * Parse every tunable from the environment (defaults where unset). On a bad value,
 * writes one line naming the variable and the value to `err` (may be NULL) and
 * returns TERN_ERR_TUNABLE; util_tun then holds defaults for the rest.
 */
int util_tunables_load(FILE *err);

/*
 * Parse one value of a kind. Returns 0 or TERN_ERR_TUNABLE. Exposed for the fuzz/unit
 * tests of the parser.
 */
int util_tunable_parse(enum util_tunable_kind kind, const char *text, void *out);

/* Is `name` one entry of the comma-separated `list` (as TERN_TRANSPORTS, TERN_TCP_IF)? */
int util_list_has(const char *list, const char *name);

/* Print every tunable: name, default, value in force (if set) and help. */
void util_tunables_print(FILE *out);

#endif
