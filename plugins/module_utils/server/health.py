# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which HTTP endpoint tells that an SGLang server can take requests, by version, and how long to give it.

SGLang 0.5.20 added ``/ready`` (200 once the server serves, 503 while it starts or drains); before it ``/health`` is
the only probe. SGLang answers ``/health`` within its own 1 s budget, so a probe timeout of 1 s flaps on a busy
server (modelplane#206): probes get more than that.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

READY_SINCE = gates.GATES["ready"]


def endpoint(versions):
    """'/ready' when every version is known and has it, else '/health' (sglang/gates.health_path)."""
    return gates.health_path(versions)


def worker_versions(hosts, hostvars, record="llmserve_sglang"):
    """The SGLang version of each worker host: the plan roles/server settled in this run, else what the instance
    recorded at its last start (server_info's ``recorded``), else the install record roles/sglang left (local
    facts), else '' (unknown)."""
    out = []
    for h in hosts or []:
        hv = hostvars[h] if h in hostvars else {}
        view = hv.get("server_view") or {}
        plan = hv.get("__server_plan") or {}
        recorded = (hv.get("__server_info") or {}).get("recorded") or {}
        # ansible_facts.ansible_local (the local facts keep their prefix there), not the injected ansible_local:
        # INJECT_FACTS_AS_VARS is deprecated from 2.20
        local = ((hv.get("ansible_facts") or {}).get("ansible_local") or {}).get(record) or {}
        out.append(str(plan.get("version") or view.get("version") or recorded.get("version")
                       or local.get("installed_version") or ""))
    return out
