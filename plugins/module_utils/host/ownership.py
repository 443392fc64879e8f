# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is this process ours? The one home of the predicates (stdlib only; reads /proc on the target).

"Ours" has three honest meanings, each a named predicate here, so a caller says which one it means:

- :func:`in_unit`: the process sits in the cgroup of a systemd unit (by name or glob) - a systemd-managed server,
  gpu_health's ``own_units``;
- :func:`descends_from`: the process is a given pid or one of its descendants - a pid-file-managed server;
- :func:`cmdline_matches`: the command line matches a pattern - gpu_health's ``own_process_patterns``.

:func:`identity` reads what the predicates need once (cmdline, cgroup); a process outside this PID namespace has
none (None), and no predicate calls it ours. Who holds a listening socket is host/proc_watch.port_owner (it adds
the uid rule for fd tables it cannot read).
"""

from __future__ import annotations

import fnmatch
import os
import re

UNIT_SUFFIXES = (".service", ".scope")


def identity(pid, proc_root="/proc"):
    """``{cmdline, cgroup}`` of ``pid``, or None when it is not visible here (gone, another PID namespace)."""
    base = os.path.join(proc_root, str(pid))
    try:
        with open(os.path.join(base, "cmdline"), "rb") as handle:
            cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except (IOError, OSError):
        return None
    try:
        with open(os.path.join(base, "cgroup")) as handle:
            cgroup = handle.read()
    except (IOError, OSError):
        cgroup = ""
    return {"cmdline": cmdline, "cgroup": cgroup}


def cgroup_units(cgroup_text):
    """The systemd units a ``/proc/PID/cgroup`` text places the process in (``sglang-default.service``, ...)."""
    units = []
    for line in (cgroup_text or "").splitlines():
        for part in line.split(":", 2)[-1].split("/"):
            if part.endswith(UNIT_SUFFIXES) and part not in units:
                units.append(part)
    return units


def in_unit(ident, unit_globs):
    """True when the process of ``ident`` (see :func:`identity`) runs in a unit matching one of ``unit_globs``.

    A glob without a suffix means its ``.service`` (``sglang-default`` is ``sglang-default.service``).
    """
    if not ident:
        return False
    globs = [g if g.endswith(UNIT_SUFFIXES) or g.endswith("*") else g + ".service" for g in unit_globs or () if g]
    return any(fnmatch.fnmatchcase(unit, g) for unit in cgroup_units(ident["cgroup"]) for g in globs)


def cmdline_matches(ident, patterns):
    """True when the command line of ``ident`` matches one of the regular expressions ``patterns``."""
    return bool(ident) and any(re.search(p, ident["cmdline"]) for p in patterns or ())


def parent(pid, proc_root="/proc"):
    """The parent pid of ``pid`` from /proc/PID/stat, or None."""
    try:
        with open(os.path.join(proc_root, str(pid), "stat")) as handle:
            # comm may hold spaces and parentheses: split after the last ')'
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IOError, ValueError, IndexError):
        return None


def descends_from(pid, ancestor, proc_root="/proc"):
    """True when ``pid`` is ``ancestor`` or one of its descendants."""
    if not ancestor:
        return False
    cur, seen = int(pid), set()
    while cur and cur > 1 and cur not in seen:
        if cur == int(ancestor):
            return True
        seen.add(cur)
        cur = parent(cur, proc_root)
    return False
