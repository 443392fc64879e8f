# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""Three curves on the running-batch axis - baseline, static EAGLE-3, the adaptive setting - and what they support.

- A point is a batch size B measured in each mode: decode tok/s (mean over the repeats), the running batch the
  server reported while the load ran (``running``: ``sglang:num_running_reqs`` sampled from /metrics) and the
  client's own ceiling beside it (``client``: requests decoding at once, time-averaged). A point whose batch did
  not fill (running below FILL x B) is reported and decides nothing.
- The grid doubles the batch (:func:`next_point`): the first mode until the server saturates, a point does not fill
  or the time budget is spent; the later modes at the first mode's points until their order against the others
  has settled; the confirming run at every point.
- :func:`recommend`: the setting that loses the least of the best measured throughput over the user's load profile
  (ties within TIE to the simpler one), its worst point beside it; adaptive takes part only where the installed
  SGLang carries the step-0 patch (its step 0 a plain decode, not SGLang's verify path at 3-5x the cost).
- :func:`confirm`: the confirming run against the best measured curve at every point, within TOLERANCE.
- :func:`summary`: summary.json, in exactly the shape issue 34 gives.
"""

from __future__ import annotations

import math

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import modes

BASELINE, STATIC, ADAPTIVE, APPLIED = "baseline", "eagle3", "eagle3_threshold", "applied"
CURVES = (BASELINE, STATIC, ADAPTIVE)
SETTING_OF = {BASELINE: "baseline", STATIC: "eagle3", ADAPTIVE: "adaptive"}
# The recommendation's action, as playbooks/benchmark.yml applies it, per setting.
ACTION_OF = {"adaptive": "adaptive", "eagle3": "keep", "baseline": "off"}
SIMPLER = ("baseline", "eagle3", "adaptive")  # the order ties are broken in
LABEL = {"baseline": "the baseline (no speculation)", "eagle3": "static EAGLE-3", "adaptive": "adaptive EAGLE-3"}
FILL = 0.9          # a point decides only when the running batch reached this share of its batch size
TOLERANCE = 0.10    # adaptive against the better static setting; the confirming run against the best curve
TIE = 0.01          # losses within this (1 point) of the least: the simpler setting is applied
SATURATION_GAIN = 0.10  # the first mode stops doubling once doubling the batch gains less than this
# The patch roles/sglang records when the installed SGLang's step 0 runs as the target's plain decode (issue 34).
STEP0_PATCH = "spec-step0-plain-decode"


def _mean(values):
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def decode_throughput(res):
    """Batch x median per-request decode rate (what a decode batch of that size produces)."""
    if res.get("decode_throughput") is not None:
        return float(res["decode_throughput"])
    rate = res.get("median_per_request_tps")
    return None if rate is None else float(rate) * int(res["concurrency"])


def filled(batch, running, client):
    """True/False: did the running batch reach FILL x batch (the server's figure, else the client's); None: unknown."""
    seen = running if running is not None else client
    if seen is None:
        return None
    return float(seen) >= FILL * int(batch)


def rows(results):
    """[{"batch", "modes": {mode: {"decode", "running", "client", "filled", "n"}}}] by batch, modes as measured."""
    table = {}
    for res in results or []:
        table.setdefault(int(res["concurrency"]), {}).setdefault(res.get("mode"), []).append(res)
    out = []
    for batch in sorted(table):
        row = {"batch": batch, "modes": {}}
        for mode, reps in sorted(table[batch].items()):
            running = _mean([r.get("running") for r in reps])
            client = _mean([r.get("mean_decoding") for r in reps])
            row["modes"][mode] = {"decode": _mean([decode_throughput(r) for r in reps]), "running": running,
                                  "client": client, "filled": filled(batch, running, client), "n": len(reps)}
        out.append(row)
    return out


def _decides(row, names):
    """Every one of ``names`` measured at this point, none of them known not to have filled."""
    return all(m in row["modes"] and row["modes"][m]["decode"] is not None and row["modes"][m]["filled"] is not False
               for m in names)


def not_filled(table):
    """[(batch, mode, running, client)] of the points whose batch did not fill."""
    return [(r["batch"], m, v["running"], v["client"]) for r in table for m, v in sorted(r["modes"].items())
            if v["filled"] is False]


def profile(load, batches):
    """{batch: weight} of the user's load over the measured ``batches`` (weights sum to 1), and how it was read.

    ``load``: a mapping {running batch: weight} (benchmark_load_profile), or a list of running-batch samples (the
    fleet's Prometheus history of sglang:num_running_reqs); each batch counts at the nearest measured one (log2
    distance); idle samples (0) are left out. Without a load: every measured batch weighs the same.
    """
    batches = sorted(batches)
    if not batches:
        return {}, "no measured point"
    weights = {}
    if isinstance(load, dict):
        items = list(load.items())
        how = "the load profile given (benchmark_load_profile)"
    elif isinstance(load, (list, tuple)):
        items = [(v, 1.0) for v in load]
        how = "%d running-batch samples from Prometheus" % len(load)
    else:
        items = []
        how = None
    for value, weight in items:
        try:
            b, w = float(value), float(weight)
        except (TypeError, ValueError):
            continue
        if b <= 0 or w <= 0 or math.isnan(b) or math.isnan(w):
            continue
        near = min(batches, key=lambda c: (abs(math.log2(c) - math.log2(b)), c))
        weights[near] = weights.get(near, 0.0) + w
    total = sum(weights.values())
    if total <= 0:
        return dict((b, 1.0 / len(batches)) for b in batches), (
            "no load profile (benchmark_load_profile, or the fleet's Prometheus history): every measured batch size "
            "weighs the same")
    return dict((b, w / total) for b, w in sorted(weights.items())), how


def _best(row, names=CURVES):
    got = dict((m, row["modes"][m]["decode"]) for m in names if m in row["modes"] and row["modes"][m]["decode"] is not None)
    if not got:
        return None, None
    mode = max(got, key=lambda m: (got[m], m == BASELINE))
    return mode, got[mode]


def _losses(mode, weights, by_batch):
    """{"weighted", "where", "worst", "stand_ins"} of ``mode`` over the load: at each point 1 - tok/s / the best
    measured there. A deciding point ``mode`` was not measured at (the grid stopped measuring it once its order had
    settled behind) counts the loss of its nearest measured point below; None when there is none below."""
    measured = sorted(b for b, r in by_batch.items()
                      if r["modes"].get(mode, {}).get("decode") is not None)
    lost_at = {}
    for b in measured:
        _m, best = _best(by_batch[b])
        lost_at[b] = max(0.0, 1.0 - by_batch[b]["modes"][mode]["decode"] / best) if best else 0.0
    loss, where, worst, stand_ins = 0.0, [], None, []
    for b, w in sorted(weights.items()):
        if b in lost_at:
            lost = lost_at[b]
        else:
            below = [m for m in measured if m < b]
            if not below:
                return None
            lost = lost_at[below[-1]]
            stand_ins.append({"batch": b, "from": below[-1]})
        loss += w * lost
        row = by_batch[b]
        best_mode, best = _best(row)
        point = {"batch": b, "tok_s": row["modes"].get(mode, {}).get("decode"), "best": best,
                 "best_setting": SETTING_OF[best_mode], "lost": lost}
        if lost > 0.01:
            where.append(point)
        if w > 0 and (worst is None or lost > worst["lost"]):
            worst = point
    return {"weighted": loss, "where": where, "worst": worst, "stand_ins": stand_ins}


def recommend(results, version, capability, patched, candidate, configured, load=None):
    """The setting the measurement supports: the one that loses the least of the best measured throughput.

    Among the settings that can run here - the baseline, static EAGLE-3, and the adaptive setting only where the
    installed SGLang carries STEP0_PATCH and the adaptive curve was measured - the one whose loss against the best
    measured curve (at each deciding point 1 - tok/s / the best there), weighted by the user's load, is the least;
    a loss within TIE of the least goes to the simpler setting (baseline, then EAGLE-3, then adaptive). Its worst
    point is reported beside it. Points whose batch did not fill decide nothing.
    candidate: spec_setting.recommend()'s answer for the measured crossover (action adaptive: the setting the adaptive
    curve was measured with); patched: whether the installed SGLang carries STEP0_PATCH (None: not known);
    configured: the speculative settings the modes started from; load: see :func:`profile`.
    Returns {"setting": adaptive|eagle3|baseline|None, "action", "server_speculative", "reason", "why_not_adaptive",
    "shortfalls", "losses", "worst", "candidates", "profile", "profile_source", "deciding", "not_filled", "version",
    "capability"}.
    """
    table = rows(results)
    why = []
    cand = candidate or {}
    if cand.get("action") != "adaptive":
        why.append("no adaptive setting to apply (%s)" % (cand.get("reason") or "no crossover measured"))
    if capability != "slots_zero":
        why.append("SGLang %s cannot turn speculation off by batch size" % (version or "(unknown version)"))
    if not patched:
        why.append("SGLang %s has no %s patch (roles/sglang's patch record): its step 0 runs SGLang's verify path "
                   "(measured on the H200: 3-5x a plain decode step at batch 16-256), not the target's plain "
                   "decode" % (version or "(unknown version)", STEP0_PATCH))
    # where adaptive can run, an adaptive point that did not fill makes its batch decide nothing, as a static one does
    deciding = [r for r in table if _decides(r, (BASELINE, STATIC))
                and (why or r["modes"].get(ADAPTIVE, {}).get("filled") is not False)]
    out = {"version": version, "capability": capability, "patched": patched, "step0_patch": STEP0_PATCH,
           "deciding": [r["batch"] for r in deciding], "not_filled": not_filled(table), "shortfalls": [],
           "losses": {}, "why_not_adaptive": why, "tie": TIE}
    if not deciding:
        out.update(setting=None, action="refuse", reason=(
            "no batch size was measured in both the baseline and static EAGLE-3 with the batch filled: nothing "
            "decides. Raise --max-running-requests (benchmark_max_batch), run the load from a less busy host, or "
            "give the run more time (benchmark_time_budget)"))
        return out
    adaptive_points = [r for r in deciding if _decides(r, (ADAPTIVE,))]
    for r in adaptive_points:  # reported, not a veto: the loss decides
        static_mode, static_best = _best(r, (BASELINE, STATIC))
        got = r["modes"][ADAPTIVE]["decode"]
        if static_best and got < (1 - TOLERANCE) * static_best:
            out["shortfalls"].append({"batch": r["batch"], "adaptive": got, "static": static_best,
                                      "static_setting": SETTING_OF[static_mode], "ratio": got / static_best})
    if cand.get("action") == "adaptive" and not adaptive_points:
        why.append("the adaptive setting was not measured at a batch size that filled")
    weights, source = profile(load, [r["batch"] for r in deciding])
    out["profile"], out["profile_source"] = weights, source
    by_batch = dict((r["batch"], r) for r in deciding)
    for mode in CURVES:
        loss = _losses(mode, weights, by_batch) if mode != ADAPTIVE or adaptive_points else None
        if loss is not None:
            out["losses"][SETTING_OF[mode]] = loss
        elif mode == ADAPTIVE and adaptive_points and not why:
            why.append("the adaptive setting was not measured at batch %d or below" % min(weights))
    runs = [s for s in SIMPLER if s in out["losses"] and (s != "adaptive" or not why)]
    least = min(out["losses"][s]["weighted"] for s in runs)
    setting = next(s for s in runs if out["losses"][s]["weighted"] <= least + TIE)
    lowest = min(runs, key=lambda s: (out["losses"][s]["weighted"], SIMPLER.index(s)))
    mine = out["losses"][setting]
    out["candidates"] = runs
    out["worst"] = {"batch": mine["worst"]["batch"], "loss": mine["worst"]["lost"]} if mine["worst"] else None
    others = ["%s would %s" % (LABEL[s], _loss_words(out["losses"][s])) for s in SIMPLER
              if s != setting and s in out["losses"]]
    reason = "%s for this load (%s): it %s" % (LABEL[setting], source, _loss_words(mine, full=True))
    reason += "".join("; " + o for o in others)
    if setting != lowest:
        reason += "; %s loses %.1f%%, within %.0f point of it: the simpler setting goes" % (
            LABEL[lowest], 100 * out["losses"][lowest]["weighted"], 100 * TIE)
    if setting == "adaptive":
        spec = dict(cand["server_speculative"])
        reason += "; SGLang %s carries %s: %s" % (version, STEP0_PATCH, cand.get("reason"))
    else:
        spec = (modes.launch(STATIC, configured)["speculative"] if setting == "eagle3" else {"algorithm": ""})
        if why:
            reason += "; adaptive refused: " + "; ".join(why)
    out.update(setting=setting, action=ACTION_OF[setting], server_speculative=spec, reason=reason)
    if setting == "adaptive":
        for key in ("effective_threshold", "config_key", "threshold"):
            out[key] = cand.get(key)
    return out


def _loss_words(loss, full=False):
    """'loses 5.6% of the best measured throughput over it, at worst 12.1% at batch 256 (where baseline gives ...)'."""
    worst = loss["worst"]
    text = ("loses %.1f%% of the best measured throughput over it" if full else "lose %.1f%%") % (
        100 * loss["weighted"])
    if worst and worst["lost"] > 0:
        text += ", at worst %.1f%% at batch %d" % (100 * worst["lost"], worst["batch"])
        if full:
            text += " (where %s gives %.0f tok/s)" % (worst["best_setting"], worst["best"])
    return text


def confirm(results, tolerance=TOLERANCE):
    """The confirming run (mode ``applied``) against the best measured curve at every point.

    "Confirmed" only when every deciding point (all measured there filled) is within ``tolerance`` of the best;
    ``reproduces``: within ``tolerance`` of the applied setting's own measured curve, where it was measured.
    """
    table = rows(results)
    points = []
    for r in table:
        got = r["modes"].get(APPLIED)
        best_mode, best = _best(r)
        if not got or got["decode"] is None or best is None:
            continue
        names = [m for m in CURVES if m in r["modes"]] + [APPLIED]
        rel = (got["decode"] - best) / best if best else None
        points.append({"batch": r["batch"], "applied": got["decode"], "best": best,
                       "best_setting": SETTING_OF[best_mode], "rel_err": rel, "running": got["running"],
                       "decides": all(r["modes"][m]["filled"] is not False for m in names),
                       "ok": rel is not None and abs(rel) <= tolerance})
    deciding = [p for p in points if p["decides"]]
    return {"tolerance": tolerance, "points": points, "deciding": [p["batch"] for p in deciding],
            "ok": bool(deciding) and all(p["ok"] for p in deciding)}


def reproduces(results, setting, tolerance=TOLERANCE):
    """Does the confirming run follow the curve its setting was measured with (within ``tolerance``)?  None: no
    point to compare."""
    mode = dict((v, k) for k, v in SETTING_OF.items()).get(setting)
    pairs = [(r["modes"][APPLIED]["decode"], r["modes"][mode]["decode"]) for r in rows(results)
             if _decides(r, (APPLIED, mode))]
    if not pairs:
        return None
    return all(abs(a - m) <= tolerance * m for a, m in pairs if m)


def summary(results, meta, rec, conf):
    """summary.json: {"sglang", "gpu", "accept_length", "threshold", "applied", "confirmed", "points"} (issue 34)."""
    meta = meta or {}
    rec = rec or {}
    table = rows(results)
    accept = _mean([res.get("accept_length") for res in results or [] if res.get("mode") == STATIC])
    points = []
    for r in table:
        if not any(m in r["modes"] for m in CURVES):
            continue
        running = [v["running"] if v["running"] is not None else v["client"] for m, v in r["modes"].items()]
        running = [x for x in running if x is not None]

        def val(mode):
            got = r["modes"].get(mode)
            return None if not got or got["decode"] is None else round(got["decode"], 1)
        points.append({"batch": r["batch"], "running": round(min(running), 1) if running else None,
                       "baseline": val(BASELINE), "eagle3": val(STATIC), "adaptive": val(ADAPTIVE),
                       "applied": val(APPLIED)})
    applied = meta.get("applied") or {}
    threshold = applied.get("effective_threshold", rec.get("effective_threshold"))
    if threshold is None:
        threshold = (meta.get("adaptive_candidate") or {}).get("effective_threshold")
    return {"sglang": meta.get("sglang_version"), "gpu": meta.get("gpu"),
            "accept_length": None if accept is None else round(accept, 3), "threshold": threshold,
            "applied": applied.get("setting") or rec.get("setting"), "confirmed": bool(conf and conf.get("ok")),
            "points": points}


def next_point(mode, batch, results, plan):
    """Measure ``batch`` in ``mode`` now?  {"measure": bool, "why": str}.

    plan: {"first_mode": the mode that sets the grid, "budget_s", "elapsed_s", "mode_index" (0-based),
    "modes_total", "repeats"}. The first mode doubles until a point does not fill or doubling gains less than
    SATURATION_GAIN; the others take the first mode's points until their order against the other measured curves has
    settled (more than TOLERANCE behind the best at two points in a row, falling further); ``applied`` (the confirming
    run) takes every point. Each mode gets an equal share of the time budget; a point that would overrun it is left
    out (and decides nothing).
    """
    plan = plan or {}
    table = rows(results)
    mine = dict((r["batch"], r["modes"][mode]) for r in table if mode in r["modes"])
    batch = int(batch)
    if batch in mine:
        return {"measure": False, "why": "measured"}
    budget, elapsed = float(plan.get("budget_s") or 0), float(plan.get("elapsed_s") or 0)
    if budget > 0:
        share = budget * (int(plan.get("mode_index") or 0) + 1) / max(int(plan.get("modes_total") or 1), 1)
        done = [res for res in results or [] if int(res["concurrency"]) == batch and res.get("duration")]
        mine_done = [res for res in results or [] if res.get("mode") == mode and res.get("duration")]
        if done:
            estimate = max(float(res["duration"]) for res in done) * int(plan.get("repeats") or 1)
        elif mine_done:
            estimate = 2 * float(mine_done[-1]["duration"]) * int(plan.get("repeats") or 1)
        else:
            estimate = 0.0
        if elapsed + estimate > share:
            return {"measure": False, "why": "time budget: %.0f s of %.0f s used, this point would take about %.0f s "
                                             "more than this mode's share" % (elapsed, budget, estimate)}
    earlier = sorted(b for b in mine if b < batch)
    first = plan.get("first_mode") or BASELINE
    if mode == first:
        if earlier:
            last = mine[earlier[-1]]
            if last["filled"] is False:
                return {"measure": False, "why": "batch %d did not fill (%s running): raise --max-running-requests "
                                                 "or the client's ceiling" % (earlier[-1], _fmt(last))}
            if len(earlier) >= 2:
                prev = mine[earlier[-2]]
                if last["decode"] is not None and prev["decode"] and last["decode"] < (1 + SATURATION_GAIN) * prev["decode"]:
                    return {"measure": False, "why": "the server saturates: %.0f tok/s at batch %d, %.0f at %d" % (
                        last["decode"], earlier[-1], prev["decode"], earlier[-2])}
        return {"measure": True, "why": "doubling"}
    grid = sorted(r["batch"] for r in table if first in r["modes"])
    if batch not in grid:
        return {"measure": False, "why": "not on the grid %s measured" % first}
    if mode != APPLIED and len(earlier) >= 2:
        ratios = []
        for b in earlier[-2:]:
            row = next(r for r in table if r["batch"] == b)
            others = [m for m in CURVES if m != mode]
            _m, best = _best(row, others)
            ratios.append(mine[b]["decode"] / best if best and mine[b]["decode"] is not None else None)
        if None not in ratios and ratios[0] < 1 - TOLERANCE and ratios[1] < ratios[0]:
            return {"measure": False, "why": "order settled: %s at %.2fx then %.2fx of the best other curve" % (
                mode, ratios[0], ratios[1])}
    return {"measure": True, "why": "on the grid"}


def _fmt(point):
    if point["running"] is not None:
        return "%.1f" % point["running"]
    return "%.1f (client)" % point["client"] if point["client"] is not None else "?"


def doubling(max_batch):
    """1, 2, 4, ... up to max_batch (max_batch itself last when it is not a power of two)."""
    out, b = [], 1
    while b < int(max_batch):
        out.append(b)
        b *= 2
    return out + [int(max_batch)]
