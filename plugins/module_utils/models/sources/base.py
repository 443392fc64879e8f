# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every source kind shares (stdlib only, Python >= 3.8): the names the role keeps in a tree, StageError, the
deadlines (Limits), the containment check of a source's names, the pattern selection, running a transfer tool under
the deadlines, and hashing while writing."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from urllib.error import HTTPError, URLError

from ansible.module_utils.urls import ConnectionError as UrlConnectionError

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.plan import selected
from ansible_collections.llmserve.sglang.plugins.module_utils.host import lock as locks
from ansible_collections.llmserve.sglang.plugins.module_utils.host import spawn

STATUS_NAME = ".llmserve-stage.json"
# Written into a published tree just before it is moved aside: whatever holds it is the role's to delete.
RETIRED_NAME = ".llmserve-retired"
# A tarball is downloaded inside the partial tree (deletions happen only there), under this name.
ARCHIVE_NAME = ".llmserve-archive"
# Names the role keeps for itself at the top of a tree; a source may not name them.
RESERVED = (mf.MANIFEST_NAME, STATUS_NAME, RETIRED_NAME, ARCHIVE_NAME)
CHUNK = 8 * 1024 * 1024
# Defaults of the deadlines (seconds): no byte at all for STALL; one file; one model.
STALL = 60
FILE_DEADLINE = 7200
MODEL_DEADLINE = 86400
# A worker nobody has watched for this long has lost its controller and stops.
ORPHAN_AFTER = 300

# Everything a fetch can raise on a bad network or server; each is turned into a StageError naming the URL.
NET_ERRORS = (HTTPError, URLError, UrlConnectionError, OSError)


class StageError(Exception):
    """A transfer that cannot go on; the message names the source and what failed."""


class Limits(object):
    """Deadlines of one model's transfer and the check that its run is still there.

    ``check(url, rel)`` raises StageError when the model's deadline passed or when the lock at ``lock_path`` no
    longer names this run (taken over) or nobody watched it for ``orphan_after`` seconds (its controller died):
    the worker stops instead of writing on. The lock is read at most once a second."""

    def __init__(self, stall=STALL, file_deadline=FILE_DEADLINE, model_deadline=MODEL_DEADLINE, lock_path=None,
                 token=None, orphan_after=ORPHAN_AFTER):
        self.stall = float(stall or STALL)
        self.file_deadline = float(file_deadline or FILE_DEADLINE)
        self.model_end = time.time() + float(model_deadline or MODEL_DEADLINE)
        self.model_deadline = float(model_deadline or MODEL_DEADLINE)
        self.lock_path, self.token, self.orphan_after = lock_path, token, float(orphan_after or ORPHAN_AFTER)
        self._looked = 0.0

    def check(self, what=None, file_end=None):
        """``file_end``: when the file ``what`` must be done (``file_end()`` at its start), for the transfers that
        do not check it themselves (a directory copy, a tarball's member)."""
        now = time.time()
        if file_end is not None and now > file_end:
            raise StageError("%s: not done after %d s (models_file_timeout)" % (what, self.file_deadline))
        if now > self.model_end:
            raise StageError("the model's deadline of %d s passed%s (models_model_timeout)"
                             % (self.model_deadline, " while fetching %s" % what if what else ""))
        if self.lock_path and now - self._looked >= 1.0:
            self._looked = now
            holder = locks.read(self.lock_path)
            if holder is None or holder.get("token") != self.token:
                raise StageError("this run no longer holds %s (%s): stopped without publishing"
                                 % (self.lock_path, "taken over by %s" % describe(holder) if holder else "released"))
            watched = float(holder.get("watched") or holder.get("since") or 0)
            if now - watched > self.orphan_after:
                raise StageError("abandoned: no run has watched this transfer for %d s (its controller is gone); "
                                 "stopped without publishing, the next run resumes it" % (now - watched))

    def file_end(self):
        return min(time.time() + self.file_deadline, self.model_end)


NO_LIMITS = Limits()


def describe(holder):
    return "%s pid %s since %s" % (holder.get("host"), holder.get("pid"),
                                   time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(holder.get("since") or 0))))


def refuse(model, e, done="nothing was written"):
    return StageError("%s: %s; the whole model is refused, %s" % (source_label(model), e, done))


def source_label(model):
    kind = model["kind"]
    if kind == "hub":
        return "the Hub repo %s" % model["repo"]
    if kind == "http":
        return model["url"]
    if kind == "host":
        return "%s:%s" % (model["from_host"], model["path"])
    return model.get("path", "?")


def check_source_names(model, names, what, done="nothing was written"):
    """The containment rule on every name a source gives, plus the names the role keeps for itself."""
    try:
        names = contain.check_names(names, what)
    except contain.Refused as e:
        raise refuse(model, e, done)
    taken = [n for n in names if n in RESERVED or n.split("/")[0] == ".cache"]
    if taken:
        raise refuse(model, "%s %s is a name the role keeps for itself" % (what, taken[0]), done)
    return names


def expected_from_manifest(model, source_manifest, what):
    try:
        files = mf.expected_files(source_manifest, what)
    except contain.Refused as e:
        raise refuse(model, e)
    check_source_names(model, sorted(files), what)
    return files


def revision_of(manifest):
    revision = manifest.get("revision") if isinstance(manifest, dict) else None
    return contain.printable(revision)[:200] if revision is not None else None


def select_files(files, allow, ignore, model=None):
    """The files the patterns keep; none kept of a source that has files is refused, naming the patterns."""
    kept = dict((k, files[k]) for k in selected(sorted(files), allow, ignore))
    if files and not kept and (allow or ignore):
        some = ", ".join(contain.printable(n) for n in sorted(files)[:5])
        raise StageError("%sallow_patterns %s and ignore_patterns %s keep none of the %d files of the source (%s%s); "
                         "fix the patterns" % ("%s: " % source_label(model) if model else "", json.dumps(allow or []),
                                               json.dumps(ignore or []), len(files), some,
                                               ", ..." if len(files) > 5 else ""))
    return kept


def total_size(files):
    if any(f.get("size") is None for f in files.values()):
        return None
    return sum(f["size"] for f in files.values())


def _die_with_parent():
    """In the tool's process, before exec: SIGTERM when the worker dies (Linux PR_SET_PDEATHSIG), so a killed
    worker leaves no tool writing into the partial tree under the next run's worker. Returns the call to make in
    the child (resolved in the parent: the child of fork runs os calls only), or None."""
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, int(signal.SIGTERM), 0, 0, 0)


def run_timed(argv, timeout):
    """(rc, stdout, stderr) of argv, or (None, ...) when it ran past timeout s and was killed (host/spawn: the
    models room runs in a module_utils that ansible-core 2.21 forbids subprocess in)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        child = spawn.start(argv, stdout=out.fileno(), stderr=err.fileno())
        rc = child.wait(timeout)
        if rc is None:
            child.kill()
            child.wait()
        out.seek(0)
        err.seek(0)
        return rc, out.read(), err.read()


def run_watched(argv, what, limits, env=None, input_text=None):
    """Run a transfer tool, checking the model's deadline and the run's presence every second; it is stopped
    (SIGTERM, then SIGKILL) when either fails, and dies with the worker. Returns (rc, the output's tail)."""
    with tempfile.TemporaryFile(mode="w+") as out:
        read_end = write_end = None
        if input_text is not None:
            read_end, write_end = os.pipe()
        try:
            proc = spawn.start(argv, env=env, stdin=read_end, stdout=out.fileno(), stderr=out.fileno(),
                               setup=_die_with_parent())
        finally:
            if read_end is not None:
                os.close(read_end)
        if write_end is not None:
            try:
                with os.fdopen(write_end, "w") as stdin:
                    stdin.write(input_text)
            except OSError:  # the tool exited without reading it: its rc says why
                pass
        try:
            while proc.poll() is None:
                limits.check(what)
                time.sleep(0.5)
        except StageError:
            proc.terminate()
            if proc.wait(10) is None:
                proc.kill()
                proc.wait()
            raise
        out.seek(0)
        text = out.read()
    return proc.returncode, text.strip()[-600:]


def hash_prefix(fd, digest, length):
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    done = 0
    os.lseek(fd, 0, os.SEEK_SET)
    while done < length:
        n = os.readv(fd, [view[:min(CHUNK, length - done)]])
        if not n:
            break
        digest.update(view[:n])
        done += n
    return done


def known_of(fd, digest):
    st = os.fstat(fd)
    return (st.st_size, st.st_mtime_ns, digest.hexdigest())
