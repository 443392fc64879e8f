# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One holder at a time: a lock file on the host naming its holder (target side, stdlib only). Used by the server
room (one deploy of an instance at a time) and the models room (one staging run per dest), hence in host/.

Two ``ansible-playbook`` runs deploying one instance at once would each write, restart and wait, and both report
success while only one configuration runs. The first run's lock names who holds it - ``{controller, user, pid,
since, token}`` (the controller's host name, the user and pid of its ansible-playbook, epoch seconds) - and the
second is refused with that. A lock is stale when its holder is known dead (told by the controller, which alone can
see its processes) or older than ``stale_after`` seconds; a stale lock is taken over with a warning. The same holder
(same token) takes it again freely. Takers decide under an flock of ``<lock>.guard`` and the lock file is replaced
atomically, so two takers never both win and a reader never sees half a holder.
"""

from __future__ import annotations

import fcntl
import json
import os
import time


def read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (IOError, OSError, ValueError):
        return None


def describe(holder):
    since = holder.get("since") or 0
    return "%s@%s (ansible-playbook pid %s) since %s (%d s ago)" % (
        holder.get("user"), holder.get("controller"), holder.get("pid"),
        time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since)), max(0, time.time() - since))


def _replace(path, holder):
    tmp = "%s.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(holder, f)
    os.rename(tmp, path)


def take(path, holder, stale_after, holder_dead=False, check=False):
    """Returns {taken, held_by, took_over (the stale holder, or None), message}. ``holder_dead`` may be a callable
    (the current holder -> whether it is dead), asked under the guard: the holder it judges is the one replaced."""
    d = os.path.dirname(path)
    if not os.path.isdir(d):
        if check:
            return {"taken": True, "held_by": holder, "took_over": None, "message": "would take the lock"}
        os.makedirs(d, 0o755)
    # read, decide and write under one flock: two takers of a stale lock never both take it over
    guard = os.open(path + ".guard", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(guard, fcntl.LOCK_EX)
        return _take(path, holder, stale_after, holder_dead, check)
    finally:
        os.close(guard)


def _take(path, holder, stale_after, holder_dead, check):
    current = read(path)
    if current is None:
        if not check:
            _replace(path, holder)
        return {"taken": True, "held_by": holder, "took_over": None, "message": "took the lock"}
    if current.get("token") == holder.get("token"):
        return {"taken": True, "held_by": current, "took_over": None, "message": "holds the lock already"}
    age = time.time() - float(current.get("since") or 0)
    if callable(holder_dead):
        holder_dead = holder_dead(current)
    if holder_dead or age > stale_after:
        why = "its controller process is gone" if holder_dead else "it is older than %d s" % stale_after
        if not check:
            _replace(path, holder)
        return {"taken": True, "held_by": holder, "took_over": current,
                "message": "took over a stale lock of %s: %s" % (describe(current), why)}
    return {"taken": False, "held_by": current, "took_over": None, "message": "held by %s" % describe(current)}


def update(path, token, changes):
    """Merge ``changes`` into the lock if this holder (token) still has it, under the guard; returns the holder
    now in the lock (another one's when it was taken over: the caller must stop)."""
    guard = os.open(path + ".guard", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(guard, fcntl.LOCK_EX)
        current = read(path)
        if current is None or current.get("token") != token:
            return current
        current.update(changes)
        _replace(path, current)
        return current
    finally:
        os.close(guard)


def release(path, token, check=False):
    """Remove the lock if this holder (token) has it; returns whether it did."""
    current = read(path)
    if not current or current.get("token") != token:
        return False
    if not check:
        try:
            os.unlink(path)
        except OSError:
            return False
    return True
