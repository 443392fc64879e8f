# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn a speculation threshold into the setting the installed SGLang really has, or refuse.

What the real SGLang wheels have (PyPI, read in ``sglang/srt/server_args.py`` and
``sglang/srt/speculative/adaptive_spec_params.py``):

- up to 0.5.10.post1 (read: 0.5.9, 0.5.10, 0.5.10.post1): no flag that turns speculation off by batch size. No
  version has a plain batch-size threshold flag (the seed's ``--speculative-disable-batch-threshold`` was its own
  patch).
- 0.5.11, 0.5.12: ``--speculative-adaptive`` exists but adapts num_steps only, from one candidate list (at least two
  values, all >= 1), whatever the batch size.
- 0.5.13: per-batch-size slots, but candidate_steps must be > 0: drafting can drop to 1 step, not off.
- from 0.5.14 (read: 0.5.14, 0.5.15.post1, 0.5.23): ``--speculative-adaptive --speculative-adaptive-config FILE``
  with slots keyed by batch size and candidate_steps >= 0. The decode batch size is padded up to a CUDA-graph
  capture size, then routed to the slot with the largest integer key <= it; steps 0 runs the batch without
  drafting. EAGLE/EAGLE3 with eagle_topk 1 only (no DP attention, no two-batch overlap). So "speculate up to T
  running requests" is ``{"1": {"candidate_steps": [S]}, "K": {"candidate_steps": [0]}}`` with K just above T's
  padded size. Versions after 0.5.15.post1 other than 0.5.23 were not read and are taken to keep it.

The playbook also asks ``launch_server --help`` for ``--speculative-adaptive``; a host without it is refused
whatever its version says.
"""
from __future__ import annotations

import re

FIRST_FLAG = (0, 5, 11, 0)        # --speculative-adaptive appears
FIRST_SLOTS = (0, 5, 13, 0)       # per-batch-size slots
FIRST_ZERO_STEPS = (0, 5, 14, 0)  # candidate_steps may be 0 (drafting off in a slot)


def version_key(version: str) -> tuple:
    m = re.match(r"^v?(\d+)\.(\d+)\.(\d+)(?:\.post(\d+))?", str(version or ""))
    if not m:
        return ()
    return tuple(int(g or 0) for g in m.groups())


def capability(version: str) -> str | None:
    """none | steps_only | slots_without_zero | threshold; None when the version cannot be parsed."""
    key = version_key(version)
    if not key:
        return None
    if key < FIRST_FLAG:
        return "none"
    if key < FIRST_SLOTS:
        return "steps_only"
    if key < FIRST_ZERO_STEPS:
        return "slots_without_zero"
    return "threshold"


WHY_NOT = {
    "none": "has no flag that turns speculation off by batch size (no --speculative-adaptive; no version has a "
            "batch-size threshold flag)",
    "steps_only": "has --speculative-adaptive, but it only adapts num_steps from one candidate list (all >= 1) "
                  "whatever the batch size",
    "slots_without_zero": "has per-batch-size adaptive slots, but candidate_steps must be > 0: drafting can drop "
                          "to 1 step above the threshold, not turn off",
    "no_flag_on_host": "does not list --speculative-adaptive in launch_server --help on the host",
}


def spec_capture_sizes(max_bs: int) -> list[int]:
    """Decode CUDA-graph batch sizes with speculation on (_generate_decode_cuda_graph_batch_sizes, spec branch)."""
    bss = (list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4)) + list(range(72, 257, 8))
           + list(range(272, max_bs + 1, 16)))
    bss = [b for b in bss if b <= max_bs]
    return bss if max_bs in bss else bss + [max_bs]


def padded(batch: int, capture: list[int] | None) -> int:
    if not capture:
        return batch
    return next((c for c in sorted(capture) if c >= batch), batch)


def off_key(threshold: int, capture: list[int] | None) -> tuple[int, int]:
    """(config key K, effective threshold): batches whose padded size is below K speculate.

    With padding, the batches that speculate are those up to some capture size; take the largest one <= the
    threshold (never speculate where it loses) and put K just above it.
    """
    if not capture:
        return threshold + 1, threshold
    below = [c for c in sorted(capture) if c <= threshold]
    eff = below[-1] if below else 0
    return eff + 1, eff


def recommend(threshold: int | None, version: str, has_adaptive: bool | None, speculative: dict,
              cuda_graph_max_bs: int | None = 48, cuda_graph: bool = True) -> dict:
    """The setting that makes the server speculate only while at most `threshold` requests run.

    threshold None: speculation pays at every measured load (keep it always on); 0: it never pays (turn it off).
    has_adaptive: what `launch_server --help` said on the host (None: unknown, the version table decides).
    Returns {"action": "keep" | "off" | "adaptive" | "refuse", "reason", "server_speculative" (when applicable),
    "effective_threshold", "config_key"}.
    """
    spec = dict(speculative or {})
    cap = capability(version)
    if has_adaptive is False and cap in ("threshold", None):
        cap = "no_flag_on_host"
    elif cap is None:
        cap = "threshold" if has_adaptive else "none"
    out = {"version": version, "threshold": threshold, "adaptive_flag": has_adaptive, "capability": cap}
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
    if cap != "threshold":
        out.update(action="refuse", reason=(
            "SGLang %s %s. Pick one mode for the expected load - EAGLE-3 if typical concurrency stays at or below "
            "%d, else server_speculative.algorithm: '' - or upgrade SGLang to 0.5.14 or later (roles/sglang; "
            "0.5.15.post1 and 0.5.23 were checked) and run this again" % (version or "(unknown version)",
                                                                          WHY_NOT[cap], threshold)))
        return out
    topk = spec.get("eagle_topk")
    if topk not in (None, 1):
        out.update(action="refuse", reason=(
            "SGLang's adaptive speculation supports eagle_topk 1 only, this deployment uses %s: set "
            "server_speculative.eagle_topk: 1 (and num_draft_tokens: num_steps + 1), benchmark again, then apply"
            % topk))
        return out
    steps = int(spec.get("num_steps") or 3)
    capture = None if not cuda_graph else spec_capture_sizes(int(cuda_graph_max_bs or 48))
    key, eff = off_key(int(threshold), capture)
    if eff <= 0:
        out.update(action="off", reason="with CUDA-graph padding no batch size speculates profitably: serve without "
                                        "speculation (server_speculative.algorithm: '')",
                   server_speculative={"algorithm": ""})
        return out
    setting = dict(spec, adaptive=True, eagle_topk=1, num_steps=steps, num_draft_tokens=steps + 1,
                   adaptive_config={"1": {"candidate_steps": [steps]}, str(key): {"candidate_steps": [0]}})
    out.update(action="adaptive", effective_threshold=eff, config_key=key, server_speculative=setting,
               reason=("speculate (num_steps %d) while at most %d requests run, plain decoding from %d: "
                       "--speculative-adaptive with slots 1 -> [%d], %d -> [0]%s"
                       % (steps, eff, eff + 1, steps, key,
                          "" if eff == threshold else
                          " (CUDA-graph padding routes batches by capture size: %d is the largest <= %d)"
                          % (eff, threshold))))
    return out
