# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's decision on small tables worked out by hand (plugin_utils/_bench_curves.py): which setting is
recommended and why in words, the loss figures and the worst point, ties to the simpler setting, what adaptive is
refused for, the load profile, the confirming run, summary.json, and which point the grid measures next. The tok/s
are chosen so every loss is an exact binary fraction (1 - 600/800 = 0.25): the answers below are read off the
inputs."""
import pytest

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_curves as curves

CONF = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1}
STATIC_SPEC = dict(CONF, adaptive=False, adaptive_config=None, num_draft_tokens=4)  # modes.launch("eagle3", CONF)
CAND = {"action": "adaptive", "reason": "speculate (num_steps 3) while at most 4 requests run",
        "effective_threshold": 4, "config_key": 5, "threshold": 6,
        "server_speculative": {"algorithm": "EAGLE3", "adaptive": True, "num_steps": 3,
                               "adaptive_config": {"1": {"candidate_steps": [3]}, "5": {"candidate_steps": [0]}}}}
EVEN = ("no load profile (benchmark_load_profile, or the fleet's Prometheus history): every measured batch size "
        "weighs the same")
NO_PATCH = ("SGLang %s has no spec-step0-plain-decode patch (roles/sglang's patch record): its step 0 runs SGLang's "
            "verify path (measured on the H200: 3-5x a plain decode step at batch 16-256), not the target's plain "
            "decode")


def res(mode, batch, tok_s, running=None, client=None, duration=None):
    """One measured point (running: the server's sample; default: the batch filled)."""
    out = {"mode": mode, "concurrency": batch, "decode_throughput": tok_s,
           "running": float(batch) if running is None else running, "mean_decoding": client}
    if duration is not None:
        out["duration"] = duration
    return out


def curves_of(table):
    """{batch: (baseline, eagle3, adaptive or None)} -> results."""
    out = []
    for batch, values in sorted(table.items()):
        for mode, tok_s in zip(curves.CURVES, values):
            if tok_s is not None:
                out.append(res(mode, batch, tok_s))
    return out


def point(batch, tok_s, best, best_setting, lost):
    return {"batch": batch, "tok_s": tok_s, "best": best, "best_setting": best_setting, "lost": lost}


# EAGLE-3 doubles a lone request, the baseline is ahead at 8: EAGLE-3 loses 25 % at 8, the baseline 50 % at 1
TWO = {1: (100.0, 200.0, None), 8: (800.0, 600.0, None)}


# ---- recommend: the whole answer

def test_the_whole_answer_when_adaptive_cannot_run_says_each_reason():
    rec = curves.recommend(curves_of(TWO), None, "slots", False, None, CONF)
    why = ["no adaptive setting to apply (no crossover measured)",
           "SGLang (unknown version) cannot turn speculation off by batch size", NO_PATCH % "(unknown version)"]
    assert rec == {
        "version": None, "capability": "slots", "patched": False, "step0_patch": "spec-step0-plain-decode",
        "deciding": [1, 8], "not_filled": [], "shortfalls": [], "why_not_adaptive": why, "tie": 0.01,
        "profile": {1: 0.5, 8: 0.5}, "profile_source": EVEN,
        "losses": {
            "baseline": {"weighted": 0.25, "where": [point(1, 100.0, 200.0, "eagle3", 0.5)],
                         "worst": point(1, 100.0, 200.0, "eagle3", 0.5), "stand_ins": []},
            "eagle3": {"weighted": 0.125, "where": [point(8, 600.0, 800.0, "baseline", 0.25)],
                       "worst": point(8, 600.0, 800.0, "baseline", 0.25), "stand_ins": []}},
        "candidates": ["baseline", "eagle3"], "worst": {"batch": 8, "loss": 0.25},
        "setting": "eagle3", "action": "keep", "server_speculative": STATIC_SPEC,
        "reason": "static EAGLE-3 for this load (%s): it loses 12.5%% of the best measured throughput over it, at "
                  "worst 25.0%% at batch 8 (where baseline gives 800 tok/s); the baseline (no speculation) would lose "
                  "25.0%%, at worst 50.0%% at batch 1; adaptive refused: %s" % (EVEN, "; ".join(why))}


def test_the_baseline_recommended_turns_speculation_off_and_names_the_candidates_reason():
    # the load sits at 8, where the baseline is best: it loses nothing, EAGLE-3 its 25 % there
    keep = {"action": "keep", "reason": "EAGLE-3 beats the baseline at every measured concurrency"}
    rec = curves.recommend(curves_of(TWO), "0.5.23", "slots_zero", True, keep, CONF, {8: 3})
    assert rec["setting"] == "baseline" and rec["action"] == "off" and rec["server_speculative"] == {"algorithm": ""}
    assert rec["why_not_adaptive"] == ["no adaptive setting to apply (EAGLE-3 beats the baseline at every measured "
                                       "concurrency)"]
    assert rec["profile"] == {8: 1.0} and rec["profile_source"] == "the load profile given (benchmark_load_profile)"
    assert rec["losses"]["baseline"] == {"weighted": 0.0, "where": [], "worst": point(8, 800.0, 800.0, "baseline", 0.0),
                                         "stand_ins": []}
    assert rec["worst"] == {"batch": 8, "loss": 0.0}
    # a setting that loses nothing has no worst point in its words
    assert rec["reason"] == ("the baseline (no speculation) for this load (the load profile given "
                             "(benchmark_load_profile)): it loses 0.0% of the best measured throughput over it; static "
                             "EAGLE-3 would lose 25.0%, at worst 25.0% at batch 8; adaptive refused: "
                             + rec["why_not_adaptive"][0])


# the adaptive curve: EAGLE-3's at 1, the baseline's at 8 (the best of both), then a third point at 16
THREE = {1: (100.0, 200.0, 200.0), 8: (800.0, 600.0, 800.0), 16: (1600.0, 800.0, 1200.0)}


def test_adaptive_applied_carries_the_candidates_setting_threshold_and_reason():
    rec = curves.recommend(curves_of(THREE), "0.5.15.post1", "slots_zero", True, CAND, CONF)
    third = 1.0 / 3
    assert rec["profile"] == {1: third, 8: third, 16: third}
    # adaptive loses 25 % at 16 only; the baseline 50 % at 1; EAGLE-3 25 % at 8 and 50 % at 16
    assert rec["losses"]["adaptive"]["weighted"] == pytest.approx(0.25 / 3)
    assert rec["losses"]["baseline"]["weighted"] == pytest.approx(0.5 / 3)
    assert rec["losses"]["eagle3"]["weighted"] == pytest.approx(0.75 / 3)
    assert rec["losses"]["adaptive"]["where"] == [point(16, 1200.0, 1600.0, "baseline", 0.25)]
    assert rec["setting"] == "adaptive" and rec["action"] == "adaptive" and rec["why_not_adaptive"] == []
    assert rec["candidates"] == ["baseline", "eagle3", "adaptive"]
    assert rec["server_speculative"] == CAND["server_speculative"]
    assert rec["server_speculative"] is not CAND["server_speculative"]  # a copy: the answer is not the candidate
    assert (rec["effective_threshold"], rec["config_key"], rec["threshold"]) == (4, 5, 6)
    assert rec["worst"] == {"batch": 16, "loss": 0.25}
    # a 25 % shortfall against the better static setting at 16 is reported (10 % rule), it vetoes nothing
    assert rec["shortfalls"] == [{"batch": 16, "adaptive": 1200.0, "static": 1600.0, "static_setting": "baseline",
                                  "ratio": 0.75}]
    assert rec["reason"] == (
        "adaptive EAGLE-3 for this load (%s): it loses 8.3%% of the best measured throughput over it, at worst 25.0%% "
        "at batch 16 (where baseline gives 1600 tok/s); the baseline (no speculation) would lose 16.7%%, at worst "
        "50.0%% at batch 1; static EAGLE-3 would lose 25.0%%, at worst 50.0%% at batch 16; SGLang 0.5.15.post1 "
        "carries spec-step0-plain-decode: %s" % (EVEN, CAND["reason"]))


@pytest.mark.parametrize("adaptive_16,shortfall", [(1440.0, False), (1439.0, True)])
def test_a_shortfall_is_more_than_ten_percent_behind_the_better_static_setting(adaptive_16, shortfall):
    table = dict(THREE)
    table[16] = (1600.0, 800.0, adaptive_16)  # 1440 is 0.9 x 1600
    rec = curves.recommend(curves_of(table), "0.5.23", "slots_zero", True, CAND, CONF)
    assert [s["batch"] for s in rec["shortfalls"]] == ([16] if shortfall else [])


def test_a_tie_within_one_point_goes_to_the_simpler_setting_and_says_so():
    # the load: 1 % at batch 1 (the baseline loses 50 % there), 99 % at 8 (adaptive loses 0.5 % there): adaptive
    # loses 0.495 %, the baseline 0.5 % - within 1 point: the baseline goes
    table = {1: (100.0, 200.0, 200.0), 8: (800.0, 600.0, 796.0)}
    rec = curves.recommend(curves_of(table), "0.5.23", "slots_zero", True, CAND, CONF, {1: 1, 8: 99})
    assert rec["losses"]["baseline"]["weighted"] == pytest.approx(0.005)
    assert rec["losses"]["adaptive"]["weighted"] == pytest.approx(0.99 * 0.005)
    assert rec["setting"] == "baseline"
    assert rec["reason"] == (
        "the baseline (no speculation) for this load (the load profile given (benchmark_load_profile)): it loses 0.5% "
        "of the best measured throughput over it, at worst 50.0% at batch 1 (where eagle3 gives 200 tok/s); static "
        "EAGLE-3 would lose 24.8%, at worst 25.0% at batch 8; adaptive EAGLE-3 would lose 0.5%, at worst 0.5% at "
        "batch 8; adaptive EAGLE-3 loses 0.5%, within 1 point of it: the simpler setting goes")
    assert "adaptive refused" not in rec["reason"]


def test_a_loss_exactly_one_point_above_the_least_still_goes_to_the_simpler_setting():
    # the load: 2 % at batch 1, where the baseline loses 50 % (1 point in all); EAGLE-3 loses nothing (level at 8)
    table = {1: (100.0, 200.0, None), 8: (800.0, 800.0, None)}
    rec = curves.recommend(curves_of(table), "0.5.23", "slots_zero", False, None, CONF, {1: 1, 8: 49})
    assert rec["losses"]["baseline"]["weighted"] == 0.01 and rec["losses"]["eagle3"]["weighted"] == 0.0
    assert rec["setting"] == "baseline"
    assert "; static EAGLE-3 loses 0.0%, within 1 point of it: the simpler setting goes; adaptive refused: " \
        in rec["reason"]
    # where two curves give the same tok/s, the best is named the baseline (the simpler one)
    assert rec["losses"]["eagle3"]["worst"] == point(1, 200.0, 200.0, "eagle3", 0.0)
    assert rec["losses"]["baseline"]["where"] == [point(1, 100.0, 200.0, "eagle3", 0.5)]
    assert curves.confirm(curves_of(table) + [res("applied", 8, 800.0)])["points"][0]["best_setting"] == "baseline"


def test_a_batch_whose_share_of_the_load_is_nil_is_not_the_worst_point():
    # 5e-324 of 2: the share rounds to 0 - batch 1 weighs nothing, so the baseline's 50 % there is not its worst
    rec = curves.recommend(curves_of(TWO), "0.5.23", "slots_zero", False, None, CONF, {1: 5e-324, 8: 2})
    assert rec["profile"] == {1: 0.0, 8: 1.0} and rec["setting"] == "baseline"
    assert rec["worst"] == {"batch": 8, "loss": 0.0}


def test_adaptive_measured_nowhere_that_filled_is_said():
    # the candidate is adaptive and SGLang could run it, but the adaptive curve was not measured
    rec = curves.recommend(curves_of(TWO), "0.5.23", "slots_zero", True, CAND, CONF)
    assert rec["why_not_adaptive"] == ["the adaptive setting was not measured at a batch size that filled"]
    assert rec["setting"] == "eagle3" and "adaptive" not in rec["losses"]
    assert rec["reason"].endswith("; adaptive refused: the adaptive setting was not measured at a batch size that "
                                  "filled")


def test_adaptive_measured_only_above_the_smallest_batch_has_no_loss_there_and_is_refused():
    table = {1: (100.0, 200.0, None), 8: (800.0, 600.0, 800.0)}
    rec = curves.recommend(curves_of(table), "0.5.23", "slots_zero", True, CAND, CONF)
    assert rec["why_not_adaptive"] == ["the adaptive setting was not measured at batch 1 or below"]
    assert rec["candidates"] == ["baseline", "eagle3"] and "adaptive" not in rec["losses"]
    # where adaptive is refused already (no patch), that is the one reason given
    rec = curves.recommend(curves_of(table), "0.5.23", "slots_zero", False, CAND, CONF)
    assert rec["why_not_adaptive"] == [NO_PATCH % "0.5.23"]


def test_a_batch_adaptive_skipped_counts_the_loss_of_its_nearest_measured_batch_below():
    # adaptive measured at 1, 2, 4 (losing 0, 50 %, 25 %), not at 8: 8 counts 4's 25 %, not 2's 50 %
    table = {1: (100.0, 200.0, 200.0), 2: (200.0, 400.0, 200.0), 4: (400.0, 800.0, 600.0), 8: (800.0, 1600.0, None)}
    rec = curves.recommend(curves_of(table), "0.5.23", "slots_zero", True, CAND, CONF)
    assert rec["deciding"] == [1, 2, 4, 8]  # adaptive's absence at 8 takes nothing out
    loss = rec["losses"]["adaptive"]
    assert loss["stand_ins"] == [{"batch": 8, "from": 4}]
    assert loss["weighted"] == pytest.approx((0 + 0.5 + 0.25 + 0.25) / 4)
    assert loss["where"][-1] == point(8, None, 1600.0, "eagle3", 0.25)
    assert loss["worst"] == point(2, 200.0, 400.0, "eagle3", 0.5)


def test_a_batch_where_nothing_produced_a_token_costs_no_setting_anything():
    table = {1: (100.0, 200.0, None), 8: (0.0, 0.0, None)}
    rec = curves.recommend(curves_of(table), "0.5.23", "slots_zero", False, None, CONF)
    assert rec["losses"]["baseline"]["weighted"] == 0.25 and rec["losses"]["eagle3"]["weighted"] == 0.0
    assert rec["setting"] == "eagle3"


def test_an_unfilled_adaptive_point_takes_its_batch_out_only_where_adaptive_can_run():
    results = curves_of(THREE)
    for r in results:
        if r["mode"] == "eagle3_threshold" and r["concurrency"] == 16:
            r["running"] = 8.0
    assert curves.recommend(results, "0.5.23", "slots_zero", True, CAND, CONF)["deciding"] == [1, 8]
    assert curves.recommend(results, "0.5.23", "slots_zero", False, CAND, CONF)["deciding"] == [1, 8, 16]
    # every adaptive point short of its batch: no adaptive loss is figured, even where the static points decide
    results = [dict(r, running=r["concurrency"] / 2.0) if r["mode"] == "eagle3_threshold" else r
               for r in curves_of(THREE)]
    rec = curves.recommend(results, "0.5.23", "slots_zero", False, CAND, CONF)
    assert rec["deciding"] == [1, 8, 16] and sorted(rec["losses"]) == ["baseline", "eagle3"]
    # a batch with no adaptive point at all still decides where adaptive can run
    results = [r for r in curves_of(THREE) if not (r["mode"] == "eagle3_threshold" and r["concurrency"] == 8)]
    assert curves.recommend(results, "0.5.23", "slots_zero", True, CAND, CONF)["deciding"] == [1, 8, 16]


def test_nothing_deciding_refuses_and_keeps_the_inputs_beside_the_refusal():
    results = [res("baseline", 8, 800.0, running=2.0), res("eagle3", 8, 600.0), res("baseline", 4, 400.0)]
    rec = curves.recommend(results, "0.5.23", "slots_zero", True, CAND, CONF)
    assert rec["setting"] is None and rec["action"] == "refuse" and rec["deciding"] == []
    assert rec["not_filled"] == [(8, "baseline", 2.0, None)]
    assert rec["reason"] == ("no batch size was measured in both the baseline and static EAGLE-3 with the batch "
                             "filled: nothing decides. Raise --max-running-requests (benchmark_max_batch), run the "
                             "load from a less busy host, or give the run more time (benchmark_time_budget)")


# ---- the measured table

def test_rows_average_the_repeats_and_read_a_missing_decode_figure_from_the_per_request_rate():
    results = [{"mode": "baseline", "concurrency": "4", "decode_throughput": 100.0, "running": 4.0},
               {"mode": "baseline", "concurrency": 4, "decode_throughput": 110.0, "running": 3.0},
               {"mode": "eagle3", "concurrency": 4, "median_per_request_tps": 12.5, "running": None,
                "mean_decoding": 3.5},
               {"mode": "eagle3", "concurrency": 4, "decode_throughput": None, "median_per_request_tps": None,
                "running": None, "mean_decoding": 3.7},
               {"mode": "baseline", "concurrency": 2, "decode_throughput": 0.0}]
    table = curves.rows(results)
    assert [r["batch"] for r in table] == [2, 4]
    assert table[0]["modes"]["baseline"] == {"decode": 0.0, "running": None, "client": None, "filled": None, "n": 1}
    assert table[1]["modes"]["baseline"] == {"decode": 105.0, "running": 3.5, "client": None, "filled": False, "n": 2}
    # 12.5 tok/s per request x 4 requests; the server's figure missing, the client's mean 3.6 fills 90 % of 4
    assert table[1]["modes"]["eagle3"] == {"decode": 50.0, "running": None, "client": pytest.approx(3.6),
                                           "filled": True, "n": 2}
    assert curves.not_filled(table) == [(4, "baseline", 3.5, None)]


# ---- the load profile

def test_profile_of_no_measured_point():
    assert curves.profile({1: 1}, []) == ({}, "no measured point")


def test_profile_samples_count_each_once_at_the_nearest_batch_and_one_running_request_counts():
    weights, how = curves.profile([3, 4, 4, 1], [1, 4])
    assert weights == {1: 0.25, 4: 0.75} and how == "4 running-batch samples from Prometheus"
    # equally far on the log2 axis (4 between 2 and 8): the smaller batch
    assert curves.profile([4], [2, 8])[0] == {2: 1.0}


def test_profile_skips_what_is_not_a_load_and_goes_on_reading():
    nan = float("nan")
    weights, how = curves.profile({"x": 1, 4: 1, nan: 1, 1: nan, 2: 0, 8: -1, 16: 2}, [1, 2, 4, 8, 16])
    assert weights == {4: pytest.approx(1 / 3), 16: pytest.approx(2 / 3)}
    assert how == "the load profile given (benchmark_load_profile)"
    assert curves.profile(["x", None, 8], [1, 8])[0] == {8: 1.0}


def test_profile_weights_below_one_in_all_are_still_a_load():
    assert curves.profile({1: 0.125, 4: 0.375}, [1, 4])[0] == {1: 0.25, 4: 0.75}


@pytest.mark.parametrize("load", [None, "busy", 7, {}, [0, 0], {4: 0}])
def test_without_a_usable_load_every_batch_weighs_the_same(load):
    assert curves.profile(load, [1, 4]) == ({1: 0.5, 4: 0.5}, EVEN)


# ---- confirm and reproduces

def test_confirm_reports_each_point_whole_and_skips_points_without_an_applied_figure():
    results = curves_of(TWO) + [res("baseline", 2, 200.0), res("applied", 2, None),
                                res("applied", 8, 760.0, running=7.5)]
    results.insert(0, res("applied", 0.5, 50.0))  # no curve measured at 0: nothing to confirm against there
    conf = curves.confirm(results)
    # 1: no applied run; 2: applied gave no figure; 8: 5 % below the best (the baseline's 800)
    assert conf == {"tolerance": 0.1, "deciding": [8], "ok": True, "points": [
        {"batch": 8, "applied": 760.0, "best": 800.0, "best_setting": "baseline", "rel_err": pytest.approx(-0.05),
         "running": 7.5, "decides": True, "ok": True}]}


def test_confirm_against_a_best_of_nothing_is_no_confirmation():
    conf = curves.confirm([res("baseline", 4, 0.0), res("eagle3", 4, 0.0), res("applied", 4, 0.0)])
    assert conf["points"][0]["rel_err"] is None and conf["ok"] is False


@pytest.mark.parametrize("applied,want", [(125.0, True), (75.0, True), (125.5, False), (74.5, False)])
def test_reproduces_holds_the_tolerance_from_both_sides(applied, want):
    results = [res("baseline", 4, 100.0), res("applied", 4, applied), res("eagle3", 4, 90.0)]
    assert curves.reproduces(results, "baseline", tolerance=0.25) is want


# ---- summary.json

def test_summary_rounds_and_reads_the_threshold_where_it_was_applied_first():
    results = [res("applied", 2, 222.0), res("baseline", 1, 123.456, running=None, client=None),
               res("eagle3", 1, 200.04, running=0.96), res("eagle3_threshold", 1, 199.96),
               res("baseline", 4, 400.0, running=None), res("eagle3", 4, 300.0, running=3.96)]
    results[1]["running"] = None
    results[1]["mean_decoding"] = 0.94  # the client's figure where the server gave none: the lowest running
    results[4]["running"] = None
    results[2]["accept_length"] = 3.14159
    meta = {"sglang_version": "0.5.23", "gpu": "H100", "applied": {"setting": "adaptive", "effective_threshold": 12},
            "adaptive_candidate": {"effective_threshold": 40}}
    out = curves.summary(results, meta, {"setting": "eagle3", "effective_threshold": 24}, {"ok": True})
    assert out["applied"] == "adaptive" and out["threshold"] == 12 and out["confirmed"] is True
    assert out["accept_length"] == 3.142
    assert out["points"] == [
        {"batch": 1, "running": 0.9, "baseline": 123.5, "eagle3": 200.0, "adaptive": 200.0, "applied": None},
        {"batch": 4, "running": 4.0, "baseline": 400.0, "eagle3": 300.0, "adaptive": None, "applied": None}]
    # nothing applied yet: the recommendation's threshold, else the candidate's
    meta.pop("applied")
    out = curves.summary(results, meta, {"setting": "eagle3", "effective_threshold": 24}, None)
    assert (out["applied"], out["threshold"], out["confirmed"]) == ("eagle3", 24, False)
    out = curves.summary(results, meta, {"setting": "eagle3"}, {"ok": False})
    assert (out["threshold"], out["confirmed"]) == (40, False)
    # an applied setting without a threshold of its own takes the recommendation's
    out = curves.summary(results, dict(meta, applied={"setting": "eagle3"}), {"effective_threshold": 24}, None)
    assert (out["applied"], out["threshold"]) == ("eagle3", 24)


# ---- the grid: which point is measured next

PLAN = {"first_mode": "baseline", "budget_s": 0, "elapsed_s": 0, "mode_index": 0, "modes_total": 4, "repeats": 1}


def test_a_point_already_measured_is_not_measured_again():
    done = [res("baseline", 4, 400.0)]
    assert curves.next_point("baseline", 4, done, PLAN) == {"measure": False, "why": "measured"}
    assert curves.next_point("eagle3", 4, done, dict(PLAN, mode_index=1)) == {"measure": True, "why": "on the grid"}
    assert curves.next_point("baseline", 8, done, PLAN) == {"measure": True, "why": "doubling"}
    # a grid of nothing measured yet: the first mode starts, the grid is the first mode's
    assert curves.next_point("baseline", 1, [], None) == {"measure": True, "why": "doubling"}
    assert curves.next_point("eagle3", 4, [], PLAN) == {"measure": False,
                                                        "why": "not on the grid baseline measured"}


def test_the_first_mode_is_the_plans_and_the_baseline_without_one():
    done = [res("eagle3", 1, 100.0), res("eagle3", 2, 105.0)]
    plan = dict(PLAN, first_mode="eagle3")
    assert curves.next_point("eagle3", 4, done, plan) == {
        "measure": False, "why": "the server saturates: 105 tok/s at batch 2, 100 at 1"}
    assert curves.next_point("baseline", 1, done, plan) == {"measure": True, "why": "on the grid"}
    assert curves.next_point("eagle3", 4, done, dict(plan, first_mode=None))["why"] == \
        "not on the grid baseline measured"


@pytest.mark.parametrize("running,client,shown", [(1.5, None, "1.5"), (None, 1.25, "1.2 (client)"),
                                                  (float("nan"), None, "nan"),  # a sample of no number fills nothing
                                                  (None, None, None)])
def test_the_first_mode_stops_where_a_point_did_not_fill_and_shows_what_ran(running, client, shown):
    done = [res("baseline", 1, 100.0), res("baseline", 2, 190.0)]
    done[1]["running"], done[1]["mean_decoding"] = running, client
    go = curves.next_point("baseline", 4, done, PLAN)
    if shown is None:  # nothing says it did not fill: doubling goes on
        assert go == {"measure": True, "why": "doubling"}
    else:
        assert go == {"measure": False, "why": "batch 2 did not fill (%s running): raise --max-running-requests or "
                                               "the client's ceiling" % shown}


def test_the_did_not_fill_stop_names_the_last_batch():
    done = [res("baseline", 1, 100.0), res("baseline", 2, 200.0), res("baseline", 4, 400.0, running=2.0)]
    assert curves.next_point("baseline", 8, done, PLAN)["why"].startswith("batch 4 did not fill (2.0 running)")


def test_saturation_needs_two_points_and_a_figure_at_each():
    one = [res("baseline", 1, 100.0)]
    assert curves.next_point("baseline", 2, one, PLAN)["measure"] is True
    # the last point gave no figure, or the one before gave none / nothing: no saturation can be read
    for a, b in ((100.0, None), (None, 100.0), (0.0, 100.0)):
        done = [res("baseline", 1, a), res("baseline", 2, b)]
        assert curves.next_point("baseline", 4, done, PLAN)["measure"] is True, (a, b)
    # exactly 10 % more is not less than 10 %: doubling goes on
    done = [res("baseline", 1, 1024.0), res("baseline", 2, 1024 * 1.1)]
    assert curves.next_point("baseline", 4, done, PLAN)["measure"] is True
    # saturation is read from the two points just below, not the first two
    done = [res("baseline", 1, 100.0), res("baseline", 2, 105.0), res("baseline", 4, 300.0)]
    assert curves.next_point("baseline", 8, done, PLAN)["measure"] is True
    done = [res("baseline", 1, 100.0), res("baseline", 2, 300.0), res("baseline", 4, 305.0)]
    assert curves.next_point("baseline", 8, done, PLAN)["why"] == "the server saturates: 305 tok/s at batch 4, 300 at 2"


def grid(table):
    """The first mode (baseline) at every batch of ``table``, and eagle3 at the batches it has a figure for."""
    out = [res("baseline", b, v[0]) for b, v in sorted(table.items())]
    return out + [res("eagle3", b, v[1]) for b, v in sorted(table.items()) if v[1] is not None]


@pytest.mark.parametrize("r2,r4,settled", [
    (0.85, 0.80, True),     # more than 10 % behind at 2, falling further at 4
    (0.95, 0.80, False),    # within 10 % at 2
    (0.9, 0.80, False),     # exactly 10 % behind at 2 is not more than 10 %
    (0.85, 0.85, False),    # not falling further
    (0.85, 0.86, False),    # catching up
])
def test_a_later_mode_stops_once_its_order_has_settled_behind(r2, r4, settled):
    table = {1: (100.0, 100.0), 2: (200.0, 200.0 * r2), 4: (400.0, 400.0 * r4), 8: (800.0, None)}
    go = curves.next_point("eagle3", 8, grid(table), dict(PLAN, mode_index=1))
    if settled:
        assert go == {"measure": False, "why": "order settled: eagle3 at 0.85x then 0.80x of the best other curve"}
    else:
        assert go == {"measure": True, "why": "on the grid"}


def test_two_points_behind_are_enough_to_settle_the_order():
    table = {1: (100.0, 80.0), 2: (200.0, 150.0), 4: (400.0, None)}
    assert curves.next_point("eagle3", 4, grid(table), dict(PLAN, mode_index=1)) == {
        "measure": False, "why": "order settled: eagle3 at 0.80x then 0.75x of the best other curve"}
    assert curves.next_point("eagle3", 2, grid(table)[:-1], dict(PLAN, mode_index=1))["measure"] is True  # one point


def test_the_order_is_read_at_the_last_two_points_against_the_best_other_curve():
    # eagle3 far behind at 1, then level at 2, behind at 4 and 8: only 4 and 8 count
    table = {1: (100.0, 50.0), 2: (200.0, 200.0), 4: (400.0, 340.0), 8: (800.0, 640.0), 16: (1600.0, None)}
    go = curves.next_point("eagle3", 16, grid(table), dict(PLAN, mode_index=1))
    assert go["measure"] is False and go["why"].endswith("at 0.85x then 0.80x of the best other curve")
    # the best *other* curve: adaptive ahead of the baseline at 4 and 8 puts eagle3 behind where it is level with the
    # baseline
    extra = [res("eagle3_threshold", 4, 500.0), res("eagle3_threshold", 8, 1200.0)]
    table = {1: (100.0, 100.0), 2: (200.0, 200.0), 4: (400.0, 400.0), 8: (800.0, 800.0), 16: (1600.0, None)}
    assert curves.next_point("eagle3", 16, grid(table), dict(PLAN, mode_index=1))["measure"] is True
    go = curves.next_point("eagle3", 16, grid(table) + extra, dict(PLAN, mode_index=1))
    assert go == {"measure": False, "why": "order settled: eagle3 at 0.80x then 0.67x of the best other curve"}
    # a point of this mode with no figure: no order can be read
    results = grid(table) + extra
    results[-1 - len(extra)]["decode_throughput"] = None
    assert curves.next_point("eagle3", 16, results, dict(PLAN, mode_index=1))["measure"] is True


def test_the_confirming_run_takes_every_grid_point_even_behind():
    table = {1: (100.0, 100.0), 2: (200.0, 100.0), 4: (400.0, 100.0), 8: (800.0, None)}
    done = grid(table) + [res("applied", b, 10.0) for b in (1, 2, 4)]
    assert curves.next_point("applied", 8, done, dict(PLAN, mode_index=3)) == {"measure": True, "why": "on the grid"}


def budget_plan(**kw):
    return dict({"first_mode": "baseline", "budget_s": 400, "mode_index": 0, "modes_total": 4, "repeats": 1}, **kw)


def test_the_time_budget_is_each_modes_equal_share_so_far():
    # 400 s over 4 modes: the first mode may use 100 s, the second 200 s (its share on top of the first's)
    done = [res("baseline", 1, 100.0, duration=30.0)]
    assert curves.next_point("baseline", 2, done, budget_plan(elapsed_s=40))["measure"] is True   # 40 + 60 = 100
    go = curves.next_point("baseline", 2, done, budget_plan(elapsed_s=41))
    assert go == {"measure": False, "why": "time budget: 41 s of 400 s used, this point would take about 60 s more "
                                           "than this mode's share"}
    # the second mode: a point of batch 1 took 30 s in the first: 30 s more
    plan = budget_plan(mode_index=1, elapsed_s=170)
    assert curves.next_point("eagle3", 1, done, plan)["measure"] is True
    assert curves.next_point("eagle3", 1, done, dict(plan, elapsed_s=171))["measure"] is False
    # without modes_total the whole budget is the one mode's
    plan = {"first_mode": "baseline", "budget_s": 100, "elapsed_s": 40}
    assert curves.next_point("baseline", 2, done, plan)["measure"] is True
    assert curves.next_point("baseline", 2, done, dict(plan, modes_total=1))["measure"] is True
    assert curves.next_point("baseline", 2, done, dict(plan, elapsed_s=41, modes_total=0))["measure"] is False


def test_the_estimate_is_the_same_batchs_longest_run_else_twice_this_modes_last_run():
    # batch 4 ran 50 s in the baseline and 20 s in eagle3 (no duration in a third): 2 repeats -> 100 s
    done = [res("baseline", 4, 400.0, duration=50.0), res("eagle3", 4, 300.0, duration=20.0),
            res("eagle3_threshold", 4, 300.0), res("eagle3", 2, 200.0, duration=10.0)]
    plan = budget_plan(budget_s=400, mode_index=0, modes_total=1, repeats=2, first_mode="applied")  # share: 400 s
    assert curves.next_point("applied", 4, done, dict(plan, elapsed_s=300))["measure"] is True
    go = curves.next_point("applied", 4, done, dict(plan, elapsed_s=301))
    assert go["measure"] is False and "would take about 100 s more" in go["why"]
    # a batch not run yet: twice this mode's last run (eagle3's last: batch 2, 10 s), x 2 repeats = 40 s; another
    # mode's later run does not count
    plan = dict(plan, first_mode="eagle3")
    later = done + [res("baseline", 2, 1.0, duration=90.0)]
    go = curves.next_point("eagle3", 8, later, dict(plan, elapsed_s=361))
    assert go["measure"] is False and "would take about 40 s more" in go["why"]
    assert curves.next_point("eagle3", 8, later, dict(plan, elapsed_s=360))["measure"] is True
    # nothing run yet in this mode nor at this batch: no estimate, only the time already spent counts
    plan = dict(plan, first_mode="applied")
    assert curves.next_point("applied", 16, done, dict(plan, elapsed_s=400))["measure"] is True
    assert curves.next_point("applied", 16, done, dict(plan, elapsed_s=400.5))["measure"] is False


def test_without_elapsed_time_nothing_is_spent_and_a_budget_of_one_second_still_binds():
    # batch 2 ran 30 s in eagle3: 2 repeats -> 60 s, exactly the first mode's share of 240 s over 4 modes
    done = [res("baseline", 1, 100.0, duration=30.0), res("eagle3", 2, 100.0, duration=30.0)]
    plan = {"first_mode": "baseline", "budget_s": 240, "modes_total": 4, "repeats": 2}
    assert curves.next_point("baseline", 2, done, plan)["measure"] is True
    # no repeats given: one run - batch 2's 30 s fits 70 s spent of 100
    plan = {"first_mode": "baseline", "budget_s": 100, "modes_total": 1, "elapsed_s": 70}
    assert curves.next_point("baseline", 2, done, plan)["measure"] is True
    assert curves.next_point("baseline", 2, done, dict(plan, elapsed_s=70.5))["measure"] is False
    plan = {"first_mode": "baseline", "budget_s": 1, "modes_total": 1, "elapsed_s": 0}
    assert curves.next_point("baseline", 2, done, plan)["measure"] is False
    assert curves.next_point("baseline", 2, done, dict(plan, budget_s=0))["measure"] is True  # 0: no budget
