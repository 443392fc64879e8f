# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fetching a model into ``<dest>.partial``, resumably, and publishing it (stdlib only, Python >= 3.8).

Every transfer resumes: HTTP files continue with a Range request from the bytes already there, directory copies
from the copied length, rsync with --partial, and ``hf download`` from its own local-dir state. A fetch runs in a
detached worker process, so the module can report progress (bytes on disk under the partial tree) and come back;
an interrupted worker is simply started again.

This file holds what does not depend on the source: which source kind answers (``expected``, ``fetch``), the
worker and its status file, dest ownership, and the crash-safe publish. Each kind is a file of ``sources/`` (hub,
url, tarball, copy); what they share (Limits, StageError, the reserved names, running a tool) is sources/base.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import stat
import time

from ansible_collections.llmserve.sglang.plugins.module_utils.host.proc_watch import proc_stat
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import INDEX_NAME, check_checkpoint
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import copy, hub, tarball, url
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources.base import (
    NO_LIMITS, RETIRED_NAME, STATUS_NAME, StageError)
from ansible_collections.llmserve.sglang.plugins.module_utils.host import lock as locks


def partial_of(dest):
    return dest.rstrip("/") + ".partial"


def old_of(dest):
    return dest.rstrip("/") + ".old"


def lock_of(dest):
    return dest.rstrip("/") + ".lock"


def expected(model, token=None, limits=NO_LIMITS):
    """What the source says it will deliver: (files {path: {size, sha256}} or None, total bytes or None, revision).

    ``files`` is None for a tarball (its content is known only once unpacked); sha256 is None where the source
    does not give one (a Hub file stored without LFS, a directory without a manifest). Every name is checked by
    the containment rule here, before anything is written: one bad entry refuses the whole model.
    """
    kind = model["kind"]
    if kind == "hub":
        return hub.expected(model, token, limits)
    if kind == "http" and tarball.is_tarball(model["url"]):
        return tarball.expected(model, token, limits)
    if kind == "http":
        return url.expected(model, token, limits)
    if kind == "dir":
        return copy.expected_dir(model)
    if kind == "host":
        return copy.expected_host(model, limits)
    raise StageError("unknown kind %r" % kind)


def fetch(model, partial, files, token=None, hf_cli="hf", limits=NO_LIMITS, workers=None):
    """Fetch the model into ``partial`` (created), resuming whatever is there. Blocks until done.

    Returns {path: (size, mtime_ns, sha256)} of the files written here, hashed while they were written (HTTP,
    tarball, directory copies); the Hub CLI and rsync write their own files, which are hashed afterwards."""
    if not os.path.isdir(partial):
        os.makedirs(partial)
    kind = model["kind"]
    if kind == "hub":
        hub.fetch(model, partial, token, hf_cli, limits)
        return {}
    if kind == "http" and tarball.is_tarball(model["url"]):
        return tarball.fetch(model, partial, token, limits)
    if kind == "http":
        return url.fetch(model, partial, files, token, limits)
    if kind == "dir":
        return copy.fetch_dir(model, partial, files, limits, workers)
    if kind == "host":
        copy.fetch_host(model, partial, files, limits)
        return {}
    raise StageError("unknown kind %r" % kind)


def space_needed(model, total):
    """Bytes the partial tree will hold at its peak: a tarball sits beside what it unpacks to until it is removed
    (and a compressed safetensors tarball unpacks to at least its own size)."""
    if model["kind"] == "http" and tarball.is_tarball(model["url"]):
        return 2 * total
    return total


def bytes_under(root):
    """Bytes on disk under ``root`` (what a transfer has written so far, its temporary files included)."""
    total = 0
    for dirpath, _dirs, filenames in os.walk(root):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def read_status(partial):
    try:
        fd = contain.open_in(partial, STATUS_NAME, os.O_RDONLY)
    except (OSError, contain.Refused):
        return None
    try:
        with os.fdopen(fd) as f:
            return json.load(f)
    except (IOError, OSError, ValueError):
        return None


def write_status(partial, status):
    tmp = STATUS_NAME + ".llmserve-tmp"
    fd = contain.open_in(partial, tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w") as f:
        json.dump(status, f)
    os.rename(os.path.join(partial, tmp), os.path.join(partial, STATUS_NAME))


def owns_partial(partial):
    """Whether ``partial`` is the role's: it holds the worker's status file or a verified manifest."""
    if os.path.islink(partial) or not os.path.isdir(partial):
        return False
    return any(st is not None and stat.S_ISREG(st.st_mode)
               for st in (contain.lstat_in(partial, STATUS_NAME), contain.lstat_in(partial, mf.MANIFEST_NAME)))


def start_worker(job, partial, lock_path=None, token=None, extra=None):
    """Run ``job(report)`` in a detached process (double fork, new session); ``report(state, **extra)`` and the
    outcome (done, or failed with the error) land in the status file beside the partial tree. The worker names
    itself in the lock (``lock_path``, this run's ``token``) and gives it up when it stops on its own."""
    if not os.path.isdir(partial):
        os.makedirs(partial, 0o755)
    started = time.time()
    base = dict(extra or {})
    write_status(partial, dict(base, state="starting", started=started, pid=None))
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        os.setsid()
        worker = os.fork()
        if worker:
            # The lock names the worker before the module goes on: its pid is what a later run checks.
            if lock_path:
                seen = proc_stat(worker)
                locks.update(lock_path, token, {"pid": worker, "starttime": seen[3] if seen else None})
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        me = os.getpid()

        def report(state, **extra):
            status = dict(base, state=state, started=started, pid=me)
            status.update(extra)
            write_status(partial, status)

        report("fetching")
        try:
            job(report)
            report("done", ended=time.time())
        except Exception as e:  # the worker's only report is its status file
            report("failed", error=str(e), ended=time.time())
            if lock_path and "abandoned" in str(e):
                locks.release(lock_path, token)
    finally:
        os._exit(0)


def check_index(partial):
    """The index's shard names are names from the source too: each must be contained (checkpoint.py opens them)."""
    st = contain.lstat_in(partial, INDEX_NAME)
    if st is None:
        return
    try:
        with os.fdopen(contain.open_in(partial, INDEX_NAME, os.O_RDONLY), "rb") as f:
            index = json.loads(f.read().decode("utf-8"))
        weight_map = index.get("weight_map")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return  # not JSON: check_checkpoint names it
    if isinstance(weight_map, dict):
        try:
            contain.check_names(sorted(set(v if isinstance(v, str) else repr(v) for v in weight_map.values())),
                                "%s shard" % INDEX_NAME)
        except contain.Refused as e:
            raise StageError("%s; the model is refused" % e)


def fetch_and_verify(model, partial, files, revision, token=None, hf_cli="hf", require_tokenizer=True,
                     workers=None, limits=NO_LIMITS):
    """The worker's job: fetch (hashing while it writes), hash what a tool wrote, compare with what the source
    promised, check the structure, write the manifest. A file whose hash or size is wrong is removed (inside
    ``partial``, by its checked name), so the next run fetches it again."""
    def job(report):
        known = fetch(model, partial, files, token, hf_cli, limits, workers)
        limits.check()
        report("verifying")
        source = dict((k, model[k]) for k in ("kind", "repo", "url", "path", "from_host", "endpoint") if k in model)
        try:
            manifest = mf.build(partial, source, revision, workers, known=known)
        except contain.Refused as e:
            raise StageError("%s; the model is refused" % e)
        mismatches = mf.compare(manifest, files or {})
        for rel in [mismatch[0] for mismatch in mismatches]:
            contain.remove_in(partial, rel)
        if mismatches:
            raise StageError("the fetched copy does not match its source (the files named are fetched again on the "
                             "next run): %s" % "; ".join(mismatch[1] for mismatch in mismatches))
        check_index(partial)
        problems = check_checkpoint(partial, require_tokenizer=require_tokenizer)[0]
        if problems:
            raise StageError("the fetched checkpoint is not whole: %s" % "; ".join(problems))
        limits.check()
        mf.write(partial, manifest)
    return job


def ownership(dest, adopt=False):
    """(ok, what) about the tree at ``dest``: absent, ours (the role's manifest or retired marker at its top),
    empty, adopted (``adopt``), else refused with the message naming it and the setting that adopts it."""
    if not os.path.lexists(dest):
        return True, "absent"
    if os.path.islink(dest):
        return False, ("dest %s is a symlink (to %s); the role does not replace links - give the real directory"
                       % (dest, os.readlink(dest)))
    if not os.path.isdir(dest):
        return False, "dest %s exists and is not a directory; move it away or choose another dest" % dest
    if os.path.ismount(dest):
        return False, ("dest %s is a mount point: publishing renames the tree, which cannot replace a mount point; "
                       "stage to a directory below it (%s/<name>)" % (dest, dest.rstrip("/")))
    for marker in (mf.MANIFEST_NAME, RETIRED_NAME):
        st = contain.lstat_in(dest, marker)
        if st is not None and stat.S_ISREG(st.st_mode):
            return True, "ours"
    if not os.listdir(dest):
        return True, "empty"
    if adopt:
        return True, "adopted"
    return False, ("dest %s exists and was not staged by roles/models (no %s at its top): the role would replace it "
                   "and delete its files. Move it away, choose another dest, or set adopt: true on this model in "
                   "models_list to let the role replace it" % (dest, mf.MANIFEST_NAME))


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def retired(path):
    st = contain.lstat_in(path, RETIRED_NAME) if os.path.isdir(path) and not os.path.islink(path) else None
    return st is not None and stat.S_ISREG(st.st_mode)


def remove_retired(path):
    """Delete a tree the role retired (its RETIRED_NAME marker at the top), the marker last: an interrupted
    removal is finished by the next run, and a tree without the marker is never deleted."""
    if not retired(path):
        raise StageError("%s exists and was not left by roles/models (no %s in it); move it away"
                         % (path, RETIRED_NAME))
    for name in os.listdir(path):
        if name == RETIRED_NAME:
            continue
        child = os.path.join(path, name)
        if os.path.isdir(child) and not os.path.islink(child):
            shutil.rmtree(child)
        else:
            os.unlink(child)
    os.unlink(os.path.join(path, RETIRED_NAME))
    os.rmdir(path)


def _mark_retired(dest):
    fd = contain.open_in(dest, RETIRED_NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        os.write(fd, b"retired by roles/models; deleted once its successor is published\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def verified(partial):
    """A partial tree ready to publish: the worker wrote its manifest (the last thing it does) and is not running."""
    if not os.path.isdir(partial) or os.path.islink(partial):
        return False
    st = contain.lstat_in(partial, mf.MANIFEST_NAME)
    status = read_status(partial)
    return st is not None and (status is None or status.get("state") == "done")


def recover(dest):
    """Finish or undo a publish that a crash interrupted; returns what it did (None when nothing was needed).

    publish() marks the old tree retired, renames it to ``<dest>.old``, renames the partial tree to ``dest``
    and deletes ``.old``. After a crash: no ``dest`` but ``.old`` - the verified partial tree is published (roll
    forward), else ``.old`` is put back (roll back); ``dest`` and ``.old`` - ``.old`` is deleted; a retired marker
    left in ``dest`` is removed. ``.old`` without the marker is not the role's and is never touched."""
    old, partial = old_of(dest), partial_of(dest)
    done = None
    if os.path.lexists(old):
        if not retired(old):
            raise StageError("%s exists and was not left by roles/models (no %s in it); move it away"
                             % (old, RETIRED_NAME))
        if not os.path.lexists(dest):
            if verified(partial):
                os.rename(partial, dest)
                done = "finished an interrupted publish of %s" % dest
            else:
                os.rename(old, dest)
                os.unlink(os.path.join(dest, RETIRED_NAME))
                _fsync_dir(os.path.dirname(dest))
                return "put back %s after an interrupted publish" % dest
        remove_retired(old)
        done = done or "removed %s left by an interrupted publish" % old
    if os.path.isdir(dest) and not os.path.islink(dest) and contain.lstat_in(dest, RETIRED_NAME) is not None:
        os.unlink(os.path.join(dest, RETIRED_NAME))
        done = done or "kept %s, whose publish was interrupted before it moved" % dest
    _fsync_dir(os.path.dirname(dest))
    return done


def publish(partial, dest):
    """Put the verified tree at ``dest``: a previous tree (the role's, or adopted) is marked retired, moved aside,
    the new one renamed in, then the old one removed. Each step is durable (fsync of the parent) and recover()
    finishes or undoes it after a crash at any point."""
    if not verified(partial):
        raise StageError("%s is not a verified tree; nothing published" % partial)
    old = old_of(dest)
    if os.path.lexists(old):
        remove_retired(old)
    if os.path.lexists(dest):
        _mark_retired(dest)
        os.rename(dest, old)
        _fsync_dir(os.path.dirname(dest))
    os.rename(partial, dest)
    _fsync_dir(os.path.dirname(dest))
    if os.path.lexists(old):
        remove_retired(old)


def hf_cli_path(explicit=None):
    """The ``hf`` CLI to run: the one given, else next to this Python, else on PATH."""
    if explicit:
        return explicit
    beside = os.path.join(os.path.dirname(sys.executable), "hf")
    if os.path.exists(beside):
        return beside
    found = shutil.which("hf")
    if not found:
        raise StageError("the hf CLI (huggingface_hub >= 1.0) is not installed on this host: install huggingface_hub "
                         "in a venv and set models_hf_cli to its bin/hf")
    return found
