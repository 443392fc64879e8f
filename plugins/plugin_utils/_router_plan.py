# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to the collection (controller side; may change at any time): roles/router's decision, before anything
is touched - the worker URLs (one per replica, rank 0, from the workers' instance views), how many must be healthy,
and every setting the gateway would take badly, each refused with its own fix. The router_plan action runs it; the
_replica_urls filter shares :func:`replica_urls`.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmserve.sglang.plugins.module_utils.router.gateway import PACKAGES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._replica import worker_urls

POLICIES = ("random", "round_robin", "cache_aware", "power_of_two", "manual")
# The role's settings the plan reads (router_<name>).
SETTINGS = ("worker_urls", "worker_group", "worker_scheme", "worker_port", "expected_workers", "policy",
            "health_check_timeout_secs", "package", "health_check_port", "port", "prometheus_port")


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
    """``{urls, expected, refusals}``.

    ``r``: the role's settings (:data:`SETTINGS`, ``router_`` dropped); ``name``: this host; ``group_urls``: the
    worker URLs of ``router_worker_group`` (:func:`replica_urls`); ``own_port``: the port this host's own SGLang
    serves on when it is a host of that group, else None.
    """
    refusals = []
    explicit = list(r.get("worker_urls") or [])
    urls = explicit or list(group_urls or [])
    if not urls:
        refusals.append("router_worker_urls is empty and group '%s' has no hosts: list the workers' URLs, or set "
                        "router_worker_group to the group of the SGLang hosts" % r.get("worker_group"))
    wanted = r.get("expected_workers")
    expected = len(urls) if wanted is None else _int(wanted)
    if expected is None or expected < 1 or expected > len(urls):
        refusals.append("router_expected_workers=%s is not between 1 and %d (the worker URLs): give a count in that "
                        "range, or null for every worker" % (wanted, len(urls)))
    if r.get("policy") not in POLICIES:
        refusals.append("router_policy=%s is not one of %s: pick one of them" % (r.get("policy"), ", ".join(POLICIES)))
    floor = gates.LIMITS["min_probe_timeout"]
    timeout = _float(r.get("health_check_timeout_secs"))
    if timeout is None or timeout < floor:
        refusals.append("router_health_check_timeout_secs=%s is under %g s (SGLang takes up to its own 1 s to answer): "
                        "give %g or more" % (r.get("health_check_timeout_secs"), floor, floor))
    if r.get("package") not in PACKAGES:
        refusals.append("router_package=%s is neither %s: pick one of them" % (r.get("package"), " nor ".join(sorted(PACKAGES))))
    probe, port, prometheus = _int(r.get("health_check_port")), _int(r.get("port")), _int(r.get("prometheus_port"))
    if probe is None or (probe != 0 and probe in (port, prometheus)):
        refusals.append("router_health_check_port=%s is router_port or router_prometheus_port: give the probe "
                        "listener a port of its own, or 0" % r.get("health_check_port"))
    if not explicit and own_port is not None and _int(own_port) == port:
        refusals.append("%s serves SGLang on router_port %s itself: give the router another port" % (name, port))
    return {"urls": urls, "expected": expected if not refusals else None, "refusals": refusals}
