# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""Benchmark report: raw results (JSON) -> markdown, PNG plots, the crossover and the setting to apply.

Run by the llmserve.sglang.bench_report action (controller side, playbooks/benchmark.yml) and by
tools/bench_report/bench_report.py (the same ``main``): ``build(RUN_DIR)`` reads RUN_DIR/raw.json and writes
report.md, summary.json and *.png there.

raw.json:
    {"meta": {"started": "...", "model_path": "...", "max_new_tokens": 256, "sglang_version": "0.5.23",
              "speculative": {...server_speculative...}, "cuda_graph_max_bs": 48,
              "cuda_graph_bs": [optional: the speculative server's captured decode sizes, from /server_info],
              "perf_model": {optional: a rate model to compare with (benchmark_perf_model: the double's, in tests)},
              "applied": {optional: the recommendation the confirming run was launched with}},
     "results": [{"mode": "baseline" | "eagle3" | "eagle3_adaptive" | "eagle3_threshold", "concurrency": 1,
                  "repeat": 0, "output_throughput": ..., "median_per_request_tps": ..., ...}, ...]}

Decode throughput at concurrency c = c x the median per-request decode rate (1000 / TPOT): what a decode batch of
c requests produces, without the time to first token that end-to-end throughput carries (with short outputs TTFT
moves the end-to-end crossover well above the decode one). Each (mode, c) may be measured several times
(``repeat``); the curves are the means, with the standard error of each point.

Crossover: for every speculative mode, the lowest concurrency at which its mean decode throughput is no longer above
the baseline's ("stops paying"), interpolated linearly between the last paying and the first non-paying point;
its uncertainty: the crossovers of the curves moved by one standard error against each other (speculation -1 SE,
baseline +1 SE, and the reverse), and the crossover of each repeat on its own. Threshold = ``ceil(crossover) - 1``:
speculate while at most that many requests run. spec_setting.recommend turns it into the installed SGLang's
setting (``--speculative-adaptive`` with a two-slot config), or refuses where that SGLang has none. The confirming
run (mode ``eagle3_threshold``) must follow the better curve on both sides of the threshold.

Controller side; plots need matplotlib (Agg backend, no display). Without matplotlib the report is still
written and says the plots were skipped.
"""
from __future__ import annotations

import errno
import io
import json
import math
import os
import typing as t
from pathlib import Path

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import modes
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_curves as curves
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_spec_setting as spec_setting
from ansible_collections.llmserve.sglang.plugins.module_utils.host import boundary, owned_dirs, untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.host.boundary import Refused, printable
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api

BASELINE = "baseline"
ADAPTIVE = curves.ADAPTIVE  # the adaptive setting of the measured crossover, measured before anything is applied
CONFIRM = curves.APPLIED    # the confirming run: the applied setting, deployed
MODE_LABELS = {"baseline": "baseline", "eagle3": "EAGLE-3", "eagle3_adaptive": "EAGLE-3 adaptive (SGLang default)",
               "eagle3_steps1": "EAGLE-3, 1 step", "eagle3_steps2": "EAGLE-3, 2 steps",
               ADAPTIVE: "adaptive (the threshold's config)", CONFIRM: "applied setting (confirming run)"}
TABLE_COLUMNS = [
    ("decode_throughput", "decode tok/s", "{:.1f}"),
    ("output_throughput", "e2e tok/s", "{:.1f}"),
    ("median_per_request_tps", "per-req tok/s (med)", "{:.1f}"),
    ("median_ttft_ms", "TTFT med ms", "{:.0f}"),
    ("p99_ttft_ms", "TTFT p99 ms", "{:.0f}"),
    ("median_itl_ms", "ITL med ms", "{:.1f}"),
    ("accept_length", "accept len", "{:.2f}"),
    ("completed", "ok", "{:.0f}"),
    ("failed", "failed", "{:.0f}"),
]
DEFAULT_TOLERANCE = 0.15  # relative, on the crossover concurrency
CONFIRM_TOLERANCE = 0.10  # relative, confirming run against the better curve at each point
# Below this accept length (roles/server's server_spec_min_accept_length) the draft does not fit its target: the
# speculative curve then measures a broken draft, not speculation, and says nothing about where EAGLE-3 pays.
MIN_ACCEPT_LENGTH = api.MIN_ACCEPT_LENGTH
# raw.json as a benchmark writes it: a few MB (a point per mode, batch and repeat)
RAW = untrusted.Kind("benchmark results", 256 * untrusted.MIB, 32, 20000000,
                     fix="give the raw.json a benchmark run wrote (or pass raw)")


def label(mode: str) -> str:
    return MODE_LABELS.get(mode, mode)


def decode_throughput(res: dict) -> float | None:
    """Concurrency x median per-request decode rate (tokens/s a decode batch of that size produces)."""
    if res.get("decode_throughput") is not None:
        return float(res["decode_throughput"])
    rate = res.get("median_per_request_tps")
    return None if rate is None else float(rate) * int(res["concurrency"])


CLIENT_LIMITED = 0.6  # a point whose requests were decoding together less than this share of its concurrency


def client_limited(table: dict) -> list[dict]:
    """Points (c > 1) where the load generator kept fewer than CLIENT_LIMITED x c requests decoding on average."""
    out = []
    for mode, rows in table.items():
        for c, reps in sorted(rows.items()):
            got = stats([r.get("mean_decoding") for r in reps])["mean"]
            if c > 1 and got is not None and got < CLIENT_LIMITED * c:
                out.append({"mode": mode, "concurrency": c, "mean_decoding": got})
    return out


def by_mode(results: list[dict]) -> dict[str, dict[int, list[dict]]]:
    """{mode: {concurrency: [result of each repeat]}}."""
    table: dict[str, dict[int, list[dict]]] = {}
    for res in results:
        table.setdefault(res["mode"], {}).setdefault(int(res["concurrency"]), []).append(res)
    return table


def stats(values: t.Sequence[float | None]) -> dict:
    vals = [float(v) for v in values if v is not None]
    n = len(vals)
    if not n:
        return {"n": 0, "mean": None, "sd": None, "se": None, "min": None, "max": None}
    mean = sum(vals) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 else 0.0
    return {"n": n, "mean": mean, "sd": sd, "se": sd / math.sqrt(n), "min": min(vals), "max": max(vals)}


def curve(rows: dict[int, list[dict]], metric=decode_throughput) -> dict[int, dict]:
    """{concurrency: stats of the metric over the repeats}."""
    return {c: stats([metric(r) if callable(metric) else r.get(metric) for r in reps]) for c, reps in rows.items()}


def mean_of(rows: dict[int, list[dict]], key: str):
    vals: list[t.Any] = [r.get(key) for reps in rows.values() for r in reps if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def crossover(base: t.Mapping[int, t.Any], spec: t.Mapping[int, t.Any]) -> dict:
    """Where ``spec`` stops beating ``base`` ({concurrency: throughput} each, compared on common points).

    Returns pays_at (concurrencies where spec > base), stops_paying_at (first c where spec <= base, None if it
    always pays), last_paying (the measured c before it, None if it never pays), crossover (interpolated c where
    the two curves meet) and threshold (largest integer concurrency that still pays by the interpolation:
    ceil(crossover) - 1; 0 = never speculate; None = no crossover within the measured range).
    """
    points = sorted(c for c in base if c in spec and base[c] is not None and spec[c] is not None)
    pays = [c for c in points if spec[c] > base[c]]
    stops = next((c for c in points if spec[c] <= base[c]), None)
    out: dict[str, t.Any] = {"points": points, "pays_at": pays, "stops_paying_at": stops, "last_paying": None,
                             "crossover": None, "threshold": None}
    if not points:
        return out
    if stops is None:
        out["last_paying"] = points[-1]
        return out
    idx = points.index(stops)
    if idx == 0:
        out["crossover"] = float(stops)
        out["threshold"] = 0 if stops <= 1 else stops - 1
        return out
    prev = points[idx - 1]
    out["last_paying"] = prev
    d_prev = spec[prev] - base[prev]
    d_stop = spec[stops] - base[stops]
    cross = prev + (stops - prev) * d_prev / (d_prev - d_stop) if d_prev != d_stop else float(stops)
    out["crossover"] = cross
    out["threshold"] = max(0, int(math.ceil(cross - 1e-9)) - 1)
    return out


def uncertainty(base_curve: dict[int, dict], spec_curve: dict[int, dict], base_rows: dict, spec_rows: dict) -> dict:
    """Crossover band from +-1 standard error, and the crossover of each repeat on its own."""
    def shifted(cv, sign):
        return {c: (st["mean"] + sign * st["se"]) if st["mean"] is not None else None for c, st in cv.items()}

    low = crossover(shifted(base_curve, +1), shifted(spec_curve, -1))    # speculation at its worst
    high = crossover(shifted(base_curve, -1), shifted(spec_curve, +1))   # at its best
    repeats = sorted({r.get("repeat", 0) for reps in list(base_rows.values()) + list(spec_rows.values()) for r in reps})
    per_repeat = []
    for k in repeats:
        b = {c: decode_throughput(r) for c, reps in base_rows.items() for r in reps if r.get("repeat", 0) == k}
        s = {c: decode_throughput(r) for c, reps in spec_rows.items() for r in reps if r.get("repeat", 0) == k}
        per_repeat.append(crossover(b, s)["crossover"])
    return {"crossover_low": low["crossover"], "crossover_high": high["crossover"],
            "threshold_low": low["threshold"], "threshold_high": high["threshold"],
            "repeats": len(repeats), "per_repeat": per_repeat,
            "n_min": min((st["n"] for st in list(base_curve.values()) + list(spec_curve.values())), default=0)}


def model_total(perf: dict, c: float) -> float:
    """Total tokens/s of the double's rate model: c * min(per_request_tps, saturation_tps / c)."""
    return min(float(perf["per_request_tps"]) * c, float(perf["saturation_tps"]))


def model_rate(perf: dict, c: float) -> float:
    """Per-request tokens/s of the double's rate model: min(per_request_tps, saturation_tps / c)."""
    return min(float(perf["per_request_tps"]), float(perf["saturation_tps"]) / max(c, 1e-9))


def model_crossover(perf_model: dict, mode: str = "eagle3", c_max: float = 4096.0) -> float | None:
    """Concurrency (real number) where the model's spec total throughput falls to the baseline's; None if never."""
    base, spec = perf_model.get(BASELINE), perf_model.get("eagle3")
    if not base or not spec:
        return None

    def diff(c: float) -> float:
        return model_total(spec, c) - model_total(base, c)

    lo = 1e-6
    if diff(lo) <= 0:
        return 0.0
    hi = lo
    while diff(hi) > 0:
        hi *= 2
        if hi > c_max:
            return None
    lo = hi / 2
    for _step in range(200):
        mid = (lo + hi) / 2
        if diff(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def model_check(entry: dict, tolerance: float) -> dict:
    """Does the measured crossover agree with the rate model's on the same concurrency grid?

    The reference is the model's curves sampled at the measured concurrencies and interpolated exactly like the
    measurement (``model_grid_crossover``): with a coarse grid that differs from the continuous crossover, and it
    is what a perfect measurement would give.  Crossover: within ``tolerance`` (relative) of the reference.
    Threshold: ``ceil(c) - 1`` for some c in that band.  First non-paying grid point: the model's.
    """
    ref = entry.get("model_grid_crossover")
    meas = entry.get("crossover")
    check = {"tolerance": tolerance, "reference_crossover": ref,
             "stops_paying_ok": entry.get("stops_paying_at") == entry.get("model_stops_paying_at")}
    if ref is None or meas is None:
        check["crossover_ok"] = ref is None and meas is None
        check["threshold_ok"] = entry.get("threshold") == entry.get("model_grid_threshold")
        check["threshold_allowed"] = [entry.get("model_grid_threshold")]
    else:
        band = (ref * (1 - tolerance), ref * (1 + tolerance))
        check["crossover_band"] = [band[0], band[1]]
        check["crossover_ok"] = band[0] <= meas <= band[1]
        allowed = list(range(max(0, int(math.ceil(band[0] - 1e-9)) - 1), max(0, int(math.ceil(band[1] - 1e-9)) - 1) + 1))
        check["threshold_allowed"] = allowed
        check["threshold_ok"] = entry.get("threshold") in allowed
    check["ok"] = bool(check["crossover_ok"] and check["threshold_ok"] and check["stops_paying_ok"])
    return check


def drafting_limit(mode: str, meta: dict) -> float:
    """Largest batch size at which a mode drafts on the double (inf: always; 0: never)."""
    if mode == BASELINE:
        return 0
    if mode == CONFIRM:
        applied = (meta or {}).get("applied") or {}
        if applied.get("setting") in ("baseline", "eagle3"):
            return 0 if applied["setting"] == "baseline" else float("inf")
        eff = applied.get("effective_threshold")
        return float("inf") if eff is None else eff
    if mode == ADAPTIVE:
        eff = ((meta or {}).get("adaptive_candidate") or {}).get("effective_threshold")
        return float("inf") if eff is None else eff
    if mode == "eagle3_adaptive":
        # SGLang's default adaptive config: only the "64" slot is all zero; batches pad to capture sizes first
        capture = None if meta.get("disable_cuda_graph") else (meta.get("cuda_graph_bs") or spec_setting.spec_capture_sizes(
            int(meta.get("cuda_graph_max_bs") or 48)))
        return max(b for b in range(1, 65) if spec_setting.padded(b, capture) < 64)
    return float("inf")


STEP0_AT_256, STEP0_BATCH_EXP, STEP0_CONTEXT_REF = 5.0, 0.6, 160.0


def step0_factor(batch: float, context: float, at_256: float = STEP0_AT_256) -> float:
    """How many plain decode steps one unpatched adaptive step-0 step costs (issue 34, H200, 0.5.15.post1: 45 ms
    against 8.9 ms at batch 256, 1.6x at 16, 2.7x at 64, 3.9x at 128), growing with batch and context length. The
    SGLang double's engine uses the same model (tools/sglang_double/sglang/_double/engine.py)."""
    return 1.0 + (at_256 - 1.0) * (max(batch, 1.0) / 256.0) ** STEP0_BATCH_EXP * max(context, 1.0) / STEP0_CONTEXT_REF


def model_value(perf_model: dict, mode: str, c: int, meta: dict, fn=model_total) -> float | None:
    drafting = c <= drafting_limit(mode, meta)
    perf = perf_model.get("eagle3") if drafting else perf_model.get(BASELINE)
    if not perf:
        return None
    value = fn(perf, c)
    adaptive = mode == ADAPTIVE or (mode == CONFIRM and ((meta or {}).get("applied") or {}).get("setting") == "adaptive")
    if adaptive and not drafting and not (meta or {}).get("step0_patched"):
        context = float(meta.get("input_len") or 32) + float(meta.get("max_new_tokens") or 256) / 2
        value /= step0_factor(c, context, float((perf_model.get("step0") or {}).get("at_256") or STEP0_AT_256))
    return value


def model_points(raw: dict) -> list[dict]:
    """Each measured point (mean over repeats) next to the rate model's prediction (relative error)."""
    meta = raw.get("meta") or {}
    perf_model = meta.get("perf_model")
    if not perf_model or not perf_model.get(BASELINE):
        return []
    out = []
    for mode, rows in by_mode(raw.get("results", [])).items():
        dec, rate = curve(rows), curve(rows, "median_per_request_tps")
        for conc in sorted(rows):
            row = {"mode": mode, "concurrency": conc,
                   "model_decode_throughput": model_value(perf_model, mode, conc, meta),
                   "model_per_request_tps": model_value(perf_model, mode, conc, meta, model_rate),
                   "decode_throughput": dec[conc]["mean"], "median_per_request_tps": rate[conc]["mean"]}
            for key, model_key in (("decode_throughput", "model_decode_throughput"),
                                   ("median_per_request_tps", "model_per_request_tps")):
                ref, val = row[model_key], row[key]
                row[key + "_rel_err"] = (val - ref) / ref if val is not None and ref else None
            out.append(row)
    return out


def analyse(raw: dict, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    meta = raw.get("meta") or {}
    table = by_mode(raw.get("results", []))
    # a point whose batch did not fill decides nothing: out of the crossover too
    unfilled = set((m, b) for b, m, _run, _cli in curves.not_filled(curves.rows(raw.get("results", []))))
    base_rows = dict((c, v) for c, v in table.get(BASELINE, {}).items() if (BASELINE, c) not in unfilled)
    base_dec = curve(base_rows)
    base_e2e = curve(base_rows, "output_throughput")
    perf_model = meta.get("perf_model")
    analysis = {}
    for mode, rows in table.items():
        if mode in (BASELINE, CONFIRM) or mode.startswith("allreduce_"):
            continue
        rows = dict((c, v) for c, v in rows.items() if (mode, c) not in unfilled)
        dec = curve(rows)
        entry = crossover({c: st["mean"] for c, st in base_dec.items()}, {c: st["mean"] for c, st in dec.items()})
        entry["metric"] = "decode_throughput"
        entry["uncertainty"] = uncertainty(base_dec, dec, base_rows, rows)
        e2e = crossover({c: st["mean"] for c, st in base_e2e.items()},
                        {c: st["mean"] for c, st in curve(rows, "output_throughput").items()})
        entry["e2e"] = {"crossover": e2e["crossover"], "threshold": e2e["threshold"],
                        "stops_paying_at": e2e["stops_paying_at"]}
        accept = stats([r.get("accept_length") for reps in rows.values() for r in reps])["mean"]
        floor = float(meta.get("min_accept_length") or MIN_ACCEPT_LENGTH)
        entry["accept_length"] = accept
        entry["draft_unfit"] = accept is not None and accept < floor
        entry["min_accept_length"] = floor
        if perf_model and perf_model.get(BASELINE) and perf_model.get("eagle3") and mode == "eagle3":
            model_c = model_crossover(perf_model, mode)
            entry["model_crossover"] = model_c
            entry["model_threshold"] = (max(0, int(math.ceil(model_c - 1e-9)) - 1)
                                        if model_c is not None and model_c > 0 else (0 if model_c == 0 else None))
            grid = entry["points"]
            on_grid = crossover({c: model_total(perf_model[BASELINE], c) for c in grid},
                                {c: model_total(perf_model["eagle3"], c) for c in grid})
            entry["model_stops_paying_at"] = on_grid["stops_paying_at"]
            entry["model_grid_crossover"] = on_grid["crossover"]
            entry["model_grid_threshold"] = on_grid["threshold"]
            entry["model_check"] = model_check(entry, tolerance)
        analysis[mode] = entry
    return analysis


def choose_tiers(by_steps: dict[int, dict[int, float]]) -> dict:
    """The adaptive setting's tiers from measured static chains (issue 44 item 6): {"tiers", "best", "why"}.

    ``by_steps``: {steps: {batch: decode tok/s}} of the points that filled - 0 the baseline, the static EAGLE-3
    chain, shorter chains (1, 2 steps) where measured. At each batch the baseline and the EAGLE-3 chain were both
    measured at, the chain with the most tok/s wins (a tie: fewer steps); where the winner changes, the boundary is
    the two winners' crossover between those batches (:func:`crossover`). ``tiers`` is None - keep the two tiers
    of the crossover - unless a shorter chain wins somewhere and the winners' steps only fall as the batch grows.
    """
    top = max(by_steps) if by_steps else 0
    batches = sorted(set(by_steps.get(0, {})) & set(by_steps.get(top, {})))
    shorter = [s for s in by_steps if 0 < s < top]
    best = {}
    for b in batches:
        got = dict((s, c[b]) for s, c in by_steps.items() if b in c and c[b] is not None)
        best[b] = max(got, key=lambda s: (got[s], -s))
    out: dict[str, t.Any] = {"tiers": None, "best": best}
    if not shorter:
        out["why"] = "no shorter chain measured (benchmark_modes eagle3_steps1, eagle3_steps2): two tiers"
        return out
    seq = [best[b] for b in batches]
    if not any(s in shorter for s in seq):
        out["why"] = "no shorter chain (%s steps) beats both static settings at a measured batch size: two tiers" % (
            ", ".join(str(s) for s in sorted(shorter)))
        return out
    if any(later > earlier for earlier, later in zip(seq, seq[1:])):
        out["why"] = "the best chain does not shorten as the batch grows (%s): two tiers" % ", ".join(
            "%d: %d steps" % (b, best[b]) for b in batches)
        return out
    tiers = []
    for (b0, s0), (b1, s1) in zip(zip(batches, seq), zip(batches[1:], seq[1:])):
        if s0 == s1:
            continue
        longer, fewer = by_steps[s0], by_steps[s1]
        if all(b in c for b in (b0, b1) for c in (longer, fewer)):
            upto = crossover({b0: fewer[b0], b1: fewer[b1]}, {b0: longer[b0], b1: longer[b1]})["threshold"]
        else:
            upto = b0  # one of them not measured on both sides: the last batch the longer chain was seen winning
        tiers.append({"steps": s0, "upto": upto})
    tiers.append({"steps": seq[-1], "upto": None})
    out.update(tiers=tiers, why="measured: %s" % ", ".join("%d steps at batch %d" % (best[b], b) for b in batches))
    return out


def tiers_of(raw: dict) -> dict:
    """:func:`choose_tiers` over a run's filled points (the EAGLE-3 chain's steps: its num_steps, else 3)."""
    meta = raw.get("meta") or {}
    top = int((meta.get("speculative") or {}).get("num_steps") or 3)
    steps_of = dict(modes.SHORT_STEPS, **{BASELINE: 0, "eagle3": top})
    by_steps: dict[int, dict[int, float]] = {}
    for row in curves.rows(raw.get("results", [])):
        for mode, got in row["modes"].items():
            if mode in steps_of and got["decode"] is not None and got["filled"] is not False:
                by_steps.setdefault(steps_of[mode], {})[row["batch"]] = got["decode"]
    return choose_tiers(by_steps)


def candidate(raw: dict, analysis: dict) -> dict | None:
    """The adaptive setting of the measured crossover (spec_setting.recommend): what the adaptive curve measures;
    with tiers (:func:`tiers_of`) where a measured shorter chain beats both static settings."""
    meta = raw.get("meta") or {}
    entry = analysis.get("eagle3")
    if not entry or not entry["points"]:
        return None
    chosen = tiers_of(raw)
    cand = spec_setting.recommend(entry["threshold"], str(meta.get("sglang_version") or ""),
                                  meta.get("speculative") or {}, capture=meta.get("cuda_graph_bs"),
                                  cuda_graph_max_bs=meta.get("cuda_graph_max_bs") or 48,
                                  cuda_graph=not meta.get("disable_cuda_graph", False), tiers=chosen["tiers"])
    cand["tiers_why"] = chosen["why"]
    return cand


def recommendation(raw: dict, analysis: dict) -> dict | None:
    """What the three curves support (curves.recommend), or a refusal when the draft does not fit its target."""
    meta = raw.get("meta") or {}
    entry = analysis.get("eagle3")
    if not entry or not entry["points"]:
        return None
    cand = meta.get("adaptive_candidate") or candidate(raw, analysis)
    version = str(meta.get("sglang_version") or "")
    rec = curves.recommend(raw.get("results", []), version, spec_setting.capability(version),
                           meta.get("step0_patched"), cand, meta.get("speculative") or {},
                           meta.get("load_profile") if meta.get("load_profile") else meta.get("load_samples"))
    rec["candidate"] = cand
    rec["threshold"] = entry["threshold"]
    if entry.get("draft_unfit"):
        # Never turn speculation off (or tune it) on the strength of a draft that does not fit: fix the draft first.
        rec = dict(rec, action="refuse", setting=None, measured_action=rec["action"], reason=(
            "the draft does not fit its target (accept length %.2f, below %.2f): this run measured a broken draft, "
            "not EAGLE-3, so it cannot say where speculation pays. Fix the draft - one trained for this target model, "
            "the same tokenizer and vocabulary, the num_steps/eagle_topk it was trained with (llmserve.sglang."
            "spec_check) - and measure again" % (entry["accept_length"], entry["min_accept_length"])))
        rec.pop("server_speculative", None)
    return rec


def confirmation(raw: dict) -> dict | None:
    """The confirming run against the best measured curve at every point (curves.confirm); None without one."""
    results = raw.get("results", [])
    if not any(r.get("mode") == CONFIRM for r in results):
        return None
    conf = curves.confirm(results)
    setting = ((raw.get("meta") or {}).get("applied") or {}).get("setting")
    conf["setting"] = setting
    conf["reproduces"] = curves.reproduces(results, setting) if setting else None
    return conf


def allreduce_ab(raw: dict) -> list[dict]:
    """FlashInfer's PCIe-IPC all-reduce against NCCL at each concurrency both measured (decode tok/s, ratio)."""
    table = by_mode(raw.get("results", []))
    nccl, ipc = table.get("allreduce_nccl"), table.get("allreduce_pcie_ipc")
    if not nccl or not ipc:
        return []
    a, b = curve(nccl), curve(ipc)
    out = []
    for c in sorted(set(a) & set(b)):
        if a[c]["mean"] and b[c]["mean"] is not None:
            out.append({"concurrency": c, "nccl": a[c]["mean"], "pcie_ipc": b[c]["mean"],
                        "ratio": b[c]["mean"] / a[c]["mean"]})
    return out


def fmt(value, pattern: str) -> str:
    if value is None:
        return "-"
    try:
        return pattern.format(value)
    except (ValueError, TypeError):
        return str(value)


def _pm(st: dict) -> str:
    if st["mean"] is None:
        return "-"
    return f"{st['mean']:.1f}" + (f" ± {st['se']:.1f}" if st["n"] > 1 else "")


def _cell(value, pattern="{:.0f}"):
    return fmt(value, pattern)


def curve_lines(raw: dict, rec: dict | None, conf: dict | None) -> list[str]:
    """The three curves on the running-batch axis, the recommendation with what it loses where, the confirmation."""
    table = curves.rows(raw.get("results", []))
    lines = ["", "## Three curves on the running-batch axis", "",
             f"Decode tok/s per batch size; running = the server's running batch (its decode log's #running-req, "
             f"else sglang:num_running_reqs; median of the steady part), client = requests the client kept decoding "
             f"at once. A point whose batch did not "
             f"fill (running below {curves.FILL:.0%} of the batch) is marked and decides nothing.", "",
             "| batch | running (base / EAGLE-3 / adaptive / applied) | client | baseline | EAGLE-3 | adaptive | "
             "applied | adaptive / better static |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for row in table:
        got = row["modes"]
        if not any(m in got for m in curves.CURVES + (CONFIRM,)):
            continue

        def run(mode):
            v = got.get(mode)
            if not v:
                return "-"
            text = _cell(v["running"] if v["running"] is not None else None, "{:.1f}")
            return text + (" **not filled**" if v["filled"] is False else "")

        static = [got[m]["decode"] for m in (BASELINE, curves.STATIC) if m in got and got[m]["decode"] is not None]
        ratio = (got[ADAPTIVE]["decode"] / max(static) if ADAPTIVE in got and static and
                 got[ADAPTIVE]["decode"] is not None else None)
        clients = [v["client"] for v in got.values() if v["client"] is not None]
        lines.append(f"| {row['batch']} | {' / '.join(run(m) for m in curves.CURVES + (CONFIRM,))} | "
                     f"{_cell(min(clients) if clients else None, '{:.1f}')} | "
                     + " | ".join(_cell((got.get(m) or {}).get("decode")) for m in curves.CURVES + (CONFIRM,))
                     + f" | {_cell(ratio, '{:.2f}')} |")
    if rec is not None:
        patched_words: dict[bool | None, str] = {True: "applied", False: "absent"}
        patched = patched_words.get(rec.get("patched"), "not known")
        lines += ["", "## Recommended setting", "", f"SGLang `{rec.get('version') or '?'}` (adaptive config format: "
                  f"{rec.get('capability') or 'unknown'}; {curves.STEP0_PATCH}: {patched}): "
                  f"**{rec.get('setting') or rec['action']}** - {rec['reason']}.", ""]
        for name, loss in sorted((rec.get("losses") or {}).items()):
            where = ", ".join(f"{round(100 * w['lost'])}% at {w['batch']}" for w in loss["where"]) or "nothing"
            worst = loss.get("worst")
            worst = f"; worst {100 * worst['lost']:.1f}% at batch {worst['batch']}" if worst and worst["lost"] else ""
            lines.append(f"- {name}: loses {100 * loss['weighted']:.1f}% over the load{worst}; where: {where}"
                         + (" (not a candidate here)" if name not in (rec.get("candidates") or [name]) else ""))
        if rec.get("not_filled"):
            lines.append("- not filled (decide nothing): " + ", ".join(
                f"{label(m)} at batch {b} ({_cell(r, '{:.1f}')} running, client {_cell(c, '{:.1f}')})"
                for b, m, r, c in rec["not_filled"]))
        if rec.get("server_speculative") is not None:
            lines += ["", "```yaml", "server_speculative: " + json.dumps(rec["server_speculative"], sort_keys=True),
                      "```", "", "`playbooks/benchmark.yml -e benchmark_apply=true` writes it to the host group's "
                      "vars file (shown as a diff), redeploys and measures every point again.", ""]
    if conf is not None:
        lines += ["", "## Confirming run (the applied setting deployed)", "",
                  f"Each point against the best measured curve, within {conf['tolerance']:.0%}"
                  + (f"; applied: {conf['setting']}" if conf.get("setting") else "") + ".", "",
                  "| batch | applied tok/s | best | of | error | decides | ok |", "|---:|---:|---:|---|---:|---|---|"]
        for p in conf["points"]:
            lines.append(f"| {p['batch']} | {p['applied']:.1f} | {p['best']:.1f} | {p['best_setting']} | "
                         f"{fmt(p['rel_err'], '{:+.1%}')} | {'yes' if p['decides'] else 'no (not filled)'} | "
                         f"{'yes' if p['ok'] else 'NO'} |")
        lines += ["", f"Confirmed: **{'yes' if conf['ok'] else 'NO'}**"
                  + ("" if conf.get("reproduces") is not False else
                     " (and the applied run does not reproduce the curve its setting was measured with)"), ""]
    return lines


def load_of(raw: dict) -> dict:
    """Which load the run sent (bench_serving's ``load`` of each result): {"loads": [...], "words"}."""
    loads = []
    for res in raw.get("results", []):
        got = res.get("load")
        if isinstance(got, dict) and got not in loads:
            loads.append(got)
    if not loads:
        meta = raw.get("meta") or {}
        words = ("synthetic (%s words a prompt), not recorded per point" % meta["input_len"]
                 if "input_len" in meta else "not recorded")
        return {"loads": [], "words": words}
    parts = []
    for load in loads:
        if load.get("kind") == "prompts":
            parts.append("the user's prompt set %s (%s entries: %s conversations, %s prompts; %s characters at the "
                         "median, %s the longest), in one fixed order" % (
                             load.get("file"), load.get("entries"), load.get("conversations"), load.get("prompts"),
                             load.get("chars_median"), load.get("chars_max")))
        else:
            parts.append("synthetic (%s words a prompt, distinct per request)" % load.get("input_len", "?"))
    return {"loads": loads, "words": "; ".join(parts)}


def markdown(raw: dict, analysis: dict, rec: dict | None, conf: dict | None, plots: list[str],
             plot_note: str | None) -> str:
    meta = raw.get("meta") or {}
    table = by_mode(raw.get("results", []))
    lines = ["# Benchmark: baseline vs EAGLE-3", ""]
    for key in ("started", "model_path", "url", "max_new_tokens", "input_len", "engine", "sglang_version",
                "repeats", "wall_s"):
        if key in meta:
            lines.append(f"- {key}: `{meta[key]}`")
    lines.append(f"- load: {load_of(raw)['words']}")
    lines += ["", "Decode throughput = concurrency x median per-request decode rate (no time to first token), mean "
              "± standard error over the repeats; the other columns are means over the repeats.", ""]
    lines.append("| mode | concurrency | n | " + " | ".join(col[1] for col in TABLE_COLUMNS) + " |")
    lines.append("|---|---:|---:|" + "---:|" * len(TABLE_COLUMNS))
    for mode in sorted(table, key=lambda m: (m != BASELINE, m)):
        dec = curve(table[mode])
        for conc in sorted(table[mode]):
            reps = table[mode][conc]
            cells = []
            for key, _title, pattern in TABLE_COLUMNS:
                if key == "decode_throughput":
                    cells.append(_pm(dec[conc]))
                else:
                    cells.append(fmt(stats([r.get(key) for r in reps])["mean"], pattern))
            lines.append(f"| {label(mode)} | {conc} | {len(reps)} | " + " | ".join(cells) + " |")
    lines += ["", "## Where speculation stops paying (decode throughput)", ""]
    if not analysis:
        lines.append("No speculative mode measured next to the baseline.")
    for mode, entry in analysis.items():
        name = label(mode)
        unc = entry["uncertainty"]
        if not entry["points"]:
            lines.append(f"- {name}: no concurrency measured in both modes.")
            continue
        if entry["stops_paying_at"] is None:
            lines.append(f"- {name}: beats the baseline at every measured concurrency "
                         f"(up to {entry['points'][-1]}); no threshold needed in this range.")
        elif entry["last_paying"] is None:
            lines.append(f"- {name}: never beats the baseline (not even at concurrency {entry['points'][0]}).")
        else:
            lines.append(f"- {name}: beats the baseline up to concurrency {entry['last_paying']}, stops paying at "
                         f"{entry['stops_paying_at']}; decode curves cross at **{entry['crossover']:.2f}** "
                         f"(±1 SE band {fmt(unc['crossover_low'], '{:.2f}')} - {fmt(unc['crossover_high'], '{:.2f}')}, "
                         f"per repeat {', '.join(fmt(c, '{:.2f}') for c in unc['per_repeat'])}; "
                         f"{unc['repeats']} repeat(s)). Threshold: speculate while at most **{entry['threshold']}** "
                         f"requests run (band {fmt(unc['threshold_low'], '{}')} - {fmt(unc['threshold_high'], '{}')}).")
        if entry.get("draft_unfit"):
            lines.append(f"  - **accept length {entry['accept_length']:.2f}, below {entry['min_accept_length']:.2f}: the "
                         "draft does not fit its target** (almost no draft token accepted); this curve measures that "
                         "draft, not speculation.")
        lines.append(f"  - end-to-end throughput (TTFT included, which biases it with short outputs) would say "
                     f"{fmt(entry['e2e']['crossover'], '{:.2f}')} (threshold {fmt(entry['e2e']['threshold'], '{}')}).")
        check = entry.get("model_check")
        if check is not None:
            band = check.get("crossover_band")
            band_txt = f"[{band[0]:.2f}, {band[1]:.2f}]" if band else "none (no crossover in the model)"
            lines.append(f"  - rate model given to the server: crossover {fmt(entry.get('model_crossover'), '{:.2f}')}"
                         f", on this grid {fmt(entry.get('model_grid_crossover'), '{:.2f}')} (threshold "
                         f"{fmt(entry.get('model_grid_threshold'), '{}')}); measured in {band_txt} "
                         f"(tolerance {check['tolerance']:.0%}): {'yes' if check['crossover_ok'] else 'NO'}, threshold "
                         f"in {check['threshold_allowed']}: {'yes' if check['threshold_ok'] else 'NO'} -> measurement "
                         f"**{'matches' if check['ok'] else 'DOES NOT match'}** the model.")
    limited = client_limited(table)
    if limited:
        lines += ["", f"**Client-limited points** (fewer than {CLIENT_LIMITED:.0%} of the concurrency decoding at once "
                  "on average; they measure a smaller batch than their label, and the crossover with them): "
                  + ", ".join(f"{label(p['mode'])} c={p['concurrency']} ({p['mean_decoding']:.1f} decoding)"
                              for p in limited)
                  + ". The load generator or its host is starved: run it on a less busy host, or with longer outputs."]
    lines += curve_lines(raw, rec, conf)
    ab = allreduce_ab(raw)
    if ab:
        lines += ["", "## All-reduce: FlashInfer PCIe-IPC against NCCL", "",
                  "| concurrency | NCCL decode tok/s | PCIe-IPC decode tok/s | PCIe-IPC / NCCL |",
                  "|---:|---:|---:|---:|"]
        lines += [f"| {p['concurrency']} | {p['nccl']:.1f} | {p['pcie_ipc']:.1f} | {p['ratio']:.2f} |" for p in ab]
    points = model_points(raw)
    if points:
        lines += ["", "## Measured vs the rate model", "",
                  "Model: per-request rate = min(per_request_tps, saturation_tps / concurrency), decode = "
                  "concurrency x that; the threshold mode follows EAGLE-3 up to its threshold, the baseline above.", "",
                  "| mode | concurrency | decode tok/s | model | err | per-req tok/s | model | err |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for row in sorted(points, key=lambda r: (r["mode"] != BASELINE, r["mode"], r["concurrency"])):
            lines.append(
                f"| {label(row['mode'])} | {row['concurrency']} | {fmt(row['decode_throughput'], '{:.1f}')} | "
                f"{fmt(row['model_decode_throughput'], '{:.1f}')} | {fmt(row['decode_throughput_rel_err'], '{:+.1%}')} | "
                f"{fmt(row['median_per_request_tps'], '{:.1f}')} | {fmt(row['model_per_request_tps'], '{:.1f}')} | "
                f"{fmt(row['median_per_request_tps_rel_err'], '{:+.1%}')} |")
    lines.append("")
    if plots:
        lines += ["## Plots", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in plots] + [""]
    if plot_note:
        lines += [plot_note, ""]
    return "\n".join(lines)


def plot(raw: dict, analysis: dict, rec: dict | None) -> tuple[list[tuple[str, bytes]], str | None]:
    """The PNG plots as (file name, bytes) (written by ``build``, never through a link), and a note when skipped."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "Plots skipped: matplotlib is not installed on the controller."
    table = by_mode(raw.get("results", []))
    meta = raw.get("meta") or {}
    specs = [
        ("decode_throughput.png", "Decode throughput on the running-batch axis (batch x per-request decode rate)",
         "tokens/s",
         decode_throughput),
        ("throughput.png", "End-to-end output throughput (TTFT included)", "tokens/s", "output_throughput"),
        ("per_request_tps.png", "Per-request decode speed (median)", "tokens/s per request", "median_per_request_tps"),
        ("ttft.png", "Time to first token (median)", "ms", "median_ttft_ms"),
    ]
    styles = {BASELINE: "-", "eagle3": "-", CONFIRM: "--", "eagle3_adaptive": "-."}
    written = []
    ticks = sorted({c for rows in table.values() for c in rows})
    for filename, title, ylabel, metric in specs:
        fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=100)
        for mode in sorted(table, key=lambda m: (m != BASELINE, m == CONFIRM, m)):
            cv = curve(table[mode], metric)
            xs = [c for c in sorted(cv) if cv[c]["mean"] is not None]
            if xs:
                # decode throughput on the running-batch axis: each point where the server's running batch was
                # (its sample), not where the client meant it to be; a point that did not fill is drawn hollow
                run = curve(table[mode], "running") if metric is decode_throughput else {}
                at = [run[c]["mean"] if run.get(c, {}).get("mean") else c for c in xs]
                line = ax.errorbar(at, [cv[c]["mean"] for c in xs], yerr=[cv[c]["se"] for c in xs], marker="o",
                                   capsize=3, linestyle=styles.get(mode, "-"), label=label(mode),
                                   linewidth=2.2 if mode == CONFIRM else 1.5)
                hollow = [i for i, c in enumerate(xs) if run.get(c, {}).get("mean") is not None
                          and run[c]["mean"] < curves.FILL * c]
                if hollow:
                    ax.plot([at[i] for i in hollow], [cv[xs[i]]["mean"] for i in hollow], "o", markersize=10,
                            markerfacecolor="white", markeredgecolor=line[0].get_color(),
                            label=f"{label(mode)}: batch not filled")
        if metric is decode_throughput:
            entry = analysis.get("eagle3") or {}
            unc = entry.get("uncertainty") or {}
            if entry.get("crossover") and entry.get("last_paying") is not None:
                ax.axvline(entry["crossover"], color="grey", linestyle=":", linewidth=1.2,
                           label=f"crossover {entry['crossover']:.2f}")
                if unc.get("crossover_low") and unc.get("crossover_high"):
                    ax.axvspan(unc["crossover_low"], unc["crossover_high"], color="grey", alpha=0.12,
                               label="±1 SE band")
            eff = (meta.get("applied") or {}).get("effective_threshold")
            if eff is None and rec:
                eff = rec.get("effective_threshold")
            if eff:
                ax.axvline(eff + 0.5, color="tab:red", linestyle="--", linewidth=1,
                           label=f"threshold: speculate up to {eff}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_xlabel("running batch (the server's, sampled)" if metric is decode_throughput
                      else "batch (requests in flight)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, format="png")
        plt.close(fig)
        written.append((filename, png.getvalue()))
    return written, None


def open_run_dir(run_dir, create=False) -> int:
    """A descriptor of the run folder (the caller closes it): the collection's one path rule (host/owned_dirs), and
    the folder itself no link (a linked run folder would have the report written, or raw.json read, elsewhere).
    ``create``: made (0755) when missing."""
    path = os.path.abspath(str(run_dir))
    problem = owned_dirs.system_problem(path, "run_dir")
    if problem:
        raise Refused(problem)
    if create and not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.mkdir(path, 0o755)
    try:
        return boundary.open_dir(path, follow=False)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):  # O_DIRECTORY|O_NOFOLLOW: ENOTDIR
            raise Refused("run_dir %s is a symbolic link (to %s): nothing is written or read through it; give the "
                          "real folder" % (printable(path), printable(os.readlink(path))))
        if e.errno == errno.ENOENT:
            raise Refused("run_dir %s does not exist: pass raw, or a run_dir a benchmark wrote" % printable(path))
        raise Refused("run_dir %s cannot be opened as a folder (%s)" % (printable(path), e.strerror or e))


def write_raw(run_dir, raw: dict) -> None:
    """raw.json in the run folder (made when missing), written without following a link."""
    dfd = open_run_dir(run_dir, create=True)
    try:
        boundary.write_file(dfd, "raw.json", (json.dumps(raw, indent=2, sort_keys=True, default=str) + "\n").encode(),
                            shown=os.path.join(str(run_dir), "raw.json"))
    finally:
        os.close(dfd)


def read_json(dfd: int, run_dir, name: str = "raw.json",
              missing: str = "pass raw, or a run_dir a benchmark wrote") -> dict:
    """The mapping in the JSON file ``name`` of the run folder open at ``dfd``, read through the untrusted reader (a
    regular file, no link, nothing that blocks - a FIFO is refused, not waited on -, at most RAW's bytes and
    nesting); Refused naming the file otherwise."""
    shown = os.path.join(str(run_dir), name)
    tree = untrusted.Tree(str(run_dir), fd=dfd)
    if tree.lstat(name) is None:
        raise Refused("%s not found: %s" % (printable(shown), missing))
    try:
        data = tree.read(name, RAW)
        untrusted.prescan(data, name, RAW)
    except Refused as e:
        raise Refused(printable(shown), e.what, e.fix, e.field)
    try:
        loaded = json.loads(data.decode("utf-8"))
    except ValueError as e:
        raise Refused(printable(shown), "not JSON (%s)" % printable(str(e), 160), RAW.fix)
    if not isinstance(loaded, dict):
        raise Refused(printable(shown), "not a mapping", RAW.fix)
    return loaded


def read_report(run_dir) -> dict:
    """analysis.json of an earlier run (what ``build`` returned then), read as ``read_json`` reads; nothing written."""
    dfd = open_run_dir(run_dir)
    try:
        return read_json(dfd, run_dir, "analysis.json", "give a folder a benchmark run wrote its report in")
    finally:
        os.close(dfd)


def build(run_dir: Path, with_plots: bool = True, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    """Read RUN_DIR/raw.json, write report.md, analysis.json, summary.json and the plots there: the folder opened once
    (open_run_dir), every file written inside it without following a link (host/boundary.write_file)."""
    dfd = open_run_dir(run_dir)
    try:
        return _build(dfd, run_dir, with_plots, tolerance)
    finally:
        os.close(dfd)


def _build(dfd: int, run_dir, with_plots: bool, tolerance: float) -> dict:
    raw = read_json(dfd, run_dir)
    analysis = analyse(raw, tolerance)
    rec = recommendation(raw, analysis)
    conf = confirmation(raw)
    images, note = plot(raw, analysis, rec) if with_plots else ([], None)

    def write(name, data):
        boundary.write_file(dfd, name, data, shown=os.path.join(str(run_dir), name))

    for name, png in images:
        write(name, png)
    plots = [name for name, _png in images]
    write("report.md", markdown(raw, analysis, rec, conf, plots, note).encode("utf-8"))
    shape = curves.summary(raw.get("results", []), raw.get("meta") or {}, rec, conf)
    summary = {"analysis": analysis, "recommendation": rec, "confirmation": conf,
               "client_limited": client_limited(by_mode(raw.get("results", []))),
               "plots": plots, "report": "report.md", "model_points": model_points(raw),
               "allreduce_ab": allreduce_ab(raw), "summary": shape, "load": load_of(raw)}
    # analysis.json: everything the report decided; summary.json: the short form of issue 34, exactly its keys
    write("analysis.json", (json.dumps(summary, indent=2) + "\n").encode("utf-8"))
    write("summary.json", (json.dumps(shape, indent=2) + "\n").encode("utf-8"))
    return summary


def lines_of(summary: dict, run_dir) -> list[str]:
    """What a run prints: each mode's crossover, client-limited points, the recommendation, the confirmation."""
    out = []
    for mode, entry in summary["analysis"].items():
        unc = entry["uncertainty"]
        line = (f"{mode}: decode throughput stops paying at {entry['stops_paying_at']}, crossover "
                f"{fmt(entry['crossover'], '{:.2f}')} (±1 SE {fmt(unc['crossover_low'], '{:.2f}')}-"
                f"{fmt(unc['crossover_high'], '{:.2f}')}, {unc['repeats']} repeats), threshold {entry['threshold']}")
        check = entry.get("model_check")
        if check is not None:
            line += (f"; model {fmt(entry.get('model_grid_crossover'), '{:.2f}')} on this grid "
                     f"({fmt(entry.get('model_crossover'), '{:.2f}')} exact): "
                     f"{'matches' if check['ok'] else 'DOES NOT match'} (tolerance {check['tolerance']:.0%})")
        out.append(line)
    for p in summary["client_limited"]:
        out.append(f"client-limited: {p['mode']} c={p['concurrency']}: {p['mean_decoding']:.1f} requests decoding "
                   "on average")
    if summary.get("load"):
        out.append(f"load: {summary['load']['words']}")
    rec = summary["recommendation"]
    if rec:
        out.append(f"recommendation: {rec.get('setting') or rec['action']}: {rec['reason']}")
    conf = summary["confirmation"]
    if conf:
        out.append("confirmation: %s (%s)" % ("yes" if conf["ok"] else "NO", ", ".join(
            "batch %d %+.1f%% of %s%s" % (p["batch"], 100 * (p["rel_err"] or 0), p["best_setting"],
                                          "" if p["decides"] else " (not filled)") for p in conf["points"])))
    out.append(os.path.join(str(run_dir), "report.md"))
    return out


def failures(summary: dict, check_model: bool, check_confirm: bool) -> tuple[int, str | None]:
    """(exit code, message) of the checks asked for: 3 model mismatch, 4 confirmation failed, 0 none."""
    mismatch = [m for m, e in summary["analysis"].items() if e.get("model_check") and not e["model_check"]["ok"]]
    if check_model and mismatch:
        return 3, f"{', '.join(mismatch)} does not match the rate model"
    conf = summary["confirmation"]
    if check_confirm and not conf:
        return 4, "no confirming run to check"
    if check_confirm and conf.get("reproduces") is False:
        return 4, "the confirming run does not reproduce the curve its setting (%s) was measured with" % conf["setting"]
    if check_confirm and conf.get("setting") == "adaptive" and not conf["ok"]:
        return 4, "the applied adaptive setting does not follow the best measured curve within %d%% at every point" % (
            round(100 * conf["tolerance"]))
    return 0, None
