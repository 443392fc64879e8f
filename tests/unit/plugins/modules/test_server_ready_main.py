# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's main(), in process: the waiter's verdict decides the module's exit - a failed wait fails the task
with its reason and category, a ready one exits 0, an unfinished one hands its state back to the action. Check mode
validates without waiting, bad options fail before anything is probed with their reason, and the real waiter's
verdicts reach the task whole."""
import json
import os
import subprocess
import sys

import pytest
from ansible.module_utils.testing import patch_module_args
from netutil import JSONHandler, serve

from ansible_collections.llmserve.sglang.plugins.module_utils.host import run as host_run
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import waiter as waiter_mod
from ansible_collections.llmserve.sglang.plugins.modules import server_ready


class FakeWaiter(object):
    result = None

    def __init__(self, params, state=None, run=None):
        self.params = params

    def run(self, budget=None, return_on_stage_change=False):
        return dict(self.result)


def main(monkeypatch, capsys, result):
    FakeWaiter.result = result
    monkeypatch.setattr(server_ready, "Waiter", FakeWaiter)
    with patch_module_args({"url": "http://127.0.0.1:30000", "pid": 4242}):
        with pytest.raises(SystemExit) as ended:
            server_ready.main()
    return ended.value.code, json.loads(capsys.readouterr().out)


def test_a_failed_wait_fails_the_task(monkeypatch, capsys):
    code, out = main(monkeypatch, capsys, {"done": True, "failed": True, "reason": "crashed", "category": "oom_kv",
                                           "msg": "crashed: oom_kv", "elapsed": 3.0})
    assert code == 1 and out["failed"] is True and out["reason"] == "crashed" and out["category"] == "oom_kv"


def test_a_ready_wait_exits_zero(monkeypatch, capsys):
    code, out = main(monkeypatch, capsys, {"done": True, "elapsed": 3.0, "stage": "ready", "msg": "ready"})
    assert code == 0 and not out.get("failed") and out["stage"] == "ready" and out["changed"] is False


def test_an_unfinished_wait_hands_its_state_back(monkeypatch, capsys):
    code, out = main(monkeypatch, capsys, {"done": False, "elapsed": 1.0, "state": {"seen": 1}})
    assert code == 0 and out["_server_ready_pending"] is True and out["_server_ready_state"] == {"seen": 1}
    assert "failed" not in out


# -- the module as users call it: its documented options, check mode, refusals and the real waiter ---------------

NOT_RUNNING = 2 ** 22 + 12345  # above pid_max's ceiling: never a running process


class Recording(waiter_mod.Waiter):
    """The real waiter, recording what main() gives it; its run() ends at once with the given result."""
    seen = []
    result = None

    def __init__(self, params, state=None, run=None, **kw):
        Recording.seen.append({"params": dict(params), "state": state, "run": run})
        super(Recording, self).__init__(params, state=state, run=run, **kw)

    def run(self, budget=None, return_on_stage_change=False):
        Recording.seen[-1]["run_args"] = (budget, return_on_stage_change)
        return dict(self.result)


def call(monkeypatch, capsys, args, result=None, waiter=Recording):
    Recording.seen = []
    Recording.result = result or {"done": True, "failed": False, "elapsed": 1.0, "stage": "ready", "msg": "ready"}
    monkeypatch.setattr(server_ready, "Waiter", waiter)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as ended:
            server_ready.main()
    return ended.value.code, json.loads(capsys.readouterr().out)


def test_check_mode_validates_and_does_not_wait(monkeypatch, capsys):
    code, out = call(monkeypatch, capsys, {"url": "http://127.0.0.1:9", "_ansible_check_mode": True})
    assert code == 0 and out == {"changed": False, "msg": "check mode: options valid, not waiting", "elapsed": 0,
                                 "invocation": out["invocation"]}
    assert len(Recording.seen) == 1 and "run_args" not in Recording.seen[0]
    # the same call outside check mode waits
    code, out = call(monkeypatch, capsys, {"url": "http://127.0.0.1:9"})
    assert code == 0 and Recording.seen[0]["run_args"] == (None, False) and out["msg"] == "ready"


def test_check_mode_still_refuses_bad_options(monkeypatch, capsys):
    code, out = call(monkeypatch, capsys, {"pid": NOT_RUNNING, "_ansible_check_mode": True})
    assert code == 1 and out["failed"] and out["reason"] == "not_running" and "is not running" in out["msg"]


@pytest.mark.parametrize("args, reason, words", [
    ({"pid": NOT_RUNNING}, "not_running", "%d is not running" % NOT_RUNNING),
    ({"timeout": 0}, "bad_input", "timeout must be a positive number of seconds, got 0.0"),
    ({"url": "localhost:30000"}, "bad_input", "is not an http(s)://host[:port] URL"),
    ({"node_rank": 1}, "bad_input", "always-200 stub"),
])
def test_bad_input_fails_before_waiting_with_its_reason(monkeypatch, capsys, args, reason, words):
    code, out = call(monkeypatch, capsys, args)
    assert code == 1 and out["failed"] is True and out["reason"] == reason and words in out["msg"]
    assert out["category"] == "unknown" and out["elapsed"] == 0 and "changed" not in out
    assert "run_args" not in Recording.seen[0]


def test_the_options_are_mutually_exclusive(monkeypatch, capsys):
    code, out = call(monkeypatch, capsys, {"unit": "sglang", "pid": os.getpid()})
    assert code == 1 and "mutually exclusive" in out["msg"] and "unit|pid|pid_file" in out["msg"]
    assert Recording.seen == []
    code, out = call(monkeypatch, capsys, {"pid": os.getpid()})
    assert code == 0 and Recording.seen[0]["params"]["pid"] == os.getpid()


def test_the_waiter_gets_the_set_options_typed_and_the_resume_state_apart(monkeypatch, capsys):
    code, out = call(monkeypatch, capsys, {"url": "http://127.0.0.1:9", "timeout": "90", "tail_lines": "7"})
    assert code == 0
    seen = Recording.seen[0]
    params = seen["params"]
    assert params["timeout"] == 90.0 and isinstance(params["timeout"], float) and params["tail_lines"] == 7
    assert params["stall_timeout"] == 600.0 and params["interval"] == 1.0 and params["node_rank"] == 0
    assert params["verify_generation"] is True and params["chat_probe"] is False and params["validate_certs"] is True
    assert params["stage_timeouts"] == {} and params["extra_patterns"] == []
    assert None not in params.values() and "resume_state" not in params and "progress_interval" not in params
    assert "pid" not in params and "health_path" not in params
    assert seen["state"] is None and seen["run_args"] == (None, False)


def test_a_resumed_call_hands_the_state_and_the_budget_to_the_waiter(monkeypatch, capsys):
    state = waiter_mod.Waiter({"url": "http://127.0.0.1:9"}).dump()
    code, out = call(monkeypatch, capsys, {"url": "http://127.0.0.1:9", "progress_interval": 2.5,
                                           "resume_state": state},
                     result={"done": False, "elapsed": 2.5, "stage": "init", "state": state})
    seen = Recording.seen[0]
    assert seen["state"] == state and seen["run_args"] == (2.5, True)
    assert "resume_state" not in seen["params"] and "progress_interval" not in seen["params"]
    # the state comes back as it went, unmasked (resume_state is no secret)
    assert code == 0 and out["_server_ready_pending"] is True and out["_server_ready_state"] == state
    assert out["changed"] is False and "state" not in out and "done" not in out


def test_the_waiter_runs_its_commands_in_the_c_locale_with_a_deadline(monkeypatch, capsys):
    call(monkeypatch, capsys, {"url": "http://127.0.0.1:9"})
    ran = []

    def fake_capture(cmd, env=None, data=None, timeout=None, cap=None):
        ran.append((cmd, env.get("LC_ALL"), timeout))
        return 0, b"", b"", None

    monkeypatch.setattr(host_run, "capture", fake_capture)
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    assert Recording.seen[0]["run"](["nvidia-smi", "-q"]) == (0, "", "")
    assert Recording.seen[0]["run"](["systemctl", "show"], timeout=3) == (0, "", "")
    assert ran == [(["nvidia-smi", "-q"], "C", 20), (["systemctl", "show"], "C", 3)]


class Broken(object):
    def __init__(self, params, state=None, run=None):
        raise RuntimeError("boom with secret-key-123 inside")


def test_the_waiters_own_failure_fails_the_task_naming_it(monkeypatch, capsys):
    code, out = call(monkeypatch, capsys, {"url": "http://127.0.0.1:9", "api_key": "secret-key-123"}, waiter=Broken)
    assert code == 1 and out["failed"] is True and out["changed"] is False and "done" not in out
    assert out["reason"] == "error" and out["category"] == "unknown" and out["elapsed"] == 0
    assert out["msg"].startswith("server_ready failed in __init__ (test_server_ready_main.py:")
    assert "RuntimeError: boom with" in out["msg"] and "secret-key-123" not in json.dumps(out)
    assert "boom with <api_key> inside" in out["msg"]  # blanked by the waiter's words, not only Ansible's no_log mask


def test_a_ready_result_is_returned_whole(monkeypatch, capsys):
    result = {"done": True, "failed": False, "elapsed": 4.2, "stage": "ready", "msg": "ready after 4s",
              "ready_by": "health+generation", "health_status": 200, "server": {"served_model": "m"}}
    code, out = call(monkeypatch, capsys, {"url": "http://127.0.0.1:9"}, result=result)
    assert code == 0 and out["changed"] is False and "failed" not in out and "done" not in out
    assert {k: out[k] for k in ("elapsed", "stage", "msg", "ready_by", "health_status", "server")} == {
        k: result[k] for k in ("elapsed", "stage", "msg", "ready_by", "health_status", "server")}


# -- the real waiter end to end, in process ---------------------------------------------------------------------

class _Server(JSONHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        answers = {"/health": {}, "/v1/models": {"data": [{"id": "kimi-k2.5"}]},
                   "/server_info": {"version": "0.5.19", "model_path": "/m"}}
        self.reply(200 if self.path in answers else 404, answers.get(self.path, {}))

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.reply(200, {"text": "x"})


@pytest.fixture
def ready_server():
    srv = serve(_Server)
    yield "http://127.0.0.1:%d" % srv.server_port
    srv.shutdown()
    srv.server_close()


def test_a_ready_server_exits_zero_with_its_facts(monkeypatch, capsys, ready_server):
    code, out = call(monkeypatch, capsys, {"url": ready_server, "sglang_version": "0.5.19"},
                     waiter=waiter_mod.Waiter)
    assert code == 0 and out["changed"] is False and "failed" not in out
    assert out["ready_by"] == "health+generation" and out["health_status"] == 200 and out["health_path"] == "/health"
    assert out["server"]["served_model"] == "kimi-k2.5" and out["stage"] == "ready"


def test_a_crashed_server_fails_the_task_with_the_diagnosis(monkeypatch, capsys, tmp_path):
    log = tmp_path / "server.log"
    log.write_text("usage: launch_server.py [-h] --model-path MODEL_PATH\n"
                   "launch_server.py: error: unrecognized arguments: --speculative-algo EAGLE3\n")
    p = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(0.3); sys.exit(2)"])
    try:
        code, out = call(monkeypatch, capsys, {"url": "http://127.0.0.1:9", "pid": p.pid, "log_path": str(log),
                                               "timeout": 60}, waiter=waiter_mod.Waiter)
    finally:
        p.wait()
    assert code == 1 and out["failed"] is True and out["changed"] is False and "done" not in out
    assert out["reason"] == "crashed" and out["category"] == "bad_args" and out["process"]["exit_status"] == 2
    assert "unrecognized arguments" in out["key_line"] and "bad_args" in out["msg"]
