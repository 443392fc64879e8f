# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decision on the two real tables (issue 44): real SGLang 0.5.15.post1, the 13 GiB fitting pair at accept length
3.00, decode tok/s from the server's lines, every batch full. The H200's is docs/evidence/real-sglang-h200/spec-step0/
summary.json as measured; the H100's is issue 44's table. Through the report's whole path (_bench_report.analyse ->
candidate -> recommendation -> _bench_curves.recommend): the threshold from the measured crossover, the setting with
the least loss, its worst point, and the words."""
import testpaths  # noqa: F401  (puts the checkout on sys.path as the collection)
import json
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_curves as curves
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as bench_report

H200_SUMMARY = os.path.join(testpaths.REPO, "docs", "evidence", "real-sglang-h200", "spec-step0", "summary.json")
BATCHES = (1, 16, 32, 64, 128, 256)
# issue 44, the H100: baseline, static EAGLE-3, adaptive patched (threshold 64)
H100 = {"baseline": (176, 2619, 4983, 9564, 16522, 26252), "eagle3": (404, 4952, 7621, 10517, 12149, 11970),
        "eagle3_threshold": (407, 4952, 7624, 8725, 14762, 23148)}
SPEC = {"algorithm": "EAGLE3", "draft_model_path": "/models/draft", "num_steps": 3, "eagle_topk": 1,
        "num_draft_tokens": 4}
EVERY_POINT = ("no load profile (benchmark_load_profile, or the fleet's Prometheus history): every measured batch "
               "size weighs the same")


def h200():
    """{mode: [tok/s by BATCHES]} from the evidence's summary.json (adaptive: the patched curve)."""
    with open(H200_SUMMARY) as f:
        points = json.load(f)["points"]
    assert tuple(p["batch"] for p in points) == BATCHES and all(p["running"] == p["batch"] for p in points)
    return {"baseline": [p["baseline"] for p in points], "eagle3": [p["eagle3"] for p in points],
            "eagle3_threshold": [p["adaptive_patched"] for p in points]}


def raw(curves_by_mode, patched=True, load=None):
    results = []
    for mode, values in curves_by_mode.items():
        for batch, tok_s in zip(BATCHES, values):
            results.append({"mode": mode, "concurrency": batch, "repeat": 0, "decode_throughput": float(tok_s),
                            "running": float(batch), "accept_length": 3.0 if mode == "eagle3" else None})
    return {"meta": {"sglang_version": "0.5.15.post1", "speculative": SPEC, "cuda_graph_max_bs": 256,
                     "step0_patched": patched, "load_profile": load}, "results": results}


def decide(curves_by_mode, patched=True, load=None):
    run = raw(curves_by_mode, patched, load)
    analysis = bench_report.analyse(run)
    return analysis["eagle3"], bench_report.recommendation(run, analysis)


def test_the_h200_table_applies_adaptive_by_its_loss():
    entry, rec = decide(h200())
    # the threshold is this GPU's: the curves cross between 32 (+2339 tok/s) and 64 (-577), at 57.7
    assert entry["crossover"] == pytest.approx(32 + 32 * (8636.2 - 6297.2) / (8636.2 - 6297.2 + 11785.4 - 11208.7))
    assert entry["threshold"] == 57 and rec["threshold"] == 57
    assert rec["candidate"]["effective_threshold"] == 56 and rec["candidate"]["config_key"] == 57
    assert rec["setting"] == "adaptive" and rec["action"] == "adaptive" and rec["effective_threshold"] == 56
    assert rec["candidates"] == ["baseline", "eagle3", "adaptive"] and rec["deciding"] == list(BATCHES)
    losses = dict((s, round(v["weighted"], 4)) for s, v in rec["losses"].items())
    assert losses == {"adaptive": 0.0557, "eagle3": 0.1773, "baseline": 0.2095}
    assert rec["worst"] == {"batch": 256, "loss": pytest.approx(1 - 26507.8 / 30169.9)}
    assert rec["server_speculative"]["adaptive_config"] == {"1": {"candidate_steps": [3]},
                                                            "57": {"candidate_steps": [0]}}
    assert rec["reason"].startswith(
        "adaptive EAGLE-3 for this load (%s): it loses 5.6%% of the best measured throughput over it, at worst 12.1%% "
        "at batch 256 (where baseline gives 30170 tok/s); the baseline (no speculation) would lose 21.0%%, at worst "
        "55.6%% at batch 1; static EAGLE-3 would lose 17.7%%, at worst 58.8%% at batch 256; SGLang 0.5.15.post1 "
        "carries spec-step0-plain-decode: speculate (num_steps 3) while at most 56 requests run" % EVERY_POINT)


def test_the_h100_table_applies_adaptive_with_its_own_threshold():
    entry, rec = decide(H100)
    # static EAGLE-3 still beats the baseline at 64 on the H100 (+953 tok/s), not at 128 (-4373): 75.5, not 64
    assert entry["crossover"] == pytest.approx(64 + 64 * 953 / (953 + 4373))
    assert entry["threshold"] == 75 and rec["candidate"]["effective_threshold"] == 72
    assert rec["server_speculative"]["adaptive_config"] == {"1": {"candidate_steps": [3]},
                                                            "73": {"candidate_steps": [0]}}
    assert rec["setting"] == "adaptive"
    losses = dict((s, round(v["weighted"], 4)) for s, v in rec["losses"].items())
    assert losses == {"adaptive": 0.0659, "eagle3": 0.1361, "baseline": 0.246}
    assert rec["worst"] == {"batch": 64, "loss": pytest.approx(1 - 8725 / 10517)}
    assert rec["reason"].startswith(
        "adaptive EAGLE-3 for this load (%s): it loses 6.6%% of the best measured throughput over it, at worst 17.0%% "
        "at batch 64 (where eagle3 gives 10517 tok/s); the baseline (no speculation) would lose 24.6%%, at worst "
        "56.8%% at batch 1; static EAGLE-3 would lose 13.6%%, at worst 54.4%% at batch 256" % EVERY_POINT)
    lines = "\n".join(bench_report.curve_lines(raw(H100), rec, None))
    assert "**adaptive** - adaptive EAGLE-3 for this load" in lines and "at worst 17.0% at batch 64" in lines
    assert "- adaptive: loses 6.6% over the load; worst 17.0% at batch 64; where: 17% at 64, 11% at 128, 12% at 256" \
        in lines
    assert "- baseline: loses 24.6% over the load; worst 56.8% at batch 1; where:" in lines
    unpatched = decide(H100, patched=False)[1]
    lines = "\n".join(bench_report.curve_lines(raw(H100), unpatched, None))
    assert "- adaptive: loses 6.6% over the load; worst 17.0% at batch 64; where: 17% at 64, 11% at 128, 12% at 256 " \
           "(not a candidate here)" in lines


@pytest.mark.parametrize("table", ["h200", "h100"])
def test_without_the_step0_patch_the_static_setting_that_loses_least(table):
    _entry, rec = decide(h200() if table == "h200" else H100, patched=False)
    assert rec["setting"] == "eagle3" and rec["candidates"] == ["baseline", "eagle3"]
    assert rec["worst"]["batch"] == 256
    assert "adaptive refused: SGLang 0.5.15.post1 has no spec-step0-plain-decode patch" in rec["reason"]
    assert rec["server_speculative"]["adaptive"] is False


@pytest.mark.parametrize("load,setting,worst", [
    ({1: 1, 16: 1, 32: 1}, "eagle3", (1, 1 - 404 / 407)),  # adaptive gains 0.2 % there: a tie, the simpler one
    ({200: 1, 256: 3}, "baseline", (256, 0.0)),  # 200 counts at 256 (nearest on the log2 axis)
    ({64: 1}, "eagle3", (64, 0.0)),
    ([20, 40, 70, 120, 250, 0], "adaptive", (64, 1 - 8725 / 10517)),  # Prometheus samples; the idle 0 left out
])
def test_the_h100_decision_follows_the_users_load(load, setting, worst):
    _entry, rec = decide(H100, load=load if isinstance(load, dict) else None)
    if not isinstance(load, dict):
        run = raw(H100)
        analysis = bench_report.analyse(run)
        rec = curves.recommend(run["results"], "0.5.15.post1", "slots_zero", True,
                               bench_report.candidate(run, analysis), SPEC, load)
        assert "6 running-batch samples from Prometheus" in rec["reason"]
    assert rec["setting"] == setting
    assert rec["worst"] == {"batch": worst[0], "loss": pytest.approx(worst[1])}
