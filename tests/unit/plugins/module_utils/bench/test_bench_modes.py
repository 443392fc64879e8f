# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/bench/modes.py on the REAL /server_info of SGLang 0.5.15.post1 (the H200 runs): each benchmark mode
against what the server runs, and the refusal with its fix. Also the engine choice of bench_serving
(client.choose_engine) with a real interpreter and a module that is found but does not import."""
import testpaths
import copy
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import client, modes

EVIDENCE = os.path.join(testpaths.REPO, "docs", "evidence", "real-sglang-h200")
SPEC = {"algorithm": "EAGLE3", "draft_model_path": "/srv/models/eagle3-tiny", "num_steps": 3, "eagle_topk": 1}


def load(*parts):
    with open(os.path.join(EVIDENCE, *parts)) as handle:
        return json.load(handle)


@pytest.fixture(name="eagle3_info")
def fixture_eagle3_info():
    return load("eagle3", "server_info.txt")


@pytest.fixture(name="base_info")
def fixture_base_info():
    return load("run1", "base", "after_server_info.json")


def test_facts_read_what_the_real_servers_run(eagle3_info, base_info):
    spec = modes.server_facts(eagle3_info)
    assert (spec["version"], spec["algorithm"], spec["draft_model_path"], spec["num_steps"]) == \
        ("0.5.15.post1", "EAGLE3", "/srv/models/eagle3-tiny", 3)
    assert spec["adaptive"] is False and spec["disable_cuda_graph"] is True and spec["cuda_graph_bs"] is None
    assert spec["accept_length"] == pytest.approx(1.0)
    base = modes.server_facts(base_info)
    assert base["algorithm"] is None and base["draft_model_path"] is None and base["num_steps"] is None


def test_each_mode_accepts_its_own_server(eagle3_info, base_info):
    base = modes.server_facts(base_info)
    spec = modes.server_facts(eagle3_info)
    assert modes.refusal("baseline", {"algorithm": ""}, base) is None
    assert modes.refusal("eagle3", dict(SPEC, adaptive=False), spec) is None
    adaptive = modes.server_facts(dict(eagle3_info, speculative_adaptive=True,
                                       speculative_adaptive_config="/etc/sglang/default/adaptive.json"))
    assert modes.refusal("eagle3_threshold", dict(SPEC, adaptive=True), adaptive) is None
    assert modes.refusal("eagle3_adaptive", dict(SPEC, adaptive=True),
                         modes.server_facts(dict(eagle3_info, speculative_adaptive=True))) is None


def test_a_baseline_that_runs_eagle3_is_refused_with_the_fix(eagle3_info):
    # What happened on the H200: -e server_speculative=... outranked the baseline's own setting.
    why = modes.refusal("baseline", {"algorithm": ""}, modes.server_facts(eagle3_info))
    assert why.startswith("benchmark mode baseline means no speculation, but the server runs EAGLE3")
    assert "-e server_speculative" in why and "-e benchmark_speculative" in why


def test_speculative_modes_check_algorithm_draft_steps_and_adaptive(eagle3_info, base_info):
    spec = modes.server_facts(eagle3_info)
    assert modes.problems("eagle3", SPEC, modes.server_facts(base_info)) == ["speculative_algorithm is none"]
    assert modes.problems("eagle3", dict(SPEC, draft_model_path="/srv/models/other"), spec) == \
        ["the draft is /srv/models/eagle3-tiny, not /srv/models/other"]
    assert modes.problems("eagle3", dict(SPEC, num_steps=5), spec) == ["num_steps is 3, not 5"]
    found = modes.problems("eagle3_threshold", SPEC, spec)
    assert len(found) == 1 and found[0].startswith("speculative_adaptive is False, not True (")
    assert modes.ADAPTIVE_DISABLED in found[0]
    adaptive_default = modes.server_facts(dict(eagle3_info, speculative_adaptive=True))
    assert "no --speculative-adaptive-config" in modes.problems("eagle3_threshold", SPEC, adaptive_default)[0]
    assert modes.problems("eagle3", SPEC, adaptive_default) == ["speculative_adaptive is True, not False"]
    assert modes.problems("nope", SPEC, spec)[0].startswith("unknown benchmark mode 'nope'")


def test_captured_sizes_come_from_the_server_when_graphs_are_on(eagle3_info):
    info = copy.deepcopy(eagle3_info)
    info["disable_cuda_graph"] = False
    info["cuda_graph_config"]["decode"]["backend"] = "full"
    facts = modes.server_facts(info)
    assert facts["cuda_graph_bs"][:9] == [1, 2, 3, 4, 5, 6, 7, 8, 10] and facts["cuda_graph_max_bs"] == 256


def _run(argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture(name="fake_sglang")
def fixture_fake_sglang(tmp_path, monkeypatch):
    """A package tree where find_spec finds both client modules: one imports a missing module, one runs."""
    pkg = tmp_path / "sglang"
    (pkg / "benchmark").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "benchmark" / "__init__.py").write_text("")
    (pkg / "benchmark" / "serving.py").write_text("import datasets\n")
    (pkg / "bench_serving.py").write_text("import argparse\nargparse.ArgumentParser().parse_args()\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return pkg


def test_auto_takes_sglangs_client_only_when_it_runs(fake_sglang):
    engine, note = client.choose_engine("auto", sys.executable, _run, modules=("sglang.benchmark.serving",))
    assert engine == "builtin"
    assert "No module named 'datasets'" in note and "built-in" in note
    assert client.choose_engine("sglang", sys.executable, _run, modules=("sglang.benchmark.serving",))[0] is None
    engine, note = client.choose_engine("auto", sys.executable, _run)
    assert engine == "sglang.bench_serving" and "runs in" in note
    (fake_sglang / "benchmark" / "serving.py").write_text("import argparse\nargparse.ArgumentParser().parse_args()\n")
    assert client.choose_engine("auto", sys.executable, _run)[0] == "sglang.benchmark.serving"


def test_builtin_and_missing_python():
    assert client.choose_engine("builtin", "/nope", _run) == ("builtin", "asked for")
    assert client.choose_engine("auto", None, _run)[0] == "builtin"


CONF = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4,
        "adaptive": True, "adaptive_config": {"1": {"candidate_steps": [3]}}}


def test_launch_of_each_mode():
    env = {"A": "1"}
    assert modes.launch("baseline", CONF, env=env) == {"speculative": {"algorithm": ""}, "env": {"A": "1"}, "args": {}}
    eagle3 = modes.launch("eagle3", CONF, env=env)["speculative"]
    assert eagle3 == dict(CONF, adaptive=False, adaptive_config=None)
    # static EAGLE-3 is the topk-1 chain with explicit steps, whatever the configured tree
    tree = modes.launch("eagle3", dict(CONF, eagle_topk=4, num_steps=None, num_draft_tokens=8))["speculative"]
    assert (tree["eagle_topk"], tree["num_steps"], tree["num_draft_tokens"]) == (1, 3, 4)
    adaptive = modes.launch("eagle3_adaptive", dict(CONF, eagle_topk=4, num_draft_tokens=9))["speculative"]
    assert adaptive == dict(CONF, adaptive=True, eagle_topk=1, adaptive_config=None, num_draft_tokens=4)
    assert modes.launch("eagle3_adaptive", dict(CONF, num_steps=None))["speculative"]["num_draft_tokens"] is None
    applied = {"algorithm": "EAGLE3", "draft_model_path": "/d", "adaptive": True, "adaptive_config": {"8": {}}}
    assert modes.launch("eagle3_threshold", CONF, applied)["speculative"] == applied
    assert modes.launch("applied", CONF, {"algorithm": ""})["speculative"] == {"algorithm": ""}
    nccl = modes.launch("allreduce_nccl", CONF, env=env)
    assert nccl["speculative"] == CONF and nccl["env"] == {"A": "1", "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "0"}
    assert modes.launch("allreduce_pcie_ipc", CONF)["env"] == {"SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1"}
    assert env == {"A": "1"} and CONF["adaptive"] is True  # inputs untouched


def test_each_launch_is_what_the_mode_check_accepts():
    # the server that runs a mode's launch passes the mode's own check (one home for what a mode means)
    for mode in ("baseline", "eagle3", "allreduce_nccl"):
        spec = modes.launch(mode, CONF)["speculative"]
        facts = {"algorithm": "EAGLE3" if spec.get("algorithm") else None, "draft_model_path": "/d", "num_steps": 3,
                 "adaptive": bool(spec.get("adaptive")), "adaptive_config": None}
        assert modes.problems(mode, spec, facts) == [], mode


def test_launch_refuses_an_unknown_mode_and_a_threshold_without_a_setting():
    with pytest.raises(ValueError, match="unknown benchmark mode"):
        modes.launch("fast", CONF)
    with pytest.raises(ValueError, match="the adaptive setting of the measured crossover"):
        modes.launch("eagle3_threshold", CONF)
    with pytest.raises(ValueError, match="the setting benchmark_apply chose"):
        modes.launch("applied", CONF)


@pytest.mark.parametrize("given,want", [({}, {"max-running-requests": 256, "cuda-graph-max-bs": 256}),
                                        ({"max-running-requests": 512, "cuda-graph-max-bs": 160},
                                         {"max-running-requests": 512, "cuda-graph-max-bs": 160}),
                                        ({"max-running-requests": 255}, {"max-running-requests": 256,
                                                                         "cuda-graph-max-bs": 256})])
def test_every_mode_can_fill_the_largest_batch(given, want):
    # 0.5.15.post1 caps an EAGLE server's running batch at 48 without --max-running-requests (issue 34)
    for mode in ("baseline", "eagle3"):
        args = modes.launch(mode, CONF, args=given, max_batch=256)["args"]
        assert args == dict(want, **{"enable-metrics": True}), mode
    assert modes.launch("baseline", CONF, args=given)["args"] == given


def test_applied_mode_checks_what_was_applied():
    static = modes.launch("eagle3", CONF)["speculative"]
    facts = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "adaptive": False, "eagle_topk": 1}
    assert modes.problems("applied", static, facts) == []
    assert modes.problems("applied", {"algorithm": ""}, {"algorithm": None}) == []
    assert modes.problems("applied", {"algorithm": ""}, facts)[0].startswith("speculative_algorithm is EAGLE3")
    assert modes.problems("applied", dict(static, adaptive=True), facts)[0].startswith(
        "speculative_adaptive is False, not True (when a launch asks for adaptive and SGLang logs "
        "'speculative_adaptive disabled:")
    assert modes.problems("eagle3", static, dict(facts, eagle_topk=4)) == [
        "eagle_topk is 4, not 1 (static EAGLE-3 is measured as the topk-1 chain adaptive runs)"]
