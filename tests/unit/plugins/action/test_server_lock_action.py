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


@pytest.fixture
def sleeper():
    """A live process of this controller: (pid, start time). It must outlive the test: a liveness check signals
    nothing."""
    import subprocess
    child = subprocess.Popen(["sleep", "60"])
    try:
        yield child.pid, server_lock._start_time(child.pid)
        assert child.poll() is None, "the liveness check ended the process (signal %s)" % child.returncode
    finally:
        child.kill()
        child.wait()


def test_a_live_holder_on_this_controller_is_not_taken_over(monkeypatch, sleeper):
    me = server_lock.holder()
    live = {"controller": me["controller"], "pid": sleeper[0], "start": sleeper[1]}
    a, calls = act(monkeypatch, [{"refused": True, "held_by": live, "msg": "held"}])
    res = a.run(task_vars={})
    assert res["failed"] is True and len(calls) == 1


def test_a_pid_that_now_names_another_process_is_no_holder(monkeypatch, sleeper):
    me = server_lock.holder()
    reused = {"controller": me["controller"], "pid": sleeper[0], "start": str(int(sleeper[1]) + 1)}
    a, calls = act(monkeypatch, [{"refused": True, "held_by": reused, "msg": "held"}, {"changed": True}])
    res = a.run(task_vars={})
    assert not res.get("failed") and len(calls) == 2 and calls[1]["holder_dead"] is True


@pytest.mark.parametrize("start, same", [(None, True), ("?", True), ("0", False)])
def test_alive_compares_the_start_time(start, same, sleeper):
    assert server_lock._alive(sleeper[0], start) is same
    assert server_lock._alive(sleeper[0], sleeper[1]) is True


# ---- the real ActionModule, in process (tests/unit/actionkit.py); the host's server_lock module is scripted

def lock(args, *answers):
    import actionkit
    host = actionkit.Host(*answers)
    return actionkit.run("server_lock", args, {"inventory_hostname": "gpu1"}, host=host), host


def test_the_module_is_asked_with_the_tasks_arguments_and_this_run_as_holder():
    import getpass
    import socket
    import time
    before = time.time()
    res, host = lock({"paths": PATHS, "stale_after": 600}, {"changed": True, "held_by": {"pid": 1}})
    after = time.time()
    assert res == {"changed": True, "held_by": {"pid": 1}}
    (module, args), = host.calls
    assert module == "llmserve.sglang.server_lock"
    me = args.pop("holder")
    assert args == {"paths": PATHS, "stale_after": 600}
    ppid = os.getppid()
    start = server_lock._start_time(ppid)
    assert me == {"controller": socket.gethostname(), "user": getpass.getuser(), "pid": ppid, "since": me["since"],
                  "start": start, "token": "%s:%d:%s" % (socket.gethostname(), ppid, start)}
    # seconds since the epoch to a tenth: a float, whatever second the call falls in
    assert isinstance(me["since"], float) and me["since"] == round(me["since"], 1)
    assert round(before, 1) <= me["since"] <= round(after, 1)


def test_a_release_is_one_call_whose_answer_is_the_result():
    answer = {"changed": True, "refused": True, "msg": "not ours",
              "held_by": {"controller": server_lock.holder()["controller"], "pid": 2 ** 22 + 7, "start": "1"}}
    res, host = lock({"paths": PATHS, "state": "released", "fingerprint": "f"}, answer)
    assert res == answer and len(host.calls) == 1  # never taken over, never turned into a failure
    assert host.calls[0][0] == "llmserve.sglang.server_lock"
    assert host.args[0]["state"] == "released" and host.args[0]["holder"]["pid"] == os.getppid()
    held, host = lock({"paths": PATHS, "state": "held"}, answer, answer)
    assert held["failed"] is True and len(host.calls) == 2 and host.args[1]["holder_dead"] is True
    assert [m for m, _a in host.calls] == ["llmserve.sglang.server_lock"] * 2


def test_a_refusal_without_paths_names_the_instance_and_the_documented_stale_age():
    import actionkit
    res, _host = lock({}, {"refused": True, "msg": "held by x", "held_by": None})
    stale = actionkit.documented("server_lock", "stale_after")["default"]
    assert res["failed"] is True
    assert res["msg"].startswith("the instance is being deployed by another run: held by x. Wait for it to end")
    assert res["msg"].endswith("(it counts as stale after %s s)." % stale)


def test_a_dead_holder_that_is_still_refused_fails():
    me = server_lock.holder()
    gone = {"controller": me["controller"], "pid": 2 ** 22 + 7, "start": "1"}
    res, host = lock({"paths": PATHS}, {"refused": True, "held_by": gone, "msg": "held"},
                     {"refused": True, "held_by": gone, "msg": "held, still"})
    assert res["failed"] is True and "another run: held, still." in res["msg"] and len(host.calls) == 2


def test_a_lock_with_no_holder_named_is_not_taken_over():
    res, host = lock({"paths": PATHS}, {"refused": True, "msg": "held"})
    assert res["failed"] is True and len(host.calls) == 1


def test_the_start_time_is_read_past_a_name_with_a_parenthesis(tmp_path):
    import subprocess
    import time
    sleeper = tmp_path / "x) 1 2 3 4"
    os.symlink("/bin/sleep", str(sleeper))
    child = subprocess.Popen([str(sleeper), "30"])
    try:
        for _attempt in range(100):  # until the exec shows in /proc (the name is the link's)
            with open("/proc/%d/stat" % child.pid) as handle:
                if handle.read().startswith("%d (x) 1" % child.pid):
                    break
            time.sleep(0.01)
        mine, theirs, init = (server_lock._start_time(p) for p in (os.getpid(), child.pid, 1))
        # clock ticks since boot: init started first, the child after this process
        assert int(init) < int(mine) <= int(theirs)
        assert server_lock._alive(child.pid, theirs) is True and server_lock._alive(child.pid, mine) is (mine == theirs)
    finally:
        child.kill()
        child.wait()
    assert server_lock._start_time(child.pid) == "?" and server_lock._alive(child.pid, theirs) is False


@pytest.mark.parametrize("pid", [None, "x", 2 ** 22 + 7])
def test_no_pid_or_a_gone_one_is_not_alive(pid):
    assert server_lock._alive(pid, None) is False


def test_another_users_process_is_alive(sleeper):
    # as a user who may not signal root's process, kill(2) answers EPERM: the process is there
    if os.getuid() != 0:
        pytest.skip("needs root to become another user")
    pid, start = sleeper
    assert server_lock._alive(pid, start) is True  # as root
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        try:
            os.setgid(65534)
            os.setuid(65534)
            os._exit(10 + int(server_lock._alive(pid, None)) + 2 * int(server_lock._alive(2 ** 22 + 7, None)))
        finally:
            os._exit(99)
    assert os.waitpid(child, 0)[1] >> 8 == 11


def test_the_base_run_gets_what_the_executor_gave(monkeypatch):
    # ansible-core's run warns of a tmp argument (TaskExecutor gives none): none given, none passed on
    import ansible.plugins.action as base
    import actionkit
    warned = []
    monkeypatch.setattr(base.display, "warning", lambda msg, *a, **kw: warned.append(msg))
    act = actionkit.action("server_lock", {"paths": PATHS}, host=actionkit.Host({"changed": True}, {"changed": True}))
    assert act.run(task_vars={"inventory_hostname": "gpu1"}) == {"changed": True} and warned == []
    act.run("/tmp/x", {"inventory_hostname": "gpu1"})
    assert len(warned) == 1 and "tmp" in warned[0]
