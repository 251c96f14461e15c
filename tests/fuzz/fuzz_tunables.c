/*
 * fuzz_tunables.c - libFuzzer target for the TERN_* tunable parser
 * (src/util/tunables.c): arbitrary text as every kind of value, and as the whole
 * environment a process starts with (util_tunables_load).
 *
 * Properties: a value accepted as an int is non-negative; a size is the digits times
 * its suffix's power of 1024 without overflow; a bool is 0 or 1; parsing twice gives
 * the same answer; loading never fails for defaults and names the bad variable when
 * a value is refused.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"
#include "util/tunables.h"

#define FUZZ_ASSERT(c)                                                                             \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every TERN_* variable name, from the one table. */
static const char *const fuzz_envs[] = {
#define TERN_TUNABLE(field, env, kind, def, help) #env,
#define TERN_TUNABLE_RANGE(field, min, max, pow2)
#include "util/tunables.def"
#undef TERN_TUNABLE_RANGE
#undef TERN_TUNABLE
};
#define FUZZ_NENV (sizeof fuzz_envs / sizeof fuzz_envs[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096) return 0;
    uint8_t sel = data[0];
    char *text = malloc(size);
    if (text == NULL) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    long iv = -1, iv2 = -1;
    int rc = util_tunable_parse(UTIL_TUNABLE_INT, text, &iv);
    FUZZ_ASSERT(rc == 0 || rc == TERN_ERR_TUNABLE);
    if (rc == 0) {
        FUZZ_ASSERT(iv >= 0);
        FUZZ_ASSERT(util_tunable_parse(UTIL_TUNABLE_INT, text, &iv2) == 0 && iv2 == iv);
    }

    size_t sv = 0;
    rc = util_tunable_parse(UTIL_TUNABLE_SIZE, text, &sv);
    FUZZ_ASSERT(rc == 0 || rc == TERN_ERR_TUNABLE);
    if (rc == 0) {
        /* Recompute from the digits and the suffix the way the grammar says. */
        FUZZ_ASSERT(isdigit((unsigned char)text[0]));
        char *end;
        unsigned long long d = strtoull(text, &end, 10);
        int c = tolower((unsigned char)*end);
        unsigned shift = c == 'k' ? 10 : c == 'm' ? 20 : c == 'g' ? 30 : 0;
        FUZZ_ASSERT(shift == 0 || d <= (SIZE_MAX >> shift));
        FUZZ_ASSERT(sv == (size_t)(d << shift));
    }

    int bv = -1;
    rc = util_tunable_parse(UTIL_TUNABLE_BOOL, text, &bv);
    FUZZ_ASSERT(rc == 0 || rc == TERN_ERR_TUNABLE);
    if (rc == 0) FUZZ_ASSERT(bv == 0 || bv == 1);

    const char *s = NULL;
    FUZZ_ASSERT(util_tunable_parse(UTIL_TUNABLE_STR, text, &s) == 0 && s == text);
    FUZZ_ASSERT(util_tunable_parse(UTIL_TUNABLE_INT, NULL, &iv) == TERN_ERR_TUNABLE);

    /* The same text as one variable of the environment, then the whole load. */
    const char *env = fuzz_envs[sel % FUZZ_NENV];
    setenv(env, text, 1);
    char msg[8192];
    FILE *err = fmemopen(msg, sizeof msg, "w");
    rc = util_tunables_load(err);
    if (err) fclose(err);
    FUZZ_ASSERT(rc == 0 || rc == TERN_ERR_TUNABLE);
    if (rc != 0 && err) FUZZ_ASSERT(strstr(msg, env) != NULL);
    unsetenv(env);
    FUZZ_ASSERT(util_tunables_load(NULL) == 0);
    free(text);
    return 0;
}
