# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bench_plan action in process (tests/unit/actionkit.py): what a benchmark mode launches from the instance's
settings (the inventory's, else the one set of defaults), the speculation the task gives, the adaptive setting of
the crossover measured so far; a refused input fails the task by name. test_bench_plan_action.py runs the same
through ansible-playbook."""
import pytest
from ansible.errors import AnsibleActionFail

import actionkit

SPEC = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3}
INVENTORY = {"inventory_hostname": "gpu1", "server_env": {"NCCL_DEBUG": "WARN"}, "server_speculative": SPEC,
             "server_args": {"mem-fraction-static": 0.8}}
# a crossover: EAGLE-3 wins at 4 running requests and loses at 8 (bench_report.candidate: adaptive, threshold 5)
CROSSING = [{"mode": "baseline", "concurrency": 4, "decode_throughput": 240},
            {"mode": "baseline", "concurrency": 8, "decode_throughput": 480},
            {"mode": "eagle3", "concurrency": 4, "decode_throughput": 354},
            {"mode": "eagle3", "concurrency": 8, "decode_throughput": 354}]
META = {"sglang_version": "0.5.23", "speculative": SPEC}
# EAGLE-3 wins everywhere: no crossover, static EAGLE-3 is the answer
NO_CROSSING = [{"mode": "baseline", "concurrency": 4, "decode_throughput": 240},
               {"mode": "baseline", "concurrency": 8, "decode_throughput": 400},
               {"mode": "eagle3", "concurrency": 4, "decode_throughput": 400},
               {"mode": "eagle3", "concurrency": 8, "decode_throughput": 600}]


def plan(args, **tv):
    return actionkit.run("bench_plan", args, dict(INVENTORY, **tv))


def test_a_mode_launches_the_instances_settings_and_changes_nothing():
    res = plan({"mode": "allreduce_pcie_ipc"})
    assert res["speculative"] == SPEC and res["args"] == {"mem-fraction-static": 0.8}
    assert res["env"] == {"NCCL_DEBUG": "WARN", "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1"}
    assert res["mode"] == "allreduce_pcie_ipc" and res["changed"] is False and res["skip"] is False
    assert res["candidate"] is None and not res.get("failed")


def test_the_settings_are_templated_as_the_inventory_gives_them():
    from ansible.template import trust_as_template
    res = plan({"mode": "eagle3"}, server_speculative={"algorithm": "EAGLE3", "draft_model_path": "/d",
                                                       "num_steps": trust_as_template("{{ 2 + 2 }}")})
    assert res["speculative"]["num_steps"] == 4 and res["speculative"]["num_draft_tokens"] == 5


def test_the_speculation_the_task_gives_wins_over_the_instances():
    res = plan({"mode": "eagle3_adaptive", "speculative": {"draft_model_path": "/other", "num_steps": 5}})
    assert res["speculative"] == {"draft_model_path": "/other", "num_steps": 5, "adaptive": True, "eagle_topk": 1,
                                  "adaptive_config": None, "num_draft_tokens": 6}
    assert plan({"mode": "eagle3_adaptive"})["speculative"]["draft_model_path"] == "/d"


def test_without_any_setting_the_one_set_of_defaults_is_launched():
    res = actionkit.run("bench_plan", {"mode": "baseline"}, {"inventory_hostname": "gpu1"})
    assert res["speculative"] == {"algorithm": ""} and res["env"] == {} and res["args"] == {}


@pytest.mark.parametrize("max_batch", [1, 64, "64"])
def test_max_batch_lets_the_batch_fill(max_batch):
    res = plan({"mode": "baseline", "max_batch": max_batch})
    n = int(max_batch)
    assert res["args"] == {"mem-fraction-static": 0.8, "max-running-requests": n, "cuda-graph-max-bs": n,
                           "enable-metrics": True}


@pytest.mark.parametrize("max_batch", [0, -1, 10 ** 9])
def test_a_max_batch_out_of_bounds_fails_by_name(max_batch):
    with pytest.raises(AnsibleActionFail) as err:
        plan({"mode": "baseline", "max_batch": max_batch})
    assert str(err.value).startswith("bench_plan: max_batch")


def test_without_max_batch_the_instances_args_are_left_as_they_are():
    assert plan({"mode": "baseline"})["args"] == {"mem-fraction-static": 0.8}


def test_the_threshold_run_measures_the_adaptive_setting_of_the_crossover():
    res = plan({"mode": "eagle3_threshold", "results": CROSSING, "meta": META})
    assert res["skip"] is False and res["mode"] == "eagle3_threshold" and res["changed"] is False
    assert res["candidate"]["action"] == "adaptive" and res["candidate"]["effective_threshold"] == 5
    assert res["speculative"] == res["candidate"]["server_speculative"]
    assert res["speculative"]["adaptive_config"] == {"1": {"candidate_steps": [3]}, "6": {"candidate_steps": [0]}}


def test_the_threshold_run_takes_the_setting_the_task_gives_without_measuring():
    applied = {"algorithm": "EAGLE3", "draft_model_path": "/d", "adaptive": True, "adaptive_config": {"1": {}}}
    res = plan({"mode": "eagle3_threshold", "applied": applied, "results": []})
    assert res["skip"] is False and res["candidate"] is None and res["speculative"] == applied


@pytest.mark.parametrize("results", [[], None])
def test_nothing_measured_skips_the_threshold_run_and_says_why(results):
    args = {"mode": "eagle3_threshold"}
    if results is not None:
        args["results"] = results
    res = plan(args)
    assert res["skip"] is True and res["changed"] is False and res["mode"] == "eagle3_threshold"
    assert res["candidate"] is None
    assert res["why"] == "no adaptive setting to measure: no crossover of the baseline and EAGLE-3 measured"
    assert "speculative" not in res


def test_a_measurement_without_a_crossover_skips_with_the_candidates_reason():
    res = plan({"mode": "eagle3_threshold", "results": NO_CROSSING, "meta": META})
    candidate = res["candidate"]
    assert res["skip"] is True and candidate and candidate["action"] != "adaptive"
    assert candidate.get("reason") and res["why"] == "no adaptive setting to measure: %s" % candidate["reason"]
    assert "speculative" not in res


def test_the_confirming_run_without_its_setting_fails_by_name():
    with pytest.raises(AnsibleActionFail) as err:
        plan({"mode": "applied"})
    assert str(err.value).startswith("bench_plan: applied measures the setting benchmark_apply chose")
    applied = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 2}
    assert plan({"mode": "applied", "applied": applied})["speculative"] == applied


def test_an_unknown_mode_or_argument_is_refused_by_name():
    with pytest.raises(AnsibleActionFail) as err:
        plan({"mode": "fast"})
    assert "mode must be one of" in str(err.value) and "fast" in str(err.value)
    with pytest.raises(AnsibleActionFail) as err:
        plan({"mode": "baseline", "stray": 1})
    assert "stray" in str(err.value)
