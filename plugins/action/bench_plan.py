# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: what a benchmark mode launches (module_utils/bench/modes.launch), on the controller.

See plugins/modules/bench_plan.py for the documentation.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleActionFail

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import modes
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as server_view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction


class ActionModule(CollectionAction):
    ARGSPEC = {
        "mode": {"type": "str", "required": True, "choices": list(modes.MODES)},
        "speculative": {"type": "dict"},
        "applied": {"type": "dict"},
    }

    def decide(self, args, task_vars, result):
        mode = args["mode"]
        settings = server_view.resolved(self.server_settings(task_vars))
        configured = args.get("speculative")
        if configured is None:
            configured = settings["speculative"]
        applied = args.get("applied")
        try:
            out = modes.launch(mode, configured, applied, settings["env"])
        except ValueError as exc:
            raise AnsibleActionFail("bench_plan: %s" % exc)
        result.update(out, mode=mode, changed=False)
        return result
