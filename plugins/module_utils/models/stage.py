# -*- coding: utf-8 -*-
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

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode

from ansible.module_utils.urls import ConnectionError as UrlConnectionError
from ansible.module_utils.urls import open_url

from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import check_checkpoint
from ansible_collections.llmserve.sglang.plugins.module_utils.models.plan import selected

STATUS_NAME = ".llmserve-stage.json"
CHUNK = 8 * 1024 * 1024
TARBALL_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz")
DEFAULT_ENDPOINT = "https://huggingface.co"


class StageError(Exception):
    """A transfer that cannot go on; the message names the source and what failed."""


def partial_of(dest):
    return dest.rstrip("/") + ".partial"


def is_tarball(url):
    return url.split("?", 1)[0].endswith(TARBALL_SUFFIXES)


# Everything a fetch can raise on a bad network or server; each is turned into a StageError naming the URL.
NET_ERRORS = (HTTPError, URLError, UrlConnectionError, OSError)


def _get(url, token=None, headers=None, timeout=60, data=None):
    headers = dict(headers or {})
    if token:
        headers["Authorization"] = "Bearer %s" % token
    # open_url: the proxy settings and CA bundle of the host, as every other HTTP call of the collection.
    return open_url(url, data=data, headers=headers, timeout=timeout, method="POST" if data else "GET")


def _ssh_argv(model):
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new"]
    if model.get("ssh_port"):
        argv += ["-p", str(model["ssh_port"])]
    if model.get("ssh_key"):
        argv += ["-i", model["ssh_key"]]
    return argv


def _remote(model):
    user = model.get("ssh_user")
    return ("%s@%s" % (user, model["from_host"])) if user else model["from_host"]


def expected(model, token=None):
    """What the source says it will deliver: (files {path: {size, sha256}} or None, total bytes or None, revision).

    ``files`` is None for a tarball (its content is known only once unpacked); sha256 is None where the source
    does not give one (a Hub file stored without LFS, a directory without a manifest).
    """
    kind = model["kind"]
    allow, ignore = model.get("allow_patterns"), model.get("ignore_patterns")
    if kind == "hub":
        endpoint = (model.get("endpoint") or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        revision = model.get("revision") or "main"
        url = "%s/api/models/%s/revision/%s?blobs=true" % (endpoint, model["repo"], quote(revision, safe=""))
        try:
            info = json.load(_get(url, token))
        except HTTPError as e:
            hint = " (a gated or private repo needs a token)" if e.code in (401, 403) else ""
            raise StageError("the Hub answered %d for %s at revision %s%s" % (e.code, model["repo"], revision, hint))
        except NET_ERRORS + (ValueError,) as e:
            raise StageError("cannot read %s from the Hub at %s: %s" % (model["repo"], endpoint, e))
        files = {}
        for sibling in info.get("siblings") or []:
            lfs = sibling.get("lfs") or {}
            files[sibling["rfilename"]] = {"size": sibling.get("size", lfs.get("size")), "sha256": lfs.get("sha256")}
        files = _select(files, allow, ignore)
        resolved = info.get("sha") or revision
        if files and _total(files) is None:
            # Servers that list siblings without blobs (a mirror) answer paths-info: the sizes and LFS sha256.
            files = _paths_info(endpoint, model["repo"], resolved, sorted(files), token)
        return files, _total(files), resolved
    if kind == "http" and is_tarball(model["url"]):
        try:
            response = _get(model["url"], token, timeout=60)
            length = response.headers.get("Content-Length")
            response.close()
        except NET_ERRORS as e:
            raise StageError("cannot reach %s: %s" % (model["url"], e))
        return None, int(length) if length else None, model.get("revision")
    if kind == "http":
        url = model["url"].rstrip("/") + "/" + mf.MANIFEST_NAME
        try:
            source_manifest = json.load(_get(url, token))
        except NET_ERRORS + (ValueError,) as e:
            raise StageError("cannot read the file tree's manifest %s: %s (serve a staged tree with its manifest, "
                             "or a tarball)" % (url, e))
        files = _select(mf.expected_files(source_manifest), allow, ignore)
        return files, _total(files), model.get("revision") or source_manifest.get("revision")
    if kind == "dir":
        source_manifest = mf.load(model["path"]) if os.path.isdir(model["path"]) else None
        if not os.path.isdir(model["path"]):
            raise StageError("the source directory %s does not exist or is not mounted" % model["path"])
        if source_manifest is not None:
            files = mf.expected_files(source_manifest)
            revision = source_manifest.get("revision")
        else:
            files = dict((rel, {"size": os.path.getsize(os.path.join(model["path"], rel)), "sha256": None})
                         for rel in mf.list_files(model["path"]))
            revision = model.get("revision")
        files = _select(files, allow, ignore)
        return files, _total(files), revision
    if kind == "host":
        argv = _ssh_argv(model) + [_remote(model), "cat", os.path.join(model["path"], mf.MANIFEST_NAME)]
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              check=False)
        if proc.returncode != 0:
            raise StageError("cannot read the staged manifest on %s:%s over SSH: %s (stage it there first)"
                             % (model["from_host"], model["path"], proc.stderr.strip()[-300:]))
        try:
            source_manifest = json.loads(proc.stdout)
        except ValueError as e:
            raise StageError("the manifest on %s:%s is not JSON: %s" % (model["from_host"], model["path"], e))
        files = _select(mf.expected_files(source_manifest), allow, ignore)
        return files, _total(files), source_manifest.get("revision")
    raise StageError("unknown kind %r" % kind)


def _paths_info(endpoint, repo, revision, paths, token):
    url = "%s/api/models/%s/paths-info/%s" % (endpoint, repo, quote(revision, safe=""))
    body = urlencode([("paths", p) for p in paths] + [("expand", "false")]).encode()
    try:
        entries = json.load(_get(url, token, {"Content-Type": "application/x-www-form-urlencoded"}, data=body))
    except NET_ERRORS + (ValueError,) as e:
        raise StageError("cannot read the file sizes of %s from %s: %s" % (repo, endpoint, e))
    files = {}
    for entry in entries:
        if entry.get("type", "file") == "file":
            lfs = entry.get("lfs") or {}
            files[entry["path"]] = {"size": entry.get("size"), "sha256": lfs.get("oid") or lfs.get("sha256")}
    return files


def space_needed(model, total):
    """Bytes the partial tree will hold at its peak: a tarball sits beside what it unpacks to until it is removed
    (and a compressed safetensors tarball unpacks to at least its own size)."""
    if model["kind"] == "http" and is_tarball(model["url"]):
        return 2 * total
    return total


def _select(files, allow, ignore):
    return dict((k, files[k]) for k in selected(sorted(files), allow, ignore))


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


def fetch(model, partial, files, token=None, hf_cli="hf"):
    """Fetch the model into ``partial`` (created), resuming whatever is there. Blocks until done."""
    if not os.path.isdir(partial):
        os.makedirs(partial)
    kind = model["kind"]
    if kind == "hub":
        _fetch_hub(model, partial, token, hf_cli)
    elif kind == "http" and is_tarball(model["url"]):
        _fetch_tarball(model, partial, token)
    elif kind == "http":
        for rel in sorted(files):
            _fetch_url(model["url"].rstrip("/") + "/" + quote(rel), os.path.join(partial, rel),
                       files[rel].get("size"), token)
    elif kind == "dir":
        for rel in sorted(files):
            _copy_resume(os.path.join(model["path"], rel), os.path.join(partial, rel))
    elif kind == "host":
        _fetch_rsync(model, partial, files)
    else:
        raise StageError("unknown kind %r" % kind)


def _fetch_hub(model, partial, token, hf_cli):
    argv = [hf_cli, "download", model["repo"], "--local-dir", partial]
    if model.get("revision"):
        argv += ["--revision", model["revision"]]
    for pattern in model.get("allow_patterns") or []:
        argv += ["--include", pattern]
    for pattern in model.get("ignore_patterns") or []:
        argv += ["--exclude", pattern]
    env = dict(os.environ)
    # The token travels in the environment only: never in an argv (ps shows those to every user).
    if token:
        env["HF_TOKEN"] = token
    if model.get("endpoint"):
        env["HF_ENDPOINT"] = model["endpoint"]
    # Xet-backed repos: use every core and more memory for the transfer (huggingface_hub's documented switch).
    env.setdefault("HF_XET_HIGH_PERFORMANCE", "1")
    env.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False)
    if proc.returncode != 0:
        raise StageError("hf download %s failed (rc %d): %s"
                         % (model["repo"], proc.returncode, proc.stdout.strip()[-600:]))


def _fetch_url(url, path, size, token):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    have = os.path.getsize(path) if os.path.exists(path) else 0
    if size is not None and have == size:
        return
    if size is not None and have > size:
        os.remove(path)
        have = 0
    headers = {"Range": "bytes=%d-" % have} if have else {}
    try:
        response = _get(url, token, headers)
    except HTTPError as e:
        if e.code == 416 and size is None:
            return
        raise StageError("%s: HTTP %d" % (url, e.code))
    except NET_ERRORS as e:
        raise StageError("%s: %s" % (url, e))
    # A server that ignores Range sends the whole file again: start over instead of appending it.
    mode = "ab" if have and response.status == 206 else "wb"
    with response, open(path, mode) as out:
        shutil.copyfileobj(response, out, CHUNK)


def _fetch_tarball(model, partial, token):
    # Beside the tree, not in it: the archive is not part of the weights. tarfile detects the compression.
    archive = partial + ".download"
    _fetch_url(model["url"], archive, None, token)
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for member in members:
                name = os.path.normpath(member.name)
                if name.startswith(("/", "..")) or not (member.isfile() or member.isdir()):
                    raise StageError("%s: member %s leaves the tree or is not a plain file; refused"
                                     % (model["url"], member.name))
            # A tarball holding one top directory is that directory's tree.
            tops = set(os.path.normpath(m.name).split("/")[0] for m in members)
            strip = len(tops) == 1 and any(m.isdir() and os.path.normpath(m.name) in tops for m in members)
            for member in members:
                if member.isfile():
                    rel = os.path.normpath(member.name)
                    if strip:
                        rel = rel.split("/", 1)[1] if "/" in rel else None
                    if rel:
                        target = os.path.join(partial, rel)
                        if not os.path.isdir(os.path.dirname(target)):
                            os.makedirs(os.path.dirname(target))
                        with tar.extractfile(member) as src, open(target, "wb") as out:
                            shutil.copyfileobj(src, out, CHUNK)
    except (tarfile.TarError, EOFError, OSError) as e:
        # A truncated archive is fetched again from its start next time.
        os.remove(archive)
        raise StageError("%s: not a readable tarball (%s)" % (model["url"], e))
    os.remove(archive)


def _copy_resume(src, dst):
    parent = os.path.dirname(dst)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    size = os.path.getsize(src)
    have = os.path.getsize(dst) if os.path.exists(dst) else 0
    if have > size:
        have = 0
    if have < size:
        # Not O_APPEND: the kernel copies refuse an append-mode target.
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | (0 if have else os.O_TRUNC), 0o644)
        try:
            with open(src, "rb") as fin:
                _copy_range(fin.fileno(), fd_out, have, size)
        finally:
            os.close(fd_out)
    shutil.copystat(src, dst)


def _copy_range(fd_in, fd_out, offset, end):
    """Copy bytes [offset, end) in the kernel: copy_file_range (a reflink or server-side copy where the file system
    has one), else sendfile; a plain read/write loop is three times slower than cp here (benchmarks/models)."""
    copy = getattr(os, "copy_file_range", None)
    while offset < end:
        count = min(end - offset, 1 << 30)
        try:
            if copy is not None:
                n = copy(fd_in, fd_out, count, offset, offset)
            else:
                os.lseek(fd_out, offset, os.SEEK_SET)
                n = os.sendfile(fd_out, fd_in, offset, count)
        except OSError:
            if copy is None:
                raise
            copy = None  # across file systems on older kernels: sendfile
            continue
        if n == 0:
            raise StageError("the source shrank while it was copied (at byte %d of %d)" % (offset, end))
        offset += n


def _fetch_rsync(model, partial, files):
    ssh = " ".join(_ssh_argv(model))
    argv = ["rsync", "-a", "--partial", "--inplace", "-e", ssh, "--exclude", mf.MANIFEST_NAME,
            "--exclude", STATUS_NAME, "%s:%s/" % (_remote(model), model["path"].rstrip("/")), partial + "/"]
    listing = None
    if files is not None and (model.get("allow_patterns") or model.get("ignore_patterns")):
        # Only the files the patterns keep: rsync reads their names on stdin.
        argv[1:1] = ["--files-from=-"]
        listing = "\n".join(sorted(files))
    proc = subprocess.run(argv, check=False, input=listing, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        raise StageError("rsync from %s:%s failed (rc %d): %s"
                         % (model["from_host"], model["path"], proc.returncode, proc.stdout.strip()[-600:]))


def read_status(partial):
    try:
        with open(os.path.join(partial, STATUS_NAME)) as f:
            return json.load(f)
    except (IOError, OSError, ValueError):
        return None


def write_status(partial, status):
    path = os.path.join(partial, STATUS_NAME)
    with open(path + ".tmp", "w") as f:
        json.dump(status, f)
    os.rename(path + ".tmp", path)


def start_worker(job, partial):
    """Run ``job(report)`` in a detached process (double fork, new session); ``report(state, **extra)`` and the
    outcome (done, or failed with the error) land in the status file beside the partial tree."""
    if not os.path.isdir(partial):
        os.makedirs(partial)
    started = time.time()
    write_status(partial, {"state": "starting", "started": started, "pid": None})
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

        def report(state, **extra):
            status = {"state": state, "started": started, "pid": os.getpid()}
            status.update(extra)
            write_status(partial, status)

        report("fetching")
        try:
            job(report)
            report("done", ended=time.time())
        except Exception as e:  # the worker's only report is its status file
            report("failed", error=str(e), ended=time.time())
    finally:
        os._exit(0)


def fetch_and_verify(model, partial, files, revision, token=None, hf_cli="hf", require_tokenizer=True,
                     workers=None):
    """The worker's job: fetch, hash every file against what the source promised, check the structure, write the
    manifest. A file whose hash or size is wrong is removed, so the next run fetches it again."""
    def job(report):
        fetch(model, partial, files, token, hf_cli)
        report("verifying")
        source = dict((k, model[k]) for k in ("kind", "repo", "url", "path", "from_host", "endpoint") if k in model)
        manifest = mf.build(partial, source, revision, workers)
        mismatches = mf.compare(manifest, files or {})
        for rel in [mismatch[0] for mismatch in mismatches]:
            if os.path.exists(os.path.join(partial, rel)):
                os.remove(os.path.join(partial, rel))
        if mismatches:
            raise StageError("the fetched copy does not match its source (the files named are fetched again on the "
                             "next run): %s" % "; ".join(mismatch[1] for mismatch in mismatches))
        problems = check_checkpoint(partial, require_tokenizer=require_tokenizer)[0]
        if problems:
            raise StageError("the fetched checkpoint is not whole: %s" % "; ".join(problems))
        mf.write(partial, manifest)
    return job


def publish(partial, dest):
    """Put the verified tree at ``dest``: a previous tree is moved aside first, and removed once the new one is in."""
    old = None
    if os.path.lexists(dest):
        old = dest.rstrip("/") + ".old"
        if os.path.lexists(old):
            shutil.rmtree(old)
        os.rename(dest, old)
    os.rename(partial, dest)
    if old:
        shutil.rmtree(old)


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
