"""report.py - `ternbench report` and `compare`: models from a run's rows, then markdown,
a self-contained HTML page (PNG plots embedded as base64), models.json and models.csv.

The report is built once as a list of blocks (heading, text, table, figure) and rendered
twice, so the markdown and the HTML always say the same thing.
"""

import base64
import csv
import html
import io
import json
import math
import os

import numpy as np

from . import models
from .runner import COLL_OPS, load

CLASSIC = [  # the six classic patterns, as measured by the drivers
    ("one-word latency", "pingpong", "8-byte ping-pong, one way"),
    ("broadcast", "bcast", "one message from the root to all"),
    ("one-to-all", "scatter", "personalised: a different block to each process"),
    ("all-to-one", "gather", "a block from each process to the root"),
    ("all-to-all", "alltoall", "a different block between every pair"),
    ("global reduction", "allreduce", "sum of doubles, result everywhere"),
]

CAVEAT = ("Predictions extrapolate fitted models beyond the measured process counts and "
          "sizes: they assume the same algorithms, the same protocol for large messages and "
          "a network that behaves like this machine's transport at scale (no contention, no "
          "topology, no other jobs). Treat them as planning estimates, not measurements.")


# ---------------------------------------------------------------- analysis

def analyse(rows, stat="med"):
    """All the models of one run. rows: typed result rows. Returns a JSON-able dict."""
    col = "t_%s_us" % stat
    impls = sorted({r["impl"] for r in rows}, key=_impl_order)
    out = {"stat": stat, "impls": impls, "p2p": {}, "coll": {}, "barrier": {}, "t_c": {},
           "aggregate": {}}
    # point-to-point series: (impl, pattern, mode)
    series = {}
    for r in rows:
        if r["job"].startswith("p2p"):
            # measured with more than 2 processes started (--p2p-np, job "p2p@pP"): a
            # series of its own, mode "standard@pP"
            at = r["job"].partition("@")[2]
            series.setdefault((r["impl"], r["pattern"], r["mode"] + ("@" + at if at else "")),
                              []).append(
                (r["bytes"], r[col] * 1e-6))
    for (im, pat, mode), pts in sorted(series.items()):
        pts.sort()
        n = np.array([p[0] for p in pts], float)
        t = np.array([p[1] for p in pts], float)
        if len(n) < 3 or np.any(t <= 0):
            continue
        key = "%s/%s/%s" % (im, pat, mode)
        out["p2p"][key] = {"impl": im, "pattern": pat, "mode": mode, "n": n.tolist(),
                           "t": t.tolist(), "hockney": models.hockney(n, t),
                           "piecewise": models.piecewise(n, t) if len(n) >= 6 else None}
    # collectives: (impl, op) -> {p: (n, t)}
    coll = {}
    for r in rows:
        if r["job"] == "coll":
            coll.setdefault((r["impl"], r["pattern"]), {}).setdefault(r["nprocs"], []).append(
                (r["bytes"], r[col] * 1e-6))
    for (im, op), byp in sorted(coll.items()):
        key = "%s/%s" % (im, op)
        if op == "barrier":
            ps = sorted(byp)
            out["barrier"][key] = {"impl": im, "p": ps,
                                   "t": [min(t for _, t in byp[p]) for p in ps],
                                   "scaling": models.scaling(ps, [byp[p][0][1] for p in ps])}
            continue
        data = {p: (np.array([x[0] for x in sorted(v)], float),
                    np.array([x[1] for x in sorted(v)], float)) for p, v in byp.items()}
        m = models.collective(data)
        m.update({"impl": im, "op": op,
                  "data": {str(p): {"n": d[0].tolist(), "t": d[1].tolist()}
                           for p, d in sorted(data.items())}})
        out["coll"][key] = m
        # aggregated bandwidth (measured peak) and the asymptotic/specific ones per p
        agg = {"peak_bw": 0.0, "peak_at": None, "per_p": {}}
        for p, (n, t) in sorted(data.items()):
            f = models.delivered_factor(op, p)
            bw = f * n / t
            k = int(np.argmax(bw))
            if bw[k] > agg["peak_bw"]:
                agg["peak_bw"], agg["peak_at"] = float(bw[k]), [int(n[k]), int(p)]
            h = m["per_p"].get(str(p))
            if h:
                agg["per_p"][str(p)] = {
                    "R_inf": f / h["t_b"] if h["t_b"] > 0 else math.inf,
                    "pi_agg": f / h["t_s"] if h["t_s"] > 0 else math.inf}
        if agg["per_p"]:
            fin = [v["pi_agg"] for v in agg["per_p"].values() if math.isfinite(v["pi_agg"])]
            finr = [v["R_inf"] for v in agg["per_p"].values() if math.isfinite(v["R_inf"])]
            agg["peak_R_inf"] = max(finr) if finr else None
            agg["peak_pi_agg"] = max(fin) if fin else None
        out["aggregate"][key] = agg
    # computation time per byte of the reduction: real sum against the no-op operation
    for im in impls:
        for real in ("reduce", "allreduce"):
            a = out["coll"].get("%s/%s" % (im, real))
            b = out["coll"].get("%s/%s_noop" % (im, real))
            if not a or not b:
                continue
            per_p = {}
            for p in a["per_p"]:
                if p not in b["per_p"]:
                    continue
                da, db = a["data"][p], b["data"][p]
                direct = [(ta - tb) / n for n, ta, tb in zip(da["n"], da["t"], db["t"])
                          if n == max(da["n"])]
                per_p[p] = {"t_c_fit": a["per_p"][p]["t_b"] - b["per_p"][p]["t_b"],
                            "t_c_largest": direct[0] if direct else None,
                            "largest": max(da["n"])}
            out["t_c"]["%s/%s" % (im, real)] = per_p
    return out


def _impl_order(name):
    order = ["tern", "tern-mpi", "openmpi", "mpich"]
    return (order.index(name) if name in order else len(order), name)


# ---------------------------------------------------------------- formatting

def fmt_t(sec):
    if sec is None or not math.isfinite(sec):
        return "n/a"
    us = sec * 1e6
    if abs(us) >= 1e4:
        return "%.1f ms" % (us / 1e3)
    if abs(us) >= 100:
        return "%.0f us" % us
    if abs(us) >= 1:
        return "%.2f us" % us
    return "%.3f us" % us


def fmt_bw(bps):
    if bps is None or not math.isfinite(bps) or bps <= 0:
        return "n/a"
    return "%.2f GB/s" % (bps / 1e9) if bps >= 1e8 else "%.1f MB/s" % (bps / 1e6)


def fmt_size(b):
    b = int(b)
    for unit, m in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= m and b % m == 0:
            return "%d %s" % (b // m, unit)
    return "%d B" % b


def fmt_n(x):
    if x is None or not math.isfinite(x):
        return "n/a"
    return fmt_size(round(x)) if x >= 0 else "%.0f B" % x


def fmt_r2(x):
    return "n/a" if x is None else "%.3f" % x


# ---------------------------------------------------------------- blocks

class Doc:
    def __init__(self):
        self.blocks = []

    def h(self, level, text):
        self.blocks.append(("h", level, text))

    def p(self, text):
        self.blocks.append(("p", text))

    def table(self, head, rows):
        self.blocks.append(("table", head, rows))

    def fig(self, png, caption):
        self.blocks.append(("fig", png, caption))

    def markdown(self, fig_dir_rel):
        out = []
        k = 0
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2] + "\n")
            elif b[0] == "p":
                out.append(b[1] + "\n")
            elif b[0] == "table":
                out.append("| " + " | ".join(b[1]) + " |")
                out.append("|" + "---|" * len(b[1]))
                for r in b[2]:
                    out.append("| " + " | ".join(str(c) for c in r) + " |")
                out.append("")
            elif b[0] == "fig":
                k += 1
                out.append("![%s](%s/fig%d.png)\n" % (b[2], fig_dir_rel, k))
        return "\n".join(out)

    def figures(self):
        return [b[1] for b in self.blocks if b[0] == "fig"]

    def html(self, title):
        out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title>" %
               html.escape(title),
               "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;"
               "padding:0 1em;color:#222}table{border-collapse:collapse;margin:1em 0;"
               "font-size:90%}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}"
               "th{background:#eee}td:first-child{text-align:left}img{max-width:100%}"
               "figcaption{font-size:90%;color:#555}</style></head><body>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append("<h%d>%s</h%d>" % (b[1], html.escape(b[2]), b[1]))
            elif b[0] == "p":
                out.append("<p>%s</p>" % html.escape(b[1]).replace("`", ""))
            elif b[0] == "table":
                out.append("<table><tr>%s</tr>" % "".join("<th>%s</th>" % html.escape(c)
                                                         for c in b[1]))
                for r in b[2]:
                    out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(str(c))
                                                       for c in r))
                out.append("</table>")
            elif b[0] == "fig":
                out.append("<figure><img alt='%s' src='data:image/png;base64,%s'>"
                           "<figcaption>%s</figcaption></figure>" %
                           (html.escape(b[2]), base64.b64encode(b[1]).decode(),
                            html.escape(b[2])))
        out.append("</body></html>")
        return "\n".join(out)


# ---------------------------------------------------------------- plots

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    _plt().close(fig)
    return buf.getvalue()


COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]


def _color(impls, im):
    return COLORS[impls.index(im) % len(COLORS)] if im in impls else "k"


def plot_p2p(an):
    plt = _plt()
    impls = an["impls"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    styles = {"pingpong": "-", "stream": "--", "bibw": ":"}
    for key, s in an["p2p"].items():
        n = np.array(s["n"])
        t = np.array(s["t"])
        c = _color(impls, s["impl"])
        lab = "%s %s%s" % (s["impl"], s["pattern"], " sync" if s["mode"] == "sync" else "")
        mk = "s" if s["mode"] == "sync" else "o"
        if s["pattern"] == "pingpong":
            x = np.maximum(n, 1)
            ax1.loglog(x, t * 1e6, mk, ms=3, color=c, label=lab,
                       alpha=0.6 if s["mode"] == "sync" else 1)
            xs = np.logspace(0, math.log10(max(n.max(), 2)), 200)
            if s["mode"] == "standard":
                pw = s.get("piecewise")
                if pw and len(pw["segments"]) > 1:
                    ax1.loglog(xs, models.piecewise_eval(pw, xs) * 1e6, ":", color=c, lw=1)
                ax1.loglog(xs, np.maximum(models.hockney_eval(s["hockney"], xs), 1e-9) * 1e6,
                           "--", color=c, lw=1, label="%s Hockney fit" % s["impl"])
        pos = n > 0
        ax2.semilogx(n[pos], n[pos] / t[pos] / 1e9, styles.get(s["pattern"], "-"),
                     marker=mk, ms=2, color=c, label=lab)
    ax1.set_xlabel("message size (bytes)")
    ax1.set_ylabel("one-way time (us)")
    ax1.set_title("ping-pong latency (dashed: Hockney, dotted: piecewise)")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=7)
    ax2.set_xlabel("message size (bytes)")
    ax2.set_ylabel("GB/s (1e9 B/s)")
    ax2.set_title("bandwidth (bibw: both directions)")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=7)
    return _png(fig)


def plot_coll_p(an):
    """Time vs p at the smallest and largest size, model curves through them."""
    plt = _plt()
    impls = an["impls"]
    ops = [op for op in COLL_OPS if any(v["op"] == op for v in an["coll"].values())]
    ops = ["barrier"] + ops if an["barrier"] else ops
    cols = 4
    rows = max(1, math.ceil(len(ops) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(15, 3.3 * rows), squeeze=False)
    for i, op in enumerate(ops):
        ax = axes[i // cols][i % cols]
        for im in impls:
            c = _color(impls, im)
            if op == "barrier":
                b = an["barrier"].get("%s/barrier" % im)
                if not b:
                    continue
                ax.plot(b["p"], np.array(b["t"]) * 1e6, "o", color=c, ms=4, label=im)
                if b["scaling"].get("pick"):
                    pp = np.linspace(min(b["p"]), max(b["p"]), 50)
                    ax.plot(pp, [models.scaling_eval(b["scaling"], q) * 1e6 for q in pp], "-",
                            color=c, lw=1)
                continue
            m = an["coll"].get("%s/%s" % (im, op))
            if not m or "t_s" not in m:
                continue
            ps = sorted(int(p) for p in m["data"])
            sizes = sorted(set(m["data"][str(ps[0])]["n"]))
            for n, mk in ((sizes[0], "o"), (sizes[-1], "^")):
                tt = []
                for p in ps:
                    d = m["data"][str(p)]
                    tt.append(d["t"][d["n"].index(n)] if n in d["n"] else float("nan"))
                ax.semilogy(ps, np.array(tt) * 1e6, mk, color=c, ms=4,
                            label="%s %s" % (im, fmt_size(n)))
                if m["t_s"].get("log") and len(ps) > 1:
                    pp = np.linspace(min(ps), max(ps), 50)
                    yy = np.array([models.collective_eval(m, n, q) * 1e6 for q in pp])
                    yy[yy <= 0] = np.nan  # a line through negative values has no log
                    ax.semilogy(pp, yy, "-", color=c, lw=1)
        ax.set_title(op, fontsize=9)
        ax.set_xlabel("processes p", fontsize=8)
        ax.set_ylabel("us", fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
        if i == 0 or op == ops[1 % len(ops)]:
            ax.legend(fontsize=6)
    for j in range(len(ops), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle("collectives: time per call vs p (o smallest, ^ largest size; lines: fitted "
                 "T(n,p), chosen class)", fontsize=10)
    fig.subplots_adjust(left=0.05, right=0.98, top=0.93, bottom=0.06, hspace=0.45, wspace=0.25)
    return _png(fig)


def plot_coll_n(an):
    plt = _plt()
    impls = an["impls"]
    ops = [op for op in COLL_OPS if op != "barrier" and
           any(v["op"] == op for v in an["coll"].values())]
    cols = 4
    rows = max(1, math.ceil(len(ops) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(15, 3.3 * rows), squeeze=False)
    for i, op in enumerate(ops):
        ax = axes[i // cols][i % cols]
        for im in impls:
            m = an["coll"].get("%s/%s" % (im, op))
            if not m:
                continue
            p = max(int(x) for x in m["data"])
            d = m["data"][str(p)]
            c = _color(impls, im)
            ax.loglog(d["n"], np.array(d["t"]) * 1e6, "o-", color=c, ms=3,
                      label="%s p=%d" % (im, p))
        ax.set_title(op, fontsize=9)
        ax.set_xlabel("bytes", fontsize=8)
        ax.set_ylabel("us", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(labelsize=7)
        if i == 0:
            ax.legend(fontsize=6)
    for j in range(len(ops), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle("collectives: time per call vs size at the largest p", fontsize=10)
    fig.subplots_adjust(left=0.05, right=0.98, top=0.93, bottom=0.06, hspace=0.45, wspace=0.25)
    return _png(fig)


# ---------------------------------------------------------------- the report

def build(meta, rows, an, compare_block=None, plots=True):
    d = Doc()
    d.h(1, "ternbench report")
    over = meta.get("oversubscribed_process_counts") or []
    d.p("Host `%s`, %s, %d online CPUs, kernel %s; %s. Run %s (profile %s, transport %s), "
        "load average %s before and %s after. Command: `%s`." %
        (meta.get("host"), meta.get("cpu"), meta.get("cpus_online", 0), meta.get("kernel"),
         meta.get("date"), meta.get("git") or "?", meta.get("profile"), meta.get("transport"),
         meta.get("load_before"), meta.get("load_after"), meta.get("command")))
    d.p("Every number is the %s of the trials (`--stat`); each trial is a mean over many "
        "operations after a warm-up. Process counts above the CPU count are oversubscribed "
        "and measure the scheduler as much as the library: %s. On a shared machine other "
        "work moves every number; compare implementations within one run only." %
        ("median" if an["stat"] == "med" else "minimum",
         ", ".join("p=%d" % p for p in over) if over else "none here"))
    d.table(["implementation", "library", "launcher"],
            [[im, meta.get("library_versions", {}).get(im, "?"),
              " ".join(meta.get("implementations", {}).get(im, {}).get("launcher") or [])]
             for im in an["impls"]])
    bad = [j for j in meta.get("jobs", []) if j["status"] != "ok"]
    for j in bad:
        d.p("FAILED: %s: %s" % (j["label"], j["status"]))
    for im, why in meta.get("skipped", {}).items():
        d.p("SKIPPED: %s: %s" % (im, why))
    noisy = [r for r in rows if r["t_med_us"] > 0 and r["t_mad_us"] / r["t_med_us"] > 0.25]
    if noisy:
        d.p("%d of %d rows have a spread (MAD/median) above 25%%: those sizes were disturbed "
            "(see results.csv, columns t_min/t_max/t_mad)." % (len(noisy), len(rows)))
    if compare_block:
        compare_block(d)

    d.h(2, "Point-to-point: Hockney model T(n) = t_s + t_b n")
    d.p("Least squares on relative residuals over all sizes. Bw_as = 1/t_b (asymptotic "
        "bandwidth), n_1/2 = t_s/t_b (size reaching half of it), pi_s = 1/t_s (specific "
        "performance, messages per second at the start-up limit). R2 is of the weighted fit; "
        "rms/max are relative residuals. stream and bibw times are per message (bibw counts "
        "both directions).")
    trows = []
    for key, s in an["p2p"].items():
        h = s["hockney"]
        trows.append([s["impl"], s["pattern"], s["mode"], fmt_t(h["t_s"]),
                      "%.4f ns/B" % (h["t_b"] * 1e9), fmt_bw(h["bw_as"]), fmt_n(h["n_half"]),
                      "%.3g /s" % h["pi_s"] if math.isfinite(h["pi_s"]) else "n/a",
                      fmt_r2(h["r2"]), "%.0f%% / %.0f%%" % (100 * h["rms_rel_resid"],
                                                            100 * h["max_rel_resid"])])
    d.table(["impl", "pattern", "mode", "t_s", "t_b", "Bw_as", "n_1/2", "pi_s", "R2",
             "resid rms/max"], trows)
    d.h(3, "Piecewise (protocol ranges, breakpoints found from the data)")
    prow = []
    for key, s in an["p2p"].items():
        pw = s.get("piecewise")
        if not pw:
            continue
        for k, seg in enumerate(pw["segments"]):
            prow.append([s["impl"], s["pattern"], s["mode"], "%d" % (k + 1),
                         "%s .. %s" % (fmt_size(seg["lo"]), fmt_size(seg["hi"])),
                         fmt_t(seg["t_s"]), "%.4f ns/B" % (seg["t_b"] * 1e9),
                         fmt_bw(seg["bw_as"]), fmt_r2(seg["r2"]),
                         "%.0f%%" % (100 * seg["rms_rel_resid"])])
    d.table(["impl", "pattern", "mode", "piece", "sizes", "t_s", "t_b", "Bw_as", "R2",
             "resid rms"], prow)
    if plots:
        d.fig(plot_p2p(an), "point-to-point latency and bandwidth vs message size")

    d.h(2, "The six classic patterns")
    classic_rows = []
    for im in an["impls"]:
        for name, op, what in CLASSIC:
            if op == "pingpong":
                s = an["p2p"].get("%s/pingpong/standard" % im)
                if s and 8 in s["n"]:
                    classic_rows.append([im, name, what, "p=2: %s" % fmt_t(s["t"][s["n"].index(8)])])
                continue
            m = an["coll"].get("%s/%s" % (im, op))
            if not m:
                continue
            cells = []
            for p in sorted(m["data"], key=int):
                dd = m["data"][p]
                cells.append("p=%s: %s @%s, %s @%s" % (p, fmt_t(dd["t"][0]), fmt_size(dd["n"][0]),
                                                     fmt_t(dd["t"][-1]), fmt_size(dd["n"][-1])))
            classic_rows.append([im, name, what, "; ".join(cells)])
    d.table(["impl", "pattern", "what", "time per operation"], classic_rows)

    d.h(2, "Collectives: T(n, p) = t_s(p) + t_b(p) n")
    d.p("Per process count a Hockney fit over sizes; then t_s(p) and t_b(p) each fitted as "
        "a + b log2 p and as a + b p. The class is the better fit's (O(1) when the fitted "
        "change over the measured p is under 10% or negative); both fits are shown with R2. "
        "Size is the per-process block for gather/scatter/allgather/alltoall/reduce_scatter, "
        "the vector for reductions.")
    crow = []
    for key, m in an["coll"].items():
        if "t_s" not in m:
            continue
        fits = "; ".join("p=%s %s + %.3f ns/B (R2 %s)" % (p, fmt_t(h["t_s"]), h["t_b"] * 1e9,
                                                      fmt_r2(h["r2"]))
                         for p, h in m["per_p"].items())
        crow.append([m["impl"], m["op"], fits] + _scal_cells(m["t_s"], fmt_t) +
                    _scal_cells(m["t_b"], lambda v: "%.3f ns/B" % (v * 1e9)))
    for key, b in an["barrier"].items():
        crow.append([b["impl"], "barrier", "; ".join("p=%d %s" % (p, fmt_t(t)) for p, t in
                                                     zip(b["p"], b["t"]))] +
                    _scal_cells(b["scaling"], fmt_t) + ["", "", ""])
    d.table(["impl", "op", "per-p fits", "t_s(p) log2 fit", "t_s(p) linear fit", "t_s class",
             "t_b(p) log2 fit", "t_b(p) linear fit", "t_b class"], crow)
    if plots and an["coll"]:
        d.fig(plot_coll_p(an), "collectives: time vs p with the fitted models")
        d.fig(plot_coll_n(an), "collectives: time vs size at the largest p")

    d.h(2, "Aggregated bandwidth and specific performance")
    d.p("After Xu and Hwang: aggregated bandwidth = bytes delivered in total / time, where a "
        "collective of size n on p processes delivers f(p) n bytes (bcast, scatter, gather, "
        "reduce, scan: p-1; allreduce: 2(p-1); allgather, alltoall, reduce_scatter_block: "
        "p(p-1)). R_inf(p) = f(p)/t_b(p) is its asymptote and pi_agg(p) = f(p)/t_s(p) = "
        "R_inf/N_1/2 the aggregated specific performance; peaks are over the measured p.")
    arow = []
    for key, a in an["aggregate"].items():
        m = an["coll"][key]
        arow.append([m["impl"], m["op"],
                     "%s (n=%s, p=%d)" % (fmt_bw(a["peak_bw"]), fmt_size(a["peak_at"][0]),
                                          a["peak_at"][1]) if a["peak_at"] else "n/a",
                     fmt_bw(a.get("peak_R_inf")),
                     "%.3g /s" % a["peak_pi_agg"] if a.get("peak_pi_agg") else "n/a"])
    d.table(["impl", "op", "peak measured aggregated bandwidth", "peak R_inf", "peak pi_agg"],
            arow)

    d.h(2, "Computation time of reductions: t_c")
    d.p("The same reduction with the real sum of doubles and with a user operation that does "
        "nothing; the difference per byte is the time spent combining. t_c(fit) = t_b(sum) - "
        "t_b(no-op); t_c(largest) compares the two at the largest size directly. Negative or "
        "scattered values mean the computation is hidden in the noise of the transfer.")
    tcrow = []
    for key, per_p in an["t_c"].items():
        im, op = key.split("/")
        for p, v in sorted(per_p.items(), key=lambda kv: int(kv[0])):
            tcrow.append([im, op, p, "%.4f ns/B" % (v["t_c_fit"] * 1e9),
                          "%.4f ns/B @%s" % (v["t_c_largest"] * 1e9, fmt_size(v["largest"]))
                          if v["t_c_largest"] is not None else "n/a",
                          fmt_bw(1 / v["t_c_largest"]) if v["t_c_largest"] and
                          v["t_c_largest"] > 0 else "n/a"])
    d.table(["impl", "op", "p", "t_c (fit)", "t_c (largest size)", "combine rate"], tcrow)
    d.p("Files: results.csv / results.json (every measurement: min, median, max, MAD over "
        "trials), meta.json (run metadata), models.json / models.csv (every fit), raw/ "
        "(driver output).")
    return d


def _scal_cells(s, fv):
    if not s or not s.get("log"):
        return ["n/a", "n/a", s.get("class", "n/a") if s else "n/a"]
    return ["%s + %s log2 p (R2 %s)" % (fv(s["log"]["a"]), fv(s["log"]["b"]),
                                        fmt_r2(s["log"]["r2"])),
            "%s + %s p (R2 %s)" % (fv(s["lin"]["a"]), fv(s["lin"]["b"]), fmt_r2(s["lin"]["r2"])),
            "%s (%s)" % (s["class"], s.get("note", ""))]


def models_csv(an, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["impl", "kind", "name", "p", "parameter", "value", "r2"])
        for s in an["p2p"].values():
            h = s["hockney"]
            name = "%s/%s" % (s["pattern"], s["mode"])
            for par in ("t_s", "t_b", "bw_as", "n_half", "pi_s"):
                w.writerow([s["impl"], "p2p", name, 2, par, h[par], h["r2"]])
            if s.get("piecewise"):
                for k, seg in enumerate(s["piecewise"]["segments"]):
                    for par in ("lo", "hi", "t_s", "t_b"):
                        w.writerow([s["impl"], "p2p-piece%d" % (k + 1), name, 2, par, seg[par],
                                    seg["r2"]])
        for m in an["coll"].values():
            for p, h in m["per_p"].items():
                for par in ("t_s", "t_b"):
                    w.writerow([m["impl"], "coll", m["op"], p, par, h[par], h["r2"]])
            for par in ("t_s", "t_b"):
                s = m.get(par)
                if s and s.get("log"):
                    for form in ("log", "lin"):
                        w.writerow([m["impl"], "coll-scaling-" + form, m["op"], "",
                                    par + ".a", s[form]["a"], s[form]["r2"]])
                        w.writerow([m["impl"], "coll-scaling-" + form, m["op"], "",
                                    par + ".b", s[form]["b"], s[form]["r2"]])
                    w.writerow([m["impl"], "coll-class", m["op"], "", par, s["class"], ""])


def write(out_dir, stat="med", compare_block=None, plots=True):
    meta, rows = load(out_dir)
    an = analyse(rows, stat)
    doc = build(meta, rows, an, compare_block, plots)
    fig_dir = os.path.join(out_dir, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    for k, png in enumerate(doc.figures(), 1):
        with open(os.path.join(fig_dir, "fig%d.png" % k), "wb") as f:
            f.write(png)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(doc.markdown("figures"))
    with open(os.path.join(out_dir, "report.html"), "w") as f:
        f.write(doc.html("ternbench report - %s" % meta.get("host")))
    with open(os.path.join(out_dir, "models.json"), "w") as f:
        json.dump(an, f, indent=1, default=_json_default)
    models_csv(an, os.path.join(out_dir, "models.csv"))
    return meta, rows, an


def _json_default(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    raise TypeError(type(o))
