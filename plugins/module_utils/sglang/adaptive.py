# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``--speculative-adaptive-config``: what each SGLang release reads, and the threshold config rendered for it.

Read from the wheels' ``sglang/srt/speculative/adaptive_spec_params.py`` (PyPI, cp312):

- before 0.5.11: no ``--speculative-adaptive``.
- 0.5.11, 0.5.12 (``flat``): one JSON object, ``{"candidate_steps": [...], "ema_alpha": ..., ...}``; at least two
  distinct candidates, all >= 1 (0.5.12 adds the launch num_steps to them); the same list whatever the batch size.
- 0.5.13 (``slots``): slots keyed by batch size (integer strings), each ``{"candidate_steps": [...]}``, every step
  > 0: drafting can drop to one step above a batch size, not off.
- 0.5.14 and later (``slots_zero``; read: 0.5.14, 0.5.15.post1, 0.5.23): the same slots with steps >= 0; step 0
  runs the batch without drafting. The decode batch size is padded up to a captured CUDA-graph size
  (``_pad_to_cuda_graph_bs``), then routed to the slot with the largest key <= it (``_find_closest_bs``); a slot
  whose candidate list does not hold the launch num_steps starts at its middle candidate.
So "speculate while at most T requests run" is ``{"1": {"candidate_steps": [S]}, "K": {"candidate_steps": [0]}}``
with K one above the largest captured size <= T (every batch up to T pads to a size < K).
"""

from __future__ import annotations

import re

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import release

FIRST_FLAG = gates.first("adaptive")
FIRST_SLOTS = gates.first("adaptive_slots")
FIRST_ZERO_STEPS = gates.first("adaptive_zero")

FORMATS = ("none", "flat", "slots", "slots_zero")

WHY_NO_THRESHOLD = {
    "none": "has no --speculative-adaptive (added in 0.5.11) and no other flag that turns speculation off by batch "
            "size",
    "flat": "has --speculative-adaptive, but its config is one candidate list (all >= 1) whatever the batch size",
    "slots": "has per-batch-size adaptive slots, but candidate_steps must be > 0: drafting can drop to 1 step "
             "above the threshold, not turn off",
}


def config_format(version):
    """none | flat | slots | slots_zero for an SGLang version string (ValueError when unparseable)."""
    rel = release(version)
    if rel < FIRST_FLAG:
        return "none"
    if rel < FIRST_SLOTS:
        return "flat"
    if rel < FIRST_ZERO_STEPS:
        return "slots"
    return "slots_zero"


def spec_capture_sizes(max_bs):
    """Decode CUDA-graph batch sizes with speculation on (server_args._generate_decode_cuda_graph_batch_sizes,
    spec branch; the same in 0.5.13 to 0.5.23)."""
    sizes = (list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4)) + list(range(72, 257, 8))
             + list(range(272, int(max_bs) + 1, 16)))
    sizes = [b for b in sizes if b <= int(max_bs)]
    return sizes if int(max_bs) in sizes else sizes + [int(max_bs)]


def padded(batch, capture):
    """The CUDA-graph size a decode batch runs at (itself when above every captured size or without graphs)."""
    if not capture:
        return batch
    return next((c for c in sorted(capture) if c >= batch), batch)


def threshold_key(threshold, capture):
    """(slot key K, effective threshold): batches of at most the effective threshold speculate, the rest do not.

    Routing pads a batch up to a captured size first, so only whole capture buckets can be switched: take the
    largest captured size <= threshold (never speculate where it loses) and put K just above it.
    """
    threshold = int(threshold)
    if not capture:
        return threshold + 1, threshold
    below = [c for c in sorted(capture) if c <= threshold]
    eff = below[-1] if below else 0
    return eff + 1, eff


def threshold_config(version, num_steps, threshold, capture=None):
    """The adaptive config that drafts num_steps while at most ``threshold`` requests run and not at all above.

    Returns {"config": dict, "config_key": K, "effective_threshold": T'} or {"error": why, with the fix}.
    capture: the server's decode CUDA-graph sizes (``/server_info`` ``cuda_graph_config.decode.bs``), None
    without CUDA graphs.
    """
    fmt = config_format(version)
    if fmt != "slots_zero":
        return {"error": "SGLang %s %s: upgrade to 0.5.14 or later (roles/sglang) to switch speculation off above a "
                         "batch size" % (version, WHY_NO_THRESHOLD[fmt])}
    steps = int(num_steps)
    if steps < 1:
        return {"error": "num_steps must be >= 1 to speculate below the threshold (got %d)" % steps}
    key, eff = threshold_key(threshold, capture)
    if eff <= 0:
        return {"error": "no captured CUDA-graph size is <= %s: every batch would pad past the threshold, so no "
                         "batch size speculates profitably; serve without speculation" % threshold}
    return {"config": {"1": {"candidate_steps": [steps]}, str(key): {"candidate_steps": [0]}},
            "config_key": key, "effective_threshold": eff}


def tiers_config(version, tiers, capture=None):
    """The adaptive config of tiers ``[{"steps": S, "upto": T}, ..., {"steps": 0, "upto": None}]`` (steps falling
    with the running batch: each tier drafts its steps while at most ``upto`` requests run, the next one above).

    Returns {"config", "tiers": [{"steps", "from", "upto"}] as SGLang routes them (keys padded like
    :func:`threshold_config`; a tier no capture bucket falls in is dropped)} or {"error": why}.
    """
    fmt = config_format(version)
    if fmt != "slots_zero":
        return {"error": "SGLang %s %s: upgrade to 0.5.14 or later (roles/sglang)" % (version, WHY_NO_THRESHOLD[fmt])}
    slots = [[1, int(tiers[0]["steps"])]]
    for tier, nxt in zip(tiers, tiers[1:]):
        key, _eff = threshold_key(tier["upto"], capture)
        if key <= slots[-1][0]:
            slots[-1][1] = int(nxt["steps"])  # this tier covers no captured size: the next one starts where it did
        else:
            slots.append([key, int(nxt["steps"])])
    merged = []
    for key, steps in slots:
        if not merged or merged[-1][1] != steps:
            merged.append([key, steps])
    out = [{"steps": steps, "from": key, "upto": (merged[i + 1][0] - 1) if i + 1 < len(merged) else None}
           for i, (key, steps) in enumerate(merged)]
    return {"config": dict((str(key), {"candidate_steps": [steps]}) for key, steps in merged), "tiers": out}


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def validate(cfg, version, num_steps=None):
    """Errors (each with its fix) of an adaptive config for this SGLang version, as its loader would raise them;
    returns (errors, union of candidate steps)."""
    fmt = config_format(version)
    errors, steps = [], set()
    if fmt == "none":
        return ["speculative.adaptive_config: SGLang %s has no --speculative-adaptive (0.5.11+): upgrade sglang"
                % version], steps
    if not isinstance(cfg, dict):
        return ["speculative.adaptive_config must be a mapping"], steps
    if fmt == "flat":
        if any(str(k).isdigit() for k in cfg):
            errors.append("speculative.adaptive_config: SGLang %s reads one flat {\"candidate_steps\": [...]} object, "
                          "not per-batch-size slots (0.5.13+): drop the batch-size keys or upgrade sglang" % version)
            return errors, steps
        cand = cfg.get("candidate_steps", [1, 3, 7])
        if not isinstance(cand, list) or not all(_is_int(s) and s >= 1 for s in cand):
            errors.append("speculative.adaptive_config.candidate_steps must be a list of integers >= 1 on SGLang %s"
                          % version)
            return errors, steps
        steps = set(cand) | ({int(num_steps)} if num_steps is not None and release(version) >= (0, 5, 12) else set())
        if len(steps) < 2:
            errors.append("speculative.adaptive_config.candidate_steps needs at least two distinct values on SGLang "
                          "%s (it asserts so at start)" % version)
        return errors, steps
    floor = 1 if fmt == "slots" else 0
    for key, entry in cfg.items():
        if not str(key).isdigit():
            continue  # shared knobs (ema_alpha, ...) next to the slots
        cand = entry.get("candidate_steps") if isinstance(entry, dict) else None
        if not isinstance(cand, list) or not cand or not all(_is_int(s) and s >= floor for s in cand):
            errors.append("speculative.adaptive_config[%s].candidate_steps must be a non-empty list of integers >= %d"
                          "%s" % (key, floor, " (step 0, drafting off, needs SGLang 0.5.14+)" if floor else ""))
            continue
        steps.update(cand)
    if not steps and not errors:
        errors.append('speculative.adaptive_config needs at least one batch-size key, e.g. '
                      '{"1": {"candidate_steps": [1, 3]}}')
    return errors, steps


# A launch that asked for --speculative-adaptive and runs static: arg_groups/speculative_hook.py _maybe_disable_adaptive
# (0.5.15.post1 and 0.5.23) logs this warning and sets speculative_adaptive false (so /server_info says so too).
DISABLED_LINE = "speculative_adaptive disabled:"
DISABLED_CATEGORY = "adaptive_disabled"
DISABLED_REMEDY = ("SGLang turned --speculative-adaptive off and serves static speculation: adaptive needs "
                   "speculative eagle_topk 1 (an explicit topk other than 1 disables it; set server_speculative.eagle_topk: "
                   "1 and num_draft_tokens: num_steps + 1), EAGLE or EAGLE3, no attention DP (enable-dp-attention), no "
                   "multi-layer EAGLE, no two-batch overlap, no pdmux; fix the setting the reason names, or deploy "
                   "without adaptive")
_DISABLED_RE = re.compile(r"speculative_adaptive disabled: (.*?)\.? Falling back to static speculative params")


def disabled(log_text=None, server_info=None):
    """Why a launch that asked for adaptive runs static: the reason of SGLang's warning in ``log_text``, else a note
    when ``server_info`` (its /server_info) says speculative_adaptive false; None when nothing says so."""
    found = _DISABLED_RE.findall(log_text or "")
    if found:
        return found[-1]
    if DISABLED_LINE in (log_text or ""):
        return "(reason not readable in the log)"
    if isinstance(server_info, dict) and server_info.get("speculative_algorithm") and \
            server_info.get("speculative_adaptive") is False:
        return "/server_info says speculative_adaptive false"
    return None
