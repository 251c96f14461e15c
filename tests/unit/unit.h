/*
 * unit.h - the few checks unit tests need: a failed check prints where and what,
 * and the test exits non-zero at the end.
 */
#ifndef TERN_TEST_UNIT_H
#define TERN_TEST_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            unit_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        if (va_ != vb_) {                                                                          \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,    \
                    va_, #b, vb_);                                                                 \
            unit_failures++;                                                                       \
        }                                                                                          \
    } while (0)

static inline int unit_done(const char *name)
{
    if (unit_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, unit_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
