# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: the benchmark report on the controller (plugin_utils/_bench_report.py), so that an installed
collection's playbooks/benchmark.yml has it. Documentation: plugins/modules/bench_report.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
from pathlib import Path

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as report
from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction


class ActionModule(CollectionAction):
    ARGSPEC = {
        "run_dir": {"type": "path", "required": True},
        "raw": {"type": "dict"},
        "tolerance": {"type": "float", "default": report.DEFAULT_TOLERANCE},
        "plots": {"type": "bool", "default": True},
        "check_model": {"type": "bool", "default": False},
        "check_confirm": {"type": "bool", "default": False},
    }

    def decide(self, args, task_vars, result):
        run_dir = to_text(args["run_dir"])
        raw = args["raw"]
        raw_path = os.path.join(run_dir, "raw.json")
        if self._play_context.check_mode:
            result.update(changed=False, skipped=True, msg="check mode: no report written")
            return result
        if raw is not None:
            if not isinstance(raw, dict) or not isinstance(raw.get("results"), list):
                raise AnsibleActionFail("bench_report: raw must be a mapping with a results list (meta, results)")
            if not os.path.isdir(run_dir):
                os.makedirs(run_dir)
            with open(raw_path, "w") as handle:
                handle.write(json.dumps(raw, indent=2, sort_keys=True, default=str) + "\n")
        elif not os.path.isfile(raw_path):
            raise AnsibleActionFail("bench_report: %s not found: pass raw, or a run_dir a benchmark wrote" % raw_path)
        summary = report.build(Path(run_dir), with_plots=args["plots"], tolerance=args["tolerance"])
        lines = report.lines_of(summary, run_dir)
        code, why = report.failures(summary, args["check_model"], args["check_confirm"])
        result.update(changed=True, summary=summary, lines=lines, report=os.path.join(run_dir, "report.md"))
        if why:
            result.update(failed=True, rc=code, msg="bench_report: " + why)
        return result
