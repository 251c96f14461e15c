"""compare.py - `ternbench compare`: the same MPI driver source built with terncc and with
each other MPI's wrapper, each run with its own launcher in the same session, then one
table of ratios (other / tern-mpi time: above 1, tern is faster)."""

import csv
import json
import os

from . import report, runner

BASE = "tern-mpi"


def _pick(rows, impl, job, pattern, mode, p, size, col="t_med_us"):
    for r in rows:
        if (r["impl"] == impl and r["job"] == job and r["pattern"] == pattern and
                r["mode"] == mode and r["nprocs"] == p and r["bytes"] == size):
            return r[col]
    return None


def table(rows, impls):
    """(head, body, records) of the ratio table: one line per metric."""
    others = [im for im in impls if im != BASE]
    metrics = []
    p2p_sizes = sorted({r["bytes"] for r in rows if r["job"] == "p2p" and r["impl"] == BASE})
    want = [s for s in (8, 1024, 65536, 1 << 20, 16 << 20, 64 << 20) if s in p2p_sizes]
    if p2p_sizes and p2p_sizes[-1] not in want:
        want.append(p2p_sizes[-1])
    for pat in ("pingpong", "stream", "bibw"):
        for s in want:
            metrics.append(("%s %s" % (pat, report.fmt_size(s)), "p2p", pat, "standard", 2, s))
    ps = sorted({r["nprocs"] for r in rows if r["job"] == "coll" and r["impl"] == BASE})
    csizes = sorted({r["bytes"] for r in rows if r["job"] == "coll" and r["impl"] == BASE
                     and r["pattern"] != "barrier"})
    for p in ([ps[0], ps[-1]] if len(ps) > 1 else ps):
        metrics.append(("barrier p=%d" % p, "coll", "barrier", "coll", p, 0))
        for op in runner.COLL_OPS[1:]:
            for s in ([csizes[0], csizes[-1]] if len(csizes) > 1 else csizes):
                metrics.append(("%s %s p=%d" % (op, report.fmt_size(s), p), "coll", op, "coll",
                                p, s))
    head = ["metric"] + ["%s (us)" % im for im in impls] + ["%s/%s" % (o, BASE) for o in others]
    body, recs = [], []
    for name, job, pat, mode, p, s in metrics:
        vals = {im: _pick(rows, im, job, pat, mode, p, s) for im in impls}
        if vals.get(BASE) is None:
            continue
        ratios = {o: (vals[o] / vals[BASE]) if vals.get(o) and vals[BASE] > 0 else None
                  for o in others}
        body.append([name] + ["%.3f" % vals[im] if vals[im] is not None else "n/a"
                              for im in impls] +
                    ["%.2f" % ratios[o] if ratios[o] else "n/a" for o in others])
        recs.append({"metric": name, "times_us": vals, "ratios": ratios})
    return head, body, recs


def worst(rows, impls):
    """Per other implementation and point-to-point pattern: the smallest ratio (other /
    tern-mpi time) over every size measured, and where. Below 1, tern is slower there."""
    out = []
    sizes = sorted({r["bytes"] for r in rows if r["job"] == "p2p" and r["impl"] == BASE})
    for o in [im for im in impls if im != BASE]:
        for pat in ("pingpong", "stream", "bibw"):
            best = None
            for n in sizes:
                b = _pick(rows, BASE, "p2p", pat, "standard", 2, n)
                t = _pick(rows, o, "p2p", pat, "standard", 2, n)
                if b and t and b > 0:
                    if best is None or t / b < best[0]:
                        best = (t / b, n)
            if best:
                out.append({"other": o, "pattern": pat, "worst_ratio": best[0],
                            "at_bytes": best[1]})
    return out


def doubling(rows, impl=BASE, slack=1.0):
    """Sizes where doubling the message more than doubles the time (a protocol cliff)."""
    out = []
    for pat in ("pingpong", "stream", "bibw"):
        t = {r["bytes"]: r["t_med_us"] for r in rows if r["impl"] == impl and
             r["job"] == "p2p" and r["pattern"] == pat and r["mode"] == "standard"}
        for n in sorted(t):
            if n >= 1 and 2 * n in t and t[n] > 0 and t[2 * n] > 2 * slack * t[n]:
                out.append({"pattern": pat, "bytes": n, "t": t[n], "t2": t[2 * n]})
    return out


def block_from_file(path):
    with open(path) as f:
        c = json.load(f)

    def block(d):
        d.h(2, "Comparison: the same MPI driver, built with each MPI's wrapper")
        d.p("Times are the median per operation (us); ratio = other / %s, above 1 means tern "
            "is faster. %s" % (BASE, c.get("note", "")))
        d.table(c["head"], c["body"])
    return block


def compare(a, tree, with_list):
    impls = ([] if a.no_native else ["tern"]) + [BASE] + [w for w in with_list if w != BASE]
    load = getattr(a, "load", 0) or 0
    hogs = runner.busy(load)
    try:
        rc = runner.run(a, tree, impls)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    if rc != 0:
        return rc
    meta, rows = runner.load(a.out)
    present = [im for im in impls if any(r["impl"] == im for r in rows)]
    # resolve() may have named a path-given MPI; keep the run's own names
    present += sorted({r["impl"] for r in rows} - set(present))
    head, body, recs = table(rows, present)
    note = ("Load average %s before, %s after; %d online CPUs%s%s." %
            (meta.get("load_before"), meta.get("load_after"), meta.get("cpus_online", 0),
             "; p above that is oversubscribed" if meta.get("oversubscribed_process_counts")
             else "", "; %d busy processes ran beside it (--load)" % load if load else ""))
    worst_rows = worst(rows, present)
    cliffs = {im: doubling(rows, im) for im in present}
    with open(os.path.join(a.out, "compare.json"), "w") as f:
        json.dump({"head": head, "body": body, "records": recs, "note": note,
                   "worst": worst_rows, "doubling": cliffs, "load": load}, f, indent=1)
    with open(os.path.join(a.out, "compare.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(body)
    report.write(a.out, a.stat, block_from_file(os.path.join(a.out, "compare.json")))
    widths = [max(len(str(r[i])) for r in [head] + body) for i in range(len(head))]
    for r in [head] + body:
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                        for i, (c, w) in enumerate(zip(r, widths))))
    print(note)
    if worst_rows:
        print("\nworst ratio per setting (other / %s over every size; below 1 tern is slower):"
              % BASE)
        for w in worst_rows:
            print("  %-10s %-9s %6.2f  at %s" % (w["other"], w["pattern"], w["worst_ratio"],
                                                report.fmt_size(w["at_bytes"])))
    for im, cl in cliffs.items():
        for c in cl:
            print("  %s %s: %s -> %s takes %.2fx the time (more than double)" %
                  (im, c["pattern"], report.fmt_size(c["bytes"]), report.fmt_size(2 * c["bytes"]),
                   c["t2"] / c["t"]))
    print("ternbench: report in %s (report.md, report.html), table in compare.csv" % a.out)
    return 0
