# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin: names the deploy lock's holder from the controller, and tells the host when a holder is dead.

The holder is this ``ansible-playbook``: the controller's host name, the user, the pid of the ansible-playbook
process (the parent of this worker) and when it started. Only the controller can see whether a holder's process
still lives: when the host refuses the lock and its holder ran on this controller with a pid that is gone (or is no
longer an ansible process), the module is asked again with ``holder_dead`` and takes the lock over with a warning.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import getpass
import os
import socket
import time

from ansible.plugins.action import ActionBase


def _start_time(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (IOError, OSError, IndexError):
        return "?"


def _alive(pid, start):
    """The pid runs and is the same process (its start time, where /proc tells it)."""
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError) as exc:
        return getattr(exc, "errno", None) == 1  # EPERM: alive, another user's
    return start in ("?", None) or _start_time(int(pid)) == start


def holder():
    pid = os.getppid()  # the ansible-playbook process (workers are its forks)
    start = _start_time(pid)
    name = socket.gethostname()
    return {"controller": name, "user": getpass.getuser(), "pid": pid, "since": round(time.time(), 1),
            "start": start, "token": "%s:%d:%s" % (name, pid, start)}


class ActionModule(ActionBase):
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        me = holder()
        args["holder"] = me
        if args.get("state", "held") == "released":
            released = self._execute_module("llmserve.sglang.server_lock", module_args=args, task_vars=task_vars)
            return dict(result, **released)
        res = self._execute_module("llmserve.sglang.server_lock", module_args=args, task_vars=task_vars)
        held = res.get("held_by") or {}
        if res.get("refused") and held.get("controller") == me["controller"] and not _alive(held.get("pid"), held.get("start")):
            args["holder_dead"] = True
            res = self._execute_module("llmserve.sglang.server_lock", module_args=args, task_vars=task_vars)
        if res.get("refused"):
            paths = args.get("paths") or {}
            res["failed"] = True
            res["msg"] = ("%s is being deployed by another run: %s. Wait for it to end; if that run is dead on another "
                          "controller, remove %s (it counts as stale after %s s)." % (
                              paths.get("unit_name", "the instance"), res.get("msg"), paths.get("lock"),
                              args.get("stale_after", 7200)))
        return dict(result, **res)
