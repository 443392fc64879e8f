# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which models to stage, from where, and whether they fit: decided before anything is fetched (stdlib only)."""

from __future__ import annotations

import fnmatch
import ipaddress
import os
import re
from urllib.parse import urlsplit

from ansible_collections.llmserve.sglang.plugins.module_utils.host import values
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain

KINDS = ("hub", "dir", "http", "host")
ROLES = ("target", "draft", "tokenizer")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
# What each kind needs besides name and dest.
REQUIRED = {"hub": ("repo",), "dir": ("path",), "http": ("url",), "host": ("from_host", "path")}
KNOWN_KEYS = {"name", "kind", "dest", "role", "repo", "revision", "allow_patterns", "ignore_patterns", "path",
              "url", "from_host", "token_file", "endpoint", "ssh_user", "ssh_port", "ssh_key", "adopt"}
# The Hub's grammar (huggingface_hub utils/_validators.py validate_repo_id): [namespace/]name of word characters,
# "-" and ".", at most 96 characters, no "--" or "..", not starting or ending with "-" or ".".
REPO_ID = re.compile(r"^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?/)?[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
# A git revision the Hub takes: a commit, a branch or tag, refs/pr/N - git's ref rules, ASCII only.
REVISION = re.compile(r"^(?![-/.])(?!.*\.\.)(?!.*//)(?!.*@\{)[A-Za-z0-9_.+/@-]{1,200}(?<![/.])$")
HOST = re.compile(r"^(?!-)[A-Za-z0-9_.:-]{1,253}$")
USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")


def _strings(value, where):
    """[(where, string)] of every string in ``value`` (keys too), nested lists and mappings walked."""
    found = []
    if isinstance(value, str):
        found.append((where, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            found.append((where, k if isinstance(k, str) else ""))
            found.extend(_strings(v, "%s.%s" % (where, contain.printable(k))))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found.extend(_strings(v, "%s[%d]" % (where, i)))
    return found


def url_problem(url, what, allow_plain=True):
    """None when ``url`` is an http(s) URL the role may fetch from, else why not. Link-local addresses (a cloud's
    metadata service) and URLs with credentials in them are refused."""
    problem = values.url_problem(url)  # the one URL rule: http(s), a host, a port, one line, no credentials
    if problem == values.CREDENTIALS:
        return "%s %s %s; use token_file or models_hub_token" % (
            what, contain.printable(values.without_credentials(url)), problem)
    if problem:
        return "%s %s %s" % (what, contain.printable(url), problem)
    parts = urlsplit(str(url))
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        address = None
    if address is not None and (address.is_link_local or address.is_multicast or address.is_unspecified):
        return "%s %s points at a link-local, multicast or unspecified address" % (what, contain.printable(url))
    if not allow_plain and parts.scheme != "https":
        return "%s %s is plain http" % (what, contain.printable(url))
    return None


def _paths_of(model):
    """Every path the role writes for a model: its tree and the names beside it."""
    dest = model["dest"]
    return [dest, dest + ".partial", dest + ".old", dest + ".lock", dest + ".lock.guard"]


def _overlap(a, b):
    return any(contain.under(x, y) or contain.under(y, x) for x in _paths_of(a) for y in _paths_of(b))


def inline_tokens(models):
    """The tokens written inline in ``models`` (a module's model list, as given): validate() refuses them, and the
    module adds them to its no_log values first so that no value comes back in the invocation or the refusal."""
    return [str(model["token"]) for model in models or [] if isinstance(model, dict) and model.get("token")]


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
        label = "models[%d] (%s)" % (i, contain.printable(model.get("name", "no name")))
        strings = _strings(dict((k, v) for k, v in model.items() if k != "token"), label)
        bad = sorted(set(where for where, text in strings if contain.CONTROL.search(text)))
        if bad:
            # The value is not echoed raw: a newline in it could forge a line of Ansible's output.
            problems.append("%s: control characters (newline, escape, ...) in %s; refused" % (label, ", ".join(bad)))
            continue
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
        for key in ("path", "token_file", "ssh_key"):
            value = model.get(key)
            if value and not os.path.isabs(str(value)):
                problems.append("%s: %s %r is a relative path; give an absolute one" % (label, key, value))
        dest = model.get("dest")
        if dest:
            dest_problems = contain.check_dest(str(dest))
            problems.extend("%s: %s" % (label, p) for p in dest_problems)
            dest = os.path.normpath(str(dest))
            if dest in seen_dests:
                problems.append("%s: dest %s is used by another model" % (label, dest))
            seen_dests.add(dest)
            source = model.get("path") if kind == "dir" else None
            if source and os.path.isabs(str(source)):
                src = os.path.normpath(str(source))
                for d in set([dest, os.path.realpath(dest)]):
                    for s_ in set([src, os.path.realpath(src)]):
                        if contain.under(d, s_) or contain.under(s_, d):
                            problems.append("%s: dest %s and the source path %s are the same tree or one holds "
                                            "the other; give a dest outside the source" % (label, dest, src))
                            break
                    else:
                        continue
                    break
        if model.get("name") in seen_names:
            problems.append("%s: name used twice" % label)
        seen_names.add(model.get("name"))
        if model.get("adopt") is not None and not isinstance(model.get("adopt"), bool):
            problems.append("%s: adopt must be true or false" % label)
        url = model.get("url")
        if url:
            why = url_problem(url, "url")
            if why:
                problems.append("%s: %s" % (label, why))
        if model.get("endpoint"):
            why = url_problem(model["endpoint"], "endpoint")
            if why:
                problems.append("%s: %s (a Hub mirror is an http(s) URL)" % (label, why))
        repo = model.get("repo")
        if kind == "hub" and repo and not (isinstance(repo, str) and REPO_ID.match(repo) and len(repo) <= 96 and
                                           "--" not in repo and ".." not in repo and not repo.endswith(".git")):
            problems.append("%s: repo %s is not a Hub repo id (namespace/name: letters, digits, _, - and ., at most "
                            "96 characters)" % (label, contain.printable(repo)))
        revision = model.get("revision")
        if revision is not None and kind == "hub" and not (isinstance(revision, str) and REVISION.match(revision)):
            problems.append("%s: revision %s is not a Hub revision (a commit sha, a branch or tag name, refs/pr/N)"
                            % (label, contain.printable(revision)))
        if kind == "host":
            if model.get("from_host") and not HOST.match(str(model["from_host"])):
                problems.append("%s: from_host %s is not a host name or address" % (
                    label, contain.printable(model["from_host"])))
            if model.get("ssh_user") and not USER.match(str(model["ssh_user"])):
                problems.append("%s: ssh_user %s is not a user name" % (label, contain.printable(model["ssh_user"])))
            port = model.get("ssh_port")
            if port not in (None, "") and not (str(port).isdigit() and 0 < int(port) < 65536):
                problems.append("%s: ssh_port %s is not a port" % (label, contain.printable(port)))
        for key in ("allow_patterns", "ignore_patterns"):
            for pattern in model.get(key) or [] if isinstance(model.get(key), list) else []:
                if not isinstance(pattern, str) or not pattern:
                    problems.append("%s: %s holds %s, not a glob pattern" % (label, key, contain.printable(pattern)))
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
    for i, a in enumerate(normalised):
        for b in normalised[i + 1:]:
            if a.get("dest") and b.get("dest") and a["dest"] != b["dest"] and _overlap(a, b):
                problems.append("models %s and %s: dests %s and %s overlap (one is inside the other, or beside it "
                                "under a name the role uses); give each model a tree of its own"
                                % (contain.printable(a.get("name")), contain.printable(b.get("name")), a["dest"],
                                   b["dest"]))
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
