# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The progress line of the server_ready action plugin, for the results the module can hand back."""
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
