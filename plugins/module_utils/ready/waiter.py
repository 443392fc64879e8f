# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait for an SGLang server to be ready, or say precisely why it is not.

Cheap checks run every ``tick`` (0.1 s): a ``stat`` of the log and a read of
its new bytes, and /proc/<pid>/stat.  Costly checks run only when they can
change the verdict: the process tree's CPU/IO and systemctl every ``interval``,
a TCP connect to the port every 0.25 s, ``/health`` (which runs a one-token
generation on the server) only once the port is open or the log says the HTTP
server is up, nvidia-smi only when everything else has been idle a while.

The waiter is resumable: ``run(budget=...)`` returns after ``budget`` seconds
(or a stage change) with ``done: False`` and a JSON-able ``state``; a new
Waiter built from that state carries on, on the same monotonic clock.  That
lets the action plugin print progress without one SSH connection per poll.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import socket
import ssl
import time

try:
    from urllib.parse import urlsplit
    import http.client as httplib
except ImportError:  # pragma: no cover - Python 2 is not supported on targets
    raise

from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as nvidia_smi
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import accept_length
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import LogReader, LogUnreadable
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import Classifier, CATEGORIES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import StageTracker, STAGES, progress_of

TICK = 0.1             # cheap checks
PORT_PROBE = 0.25      # TCP connect while the port is closed
FATAL_GRACE = 5.0      # a fatal line while the parent lingers ends the wait after this
READY_GRACE = 15.0     # log says "fired up" but /health does not agree
GPU_IDLE_PROBE = 10.0  # sample nvidia-smi when idle at most this often
VERIFY_TRIES = 3
TREE_RESCAN = 5.0      # re-list the process tree's members (a scan of all /proc)
TREE_EXIT_GRACE = 10.0  # after the main process died, wait this long for its children (log writers)
STATUS_GRACE = 3.0     # and this long for the supervisor's exit-status file
FRESH_PROCESS_S = 3.0  # a server process younger than this, with an empty log, cannot be answering HTTP yet
DRAIN_MAX = 256 * 1024 * 1024  # read at most this much more log before a verdict

STATE_VERSION = 1


class BadInput(ValueError):
    pass


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except (OSError, IOError):
        return None


def validate(p):
    """Normalise and check parameters.  Raise BadInput with one clear line."""
    parts = urlsplit(p.get("url") or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput("url %r is not an http(s)://host[:port] URL" % p.get("url"))
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise BadInput("url %r has an invalid port" % p.get("url"))
    if not (p.get("health_path") or "/").startswith("/"):
        raise BadInput("health_path must start with '/'")
    for k in ("timeout", "stall_timeout", "interval"):
        v = p.get(k)
        if v is None or not isinstance(v, (int, float)) or v <= 0:
            raise BadInput("%s must be a positive number of seconds, got %r" % (k, v))
    for stage, secs in (p.get("stage_timeouts") or {}).items():
        if stage not in STAGES:
            raise BadInput("stage_timeouts: unknown stage %r (known: %s)" % (stage, ", ".join(STAGES[1:])))
        if not isinstance(secs, (int, float)) or secs <= 0:
            raise BadInput("stage_timeouts[%s] must be a positive number of seconds" % stage)
    if (p.get("node_rank") or 0) < 0:
        raise BadInput("node_rank must be >= 0")
    watched = [k for k in ("unit", "pid", "pid_file") if p.get(k)]
    if len(watched) > 1:
        raise BadInput("give only one of unit, pid, pid_file (got %s)" % ", ".join(watched))
    for i, e in enumerate(p.get("extra_patterns") or []):
        if not isinstance(e, dict) or not e.get("regex"):
            raise BadInput("extra_patterns[%d] needs a regex" % i)
        try:
            re.compile(e["regex"])
        except re.error as err:
            raise BadInput("extra_patterns[%d]: bad regex %r: %s" % (i, e["regex"], err))
        if e.get("category") and e["category"] not in CATEGORIES:
            raise BadInput("extra_patterns[%d]: category must be one of %s" % (i, ", ".join(CATEGORIES)))
    if p.get("node_rank", 0) >= 1 and not (p.get("log_path") or watched):
        raise BadInput("node_rank >= 1 serves an always-200 stub: give log_path and/or unit/pid to decide from")
    return {"host": parts.hostname, "port": port, "scheme": parts.scheme,
            "base": p["url"].rstrip("/")}


class Waiter:
    def __init__(self, params, state=None, clock=time.monotonic, sleep=time.sleep):
        self.p = dict(params)
        self.p.setdefault("url", "http://127.0.0.1:30000")
        self.p.setdefault("health_path", "/health")
        self.p.setdefault("timeout", 1800)
        self.p.setdefault("stall_timeout", 600)
        self.p.setdefault("interval", 1)
        self.p.setdefault("tail_lines", 40)
        self.p.setdefault("node_rank", 0)
        self.p.setdefault("validate_certs", True)
        self.p.setdefault("verify_generation", True)
        self.net = validate(self.p)
        self.clock, self.sleep = clock, sleep
        self.rank0 = (self.p.get("node_rank") or 0) == 0
        self.tick = float(self.p.get("tick") or TICK)
        self.fatal_grace = float(self.p.get("fatal_grace") or FATAL_GRACE)
        s = state or {}
        if s and s.get("v") != STATE_VERSION:
            raise BadInput("resume state is from another version of this module")
        if s and s.get("boot_id") != _boot_id():
            raise BadInput("resume state is from before a reboot")
        self.t0 = s.get("t0", clock())
        self.reader = None
        if self.p.get("log_path"):
            self.reader = LogReader(self.p["log_path"], self.p["tail_lines"], s.get("log"))
        self.stages = StageTracker(s.get("stages"))
        self.cls = Classifier(self.p.get("extra_patterns"), s.get("cls"))
        self.proc = s.get("proc") or {}
        self.h = s.get("h") or {"status": None, "port_open": False, "last": None, "error": None,
                                "calls": 0, "ready_hint_at": None, "info": {}}
        self.last_progress = s.get("last_progress", 0.0)
        self.n = s.get("n") or {"polls": 0, "slow": 0}
        self.reported_stage = s.get("reported_stage")
        self._last_port_probe = -1e9
        self._last_slow = -1e9
        self._last_gpu = -1e9
        self._unit_props = {}
        self._died_before = None
        self._tree, self._tree_at = None, -1e9
        if not s:
            self._initial_checks()

    # -- helpers ------------------------------------------------------------
    def now(self):
        return self.clock() - self.t0

    def _initial_checks(self):
        if self.reader is not None:
            try:
                self.reader.check_readable()
            except LogUnreadable as e:
                raise BadInput(str(e))
        pid = self.p.get("pid")
        if self.p.get("pid_file"):
            pid = self._pid_from_file()
            if pid is None:
                return  # died before the wait began; _died_before says so
        if self.p.get("unit"):
            props = proc_watch.unit_show(self.p["unit"])
            if "error" in props:
                raise BadInput("cannot query unit %s: %s" % (self.p["unit"], props["error"]))
            if props.get("LoadState") == "not-found":
                raise BadInput("systemd unit %s not found" % self.p["unit"])
            self._unit_props = props
            pid = int(props.get("MainPID") or 0) or None
            if not proc_watch.unit_running(props):
                if props.get("ActiveState") == "failed" or props.get("Result") not in (None, "", "success"):
                    # Started and already dead (a crash in the first second, before the wait
                    # began): say why from the log and journal, not just "not running".
                    self._died_before = "unit %s died before the wait began (%s/%s, result %s)" % (
                        self.p["unit"], props.get("ActiveState"), props.get("SubState"), props.get("Result"))
                    if props.get("ExecMainStatus") not in (None, ""):
                        code = int(props["ExecMainStatus"])
                        killed = props.get("ExecMainCode") in ("2", "3")  # CLD_KILLED / CLD_DUMPED
                        self.proc = {"exit_status": -code if killed else code}
                    return
                raise BadInput("unit %s is not running (%s/%s, result %s)" % (
                    self.p["unit"], props.get("ActiveState"), props.get("SubState"), props.get("Result")))
        if pid is not None:
            st = proc_watch.proc_stat(int(pid))
            if st is None or st[0] in ("Z", "X"):
                if not self.reader:
                    raise BadInput("pid %s is not running (and no log_path to say why)" % pid)
                # Gone before the first look (a bad flag exits in a second): explain it from the log.
                self.proc = {"pid": int(pid), "exit_status": self._exit_status_of(int(pid))}
                self._died_before = "pid %s is not running: it exited before the wait began (or the pid is wrong)" % pid
                return
            u = proc_watch.tree_usage(int(pid))
            self.proc = {"pid": int(pid), "starttime": st[3], "cpu_s": u["cpu_s"],
                         "io_bytes": u["io_bytes"], "gpu_mem": None}

    def _status_file(self):
        """roles/server's supervisor (sglang_supervise.py) records how the server ended here."""
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
        """The pid in pid_file; None (with _died_before set) when the server already ended."""
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
            self._died_before = "server (pid %s) exited before the wait began" % status["pid"]
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

    def dump(self):
        return {"v": STATE_VERSION, "boot_id": _boot_id(), "t0": self.t0,
                "log": self.reader.dump() if self.reader else None,
                "stages": self.stages.dump(), "cls": self.cls.dump(), "proc": self.proc,
                "h": self.h, "last_progress": self.last_progress, "n": self.n,
                "reported_stage": self.stages.stage}

    # -- HTTP ----------------------------------------------------------------
    def _conn(self, timeout):
        if self.net["scheme"] == "https":
            ctx = ssl.create_default_context()
            if not self.p.get("validate_certs", True):
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            return httplib.HTTPSConnection(self.net["host"], self.net["port"], timeout=timeout, context=ctx)
        return httplib.HTTPConnection(self.net["host"], self.net["port"], timeout=timeout)

    def request(self, method, path, body=None, timeout=30):
        """(status, parsed-or-text body, error string)."""
        headers = {"Accept": "application/json"}
        if self.p.get("api_key"):
            headers["Authorization"] = "Bearer %s" % self.p["api_key"]
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn = self._conn(timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            r = conn.getresponse()
            raw = r.read(1 << 20).decode("utf-8", "replace")
            try:
                return r.status, json.loads(raw), None
            except ValueError:
                return r.status, raw[:500], None
        except (OSError, socket.error, httplib.HTTPException, ssl.SSLError) as e:
            return None, None, "%s: %s" % (type(e).__name__, e)
        finally:
            conn.close()

    def port_open(self):
        try:
            s = socket.create_connection((self.net["host"], self.net["port"]), timeout=0.5)
        except (OSError, socket.error):
            return False
        s.close()
        return True

    def verify_generation(self):
        """One real 1-token generation: /health can say 200 while generation is broken."""
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
        st, body, _err = self.request("GET", "/v1/models", timeout=10)
        if st == 200 and isinstance(body, dict):
            info["models"] = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)]
            if info["models"]:
                info["served_model"] = info["models"][0]
        for path in ("/server_info", "/get_server_info"):
            st, body, _err = self.request("GET", path, timeout=10)
            if st == 200 and isinstance(body, dict):
                info["version"] = body.get("version")
                for k in ("model_path", "served_model_name", "tp_size", "speculative_algorithm",
                          "speculative_draft_model_path"):
                    if k in body:
                        info[k] = body[k]
                accept = accept_length(body)  # the mean over DP ranks, as spec_check and the benchmark read it
                if accept is not None:
                    info["avg_spec_accept_length"] = accept
                break
        return info

    # -- observations ----------------------------------------------------------
    def _feed_log(self, now):
        changed = False
        if self.reader is None:
            return False
        before = self.reader.bytes_read
        for line in self.reader.poll():
            restarts = self.stages.restarts
            if self.stages.feed(line, now):
                changed = True
            if self.stages.restarts != restarts:
                self.cls.reset()  # a new run in the same log: forget the old failure
            self.cls.feed(line, self.stages.stage, now)
        cur = self.reader.current()
        if cur:
            prog = progress_of(cur)
            if prog:
                self.stages.detail = prog
        if self.reader.bytes_read != before or self.reader.events:
            self.last_progress = now
        return changed

    def _alive(self):
        """True/False, or None when nothing is watched."""
        if not self.proc.get("pid"):
            return None
        return proc_watch.alive(self.proc["pid"], self.proc.get("starttime"))

    def _slow(self, now):
        """Tree CPU/IO, unit state: every `interval`."""
        self.n["slow"] += 1
        if self.p.get("unit"):
            self._unit_props = proc_watch.unit_show(self.p["unit"])
            mp = int(self._unit_props.get("MainPID") or 0)
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
        idle = now - self.last_progress
        if idle >= min(GPU_IDLE_PROBE, self.p["stall_timeout"] / 2.0) and now - self._last_gpu >= GPU_IDLE_PROBE:
            self._last_gpu = now
            mem = nvidia_smi.gpu_memory_total_used(nvidia_smi.gpu_info())
            if mem is not None and mem != self.proc.get("gpu_mem"):
                if self.proc.get("gpu_mem") is not None:
                    self.last_progress = now
                self.proc["gpu_mem"] = mem

    def _http(self, now, urgent):
        """Probe port / health on rank 0.  Return the health status or None."""
        if not self.rank0:
            return None
        if not self.h["port_open"]:
            if now - self._last_port_probe < PORT_PROBE and not urgent:
                return None
            self._last_port_probe = now
            if not self.port_open():
                return None
            self.h["port_open"] = True
            self.h["last"] = None  # probe /health right away
        if not urgent and self.h["last"] is not None and now - self.h["last"] < self.p["interval"]:
            return None
        self.h["last"] = now
        self.h["calls"] += 1
        st, _body, err = self.request("GET", self.p["health_path"], timeout=max(5, self.p["interval"] * 5))
        self.h["status"], self.h["error"] = st, err
        if st is None:
            self.h["port_open"] = self.port_open()
        return st

    # -- verdicts ----------------------------------------------------------------
    def _result(self, now, failed=False, reason=None, msg=None, key=None):
        r = {"done": True, "failed": failed, "elapsed": round(now, 2), "stage": self.stages.stage,
             "stage_label": self.stages.label(), "stages": self.stages.stages,
             "health_status": self.h["status"],
             "log_tail": self.reader.tail_lines() if self.reader else [],
             "polls": self.n["polls"], "health_calls": self.h["calls"],
             "log_bytes_read": self.reader.bytes_read if self.reader else 0}
        if self.proc.get("pid"):
            alive = self._alive()
            r["process"] = {"pid": self.proc["pid"], "alive": alive,
                            "exit_status": self.proc.get("exit_status"),
                            "cpu_seconds": self.proc.get("cpu_s"), "io_bytes": self.proc.get("io_bytes")}
        if self.p.get("unit"):
            props = self._unit_props or {}
            r["unit"] = {k: props.get(k) for k in proc_watch.UNIT_PROPS}
            if failed:
                r["journal_tail"] = proc_watch.journal_tail(self.p["unit"], self.p["tail_lines"])
        if failed:
            v = key or self.cls.verdict()
            r.update({"reason": reason, "category": v["category"], "key_line": v.get("line"),
                      "remedy": v["remedy"], "stage": v.get("stage") or self.stages.stage})
            r["gpu"] = nvidia_smi.gpu_info()
            # The stage the cause line appeared in: with tp > 1 another rank may already be further.
            where = "in stage %s after %.0fs" % (v.get("stage") or self.stages.stage, now)
            parts = [msg + " " + where]
            if v.get("line"):
                parts.append("log: %s" % v["line"][:300])
            parts.append("%s -> try: %s" % (v["category"], v["remedy"]))
            r["msg"] = " | ".join(parts).replace("\n", " ")
        else:
            r["msg"] = "SGLang server ready after %.1fs" % now
        return r

    def _settle(self):
        """The main process is gone: wait (bounded) for the rest of its tree, the other log writers."""
        if not self._tree or not self.proc.get("pid"):
            return
        deadline = self.clock() + TREE_EXIT_GRACE
        others = [p for p in self._tree if p != self.proc["pid"]]
        while others and self.clock() < deadline:
            others = [p for p in others if proc_watch.alive(p)]
            if others:
                self.sleep(0.05)

    def _drain_log(self, now):
        """Read the log to its end (all of it, whatever the per-poll chunk), then classify."""
        if self.reader is None:
            return
        start = self.reader.bytes_read
        while self.reader.bytes_read - start < DRAIN_MAX:
            before = self.reader.bytes_read
            self._feed_log(now)
            if self.reader.bytes_read == before:
                break
        # A last line without its newline (the process died mid-line) still counts.
        cur = self.reader.current()
        if cur:
            self.stages.feed(cur, now)
            self.cls.feed(cur, self.stages.stage, now)

    def _crashed(self, now, why):
        # Explain only from the whole log: let the tree's other writers finish, then read to the end.
        if self.proc.get("pid") and self._alive() is False:
            self._settle()
        self._drain_log(now)
        if self.proc.get("exit_status") is None and self.proc.get("pid") and self._alive() is False:
            self.proc["exit_status"] = self._exit_status_of(
                self.proc["pid"], STATUS_GRACE if self.p.get("pid_file") else 0.0)
            if self.proc["exit_status"] is None and self.p.get("unit"):
                # The cached properties predate the exit (ExecMainStatus=0 while running): ask again.
                props = proc_watch.unit_show(self.p["unit"])
                if props.get("ExecMainCode") in ("1", "2", "3") and props.get("ExecMainStatus"):
                    self._unit_props = props
                    code = int(props["ExecMainStatus"])
                    self.proc["exit_status"] = -code if props["ExecMainCode"] != "1" else code
        ex = self.proc.get("exit_status")
        if ex is not None:
            why += " (exit status %s)" % ex
        v = self.cls.verdict()
        if v["category"] == "unknown" and ex == 2:
            v = dict(v, category="bad_args", remedy="exit status 2 is argparse's: check the launch arguments")
        return self._result(now, True, "crashed", why, v)

    def _stalled(self, now, why, category=None):
        v = self.cls.verdict()
        if v["category"] == "unknown":
            dist_done = any("Init torch distributed ends" in x for x in (self.reader.tail_lines() if self.reader else []))
            if category == "nccl" or (self.stages.stage == "dist_init" and not dist_done):
                v = {"category": "nccl", "line": v.get("line"),
                     "remedy": "NCCL/torch.distributed init does not finish: on PCIe boxes try "
                               "NCCL_P2P_DISABLE=1; check --dist-init-addr reachability and that every "
                               "node was started; NCCL_DEBUG=INFO tells where it waits"}
            else:
                v = {"category": "unknown", "line": (self.reader.tail_lines() or [None])[-1] if self.reader else None,
                     "remedy": "the server is stuck: py-spy dump --pid <pid> (and children) shows where"}
        return self._result(now, True, "stalled", why, v)

    # -- main loop -------------------------------------------------------------------
    def run(self, budget=None, return_on_stage_change=False):
        started = self.clock()
        if self.reported_stage is None:
            self.reported_stage = self.stages.stage
        while True:
            now = self.now()
            self.n["polls"] += 1
            stage_before = self.stages.stage
            self._feed_log(now)
            if self._died_before:
                return self._crashed(now, self._died_before)
            urgent = self.stages.stage != stage_before and self.stages.stage in ("warmup", "ready")

            alive = self._alive()
            if alive is False:
                return self._crashed(now, "server process %s exited" % self.proc["pid"])
            slow_due = now - self._last_slow >= self.p["interval"]
            if slow_due:
                self._last_slow = now
                self._slow(now)
                if self.p.get("unit") and not proc_watch.unit_running(self._unit_props):
                    return self._crashed(now, "unit %s is %s/%s" % (
                        self.p["unit"], self._unit_props.get("ActiveState"), self._unit_props.get("SubState")))

            # A fatal line while the parent lingers (a child died). A "fired up" read after it does not undo it
            # (a failed bind, then a warm-up answered by whoever holds the port); only one read before it does.
            fs = self.cls.first_strong_at
            ready_at = self.stages.stages[-1]["began"] if self.stages.stage == "ready" else None  # rounded to 1 ms
            if fs is not None and (ready_at is None or fs <= ready_at + 0.001) and now - fs >= self.fatal_grace:
                return self._crashed(now, "fatal error in log %.0fs ago and no recovery" % (now - fs))

            ready = self._ready_check(now, urgent)
            if ready is not None:
                return ready

            # Stage budget (e.g. NCCL init spinning at 100% CPU).
            budgets = self.p.get("stage_timeouts") or {}
            spent = now - self.stages.began
            if self.stages.stage in budgets and spent > budgets[self.stages.stage]:
                return self._stalled(now, "stage %s over its %ss budget (%.0fs)" % (
                    self.stages.stage, budgets[self.stages.stage], spent))
            if now - self.last_progress >= self.p["stall_timeout"]:
                return self._stalled(now, "no log output, CPU, I/O or GPU memory change for %.0fs" % (
                    now - self.last_progress))
            if now >= self.p["timeout"]:
                last = self.reader.tail_lines()[-1:] if self.reader else []
                v = dict(self.cls.verdict())
                if v.get("line") is None and last:
                    v["line"] = last[0]
                if v["category"] == "unknown":
                    v["remedy"] = ("still %s at the deadline and not idle: raise timeout, or per-stage "
                                   "stage_timeouts to catch slow stages sooner" % self.stages.label())
                if self.h.get("foreign") or (self.h.get("answered_early") and v["category"] == "unknown"):
                    v = dict(v, category="port_in_use", remedy="another process answers on %s (ss -ltnp): stop it "
                             "or change --port" % self.net["base"])
                return self._result(now, True, "timeout", "not ready within timeout %ss" % self.p["timeout"], v)

            if budget is not None:
                if self.clock() - started >= budget:
                    return self._partial(now)
                if (return_on_stage_change and self.stages.stage != self.reported_stage
                        and self.stages.stage not in ("http", "warmup")):
                    return self._partial(now)
            self.sleep(self.tick)

    def _partial(self, now):
        out = {"done": False, "elapsed": round(now, 2), "stage": self.stages.stage,
               "stage_label": self.stages.label(), "stages": self.stages.stages,
               "health_status": self.h["status"], "state": None}
        if self.proc.get("pid"):
            out["cpu_seconds"] = self.proc.get("cpu_s")
        out["state"] = self.dump()
        return out

    def _ready_check(self, now, urgent):
        if not self.rank0:
            # Worker ranks: the HTTP stub always says 200; decide from the log.
            if STAGES.index(self.stages.stage) >= STAGES.index("http") or self._worker_settled(now):
                self.stages.set("ready", now)
                r = self._result(now)
                r["msg"] = "SGLang worker (node_rank %s) initialised after %.1fs" % (self.p["node_rank"], now)
                return r
            return None
        log_ready = self.stages.stage == "ready"
        if log_ready and self.h["ready_hint_at"] is None:
            self.h["ready_hint_at"] = now
        # "fired up" means the server's own warm-up generation passed; /health would
        # cost another generation (~1 s on SGLang), so prove it with one cheap 1-token
        # generation straight away.
        fast = log_ready and self.p.get("verify_generation", True)
        st = 200 if fast else self._http(now, urgent or (log_ready and self.h["status"] != 200))
        if st == 200:
            # Neither a 200 nor "fired up" proves it is OUR server: a fatal line in our own log outranks both (it
            # ends the wait after the grace), and another process may hold our port. Real SGLang on a taken port
            # fails to bind, then sends its warm-up to the port, which the other server answers, and prints
            # "fired up" after the bind error.
            if self.cls.first_strong_at is not None:
                return None
            if self._foreign_port() or self._answer_before_our_http():
                return None
        if st == 200:
            self.stages.set("ready", now)
            if self.p.get("verify_generation", True):
                ok, detail = self.verify_generation()
                if not ok:
                    return self._result(self.now(), True, "unhealthy",
                                        "%s answers 200 but a 1-token generation fails (%s)" % (
                                            self.p["health_path"], detail),
                                        {"category": "scheduler_exception", "line": str(detail)[:300],
                                         "remedy": "the scheduler cannot generate: read log_tail for the "
                                                   "request's traceback; restart the server"})
            r = self._result(self.now())
            r["server"] = self.server_facts()
            r["ready_by"] = "log+generation" if fast else "health+generation" if self.p.get(
                "verify_generation", True) else "health"
            if not fast:
                r["health_status"] = 200
            return r
        if log_ready and now - self.h["ready_hint_at"] >= READY_GRACE:
            return self._result(now, True, "unhealthy",
                                "log says ready but %s%s answers %s" % (
                                    self.net["base"], self.p["health_path"],
                                    self.h["status"] or self.h["error"] or "nothing"),
                                {"category": "unknown", "line": "The server is fired up and ready to roll!",
                                 "remedy": "check url/port/api_key point at this server, and the firewall"})
        return None

    def _answer_before_our_http(self):
        """True for a 200 that cannot come from our server yet: our log is past 'starting' but uvicorn has not started
        (SGLang's rank 0 binds its HTTP port only after weights, KV cache and CUDA graphs), or our log is empty and the
        process was started moments ago. Whoever answers is another server (one on the same port, or a URL pointing
        elsewhere). A log that never shows stage lines (--log-level warning) only holds the first seconds back."""
        idx = STAGES.index(self.stages.stage)
        # 'http' begins with the scheduler's last lines; the port is bound only at uvicorn's startup lines ('warmup').
        early = STAGES.index("init") <= idx <= STAGES.index("http")
        if not early and self.stages.stage == "starting" and self.reader is not None and self.proc.get("pid"):
            # Nothing in its log yet: a process this young is still importing (real SGLang prints its
            # server_args about 5 s after launch), not serving HTTP.
            started = proc_watch.age(self.proc["pid"])
            early = started is not None and started < FRESH_PROCESS_S
        if early and not self.h.get("answered_early"):
            self.h["answered_early"] = True
        return early

    def _foreign_port(self):
        """True when a process outside the watched tree listens on the URL's port (checked on loopback only)."""
        if not self.proc.get("pid") or self.net["host"] not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
            return False
        owner = proc_watch.port_owner(self.net["port"], self.proc["pid"])
        if owner == "other" and not self.h.get("foreign"):
            self.h["foreign"] = True
        return owner == "other"

    def _worker_settled(self, now):
        # Worker nodes print no "fired up": after the last init stage and a few
        # quiet seconds with the process alive, they are serving.
        return (STAGES.index(self.stages.stage) >= STAGES.index("cuda_graph")
                and self._alive() is not False and now - self.stages.began >= 10
                and now - self.last_progress >= 5)
