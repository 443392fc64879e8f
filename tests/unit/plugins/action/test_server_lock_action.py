# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server_lock action: a lock the host refuses fails the task, naming its holder and the way out; a lock it
gives does not; a holder that ran on this controller and is gone is taken over by asking the host again."""
import os
from types import SimpleNamespace

import pytest

from ansible_collections.llmserve.sglang.plugins.action import server_lock
from ansible_collections.llmserve.sglang.plugins.action.server_lock import ActionModule

PATHS = {"unit_name": "sglang-a.service", "lock": "/run/llmserve-sglang/a.lock"}


def act(monkeypatch, answers):
    """An ActionModule whose module answers come from `answers` (one per call); the calls' args are recorded."""
    calls = []

    def execute(self, name, module_args=None, task_vars=None):
        calls.append(dict(module_args))
        return dict(answers[len(calls) - 1])

    monkeypatch.setattr(ActionModule, "_execute_module", execute)
    monkeypatch.setattr(server_lock.ActionBase, "run", lambda self, tmp=None, task_vars=None: {})
    a = object.__new__(ActionModule)
    a._task = SimpleNamespace(args={"paths": PATHS, "stale_after": 600})
    return a, calls


def test_a_refused_lock_fails_the_task_and_names_the_holder(monkeypatch):
    a, calls = act(monkeypatch, [{"refused": True, "msg": "held by ctl:42 since 10:00",
                                  "held_by": {"controller": "another-controller", "pid": 42, "start": "1"}}])
    res = a.run(task_vars={})
    assert res["failed"] is True
    assert "sglang-a.service is being deployed by another run: held by ctl:42 since 10:00" in res["msg"]
    assert "remove /run/llmserve-sglang/a.lock (it counts as stale after 600 s)" in res["msg"]
    assert len(calls) == 1 and "holder_dead" not in calls[0]  # another controller's holder: never taken over


def test_a_given_lock_does_not_fail(monkeypatch):
    a, calls = act(monkeypatch, [{"changed": True, "refused": False}])
    res = a.run(task_vars={})
    assert not res.get("failed") and res["changed"] is True and len(calls) == 1


def test_a_dead_holder_on_this_controller_is_taken_over(monkeypatch):
    me = server_lock.holder()
    gone = {"controller": me["controller"], "pid": 2 ** 22 + 7, "start": "1"}  # above pid_max's default: no process
    a, calls = act(monkeypatch, [{"refused": True, "held_by": gone, "msg": "held"}, {"changed": True}])
    res = a.run(task_vars={})
    assert not res.get("failed") and calls[1]["holder_dead"] is True and len(calls) == 2


def test_a_live_holder_on_this_controller_is_not_taken_over(monkeypatch):
    me = server_lock.holder()
    live = {"controller": me["controller"], "pid": os.getpid(), "start": server_lock._start_time(os.getpid())}
    a, calls = act(monkeypatch, [{"refused": True, "held_by": live, "msg": "held"}])
    res = a.run(task_vars={})
    assert res["failed"] is True and len(calls) == 1


@pytest.mark.parametrize("start, same", [(None, True), ("?", True), ("0", False)])
def test_alive_compares_the_start_time(start, same):
    assert server_lock._alive(os.getpid(), start) is same
