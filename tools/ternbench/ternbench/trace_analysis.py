"""trace_analysis.py - what a trace (trace_model.Trace) says, as numbers: standard library only.

Shared by the report (`ternbench trace`, trace_report.py) and the advisor (`ternbench
advise`, advise.py). Everything here is a pure function of the Trace:

- classify(name): which kind of call a function is (collective, send, receive, ...) and
  its operation without the API prefix ("MPI_Iallreduce" -> coll, "allreduce", i.e.
  non-blocking);
- locate(): the call each message was sent in and completed in;
- matrix(): bytes and messages between every pair of ranks;
- profile(): time in every call site and every operation (mpiP's table);
- size_histogram(): messages and bytes per power-of-two size bin;
- waits(): waiting time, each second attributed to the peer waited for (late sender,
  late receiver, a late arrival at a collective);
- critical_path(): the longest chain of work through the calls and their dependencies.
"""

import bisect
import functools
from collections import defaultdict, namedtuple

# Operations (the name without its API prefix) that are collectives. A leading "i" marks
# the non-blocking form (MPI_Ibcast, tern_ibcast).
COLLECTIVES = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan", "reduce_local", "barrier_all", "broadcast",
    "broadcast32", "broadcast64", "broadcastmem", "collect", "fcollect", "alltoallmem",
    "sum_reduce", "max_reduce", "min_reduce", "team_sync", "sync_all",
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
    "neighbor_alltoallw"}
SENDS = {"send", "ssend", "bsend", "rsend", "isend", "issend", "ibsend", "irsend",
         "send_init", "ssend_init", "bsend_init", "rsend_init", "conv_send", "conv_trysend",
         "put", "putmem", "put_nbi", "putmem_nbi", "put_signal", "putmem_signal", "p"}
RECVS = {"recv", "irecv", "mrecv", "imrecv", "recv_init", "conv_recv", "conv_irecv",
         "get", "getmem", "get_nbi", "getmem_nbi", "g"}
SENDRECVS = {"sendrecv", "sendrecv_replace"}
WAITS = {"wait", "waitall", "waitany", "waitsome", "test", "testall", "testany",
         "testsome", "start", "startall", "quiet", "fence", "wait_until", "probe",
         "iprobe", "mprobe", "improbe", "conv_check", "conv_flush"}

Kind = namedtuple("Kind", "kind op nonblocking")


@functools.lru_cache(maxsize=4096)
def classify(name):
    """Kind(kind, op, nonblocking) of a traced function name.

    kind: "coll", "send", "recv", "sendrecv", "wait" (completion, probe, fence) or "other"
    (init, finalize, communicator management, ...). op: the name without "MPI_", "PMPI_",
    "tern_" or "shmem_", lower case."""
    n = name.lower()
    for pre in ("pmpi_", "mpi_", "tern_", "shmem_"):
        if n.startswith(pre):
            n = n[len(pre):]
            break
    # typed SHMEM names: shmem_int_sum_reduce, shmem_long_put, shmem_double_p ...
    parts = n.split("_")
    if len(parts) > 1 and parts[0] in ("int", "long", "longlong", "double", "float", "char",
                                       "short", "uint", "ulong", "size", "team", "ctx"):
        n2 = "_".join(parts[1:])
        if n2 in COLLECTIVES or n2 in SENDS or n2 in RECVS or n2 in WAITS:
            n = n2
    if n in COLLECTIVES:
        return Kind("coll", n, False)
    if n.startswith("i") and n[1:] in COLLECTIVES:
        return Kind("coll", n[1:], True)
    if n in SENDRECVS:
        return Kind("sendrecv", n, False)
    if n in SENDS:
        return Kind("send", n, n.startswith("i") or n.endswith("_nbi") or
                    n.endswith("_init"))
    if n in RECVS:
        return Kind("recv", n, n.startswith("i") or n.endswith("_nbi") or
                    n.endswith("_init") or n == "conv_irecv")
    if n in WAITS:
        return Kind("wait", n, False)
    return Kind("other", n, False)


def is_comm(call):
    """True for calls that move data or synchronise (not init, finalize, comm_dup, ...)."""
    return classify(call.name).kind != "other"


# ---------------------------------------------------------------- messages and calls

class Index:
    """Per-rank calls sorted by enter time, and the calls each message touches.

    send_call[i] / recv_call[i]: the Call in which messages[i] was sent / completed, or
    None when no call of that rank contains the time (a clock offset larger than the
    tolerance, or a rank whose trace ends early)."""

    def __init__(self, trace, tolerance=2e-6):
        self.trace = trace
        self.by_rank = defaultdict(list)
        for c in trace.calls:
            self.by_rank[c.rank].append(c)
        for r in self.by_rank:
            self.by_rank[r].sort(key=lambda c: (c.t0, c.t1))
        self._t0 = {r: [c.t0 for c in cs] for r, cs in self.by_rank.items()}
        self.tol = tolerance
        self.send_call = [self.call_at(m.src, m.t_send) for m in trace.messages]
        self.recv_call = [self.call_at(m.dst, m.t_recv) if m.t_recv is not None else None
                          for m in trace.messages]

    def call_at(self, rank, t):
        """The call of `rank` running at time t (within the tolerance), or None."""
        cs = self.by_rank.get(rank)
        if not cs:
            return None
        i = bisect.bisect_right(self._t0[rank], t) - 1
        best, dist = None, None
        for j in (i, i + 1):
            if 0 <= j < len(cs):
                c = cs[j]
                d = 0.0 if c.t0 <= t <= c.t1 else min(abs(t - c.t0), abs(t - c.t1))
                if d <= self.tol and (dist is None or d < dist):
                    best, dist = c, d
        return best

    def rank_span(self, rank):
        """(start, end) of a rank: the trace's start (or its first call, if earlier) to its
        last call's leave."""
        cs = self.by_rank.get(rank)
        if not cs:
            return (self.trace.t_start, self.trace.t_start)
        return (min(self.trace.t_start, cs[0].t0), max(c.t1 for c in cs))


# ---------------------------------------------------------------- matrix, profile, sizes

def matrix(trace):
    """(bytes, counts): nranks x nranks lists, [src][dst], over every traced message."""
    p = trace.nranks
    b = [[0] * p for _ in range(p)]
    n = [[0] * p for _ in range(p)]
    for m in trace.messages:
        if 0 <= m.src < p and 0 <= m.dst < p:
            b[m.src][m.dst] += m.bytes
            n[m.src][m.dst] += 1
    return b, n


Row = namedtuple("Row", "key calls total mean tmin tmax bytes pct_app pct_comm")


def wall(trace, idx=None):
    """Seconds from the first rank's start to the last rank's last leave."""
    idx = idx or Index(trace)
    spans = [idx.rank_span(r) for r in range(trace.nranks)] or [(0.0, 0.0)]
    return max(e for _, e in spans) - min(s for s, _ in spans)


def app_time(trace, idx=None):
    """Sum over ranks of each rank's span (mpiP's 'application time')."""
    idx = idx or Index(trace)
    return sum(e - s for s, e in (idx.rank_span(r) for r in range(trace.nranks)))


def profile(trace, by="site", idx=None):
    """mpiP-style rows, largest total first. by: "site" (call site and function), "op"
    (function) or "rank". Only communication calls (is_comm) count; pct_app is of the
    summed rank spans, pct_comm of all communication time."""
    idx = idx or Index(trace)
    groups = defaultdict(list)
    for c in trace.calls:
        if not is_comm(c):
            continue
        if by == "site":
            key = "%s @ %s" % (c.name, c.site or "?")
        elif by == "rank":
            key = c.rank
        else:
            key = c.name
        groups[key].append(c)
    app = app_time(trace, idx) or 1.0
    comm = sum(c.t1 - c.t0 for cs in groups.values() for c in cs) or 1.0
    rows = []
    for key, cs in groups.items():
        d = [c.t1 - c.t0 for c in cs]
        tot = sum(d)
        rows.append(Row(key, len(cs), tot, tot / len(cs), min(d), max(d),
                        sum(c.bytes for c in cs), 100.0 * tot / app, 100.0 * tot / comm))
    rows.sort(key=lambda r: -r.total)
    return rows


def size_bin(nbytes):
    """Power-of-two bin: 0 for an empty message, else k with 2^(k-1) <= n < 2^k."""
    return 0 if nbytes <= 0 else int(nbytes).bit_length()


def bin_label(k):
    if k == 0:
        return "0"
    lo = 1 << (k - 1)
    return _sz(lo) if lo == (1 << k) - 1 else "%s-%s" % (_sz(lo), _sz((1 << k) - 1))


def _sz(b):
    for unit, m in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= m:
            return "%g%s" % (round(b / m, 1), unit)
    return "%d" % b


def size_histogram(trace):
    """{bin: (messages, bytes)} over every message; bins from size_bin()."""
    h = defaultdict(lambda: [0, 0])
    for m in trace.messages:
        k = size_bin(m.bytes)
        h[k][0] += 1
        h[k][1] += m.bytes
    return {k: tuple(v) for k, v in sorted(h.items())}


# ---------------------------------------------------------------- waiting

Wait = namedtuple("Wait", "rank peer seconds kind call end")
# kind: "late sender" (a receive waited for the send), "late receiver" (a blocking send
# waited for the receive to be posted), "collective" (waited for the last rank to enter).
# end: the time the waiting ended (the send, the receiver's entry, the last entry).


def collective_instances(trace, idx=None):
    """Match collectives across ranks: the k-th collective call on a communicator on each
    rank is one instance. Returns a list of lists of calls (one per member rank); instances
    whose members disagree on the operation are left out (a trace of an erroneous program,
    or one cut short)."""
    idx = idx or Index(trace)
    seq = defaultdict(lambda: defaultdict(list))  # comm -> rank -> calls
    for r, cs in idx.by_rank.items():
        for c in cs:
            k = classify(c.name)
            if k.kind == "coll":
                seq[c.comm][r].append(c)
    out = []
    for comm, per_rank in seq.items():
        depth = max(len(v) for v in per_rank.values())
        for i in range(depth):
            inst = [v[i] for v in per_rank.values() if i < len(v)]
            if len({classify(c.name).op for c in inst}) == 1:
                out.append(inst)
    return out


def waits(trace, idx=None):
    """Every waiting interval of the trace, attributed to the peer waited for.

    A call's waiting time starts when it is entered and ends with the last of its
    dependencies to become ready: the send of a message it completes (late sender), the
    entry of the receiver of a message it sends and could not finish without (late
    receiver: the send call lasted past the receiver's entry), the entry of the last rank
    into a collective it could not leave before (the call left after that entry).
    Overlapping intervals of one call are counted once: sorted by their end, each peer is
    charged the part beyond the previous end."""
    idx = idx or Index(trace)
    deps = defaultdict(list)  # id(call) -> [(end, peer, kind)]
    calls = {}
    for i, m in enumerate(trace.messages):
        s, c = idx.send_call[i], idx.recv_call[i]
        if c is not None and classify(c.name).kind != "coll" and m.t_send > c.t0:
            deps[id(c)].append((min(m.t_send, c.t1), m.src, "late sender"))
            calls[id(c)] = c
        if (s is not None and c is not None and classify(s.name).kind in
                ("send", "sendrecv", "wait") and not classify(s.name).nonblocking and
                s.rank != c.rank and c.t0 > s.t0 and s.t1 > c.t0):
            deps[id(s)].append((min(c.t0, s.t1), c.rank, "late receiver"))
            calls[id(s)] = s
    for inst in collective_instances(trace, idx):
        if len(inst) < 2:
            continue
        last = max(inst, key=lambda c: c.t0)
        for c in inst:
            if c is not last and c.t1 > last.t0 and last.t0 > c.t0:
                deps[id(c)].append((last.t0, last.rank, "collective"))
                calls[id(c)] = c
    out = []
    for key, lst in deps.items():
        c = calls[key]
        lst.sort(key=lambda x: x[0])
        prev = c.t0
        for end, peer, kind in lst:
            if end > prev:
                out.append(Wait(c.rank, peer, end - prev, kind, c, end))
                prev = end
    return out


def wait_summary(trace, ws=None):
    """(per_rank_total, matrix[waiter][peer], per_kind) in seconds."""
    ws = waits(trace) if ws is None else ws
    p = trace.nranks
    tot = [0.0] * p
    mat = [[0.0] * p for _ in range(p)]
    kinds = defaultdict(float)
    for w in ws:
        if 0 <= w.rank < p and 0 <= w.peer < p:
            tot[w.rank] += w.seconds
            mat[w.rank][w.peer] += w.seconds
        kinds[w.kind] += w.seconds
    return tot, mat, dict(kinds)


# ---------------------------------------------------------------- critical path

Segment = namedtuple("Segment", "rank src t0 t1 kind label weight")
# rank: where the segment ends, src: where it starts (they differ for "message" and "sync").
# kind: "compute" (between calls), "call" (inside a call, waiting excluded), "message"
# (from a send to its completion on another rank), "sync" (a late receiver's or a
# collective's dependency from one rank's entry to another's leave).

CRITICAL_PATH_ALGORITHM = (
    "The trace becomes a graph. Its points are, on every rank, the start, each call's entry "
    "and leave, and the moments a message is sent and completed inside a call. Consecutive "
    "points of one rank are joined by an edge weighted with the time between them, except "
    "that time a call spends waiting (for a late sender, a late receiver or the last rank "
    "of a collective) weighs nothing. Three kinds of edges join ranks: a message's send to "
    "its completion (weighted with the completion time minus the later of the send and the "
    "receiver's entry), a late receiver's entry to the leave of the send it released, and "
    "the last entry into a collective to the leave of every member that waited for it "
    "(both weighted with the time from that entry to the leave). The critical path is the "
    "longest path of this graph (it has no cycles: every edge goes forward in time; an edge "
    "a clock offset would turn backwards is dropped and counted), found in one pass in time "
    "order. Its length is the run time the program would have if no rank ever waited for a "
    "reason that is not a dependency; shortening anything off the path cannot make the run "
    "faster, and the path's parts say what to shorten.")


def critical_path(trace, idx=None, ws=None):
    """The longest chain of work: (length, segments, info).

    length in seconds; segments (Segment) in time order; info: {"dropped_edges",
    "wall" (the trace's span), "by_kind" {compute/call NAME/message/sync: seconds},
    "by_rank" {rank: seconds}}. CRITICAL_PATH_ALGORITHM describes the graph."""
    idx = idx or Index(trace)
    ws = waits(trace, idx) if ws is None else ws
    wait_end = {}
    for w in ws:
        wait_end[id(w.call)] = max(wait_end.get(id(w.call), w.call.t0), w.end)
    # points: (t, rank, seq) ; node ids are indices into `pts`
    pts = []  # [t, rank, label]
    succ = defaultdict(list)  # node -> [(node, weight, kind, label)]
    inside = defaultdict(list)  # id(call) -> [(t, tag)] extra points in a call
    msg_pt = {}
    for i, m in enumerate(trace.messages):
        s, c = idx.send_call[i], idx.recv_call[i]
        if s is None or c is None or m.t_recv is None:
            continue
        inside[id(s)].append((min(max(m.t_send, s.t0), s.t1), ("s", i)))
        inside[id(c)].append((min(max(m.t_recv, c.t0), c.t1), ("r", i)))
    enter_node, leave_node = {}, {}
    for r in range(trace.nranks):
        cs = idx.by_rank.get(r, [])
        start, _ = idx.rank_span(r)
        prev = len(pts)
        pts.append((start, r, "start"))
        prev_t = start
        for c in cs:
            chain = [(max(c.t0, prev_t), "enter")]
            chain += sorted(inside.get(id(c), []), key=lambda x: x[0])
            chain.append((max(c.t1, chain[-1][0]), "leave"))
            wend = wait_end.get(id(c), c.t0)
            for t, tag in chain:
                node = len(pts)
                pts.append((t, r, tag))
                if tag == "enter":
                    enter_node[id(c)] = node
                    succ[prev].append((node, max(t - prev_t, 0.0), "compute", "compute"))
                else:
                    # inside the call: waiting (c.t0 .. wend) weighs nothing
                    w = max(t - prev_t, 0.0) - max(0.0, min(t, wend) - max(prev_t, c.t0))
                    succ[prev].append((node, max(w, 0.0), "call", c.name))
                    if tag == "leave":
                        leave_node[id(c)] = node
                    else:
                        msg_pt[tag] = node
                prev, prev_t = node, t
    # cross-rank edges
    for i, m in enumerate(trace.messages):
        a, b = msg_pt.get(("s", i)), msg_pt.get(("r", i))
        if a is None or b is None:
            continue
        c = idx.recv_call[i]
        succ[a].append((b, max(0.0, m.t_recv - max(m.t_send, c.t0)), "message",
                        "%d->%d %dB" % (m.src, m.dst, m.bytes)))
    for w in ws:
        if w.kind == "late sender":
            continue  # carried by the message edge
        # the peer's entry (the receiver's, the last collective member's) releases w.call
        peer_call = idx.call_at(w.peer, w.end)
        if peer_call is None or id(peer_call) not in enter_node:
            continue
        a, b = enter_node[id(peer_call)], leave_node[id(w.call)]
        succ[a].append((b, max(0.0, w.call.t1 - w.end), "sync", w.kind))
    # longest path, nodes in time order (ties: rank, then creation order)
    order = sorted(range(len(pts)), key=lambda k: (pts[k][0], pts[k][1], k))
    pos = {k: i for i, k in enumerate(order)}
    dist = [0.0] * len(pts)
    pred = [None] * len(pts)
    dropped = 0
    for u in order:
        for v, w, kind, label in succ.get(u, []):
            if pos[v] <= pos[u]:
                dropped += 1
                continue
            if pred[v] is None or dist[u] + w > dist[v]:
                dist[v] = dist[u] + w
                pred[v] = (u, w, kind, label)
    if not pts:
        return 0.0, [], {"dropped_edges": 0, "wall": 0.0, "by_kind": {}, "by_rank": {}}
    end = max(range(len(pts)), key=lambda k: (dist[k], -pos[k]))
    segs = []
    v = end
    while pred[v] is not None:
        u, w, kind, label = pred[v]
        segs.append(Segment(pts[v][1], pts[u][1], pts[u][0], pts[v][0], kind, label, w))
        v = u
    segs.reverse()
    by_kind = defaultdict(float)
    by_rank = defaultdict(float)
    for s in segs:
        if s.kind == "call":
            key = "call " + s.label
        elif s.kind == "sync":
            key = "after the %s arrived" % {"collective": "last rank of a collective"}.get(
                s.label, s.label)
        else:
            key = s.kind
        by_kind[key] += s.weight
        by_rank[s.rank] += s.weight
    return dist[end], segs, {"dropped_edges": dropped, "wall": wall(trace, idx),
                             "by_kind": dict(by_kind),
                             "by_rank": dict(by_rank)}
