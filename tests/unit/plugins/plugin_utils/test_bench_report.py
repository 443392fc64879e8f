# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Report logic (plugin_utils/_bench_report.py, _bench_spec_setting.py): crossover and threshold against the rate model
that produced the data, the setting each SGLang version has, the confirming run."""
import testpaths  # noqa: F401  (puts the checkout on sys.path as the collection)
import json
import math
import os
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as bench_report
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_spec_setting as spec_setting
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as server_view

REPO = testpaths.REPO
sys.path.insert(0, os.path.join(REPO, "tools", "bench_report"))
# the checkout's command line (tools/bench_report)
import bench_report as cli  # noqa: E402  pylint: disable=wrong-import-position

# The seed deployment's numbers: baseline saturates near 773 tok/s, EAGLE-3 at 354, EAGLE-3 96 tok/s at c=1.
SEED = {"baseline": {"per_request_tps": 60, "saturation_tps": 773},
        "eagle3": {"per_request_tps": 96, "saturation_tps": 354, "accept_length": 3.2}}
GRID = [1, 2, 4, 8, 16, 32, 64]


def synthetic(perf, grid=None, noise=0.0, modes=("baseline", "eagle3")):
    """Results as the double would produce them: per-request rate min(p, s / c), total c * that."""
    grid = GRID if grid is None else grid
    results = []
    for i, mode in enumerate(modes):
        model = perf[mode if mode in perf else "eagle3"]
        for j, conc in enumerate(grid):
            per_req = min(model["per_request_tps"], model["saturation_tps"] / conc)
            wobble = 1.0 + noise * (1 if (i + j) % 2 else -1)
            results.append({"mode": mode, "concurrency": conc, "output_throughput": per_req * conc * wobble,
                            "median_per_request_tps": per_req * wobble, "median_ttft_ms": 20.0 * conc,
                            "p99_ttft_ms": 30.0 * conc, "median_itl_ms": 1000.0 / per_req,
                            "p99_itl_ms": 1200.0 / per_req, "completed": 4 * conc, "failed": 0,
                            "accept_length": model.get("accept_length")})
    return results


def test_model_crossover_is_where_the_two_curves_meet():
    # 96c caps at 354 when c = 3.69; 60c reaches 354 at c = 5.9.
    assert bench_report.model_crossover(SEED) == pytest.approx(354 / 60, rel=1e-6)


def test_seed_numbers_give_the_seed_threshold():
    analysis = bench_report.analyse({"results": synthetic(SEED), "meta": {"perf_model": SEED}})
    entry = analysis["eagle3"]
    assert entry["pays_at"] == [1, 2, 4]
    assert entry["last_paying"] == 4
    assert entry["stops_paying_at"] == 8
    # Both curves are linear between 4 and 8 here, so interpolation finds the model's crossover exactly.
    assert entry["crossover"] == pytest.approx(354 / 60, rel=1e-6)
    assert entry["threshold"] == 5 == entry["model_threshold"]
    assert entry["model_stops_paying_at"] == 8


@pytest.mark.parametrize("eagle_tps,eagle_sat", [(96, 354), (120, 500), (70, 300), (200, 2000), (90, 700)])
def test_measured_crossover_brackets_the_model_one(eagle_tps, eagle_sat):
    perf = {"baseline": SEED["baseline"], "eagle3": {"per_request_tps": eagle_tps, "saturation_tps": eagle_sat}}
    entry = bench_report.analyse({"results": synthetic(perf, noise=0.01), "meta": {"perf_model": perf}})["eagle3"]
    model_c = bench_report.model_crossover(perf)
    if model_c is None:
        assert entry["stops_paying_at"] is None
        return
    assert entry["last_paying"] < model_c <= entry["stops_paying_at"]
    assert entry["stops_paying_at"] == entry["model_stops_paying_at"]


def test_speculation_that_always_pays_has_no_threshold():
    perf = {"baseline": SEED["baseline"], "eagle3": {"per_request_tps": 120, "saturation_tps": 2000}}
    entry = bench_report.analyse({"results": synthetic(perf)})["eagle3"]
    assert entry["stops_paying_at"] is None and entry["threshold"] is None and entry["last_paying"] == 64


def test_speculation_that_never_pays_gives_zero():
    perf = {"baseline": SEED["baseline"], "eagle3": {"per_request_tps": 54.1, "saturation_tps": 354}}
    entry = bench_report.analyse({"results": synthetic(perf)})["eagle3"]
    assert entry["stops_paying_at"] == 1 and entry["last_paying"] is None and entry["threshold"] == 0
    assert bench_report.model_crossover(perf) == 0.0


def test_crossover_only_uses_points_measured_in_both_modes():
    base = {1: 60.0, 2: 120.0, 8: 480.0}
    spec = {1: 96.0, 4: 354.0, 8: 354.0}
    entry = bench_report.crossover(base, spec)
    assert entry["points"] == [1, 8]
    assert entry["crossover"] == pytest.approx(1 + 7 * 36 / (36 + 126))


def test_build_writes_report_table_and_plots(tmp_path):
    raw = {"meta": {"started": "2026-12-02T10:00:00", "max_new_tokens": 64, "perf_model": SEED},
           "results": synthetic(SEED, modes=("baseline", "eagle3", "eagle3_adaptive"))}
    (tmp_path / "raw.json").write_text(json.dumps(raw))
    summary = bench_report.build(tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert "| EAGLE-3 | 8 | 1 |" in report and "| baseline | 64 | 1 |" in report
    assert "at most **5** requests" in report
    assert "**matches** the model" in report and "DOES NOT" not in report
    assert "## Measured vs the rate model" in report and "| EAGLE-3 | 8 | 354.0 | 354.0 | +0.0% |" in report
    pytest.importorskip("matplotlib")
    assert summary["plots"] == ["decode_throughput.png", "throughput.png", "per_request_tps.png", "ttft.png"]
    for name in summary["plots"]:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    saved = json.loads((tmp_path / "analysis.json").read_text())
    assert saved["analysis"]["eagle3"]["threshold"] == 5
    assert math.isclose(saved["analysis"]["eagle3_adaptive"]["crossover"], 354 / 60)
    assert saved["recommendation"] is not None


def test_cli_reports_missing_input(tmp_path, capsys):
    assert cli.main([str(tmp_path)]) == 2
    assert "raw.json" in capsys.readouterr().err


def test_coarse_grid_is_checked_against_the_model_on_the_same_grid():
    # On 1, 2, 8, 16 the model's own curves cross (linearly interpolated) at 2 + 6 * 72 / 198, not at 5.9.
    raw = {"results": synthetic(SEED, grid=[1, 2, 8, 16], noise=0.02), "meta": {"perf_model": SEED}}
    entry = bench_report.analyse(raw)["eagle3"]
    assert entry["model_crossover"] == pytest.approx(5.9)
    assert entry["model_grid_crossover"] == pytest.approx(2 + 6 * 72 / 198)
    assert entry["model_grid_threshold"] == 4
    assert entry["model_check"]["ok"], entry


def test_measurement_off_the_model_fails_the_check(tmp_path, capsys):
    # The server really ran EAGLE-3 saturating at 500 tok/s, but the report is told 354.
    real = {"baseline": SEED["baseline"], "eagle3": {"per_request_tps": 96, "saturation_tps": 500}}
    raw = {"results": synthetic(real), "meta": {"perf_model": SEED}}
    entry = bench_report.analyse(raw)["eagle3"]
    assert entry["stops_paying_at"] == 16 and entry["crossover"] > 8  # model: stops at 8, crossover 5.9
    assert not entry["model_check"]["crossover_ok"] and not entry["model_check"]["ok"]
    (tmp_path / "raw.json").write_text(json.dumps(raw))
    assert cli.main([str(tmp_path), "--no-plots"]) == 0
    assert cli.main([str(tmp_path), "--no-plots", "--check-model"]) == 3
    assert "DOES NOT match" in (tmp_path / "report.md").read_text()
    assert "does not match the rate model" in capsys.readouterr().err


def test_tolerance_band_decides(tmp_path):
    raw = {"results": synthetic(SEED, noise=0.05), "meta": {"perf_model": SEED}}
    loose = bench_report.analyse(raw, tolerance=0.15)["eagle3"]["model_check"]
    tight = bench_report.analyse(raw, tolerance=0.001)["eagle3"]["model_check"]
    assert loose["ok"] and loose["threshold_allowed"] == [5, 6]
    assert not tight["crossover_ok"]


def test_model_points_give_relative_errors():
    raw = {"results": synthetic(SEED, grid=[1, 16], noise=0.1), "meta": {"perf_model": SEED}}
    rows = {(r["mode"], r["concurrency"]): r for r in bench_report.model_points(raw)}
    assert rows[("baseline", 16)]["model_decode_throughput"] == pytest.approx(773)
    assert rows[("eagle3", 1)]["model_per_request_tps"] == pytest.approx(96)
    assert rows[("baseline", 1)]["decode_throughput_rel_err"] == pytest.approx(-0.1)


def repeated(perf, repeats=3, noise=0.03, ttft_ms=300.0, tokens=32, grid=None, modes=("baseline", "eagle3"),
             limit=None):
    """Like synthetic(), several repeats with alternating noise, and end-to-end throughput that carries a TTFT.

    ``limit``: for the mode eagle3_threshold, the largest concurrency that drafts (baseline rates above it).
    """
    out = []
    for k in range(repeats):
        wob = 1.0 + noise * ((k % 3) - 1)
        for res in synthetic(perf, grid=grid, modes=modes):
            mode, conc = res["mode"], res["concurrency"]
            model = perf[BASE] if mode == BASE or (limit is not None and mode in ("eagle3_threshold", "applied")
                                                   and conc > limit) else perf["eagle3"]
            per_req = min(model["per_request_tps"], model["saturation_tps"] / conc) * (wob if mode != BASE else 1 / wob)
            decode_s = tokens / per_req
            out.append(dict(res, repeat=k, median_per_request_tps=per_req,
                            output_throughput=conc * tokens / (decode_s + ttft_ms / 1000.0)))
    return out


BASE = "baseline"


def test_decode_throughput_gives_the_crossover_that_end_to_end_overstates():
    # The same 400 ms TTFT on every request flattens the faster curve more: end-to-end crosses elsewhere.
    raw = {"results": repeated(SEED, noise=0.0, ttft_ms=400.0), "meta": {"perf_model": SEED}}
    entry = bench_report.analyse(raw)["eagle3"]
    assert entry["metric"] == "decode_throughput"
    assert entry["crossover"] == pytest.approx(354 / 60, rel=1e-6) and entry["threshold"] == 5
    assert abs(entry["e2e"]["crossover"] - entry["crossover"]) > 0.25
    assert entry["model_check"]["ok"]


def test_repeats_give_a_band_that_holds_the_crossover_and_each_repeat():
    raw = {"results": repeated(SEED, repeats=3, noise=0.05), "meta": {"perf_model": SEED}}
    entry = bench_report.analyse(raw)["eagle3"]
    unc = entry["uncertainty"]
    assert unc["repeats"] == 3 and unc["n_min"] == 3 and len(unc["per_repeat"]) == 3
    assert unc["crossover_low"] < entry["crossover"] < unc["crossover_high"]
    assert min(unc["per_repeat"]) < entry["crossover"] < max(unc["per_repeat"])
    assert unc["threshold_low"] <= entry["threshold"] <= unc["threshold_high"]
    # noiseless repeats: no spread at all
    flat = bench_report.analyse({"results": repeated(SEED, repeats=2, noise=0.0)})["eagle3"]["uncertainty"]
    assert flat["crossover_low"] == pytest.approx(flat["crossover_high"])


@pytest.mark.parametrize("version,action,why", [
    ("0.5.9", "refuse", "no --speculative-adaptive"),
    ("0.5.10.post1", "refuse", "no --speculative-adaptive"),
    ("0.5.11", "refuse", "one candidate list"),
    ("0.5.12.post1", "refuse", "one candidate list"),
    ("0.5.13.post1", "refuse", "must be > 0"),
    ("0.5.14", "adaptive", None), ("0.5.15.post1", "adaptive", None), ("0.5.23", "adaptive", None),
    ("", "refuse", "unknown version"),
])
def test_recommendation_follows_what_the_version_really_has(version, action, why):
    spec = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}
    rec = spec_setting.recommend(5, version, spec, cuda_graph_max_bs=128)
    assert rec["action"] == action, rec
    if action == "refuse":
        assert why in rec["reason"] and "upgrade SGLang to 0.5.14 or later" in rec["reason"]
        assert "server_speculative" not in rec
    else:
        s = rec["server_speculative"]
        assert s["adaptive"] is True and s["eagle_topk"] == 1 and s["num_draft_tokens"] == 4
        # speculative CUDA-graph sizes run 1..8 one by one: 5 is a capture size, batches of 6 go to the [0] slot
        assert s["adaptive_config"] == {"1": {"candidate_steps": [3]}, "6": {"candidate_steps": [0]}}
        assert rec["effective_threshold"] == 5


def test_padding_rounds_the_threshold_down_to_a_capture_size():
    # 11 pads to 12 with speculation's capture sizes (10, 12, 14, ...): speculate up to 10, off from 11.
    rec = spec_setting.recommend(11, "0.5.23", {"num_steps": 2}, cuda_graph_max_bs=64)
    assert (rec["effective_threshold"], rec["config_key"]) == (10, 11)
    assert all(spec_setting.padded(b, spec_setting.spec_capture_sizes(64)) < 11 for b in range(1, 11))
    assert all(spec_setting.padded(b, spec_setting.spec_capture_sizes(64)) >= 11 for b in range(11, 65))
    # without CUDA graphs nothing is padded: exact
    rec = spec_setting.recommend(11, "0.5.23", {"num_steps": 2}, cuda_graph=False)
    assert (rec["effective_threshold"], rec["config_key"]) == (11, 12)
    # the server's own captured sizes (its /server_info) win over the derived list
    rec = spec_setting.recommend(100, "0.5.15.post1", {"num_steps": 3}, capture=[1, 2, 4, 8, 16, 32, 64, 128])
    assert (rec["effective_threshold"], rec["config_key"]) == (64, 65)


def test_no_crossover_keeps_and_never_paying_turns_off_and_topk_is_refused():
    assert spec_setting.recommend(None, "0.5.23", {"adaptive": True})["action"] == "keep"
    assert spec_setting.recommend(0, "0.5.9", {})["server_speculative"] == {"algorithm": ""}
    rec = spec_setting.recommend(5, "0.5.23", {"eagle_topk": 4})
    assert rec["action"] == "refuse" and "eagle_topk 1" in rec["reason"]


def test_the_adaptive_setting_fills_the_topk_and_steps_the_roles_defaults_leave_null():
    # roles/server's defaults leave num_steps, eagle_topk and num_draft_tokens null (SGLang picks; a Llama target
    # picks topk 4, which adaptive refuses): the adaptive setting names the chain it was measured with
    spec = dict(server_view.DEFAULTS["speculative"], draft_model_path="/d")
    assert (spec["eagle_topk"], spec["num_steps"], spec["num_draft_tokens"]) == (None, None, None)
    s = spec_setting.recommend(5, "0.5.23", spec, cuda_graph_max_bs=64)["server_speculative"]
    assert (s["eagle_topk"], s["num_steps"], s["num_draft_tokens"], s["adaptive"]) == (1, 3, 4, True)
    assert s["adaptive_config"] == {"1": {"candidate_steps": [3]}, "6": {"candidate_steps": [0]}}
    # steps given are kept, topk 1 given stays 1
    s = spec_setting.recommend(5, "0.5.23", dict(spec, num_steps=2, eagle_topk=1))["server_speculative"]
    assert (s["eagle_topk"], s["num_steps"], s["num_draft_tokens"]) == (1, 2, 3)
    assert s["adaptive_config"]["1"] == {"candidate_steps": [2]}


def test_confirming_run_must_follow_the_best_curve_at_every_point(tmp_path):
    meta = {"perf_model": SEED, "sglang_version": "0.5.23", "speculative": {"num_steps": 3, "eagle_topk": 1},
            "step0_patched": True, "applied": {"setting": "adaptive", "effective_threshold": 5}}
    good = repeated(SEED, modes=("baseline", "eagle3", "eagle3_threshold", "applied"), limit=5)
    conf = bench_report.confirmation({"results": good, "meta": meta})
    assert conf["ok"] and conf["reproduces"] and conf["deciding"] == GRID
    assert [p["best_setting"] for p in conf["points"]] == ["eagle3"] * 3 + ["baseline"] * 4
    # a server that ignores the threshold (EAGLE-3 rates everywhere) is caught above it
    ignores = [dict(r, mode="applied") for r in repeated(SEED, modes=("eagle3",))]
    bad = [r for r in good if r["mode"] != "applied"] + ignores
    conf = bench_report.confirmation({"results": bad, "meta": meta})
    assert not conf["ok"] and [p["ok"] for p in conf["points"]] == [True] * 3 + [False] * 4
    assert conf["reproduces"] is False
    (tmp_path / "raw.json").write_text(json.dumps({"results": good, "meta": meta}))
    assert cli.main([str(tmp_path), "--no-plots", "--check-confirm", "--check-model"]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "## Confirming run" in report and "Confirmed: **yes**" in report
    assert '"6": {"candidate_steps": [0]}' in report
    assert json.loads((tmp_path / "summary.json").read_text())["confirmed"] is True
    (tmp_path / "raw.json").write_text(json.dumps({"results": bad, "meta": meta}))
    assert cli.main([str(tmp_path), "--no-plots", "--check-confirm"]) == 4
    assert json.loads((tmp_path / "summary.json").read_text())["confirmed"] is False


def test_points_the_client_could_not_fill_are_flagged(tmp_path):
    results = synthetic(SEED, grid=[1, 4, 16])
    for r in results:
        r["mean_decoding"] = r["concurrency"] * 0.9 if r["concurrency"] < 16 else 3.0
    (tmp_path / "raw.json").write_text(json.dumps({"results": results}))
    summary = bench_report.build(tmp_path, with_plots=False)
    assert [(p["mode"], p["concurrency"]) for p in summary["client_limited"]] == [("baseline", 16), ("eagle3", 16)]
    assert "**Client-limited points**" in (tmp_path / "report.md").read_text()


def test_an_unfit_draft_is_reported_and_nothing_is_recommended_from_it(tmp_path):
    # As on the H200 with the random draft: accept length 1.00, EAGLE-3 loses everywhere. "Turn it off" would be
    # the wrong lesson: the curve measures the draft.
    perf = {"baseline": SEED["baseline"], "eagle3": {"per_request_tps": 30, "saturation_tps": 200, "accept_length": 1.0}}
    raw = {"results": synthetic(perf),
           "meta": {"sglang_version": "0.5.15.post1", "speculative": {"algorithm": "EAGLE3"}}}
    (tmp_path / "raw.json").write_text(json.dumps(raw))
    summary = bench_report.build(tmp_path, with_plots=False)
    entry, rec = summary["analysis"]["eagle3"], summary["recommendation"]
    assert entry["draft_unfit"] is True and entry["accept_length"] == pytest.approx(1.0)
    assert rec["action"] == "refuse" and rec["measured_action"] == "off" and "server_speculative" not in rec
    assert "the draft does not fit its target (accept length 1.00, below 1.30)" in rec["reason"]
    report = (tmp_path / "report.md").read_text()
    assert "**accept length 1.00, below 1.30: the draft does not fit its target**" in report
    assert "server_speculative:" not in report


@pytest.mark.parametrize("meta_floor,accept,unfit", [(None, 3.2, False), (None, 1.29, True), (2.0, 1.8, True),
                                                     (1.1, 1.2, False)])
def test_the_floor_follows_the_deployment(meta_floor, accept, unfit):
    perf = {"baseline": SEED["baseline"], "eagle3": dict(SEED["eagle3"], accept_length=accept)}
    meta = {} if meta_floor is None else {"min_accept_length": meta_floor}
    entry = bench_report.analyse({"results": synthetic(perf), "meta": meta})["eagle3"]
    assert entry["draft_unfit"] is unfit
    if not unfit:
        assert bench_report.candidate({"meta": {"sglang_version": "0.5.23", "adaptive_flag": True}},
                                      {"eagle3": entry})["action"] == "adaptive"


def test_no_accept_length_measured_is_not_a_finding():
    perf = {"baseline": SEED["baseline"], "eagle3": {"per_request_tps": 96, "saturation_tps": 354}}
    entry = bench_report.analyse({"results": synthetic(perf)})["eagle3"]
    assert entry["accept_length"] is None and entry["draft_unfit"] is False


def test_allreduce_ab_is_its_own_table_not_a_speculative_curve(tmp_path):
    # The PCIe-IPC all-reduce A/B: two launches of the same deployment, compared with each other only.
    perf = {"allreduce_nccl": {"per_request_tps": 50, "saturation_tps": 400},
            "allreduce_pcie_ipc": {"per_request_tps": 75, "saturation_tps": 500}}
    results = synthetic(perf, grid=[1, 4, 16], modes=("allreduce_nccl", "allreduce_pcie_ipc"))
    (tmp_path / "raw.json").write_text(json.dumps({"results": results}))
    summary = bench_report.build(tmp_path, with_plots=False)
    assert summary["analysis"] == {}
    ratios = {p["concurrency"]: p["ratio"] for p in summary["allreduce_ab"]}
    assert ratios == pytest.approx({1: 1.5, 4: 1.5, 16: 500 / 400})
    assert "## All-reduce: FlashInfer PCIe-IPC against NCCL" in (tmp_path / "report.md").read_text()


def test_the_checkout_wrapper_runs_the_shipped_report(tmp_path):
    wrapper = os.path.join(REPO, "tools", "bench_report", "bench_report.py")
    missing = subprocess.run([sys.executable, wrapper, str(tmp_path)], capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and "raw.json not found" in missing.stderr
    (tmp_path / "raw.json").write_text(json.dumps({"results": synthetic(SEED)}))
    done = subprocess.run([sys.executable, wrapper, str(tmp_path), "--no-plots"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and "eagle3: decode throughput stops paying at 8" in done.stdout


def test_the_report_of_the_h200_table_refuses_adaptive_and_marks_what_did_not_fill(tmp_path):
    # issue 34's table, SGLang 0.5.15.post1 without the step-0 patch; baseline at 256 ran 200 of 256 (not filled)
    table = {1: (226, 513, 512), 16: (3344, 5852, 2130), 64: (11950, 11277, 4366), 256: (28819, 12661, 5632)}
    results = []
    for batch, values in table.items():
        for mode, tok_s in zip(("baseline", "eagle3", "eagle3_threshold"), values):
            running = 200.0 if (batch, mode) == (256, "baseline") else float(batch)
            results.append({"mode": mode, "concurrency": batch, "repeat": 0, "median_per_request_tps": tok_s / batch,
                            "output_throughput": tok_s, "running": running, "mean_decoding": float(batch),
                            "accept_length": 3.0 if mode != "baseline" else None, "completed": 8, "failed": 0})
    meta = {"sglang_version": "0.5.15.post1", "gpu": "NVIDIA H200", "step0_patched": False, "cuda_graph_max_bs": 256,
            "speculative": {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1}}
    (tmp_path / "raw.json").write_text(json.dumps({"meta": meta, "results": results}))
    bench_report.build(tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert "## Three curves on the running-batch axis" in report and "200.0 **not filled**" in report
    assert "has no spec-step0-plain-decode patch" in report
    rec = json.loads((tmp_path / "analysis.json").read_text())["recommendation"]
    assert rec["setting"] == "eagle3" and rec["deciding"] == [1, 16, 64] and rec["not_filled"] == [[256, "baseline", 200.0, 256.0]]
    short = json.loads((tmp_path / "summary.json").read_text())
    assert list(short) == ["sglang", "gpu", "accept_length", "threshold", "applied", "confirmed", "points"]
    assert short["applied"] == "eagle3" and short["confirmed"] is False and short["accept_length"] == 3.0
    assert short["points"][-1] == {"batch": 256, "running": 200.0, "baseline": 28819.0, "eagle3": 12661.0,
                                   "adaptive": 5632.0, "applied": None}
