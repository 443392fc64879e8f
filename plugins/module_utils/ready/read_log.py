# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's log source: the server's log read incrementally and fed to the stage tracker and the classifier.

Fills the log's part of a verdicts.Snapshot (``PART``): the stage, the tail and when the first line that ends a
start-up was read. A log that cannot be read at the first look is a refusal (BadInput); one that goes away later
reads as no new lines.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import (LogReader, LogUnreadable, clean, in_order,
                                                                                 read_tail)
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import Classifier
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import StageTracker

DRAIN_MAX = 256 * 1024 * 1024  # read at most this much more log before a verdict
REORDER_MAX = 8 * 1024 * 1024  # a log this small is re-read whole when the wait ends, to see its order

# The snapshot fields this source writes, and no other.
PART = ("has_log", "stage", "stage_label", "stage_began", "ready_at", "tail", "first_strong_at")


class LogSource:
    """The log at ``params['log_path']`` (none when unset: the stage stays 'starting', the tail empty)."""

    def __init__(self, params, state=None):
        s = state or {}
        self.path = params.get("log_path")
        self.extra_patterns = params.get("extra_patterns")
        self.reader = LogReader(self.path, params["tail_lines"], s.get("reader")) if self.path else None
        self.stages = StageTracker(s.get("stages"))
        self.cls = Classifier(self.extra_patterns, s.get("cls"))

    def dump(self):
        return {"reader": self.reader.dump() if self.reader else None, "stages": self.stages.dump(),
                "cls": self.cls.dump()}

    def check_readable(self):
        """At the first look: a log path that is no readable file is the caller's mistake."""
        if self.reader is not None:
            try:
                self.reader.check_readable()
            except LogUnreadable as e:
                raise BadInput(str(e))

    def see(self, s):
        """Every poll: read the new lines, then fill the log's part. True when the log moved (new bytes or events)."""
        moved = self.feed(s.now)
        s.has_log = self.reader is not None
        s.stage, s.stage_label, s.stage_began = self.stages.stage, self.stages.label(), self.stages.began
        s.ready_at = self.stages.stages[-1]["began"] if self.stages.stage == "ready" else None
        s.tail = self.reader.tail_lines() if self.reader else []
        s.first_strong_at = self.cls.first_strong_at
        return moved

    def feed(self, now):
        """The lines written since the last read, to the stage tracker and the classifier; True when the log moved."""
        if self.reader is None:
            return False
        before = self.reader.bytes_read
        for line in self.reader.poll():
            restarts = self.stages.restarts
            self.stages.feed(line, now)
            if self.stages.restarts != restarts:
                self.cls.reset()  # a new run in the same log: forget the old failure
            self.cls.feed(line, self.stages.stage, now)
        cur = self.reader.current()
        if cur:
            self.stages.progress(cur)
        return bool(self.reader.bytes_read != before or self.reader.events)

    def drain(self, now):
        """Read the log to its end (all of it, whatever the per-poll chunk), then classify; True when it moved."""
        if self.reader is None:
            return False
        start, moved = self.reader.bytes_read, False
        while self.reader.bytes_read - start < DRAIN_MAX:
            before = self.reader.bytes_read
            moved = self.feed(now) or moved
            if self.reader.bytes_read == before:
                break
        # A last line without its newline (the process died mid-line) still counts.
        cur = self.reader.current()
        if cur:
            self.stages.feed(cur, now)
            self.cls.feed(cur, self.stages.stage, now)
        return moved

    def verdict(self):
        """The classifier's verdict: over the whole log put in order when it was not, else as read."""
        return self.verdict_in_order() or self.cls.verdict()

    def verdict_in_order(self):
        """The classifier's verdict over the whole log put in order, when it was not (a newest-first or rank-interleaved
        paste replayed into the log); None when the log is in order, too big, or unreadable."""
        if not self.reader:
            return None
        if self.reader.size > REORDER_MAX:
            return None
        text = read_tail(self.path, REORDER_MAX)  # host/untrusted: a regular file, no link, nothing that blocks
        if text is None:
            return None
        lines, order = in_order([clean(x) for x in text.replace("\r", "\n").split("\n") if x.strip()])
        if order == "ordered":
            return None
        cls, stages = Classifier(self.extra_patterns), StageTracker()
        for line in lines:
            stages.feed(line, 0)
            cls.feed(line, stages.stage, 0)
        return dict(cls.verdict(), order=order)

    def report(self):
        """The log's facts every result carries."""
        return {"log_tail": self.reader.tail_lines() if self.reader else [],
                "log_bytes_read": self.reader.bytes_read if self.reader else 0}
