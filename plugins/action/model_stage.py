# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live progress for llmserve.sglang.model_stage (the way server_ready shows its stages).

The module starts (or finds) the transfer worker, watches it for at most ``progress_interval`` seconds and hands
back its state; this plugin prints one line per host - bytes, rate, ETA - and calls it again until the model is
staged. The transfer itself never depends on the controller's connection: the worker is detached on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.utils.display import Display

from ansible_collections.llmserve.sglang.plugins.action.server_lock import _alive, holder as controller_of_this_run
from ansible_collections.llmserve.sglang.plugins.plugin_utils._action import CollectionAction
from ansible_collections.llmserve.sglang.plugins.plugin_utils._resume import run_resumable

display = Display()

MODULE = "llmserve.sglang.model_stage"


def _human(n):
    n = float(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return "%.1f %s" % (n, unit)
        n /= 1024.0


def orphaned(held, me, alive=_alive):
    """The lock token of the run holding the dest when it ran on this controller (``me``) and its ansible-playbook
    process is gone (a killed controller): that run is taken over at once. None otherwise - a live run, or one of
    another controller, whose process cannot be seen from here."""
    ctl = (held or {}).get("controller") or {}
    if not held or not held.get("token") or ctl.get("controller") != me["controller"]:
        return None
    if alive(ctl.get("pid"), ctl.get("start")):
        return None
    return held["token"]


class ActionModule(CollectionAction):
    _requires_connection = True  # runs the module on the host

    def decide(self, args, task_vars, result):
        host = task_vars.get("inventory_hostname", "?")
        me = controller_of_this_run()
        args = dict(args, controller=dict((k, me[k]) for k in ("controller", "user", "pid", "start")))
        res = run_resumable(self, MODULE, args, task_vars, "model_stage", lambda r: display.display(self.line(host, r)))
        orphan = orphaned(res.get("held_by"), me) if res.get("failed") else None
        if orphan:
            # the run holding the dest was started by an ansible-playbook of this controller that is gone: its
            # worker is stopped and its transfer resumed now, not after models_orphan_after
            res = run_resumable(self, MODULE, dict(args, orphan_of=orphan), task_vars, "model_stage",
                                lambda r: display.display(self.line(host, r)))
        if res.get("action") == "staged":
            display.display("[%s] %s: staged at %s in %.0fs" % (host, res.get("name"), res.get("model_path"),
                                                                res.get("elapsed", 0)))
        result.update(res)
        return result

    @staticmethod
    def line(host, res):
        eta = res.get("eta")
        return "[%s] %s: %s %s at %s/s%s" % (
            host, res.get("name"), res.get("stage"), res.get("progress"), _human(res.get("rate")),
            ", ETA %.0fs" % eta if eta is not None else "")
