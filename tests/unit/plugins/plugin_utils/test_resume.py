# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/_resume: the one resume loop of the live-progress actions (server_ready, model_stage)."""
from ansible_collections.llmserve.sglang.plugins.plugin_utils._resume import run_resumable


class Action(object):
    """Stands in for ActionBase._execute_module: two pending slices, then the end; records what it was given."""

    def __init__(self):
        self.calls = []

    def _execute_module(self, module_name, module_args, task_vars):
        self.calls.append((module_name, dict(module_args)))
        n = len(self.calls)
        if n < 3:
            return {"_thing_pending": True, "_thing_state": {"slice": n}, "progress": n}
        return {"done": True, "_thing_pending": False, "_thing_state": None}


def test_each_call_resumes_from_the_last_state_and_the_end_is_returned_clean():
    action, seen = Action(), []
    res = run_resumable(action, "ns.c.thing", {"a": 1}, {}, "thing", seen.append)
    assert res == {"done": True}
    assert seen == [{"progress": 1}, {"progress": 2}]
    assert [c[1] for c in action.calls] == [{"a": 1}, {"a": 1, "resume_state": {"slice": 1}},
                                            {"a": 1, "resume_state": {"slice": 2}}]


def test_a_pending_answer_without_state_ends_the_loop():
    class Broken(Action):
        def _execute_module(self, module_name, module_args, task_vars):
            self.calls.append(module_args)
            return {"failed": True, "_thing_pending": True}
    action = Broken()
    assert run_resumable(action, "m", {}, {}, "thing", lambda r: None) == {"failed": True}
    assert len(action.calls) == 1
