# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: what a benchmark mode launches (module_utils/bench/modes.launch), on the controller.

See plugins/modules/bench_plan.py for the documentation.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleActionFail

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import limits, modes
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as report
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as server_view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction


def adaptive_candidate(results, meta):
    """The adaptive setting of the crossover measured so far (report.candidate), or None."""
    raw = {"results": list(results or []), "meta": dict(meta or {})}
    return report.candidate(raw, report.analyse(raw))


class ActionModule(CollectionAction):
    ARGSPEC = {
        "mode": {"type": "str", "required": True, "choices": list(modes.MODES)},
        "speculative": {"type": "dict"},
        "applied": {"type": "dict"},
        "results": {"type": "list", "elements": "dict"},
        "meta": {"type": "dict"},
        "max_batch": {"type": "int"},
    }

    def decide(self, args, task_vars, result):
        mode = args["mode"]
        if args.get("max_batch") is not None:
            try:
                limits.whole(args["max_batch"], "max_batch")
            except limits.BenchInputError as exc:
                raise AnsibleActionFail("bench_plan: %s" % exc)
        settings = server_view.resolved(self.server_settings(task_vars))
        configured = args.get("speculative")
        if configured is None:
            configured = settings["speculative"]
        applied = args.get("applied")
        candidate = None
        if mode == "eagle3_threshold" and applied is None:
            candidate = adaptive_candidate(args.get("results"), args.get("meta"))
            if not candidate or candidate.get("action") != "adaptive":
                result.update(mode=mode, changed=False, skip=True, candidate=candidate,
                              why="no adaptive setting to measure: %s" % (
                                  (candidate or {}).get("reason") or "no crossover of the baseline and EAGLE-3 measured"))
                return result
            applied = candidate["server_speculative"]
        try:
            out = modes.launch(mode, configured, applied, settings["env"], settings["args"], args.get("max_batch"))
        except ValueError as exc:
            raise AnsibleActionFail("bench_plan: %s" % exc)
        result.update(out, mode=mode, changed=False, skip=False, candidate=candidate)
        return result
