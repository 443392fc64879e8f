# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stopping an instance (pid-file mode, real processes): the SGLang double under the real supervisor, the fake
nvidia-smi (tools/fake_nvidia) listing the processes that hold its fake GPU memory."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import testpaths
from localrun import local_run

from ansible_collections.llmserve.sglang.plugins.module_utils.server import instance as si
from ansible_collections.llmserve.sglang.plugins.module_utils.server import orphans
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout
from ansible_collections.llmserve.sglang.plugins.module_utils.server import supervise as server_supervise

REPO = testpaths.REPO
DOUBLE = os.path.join(REPO, "tools", "sglang_double")
FAKE_NVIDIA = os.path.join(REPO, "tools", "fake_nvidia")


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture
def gpu(tmp_path, monkeypatch):
    """The fake nvidia-smi on PATH, listing the processes registered in its apps folder."""
    apps = tmp_path / "apps"
    apps.mkdir()
    monkeypatch.setenv("PATH", FAKE_NVIDIA + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("FAKE_NVIDIA_APPS", str(apps))
    return apps


def listed():
    return [a["pid"] for a in orphans.gpu_processes(local_run)]


def instance(tmp_path, scenario, extra_env=None, stop_timeout=60):
    s = {"instance": "t", "config_dir": str(tmp_path / "etc"), "log_dir": str(tmp_path / "log")}
    p = layout.paths(s)
    p.update(run_dir=str(tmp_path / "run"), pid_file=str(tmp_path / "run" / "server.pid"),
             supervisor=server_supervise.__file__)
    dirs = [{"path": d, "owner": None, "group": None, "mode": "0750"}
            for d in (p["instance_dir"], p["previous_dir"], s["log_dir"], p["run_dir"])]
    inst = si.Instance({"manager": "pidfile", "paths": p, "dirs": dirs, "log_keep": 2, "stop_timeout": stop_timeout},
                       run, python=sys.executable)
    inst.ensure_dirs()
    env = {"PYTHONPATH": DOUBLE, "SGLANG_DOUBLE_SCENARIO": scenario, "SGLANG_DOUBLE_PACE": "0.05",
           "SGLANG_DOUBLE_EVENTS": str(tmp_path / "events.jsonl"), "SGLANG_DOUBLE_GPU_MIB": "1000",
           "FAKE_NVIDIA_APPS": os.environ["FAKE_NVIDIA_APPS"], orphans.MARKER: "t"}
    env.update(extra_env or {})
    with open(p["env"], "w") as f:
        f.write("".join("%s=%s\n" % (k, json.dumps(v)) for k, v in env.items()))
    spec = {"pid_file": p["pid_file"], "log": p["log"], "env_file": p["env"], "timeout": stop_timeout,
            "command": [sys.executable, "-m", "sglang.launch_server", "--model-path", "/m", "--port", "1", "--tp", "2"]}
    with open(p["launch_spec"], "w") as f:
        json.dump(spec, f)
    return inst, p


def wait_for(pred, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_a_frozen_start_up_is_killed_after_the_unready_grace_not_the_stop_timeout(tmp_path, gpu):
    inst, p = instance(tmp_path, "frozen:load_weights", stop_timeout=600)
    res = si.act(inst, {"action": "start", "fingerprint": "fp"})
    server = res["state"]["pid"]
    assert wait_for(lambda: len(listed()) == 2)  # both schedulers hold their GPU memory
    res = si.act(inst, {"action": "recover", "on_failure": "stop", "stop_grace_unready": 1})
    assert res["stopped"]["killed"] and res["stopped"]["grace"] == 1
    assert res["state"]["active_state"] == "inactive" and not os.path.exists("/proc/%d" % server)
    assert res["on_failure"] == "stop" and "rolled_back" not in res
    assert wait_for(lambda: listed() == [], 10)


def test_a_serving_server_gets_the_stop_timeout_and_stops_on_sigterm(tmp_path, gpu):
    inst, p = instance(tmp_path, "ready")
    si.act(inst, {"action": "start", "fingerprint": "fp"})
    assert wait_for(lambda: any('"ready"' in line for line in open(str(tmp_path / "events.jsonl"))) if os.path.exists(
        str(tmp_path / "events.jsonl")) else False)
    res = si.act(inst, {"action": "stop"})
    assert res["was_running"] and res["stopped"] == dict(res["stopped"], grace=None, killed=False)
    assert res["orphans"] == {"checked": True, "ended": [], "left": []}


def test_what_a_detached_scheduler_leaves_on_the_gpu_is_ended_and_nothing_else(tmp_path, gpu):
    inst, p = instance(tmp_path, "ready", {"SGLANG_DOUBLE_DETACH": "1"})
    # a process that is not the instance's, on the same GPU: never touched
    foreign = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    (gpu / str(foreign.pid)).write_text(json.dumps({"used_memory": 5000, "process_name": "someone-else"}))
    try:
        si.act(inst, {"action": "start", "fingerprint": "fp"})
        assert wait_for(lambda: len(listed()) == 4)  # two schedulers, the detached one, the foreign process
        res = si.act(inst, {"action": "stop", "stop_grace_unready": 2})
        ended = res["orphans"]["ended"]
        assert len(ended) == 1 and ended[0]["why"] == "environment" and ended[0]["used_memory_mib"] == 1000
        assert "sglang" in ended[0]["cmdline"] and ended[0]["signal"] == "TERM"
        assert any("left on the GPU" in c for c in res["changes"])
        assert listed() == [foreign.pid] and foreign.poll() is None
    finally:
        foreign.send_signal(signal.SIGKILL)
        foreign.wait()


def test_without_the_sweep_the_detached_scheduler_outlives_the_stop(tmp_path, gpu):
    """The baseline the sweep fixes: the supervisor's process-group kill does not reach it."""
    inst, p = instance(tmp_path, "ready", {"SGLANG_DOUBLE_DETACH": "1"})
    si.act(inst, {"action": "start", "fingerprint": "fp"})
    assert wait_for(lambda: len(listed()) == 3)
    assert server_supervise.stop_server(p["pid_file"], 10) == "stopped"
    assert wait_for(lambda: len(listed()) == 1, 5)
    left = listed()
    assert orphans.why_ours(left[0], "t") == "environment" and orphans.why_ours(left[0], "other") is None
    assert orphans.sweep("t", grace=2, run=local_run)["ended"][0]["pid"] == left[0]
    assert listed() == []


def test_why_ours_reads_cgroup_environment_and_process_group(tmp_path):
    proc = tmp_path / "proc"
    for pid, cgroup, environ, stat in (
            (10, "0::/system.slice/sglang-t.service\n", b"A=1\0", "10 (python) S 1 10 10"),
            (11, "0::/user.slice\n", b"LLMSERVE_SGLANG_INSTANCE=t\0", "11 (python) S 1 11 11"),
            (12, "0::/user.slice\n", b"LLMSERVE_SGLANG_INSTANCE=tt\0", "12 (python) S 1 500 500"),
            (13, "0::/user.slice\n", b"", "13 (py) thon) S 1 12 500"),
            (14, "0::/system.slice/sglang-t.service.d\n", b"", "14 (x) S 1 14 14")):
        d = proc / str(pid)
        d.mkdir(parents=True)
        (d / "cgroup").write_text(cgroup)
        (d / "environ").write_bytes(environ)
        (d / "stat").write_text(stat)
    got = dict((pid, orphans.why_ours(pid, "t", "sglang-t.service", [500], str(proc))) for pid in (10, 11, 12, 13, 14))
    assert got == {10: "cgroup", 11: "environment", 12: "process group", 13: "process group", 14: None}
    assert orphans.why_ours(12, "t", "sglang-t.service", [], str(proc)) is None  # tt is another instance


def test_the_sweep_never_signals_init_the_caller_or_the_callers_group(gpu):
    """#42: even named as the server (a pid file's pid 1, the caller's own group) and listed on a GPU."""
    for pid in (1, os.getpid()):
        (gpu / str(pid)).write_text(json.dumps({"used_memory": 1000, "process_name": "python3"}))
    sent = []
    res = orphans.sweep("t", None, [1, os.getpgrp(), os.getpid()], grace=0, run=local_run,
                        kill=lambda pid, sig: sent.append((pid, sig)))
    assert res == {"checked": True, "ended": [], "left": []} and sent == []
    assert orphans.why_ours(os.getpid(), "t", None, [os.getpgrp()]) is None
    assert orphans.why_ours(os.getpid(), "t", None, [1]) is None


# -- issue 38: a stopped tree cannot act on SIGTERM: it is killed at once, no grace waited ---------------------------
def dead(pid):
    st = server_supervise.proc_state(pid)
    return st is None or st[0] in ("Z", "X")  # gone, or a zombie its (killed) parent no longer reaps


def _stop_group(server):
    os.killpg(server, signal.SIGSTOP)
    assert wait_for(lambda: server_supervise.stopped_in_group(server) and all(
        server_supervise.proc_state(p)[0] in ("T", "t") for p in server_supervise.stopped_in_group(server)))


def test_a_tree_whose_processes_are_all_stopped_is_killed_at_once(tmp_path, gpu):
    inst, p = instance(tmp_path, "frozen:dist_init", stop_timeout=600)
    server = si.act(inst, {"action": "start", "fingerprint": "fp"})["state"]["pid"]
    assert wait_for(lambda: len(listed()) == 2)
    _stop_group(server)  # every process of the server stopped (state T), as the H200 capture froze it
    members = server_supervise.stopped_in_group(server)
    assert len(members) >= 3  # launcher and both schedulers
    res = si.act(inst, {"action": "recover", "on_failure": "stop", "stop_grace_unready": 30})
    # no grace was waited: the stop saw the stopped members and sent SIGKILL at once
    assert res["stopped"]["at_once"] and res["stopped"]["killed"]
    assert any("SIGKILL at once" in c for c in res["changes"])
    assert res["state"]["active_state"] == "inactive"
    assert all(dead(m) for m in members)
    assert wait_for(lambda: listed() == [], 10)


def test_one_stopped_member_is_enough_to_skip_the_grace(tmp_path, gpu):
    inst, p = instance(tmp_path, "frozen:dist_init", stop_timeout=600)
    server = si.act(inst, {"action": "start", "fingerprint": "fp"})["state"]["pid"]
    assert wait_for(lambda: len(listed()) == 2)
    one = [a for a in listed() if a != server][0]
    os.kill(one, signal.SIGSTOP)
    assert wait_for(lambda: server_supervise.stopped_in_group(server) == [one])
    how = server_supervise.stop_server(p["pid_file"], 30)
    assert how == "stopped (killed at once: 1 stopped process)"
    assert dead(one) and dead(server)


def test_a_running_frozen_tree_still_gets_sigterm_and_the_grace(tmp_path, gpu):
    # the other side: nothing stopped, so SIGTERM goes first and the kill waits the (short) grace
    inst, p = instance(tmp_path, "frozen:load_weights", stop_timeout=600)
    si.act(inst, {"action": "start", "fingerprint": "fp"})
    assert wait_for(lambda: len(listed()) == 2)
    res = si.act(inst, {"action": "recover", "on_failure": "stop", "stop_grace_unready": 1})
    assert not res["stopped"]["at_once"]


def test_a_stopped_orphan_is_killed_without_the_grace(tmp_path, gpu):
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True,
                              env=dict(os.environ, **{orphans.MARKER: "t"}))
    try:
        (gpu / str(orphan.pid)).write_text(json.dumps({"used_memory": 1000, "process_name": "python"}))
        os.kill(orphan.pid, signal.SIGSTOP)
        assert wait_for(lambda: server_supervise.proc_state(orphan.pid)[0] in ("T", "t"))
        res = orphans.sweep("t", grace=30, run=local_run)
        assert [o["signal"] for o in res["ended"]] == ["KILL"] and res["left"] == []
    finally:
        orphan.kill()
        orphan.wait()
