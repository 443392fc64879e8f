# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The adaptive setting's tiers (issue 44 item 6): where the two static curves cross, a measured shorter chain that
beats both gives a middle tier (3 -> 1 -> 0 by running batch); without such a measurement, today's two tiers. The
baseline and EAGLE-3 curves are the H100's of issue 44; the 1-step chain is made up for the test (none was measured)."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import modes
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import adaptive
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as report
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_spec_setting as spec_setting

BATCHES = (1, 16, 32, 64, 128, 256)
BASE = dict(zip(BATCHES, (176, 2619, 4983, 9564, 16522, 26252)))
EAGLE3 = dict(zip(BATCHES, (404, 4952, 7621, 10517, 12149, 11970)))
STEPS1 = dict(zip(BATCHES, (300, 4000, 7000, 11200, 15000, 20000)))  # beats both only at 64
SPEC = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1}
CAPTURE = adaptive.spec_capture_sizes(256)


def raw(extra=None, running=None):
    results = []
    curves = {"baseline": BASE, "eagle3": EAGLE3}
    curves.update(extra or {})
    for mode, curve in curves.items():
        for b, tok_s in curve.items():
            results.append({"mode": mode, "concurrency": b, "decode_throughput": float(tok_s),
                            "running": float((running or {}).get((mode, b), b))})
    return {"meta": {"sglang_version": "0.5.15.post1", "speculative": SPEC, "cuda_graph_max_bs": 256},
            "results": results}


def test_a_shorter_chain_that_beats_both_static_settings_gives_a_middle_tier():
    chosen = report.choose_tiers({0: BASE, 3: EAGLE3, 1: STEPS1})
    assert chosen["best"] == {1: 3, 16: 3, 32: 3, 64: 1, 128: 0, 256: 0}
    # 3 -> 1 where they cross between 32 (+621) and 64 (-683): 47.2; 1 -> 0 between 64 (+1636) and 128 (-1522): 97.2
    assert chosen["tiers"] == [{"steps": 3, "upto": 47}, {"steps": 1, "upto": 97}, {"steps": 0, "upto": None}]
    run = raw({"eagle3_steps1": STEPS1})
    cand = report.candidate(run, report.analyse(run))
    assert cand["action"] == "adaptive" and cand["tiers_why"].startswith("measured: 3 steps at batch 1")
    # keys padded to the capture sizes: 44 is the largest <= 47, 96 the largest <= 97
    assert cand["server_speculative"]["adaptive_config"] == {
        "1": {"candidate_steps": [3]}, "45": {"candidate_steps": [1]}, "97": {"candidate_steps": [0]}}
    assert (cand["server_speculative"]["num_steps"], cand["server_speculative"]["num_draft_tokens"]) == (3, 4)
    assert cand["server_speculative"]["eagle_topk"] == 1 and cand["server_speculative"]["adaptive"] is True
    assert (cand["effective_threshold"], cand["config_key"]) == (96, 97)
    assert cand["reason"] == ("speculate by tiers measured on this GPU: 3 steps up to 44 running requests, 1 steps up "
                              "to 96 running requests, 0 steps from batch 97: --speculative-adaptive with slots "
                              "1 -> [3], 45 -> [1], 97 -> [0]")
    # what the view then says is in force
    assert speculative.in_force(cand["server_speculative"])["words"] == (
        "adaptive EAGLE3 (threshold 96: 3 steps from batch 1, 1 steps from batch 45, 0 steps from batch 97), from the "
        "inventory")


@pytest.mark.parametrize("steps1,why", [
    (None, "no shorter chain measured"),
    # 1 step never the best: 1 tok/s below the better static setting at every batch
    (dict((b, max(BASE[b], EAGLE3[b]) - 1) for b in BATCHES), "no shorter chain (1 steps) beats both"),
    # the best chain lengthens again with the batch: noise, not tiers
    ({**STEPS1, 256: 30000}, "does not shorten as the batch grows"),
])
def test_without_a_winning_measured_shorter_chain_the_two_tiers_stay(steps1, why):
    run = raw({"eagle3_steps1": steps1} if steps1 else None)
    assert why in report.tiers_of(run)["why"] and report.tiers_of(run)["tiers"] is None
    cand = report.candidate(run, report.analyse(run))
    # the crossover of the baseline and EAGLE-3 on the H100: 75.5, threshold 75, 72 after padding
    assert cand["server_speculative"]["adaptive_config"] == {"1": {"candidate_steps": [3]}, "73": {"candidate_steps": [0]}}


def test_a_shorter_point_that_did_not_fill_decides_nothing():
    run = raw({"eagle3_steps1": STEPS1}, running={("eagle3_steps1", 64): 50.0})
    assert report.tiers_of(run)["tiers"] is None
    run = raw({"eagle3_steps1": STEPS1}, running={("eagle3_steps1", 64): 0.9 * 64})
    assert report.tiers_of(run)["tiers"] is not None


def test_a_tie_goes_to_the_fewer_steps_and_a_tier_no_capture_size_falls_in_is_dropped():
    assert report.choose_tiers({0: {1: 10}, 3: {1: 12}, 1: {1: 12}})["best"] == {1: 1}
    # 3 -> 1 at 9, 1 -> 0 at 9 as well: with capture sizes 8, 10 the 1-step tier covers no bucket
    got = adaptive.tiers_config("0.5.23", [{"steps": 3, "upto": 9}, {"steps": 1, "upto": 9}, {"steps": 0, "upto": None}],
                                [1, 2, 4, 8, 10, 12])
    assert got["config"] == {"1": {"candidate_steps": [3]}, "9": {"candidate_steps": [0]}}
    assert got["tiers"] == [{"steps": 3, "from": 1, "upto": 8}, {"steps": 0, "from": 9, "upto": None}]
    got = adaptive.tiers_config("0.5.23", [{"steps": 3, "upto": 8}, {"steps": 1, "upto": 10}, {"steps": 0, "upto": None}],
                                [1, 2, 4, 8, 10, 12])
    assert got["config"] == {"1": {"candidate_steps": [3]}, "9": {"candidate_steps": [1]}, "11": {"candidate_steps": [0]}}
    assert "upgrade to 0.5.14" in adaptive.tiers_config("0.5.13", [{"steps": 3, "upto": 8}], None)["error"]
    # the rendered tiers pass the version's own rules (step 0 from 0.5.14)
    assert adaptive.validate(got["config"], "0.5.15.post1", 3) == ([], {0, 1, 3})


def test_the_shorter_chains_are_modes_launched_and_checked_as_static_eagle3():
    out = modes.launch("eagle3_steps1", dict(SPEC, adaptive=True, adaptive_config={"1": {}}))
    assert out["speculative"] == dict(SPEC, adaptive=False, adaptive_config=None, eagle_topk=1, num_steps=1,
                                      num_draft_tokens=2)
    assert modes.launch("eagle3_steps2", SPEC)["speculative"]["num_steps"] == 2
    facts = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 1, "eagle_topk": 1, "adaptive": False}
    assert modes.problems("eagle3_steps1", out["speculative"], facts) == []
    assert modes.problems("eagle3_steps1", out["speculative"], dict(facts, num_steps=3)) == ["num_steps is 3, not 1"]
    assert modes.problems("eagle3_steps1", out["speculative"], dict(facts, adaptive=True)) == [
        "speculative_adaptive is True, not False"]
    assert "topk-1 chain" in modes.problems("eagle3_steps1", out["speculative"], dict(facts, eagle_topk=4))[0]
    assert modes.meaning("eagle3_steps2", SPEC).endswith(", not adaptive, num_steps 2")


def test_spec_setting_tiers_keep_topk_1_and_the_longest_chain():
    rec = spec_setting.recommend(40, "0.5.23", {"draft_model_path": "/d", "num_steps": None, "eagle_topk": None},
                                 capture=CAPTURE, tiers=[{"steps": 2, "upto": 20}, {"steps": 0, "upto": None}])
    s = rec["server_speculative"]
    assert (s["eagle_topk"], s["num_steps"], s["num_draft_tokens"]) == (1, 2, 3)
    assert s["adaptive_config"] == {"1": {"candidate_steps": [2]}, "21": {"candidate_steps": [0]}}
