/*
 * core_tl.h - the core's side of the transport interface, for the .c files of src/core
 * alone: those that call transport operations include this instead of core.h, so the
 * layers above (api, coll, conv, mpi, shmem) never see transport.h. It also checks that
 * the constants core.h repeats for those layers agree with the transport's.
 */
#ifndef TERN_CORE_TL_H
#define TERN_CORE_TL_H

#include "core/core.h"
#include "transport/transport.h"

_Static_assert(CORE_MAX_IOV == TL_MAX_IOV, "core.h's CORE_MAX_IOV must be TL_MAX_IOV");
_Static_assert(CORE_CAP_WAKE == TL_CAP_WAKE && CORE_CAP_MAP == TL_CAP_MAP &&
                   CORE_CAP_SEND_REF == TL_CAP_SEND_REF &&
                   CORE_CAP_KERNEL_WAIT == TL_CAP_KERNEL_WAIT && CORE_CAP_GET == TL_CAP_GET &&
                   CORE_CAP_PUT == TL_CAP_PUT && CORE_CAP_ATOMIC == TL_CAP_ATOMIC,
               "core.h's CORE_CAP_* must be transport.h's TL_CAP_*");

/* What one round of a message wait found (core_wait_round). */
enum core_round { CORE_ROUND_DONE, CORE_ROUND_AGAIN, CORE_ROUND_YIELD, CORE_ROUND_SLEEP };

/*
 * One round of a blocked message wait, the part the single-threaded loop (progress.c)
 * and the multi-threaded one (thread.c) share, so their policy cannot drift apart:
 * done(arg) holds (DONE); a poll made progress (AGAIN, at once); an empty poll in the
 * spin phase (AGAIN, after *spun is set so a threaded caller can hand the lock over
 * instead of relaxing); or the phase to act on in the caller's own way (YIELD, SLEEP),
 * with the start of the long wait noted for the hang report. Never sleeps while frames
 * wait for room at a peer: nobody would ring us when room appears (a kernel waiter is
 * woken by room too).
 */
static inline enum core_round core_wait_round(struct core_waiter *w, core_done_fn done,
                                              const void *arg, int *spun)
{
    *spun = 0;
    if (done(arg)) return CORE_ROUND_DONE;
    if (core_progress() > 0) {
        core_wait_progressed(w);
        return CORE_ROUND_AGAIN;
    }
    if (done(arg)) return CORE_ROUND_DONE;
    /* The first polls are spin polls whatever the clock says (tight_polls is 0 where the
     * policy spins by time): count them and go on, as short a round as there can be. */
    if (w->polls < w->pol.tight_polls) {
        w->polls++;
        *spun = 1;
        return CORE_ROUND_AGAIN;
    }
    enum core_wait_phase ph = core_wait_next(w, !core.npending || core.kernel_wait);
    if (ph == CORE_WAIT_SPIN) {
        *spun = 1;
        return CORE_ROUND_AGAIN;
    }
    if (core.doing.since == 0) core.doing.since = core_diag_now();
    return ph == CORE_WAIT_YIELD ? CORE_ROUND_YIELD : CORE_ROUND_SLEEP;
}

#endif
