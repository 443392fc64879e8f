# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Three curves on the running-batch axis (plugin_utils/_bench_curves.py): batch filled, the 10 % rule between the
adaptive and the better static setting, the step-0 patch, the load profile, the confirm rule, summary.json's shape,
the doubling grid. The H200 table of issue 34 (SGLang 0.5.15.post1, 13 GiB target, accept length 3.00) is the data."""
import testpaths  # puts the checkout on sys.path as the collection

import pytest

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_curves as curves

REPO = testpaths.REPO
# batch: (baseline, static EAGLE-3, adaptive unpatched) decode tok/s, issue 34 (32: adaptive not measured there)
H200 = {1: (226, 513, 512), 16: (3344, 5852, 2130), 32: (6304, 8814, None), 64: (11950, 11277, 4366),
        128: (20680, 12627, 5318), 256: (28819, 12661, 5632)}
CAND = {"action": "adaptive", "reason": "speculate (num_steps 3) while at most 40 requests run",
        "effective_threshold": 40, "config_key": 41, "threshold": 47,
        "server_speculative": {"algorithm": "EAGLE3", "draft_model_path": "/d", "adaptive": True, "eagle_topk": 1,
                               "num_steps": 3, "num_draft_tokens": 4,
                               "adaptive_config": {"1": {"candidate_steps": [3]}, "41": {"candidate_steps": [0]}}}}
CONF = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1}


def res(mode, batch, tok_s, running=None, client=None, duration=10.0):
    """One measured point as bench_serving returns it (running: the server's sample; default: the batch filled)."""
    return {"mode": mode, "concurrency": batch, "repeat": 0, "decode_throughput": tok_s, "duration": duration,
            "running": float(batch) if running is None else running, "mean_decoding": client}


def table(data=None, adaptive=None, applied=None):
    """Results of the three curves; ``adaptive``: {batch: tok/s} overriding the third column."""
    out = []
    for batch, (base, static, adapt) in sorted((data or H200).items()):
        out += [res("baseline", batch, base), res("eagle3", batch, static)]
        adapt = (adaptive or {}).get(batch, adapt)
        if adapt is not None:
            out.append(res("eagle3_threshold", batch, adapt))
        if applied is not None:
            out.append(res("applied", batch, applied(batch, base, static)))
    return out


def patched(ratio_above=1.0):
    """The adaptive curve a step-0 patch would give: EAGLE-3 up to 32, ratio x the baseline above."""
    return dict((b, s if b <= 32 else ratio_above * base) for b, (base, s, _a) in H200.items())


def recommend(results, patched_=True, load=None, cand=None, version="0.5.15.post1"):
    cand = CAND if cand is None else cand
    return curves.recommend(results, version, "slots_zero", patched_, cand, CONF, load)


# ---- batch filled

@pytest.mark.parametrize("running,client,want", [(230.4, None, True), (230.3, None, False), (256, 10, True),
                                                 (None, 230.4, True), (None, 200, False), (None, None, None)])
def test_a_point_fills_at_nine_tenths_of_its_batch(running, client, want):
    assert curves.filled(256, running, client) is want


def small(base_256_running=None, adaptive_256_running=None):
    """128: adaptive best; 256: the baseline far ahead (load {128: 1, 256: 1}: the baseline loses least)."""
    out = [res("baseline", 128, 100.0), res("eagle3", 128, 80.0), res("eagle3_threshold", 128, 110.0),
           res("baseline", 256, 200.0, running=base_256_running), res("eagle3", 256, 100.0),
           res("eagle3_threshold", 256, 120.0, running=adaptive_256_running)]
    return out


def test_a_point_that_did_not_fill_decides_nothing():
    load = {128: 1, 256: 1}
    rec = recommend(small(), load=load)
    assert rec["setting"] == "baseline" and rec["deciding"] == [128, 256]
    assert rec["losses"]["baseline"]["weighted"] == pytest.approx((1 - 100 / 110) / 2)
    assert rec["losses"]["adaptive"]["weighted"] == pytest.approx(0.4 / 2)
    below = 0.9 * 256 - 0.1  # just below FILL: 256 decides nothing, its load counts at 128
    rec = recommend(small(base_256_running=below), load=load)
    assert rec["setting"] == "adaptive" and rec["deciding"] == [128] and rec["profile"] == {128: 1.0}
    assert rec["not_filled"] == [(256, "baseline", below, None)]
    assert recommend(small(base_256_running=0.9 * 256), load=load)["setting"] == "baseline"  # at FILL: it decides
    # an adaptive point that did not fill takes its batch out too, where adaptive can run ...
    assert recommend(small(adaptive_256_running=below), load=load)["deciding"] == [128]
    # ... and not where it cannot (no step-0 patch): the static points decide there
    rec = recommend(small(adaptive_256_running=below), patched_=False, load=load)
    assert rec["deciding"] == [128, 256] and rec["setting"] == "baseline"


def test_nothing_filled_refuses_with_the_fix():
    results = [dict(r, running=1.0) for r in table() if r["concurrency"] > 1]
    rec = recommend(results)
    assert rec["action"] == "refuse" and rec["setting"] is None and "max-running-requests" in rec["reason"]


# ---- the least loss decides, ties to the simpler setting; the step-0 patch

E3_LOSS = (1 - 11277 / 11950 + 1 - 12627 / 20680 + 1 - 12661 / 28819) / 6  # static EAGLE-3 on issue 34's H200 table


@pytest.mark.parametrize("ratio,setting", [(1 - 2 * (E3_LOSS - 0.01) + 1e-6, "adaptive"),
                                           (1 - 2 * (E3_LOSS - 0.01) - 1e-6, "eagle3"), (0.8999, "adaptive"),
                                           (0.6, "eagle3")])
def test_the_least_loss_decides_and_a_tie_within_one_point_goes_to_the_simpler_setting(ratio, setting):
    # adaptive: EAGLE-3 up to 32, ratio x the baseline above: it loses (1 - ratio) at 3 of 6 points
    rec = recommend(table(adaptive=patched(ratio)))
    assert rec["losses"]["adaptive"]["weighted"] == pytest.approx((1 - ratio) / 2)
    assert rec["losses"]["eagle3"]["weighted"] == pytest.approx(E3_LOSS)
    assert rec["setting"] == setting and rec["tie"] == 0.01
    if setting == "adaptive":
        assert rec["action"] == "adaptive" and rec["server_speculative"] == CAND["server_speculative"]
        assert rec["effective_threshold"] == 40 and rec["why_not_adaptive"] == []
        assert rec["worst"] == {"batch": 64, "loss": pytest.approx(1 - ratio)}  # the first of the equal worst
    else:
        assert rec["action"] == "keep" and rec["worst"] == {"batch": 256, "loss": pytest.approx(1 - 12661 / 28819)}
    # a shortfall of more than 10 % is reported, it vetoes nothing
    assert [s["batch"] for s in rec["shortfalls"]] == ([64, 128, 256] if ratio < 0.9 else [])
    if ratio == 1 - 2 * (E3_LOSS - 0.01) - 1e-6:
        assert "adaptive EAGLE-3 loses %.1f%%, within 1 point of it: the simpler setting goes" % (
            100 * (1 - ratio) / 2) in rec["reason"]


def test_a_tie_between_the_static_settings_goes_to_the_baseline():
    # two points, each setting best at one: EAGLE-3 loses 0.5 x 40 %, the baseline 0.5 x (40 % +- 2 points)
    def two(base_1):
        return [res("baseline", 1, base_1), res("eagle3", 1, 100.0), res("baseline", 2, 100.0),
                res("eagle3", 2, 60.0)]
    assert recommend(two(61.0), patched_=False)["setting"] == "baseline"  # 19.5 % against 20 %
    assert recommend(two(59.0), patched_=False)["setting"] == "baseline"  # 20.5 %: within 1 point of 20 %
    assert recommend(two(57.0), patched_=False)["setting"] == "eagle3"  # 21.5 %: more than 1 point behind
    assert recommend(two(59.0), patched_=False)["worst"] == {"batch": 1, "loss": pytest.approx(0.41)}


def test_the_h200_table_refuses_adaptive_and_says_what_is_lost_where():
    # SGLang's own step 0 (unpatched): 0.64x at 16, 0.37x at 64, 0.20x at 256 of the baseline
    rec = recommend(table(), patched_=False)
    assert rec["setting"] in ("eagle3", "baseline") and rec["action"] in ("keep", "off")
    assert [s["batch"] for s in rec["shortfalls"]] == [16, 64, 128, 256]
    assert "has no spec-step0-plain-decode patch" in rec["reason"]
    # each measured batch weighing the same: EAGLE-3 loses 6 %, 39 %, 56 % at 64, 128, 256 (16.8 % in all), the
    # baseline 56 %, 43 %, 28 % at 1, 16, 32 (21.1 %)
    assert rec["setting"] == "eagle3" and rec["candidates"] == ["baseline", "eagle3"]
    lost = dict((w["batch"], round(w["lost"], 2)) for w in rec["losses"]["eagle3"]["where"])
    assert lost == {64: 0.06, 128: 0.39, 256: 0.56}
    lost = dict((w["batch"], round(w["lost"], 2)) for w in rec["losses"]["baseline"]["where"])
    assert lost == {1: 0.56, 16: 0.43, 32: 0.28}
    assert rec["losses"]["eagle3"]["weighted"] == pytest.approx(0.168, abs=1e-3)
    assert "at worst 56.1% at batch 256 (where baseline gives 28819 tok/s)" in rec["reason"]
    assert rec["server_speculative"] == dict(CONF, adaptive=False, adaptive_config=None, num_draft_tokens=4)
    # adaptive at 32 was not measured there: it counts its loss at 16 (the nearest below)
    assert rec["losses"]["adaptive"]["stand_ins"] == [{"batch": 32, "from": 16}]


def test_a_good_adaptive_curve_is_still_refused_without_the_patch():
    rec = recommend(table(adaptive=patched()), patched_=False)
    assert rec["setting"] != "adaptive" and rec["shortfalls"] == []
    assert recommend(table(adaptive=patched()), patched_=None)["setting"] != "adaptive"  # not known: not applied
    assert recommend(table(adaptive=patched()), patched_=True)["setting"] == "adaptive"


def test_no_slots_zero_or_no_candidate_means_static():
    rec = curves.recommend(table(adaptive=patched()), "0.5.13", "slots", True, CAND, CONF)
    assert rec["setting"] != "adaptive" and "cannot turn speculation off by batch size" in rec["reason"]
    keep = {"action": "keep", "reason": "EAGLE-3 beats the baseline at every measured concurrency"}
    rec = recommend(table(data=dict((b, (v[0], 2 * v[0], None)) for b, v in H200.items())), cand=keep)
    assert rec["setting"] == "eagle3" and rec["losses"]["eagle3"]["weighted"] == 0
    assert rec["server_speculative"] == dict(CONF, adaptive=False, adaptive_config=None, num_draft_tokens=4)


# ---- the user's load

@pytest.mark.parametrize("load,setting", [({1: 5, 16: 3, 32: 1}, "eagle3"), ({128: 1, 256: 1}, "baseline"),
                                          ([1, 2, 14, 20, 0, 0], "eagle3"), ([100, 240, 300], "baseline")])
def test_the_static_setting_follows_the_load(load, setting):
    rec = recommend(table(), patched_=False, load=load)
    assert rec["setting"] == setting


def test_load_profile_maps_to_the_nearest_measured_batch():
    weights, how = curves.profile({3: 1, 200: 3, "x": 1, -1: 1}, [1, 4, 256])
    assert weights == {4: 0.25, 256: 0.75} and "benchmark_load_profile" in how
    weights, how = curves.profile([0, 0, 50, 60], [32, 64])
    assert weights == {64: 1.0} and "Prometheus" in how
    weights, how = curves.profile(None, [1, 2])
    assert weights == {1: 0.5, 2: 0.5} and "weighs the same" in how


# ---- confirm

@pytest.mark.parametrize("factor,ok", [(0.9, True), (0.8999, False), (1.0999, True), (1.1001, False)])
def test_confirmed_only_when_every_point_is_within_ten_percent_of_the_best(factor, ok):
    best = dict((b, max(v[0], v[1])) for b, v in H200.items())
    results = table(applied=lambda b, base, s: best[b] * (factor if b == 64 else 1.0))
    conf = curves.confirm(results)
    assert conf["ok"] is ok and conf["deciding"] == sorted(H200)
    assert [p["ok"] for p in conf["points"]] == [ok if p["batch"] == 64 else True for p in conf["points"]]


def test_a_static_setting_is_not_confirmed_where_the_other_one_is_better():
    conf = curves.confirm(table(applied=lambda b, base, s: base))
    assert not conf["ok"] and [p["batch"] for p in conf["points"] if not p["ok"]] == [1, 16, 32]
    assert curves.reproduces(table(applied=lambda b, base, s: base), "baseline") is True
    assert curves.reproduces(table(applied=lambda b, base, s: 0.8 * base), "baseline") is False


def test_an_applied_point_that_did_not_fill_decides_nothing_in_the_confirmation():
    results = table(applied=lambda b, base, s: max(base, s) * (0.5 if b == 256 else 1.0))
    for r in results:
        if r["mode"] == "applied" and r["concurrency"] == 256:
            r["running"] = 100.0
    conf = curves.confirm(results)
    assert conf["ok"] and 256 not in conf["deciding"] and not conf["points"][-1]["decides"]


def test_a_run_with_no_deciding_point_is_not_confirmed():
    # every applied point short of its batch: nothing decides, so nothing is confirmed (all() of nothing is not a yes)
    results = table(applied=lambda b, base, s: max(base, s))
    for r in results:
        if r["mode"] == "applied":
            r["running"] = 0.5 * r["concurrency"]
    conf = curves.confirm(results)
    assert conf["deciding"] == [] and conf["ok"] is False and all(p["ok"] for p in conf["points"])
    results[-1]["running"] = 256.0  # one applied point filled (256, on the best curve): confirmed
    conf = curves.confirm(results)
    assert conf["deciding"] == [256] and conf["ok"] is True


# ---- summary.json

def test_summary_has_exactly_the_issue_shape():
    results = table(applied=lambda b, base, s: max(base, s))
    for r in results:
        if r["mode"] == "eagle3":
            r["accept_length"] = 3.0
    meta = {"sglang_version": "0.5.15.post1", "gpu": "NVIDIA H200", "applied": {"setting": "eagle3"},
            "adaptive_candidate": CAND}
    out = curves.summary(results, meta, recommend(results, patched_=False), curves.confirm(results))
    assert list(out) == ["sglang", "gpu", "accept_length", "threshold", "applied", "confirmed", "points"]
    assert out["sglang"] == "0.5.15.post1" and out["gpu"] == "NVIDIA H200" and out["accept_length"] == 3.0
    assert out["threshold"] == 40 and out["applied"] == "eagle3" and out["confirmed"] is True
    assert out["points"][0] == {"batch": 1, "running": 1.0, "baseline": 226, "eagle3": 513, "adaptive": 512,
                                "applied": 513}
    assert out["points"][2]["adaptive"] is None and [p["batch"] for p in out["points"]] == sorted(H200)
    assert set(out["points"][0]) == {"batch", "running", "baseline", "eagle3", "adaptive", "applied"}
    # nothing applied yet: the recommended setting, not confirmed
    bare = curves.summary(table(), {"sglang_version": "0.5.23"}, {"setting": "baseline"}, None)
    assert bare["applied"] == "baseline" and bare["confirmed"] is False and bare["points"][0]["applied"] is None


# ---- the grid

PLAN = {"first_mode": "baseline", "budget_s": 0, "elapsed_s": 0, "mode_index": 0, "modes_total": 4, "repeats": 1}


def test_the_first_mode_doubles_until_the_server_saturates():
    done = [res("baseline", 1, 100), res("baseline", 2, 200)]
    assert curves.next_point("baseline", 4, done, PLAN)["measure"]
    done.append(res("baseline", 4, 219.9))  # doubling gained less than 10 %
    go = curves.next_point("baseline", 8, done, PLAN)
    assert not go["measure"] and "saturates" in go["why"]
    done[-1] = res("baseline", 4, 220.1)  # just above 10 %: keep doubling
    assert curves.next_point("baseline", 8, done, PLAN)["measure"]


def test_the_first_mode_stops_after_a_point_that_did_not_fill():
    done = [res("baseline", 1, 100), res("baseline", 2, 200, running=1.7)]
    go = curves.next_point("baseline", 4, done, PLAN)
    assert not go["measure"] and "did not fill" in go["why"] and "max-running-requests" in go["why"]


def test_later_modes_take_the_grid_until_their_order_settles():
    done = [res("baseline", b, v[0]) for b, v in H200.items()]
    plan = dict(PLAN, mode_index=1)
    assert not curves.next_point("eagle3", 512, done, plan)["measure"]  # not on the grid
    for b in (1, 16, 32, 64, 128):
        assert curves.next_point("eagle3", b, done, plan)["measure"]
        done.append(res("eagle3", b, H200[b][1]))
    # 0.94x at 64, 0.61x at 128: one point more than 10 % behind, so 256 is still measured
    assert curves.next_point("eagle3", 256, done, plan)["measure"]
    adaptive = [res("eagle3_threshold", b, H200[b][2]) for b in (1, 16)]
    adaptive.append(res("eagle3_threshold", 32, 0.3 * H200[32][1]))
    go = curves.next_point("eagle3_threshold", 64, done + adaptive, dict(plan, mode_index=2))
    assert not go["measure"] and "order settled" in go["why"]
    # the confirming run measures every point
    assert curves.next_point("applied", 64, done + adaptive, dict(plan, mode_index=3))["measure"]


def test_the_time_budget_leaves_points_out():
    done = [res("baseline", 1, 100, duration=30.0)]
    plan = dict(PLAN, budget_s=800, repeats=2)  # this mode's share: 200 s; the next point: about 2 x 30 s x 2 repeats
    assert curves.next_point("baseline", 2, done, dict(plan, elapsed_s=80))["measure"]
    go = curves.next_point("baseline", 2, done, dict(plan, elapsed_s=80.1))
    assert go["measure"] is False and "time budget" in go["why"]
    assert curves.doubling(256) == [1, 2, 4, 8, 16, 32, 64, 128, 256] and curves.doubling(48)[-2:] == [32, 48]
