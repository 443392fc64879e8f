# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ``hub`` source (stdlib only, Python >= 3.8): the Hugging Face Hub's API says what a repo holds at a revision
(names, sizes, LFS sha256), and the ``hf download`` CLI fetches it, resuming from its own local-dir state."""

from __future__ import annotations

import json
import os
import re
import socket
from urllib.error import HTTPError
from urllib.parse import quote, urlencode

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources.base import (
    NET_ERRORS, NO_LIMITS, StageError, check_source_names, refuse, run_watched, select_files, total_size)
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources.url import http_get

DEFAULT_ENDPOINT = "https://huggingface.co"


def expected(model, token=None, limits=NO_LIMITS):
    """(files, total bytes, resolved commit) of the repo at its revision, the patterns applied."""
    stall = limits.stall
    endpoint = (model.get("endpoint") or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    revision = model.get("revision") or "main"
    url = "%s/api/models/%s/revision/%s?blobs=true" % (endpoint, model["repo"], quote(revision, safe=""))
    try:
        info = json.load(http_get(url, token, timeout=stall))
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
    files = select_files(files, model.get("allow_patterns"), model.get("ignore_patterns"), model)
    resolved = info.get("sha") or revision
    if not isinstance(resolved, str) or not re.match(r"^[0-9A-Za-z._/-]{1,200}$", resolved):
        raise StageError("the Hub answered a revision %s for %s: not a commit"
                         % (contain.printable(resolved)[:80], model["repo"]))
    if files and total_size(files) is None:
        # Servers that list siblings without blobs (a mirror) answer paths-info: the sizes and LFS sha256.
        files = _paths_info(model, endpoint, resolved, sorted(files), token, stall)
    return files, total_size(files), resolved


def _checked(model, files, what):
    """Files a Hub answer lists ({name: {size, sha256}}), names, sizes and digests checked (a size may be missing:
    paths-info gives it)."""
    check_source_names(model, sorted(k if isinstance(k, str) else repr(k) for k in files), what)
    for rel, info in files.items():
        size, digest = info.get("size"), info.get("sha256")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise refuse(model, "%s %s: size %s is not a byte count" % (what, rel, contain.printable(size)[:40]))
        if digest is not None and not (isinstance(digest, str) and mf.SHA256.match(digest)):
            raise refuse(model, "%s %s: sha256 %s is not 64 hex digits" % (what, rel, contain.printable(digest)[:80]))
    return files


def _paths_info(model, endpoint, revision, paths, token, stall):
    repo = model["repo"]
    url = "%s/api/models/%s/paths-info/%s" % (endpoint, repo, quote(revision, safe=""))
    body = urlencode([("paths", p) for p in paths] + [("expand", "false")]).encode()
    try:
        entries = json.load(http_get(url, token, {"Content-Type": "application/x-www-form-urlencoded"}, data=body,
                                     timeout=stall))
    except NET_ERRORS + (ValueError, socket.timeout) as e:
        raise StageError("cannot read the file sizes of %s from %s: %s" % (repo, endpoint, e))
    files = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("type", "file") == "file":
            lfs = entry.get("lfs") or {}
            files[entry.get("path")] = {"size": entry.get("size"), "sha256": lfs.get("oid") or lfs.get("sha256")}
    return _checked(model, files, "Hub file")


def fetch(model, partial, token, hf_cli, limits):
    """``hf download`` of the repo into ``partial``, under the deadlines; the CLI writes its own files (hashed
    afterwards)."""
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
    rc, out = run_watched(argv, "the Hub repo %s" % model["repo"], limits, env=env)
    if rc != 0:
        raise StageError("hf download %s failed (rc %d): %s" % (model["repo"], rc, out))
