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

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative as spec_rule
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import accept_length

MODES = ("baseline", "eagle3", "eagle3_adaptive", "eagle3_threshold", "allreduce_nccl", "allreduce_pcie_ipc")
SPECULATIVE_MODES = ("eagle3", "eagle3_adaptive", "eagle3_threshold")

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
    if mode == "baseline":
        return "no speculation"
    if mode in ("allreduce_nccl", "allreduce_pcie_ipc"):
        return "the configured speculation (%s)" % (spec_rule.algorithm(spec) or "none")
    what = "%s with draft %s" % (spec_rule.algorithm(spec) or "no algorithm", spec.get("draft_model_path"))
    if mode == "eagle3":
        return what + ", not adaptive"
    if mode == "eagle3_adaptive":
        return what + ", adaptive with SGLang's default config"
    return what + ", adaptive with the chosen threshold's config"


def problems(mode, speculative, facts):
    """Differences between what ``mode`` (launched with ``speculative``) means and what the server runs."""
    if mode not in MODES:
        return ["unknown benchmark mode %r: one of %s" % (mode, ", ".join(MODES))]
    spec = speculative or {}
    spec_on = spec_rule.resolve(speculative)["on"]
    out = []
    if mode == "baseline" or (mode in ("allreduce_nccl", "allreduce_pcie_ipc") and not spec_on):
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
    if mode in SPECULATIVE_MODES:
        want_adaptive = mode != "eagle3"
        if facts.get("adaptive") != want_adaptive:
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


def launch(mode, configured, applied=None, env=None):
    """What roles/server launches for ``mode``: ``{"speculative": ..., "env": ...}``.

    ``configured``: the speculative settings the benchmark starts from (benchmark_speculative, else the instance's);
    ``applied``: the setting benchmark_apply chose (the confirming run, eagle3_threshold); ``env``: server_env.
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
    elif mode == "eagle3_threshold":
        if not isinstance(applied, dict):
            raise ValueError("eagle3_threshold measures the applied setting: run it after benchmark_apply wrote one")
        spec = dict(applied)
    elif mode.startswith("allreduce_"):
        spec = conf
    else:
        spec = dict(conf, adaptive=False, adaptive_config=None)
    out_env = dict(env or {})
    if mode.startswith("allreduce_"):
        out_env[ALLREDUCE_ENV] = "1" if mode == "allreduce_pcie_ipc" else "0"
    return {"speculative": spec, "env": out_env}
