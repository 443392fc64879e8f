# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remedies fitted to the host (issue 29): TP 1 on one GPU never gets an NCCL remedy, a PCIe-only box gets the
fabric ones, an NVLink box does not, and an architecture refusal names the GPU's real capability."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import host_fit
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import classify_text

NCCL_WORDS = ("NCCL_P2P_DISABLE", "custom-all-reduce", "ACS", "NVLink", "nvlink")
RTX = {"compute_caps": ["12.0"], "gpu_names": ["NVIDIA RTX PRO 6000 Blackwell Server Edition"], "gpu_count": 8,
       "pcie_only": True, "all_nvlink": False}
SXM = {"compute_caps": ["9.0"], "gpu_names": ["NVIDIA H200"], "gpu_count": 8, "pcie_only": False, "all_nvlink": True}
ONE = {"compute_caps": ["9.0"], "gpu_names": ["NVIDIA H200"], "gpu_count": 1, "tp_size": 1, "nnodes": 1}

HANG = "[2026-01-01 00:05:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)"
NCCL = "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error"


def fitted(text, host, launch=None, stage=None):
    return host_fit.fit(classify_text(text), host_fit.view(host, launch), stage)


def test_the_log_wins_over_the_host_option():
    v = host_fit.view({"tp_size": 8, "nnodes": 1}, {"tp_size": 1})
    assert v["peers"] is False and v["tp_size"] == 1
    assert host_fit.view({}, {})["peers"] is None  # nothing known: the remedy stays the log's


@pytest.mark.parametrize("text", [HANG, NCCL])
def test_tp1_on_one_gpu_never_gets_an_nccl_remedy(text):
    v = fitted(text, ONE, stage="cuda_graph")
    assert not any(w in v["remedy"] for w in NCCL_WORDS), v["remedy"]
    assert "no peer" in v["remedy"]


def test_a_hang_on_a_pcie_box_with_peers_gets_the_fabric_remedies_and_its_stage():
    v = fitted(HANG, dict(RTX, tp_size=8, nnodes=1), stage="cuda_graph")
    assert v["category"] == "watchdog_hang"
    for word in ("--disable-custom-all-reduce", "NCCL_P2P_DISABLE=1", "ACS", "IOMMU", "capturing CUDA graphs"):
        assert word in v["remedy"], (word, v["remedy"])


def test_an_nvlink_box_gets_no_pcie_remedy():
    v = fitted(NCCL, dict(SXM, tp_size=8))
    assert "NVLink" in v["remedy"] and "NCCL_P2P_DISABLE" not in v["remedy"] and "ACS" not in v["remedy"]
    v = fitted(HANG, dict(SXM, tp_size=8))
    assert "NCCL_P2P_DISABLE" not in v["remedy"]


def test_peer_access_refused_keeps_its_own_remedy_on_a_pcie_box():
    v = fitted("RuntimeError: CUDART error: peer access is not supported between these two devices",
               dict(RTX, tp_size=2))
    assert "peer-to-peer" in v["remedy"] and "--disable-custom-all-reduce" in v["remedy"]


def test_arch_refusal_names_the_gpus_real_capability_and_what_supports_it():
    v = fitted("ValueError: Unsupported compute capability: 12.0", dict(RTX, tp_size=8))
    assert v["category"] == "arch_unsupported"
    for word in ("RTX PRO 6000", "12.0", "sm_120", "CUDA 12.8"):
        assert word in v["remedy"], (word, v["remedy"])


def test_arch_refusal_without_host_facts_reads_the_capability_from_the_line():
    v = fitted("RuntimeError: CUDA error: no kernel image is available for execution on the device", {})
    assert "sm_" not in v["remedy"] or "e.g." in v["remedy"]  # nothing to name: the general remedy
    v = fitted("ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'", {})
    assert "compute capability 12.0" in v["remedy"] and "CUDA 12.8" in v["remedy"]


@pytest.mark.parametrize("cap, gen", [("12.0", "Blackwell workstation"), ("10.0", "Blackwell datacenter"),
                                      ("9.0", "Hopper"), ("8.9", "Ada"), ("8.6", "Ampere"), ("7.5", "pre-Ampere")])
def test_support_table(cap, gen):
    assert host_fit.support_of(cap)[0].startswith(gen)


def test_other_categories_are_untouched():
    v = classify_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert host_fit.fit(v, host_fit.view(ONE, None)) == v
