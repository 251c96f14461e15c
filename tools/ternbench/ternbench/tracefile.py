"""tracefile - read a tern trace directory into a trace_model.Trace, and export it.

A trace directory holds one file per rank, tern-trace.<rank>.bin, written by libtern
when TERN_TRACE (or `ternrun --trace`) names the directory. The layout is in
docs/TRACING.md and src/trace/trace_format.h: a sequence of chunks, each a 16-byte
header (magic "TTRC", type, version, payload bytes) and its payload. A file cut short
(its rank was killed) ends at its last whole chunk and is read up to there.

  load(dir)                 -> trace_model.Trace
  chrome_json(trace)        -> dict in the Chrome trace-event format (Perfetto opens it)
  write_chrome(trace, path)
"""

import glob
import json
import os
import re
import shutil
import struct
import subprocess

from . import trace_model

CHUNK = struct.Struct("<IHHII")
HEADER = struct.Struct("<IIQqQqIIII64s256s")
RECHEAD = struct.Struct("<IIQq")  # version 1
RECHEAD2 = struct.Struct("<IIQqQII")  # version 2: + t0, units, pad
REC = struct.Struct("<QBBHiiiiiiIQQ")  # version 1: one record
UNIT = struct.Struct("<iBBHii")  # version 2: a record's first 16-byte unit
UNIT_QQ = struct.Struct("<QQ")
UNIT_QIi = struct.Struct("<QIi")
UNIT_4i = struct.Struct("<iiii")
UF_ARGS, UF_ABS, UF_KIND = 0x40, 0x80, 0x0F
UF_MSG, UF_LEAVE = 0x10, 0x20  # version 3: a merged send / leave unit follows
UNIT_QIH = struct.Struct("<QIH")  # a merged send: bytes, request, context
# version 4: a point-to-point call with its one message in 3 units; the third is
# ticks to the message, ticks from it to the LEAVE, request, context, communicator size
P2P_SEND, P2P_RECV = 6, 7
UNIT_P2P = struct.Struct("<iiIHH")
CLOCK = struct.Struct("<IIQqqq")
END = struct.Struct("<QQ")
MAGIC = 0x43525454

C_HEADER, C_NAMES, C_RECORDS, C_CLOCK, C_MAPS, C_END = 1, 2, 3, 4, 5, 6
ENTER, LEAVE, MSG_SEND, MSG_MATCH, MSG_DONE = 1, 2, 3, 4, 5
NONE = -2 ** 31
APIS = {1: "native", 2: "mpi", 3: "shmem", 4: "conv"}
MPI_OPS = ["MPI_OP_NULL", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND",
           "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC",
           "MPI_REPLACE", "MPI_NO_OP"]
TERN_OPS = ["TERN_SUM", "TERN_PROD", "TERN_MIN", "TERN_MAX", "TERN_LAND", "TERN_LOR",
            "TERN_LXOR", "TERN_BAND", "TERN_BOR", "TERN_BXOR", "TERN_MINLOC", "TERN_MAXLOC"]


class TraceError(Exception):
    """A directory or file that is not a tern trace."""


class RankFile:
    """What one rank's file holds, still in its own ticks."""

    def __init__(self, path):
        self.path = path
        self.header = None
        self.version = None  # of the format (the header chunk's)
        self.abs_records = 0  # version 2 records that carry their absolute time
        self.merged = 0  # version 3 records that carry a merged send or leave
        self.p2p = 0  # version 4 records of a whole point-to-point call
        self.names = []  # (api, name) by function id
        self.records = []  # (tick, kind, api, fn, peer, tag, comm, csize, root, op, bytes, x)
        self.pairs = []  # (tick, ns) read together
        self.clocks = {}  # phase -> (ns, offset_ns, rtt_ns, ok)
        self.maps = []  # (lo, hi, offset, path)
        self.end = None
        self.truncated = False
        self._read()

    def _read(self):
        with open(self.path, "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            if len(data) - pos < CHUNK.size:
                self.truncated = True
                break
            magic, ctype, version, nbytes, _ = CHUNK.unpack_from(data, pos)
            if magic != MAGIC:
                if self.header is None:
                    raise TraceError("%s: not a tern trace file" % self.path)
                self.truncated = True
                break
            body = data[pos + CHUNK.size:pos + CHUNK.size + nbytes]
            if len(body) < nbytes:
                self.truncated = True
                break
            pos += CHUNK.size + nbytes
            self._chunk(ctype, version, body)
        if self.header is None:
            raise TraceError("%s: no header chunk" % self.path)
        if self.end is None:
            self.truncated = True

    def _chunk(self, ctype, version, body):
        if ctype == C_HEADER:
            v = HEADER.unpack_from(body)
            self.header = {
                "rank": v[0], "size": v[1], "pid": v[2], "realtime_ns": v[3],
                "start_tick": v[4], "start_ns": v[5], "tick_is_ns": bool(v[6]),
                "rec_bytes": v[7], "version": "%d.%d" % (v[8], v[9]),
                "host": v[10].split(b"\0")[0].decode(errors="replace"),
                "exe": v[11].split(b"\0")[0].decode(errors="replace")}
            self.version = version
            want = UNIT.size if version >= 2 else REC.size
            if self.header["rec_bytes"] != want:
                raise TraceError("%s: records of %d bytes, this reader knows %d (format %d)" %
                                 (self.path, self.header["rec_bytes"], want, version))
            self.pairs.append((v[4], v[5]))
        elif ctype == C_NAMES:
            for line in body.decode().splitlines():
                api, name = line.split(" ", 1)
                self.names.append((APIS.get(int(api), "?"), name))
        elif ctype == C_RECORDS and version >= 2:
            _tid, n, tick, ns, t0, units, _ = RECHEAD2.unpack_from(body)
            self.pairs.append((tick, ns))
            recs = _decode(body, RECHEAD2.size, units, t0, self)
            if len(recs) != n:
                raise TraceError("%s: a records chunk is inconsistent" % self.path)
            self.records.extend(recs)
        elif ctype == C_RECORDS:
            _tid, n, tick, ns = RECHEAD.unpack_from(body)
            self.pairs.append((tick, ns))
            off = RECHEAD.size
            for i in range(n):
                self.records.append(REC.unpack_from(body, off + i * REC.size))
        elif ctype == C_CLOCK:
            phase, ok, tick, ns, offset, rtt = CLOCK.unpack_from(body)
            self.pairs.append((tick, ns))
            self.clocks[phase] = (ns, offset, rtt, bool(ok))
        elif ctype == C_MAPS:
            for line in body.decode(errors="replace").splitlines():
                lo, hi, offset, path = line.split(" ", 3)
                self.maps.append((int(lo, 16), int(hi, 16), int(offset, 16), path))
        elif ctype == C_END:
            self.end = END.unpack_from(body)

    def tick_to_ns(self):
        """A function from this rank's ticks to its monotonic nanoseconds: the line
        through the first and last (tick, ns) pairs the file kept."""
        if self.header["tick_is_ns"] or len(self.pairs) < 2:
            t0, n0 = self.pairs[0]
            return lambda t: n0 + (t - t0) if not self.header["tick_is_ns"] else t
        (t0, n0), (t1, n1) = min(self.pairs), max(self.pairs)
        rate = (n1 - n0) / float(t1 - t0) if t1 > t0 else 1.0
        return lambda t: n0 + (t - t0) * rate

    def offset(self):
        """rank 0's clock minus this rank's, as a function of this rank's ns: linear
        between the offsets measured at init and finalize (drift), else constant."""
        init = self.clocks.get(0)
        fini = self.clocks.get(1)
        if init is None or not init[3]:
            return lambda ns: 0.0
        if fini is None or not fini[3] or fini[0] == init[0]:
            return lambda ns: float(init[1])
        slope = (fini[1] - init[1]) / float(fini[0] - init[0])
        return lambda ns: init[1] + (ns - init[0]) * slope


def _decode(body, off, units, t, rf=None):
    """The version 2, 3 or 4 records of a chunk (16-byte units, delta times from t) as
    version 1 tuples: (tick, kind, api, fn, peer, tag, comm, csize, root, op, pad, bytes,
    x). A version 3 record with a merged send or leave gives two or three tuples, a
    version 4 point-to-point record three (ENTER, its message, LEAVE)."""
    out = []
    end = off + units * UNIT.size
    if end > len(body):
        raise TraceError("a records chunk is shorter than its units")
    while off < end:
        dt, kind, nu, fn, a, b = UNIT.unpack_from(body, off)
        if nu < 1 or nu > 6 or off + nu * UNIT.size > end:
            raise TraceError("a record of %d units" % nu)
        x = off + UNIT.size
        if kind & UF_ABS:
            t = UNIT_QQ.unpack_from(body, x)[0]
            x += UNIT.size
            if rf is not None:
                rf.abs_records += 1
        else:
            t += dt
        k = kind & UF_KIND
        if k in (P2P_SEND, P2P_RECV):
            if kind != k or nu != 3:
                raise TraceError("a point-to-point record of %d units, flags %#x" % (nu, kind))
            nbytes, site = UNIT_QQ.unpack_from(body, x)
            mdt, ldt, req, ctx, csize = UNIT_P2P.unpack_from(body, x + UNIT.size)
            out.append((t, ENTER, 0, fn, a, b, ctx, csize, NONE, NONE, 0, nbytes, site))
            t += mdt
            out.append((t, MSG_SEND if k == P2P_SEND else MSG_DONE, 0, 0, a, b, ctx, NONE,
                        NONE, 0, 0, nbytes, req))
            t += ldt
            out.append((t, LEAVE, 0, fn, NONE, 0, NONE, NONE, NONE, NONE, 0, 0, 0))
            if rf is not None:
                rf.p2p += 1
            off += nu * UNIT.size
            continue
        if k == LEAVE:
            out.append((t, k, 0, fn, NONE, a, NONE, NONE, NONE, NONE, 0, 0, 0))
        elif k == ENTER:
            nbytes, site = UNIT_QQ.unpack_from(body, x)
            x += UNIT.size
            comm = csize = root = op = NONE
            if kind & UF_ARGS:
                comm, csize, root, op = UNIT_4i.unpack_from(body, x)
                x += UNIT.size
            out.append((t, k, 0, fn, a, b, comm, csize, root, op, 0, nbytes, site))
            if kind & UF_MSG:
                mbytes, req, ctx = UNIT_QIH.unpack_from(body, x)
                x += UNIT.size
                out.append((t, MSG_SEND, 0, 0, a, b, ctx, NONE, NONE, 0, 0, mbytes, req))
        elif MSG_SEND <= k <= MSG_DONE:
            nbytes, req, err = UNIT_QIi.unpack_from(body, x)
            x += UNIT.size
            out.append((t, k, 0, 0, a, b, fn, NONE, NONE, err, 0, nbytes, req))
        else:
            raise TraceError("a record of unknown kind %d" % k)
        if kind & (UF_MSG | UF_LEAVE) and rf is not None:
            rf.merged += 1
        if kind & UF_LEAVE:
            ldt, _, _, lfn, rc, _ = UNIT.unpack_from(body, x)
            x += UNIT.size
            t += ldt
            out.append((t, LEAVE, 0, lfn, NONE, rc, NONE, NONE, NONE, NONE, 0, 0, 0))
        if x != off + nu * UNIT.size:
            raise TraceError("a record of %d units holds %d" % (nu, (x - off) // UNIT.size))
        off += nu * UNIT.size
    return out


def _none(v):
    return None if v == NONE else v


def _sites(files):
    """{(rank, address): "file:line" or "binary+0xoffset"} for every call site."""
    want = {}
    for rank, rf in files.items():
        for r in rf.records:
            if r[1] == ENTER and r[12]:
                want.setdefault(rank, set()).add(r[12])
    out, by_bin = {}, {}
    for rank, addrs in want.items():
        maps = files[rank].maps
        for a in addrs:
            for lo, hi, off, path in maps:
                if lo <= a < hi:
                    rel = a - lo + off
                    out[(rank, a)] = "%s+0x%x" % (os.path.basename(path), rel)
                    by_bin.setdefault(path, {})[(rank, a)] = rel - 1  # the call, not after it
                    break
    a2l = shutil.which("addr2line")
    if a2l:
        for path, keys in by_bin.items():
            if not os.path.exists(path):
                continue
            items = list(keys.items())
            try:
                res = subprocess.run([a2l, "-e", path] + ["0x%x" % v for _, v in items],
                                     capture_output=True, text=True, timeout=20)
            except (OSError, subprocess.SubprocessError):
                continue
            lines = res.stdout.splitlines()
            if len(lines) != len(items):
                continue
            for (key, _), line in zip(items, lines):
                m = re.match(r"(.+):(\d+)", line.strip())
                if m and not line.startswith("??") and m.group(2) != "0":
                    out[key] = "%s:%s" % (os.path.basename(m.group(1)), m.group(2))
    return out


def _op_name(api, op):
    if op is None:
        return None
    if api == "mpi":
        return MPI_OPS[op] if 0 <= op < len(MPI_OPS) else "user"
    if api == "native":
        return TERN_OPS[op] if 0 <= op < len(TERN_OPS) else "user"
    return str(op)


def load(directory):
    """Read every tern-trace.<rank>.bin of `directory` into a trace_model.Trace."""
    paths = glob.glob(os.path.join(directory, "tern-trace.*.bin"))
    if not paths:
        raise TraceError("%s: no tern-trace.<rank>.bin files" % directory)
    files = {}
    for p in paths:
        rf = RankFile(p)
        files[rf.header["rank"]] = rf
    nranks = max(rf.header["size"] for rf in files.values())
    # The common clock: rank 0's, zero when tracing started there (its header, written
    # before it aligned the others' clocks, so every other rank starts later).
    ref = files.get(0) or files[min(files)]
    zero = ref.header["start_ns"]
    conv = {}
    for rank, rf in files.items():
        t2n, off = rf.tick_to_ns(), rf.offset()

        def common(t, t2n=t2n, off=off):
            ns = t2n(t)
            return (ns + off(ns) - zero) * 1e-9
        conv[rank] = common
    sites = _sites(files)
    tr = trace_model.Trace(nranks=nranks)
    tr.meta = {"ranks_found": sorted(files), "truncated_ranks": sorted(
        r for r, f in files.items() if f.truncated),
        "missing_ranks": [r for r in range(nranks) if r not in files],
        "program": ref.header["exe"], "tern_version": ref.header["version"],
        "hosts": {r: f.header["host"] for r, f in files.items()},
        "pids": {r: f.header["pid"] for r, f in files.items()},
        "clock": {r: {"offset_init_ns": f.clocks.get(0, (0, None))[1],
                      "offset_fini_ns": f.clocks.get(1, (0, None))[1],
                      "rtt_init_ns": f.clocks.get(0, (0, 0, None))[2],
                      "rtt_fini_ns": f.clocks.get(1, (0, 0, None))[2]}
                  for r, f in files.items()},
        "unfinished_calls": 0}
    sends = {}  # (src, dst, ctx, tag) -> [Message] in send order
    matches = []  # (dst, t_match, key, req, bytes)
    t_end = 0.0
    for rank, rf in sorted(files.items()):
        c = conv[rank]
        recs = sorted(rf.records, key=lambda r: r[0])
        stack = []
        pending = {}
        last = c(recs[-1][0]) if recs else 0.0
        t_end = max(t_end, last)
        for r in recs:
            (tick, kind, _api, fn, peer, tag, comm, csize, root, op, _pad, nbytes, x) = r
            t = c(tick)
            if kind == ENTER:
                api, name = rf.names[fn] if fn < len(rf.names) else ("?", "fn%d" % fn)
                call = trace_model.Call(
                    rank=rank, api=api, name=name, t0=t, t1=t,
                    peer=peer if peer != NONE and peer >= 0 else None,
                    tag=_none(tag), comm=_none(comm), comm_size=_none(csize),
                    root=_none(root), bytes=nbytes, op=_op_name(api, _none(op)),
                    site=sites.get((rank, x)))
                stack.append((fn, call))
            elif kind == LEAVE:
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i][0] == fn:
                        call = stack.pop(i)[1]
                        call.t1 = t
                        tr.calls.append(call)
                        break
            elif kind == MSG_SEND:
                m = trace_model.Message(src=rank, dst=peer, t_send=t, t_recv=None,
                                        bytes=nbytes, tag=tag, comm=comm)
                sends.setdefault((rank, peer, comm, tag), []).append(m)
            elif kind == MSG_MATCH:
                rec = [rank, t, (peer, rank, comm, tag), nbytes, None]
                matches.append(rec)
                pending[x] = rec
            elif kind == MSG_DONE:
                rec = pending.pop(x, None)
                if rec is not None and op == 0:
                    rec[4] = t
                elif rec is None and op == 0:  # eager: matched and done at once
                    matches.append([rank, t, (peer, rank, comm, tag), nbytes, t])
        for _, call in stack:  # entered, never left: the rank died inside
            call.t1 = last
            tr.calls.append(call)
            tr.meta["unfinished_calls"] += 1
    # Pair receives with sends: messages between two ranks on one (context, tag) are
    # matched in the order they were sent (MPI's non-overtaking rule).
    matches.sort(key=lambda m: m[1])
    used = {}
    for dst, _t, key, _nbytes, t_done in matches:
        lst = sends.get(key, [])
        i = used.get(key, 0)
        if i < len(lst):
            lst[i].t_recv = t_done
            used[key] = i + 1
    for lst in sends.values():
        tr.messages.extend(lst)
    tr.calls.sort(key=lambda c: (c.t0, c.rank))
    tr.messages.sort(key=lambda m: m.t_send)
    tr.t_start = 0.0
    tr.t_end = max([t_end] + [c.t1 for c in tr.calls])
    return tr


def chrome_json(tr):
    """The trace in the Chrome trace-event format: one process per rank, each call a
    complete event ("X"), each received message a flow arrow from send to receipt."""
    ev = []
    for r in range(tr.nranks):
        ev.append({"ph": "M", "name": "process_name", "pid": r, "tid": 0,
                   "args": {"name": "rank %d" % r}})
        ev.append({"ph": "M", "name": "process_sort_index", "pid": r, "tid": 0,
                   "args": {"sort_index": r}})
    for c in tr.calls:
        args = {k: v for k, v in (("peer", c.peer), ("tag", c.tag), ("comm", c.comm),
                                  ("comm_size", c.comm_size), ("root", c.root),
                                  ("bytes", c.bytes), ("op", c.op), ("site", c.site))
                if v is not None}
        ev.append({"ph": "X", "name": c.name, "cat": c.api, "pid": c.rank, "tid": 0,
                   "ts": c.t0 * 1e6, "dur": max(0.0, (c.t1 - c.t0) * 1e6), "args": args})
    for i, m in enumerate(tr.messages):
        if m.t_recv is None:
            continue
        common = {"name": "message", "cat": "msg", "id": i, "tid": 0}
        ev.append(dict(common, ph="s", pid=m.src, ts=m.t_send * 1e6,
                       args={"bytes": m.bytes, "tag": m.tag, "comm": m.comm}))
        ev.append(dict(common, ph="f", bp="e", pid=m.dst, ts=m.t_recv * 1e6))
    return {"traceEvents": ev, "displayTimeUnit": "ns",
            "otherData": {"program": tr.meta.get("program"), "nranks": tr.nranks}}


def write_chrome(tr, path):
    with open(path, "w") as f:
        json.dump(chrome_json(tr), f)


def export_main(a):
    """`ternbench trace-export DIR [--chrome FILE]`: print a summary, write the JSON."""
    try:
        tr = load(a.dir)
    except (TraceError, OSError) as e:
        print("ternbench: %s" % e)
        return 2
    print("trace %s: %d ranks, %d calls, %d messages, %.6f s%s" % (
        a.dir, tr.nranks, len(tr.calls), len(tr.messages), tr.t_end,
        (", truncated ranks %s" % tr.meta["truncated_ranks"]) if tr.meta["truncated_ranks"]
        else ""))
    if a.chrome:
        write_chrome(tr, a.chrome)
        print("ternbench: wrote %s (open it in https://ui.perfetto.dev)" % a.chrome)
    return 0
