# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The manifest written beside staged weights: every file, its size, sha256 and mtime, the source and revision.

A fresh copy is verified in full (sha256 of every file, files hashed in parallel threads: hashlib releases the GIL
on large updates, so threads use every core). A later start re-checks size and mtime only, and hashes just the
files whose mtime moved; ``full`` hashes everything again. Stdlib only, Python >= 3.8.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

MANIFEST_NAME = ".llmserve-manifest.json"
MANIFEST_VERSION = 1
# Never part of the weights: our own files and huggingface_hub's local-dir bookkeeping.
SKIP_NAMES = (MANIFEST_NAME, ".llmserve-stage.json")
SKIP_DIRS = (".cache",)
READ_BUFFER = 8 * 1024 * 1024


def list_files(root):
    """Relative paths of every weight-tree file under ``root`` (sorted, our own bookkeeping left out)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if name in SKIP_NAMES or name.endswith(".incomplete"):
                continue
            found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)


def sha256_file(path, buffer_size=READ_BUFFER):
    digest = hashlib.sha256()
    buf = bytearray(buffer_size)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            digest.update(view[:n])
    return digest.hexdigest()


def hash_files(root, rel_paths, workers=None):
    """{relative path: sha256} for ``rel_paths`` under ``root``, ``workers`` files at a time (default: every core)."""
    workers = max(1, workers or os.cpu_count() or 1)
    paths = list(rel_paths)
    # Largest first, so one big file does not start last and run alone.
    paths.sort(key=lambda p: -os.path.getsize(os.path.join(root, p)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        digests = pool.map(lambda p: sha256_file(os.path.join(root, p)), paths)
        return dict(zip(paths, digests))


def build(root, source, revision=None, workers=None, expected=None):
    """A manifest of the tree at ``root``, every file hashed. ``expected`` ({path: {size, sha256}}) is what the
    source said the files are; a difference raises ValueError naming the files."""
    files = list_files(root)
    digests = hash_files(root, files, workers)
    entries = []
    for rel in files:
        st = os.stat(os.path.join(root, rel))
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


def expected_files(manifest):
    """{path: {size, sha256}} of a manifest, the form build() and compare() take."""
    return {e["path"]: {"size": e["size"], "sha256": e.get("sha256")} for e in manifest["files"]}


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
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            manifest = json.load(f)
        if manifest.get("version") != MANIFEST_VERSION or not isinstance(manifest.get("files"), list):
            raise ValueError("version %r unknown" % manifest.get("version"))
        return manifest
    except (IOError, OSError, ValueError) as e:
        raise ValueError("%s: unreadable manifest (%s)" % (path, e))


def verify(root, manifest, full=False, workers=None):
    """Check the tree at ``root`` against its manifest.

    Returns (problems, hashed): problems name each file (missing, size, sha256); hashed counts the files read.
    Without ``full``, only files whose size matches but whose mtime moved are hashed.
    """
    problems, to_hash = [], []
    for entry in manifest["files"]:
        path = os.path.join(root, entry["path"])
        try:
            st = os.stat(path)
        except OSError:
            problems.append("%s: missing (expected %d bytes)" % (entry["path"], entry["size"]))
            continue
        if st.st_size != entry["size"]:
            problems.append("%s: expected %d bytes, found %d" % (entry["path"], entry["size"], st.st_size))
        elif full or st.st_mtime_ns != entry.get("mtime_ns"):
            to_hash.append(entry)
    if to_hash:
        try:
            digests = hash_files(root, [e["path"] for e in to_hash], workers)
        except (IOError, OSError) as e:
            return problems + ["unreadable: %s" % e], len(to_hash)
        for entry in to_hash:
            if digests[entry["path"]] != entry["sha256"]:
                problems.append("%s: sha256 %s, the manifest says %s: corrupt, stage it again"
                                % (entry["path"], digests[entry["path"]][:12], entry["sha256"][:12]))
    return problems, len(to_hash)


def refresh_mtimes(root, manifest):
    """The manifest with every file's current mtime - after a full verify passed, so the cheap check holds again."""
    for entry in manifest["files"]:
        entry["mtime_ns"] = os.stat(os.path.join(root, entry["path"])).st_mtime_ns
    return manifest
