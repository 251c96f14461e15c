/* exit_code.c - the last rank exits with code 3 mid-communication (see die_common.h);
 * run by expect_fail.sh, which wants ternrun to exit 3, quickly, leaving no /dev/shm. */
#include "die_common.h"

int main(int argc, char **argv)
{
    return die_main(argc, argv, 0);
}
