"""models.py - the cost models ternbench fits to its measurements (numpy only).

Point-to-point (Hockney): T(n) = t_s + t_b * n, fitted by least squares on the
*relative* residual (weights 1/T), so that the 100 ns of a small message and the 30 ms of
a 64 MiB one count alike; an ordinary fit would let the largest sizes decide t_s alone.
Derived: asymptotic bandwidth Bw_as = 1/t_b, half-peak length n_1/2 = t_s/t_b, specific
performance pi_s = 1/t_s. Optionally piecewise: up to three contiguous size ranges (the
protocols: short, eager, rendezvous), each with its own (t_s, t_b); the breakpoints are
the ones that minimise the residual, and the number of pieces is chosen by BIC, so a
break is only reported when the data pay for it.

Collectives: T(n, p) = t_s(p) + t_b(p) * n, one Hockney fit per process count, then
t_s(p) and t_b(p) each fitted as a + b*log2(p) and as a + b*p; the better R^2 names the
complexity class (O(log p), O(p), or O(1) when the change over the measured p is small).

Every fit carries R^2 and its residuals: no model is reported without them.
"""

import math

import numpy as np

# A fitted parameter that changes less than this fraction of its mean over the measured
# process counts is called O(1).
FLAT_FRACTION = 0.10


def _wls(x, y, w):
    """Weighted least squares y ~ a + b x. Returns (a, b, r2, yhat)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    w = np.asarray(w, float)
    sw = w.sum()
    xm = (w * x).sum() / sw
    ym = (w * y).sum() / sw
    sxx = (w * (x - xm) ** 2).sum()
    sxy = (w * (x - xm) * (y - ym)).sum()
    b = sxy / sxx if sxx > 0 else 0.0
    a = ym - b * xm
    yhat = a + b * x
    ss_res = (w * (y - yhat) ** 2).sum()
    ss_tot = (w * (y - ym) ** 2).sum()
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return a, b, r2, yhat


def hockney(n, t):
    """Fit T(n) = t_s + t_b n (seconds, bytes). Returns a dict of the model and its quality."""
    n = np.asarray(n, float)
    t = np.asarray(t, float)
    if len(n) < 2 or np.ptp(n) == 0:
        raise ValueError("a Hockney fit needs at least two distinct sizes")
    w = 1.0 / np.maximum(t, 1e-12) ** 2
    ts, tb, r2, that = _wls(n, t, w)
    rel = (t - that) / t
    return _derived({
        "t_s": ts, "t_b": tb, "r2": r2,
        "rms_rel_resid": float(np.sqrt(np.mean(rel ** 2))),
        "max_rel_resid": float(np.max(np.abs(rel))),
        "resid_rel": rel.tolist(),
        "n_min": float(n.min()), "n_max": float(n.max()), "points": int(len(n)),
    })


def _derived(m):
    ts, tb = m["t_s"], m["t_b"]
    m["bw_as"] = 1.0 / tb if tb > 0 else math.inf
    m["n_half"] = ts / tb if tb > 0 else math.inf
    m["pi_s"] = 1.0 / ts if ts > 0 else math.inf
    return m


def hockney_eval(m, n):
    return m["t_s"] + m["t_b"] * np.asarray(n, float)


def _segment_sse(cs, i, j):
    """Weighted SSE of a line fitted to points i..j-1 from cumulative sums."""
    sw, sx, sy, sxx, sxy, syy = (c[j] - c[i] for c in cs)
    d = sw * sxx - sx * sx
    if sw <= 0:
        return 0.0
    if d <= 1e-300 * max(1.0, sw * sxx):
        # all sizes equal: a constant
        return max(syy - sy * sy / sw, 0.0)
    b = (sw * sxy - sx * sy) / d
    a = (sy - b * sx) / sw
    sse = syy - 2 * a * sy - 2 * b * sxy + a * a * sw + 2 * a * b * sx + b * b * sxx
    return max(sse, 0.0)


def piecewise(n, t, max_segments=3, min_points=3):
    """Piecewise Hockney fit over contiguous size ranges, breakpoints from the data.

    Exhaustive over breakpoints (sizes are at most a few hundred), with the relative
    weights of hockney(); the number of segments k minimises BIC = N ln(SSE/N) +
    3k ln N (two parameters and a breakpoint per segment). Returns a dict with
    'segments' (each a hockney() result plus 'lo'/'hi', the first and last size) and
    'breaks' (the first size of each segment after the first)."""
    order = np.argsort(n, kind="stable")
    n = np.asarray(n, float)[order]
    t = np.asarray(t, float)[order]
    N = len(n)
    # Distinct-size boundaries only: a break never splits repeated sizes.
    w = 1.0 / np.maximum(t, 1e-12) ** 2
    cs = [np.concatenate([[0.0], np.cumsum(v)]) for v in
          (w, w * n, w * t, w * n * n, w * n * t, w * t * t)]
    cuts_ok = [i for i in range(1, N) if n[i] != n[i - 1]]

    def sse(i, j):
        return _segment_sse(cs, i, j)

    best = {1: (sse(0, N), [])}
    if max_segments >= 2:
        cand = None
        for i in cuts_ok:
            if i < min_points or N - i < min_points:
                continue
            s = sse(0, i) + sse(i, N)
            if cand is None or s < cand[0]:
                cand = (s, [i])
        if cand:
            best[2] = cand
    if max_segments >= 3:
        cand = None
        for i in cuts_ok:
            if i < min_points:
                continue
            left = sse(0, i)
            for j in cuts_ok:
                if j - i < min_points or N - j < min_points:
                    continue
                s = left + sse(i, j) + sse(j, N)
                if cand is None or s < cand[0]:
                    cand = (s, [i, j])
        if cand:
            best[3] = cand

    def bic(k):
        s = max(best[k][0], 1e-30 * N)
        return N * math.log(s / N) + 3 * k * math.log(N)

    k = min(best, key=bic)
    cuts = [0] + best[k][1] + [N]
    segs = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        m = hockney(n[a:b], t[a:b]) if np.ptp(n[a:b]) > 0 else None
        if m is None:
            continue
        m["lo"] = float(n[a])
        m["hi"] = float(n[b - 1])
        segs.append(m)
    return {"segments": segs, "breaks": [float(n[c]) for c in best[k][1]],
            "bic": {str(kk): bic(kk) for kk in best}}


def piecewise_eval(pw, n):
    n = np.asarray(n, float)
    out = np.empty_like(n)
    segs = pw["segments"]
    for i, x in enumerate(n):
        seg = segs[0]
        for s in segs:
            if x >= s["lo"]:
                seg = s
        out[i] = hockney_eval(seg, x)
    return out


def _line(x, y):
    a, b, r2, yhat = _wls(x, y, np.ones(len(x)))
    return {"a": float(a), "b": float(b), "r2": float(r2),
            "resid": (np.asarray(y, float) - yhat).tolist()}


def scaling(p, y):
    """Fit y(p) as a + b log2 p and as a + b p; name the class.

    Returns {'log': {a, b, r2, resid}, 'lin': {...}, 'class': str, 'note': str}.
    With fewer than three process counts both lines pass through every point, so the
    class is 'undetermined'."""
    p = np.asarray(p, float)
    y = np.asarray(y, float)
    out = {"p": p.tolist(), "y": y.tolist()}
    if len(p) < 2:
        out.update({"log": None, "lin": None, "class": "undetermined",
                    "note": "one process count"})
        return out
    out["log"] = _line(np.log2(p), y)
    out["lin"] = _line(p, y)
    if len(np.unique(p)) < 3:
        out["class"] = "undetermined"
        out["note"] = "fewer than 3 process counts: both fits are exact"
        return out
    pick = "log" if out["log"]["r2"] >= out["lin"]["r2"] else "lin"
    f = (lambda q: np.log2(q)) if pick == "log" else (lambda q: q)
    rise = out[pick]["b"] * (f(p.max()) - f(p.min()))
    scale = max(abs(float(np.mean(y))), 1e-300)
    if abs(rise) < FLAT_FRACTION * scale or rise < 0:
        out["class"] = "O(1)"
        out["note"] = ("changes by %.0f%% over p=%d..%d" %
                       (100 * rise / scale, p.min(), p.max()))
    else:
        out["class"] = "O(log p)" if pick == "log" else "O(p)"
        out["note"] = "R2 log %.3f vs lin %.3f" % (out["log"]["r2"], out["lin"]["r2"])
    out["pick"] = pick
    return out


def scaling_eval(s, p, which=None):
    """Value of a scaling() fit at p, with the chosen form (or `which`: 'log'/'lin')."""
    which = which or s.get("pick") or "log"
    f = s[which]
    if f is None:
        return float("nan")
    x = math.log2(p) if which == "log" else p
    return f["a"] + f["b"] * x


# Bytes a collective delivers in total, per byte of its size argument, with p processes
# (Xu and Hwang's aggregated bandwidth counts every byte that reaches a process that did
# not already have it): bcast and scatter deliver (p-1) messages, gather the same towards
# the root, allgather and alltoall p(p-1); a reduction combines (p-1) vectors, allreduce
# and its friends also return the result to the other p-1.
def delivered_factor(op, p):
    base = op.replace("_noop", "")
    return {
        "barrier": 0.0,
        "bcast": p - 1.0,
        "scatter": p - 1.0,
        "gather": p - 1.0,
        "reduce": p - 1.0,
        "allreduce": 2.0 * (p - 1.0),
        "red_scat_blk": (p - 1.0) * p,
        "scan": p - 1.0,
        "allgather": p * (p - 1.0),
        "alltoall": p * (p - 1.0),
    }.get(base, p - 1.0)


def collective(rows_by_p):
    """Model one collective of one implementation.

    rows_by_p: {p: (sizes, times)}. Returns per-p Hockney fits, the scaling fits of t_s(p)
    and t_b(p), and the class of each."""
    per_p = {}
    for p, (n, t) in sorted(rows_by_p.items()):
        if len(n) >= 2 and np.ptp(n) > 0:
            per_p[p] = hockney(n, t)
    ps = sorted(per_p)
    out = {"per_p": {str(p): per_p[p] for p in ps}}
    if ps:
        out["t_s"] = scaling(ps, [per_p[p]["t_s"] for p in ps])
        out["t_b"] = scaling(ps, [per_p[p]["t_b"] for p in ps])
    return out


def collective_eval(m, n, p, which_s=None, which_b=None):
    """T(n, p) from a collective() model at any p (a prediction beyond the data)."""
    return scaling_eval(m["t_s"], p, which_s) + scaling_eval(m["t_b"], p, which_b) * n
