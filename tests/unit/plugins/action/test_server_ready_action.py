# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The progress line of the server_ready action plugin, for the results the module can hand back."""
import pytest

from ansible_collections.llmserve.sglang.plugins.action.server_ready import ActionModule

line = ActionModule._line


def test_a_verdict_names_reason_and_category():
    assert line("h", {"failed": True, "elapsed": 3, "reason": "crashed", "category": "oom_kv"}, False) == \
        "[h] 3s FAILED crashed: oom_kv"


def test_a_failure_that_is_no_verdict_shows_its_message_not_none():
    res = {"failed": True, "msg": "MODULE FAILURE\nSee stdout/stderr for the exact error", "module_stderr": "x"}
    out = line("h", res, False)
    assert out == "[h] 0s FAILED: MODULE FAILURE" and "None" not in out


def test_progress_and_ready():
    assert line("h", {"elapsed": 12, "stage_label": "loading weights 50%", "cpu_seconds": 30}, True) == \
        "[h] 12s loading weights 50% (cpu 30s)"
    assert line("h", {"elapsed": 40, "server": {"served_model": "m"}}, False) == "[h] 40s ready (m)"


def _decide(monkeypatch, res):
    from types import SimpleNamespace
    from ansible_collections.llmserve.sglang.plugins.action import server_ready
    monkeypatch.setattr(server_ready, "run_resumable", lambda *a: dict(res))
    act = object.__new__(ActionModule)
    act._play_context = SimpleNamespace(check_mode=False)
    return act.decide({}, {"inventory_hostname": "h"}, {})


def test_the_verdict_is_a_key_of_its_own_so_a_registered_wait_keeps_it(monkeypatch):
    # roles/server registers the wait with failed_when false (Ansible then sets failed to false): ready says how it went
    assert _decide(monkeypatch, {"failed": True, "reason": "crashed", "category": "oom_kv"})["ready"] is False
    assert _decide(monkeypatch, {"elapsed": 3.0, "stage": "ready"})["ready"] is True


# ---- the real ActionModule, in process (tests/unit/actionkit.py); the host's server_ready module is scripted

def pending(stage, elapsed, state, **kw):
    """A slice of the wait that is not done: the module hands back its state to be called again with."""
    return dict(kw, stage=stage, elapsed=elapsed, _server_ready_pending=True, _server_ready_state=state)


def wait(capsys, args, *answers, **kw):
    import actionkit
    host = actionkit.Host(*answers)
    res = actionkit.run("server_ready", args, kw.pop("task_vars", {"inventory_hostname": "gpu1"}), host=host, **kw)
    return res, host, capsys.readouterr().out.splitlines()


def test_the_wait_resumes_with_the_modules_state_and_prints_each_new_line_once(capsys):
    from ansible_collections.llmserve.sglang.plugins.action import server_ready
    res, host, lines = wait(capsys, {"url": "http://127.0.0.1:30000"},
                            pending("load_weights", 1, {"n": 1}), pending("load_weights", 1.2, {"n": 2}),
                            pending("cuda_graph", 9, {"n": 3}, stage_label="capturing CUDA graphs"),
                            {"stage": "ready", "elapsed": 20, "server": {"served_model": "kimi"}})
    assert lines == ["[gpu1] 1s load_weights", "[gpu1] 9s capturing CUDA graphs", "[gpu1] 20s ready (kimi)"]
    assert [m for m, _a in host.calls] == ["llmserve.sglang.server_ready"] * 4
    assert [a.get("resume_state") for a in host.args] == [None, {"n": 1}, {"n": 2}, {"n": 3}]
    # left out, the slice is the action's own: a progress line at least that often
    assert all(a["progress_interval"] == server_ready.DEFAULT_PROGRESS > 0 for a in host.args)
    assert res == {"stage": "ready", "elapsed": 20, "server": {"served_model": "kimi"}, "ready": True}


def test_a_progress_interval_the_task_gives_is_kept(capsys):
    _res, host, _lines = wait(capsys, {"url": "u", "progress_interval": 2.5}, {"stage": "ready", "elapsed": 1})
    assert host.args == [{"url": "u", "progress_interval": 2.5}]


def test_a_failed_wait_fails_and_says_why(capsys):
    verdict = {"failed": True, "elapsed": 31, "reason": "crashed", "category": "oom_kv", "msg": "out of memory"}
    res, _host, lines = wait(capsys, {"url": "u"}, pending("load_weights", 3, {"n": 1}), verdict)
    assert res["failed"] is True and res["ready"] is False and res["reason"] == "crashed"
    assert lines == ["[gpu1] 3s load_weights", "[gpu1] 31s FAILED crashed: oom_kv"]


def test_check_mode_prints_no_verdict_line(capsys):
    res, _host, lines = wait(capsys, {"url": "u"}, pending("load_weights", 3, {"n": 1}), {"elapsed": 4, "skipped": True},
                             check_mode=True)
    assert lines == ["[gpu1] 3s load_weights"] and res["ready"] is True


def test_a_host_without_a_name_is_shown_as_a_question_mark(capsys):
    _res, _host, lines = wait(capsys, {"url": "u"}, {"elapsed": 2}, task_vars={})
    assert lines == ["[?] 2s ready"]


@pytest.mark.parametrize("res, pending_, shown", [
    ({"stage": "load"}, True, "[h] 0s load"),
    ({"elapsed": None}, True, "[h] 0s ?"),
    ({"elapsed": 2.6, "stage_label": "", "stage": "load"}, True, "[h] 3s load"),
    ({"elapsed": 1, "stage": "load", "cpu_seconds": 0}, True, "[h] 1s load (cpu 0s)"),
    ({"elapsed": 1, "stage": "load", "cpu_seconds": None}, True, "[h] 1s load"),
    ({"elapsed": 1, "server": None}, False, "[h] 1s ready"),
    ({"elapsed": 1, "server": {"served_model": ""}}, False, "[h] 1s ready"),
    ({"elapsed": 1, "failed": True}, False, "[h] 1s FAILED: no message"),
    ({"elapsed": 1, "failed": True, "msg": ""}, True, "[h] 1s FAILED: no message"),
    ({"elapsed": 1, "failed": True, "reason": "stalled"}, True, "[h] 1s FAILED stalled: None"),
])
def test_the_line_for_each_answer(res, pending_, shown):
    assert line("h", res, pending_) == shown


def test_a_long_message_is_cut_to_300_characters():
    text = "".join(chr(ord("a") + i % 26) for i in range(400))
    out = line("h", {"failed": True, "msg": text + "\nsecond line"}, False)
    assert out == "[h] 0s FAILED: " + text[:300]
    assert line("h", {"failed": True, "msg": text[:300]}, False) == out
