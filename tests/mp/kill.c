/* kill.c - the last rank raises SIGKILL mid-communication (see die_common.h); run by
 * expect_fail.sh, which wants ternrun to exit 137, quickly, leaving no /dev/shm. */
#include "die_common.h"

int main(int argc, char **argv)
{
    return die_main(argc, argv, 1);
}
