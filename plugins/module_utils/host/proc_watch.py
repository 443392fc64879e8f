# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the server process alive, and is it doing anything?

Reads /proc directly (cheap enough to run every 0.1-0.25 s) and asks
``systemctl show`` about units (a fork, so only at the slow cadence).  Activity
is CPU ticks and I/O bytes summed over the process tree (GPU memory comes from
nvidia/smi.gpu_info): a silent but busy phase (JIT compiles, NCCL set-up) is not a stall.
"""

from __future__ import annotations

import os
import shutil
import signal
import time

from ansible_collections.llmserve.sglang.plugins.module_utils.host import net

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def proc_stat(pid):
    """(state, ppid, utime+stime ticks, starttime) or None if gone."""
    try:
        raw = _read("/proc/%d/stat" % pid)
    except (OSError, IOError):
        return None
    # comm may hold spaces and parentheses: split after the last ')'.
    rest = raw[raw.rfind(")") + 2:].split()
    return rest[0], int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[19])


def age(pid):
    """Seconds since ``pid`` started (its starttime against /proc/uptime), or None."""
    st = proc_stat(pid)
    try:
        uptime = float(_read("/proc/uptime").split()[0])
    except (OSError, IOError, ValueError, IndexError):
        return None
    return None if st is None else max(0.0, uptime - st[3] / float(CLK_TCK))


def alive(pid, starttime=None):
    st = proc_stat(pid)
    if st is None or st[0] in ("Z", "X"):
        return False
    # Same pid but another start time: the pid was reused by a new process.
    return starttime is None or st[3] == starttime


def children_map():
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = proc_stat(int(name))
        if st is not None:
            kids.setdefault(st[1], []).append(int(name))
    return kids


def tree(pid):
    kids = children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def io_bytes(pid):
    """rchar + wchar (page-cache reads of safetensors count), or None."""
    try:
        total = 0
        for line in _read("/proc/%d/io" % pid).splitlines():
            k, _sep, v = line.partition(":")
            if k in ("rchar", "wchar"):
                total += int(v)
        return total
    except (OSError, IOError, ValueError):
        return None


def tree_usage(pid, pids=None):
    """CPU seconds and I/O bytes of a process tree (dead members drop out).

    ``pids`` is a cached member list: finding children means reading every
    /proc/*/stat, the costliest thing the waiter does, so callers rescan rarely.
    """
    cpu, io, n = 0, 0, 0
    for p in pids or tree(pid):
        st = proc_stat(p)
        if st is None:
            continue
        n += 1
        cpu += st[2]
        b = io_bytes(p)
        io += b or 0
    return {"cpu_s": round(cpu / float(CLK_TCK), 2), "io_bytes": io, "procs": n}


def exit_status_of_child(pid):
    """Reap our own child (tests, benchmarks); None when not our child."""
    try:
        wpid, status = os.waitpid(pid, os.WNOHANG)
    except (OSError, ChildProcessError):
        return None
    if wpid == 0:
        return None
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


ENVIRON_CAP = 4 << 20  # bytes of /proc/PID/environ read (the kernel bounds it near ARG_MAX)


def marked(name, value, proc="/proc"):
    """Pids (not this one, not zombies) whose environment holds ``name=value``: the processes of a program started
    with that one-time marker, its descendants included wherever they moved (another group, another session)."""
    needle = ("%s=%s" % (name, value)).encode("utf-8")
    out = []
    for entry in os.listdir(proc):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("%s/%s/environ" % (proc, entry), "rb") as f:
                env = f.read(ENVIRON_CAP).split(b"\0")
        except (OSError, IOError):
            continue  # gone, or not ours to read (another user: not started by us either)
        if needle in env:
            st = proc_stat(int(entry))
            if st is not None and st[0] not in ("Z", "X"):
                out.append(int(entry))
    return sorted(out)


def end_marked(name, value, wait=10.0, clock=time.monotonic, sleep=time.sleep):
    """SIGKILL every process carrying the marker ``name=value`` and return only when none is left (a killed
    process is gone once it is a zombie), or after ``wait`` seconds: the pids still there then (none on a sane host).
    A signal is pending until its process runs again, so on a busy host a group just killed is not gone yet."""
    deadline = clock() + wait
    while True:
        left = marked(name, value)
        if not left or clock() >= deadline:
            return left
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        sleep(0.02)


# -- who answers on the port -----------------------------------------------------
def uid_of(pid):
    """Real uid of ``pid`` from /proc/PID/status (readable without ptrace rights), or None."""
    try:
        for line in _read("/proc/%d/status" % pid).splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, IOError, ValueError, IndexError):
        return None
    return None


def socket_inodes(pids):
    """(socket inodes held by ``pids``, whether every fd table could be read)."""
    out, complete = set(), True
    for pid in pids:
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except (OSError, IOError) as e:
            complete = complete and getattr(e, "errno", None) == 2  # gone is fine, EACCES is not
            continue
        for fd in fds:
            try:
                target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except (OSError, IOError):
                continue
            if target.startswith("socket:["):
                out.add(target[8:-1])
    return out, complete


def port_owner(port, pid):
    """'ours' when ``pid``'s process tree listens on ``port``, 'other' when a process outside it is SEEN holding
    the listening socket, None when that cannot be told (our pid gone or restarted, fds unreadable, owner not
    found). Only 'other' may hold a readiness verdict back, so every doubt must land on None."""
    sockets = net.listening_sockets(port)
    if not sockets or not alive(pid):
        return None
    listeners = set(sockets)
    ours = tree(pid)
    held, _complete = socket_inodes(ours)
    if listeners & held:
        return "ours"
    # Without ptrace rights (a container without CAP_SYS_PTRACE) root cannot read another user's fd table, but
    # /proc/net/tcp names each socket's owner: a listener no uid of our tree owns is not ours.
    uids = set(uid_of(p) for p in ours) - set([None])
    if uids and not uids & set(sockets.values()):
        return "other"
    if net.socket_holders(listeners) - set(ours):
        return "other"
    return None


# -- systemd -----------------------------------------------------------------
UNIT_PROPS = ("LoadState", "ActiveState", "SubState", "MainPID", "ExecMainStatus",
              "ExecMainCode", "Result", "NRestarts")


def unit_show(unit, systemctl="systemctl", run=None):
    """``systemctl show`` of the unit; ``run``: the runner (host/run.py)."""
    if run is None:
        return {"error": "no command runner given"}
    rc, stdout, stderr = run([systemctl, "show", unit, "--no-pager", "-p", ",".join(UNIT_PROPS)], timeout=10)
    if rc != 0:
        return {"error": stderr.strip() or "rc %d" % rc}
    props = {}
    for line in stdout.splitlines():
        k, _sep, v = line.partition("=")
        props[k] = v
    return props


def unit_running(props):
    """True while the unit's main process should be there."""
    if props.get("ActiveState") in ("active", "activating", "reloading"):
        # Restart=on-failure shows 'activating/auto-restart': it already died.
        return props.get("SubState") != "auto-restart"
    return False


def journal_tail(unit, lines=40, journalctl="journalctl", run=None):
    if run is None or not shutil.which(journalctl):
        return []
    rc, stdout, _err = run([journalctl, "-u", unit, "-n", str(lines), "--no-pager", "-o", "cat"], timeout=15)
    if rc in (124, 127):
        return []
    return stdout.splitlines()[-lines:]
