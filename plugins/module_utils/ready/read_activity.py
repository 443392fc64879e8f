# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's activity source: is the server doing anything? The process tree's CPU and I/O, its members
stopped by a signal or a tracer, and the GPUs' memory (nvidia-smi, only after a quiet while).

Fills the activity's part of a verdicts.Snapshot (``PART``): when anything last moved (the log's new bytes count too:
the log source reports them through ``moved``) and since when a member of the tree has been stopped.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as nvidia_smi

GPU_IDLE_PROBE = 10.0   # sample nvidia-smi when idle at most this often
TREE_RESCAN = 5.0       # re-list the process tree's members (a scan of all /proc)

# The snapshot fields this source writes, and no other.
PART = ("last_progress", "stopped_since")


def stopped(pids):
    """The members of ``pids`` in state T/t (stopped by a signal or a tracer), sorted."""
    return sorted(p for p in pids or () if (proc_watch.proc_stat(p) or ("?",))[0] in ("T", "t"))


class ActivitySource:
    """``params``: stall_timeout (nvidia-smi is asked after half of it idle, at most every GPU_IDLE_PROBE s);
    ``run``: the module's runner (host/run.py) for nvidia-smi."""

    def __init__(self, params, run=None, state=None):
        s = state or {}
        self.stall_timeout = params["stall_timeout"]
        self.run = run
        self.use = s.get("use") or {}  # cpu_s, io_bytes, procs of the tree; gpu_mem: the GPUs' used memory
        self.last_progress = s.get("last_progress", 0.0)
        self.stopped_since = s.get("stopped_since")
        self.slow_polls = s.get("slow_polls", 0)
        self.members = None  # the tree's pids, listed at most every TREE_RESCAN s
        self._members_at = -1e9
        self._last_gpu = -1e9

    def dump(self):
        return {"use": self.use, "last_progress": self.last_progress, "stopped_since": self.stopped_since,
                "slow_polls": self.slow_polls}

    def start(self, pid):
        """The tree's CPU and I/O at the first look: the baseline later looks compare against."""
        u = proc_watch.tree_usage(pid)
        self.use = {"cpu_s": u["cpu_s"], "io_bytes": u["io_bytes"], "gpu_mem": None}

    def moved(self, now):
        """Another source saw progress (the log grew)."""
        self.last_progress = now

    def see(self, s, pid, look):
        """When ``look`` (every interval), the tree of ``pid`` and the GPUs; then fill the activity's part."""
        if look:
            self._look(s.now, pid)
        s.last_progress = self.last_progress
        s.stopped_since = self.stopped_since

    def _busy(self, u):
        return u["cpu_s"] > self.use.get("cpu_s", 0) or u["io_bytes"] > self.use.get("io_bytes", 0)

    def _look(self, now, pid):
        self.slow_polls += 1
        if pid:
            if not self.members or now - self._members_at >= TREE_RESCAN:
                self.members, self._members_at = proc_watch.tree(pid), now
            u = proc_watch.tree_usage(pid, self.members)
            busy = self._busy(u)
            if not busy and now - self._members_at > 0:
                # Idle by the cached member list: a new child may be the busy one.
                self.members, self._members_at = proc_watch.tree(pid), now
                u = proc_watch.tree_usage(pid, self.members)
                busy = self._busy(u)
            if busy:
                self.last_progress = now
            self.use["cpu_s"] = max(u["cpu_s"], self.use.get("cpu_s", 0))
            self.use["io_bytes"] = max(u["io_bytes"], self.use.get("io_bytes", 0))
            self.use["procs"] = u["procs"]
            # A stopped member (state T) holds the whole start-up, while the others may spin on CPU waiting for it
            # (real 0.5.15.post1's top process burned ~0.5 core with its scheduler SIGSTOPped): CPU is no progress then.
            if stopped(self.members):
                self.stopped_since = now if self.stopped_since is None else self.stopped_since
            else:
                self.stopped_since = None
        idle = now - self.last_progress
        if idle >= min(GPU_IDLE_PROBE, self.stall_timeout / 2.0) and now - self._last_gpu >= GPU_IDLE_PROBE:
            self._last_gpu = now
            mem = nvidia_smi.gpu_memory_total_used(nvidia_smi.gpu_info(run=self.run))
            if mem is not None and mem != self.use.get("gpu_mem"):
                if self.use.get("gpu_mem") is not None:
                    self.last_progress = now
                self.use["gpu_mem"] = mem

    def stopped_members(self, pid):
        """Pids of the server's process tree in state T/t: asked once, at a stall."""
        if not pid:
            return []
        return stopped(self.members or proc_watch.tree(pid) or [pid])

    def usage(self):
        """The tree's CPU seconds and I/O bytes so far (None before the first look at a process)."""
        return {"cpu_seconds": self.use.get("cpu_s"), "io_bytes": self.use.get("io_bytes")}

    def report(self, failed):
        """For a failure, the GPUs."""
        return {"gpu": nvidia_smi.gpu_info(run=self.run)} if failed else {}
