# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an instance left on the GPUs after it was stopped, and ending it (target side, stdlib only).

SGLang's scheduler processes can outlive their launcher and keep GPU memory (sglang#23627): the port frees at once,
so a supervisor believes the server stopped, and the next start runs out of memory or is refused by the preflight.
After every stop, ``sweep`` asks nvidia-smi for the GPUs' compute processes, keeps those that belong to the instance
and ends them (SIGTERM, SIGKILL after ``grace`` seconds). A process belongs to the instance when one of these holds:

  its cgroup is the instance's systemd unit           (systemd: every process the unit ever started)
  its environment carries ``MARKER=<instance>``       (both managers: the plan puts it in server.env, children inherit
                                                       it through setsid and double forks)
  its process group or session is the server's        (pid-file mode: the group the supervisor created)

Anything else is never signalled, whatever it holds.
"""

from __future__ import annotations

import os
import shutil
import signal
import time

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia.smi import APP_FIELDS, Unparseable, parse_compute_apps

MARKER = "LLMSERVE_SGLANG_INSTANCE"


def _read(path, mode="r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except (IOError, OSError):
        return None


def _group_and_session(pid, proc):
    text = _read(os.path.join(proc, str(pid), "stat"))
    try:
        fields = text.rsplit(")", 1)[1].split()
        return int(fields[2]), int(fields[3])
    except (AttributeError, IndexError, ValueError):
        return None, None


def why_ours(pid, instance, unit_name=None, server_pids=(), proc="/proc"):
    """Why pid belongs to the instance ('cgroup', 'environment', 'process group'), or None."""
    if unit_name:
        cg = _read(os.path.join(proc, str(pid), "cgroup")) or ""
        if any(line.rstrip().endswith("/" + unit_name) or ("/" + unit_name + "/") in line for line in cg.splitlines()):
            return "cgroup"
    env = _read(os.path.join(proc, str(pid), "environ"), "rb")
    if env and ("%s=%s" % (MARKER, instance)).encode() in env.split(b"\0"):
        return "environment"
    pgid, sid = _group_and_session(pid, proc)
    if any(p and p > 1 and p != os.getpgrp() and p in (pgid, sid) for p in server_pids):  # never init's, the caller's
        return "process group"
    return None


def instance_of(pid, proc="/proc"):
    """The instance whose marker (``MARKER=<instance>``) the process's environment carries, or None."""
    env = _read(os.path.join(proc, str(pid), "environ"), "rb") or b""
    prefix = ("%s=" % MARKER).encode()
    for item in env.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix):].decode("utf-8", "replace")[:200]
    return None


def cmdline(pid, proc="/proc"):
    raw = _read(os.path.join(proc, str(pid), "cmdline"), "rb") or b""
    return " ".join(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a)[:300]


def gpu_processes(run, smi=None):
    """[{pid, name, used_memory_mib}] of every compute process, or None without a working nvidia-smi."""
    smi = smi or shutil.which("nvidia-smi")
    if not smi:
        return None
    rc, out, _err = run([smi, "--query-compute-apps=" + ",".join(APP_FIELDS), "--format=csv,noheader,nounits"])
    if rc != 0:
        return None
    try:
        return [a for a in parse_compute_apps(out, APP_FIELDS) if a["pid"]]
    except Unparseable:  # as a nvidia-smi that does not answer
        return None


def _alive(pid, proc):
    stat = _read(os.path.join(proc, str(pid), "stat"))
    return bool(stat) and stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def _stopped(pid, proc="/proc"):
    try:
        with open("%s/%d/stat" % (proc, pid), "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except (OSError, IOError):
        return False
    return raw[raw.rfind(")") + 2:].split()[:1] in (["T"], ["t"])


def sweep(instance, unit_name=None, server_pids=(), grace=10.0, run=None, proc="/proc", kill=os.kill, check=False):
    """End the instance's processes still on a GPU. Returns {checked, ended: [{pid, cmdline, used_memory_mib, why,
    signal}], left: [...]}; ``checked`` is False where nvidia-smi cannot tell."""
    apps = gpu_processes(run)
    if apps is None:
        return {"checked": False, "ended": [], "left": []}
    ours = []
    for app in apps:
        pid = app["pid"]
        if not isinstance(pid, int) or pid <= 1 or pid == os.getpid():  # never init, the caller, or a non-pid
            continue
        why = why_ours(app["pid"], instance, unit_name, server_pids, proc)
        if why:
            ours.append({"pid": app["pid"], "cmdline": cmdline(app["pid"], proc), "used_memory_mib": app["used_memory_mib"],
                         "why": why, "signal": "TERM"})
    if check or not ours:
        return {"checked": True, "ended": ours if check else [], "left": []}
    for o in ours:
        if _stopped(o["pid"], proc):
            o["signal"] = "KILL"  # a stopped process cannot act on SIGTERM: no grace to wait for it
        try:
            kill(o["pid"], signal.SIGKILL if o["signal"] == "KILL" else signal.SIGTERM)
        except OSError:
            pass
    deadline = time.time() + (0 if all(o["signal"] == "KILL" for o in ours) else float(grace))
    while time.time() < deadline and any(_alive(o["pid"], proc) for o in ours):
        time.sleep(0.1)
    for o in ours:
        if _alive(o["pid"], proc):
            o["signal"] = "KILL"
            try:
                kill(o["pid"], signal.SIGKILL)
            except OSError:
                pass
    deadline = time.time() + 5
    while time.time() < deadline and any(_alive(o["pid"], proc) for o in ours):
        time.sleep(0.1)
    left = [o for o in ours if _alive(o["pid"], proc)]
    return {"checked": True, "ended": [o for o in ours if o not in left], "left": left}
