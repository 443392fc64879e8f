# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The optional, active health probes: ``dcgmi diag -r 1`` and an all-GPU NCCL all-reduce.

Target-side code: Python standard library only, Python >= 3.8. Both are off by default: they take the GPUs for
seconds to a minute and need DCGM, or the SGLang venv's torch. Running this file prints the all-reduce probe, so
it can be run by hand (from a file: its workers are spawned, and a spawned worker re-imports the script):
``python3 gpu_health_probes.py > /tmp/probe.py && /opt/sglang/venv/bin/python /tmp/probe.py 256``.
"""

from __future__ import annotations

import json
import sys

ERROR = "error"
WARNING = "warning"

# The probe runs in the SGLang venv's interpreter, one process per GPU, NCCL over whatever links exist.
# It prints one JSON line. busbw = algbw * 2(n-1)/n, as nccl-tests reports it (the traffic per link of a ring).
# CI runs this very script with real torch on machines without a GPU: its test puts CUDA and NCCL stand-ins under
# torch (tests/real_parser/cpu_torch), the script itself knows nothing of it.
NCCL_PROBE = r'''
import json, os, socket, sys, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world, port, size_mb, iters, out):
    import torch
    import torch.distributed as dist
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    sync = torch.cuda.synchronize
    dist.init_process_group("nccl", rank=rank, world_size=world)
    n = size_mb * 1024 * 1024 // 4
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    dist.all_reduce(x)
    sync()
    correct = bool(torch.all(x == float(world)).item())
    for _ in range(3):
        dist.all_reduce(x)
    sync()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x)
    sync()
    seconds = (time.perf_counter() - start) / iters
    if rank == 0:
        algbw = n * 4 / seconds / 1e9
        with open(out, "w") as handle:
            json.dump({"world_size": world, "size_mb": size_mb, "iters": iters, "seconds": seconds,
                       "algbw_gbps": algbw, "busbw_gbps": algbw * 2 * (world - 1) / world, "correct": correct,
                       "backend": dist.get_backend(), "torch": torch.__version__,
                       "nccl": ".".join(map(str, torch.cuda.nccl.version()))},
                      handle)
    dist.destroy_process_group()


if __name__ == "__main__":
    import tempfile
    import torch
    import torch.multiprocessing as mp
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    world = torch.cuda.device_count()
    if world < 1:
        print(json.dumps({"error": "torch sees no CUDA device"}))
        sys.exit(3)
    folder = tempfile.mkdtemp(prefix="gpu_health_nccl_")
    out = os.path.join(folder, "result.json")
    mp.spawn(worker, args=(world, free_port(), size_mb, iters, out), nprocs=world, join=True)
    with open(out) as handle:
        print(json.dumps(json.load(handle)))
    os.unlink(out)
    os.rmdir(folder)
'''


def pcie_gbps(gen, width):
    """Per-direction bandwidth of a PCIe link, GB/s."""
    table = {1: 4.0, 2: 8.0, 3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}
    if not gen or not width or gen not in table:
        return None
    return table[gen] * width / 16.0


def expected_busbw(gpus, topology, nvlink_fraction=0.5, pcie_fraction=0.3):
    """Lower bound for healthy all-reduce bus bandwidth, GB/s, and how it was derived.

    NVLink everywhere: ``nvlink_fraction`` x (fewest bonded links between a pair x 25 GB/s per link and
    direction; 50 GB/s from compute capability 10, NVLink 5). PCIe only: ``pcie_fraction`` x the per-direction
    bandwidth of the card's own full link (NCCL rings over PCIe reach 30-70 % of it; a GPU stuck at x4 or
    Gen1 pulls the whole ring far below). One GPU: None (nothing crosses a link).
    """
    if len(gpus) < 2:
        return None, "one GPU: no link between GPUs to measure"
    if topology and topology.get("all_nvlink"):
        links = min(topology["nvlink_counts"].values())
        major = max(int((g.get("compute_cap") or "0").split(".")[0]) for g in gpus)
        per_link = 50.0 if major >= 10 else 25.0
        return (nvlink_fraction * links * per_link,
                "NVLink: %d links x %.0f GB/s per pair, %.0f %% of it" % (links, per_link, nvlink_fraction * 100))
    best = None
    for gpu in gpus:
        gen = gpu.get("pcie_gen_gpumax") or gpu.get("pcie_gen_max")
        width = max([w for w in (gpu.get("pcie_width_max"), gpu.get("pcie_width_device_max")) if w] or [0])
        bw = pcie_gbps(gen, width)
        if bw and (best is None or bw > best[0]):
            best = (bw, gen, width)
    if best is None:
        return None, "PCIe link of the GPUs unknown"
    why = "PCIe Gen%d x%d: %.1f GB/s per direction, %.0f %% of it" % (best[1], best[2], best[0], pcie_fraction * 100)
    return pcie_fraction * best[0], why


def judge_allreduce(result, gpus, topology, min_busbw=0):
    """The probe's JSON -> ``(problems, facts)``."""
    facts = dict(result or {})
    problems = []
    if not result or result.get("error"):
        problems.append({"check": "nccl_allreduce", "gpu": None, "severity": ERROR,
                         "detail": "the NCCL all-reduce did not run: %s" % (result or {}).get("error", "no result"),
                         "remedy": "run the probe by hand (see docs/gpu_health.md) and read its error"})
        return problems, facts
    if not result.get("correct", True):
        problems.append({"check": "nccl_allreduce", "gpu": None, "severity": ERROR,
                         "detail": "the all-reduce returned a wrong sum: a GPU or link corrupts data",
                         "remedy": "drain the host; run 'dcgmi diag -r 3' and the NCCL tests per GPU pair"})
    floor, why = expected_busbw(gpus, topology)
    if min_busbw:
        floor, why = float(min_busbw), "gpu_health_nccl_min_busbw_gbps"
    facts["expected_min_busbw_gbps"] = floor
    facts["expectation"] = why
    if result.get("world_size", 0) < 2:
        facts["not_measured"] = ("one GPU: the all-reduce ran on one rank (NCCL initialised, the GPU computed "
                                 "and copied), but no NVLink or PCIe peer link was crossed, so no bus "
                                 "bandwidth can be measured or compared")
        return problems, facts
    if floor and result.get("busbw_gbps", 0) < floor:
        problems.append({"check": "nccl_allreduce", "gpu": None, "severity": ERROR,
                         "detail": "all-reduce bus bandwidth %.1f GB/s over %d GPUs, below %.1f GB/s (%s)"
                         % (result["busbw_gbps"], result["world_size"], floor, why),
                         "remedy": "find the slow link: check pcie_link and nvlink above, 'nvidia-smi topo -m', "
                                   "ACS/IOMMU settings that disable P2P; run nccl-tests per GPU pair"})
    return problems, facts


def parse_allreduce(out):
    """Last JSON line of the probe's output, or an ``{"error": ...}`` dict."""
    for line in reversed((out or "").strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    tail = (out or "").strip().splitlines()[-3:]
    return {"error": " | ".join(tail) or "no output"}


def _walk(node, found, context, seen=None):
    if isinstance(node, dict):
        name = node.get("name") or node.get("test_name") or context
        status = str(node.get("status", node.get("result", ""))).lower()
        if status and seen is not None:
            seen.append(name)
        if status in ("fail", "failed"):
            messages = []
            for key in ("errors", "warnings", "info", "error", "warning"):
                value = node.get(key)
                if isinstance(value, list):
                    for item in value:
                        messages.append(item.get("msg", item.get("warning", str(item)))
                                        if isinstance(item, dict) else str(item))
                elif value:
                    messages.append(str(value))
            gpu = node.get("gpu_id", node.get("entity_id"))
            found.append({"test": name, "gpu": gpu, "messages": messages})
        for value in node.values():
            _walk(value, found, name, seen)
    elif isinstance(node, list):
        for item in node:
            _walk(item, found, context, seen)


def judge_dcgm(rc, out, err):
    """``dcgmi diag -r 1 -j`` -> problems. Reads the failed results wherever the JSON version puts them."""
    unread = {"check": "dcgm_diag", "gpu": None, "severity": WARNING,
              "remedy": "run 'dcgmi diag -r 1 -j' by hand and read its results; the GPUs' DCGM health is unknown"}
    try:
        data = json.loads(out)
    except ValueError:
        if rc == 0:  # never a silent pass: a report that cannot be read is not a clean one
            return [dict(unread, detail="dcgmi diag answered rc 0 but not with JSON (%s): its results were not "
                                        "read" % ((out or err or "no output").strip().splitlines() or [""])[-1][:200])]
        text = ((out or "") + (err or "")).strip().splitlines()
        return [{"check": "dcgm_diag", "gpu": None, "severity": ERROR,
                 "detail": "dcgmi diag failed (rc=%s): %s" % (rc, " | ".join(text[-3:])),
                 "remedy": "is nv-hostengine running? 'systemctl status nvidia-dcgm'; run 'dcgmi diag -r 1' by "
                           "hand"}]
    found, seen = [], []
    _walk(data, found, None, seen)
    if not seen:
        return [dict(unread, detail="dcgmi diag's JSON holds no test result this reader knows (no status or result "
                                    "field): a format it does not read, not a pass")]
    problems = []
    for item in found:
        gpu = item["gpu"]
        try:
            gpu = int(gpu)
        except (TypeError, ValueError):
            gpu = None
        problems.append({"check": "dcgm_diag", "gpu": gpu, "severity": ERROR,
                         "detail": "DCGM test '%s' failed%s: %s" % (item["test"], " on GPU%s" % gpu
                                                                    if gpu is not None else "",
                                                                    "; ".join(item["messages"]) or "no detail"),
                         "remedy": "drain the host; run 'dcgmi diag -r 3' for the full diagnosis"})
    return problems


if __name__ == "__main__":
    sys.stdout.write(NCCL_PROBE)
