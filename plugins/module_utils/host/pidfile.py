# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pid file is not proof: the one rule for "is the process a pid file names the one the collection started".

The collection records a process's identity when it starts it (:func:`identity_of`: pid, its start time - field 22
of ``/proc/PID/stat`` - with the boot time it counts from, its process group and, for a binary, its executable).
:func:`verdict` compares a pid file and that record with what runs now (:func:`observe`) and :func:`judge`, pure,
decides:

- ``none``: no pid file (nothing started, or it ended and its supervisor removed the file);
- ``refused``: the file is a link, not a regular file, too big, not one decimal pid, or names pid 1 or less or a
  pid beyond the kernel's range - nothing is read further, nothing is signalled;
- ``foreign``: a process runs under that pid but it is not the one recorded (no record, another pid recorded,
  another start time: the pid was reused, another executable) - nothing is signalled (a record of an earlier
  release, without ``starttime``, is compared by its ``started`` epoch, within LEGACY_SLACK_S);
- ``gone``: the recorded process has ended (a stale file);
- ``ours``: the recorded process runs; ``group`` says whether its process group may be signalled (the group is the
  one the collection created - its pgid is the recorded pid - and not the caller's own).

Stdlib only and self-contained: roles/server installs it beside its supervisor as ``sglang_pidfile.py``.
"""

from __future__ import annotations

import errno
import os
import re
import stat

PID_MAX = 1 << 22  # the largest pid_max Linux allows (PID_MAX_LIMIT on 64-bit)
FILE_CAP = 64  # bytes: a pid file holds one decimal number
_PID_TEXT = re.compile(br"\A[0-9]{1,8}\n?\Z")
# A record of an earlier release holds only the epoch at which the supervisor spawned the server ("started"); the
# process's start (boot time, whole seconds, plus ticks) is within this of it.
LEGACY_SLACK_S = 2.0
FIX = "nothing signalled; remove the stale pid file %s (and stop that process yourself if it is a server the " \
      "collection lost)"


def _printable(raw, cap=40):
    """The first ``cap`` bytes of ``raw`` for a message: printable ASCII as it is, every other byte as \\xNN."""
    return "".join(chr(b) if 32 <= b < 127 else "\\x%02x" % b for b in bytearray(raw[:cap]))


def read(path):
    """``(pid, problem)``: ``(None, None)`` when there is no file; a problem (one sentence naming the file and the
    fix) for a link, a non-regular file, more than FILE_CAP bytes, anything but one decimal pid, a pid <= 1 or
    beyond PID_MAX. Opened without following a link and without blocking (a FIFO answers at once)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None, None
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW on a link
            return None, "pid file %s is a symbolic link (a pid file is a plain file the collection writes): " \
                         "%s" % (path, FIX % path)
        return None, "pid file %s cannot be read (%s): %s" % (path, exc.strerror, FIX % path)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "pid file %s is not a regular file: %s" % (path, FIX % path)
        raw = os.read(fd, FILE_CAP + 1)
    finally:
        os.close(fd)
    if len(raw) > FILE_CAP:
        return None, "pid file %s holds more than %d bytes, not a pid: %s" % (path, FILE_CAP, FIX % path)
    if not _PID_TEXT.match(raw):
        return None, "pid file %s does not hold a pid ('%s'): %s" % (path, _printable(raw), FIX % path)
    pid = int(raw)
    if pid <= 1:
        return None, "pid file %s names pid %d, never a server's (1 is init, 0 the caller's group): %s" % (
            path, pid, FIX % path)
    if pid > PID_MAX:
        return None, "pid file %s names pid %d, beyond the kernel's pid range (%d): %s" % (
            path, pid, PID_MAX, FIX % path)
    return pid, None


def _stat_fields(pid, proc):
    """The fields of /proc/PID/stat after ``comm`` (field 3 first), as bytes, or None when gone. Not decoded:
    ``comm`` is any 15 bytes the process chose, parentheses and spaces included; the last ')' ends it."""
    try:
        with open("%s/%d/stat" % (proc, pid), "rb") as f:
            raw = f.read()
    except (OSError, IOError):
        return None
    return raw[raw.rfind(b")") + 2:].split()


def boot_time(proc="/proc"):
    """The ``btime`` of /proc/stat (what start times count from), or None."""
    try:
        with open("%s/stat" % proc) as f:
            for line in f:
                if line.startswith("btime "):
                    return int(line.split()[1])
    except (OSError, IOError, ValueError, IndexError):
        return None
    return None


def observe(pid, proc="/proc"):
    """What runs under ``pid`` now: ``{state, ppid, pgid, starttime, btime, exe}`` (exe None when unreadable:
    another user's process without CAP_SYS_PTRACE, a kernel thread), or None when no process has that pid."""
    rest = _stat_fields(pid, proc)
    if not rest or len(rest) < 20:
        return None
    try:
        exe = os.readlink("%s/%d/exe" % (proc, pid))
    except (OSError, IOError):
        exe = None
    btime = boot_time(proc)
    return {"state": chr(bytearray(rest[0])[0]), "ppid": int(rest[1]), "pgid": int(rest[2]), "starttime": int(rest[19]),
            "btime": btime, "exe": exe,
            "start": None if btime is None else btime + int(rest[19]) / float(os.sysconf("SC_CLK_TCK"))}


def binary(path):
    """``path`` resolved when it is an ELF binary (what /proc/PID/exe will show once it runs), else None (a script:
    its interpreter runs, which is not known here)."""
    try:
        real = os.path.realpath(path)
        with open(real, "rb") as f:
            return real if f.read(4) == b"\x7fELF" else None
    except (OSError, IOError):
        return None


def identity_of(pid, exe=None, proc="/proc"):
    """The record of a process the collection just started: pid, starttime, btime and the executable it runs
    (``exe``: :func:`binary` of what it execs; None: not compared). None when it is already gone."""
    seen = observe(pid, proc)
    if seen is None:
        return None
    return {"pid": pid, "starttime": seen["starttime"], "btime": seen["btime"], "exe": exe}


def _undeleted(exe):
    """/proc/PID/exe of a binary replaced since it started (a package upgrade) ends in ' (deleted)'."""
    return exe[: -len(" (deleted)")] if exe.endswith(" (deleted)") else exe


def judge(path, pid, problem, record, seen, caller_pgid):
    """The verdict on pid file ``path`` (pure): ``{state, pid, group, msg}``. ``pid``, ``problem``: what
    :func:`read` found; ``record``: the identity recorded at start (:func:`identity_of`) or None; ``seen``: what
    :func:`observe` finds under the pid now; ``caller_pgid``: the caller's own process group."""
    out = {"state": "none", "pid": None, "group": False, "msg": None}
    if problem:
        return dict(out, state="refused", msg=problem)
    if pid is None:
        return out
    out["pid"] = pid
    if seen is None or seen["state"] in ("Z", "X"):
        return dict(out, state="gone", msg="pid file %s names pid %d, which has ended: a stale file" % (path, pid))
    if not isinstance(record, dict) or not record.get("pid"):
        why = "no record of it"
    elif record["pid"] != pid:
        why = "the record names pid %s" % record["pid"]
    elif "starttime" in record:
        why = "start time differs" if (record["starttime"], record.get("btime")) != (seen["starttime"],
                                                                                     seen["btime"]) else None
    elif not isinstance(record.get("started"), (int, float)) or seen.get("start") is None:
        why = "no start time recorded"
    else:
        why = "start time differs" if abs(seen["start"] - record["started"]) > LEGACY_SLACK_S else None
    if why is None and record.get("exe") and seen.get("exe") and record["exe"] != _undeleted(seen["exe"]):
        why = "executable differs: %s, not %s" % (seen["exe"], record["exe"])
    if why:
        return dict(out, state="foreign", msg="pid file %s names pid %d, which is not the process started by the "
                    "collection (%s): %s" % (path, pid, why, FIX % path))
    out["group"] = seen["pgid"] == pid and pid != caller_pgid
    return dict(out, state="ours")


def verdict(path, record, proc="/proc"):
    """:func:`judge` on the pid file ``path`` and the ``record`` of what the collection started, as the host is now."""
    pid, problem = read(path)
    seen = observe(pid, proc) if pid else None
    return judge(path, pid, problem, record, seen, os.getpgrp())
