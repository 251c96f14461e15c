/*
 * adapt.h - eager or rendezvous for middle-sized messages, chosen from what the copies
 * cost on this machine right now.
 *
 * Between a transport's adapt_min and adapt_max (shm: TERN_SHM_ADAPT_MIN and
 * TERN_SHM_ADAPT_MAX) neither protocol wins everywhere. Eager copies twice (the sender
 * into a cell, the receiver out of it, each reading lines the other process wrote);
 * rendezvous copies once (the receiver pulls with process_vm_readv, whose system call and
 * page pinning cost a few microseconds). On the AMD VM of docs/PERFORMANCE.md a 64 KiB
 * ping-pong is 1.3x faster eager while a cache line moves between the two cores in 50 ns,
 * and 2-3x faster by rendezvous while it takes 200 ns (the host moves the vCPUs between
 * such placements for minutes at a time) or while other processes share the cores. No
 * fixed limit is right in both, so the receiver, which does the copy that varies, times
 * both and tells the sender.
 *
 * The receiver keeps, per sender, a moving average of the nanoseconds per byte of its
 * copies out of eager frames of those sizes and of its rendezvous pulls. Once it has both
 * it advises rendezvous when a pull costs less than the two eager copies (twice its own
 * copy: the sender's copy into the cell reads and writes the same kinds of lines), and
 * eager otherwise. The advice rides two flag bits in the header of every frame it sends
 * to that peer (replies, FINs, acknowledgements), so it costs no message of its own. The
 * sender follows the last advice it heard (before any, the fixed eager_max rule), except
 * that one message in CORE_ADAPT_EXPLORE of those sizes takes the other protocol, so the
 * receiver keeps timing both: a phase change is seen within about a hundred messages.
 *
 * Off by default (TERN_SHM_ADAPT_MAX=0). Measured on the AMD VM: right idle (32-64 KiB
 * ping-pong 1.3-1.5x faster in the fast phase) but wrong loaded (1.5-2.3x slower than the
 * fixed 32 KiB limit), because a receiver's copy out of a cell stays fast under load while
 * what makes eager slow there is elsewhere, and because its exploring pulls read a buffer
 * its cache has not kept (a steady rendezvous of an unchanged buffer does). Both are what
 * the cost model must learn before it can be the default.
 *
 * Pure functions only, unit-tested in tests/unit/test_adapt.c; proto.c does the timing.
 */
#ifndef TERN_CORE_ADAPT_H
#define TERN_CORE_ADAPT_H

#include <stddef.h>
#include <stdint.h>

/* One message in this many of the adaptive sizes takes the protocol not advised. */
#define CORE_ADAPT_EXPLORE 16
/* Weight of a new timing in the moving averages: 1 / CORE_ADAPT_WEIGHT (one copy's time
 * swings 2x with interrupts and cache state; at 4 the advice flipped every few messages). */
#define CORE_ADAPT_WEIGHT 16
/* The advice changes only when the other protocol looks this much cheaper. */
#define CORE_ADAPT_MARGIN 1.125

/* Header flag bits carrying the advice (core_hdr.flags). */
#define CORE_FLAG_ADV      0x40 /* the sender of this frame advises... */
#define CORE_FLAG_ADV_RNDV 0x80 /* ...rendezvous (set) or eager (clear) */

/* What a receiver knows of the copies from one sender. */
struct core_adapt_rx {
    double eager_npb, rndv_npb; /* moving averages, ns per byte */
    uint32_t n_eager, n_rndv;   /* timings taken */
};

/* Fold one timing (ns for `bytes`) into a moving average of which n were taken before. */
static inline double core_adapt_fold(double avg, uint32_t n, double ns, size_t bytes)
{
    double x = ns / (double)(bytes ? bytes : 1);
    if (n == 0) return x;
    return avg + (x - avg) / CORE_ADAPT_WEIGHT;
}

/* Record a timing: rndv nonzero for a rendezvous pull, else a copy out of an eager frame. */
static inline void core_adapt_note(struct core_adapt_rx *a, int rndv, double ns, size_t bytes)
{
    if (rndv) {
        a->rndv_npb = core_adapt_fold(a->rndv_npb, a->n_rndv, ns, bytes);
        if (a->n_rndv < UINT32_MAX) a->n_rndv++;
    } else {
        a->eager_npb = core_adapt_fold(a->eager_npb, a->n_eager, ns, bytes);
        if (a->n_eager < UINT32_MAX) a->n_eager++;
    }
}

/* The flag bits a receiver puts in its frames to that sender, given those it put so far
 * (`prev`): none until it has timed both protocols, then CORE_FLAG_ADV, with
 * CORE_FLAG_ADV_RNDV while one pull is cheaper than two eager copies. It changes sides
 * only past CORE_ADAPT_MARGIN, so close timings do not make it flip at every message. */
static inline uint8_t core_adapt_advice(const struct core_adapt_rx *a, uint8_t prev)
{
    if (a->n_eager == 0 || a->n_rndv == 0) return 0;
    double pull = a->rndv_npb, copies = 2 * a->eager_npb;
    int rndv = (prev & CORE_FLAG_ADV_RNDV) ? pull < copies * CORE_ADAPT_MARGIN
                                           : pull * CORE_ADAPT_MARGIN < copies;
    return (uint8_t)(CORE_FLAG_ADV | (rndv ? CORE_FLAG_ADV_RNDV : 0));
}

/*
 * The sender's choice for a message of the adaptive sizes: 1 rendezvous, 0 eager.
 * `heard` is the flag bits last heard from the receiver (0: none yet), `fixed` the choice
 * of the fixed eager_max rule, *count the sender's tally of such messages to that peer.
 */
static inline int core_adapt_pick(uint8_t heard, int fixed, uint32_t *count)
{
    int pick = (heard & CORE_FLAG_ADV) ? (heard & CORE_FLAG_ADV_RNDV) != 0 : fixed;
    if (++*count % CORE_ADAPT_EXPLORE == 0) pick = !pick;
    return pick;
}

#endif
