# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The I/O of server_ready: one reader per source, each filling its part of a verdicts.Snapshot, put together.

``read_log`` (the server's log: stages, classifier, tail), ``read_process`` (pid, pid file and the supervisor's
status file, systemd unit, the port's owner), ``read_activity`` (the process tree's CPU and I/O, stopped members,
the GPUs' memory), ``read_http`` (rank 0's API). A poll takes the snapshot in steps, cheap looks first, and asks each
step's predicates (verdicts.py) before the next, costlier look (see waiter.py for the cadence). Nothing here decides
how the wait ends: the predicates do.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import verdicts
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.read_activity import ActivitySource
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.read_http import HttpSource
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.read_log import LogSource
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.read_process import ProcessSource
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client


class Probe:
    """The four sources of one server's wait; ``state``: a previous Probe's ``dump()`` (then no first look)."""

    def __init__(self, params, net, state=None, clock=None, sleep=None, client=None, run=None):
        self.net = net
        self.client = client or Client(net["base"], params.get("api_key"), params.get("validate_certs", True))
        s = state or {}
        self.log = LogSource(params, s.get("log"))
        self.process = ProcessSource(params, clock, sleep, run, s.get("process"))
        self.activity = ActivitySource(params, run, s.get("activity"))
        self.http = HttpSource(params, self.client, sleep, s.get("http"))
        if not s:
            self.log.check_readable()
            pid = self.process.first_look(has_log=self.log.reader is not None)
            if pid is not None:
                self.activity.start(pid)

    def dump(self):
        return {"log": self.log.dump(), "process": self.process.dump(), "activity": self.activity.dump(),
                "http": self.http.dump()}

    # -- one poll: the snapshot step by step, each step's predicates before the next look --------
    def poll(self, s, costly):
        """The Ending of this poll, or None; ``costly``: the tree, the unit and the GPUs are due."""
        changed = self.see_process(s)
        ending = verdicts.first(verdicts.PROCESS, s)
        if ending is not None:
            return ending
        self.see_activity(s, costly)
        ending = verdicts.first(verdicts.ACTIVITY, s)
        if ending is not None:
            return ending
        self.see_http(s, urgent=changed and s.stage in ("warmup", "ready"))
        ending = verdicts.first(verdicts.READINESS, s)
        if ending is not None:
            return ending
        if s.health == 200 and verdicts.answered_before_our_http(s):
            # Remembered: at the deadline it says who answered all along.
            self.http.remember_answered_early()
            s.answered_early_seen = True
        return verdicts.first(verdicts.LIMITS, s)

    def see_process(self, s):
        """Every poll: new log lines, and whether the process is still there. True when the stage changed."""
        stage_before = self.log.stages.stage
        if self.log.see(s):
            self.activity.moved(s.now)
        if s.stage == "ready":
            self.http.hint_ready(s.now)
        self.process.see(s)
        return s.stage != stage_before

    def see_activity(self, s, costly):
        """The unit's state, the tree's CPU and I/O and the GPUs' memory when ``costly`` (every interval)."""
        self.process.see_unit(s, look=costly)
        self.activity.see(s, self.process.pid, look=costly)

    def see_http(self, s, urgent):
        """Rank 0's readiness and, for a 200 before any fatal line, whether the port is someone else's."""
        self.http.see(s, urgent)
        if s.rank0:
            answered = s.health == 200 and s.first_strong_at is None
            self.process.see_port(s, self.net["host"], self.net["port"], look=answered,
                                  ask_age=s.stage == "starting" and s.has_log)

    # -- how it ended ---------------------------------------------------------------------------
    def look_after_exit(self, now):
        """The process or unit ended: let the tree's other writers finish, read the log to its end and find the
        exit status (ours, the supervisor's, or systemd's)."""
        if self.process.pid and self.process.alive() is False:
            self.process.settle(self.activity.members)
        if self.log.drain(now):
            self.activity.moved(now)
        return self.process.exit_status()

    def stopped_members(self):
        """Pids of the server's process tree in state T/t (stopped by a signal or a tracer): asked once, at a stall."""
        return self.activity.stopped_members(self.process.pid)

    def report(self, failed):
        """The facts every result carries; for a failure also the journal and the GPUs."""
        r = self.log.report()
        r.update(self.process.report(failed))
        if "process" in r:
            r["process"].update(self.activity.usage())
        r.update(self.activity.report(failed))
        return r
