/*
 * tern_ring.c - an 8-byte token passed around a ring of N processes; reports the
 * time per hop. Uses the native tern API (tern_isend+tern_wait, --sync: tern_send).
 * The loop and the timing live in patterns.h, shared with the other libraries'
 * versions.
 */
#include "prims_tern.h"

#include "patterns.h"

int main(int argc, char **argv)
{
    return bench_ring_main(argc, argv);
}
