/*
 * test_tunables.c - the tunables parser: sizes with suffixes, booleans, integers, bad
 * values named on stderr with TERN_ERR_TUNABLE, and every default parses.
 */
#include <stdlib.h>
#include <string.h>

#include "tern.h"
#include "unit.h"
#include "util/tunables.h"

int main(void)
{
    size_t sz = 0;
    long v = 0;
    int b = -1;
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "32k", &sz), 0);
    CHECK_EQ(sz, 32768);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "2M", &sz), 0);
    CHECK_EQ(sz, 2u << 20);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "1gb", &sz), 0);
    CHECK_EQ(sz, 1u << 30);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "100", &sz), 0);
    CHECK_EQ(sz, 100);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "-1", &sz), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "12q", &sz), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "", &sz), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "99999999999999999999g", &sz), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_SIZE, "17179869184g", &sz), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_INT, "0x10", &v), 0);
    CHECK_EQ(v, 16);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_INT, "ten", &v), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_INT, "-3", &v), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_BOOL, "yes", &b), 0);
    CHECK_EQ(b, 1);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_BOOL, "OFF", &b), 0);
    CHECK_EQ(b, 0);
    CHECK_EQ(util_tunable_parse(UTIL_TUNABLE_BOOL, "maybe", &b), TERN_ERR_TUNABLE);

    /* Every default is valid; a bad environment value is reported and rejected. */
    unsetenv("TERN_SHM_CELL_SIZE");
    CHECK_EQ(util_tunables_load(NULL), 0);
    CHECK_EQ(util_tun.shm_cell_size, 8320);
    setenv("TERN_SHM_CELL_SIZE", "lots", 1);
    CHECK_EQ(util_tunables_load(stderr), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tun.shm_cell_size, 8320);
    setenv("TERN_SHM_CELL_SIZE", "128k", 1);
    CHECK_EQ(util_tunables_load(NULL), 0);
    CHECK_EQ(util_tun.shm_cell_size, 131072);

    /* Declared ranges: values outside them are refused, not clamped, and the rest of
     * the table keeps its defaults. */
    unsetenv("TERN_SHM_CELL_SIZE");
    setenv("TERN_COLL_SHM_LINES", "100", 1); /* not a power of two */
    CHECK_EQ(util_tunables_load(stderr), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tun.coll_shm_lines, 256);
    CHECK_EQ(util_tun.shm_cell_size, 8320);
    setenv("TERN_COLL_SHM_LINES", "131072", 1); /* a power of two above 65536 */
    CHECK_EQ(util_tunables_load(NULL), TERN_ERR_TUNABLE);
    setenv("TERN_COLL_SHM_LINES", "65536", 1);
    CHECK_EQ(util_tunables_load(NULL), 0);
    CHECK_EQ(util_tun.coll_shm_lines, 65536);
    unsetenv("TERN_COLL_SHM_LINES");
    setenv("TERN_COLL_SHM_RADIX", "1", 1);
    CHECK_EQ(util_tunables_load(NULL), TERN_ERR_TUNABLE);
    CHECK_EQ(util_tun.coll_shm_radix, 4);
    setenv("TERN_COLL_SHM_RADIX", "64", 1);
    CHECK_EQ(util_tunables_load(NULL), 0);
    unsetenv("TERN_COLL_SHM_RADIX");
    setenv("TERN_OFI_FRAME", "1k", 1); /* sizes: below the 4 KiB floor */
    CHECK_EQ(util_tunables_load(NULL), TERN_ERR_TUNABLE);
    setenv("TERN_OFI_FRAME", "4k", 1);
    CHECK_EQ(util_tunables_load(NULL), 0);
    unsetenv("TERN_OFI_FRAME");
    setenv("TERN_SLEEP_MS", "0", 1); /* a zero sleep would spin */
    CHECK_EQ(util_tunables_load(NULL), TERN_ERR_TUNABLE);
    unsetenv("TERN_SLEEP_MS");
    CHECK_EQ(util_tunables_load(NULL), 0);

    /* tern_init refuses to start with a bad tunable, naming the error. */
    setenv("TERN_SPIN_COUNT", "fast", 1);
    CHECK_EQ(tern_init(NULL, NULL), TERN_ERR_TUNABLE);
    CHECK(strcmp(tern_err_name(TERN_ERR_TUNABLE), "TERN_ERR_TUNABLE") == 0);
    CHECK_EQ(tern_initialized(), 0);
    return unit_done("test_tunables");
}
