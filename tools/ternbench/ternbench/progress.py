"""progress.py - the progress bar of long ternbench runs (run, compare), standard library only.

One line on stderr: a bar, the percentage, the time so far and the estimated time left
(elapsed / fraction done - elapsed, once a few percent are done, so the first guesses do
not swing wildly). Three modes:

- "auto" (the default): the bar on a terminal; otherwise one plain "ternbench: <job> ..."
  line per job, which is what a log file wants.
- "on" (`--progress`): the bar even when stderr is not a terminal (a CI log, `2>file`);
  there it cannot redraw in place, so it writes a full line at most every `interval`
  seconds and at every new job.
- "off" (`--no-progress`): nothing.
"""

import sys
import threading
import time


def fmt_duration(sec):
    """'42s', '3m05s', '1h02m'; '--' when unknown."""
    if sec is None or sec != sec or sec < 0 or sec == float("inf"):
        return "--"
    sec = int(round(sec))
    if sec < 60:
        return "%ds" % sec
    if sec < 3600:
        return "%dm%02ds" % (sec // 60, sec % 60)
    return "%dh%02dm" % (sec // 3600, sec % 3600 // 60)


class Progress:
    """Progress over `total` units of work (ternbench counts result rows)."""

    WIDTH = 30
    MIN_FRACTION_FOR_ETA = 0.02

    def __init__(self, total, mode="auto", stream=None, clock=time.time, interval=5.0,
                 enabled=None):
        if enabled is False:  # the older signature: Progress(total, enabled=...)
            mode = "off"
        self.stream = stream if stream is not None else sys.stderr
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = max(int(total), 1)
        self.done = 0
        self.mode = mode
        self.bar = mode == "on" or (mode == "auto" and tty)
        self.inplace = self.bar and tty
        self.clock = clock
        self.t0 = clock()
        self.interval = interval
        self.last_line = None  # when the last full line was written (not in place)
        self.label = ""
        self.lock = threading.Lock()

    def eta(self):
        """Estimated seconds left, None while under MIN_FRACTION_FOR_ETA is done."""
        frac = self.done / self.total
        if frac < self.MIN_FRACTION_FOR_ETA:
            return None
        el = self.clock() - self.t0
        return max(el / frac - el, 0.0)

    def line(self):
        frac = self.done / self.total
        fill = int(frac * self.WIDTH)
        el = self.clock() - self.t0
        return "[%s%s] %3d%% %s elapsed, %s left  %s" % (
            "#" * fill, "." * (self.WIDTH - fill), frac * 100, fmt_duration(el),
            fmt_duration(self.eta()), self.label[:32])

    def set_label(self, label):
        self.label = label
        if self.mode == "auto" and not self.bar:
            self.stream.write("ternbench: %s ...\n" % label)
            self.stream.flush()
        self.draw(force=True)

    def add(self, k=1):
        with self.lock:
            self.done = min(self.done + k, self.total)
        self.draw()

    def draw(self, force=False):
        if not self.bar:
            return
        if self.inplace:
            self.stream.write("\r" + self.line().ljust(90))
        else:
            now = self.clock()
            if not force and self.last_line is not None and now - self.last_line < self.interval:
                return
            self.last_line = now
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def finish(self):
        if not self.bar:
            return
        self.done = self.total
        self.draw(force=True)
        if self.inplace:
            self.stream.write("\n")
            self.stream.flush()
