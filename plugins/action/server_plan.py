# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: roles/server's plan, on the controller (no round trip to the host).

Reads the role's settings (every ``server_<name>`` of plugin_utils/_server_view.SETTINGS) and what
llmserve.sglang.server_info returned (``info``), and returns plugin_utils/_server_plan.plan() - see the module's
documentation in plugins/modules/server_plan.py. Fails, listing every refusal with its fix, when a setting is bad.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import secrets

from ansible_collections.llmserve.sglang.plugins.module_utils.host import pidfile as host_pidfile
from ansible_collections.llmserve.sglang.plugins.module_utils.server import peer_watch as server_peer_watch
from ansible_collections.llmserve.sglang.plugins.module_utils.server import supervise as server_supervise
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_plan import plan, validate
from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction

# The helper scripts the instance controller installs: one source, module_utils, also run as scripts.
HELPER_SOURCES = {"sglang_supervise.py": server_supervise, "sglang_peer_watch.py": server_peer_watch,
                  "sglang_pidfile.py": host_pidfile}


def _helpers():
    out = {}
    for name, mod in HELPER_SOURCES.items():
        with open(mod.__file__.replace(".pyc", ".py")) as f:
            out[name] = f.read()
    return out


def _addresses(hv, template=lambda v: v):
    """The addresses a replica's node may be reached on, from its variables; ``template`` renders only these (another
    variable of that host that cannot render is none of the plan's business)."""
    facts = template(hv.get("ansible_facts")) or {}
    info = hv.get("__server_info") or {}
    return {
        "dist_init_host": template(hv.get("server_dist_init_host")),
        "default_ipv4": (facts.get("default_ipv4") or {}).get("address") or info.get("default_ipv4"),
        "ansible_host": template(hv.get("ansible_host")),
    }


class ActionModule(CollectionAction):
    ARGSPEC = {"info": {"type": "dict", "required": True}}

    def decide(self, args, task_vars, result):
        info = args["info"]
        checked = validate(self.server_settings(task_vars))  # the one check; plan() reads nothing else of them
        settings = checked.settings
        name = task_vars.get("inventory_hostname")
        hostvars = task_vars.get("hostvars") or {}
        groups = task_vars.get("groups") or {}
        tp_group = settings["tp_group"]
        nodes = list(groups.get(tp_group) or []) if tp_group else [name]
        rank0 = hostvars[nodes[0]] if nodes and nodes[0] in hostvars else {}
        facts = task_vars.get("ansible_facts") or {}
        host = {
            "name": name,
            "groups": dict((g, list(h)) for g, h in groups.items()) if tp_group else {},
            "service_mgr": info.get("service_mgr"),
            "check_mode": bool(self._play_context.check_mode),
            "helpers": _helpers(),
            "gpu": (info.get("ansible_facts") or {}).get("gpu") or facts.get("gpu") or {},
            "version": info.get("version"),
            "version_error": info.get("version_error"),
            "state": info.get("state") or {},
            "files": info.get("files") or {},
            "dirs": info.get("dirs") or {},
            "fingerprint": info.get("fingerprint") or "",
            "user_exists": info.get("user_exists", False),
            "group_exists": info.get("group_exists", False),
            "model_fs": info.get("model_fs") or {},
            "become": info.get("become") or {},
            "become_method": self._templar.template(task_vars.get("ansible_become_method"))
            or getattr(self._play_context, "become_method", None),
            "rank0": _addresses(rank0, self._templar.template) if tp_group and nodes and nodes[0] != name else {},
            "own": _addresses(dict(task_vars, __server_info=info), self._templar.template),
        }
        if tp_group and nodes and nodes[0] == name:
            host["rank0"] = host["own"]
        out = plan(checked, host)
        # one random token per replica start: rank 0's is shared with its peers (the _server_settle filter), so a watcher obeys
        # only its own replica
        out["peer_token"] = secrets.token_hex(16)
        result["plan"] = out
        result["changed"] = False
        # The planned view travels in the plan (plan.view) only: the fact server_view keeps what runs (server_info's,
        # from the instance's record) until a start makes the plan what runs (tasks/deploy.yml refreshes it then).
        if settings["api_key"]:
            # the plan carries the API key file's text
            result["_ansible_no_log"] = True
        if out["refusals"]:
            result["failed"] = True
            result["msg"] = "%s: %d setting(s) refused, nothing was changed:\n- %s" % (
                name, len(out["refusals"]), "\n- ".join(out["refusals"]))
            result.pop("_ansible_no_log", None)
            result["plan"] = {"refusals": out["refusals"]}
        return result
