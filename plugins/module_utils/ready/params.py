# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's settings: their defaults (declared here once: the module's argument spec reads
them) and the check that turns bad ones into one clear line before anything is probed."""

from __future__ import annotations

import copy

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2 is not supported on targets
    raise

from ansible_collections.llmserve.sglang.plugins.module_utils.host.values import control_name
from ansible_collections.llmserve.sglang.plugins.module_utils.host import user_regex
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import CATEGORIES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import STAGES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import DEFAULT_URL
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import version as sglang_version

# GET /ready (sglang/gates.py): 200 once the warm-up passed and the server takes requests; before it, /health.
READY_ENDPOINT_SINCE = gates.GATES["ready"]

DEFAULTS = {  # type: dict[str, object]
    "url": DEFAULT_URL,
    "health_path": None,  # chosen by the SGLang version: see readiness_path()
    "timeout": 1800.0,
    "stall_timeout": 600.0,
    "interval": 1.0,
    "tail_lines": 40,
    "node_rank": 0,
    "validate_certs": True,
    "verify_generation": True,
    "chat_probe": False,
    "stage_timeouts": {},
    "extra_patterns": [],
    "host": {},
}


class BadInput(ValueError):
    pass


def with_defaults(params):
    """The settings with every unset (or None) one at its default."""
    p = dict((k, v) for k, v in (params or {}).items() if v is not None)
    for k, v in DEFAULTS.items():
        p.setdefault(k, copy.deepcopy(v))
    return p


def validate(p):
    """Check the settings; raise BadInput with one clear line.  Returns the URL's parts."""
    parts = urlsplit(p.get("url") or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput("url %r is not an http(s)://host[:port] URL" % p.get("url"))
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise BadInput("url %r has an invalid port" % p.get("url"))
    if not (p.get("health_path") or "/").startswith("/"):
        raise BadInput("health_path must start with '/'")
    for k in ("api_key", "health_path"):
        if control_name(p.get(k) or ""):
            # An HTTP request line or header cannot carry it (http.client refuses it); the key is never echoed.
            raise BadInput("%s holds a control character (newline, tab, NUL, ...): no HTTP request can carry it; "
                           "give it without (a key read from a file keeps its trailing newline: strip it)" % k)
    if p.get("sglang_version") is not None and not sglang_version.is_version(p["sglang_version"]):
        raise BadInput("sglang_version %r is not a version: give it as X.Y.Z (e.g. 0.5.23), or leave it unset to "
                       "ask the server" % (p["sglang_version"],))
    for k in ("timeout", "stall_timeout", "interval"):
        v = p.get(k)
        if v is None or not isinstance(v, (int, float)) or v <= 0:
            raise BadInput("%s must be a positive number of seconds, got %r" % (k, v))
    for stage, secs in (p.get("stage_timeouts") or {}).items():
        if stage not in STAGES:
            raise BadInput("stage_timeouts: unknown stage %r (known: %s)" % (stage, ", ".join(STAGES[1:])))
        if not isinstance(secs, (int, float)) or secs <= 0:
            raise BadInput("stage_timeouts[%s] must be a positive number of seconds" % stage)
    if (p.get("node_rank") or 0) < 0:
        raise BadInput("node_rank must be >= 0")
    watched = [k for k in ("unit", "pid", "pid_file") if p.get(k)]
    if len(watched) > 1:
        raise BadInput("give only one of unit, pid, pid_file (got %s)" % ", ".join(watched))
    extra = p.get("extra_patterns") or []
    for i, e in enumerate(extra):
        if not isinstance(e, dict) or not e.get("regex"):
            raise BadInput("extra_patterns[%d] needs a regex" % i)
    # invalid, too long, or nesting quantifiers ((a+)+ would hang the wait on one line): refused before it starts
    refused = user_regex.check([e["regex"] for e in extra], "extra_patterns")
    if refused:
        raise BadInput("; ".join(refused))
    for i, e in enumerate(extra):
        if e.get("category") and e["category"] not in CATEGORIES:
            raise BadInput("extra_patterns[%d]: category must be one of %s" % (i, ", ".join(CATEGORIES)))
    _check_host(p.get("host"))
    if p.get("node_rank", 0) >= 1 and not (p.get("log_path") or watched):
        raise BadInput("node_rank >= 1 serves an always-200 stub: give log_path and/or unit/pid to decide from")
    return {"host": parts.hostname, "port": port, "scheme": parts.scheme,
            "base": p["url"].rstrip("/")}


HOST_INTS = ("tp_size", "pp_size", "nnodes", "gpu_count")
HOST_LISTS = ("compute_caps", "gpu_names")
HOST_BOOLS = ("pcie_only", "all_nvlink")


def _check_host(host):
    """The host facts remedies are fitted to (ready/host_fit.py): each key known and of its type."""
    if host is None:
        return
    if not isinstance(host, dict):
        raise BadInput("host must be a dict (tp_size, nnodes, gpu_count, compute_caps, gpu_names, pcie_only, "
                       "all_nvlink), got %r" % (host,))
    known = HOST_INTS + HOST_LISTS + HOST_BOOLS
    for k, v in host.items():
        if k not in known:
            raise BadInput("host: unknown key %r (known: %s)" % (k, ", ".join(sorted(set(known)))))
        if v is None:
            continue
        if k in HOST_INTS and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise BadInput("host.%s must be a whole number >= 1, got %r" % (k, v))
        if k in HOST_LISTS and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise BadInput("host.%s must be a list of strings, got %r" % (k, v))
        if k in HOST_BOOLS and not isinstance(v, bool):
            raise BadInput("host.%s must be true or false, got %r" % (k, v))


def readiness_path(p):
    """The endpoint that says ready: health_path when given; else /ready from SGLang 0.5.20 on and /health
    before it; None when the version is unknown (the probe asks /ready and falls back to /health on a 404)."""
    if p.get("health_path"):
        return p["health_path"]
    if p.get("sglang_version") is None:
        return None
    return gates.health_path([p["sglang_version"]])
