# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live progress for llmserve.sglang.server_ready.

The module waits at most ``progress_interval`` seconds (or until the stage
changes) and hands back its state; this plugin prints one line per host and
re-invokes it with that state until it is done.  Polling stays on the target:
one module call per progress line, not one SSH connection per poll.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.utils.display import Display

from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction
from ansible_collections.llmserve.sglang.plugins.plugin_utils._resume import run_resumable

display = Display()

MODULE = "llmserve.sglang.server_ready"
DEFAULT_PROGRESS = 30.0


class ActionModule(CollectionAction):
    _requires_connection = True  # runs the module on the host

    def decide(self, args, task_vars, result):
        args.setdefault("progress_interval", DEFAULT_PROGRESS)
        host = self._task_vars_host(task_vars)
        shown = {"line": None}

        def progress(res):
            line = self._line(host, res, True)
            if line != shown["line"]:
                display.display(line)
                shown["line"] = line

        res = run_resumable(self, MODULE, args, task_vars, "server_ready", progress)
        if not self._play_context.check_mode:
            display.display(self._line(host, res, False))
        result.update(res)
        # the verdict as a key of its own: a role may register the wait with failed_when false (Ansible then prints no
        # 'fatal' with the whole result, and sets failed to false) and still tell a failed wait from a READY
        result["ready"] = not res.get("failed")
        return result

    @staticmethod
    def _task_vars_host(task_vars):
        return (task_vars or {}).get("inventory_hostname", "?")

    @staticmethod
    def _line(host, res, pending):
        elapsed = res.get("elapsed", 0) or 0
        label = res.get("stage_label") or res.get("stage") or "?"
        if res.get("failed"):
            if not res.get("reason"):
                # Not the module's verdict (it could not run, or broke): its message is all there is.
                return "[%s] %.0fs FAILED: %s" % (host, elapsed, (res.get("msg") or "no message").splitlines()[0][:300])
            return "[%s] %.0fs FAILED %s: %s" % (host, elapsed, res["reason"], res.get("category"))
        if not pending:
            served = (res.get("server") or {}).get("served_model")
            return "[%s] %.0fs ready%s" % (host, elapsed, " (%s)" % served if served else "")
        extra = ""
        if res.get("cpu_seconds") is not None:
            extra = " (cpu %.0fs)" % res["cpu_seconds"]
        return "[%s] %.0fs %s%s" % (host, elapsed, label, extra)
