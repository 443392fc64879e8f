# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait for an SGLang server to be ready, or say precisely why it is not: the loop.

Three parts, as kubernetes.core's waiter is built: this loop owns the clock and the resume
state; probe.py takes each poll's snapshot through one reader per source (read_log, read_process,
read_activity, read_http: the only I/O) and asks verdicts.py, the pure predicates that say whether
the wait ends and how (messages.py their words).

Cheap looks run every ``tick`` (0.1 s): a ``stat`` of the log and a read of its new bytes, and
/proc/<pid>/stat.  Costly ones run only when they can change the verdict: the process tree's
CPU/IO and systemctl every ``interval``, a TCP connect to the port every 0.25 s, the health
endpoint only once the port is open or the log says the HTTP server is up, nvidia-smi only when
everything else has been idle a while.

The waiter is resumable: ``run(budget=...)`` returns after ``budget`` seconds (or a stage change)
with ``done: False`` and a JSON-able ``state``; a new Waiter built from that state carries on,
on the same monotonic clock.  That lets the action plugin print progress without one SSH
connection per poll.
"""

from __future__ import annotations

import os
import time
import traceback

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import host_fit, messages, verdicts
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import (  # noqa: F401 (BadInput: the module's)
    BadInput, validate, with_defaults)
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.probe import Probe

TICK = 0.1             # cheap looks
FATAL_GRACE = 5.0      # a fatal line while the parent lingers ends the wait after this

STATE_VERSION = 3  # 3: the probe's state is one part per source


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except (OSError, IOError):
        return None


def where_it_broke(exc):
    """The innermost frame of the collection's own code, and the one that raised when it is another's."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    ours = [f for f in frames if "/module_utils/" in f.filename.replace(os.sep, "/")]
    if not frames:
        return "while waiting"
    at = ours[-1] if ours else frames[-1]
    text = "in %s (%s:%d)" % (at.name, os.path.basename(at.filename), at.lineno)
    if frames[-1] is not at:
        text += " raised by %s (%s:%d)" % (frames[-1].name, os.path.basename(frames[-1].filename), frames[-1].lineno)
    return text


def error_result(exc, params, elapsed=0.0):
    """A verdict for the waiter's own failure: what broke and where, never a traceback or a bare None."""
    return {"done": True, "failed": True, "reason": "error", "category": "unknown", "key_line": None,
            "remedy": messages.R_OWN_ERROR, "elapsed": round(elapsed, 2),
            "msg": messages.own_error(exc, where_it_broke(exc), secrets=[(params or {}).get("api_key")])}


class Waiter:
    def __init__(self, params, state=None, clock=time.monotonic, sleep=time.sleep, client=None, run=None):
        self.p = with_defaults(params)
        self.net = validate(self.p)
        self.clock, self.sleep = clock, sleep
        self.tick = float(self.p.get("tick") or TICK)
        self.fatal_grace = float(self.p.get("fatal_grace") or FATAL_GRACE)
        s = state or {}
        if s and s.get("v") != STATE_VERSION:
            raise BadInput("resume state is from another version of this module")
        if s and s.get("boot_id") != _boot_id():
            raise BadInput("resume state is from before a reboot")
        self.t0 = s.get("t0", clock())
        self.n = s.get("n") or {"polls": 0}
        self.reported_stage = s.get("reported_stage")
        self._last_slow = -1e9
        # the SGLang client (sglang/client.py): given by the caller, else one for params' url and api_key
        self.probe = Probe(self.p, self.net, s.get("probe"), clock, sleep, client=client, run=run)

    def now(self):
        return self.clock() - self.t0

    def dump(self):
        return {"v": STATE_VERSION, "boot_id": _boot_id(), "t0": self.t0, "n": self.n,
                "reported_stage": self.probe.log.stages.stage, "probe": self.probe.dump()}

    def _snapshot(self, now):
        p = self.p
        return verdicts.Snapshot(
            now=now, rank0=p["node_rank"] == 0, node_rank=p["node_rank"], unit=p.get("unit"),
            base=self.net["base"], fatal_grace=self.fatal_grace,
            stage_timeouts=p["stage_timeouts"], stall_timeout=p["stall_timeout"], timeout=p["timeout"],
            verify_generation=p["verify_generation"], chat_probe=p["chat_probe"], peers=self.host_view()["peers"])

    def host_view(self):
        """The host as far as it is known: the host option, overridden by the launch's own server_args line."""
        return host_fit.view(self.p.get("host"), self.probe.log.cls.launch)

    # -- the loop ---------------------------------------------------------------------------------
    def run(self, budget=None, return_on_stage_change=False):
        """Wait (at most ``budget`` seconds when given); the waiter's own exceptions come back as a verdict."""
        try:
            return self._run(budget, return_on_stage_change)
        except Exception as e:  # noqa: BLE001 - any of our own failures: say what broke, never a traceback
            r = error_result(e, self.p, self.now())
            r.update(stage=self.probe.log.stages.stage, stages=self.probe.log.stages.stages)
            return r

    def _run(self, budget, return_on_stage_change):
        started = self.clock()
        if self.reported_stage is None:
            self.reported_stage = self.probe.log.stages.stage
        while True:
            now = self.now()
            self.n["polls"] += 1
            s = self._snapshot(now)
            costly = now - self._last_slow >= self.p["interval"]
            if costly:
                self._last_slow = now
            ending = self.probe.poll(s, costly)
            if ending is not None:
                return self._end(ending, s)
            if budget is not None:
                if self.clock() - started >= budget:
                    return self._partial(now)
                if (return_on_stage_change and s.stage != self.reported_stage
                        and s.stage not in ("http", "warmup")):
                    return self._partial(now)
            self.sleep(self.tick)

    # -- how it ends --------------------------------------------------------------------------------
    def _end(self, ending, s):
        if not ending.failed:
            return self._ready(ending, s)
        exit_status = None
        why = ending.why
        if ending.explain == "stall":
            s.stopped = tuple(self.probe.stopped_members())
        if ending.explain == "crash":
            # Explain only from the whole log and the exit status, once the process tree is gone.
            exit_status = self.probe.look_after_exit(s.now)
            if exit_status is not None:
                why += messages.EXIT_STATUS % exit_status
        found = self.probe.log.verdict()
        verdict = verdicts.explain(ending, found, s, exit_status)
        if ending.key is None:
            verdict = host_fit.fit(verdict, self.host_view(), s.stage)
        return self._result(s.now, ending.reason, why, verdict)

    def _ready(self, ending, s):
        self.probe.log.stages.set("ready", s.now)
        if ending.why == "worker":
            r = self._result(s.now)
            r["msg"] = messages.worker_ready(self.p["node_rank"], s.now)
            return r
        if s.verify_generation:
            s.generation = self.probe.http.verify_generation()
            failed = verdicts.generation_fails(s)
            if failed is not None:
                return self._result(self.now(), failed.reason, failed.why, failed.key)
        facts = self.probe.http.server_facts()
        if s.chat_probe:
            s.chat = self.probe.http.verify_chat(facts.get("served_model"))
            failed = verdicts.chat_fails(s)
            if failed is not None:
                return self._result(self.now(), failed.reason, failed.why, failed.key)
        r = self._result(self.now())
        r["server"] = facts
        r["ready_by"] = "log+generation" if s.fast else "health+generation" if s.verify_generation else "health"
        if s.chat_probe:
            r["ready_by"] += "+chat"
        if not s.fast:
            r["health_status"] = 200
        return r

    def _result(self, now, reason=None, why=None, verdict=None):
        stages, h = self.probe.log.stages, self.probe.http.h
        failed = reason is not None
        r = {"done": True, "failed": failed, "elapsed": round(now, 2), "stage": stages.stage,
             "stage_label": stages.label(), "stages": stages.stages, "health_status": h["status"],
             "health_path": self.probe.http.health_path(), "polls": self.n["polls"], "health_calls": h["calls"]}
        r.update(self.probe.report(failed))
        r["log_warnings"] = self.probe.log.cls.warnings_seen()
        if failed:
            if verdict.get("cause_line"):
                r["cause_line"] = verdict["cause_line"]  # an nccl verdict's error, beside the peer line it quotes
            r.update({"reason": reason, "category": verdict["category"], "key_line": verdict.get("line"),
                      "remedy": verdict["remedy"], "stage": verdict.get("stage") or stages.stage,
                      "msg": messages.failure(why, stages.stage, now, verdict)})
        else:
            r["msg"] = messages.ready(now, r["log_warnings"])
        return r

    def _partial(self, now):
        stages = self.probe.log.stages
        out = {"done": False, "elapsed": round(now, 2), "stage": stages.stage, "stage_label": stages.label(),
               "stages": stages.stages, "health_status": self.probe.http.h["status"], "state": self.dump()}
        if self.probe.process.pid:
            out["cpu_seconds"] = self.probe.activity.usage()["cpu_seconds"]
        return out
