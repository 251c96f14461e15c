/*
 * test_adapt.c - the choice between eager and rendezvous for middle sizes (core/adapt.h):
 * the receiver's moving averages, the advice it derives from them (none before both
 * protocols are timed, the margin that keeps it from flipping), and the sender's pick
 * (the fixed rule until advised, the advice after, the other protocol one time in
 * CORE_ADAPT_EXPLORE).
 */
#include <math.h>

#include "core/adapt.h"
#include "unit.h"

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9 * (fabs(b) + 1);
}

static void test_fold(void)
{
    /* The first timing is the average; later ones move it by 1/CORE_ADAPT_WEIGHT. */
    CHECK(near(core_adapt_fold(0, 0, 1000, 1000), 1.0));
    CHECK(near(core_adapt_fold(1.0, 1, 3000, 1000), 1.0 + 2.0 / CORE_ADAPT_WEIGHT));
    CHECK(near(core_adapt_fold(2.0, 5, 2000, 1000), 2.0));
    /* Zero bytes never divides by zero. */
    CHECK(isfinite(core_adapt_fold(0, 0, 5, 0)));
    struct core_adapt_rx a = {0};
    core_adapt_note(&a, 0, 1000, 1000);
    core_adapt_note(&a, 1, 4000, 1000);
    CHECK_EQ(a.n_eager, 1);
    CHECK_EQ(a.n_rndv, 1);
    CHECK(near(a.eager_npb, 1.0));
    CHECK(near(a.rndv_npb, 4.0));
}

static void test_advice(void)
{
    struct core_adapt_rx a = {0};
    /* Nothing timed, or one protocol only: no advice. */
    CHECK_EQ(core_adapt_advice(&a, 0), 0);
    core_adapt_note(&a, 0, 1000, 1000); /* copy out: 1 ns/B, eager costs 2 */
    CHECK_EQ(core_adapt_advice(&a, 0), 0);
    core_adapt_note(&a, 1, 3000, 1000); /* pull: 3 ns/B */
    CHECK_EQ(core_adapt_advice(&a, 0), CORE_FLAG_ADV);
    /* A pull clearly cheaper than two copies: rendezvous. */
    a.rndv_npb = 1.0;
    CHECK_EQ(core_adapt_advice(&a, 0), CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV);
    CHECK_EQ(core_adapt_advice(&a, CORE_FLAG_ADV), CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV);
    /* Within the margin the advice stays where it was, either way. */
    a.rndv_npb = 1.9;
    CHECK_EQ(core_adapt_advice(&a, CORE_FLAG_ADV), CORE_FLAG_ADV);
    CHECK_EQ(core_adapt_advice(&a, CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV),
             CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV);
    a.rndv_npb = 2.1;
    CHECK_EQ(core_adapt_advice(&a, CORE_FLAG_ADV), CORE_FLAG_ADV);
    CHECK_EQ(core_adapt_advice(&a, CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV),
             CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV);
    /* Past the margin it changes sides. */
    a.rndv_npb = 2.0 * CORE_ADAPT_MARGIN + 0.01;
    CHECK_EQ(core_adapt_advice(&a, CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV), CORE_FLAG_ADV);
    a.rndv_npb = 2.0 / CORE_ADAPT_MARGIN - 0.01;
    CHECK_EQ(core_adapt_advice(&a, CORE_FLAG_ADV), CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV);
    /* A run of slow copies moves an eager advice to rendezvous within a few dozen. */
    struct core_adapt_rx b = {0};
    core_adapt_note(&b, 0, 500, 1000);
    core_adapt_note(&b, 1, 3000, 1000);
    uint8_t adv = core_adapt_advice(&b, 0);
    CHECK_EQ(adv, CORE_FLAG_ADV);
    int k = 0;
    while (!(adv & CORE_FLAG_ADV_RNDV) && k < 1000) {
        core_adapt_note(&b, 0, 5000, 1000);
        adv = core_adapt_advice(&b, adv);
        k++;
    }
    CHECK(k > 1);
    CHECK(k < 4 * CORE_ADAPT_WEIGHT);
}

static void test_pick(void)
{
    uint32_t n = 0;
    int rndv = 0, total = 4 * CORE_ADAPT_EXPLORE;
    /* Not advised: the fixed rule, but one in CORE_ADAPT_EXPLORE the other way. */
    for (int i = 0; i < total; i++)
        rndv += core_adapt_pick(0, 1, &n);
    CHECK_EQ(rndv, total - 4);
    n = 0;
    rndv = 0;
    for (int i = 0; i < total; i++)
        rndv += core_adapt_pick(0, 0, &n);
    CHECK_EQ(rndv, 4);
    /* Advised eager: the fixed rule's rendezvous is overridden. */
    n = 0;
    rndv = 0;
    for (int i = 0; i < total; i++)
        rndv += core_adapt_pick(CORE_FLAG_ADV, 1, &n);
    CHECK_EQ(rndv, 4);
    /* Advised rendezvous. */
    n = 0;
    rndv = 0;
    for (int i = 0; i < total; i++)
        rndv += core_adapt_pick(CORE_FLAG_ADV | CORE_FLAG_ADV_RNDV, 0, &n);
    CHECK_EQ(rndv, total - 4);
    /* The exploring message is every CORE_ADAPT_EXPLORE-th one. */
    n = 0;
    for (int i = 1; i <= CORE_ADAPT_EXPLORE; i++)
        CHECK_EQ(core_adapt_pick(CORE_FLAG_ADV, 0, &n), i == CORE_ADAPT_EXPLORE);
    /* A bare ADV_RNDV bit without ADV is no advice. */
    n = 0;
    CHECK_EQ(core_adapt_pick(CORE_FLAG_ADV_RNDV, 0, &n), 0);
}

int main(void)
{
    test_fold();
    test_advice();
    test_pick();
    return unit_done("test_adapt");
}
