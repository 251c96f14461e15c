"""advise.py - `ternbench advise DIR`: what each communication phase of a trace costs, what
the alternatives would cost on this machine, ranked by the time they would save.

The costs come from the models `ternbench run` + `ternbench report` fitted here
(models.json): Hockney T(n) = t_s + t_b n for point-to-point, and per collective
T(n, p) = t_s(p) + t_b(p) n (the fit at p when p was measured, else the fitted scaling
law in p). A prediction is the model's cost of what the program does now minus the
model's cost of the alternative, so a bias the models share (the load of the machine,
oversubscription) cancels; the measured time of the phase in the trace is shown beside
it. The phases and their alternatives:

- a gather followed by a broadcast of everything gathered -> one allgather;
- a reduce followed by a broadcast of the result -> one allreduce;
- a loop of sends and receives to many peers -> one alltoall(v);
- several small messages in a row to the same peer -> one message (batching);
- a blocking point-to-point call next to computation -> non-blocking, overlapped with it;
- a collective that another measured implementation (another algorithm) does faster.

Every suggestion carries its basis: which model, fitted on what, with which parameters.
"""

import glob
import json
import os
from collections import defaultdict, namedtuple

from . import trace_analysis as ta

# trace operation -> the name of the collective in ternbench's measurements (runner.COLL_OPS)
MODEL_OP = {"bcast": "bcast", "reduce": "reduce", "allreduce": "allreduce",
            "gather": "gather", "gatherv": "gather", "scatter": "scatter",
            "scatterv": "scatter", "allgather": "allgather", "allgatherv": "allgather",
            "alltoall": "alltoall", "alltoallv": "alltoall", "reduce_scatter_block":
            "red_scat_blk", "reduce_scatter": "red_scat_blk", "scan": "scan", "exscan": "scan",
            "barrier": "barrier"}

GAP = 20e-6  # computation shorter than this between two calls: the calls are one phase
BATCH_MIN = 4  # messages in a row to one peer before batching is suggested

Advice = namedtuple("Advice", "kind title where count now_measured now_model after_model "
                              "saving basis")
# now_measured: seconds the phase takes in the trace, per occurrence (mean over ranks);
# now_model / after_model: the models' cost per occurrence now and with the change;
# saving: predicted elapsed seconds saved over the whole trace.


class ModelError(Exception):
    pass


class Models:
    """The fitted models of one implementation (models.json of `ternbench report`)."""

    def __init__(self, an, impl=None, source=""):
        self.an = an
        self.source = source
        impls = an.get("impls") or sorted({v["impl"] for v in an.get("coll", {}).values()} |
                                          {v["impl"] for v in an.get("p2p", {}).values()})
        self.chosen = impl is not None  # --impl given: for_trace keeps it
        if impl is None:
            impl = "tern" if "tern" in impls else (impls[0] if impls else None)
        if impl not in impls:
            raise ModelError("no models of implementation %r in %s (there are: %s)" %
                             (impl, source or "the models", ", ".join(impls) or "none"))
        self.impl = impl
        self.impls = impls
        self.p = 2  # the trace's process count (advise sets it): p2p fits at p when measured
        # Price a size from the measured points around it (linear between the two measured
        # sizes that bracket it) rather than from the Hockney line through all of them: the
        # line misses single sizes by up to 25-50 % (its max_rel_resid), and bench/advice.sh
        # measures at the programs' sizes. Outside the measured sizes: the fit.
        self.curve = True

    def for_trace(self, trace):
        """Unless an implementation was asked for: a trace of tern's MPI calls is priced
        with the models of tern's MPI drivers (`ternbench run --with tern-mpi`) when there
        are some, as the MPI layer's cost per call (communicator, datatype and request
        translation) is in every call the program makes and not in the native drivers'."""
        if self.chosen or self.impl != "tern" or "tern-mpi" not in self.impls:
            return self
        napi = defaultdict(int)
        for c in trace.calls:
            napi[c.api] += 1
        if napi and max(napi, key=napi.get) == "mpi":
            self.impl = "tern-mpi"
        return self

    def _p2p_key(self, impl, pattern):
        """The key of the point-to-point fit for the trace's p: measured with p processes
        started (`ternbench run --p2p-np`) when there is one, else with 2."""
        base = "%s/%s/standard" % (impl, pattern)
        at = "%s@p%d" % (base, self.p)
        return at if self.p > 2 and at in self.an.get("p2p", {}) else base

    # ------------------------------------------------------------ point-to-point
    def p2p_fit(self, pattern="pingpong", impl=None):
        s = self.an.get("p2p", {}).get(self._p2p_key(impl or self.impl, pattern))
        return s["hockney"] if s else None

    def p2p_t(self, n, pattern="pingpong"):
        """Seconds of one message of n bytes (ping-pong model by default), without the
        basis: the measured points interpolated at n when they bracket it (and self.curve),
        else the Hockney fit."""
        s = self.an.get("p2p", {}).get(self._p2p_key(self.impl, pattern))
        if s is None and pattern != "pingpong":
            return self.p2p_t(n, "pingpong")
        if s is None:
            raise ModelError("no point-to-point model of %s" % self.impl)
        t = _interp(s.get("n"), s.get("t"), n) if self.curve else None
        h = s["hockney"]
        return t if t is not None else h["t_s"] + h["t_b"] * n

    def p2p_basis(self, pattern="pingpong"):
        h = self.p2p_fit(pattern)
        at = self._p2p_key(self.impl, pattern)
        where = ("measured with %d processes started" % self.p if "@p" in at else
                 "measured with 2 processes" + (" (none at p=%d: a cost of running %d ranks "
                                                "is not in it)" % (self.p, self.p)
                                                if self.p > 2 else ""))
        s = self.an.get("p2p", {}).get(at, {})
        how = ("the measured points at the message's size (linear between the two measured "
               "sizes around it; outside them the Hockney fit T(n) = t_s + t_b n, t_s = %.3g "
               "us, t_b = %.4g ns/B, R2 %.3f)" if self.curve and s.get("n") else
               "Hockney T(n) = t_s + t_b n, t_s = %.3g us, t_b = %.4g ns/B (R2 %.3f)")
        return "%s %s %s, %s" % (self.impl, pattern, how % (h["t_s"] * 1e6, h["t_b"] * 1e9,
                                                            h.get("r2", float("nan"))), where)

    def t_s(self, pattern="stream"):
        h = self.p2p_fit(pattern) or self.p2p_fit("pingpong")
        if h is None:
            raise ModelError("no point-to-point model of %s" % self.impl)
        return h["t_s"], "stream" if self.p2p_fit(pattern) else "pingpong"

    def wire_latency(self):
        """(L, how): the part of a small message's one-way time that is neither end's CPU
        overhead, LogGP's L = a - 2o with a the ping-pong's one-way time at 0 bytes, g the
        stream's time per message at 0 bytes (a stream is paced by the ends' CPUs) and
        o = min(g, a/2), as in `ternbench predict --simulate`. Without a stream model,
        the whole a."""
        a = self.p2p_t(0.0, "pingpong")
        if self.p2p_fit("stream") is None:
            return a, "no stream model: L taken as the ping-pong's a = %s" % _us(a)
        g = self.p2p_t(0.0, "stream")
        o = min(g, a / 2.0)
        return (max(a - 2.0 * o, 0.0),
                "L = a - 2o = %s (ping-pong a = %s, stream g = %s at 0 B, o = min(g, a/2))" %
                (_us(max(a - 2.0 * o, 0.0)), _us(a), _us(g)))

    def n_half(self):
        h = self.p2p_fit("pingpong")
        return h["t_s"] / h["t_b"] if h and h["t_b"] > 0 else 4096.0

    # ------------------------------------------------------------ collectives
    def coll(self, op, n, p, impl=None):
        """(seconds, basis) of one collective; None when there is no model of it."""
        impl = impl or self.impl
        mop = MODEL_OP.get(op, op)
        if mop == "barrier":
            b = self.an.get("barrier", {}).get("%s/barrier" % impl)
            if not b:
                return None
            if p in b["p"]:
                return b["t"][b["p"].index(p)], "%s barrier measured at p=%d" % (impl, p)
            s = b["scaling"]
            if not s.get("pick"):
                return None
            return _scal(s, p), "%s barrier scaling fit (%s) at p=%d" % (impl, s["class"], p)
        m = self.an.get("coll", {}).get("%s/%s" % (impl, mop))
        if not m:
            return None
        h = m.get("per_p", {}).get(str(p))
        d = m.get("data", {}).get(str(p), {})
        t = _interp(d.get("n"), d.get("t"), n) if self.curve else None
        if h and t is not None:
            return (t, "%s %s measured at p=%d, %s (the fit, t_s = %.3g us, t_b = %.4g ns/B, "
                       "R2 %.3f, would say %s)" %
                    (impl, mop, p, _between(d["n"], n), h["t_s"] * 1e6, h["t_b"] * 1e9,
                     h.get("r2", float("nan")), _us(h["t_s"] + h["t_b"] * n)))
        if h:
            return (h["t_s"] + h["t_b"] * n,
                    "%s %s fit at p=%d: t_s = %.3g us, t_b = %.4g ns/B (R2 %.3f)" %
                    (impl, mop, p, h["t_s"] * 1e6, h["t_b"] * 1e9, h.get("r2", float("nan"))))
        if "t_s" not in m or not m["t_s"].get("log"):
            return None
        t = _scal(m["t_s"], p) + _scal(m["t_b"], p) * n
        return (t, "%s %s T(n,p) extrapolated to p=%d (t_s %s, t_b %s; measured p=%s)" %
                (impl, mop, p, m["t_s"]["class"], m["t_b"]["class"],
                 ",".join(sorted(m["per_p"], key=int))))


def _interp(ns, ts, n):
    """The measured time at n: linear between the two measured sizes around it (the point
    itself when n was measured); None when there are no points or n is outside them."""
    if not ns or not ts or len(ns) != len(ts):
        return None
    pts = sorted(zip(ns, ts))
    if n < pts[0][0] or n > pts[-1][0]:
        return None
    for (n0, t0), (n1, t1) in zip(pts, pts[1:] + pts[-1:]):
        if n0 <= n <= n1:
            return t0 if n1 == n0 else t0 + (t1 - t0) * (n - n0) / (n1 - n0)
    return None


def _between(ns, n):
    pts = sorted(ns)
    if n in pts:
        return "%d B measured" % round(n)
    lo = max(x for x in pts if x <= n)
    hi = min(x for x in pts if x >= n)
    return "%d B between the measured %d and %d B" % (round(n), round(lo), round(hi))


def _us(sec):
    return "%.3g us" % (sec * 1e6)


def _scal(s, p):
    import math
    which = s.get("pick") or "log"
    f = s[which]
    return f["a"] + f["b"] * (math.log2(p) if which == "log" else p)


def load_models(path, impl=None):
    """Models from a models.json, or from a run directory (its models.json, or fitted now
    from its results.csv)."""
    if os.path.isdir(path):
        mj = os.path.join(path, "models.json")
        if os.path.exists(mj):
            path = mj
        elif os.path.exists(os.path.join(path, "results.csv")):
            from . import report, runner
            _, rows = runner.load(path)
            return Models(report.analyse(rows), impl, path)
        else:
            raise ModelError("%s has neither models.json nor results.csv" % path)
    try:
        with open(path) as f:
            an = json.load(f)
    except (OSError, ValueError) as e:
        raise ModelError("cannot read models from %s: %s" % (path, e))
    return Models(an, impl, path)


def default_models_path():
    """$TERNBENCH_MODELS, else the newest ternbench-*/ run here that has models or results."""
    env = os.environ.get("TERNBENCH_MODELS")
    if env:
        return env
    cands = [d for d in glob.glob("ternbench-*") if os.path.isdir(d) and
             (os.path.exists(os.path.join(d, "models.json")) or
              os.path.exists(os.path.join(d, "results.csv")))]
    return max(cands, key=os.path.getmtime) if cands else None


# ---------------------------------------------------------------- sizes

def block_bytes(op, call, p):
    """The size argument of ternbench's measurements (the block of gather, scatter,
    allgather and alltoall, the vector of the others) for one rank's collective call.

    tern's tracer records in Call.bytes the sum of the call's count arguments times their
    datatype's size: MPI's bcast, reduce, allreduce, scan and reduce_scatter_block have
    one count (the size itself); gather, scatter, allgather and alltoall a send and a
    receive count of one block each (twice the block; a non-root rank of a gather may pass
    a receive count of 0, see _pairs); the native API's collectives one count."""
    b = float(call.bytes)
    mop = MODEL_OP.get(op, op)
    if call.api != "native" and mop in ("gather", "scatter", "allgather", "alltoall"):
        return b / 2.0
    return b


def _nonroot_block(inst, op, p):
    vals = [block_bytes(op, c, p) for c in inst if c.root is None or c.rank != c.root]
    vals = vals or [block_bytes(op, c, p) for c in inst]
    return sum(vals) / len(vals)


def _p_of(inst, trace):
    ps = [c.comm_size for c in inst if c.comm_size]
    return max(ps) if ps else len(inst)


# ---------------------------------------------------------------- the phases

def _pairs(trace, models, idx):
    """gather + bcast -> allgather, reduce + bcast -> allreduce."""
    by_comm = defaultdict(list)
    for inst in ta.collective_instances(trace, idx):
        by_comm[inst[0].comm].append(inst)
    groups = defaultdict(list)
    for comm, insts in by_comm.items():
        for a, b in zip(insts, insts[1:]):
            oa, ob = ta.classify(a[0].name), ta.classify(b[0].name)
            if ob.op != "bcast" or oa.nonblocking or ob.nonblocking:
                continue
            if oa.op not in ("gather", "gatherv", "reduce"):
                continue
            ra, rb = a[0].root, b[0].root
            if ra is not None and rb is not None and ra != rb:
                continue
            p = _p_of(a, trace)
            big = _nonroot_block(b, "bcast", p)
            if oa.op == "reduce":
                n = _nonroot_block(a, oa.op, p)
                if abs(big - n) > 0.01 * max(big, 1):
                    continue
                alt = "allreduce"
            else:
                # the broadcast must be exactly the p gathered blocks: a non-root rank's
                # gather records one block (receive count 0) or two (block_bytes)
                n = big / p
                tol = 0.01 * n + 1
                if not all(abs(c.bytes - n) <= tol or abs(c.bytes - 2 * n) <= tol
                           for c in a if c.rank != ra) or oa.op == "gatherv":
                    continue
                alt = "allgather"
            ranks = {c.rank for c in a} & {c.rank for c in b}
            da = {c.rank: c.t1 - c.t0 for c in a}
            db = {c.rank: c.t1 - c.t0 for c in b}
            meas = sum(da[r] + db[r] for r in ranks) / max(len(ranks), 1)
            root_call = next((c for c in a if c.rank == ra), a[0])
            key = (oa.op, alt, comm, ra, round(n), p, root_call.site)
            groups[key].append(meas)
    out = []
    for (op, alt, comm, root, n, p, site), meas in groups.items():
        now_a = models.coll(op, n, p)
        now_b = models.coll("bcast", p * n if alt == "allgather" else n, p)
        after = models.coll(alt, n, p)
        if not (now_a and now_b and after):
            continue
        now = now_a[0] + now_b[0]
        k = len(meas)
        out.append(Advice(
            "collective", "%s + bcast -> one %s" % (_mpi(op), _mpi(alt)),
            "%s of %s B per rank, then bcast of %s B from root %s, p=%d%s" %
            (_mpi(op), _n(n), _n(p * n if alt == "allgather" else n), root, p,
             " at " + site if site else ""),
            k, sum(meas) / k, now, after[0], k * (now - after[0]),
            ["now: %s" % now_a[1], "now: bcast %s" % now_b[1], "after: %s" % after[1]]))
    return out


def _mpi(op):
    return "MPI_" + op.capitalize()


def _n(x):
    return "%d" % round(x)


def _runs(trace, idx, gap):
    """Per rank, the maximal runs of point-to-point calls with less than `gap` of
    computation between them: {rank: [[call, ...], ...]}."""
    out = {}
    for r, cs in idx.by_rank.items():
        runs, cur, last = [], [], None
        for c in cs:
            k = ta.classify(c.name).kind
            if k in ("send", "recv", "sendrecv", "wait"):
                if cur and c.t0 - last > gap:
                    runs.append(cur)
                    cur = []
                cur.append(c)
                last = c.t1
            elif k != "other":
                if cur:
                    runs.append(cur)
                cur, last = [], None
        if cur:
            runs.append(cur)
        out[r] = runs
    return out


def _split_at_repeat(runs):
    """Cut runs where a send goes to a peer already sent to in the run: iterations of an
    exchange loop with no computation between them are separate exchanges."""
    out = []
    for run in runs:
        cur, seen = [], set()
        for c in run:
            if ta.classify(c.name).kind in ("send", "sendrecv") and c.peer is not None:
                if c.peer in seen:
                    out.append(cur)
                    cur, seen = [], set()
                seen.add(c.peer)
            cur.append(c)
        if cur:
            out.append(cur)
    return out


def _exchanges(trace, models, idx, runs):
    """A loop of sends/receives to many peers, on most ranks -> one alltoallv."""
    p = trace.nranks
    if p < 3:
        return []
    ex = {}
    for r, rs in runs.items():
        ex[r] = [run for run in _split_at_repeat(rs)
                 if len({c.peer for c in run if ta.classify(c.name).kind in
                         ("send", "sendrecv") and c.peer is not None}) >= max(2, (p - 1) // 2)]
    depth = max((len(v) for v in ex.values()), default=0)
    groups = defaultdict(list)
    for k in range(depth):
        members = {r: v[k] for r, v in ex.items() if k < len(v)}
        if len(members) < max(2, p // 2):
            continue
        sends = [c for run in members.values() for c in run
                 if ta.classify(c.name).kind in ("send", "sendrecv")]
        pairs = {(c.rank, c.peer) for c in sends}
        nmean = sum(c.bytes / (2.0 if ta.classify(c.name).kind == "sendrecv" else 1.0)
                    for c in sends) / max(len(sends), 1)
        # now: the loop's own order of blocking sends and receives played out with the
        # model's cost per message (a message starts when both its ranks reach it), else
        # every message a rank takes part in, one after the other
        now_by_rank = _play(members, models)
        if now_by_rank is None:
            now_by_rank = []
            for run in members.values():
                t = 0.0
                for c in run:
                    kk = ta.classify(c.name).kind
                    if kk in ("send", "recv"):
                        t += models.p2p_t(c.bytes)
                    elif kk == "sendrecv":
                        t += 2 * models.p2p_t(c.bytes / 2.0)
                now_by_rank.append(t)
        meas = sum(run[-1].t1 - run[0].t0 for run in members.values()) / len(members)
        first = min(members)
        site = members[first][0].site
        key = (site, round(nmean), len(pairs), len(members))
        groups[key].append((meas, max(now_by_rank), nmean))
    out = []
    for (site, nmean, npairs, nmem), occ in groups.items():
        after = models.coll("alltoall", nmean, p)
        if not after:
            continue
        k = len(occ)
        now = sum(o[1] for o in occ) / k
        out.append(Advice(
            "alltoallv", "loop of sends/receives -> one MPI_Alltoallv",
            "%d ranks exchange with %d sender/receiver pairs, %s B per pair on average%s" %
            (nmem, npairs, _n(nmean), " at " + site if site else ""),
            k, sum(o[0] for o in occ) / k, now, after[0], k * (now - after[0]),
            ["now: the loop's blocking sends and receives in their order, each message "
             "T(n) once both ranks reach it, %s" % models.p2p_basis(),
             "after: %s (alltoallv taken as alltoall of the mean block)" % after[1]]))
    return out


def _play(members, models):
    """Per rank, when it ends the exchange if its blocking sends and receives run in
    their traced order and a message takes T(n) from the moment both its sender and its
    receiver have reached it (messages between two ranks matched in order). None when
    the runs hold other calls (non-blocking, sendrecv) or their order cannot complete."""
    ops = {}
    for r, run in members.items():
        seq = []
        for c in run:
            kk = ta.classify(c.name).kind
            if kk not in ("send", "recv") or c.peer is None:
                return None
            seq.append((kk, c.peer, c.bytes))
        ops[r] = seq
    pos = {r: 0 for r in ops}
    clock = {r: 0.0 for r in ops}
    moved = True
    while moved:
        moved = False
        for a in ops:
            if pos[a] >= len(ops[a]):
                continue
            kk, b, n = ops[a][pos[a]]
            if kk != "send" or b not in ops or pos[b] >= len(ops[b]):
                continue
            kb, src, _ = ops[b][pos[b]]
            if kb != "recv" or src != a:
                continue
            end = max(clock[a], clock[b]) + models.p2p_t(n)
            clock[a] = clock[b] = end
            pos[a] += 1
            pos[b] += 1
            moved = True
    if any(pos[r] < len(ops[r]) for r in ops):
        return None
    return list(clock.values())


def _batches(trace, models, idx, runs):
    """Several small sends in a row to one peer -> one message."""
    small = min(max(models.n_half(), 256.0), 65536.0)
    ts, pattern = models.t_s("stream")
    groups = defaultdict(list)
    for r, rs in runs.items():
        for run in rs:
            i = 0
            sends = [c for c in run if ta.classify(c.name).kind == "send"]
            while i < len(sends):
                j = i
                while (j < len(sends) and sends[j].peer == sends[i].peer and
                       sends[j].bytes <= small):
                    j += 1
                if j - i >= BATCH_MIN:
                    seq = sends[i:j]
                    groups[(seq[0].site, seq[0].name)].append(
                        (r, seq[0].peer, len(seq), sum(c.bytes for c in seq),
                         seq[-1].t1 - seq[0].t0))
                    i = j
                else:
                    i = max(i + 1, j)
    out = []
    for (site, name), occ in groups.items():
        ranks = {o[0] for o in occ}
        k = len(occ)
        msgs = sum(o[2] for o in occ) / k
        tot = sum(o[3] for o in occ) / k
        # now: each message at the streamed cost of its (mean) size; after: one streamed
        # message of all the bytes (with the Hockney fit: k t_s + t_b sum(n) against
        # t_s + t_b sum(n), one t_s per message saved)
        now = msgs * models.p2p_t(tot / msgs, pattern)
        after = models.p2p_t(tot, pattern)
        # ranks batching at the same time save once: elapsed saving per rank involved
        out.append(Advice(
            "batching", "%.0f small %s in a row to one peer -> one message" % (msgs, name),
            "%d runs on %d rank(s), %s B in total each, to %s%s" %
            (k, len(ranks), _n(tot), ",".join(sorted({str(o[1]) for o in occ})),
             " at " + site if site else ""),
            k, sum(o[4] for o in occ) / k, now, after,
            k * (now - after) / len(ranks),
            ["%s (now each message at the streamed cost of its size, after one streamed "
             "message of all the bytes; the copy into one buffer is not counted)" %
             models.p2p_basis(pattern)]))
    return out


def _overlap(trace, models, idx, gap):
    """A blocking point-to-point call next to computation -> start it non-blocking and
    complete it on the other side of the computation."""
    groups = defaultdict(list)
    wire, wire_how = models.wire_latency()
    for r, cs in idx.by_rank.items():
        comm = [c for c in cs if ta.is_comm(c)]
        for i, c in enumerate(comm):
            k = ta.classify(c.name)
            if k.nonblocking or k.kind not in ("send", "recv", "sendrecv") or c.bytes <= 0:
                continue
            before = c.t0 - comm[i - 1].t1 if i > 0 else 0.0
            after = comm[i + 1].t0 - c.t1 if i + 1 < len(comm) else 0.0
            g = {"send": after, "recv": before}.get(k.kind, max(before, after))
            if g <= gap:
                continue
            # now: one message's T(n); a sendrecv's two directions (its bytes are both)
            # go at once. What the computation can hide is the latency t_s only: tern
            # copies the bytes on the ranks' own CPUs inside the calls in both forms (an
            # eager message into and out of its cell in MPI_Isend and MPI_Wait, a
            # rendezvous one when the receiver's wait sees its request), so t_b n stays.
            # Of the latency, the ends' CPU overheads (o, LogGP) are spent inside the calls
            # in both forms too: what runs while the ranks compute is the wire latency L.
            t = models.p2p_t(c.bytes / 2.0 if k.kind == "sendrecv" else c.bytes)
            hide = min(wire, t)
            groups[(c.name, c.site)].append((r, min(hide, g), c.t1 - c.t0, g, t))
    out = []
    for (name, site), occ in groups.items():
        if len(occ) < 2:
            continue
        ranks = {o[0] for o in occ}
        k = len(occ)
        now = sum(o[4] for o in occ) / k
        hidden = sum(o[1] for o in occ) / k
        out.append(Advice(
            "overlap", "blocking %s next to computation -> non-blocking, overlapped" % name,
            "%d calls on %d rank(s), %s s of computation beside each on average%s" %
            (k, len(ranks), "%.3g" % (sum(o[3] for o in occ) / k),
             " at " + site if site else ""),
            k, sum(o[2] for o in occ) / k, now, now - hidden, k * hidden / len(ranks),
            ["%s; hidden = min(L, the computation beside it): the wire latency only, the "
             "ends' overheads and the bytes (t_b n) are spent by the ranks inside the calls "
             "either way (a progress thread, TERN_PROGRESS_THREAD=1, could hide more, on a "
             "core of its own); %s; needs the computation not to use the buffers" %
             (models.p2p_basis(), wire_how)]))
    return out


def _algorithms(trace, models, idx):
    """A collective another measured implementation does faster at this size."""
    # tern's native and MPI drivers run the same algorithms: not an alternative
    others = [im for im in models.impls if im != models.impl and
              {im, models.impl} != {"tern", "tern-mpi"}]
    if not others:
        return []
    groups = defaultdict(list)
    for inst in ta.collective_instances(trace, idx):
        k = ta.classify(inst[0].name)
        if k.op not in MODEL_OP:
            continue
        p = _p_of(inst, trace)
        n = round(_nonroot_block(inst, k.op, p))
        groups[(k.op, n, p)].append(sum(c.t1 - c.t0 for c in inst) / len(inst))
    out = []
    for (op, n, p), meas in groups.items():
        mine = models.coll(op, n, p)
        if not mine:
            continue
        best = None
        for im in others:
            t = models.coll(op, n, p, impl=im)
            if t and t[0] > 0 and (best is None or t[0] < best[1][0]):
                best = (im, t)
        if not best or best[1][0] >= 0.9 * mine[0]:
            continue
        k = len(meas)
        out.append(Advice(
            "algorithm", "%s: another algorithm or threshold (%s is faster here)" %
            (_mpi(op), best[0]),
            "%s of %s B at p=%d; try TERN_COLL_%s=<algorithm> (ternrun --info lists them)" %
            (_mpi(op), n, p, MODEL_OP[op].upper().replace("RED_SCAT_BLK", "REDUCE_SCATTER")),
            k, sum(meas) / k, mine[0], best[1][0], k * (mine[0] - best[1][0]),
            ["now: %s" % mine[1], "after: %s" % best[1][1]]))
    return out


def _cores_of(host, models):
    """The cores of `host`: this machine's usable CPUs when the trace was taken here, else
    the cpus_online the models' run recorded for that host (meta.json beside
    models.json); None when neither knows it."""
    import socket
    if host == socket.gethostname():
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return os.cpu_count()
    src = models.source or ""
    meta = os.path.join(src if os.path.isdir(src) else os.path.dirname(src), "meta.json")
    try:
        with open(meta) as f:
            m = json.load(f)
    except (OSError, ValueError):
        return None
    return m.get("cpus_online") if m.get("host") == host else None


def oversubscription(trace, models):
    """(ranks, cores, host) of the host with the most ranks per core when some host runs
    more ranks than it has cores, else None. Oversubscribed, a rank waits for a peer the
    OS has not scheduled (time slices of milliseconds) and the models, timed in tight
    loops, do not hold: bench/advice.sh measured errors of -23 % to +203 % at 3 ranks on
    2 cores against 15 % and better at 2."""
    hosts = trace.meta.get("hosts") or {}
    per = defaultdict(int)
    for h in hosts.values():
        per[h] += 1
    worst = None
    for h, n in per.items():
        c = _cores_of(h, models)
        if c and n > c and (worst is None or n / c > worst[0] / worst[1]):
            worst = (n, c, h)
    return worst


def shared_stamps(trace, gap=GAP):
    """Sends longer than `gap` whose entry is exactly the LEAVE of the call before them on
    their rank: the tracer stamped them with that LEAVE (TERN_TRACE_ADJACENT_NS, docs/
    TRACING.md) and found the gap too long afterwards, so the computation before them is
    counted in them and the phases around them look joined (a run of small sends over
    many iterations). Their number."""
    n = 0
    by = defaultdict(list)
    for c in trace.calls:
        by[c.rank].append(c)
    for cs in by.values():
        cs.sort(key=lambda c: c.t0)
        for a, b in zip(cs, cs[1:]):
            if b.t0 == a.t1 and b.t1 - b.t0 > gap and ta.classify(b.name).kind == "send":
                n += 1
    return n


def _over_line(over):
    return ("%d ranks on %s, which has %d cores: oversubscribed, ranks wait for peers the "
            "OS has not scheduled, which no model here holds; the saving is a guess (its "
            "sign and size may be wrong)" % (over[0], over[2], over[1]))


def advise(trace, models, gap=GAP, rejected=False):
    """Every suggestion for one trace, the largest predicted saving first. Alternatives
    the models say are not cheaper are left out, or with rejected=True returned as a
    second list: (advice, rejected)."""
    idx = ta.Index(trace)
    models.p = trace.nranks
    models.for_trace(trace)
    runs = _runs(trace, idx, gap)
    out = (_pairs(trace, models, idx) + _exchanges(trace, models, idx, runs) +
           _batches(trace, models, idx, runs) + _overlap(trace, models, idx, gap) +
           _algorithms(trace, models, idx))
    over = oversubscription(trace, models)
    if over:
        out = [a._replace(basis=list(a.basis) + ["does not hold: " + _over_line(over)])
               for a in out]
    out.sort(key=lambda a: -a.saving)
    good = [a for a in out if a.saving > 0]
    return (good, [a for a in out if a.saving <= 0]) if rejected else good


# ---------------------------------------------------------------- output

CHECK_FACTOR = 2.0  # the models' cost of a phase and the trace's may differ this much


def model_vs_trace(a):
    """How the models' cost of the phase as it is now compares with what the trace
    measured: now_model / now_measured, None when the trace has no time for it. Far from 1
    (bench/advice.sh found 0.03-0.1 on a loaded, oversubscribed machine), the models were
    fitted on a machine in another state than the traced run's, and the predicted saving is
    uncertain by as much."""
    if a.now_measured <= 0 or a.now_model <= 0:
        return None
    return a.now_model / a.now_measured


def check_line(a):
    """A warning when the models and the trace disagree on the phase by more than
    CHECK_FACTOR, else None."""
    r = model_vs_trace(a)
    if r is None or 1.0 / CHECK_FACTOR <= r <= CHECK_FACTOR:
        return None
    return ("the models put this phase at %s, the trace measured %s (x%.2g): the machine "
            "was not in the state the models were fitted in, and the saving is as uncertain"
            % (fmt_s(a.now_model), fmt_s(a.now_measured), r))

def fmt_s(sec):
    from .report import fmt_t
    return fmt_t(sec)


def text(trace, models, adv, wall, rejected=()):
    lines = ["ternbench advise: %d ranks, %s traced; models of %s from %s" %
             (trace.nranks, fmt_s(wall), models.impl, models.source)]
    over = oversubscription(trace, models)
    if over:
        lines.append("WARNING: " + _over_line(over))
    shared = shared_stamps(trace)
    if shared:
        lines.append("NOTE: %d sends took the previous call's LEAVE as their entry stamp "
                     "(TERN_TRACE_ADJACENT_NS) and the computation before them with it: "
                     "phases may be joined; trace with TERN_TRACE_ADJACENT_NS=0 for exact "
                     "entries" % shared)
    if not adv:
        lines.append("no alternative the models predict to be cheaper.")
    for i, a in enumerate(adv, 1):
        lines.append("")
        lines.append("%d. %s: save %s (%.1f%% of the run)" %
                     (i, a.title, fmt_s(a.saving), 100.0 * a.saving / wall if wall > 0 else 0))
        lines.append("   where:  %s" % a.where)
        lines.append("   now:    %d x %s measured (model %s); after: model %s each" %
                     (a.count, fmt_s(a.now_measured), fmt_s(a.now_model),
                      fmt_s(a.after_model)))
        for b in a.basis:
            lines.append("   basis:  %s" % b)
        chk = check_line(a)
        if chk:
            lines.append("   check:  %s" % chk)
    if rejected:
        lines.append("")
        lines.append("considered, and not cheaper by the models:")
        for a in rejected:
            lines.append("   %s (%s): %d x model %s now, %s after" %
                         (a.title, a.where, a.count, fmt_s(a.now_model), fmt_s(a.after_model)))
    return "\n".join(lines)


def to_json(adv, wall, models, rejected=(), trace=None):
    over = oversubscription(trace, models) if trace is not None else None
    return {"wall_s": wall, "impl": models.impl, "models": models.source,
            "oversubscribed": ({"ranks": over[0], "cores": over[1], "host": over[2]}
                               if over else None),
            "shared_stamps": shared_stamps(trace) if trace is not None else None,
            "advice": [dict(a._asdict(), rank=i, model_vs_trace=model_vs_trace(a))
                       for i, a in enumerate(adv, 1)],
            "rejected": [dict(a._asdict(), rank=None, model_vs_trace=model_vs_trace(a))
                         for a in rejected]}
