# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to the collection (controller side; may change at any time): roles/router's decision, before anything
is touched - the worker URLs (one per replica, rank 0, from the workers' instance views), how many must be healthy,
and every setting the gateway would take badly, each refused with its own fix. Every value that reaches the unit
file, the environment file or the gateway's argv passes the one rule for its kind (module_utils/host/values.py), as
roles/server's plan does. It also decides what the gateway probes on each worker (:func:`health_endpoint`); the
router_plan action runs both and publishes the gateway's view (_router_view.build) as the fact ``router_view``. The
settings, their defaults and choices are _router_settings' (one declaration). The _replica_urls filter shares
:func:`replica_urls`.
"""

from __future__ import annotations

import json
import re
from collections import ChainMap

from ansible_collections.llmserve.sglang.plugins.module_utils.host import values
from ansible_collections.llmserve.sglang.plugins.module_utils.server import health
from ansible_collections.llmserve.sglang.plugins.module_utils.router.gateway import PACKAGES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_settings as declared
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._replica import worker_urls

POLICIES = declared.CHOICES["policy"]
# Where credentials in a worker URL may go: nowhere (refused), or the 0600 environment file the unit reads.
CREDENTIALS = declared.CHOICES["worker_credentials"]
# The gateway's flags with a check of their own below (addresses, ports, the policy); the probe timeout has its floor
# and the word rule too (float() reads "3\n" as 3: the value would reach argv with its newline).
OWN_CHECK = ("host", "port", "policy", "prometheus_host", "prometheus_port")
# Settings given to the gateway as one argv word each - every other declared flag, so a new one is checked without
# a word here - or written into a unit line (router_<name>).
WORDS = tuple(n for n in declared.FLAGS if n not in OWN_CHECK) + ("stop_timeout", "version", "venv", "config_dir",
                                                                  "python")
UNIT_TABLES = ("unit_hardening", "unit_limits", "unit_extra")
# The role's settings the action templates for the plan and the view (router_<name>): every one main takes.
SETTINGS = declared.SETTINGS
# A flag name of router_args; the flags the role sets itself (a second --worker-urls would add workers).
FLAG_RE = re.compile(r"^(--)?[A-Za-z0-9][A-Za-z0-9_-]*\Z")
ROLE_FLAGS = ("worker-urls", "api-key")
# Settings whose text a path or a plain word must be (the unit's paths, pip's name==version).
PLAIN = ("version", "venv", "config_dir", "python")


class Refusals(object):
    """'router_X=VALUE problem: fix' lines; a secret's value is hidden, a URL's password masked."""

    def __init__(self):
        self.items = []

    def add(self, name, value, problem, fix, secret=False):
        shown = "(hidden)" if secret else json.dumps(_masked(value), sort_keys=True, default=str)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        self.items.append("router_%s=%s %s: %s" % (name, shown, problem, fix))


def _masked(value):
    if isinstance(value, str):
        return values.without_credentials(value)
    if isinstance(value, (list, tuple)):
        return [_masked(v) for v in value]
    if isinstance(value, dict):
        return dict((str(k), _masked(v)) for k, v in value.items())
    return value


def host_view(hv, default_port):
    """The instance view of a host (``default_port`` where it sets no server_port)."""
    return view.of_host(hv, defaults={"port": default_port})


def replica_urls(hosts, hostvars, groups, scheme="http", default_port=view.DEFAULTS["port"]):
    """One worker URL per replica among ``hosts`` (rank 0 of each server_tp_group): port and group from each host's
    instance view."""
    workers = []
    for name in hosts or []:
        hv = hostvars[name] if name in hostvars else {}
        v = host_view(hv, default_port)
        workers.append({"name": name, "tp_group": v.get("tp_group") or "",
                        "address": hv.get("router_worker_address") or hv.get("ansible_host") or name,
                        "port": v.get("port") or default_port})
    return worker_urls(workers, dict(groups or {}), scheme, default_port)


def health_endpoint(r, members, hostvars):
    """The endpoint the gateway probes on each worker: ``router_health_check_endpoint`` unless ``auto``; then /ready
    where the SGLang of every host of ``router_worker_group`` (``members``) has it (0.5.20+), else /health - and
    /health with ``router_worker_urls``, whose versions nobody knows."""
    setting = r.get("health_check_endpoint", declared.DEFAULTS["health_check_endpoint"])
    if setting != "auto":
        return setting
    return workers_health_endpoint([] if r.get("worker_urls") else list(members or []), hostvars or {})


def workers_health_endpoint(hosts, hostvars, record="llmserve_sglang"):
    """/ready where every host's SGLang has it, else /health (module_utils/server/health.py): each host's version is
    its instance view's (published by roles/server, else from its settings and roles/sglang's record ``record``, the
    install record's name where a host names none). The _server_health_endpoint filter asks it too."""
    versions = [view.of_host(ChainMap(hostvars[h] if h in hostvars else {}, {"server_sglang_record": record}))["version"]
                for h in hosts or []]
    return health.endpoint(versions)


def _int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def plan(r, name, group_urls, own_port=None):
    """``{urls, expected, refusals, urls_in_env}``.

    ``r``: the role's settings (:data:`SETTINGS`, ``router_`` dropped; one not given is not checked); ``name``: this
    host; ``group_urls``: the worker URLs of ``router_worker_group`` (:func:`replica_urls`); ``own_port``: the port
    this host's own SGLang serves on when it is a host of that group, else None. ``urls`` are shown with a URL's
    password masked: with ``router_worker_credentials: env_file`` the URLs reach the gateway only through the 0600
    environment file (``urls_in_env``), never the unit file or the argv.
    """
    bad = Refusals()
    credentials = r.get("worker_credentials", "refuse")
    if credentials not in CREDENTIALS:
        bad.add("worker_credentials", credentials, "is not one of %s" % ", ".join(CREDENTIALS),
                "refuse (the default), or env_file to move URLs with user:password@ into the 0600 environment file")
    explicit = r.get("worker_urls") or []
    if not isinstance(explicit, (list, tuple)):
        bad.add("worker_urls", explicit, "is not a list", "give a YAML list of URLs ([http://gpu1:30000])")
        explicit = []
    explicit = list(explicit)
    urls = explicit or list(group_urls or [])
    where = "worker_urls" if explicit else "worker_group"
    for i, url in enumerate(urls):
        problem = values.url_problem(url, credentials=credentials == "env_file" and bool(explicit))
        if problem == values.CREDENTIALS:
            bad.add("%s[%d]" % (where, i), url, problem, "take them out of the URL, or set router_worker_credentials: "
                    "env_file to keep them in the 0600 environment file (never in the unit file or the argv)")
        elif problem:
            bad.add("%s[%d]" % (where, i), url, problem, "give http(s)://HOST:PORT on one line" if explicit else
                    "fix the host's router_worker_address, ansible_host or server_port")
    if not urls:
        bad.add("worker_urls", [], "is empty and group '%s' has no hosts" % r.get("worker_group"),
                "list the workers' URLs, or set router_worker_group to the group of the SGLang hosts")
    wanted = r.get("expected_workers")
    expected = len(urls) if wanted is None else _int(wanted)
    if expected is None or expected < 1 or expected > len(urls):
        bad.add("expected_workers", wanted, "is not between 1 and %d (the worker URLs)" % len(urls),
                "give a count in that range, or null for every worker")
    if r.get("policy") not in POLICIES:
        bad.add("policy", r.get("policy"), "is not one of %s" % ", ".join(POLICIES), "pick one of them")
    floor = gates.LIMITS["min_probe_timeout"]
    timeout = _float(r.get("health_check_timeout_secs"))
    if timeout is None or timeout < floor:
        bad.add("health_check_timeout_secs", r.get("health_check_timeout_secs"),
                "is under %g s (SGLang takes up to its own 1 s to answer)" % floor, "give %g or more" % floor)
    if r.get("package") not in PACKAGES:
        bad.add("package", r.get("package"), "is neither %s" % " nor ".join(sorted(PACKAGES)), "pick one of them")
    _ports(r, bad, name, explicit, own_port)
    _text(r, bad)
    _args(r.get("args"), bad)
    return {"urls": [values.without_credentials(u) if isinstance(u, str) else u for u in urls],
            "expected": expected if not bad.items else None, "refusals": bad.items,
            "urls_in_env": credentials == "env_file"}


def _ports(r, bad, name, explicit, own_port):
    for key in ("port", "prometheus_port"):
        if key in r and values.port_problem(r[key]):
            bad.add(key, r[key], values.port_problem(r[key]), "give a port, e.g. router_%s: %s"
                    % (key, {"port": 30000, "prometheus_port": 29000}[key]))
    if "worker_port" in r and r["worker_port"] is not None and values.port_problem(r["worker_port"]):
        bad.add("worker_port", r["worker_port"], values.port_problem(r["worker_port"]),
                "give the workers' port, or null for roles/server's default")
    probe, port, prometheus = values.port(r.get("health_check_port"), zero=True), _int(r.get("port")), \
        _int(r.get("prometheus_port"))
    if probe is None:
        bad.add("health_check_port", r.get("health_check_port"), values.port_problem(r.get("health_check_port"), True),
                "give the probe listener a port of its own, or 0")
    elif probe != 0 and probe in (port, prometheus):
        bad.add("health_check_port", r.get("health_check_port"), "is router_port or router_prometheus_port",
                "give the probe listener a port of its own, or 0")
    if not explicit and own_port is not None and _int(own_port) == port:
        bad.items.append("%s serves SGLang on router_port %s itself: give the router another port" % (name, port))


def _text(r, bad):
    """Names, addresses, paths and the unit's settings: one rule each; any value, one line."""
    name = r.get("service_name")
    problem = values.unit_name_problem(name) if "service_name" in r else None
    if problem or (isinstance(name, str) and name.endswith(".service")):
        bad.add("service_name", name, problem or "ends in .service, which the role adds",
                "give a unit name without .service, e.g. sglang-router")
    for key in ("user", "group"):
        if key in r and (not isinstance(r[key], str) or not values.USER_RE.match(r[key])):
            bad.add(key, r[key], "is not a user or group name", "use lower-case letters, digits, '_' or '-', e.g. "
                    "sglang-router")
    for key in ("host", "prometheus_host"):
        if key in r and (not isinstance(r[key], str) or not values.HOST_RE.match(r[key])):
            bad.add(key, r[key], "is not an address to listen on", "give an IP address or host name, e.g. 0.0.0.0")
    if values.control_name(r.get("api_key")) or values.scalar_problem(r.get("api_key")):
        bad.add("api_key", None, values.text_problem(r["api_key"]),
                "give the key on one line (a key read from a file keeps its newline: | trim it)", secret=True)
    for key in (k for k in WORDS if k in r):
        problem = (values.shell_word_problem if key in PLAIN else values.text_problem)(r[key])
        if problem:
            bad.add(key, r[key], problem, "give one value on one line (| trim a looked-up value)")
    for table in UNIT_TABLES:
        entries = r.get(table) or {}
        if not isinstance(entries, dict):
            bad.add(table, entries, "is not a mapping", "give {Setting: value}")
            continue
        for k, v in sorted(entries.items(), key=lambda kv: str(kv[0])):
            problem = values.unit_setting_problem(k, v)
            if problem:
                bad.add(table, {k: v}, problem, "give systemd setting names like LimitNOFILE and one-line values")


def _args(args, bad):
    """router_args: a flag name each, a value or a list of values of one line; no flag the role sets, and no value
    that reads as a flag (a list [x, --worker-urls, http://elsewhere] would add workers)."""
    if args is None:
        return
    if not isinstance(args, dict):
        bad.add("args", args, "is not a mapping", "give {flag: value}")
        return
    for k, v in sorted(args.items(), key=lambda kv: str(kv[0])):
        flag = str(k).lstrip("-").replace("_", "-")
        if not isinstance(k, str) or not FLAG_RE.match(k):
            bad.add("args", {k: v}, "has a key that is not a flag name", "give names like policy or --policy")
        elif flag in ROLE_FLAGS:
            bad.add("args", {k: v}, "sets --%s, which the role sets" % flag, "use router_worker_urls / router_api_key")
        else:
            items = list(v) if isinstance(v, (list, tuple)) else [v]
            problem = next((p for p in (values.text_problem(x) for x in items) if p), None)
            if problem is None and any(isinstance(x, str) and x.startswith("--") for x in items):
                problem = "has a value that starts with -- (a second flag)"
            if problem:
                bad.add("args", {k: v}, problem if problem.startswith("has") else "has a value that %s" % problem,
                        "give one value, or a list of values, each on one line")
