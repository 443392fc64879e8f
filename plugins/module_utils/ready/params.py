# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's settings: their defaults (declared here once: the module's argument spec reads
them) and the check that turns bad ones into one clear line before anything is probed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2 is not supported on targets
    raise

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import CATEGORIES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import STAGES

DEFAULTS = {
    "url": "http://127.0.0.1:30000",
    "health_path": "/health",
    "timeout": 1800.0,
    "stall_timeout": 600.0,
    "interval": 1.0,
    "tail_lines": 40,
    "node_rank": 0,
    "validate_certs": True,
    "verify_generation": True,
    "stage_timeouts": {},
    "extra_patterns": [],
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
    for i, e in enumerate(p.get("extra_patterns") or []):
        if not isinstance(e, dict) or not e.get("regex"):
            raise BadInput("extra_patterns[%d] needs a regex" % i)
        try:
            re.compile(e["regex"])
        except re.error as err:
            raise BadInput("extra_patterns[%d]: bad regex %r: %s" % (i, e["regex"], err))
        if e.get("category") and e["category"] not in CATEGORIES:
            raise BadInput("extra_patterns[%d]: category must be one of %s" % (i, ", ".join(CATEGORIES)))
    if p.get("node_rank", 0) >= 1 and not (p.get("log_path") or watched):
        raise BadInput("node_rank >= 1 serves an always-200 stub: give log_path and/or unit/pid to decide from")
    return {"host": parts.hostname, "port": port, "scheme": parts.scheme,
            "base": p["url"].rstrip("/")}
