# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's process source: which process is the server (``pid``, ``pid_file`` or the systemd ``unit``'s
MainPID), whether it still runs, how it ended (our own child's status, the supervisor's ``<pid_file>.status``,
systemd's ExecMain*), and whether another process holds its port.

Fills the process's part of a verdicts.Snapshot (``PART``), one method per step of a poll: ``see`` (every poll),
``see_unit`` (the unit's state, asked every interval), ``see_port`` (rank 0 answered: who holds the port).
"""

from __future__ import annotations

import json

from ansible_collections.llmserve.sglang.plugins.module_utils.host import net as host_net
from ansible_collections.llmserve.sglang.plugins.module_utils.host import pidfile
from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import messages
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput

TREE_EXIT_GRACE = 10.0  # after the main process died, wait this long for its children (log writers)
STATUS_GRACE = 3.0      # and this long for the supervisor's exit-status file

# The snapshot fields this source writes, and no other.
PART = ("pid", "alive", "died_before", "unit_running", "unit_active", "unit_sub",
        "process_age", "foreign_port", "foreign_seen")


def unit_exit_status(props):
    """systemd's ExecMainCode/ExecMainStatus as an exit status (negative for a signal), or None before the exit."""
    code, status = props.get("ExecMainCode"), props.get("ExecMainStatus")
    if code not in ("1", "2", "3") or status in (None, ""):  # CLD_EXITED, CLD_KILLED, CLD_DUMPED
        return None
    return int(status) if code == "1" else -int(status)


class ProcessSource:
    """``params``: pid, pid_file, unit; ``run``: the module's runner (host/run.py) for systemctl and journalctl."""

    def __init__(self, params, clock, sleep, run=None, state=None):
        s = state or {}
        self.pid_given, self.pid_file, self.unit = params.get("pid"), params.get("pid_file"), params.get("unit")
        self.tail_lines = params["tail_lines"]
        self.clock, self.sleep, self.run = clock, sleep, run
        self.proc = s.get("proc") or {}      # pid, starttime (of a running server), exit_status (once known)
        self.foreign = s.get("foreign", False)  # a process outside the tree was seen holding the port
        self.unit_props = {}
        self.died_before = None
        self.seen = (None, None)  # (pid, alive) at this poll's look

    def dump(self):
        return {"proc": self.proc, "foreign": self.foreign}

    @property
    def pid(self):
        return self.proc.get("pid")

    # -- the first look -----------------------------------------------------------------------
    def first_look(self, has_log):
        """Find the server's process. The pid of a running server, or None: nothing is watched, or the server ended
        before the wait began (``died_before`` says so; without a log to say why, that is a refusal)."""
        pid = self.pid_given
        if self.pid_file:
            pid = self._pid_from_file()
            if pid is None:
                return None  # died before the wait began; died_before says so
        if self.unit:
            pid = self._first_look_at_unit()
            if self.died_before:
                return None
        if pid is None:
            return None
        st = proc_watch.proc_stat(int(pid))
        if st is None or st[0] in ("Z", "X"):
            if not has_log:
                raise BadInput("pid %s is not running (and no log_path to say why)" % pid)
            # Gone before the first look (a bad flag exits in a second): explain it from the log.
            self.proc = {"pid": int(pid), "exit_status": self._exit_status_of(int(pid))}
            self.died_before = messages.PID_DIED_BEFORE % pid
            return None
        self.proc = {"pid": int(pid), "starttime": st[3]}
        return int(pid)

    def _first_look_at_unit(self):
        unit = self.unit
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
        return (self.pid_file + ".status") if self.pid_file else None

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
        """The pid in pid_file when it is the process the supervisor recorded (host/pidfile: pid, start time,
        executable; a link, garbage or pid <= 1 refused); None (with died_before set) when the server already
        ended."""
        v = pidfile.verdict(self.pid_file, self._read_status().get("identity"))
        if v["state"] in ("refused", "foreign"):
            raise BadInput("pid_file: %s" % v["msg"])
        if v["state"] in ("ours", "gone"):  # gone: ended just now, its exit status is explained from the log
            return v["pid"]
        # The supervisor removes the pid file when the server ends and keeps <pid_file>.status.
        status = self._read_status()
        if status.get("pid") and status.get("returncode") is not None:
            self.proc = {"pid": int(status["pid"]), "exit_status": int(status["returncode"])}
            self.died_before = messages.SUPERVISED_DIED_BEFORE % status["pid"]
            return None
        raise BadInput("pid_file %s missing and no exit status in %s: was the server started?" % (
            self.pid_file, self._status_file()))

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

    # -- every poll ---------------------------------------------------------------------------
    def alive(self):
        """True/False, or None when nothing is watched."""
        if not self.pid:
            return None
        return proc_watch.alive(self.pid, self.proc.get("starttime"))

    def see(self, s):
        """Every poll: whether the process is still there."""
        self.seen = (self.pid, self.alive())
        s.died_before = self.died_before
        s.pid, s.alive = self.seen

    def see_unit(self, s, look):
        """The unit's state, asked again when ``look`` (every interval); a restarted unit's new MainPID is watched."""
        if not self.unit:
            return
        if look:
            self.unit_props = proc_watch.unit_show(self.unit, run=self.run)
            main_pid = int(self.unit_props.get("MainPID") or 0)
            if main_pid and main_pid != self.pid:
                st = proc_watch.proc_stat(main_pid)
                if st:
                    self.proc.update({"pid": main_pid, "starttime": st[3]})
        if self.unit_props:
            s.unit_running = proc_watch.unit_running(self.unit_props)
            s.unit_active, s.unit_sub = self.unit_props.get("ActiveState"), self.unit_props.get("SubState")

    def see_port(self, s, host, port, look, ask_age):
        """Rank 0: when ``look`` (a 200 came back), whether a process outside the watched tree listens on the port
        (on this host only) and, when ``ask_age``, the process's age; whether that was ever seen, always."""
        if look:
            s.foreign_port = self._foreign_port(host, port)
            if ask_age and self.seen[0]:
                s.process_age = proc_watch.age(self.seen[0])
        s.foreign_seen = bool(self.foreign)

    def _foreign_port(self, host, port):
        """True when a process outside the watched tree listens on the URL's port (checked on this host only)."""
        if not self.pid or not host_net.on_this_host(host):
            return False
        owner = proc_watch.port_owner(port, self.pid)
        if owner == "other":
            self.foreign = True
        return owner == "other"

    # -- after the end --------------------------------------------------------------------------
    def settle(self, members):
        """The main process is gone: wait (bounded) for the rest of its tree (``members``), the other log writers."""
        if not members or not self.pid:
            return
        deadline = self.clock() + TREE_EXIT_GRACE
        others = [p for p in members if p != self.pid]
        while others and self.clock() < deadline:
            others = [p for p in others if proc_watch.alive(p)]
            if others:
                self.sleep(0.05)

    def exit_status(self):
        """The process or unit ended: its exit status (ours, the supervisor's, or systemd's), or None."""
        if self.proc.get("exit_status") is None and self.pid and self.alive() is False:
            self.proc["exit_status"] = self._exit_status_of(self.pid, STATUS_GRACE if self.pid_file else 0.0)
            if self.proc["exit_status"] is None and self.unit:
                # The cached properties predate the exit (ExecMainStatus=0 while running): ask again.
                props = proc_watch.unit_show(self.unit, run=self.run)
                ex = unit_exit_status(props)
                if ex is not None:
                    self.unit_props = props
                    self.proc["exit_status"] = ex
        return self.proc.get("exit_status")

    def report(self, failed):
        """The process's and the unit's facts every result carries; for a failure also the unit's journal."""
        r = {}
        if self.pid:
            r["process"] = {"pid": self.pid, "alive": self.alive(), "exit_status": self.proc.get("exit_status")}
        if self.unit:
            props = self.unit_props or {}
            r["unit"] = {k: props.get(k) for k in proc_watch.UNIT_PROPS}
            if failed:
                r["journal_tail"] = proc_watch.journal_tail(self.unit, self.tail_lines, run=self.run)
        return r
