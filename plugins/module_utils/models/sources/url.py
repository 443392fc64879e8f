# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An ``http`` source that serves a staged file tree (stdlib only, Python >= 3.8): its manifest says what it holds,
each file is fetched with a Range request from the bytes already there, hashed while it is written. ``http_get`` and
``fetch_url`` are the HTTP of every source kind (the Hub's API, a tarball): the token goes only to its own origin."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from urllib.error import HTTPError
from urllib.parse import quote, urljoin, urlsplit

from ansible.module_utils.urls import open_url

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources.base import (
    CHUNK, NET_ERRORS, NO_LIMITS, STALL, StageError, check_source_names, expected_from_manifest, hash_prefix, known_of,
    revision_of, select_files, total_size)

REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 10


def origin(url):
    parts = urlsplit(url)
    return (parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(
        parts.scheme.lower()))


def http_get(url, token=None, headers=None, timeout=STALL, data=None, token_url=None):
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


def expected(model, token=None, limits=NO_LIMITS):
    """(files, total bytes, revision) from the tree's manifest, served beside its files."""
    url = model["url"].rstrip("/") + "/" + mf.MANIFEST_NAME
    try:
        source_manifest = json.load(http_get(url, token, timeout=limits.stall))
    except NET_ERRORS + (ValueError, socket.timeout) as e:
        raise StageError("cannot read the file tree's manifest %s: %s (serve a staged tree with its manifest, "
                         "or a tarball)" % (url, e))
    files = select_files(expected_from_manifest(model, source_manifest, "manifest entry"),
                         model.get("allow_patterns"), model.get("ignore_patterns"), model)
    return files, total_size(files), model.get("revision") or revision_of(source_manifest)


def fetch(model, partial, files, token=None, limits=NO_LIMITS):
    """Every file of ``files`` into ``partial``; {path: (size, mtime_ns, sha256)} hashed while written."""
    check_source_names(model, sorted(files), "manifest entry")
    known = {}
    for rel in sorted(files):
        known[rel] = fetch_url(model["url"].rstrip("/") + "/" + quote(rel), partial, rel,
                               files[rel].get("size"), token, limits, token_url=model["url"])
    return known


def fetch_url(url, partial, rel, size, token, limits=NO_LIMITS, token_url=None):
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
            hash_prefix(fd, digest, have)
            return known_of(fd, digest)
        headers = {"Range": "bytes=%d-" % have} if have else {}
        end = limits.file_end()
        limits.check(rel)
        try:
            response = http_get(url, token, headers, timeout=limits.stall, token_url=token_url)
        except HTTPError as e:
            if e.code == 416 and size is None:
                hash_prefix(fd, digest, have)
                return known_of(fd, digest)
            raise StageError("%s (file %s): HTTP %d" % (url, rel, e.code))
        except socket.timeout:
            raise StageError("%s (file %s): no answer for %d s (models_stall_timeout)" % (url, rel, limits.stall))
        except NET_ERRORS as e:
            raise StageError("%s (file %s): %s" % (url, rel, e))
        # A server that ignores Range sends the whole file again: start over instead of appending it.
        if have and response.status == 206:
            hash_prefix(fd, digest, have)
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
        return known_of(fd, digest)
    finally:
        os.close(fd)
