"""predict.py - `ternbench predict`: the fitted models at process counts and sizes this
machine does not have, with the caveat printed every time."""

import math
import os
import sys

from . import models, report
from .runner import load, parse_size


def predict(a):
    meta, rows = load(a.out)
    an = report.analyse(rows, a.stat)
    ps = [int(x) for x in a.p.split(",")]
    sizes = [parse_size(x) for x in a.sizes.split(",")]
    print("ternbench predict - from %s (%s, measured p = %s)" %
          (os.path.abspath(a.out), meta.get("host"),
           ",".join(str(p) for p in meta.get("process_counts", []))))
    print("CAVEAT: " + report.CAVEAT)
    print()
    if not a.op or a.op == "p2p":
        print("point-to-point (Hockney, p = 2):")
        print("%-10s %-9s %-9s %12s  %s" % ("impl", "pattern", "mode", "size", "T(n)"))
        for s in an["p2p"].values():
            if a.impl and s["impl"] != a.impl:
                continue
            for n in sizes:
                t = float(models.hockney_eval(s["hockney"], n))
                pw = s.get("piecewise")
                extra = ""
                if pw and len(pw["segments"]) > 1:
                    extra = "  (piecewise %s)" % report.fmt_t(float(models.piecewise_eval(pw, [n])[0]))
                print("%-10s %-9s %-9s %12s  %s%s" % (s["impl"], s["pattern"], s["mode"],
                                                    report.fmt_size(n), report.fmt_t(t), extra))
        print()
    print("collectives T(n,p) = t_s(p) + t_b(p) n, with the chosen class of each (and the "
          "other form in brackets):")
    print("%-10s %-14s %6s %12s %14s %14s  %s" % ("impl", "op", "p", "size", "T chosen",
                                                 "T other", "classes t_s / t_b"))
    for m in an["coll"].values():
        if (a.impl and m["impl"] != a.impl) or (a.op and a.op != m["op"]) or "t_s" not in m:
            continue
        if m["t_s"].get("log") is None:
            print("%-10s %-14s  one process count measured: no extrapolation in p" %
                  (m["impl"], m["op"]))
            continue
        for p in ps:
            for n in sizes:
                t = models.collective_eval(m, n, p)
                oth = {"log": "lin", "lin": "log"}
                t2 = models.collective_eval(m, n, p, oth[m["t_s"].get("pick", "lin")],
                                            oth[m["t_b"].get("pick", "lin")])
                flag = "" if t > 0 else "  (model goes negative: not usable here)"
                print("%-10s %-14s %6d %12s %14s %14s  %s / %s%s" %
                      (m["impl"], m["op"], p, report.fmt_size(n), report.fmt_t(t),
                       report.fmt_t(t2), m["t_s"]["class"], m["t_b"]["class"], flag))
    print()
    print("CAVEAT: " + report.CAVEAT)
    return 0
