/*
 * adapt.h - eager or rendezvous for middle-sized messages, chosen from what the copies
 * cost on this machine right now.
 *
 * Between a transport's adapt_min and adapt_max (shm: TERN_SHM_ADAPT_MIN and
 * TERN_SHM_ADAPT_MAX), and in a one-way stream up to its stream_max
 * (TERN_SHM_STREAM_EAGER_MAX), neither protocol wins everywhere. Eager copies twice (the sender
 * into a cell, the receiver out of it, each touching lines the other process touched
 * last); rendezvous copies once (the receiver pulls with process_vm_readv, whose system
 * call and page pinning cost a few microseconds). On the AMD VM of docs/PERFORMANCE.md a
 * 64 KiB ping-pong is 1.3x faster eager while a cache line moves between the two cores
 * in 50 ns, and rendezvous wins while it takes 200 ns (the host moves the vCPUs between
 * such placements for minutes at a time). No fixed limit is right in both.
 *
 * So both sides time what they do, per size class (powers of two from adapt_min: with
 * 8 KiB, (8, 16], (16, 32] and (32, 64] KiB; a pull's fixed cost weighs more on small
 * messages, so costs per byte of different sizes do not compare), as moving averages of
 * clock ticks per byte:
 *   - the sender its eager sends (the copy into the cell), and it puts its current
 *     average for the class in the EAGER frame's rreq word (unused there) as a float;
 *   - the receiver, per sender, its copies out of those frames and its rendezvous pulls.
 * Per class the receiver prefers rendezvous while a pull costs less than the sender's
 * copy plus its own (in a one-way stream, where the two copies overlap, the slower of
 * them), with a margin before it changes sides, and tells the sender the smallest class
 * it prefers rendezvous from (larger classes too, as a pull's fixed cost only shrinks
 * with size), in four flag bits of every frame it sends to that peer: no message of its
 * own. The sender follows the last advice heard (before any, the fixed eager_max rule),
 * except that the first few of every period of messages of those sizes go the other way,
 * so the receiver times both from the start and keeps timing both. A burst, not single
 * messages: one pull among eager messages reads a send buffer the receiver's cache no
 * longer holds, and times rendezvous 2x worse than a run does.
 *
 * The averages follow faster timings at once and slower ones slowly, capped at
 * CORE_ADAPT_OUTLIER times the average: what delays a copy (a preemption, an interrupt,
 * the first touch of a cell's pages) only ever makes it slower, so the fast timings are
 * the cost and the slow ones mostly noise. A first copy into a fresh cell page-faults and
 * took 10x its cost; with a symmetric average that one timing kept a 12 KiB ping-pong on
 * the wrong protocol for its first 1,500 messages. A real change to slower still moves the
 * average by a fifth per message.
 *
 * Eager has two kinds up to the transport's nt_max (shm: TERN_SHM_NT_MAX): the sender's
 * copy as usual, or written around the caches (send_nt, CORE_FLAG_NT in the frame). Where
 * the two cores share no cache the usual copy waits for every line to leave the reader's
 * cache, and 4-16 KiB frames written around the caches went 2-4x faster; where they share
 * one, the usual copy wins by a little. Both kinds are timed apart (in_nt, out_nt,
 * peer_in_nt), the receiver prefers one per class (nt, with CORE_ADAPT_NT_BIAS) and says
 * which in CORE_FLAG_ADV_NT; the eager cost it weighs against a pull is the preferred one.
 *
 * Only one copy in CORE_ADAPT_SAMPLE is timed where it goes the advised way; the sender's
 * exploration (bursts, periods) is kept per size class.
 *
 * Pure functions only, unit-tested in tests/unit/test_adapt.c; proto.c does the timing.
 */
#ifndef TERN_CORE_ADAPT_H
#define TERN_CORE_ADAPT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Every period of messages of the adaptive sizes to a peer, the first few (its burst) take
 * the protocol not advised. The period starts at CORE_ADAPT_PERIOD with a burst of
 * CORE_ADAPT_BURST, and grows CORE_ADAPT_GROWTH times, up to CORE_ADAPT_PERIOD_MAX, with a
 * burst of CORE_ADAPT_BURST_HELD, each time a period ends with the advice it began with
 * (the burst lost); a period that ends with other advice starts over. A pull costs 3 us
 * against 0.3-1.3 us for a 4-8 KiB eager message where a cache line crosses fast, and a
 * benchmark point lasts a few thousand messages: with 8 of every 256 messages pulled,
 * 6-8 KiB ping-pongs there were 3-12% slower than with the fixed rule. */
#define CORE_ADAPT_PERIOD     256
#define CORE_ADAPT_PERIOD_MAX 4096
#define CORE_ADAPT_GROWTH     4
#define CORE_ADAPT_BURST      8
#define CORE_ADAPT_BURST_HELD 4
/* Weight of a new timing in the moving averages: 1 / CORE_ADAPT_WEIGHT for one slower
 * than the average, 1 / CORE_ADAPT_WEIGHT_DOWN for one faster. */
#define CORE_ADAPT_WEIGHT      16
#define CORE_ADAPT_WEIGHT_DOWN 2
/* A timing counts for at most this many times the average. */
#define CORE_ADAPT_OUTLIER 4.0
/* A class's preference changes only when the other protocol looks this much cheaper. */
#define CORE_ADAPT_MARGIN 1.125
/* Eager frames written around the caches are preferred only when their two copies cost
 * this many times less than the usual ones. The timings favour them: the usual copy's last
 * stores may still sit in the store buffer when the sender reads the clock, the other
 * copy ends on a fence. With the copies timed 10% cheaper around the caches, a 8 KiB
 * ping-pong there was 10% slower where the cores share a cache; where they share none the
 * copies are 3-5x cheaper around the caches. */
#define CORE_ADAPT_NT_BIAS 1.5
/* Size classes: (min, 2 min], (2 min, 4 min], ...; larger sizes share the last. */
#define CORE_ADAPT_CLASSES 6

/* Header flag bits carrying the advice (core_hdr.flags): CORE_FLAG_ADV, and in
 * CORE_FLAG_ADV_FROM the smallest class to send by rendezvous (CORE_ADAPT_NEVER: none). */
#define CORE_FLAG_ADV       0x40
#define CORE_FLAG_ADV_FROM  0x38
#define CORE_FLAG_ADV_SHIFT 3
#define CORE_ADAPT_NEVER    7
/* ...and CORE_FLAG_ADV_NT: write the eager frames around the caches (send_nt). */
#define CORE_FLAG_ADV_NT   0x80
#define CORE_FLAG_ADV_BITS (CORE_FLAG_ADV | CORE_FLAG_ADV_FROM | CORE_FLAG_ADV_NT)

/* One moving average of clock ticks per byte (the CPU's invariant counter where there is
 * one, else ns: the same on every process of a node, so a peer's figure compares). */
struct core_adapt_avg {
    double npb;
    uint32_t n; /* timings taken */
};

/* What one process knows of the copies between it and one peer, in one size class. */
struct core_adapt_class {
    struct core_adapt_avg in;     /* as sender: my eager sends to it */
    struct core_adapt_avg in_nt;  /* ...those written around the caches (send_nt) */
    struct core_adapt_avg out;    /* as receiver: my copies out of its eager frames */
    struct core_adapt_avg out_nt; /* ...out of those it wrote around the caches */
    struct core_adapt_avg pull;   /* as receiver: my pulls of its rendezvous messages */
    double peer_in;               /* as receiver: its eager sends to me, as it said (0: unknown) */
    double peer_in_nt;            /* ...those it wrote around the caches */
    uint8_t rndv;                 /* as receiver: rendezvous preferred */
    uint8_t nt;                   /* as receiver: eager around the caches preferred */
};

/* Of the eager copies that go the advised way, one in CORE_ADAPT_SAMPLE is timed, by the
 * sender and by the receiver; those that go the other way (a burst) always are. The two
 * clock reads around a copy cost 10 ns each here (rdtsc in a KVM guest), four per
 * message: timing every copy made 2-4 KiB ping-pongs 6-11% slower where eager wins. */
#define CORE_ADAPT_SAMPLE 4

/* Is this copy timed? `other_way`: it went against the advice; *n counts the copies. */
static inline int core_adapt_sampled(uint32_t *n, int other_way)
{
    return other_way || (*n)++ % CORE_ADAPT_SAMPLE == 0;
}

/* Does advice `adv` (flag bits; 0: none) say rendezvous for class k? */
static inline int core_adapt_says_rndv(uint8_t adv, int k)
{
    return (adv & CORE_FLAG_ADV) && k >= ((adv & CORE_FLAG_ADV_FROM) >> CORE_FLAG_ADV_SHIFT);
}

/* A sender's tally of the messages of one class of adaptive sizes it sent to one peer. Per
 * class: with one tally per peer, a program (or a benchmark) that moves from size to size
 * grew the period on the first class and never explored the next ones (8-32 KiB stayed
 * eager, unpulled, 15-20% slower). */
struct core_adapt_tally {
    uint32_t count;  /* sent in the current period */
    uint32_t period; /* its length (0: not started, CORE_ADAPT_PERIOD) */
    uint8_t mark;    /* the advice heard when it began */
    uint32_t bursts; /* periods begun (TERN_DEBUG's report) */
    uint64_t size;   /* the size of the message that began it */
};

/*
 * core_adapt_moved: a period that has run CORE_ADAPT_PERIOD messages ends early, and the
 * next is CORE_ADAPT_PERIOD long again, when a message's size lies more than 1.25x from
 * the one that began it: a class spans a factor of two, and what its first sizes taught
 * (a 16 KiB ping-pong eager) need not hold at its last (32 KiB by a pull). Without it a
 * program that moved on within the class, its periods grown to CORE_ADAPT_PERIOD_MAX on
 * the old size, went on the old way for 4,096 messages (a whole benchmark point: 32765 B
 * ping-pongs eager at 4.7 us after 16387 B ones, against 3.3 by a pull when launched
 * alone). A program that mixes such sizes all along explores at the first period's rate.
 */
static inline int core_adapt_moved(uint64_t n, uint64_t size)
{
    return n * 4 > size * 5 || size * 4 > n * 5; /* more than 1.25x either way */
}

/* The burst of the current period: longer when the advice is new. */
static inline uint32_t core_adapt_burst(const struct core_adapt_tally *t)
{
    return t->period > CORE_ADAPT_PERIOD ? CORE_ADAPT_BURST_HELD : CORE_ADAPT_BURST;
}

/* Did the last message core_adapt_pick chose for go against the advice (in its burst, or
 * in the run after it that writes eager frames the other way; core_adapt_nt)? */
static inline int core_adapt_in_burst(const struct core_adapt_tally *t)
{
    return t->count <= 2 * core_adapt_burst(t);
}

struct core_adapt {
    struct core_adapt_class c[CORE_ADAPT_CLASSES];
    uint32_t copies;    /* my copies out of its eager frames, for core_adapt_sampled */
    uint32_t received;  /* messages of those sizes from it */
    uint32_t sent_mark; /* `received` when I last sent it one */
};

/* The class of a payload of n bytes, min < n: floor(log2((n - 1) / min)), at most the last.
 * A shift, not a division, where min is a power of two (the defaults): it runs several
 * times per message. */
static inline int core_adapt_class(size_t n, size_t min)
{
    if (min == 0) min = 1;
    unsigned long long r = (min & (min - 1)) == 0 ? (n - 1) >> __builtin_ctzll(min) : (n - 1) / min;
    int c = 63 - __builtin_clzll(r | 1); /* r >= 1 when min < n */
    return c < CORE_ADAPT_CLASSES - 1 ? c : CORE_ADAPT_CLASSES - 1;
}

/* Fold one timing (ticks for `bytes`) into an average. */
static inline void core_adapt_fold(struct core_adapt_avg *a, double ticks, size_t bytes)
{
    double x = ticks / (double)(bytes ? bytes : 1);
    if (!(x >= 0)) return; /* NaN or negative: a clock gone wrong */
    if (a->n == 0) {
        a->npb = x;
    } else if (x < a->npb) {
        a->npb += (x - a->npb) / CORE_ADAPT_WEIGHT_DOWN;
    } else {
        if (x > CORE_ADAPT_OUTLIER * a->npb) x = CORE_ADAPT_OUTLIER * a->npb;
        a->npb += (x - a->npb) / CORE_ADAPT_WEIGHT;
    }
    if (a->n < UINT32_MAX) a->n++;
}

/* The sender's average as it travels in a frame's 32-bit word (a float; 0: none). */
static inline uint32_t core_adapt_encode(const struct core_adapt_avg *a)
{
    /* Within what decode accepts, so the conversion to float can never overflow. */
    float f = a->n && a->npb > 0 ? (float)(a->npb < 1e5 ? a->npb : 1e5) : 0.0f;
    uint32_t w;
    memcpy(&w, &f, sizeof w);
    return w;
}

/* ...and back: 0 for none or for anything that is not a plausible cost. */
static inline double core_adapt_decode(uint32_t w)
{
    float f;
    memcpy(&f, &w, sizeof f);
    return (isfinite(f) && f > 0 && f < 1e6f) ? (double)f : 0;
}

/* Has the peer sent more than a period of those sizes since I last sent it one? Then its
 * messages are a one-way stream, in which its copy into a cell and mine out of the one
 * before overlap: eager costs the slower of the two, not their sum. (In a ping-pong or a
 * bidirectional stream each process does both copies, one after the other.) */
static inline int core_adapt_one_way(const struct core_adapt *a)
{
    return a->received - a->sent_mark > CORE_ADAPT_PERIOD;
}

/* The cost of an eager message: the sender's copy (`in`, as it said; else taken to equal
 * mine) and my copy `out`, one after the other, or at once in a one-way stream. */
static inline double core_adapt_eager_cost(const struct core_adapt *a, double in,
                                           const struct core_adapt_avg *out)
{
    if (!(in > 0)) in = out->npb;
    return core_adapt_one_way(a) ? (in > out->npb ? in : out->npb) : in + out->npb;
}

/* Class k's preference after a new timing: between the two kinds of eager copy once both
 * are timed (CORE_ADAPT_NT_BIAS), and, once eager and pulls are timed, rendezvous while
 * one pull is cheaper than the preferred eager copies; past CORE_ADAPT_MARGIN to change
 * sides. */
static inline void core_adapt_prefer(struct core_adapt *a, int k)
{
    struct core_adapt_class *c = &a->c[k];
    double reg = c->out.n ? core_adapt_eager_cost(a, c->peer_in, &c->out) : 0;
    double nt =
        c->out_nt.n ? CORE_ADAPT_NT_BIAS * core_adapt_eager_cost(a, c->peer_in_nt, &c->out_nt) : 0;
    if (c->out.n && c->out_nt.n)
        c->nt = c->nt ? nt < reg * CORE_ADAPT_MARGIN : nt * CORE_ADAPT_MARGIN < reg;
    if ((c->out.n == 0 && c->out_nt.n == 0) || c->pull.n == 0) return;
    double eager = c->nt || c->out.n == 0 ? nt : reg; /* c->nt: both kinds timed */
    double pull = c->pull.npb;
    c->rndv = c->rndv ? pull < eager * CORE_ADAPT_MARGIN : pull * CORE_ADAPT_MARGIN < eager;
}

/* The flag bits a receiver puts in its frames to that sender: none until a class has
 * timed both protocols, then CORE_FLAG_ADV and the smallest such class that prefers
 * rendezvous (CORE_ADAPT_NEVER if none does), and CORE_FLAG_ADV_NT if the smallest class
 * that timed eager frames written both ways, and prefers eager, prefers them around the
 * caches (a class that goes by rendezvous has no say: its noisy eager timings would
 * change the advice, and each change restarts the sender's exploration). */
static inline uint8_t core_adapt_advice(const struct core_adapt *a)
{
    int any = 0, from = CORE_ADAPT_NEVER, nt = -1;
    for (int k = 0; k < CORE_ADAPT_CLASSES; k++) {
        const struct core_adapt_class *c = &a->c[k];
        if (nt < 0 && c->out.n && c->out_nt.n && !c->rndv) nt = c->nt;
        if ((c->out.n == 0 && c->out_nt.n == 0) || c->pull.n == 0) continue;
        any = 1;
        if (c->rndv && k < from) from = k;
    }
    if (!any) return 0;
    return (uint8_t)(CORE_FLAG_ADV | (from << CORE_FLAG_ADV_SHIFT) |
                     (nt > 0 ? CORE_FLAG_ADV_NT : 0));
}

/*
 * The sender's choice for a message of class k and n bytes: 1 rendezvous, 0 eager. `heard`
 * is the flag bits last heard from the receiver (0: none yet), `fixed` the choice of the
 * fixed eager_max rule, *t the sender's tally of such messages to that peer.
 */
static inline int core_adapt_pick(uint8_t heard, int k, int fixed, size_t n,
                                  struct core_adapt_tally *t)
{
    int pick = (heard & CORE_FLAG_ADV) ? core_adapt_says_rndv(heard, k) : fixed;
    int moved = t->count >= CORE_ADAPT_PERIOD && core_adapt_moved(n, t->size);
    if (t->count >= t->period || moved) { /* a period begins (the first one too: both are 0) */
        if (t->period == 0 || heard != t->mark || moved)
            t->period = CORE_ADAPT_PERIOD;
        else if (t->period < CORE_ADAPT_PERIOD_MAX)
            t->period *= CORE_ADAPT_GROWTH;
        t->mark = heard;
        t->count = 0;
        t->size = n;
        t->bursts++;
    }
    if (t->count++ < core_adapt_burst(t)) pick = !pick;
    return pick;
}

/*
 * Is the eager message core_adapt_pick just chose written around the caches? As advised
 * (CORE_FLAG_ADV_NT), but the other way in the run of messages after the period's burst,
 * and by turns within the burst itself (where eager messages go against advice of
 * rendezvous), so that the receiver times both kinds of eager copy whichever protocol
 * wins. Before any advice, written as usual but in those runs.
 */
static inline int core_adapt_nt(uint8_t heard, const struct core_adapt_tally *t)
{
    int nt = (heard & CORE_FLAG_ADV) && (heard & CORE_FLAG_ADV_NT);
    uint32_t i = t->count - 1, b = core_adapt_burst(t);
    if (i < b) return (int)(i & 1);
    if (i < 2 * b) return !nt;
    return nt;
}

/*
 * ---- Large rendezvous messages: pulled or streamed ----
 *
 * Above a transport's rv_min (shm: TERN_SHM_RNDV_ADAPT_MIN), a rendezvous message can be
 * pulled by the receiver (get(): shm's process_vm_readv, shared with the sender from
 * TERN_SHM_COOP_MIN) or streamed by the sender after a CTS, frame by frame through the
 * transport (two copies, the sender's into a cell and the receiver's out of the one
 * before, at once). On the AMD VM of docs/PERFORMANCE.md a 1 MiB ping-pong streamed
 * takes 41 us against 56 pulled while a cache line moves between the cores in 40 ns, and
 * up to 10x longer than pulled while it takes 200 ns.
 *
 * The choice is the receiver's alone (it answers the RTS with a pull or with a CTS), so
 * nothing travels. Per sender and size class (core_adapt_class from rv_min) it keeps the
 * last CORE_RV_KEEP timings of each way, in ticks per byte: a pull's get() call, a
 * stream's time from its CTS to its last frame. Only a message alone may stream: with
 * more receives posted for that sender, or rendezvous sends of mine to it in flight, or
 * traffic both ways (CORE_FLAG_BOTH, recv_both: a halo exchange), neither core is idle,
 * streaming's second copy is pure cost and a cooperative pull shares the one copy
 * between them (proto.c, core_recv_rndv). A way costs the second
 * smallest of its timings, so one preempted timing does not count and a way that turned
 * slow loses within three messages. The cheaper way is taken, past CORE_ADAPT_MARGIN to
 * change. Every `period` messages the other way is timed again, in a run of CORE_RV_KEEP
 * messages whose timings replace the old ones (one stream among pulls finds cold cells
 * and took 2x what a run of them does; an old phase's timings would lie), cut short when
 * its first message took CORE_RV_ABORT times the way taken. A run that loses doubles the
 * period up to CORE_RV_PERIOD_MAX, so a way 10x slower costs about 1% once settled; one
 * that wins is taken, and the period starts over.
 */
#define CORE_RV_KEEP       4
#define CORE_RV_PERIOD_MIN 32
#define CORE_RV_PERIOD_MAX 1024
#define CORE_RV_ABORT      3.0
enum { CORE_RV_PULL = 0, CORE_RV_STREAM = 1 };

struct core_rv_class {
    float t[2][CORE_RV_KEEP]; /* per way: its last timings, ticks per byte */
    uint8_t n[2];             /* per way: timings held (at most CORE_RV_KEEP) */
    uint8_t at[2];            /* per way: where the next timing goes */
    uint8_t way;              /* the way taken: CORE_RV_PULL or CORE_RV_STREAM */
    uint8_t run;              /* messages of the other way's run still to be sent */
    uint8_t heard;            /* timings of that run in so far */
    uint16_t period;          /* messages between runs (0: CORE_RV_PERIOD_MIN) */
    uint16_t left;            /* messages before the next run */
};

/* What way w costs (ticks per byte): the second smallest of its timings (the only one
 * when it has one); -1 with none. */
static inline double core_rv_cost(const struct core_rv_class *c, int w)
{
    int n = c->n[w];
    if (n == 0) return -1;
    if (n == 1) return c->t[w][0];
    float lo = c->t[w][0], second = c->t[w][1];
    if (second < lo) {
        lo = c->t[w][1];
        second = c->t[w][0];
    }
    for (int i = 2; i < n; i++) {
        float x = c->t[w][i];
        if (x < lo) {
            second = lo;
            lo = x;
        } else if (x < second) {
            second = x;
        }
    }
    return second;
}

/* The way for the next message of the class: the way taken until it has a timing, then
 * a run of the other, then the one taken, and a run of the other every `period`. */
static inline int core_rv_pick(struct core_rv_class *c)
{
    if (c->run) {
        c->run--;
        return !c->way;
    }
    if (c->n[c->way] == 0) return c->way;
    if (c->left == 0) { /* a run of the other way; its timings will replace the old */
        int w = !c->way;
        c->n[w] = c->at[w] = 0;
        c->heard = 0;
        c->left = c->period ? c->period : CORE_RV_PERIOD_MIN;
        c->run = CORE_RV_KEEP - 1;
        return w;
    }
    c->left--;
    return c->way;
}

/* Hold timing x of way w. */
static inline void core_rv_push(struct core_rv_class *c, int w, double x)
{
    c->t[w][c->at[w]] = (float)x;
    c->at[w] = (uint8_t)((c->at[w] + 1) % CORE_RV_KEEP);
    if (c->n[w] < CORE_RV_KEEP) c->n[w]++;
}

/* Take way w from now on; the other's run, if one is on, is over. */
static inline void core_rv_switch(struct core_rv_class *c, int w)
{
    c->way = (uint8_t)w;
    c->run = 0;
    c->heard = 0;
    c->period = CORE_RV_PERIOD_MIN;
    c->left = CORE_RV_PERIOD_MIN;
}

/* A message of the class went way w and took x ticks per byte. */
static inline void core_rv_took(struct core_rv_class *c, int w, double x)
{
    if (!(x >= 0) || w < 0 || w > 1) return; /* a clock gone wrong */
    if (w != c->way) {
        /* The other way's run (or a message picked before the last change of way),
         * which decides once it is all in. */
        core_rv_push(c, w, x);
        double now = core_rv_cost(c, c->way);
        /* A run whose first message took CORE_RV_ABORT times the way taken stops there:
         * the slow phase's streams are 5-10x, and a whole run of them cost a short job
         * 10% (cold, a first stream takes up to 2x a run's). */
        int abort = c->heard == 0 && now >= 0 && x > CORE_RV_ABORT * now;
        if (abort) c->run = 0;
        if (!abort && ++c->heard < CORE_RV_KEEP) return;
        c->heard = 0;
        if (now < 0 || (!abort && core_rv_cost(c, w) * CORE_ADAPT_MARGIN < now)) {
            core_rv_switch(c, w);
        } else {
            unsigned p = c->period ? c->period : CORE_RV_PERIOD_MIN;
            p = p * 2 > CORE_RV_PERIOD_MAX ? CORE_RV_PERIOD_MAX : p * 2;
            c->period = (uint16_t)p;
            c->left = (uint16_t)p;
        }
        return;
    }
    core_rv_push(c, w, x);
    /* The way taken turned slower than the other was when last timed: take the other. */
    double mine = core_rv_cost(c, w), theirs = core_rv_cost(c, !w);
    if (c->run == 0 && theirs >= 0 && mine > theirs * CORE_ADAPT_MARGIN) core_rv_switch(c, !w);
}

#endif
