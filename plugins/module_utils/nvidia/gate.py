# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health gate as one call (the gpu_health module is its argument spec and this call): collect the facts,
judge them (nvidia/health.py), run the optional DCGM and NCCL probes (nvidia/probes.py), apply the ignore list and
give every check its verdict. Stdlib only; runs on the target.
"""

from __future__ import annotations

import binascii
import os
import tempfile

from ansible_collections.llmserve.sglang.plugins.module_utils.host import user_regex
from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import probes


def unknown_ignores(names):
    """The names in ``ignore`` that are not checks (the module refuses them before anything runs)."""
    return [name for name in names if name not in gh.ALL_CHECKS]


def check(params, run, which, tmpdir):
    """``(result, warnings)``: the module's return values (healthy, problems, ignored, summary, notes, checks, facts,
    nccl) and the warnings to show. ``run(argv, data=None) -> (rc, out, err)``, ``which(name) -> path or None``."""
    facts = gh.collect(run, which, nvidia_smi=params["nvidia_smi_path"], kernel_log=params["kernel_log"],
                       pcie_fabric=params.get("pcie_fabric", True), known=params.get("gpu_facts") or None)
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

    mode = nccl_mode(params["nccl_allreduce"])
    gpus, why_not = probe_gpus(params, facts, mode)
    if why_not:
        skipped.add("nccl_allreduce")
        nccl = {"skipped": why_not, "gpus": gpus}
    else:
        nccl_problems, nccl = _allreduce(params, run, which, facts, tmpdir, gpus)
        problems += nccl_problems

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
        notes=gh.notes(facts) + ([nccl["report"]] if nccl and nccl.get("report") else []),
        checks=_verdicts(kept, ignored, skipped | _unset(params), facts),
        facts=facts,
        nccl=nccl,
    )
    return result, warnings


KILL_AFTER = "--kill-after=10"
MAX_PROBE_S = 86400


def _timeout(which, seconds):
    tool = which("timeout")
    return [tool, KILL_AFTER, str(seconds)] if tool else []


def bounded_by(argv):
    """The seconds a probe call wrapped by :func:`_timeout` may take in all (its deadline, the kill-after and a
    margin), for the runner's own deadline to stay behind it; None for any other call."""
    if len(argv) > 3 and os.path.basename(str(argv[0])) == "timeout" and argv[1] == KILL_AFTER:
        return int(argv[2]) + 20
    return None


def input_problems(params):
    """The inputs refused before anything runs: probe deadlines out of bounds (timeout(1) reads 0 as no deadline at
    all), and ``own_process_patterns`` that are no regex or could backtrack for hours (host/user_regex)."""
    bad = user_regex.check(params.get("own_process_patterns"), "own_process_patterns")
    for name, low in (("probe_timeout", 1), ("nccl_timeout", 0)):
        value = params.get(name)
        if value is not None and not low <= value <= MAX_PROBE_S:
            bad.append("%s: %r is outside %d..%d seconds" % (name, value, low, MAX_PROBE_S))
    return bad


NCCL_MODES = {"auto": "auto", "on": "on", "true": "on", "yes": "on", "1": "on",
              "off": "off", "false": "off", "no": "off", "0": "off"}
# timeout(1)'s statuses when it ended the probe: 124 (TERM), 137 (KILL after --kill-after)
TIMED_OUT = (124, 137)
PROBE_MARKER = "LLMSERVE_GPU_HEALTH_PROBE"  # environment variable naming the probe's processes
TREE_GONE_S = 10  # after the probe returned, how long its tree may take to be gone after SIGKILL


def nccl_mode(value):
    """``gpu_health_nccl_allreduce`` -> 'auto' (the instance's GPUs when it spans several on this host and nothing
    runs on them: the default), 'on' (also without an instance: every GPU) or 'off' (skipped: the user's choice)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return NCCL_MODES.get(str(value).strip().lower(), "auto")


def probe_gpus(params, facts, mode):
    """``(GPU indices the all-reduce runs over, why it does not run or None)``: exactly the instance's GPUs on this
    host (``nccl_gpus``, else the first ``nccl_world``), never over a GPU that runs something."""
    if mode == "off":
        return [], "skipped on purpose (gpu_health_nccl_allreduce: off)"
    present = [g["index"] for g in facts["gpus"]]
    if not present:
        return [], "no GPU answered nvidia-smi"
    listed = [int(i) for i in params.get("nccl_gpus") or []]
    world = int(params.get("nccl_world") or 0)
    if listed:
        gpus = listed
    elif world:
        gpus = present[:world]
    else:
        gpus = present if mode == "on" else []
    if len(gpus) < 2:
        return gpus, ("one GPU: no collective to test" if gpus else
                      "no instance spans several GPUs here (gpu_health_nccl_gpus / gpu_health_nccl_world)")
    missing = [i for i in gpus if i not in present]
    if missing:
        return gpus, "GPU(s) %s are not on this host (it has %s)" % (_names(missing), _names(present))
    if facts.get("processes"):
        return gpus, ("%d GPU process(es) run on this host (a running instance): not probed, a collective would "
                      "compete with them" % len(facts["processes"]))
    return gpus, None


def _names(indices):
    return ", ".join("GPU%d" % i for i in indices)


def _allreduce(params, run, which, facts, tmpdir, gpus):
    python = params["nccl_python"]
    if not os.path.exists(python):
        return [gh.problem("nccl_allreduce", gh.ERROR, "%s does not exist: no torch to run the all-reduce with"
                           % python, "install SGLang first (roles/sglang) or set gpu_health_nccl_python")], None
    handle, path = tempfile.mkstemp(prefix="gpu_health_nccl_", suffix=".py", dir=tmpdir)
    with os.fdopen(handle, "w") as script:
        script.write(probes.NCCL_PROBE)
    # exactly the instance's GPUs, numbered as nvidia-smi numbers them, with the NCCL settings the server gets;
    # timeout(1) signals its whole process group: the spawned ranks die with the probe
    env = dict(params.get("nccl_env") or {})
    env.update(CUDA_DEVICE_ORDER="PCI_BUS_ID", CUDA_VISIBLE_DEVICES=",".join(str(i) for i in gpus))
    deadline = int(params.get("nccl_timeout") or params["probe_timeout"])
    probe = [python, path, str(params["nccl_size_mb"]), str(params.get("nccl_iters") or 10)]
    # a one-time marker in the probe's environment names its whole tree (ranks included) for the end below
    marker = "%d-%s" % (os.getpid(), binascii.hexlify(os.urandom(8)).decode("ascii"))
    rc, out, err = run(_timeout(which, deadline) + probe, env=dict(env, **{PROBE_MARKER: marker}))
    # timeout(1) returns once the probe itself is gone; its ranks may not have run since the signal: return only
    # when the whole tree is gone (bounded), so nothing of the probe holds the GPUs when the gate answers
    left = proc_watch.end_marked(PROBE_MARKER, marker, TREE_GONE_S)
    on = [g for g in facts["gpus"] if g["index"] in gpus]
    if left:
        return [gh.problem("nccl_allreduce", gh.ERROR,
                           "the NCCL all-reduce probe's process(es) %s are still there %d s after SIGKILL (state D: "
                           "a GPU or driver call that does not return)" % (", ".join(map(str, left)), TREE_GONE_S),
                           HANG_REMEDY)], {"gpus": gpus, "left": left, "deadline_s": deadline, "env": env}
    if rc in TIMED_OUT:
        return [gh.problem("nccl_allreduce", gh.ERROR,
                           "the NCCL all-reduce over %s did not finish within %d s: it hangs (P2P checks can pass "
                           "while the first collective hangs)" % (_names(gpus), deadline), HANG_REMEDY)], \
            {"gpus": gpus, "timed_out": True, "deadline_s": deadline, "env": env}
    result = probes.parse_allreduce(out)
    if rc != 0 and not result.get("error"):
        result = {"error": "rc=%s: %s" % (rc, " | ".join((err or "").strip().splitlines()[-3:]))}
    elif rc != 0:
        result["error"] = "rc=%s: %s | %s" % (rc, result["error"], " | ".join((err or "").strip().splitlines()[-3:]))
    found, nccl = probes.judge_allreduce(result, on, facts["topology"], params["nccl_min_busbw_gbps"])
    for item in found:
        if item["detail"].startswith("the all-reduce returned a wrong sum"):
            item["detail"] = "the all-reduce over %s returned a wrong sum: a GPU or link corrupts data" % _names(gpus)
            item["remedy"] = WRONG_SUM_REMEDY
    nccl.update(gpus=gpus, deadline_s=deadline, env=env)
    if not result.get("error") and "busbw_gbps" in result:
        nccl["report"] = "nccl_allreduce over %s: bus bandwidth %.1f GB/s (floor %s), %s MiB, %s" % (
            _names(gpus), result["busbw_gbps"], "%.1f GB/s" % nccl["expected_min_busbw_gbps"]
            if nccl.get("expected_min_busbw_gbps") else "none", result.get("size_mb"),
            "sum correct" if result.get("correct", True) else "WRONG SUM")
    return found, nccl


HANG_REMEDY = ("do not launch on these GPUs as they are. Try NCCL_P2P_DISABLE=1 (server_env and "
               "gpu_health_nccl_env) - if the all-reduce then passes, peer-to-peer over PCIe is broken here: disable "
               "ACS on the PCIe switches/root ports between the GPUs (setpci, or the BIOS), and set the IOMMU to "
               "passthrough or off (iommu=pt / intel_iommu=off / amd_iommu=off on the kernel command line); see "
               "docs/gpu_health.md. gpu_health_nccl_allreduce: off skips the probe on purpose")
WRONG_SUM_REMEDY = ("drain the host; run the probe per GPU pair (gpu_health_nccl_gpus: [a, b]) to find the GPU or "
                    "link, then 'dcgmi diag -r 3'; with NCCL_P2P_DISABLE=1 a correct sum points at P2P over PCIe "
                    "(ACS, IOMMU: see docs/gpu_health.md)")


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
            if name not in ("nvidia_smi", "gpu_firmware", "xid", "kernel_log", "dcgm_diag", "nccl_allreduce"):
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
