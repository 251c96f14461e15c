/*
 * tern_pingpong.c - ping-pong latency/bandwidth and streaming bandwidth over
 * the native tern API (tern_isend+tern_wait, --sync: tern_send).
 * The loops and the timing live in patterns.h, shared with the other libraries'
 * versions so that every library is measured the same way. Run with 2 processes.
 */
#include "prims_tern.h"

#include "patterns.h"

int main(int argc, char **argv)
{
    return bench_pingpong_main(argc, argv);
}
