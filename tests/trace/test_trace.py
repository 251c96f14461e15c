#!/usr/bin/env python3
"""test_trace.py - the tracer end to end: a job run with `ternrun --trace`, its trace read
back and checked against what the program is known to do.

  test_trace.py BUILD SRC WORK known TRANSPORT   trace_known.c at 3 ranks (calls, args,
                                                 messages), the Chrome JSON, the gen check
  test_trace.py BUILD SRC WORK known TRANSPORT mono   the same with TERN_TRACE_CLOCK=mono
                                                 (time stamps from clock_gettime) and
                                                 TERN_TRACE_ADJACENT_NS=1 ms (shared stamps)
  test_trace.py BUILD SRC WORK known TRANSPORT auto BYTES   the same with TERN_TRACE_BUFFER=
                                                 BYTES: a buffer written out every few
                                                 calls, with records kept (a send's or a
                                                 receive's ENTER, a DONE) at its ends
  test_trace.py BUILD SRC WORK otf2 TRANSPORT    the same job's OTF2 archive, through
                                                 otf2-print (77 when it or tern-otf2 is missing)
  test_trace.py BUILD SRC WORK die TRANSPORT     mpi_proc_fail at 3 ranks, the last killed:
                                                 survivors' traces whole, the victim's cut
                                                 short but readable
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

BUILD, SRC, WORK, MODE, TRANSPORT = sys.argv[1:6]
CLOCK = sys.argv[6] if len(sys.argv) > 6 else "auto"  # TERN_TRACE_CLOCK
BUFFER = sys.argv[7] if len(sys.argv) > 7 else ""  # TERN_TRACE_BUFFER, when given
sys.path.insert(0, os.path.join(SRC, "tools", "ternbench"))
from ternbench import tracefile  # noqa: E402

NP = 3
ROUNDS = 5
# Calls per rank of trace_known.c (mpi_check.h's mt_init adds an MPI_Comm_rank and
# mt_done an MPI_Barrier).
EXPECT_CALLS = {"MPI_Comm_rank": 2, "MPI_Comm_size": 1, "MPI_Isend": ROUNDS + 1,
                "MPI_Recv": ROUNDS + 1, "MPI_Wait": ROUNDS + 1, "MPI_Allreduce": 3, "MPI_Bcast": 2,
                "MPI_Barrier": 2}
BIG = 32768 * 4
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def run(prog, tdir, env_extra, args=()):
    if os.path.exists(tdir):
        shutil.rmtree(tdir)
    env = dict(os.environ)
    env.pop("TERN_TRACE", None)
    if TRANSPORT != "shm":
        env["TERN_TRANSPORTS"] = "self," + TRANSPORT
    env["TERN_TRACE_CLOCK"] = CLOCK
    if BUFFER:
        env["TERN_TRACE_BUFFER"] = BUFFER
    env.update(env_extra)
    cmd = [os.path.join(BUILD, "bin", "ternrun"), "-n", str(NP), "--timeout", "60", "--trace",
           tdir, os.path.join(BUILD, "bin", prog)] + list(args)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    return p.returncode


def known():
    tdir = os.path.join(WORK, "known.%s.%s%s%s" % (TRANSPORT, CLOCK, BUFFER,
                                                   os.environ.get("TERN_TRACE_COLL_MSGS", "")))
    # mono: ticks are ns, and a pause of 2.3 s makes a gap a 32-bit delta cannot hold
    pause = 2300 if CLOCK == "mono" else 0
    env = {"TRACE_KNOWN_PAUSE_MS": str(pause)} if pause else {}
    if pause:
        # a send within 1 ms of the call before it shares that call's LEAVE stamp (after
        # two such sends from its call site): the ring's later Isends all do
        env["TERN_TRACE_ADJACENT_NS"] = "1000000"
    rc = run("trace_known", tdir, env)
    check(rc == 0, "trace_known exited %d" % rc)
    tr = tracefile.load(tdir)
    if pause:
        for r in range(NP):
            rf = tracefile.RankFile(os.path.join(tdir, "tern-trace.%d.bin" % r))
            check(rf.abs_records >= 1, "rank %d: no record with its absolute time" % r)
            cs = sorted((c for c in tr.calls if c.rank == r), key=lambda c: c.t0)
            bar = [c for c in cs if c.name == "MPI_Barrier"][-1]
            before = max(c.t1 for c in cs if c.t0 < bar.t0 and c.name == "MPI_Bcast")
            check(pause * 1e-3 <= bar.t0 - before < pause * 1e-3 + 1.0,
                  "rank %d: the pause reads %.3f s" % (r, bar.t0 - before))
    # Format 3 (compact records, merged where a call maps to its message); ticks are nanoseconds exactly when the counter is not
    # used: TERN_TRACE_CLOCK=mono, or an x86 without an invariant TSC.
    with open("/proc/cpuinfo") as f:
        flags = set(" ".join(ln for ln in f if ln.startswith("flags")).split())
    x86 = os.uname().machine in ("x86_64", "i686", "i386")
    counter = CLOCK != "mono" and (not x86 or {"constant_tsc", "nonstop_tsc"} <= flags)
    for r in range(NP):
        rf = tracefile.RankFile(os.path.join(tdir, "tern-trace.%d.bin" % r))
        check(rf.version == 4, "rank %d: format %d" % (r, rf.version))
        # Format 3 merges a call's send and leave into its ENTER, a receive's leave into
        # its DONE: every rank's Isend/Recv/Wait traffic makes such records.
        check(rf.merged > 0, "rank %d: no merged record" % r)
        # Format 4 writes a blocking receive of an eager message, entered, completed and
        # left, as one record (an Isend's is one record too when its message is handed
        # over before it returns); the ring's small messages make some on every rank.
        check(rf.p2p > 0, "rank %d: no point-to-point record" % r)
        check(rf.header["tick_is_ns"] == (not counter),
              "rank %d: tick_is_ns %s with TERN_TRACE_CLOCK=%s" % (r, rf.header["tick_is_ns"],
                                                                 CLOCK))
    check(tr.nranks == NP, "nranks %d" % tr.nranks)
    check(tr.meta["truncated_ranks"] == [], "truncated ranks %s" % tr.meta["truncated_ranks"])
    check(tr.meta["unfinished_calls"] == 0, "unfinished calls")
    for r in range(NP):
        got = collections.Counter(c.name for c in tr.calls if c.rank == r)
        check(dict(got) == EXPECT_CALLS, "rank %d calls %s" % (r, dict(got)))
    # A rank's calls follow each other: a send's entry stamp taken from the LEAVE before it
    # (TERN_TRACE_ADJACENT_NS) is never before that LEAVE.
    for r in range(NP):
        cs = [c for c in tr.calls if c.rank == r]
        for a, b in zip(cs, cs[1:]):
            check(b.t0 >= a.t1, "rank %d: %s entered before %s left" % (r, b, a))
        if pause:
            shared = sum(1 for a, b in zip(cs, cs[1:])
                         if b.name == "MPI_Isend" and b.t0 == a.t1)
            check(shared >= 1, "rank %d: no Isend took the LEAVE stamp before it" % r)
    for c in tr.calls:
        check(c.api == "mpi" and c.t1 >= c.t0, "call %s" % c)
        if c.name != "MPI_Wait":  # the one call here without a communicator argument
            check(c.comm == 0 and c.comm_size == NP, "communicator of %s" % c)
        nxt, prv = (c.rank + 1) % NP, (c.rank + NP - 1) % NP
        if c.name == "MPI_Isend":
            check((c.peer, c.tag, c.bytes) in ((nxt, 7, 100), (nxt, 9, BIG)), "isend args %s" % c)
        elif c.name == "MPI_Recv":
            check((c.peer, c.tag, c.bytes) in ((prv, 7, 100), (prv, 9, BIG)), "recv args %s" % c)
        elif c.name == "MPI_Allreduce":
            check((c.op, c.bytes, c.root) == ("MPI_SUM", 8, None), "allreduce args %s" % c)
        elif c.name == "MPI_Bcast":
            check((c.root, c.bytes) == (1, 64), "bcast args %s" % c)
        # "trace_known+0x..." or, with debug information, "file.c:line" (addr2line)
        check(c.site is not None and ("trace_known+0x" in c.site or
                                      re.match(r"(trace_known\.c|mpi_check\.h):\d+$", c.site)),
              "call site of %s" % c)
    # The ring: exactly NP * ROUNDS small and NP large messages on MPI_COMM_WORLD's
    # context, each received.
    user = [m for m in tr.messages if m.comm == 0]
    check(len(user) == NP * (ROUNDS + 1), "%d user messages" % len(user))
    for m in user:
        check(m.dst == (m.src + 1) % NP and (m.tag, m.bytes) in ((7, 100), (9, BIG)),
              "message %s" % m)
        check(m.t_recv is not None, "message never received %s" % m)
    per = collections.Counter((m.src, m.tag) for m in user)
    check(all(per[(r, 7)] == ROUNDS and per[(r, 9)] == 1 for r in range(NP)),
          "messages per sender %s" % per)
    # What the collectives sent underneath: on their own context, every one received;
    # recorded only when TERN_TRACE_COLL_MSGS=1 (else a collective is one record).
    coll = [m for m in tr.messages if m.comm != 0]
    check(all(m.comm == 1 and m.t_recv is not None for m in coll), "collective messages")
    if os.environ.get("TERN_TRACE_COLL_MSGS", "0") == "1":
        check(len(coll) >= NP, "only %d collective messages recorded" % len(coll))
    else:
        check(len(coll) == 0, "%d collective messages recorded by default" % len(coll))
    # Clocks: every rank aligned at init and finalize.
    for r in range(1, NP):
        ck = tr.meta["clock"][r]
        check(ck["offset_init_ns"] is not None and ck["offset_fini_ns"] is not None,
              "rank %d clock %s" % (r, ck))
    # Causality on the common clock, within the alignment error (half a round trip).
    slack = max(max(ck["rtt_init_ns"] or 0, ck["rtt_fini_ns"] or 0)
                for ck in tr.meta["clock"].values()) * 1e-9
    for m in user:
        check(m.t_recv + slack >= m.t_send, "received before sent: %s" % m)
    # The Chrome trace parses and has one complete event per call, one flow per message.
    out = os.path.join(WORK, "known.%s.%s.json" % (TRANSPORT, CLOCK))
    p = subprocess.run([sys.executable, "-m", "ternbench", "trace-export", tdir, "--chrome",
                        out], cwd=os.path.join(SRC, "tools", "ternbench"),
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "trace-export: %s" % p.stderr)
    with open(out) as f:
        ev = json.load(f)["traceEvents"]
    check(sum(1 for e in ev if e["ph"] == "X") == len(tr.calls), "chrome X events")
    check(sum(1 for e in ev if e["ph"] == "s") == len(tr.messages), "chrome flows")
    return tdir, tr


def otf2():
    printer = shutil.which("otf2-print")
    if printer is None or not os.path.exists(os.path.join(BUILD, "bin", "tern-otf2")):
        print("SKIP: otf2-print or tern-otf2 missing (apt-get install otf2-tools "
              "libotf2-trace-dev, then reconfigure)")
        return 77
    tdir, tr = known()
    anchor = os.path.join(tdir, "traces.otf2")
    check(os.path.exists(anchor), "ternrun --trace made no traces.otf2")
    p = subprocess.run([printer, anchor], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "otf2-print failed: %s" % p.stderr[-500:])
    check("warning" not in p.stderr, "otf2-print warns: %s" % p.stderr[-500:])
    kinds = collections.Counter(line.split()[0] for line in p.stdout.splitlines()
                                if line and line.split()[0].isupper() and
                                line.split()[0] not in ("===",))
    ncalls = NP * sum(EXPECT_CALLS.values())
    ncoll = NP * (EXPECT_CALLS["MPI_Allreduce"] + EXPECT_CALLS["MPI_Bcast"] +
                  EXPECT_CALLS["MPI_Barrier"])
    want = {"ENTER": ncalls, "LEAVE": ncalls, "MPI_SEND": NP * (ROUNDS + 1), "MPI_RECV": NP * (ROUNDS + 1),
            "MPI_COLLECTIVE_BEGIN": ncoll, "MPI_COLLECTIVE_END": ncoll}
    check(dict(kinds) == want, "otf2 records %s, want %s" % (dict(kinds), want))
    g = subprocess.run([printer, "-G", anchor], capture_output=True, text=True, timeout=60)
    check(g.returncode == 0, "otf2-print -G failed")
    for name in EXPECT_CALLS:
        check('"%s"' % name in g.stdout, "no region %s in the definitions" % name)
    return 0


def die():
    tdir = os.path.join(WORK, "die." + TRANSPORT)
    # Small buffers: the victim writes chunks before it dies (its few calls before the
    # kill fill 600 bytes only with the collectives' own messages recorded).
    rc = run("mpi_proc_fail", tdir, {"MP_FAIL_HOW": "kill", "TERN_TRACE_BUFFER": "600",
                                     "TERN_TRACE_COLL_MSGS": "1"})
    check(rc == 137, "the job exited %d, not 137 (the victim's SIGKILL)" % rc)
    tr = tracefile.load(tdir)
    victim = NP - 1
    check(tr.meta["truncated_ranks"] == [victim], "truncated %s" % tr.meta["truncated_ranks"])
    check(tr.meta["missing_ranks"] == [], "missing %s" % tr.meta["missing_ranks"])
    for r in range(NP - 1):
        rf = tracefile.RankFile(os.path.join(tdir, "tern-trace.%d.bin" % r))
        check(rf.end is not None and not rf.truncated, "rank %d's file is not whole" % r)
        # The survivor's wait on the victim returned an error (LEAVE carries the code).
        names = [n for _, n in rf.names]
        fails = [names[x[3]] for x in rf.records if x[1] == tracefile.LEAVE and x[5] != 0]
        check(any(n in ("MPI_Recv", "MPI_Wait", "MPI_Allreduce") for n in fails),
              "rank %d: no call failed: %s" % (r, fails))
        calls = [c for c in tr.calls if c.rank == r]
        check(len(calls) > 5, "rank %d has %d calls" % (r, len(calls)))
    vcalls = [c for c in tr.calls if c.rank == victim]
    check(len(vcalls) > 0, "the victim's flushed calls are not readable")
    if shutil.which("otf2-print") and os.path.exists(os.path.join(BUILD, "bin", "tern-otf2")):
        p = subprocess.run(["otf2-print", os.path.join(tdir, "traces.otf2")],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "otf2-print of the failed job's archive")
    return 0


def main():
    rc = {"known": lambda: known() and 0, "otf2": otf2, "die": die}[MODE]()
    if rc == 77:
        return 77
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("trace %s %s: ok" % (MODE, TRANSPORT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
