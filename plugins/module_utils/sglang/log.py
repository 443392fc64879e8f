# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Incremental reader for an SGLang server log.

Each poll costs one ``stat`` and, only when the file grew, one read of the new
bytes: the cost follows new bytes, not file size.  Lines end at ``\\n`` *or*
``\\r`` because tqdm bars (weights, CUDA graphs) redraw in place with ``\\r``
from 0.5.10 on and a reader that splits on ``\\n`` only shows stale bars for
minutes.  Truncation (size below our offset), rotation (new inode) and a log
that does not exist yet are all normal states, not errors.

The reader keeps no file descriptor between polls so that its whole state is a
small JSON-able dict (the module is resumable across invocations).

The log is opened through host/untrusted (``open_path``): a regular file only, never through a link (a log linked
to /etc/shadow is refused, not shown in a tail), nothing that blocks (a FIFO is refused, not waited on); only the
bytes asked for are read. ``read_tail`` is the one reader of a log's last bytes for the other modules.
"""

from __future__ import annotations

import collections
import os
import re

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted

# A tqdm bar: "<desc>: 45%|####  | 10/22 [..]" or SGLang's
# "<desc>:  97% Completed | 62/64 [..]".  Group 1 is the description, used to
# collapse successive states of the same bar into one tail line.
# (\s* only where a run of blanks starts, and a rank tag's bracket stops at the next one: linear on any line.)
_BAR_RE = re.compile(r"^(.*?):?(?<!\s)\s*\d{1,3}%(?:\s*Completed\s*)?\|")
_EOL_RE = re.compile(b"\\r\\n|\\r|\\n")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# Bytes read at most per poll; the rest waits for the next poll so that a
# burst (or a huge pre-existing log) never costs more than this per poll.
DEFAULT_CHUNK = 4 * 1024 * 1024
# Of a log that is already big when the wait begins, read only the end.
DEFAULT_INITIAL_WINDOW = 1024 * 1024
# An unterminated line longer than this is emitted anyway (bounded memory).
MAX_PARTIAL = 64 * 1024


class LogUnreadable(Exception):
    """The log exists but cannot be read (permissions, a directory, ...)."""


def bar_key(line):
    """Return the description of a tqdm bar line, or None if it is no bar."""
    m = _BAR_RE.match(line)
    return m.group(1).strip() if m else None


def clean(text):
    return _ANSI_RE.sub("", text).rstrip()


class LogReader:
    """Follow one log file.  ``poll()`` returns the new complete lines."""

    def __init__(self, path, tail_lines=40, state=None, chunk=DEFAULT_CHUNK,
                 initial_window=DEFAULT_INITIAL_WINDOW):
        self.path = path
        self.chunk = chunk
        self.initial_window = initial_window
        self.tail = collections.deque(maxlen=max(1, tail_lines))
        self.ino = None
        self.dev = None
        self.offset = 0
        self.size = 0
        self.partial = b""
        self.partial_cr = False  # the last complete line ended with a bare \r
        self.events = []  # "appeared", "truncated", "rotated"
        self.bytes_read = 0
        if state:
            self._load(state)

    # -- state ------------------------------------------------------------
    def dump(self):
        return {
            "ino": self.ino, "dev": self.dev, "offset": self.offset,
            "size": self.size, "bytes_read": self.bytes_read,
            "partial": self.partial.decode("utf-8", "replace"),
            "partial_cr": self.partial_cr, "tail": list(self.tail),
        }

    def _load(self, st):
        self.ino, self.dev = st.get("ino"), st.get("dev")
        self.offset, self.size = st.get("offset", 0), st.get("size", 0)
        self.bytes_read = st.get("bytes_read", 0)
        self.partial = st.get("partial", "").encode("utf-8")
        self.partial_cr = st.get("partial_cr", False)
        self.tail.extend(st.get("tail", []))

    # -- checks -----------------------------------------------------------
    def check_readable(self):
        """Raise LogUnreadable naming the log when it exists but is not a regular file reached without a link, or
        cannot be read; False when it does not exist yet (it appears later), else its size."""
        try:
            opened = untrusted.open_path(self.path, untrusted.LOG)
        except untrusted.Refused as e:
            raise LogUnreadable("log %s" % e)
        if opened is None:
            return False
        os.close(opened[0])
        return opened[1].st_size

    @property
    def exists(self):
        return self.ino is not None

    # -- polling ----------------------------------------------------------
    def poll(self):
        """Read what is new.  Return a list of new complete lines (str)."""
        self.events = []
        try:
            opened = untrusted.open_path(self.path, untrusted.LOG)
        except untrusted.Refused:
            return []  # became a link or a FIFO since the first look: never read (the first look names it)
        if opened is None:
            return []
        fd, st = opened
        try:
            return self._read(fd, st)
        finally:
            os.close(fd)

    def _read(self, fd, st):
        if self.ino is None:
            self.events.append("appeared")
            self.ino, self.dev = st.st_ino, st.st_dev
            self.offset = 0
            if st.st_size > self.initial_window:
                # Skip into the last window; the first (cut) line is dropped.
                self.offset = st.st_size - self.initial_window
                self._skip_cut_line = True
        elif (st.st_ino, st.st_dev) != (self.ino, self.dev):
            self.events.append("rotated")
            self.ino, self.dev, self.offset = st.st_ino, st.st_dev, 0
            self._reset_partial()
        elif st.st_size < self.offset:
            self.events.append("truncated")
            self.offset = 0
            self._reset_partial()
        self.size = st.st_size
        if st.st_size == self.offset:
            return []
        try:
            data = untrusted.read_exact(fd, self.offset, min(self.chunk, st.st_size - self.offset), self.path,
                                        short_ok=True)
        except OSError:
            return []
        self.offset += len(data)
        self.bytes_read += len(data)
        if getattr(self, "_skip_cut_line", False):
            self._skip_cut_line = False
            cut = min([i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0] or [len(data)])
            data = data[cut + 1:]
        return self._split(data)

    def _reset_partial(self):
        self.partial = b""
        self.partial_cr = False

    def _split(self, data):
        buf = self.partial + data
        out = []
        start = 0
        for m in _EOL_RE.finditer(buf):
            if m.group() == b"\r" and m.end() == len(buf):
                break  # may be the first half of "\r\n": decide next poll
            self._emit(buf[start:m.start()], m.group() == b"\r", out)
            start = m.end()
        self.partial = buf[start:]
        if len(self.partial) > MAX_PARTIAL:
            self._emit(self.partial, False, out)
            self.partial = b""
        return out

    def _emit(self, seg, ended_by_cr, out):
        line = clean(seg.decode("utf-8", "replace"))
        if not line:
            # "\r<bar>\n" style (<= 0.5.9) yields empty segments: skip them,
            # but keep the "previous line was a redraw" mark.
            return
        key = bar_key(line)
        replace = False
        if self.tail:
            prev = self.tail[-1]
            if self.partial_cr:
                replace = True  # in-place redraw of the previous state
            elif key is not None and bar_key(prev) == key:
                replace = True  # "\r<bar>\n" style: same bar, newer state
        if replace:
            self.tail[-1] = line
        else:
            self.tail.append(line)
        self.partial_cr = ended_by_cr
        out.append(line)

    def current(self):
        """The unterminated line being drawn now (a live tqdm bar), if any."""
        return clean(self.partial.decode("utf-8", "replace"))

    def tail_lines(self):
        lines = list(self.tail)
        cur = self.current()
        if cur:
            if lines and (self.partial_cr or (bar_key(cur) and bar_key(cur) == bar_key(lines[-1]))):
                lines[-1] = cur
            else:
                lines.append(cur)
        return lines[-self.tail.maxlen:]


def read_tail(path, max_bytes):
    """The last ``max_bytes`` of the log at ``path`` as text (host/untrusted.tail); None when there is none, or it is
    refused (a link, a FIFO, a device: never read) or unreadable."""
    if not path:
        return None
    try:
        data = untrusted.tail(path, max_bytes)
    except (untrusted.Refused, OSError):
        return None
    return None if data is None else data.decode("utf-8", "replace")


# -- logs pasted in another order ---------------------------------------------------------------------------------
# A live log is in order; a log copied from a cloud viewer is often newest-first, and a multi-rank paste may
# interleave the ranks' tracebacks line by line. Both break "the frames above an exception say where it was raised"
# and "the earliest equal line wins". order_of() tells which order a list of lines is in, from the timestamps (their
# direction), else from the shape of the tracebacks (a header below its frames); in_order() puts them back.
_STAMP_RES = (
    # 2025-12-28 13:06:52[.123] (SGLang, ISO, k8s / GitHub Actions prefixes)
    (re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"), (1, 2, 3, 4, 5, 6, 7)),
    # glog / torch C++: E1211 16:33:14.602000
    (re.compile(r"\b[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)"), (None, 1, 2, 3, 4, 5, 6)),
    # vLLM-style: INFO 12-23 21:29:24
    (re.compile(r"\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\b"), (None, 1, 2, 3, 4, 5, None)),
)
_TB_HEADER = "Traceback (most recent call last)"
_FRAME_LINE_RE = re.compile(r"""\bFile "[^"]+", line \d+""")
_EXC_LINE_RE = re.compile(r"^\W{0,3}(?:\[[^\]]*\]:?\s*)?(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b:?")
_RANK_TAG_RE = re.compile(r"\[(?:[^\][]*\s)?((?:TP|DP|PP|EP)\d+)\]|\[rank(\d+)\]|\brank[= ](\d+)\b|\(\w+ pid=(\d+)\)")


def timestamp_of(line):
    """A sortable tuple (year, month, day, hour, minute, second, microsecond) from the first timestamp in the line's
    first 120 characters (a format without the year has 0 there), or None."""
    head = line[:120]
    for rx, fields in _STAMP_RES:
        m = rx.search(head)
        if m:
            vals = [m.group(g) if g else None for g in fields]
            return tuple(int(v) if v else 0 for v in vals[:6]) + (int((vals[6] or "0")[:6].ljust(6, "0")),)
    return None


def rank_tag(line):
    m = _RANK_TAG_RE.search(line[:160])
    return next((g for g in m.groups() if g), None) if m else None


def order_of(lines):
    """'reversed' (newest first), 'interleaved' (ranks' traceback lines mixed) or 'ordered'."""
    stamps = [ts for ts in (timestamp_of(x) for x in lines) if ts is not None]
    ups = sum(1 for a, b in zip(stamps, stamps[1:]) if b > a)
    downs = sum(1 for a, b in zip(stamps, stamps[1:]) if b < a)
    if downs >= 2 and downs > 2 * ups:
        return "reversed"
    if ups < 2 or ups <= 2 * downs:
        # Too few timestamps to tell: the tracebacks' shape does (the header sits above its frames).
        # the exception line sits below its frames, too (a paste may have lost its header).
        fwd = rev = 0
        for i, line in enumerate(lines):
            header, exc = _TB_HEADER in line, bool(_EXC_LINE_RE.match(line))
            if not (header or exc):
                continue
            near_after = any(_FRAME_LINE_RE.search(x) for x in lines[i + 1:i + (2 if header else 5)])
            near_before = any(_FRAME_LINE_RE.search(x) for x in lines[max(0, i - (2 if header else 4)):i])
            if header:
                fwd += bool(near_after)
                rev += bool(near_before and not near_after)
            else:
                fwd += bool(near_before)
                rev += bool(near_after and not near_before)
        if rev > fwd:
            return "reversed"
    # Frames of different ranks next to each other, again and again: the ranks' tracebacks are interleaved.
    tagged = [(rank_tag(x), x) for x in lines if _FRAME_LINE_RE.search(x)]
    switches = sum(1 for (a, _x), (b, _y) in zip(tagged, tagged[1:]) if a and b and a != b)
    if switches >= 2 and len(set(t for t, _x in tagged if t)) >= 2:
        return "interleaved"
    return "ordered"


def in_order(lines):
    """(lines oldest first with each rank's lines together where they were interleaved, the order found)."""
    order = order_of(lines)
    if order == "reversed":
        lines = list(reversed(lines))
        if order_of(lines) == "interleaved":
            order = "reversed+interleaved"
    if order.endswith("interleaved"):
        groups, current = {}, None
        for line in lines:
            current = rank_tag(line) or current
            groups.setdefault(current, []).append(line)
        lines = [x for g in groups.values() for x in g]  # dicts keep insertion order: the rank that spoke first leads
    return lines, order
