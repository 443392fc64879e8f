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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import sys
import stat
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode, urljoin, urlsplit

from ansible.module_utils.urls import ConnectionError as UrlConnectionError
from ansible.module_utils.urls import open_url

from ansible_collections.llmserve.sglang.plugins.module_utils.host.proc_watch import proc_stat
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import INDEX_NAME, check_checkpoint
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
# Kernel copies go in slices of this, so the deadline and the controller's presence are checked between them.
COPY_SLICE = 256 * 1024 * 1024
TARBALL_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz")
DEFAULT_ENDPOINT = "https://huggingface.co"
REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 10
# Defaults of the deadlines (seconds): no byte at all for STALL; one file; one model.
STALL = 60
FILE_DEADLINE = 7200
MODEL_DEADLINE = 86400
# A worker nobody has watched for this long has lost its controller and stops.
ORPHAN_AFTER = 300


class StageError(Exception):
    """A transfer that cannot go on; the message names the source and what failed."""


def partial_of(dest):
    return dest.rstrip("/") + ".partial"


def old_of(dest):
    return dest.rstrip("/") + ".old"


def lock_of(dest):
    return dest.rstrip("/") + ".lock"


def is_tarball(url):
    return url.split("?", 1)[0].endswith(TARBALL_SUFFIXES)


# Everything a fetch can raise on a bad network or server; each is turned into a StageError naming the URL.
NET_ERRORS = (HTTPError, URLError, UrlConnectionError, OSError)


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


def origin(url):
    parts = urlsplit(url)
    return (parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(
        parts.scheme.lower()))


def _get(url, token=None, headers=None, timeout=STALL, data=None, token_url=None):
    """GET (or POST ``data``) ``url``; redirects are followed here, one at a time: the token goes only to the
    origin (scheme, host, port) it was given for - ``token_url``, default ``url`` - never across a redirect to
    another host or from https to http. Only http(s) redirects are followed, at most MAX_REDIRECTS."""
    given = origin(token_url or url)
    for _hop in range(MAX_REDIRECTS + 1):
        hdrs = dict(headers or {})
        if token and origin(url) == given:
            hdrs["Authorization"] = "Bearer %s" % token
        try:
            # open_url: the proxy settings and CA bundle of the host, as every other HTTP call of the collection.
            # follow_redirects none: its handler would carry the Authorization header to wherever it points.
            return open_url(url, data=data, headers=hdrs, timeout=timeout, method="POST" if data else "GET",
                            follow_redirects="none")
        except HTTPError as e:
            location = e.headers.get("Location") if e.code in REDIRECTS and e.headers else None
            if not location:
                raise
            e.close()
            nxt = urljoin(url, location)
            if urlsplit(nxt).scheme.lower() not in ("http", "https"):
                raise StageError("%s redirects to %s: only http(s) is followed" % (url, contain.printable(nxt)))
            if e.code in (301, 302, 303):
                data = None
            url = nxt
    raise StageError("%s: more than %d redirects" % (token_url or url, MAX_REDIRECTS))


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


def _refuse(model, e, done="nothing was written"):
    return StageError("%s: %s; the whole model is refused, %s" % (_source_label(model), e, done))


def _source_label(model):
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
        raise _refuse(model, e, done)
    taken = [n for n in names if n in RESERVED or n.split("/")[0] == ".cache"]
    if taken:
        raise _refuse(model, "%s %s is a name the role keeps for itself" % (what, taken[0]), done)
    return names


def _expected_from_manifest(model, source_manifest, what):
    try:
        files = mf.expected_files(source_manifest, what)
    except contain.Refused as e:
        raise _refuse(model, e)
    check_source_names(model, sorted(files), what)
    return files


def expected(model, token=None, limits=NO_LIMITS):
    """What the source says it will deliver: (files {path: {size, sha256}} or None, total bytes or None, revision).

    ``files`` is None for a tarball (its content is known only once unpacked); sha256 is None where the source
    does not give one (a Hub file stored without LFS, a directory without a manifest). Every name is checked by
    the containment rule here, before anything is written: one bad entry refuses the whole model.
    """
    kind = model["kind"]
    allow, ignore = model.get("allow_patterns"), model.get("ignore_patterns")
    stall = limits.stall
    if kind == "hub":
        endpoint = (model.get("endpoint") or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        revision = model.get("revision") or "main"
        url = "%s/api/models/%s/revision/%s?blobs=true" % (endpoint, model["repo"], quote(revision, safe=""))
        try:
            info = json.load(_get(url, token, timeout=stall))
        except HTTPError as e:
            hint = " (a gated or private repo needs a token)" if e.code in (401, 403) else ""
            raise StageError("the Hub answered %d for %s at revision %s%s" % (e.code, model["repo"], revision, hint))
        except NET_ERRORS + (ValueError, socket.timeout) as e:
            raise StageError("cannot read %s from the Hub at %s: %s" % (model["repo"], endpoint, e))
        files = {}
        siblings = info.get("siblings") if isinstance(info, dict) else None
        for sibling in siblings or []:
            lfs = sibling.get("lfs") or {}
            files[sibling.get("rfilename")] = {"size": sibling.get("size", lfs.get("size")),
                                               "sha256": lfs.get("sha256")}
        files = _checked(model, files, "Hub file")
        files = _select(files, allow, ignore, model)
        resolved = info.get("sha") or revision
        if not isinstance(resolved, str) or not re.match(r"^[0-9A-Za-z._/-]{1,200}$", resolved):
            raise StageError("the Hub answered a revision %s for %s: not a commit"
                             % (contain.printable(resolved)[:80], model["repo"]))
        if files and _total(files) is None:
            # Servers that list siblings without blobs (a mirror) answer paths-info: the sizes and LFS sha256.
            files = _paths_info(model, endpoint, resolved, sorted(files), token, stall)
        return files, _total(files), resolved
    if kind == "http" and is_tarball(model["url"]):
        try:
            response = _get(model["url"], token, timeout=stall)
            length = response.headers.get("Content-Length")
            response.close()
        except NET_ERRORS + (socket.timeout,) as e:
            raise StageError("cannot reach %s: %s" % (model["url"], e))
        return None, int(length) if length and length.isdigit() else None, model.get("revision")
    if kind == "http":
        url = model["url"].rstrip("/") + "/" + mf.MANIFEST_NAME
        try:
            source_manifest = json.load(_get(url, token, timeout=stall))
        except NET_ERRORS + (ValueError, socket.timeout) as e:
            raise StageError("cannot read the file tree's manifest %s: %s (serve a staged tree with its manifest, "
                             "or a tarball)" % (url, e))
        files = _select(_expected_from_manifest(model, source_manifest, "manifest entry"), allow, ignore, model)
        return files, _total(files), model.get("revision") or _revision_of(source_manifest)
    if kind == "dir":
        if not os.path.isdir(model["path"]):
            raise StageError("the source directory %s does not exist or is not mounted" % model["path"])
        try:
            source_manifest = mf.load(model["path"])
        except ValueError as e:
            raise _refuse(model, e)
        if source_manifest is not None:
            files = _expected_from_manifest(model, source_manifest, "manifest entry")
            for rel in files:
                _source_file(model, rel)
            revision = _revision_of(source_manifest)
        else:
            files = dict((rel, {"size": size, "sha256": None}) for rel, size in source_listing(model).items())
            revision = model.get("revision")
        files = _select(files, allow, ignore, model)
        return files, _total(files), revision
    if kind == "host":
        remote_manifest = model["path"].rstrip("/") + "/" + mf.MANIFEST_NAME
        argv = _ssh_argv(model) + ["--", _remote(model), "cat -- %s" % shlex.quote(remote_manifest)]
        rc, stdout, stderr = _run_timed(argv, max(stall, 30))
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
        files = _select(_expected_from_manifest(model, source_manifest, "manifest entry"), allow, ignore, model)
        return files, _total(files), _revision_of(source_manifest)
    raise StageError("unknown kind %r" % kind)


def _revision_of(manifest):
    revision = manifest.get("revision") if isinstance(manifest, dict) else None
    return contain.printable(revision)[:200] if revision is not None else None


def _checked(model, files, what):
    """Files a Hub answer lists ({name: {size, sha256}}), names, sizes and digests checked (a size may be missing:
    paths-info gives it)."""
    check_source_names(model, sorted(k if isinstance(k, str) else repr(k) for k in files), what)
    for rel, info in files.items():
        size, digest = info.get("size"), info.get("sha256")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise _refuse(model, "%s %s: size %s is not a byte count" % (what, rel, contain.printable(size)[:40]))
        if digest is not None and not (isinstance(digest, str) and mf.SHA256.match(digest)):
            raise _refuse(model, "%s %s: sha256 %s is not 64 hex digits" % (what, rel, contain.printable(digest)[:80]))
    return files


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
        raise _refuse(model, "; ".join(contain.printable(p) for p in problems[:10]))
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
        raise _refuse(model, e)


def _paths_info(model, endpoint, revision, paths, token, stall):
    repo = model["repo"]
    url = "%s/api/models/%s/paths-info/%s" % (endpoint, repo, quote(revision, safe=""))
    body = urlencode([("paths", p) for p in paths] + [("expand", "false")]).encode()
    try:
        entries = json.load(_get(url, token, {"Content-Type": "application/x-www-form-urlencoded"}, data=body,
                                 timeout=stall))
    except NET_ERRORS + (ValueError, socket.timeout) as e:
        raise StageError("cannot read the file sizes of %s from %s: %s" % (repo, endpoint, e))
    files = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("type", "file") == "file":
            lfs = entry.get("lfs") or {}
            files[entry.get("path")] = {"size": entry.get("size"), "sha256": lfs.get("oid") or lfs.get("sha256")}
    return _checked(model, files, "Hub file")


def space_needed(model, total):
    """Bytes the partial tree will hold at its peak: a tarball sits beside what it unpacks to until it is removed
    (and a compressed safetensors tarball unpacks to at least its own size)."""
    if model["kind"] == "http" and is_tarball(model["url"]):
        return 2 * total
    return total


def _select(files, allow, ignore, model=None):
    """The files the patterns keep; none kept of a source that has files is refused, naming the patterns."""
    kept = dict((k, files[k]) for k in selected(sorted(files), allow, ignore))
    if files and not kept and (allow or ignore):
        some = ", ".join(contain.printable(n) for n in sorted(files)[:5])
        raise StageError("%sallow_patterns %s and ignore_patterns %s keep none of the %d files of the source (%s%s); "
                         "fix the patterns" % ("%s: " % _source_label(model) if model else "", json.dumps(allow or []),
                                               json.dumps(ignore or []), len(files), some,
                                               ", ..." if len(files) > 5 else ""))
    return kept


def _total(files):
    if any(f.get("size") is None for f in files.values()):
        return None
    return sum(f["size"] for f in files.values())


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


def fetch(model, partial, files, token=None, hf_cli="hf", limits=NO_LIMITS, workers=None):
    """Fetch the model into ``partial`` (created), resuming whatever is there. Blocks until done.

    Returns {path: (size, mtime_ns, sha256)} of the files written here, hashed while they were written (HTTP,
    tarball, directory copies); the Hub CLI and rsync write their own files, which are hashed afterwards."""
    if not os.path.isdir(partial):
        os.makedirs(partial)
    kind = model["kind"]
    if kind == "hub":
        _fetch_hub(model, partial, token, hf_cli, limits)
        return {}
    if kind == "http" and is_tarball(model["url"]):
        return _fetch_tarball(model, partial, token, limits)
    if kind == "http":
        check_source_names(model, sorted(files), "manifest entry")
        known = {}
        for rel in sorted(files):
            known[rel] = _fetch_url(model["url"].rstrip("/") + "/" + quote(rel), partial, rel,
                                    files[rel].get("size"), token, limits, token_url=model["url"])
        return known
    if kind == "dir":
        check_source_names(model, sorted(files), "source file")
        return _copy_tree(model, partial, sorted(files), limits, workers)
    if kind == "host":
        _fetch_rsync(model, partial, files, limits)
        return {}
    raise StageError("unknown kind %r" % kind)


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


def _run_timed(argv, timeout):
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


def _run_watched(argv, what, limits, env=None, input_text=None):
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


def _fetch_hub(model, partial, token, hf_cli, limits):
    # Every value in --option=value form and the repo after "--": nothing from models_list can be read as an
    # option by the CLI's parser (click), whatever it starts with.
    argv = [hf_cli, "download", "--local-dir=" + partial]
    if model.get("revision"):
        argv.append("--revision=" + model["revision"])
    for pattern in model.get("allow_patterns") or []:
        argv.append("--include=" + pattern)
    for pattern in model.get("ignore_patterns") or []:
        argv.append("--exclude=" + pattern)
    argv += ["--", model["repo"]]
    env = dict(os.environ)
    # The token travels in the environment only: never in an argv (ps shows those to every user).
    env.pop("HF_TOKEN", None)
    if token:
        env["HF_TOKEN"] = token
    if model.get("endpoint"):
        env["HF_ENDPOINT"] = model["endpoint"]
    # A stalled connection fails there, as here (huggingface_hub's documented timeouts, seconds).
    env["HF_HUB_DOWNLOAD_TIMEOUT"] = str(int(limits.stall))
    env["HF_HUB_ETAG_TIMEOUT"] = str(int(limits.stall))
    # Xet-backed repos: use every core and more memory for the transfer (huggingface_hub's documented switch).
    env.setdefault("HF_XET_HIGH_PERFORMANCE", "1")
    env.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    rc, out = _run_watched(argv, "the Hub repo %s" % model["repo"], limits, env=env)
    if rc != 0:
        raise StageError("hf download %s failed (rc %d): %s" % (model["repo"], rc, out))


def _hash_prefix(fd, digest, length):
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


def _known(fd, digest):
    st = os.fstat(fd)
    return (st.st_size, st.st_mtime_ns, digest.hexdigest())


def _fetch_url(url, partial, rel, size, token, limits=NO_LIMITS, token_url=None):
    """Fetch ``url`` into ``partial``/``rel`` (contained), resuming with Range, hashing what is written. A stall
    (no byte for limits.stall s) and the file's deadline fail naming the URL and the file."""
    fd = contain.open_in(partial, rel, os.O_RDWR | os.O_CREAT)
    try:
        have = os.fstat(fd).st_size
        digest = hashlib.sha256()
        if size is not None and have > size:
            os.ftruncate(fd, 0)
            have = 0
        if size is not None and have == size:
            _hash_prefix(fd, digest, have)
            return _known(fd, digest)
        headers = {"Range": "bytes=%d-" % have} if have else {}
        end = limits.file_end()
        limits.check(rel)
        try:
            response = _get(url, token, headers, timeout=limits.stall, token_url=token_url)
        except HTTPError as e:
            if e.code == 416 and size is None:
                _hash_prefix(fd, digest, have)
                return _known(fd, digest)
            raise StageError("%s (file %s): HTTP %d" % (url, rel, e.code))
        except socket.timeout:
            raise StageError("%s (file %s): no answer for %d s (models_stall_timeout)" % (url, rel, limits.stall))
        except NET_ERRORS as e:
            raise StageError("%s (file %s): %s" % (url, rel, e))
        # A server that ignores Range sends the whole file again: start over instead of appending it.
        if have and response.status == 206:
            _hash_prefix(fd, digest, have)
        else:
            os.ftruncate(fd, 0)
            have = 0
        os.lseek(fd, have, os.SEEK_SET)
        written = have
        with response:
            while True:
                try:
                    # read1: what has arrived, so a trickle cannot hold a read past the deadline.
                    chunk = response.read1(CHUNK) if hasattr(response, "read1") else response.read(CHUNK)
                except socket.timeout:
                    raise StageError("%s (file %s): stalled, no byte for %d s at byte %d (models_stall_timeout)"
                                     % (url, rel, limits.stall, written))
                except NET_ERRORS as e:
                    raise StageError("%s (file %s): %s at byte %d" % (url, rel, e, written))
                if not chunk:
                    break
                if size is not None and written + len(chunk) > size:
                    raise StageError("%s (file %s): expected %d bytes, found at least %d (longer than its manifest "
                                     "says); refused" % (url, rel, size, written + len(chunk)))
                digest.update(chunk)
                os.write(fd, chunk)
                written += len(chunk)
                if time.time() > end:
                    raise StageError("%s (file %s): not done after %d s (%d bytes so far; models_file_timeout)"
                                     % (url, rel, limits.file_deadline, written))
                limits.check(rel)
        if size is not None and written < size:
            raise StageError("%s (file %s): expected %d bytes, found %d: the server ended it early (the next run "
                             "resumes it)" % (url, rel, size, written))
        return _known(fd, digest)
    finally:
        os.close(fd)


def _fetch_tarball(model, partial, token, limits):
    # Inside the partial tree, the one place the role deletes in. tarfile detects the compression.
    url = model["url"]
    _fetch_url(url, partial, ARCHIVE_NAME, None, token, limits)
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
    return _refuse(model, e, "nothing was unpacked (the archive stays in the partial tree)")


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
        return _known(fd, digest)
    finally:
        os.close(fd)


def _copy_tree(model, partial, rels, limits, workers=None):
    """Copy every file of a ``dir`` source, ``workers`` files at a time (default: every core), each hashed while
    it is copied - one read of the source, no second read of the copy."""
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
        raise _refuse(model, e)
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
            have = _hash_prefix(fd_out, digest, have)
            _copy_hashed(fd_in, fd_out, have, size, digest, limits, rel, limits.file_end())
            os.ftruncate(fd_out, size)
            return _known(fd_out, digest)
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


def _fetch_rsync(model, partial, files, limits):
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
    rc, out = _run_watched(argv, "%s:%s" % (model["from_host"], model["path"]), limits, input_text=listing)
    if rc != 0:
        raise StageError("rsync from %s:%s failed (rc %d): %s" % (model["from_host"], model["path"], rc, out))


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
