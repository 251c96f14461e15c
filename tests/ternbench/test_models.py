"""ternbench's fitting code on synthetic data whose parameters are known.

Tolerances: with 2% multiplicative noise, t_s and t_b come back within 5%; without
noise within 1e-6 (relative). Piecewise breakpoints must land exactly on the first size
of each true protocol range. The scaling fit must name O(log p), O(p) and O(1) for
data generated from those laws (p = 2..16, 3% noise) and refuse to name a class from
two process counts.
"""
import math
import sys
import unittest

import numpy as np

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "tools/ternbench")
from ternbench import models  # noqa: E402

SIZES = np.array([0] + [2 ** k for k in range(0, 27)], float)  # 0, 1 B .. 64 MiB


def noisy(y, rel, seed):
    rng = np.random.default_rng(seed)
    return y * (1 + rel * rng.standard_normal(len(y)))


class Hockney(unittest.TestCase):
    def test_exact(self):
        ts, tb = 1.5e-6, 1 / 8e9  # 1.5 us, 8 GB/s
        m = models.hockney(SIZES, ts + tb * SIZES)
        self.assertAlmostEqual(m["t_s"] / ts, 1, delta=1e-6)
        self.assertAlmostEqual(m["t_b"] / tb, 1, delta=1e-6)
        self.assertAlmostEqual(m["bw_as"] / 8e9, 1, delta=1e-6)
        self.assertAlmostEqual(m["n_half"] / (ts / tb), 1, delta=1e-6)
        self.assertAlmostEqual(m["pi_s"] * ts, 1, delta=1e-6)
        self.assertGreater(m["r2"], 0.999999)
        self.assertLess(m["max_rel_resid"], 1e-6)

    def test_noisy_within_5_percent(self):
        for seed in range(5):
            ts, tb = 0.3e-6, 1 / 12e9
            t = noisy(ts + tb * SIZES, 0.02, seed)
            m = models.hockney(SIZES, t)
            self.assertLess(abs(m["t_s"] / ts - 1), 0.05, m)
            self.assertLess(abs(m["t_b"] / tb - 1), 0.05, m)
            self.assertGreater(m["r2"], 0.9)

    def test_needs_two_sizes(self):
        with self.assertRaises(ValueError):
            models.hockney([8, 8, 8], [1e-6, 1e-6, 1e-6])


class Piecewise(unittest.TestCase):
    def three_protocols(self, noise=0.0, seed=0):
        # short (<= 512 B), eager (1 KiB .. 32 KiB), rendezvous (>= 64 KiB)
        n = SIZES
        t = np.where(n < 1024, 0.2e-6 + n / 2e9,
                     np.where(n < 65536, 1.0e-6 + n / 6e9, 4.0e-6 + n / 10e9))
        return n, (noisy(t, noise, seed) if noise else t)

    def test_breakpoints_exact(self):
        n, t = self.three_protocols()
        pw = models.piecewise(n, t)
        self.assertEqual(pw["breaks"], [1024.0, 65536.0])
        segs = pw["segments"]
        self.assertEqual(len(segs), 3)
        for seg, (ts, bw) in zip(segs, [(0.2e-6, 2e9), (1.0e-6, 6e9), (4.0e-6, 10e9)]):
            self.assertAlmostEqual(seg["t_s"] / ts, 1, delta=1e-4)
            self.assertAlmostEqual(seg["bw_as"] / bw, 1, delta=1e-4)

    def test_breakpoints_noisy(self):
        for seed in range(3):
            n, t = self.three_protocols(0.01, seed)
            pw = models.piecewise(n, t)
            self.assertEqual(pw["breaks"], [1024.0, 65536.0], pw["breaks"])

    def test_one_line_stays_one(self):
        t = noisy(1e-6 + SIZES / 5e9, 0.01, 7)
        pw = models.piecewise(SIZES, t)
        self.assertEqual(len(pw["segments"]), 1, pw["breaks"])

    def test_eval_matches(self):
        n, t = self.three_protocols()
        pw = models.piecewise(n, t)
        self.assertTrue(np.allclose(models.piecewise_eval(pw, n), t, rtol=1e-6))


class Scaling(unittest.TestCase):
    P = np.arange(2, 17)

    def test_log(self):
        for seed in range(5):
            y = noisy(2e-6 + 3e-6 * np.log2(self.P), 0.03, seed)
            s = models.scaling(self.P, y)
            self.assertEqual(s["class"], "O(log p)", s["note"])
            self.assertGreater(s["log"]["r2"], s["lin"]["r2"])
            self.assertLess(abs(s["log"]["b"] / 3e-6 - 1), 0.15)

    def test_linear(self):
        for seed in range(5):
            y = noisy(1e-6 + 0.8e-6 * self.P, 0.03, seed)
            s = models.scaling(self.P, y)
            self.assertEqual(s["class"], "O(p)", s["note"])
            self.assertLess(abs(s["lin"]["b"] / 0.8e-6 - 1), 0.15)

    def test_flat(self):
        y = noisy(np.full(len(self.P), 5e-6), 0.01, 3)
        self.assertEqual(models.scaling(self.P, y)["class"], "O(1)")

    def test_small_p_exact(self):
        # p = 2, 3, 4 as on a small machine: noise-free data still decide
        p = np.array([2, 3, 4])
        self.assertEqual(models.scaling(p, 1 + 2 * np.log2(p))["class"], "O(log p)")
        self.assertEqual(models.scaling(p, 1 + 2.0 * p)["class"], "O(p)")

    def test_two_counts_undetermined(self):
        s = models.scaling([2, 4], [1.0, 2.0])
        self.assertEqual(s["class"], "undetermined")
        self.assertAlmostEqual(s["log"]["r2"], 1.0)


class Collective(unittest.TestCase):
    def test_tree_bcast(self):
        # T(n, p) = (1 us + 0.5 us log2 p) + (0.1 ns/B log2 p) n : both O(log p)
        ps = [2, 4, 8, 16, 32]
        n = np.array([8, 64, 512, 4096, 32768, 262144, 1 << 20], float)
        data = {p: (n, (1e-6 + 0.5e-6 * math.log2(p)) + 0.1e-9 * math.log2(p) * n) for p in ps}
        m = models.collective(data)
        self.assertEqual(m["t_s"]["class"], "O(log p)")
        self.assertEqual(m["t_b"]["class"], "O(log p)")
        t = models.collective_eval(m, 1 << 20, 1024)
        want = (1e-6 + 0.5e-6 * 10) + 0.1e-9 * 10 * (1 << 20)
        self.assertLess(abs(t / want - 1), 1e-3)

    def test_linear_gather(self):
        ps = [2, 3, 4, 6, 8]
        n = np.array([8, 512, 32768, 1 << 20], float)
        data = {p: (n, 2e-6 + 0.4e-6 * p + (0.05e-9 * p) * n) for p in ps}
        m = models.collective(data)
        self.assertEqual(m["t_s"]["class"], "O(p)")
        self.assertEqual(m["t_b"]["class"], "O(p)")


if __name__ == "__main__":
    unittest.main(verbosity=1)
