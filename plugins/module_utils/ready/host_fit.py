# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remedies that fit the host the server runs on: pure functions, no I/O.

The log says what failed; what to try depends on the host. A TP 1 server on one GPU has no peers, so no NCCL or
PCIe peer-to-peer remedy can apply to it; a PCIe-only box gets the fabric remedies (custom all-reduce off,
``NCCL_P2P_DISABLE``, the gpu_health gate's ACS and IOMMU checks); an NVLink box does not. A GPU architecture
refusal is answered with the GPU's real compute capability (gpu_facts) and what supports it.

What is known of the host comes from two places: the ``host`` option (roles/server fills it from gpu_facts and the
plan: TP size, nodes, GPU names, compute capabilities, topology) and the launch's own ``server_args=`` line in the
log (tp_size, pp_size, nnodes), which wins because it is what actually ran.
"""

from __future__ import annotations

import re

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import LABELS

# (lowest compute capability, the generation, what runs on it). First row whose capability is <= the GPU's.
ARCH_SUPPORT = (
    (12.0, "Blackwell workstation/consumer (RTX PRO 6000, RTX 50xx)",
     "CUDA 12.8+ builds: torch 2.7+ for cu128 or newer, sglang-kernel and flashinfer wheels that ship sm_120 kernels, "
     "Triton 3.3+ (its ptxas knows sm_120a) or TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas from CUDA 12.8+; "
     "meanwhile --attention-backend triton avoids the prebuilt attention kernels"),
    (10.0, "Blackwell datacenter (B200, GB200)",
     "CUDA 12.8+ builds: torch 2.7+ for cu128 or newer and sglang-kernel's sm100 kernels"),
    (9.0, "Hopper (H100, H200)", "CUDA 12.x builds with sm_90a kernels (FA3, DeepGEMM, fp8)"),
    (8.9, "Ada (L40S, RTX 40xx)", "CUDA 11.8+ builds; fp8 kernels need sm_89 or newer"),
    (8.0, "Ampere (A100, A10, RTX 30xx)",
     "CUDA 11.8+/12.x builds; no fp8 kernels (they need sm_89+): use a bf16, int8 or AWQ/GPTQ checkpoint"),
    (0.0, "pre-Ampere (V100, T4)",
     "most SGLang kernels need sm_80+: --attention-backend triton (or torch_native), --dtype float16, no bf16/fp8"),
)
_CAP_IN_LINE = (re.compile(r"(?i)compute[ _]capability(?: of)?(?: at least)?\D{0,12}(\d{1,2})\.(\d)"),
                re.compile(r"\bsm_?(\d{1,2})(\d)[af]?\b"))

R_NCCL_NO_PEERS = ("this instance has no peers (TP 1 on one node): no NCCL or PCIe remedy applies; torch.distributed's "
                   "own set-up failed - check --dist-init-addr/--port is free (ss -ltnp) and that no other SGLang "
                   "runs on it; NCCL_DEBUG=INFO says more")
R_NCCL_PCIE = ("NCCL failed between ranks on a PCIe-only box (no NVLink): --disable-custom-all-reduce, "
               "NCCL_P2P_DISABLE=1, and the gpu_health gate's ACS/IOMMU checks (ACS redirecting peer traffic, the "
               "IOMMU not in passthrough); rerun with NCCL_DEBUG=INFO")
R_NCCL_NVLINK = ("NCCL failed between ranks on an NVLink box: rerun with NCCL_DEBUG=INFO; check nvidia-smi nvlink -s and, "
                 "on NVSwitch systems, that nvidia-fabricmanager runs at the driver's version; check every node "
                 "reaches --dist-init-addr")
R_HANG_NO_PEERS = ("it hung in %s with no peer to wait for (TP 1 on one node), so no NCCL remedy applies: "
                   "py-spy dump --pid <scheduler pid> shows where; check the GPU (nvidia-smi -q, dmesg for Xid) and "
                   "the storage the weights come from; raise --watchdog-timeout only if the step is just slow")
R_HANG_PCIE = ("it hung in %s on a PCIe-only box: the first collective over PCIe peer-to-peer never returned - "
               "--disable-custom-all-reduce, NCCL_P2P_DISABLE=1, and the gpu_health gate's ACS/IOMMU checks "
               "(ACS redirecting peer traffic, the IOMMU not in passthrough); py-spy dump --pid <scheduler pid>")
R_HANG_NVLINK = ("it hung in %s on an NVLink box: py-spy dump --pid <scheduler pid>; NCCL_DEBUG=INFO; "
                 "nvidia-smi nvlink -s and nvidia-fabricmanager on NVSwitch systems; raise --watchdog-timeout only "
                 "if the step is just slow")
R_P2P_NO_PEERS = ("peer-to-peer was refused, yet this instance has no peers (TP 1): something else opened peer "
                  "access; check --tp-size and CUDA_VISIBLE_DEVICES")
R_ARCH_HOST = "this host's GPU%s %s compute capability %s (sm_%s, %s): the kernels that refused need %s"
R_ARCH_LINE = "the log names compute capability %s (sm_%s, %s): the kernels that refused need %s"


def view(host, launch):
    """What is known of the host: peers (True/False/None), pcie_only, all_nvlink, caps, names, gpus."""
    host = host or {}
    launch = launch or {}

    def pick(key, default=None):
        for source in (launch, host):
            if source.get(key) is not None:
                return int(source[key])
        return default

    tp, pp, nnodes = pick("tp_size"), pick("pp_size", 1), pick("nnodes")
    peers = None
    if tp is not None or nnodes is not None:
        peers = (tp or 1) > 1 or (pp or 1) > 1 or (nnodes or 1) > 1
    return {"peers": peers, "tp_size": tp, "nnodes": nnodes,
            "pcie_only": host.get("pcie_only"), "all_nvlink": host.get("all_nvlink"),
            "caps": [str(c) for c in host.get("compute_caps") or []],
            "names": sorted(set(host.get("gpu_names") or [])), "gpus": host.get("gpu_count")}


def support_of(cap):
    """(generation, what supports it) for a compute capability like '12.0'."""
    try:
        value = float(cap)
    except (TypeError, ValueError):
        return None
    for low, gen, what in ARCH_SUPPORT:
        if value >= low:
            return gen, what
    return None


def _sm(cap):
    major, _sep, minor = str(cap).partition(".")
    return major + (minor or "0")


def cap_in_line(line):
    """The compute capability a log line names ('12.0' from 'sm_120' or 'compute capability 12.0'), or None."""
    for rx in _CAP_IN_LINE:
        m = rx.search(line or "")
        if m:
            return "%s.%s" % (m.group(1), m.group(2))
    return None


def _stage_label(stage):
    return LABELS.get(stage or "", stage or "this stage")


def fit(verdict, host_view, stage=None):
    """The verdict with a remedy that fits the host (a new dict; the category stays the log's)."""
    v = dict(verdict)
    cat, peers = v.get("category"), host_view.get("peers")
    pcie, nvlink = host_view.get("pcie_only"), host_view.get("all_nvlink")
    # the stage the line was read in; "starting" means the log had no stage line yet: the caller's may say more
    where = _stage_label(v.get("stage") if v.get("stage") not in (None, "starting") else stage)
    if cat == "arch_unsupported":
        caps = host_view.get("caps") or []
        if caps:
            cap = caps[0]
            sup = support_of(cap)
            if sup:
                names = host_view.get("names") or []
                v["remedy"] = R_ARCH_HOST % ("s" if len(names) > 1 else "", "(%s) have" % ", ".join(names)
                                             if names else "has", ", ".join(caps), _sm(cap), sup[0], sup[1])
        else:
            cap = cap_in_line(v.get("line"))
            sup = support_of(cap) if cap else None
            if sup:
                v["remedy"] = R_ARCH_LINE % (cap, _sm(cap), sup[0], sup[1])
    elif cat == "watchdog_hang":
        if peers is False:
            v["remedy"] = R_HANG_NO_PEERS % where
        elif peers and pcie:
            v["remedy"] = R_HANG_PCIE % where
        elif peers and nvlink:
            v["remedy"] = R_HANG_NVLINK % where
    elif cat == "nccl":
        p2p = "peer-to-peer" in (v.get("remedy") or "")  # signatures.R_P2P: keep it wherever peers exist
        if peers is False:
            v["remedy"] = R_P2P_NO_PEERS if p2p else R_NCCL_NO_PEERS
        elif peers and pcie and not p2p:
            v["remedy"] = R_NCCL_PCIE
        elif peers and nvlink and not p2p:
            v["remedy"] = R_NCCL_NVLINK
    return v
