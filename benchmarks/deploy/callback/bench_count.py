# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Callback for benchmarks/deploy: per host, tasks that ran (ok/changed/failed) and were skipped, as JSON."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: bench_count
type: aggregate
short_description: count the tasks per host for benchmarks/deploy/bench_deploy.py
description:
  - "Writes C({host: {ran, skipped, changed, failed}}) to the file named by E(LLMSERVE_BENCH_COUNT), and the wall
    seconds of each task (all hosts together, in order) under the key C(_tasks)."
requirements:
  - enabled by bench_deploy.py through ANSIBLE_CALLBACKS_ENABLED
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_count"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.rows = {}
        self.tasks = []
        self.started = None

    def _close(self):
        if self.started is not None:
            self.tasks[-1][1] = round(time.time() - self.started, 3)
            self.started = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        self.tasks.append([task.get_name(), None])
        self.started = time.time()

    def _row(self, result):
        return self.rows.setdefault(result._host.get_name(), {"ran": 0, "skipped": 0, "changed": 0, "failed": 0})

    def v2_runner_on_ok(self, result):
        row = self._row(result)
        row["ran"] += 1
        row["changed"] += 1 if result._result.get("changed") else 0

    def v2_runner_on_failed(self, result, ignore_errors=False):
        row = self._row(result)
        row["ran"] += 1
        row["failed"] += 0 if ignore_errors else 1

    def v2_runner_on_skipped(self, result):
        self._row(result)["skipped"] += 1

    def v2_playbook_on_stats(self, stats):
        self._close()
        path = os.environ.get("LLMSERVE_BENCH_COUNT")
        if path:
            with open(path, "w") as f:
                json.dump(dict(self.rows, _tasks=self.tasks), f)
