# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's main(), in process: the waiter's verdict decides the module's exit - a failed wait fails the task
with its reason and category, a ready one exits 0, an unfinished one hands its state back to the action."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args

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
