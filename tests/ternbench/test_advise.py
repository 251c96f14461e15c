"""`ternbench advise` on traces made in memory, with models whose parameters are given.

Four ranks run ten iterations of MPI_Gather (1 KiB per rank to root 0) and MPI_Bcast of
the gathered 4 KiB, with computation between iterations; rank 1 also sends rank 2 five
8-byte messages in a row once. With the models below (per p = 4: gather t_s 5 us, t_b
0.2 ns/B; bcast 4 us, 0.3 ns/B; allgather 6 us, 0.4 ns/B; point-to-point t_s 1 us):
gather + bcast costs 5.2048 + 5.2288 us and one allgather 6.4096 us, so allgather saves
4.024 us per iteration, 40.24 us in all, and comes first; batching the five messages
saves 4 t_s = 4 us and comes second. A reduce + bcast of the same vector is an allreduce;
a loop of sends to every peer is an alltoallv; a gather whose broadcast is of something
else gets no advice.
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "tools/ternbench")
from ternbench import advise  # noqa: E402
from ternbench.trace_model import Call, Message, Trace  # noqa: E402

P = 4
N = 1024


def hock(ts, tb):
    return {"t_s": ts, "t_b": tb, "r2": 1.0}


MODELS = {
    "impls": ["tern"],
    "p2p": {"tern/pingpong/standard": {"impl": "tern", "pattern": "pingpong",
                                       "mode": "standard", "hockney": hock(1e-6, 1e-10)}},
    "coll": {"tern/%s" % op: {"impl": "tern", "op": op, "per_p": {"4": hock(ts, tb)}}
             for op, ts, tb in (("gather", 5e-6, 2e-10), ("bcast", 4e-6, 3e-10),
                                ("allgather", 6e-6, 4e-10), ("reduce", 3e-6, 1e-10),
                                ("allreduce", 3.5e-6, 2e-10), ("alltoall", 8e-6, 5e-10))},
    "barrier": {},
}


def models():
    return advise.Models(MODELS, source="given")


def gather_bcast(iters=10, bcast_bytes=P * N):
    calls, t = [], 0.0
    for i in range(iters):
        for r in range(P):
            g = 2 * N  # the tracer's bytes: send count + receive count, one block each
            calls.append(Call(r, "mpi", "MPI_Gather", t, t + 20e-6, comm=1, comm_size=P,
                              root=0, bytes=g, site="gb.c:40"))
            calls.append(Call(r, "mpi", "MPI_Bcast", t + 21e-6, t + 40e-6, comm=1,
                              comm_size=P, root=0, bytes=bcast_bytes, site="gb.c:41"))
        t += 1e-3
    return calls, t


class GatherBcast(unittest.TestCase):
    def test_allgather_first_with_the_models_saving(self):
        calls, t = gather_bcast()
        # rank 1: five small messages to rank 2, back to back
        msgs = []
        for k in range(5):
            t0 = t + k * 2e-6
            calls.append(Call(1, "mpi", "MPI_Send", t0, t0 + 1e-6, peer=2, tag=k, comm=1,
                              bytes=8, site="gb.c:60"))
            calls.append(Call(2, "mpi", "MPI_Recv", t0, t0 + 1.5e-6, peer=1, tag=k, comm=1,
                              bytes=8, site="gb.c:61"))
            msgs.append(Message(1, 2, t0 + 0.5e-6, t0 + 1.4e-6, 8, k, 1))
        tr = Trace(P, calls, msgs, 0.0, t + 1e-5)
        adv = advise.advise(tr, models())
        self.assertGreaterEqual(len(adv), 2)
        first = adv[0]
        self.assertEqual(first.kind, "collective")
        self.assertIn("MPI_Allgather", first.title)
        self.assertEqual(first.count, 10)
        self.assertAlmostEqual(first.now_model, 5.2048e-6 + 5.2288e-6, delta=1e-12)
        self.assertAlmostEqual(first.after_model, 6.4096e-6, delta=1e-12)
        self.assertAlmostEqual(first.saving, 10 * 4.024e-6, delta=1e-11)
        self.assertAlmostEqual(first.now_measured, 20e-6 + 19e-6, delta=1e-12)
        self.assertTrue(any("gather fit at p=4: t_s = 5 us" in b for b in first.basis))
        second = adv[1]
        self.assertEqual(second.kind, "batching")
        self.assertAlmostEqual(second.saving, 4 * 1e-6, delta=1e-12)
        # the same through the JSON the bench script reads
        j = advise.to_json(adv, tr.t_end, models())
        self.assertEqual(j["advice"][0]["rank"], 1)
        self.assertAlmostEqual(j["advice"][0]["saving"], 40.24e-6, delta=1e-11)
        self.assertIn("1. MPI_Gather + bcast -> one MPI_Allgather: save 40.24 us",
                      advise.text(tr, models(), adv, tr.t_end))

    def test_model_far_from_the_trace_is_flagged(self):
        # the gather+bcast phase: model 10.4336 us, traced 39 us -> x0.27, flagged
        calls, t = gather_bcast()
        tr = Trace(P, calls, [], 0.0, t)
        adv = advise.advise(tr, models())
        first = adv[0]
        self.assertAlmostEqual(advise.model_vs_trace(first), 10.4336 / 39.0, delta=1e-6)
        self.assertIn("check:  the models put this phase at 10.43 us, the trace measured 39",
                      advise.text(tr, models(), adv, tr.t_end))
        j = advise.to_json(adv, tr.t_end, models())
        self.assertAlmostEqual(j["advice"][0]["model_vs_trace"], 10.4336 / 39.0, delta=1e-6)
        # within a factor of 2: no warning
        close = first._replace(now_measured=first.now_model * 1.9)
        self.assertIsNone(advise.check_line(close))
        self.assertIsNotNone(advise.check_line(first._replace(now_measured=0.1 * first.now_model)))

    def test_bcast_of_something_else_is_not_an_allgather(self):
        calls, t = gather_bcast(bcast_bytes=100)
        adv = advise.advise(Trace(P, calls, [], 0.0, t), models())
        self.assertFalse([a for a in adv if a.kind == "collective"])

    def test_reduce_bcast_is_an_allreduce(self):
        calls = []
        for r in range(P):
            calls.append(Call(r, "mpi", "MPI_Reduce", 0.0, 10e-6, comm=1, comm_size=P, root=0,
                              bytes=N, op="MPI_SUM"))
            calls.append(Call(r, "mpi", "MPI_Bcast", 11e-6, 20e-6, comm=1, comm_size=P,
                              root=0, bytes=N))
        adv = advise.advise(Trace(P, calls, [], 0.0, 20e-6), models())
        self.assertEqual(adv[0].title, "MPI_Reduce + bcast -> one MPI_Allreduce")
        now = 3e-6 + 1e-10 * N + 4e-6 + 3e-10 * N
        self.assertAlmostEqual(adv[0].saving, now - (3.5e-6 + 2e-10 * N), delta=1e-12)


class SendLoop(unittest.TestCase):
    def test_alltoallv(self):
        # each rank: blocking sendrecv with every other rank, 64 KiB each way, 3 times
        calls, n = [], 65536
        for it in range(3):
            for r in range(P):
                t = it * 1e-2
                for j in range(P):
                    if j != r:
                        calls.append(Call(r, "mpi", "MPI_Sendrecv", t, t + 50e-6, peer=j,
                                          bytes=2 * n, site="loop.c:9"))
                        t += 51e-6
        adv = advise.advise(Trace(P, calls, [], 0.0, 3e-2), models())
        a = [x for x in adv if x.kind == "alltoallv"][0]
        self.assertEqual(a.count, 3)
        now = 3 * 2 * (1e-6 + 1e-10 * n)  # per rank: 3 sendrecv, 2 messages each
        self.assertAlmostEqual(a.now_model, now, delta=1e-12)
        self.assertAlmostEqual(a.after_model, 8e-6 + 5e-10 * n, delta=1e-12)
        self.assertAlmostEqual(a.saving, 3 * (now - (8e-6 + 5e-10 * n)), delta=1e-11)


class SendLoopInOrder(unittest.TestCase):
    """The examples/advice sendloop at p=3: blocking MPI_Send/MPI_Recv with each peer in
    rank order (the lower rank sends first). The pairs are served one after the other:
    (0,1), then (0,2), then (1,2), 6 messages on the longest chain, which the advisor
    must find by playing the loop out (not 4, the most one rank takes part in)."""

    def models(self, at_p):
        m = {"impls": ["tern"], "barrier": {},
             "p2p": {"tern/pingpong/standard": {"impl": "tern", "pattern": "pingpong",
                                                "mode": "standard",
                                                "hockney": hock(1e-6, 1e-10)}},
             "coll": {"tern/alltoall": {"impl": "tern", "op": "alltoall",
                                        "per_p": {"3": hock(8e-6, 5e-10)}}}}
        if at_p:  # ternbench run --p2p-np 3: a message measured with 3 processes started
            m["p2p"]["tern/pingpong/standard@p3"] = {
                "impl": "tern", "pattern": "pingpong", "mode": "standard@p3",
                "hockney": hock(3e-6, 2e-10)}
        return advise.Models(m, source="given")

    def trace(self, n, iters=4):
        calls = []
        for it in range(iters):
            for r in range(3):
                t = it * 1e-2
                for j in range(3):
                    if j == r:
                        continue
                    first, second = ("MPI_Send", "MPI_Recv") if r < j else ("MPI_Recv",
                                                                           "MPI_Send")
                    for name in (first, second):
                        calls.append(Call(r, "mpi", name, t, t + 20e-6, peer=j, bytes=n,
                                          site="sendloop.c:%d" % (50 if name == "MPI_Send"
                                                                  else 51)))
                        t += 21e-6
        return Trace(3, calls, [], 0.0, iters * 1e-2)

    def test_chain_and_models_at_p(self):
        n = 65536
        for at_p, (ts, tb) in ((False, (1e-6, 1e-10)), (True, (3e-6, 2e-10))):
            adv, rej = advise.advise(self.trace(n), self.models(at_p), rejected=True)
            a = [x for x in adv + rej if x.kind == "alltoallv"][0]
            self.assertEqual(a.count, 4)
            self.assertAlmostEqual(a.now_model, 6 * (ts + tb * n), delta=1e-12)
            self.assertAlmostEqual(a.after_model, 8e-6 + 5e-10 * n, delta=1e-12)
            self.assertAlmostEqual(a.saving, 4 * (a.now_model - a.after_model), delta=1e-11)
            basis = " ".join(a.basis)
            self.assertIn("3 processes started" if at_p else "none at p=3", basis)


class Overlap(unittest.TestCase):
    """Two ranks, ten iterations: 50 us of computation, then a blocking MPI_Sendrecv of
    16 KiB each way (the tracer's bytes: 32 KiB, both). Now one message's T(16 KiB) =
    1 us + 1.6384 us; overlapped, the computation hides the latency t_s = 1 us of each:
    20 calls x 1 us over 2 ranks = 10 us saved."""

    def test_sendrecv_hides_the_latency(self):
        calls, t = [], 0.0
        for i in range(10):
            t += 50e-6
            for r in range(2):
                calls.append(Call(r, "mpi", "MPI_Sendrecv", t, t + 3e-6, peer=1 - r, tag=i,
                                  comm=0, comm_size=2, bytes=2 * 16384, site="ov.c:50"))
            t += 3e-6
        tr = Trace(2, calls, [], 0.0, t + 50e-6)
        adv = [a for a in advise.advise(tr, models()) if a.kind == "overlap"]
        self.assertEqual(len(adv), 1)
        a = adv[0]
        self.assertEqual(a.count, 20)
        self.assertAlmostEqual(a.now_model, 1e-6 + 1e-10 * 16384, delta=1e-12)
        self.assertAlmostEqual(a.after_model, 1e-10 * 16384, delta=1e-12)
        self.assertAlmostEqual(a.saving, 10e-6, delta=1e-12)
        self.assertIn("latency only", a.basis[0])


class LoadModels(unittest.TestCase):
    def test_files_and_errors(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "models.json")
            with open(path, "w") as f:
                json.dump(MODELS, f)
            self.assertEqual(advise.load_models(d).impl, "tern")
            self.assertEqual(advise.load_models(path).coll("gather", 0, 4)[0], 5e-6)
            with self.assertRaises(advise.ModelError):
                advise.load_models(path, impl="openmpi")
            with self.assertRaises(advise.ModelError):
                advise.load_models(os.path.join(d, "nothing"))
            empty = os.path.join(d, "empty")
            os.mkdir(empty)
            with self.assertRaises(advise.ModelError):
                advise.load_models(empty)


if __name__ == "__main__":
    unittest.main()
