"""`ternbench trace`'s analysis and report on traces made in memory with known content,
and the progress bar of long runs.

The trace: three ranks pass a token around (0 -> 1 -> 2 -> 0) with computation between
(1.0 s, 0.97 s, 0.86 s), and rank 0 sends rank 1 one earlier message. Worked out by hand:
the matrix has 150 B / 2 messages from 0 to 1, 200 B / 1 from 1 to 2, 300 B / 1 from 2 to
0; the critical path is 3.0 s long (the whole run: every wait is explained by the token)
and crosses ranks 0 -> 1 -> 2 -> 0, with 2.82 s of computation on it; rank 2 waits
1.905 s for rank 1 and rank 1 waits 0.475 s for rank 0 (late senders), a collective at
the end makes ranks 0 and 1 wait for rank 2. A second trace has a short branch that must
not be taken.
"""
import io
import re
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "tools/ternbench")
from ternbench import progress, trace_analysis as ta, trace_report  # noqa: E402
from ternbench.trace_model import Call, Message, Trace  # noqa: E402


def token_ring():
    c = [
        Call(0, "mpi", "MPI_Send", 0.30, 0.31, peer=1, bytes=50, site="ring.c:10"),
        Call(0, "mpi", "MPI_Send", 1.00, 1.01, peer=1, bytes=100, site="ring.c:20"),
        Call(0, "mpi", "MPI_Recv", 1.50, 3.00, peer=2, bytes=300, site="ring.c:30"),
        Call(1, "mpi", "MPI_Recv", 0.32, 0.33, peer=0, bytes=50, site="ring.c:12"),
        Call(1, "mpi", "MPI_Recv", 0.50, 1.03, peer=0, bytes=100, site="ring.c:22"),
        Call(1, "mpi", "MPI_Send", 2.00, 2.01, peer=2, bytes=200, site="ring.c:24"),
        Call(2, "mpi", "MPI_Recv", 0.10, 2.03, peer=1, bytes=200, site="ring.c:26"),
        Call(2, "mpi", "MPI_Send", 2.89, 2.91, peer=0, bytes=300, site="ring.c:28"),
    ]
    m = [
        Message(0, 1, 0.305, 0.325, 50, 7),
        Message(0, 1, 1.005, 1.020, 100, 7),
        Message(1, 2, 2.005, 2.020, 200, 7),
        Message(2, 0, 2.900, 2.950, 300, 7),
    ]
    return Trace(nranks=3, calls=c, messages=m, t_start=0.0, t_end=3.0,
                 meta={"program": "token ring"})


class Analysis(unittest.TestCase):
    def test_classify(self):
        self.assertEqual(ta.classify("MPI_Iallreduce"), ta.Kind("coll", "allreduce", True))
        self.assertEqual(ta.classify("tern_bcast").kind, "coll")
        self.assertEqual(ta.classify("MPI_Isend"), ta.Kind("send", "isend", True))
        self.assertEqual(ta.classify("MPI_Waitall").kind, "wait")
        self.assertEqual(ta.classify("shmem_long_put").kind, "send")
        self.assertEqual(ta.classify("MPI_Comm_dup").kind, "other")

    def test_matrix(self):
        b, n = ta.matrix(token_ring())
        self.assertEqual(b, [[0, 150, 0], [0, 0, 200], [300, 0, 0]])
        self.assertEqual(n, [[0, 2, 0], [0, 0, 1], [1, 0, 0]])

    def test_messages_located_in_their_calls(self):
        t = token_ring()
        idx = ta.Index(t)
        self.assertEqual([c.site for c in idx.send_call],
                         ["ring.c:10", "ring.c:20", "ring.c:24", "ring.c:28"])
        self.assertEqual([c.site for c in idx.recv_call],
                         ["ring.c:12", "ring.c:22", "ring.c:26", "ring.c:30"])

    def test_profile(self):
        rows = {r.key: r for r in ta.profile(token_ring(), "op")}
        self.assertEqual(rows["MPI_Recv"].calls, 4)
        self.assertAlmostEqual(rows["MPI_Recv"].total, 1.5 + 0.01 + 0.53 + 1.93)
        self.assertEqual(rows["MPI_Send"].bytes, 650)
        self.assertAlmostEqual(sum(r.pct_comm for r in rows.values()), 100.0)

    def test_sizes(self):
        h = ta.size_histogram(token_ring())
        # 50 -> [32, 64), 100 -> [64, 128), 200 and 300 -> [128, 256) and [256, 512)
        self.assertEqual(h, {6: (1, 50), 7: (1, 100), 8: (1, 200), 9: (1, 300)})
        self.assertEqual(ta.bin_label(7), "64-127")

    def test_waits(self):
        tot, mat, kinds = ta.wait_summary(token_ring())
        self.assertAlmostEqual(mat[2][1], 2.005 - 0.10)
        self.assertAlmostEqual(mat[1][0], 1.005 - 0.50)
        self.assertAlmostEqual(mat[0][2], 2.90 - 1.50)
        self.assertAlmostEqual(kinds["late sender"], 1.905 + 0.505 + 1.40)

    def test_critical_path(self):
        length, segs, info = ta.critical_path(token_ring())
        self.assertAlmostEqual(length, 3.0)
        self.assertAlmostEqual(info["wall"], 3.0)
        self.assertAlmostEqual(info["by_kind"]["compute"], 0.3 + 0.69 + 0.97 + 0.86)
        hops = [(s.src, s.rank) for s in segs if s.kind == "message"]
        self.assertEqual(hops, [(0, 1), (1, 2), (2, 0)])
        self.assertAlmostEqual(info["by_kind"]["message"], 0.015 + 0.015 + 0.05)
        self.assertEqual(info["dropped_edges"], 0)

    def test_critical_path_takes_the_longer_branch(self):
        # Rank 1 computes 2 s and sends to rank 0, which had computed only 0.5 s and waits
        # in its receive; rank 2 computes 0.3 s and ends. Path: 2 s on rank 1, the
        # message (0.1 s), rank 0's 0.2 s after the receive: 2.3 s; rank 0's own 0.5 s and
        # rank 2's 0.3 s are off it.
        c = [Call(0, "mpi", "MPI_Recv", 0.5, 2.1, peer=1, bytes=8),
             Call(0, "mpi", "MPI_Finalize", 2.3, 2.3),
             Call(1, "mpi", "MPI_Send", 2.0, 2.0, peer=0, bytes=8),
             Call(2, "mpi", "MPI_Finalize", 0.3, 0.3)]
        m = [Message(1, 0, 2.0, 2.1, 8, 0)]
        length, segs, info = ta.critical_path(Trace(3, c, m, 0.0, 2.3))
        self.assertAlmostEqual(length, 2.3)
        self.assertEqual(info["by_rank"].get(2, 0.0), 0.0)
        self.assertAlmostEqual(info["by_rank"][1], 2.0)

    def test_collective_wait(self):
        c = [Call(r, "mpi", "MPI_Barrier", t0, 1.01, comm=0, comm_size=3)
             for r, t0 in ((0, 0.2), (1, 0.6), (2, 1.0))]
        tot, mat, kinds = ta.wait_summary(Trace(3, c, [], 0.0, 1.01))
        self.assertAlmostEqual(mat[0][2], 0.8)
        self.assertAlmostEqual(mat[1][2], 0.4)
        self.assertEqual(tot[2], 0.0)
        self.assertAlmostEqual(kinds["collective"], 1.2)


class Report(unittest.TestCase):
    def test_html(self):
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.html")
            doc = trace_report.write(token_ring(), path, source="ring")
            with open(path) as f:
                page = f.read()
        self.assertEqual(doc.analysis["matrix_bytes"][0][1], 150)
        self.assertAlmostEqual(doc.analysis["critical_path"], 3.0)
        # self-contained: pictures inline, nothing fetched
        self.assertGreaterEqual(page.count("src='data:image/png;base64,"), 6)
        self.assertNotRegex(page, r"(src|href)=['\"]https?:")
        # the bytes matrix row of rank 0 and its total, the messages row of rank 1
        self.assertIn("<tr><td>0</td><td>0</td><td>150</td><td>0</td><td>150</td></tr>", page)
        self.assertIn("<tr><td>1</td><td>0</td><td>0</td><td>1</td><td>1</td></tr>", page)
        self.assertIn("Length 3000.0 ms, 100.0% of the run", page)
        for heading in ("Timeline", "Communication matrix", "Time in communication",
                        "Message sizes", "Critical path", "Who waits, and for whom"):
            self.assertIn("<h2>%s</h2>" % heading, page)
        self.assertRegex(page, r"<td>MPI_Recv @ ring\.c:30</td><td>1</td><td>1500\.0 ms")


class Bar(unittest.TestCase):
    class Clock:
        def __init__(self):
            self.t = 100.0

        def __call__(self):
            return self.t

    def test_eta_and_modes(self):
        clock = self.Clock()
        out = io.StringIO()  # not a terminal: "on" writes whole lines
        p = progress.Progress(200, mode="on", stream=out, clock=clock, interval=5)
        p.set_label("tern p2p")
        self.assertIsNone(p.eta())
        clock.t += 30
        p.add(50)  # a quarter in 30 s: 90 s left
        self.assertAlmostEqual(p.eta(), 90.0)
        self.assertIn("25% 30s elapsed, 1m30s left  tern p2p", out.getvalue())
        clock.t += 1
        n = out.getvalue().count("\n")
        p.add(1)  # within the interval: no new line
        self.assertEqual(out.getvalue().count("\n"), n)
        p.finish()
        self.assertIn("100%", out.getvalue().splitlines()[-1])
        quiet = io.StringIO()
        q = progress.Progress(10, mode="auto", stream=quiet, clock=clock)
        q.set_label("job")
        q.add(5)
        q.finish()
        self.assertEqual(quiet.getvalue(), "ternbench: job ...\n")  # no bar off a terminal
        off = io.StringIO()
        o = progress.Progress(10, mode="off", stream=off, clock=clock)
        o.set_label("job")
        o.add(5)
        o.finish()
        self.assertEqual(off.getvalue(), "")
        self.assertEqual(progress.fmt_duration(3725), "1h02m")
        self.assertTrue(re.match(r"^--$", progress.fmt_duration(None)))


if __name__ == "__main__":
    unittest.main()
