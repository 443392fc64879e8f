# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark modes: what each one means, what the server really runs (``/server_info``), and the refusal when
they differ.

A mode is launched through roles/server with its own ``server_speculative``; an extra var
``-e server_speculative=...`` outranks that (Ansible's precedence), so the "baseline" can silently run EAGLE-3
and the report would compare EAGLE-3 with itself. The server's ``/server_info`` (its resolved ServerArgs) says
what it runs; every mode is checked against it before any load is sent.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import adaptive as adaptive_rule
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative as spec_rule
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import accept_length

MODES = ("baseline", "eagle3", "eagle3_steps1", "eagle3_steps2", "eagle3_adaptive", "eagle3_threshold", "applied",
         "allreduce_nccl", "allreduce_pcie_ipc")
# Static EAGLE-3 on a shorter chain (issue 44 item 6): where the two static curves cross, 1 or 2 steps may beat both;
# measured, they give the adaptive setting a middle tier (3 -> 1 -> 0 by running batch).
SHORT_STEPS = {"eagle3_steps1": 1, "eagle3_steps2": 2}
STATIC_MODES = ("eagle3",) + tuple(sorted(SHORT_STEPS))
SPECULATIVE_MODES = STATIC_MODES + ("eagle3_adaptive", "eagle3_threshold")
# What SGLang logs when it turns --speculative-adaptive off and serves static (arg_groups/speculative_hook.py,
# _maybe_disable_adaptive, 0.5.15.post1 and 0.5.23); /server_info then says speculative_adaptive false.
ADAPTIVE_DISABLED = adaptive_rule.DISABLED_LINE
ADAPTIVE_DISABLED_FIX = (
    "when a launch asks for adaptive and SGLang logs '%s <reason>. Falling back to static speculative params.', it "
    "serves static speculation: "
    "adaptive needs eagle_topk 1 (an explicit topk other than 1 disables it), no attention DP, no multi-layer EAGLE, "
    "no two-batch overlap; read the reason in the server log and fix that setting" % ADAPTIVE_DISABLED)

FIX = ("the usual cause is server_speculative given as an extra var (-e server_speculative=...), which outranks "
       "the settings each benchmark mode launches with: give the speculative settings as "
       "-e benchmark_speculative=... or in the inventory (host/group vars) instead, and run the benchmark again")


def server_facts(info):
    """What the server runs, from its /server_info (SGLang's resolved ServerArgs, 0.5.x)."""
    info = info or {}
    algo = info.get("speculative_algorithm")
    graphs = (info.get("cuda_graph_config") or {}).get("decode") or {}
    disabled = bool(info.get("disable_cuda_graph")) or graphs.get("backend") == "disabled"
    return {
        "version": info.get("version"),
        "model_path": info.get("model_path"),
        "algorithm": str(algo).upper() if algo else None,
        "draft_model_path": info.get("speculative_draft_model_path") if algo else None,
        "num_steps": info.get("speculative_num_steps") if algo else None,
        "eagle_topk": info.get("speculative_eagle_topk") if algo else None,
        "num_draft_tokens": info.get("speculative_num_draft_tokens") if algo else None,
        "adaptive": bool(info.get("speculative_adaptive")) if algo else False,
        "adaptive_config": info.get("speculative_adaptive_config") if algo else None,
        "disable_cuda_graph": disabled,
        "cuda_graph_max_bs": graphs.get("max_bs", info.get("cuda_graph_max_bs")),
        "cuda_graph_bs": None if disabled else (graphs.get("bs") or None),
        "attention_backend": info.get("attention_backend"),
        "tp_size": info.get("tp_size"),
        "accept_length": accept_length(info) if algo else None,
    }


def _describe(facts):
    if not facts.get("algorithm"):
        return "no speculation"
    text = "%s with draft %s, num_steps %s" % (facts["algorithm"], facts.get("draft_model_path"),
                                               facts.get("num_steps"))
    if facts.get("adaptive"):
        text += ", adaptive (config %s)" % (facts.get("adaptive_config") or "SGLang's default")
    return text


def meaning(mode, speculative):
    """What a mode means, in words (for the refusal)."""
    spec = speculative or {}
    if mode == "baseline" or (mode == "applied" and not spec_rule.resolve(spec)["on"]):
        return "no speculation"
    if mode in ("allreduce_nccl", "allreduce_pcie_ipc"):
        return "the configured speculation (%s)" % (spec_rule.algorithm(spec) or "none")
    what = "%s with draft %s" % (spec_rule.algorithm(spec) or "no algorithm", spec.get("draft_model_path"))
    if mode in STATIC_MODES:
        return what + ", not adaptive" + (", num_steps %d" % SHORT_STEPS[mode] if mode in SHORT_STEPS else "")
    if mode == "eagle3_adaptive":
        return what + ", adaptive with SGLang's default config"
    if mode == "applied":
        return what + (", adaptive with the applied config" if spec.get("adaptive") else ", not adaptive")
    return what + ", adaptive with the chosen threshold's config"


def problems(mode, speculative, facts):
    """Differences between what ``mode`` (launched with ``speculative``) means and what the server runs."""
    if mode not in MODES:
        return ["unknown benchmark mode %r: one of %s" % (mode, ", ".join(MODES))]
    spec = speculative or {}
    spec_on = spec_rule.resolve(speculative)["on"]
    out = []
    if mode == "baseline" or (mode in ("allreduce_nccl", "allreduce_pcie_ipc", "applied") and not spec_on):
        if facts.get("algorithm"):
            out.append("speculative_algorithm is %s (draft %s), not none" % (facts["algorithm"],
                                                                             facts.get("draft_model_path")))
        return out
    if not facts.get("algorithm"):
        return ["speculative_algorithm is none"]
    want_algo = spec_rule.algorithm(speculative)
    if facts["algorithm"] != want_algo:
        out.append("speculative_algorithm is %s, not %s" % (facts["algorithm"], want_algo))
    if spec.get("draft_model_path") and facts.get("draft_model_path") != spec["draft_model_path"]:
        out.append("the draft is %s, not %s" % (facts.get("draft_model_path"), spec["draft_model_path"]))
    if spec.get("num_steps") is not None and facts.get("num_steps") != int(spec["num_steps"]):
        out.append("num_steps is %s, not %s" % (facts.get("num_steps"), spec["num_steps"]))
    if mode in STATIC_MODES and facts.get("eagle_topk") not in (None, 1):
        out.append("eagle_topk is %s, not 1 (static EAGLE-3 is measured as the topk-1 chain adaptive runs)"
                   % facts.get("eagle_topk"))
    if mode in SPECULATIVE_MODES or mode == "applied":
        want_adaptive = bool(spec.get("adaptive")) if mode == "applied" else mode not in STATIC_MODES
        if want_adaptive and not facts.get("adaptive"):
            out.append("speculative_adaptive is %s, not True (%s)" % (facts.get("adaptive"), ADAPTIVE_DISABLED_FIX))
        elif facts.get("adaptive") != want_adaptive:
            out.append("speculative_adaptive is %s, not %s" % (facts.get("adaptive"), want_adaptive))
        elif mode == "eagle3_threshold" and not facts.get("adaptive_config"):
            out.append("no --speculative-adaptive-config (SGLang's default slots, not the chosen threshold)")
        elif mode == "eagle3_adaptive" and facts.get("adaptive_config"):
            out.append("an --speculative-adaptive-config is set (%s), not SGLang's default" % facts["adaptive_config"])
    return out


def refusal(mode, speculative, facts):
    """None when the server runs what the mode means, else the message that refuses the run, with the fix."""
    found = problems(mode, speculative, facts)
    if not found:
        return None
    return ("benchmark mode %s means %s, but the server runs %s (%s): measuring it would mislabel the run; %s"
            % (mode, meaning(mode, speculative), _describe(facts), "; ".join(found), FIX))


ALLREDUCE_ENV = "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE"


def launch(mode, configured, applied=None, env=None, args=None, max_batch=None):
    """What roles/server launches for ``mode``: ``{"speculative": ..., "env": ..., "args": ...}``.

    ``configured``: the speculative settings the benchmark starts from (benchmark_speculative, else the instance's);
    ``applied``: the adaptive setting measured (eagle3_threshold) or the one benchmark_apply chose (applied, the
    confirming run); ``env``: server_env; ``args``: server_args. Static EAGLE-3 runs the topk-1 chain with explicit
    steps (a Llama target without them auto-selects topk 4, no baseline for adaptive's chain). ``max_batch``: every
    mode gets --max-running-requests (and, unless set, --cuda-graph-max-bs) of at least that, so the batch can fill
    (0.5.15.post1 caps an EAGLE server at 48 without it), and --enable-metrics (the running batch is sampled there).
    The all-reduce A/B launches the configured speculation with FlashInfer's PCIe-IPC all-reduce on or off (NCCL);
    roles/server refuses it where SGLang or the GPUs lack it (sglang/allreduce.py).
    """
    if mode not in MODES:
        raise ValueError("unknown benchmark mode %r: one of %s" % (mode, ", ".join(MODES)))
    conf = dict(configured) if isinstance(configured, dict) else {"algorithm": ""}
    if mode == "baseline":
        spec = {"algorithm": ""}
    elif mode == "eagle3_adaptive":
        steps = conf.get("num_steps")
        spec = dict(conf, adaptive=True, eagle_topk=1, adaptive_config=None,
                    num_draft_tokens=(int(steps) + 1) if steps else None)
    elif mode in ("eagle3_threshold", "applied"):
        if not isinstance(applied, dict):
            what = ("the adaptive setting of the measured crossover" if mode == "eagle3_threshold"
                    else "the setting benchmark_apply chose")
            raise ValueError("%s measures %s: give it (applied)" % (mode, what))
        spec = dict(applied)
    elif mode.startswith("allreduce_"):
        spec = conf
    else:
        steps = SHORT_STEPS.get(mode) or int(conf.get("num_steps") or 3)
        spec = dict(conf, adaptive=False, adaptive_config=None, eagle_topk=1, num_steps=steps,
                    num_draft_tokens=steps + 1)
    out_env = dict(env or {})
    if mode.startswith("allreduce_"):
        out_env[ALLREDUCE_ENV] = "1" if mode == "allreduce_pcie_ipc" else "0"
    out_args = dict(args or {})
    if max_batch:
        out_args["max-running-requests"] = max(int(max_batch), int(out_args.get("max-running-requests") or 0))
        out_args.setdefault("cuda-graph-max-bs", int(max_batch))
        out_args["enable-metrics"] = True
    return {"speculative": spec, "env": out_env, "args": out_args}
