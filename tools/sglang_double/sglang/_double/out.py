# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Output the way SGLang writes it: logging lines, tqdm-like bars, uvicorn lines, event records."""
import json
import os
import sys
import time

from sglang._double.texts import weights_bar_desc


def stamp():
    return time.strftime("%Y-%m-%d %H:%M:%S")


def log(msg, prefix=""):
    # SGLang's logging.basicConfig handler writes to stderr: "[%(asctime)s{prefix}] %(message)s".
    sys.stderr.write("[%s%s] %s\n" % (stamp(), prefix, msg))
    sys.stderr.flush()


def uvicorn(level, msg):
    # uvicorn's default formatter pads "LEVEL:" to 9 columns; its error/info logger goes to stderr.
    sys.stderr.write("%-9s %s\n" % (level + ":", msg))
    sys.stderr.flush()


def access(client, method, path, status, reason):
    # uvicorn's access logger writes to stdout.
    sys.stdout.write('%-9s %s:%d - "%s %s HTTP/1.1" %d %s\n' % ("INFO:", client[0], client[1], method, path, status, reason))
    sys.stdout.flush()


def raw(text, stream=None):
    stream = stream or sys.stderr
    stream.write(text)
    stream.flush()


def _stderr_offset():
    """Where the shared stderr file stands (every process of the tree writes through one open file), or None for a
    pipe or a terminal: two events with the same offset prove nothing was logged between them, without a clock."""
    try:
        sys.stderr.flush()
        return os.lseek(2, 0, os.SEEK_CUR)
    except (OSError, ValueError, AttributeError):
        return None


class Events(object):
    """One JSON line per event, written with a single O_APPEND write so processes never interleave."""

    def __init__(self, path):
        self.path = path

    def emit(self, event, **fields):
        if not self.path:
            return
        rec = {"event": event, "t": time.time(), "pid": os.getpid(), "stderr_at": _stderr_offset()}
        rec.update(fields)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(rec) + "\n").encode())
        finally:
            os.close(fd)


def _fmt_time(sec):
    sec = int(sec)
    return "%02d:%02d" % (sec // 60, sec % 60)


def _rate(n, elapsed):
    if n == 0 or elapsed <= 0:
        return "?it/s"
    r = n / elapsed
    return ("%5.2fit/s" % r) if r >= 1 else ("%5.2fs/it" % (1 / r))


def _remaining(n, total, elapsed):
    if n == 0:
        return "?"
    return _fmt_time(elapsed / n * (total - n))


def weights_bar_text(n, total, elapsed):
    # BAR_FORMAT in sglang/srt/utils/common.py
    pct = 100.0 * n / total
    return "%s: %3.0f%% Completed | %d/%d [%s<%s, %s]" % (
        weights_bar_desc(), pct, n, total, _fmt_time(elapsed), _remaining(n, total, elapsed), _rate(n, elapsed))


def capture_bar_text(desc, n, total, elapsed):
    # tqdm's default format: "{l_bar}{bar}{r_bar}" with a 10-cell bar when no terminal width is known.
    frac = float(n) / total
    cells = int(frac * 10)
    bar = "\u2588" * cells + " " * (10 - cells)
    return "%s: %3.0f%%|%s| %d/%d [%s<%s, %s]" % (
        desc, frac * 100, bar, n, total, _fmt_time(elapsed), _remaining(n, total, elapsed), _rate(n, elapsed))


class Bar(object):
    """tqdm-like progress on stderr.

    newline_each: sglang <= 0.5.9 put "\\n" at the end of BAR_FORMAT, so every refresh is "\\r...\\n";
    later versions redraw in place ("\\r..." only) and write one "\\n" when the bar closes.
    """

    def __init__(self, render, total, newline_each):
        self.render, self.total, self.newline_each = render, total, newline_each
        self.t0 = time.time()
        self.n = 0
        self._draw()

    def _draw(self):
        text = "\r" + self.render(self.n, self.total, time.time() - self.t0)
        raw(text + ("\n" if self.newline_each else ""))

    def update(self):
        self.n += 1
        self._draw()

    def close(self):
        if not self.newline_each:
            raw("\n")
