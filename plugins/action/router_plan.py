# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: roles/router's plan, on the controller (plugin_utils/_router_plan.py) - see the module's
documentation in plugins/modules/router_plan.py. Fails, listing every refusal with its fix, when a setting is bad;
else returns the gateway's view (plugin_utils/_router_view.py) and publishes it as the fact ``router_view``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_plan as router_plan
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_view as router_view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction


class ActionModule(CollectionAction):
    ARGSPEC = {}

    def decide(self, args, task_vars, result):
        r = dict((name, self._templar.template(task_vars["router_" + name]))
                 for name in router_plan.SETTINGS if "router_" + name in task_vars)
        name = task_vars.get("inventory_hostname")
        hostvars = task_vars.get("hostvars") or {}
        groups = task_vars.get("groups") or {}
        members = list(groups.get(r.get("worker_group")) or [])
        default_port = r.get("worker_port")
        group_urls = router_plan.replica_urls(members, hostvars, groups, r.get("worker_scheme") or "http", default_port)
        own_port = None
        if name in members and name in hostvars:
            own_port = router_plan.host_view(hostvars[name], default_port)["port"]
        out = router_plan.plan(r, name, group_urls, own_port)
        result.update(out, changed=False)
        if out["refusals"]:
            result["failed"] = True
            result["msg"] = "%s: %d router setting(s) refused, nothing was changed:\n- %s" % (
                name, len(out["refusals"]), "\n- ".join(out["refusals"]))
            return result
        view = router_view.build(r, out, router_plan.health_endpoint(r, members, hostvars))
        result["view"] = view
        result["ansible_facts"] = {"router_view": view}
        return result
