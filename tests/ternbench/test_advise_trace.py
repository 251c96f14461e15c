"""`ternbench advise` on real traces of the examples/advice programs.

Each program runs under `ternrun --trace` (2 ranks, a known number of iterations, every
entry stamped when it happened: TERN_TRACE_ADJACENT_NS=0) and the advisor prices the trace
with models whose measured points are given here. The test computes what the advice must
say from the program's structure (iterations, sizes, messages per iteration) and those
points, by its own interpolation, and checks the advisor's phase, count and saving:

- reduce_bcast: MPI_Reduce + MPI_Bcast of 4 KiB -> MPI_Allreduce, once per iteration;
- gather_bcast: the broadcast of 2 x 4 KiB = 8 KiB is priced between the points measured
  at 4 and 16 KiB (8 KiB itself is not a point of these models);
- smallmsgs: 64 messages of 64 B per iteration -> one of 4 KiB, at the stream's cost;
- overlap: a blocking MPI_Sendrecv next to computation hides the wire latency
  L = a - 2 min(g, a/2) per call only;
- the trace is of MPI calls, so the models of tern's MPI drivers (tern-mpi) price it, not
  the native ones (they differ here by a factor 1.5);
- at 3 ranks on a machine with fewer cores every advice says its basis does not hold.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = sys.argv.pop(1) if len(sys.argv) > 1 else "build"
sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "tools/ternbench")
from ternbench import advise, tracefile  # noqa: E402

ITERS = 30
SIZES = [8.0, 64.0, 1024.0, 4096.0, 16384.0, 65536.0]
P2P_N = [0.0, 8.0, 64.0, 1024.0, 4096.0, 16384.0]


def curve(ts, tb, bend=1.0):
    """Points t(n) = ts + tb n, bent upwards beyond 1 KiB (so that a straight line through
    all of them misses each one: the advisor must use the points)."""
    return [ts + tb * n * (bend if n > 1024 else 1.0) for n in SIZES]


def coll(impl, op, ts, tb, scale):
    t = [x * scale for x in curve(ts, tb, 1.6)]
    fit = {"t_s": ts * scale, "t_b": tb * scale, "r2": 0.9}
    return {"impl": impl, "op": op, "per_p": {"2": fit, "3": fit},
            "data": {"2": {"n": SIZES, "t": t}, "3": {"n": SIZES, "t": t}}}


def p2p(impl, pattern, ts, tb, scale):
    t = [(ts + tb * n) * scale for n in P2P_N]
    return {"impl": impl, "pattern": pattern, "mode": "standard", "n": P2P_N, "t": t,
            "hockney": {"t_s": ts * scale, "t_b": tb * scale, "r2": 0.9}}


def models_json():
    an = {"impls": ["tern", "tern-mpi"], "coll": {}, "p2p": {}, "barrier": {}}
    for impl, scale in (("tern", 1.0), ("tern-mpi", 1.5)):
        for op, ts, tb in (("gather", 1.0e-6, 2e-10), ("bcast", 0.8e-6, 1.5e-10),
                           ("allgather", 1.2e-6, 2.5e-10), ("reduce", 1.1e-6, 2.2e-10),
                           ("allreduce", 1.3e-6, 2.4e-10), ("alltoall", 1.5e-6, 3e-10)):
            an["coll"]["%s/%s" % (impl, op)] = coll(impl, op, ts, tb, scale)
        an["p2p"]["%s/pingpong/standard" % impl] = p2p(impl, "pingpong", 0.5e-6, 1e-10, scale)
        an["p2p"]["%s/stream/standard" % impl] = p2p(impl, "stream", 0.2e-6, 0.8e-10, scale)
    return an


def interp(ns, ts, n):
    for (n0, t0), (n1, t1) in zip(zip(ns, ts), zip(ns[1:], ts[1:])):
        if n0 <= n <= n1:
            return t0 + (t1 - t0) * (n - n0) / (n1 - n0)
    raise AssertionError("no points around %g" % n)


AN = models_json()


def c(op, n, impl="tern-mpi"):
    d = AN["coll"]["%s/%s" % (impl, op)]["data"]["2"]
    return interp(d["n"], d["t"], n)


def pt(pattern, n, impl="tern-mpi"):
    s = AN["p2p"]["%s/%s/standard" % (impl, pattern)]
    return interp(s["n"], s["t"], n)


class RealTraces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ternrun = os.path.join(BUILD, "bin", "ternrun")
        cls.tmp = tempfile.mkdtemp(prefix="tern-advise-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def trace(self, prog, np_=2, extra=()):
        d = os.path.join(self.tmp, "%s-%d" % (prog, np_))
        env = dict(os.environ, TERN_TRACE_ADJACENT_NS="0")
        cmd = [self.ternrun, "-n", str(np_), "--timeout", "60", "--trace", d,
               os.path.join(BUILD, "bin", "advice_" + prog), "--before", "-i", str(ITERS),
               "-c", "30"] + list(extra)
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("RESULT %s before p=%d" % (prog, np_), r.stdout)
        return tracefile.load(d)

    def advice(self, tr, kind, word):
        m = advise.Models(AN, source="given")
        good, bad = advise.advise(tr, m, rejected=True)
        self.assertEqual(m.impl, "tern-mpi", "an MPI trace is priced by tern's MPI drivers")
        hits = [a for a in good + bad if a.kind == kind and word in a.title]
        self.assertEqual(len(hits), 1, [a.title for a in good + bad])
        return hits[0]

    def test_reduce_bcast(self):
        a = self.advice(self.trace("reduce_bcast"), "collective", "Allreduce")
        self.assertEqual(a.count, ITERS)
        self.assertIn("of 4096 B per rank", a.where)
        now = c("reduce", 4096) + c("bcast", 4096)
        self.assertAlmostEqual(a.now_model, now, delta=1e-12)
        self.assertAlmostEqual(a.after_model, c("allreduce", 4096), delta=1e-12)
        self.assertAlmostEqual(a.saving, ITERS * (now - c("allreduce", 4096)), delta=1e-10)
        self.assertTrue(any("4096 B measured" in b for b in a.basis), a.basis)

    def test_gather_bcast_between_points(self):
        a = self.advice(self.trace("gather_bcast"), "collective", "Allgather")
        self.assertEqual(a.count, ITERS)
        now = c("gather", 4096) + c("bcast", 8192)
        self.assertAlmostEqual(a.now_model, now, delta=1e-12)
        self.assertAlmostEqual(a.saving, ITERS * (now - c("allgather", 4096)), delta=1e-10)
        self.assertTrue(any("8192 B between the measured 4096 and 16384 B" in b
                            for b in a.basis), a.basis)
        # the straight line through the points is not what was used
        fit = AN["coll"]["tern-mpi/bcast"]["per_p"]["2"]
        self.assertGreater(abs(c("bcast", 8192) - (fit["t_s"] + fit["t_b"] * 8192)), 1e-7)

    def preempted(self, tr):
        """Gaps longer than advise.GAP between two sends of one iteration (same tag) on a
        rank: the sender's loop has nothing between them, so the OS took the CPU there,
        which no trace tells from computation (it splits the run). The receiver's
        iteration does compute between its receives (it checks each message). Their
        number."""
        by = {}
        for c in tr.calls:
            by.setdefault(c.rank, []).append(c)
        n = 0
        for cs in by.values():
            cs.sort(key=lambda c: c.t0)
            for a, b in zip(cs, cs[1:]):
                if (a.name == b.name == "MPI_Send" and a.tag is not None and a.tag == b.tag
                        and b.t0 - a.t1 > advise.GAP):
                    n += 1
        return n

    def test_smallmsgs_batching(self):
        # On a loaded machine a rank may lose its CPU for more than GAP between two of an
        # iteration's 64 sends; such a trace is taken again (at most 4 times in all).
        for _ in range(4):
            tr = self.trace("smallmsgs")
            if self.preempted(tr) == 0:
                break
        self.assertEqual(self.preempted(tr), 0, "4 traces in a row were preempted mid-run")
        # the check above sees the iterations: every send carries its iteration's tag
        self.assertGreaterEqual(sum(1 for c in tr.calls if c.name == "MPI_Send" and
                                    c.tag is not None), 64 * ITERS)
        self.assertEqual(advise.shared_stamps(tr), 0)
        a = self.advice(tr, "batching", "small")
        self.assertEqual(a.count, ITERS)  # one run of 64 per iteration, split at computation
        self.assertIn("64 small MPI_Send", a.title)
        now, after = 64 * pt("stream", 64), pt("stream", 4096)
        self.assertAlmostEqual(a.now_model, now, delta=1e-12)
        self.assertAlmostEqual(a.after_model, after, delta=1e-12)
        self.assertAlmostEqual(a.saving, ITERS * (now - after), delta=1e-10)

    def test_overlap_hides_the_wire_latency(self):
        a = self.advice(self.trace("overlap"), "overlap", "Sendrecv")
        self.assertEqual(a.count, 2 * ITERS)
        ap, g = pt("pingpong", 0), pt("stream", 0)
        wire = ap - 2 * min(g, ap / 2)
        self.assertAlmostEqual(a.now_model, pt("pingpong", 8192), delta=1e-12)
        self.assertAlmostEqual(a.now_model - a.after_model, wire, delta=1e-12)
        self.assertAlmostEqual(a.saving, 2 * ITERS * wire / 2, delta=1e-10)

    def test_oversubscribed_says_its_basis_does_not_hold(self):
        tr = self.trace("reduce_bcast", 3)
        m = advise.Models(AN, source="given")
        over = advise.oversubscription(tr, m)
        cores = len(os.sched_getaffinity(0))
        good, bad = advise.advise(tr, m, rejected=True)
        self.assertTrue(good + bad)
        for a in good + bad:
            self.assertEqual(any(b.startswith("does not hold") for b in a.basis), 3 > cores)
        if 3 > cores:
            self.assertEqual(over[:2], (3, cores))
            self.assertIn("oversubscribed", advise.text(tr, m, good, 1.0, bad))
        else:
            self.assertIsNone(over)


if __name__ == "__main__":
    tr = os.path.join(BUILD, "bin", "ternrun")
    help_ = subprocess.run([tr, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True).stdout if os.path.exists(tr) else ""
    if "--trace" not in help_:
        print("SKIP: %s has no --trace (built with TERN_TRACING=OFF?)" % tr)
        sys.exit(77)
    unittest.main()
