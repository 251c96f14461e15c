"""trace_report.py - `ternbench trace DIR`: one self-contained HTML page about a trace.

Pictures first (matplotlib PNGs embedded as base64: the page needs no other file), each
with the table it is drawn from: a timeline with the messages and the critical path, the
communication matrix, time per operation and per call site (mpiP's table), message
sizes, the critical path's parts and the ranks that wait and on whom. build() takes a
trace_model.Trace and returns the report.Doc, so tests can build a report from a trace
made in memory; write() renders it.
"""

from . import trace_analysis as ta
from .report import Doc, fmt_t

# one colour per operation, the same in every picture of a report
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#843c39",
           "#7b4173", "#3182bd"]
MAX_MESSAGE_LINES = 3000  # more messages than this are drawn as an even sample
MAX_TABLE_RANKS = 32  # larger matrices are shown as pictures only


def fmt_bytes(b):
    b = float(b)
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= m:
            return "%.1f %s" % (b / m, unit)
    return "%d B" % b


def _plt():
    from .report import _plt as p
    return p()


def _png(fig):
    from .report import _png as p
    return p(fig)


def op_colors(trace):
    names = sorted({c.name for c in trace.calls if ta.is_comm(c)})
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


# ---------------------------------------------------------------- pictures

def plot_timeline(trace, idx, colors, path):
    plt = _plt()
    p = trace.nranks
    fig, ax = plt.subplots(figsize=(13, 1.2 + 0.45 * min(p, 64)))
    # Bars closer than a pixel (of about 2000 across) are drawn as one: a long trace
    # stays a picture of where the time goes, and cheap to draw.
    px = max(ta.wall(trace, idx), 1e-9) / 2000.0
    for r in range(p):
        bars = {}
        for c in idx.by_rank.get(r, []):
            if ta.is_comm(c):
                xs = bars.setdefault(c.name, [])
                if xs and c.t0 - (xs[-1][0] + xs[-1][1]) < px:
                    xs[-1] = (xs[-1][0], max(c.t1 - xs[-1][0], xs[-1][1]))
                else:
                    xs.append((c.t0, max(c.t1 - c.t0, 1e-9)))
        for name, xs in bars.items():
            ax.broken_barh(xs, (r - 0.35, 0.7), facecolors=colors[name], linewidth=0)
    from matplotlib.collections import LineCollection
    msgs = [m for m in trace.messages if m.t_recv is not None]
    step = max(1, len(msgs) // MAX_MESSAGE_LINES)
    ax.add_collection(LineCollection([[(m.t_send, m.src), (m.t_recv, m.dst)]
                                      for m in msgs[::step]], colors="k", linewidths=0.5,
                                     alpha=0.45))
    on_rank = [[(s.t0, s.rank), (s.t1, s.rank)] for s in path if s.src == s.rank]
    hops = [[(s.t0, s.src), (s.t1, s.rank)] for s in path if s.src != s.rank]
    ax.add_collection(LineCollection(on_rank, colors="red", linewidths=2.2, alpha=0.8))
    ax.add_collection(LineCollection(hops, colors="red", linewidths=1.2, alpha=0.8,
                                     linestyles="dashed"))
    ax.autoscale_view()
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D
    handles = [Patch(color=col, label=n) for n, col in colors.items()]
    handles += [Line2D([0], [0], color="k", lw=0.8, label="message (send to completion)"),
                Line2D([0], [0], color="red", lw=2.2, label="critical path")]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_yticks(range(p))
    ax.set_yticklabels(["rank %d" % r for r in range(p)], fontsize=7)
    ax.set_ylim(p - 0.5, -0.5)
    ax.set_xlabel("time (s, common clock)")
    ax.set_title("timeline: calls as bars (white is computation), messages as lines, "
                 "the critical path in red", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    fig.subplots_adjust(left=0.07, right=0.8, top=0.9, bottom=0.12)
    return _png(fig)


def _heat(ax, mat, title, fmt):
    import numpy as np
    a = np.array(mat, float)
    im = ax.imshow(a, cmap="viridis", interpolation="nearest")
    p = len(mat)
    if p <= 16:
        hi = a.max() if a.size else 0
        for i in range(p):
            for j in range(p):
                if a[i, j]:
                    ax.text(j, i, fmt(a[i, j]), ha="center", va="center", fontsize=7,
                            color="w" if a[i, j] < 0.6 * hi else "k")
    ax.set_title(title, fontsize=9)
    ax.set_ylabel("from rank", fontsize=8)
    ax.set_xlabel("to rank", fontsize=8)
    if p <= 32:
        ax.set_xticks(range(p))
        ax.set_yticks(range(p))
    ax.tick_params(labelsize=7)
    return im


def plot_matrix(bmat, nmat):
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 5))
    fig.colorbar(_heat(a1, bmat, "bytes sent, from row to column", fmt_bytes), ax=a1)
    fig.colorbar(_heat(a2, nmat, "messages, from row to column", lambda v: "%d" % v), ax=a2)
    fig.tight_layout()
    return _png(fig)


def plot_profile(rows_op, rows_site, colors):
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 0.8 + 0.3 * max(len(rows_op[:15]),
                                                                    len(rows_site[:15]), 3)))
    for ax, rows, title in ((a1, rows_op[:15], "per operation"),
                            (a2, rows_site[:15], "per call site (top 15)")):
        keys = [str(r.key) for r in rows][::-1]
        vals = [r.total for r in rows][::-1]
        cols = [colors.get(str(r.key).split(" @ ")[0], "gray") for r in rows][::-1]
        ax.barh(range(len(keys)), vals, color=cols)
        ax.set_yticks(range(len(keys)))
        ax.set_yticklabels(keys, fontsize=7)
        ax.set_xlabel("seconds, summed over ranks", fontsize=8)
        ax.set_title("time in communication " + title, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return _png(fig)


def plot_sizes(hist):
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 3.8))
    ks = list(hist)
    labels = [ta.bin_label(k) for k in ks]
    a1.bar(range(len(ks)), [hist[k][0] for k in ks], color="tab:blue")
    a2.bar(range(len(ks)), [hist[k][1] for k in ks], color="tab:orange")
    for ax, t in ((a1, "messages per size"), (a2, "bytes per size")):
        ax.set_xticks(range(len(ks)))
        ax.set_xticklabels(labels, rotation=60, fontsize=7, ha="right")
        ax.set_title(t, fontsize=9)
        ax.set_xlabel("message size (bytes, power-of-two bins)", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return _png(fig)


def plot_path(info, colors):
    plt = _plt()
    parts = sorted(info["by_kind"].items(), key=lambda kv: -kv[1])[:15]
    ranks = sorted(info["by_rank"].items())
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 0.8 + 0.3 * max(len(parts), 4)))
    a1.barh(range(len(parts)), [v for _, v in parts][::-1],
            color=[colors.get(k[5:], "gray") if k.startswith("call ") else
                   ("#dddddd" if k == "compute" else "k") for k, _ in parts][::-1])
    a1.set_yticks(range(len(parts)))
    a1.set_yticklabels([k for k, _ in parts][::-1], fontsize=7)
    a1.set_title("critical path: what it is made of", fontsize=9)
    a1.set_xlabel("seconds", fontsize=8)
    a2.bar([str(r) for r, _ in ranks], [v for _, v in ranks], color="tab:red")
    a2.set_title("critical path: time on each rank", fontsize=9)
    a2.set_xlabel("rank", fontsize=8)
    a2.set_ylabel("seconds", fontsize=8)
    fig.tight_layout()
    return _png(fig)


def plot_waits(tot, wmat):
    import numpy as np
    plt = _plt()
    p = len(tot)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    bottom = np.zeros(p)
    for peer in range(p):
        col = np.array([wmat[r][peer] for r in range(p)])
        if col.any():
            a1.bar(range(p), col, bottom=bottom, label="waiting for %d" % peer,
                   color=PALETTE[peer % len(PALETTE)])
            bottom += col
    a1.set_xlabel("waiting rank", fontsize=8)
    a1.set_ylabel("seconds", fontsize=8)
    a1.set_title("time each rank waits, by the rank it waits for", fontsize=9)
    if p <= 16:
        a1.legend(fontsize=6)
        a1.set_xticks(range(p))
    fig.colorbar(_heat(a2, wmat, "seconds waiting: row waits for column",
                       lambda v: "%.3g" % v), ax=a2)
    a2.set_ylabel("waiting rank", fontsize=8)
    a2.set_xlabel("rank waited for", fontsize=8)
    fig.tight_layout()
    return _png(fig)


# ---------------------------------------------------------------- the report

def build(trace, plots=True, source=""):
    """The report of one trace as a report.Doc (render with .html())."""
    idx = ta.Index(trace)
    colors = op_colors(trace)
    bmat, nmat = ta.matrix(trace)
    rows_op = ta.profile(trace, "op", idx)
    rows_site = ta.profile(trace, "site", idx)
    hist = ta.size_histogram(trace)
    ws = ta.waits(trace, idx)
    wtot, wmat, wkinds = ta.wait_summary(trace, ws)
    length, path, info = ta.critical_path(trace, idx, ws)
    app = ta.app_time(trace, idx)
    comm = sum(r.total for r in rows_op)

    d = Doc()
    d.h(1, "tern trace report")
    meta = trace.meta or {}
    d.p("%s%d ranks, %s from first to last event; %d calls, %d messages (%s). Time in "
        "communication: %s of %s summed over ranks (%.1f%%). Program: %s." %
        ("Trace %s: " % source if source else "", trace.nranks, fmt_t(info["wall"]),
         len(trace.calls), len(trace.messages),
         fmt_bytes(sum(m.bytes for m in trace.messages)), fmt_t(comm), fmt_t(app),
         100.0 * comm / app if app > 0 else 0.0, meta.get("program", "?")))
    for key, what in (("truncated_ranks", "end early (the rank died)"),
                      ("missing_ranks", "are missing")):
        if meta.get(key):
            d.p("The traces of these ranks %s: %s." % (what, ", ".join(
                str(r) for r in meta[key])))

    d.h(2, "Timeline")
    if plots:
        d.fig(plot_timeline(trace, idx, colors, path),
              "timeline: every communication call as a bar coloured by operation, every "
              "message as a line from its send to its completion, the critical path in red")

    d.h(2, "Communication matrix")
    d.p("Every traced message, including those a collective sends underneath (small "
        "collectives within a node that go through the shared region send none). Row: "
        "sender, column: receiver.")
    if plots:
        d.fig(plot_matrix(bmat, nmat), "bytes and messages between every pair of ranks")
    if trace.nranks <= MAX_TABLE_RANKS:
        head = ["from \\ to"] + [str(j) for j in range(trace.nranks)] + ["total"]
        d.h(3, "Bytes")
        d.table(head, [[str(i)] + [str(v) for v in row] + [str(sum(row))]
                       for i, row in enumerate(bmat)])
        d.h(3, "Messages")
        d.table(head, [[str(i)] + [str(v) for v in row] + [str(sum(row))]
                       for i, row in enumerate(nmat)])

    d.h(2, "Time in communication")
    d.p("Like mpiP: every communication call grouped by operation and by call site, summed "
        "over ranks; %%app is of the summed rank spans (%s), %%comm of all communication time."
        % fmt_t(app))
    if plots and rows_op:
        d.fig(plot_profile(rows_op, rows_site, colors),
              "time in communication per operation and per call site")

    def prow(r):
        return [str(r.key), str(r.calls), fmt_t(r.total), fmt_t(r.mean), fmt_t(r.tmin),
                fmt_t(r.tmax), fmt_bytes(r.bytes), "%.2f" % r.pct_app, "%.2f" % r.pct_comm]
    head = ["operation", "calls", "total", "mean", "min", "max", "bytes", "%app", "%comm"]
    d.h(3, "Per operation")
    d.table(head, [prow(r) for r in rows_op])
    d.h(3, "Per call site")
    d.table(["call site"] + head[1:], [prow(r) for r in rows_site[:40]])
    if len(rows_site) > 40:
        d.p("%d more call sites, together %s." % (len(rows_site) - 40,
                                                  fmt_t(sum(r.total for r in rows_site[40:]))))

    d.h(2, "Message sizes")
    if plots and hist:
        d.fig(plot_sizes(hist), "messages and bytes per power-of-two size bin")
    d.table(["size (bytes)", "messages", "bytes"],
            [[ta.bin_label(k), str(v[0]), fmt_bytes(v[1])] for k, v in hist.items()])

    d.h(2, "Critical path")
    d.p("Length %s, %.1f%% of the run's %s%s." %
        (fmt_t(length), 100.0 * length / info["wall"] if info["wall"] > 0 else 0.0,
         fmt_t(info["wall"]), "; %d dependencies dropped (clock offsets)" %
         info["dropped_edges"] if info["dropped_edges"] else ""))
    d.p("How it is found: " + ta.CRITICAL_PATH_ALGORITHM)
    if plots and info["by_kind"]:
        d.fig(plot_path(info, colors), "the critical path by activity and by rank")
    d.table(["on the path", "seconds", "share"],
            [[k, fmt_t(v), "%.1f%%" % (100.0 * v / length if length > 0 else 0)]
             for k, v in sorted(info["by_kind"].items(), key=lambda kv: -kv[1])])
    hops = [s for s in path if s.src != s.rank]
    if hops:
        d.p("The path changes rank %d times; the first ones: %s." % (
            len(hops), "; ".join("%d -> %d at %.6f s (%s)" % (s.src, s.rank, s.t0, s.label)
                                 for s in hops[:12])))

    d.h(2, "Who waits, and for whom")
    d.p("A receive that starts before its message is sent waits for a late sender; a "
        "blocking send still running when its receiver arrives waited for a late "
        "receiver; a rank that enters a collective before the last member and cannot "
        "leave before it arrives waited for that member. Each second is charged to the "
        "rank waited for. Totals: %s." % (
            ", ".join("%s %s" % (k, fmt_t(v)) for k, v in sorted(wkinds.items())) or "none"))
    if plots and any(wtot):
        d.fig(plot_waits(wtot, wmat), "waiting time per rank and the ranks waited for")
    order = sorted(range(trace.nranks), key=lambda r: -wtot[r])
    d.table(["rank", "waits", "mostly for"],
            [[str(r), fmt_t(wtot[r]), ", ".join(
                "%d (%s)" % (j, fmt_t(wmat[r][j])) for j in
                sorted(range(trace.nranks), key=lambda j: -wmat[r][j])[:3] if wmat[r][j] > 0)]
             for r in order if wtot[r] > 0][:MAX_TABLE_RANKS])
    d.analysis = {"matrix_bytes": bmat, "matrix_counts": nmat, "critical_path": length,
                  "path_info": info, "waits": wtot, "wait_matrix": wmat}
    return d


def write(trace, out_path, plots=True, source=""):
    d = build(trace, plots, source)
    with open(out_path, "w") as f:
        f.write(d.html("tern trace report%s" % (" - " + source if source else "")))
    return d
