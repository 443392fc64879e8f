# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which models to stage, from where, and whether they fit: decided before anything is fetched (stdlib only)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

KINDS = ("hub", "dir", "http", "host")
ROLES = ("target", "draft", "tokenizer")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
# What each kind needs besides name and dest.
REQUIRED = {"hub": ("repo",), "dir": ("path",), "http": ("url",), "host": ("from_host", "path")}
KNOWN_KEYS = {"name", "kind", "dest", "role", "repo", "revision", "allow_patterns", "ignore_patterns", "path",
              "url", "from_host", "token_file", "endpoint", "ssh_user", "ssh_port", "ssh_key"}


class PlanError(Exception):
    """Settings refused before anything is touched; the message names each problem and its fix."""


def validate(models, require_pinned=False):
    """The model list, checked and normalised; PlanError naming every problem at once."""
    problems = []
    seen_names, seen_dests = set(), set()
    if not isinstance(models, list):
        raise PlanError("models must be a list of models, got %s" % type(models).__name__)
    normalised = []
    for i, model in enumerate(models):
        if not isinstance(model, dict):
            problems.append("models[%d]: a model is a mapping (name, kind, dest, ...), got %r" % (i, model))
            continue
        label = "models[%d] (%s)" % (i, model.get("name", "no name"))
        if "token" in model:
            # Never echo the value: the message must be safe to print.
            problems.append("%s: a token given inline in the model list would be printed and logged; put it in a "
                            "file on the host (token_file) or in the vaulted variable models_hub_token" % label)
        unknown = sorted(set(model) - KNOWN_KEYS - {"token"})
        if unknown:
            problems.append("%s: unknown keys %s (known: %s)" % (label, unknown, ", ".join(sorted(KNOWN_KEYS))))
        kind = model.get("kind")
        if kind not in KINDS:
            problems.append("%s: kind %r is not one of %s" % (label, kind, ", ".join(KINDS)))
            continue
        for key in ("name", "dest") + REQUIRED[kind]:
            if not model.get(key):
                problems.append("%s: kind %s needs %s" % (label, kind, key))
        role = model.get("role", "target")
        if role not in ROLES:
            problems.append("%s: role %r is not one of %s" % (label, role, ", ".join(ROLES)))
        for key in ("dest", "path", "token_file", "ssh_key"):
            value = model.get(key)
            if value and not os.path.isabs(str(value)):
                problems.append("%s: %s %r is a relative path; give an absolute one" % (label, key, value))
        dest = model.get("dest")
        if dest:
            dest = os.path.normpath(str(dest))
            if dest == "/":
                problems.append("%s: dest / would replace the root directory" % label)
            if dest in seen_dests:
                problems.append("%s: dest %s is used by another model" % (label, dest))
            seen_dests.add(dest)
        if model.get("name") in seen_names:
            problems.append("%s: name used twice" % label)
        seen_names.add(model.get("name"))
        url = model.get("url")
        if url and not re.match(r"^https?://", str(url)):
            problems.append("%s: url %r is not http:// or https://" % (label, url))
        revision = model.get("revision")
        # Only the Hub moves a name under you; an artifact URL or a path is what it is.
        if require_pinned and kind == "hub" and not (revision and COMMIT.match(str(revision))):
            problems.append("%s: revision %r is not a commit sha (40 hex digits) and models_require_pinned is set; "
                            "pin the commit the Hub shows for the repo" % (label, revision))
        for key in ("allow_patterns", "ignore_patterns"):
            if model.get(key) is not None and not isinstance(model.get(key), list):
                problems.append("%s: %s must be a list of glob patterns" % (label, key))
        entry = dict((k, v) for k, v in model.items() if k != "token")
        entry["role"] = role
        if dest:
            entry["dest"] = dest
        normalised.append(entry)
    roles = [m.get("role", "target") for m in normalised]
    if roles.count("target") > 1:
        problems.append("models: %d models have role target; one deploy serves one target" % roles.count("target"))
    if problems:
        raise PlanError("the model list is refused, nothing was fetched:\n  - " + "\n  - ".join(problems))
    return normalised


def selected(files, allow_patterns=None, ignore_patterns=None):
    """The files that allow/ignore patterns keep (huggingface_hub's rule: allowed by any, ignored by none)."""
    keep = []
    for rel in files:
        if allow_patterns and not any(fnmatch.fnmatch(rel, p) for p in allow_patterns):
            continue
        if ignore_patterns and any(fnmatch.fnmatch(rel, p) for p in ignore_patterns):
            continue
        keep.append(rel)
    return keep


def space_refusal(path, needed, free, present=0):
    """None when ``needed`` bytes fit (``present`` of them already fetched), else the refusal naming them."""
    missing = max(0, needed - present)
    if missing <= free:
        return None
    return ("not enough disk for the model at %s: needs %s more (%s in all, %s already there), %s free; free space "
            "or choose another dest" % (path, human(missing), human(needed), human(present), human(free)))


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0


def fanout(model, host, seed, seed_address, fanout_enabled):
    """The model as this host fetches it: from its source on the seed host (or every host without fan-out),
    else copied from the seed's staged tree over SSH (rsync)."""
    if not fanout_enabled or host == seed or model["kind"] == "host":
        return model
    copy = dict(model)
    copy.update({"kind": "host", "from_host": seed_address, "path": model["dest"]})
    return copy
