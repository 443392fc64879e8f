# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which filesystem holds a path, from /proc/self/mountinfo (stdlib only).

The one home of "is this path on a network filesystem": weights read over NFS, Lustre, a FUSE mount or SMB load
far slower than from a local disk, and each tensor-parallel rank reads every shard again unless told otherwise.
"""

from __future__ import annotations

import os
import re

# fstype as the kernel names it in mountinfo; fuse.<x> (sshfs, s3fs, gcsfuse, juicefs, ...) counted by prefix
NETWORK_TYPES = ("nfs", "nfs4", "lustre", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "gpfs", "beegfs", "9p",
                 "afs", "orangefs", "wekafs", "panfs", "fuse", "fuseblk")
_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(field):
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text):
    """[(mount_point, fstype, source)] in the kernel's order (a later mount over the same point hides an earlier)."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 2:
            continue
        mounts.append((_unescape(fields[4]), tail[0], _unescape(tail[1])))
    return mounts


def is_network(fstype):
    return fstype in NETWORK_TYPES or fstype.startswith("fuse.")


def filesystem(path, mountinfo=None):
    """{mount, fstype, source, network} of the filesystem holding ``path`` (its real path), None when unknown."""
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo") as f:
                mountinfo = f.read()
        except (IOError, OSError):
            return None
    real = os.path.realpath(path)
    best = None
    for point, fstype, source in parse_mountinfo(mountinfo):
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fstype, source)
    if best is None:
        return None
    return {"mount": best[0], "fstype": best[1], "source": best[2], "network": is_network(best[1])}
