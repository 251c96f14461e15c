/*
 * test_adapt.c - the choice between eager and rendezvous for middle sizes (core/adapt.h):
 * the moving averages (faster timings followed at once, outliers capped, bad clocks
 * ignored), the sender's cost as it travels in a frame word, the size classes, each
 * class's preference (none before both protocols are timed; the sender's copy counted,
 * or mine in its place; the slower copy alone in a one-way stream; the margin that keeps
 * it from flipping), the advice (the smallest class preferring rendezvous), and the
 * sender's pick (the fixed rule until advised, the advice after, the other protocol for a
 * burst at the start of every period).
 */
#include "core/adapt.h"
#include "unit.h"

static int near(double a, double b)
{
    return fabs(a - b) < 1e-6 * (fabs(b) + 1);
}

static void test_fold(void)
{
    struct core_adapt_avg a = {0};
    core_adapt_fold(&a, 1000, 1000); /* the first timing is the average */
    CHECK(near(a.npb, 1.0));
    CHECK_EQ(a.n, 1);
    core_adapt_fold(&a, 3000, 1000); /* a slower one moves it by 1/CORE_ADAPT_WEIGHT */
    CHECK(near(a.npb, 1.0 + 2.0 / CORE_ADAPT_WEIGHT));
    CHECK_EQ(a.n, 2);
    double before = a.npb; /* a faster one by 1/CORE_ADAPT_WEIGHT_DOWN */
    core_adapt_fold(&a, 500, 1000);
    CHECK(near(a.npb, before + (0.5 - before) / CORE_ADAPT_WEIGHT_DOWN));
    /* A first timing 10x too slow (a fresh page) is forgotten within a few fast ones. */
    struct core_adapt_avg f = {0};
    core_adapt_fold(&f, 10000, 1000);
    for (int i = 0; i < 8; i++)
        core_adapt_fold(&f, 1000, 1000);
    CHECK(f.npb < 1.1);
    /* An outlier counts as CORE_ADAPT_OUTLIER times the average, no more. */
    struct core_adapt_avg b = {.npb = 1.0, .n = 5};
    core_adapt_fold(&b, 1e6, 1000);
    CHECK(near(b.npb, 1.0 + (CORE_ADAPT_OUTLIER - 1.0) / CORE_ADAPT_WEIGHT));
    /* A clock gone backwards is ignored; zero bytes never divide by zero. */
    struct core_adapt_avg c = {.npb = 2.0, .n = 3};
    core_adapt_fold(&c, -50, 1000);
    CHECK(near(c.npb, 2.0));
    CHECK_EQ(c.n, 3);
    struct core_adapt_avg d = {0};
    core_adapt_fold(&d, 5, 0);
    CHECK(isfinite(d.npb));
    /* A real change of 3x is followed within a few dozen timings. */
    struct core_adapt_avg e = {.npb = 1.0, .n = 100};
    int k = 0;
    while (e.npb < 2.9 && k < 1000) {
        core_adapt_fold(&e, 3000, 1000);
        k++;
    }
    CHECK(k > 4);
    CHECK(k < 6 * CORE_ADAPT_WEIGHT);
}

static void test_encode(void)
{
    struct core_adapt_avg a = {0};
    CHECK_EQ(core_adapt_encode(&a), 0); /* nothing timed: none */
    CHECK(near(core_adapt_decode(0), 0));
    a = (struct core_adapt_avg){.npb = 0.3125, .n = 7};
    CHECK(near(core_adapt_decode(core_adapt_encode(&a)), 0.3125));
    /* A huge average travels as the largest plausible cost, not as a float overflow. */
    a = (struct core_adapt_avg){.npb = 1e300, .n = 1};
    CHECK(near(core_adapt_decode(core_adapt_encode(&a)), 1e5));
    /* Words that are not a plausible cost decode as none. */
    float bad[] = {-1.0f, 1e9f, INFINITY, NAN};
    for (int i = 0; i < 4; i++) {
        uint32_t w;
        memcpy(&w, &bad[i], sizeof w);
        CHECK(near(core_adapt_decode(w), 0));
    }
}

static void test_class(void)
{
    size_t k8 = 8192;
    CHECK_EQ(core_adapt_class(8193, k8), 0);
    CHECK_EQ(core_adapt_class(16384, k8), 0);
    CHECK_EQ(core_adapt_class(16385, k8), 1);
    CHECK_EQ(core_adapt_class(32768, k8), 1);
    CHECK_EQ(core_adapt_class(32771, k8), 2);
    CHECK_EQ(core_adapt_class(65536, k8), 2);
    CHECK_EQ(core_adapt_class(65537, k8), 3);
    CHECK_EQ(core_adapt_class((size_t)1 << 40, k8), CORE_ADAPT_CLASSES - 1);
    CHECK_EQ(core_adapt_class(1, 0), 0); /* min 0: every size from 1 B */
    CHECK_EQ(core_adapt_class(5, 0), 2);
    /* The shift (a power-of-two min) and the division (any other) agree with the
     * definition: (min 2^k, min 2^(k+1)] is class k. */
    size_t mins[] = {1, 2, 3, 4096, 3000, 8192, 12345};
    for (size_t i = 0; i < sizeof mins / sizeof mins[0]; i++) {
        size_t m = mins[i];
        for (int k = 0; k < CORE_ADAPT_CLASSES; k++) {
            CHECK_EQ(core_adapt_class((m << k) + 1, m), k);
            CHECK_EQ(core_adapt_class(m << (k + 1), m), k);
        }
        CHECK_EQ(core_adapt_class((m << CORE_ADAPT_CLASSES) + 1, m), CORE_ADAPT_CLASSES - 1);
    }
}

/* Class k of a with copies in (as the sender said), out and pull, all timed. */
static void set_class(struct core_adapt *a, int k, double in, double out, double pull)
{
    a->c[k].peer_in = in;
    a->c[k].out = (struct core_adapt_avg){.npb = out, .n = 10};
    a->c[k].pull = (struct core_adapt_avg){.npb = pull, .n = 10};
    core_adapt_prefer(a, k);
}

static int from_of(uint8_t adv)
{
    return (adv & CORE_FLAG_ADV_FROM) >> CORE_FLAG_ADV_SHIFT;
}

static void test_advice(void)
{
    struct core_adapt a = {0};
    /* Nothing timed, or one protocol only: no advice. */
    CHECK_EQ(core_adapt_advice(&a), 0);
    core_adapt_fold(&a.c[1].out, 1000, 1000);
    core_adapt_prefer(&a, 1);
    CHECK_EQ(core_adapt_advice(&a), 0);
    /* Class 1: copy out 1, pull 3; the sender's copy unknown, taken as mine: eager 2. */
    core_adapt_fold(&a.c[1].pull, 3000, 1000);
    core_adapt_prefer(&a, 1);
    uint8_t adv = core_adapt_advice(&a);
    CHECK(adv & CORE_FLAG_ADV);
    CHECK_EQ(from_of(adv), CORE_ADAPT_NEVER);
    /* The sender's copy, as it said, replaces the guess: 3 + 1 = 4 > 3 * margin. */
    set_class(&a, 1, 3.0, 1.0, 3.0);
    CHECK_EQ(a.c[1].rndv, 1);
    CHECK_EQ(from_of(core_adapt_advice(&a)), 1);
    /* A larger class preferring rendezvous too: still from 1; a smaller one: from 0. */
    set_class(&a, 2, 3.0, 1.0, 1.0);
    CHECK_EQ(from_of(core_adapt_advice(&a)), 1);
    set_class(&a, 0, 3.0, 1.0, 1.0);
    CHECK_EQ(from_of(core_adapt_advice(&a)), 0);
    /* Classes are apart: class 0 turning to eager leaves class 1's preference. */
    set_class(&a, 0, 0.1, 0.1, 5.0);
    CHECK_EQ(a.c[0].rndv, 0);
    CHECK_EQ(from_of(core_adapt_advice(&a)), 1);

    /* The margin: eager 2 (1 + 1). */
    struct core_adapt b = {0};
    set_class(&b, 0, 1.0, 1.0, 1.9); /* within the margin, from eager: stays eager */
    CHECK_EQ(b.c[0].rndv, 0);
    set_class(&b, 0, 1.0, 1.0, 2.0 / CORE_ADAPT_MARGIN - 0.01); /* past it */
    CHECK_EQ(b.c[0].rndv, 1);
    set_class(&b, 0, 1.0, 1.0, 2.1); /* within it, from rendezvous: stays */
    CHECK_EQ(b.c[0].rndv, 1);
    set_class(&b, 0, 1.0, 1.0, 2.0 * CORE_ADAPT_MARGIN + 0.01); /* past it */
    CHECK_EQ(b.c[0].rndv, 0);
}

static void test_one_way(void)
{
    /* Sender's copy 3, mine 1, pull 2.75. Both ways (a ping-pong), eager costs 3 + 1 = 4:
     * rendezvous. */
    struct core_adapt a = {.received = 20, .sent_mark = 19};
    CHECK(!core_adapt_one_way(&a));
    set_class(&a, 0, 3.0, 1.0, 2.75);
    CHECK_EQ(a.c[0].rndv, 1);
    /* More than a period of its messages since I last sent it one: a one-way stream, where
     * the copies overlap and eager costs max(3, 1) = 3, within the margin of 2.75: the
     * preference holds, from either side. */
    a.received = a.sent_mark + CORE_ADAPT_PERIOD + 1;
    CHECK(core_adapt_one_way(&a));
    set_class(&a, 0, 3.0, 1.0, 2.75);
    CHECK_EQ(a.c[0].rndv, 1);
    a.c[0].rndv = 0;
    set_class(&a, 0, 3.0, 1.0, 2.75);
    CHECK_EQ(a.c[0].rndv, 0);
    /* A cheap sender's copy: max(1.5, 1) beats a 2.75 pull in a stream... */
    a.c[0].rndv = 1;
    set_class(&a, 0, 1.5, 1.0, 2.75);
    CHECK_EQ(a.c[0].rndv, 0);
    /* ...while 1.5 + 1 both ways stays within the margin of it. */
    a.received = a.sent_mark + 1;
    a.c[0].rndv = 1;
    set_class(&a, 0, 1.5, 1.0, 2.75);
    CHECK_EQ(a.c[0].rndv, 1);
    /* Exactly a period since my last send is not yet a stream. */
    a.received = a.sent_mark + CORE_ADAPT_PERIOD;
    CHECK(!core_adapt_one_way(&a));
}

static int count_rndv(uint8_t heard, int k, int fixed, int total)
{
    struct core_adapt_tally t = {0};
    int rndv = 0;
    for (int i = 0; i < total; i++)
        rndv += core_adapt_pick(heard, k, fixed, 1000, &t);
    return rndv;
}

/* Where the bursts begin when the advice never changes, and how long each is: the periods
 * grow from CORE_ADAPT_PERIOD to CORE_ADAPT_PERIOD_MAX, the bursts after the first are
 * shorter. Returns the burst's length if one begins at message i, else 0. */
static int burst_at(int i)
{
    int at = 0, period = CORE_ADAPT_PERIOD;
    while (at < i) {
        at += period;
        if (period < CORE_ADAPT_PERIOD_MAX) period *= CORE_ADAPT_GROWTH;
    }
    return at != i ? 0 : i == 0 ? CORE_ADAPT_BURST : CORE_ADAPT_BURST_HELD;
}

static void test_pick(void)
{
    /* Two periods (the second CORE_ADAPT_GROWTH times the first) and two bursts. */
    int total = (1 + CORE_ADAPT_GROWTH) * CORE_ADAPT_PERIOD;
    int other = CORE_ADAPT_BURST + CORE_ADAPT_BURST_HELD;
    uint8_t from2 = CORE_FLAG_ADV | (2 << CORE_FLAG_ADV_SHIFT);
    uint8_t never = CORE_FLAG_ADV | (CORE_ADAPT_NEVER << CORE_FLAG_ADV_SHIFT);
    /* Not advised: the fixed rule, with a burst of the other protocol per period. */
    CHECK_EQ(count_rndv(0, 0, 1, total), total - other);
    CHECK_EQ(count_rndv(0, 0, 0, total), other);
    /* Advised: rendezvous from class 2 on, whatever the fixed rule says. */
    CHECK_EQ(count_rndv(from2, 1, 1, total), other);
    CHECK_EQ(count_rndv(from2, 2, 0, total), total - other);
    CHECK_EQ(count_rndv(from2, 5, 0, total), total - other);
    CHECK_EQ(count_rndv(never, 5, 1, total), other);
    /* Advice bits without CORE_FLAG_ADV are no advice. */
    CHECK_EQ(count_rndv(2 << CORE_FLAG_ADV_SHIFT, 3, 0, total), other);
    /* The burst is the first messages of each period, in a row, so the receiver times both
     * protocols from the start; while the advice stays, each period is CORE_ADAPT_GROWTH
     * times the last, up to CORE_ADAPT_PERIOD_MAX, and the bursts are shorter. */
    struct core_adapt_tally t = {0};
    int start = 0, len = 0, n = 4 * CORE_ADAPT_PERIOD_MAX;
    for (int i = 0; i < n; i++) {
        if (burst_at(i)) start = i, len = burst_at(i);
        CHECK_EQ(core_adapt_pick(never, 0, 0, 1000, &t), i - start < len);
        CHECK_EQ(core_adapt_in_burst(&t), i - start < 2 * len);
    }
    CHECK_EQ(t.period, CORE_ADAPT_PERIOD_MAX);
    /* Advice that changed during a period: the next is CORE_ADAPT_PERIOD long again, with
     * the long burst. */
    while (t.count < t.period)
        core_adapt_pick(never, 0, 0, 1000, &t);
    for (int i = 0; i < CORE_ADAPT_BURST; i++)
        CHECK_EQ(core_adapt_pick(from2, 0, 0, 1000, &t), 1);
    CHECK_EQ(t.period, CORE_ADAPT_PERIOD);
    for (int i = CORE_ADAPT_BURST; i < CORE_ADAPT_PERIOD; i++)
        CHECK_EQ(core_adapt_pick(from2, 0, 0, 1000, &t), 0);
    /* ...and grows again once that advice holds through one. */
    CHECK_EQ(core_adapt_pick(from2, 0, 0, 1000, &t), 1);
    CHECK_EQ(t.period, CORE_ADAPT_GROWTH * CORE_ADAPT_PERIOD);
}

/* A message whose size lies more than 1.25x (core_adapt_moved) from the one that began a period
 * ends it once CORE_ADAPT_PERIOD messages went, and the next is CORE_ADAPT_PERIOD long,
 * its burst the other way; a size within the factor, or a move before that many messages,
 * changes nothing; sizes mixed all along begin a period about every CORE_ADAPT_PERIOD
 * messages (the one that ends it may be the size that began it). */
static void test_pick_moved(void)
{
    CHECK(!core_adapt_moved(1250, 1000) && core_adapt_moved(1251, 1000));
    CHECK(!core_adapt_moved(800, 1000) && core_adapt_moved(799, 1000));
    uint8_t never = CORE_FLAG_ADV | (CORE_ADAPT_NEVER << CORE_FLAG_ADV_SHIFT);
    struct core_adapt_tally t = {0};
    while (t.period < CORE_ADAPT_PERIOD_MAX || t.count < CORE_ADAPT_PERIOD + 10)
        core_adapt_pick(never, 2, 0, 16387, &t);
    uint32_t bursts = t.bursts, count = t.count;
    /* 20000 B: within 1.25x of 16387; the period runs on, eager as advised. */
    CHECK_EQ(core_adapt_pick(never, 2, 0, 20000, &t), 0);
    CHECK_EQ(t.bursts, bursts);
    CHECK_EQ(t.count, count + 1);
    CHECK_EQ(t.period, CORE_ADAPT_PERIOD_MAX);
    /* 32765 B: a new period of CORE_ADAPT_PERIOD, its burst by rendezvous. */
    for (int i = 0; i < CORE_ADAPT_BURST; i++)
        CHECK_EQ(core_adapt_pick(never, 2, 0, 32765, &t), 1);
    CHECK_EQ(t.bursts, bursts + 1);
    CHECK_EQ(t.period, CORE_ADAPT_PERIOD);
    CHECK_EQ(t.size, 32765);
    CHECK_EQ(core_adapt_pick(never, 2, 0, 32765, &t), 0);
    /* Back to 16387 B before CORE_ADAPT_PERIOD messages: the period runs on. */
    CHECK_EQ(core_adapt_pick(never, 2, 0, 16387, &t), 0);
    CHECK_EQ(t.bursts, bursts + 1);
    /* Alternating sizes: one period begins every CORE_ADAPT_PERIOD messages. */
    struct core_adapt_tally m = {0};
    int n = 8 * CORE_ADAPT_PERIOD;
    for (int i = 0; i < n; i++)
        core_adapt_pick(never, 2, 0, i % 2 ? 32765 : 16387, &m);
    CHECK(m.bursts >= (uint32_t)(n / (CORE_ADAPT_PERIOD + 1)) &&
          m.bursts <= (uint32_t)(n / CORE_ADAPT_PERIOD));
}

/* Drive class c with the true costs pull/stream (ticks per byte) for n messages, each
 * timed as soon as it is picked; returns how many were streamed. */
static int rv_drive(struct core_rv_class *c, double pull, double stream, int n)
{
    int streamed = 0;
    for (int i = 0; i < n; i++) {
        int w = core_rv_pick(c);
        streamed += w == CORE_RV_STREAM;
        core_rv_took(c, w, w == CORE_RV_STREAM ? stream : pull);
    }
    return streamed;
}

static void test_rv(void)
{
    /* Second smallest of the timings held: one outlier either way does not count. */
    struct core_rv_class k = {0};
    CHECK(core_rv_cost(&k, CORE_RV_PULL) < 0);
    core_rv_push(&k, CORE_RV_PULL, 5.0);
    CHECK(near(core_rv_cost(&k, CORE_RV_PULL), 5.0));
    core_rv_push(&k, CORE_RV_PULL, 1.0);
    CHECK(near(core_rv_cost(&k, CORE_RV_PULL), 5.0));
    core_rv_push(&k, CORE_RV_PULL, 0.1);   /* a lucky one */
    core_rv_push(&k, CORE_RV_PULL, 100.0); /* a preempted one */
    CHECK(near(core_rv_cost(&k, CORE_RV_PULL), 1.0));
    core_rv_push(&k, CORE_RV_PULL, 2.0); /* replaces the oldest, 5.0 */
    CHECK_EQ(k.n[CORE_RV_PULL], CORE_RV_KEEP);
    CHECK(near(core_rv_cost(&k, CORE_RV_PULL), 1.0));

    /* From nothing: one pull, then a run of CORE_RV_KEEP streams, which win here. */
    struct core_rv_class c = {0};
    CHECK_EQ(core_rv_pick(&c), CORE_RV_PULL);
    core_rv_took(&c, CORE_RV_PULL, 1.0);
    for (int i = 0; i < CORE_RV_KEEP; i++) {
        CHECK_EQ(core_rv_pick(&c), CORE_RV_STREAM);
        CHECK_EQ(c.way, CORE_RV_PULL); /* undecided until the run is all in */
        core_rv_took(&c, CORE_RV_STREAM, 0.5);
    }
    CHECK_EQ(c.way, CORE_RV_STREAM);
    /* Settled on streams, pulls are timed in runs whose period doubles while they lose:
     * over 20,000 messages under 2% of them go the losing way. */
    int streamed = rv_drive(&c, 1.0, 0.5, 20000);
    CHECK(streamed > 20000 - 400);
    CHECK_EQ(c.period, CORE_RV_PERIOD_MAX);
    /* Streams turn 10x slower (the host's slow phase): pulls within three messages. */
    streamed = 0;
    for (int i = 0; i < 3; i++) {
        int w = core_rv_pick(&c);
        streamed += w == CORE_RV_STREAM;
        core_rv_took(&c, w, w == CORE_RV_STREAM ? 5.0 : 1.0);
    }
    CHECK_EQ(c.way, CORE_RV_PULL);
    CHECK_EQ(c.period, CORE_RV_PERIOD_MIN);
    /* ...and stay there: the stream runs keep losing, ever more rarely, and each stops
     * at its first message, which took more than CORE_RV_ABORT times a pull. */
    streamed = rv_drive(&c, 1.0, 5.0, 20000);
    CHECK(streamed <= 20000 / CORE_RV_PERIOD_MAX + 6);
    CHECK(streamed >= 6);
    CHECK_EQ(c.way, CORE_RV_PULL);
    /* Slower, but not by CORE_RV_ABORT: whole runs. */
    struct core_rv_class h = c;
    h.period = h.left = CORE_RV_PERIOD_MIN;
    streamed = rv_drive(&h, 1.0, 2.0, CORE_RV_PERIOD_MIN + CORE_RV_KEEP + 1);
    CHECK_EQ(streamed, CORE_RV_KEEP);
    CHECK_EQ(h.way, CORE_RV_PULL);
    CHECK_EQ(h.period, 2 * CORE_RV_PERIOD_MIN);
    /* Streams fast again: the next run finds it, within a period. */
    rv_drive(&c, 1.0, 0.5, CORE_RV_PERIOD_MAX + CORE_RV_KEEP + 1);
    CHECK_EQ(c.way, CORE_RV_STREAM);

    /* Within the margin the way taken stays: no flapping between equals. */
    struct core_rv_class e = {0};
    rv_drive(&e, 1.0, 1.0 / CORE_ADAPT_MARGIN * 1.01, 5000);
    CHECK_EQ(e.way, CORE_RV_PULL);
    CHECK_EQ(e.period, CORE_RV_PERIOD_MAX);

    /* A window: a whole run is picked before any of it is timed, and the run decides only
     * once all of it is in; a timing of the old way after a change does not undo it. */
    struct core_rv_class w = {0};
    CHECK_EQ(core_rv_pick(&w), CORE_RV_PULL);
    core_rv_took(&w, CORE_RV_PULL, 1.0);
    int ways[CORE_RV_KEEP];
    for (int i = 0; i < CORE_RV_KEEP; i++)
        ways[i] = core_rv_pick(&w);
    CHECK_EQ(core_rv_pick(&w), CORE_RV_PULL); /* the run is out: back to the way taken */
    for (int i = 0; i < CORE_RV_KEEP; i++) {
        CHECK_EQ(ways[i], CORE_RV_STREAM);
        core_rv_took(&w, CORE_RV_STREAM, 0.4);
    }
    CHECK_EQ(w.way, CORE_RV_STREAM);
    core_rv_took(&w, CORE_RV_PULL, 1.0); /* the pull picked in between */
    CHECK_EQ(w.way, CORE_RV_STREAM);
    /* A clock gone wrong is ignored. */
    core_rv_took(&w, CORE_RV_STREAM, -3.0);
    core_rv_took(&w, CORE_RV_STREAM, NAN);
    CHECK(near(core_rv_cost(&w, CORE_RV_STREAM), 0.4));
}

/* Eager frames written around the caches: the receiver's preference and advice, the
 * sender's runs of the other kind. */
static void test_nt(void)
{
    struct core_adapt a = {0};
    /* Only the usual copy timed: no NT preference, no NT bit. */
    set_class(&a, 0, 3.0, 1.0, 2.0);
    CHECK(!a.c[0].nt);
    CHECK(a.c[0].rndv); /* pull 2 < eager 4 */
    CHECK(!(core_adapt_advice(&a) & CORE_FLAG_ADV_NT));
    /* Written around the caches, the two copies cost 1 with the bias (the slow phase):
     * preferred, and cheaper than the pull, so the class goes eager again. */
    a.c[0].peer_in_nt = 0.5 / CORE_ADAPT_NT_BIAS;
    a.c[0].out_nt = (struct core_adapt_avg){.npb = 0.5 / CORE_ADAPT_NT_BIAS, .n = 10};
    core_adapt_prefer(&a, 0);
    CHECK(a.c[0].nt);
    CHECK(!a.c[0].rndv);
    uint8_t adv = core_adapt_advice(&a);
    CHECK(adv & CORE_FLAG_ADV_NT);
    CHECK_EQ((adv & CORE_FLAG_ADV_FROM) >> CORE_FLAG_ADV_SHIFT, CORE_ADAPT_NEVER);
    /* Within the margin it stays; past it, back to the usual copy (also where the usual
     * copies cost less than the bias times the others: 0.84 against 0.67). */
    a.c[0].peer_in = 0.5;
    a.c[0].out = (struct core_adapt_avg){.npb = 0.5 * CORE_ADAPT_MARGIN - 0.01, .n = 10};
    core_adapt_prefer(&a, 0);
    CHECK(a.c[0].nt);
    a.c[0].out = (struct core_adapt_avg){.npb = 0.5 / CORE_ADAPT_MARGIN - 0.1, .n = 10};
    core_adapt_prefer(&a, 0);
    CHECK(!a.c[0].nt);
    CHECK(!(core_adapt_advice(&a) & CORE_FLAG_ADV_NT));
    /* The sender: before any advice, its burst's messages alternate (those that go eager
     * against the fixed rule), the run after it is written around the caches, the rest as
     * usual; with NT advised, the run after the burst is written as usual. */
    uint8_t never = CORE_FLAG_ADV | (CORE_ADAPT_NEVER << CORE_FLAG_ADV_SHIFT);
    uint8_t never_nt = never | CORE_FLAG_ADV_NT;
    uint8_t heard[] = {0, never, never_nt};
    for (int h = 0; h < 3; h++) {
        struct core_adapt_tally t = {0};
        int adv_nt = heard[h] == never_nt;
        for (int i = 0; i < CORE_ADAPT_PERIOD; i++) {
            core_adapt_pick(heard[h], 0, 0, 1000, &t);
            int want = i < CORE_ADAPT_BURST ? (i & 1) : i < 2 * CORE_ADAPT_BURST ? !adv_nt : adv_nt;
            CHECK_EQ(core_adapt_nt(heard[h], &t), want);
        }
    }
}

int main(void)
{
    test_fold();
    test_encode();
    test_class();
    test_advice();
    test_one_way();
    test_pick();
    test_pick_moved();
    test_nt();
    test_rv();
    return unit_done("test_adapt");
}
