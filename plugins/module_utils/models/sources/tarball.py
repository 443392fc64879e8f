# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An ``http`` source that is a tarball (stdlib only, Python >= 3.8): the archive is fetched (resumably) inside the
partial tree, its members checked - plain files and directories only, every name contained, none twice, room to
unpack - then unpacked, each member hashed while it is written, and the archive removed."""

from __future__ import annotations

import hashlib
import os
import socket
import tarfile

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources.base import (
    ARCHIVE_NAME, CHUNK, NET_ERRORS, NO_LIMITS, RESERVED, StageError, check_source_names, known_of, refuse)
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources.url import fetch_url, http_get

TARBALL_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz")


def is_tarball(url):
    return url.split("?", 1)[0].endswith(TARBALL_SUFFIXES)


def expected(model, token=None, limits=NO_LIMITS):
    """(None, its Content-Length or None, revision): a tarball's content is known only once it is unpacked."""
    try:
        response = http_get(model["url"], token, timeout=limits.stall)
        length = response.headers.get("Content-Length")
        response.close()
    except NET_ERRORS + (socket.timeout,) as e:
        raise StageError("cannot reach %s: %s" % (model["url"], e))
    return None, int(length) if length and length.isdigit() else None, model.get("revision")


def fetch(model, partial, token=None, limits=NO_LIMITS):
    """Fetch and unpack the tarball into ``partial``; {path: (size, mtime_ns, sha256)} of its members."""
    # Inside the partial tree, the one place the role deletes in. tarfile detects the compression.
    url = model["url"]
    fetch_url(url, partial, ARCHIVE_NAME, None, token, limits)
    archive = os.path.join(partial, ARCHIVE_NAME)
    known = {}
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            bad = [m.name for m in members if not (m.isfile() or m.isdir())]
            if bad:
                raise _refuse_tar(model, "member %s is a link, device or fifo (only plain files and directories)"
                                  % contain.printable(bad[0]))
            names = [m.name[2:] if m.name.startswith("./") else m.name for m in members]
            names = [n.rstrip("/") if m.isdir() else n for n, m in zip(names, members)]
            bad = [n for n in names if n and n != "." and not _tar_name_ok(n)]
            if bad:
                raise _refuse_tar(model, "member %s leaves the tree or is not a normalised relative path"
                                  % contain.printable(bad[0]))
            # A tarball holding one top directory is that directory's tree.
            tops = set(n.split("/")[0] for n in names if n and n != ".")
            strip = len(tops) == 1 and any(m.isdir() and n in tops for n, m in zip(names, members))
            plan = []
            for name, member in zip(names, members):
                if not member.isfile():
                    continue
                if name.split("/")[-1] in RESERVED and name.count("/") <= (1 if strip else 0):
                    continue  # a staged tree's own bookkeeping, packed with it: not part of the weights
                rel = name.split("/", 1)[1] if strip and "/" in name else (None if strip else name)
                if rel:
                    plan.append((rel, member))
            rels = [rel for rel, _m in plan]
            if len(set(rels)) != len(rels):
                dup = sorted(r for r in set(rels) if rels.count(r) > 1)[0]
                raise _refuse_tar(model, "member %s is in the tarball twice" % contain.printable(dup))
            check_source_names(model, rels, "member", "nothing was unpacked (the archive stays in the partial tree)")
            unpacked = sum(m.size for _r, m in plan)
            free = os.statvfs(partial)
            if unpacked > free.f_bavail * free.f_frsize:
                raise _refuse_tar(model, "it unpacks to %d bytes, more than the %d free at %s"
                                  % (unpacked, free.f_bavail * free.f_frsize, partial))
            for rel, member in plan:
                limits.check(rel)
                known[rel] = _extract(tar, member, partial, rel, limits)
    except (tarfile.TarError, EOFError, OSError) as e:
        # A truncated archive is fetched again from its start next time.
        contain.remove_in(partial, ARCHIVE_NAME)
        raise StageError("%s: not a readable tarball (%s)" % (url, e))
    contain.remove_in(partial, ARCHIVE_NAME)
    return known


def _refuse_tar(model, e):
    return refuse(model, e, "nothing was unpacked (the archive stays in the partial tree)")


def _tar_name_ok(name):
    try:
        contain.check_rel(name)
        return True
    except contain.Refused:
        return False


def _extract(tar, member, partial, rel, limits):
    fd = contain.open_in(partial, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    digest = hashlib.sha256()
    file_end = limits.file_end()
    try:
        src = tar.extractfile(member)
        with src:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                digest.update(chunk)
                os.write(fd, chunk)
                limits.check(rel, file_end)
        return known_of(fd, digest)
    finally:
        os.close(fd)
