# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift (issue 37): where the launcher ends in a process argv, the /proc cmdline bytes, the flag table, every
phase and the whole report line in each of its branches, word for word (the line is what the operator reads)."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import drift

WEIGHTS = {"load_weight": 1, "kv_cache_allocation": 2.5, "cuda_graph": {"b": 3, "a": 4.25, "bad": "x"},
           "scheduler_e2e": 12.345, "tokenizer_e2e": 6, "other": 7}
WEIGHTS_PHASES = [("load_weight", 1.0), ("kv_cache_allocation", 2.5), ("cuda_graph.a", 4.25), ("cuda_graph.b", 3.0),
                  ("scheduler_e2e", 12.345), ("tokenizer_e2e", 6.0)]
WEIGHTS_WORDS = ("load_weight 1.0 s, kv_cache_allocation 2.5 s, cuda_graph.a 4.2 s, cuda_graph.b 3.0 s, "
                 "scheduler_e2e 12.3 s, tokenizer_e2e 6.0 s")


@pytest.mark.parametrize("cmdline, args", [
    (None, []),
    ([], []),
    (["python3", "-m", "sglang.launch_server", "--port", "1"], ["--port", "1"]),
    (["sglang.launch_server.py", "--a"], ["--a"]),
    (["python", "/opt/x/sglang/launch_server.py", "--a", "b"], ["--a", "b"]),
    (["python", "launch_server.py", "--a"], ["python", "launch_server.py", "--a"]),
    (["python", "sglang/launch_server.py", "--a"], ["python", "sglang/launch_server.py", "--a"]),
    (["/usr/bin/sglang", "serve", "--a"], ["--a"]),
    (["sglang", "serve", "--a"], ["--a"]),
    (["sglangx", "serve", "--a"], ["sglangx", "serve", "--a"]),
    # "serve" first: nothing before it names sglang (argv[-1] does, and must not count)
    (["serve", "--model", "/x/sglang"], ["serve", "--model", "/x/sglang"]),
    (["-m", "sglang.launch_server", "--x", "sglang.launch_server", "--y"], ["--x", "sglang.launch_server", "--y"]),
    ([1, "sglang.launch_server", 2], ["2"]),
])
def test_server_args_start_after_the_first_launcher(cmdline, args):
    assert drift.server_args(cmdline) == args


@pytest.mark.parametrize("raw, argv", [
    (None, []),
    (b"", []),
    ("", []),
    (b"a\0b\0\0", ["a", "b"]),
    ("a\0\0b", ["a", "b"]),
    (b"\xff\0a\0", ["\ufffd", "a"]),
    (b"--x=\xc3\0", ["--x=\ufffd"]),
])
def test_parse_cmdline_splits_on_nul_and_replaces_bad_bytes(raw, argv):
    assert drift.parse_cmdline(raw) == argv


def test_flags_table_word_for_word():
    argv = ["stray", 5, "--a", "1", 2, "--b=3", "--c", "--d=", "y", "--a"]
    assert drift.flags(argv) == {"--a": (), "--b": ("3",), "--c": (), "--d": ("", "y")}
    assert drift.flags(["lead", "--x", "v"]) == {"--x": ("v",)}
    assert drift.flags(None) == {}


@pytest.mark.parametrize("configured, running, same", [
    (["--a", "1"], ["--a", "1"], True),
    (["--a", "1", "--b"], ["--a", "1"], False),      # only missing
    (["--a", "1"], ["--a", "1", "--b"], False),      # only extra
    (["--a", "1"], ["--a", "2"], False),             # only changed
    (["--a", "1", "--b"], ["--a", "1", "--c"], False),
])
def test_same_only_when_nothing_changed_missing_or_extra(configured, running, same):
    assert drift.compare(configured, running)["same"] is same


def test_compare_word_for_word():
    d = drift.compare(["--a", "1", "--b", "--config", "x", "--api-key", "k1", "--bare"],
                      ["--a", "2", "3", "--c", "--config", "y", "--api-key", "k2", "--bare", "v"])
    assert d == {"same": False, "missing": ["--b"], "extra": ["--c"],
                 "changed": [{"flag": "--a", "configured": "1", "running": "2 3"},
                             {"flag": "--bare", "configured": "(set)", "running": "v"}]}


def test_phases_in_start_up_order_and_only_numbers():
    got = drift.phases(WEIGHTS)
    assert got == WEIGHTS_PHASES and all(isinstance(s, float) for _p, s in got)
    assert drift.phases({"cuda_graph": [1], "load_weight": "1", "tokenizer_e2e": None}) == []
    assert drift.phases({"cuda_graph": {"z": 1}, "scheduler_e2e": 0}) == [("cuda_graph.z", 1.0), ("scheduler_e2e", 0.0)]
    assert drift.phases(["load_weight", 1]) == [] and drift.phases(None) == []


def test_report_without_a_running_side_word_for_word():
    want = {"source": None, "drift": None, "phases": WEIGHTS_PHASES,
            "msg": "drift: unknown (no /server_info launch_command and no running process)"}
    assert drift.report(["--a"], {"startup_time": WEIGHTS}) == want
    assert drift.report(["--a"], {"startup_time": WEIGHTS, "launch_command": "  "}, []) == want
    assert drift.report(["--a"], {"startup_time": WEIGHTS, "launch_command": ["--a"]}, None) == want
    assert drift.report(["--a"], "not a dict", None) == dict(want, phases=[])


def test_report_without_a_recorded_configuration_word_for_word():
    want = {"source": "launch_command", "drift": None, "phases": WEIGHTS_PHASES,
            "msg": "drift: unknown (no recorded configuration: deploy with roles/server first)"}
    assert drift.report(None, {"startup_time": WEIGHTS, "launch_command": "--a"}) == want
    assert drift.report(None, {"startup_time": WEIGHTS}, ["sglang.launch_server", "--a"]) == dict(want, source="process argv")


def test_report_same_word_for_word():
    r = drift.report(["--a", "1"], {"startup_time": WEIGHTS, "launch_command": " --a  1 "})
    assert r == {"source": "launch_command", "phases": WEIGHTS_PHASES,
                 "drift": {"same": True, "changed": [], "missing": [], "extra": []},
                 "msg": "drift: none: runs what is configured (launch_command); start-up phases: " + WEIGHTS_WORDS}


def test_report_drift_word_for_word():
    # a blank launch_command falls back to the process argv
    r = drift.report(["--tp-size", "8", "--a", "--b", "x"], {"launch_command": " "},
                     ["python", "-m", "sglang.launch_server", "--tp-size", "4", "--c", "--d", "--b", "y"])
    assert r["source"] == "process argv" and r["phases"] == []
    assert r["msg"] == ("drift: DRIFT (process argv): --b x -> y; --tp-size 8 -> 4; --a configured, not running; "
                        "--c running, not configured; --d running, not configured - restart to apply (playbooks/restart.yml); "
                        "start-up phases: not reported (SGLang < 0.5.20)")
