/*
 * fuzz_hostfile.c - libFuzzer target for ternrun's host parsers
 * (tools/ternrun/hostfile.c): arbitrary bytes as hostfile text (with NULs, long
 * lines, no final newline) and, up to the first NUL, as a --host list.
 *
 * Properties: a parse that succeeds gives hosts with non-empty, bounded names that
 * appear once each, with 1..RUN_HOST_SLOTS_MAX slots, and a total that is their sum;
 * one that fails writes a NUL-terminated message; either way nothing leaks.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile.h"

#define FUZZ_ASSERT(c)                                                                             \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check(struct run_hostlist *hl, int rc, const char *err)
{
    if (rc != 0) {
        FUZZ_ASSERT(rc == -1);
        FUZZ_ASSERT(memchr(err, '\0', 256) != NULL && err[0] != '\0');
        return;
    }
    long total = 0;
    for (int i = 0; i < hl->n; i++) {
        size_t len = strlen(hl->v[i].name);
        FUZZ_ASSERT(len > 0 && len <= RUN_HOST_NAME_MAX);
        FUZZ_ASSERT(hl->v[i].slots >= 1);
        for (int j = 0; j < i; j++)
            FUZZ_ASSERT(strcmp(hl->v[i].name, hl->v[j].name) != 0);
        total += hl->v[i].slots;
    }
    FUZZ_ASSERT(run_hosts_slots(hl) == total);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct run_hostlist hl = {0};
    /* Exact length, no terminator: the parser must not read past the end. */
    char *text = malloc(size ? size : 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    memset(err, 0, sizeof err);
    int rc = run_hosts_parse_text(&hl, text, size, "fuzz", err, sizeof err);
    fuzz_check(&hl, rc, err);
    run_hosts_free(&hl);
    free(text);

    char *list = malloc(size + 1);
    if (list == NULL) return 0;
    memcpy(list, data, size);
    list[size] = '\0';
    memset(&hl, 0, sizeof hl);
    memset(err, 0, sizeof err);
    rc = run_hosts_parse_list(&hl, list, err, sizeof err);
    fuzz_check(&hl, rc, err);
    run_hosts_free(&hl);
    free(list);
    return 0;
}
