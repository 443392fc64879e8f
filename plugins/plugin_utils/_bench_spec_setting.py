# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""Turn a speculation threshold into the setting the installed SGLang really has, or refuse.

What each release reads is in module_utils/sglang/adaptive.py (from the wheels' adaptive_spec_params.py): no
version has a plain batch-size threshold flag (the seed's ``--speculative-disable-batch-threshold`` was its own
patch); from 0.5.14 ``--speculative-adaptive --speculative-adaptive-config FILE`` with a slot of steps 0 above a
batch size is one. The server's own ``/server_info`` gives the version and the captured CUDA-graph sizes the
threshold is padded to.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import adaptive

spec_capture_sizes = adaptive.spec_capture_sizes
padded = adaptive.padded


def capability(version):
    """none | flat | slots | slots_zero; None when the version cannot be parsed."""
    try:
        return adaptive.config_format(version)
    except ValueError:
        return None


def recommend(threshold, version, speculative, capture=None, cuda_graph_max_bs=None, cuda_graph=True, tiers=None):
    """The setting that makes the server speculate only while at most ``threshold`` requests run.

    tiers: ``[{"steps", "upto"}, ...]`` chosen from measured shorter chains (_bench_report.tiers): the adaptive
    config drafts each tier's steps up to its batch size (e.g. 3 -> 1 -> 0) instead of the two tiers S -> 0.

    threshold None: speculation pays at every measured load (keep it always on); 0: it never pays (turn it off).
    capture: the speculative server's decode CUDA-graph sizes (``/server_info``); else derived from
    cuda_graph_max_bs; none when cuda_graph is false.
    Returns {"action": "keep" | "off" | "adaptive" | "refuse", "reason", "server_speculative" (when applicable),
    "effective_threshold", "config_key"}.
    """
    spec = dict(speculative or {})
    cap = capability(version)
    out = {"version": version, "threshold": threshold, "capability": cap}
    if threshold is None:
        out.update(action="keep", reason="EAGLE-3 beats the baseline at every measured concurrency: keep it on")
        out["server_speculative"] = dict(spec, adaptive=False)
        out["server_speculative"].pop("adaptive_config", None)
        return out
    if threshold <= 0:
        out.update(action="off", reason="EAGLE-3 never beats the baseline in decode throughput: serve without it "
                                        "(server_speculative.algorithm: '')")
        out["server_speculative"] = {"algorithm": ""}
        return out
    if cap != "slots_zero":
        why = adaptive.WHY_NO_THRESHOLD.get(cap, "has an unknown version")
        out.update(action="refuse", reason=(
            "SGLang %s %s. Pick one mode for the expected load - EAGLE-3 if typical concurrency stays at or below "
            "%d, else server_speculative.algorithm: '' - or upgrade SGLang to 0.5.14 or later (roles/sglang; "
            "0.5.15.post1 and 0.5.23 were checked) and run this again" % (version or "(unknown version)", why,
                                                                          threshold)))
        return out
    topk = spec.get("eagle_topk")
    if topk not in (None, 1):
        out.update(action="refuse", reason=(
            "SGLang's adaptive speculation supports eagle_topk 1 only, this deployment uses %s: set "
            "server_speculative.eagle_topk: 1 (and num_draft_tokens: num_steps + 1), benchmark again, then apply"
            % topk))
        return out
    steps = int(spec.get("num_steps") or 3)
    if not cuda_graph:
        capture = None
    elif not capture:
        capture = spec_capture_sizes(int(cuda_graph_max_bs or 48))
    if tiers:
        return _tiered(out, spec, version, tiers, capture)
    rendered = adaptive.threshold_config(version, steps, threshold, capture)
    if "error" in rendered:
        out.update(action="off", reason=rendered["error"], server_speculative={"algorithm": ""})
        return out
    key, eff = rendered["config_key"], rendered["effective_threshold"]
    setting = dict(spec, adaptive=True, eagle_topk=1, num_steps=steps, num_draft_tokens=steps + 1,
                   adaptive_config=rendered["config"])
    out.update(action="adaptive", effective_threshold=eff, config_key=key, server_speculative=setting,
               reason=("speculate (num_steps %d) while at most %d requests run, plain decoding from %d: "
                       "--speculative-adaptive with slots 1 -> [%d], %d -> [0]%s"
                       % (steps, eff, eff + 1, steps, key,
                          "" if eff == threshold else
                          " (CUDA-graph padding routes batches by capture size: %d is the largest <= %d)"
                          % (eff, threshold))))
    return out


def _tiered(out, spec, version, tiers, capture):
    """recommend()'s answer for tiers measured on shorter chains: one slot per tier, steps falling with the batch."""
    rendered = adaptive.tiers_config(version, tiers, capture)
    if "error" in rendered:
        out.update(action="off", reason=rendered["error"], server_speculative={"algorithm": ""})
        return out
    routed = rendered["tiers"]
    steps = max(t["steps"] for t in routed)
    off = [t for t in routed if t["steps"] == 0]
    setting = dict(spec, adaptive=True, eagle_topk=1, num_steps=steps, num_draft_tokens=steps + 1,
                   adaptive_config=rendered["config"])
    out.update(action="adaptive", server_speculative=setting, tiers=routed,
               effective_threshold=off[0]["from"] - 1 if off else None, config_key=off[0]["from"] if off else None,
               reason="speculate by tiers measured on this GPU: %s: --speculative-adaptive with slots %s" % (
                   ", ".join("%d steps %s" % (t["steps"], "from batch %d" % t["from"] if t["upto"] is None
                                              else "up to %d running requests" % t["upto"]) for t in routed),
                   ", ".join("%d -> [%d]" % (t["from"], t["steps"]) for t in routed)))
    return out
