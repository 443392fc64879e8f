#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark report: raw results (JSON) -> markdown table, PNG plots and the crossover analysis.

    bench_report.py RUN_DIR            reads RUN_DIR/raw.json, writes report.md, summary.json and *.png there

raw.json:
    {"meta": {"started": "...", "model_path": "...", "max_new_tokens": 256, ...,
              "perf_model": {optional: the double's SGLANG_DOUBLE_PERF, to compare with}},
     "results": [{"mode": "baseline" | "eagle3" | "eagle3_adaptive" | ..., "concurrency": 1,
                  "output_throughput": ..., "median_per_request_tps": ..., "median_ttft_ms": ..., ...}, ...]}

Crossover: for every speculative mode, the lowest measured concurrency at which its output throughput is no
longer above the baseline's ("stops paying"), the crossover interpolated linearly between the last paying and the
first non-paying concurrency, and the recommended threshold for load-adaptive speculation: speculate while at
most ``threshold`` requests run (``ceil(crossover) - 1``), the number the seed deployment passed as
``--speculative-disable-batch-threshold``.

Controller side; plots need matplotlib (Agg backend, no display). Without matplotlib the report is still
written and says the plots were skipped.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

BASELINE = "baseline"
MODE_LABELS = {"baseline": "baseline", "eagle3": "EAGLE-3", "eagle3_adaptive": "EAGLE-3 adaptive"}
TABLE_COLUMNS = [
    ("output_throughput", "out tok/s", "{:.1f}"),
    ("median_per_request_tps", "per-req tok/s (med)", "{:.1f}"),
    ("median_ttft_ms", "TTFT med ms", "{:.0f}"),
    ("p99_ttft_ms", "TTFT p99 ms", "{:.0f}"),
    ("median_itl_ms", "ITL med ms", "{:.1f}"),
    ("p99_itl_ms", "ITL p99 ms", "{:.1f}"),
    ("accept_length", "accept len", "{:.2f}"),
    ("completed", "ok", "{}"),
    ("failed", "failed", "{}"),
]


def label(mode: str) -> str:
    return MODE_LABELS.get(mode, mode)


def by_mode(results: list[dict]) -> dict[str, dict[int, dict]]:
    """{mode: {concurrency: result}}; a later result for the same pair replaces an earlier one."""
    table: dict[str, dict[int, dict]] = {}
    for res in results:
        table.setdefault(res["mode"], {})[int(res["concurrency"])] = res
    return table


def crossover(base: dict[int, float], spec: dict[int, float]) -> dict:
    """Where ``spec`` stops beating ``base`` ({concurrency: throughput} each, compared on common points).

    Returns pays_at (concurrencies where spec > base), stops_paying_at (first c where spec <= base, None if it
    always pays), last_paying (the measured c before it, None if it never pays), crossover (interpolated c where
    the two curves meet) and threshold (largest integer concurrency that still pays by the interpolation:
    ceil(crossover) - 1; 0 = never speculate; None = no crossover within the measured range).
    """
    points = sorted(c for c in base if c in spec and base[c] is not None and spec[c] is not None)
    pays = [c for c in points if spec[c] > base[c]]
    stops = next((c for c in points if spec[c] <= base[c]), None)
    out = {"points": points, "pays_at": pays, "stops_paying_at": stops, "last_paying": None,
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


def model_total(perf: dict, c: float) -> float:
    """Total tokens/s of the double's rate model: c * min(per_request_tps, saturation_tps / c)."""
    return min(float(perf["per_request_tps"]) * c, float(perf["saturation_tps"]))


def model_crossover(perf_model: dict, mode: str = "eagle3", c_max: float = 4096.0) -> float | None:
    """Concurrency (real number) where the model's spec total throughput falls to the baseline's; None if never."""
    base, spec = perf_model.get(BASELINE), perf_model.get(mode) or perf_model.get("eagle3")
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


DEFAULT_TOLERANCE = 0.15  # relative, on the crossover concurrency


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


def mode_perf(perf_model: dict, mode: str) -> dict | None:
    """The model a mode ran under: the double uses ``eagle3`` for every speculative launch."""
    if mode == BASELINE:
        return perf_model.get(BASELINE)
    return perf_model.get(mode) or perf_model.get("eagle3")


def model_rate(perf: dict, c: float) -> float:
    """Per-request tokens/s of the double's rate model: min(per_request_tps, saturation_tps / c)."""
    return min(float(perf["per_request_tps"]), float(perf["saturation_tps"]) / max(c, 1e-9))


def analyse(raw: dict, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    table = by_mode(raw.get("results", []))
    base = {c: r.get("output_throughput") for c, r in table.get(BASELINE, {}).items()}
    perf_model = (raw.get("meta") or {}).get("perf_model")
    analysis = {}
    for mode, rows in table.items():
        if mode == BASELINE:
            continue
        spec = {c: r.get("output_throughput") for c, r in rows.items()}
        entry = crossover(base, spec)
        if perf_model and perf_model.get(BASELINE) and mode_perf(perf_model, mode):
            model_c = model_crossover(perf_model, mode)
            entry["model_crossover"] = model_c
            entry["model_threshold"] = (max(0, int(math.ceil(model_c - 1e-9)) - 1)
                                        if model_c is not None and model_c > 0 else (0 if model_c == 0 else None))
            grid = entry["points"]
            model_base = {c: model_total(perf_model[BASELINE], c) for c in grid}
            model_spec = {c: model_total(mode_perf(perf_model, mode), c) for c in grid}
            on_grid = crossover(model_base, model_spec)
            entry["model_stops_paying_at"] = on_grid["stops_paying_at"]
            entry["model_grid_crossover"] = on_grid["crossover"]
            entry["model_grid_threshold"] = on_grid["threshold"]
            entry["model_check"] = model_check(entry, tolerance)
        analysis[mode] = entry
    return analysis


def model_points(raw: dict) -> list[dict]:
    """Each measured point next to the rate model's prediction (relative error of throughput and per-request)."""
    perf_model = (raw.get("meta") or {}).get("perf_model")
    if not perf_model:
        return []
    out = []
    for res in raw.get("results", []):
        perf = mode_perf(perf_model, res["mode"])
        if not perf:
            continue
        conc = int(res["concurrency"])
        row = {"mode": res["mode"], "concurrency": conc, "model_output_throughput": model_total(perf, conc),
               "model_per_request_tps": model_rate(perf, conc)}
        for key, model_key in (("output_throughput", "model_output_throughput"),
                               ("median_per_request_tps", "model_per_request_tps")):
            val = res.get(key)
            row[key] = val
            row[key + "_rel_err"] = (val - row[model_key]) / row[model_key] if val is not None else None
        out.append(row)
    return out


def fmt(value, pattern: str) -> str:
    if value is None:
        return "-"
    try:
        return pattern.format(value)
    except (ValueError, TypeError):
        return str(value)


def markdown(raw: dict, analysis: dict, plots: list[str], plot_note: str | None) -> str:
    meta = raw.get("meta") or {}
    table = by_mode(raw.get("results", []))
    lines = ["# Benchmark: baseline vs EAGLE-3", ""]
    for key in ("started", "model_path", "url", "max_new_tokens", "input_len", "engine", "sglang_version"):
        if key in meta:
            lines.append(f"- {key}: `{meta[key]}`")
    lines.append("")
    lines.append("| mode | concurrency | " + " | ".join(col[1] for col in TABLE_COLUMNS) + " |")
    lines.append("|---|---:|" + "---:|" * len(TABLE_COLUMNS))
    for mode in sorted(table, key=lambda m: (m != BASELINE, m)):
        for conc in sorted(table[mode]):
            res = table[mode][conc]
            cells = [fmt(res.get(key), pattern) for key, _title, pattern in TABLE_COLUMNS]
            lines.append(f"| {label(mode)} | {conc} | " + " | ".join(cells) + " |")
    lines += ["", "## Where speculation stops paying", ""]
    if not analysis:
        lines.append("No speculative mode measured next to the baseline.")
    for mode, entry in analysis.items():
        name = label(mode)
        if not entry["points"]:
            lines.append(f"- {name}: no concurrency measured in both modes.")
            continue
        if entry["stops_paying_at"] is None:
            lines.append(f"- {name}: beats the baseline at every measured concurrency "
                         f"(up to {entry['points'][-1]}); no threshold needed in this range.")
        elif entry["last_paying"] is None:
            lines.append(f"- {name}: never beats the baseline (not even at concurrency {entry['points'][0]}): "
                         "leave speculation off, or on only for single-user latency.")
        else:
            lines.append(f"- {name}: beats the baseline up to concurrency {entry['last_paying']}, stops paying at "
                         f"{entry['stops_paying_at']}; curves cross near **{entry['crossover']:.1f}**. "
                         f"Recommended threshold for load-adaptive speculation: speculate while at most "
                         f"**{entry['threshold']}** requests run, plain decoding above.")
        check = entry.get("model_check")
        if check is not None:
            mc = entry.get("model_crossover")
            gc = entry.get("model_grid_crossover")
            lines.append(f"  - rate model given to the server: crossover {fmt(mc, '{:.2f}')} (threshold "
                         f"{fmt(entry.get('model_threshold'), '{}')}); on the measured grid "
                         f"{fmt(gc, '{:.2f}')} (threshold {fmt(entry.get('model_grid_threshold'), '{}')}, "
                         f"first non-paying point {fmt(entry.get('model_stops_paying_at'), '{}')}).")
            band = check.get("crossover_band")
            band_txt = f"[{band[0]:.2f}, {band[1]:.2f}]" if band else "none (no crossover in the model)"
            lines.append(f"  - check (tolerance {check['tolerance']:.0%} on the crossover): measured "
                         f"{fmt(entry.get('crossover'), '{:.2f}')} in {band_txt}: "
                         f"{'yes' if check['crossover_ok'] else 'NO'}; threshold {fmt(entry.get('threshold'), '{}')} "
                         f"in {check['threshold_allowed']}: {'yes' if check['threshold_ok'] else 'NO'}; "
                         f"stops paying at the model's point: {'yes' if check['stops_paying_ok'] else 'NO'} -> "
                         f"measurement **{'matches' if check['ok'] else 'DOES NOT match'}** the model.")
    points = model_points(raw)
    if points:
        lines += ["", "## Measured vs the rate model", "",
                  "Model: per-request rate = min(per_request_tps, saturation_tps / concurrency), total = "
                  "concurrency x that.", "",
                  "| mode | concurrency | out tok/s | model | err | per-req tok/s | model | err |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for row in sorted(points, key=lambda r: (r["mode"] != BASELINE, r["mode"], r["concurrency"])):
            lines.append(
                f"| {label(row['mode'])} | {row['concurrency']} | {fmt(row['output_throughput'], '{:.1f}')} | "
                f"{row['model_output_throughput']:.1f} | {fmt(row['output_throughput_rel_err'], '{:+.1%}')} | "
                f"{fmt(row['median_per_request_tps'], '{:.1f}')} | {row['model_per_request_tps']:.1f} | "
                f"{fmt(row['median_per_request_tps_rel_err'], '{:+.1%}')} |")
    lines += ["", "SGLang >= 0.5.23: `--speculative-adaptive` turns drafting off by batch size "
              "(EAGLE/EAGLE3 with topk 1). Older versions have no such flag.", ""]
    if plots:
        lines += ["## Plots", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in plots] + [""]
    if plot_note:
        lines += [plot_note, ""]
    return "\n".join(lines)


def plot(raw: dict, analysis: dict, out_dir: Path) -> tuple[list[str], str | None]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "Plots skipped: matplotlib is not installed on the controller."
    table = by_mode(raw.get("results", []))
    specs = [
        ("throughput.png", "Total output throughput", "tokens/s", [("output_throughput", "")]),
        ("per_request_tps.png", "Per-request decode speed (median)", "tokens/s per request",
         [("median_per_request_tps", "")]),
        ("ttft.png", "Time to first token", "ms", [("median_ttft_ms", " median"), ("p99_ttft_ms", " p99")]),
    ]
    written = []
    for filename, title, ylabel, series in specs:
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
        colors = {}
        for mode in sorted(table, key=lambda m: (m != BASELINE, m)):
            concs = sorted(table[mode])
            for key, suffix in series:
                ys = [table[mode][c].get(key) for c in concs]
                pts = [(c, y) for c, y in zip(concs, ys) if y is not None]
                if pts:
                    line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                                    linestyle="--" if suffix.strip() == "p99" else "-", label=label(mode) + suffix)
                    colors.setdefault(mode, line.get_color())
        perf_model = (raw.get("meta") or {}).get("perf_model")
        model_fn = {"output_throughput": model_total, "median_per_request_tps": model_rate}.get(series[0][0])
        if perf_model and model_fn:
            for mode in sorted(table, key=lambda m: (m != BASELINE, m)):
                perf = mode_perf(perf_model, mode)
                concs = sorted(table[mode])
                if perf and concs and mode in (BASELINE, "eagle3"):
                    xs = [concs[0] * (concs[-1] / concs[0]) ** (i / 100.0) for i in range(101)]
                    ax.plot(xs, [model_fn(perf, x) for x in xs], linestyle=":", linewidth=1.2,
                            color=colors.get(mode, "black"), alpha=0.7, label=f"model {label(mode)}")
        for idx, (mode, entry) in enumerate(analysis.items()):
            if entry.get("crossover") and entry.get("last_paying") is not None:
                color = colors.get(mode, "grey")
                ax.axvline(entry["crossover"], color=color, linestyle=":", linewidth=1)
                ax.annotate(f"{label(mode)} stops paying ~{entry['crossover']:.1f}",
                            (entry["crossover"], ax.get_ylim()[1]), textcoords="offset points",
                            xytext=(4, -12 - 11 * idx), fontsize=8, color=color)
        ax.set_xscale("log", base=2)
        ticks = sorted({c for rows in table.values() for c in rows})
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_xlabel("concurrency (requests in flight)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / filename
        fig.savefig(path)
        plt.close(fig)
        written.append(str(path))
    return written, None


def build(run_dir: Path, with_plots: bool = True, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    raw = json.loads((run_dir / "raw.json").read_text())
    analysis = analyse(raw, tolerance)
    plots, note = plot(raw, analysis, run_dir) if with_plots else ([], None)
    (run_dir / "report.md").write_text(markdown(raw, analysis, plots, note))
    summary = {"analysis": analysis, "plots": [Path(p).name for p in plots], "report": "report.md",
               "model_points": model_points(raw)}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("run_dir", type=Path, help="folder holding raw.json; outputs land next to it")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                        help="relative tolerance of the crossover against the rate model (default %(default)s)")
    parser.add_argument("--check-model", action="store_true",
                        help="exit 3 when a speculative mode's crossover/threshold does not match the rate model")
    args = parser.parse_args(argv)
    if not (args.run_dir / "raw.json").is_file():
        print(f"bench_report: {args.run_dir / 'raw.json'} not found", file=sys.stderr)
        return 2
    summary = build(args.run_dir, with_plots=not args.no_plots, tolerance=args.tolerance)
    mismatch = []
    for mode, entry in summary["analysis"].items():
        line = (f"{mode}: stops paying at {entry['stops_paying_at']}, crossover {fmt(entry['crossover'], '{:.2f}')}, "
                f"threshold {entry['threshold']}")
        check = entry.get("model_check")
        if check is not None:
            line += (f"; model {fmt(entry.get('model_grid_crossover'), '{:.2f}')} on this grid "
                     f"({fmt(entry.get('model_crossover'), '{:.2f}')} exact), threshold "
                     f"{entry.get('model_grid_threshold')}: {'matches' if check['ok'] else 'DOES NOT match'} "
                     f"(tolerance {check['tolerance']:.0%})")
            if not check["ok"]:
                mismatch.append(mode)
        print(line)
    print(os.path.join(str(args.run_dir), "report.md"))
    if args.check_model and mismatch:
        print(f"bench_report: {', '.join(mismatch)} does not match the rate model", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
