# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The copy sources (stdlib only, Python >= 3.8): ``dir``, a local directory (a mount) copied file by file, each
resumed from its copied length and hashed in the same pass, every core at work; and ``host``, a tree another host
staged, read over SSH (its manifest) and copied with rsync --partial."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources.base import (
    CHUNK, NO_LIMITS, STATUS_NAME, StageError, check_source_names, expected_from_manifest, hash_prefix, known_of,
    refuse, revision_of, run_timed, run_watched, select_files, total_size)

# Kernel copies go in slices of this, so the deadline and the controller's presence are checked between them.
COPY_SLICE = 256 * 1024 * 1024


def expected_dir(model):
    """(files, total bytes, revision) of a ``dir`` source: its manifest when it has one (each file checked to be
    there, a plain file inside the tree), else a listing of the tree."""
    if not os.path.isdir(model["path"]):
        raise StageError("the source directory %s does not exist or is not mounted" % model["path"])
    try:
        source_manifest = mf.load(model["path"])
    except ValueError as e:
        raise refuse(model, e)
    if source_manifest is not None:
        files = expected_from_manifest(model, source_manifest, "manifest entry")
        for rel in files:
            _source_file(model, rel)
        revision = revision_of(source_manifest)
    else:
        files = dict((rel, {"size": size, "sha256": None}) for rel, size in source_listing(model).items())
        revision = model.get("revision")
    files = select_files(files, model.get("allow_patterns"), model.get("ignore_patterns"), model)
    return files, total_size(files), revision


def expected_host(model, limits=NO_LIMITS):
    """(files, total bytes, revision) from the manifest of the tree staged on ``from_host``, read over SSH."""
    stall = limits.stall
    remote_manifest = model["path"].rstrip("/") + "/" + mf.MANIFEST_NAME
    argv = _ssh_argv(model) + ["--", _remote(model), "cat -- %s" % shlex.quote(remote_manifest)]
    rc, stdout, stderr = run_timed(argv, max(stall, 30))
    if rc is None:
        raise StageError("reading the staged manifest on %s:%s over SSH took more than %d s"
                         % (model["from_host"], model["path"], max(stall, 30)))
    if rc != 0:
        raise StageError("cannot read the staged manifest on %s:%s over SSH: %s (stage it there first)"
                         % (model["from_host"], model["path"], stderr.strip()[-300:]))
    try:
        source_manifest = json.loads(stdout)
    except ValueError as e:
        raise StageError("the manifest on %s:%s is not JSON: %s" % (model["from_host"], model["path"], e))
    files = select_files(expected_from_manifest(model, source_manifest, "manifest entry"),
                         model.get("allow_patterns"), model.get("ignore_patterns"), model)
    return files, total_size(files), revision_of(source_manifest)


def _ssh_argv(model):
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new"]
    if model.get("ssh_port"):
        argv += ["-p", str(int(model["ssh_port"]))]
    if model.get("ssh_key"):
        argv += ["-i", model["ssh_key"]]
    return argv


def _remote(model):
    user = model.get("ssh_user")
    return ("%s@%s" % (user, model["from_host"])) if user else model["from_host"]


def source_listing(model):
    """{relative path: size} of a ``dir`` source without a manifest. Symlinks: one to a plain file inside the
    source tree is copied as that file's content; one that leaves the tree (or to a directory, or dangling) and
    anything that is not a plain file (device, fifo, socket) refuses the whole model, named."""
    root = model["path"]
    real_root = os.path.realpath(root)
    found, problems = {}, []
    for dirpath, dirnames, filenames in os.walk(root):
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                problems.append("%s is a symlink to a directory (%s)" % (
                    os.path.relpath(os.path.join(dirpath, d), root), os.readlink(os.path.join(dirpath, d))))
                dirnames.remove(d)
        if dirpath == root:
            dirnames[:] = [d for d in dirnames if d not in mf.SKIP_DIRS]
        for name in filenames:
            if (dirpath == root and name in mf.SKIP_NAMES) or name.endswith(mf.OWN_SUFFIXES):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            try:
                found[rel] = _source_size(root, real_root, rel)
            except contain.Refused as e:
                problems.append(str(e))
    if problems:
        raise refuse(model, "; ".join(contain.printable(p) for p in problems[:10]))
    check_source_names(model, sorted(found), "source file")
    return found


def _source_size(root, real_root, rel):
    path = os.path.join(root, rel)
    real = os.path.realpath(path)
    if not contain.under(real, real_root):
        raise contain.Refused("%s is a symlink that leaves the source tree (to %s)" % (rel, real))
    try:
        st = os.stat(real)
    except OSError:
        raise contain.Refused("%s is a dangling symlink or unreadable" % rel)
    if not os.path.isfile(real):
        raise contain.Refused("%s is not a plain file" % rel)
    return st.st_size


def _source_fd(root, real_root, rel):
    """(real path, fd) of a source file for reading: its real path must stay inside the source tree and be a plain
    file (a link to /etc/shadow, or a manifest naming one through a link, is refused)."""
    _source_size(root, real_root, rel)
    real = os.path.realpath(os.path.join(root, rel))
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW)
    if not os.path.isfile(real) or not contain.under(os.path.realpath(real), real_root):
        os.close(fd)
        raise contain.Refused("%s changed while it was read" % rel)
    return real, fd


def _source_file(model, rel):
    try:
        return _source_size(model["path"], os.path.realpath(model["path"]), rel)
    except contain.Refused as e:
        raise refuse(model, e)


def fetch_dir(model, partial, files, limits=NO_LIMITS, workers=None):
    """Copy every file of a ``dir`` source, ``workers`` files at a time (default: every core), each hashed while
    it is copied - one read of the source, no second read of the copy. {path: (size, mtime_ns, sha256)}."""
    check_source_names(model, sorted(files), "source file")
    rels = sorted(files)
    root = model["path"]
    real_root = os.path.realpath(root)
    workers = max(1, workers or os.cpu_count() or 1)
    sizes = dict((rel, _source_file(model, rel)) for rel in rels)
    order = sorted(rels, key=lambda r: -sizes[r])
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda rel: _copy_resume(model, root, real_root, rel, partial, limits), order))
    return dict(zip(order, results))


def _copy_resume(model, root, real_root, rel, partial, limits=NO_LIMITS):
    try:
        _real, fd_in = _source_fd(root, real_root, rel)
    except contain.Refused as e:
        raise refuse(model, e)
    try:
        size = os.fstat(fd_in).st_size
        fd_out = contain.open_in(partial, rel, os.O_RDWR | os.O_CREAT)
        try:
            have = os.fstat(fd_out).st_size
            digest = hashlib.sha256()
            if have > size:
                os.ftruncate(fd_out, 0)
                have = 0
            # Resume: what is there is hashed (one read of the part already copied), the rest copied and hashed.
            have = hash_prefix(fd_out, digest, have)
            _copy_hashed(fd_in, fd_out, have, size, digest, limits, rel, limits.file_end())
            os.ftruncate(fd_out, size)
            return known_of(fd_out, digest)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _copy_hashed(fd_in, fd_out, offset, end, digest, limits, rel, file_end=None):
    """Copy bytes [offset, end) and hash them on the way: the source is mapped (no copy into Python), hashed and
    written from the mapping; one read of the source, one write, the hash in the same pass. hashlib releases the
    GIL, so the thread pool hashes on every core."""
    import mmap
    if offset >= end:
        return
    page = mmap.ALLOCATIONGRANULARITY
    pos = offset
    while pos < end:
        base = pos - pos % page
        length = min(COPY_SLICE, end - base)
        try:
            m = mmap.mmap(fd_in, length, access=mmap.ACCESS_READ, offset=base)
        except (ValueError, OSError):
            m = None
        if m is None:
            break
        try:
            view = memoryview(m)
            try:
                start = pos - base
                while start < length:
                    stop = min(length, start + CHUNK)
                    with view[start:stop] as piece:
                        digest.update(piece)
                        done = os.pwrite(fd_out, piece, pos)
                        while done < len(piece):
                            with piece[done:] as rest:
                                done += os.pwrite(fd_out, rest, pos + done)
                    pos += stop - start
                    start = stop
            finally:
                view.release()
        finally:
            m.close()
        limits.check(rel, file_end)
    while pos < end:
        # A source that cannot be mapped (a pipe-like file system): plain reads.
        chunk = os.pread(fd_in, min(CHUNK, end - pos), pos)
        if not chunk:
            raise StageError("%s: the source shrank while it was copied (at byte %d of %d)" % (rel, pos, end))
        digest.update(chunk)
        os.pwrite(fd_out, chunk, pos)
        pos += len(chunk)
        limits.check(rel, file_end)


def fetch_host(model, partial, files, limits=NO_LIMITS):
    """rsync of the tree on ``from_host`` into ``partial`` (only the files kept when patterns are set)."""
    ssh = " ".join(shlex.quote(a) for a in _ssh_argv(model))
    # -rt, not -a: no symlinks, devices, owners or source modes come over (a staged tree holds plain files);
    # --protect-args: the remote path is not read by the remote shell; --timeout: a stalled link fails.
    argv = ["rsync", "-rt", "--protect-args", "--partial", "--inplace", "--timeout=%d" % int(limits.stall),
            "-e", ssh, "--exclude", "/" + mf.MANIFEST_NAME, "--exclude", "/" + STATUS_NAME]
    listing = None
    if files is not None:
        check_source_names(model, sorted(files), "manifest entry")
    if files is not None and (model.get("allow_patterns") or model.get("ignore_patterns")):
        # Only the files the patterns keep: rsync reads their names on stdin.
        argv.append("--files-from=-")
        listing = "\n".join(sorted(files)) + "\n"
    argv += ["--", "%s:%s/" % (_remote(model), model["path"].rstrip("/")), partial + "/"]
    rc, out = run_watched(argv, "%s:%s" % (model["from_host"], model["path"]), limits, input_text=listing)
    if rc != 0:
        raise StageError("rsync from %s:%s failed (rc %d): %s" % (model["from_host"], model["path"], rc, out))
