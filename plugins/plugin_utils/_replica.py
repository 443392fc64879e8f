# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""Which hosts form one SGLang replica, and which of them is rank 0 (pure; controller side).

A multi-node replica is the inventory group named by ``server_tp_group``; its hosts in inventory order are node
ranks 0..n-1 (``--node-rank``). Rank 0 alone serves HTTP (/generate, /metrics); the others run a /health stub.
server/plan.py (the ranks), monitoring/targets.py (what to scrape) and the router's worker URLs all ask here.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.host.net import host_port

NOT_A_GROUP = "is not an inventory group"
NOT_A_MEMBER = "does not contain"


def replica_nodes(name, tp_group, groups):
    """``(nodes, problem)``: the hosts of ``name``'s replica in rank order, or ``([name], problem)``.

    No ``tp_group``: a single-node replica. ``problem`` is None, :data:`NOT_A_GROUP` or :data:`NOT_A_MEMBER`.
    """
    if not tp_group:
        return [name], None
    groups = groups or {}
    if tp_group not in groups:
        return [name], NOT_A_GROUP
    nodes = list(groups.get(tp_group) or [])
    if name not in nodes:
        return [name], NOT_A_MEMBER
    return nodes, None


def is_rank0(name, tp_group, groups):
    """True when ``name`` serves its replica's HTTP API (rank 0, or no tp_group); False for ranks > 0 and misfits."""
    nodes, problem = replica_nodes(name, tp_group, groups)
    return problem is None and nodes[0] == name


def worker_urls(workers, groups, scheme, default_port):
    """One URL per replica for a router: ``workers`` are ``{name, tp_group, address, port}`` records.

    Ranks > 0 are left out (they do not serve /generate); ``address`` defaults to the name, ``port`` to
    ``default_port``. An IPv6 address is bracketed.
    """
    urls = []
    for rec in workers:
        if is_rank0(rec["name"], rec.get("tp_group") or "", groups):
            urls.append("%s://%s" % (scheme, host_port(rec.get("address") or rec["name"], rec.get("port") or default_port)))
    return urls
