# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health gate as one call (the gpu_health module is its argument spec and this call): collect the facts,
judge them (nvidia/health.py), run the optional DCGM and NCCL probes (nvidia/probes.py), apply the ignore list and
give every check its verdict. Stdlib only; runs on the target.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import probes


def unknown_ignores(names):
    """The names in ``ignore`` that are not checks (the module refuses them before anything runs)."""
    return [name for name in names if name not in gh.ALL_CHECKS]


def check(params, run, which, tmpdir):
    """``(result, warnings)``: the module's return values (healthy, problems, ignored, summary, notes, checks, facts,
    nccl) and the warnings to show. ``run(argv, data=None) -> (rc, out, err)``, ``which(name) -> path or None``."""
    facts = gh.collect(run, which, nvidia_smi=params["nvidia_smi_path"], kernel_log=params["kernel_log"],
                       pcie_fabric=params.get("pcie_fabric", True))
    problems = gh.evaluate(facts, params)
    skipped = set()
    if not params["kernel_log"]:
        skipped.update(["xid", "kernel_log"])

    if params["dcgm_diag"]:
        dcgmi = which("dcgmi")
        if dcgmi:
            rc, out, err = run(_timeout(which, params["probe_timeout"]) + [dcgmi, "diag", "-r", "1", "-j"])
            problems += probes.judge_dcgm(rc, out, err)
        else:
            problems.append(gh.problem("dcgm_diag", gh.WARNING, "dcgmi is not installed: the DCGM diagnostic "
                                       "did not run", "install datacenter-gpu-manager (and start nvidia-dcgm) "
                                       "or set gpu_health_dcgm_diag: false"))
    else:
        skipped.add("dcgm_diag")

    nccl = None
    if params["nccl_allreduce"] and facts["gpus"]:
        nccl_problems, nccl = _allreduce(params, run, which, facts, tmpdir)
        problems += nccl_problems
    else:
        skipped.add("nccl_allreduce")

    problems = gh.order_problems(problems)
    kept, ignored = gh.split_ignored(problems, params["ignore"])
    warnings = ["gpu_health: '%s' is ignored on purpose (gpu_health_ignore), it is still there: %s"
                % (item["check"], item["detail"]) for item in ignored]
    for name in params["ignore"]:
        if not any(item["check"] == name for item in ignored):
            warnings.append("gpu_health: '%s' is in gpu_health_ignore but passes now; remove it from the list" % name)
    result = dict(
        healthy=not any(p["severity"] == gh.ERROR for p in kept),
        problems=kept,
        ignored=ignored,
        summary=gh.summary(kept, ignored),
        notes=gh.notes(facts),
        checks=_verdicts(kept, ignored, skipped | _unset(params), facts),
        facts=facts,
        nccl=nccl,
    )
    return result, warnings


def _timeout(which, seconds):
    tool = which("timeout")
    return [tool, "--kill-after=10", str(seconds)] if tool else []


def _allreduce(params, run, which, facts, tmpdir):
    python = params["nccl_python"]
    if not os.path.exists(python):
        return [gh.problem("nccl_allreduce", gh.ERROR, "%s does not exist: no torch to run the all-reduce with"
                           % python, "install SGLang first (roles/sglang) or set gpu_health_nccl_python")], None
    handle, path = tempfile.mkstemp(prefix="gpu_health_nccl_", suffix=".py", dir=tmpdir)
    with os.fdopen(handle, "w") as script:
        script.write(probes.NCCL_PROBE)
    rc, out, err = run(_timeout(which, params["probe_timeout"]) + [python, path, str(params["nccl_size_mb"])])
    result = probes.parse_allreduce(out)
    if rc != 0 and not result.get("error"):
        result = {"error": "rc=%s: %s" % (rc, " | ".join((err or "").strip().splitlines()[-3:]))}
    elif rc != 0:
        result["error"] = "rc=%s: %s | %s" % (rc, result["error"], " | ".join((err or "").strip().splitlines()[-3:]))
    return probes.judge_allreduce(result, facts["gpus"], facts["topology"], params["nccl_min_busbw_gbps"])


def _unset(params):
    """Checks that have nothing to compare with: reported as skipped, not ok."""
    unset = set()
    if not params["expected_model"]:
        unset.add("gpu_model")
    if not params["expected_driver_branch"] and not params["expected_cuda"]:
        unset.add("driver")
    if not params["expected_cuda"]:
        unset.add("toolkit")
    return unset


def _verdicts(kept, ignored, skipped, facts):
    verdicts = {}
    for name in gh.ALL_CHECKS:
        verdicts[name] = "skipped" if name in skipped else "ok"
    if facts["smi_error"]:
        for name in gh.ALL_CHECKS:
            if name not in ("nvidia_smi", "xid", "kernel_log", "dcgm_diag", "nccl_allreduce"):
                verdicts[name] = "skipped"
    if facts["nvlink"] is None:
        verdicts["nvlink"] = "skipped"
    if not facts["nvswitch"] and not any(gpu["fabric_state"] for gpu in facts["gpus"]):
        verdicts["fabric_manager"] = "skipped"
    if not (facts.get("pcie_fabric") or {}).get("applies"):
        for name in ("pcie_acs", "iommu", "gpu_p2p"):
            verdicts[name] = "skipped"
    for item in ignored:
        verdicts[item["check"]] = "ignored"
    for item in kept:
        if verdicts.get(item["check"]) != "error":
            verdicts[item["check"]] = item["severity"]
    return verdicts
