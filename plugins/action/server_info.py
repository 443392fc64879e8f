# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: runs the server_info module on the host, then adds the instance's resolved view on the controller.

Options the task leaves out (instance, config_dir, log_dir, home, manager, user, group) are roles/server's settings
(plugin_utils/_server_view.py: the role's defaults, else the one set of defaults), so a playbook outside the role
reads the same instance the role deploys; ``model_paths`` left out are the model and the draft the settings' view
serves. With ``purpose: deploy`` it also asks what a deploy needs when the settings start the instance: the SGLang
version in ``server_python`` (unless ``server_sglang_version`` names it) and the GPU facts the host lacks. The result
gains ``view`` (plugin_utils/_server_view.build, with what the instance recorded at its last start: what runs), also
set as the host's fact ``server_view``, and ``entry``, the settings the stop and status entry points pass on (they
run without a plan).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import MANAGERS
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as server_view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction

# module option -> setting it defaults to
FROM_SETTINGS = {"instance": "instance", "config_dir": "config_dir", "log_dir": "log_dir", "home": "home",
                 "manager": "service_manager", "user": "user", "group": "group"}


class ActionModule(CollectionAction):
    _requires_connection = True  # runs the module on the host

    def decide(self, args, task_vars, result):
        settings = server_view.resolved(self.server_settings(task_vars))
        for option, name in FROM_SETTINGS.items():
            if args.get(option) is None:
                args[option] = settings[name]
        if args["manager"] not in MANAGERS:  # read as auto here: server_plan refuses the setting by name, with its fix
            args["manager"] = "auto"
        if args.get("model_paths") is None:
            # the model and the draft the settings serve (the view is built once, below, for what runs)
            draft = speculative.resolve(settings["speculative"])["draft_model_path"]
            args["model_paths"] = [str(p) for p in (settings["model_path"], draft) if p]
        if args.get("purpose") == "deploy" and settings["state"] == "started":
            if args.get("python") is None and not str(settings["sglang_version"] or ""):
                args["python"] = settings["python"]
            if args.get("gather_gpu") is None:
                args["gather_gpu"] = "gpu" not in (task_vars.get("ansible_facts") or {})
        result.update(self._execute_module(module_name="llmserve.sglang.server_info", module_args=args,
                                           task_vars=task_vars))
        if result.get("failed") or result.get("skipped"):
            return result
        groups = task_vars.get("groups") or {}
        tp_group = settings.get("tp_group") or ""
        view = server_view.build(
            dict(settings, instance=args["instance"], config_dir=args["config_dir"], log_dir=args["log_dir"]),
            name=task_vars.get("inventory_hostname"),
            groups=dict((g, list(h)) for g, h in groups.items()) if tp_group else {},
            version=result.get("version"), recorded=result.get("recorded"), manager=result.get("manager"))
        result["view"] = view
        result["entry"] = {"config_dir": args["config_dir"], "stop_timeout": settings["stop_timeout"],
                           "stop_grace_unready": settings["stop_grace_unready"]}
        facts = dict(result.get("ansible_facts") or {})
        facts["server_view"] = view
        result["ansible_facts"] = facts
        return result
