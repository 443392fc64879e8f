# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: what a benchmark mode launches (module_utils/bench/modes.launch), on the controller.

See plugins/modules/bench_plan.py for the documentation.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import modes
from ansible_collections.llmserve.sglang.plugins.module_utils.server import view as server_view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_vars import templated_settings


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        mode = args.get("mode")
        settings = server_view.resolved(templated_settings(task_vars, self._templar))
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
