# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The manifest written beside staged weights: every file, its size, sha256 and mtime, the source and revision.

A fresh copy is verified in full (sha256 of every file, files hashed in parallel threads: hashlib releases the GIL
on large updates, so threads use every core). A later start re-checks size and mtime only, and hashes just the
files whose mtime moved; ``full`` hashes everything again. Stdlib only, Python >= 3.8.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain

MANIFEST_NAME = ".llmserve-manifest.json"
MANIFEST_VERSION = 1
# Never part of the weights: our own files and huggingface_hub's local-dir bookkeeping.
SKIP_NAMES = (MANIFEST_NAME, ".llmserve-stage.json", ".llmserve-retired", ".llmserve-archive")
SKIP_DIRS = (".cache",)
# Our bookkeeping files inside a tree (and temporaries of our own writes), never part of the weights.
OWN_SUFFIXES = (".incomplete", ".llmserve-tmp")
READ_BUFFER = 8 * 1024 * 1024
SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
# Modes every staged file and directory gets, whatever the source had: readable by all, writable by the owner only.
FILE_MODE = 0o644
DIR_MODE = 0o755


def list_files(root):
    """Relative paths of every weight-tree file under ``root`` (sorted, our own bookkeeping left out). A tree the
    role owns holds plain files and directories only: anything else (a symlink, a device, a fifo) is refused,
    named - it is not followed."""
    found, odd = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        keep = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS and dirpath == root:
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                odd.append(os.path.relpath(os.path.join(dirpath, d), root))
            else:
                keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            if (name in SKIP_NAMES and dirpath == root) or name.endswith(OWN_SUFFIXES):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if not stat.S_ISREG(os.lstat(os.path.join(dirpath, name)).st_mode):
                odd.append(rel)
            else:
                found.append(rel)
    if odd:
        named = ", ".join(contain.printable(o) for o in sorted(odd)[:10])
        raise contain.Refused("%s holds what is not a plain file or directory (a symlink, a device, a fifo): %s; "
                              "refused, nothing is followed" % (contain.printable(root), named))
    return contain.check_names(found, "file")


def sha256_fd(fd, buffer_size=READ_BUFFER):
    digest = hashlib.sha256()
    buf = bytearray(buffer_size)
    view = memoryview(buf)
    with os.fdopen(fd, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            digest.update(view[:n])
    return digest.hexdigest()


def sha256_file(path, buffer_size=READ_BUFFER):
    return sha256_fd(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), buffer_size)


def sha256_in(root, rel, buffer_size=READ_BUFFER):
    """sha256 of ``root``/``rel`` read through host/untrusted (no link followed, a FIFO or device refused, named)."""
    with untrusted.Tree(root) as tree:
        fd = tree.open(rel, untrusted.WEIGHTS)[0]
    return sha256_fd(fd, buffer_size)


def hash_files(root, rel_paths, workers=None):
    """{relative path: sha256} for ``rel_paths`` under ``root``, ``workers`` files at a time (default: every core)."""
    workers = max(1, workers or os.cpu_count() or 1)
    paths = list(rel_paths)
    # Largest first, so one big file does not start last and run alone.
    sizes = dict((p, getattr(contain.lstat_in(root, p), "st_size", 0)) for p in paths)
    paths.sort(key=lambda p: -sizes[p])
    with ThreadPoolExecutor(max_workers=workers) as pool:
        digests = pool.map(lambda p: sha256_in(root, p), paths)
        return dict(zip(paths, digests))


def build(root, source, revision=None, workers=None, expected=None, known=None):
    """A manifest of the tree at ``root``, every file hashed. ``expected`` ({path: {size, sha256}}) is what the
    source said the files are; a difference raises ValueError naming the files. ``known`` ({path: (size, mtime_ns,
    sha256)}) are digests taken while the files were written: a file still at that size and mtime is not read
    again. Every file and directory gets the role's modes (FILE_MODE, DIR_MODE)."""
    files = list_files(root)
    known = known or {}
    stats = dict((rel, contain.lstat_in(root, rel)) for rel in files)
    fresh = dict((rel, known[rel][2]) for rel in files
                 if rel in known and known[rel][:2] == (stats[rel].st_size, stats[rel].st_mtime_ns))
    digests = hash_files(root, [rel for rel in files if rel not in fresh], workers)
    digests.update(fresh)
    set_modes(root)
    entries = []
    for rel in files:
        st = stats[rel]
        entries.append({"path": rel, "size": st.st_size, "sha256": digests[rel], "mtime_ns": st.st_mtime_ns})
    manifest = {"version": MANIFEST_VERSION, "source": source, "revision": revision,
                "staged_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": entries}
    if expected is not None:
        mismatches = compare(manifest, expected)
        if mismatches:
            raise ValueError("; ".join(mismatch[1] for mismatch in mismatches))
    return manifest


def compare(manifest, expected):
    """[(path, problem)] where the files of ``manifest`` differ from ``expected`` ({path: {size, sha256}})."""
    have = {e["path"]: e for e in manifest["files"]}
    mismatches = []
    for rel in sorted(expected):
        want = expected[rel]
        got = have.get(rel)
        if got is None:
            mismatches.append((rel, "%s: missing (expected %s bytes)" % (rel, want.get("size", "?"))))
        elif want.get("size") is not None and got["size"] != want["size"]:
            mismatches.append((rel, "%s: expected %d bytes, found %d" % (rel, want["size"], got["size"])))
        elif want.get("sha256") and got["sha256"] != want["sha256"]:
            mismatches.append((rel, "%s: sha256 %s, expected %s: corrupt"
                               % (rel, got["sha256"][:12], want["sha256"][:12])))
    return mismatches


def set_modes(root):
    """FILE_MODE on every file and DIR_MODE on every directory under ``root`` (and itself): a source's 0666 or
    setuid bits never reach the staged weights. Symlinks are left alone (list_files refuses them)."""
    os.chmod(root, DIR_MODE)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, DIR_MODE)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, FILE_MODE)


def expected_files(manifest, what="manifest entry"):
    """{path: {size, sha256}} of a manifest from anywhere (a source, a tree on disk), the form build() and compare()
    take. Every entry must be a contained path (contain.check_names), a size a non-negative integer and a sha256
    64 hex digits or absent; else contain.Refused naming the entries - the whole manifest is refused."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise contain.Refused("the manifest has no list of files")
    problems, files = [], {}
    for entry in manifest["files"]:
        if not isinstance(entry, dict):
            problems.append("%s %s is not a mapping" % (what, contain.printable(entry)[:80]))
            continue
        rel, size, digest = entry.get("path"), entry.get("size"), entry.get("sha256")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            problems.append("%s %s: size %s is not a byte count"
                            % (what, contain.printable(rel)[:200], contain.printable(size)[:40]))
        if digest is not None and not (isinstance(digest, str) and SHA256.match(digest)):
            problems.append("%s %s: sha256 %s is not 64 hex digits"
                            % (what, contain.printable(rel)[:200], contain.printable(digest)[:80]))
        if isinstance(rel, str) and rel in files:
            problems.append("%s %s: listed twice" % (what, contain.printable(rel)))
        files[rel if isinstance(rel, str) else repr(rel)] = {"size": size, "sha256": digest}
    try:
        contain.check_names([e.get("path") for e in manifest["files"] if isinstance(e, dict)], what)
    except contain.Refused as e:
        problems.insert(0, str(e))
    if problems:
        raise contain.Refused("; ".join(problems[:10]))
    return files


def total_size(manifest):
    return sum(e["size"] for e in manifest["files"])


def write(root, manifest):
    """Write the manifest beside the weights, atomically."""
    path = os.path.join(root, MANIFEST_NAME)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    os.rename(tmp, path)
    return path


def load(root):
    """The manifest beside the weights at ``root``, or None when there is none; ValueError when it is unreadable."""
    path = os.path.join(root, MANIFEST_NAME)
    try:
        with untrusted.Tree(root) as tree:
            if tree.lstat(MANIFEST_NAME) is None:
                return None
            manifest = tree.json(MANIFEST_NAME, untrusted.MANIFEST)
        version = untrusted.field(manifest, "version", int, MANIFEST_NAME, required=True, fix="stage the model again")
        if version != MANIFEST_VERSION:
            raise ValueError("version %r unknown" % version)
        untrusted.field(manifest, "files", list, MANIFEST_NAME, required=True, fix="stage the model again")
        # A manifest on disk is checked as one from a source: its entries are opened below root.
        expected_files(manifest)
        return manifest
    except (IOError, OSError, ValueError) as e:
        raise ValueError("%s: unreadable manifest (%s)" % (contain.printable(path), e))


def verify(root, manifest, full=False, workers=None):
    """Check the tree at ``root`` against its manifest.

    Returns (problems, hashed): problems name each file (missing, size, sha256); hashed counts the files read.
    Without ``full``, only files whose size matches but whose mtime moved are hashed.
    """
    problems, to_hash = [], []
    for entry in manifest["files"]:
        try:
            st = contain.lstat_in(root, entry["path"])
        except contain.Refused as e:
            problems.append("%s: %s" % (entry["path"], e))
            continue
        if st is None:
            problems.append("%s: missing (expected %d bytes)" % (entry["path"], entry["size"]))
            continue
        if not stat.S_ISREG(st.st_mode):
            problems.append("%s: not a plain file (a symlink or a device); stage it again" % entry["path"])
        elif st.st_size != entry["size"]:
            problems.append("%s: expected %d bytes, found %d" % (entry["path"], entry["size"], st.st_size))
        elif full or st.st_mtime_ns != entry.get("mtime_ns"):
            to_hash.append(entry)
    if to_hash:
        try:
            digests = hash_files(root, [e["path"] for e in to_hash], workers)
        except (IOError, OSError, contain.Refused, untrusted.Refused) as e:
            return problems + ["unreadable: %s" % e], len(to_hash)
        for entry in to_hash:
            if digests[entry["path"]] != entry["sha256"]:
                problems.append("%s: sha256 %s, the manifest says %s: corrupt, stage it again"
                                % (entry["path"], digests[entry["path"]][:12], entry["sha256"][:12]))
    return problems, len(to_hash)


def refresh_mtimes(root, manifest):
    """The manifest with every file's current mtime - after a full verify passed, so the cheap check holds again."""
    for entry in manifest["files"]:
        entry["mtime_ns"] = contain.lstat_in(root, entry["path"]).st_mtime_ns
    return manifest
