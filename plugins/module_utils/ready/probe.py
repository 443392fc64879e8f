# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The I/O of server_ready: everything that looks at the host and fills a verdicts.Snapshot.

The server's log (read incrementally, fed to the stage tracker and the classifier), its process
(pid, pid file and the supervisor's status file, systemd unit, the process tree's CPU and I/O),
the owner of its port, the GPUs' memory, and its HTTP API.  Cheap looks run every poll; costly
ones only when they can change the verdict (see waiter.py).  Nothing here decides how the wait
ends: the predicates in verdicts.py do.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as nvidia_smi
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import messages
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput, readiness_path
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import LogReader, LogUnreadable, clean, in_order
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import Classifier
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import StageTracker

PORT_PROBE = 0.25       # TCP connect while the port is closed
GPU_IDLE_PROBE = 10.0   # sample nvidia-smi when idle at most this often
VERIFY_TRIES = 3
TREE_RESCAN = 5.0       # re-list the process tree's members (a scan of all /proc)
TREE_EXIT_GRACE = 10.0  # after the main process died, wait this long for its children (log writers)
STATUS_GRACE = 3.0      # and this long for the supervisor's exit-status file
DRAIN_MAX = 256 * 1024 * 1024  # read at most this much more log before a verdict
REORDER_MAX = 8 * 1024 * 1024  # a log this small is re-read whole when the wait ends, to see its order


def unit_exit_status(props):
    """systemd's ExecMainCode/ExecMainStatus as an exit status (negative for a signal), or None before the exit."""
    code, status = props.get("ExecMainCode"), props.get("ExecMainStatus")
    if code not in ("1", "2", "3") or status in (None, ""):  # CLD_EXITED, CLD_KILLED, CLD_DUMPED
        return None
    return int(status) if code == "1" else -int(status)


class Probe:
    def __init__(self, params, net, state=None, clock=None, sleep=None, client=None, run=None):
        self.p, self.net, self.clock, self.sleep = params, net, clock, sleep
        self.run = run  # the module's runner (host/run.py): systemctl, journalctl, nvidia-smi
        self.client = client or Client(net["base"], params.get("api_key"), params.get("validate_certs", True))
        s = state or {}
        self.reader = LogReader(params["log_path"], params["tail_lines"], s.get("log")) if params.get("log_path") else None
        self.stages = StageTracker(s.get("stages"))
        self.cls = Classifier(params.get("extra_patterns"), s.get("cls"))
        self.proc = s.get("proc") or {}
        self.h = s.get("h") or {"status": None, "port_open": False, "last": None, "error": None,
                                "calls": 0, "ready_hint_at": None, "path": readiness_path(params), "asked": False}
        self.last_progress = s.get("last_progress", 0.0)
        self.stopped_since = s.get("stopped_since")
        self.slow_polls = s.get("slow_polls", 0)
        self._last_port_probe = -1e9
        self._last_gpu = -1e9
        self.unit_props = {}
        self.died_before = None
        self._tree, self._tree_at = None, -1e9
        if not s:
            self._first_look()

    def dump(self):
        return {"log": self.reader.dump() if self.reader else None, "stages": self.stages.dump(),
                "cls": self.cls.dump(), "proc": self.proc, "h": self.h, "last_progress": self.last_progress,
                "stopped_since": self.stopped_since, "slow_polls": self.slow_polls}

    # -- the process: first look --------------------------------------------------------------
    def _first_look(self):
        if self.reader is not None:
            try:
                self.reader.check_readable()
            except LogUnreadable as e:
                raise BadInput(str(e))
        pid = self.p.get("pid")
        if self.p.get("pid_file"):
            pid = self._pid_from_file()
            if pid is None:
                return  # died before the wait began; died_before says so
        if self.p.get("unit"):
            pid = self._first_look_at_unit()
            if self.died_before:
                return
        if pid is not None:
            st = proc_watch.proc_stat(int(pid))
            if st is None or st[0] in ("Z", "X"):
                if not self.reader:
                    raise BadInput("pid %s is not running (and no log_path to say why)" % pid)
                # Gone before the first look (a bad flag exits in a second): explain it from the log.
                self.proc = {"pid": int(pid), "exit_status": self._exit_status_of(int(pid))}
                self.died_before = messages.PID_DIED_BEFORE % pid
                return
            u = proc_watch.tree_usage(int(pid))
            self.proc = {"pid": int(pid), "starttime": st[3], "cpu_s": u["cpu_s"],
                         "io_bytes": u["io_bytes"], "gpu_mem": None}

    def _first_look_at_unit(self):
        unit = self.p["unit"]
        props = proc_watch.unit_show(unit, run=self.run)
        if "error" in props:
            raise BadInput("cannot query unit %s: %s" % (unit, props["error"]))
        if props.get("LoadState") == "not-found":
            raise BadInput("systemd unit %s not found" % unit)
        self.unit_props = props
        if proc_watch.unit_running(props):
            return int(props.get("MainPID") or 0) or None
        if props.get("ActiveState") == "failed" or props.get("Result") not in (None, "", "success"):
            # Started and already dead (a crash in the first second, before the wait began):
            # say why from the log and journal, not just "not running".
            self.died_before = messages.UNIT_DIED_BEFORE % (
                unit, props.get("ActiveState"), props.get("SubState"), props.get("Result"))
            ex = unit_exit_status(props)
            if ex is not None:
                self.proc = {"exit_status": ex}
            return None
        raise BadInput("unit %s is not running (%s/%s, result %s)" % (
            unit, props.get("ActiveState"), props.get("SubState"), props.get("Result")))

    def _status_file(self):
        """roles/server's supervisor (server/supervise.py) records how the server ended here."""
        return (self.p["pid_file"] + ".status") if self.p.get("pid_file") else None

    def _read_status(self):
        path = self._status_file()
        if not path:
            return {}
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, IOError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _pid_from_file(self):
        """The pid in pid_file; None (with died_before set) when the server already ended."""
        missing = None
        try:
            with open(self.p["pid_file"]) as f:
                return int(f.read().split()[0])
        except (OSError, IOError) as e:
            missing = e
        except (ValueError, IndexError) as e:
            raise BadInput("pid_file %s does not hold a pid: %s" % (self.p["pid_file"], e))
        # The supervisor removes the pid file when the server ends and keeps <pid_file>.status.
        status = self._read_status()
        if status.get("pid") and status.get("returncode") is not None:
            self.proc = {"pid": int(status["pid"]), "exit_status": int(status["returncode"])}
            self.died_before = messages.SUPERVISED_DIED_BEFORE % status["pid"]
            return None
        raise BadInput("pid_file %s unreadable (%s) and no exit status in %s: was the server started?" % (
            self.p["pid_file"], getattr(missing, "strerror", missing), self._status_file()))

    def _exit_status_of(self, pid, wait=0.0):
        """Exit status of pid when it can be known: our own child, or the supervisor's status file."""
        deadline = self.clock() + wait
        while True:
            ex = proc_watch.exit_status_of_child(pid)
            if ex is not None:
                return ex
            status = self._read_status()
            if status.get("pid") == pid and status.get("returncode") is not None:
                return int(status["returncode"])
            if self.clock() >= deadline:
                return None
            self.sleep(0.05)

    def alive(self):
        """True/False, or None when nothing is watched."""
        if not self.proc.get("pid"):
            return None
        return proc_watch.alive(self.proc["pid"], self.proc.get("starttime"))

    # -- the snapshot, step by step -----------------------------------------------------------
    def see_process(self, s):
        """Every poll: new log lines, and whether the process is still there."""
        stage_before = self.stages.stage
        self.feed_log(s.now)
        if self.stages.stage == "ready" and self.h["ready_hint_at"] is None:
            self.h["ready_hint_at"] = s.now
        s.died_before = self.died_before
        s.pid = self.proc.get("pid")
        s.alive = self.alive()
        self._see_log(s)
        return self.stages.stage != stage_before

    def see_activity(self, s, costly):
        """CPU, I/O, unit state and GPU memory when ``costly`` (every interval); the log's verdict state always."""
        if costly:
            self._slow(s.now)
        if self.p.get("unit") and self.unit_props:
            props = self.unit_props
            s.unit_running = proc_watch.unit_running(props)
            s.unit_active, s.unit_sub = props.get("ActiveState"), props.get("SubState")
        s.first_strong_at = self.cls.first_strong_at
        s.last_progress = self.last_progress
        s.stopped_since = self.stopped_since
        self._see_log(s)

    def see_http(self, s, urgent):
        """Rank 0's readiness: the endpoint (or the log's "fired up", proved by a generation later), and, for a 200,
        whether the port is someone else's."""
        s.ready_hint_at = self.h["ready_hint_at"]
        if not s.rank0:
            return
        s.health_path = self.h["path"] or "/ready"
        s.fast = s.stage == "ready" and s.verify_generation
        s.health = 200 if s.fast else self._http(s.now, urgent or (s.stage == "ready" and self.h["status"] != 200))
        s.health_error = self.h["error"]
        s.health_path = self.h["path"] or "/ready"
        if s.health == 200 and s.first_strong_at is None:
            s.foreign_port = self._foreign_port()
            if s.stage == "starting" and s.has_log and s.pid:
                s.process_age = proc_watch.age(s.pid)
        s.foreign_seen = bool(self.h.get("foreign"))
        s.answered_early_seen = bool(self.h.get("answered_early"))

    def health_path(self):
        """The readiness endpoint in use (None until an SGLang of unknown version answered once)."""
        return self.h["path"]

    def remember_answered_early(self):
        self.h["answered_early"] = True

    def _see_log(self, s):
        s.has_log = self.reader is not None
        s.stage, s.stage_label, s.stage_began = self.stages.stage, self.stages.label(), self.stages.began
        s.ready_at = self.stages.stages[-1]["began"] if self.stages.stage == "ready" else None
        s.tail = self.reader.tail_lines() if self.reader else []

    # -- the log ------------------------------------------------------------------------------
    def feed_log(self, now):
        if self.reader is None:
            return
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
        if self.reader.bytes_read != before or self.reader.events:
            self.last_progress = now

    def drain_log(self, now):
        """Read the log to its end (all of it, whatever the per-poll chunk), then classify."""
        if self.reader is None:
            return
        start = self.reader.bytes_read
        while self.reader.bytes_read - start < DRAIN_MAX:
            before = self.reader.bytes_read
            self.feed_log(now)
            if self.reader.bytes_read == before:
                break
        # A last line without its newline (the process died mid-line) still counts.
        cur = self.reader.current()
        if cur:
            self.stages.feed(cur, now)
            self.cls.feed(cur, self.stages.stage, now)

    # -- the process tree, the unit, the GPUs -------------------------------------------------
    def _slow(self, now):
        """Tree CPU/IO, unit state: every `interval`."""
        self.slow_polls += 1
        if self.p.get("unit"):
            self.unit_props = proc_watch.unit_show(self.p["unit"], run=self.run)
            mp = int(self.unit_props.get("MainPID") or 0)
            if mp and mp != self.proc.get("pid"):
                st = proc_watch.proc_stat(mp)
                if st:
                    self.proc.update({"pid": mp, "starttime": st[3]})
        if self.proc.get("pid"):
            if not self._tree or now - self._tree_at >= TREE_RESCAN:
                self._tree, self._tree_at = proc_watch.tree(self.proc["pid"]), now
            u = proc_watch.tree_usage(self.proc["pid"], self._tree)
            busy = u["cpu_s"] > self.proc.get("cpu_s", 0) or u["io_bytes"] > self.proc.get("io_bytes", 0)
            if not busy and now - self._tree_at > 0:
                # Idle by the cached member list: a new child may be the busy one.
                self._tree, self._tree_at = proc_watch.tree(self.proc["pid"]), now
                u = proc_watch.tree_usage(self.proc["pid"], self._tree)
                busy = u["cpu_s"] > self.proc.get("cpu_s", 0) or u["io_bytes"] > self.proc.get("io_bytes", 0)
            if busy:
                self.last_progress = now
            self.proc["cpu_s"] = max(u["cpu_s"], self.proc.get("cpu_s", 0))
            self.proc["io_bytes"] = max(u["io_bytes"], self.proc.get("io_bytes", 0))
            self.proc["procs"] = u["procs"]
            # A stopped member (state T) holds the whole start-up, while the others may spin on CPU waiting for it
            # (real 0.5.15.post1's top process burned ~0.5 core with its scheduler SIGSTOPped): CPU is no progress then.
            if self._stopped(self._tree):
                self.stopped_since = now if self.stopped_since is None else self.stopped_since
            else:
                self.stopped_since = None
        idle = now - self.last_progress
        if idle >= min(GPU_IDLE_PROBE, self.p["stall_timeout"] / 2.0) and now - self._last_gpu >= GPU_IDLE_PROBE:
            self._last_gpu = now
            mem = nvidia_smi.gpu_memory_total_used(nvidia_smi.gpu_info(run=self.run))
            if mem is not None and mem != self.proc.get("gpu_mem"):
                if self.proc.get("gpu_mem") is not None:
                    self.last_progress = now
                self.proc["gpu_mem"] = mem

    def settle(self):
        """The main process is gone: wait (bounded) for the rest of its tree, the other log writers."""
        if not self._tree or not self.proc.get("pid"):
            return
        deadline = self.clock() + TREE_EXIT_GRACE
        others = [p for p in self._tree if p != self.proc["pid"]]
        while others and self.clock() < deadline:
            others = [p for p in others if proc_watch.alive(p)]
            if others:
                self.sleep(0.05)

    def verdict_in_order(self):
        """The classifier's verdict over the whole log put in order, when it was not (a newest-first or rank-interleaved
        paste replayed into the log); None when the log is in order, too big, or unreadable."""
        if not self.reader:
            return None
        try:
            if self.reader.size > REORDER_MAX:
                return None
            with open(self.p["log_path"], "rb") as f:
                text = f.read(REORDER_MAX).decode("utf-8", "replace")
        except (OSError, IOError):
            return None
        lines, order = in_order([clean(x) for x in text.replace("\r", "\n").split("\n") if x.strip()])
        if order == "ordered":
            return None
        cls, stages = Classifier(self.p.get("extra_patterns")), StageTracker()
        for line in lines:
            stages.feed(line, 0)
            cls.feed(line, stages.stage, 0)
        return dict(cls.verdict(), order=order)

    @staticmethod
    def _stopped(pids):
        return sorted(p for p in pids or () if (proc_watch.proc_stat(p) or ("?",))[0] in ("T", "t"))

    def stopped_members(self):
        """Pids of the server's process tree in state T/t (stopped by a signal or a tracer): asked once, at a stall."""
        if not self.proc.get("pid"):
            return []
        pids = self._tree or proc_watch.tree(self.proc["pid"]) or [self.proc["pid"]]
        return self._stopped(pids)

    def look_after_exit(self, now):
        """The process or unit ended: let the tree's other writers finish, read the log to its end and find the
        exit status (ours, the supervisor's, or systemd's)."""
        if self.proc.get("pid") and self.alive() is False:
            self.settle()
        self.drain_log(now)
        if self.proc.get("exit_status") is None and self.proc.get("pid") and self.alive() is False:
            self.proc["exit_status"] = self._exit_status_of(
                self.proc["pid"], STATUS_GRACE if self.p.get("pid_file") else 0.0)
            if self.proc["exit_status"] is None and self.p.get("unit"):
                # The cached properties predate the exit (ExecMainStatus=0 while running): ask again.
                props = proc_watch.unit_show(self.p["unit"], run=self.run)
                ex = unit_exit_status(props)
                if ex is not None:
                    self.unit_props = props
                    self.proc["exit_status"] = ex
        return self.proc.get("exit_status")

    def _foreign_port(self):
        """True when a process outside the watched tree listens on the URL's port (checked on loopback only)."""
        if not self.proc.get("pid") or self.net["host"] not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
            return False
        owner = proc_watch.port_owner(self.net["port"], self.proc["pid"])
        if owner == "other":
            self.h["foreign"] = True
        return owner == "other"

    def report(self, failed):
        """The facts every result carries; for a failure also the journal and the GPUs."""
        r = {"log_tail": self.reader.tail_lines() if self.reader else [],
             "log_bytes_read": self.reader.bytes_read if self.reader else 0}
        if self.proc.get("pid"):
            r["process"] = {"pid": self.proc["pid"], "alive": self.alive(),
                            "exit_status": self.proc.get("exit_status"),
                            "cpu_seconds": self.proc.get("cpu_s"), "io_bytes": self.proc.get("io_bytes")}
        if self.p.get("unit"):
            props = self.unit_props or {}
            r["unit"] = {k: props.get(k) for k in proc_watch.UNIT_PROPS}
            if failed:
                r["journal_tail"] = proc_watch.journal_tail(self.p["unit"], self.p["tail_lines"], run=self.run)
        if failed:
            r["gpu"] = nvidia_smi.gpu_info(run=self.run)
        return r

    # -- HTTP: the one SGLang client (sglang/client.py), given by the waiter ---------------------------------
    def request(self, method, path, body=None, timeout=30):
        """(status, parsed-or-text body, error string)."""
        return self.client.call(method, path, body, timeout=timeout)

    def port_open(self):
        return self.client.port_open()

    def _http(self, now, urgent):
        """Probe the port, then the health endpoint (when due).  Return its status or None."""
        if not self.h["port_open"]:
            if now - self._last_port_probe < PORT_PROBE and not urgent:
                return None
            self._last_port_probe = now
            if not self.port_open():
                return None
            self.h["port_open"] = True
            self.h["last"] = None  # probe the endpoint right away
        if not urgent and self.h["last"] is not None and now - self.h["last"] < self.p["interval"]:
            return None
        self.h["last"] = now
        self.h["calls"] += 1
        timeout = gates.probe_timeout(self.p["interval"])  # never under SGLang's own /health budget
        if self.h["path"] is None:
            # The version is unknown: /ready where the server has it, else /health (an SGLang before 0.5.20
            # answers 404 for a route it lacks; the answer is kept for the rest of the wait).
            st, _body, err = self.request("GET", "/ready", timeout=timeout)
            if st is not None:
                self.h["path"] = "/health" if st == 404 else "/ready"
        if self.h["path"] is not None:
            st, _body, err = self.request("GET", self.h["path"], timeout=timeout)
        self.h["status"], self.h["error"] = st, err
        if st is None:
            self.h["port_open"] = self.port_open()
        return st

    def verify_generation(self):
        """One real 1-token generation: (ok, {status, error})."""
        last = None
        for i in range(VERIFY_TRIES):
            st, body, err = self.request("POST", "/generate", {
                "text": "ping", "sampling_params": {"max_new_tokens": 1, "temperature": 0}}, timeout=60)
            if st == 404:  # not the native API: fall back to the server's own check
                st, body, err = self.request("GET", "/health_generate", timeout=60)
            ok = st == 200 and not (isinstance(body, dict) and body.get("error"))
            last = {"status": st, "error": err or (body if not ok else None)}
            if ok:
                return True, last
            if i + 1 < VERIFY_TRIES:
                self.sleep(1.0)
        return False, last

    def server_facts(self):
        info = {}
        st, models, _err = self.client.models(timeout=10)
        if st == 200:
            info["models"] = models
            if info["models"]:
                info["served_model"] = info["models"][0]
        st, body, _err = self.client.server_info(timeout=10)
        if st == 200 and isinstance(body, dict):
            info["version"] = body.get("version")
            for k in ("model_path", "served_model_name", "tp_size", "speculative_algorithm",
                      "speculative_draft_model_path"):
                if k in body:
                    info[k] = body[k]
            accept = api.accept_length(body)
            if accept is not None:
                info["avg_spec_accept_length"] = accept
        return info
