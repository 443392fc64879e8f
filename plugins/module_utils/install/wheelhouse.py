# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What to download into an offline wheelhouse for a target host (playbooks/sglang_wheelhouse.yml).

* ``pip_target_args``: pip options that make the controller's pip choose wheels for the host's CPython, machine and
  C library (``--python-version 3.12 --platform manylinux_2_39_x86_64 ...``): pip does not widen a given
  ``manylinux_2_X`` tag to older ones by itself, so every compatible tag is listed.
* ``download_pins``: from a ``pip install --dry-run --report`` resolution, the ``name==version`` pins to download,
  leaving out what the host already provides (a reused torch) and whatever only it needed (triton, nvidia-* ...).

Standard library only.
"""
from __future__ import annotations

import re

# Oldest glibc with a manylinux tag per machine (manylinux2014 = glibc 2.17 is the floor for non-x86).
_GLIBC_FLOOR = {"x86_64": 5, "i686": 5}
_LEGACY = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}


def canon(name):
    return re.sub(r"[-_.]+", "-", str(name)).lower()


def platform_tags(machine, libc, libc_version):
    """Compatible Linux platform tags, newest first. ``libc``: ``glibc`` or ``musl``; ``libc_version``: ``2.39``."""
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(str(machine).lower(), str(machine).lower())
    m = re.match(r"^(\d+)\.(\d+)", str(libc_version or ""))
    if not m:
        raise ValueError("unknown C library version %r for %s; set it (e.g. 2.35)" % (libc_version, machine))
    major, minor = int(m.group(1)), int(m.group(2))
    tags = []
    if libc == "musl":
        tags = ["musllinux_%d_%d_%s" % (major, n, machine) for n in range(minor, -1, -1)]
    elif libc == "glibc":
        if major != 2:
            raise ValueError("glibc %s is not 2.x" % libc_version)
        for n in range(minor, _GLIBC_FLOOR.get(machine, 17) - 1, -1):
            tags.append("manylinux_2_%d_%s" % (n, machine))
            if n in _LEGACY and (n == 17 or machine in _GLIBC_FLOOR):
                tags.append("%s_%s" % (_LEGACY[n], machine))
    else:
        raise ValueError("C library %r is neither glibc nor musl" % libc)
    return tags


def pip_target_args(target):
    """pip options selecting wheels for ``target`` = {python: '3.12.3', machine, libc, libc_version}."""
    m = re.match(r"^(\d+)\.(\d+)", str(target.get("python") or ""))
    if not m:
        raise ValueError("unknown Python version %r for the target" % target.get("python"))
    args = ["--only-binary=:all:", "--implementation", "cp", "--python-version", "%s.%s" % m.groups()]
    for tag in platform_tags(target.get("machine"), target.get("libc"), target.get("libc_version")):
        args += ["--platform", tag]
    return args + ["--platform", "any"]


def _edges(item, names):
    """Project names ``item`` may depend on that the resolution holds.

    Markers are not evaluated: pip's report names the extras requested only for the roots, and a dependency
    behind an extra is in the resolution because some parent asked for it. Following every edge can keep a
    package too many, never one too few.
    """
    meta = item.get("metadata") or {}
    out = set()
    for req in meta.get("requires_dist") or []:
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m and canon(m.group(1)) in names:
            out.add(canon(m.group(1)))
    return out


def download_pins(report, provided=()):
    """Pins (``name==version``) reachable from the requested roots without passing through ``provided``.

    ``report``: pip's installation report (``pip install --dry-run --report``). Returns (pins, dropped), both
    sorted; ``dropped`` names what is left to the host (``provided`` and what only they pulled in).
    """
    items = {}
    for it in report.get("install") or []:
        meta = it.get("metadata") or {}
        items[canon(meta.get("name"))] = it
    provided = set(canon(p) for p in provided)
    roots = [n for n, it in items.items() if it.get("requested")]
    seen, todo = set(), [n for n in roots if n not in provided]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo.extend(d for d in _edges(items[n], items) if d not in provided and d not in seen)
    pins = sorted("%s==%s" % (items[n]["metadata"]["name"], items[n]["metadata"]["version"]) for n in seen)
    dropped = sorted(items[n]["metadata"]["name"] for n in items if n not in seen)
    return pins, dropped


def placeholder_wheel(dest, name, version):
    """Write a metadata-only wheel ``name==version`` (no files, no dependencies) into ``dest``; return its path and
    whether it was written. It stands, during resolution only, for a package the host already has: pip then
    checks every pin against the host's version and does not resolve (download) what that package needs."""
    import base64
    import hashlib
    import os
    import zipfile

    norm = re.sub(r"[-_.]+", "_", name)
    path = os.path.join(dest, "%s-%s-py3-none-any.whl" % (norm, version))
    if os.path.exists(path):
        return path, False
    distinfo = "%s-%s.dist-info" % (norm, version)
    files = {
        distinfo + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                                "Summary: placeholder for the host's own %s (llmserve wheelhouse resolution)\n"
                                % (name, version, name),
        distinfo + "/WHEEL": "Wheel-Version: 1.0\nGenerator: llmserve\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for n, c in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (n, digest, len(c.encode())))
    files[distinfo + "/RECORD"] = "\n".join(record + [distinfo + "/RECORD,,"]) + "\n"
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w") as z:
        for n in sorted(files):
            z.writestr(n, files[n])
    os.replace(tmp, path)
    return path, True
