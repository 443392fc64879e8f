# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private filters (roles/server's plumbing; they may change without notice): the steps that need the other nodes of
a replica, and the role's closing messages (plugin_utils/_server_plan.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_plan
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as view_mod
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_plan import failure_message, report, settle, wait_failed


def _peers(plan, hostvars, play_hosts, var):
    me = plan.get("_host")
    out = {}
    for node in plan.get("nodes") or []:
        if node == me or node not in (play_hosts or []):
            continue
        hv = hostvars[node] if node in hostvars else {}
        if var in hv:
            out[node] = hv[var]
    return out


def server_settle(plan, hostvars, play_hosts, me):
    """This node's plan, raised to restart when another node of its replica (re)starts; peers of the peer watch."""
    if not isinstance(plan, dict):
        raise AnsibleFilterError("_server_settle: input must be the plan of llmserve.sglang.server_plan")
    own = dict(plan, _host=me)
    # the peers' own plans (registered by the plan task), not their settled ones: no recursion between nodes
    peers = dict((n, r.get("plan") or {}) for n, r in _peers(own, hostvars, play_hosts, "__server_own_plan").items()
                 if isinstance(r, dict))
    return settle(plan, peers)


def server_replica_failures(plan, hostvars, play_hosts, me):
    """Nodes of this node's replica (itself included) whose wait failed."""
    own = dict(plan, _host=me)
    nodes = {me: (hostvars[me] if me in hostvars else {}).get("__server_ready") or {}}
    nodes.update(_peers(own, hostvars, play_hosts, "__server_ready"))
    return sorted(n for n, r in nodes.items() if isinstance(r, dict) and wait_failed(r))


def server_failure(plan, ready, failed_step=None, rollback_ready=None, failed_nodes=None, on_failure="rollback"):
    """The message a failed start ends with (plugin_utils/_server_plan.failure_message)."""
    return failure_message(plan, ready, failed_step, rollback_ready, failed_nodes, on_failure)


def server_report(plan, ready=None):
    """The lines the role ends with (plugin_utils/_server_plan.report)."""
    return report(plan, ready if isinstance(ready, dict) else None)


def server_health_endpoint(hosts, hostvars, record="llmserve_sglang"):
    """/ready where every worker host's SGLang has it, else /health (module_utils/server/health.py): each host's
    version is its instance view's (published by roles/server, else from its settings and roles/sglang's record)."""
    # ``record``: the install record's name where a host names none (server_sglang_record)
    return _router_plan.workers_health_endpoint(hosts, hostvars, record)


def server_view(hv, recorded=None, defaults=None):
    """The resolved view of the instance of a host (plugin_utils/_server_view.of_host), from ``hostvars[host]``."""
    if hv is None or not hasattr(hv, "__contains__"):
        raise AnsibleFilterError("_server_view: give hostvars[HOST] (the host's variables)")
    try:
        return view_mod.of_host(hv, recorded=recorded, defaults=defaults)
    except ValueError as exc:
        raise AnsibleFilterError("_server_view: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"_server_settle": server_settle, "_server_replica_failures": server_replica_failures,
                "_server_failure": server_failure, "_server_report": server_report,
                "_server_health_endpoint": server_health_endpoint, "_server_view": server_view}
