# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cheaper gate (issue 36): gpu_health reuses the GPU facts gathered earlier in the same run (ansible_facts.gpu)
instead of asking nvidia-smi again. Counted with the fake nvidia-smi (8 RTX PRO 6000, PCIe only): the nvidia-smi
invocations per host of fact gathering plus the gate, before and after."""
import os
import shutil

import pytest

import testpaths
from localrun import remembered_run

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import gate
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi

FAKE_SMI = os.path.join(testpaths.REPO, "tools", "fake_nvidia", "nvidia-smi")
PARAMS = dict(expected_count=8, expected_model="RTX PRO 6000", expected_driver_branch="", expected_cuda="",
              expected_pcie_width=0, expected_pcie_gen=0, max_temperature=85, min_tlimit_margin=5,
              own_units=[], own_process_patterns=[], ignore=[], kernel_log=False, pcie_fabric=True,
              dcgm_diag=False, nccl_allreduce="off", nccl_gpus=[], nccl_world=0, nccl_env={}, nccl_timeout=60,
              nccl_iters=10, nccl_python="/nonexistent", nccl_size_mb=64, nccl_min_busbw_gbps=0, probe_timeout=300,
              nvidia_smi_path=FAKE_SMI)


@pytest.fixture
def host(monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_NVIDIA_PROFILE", "rtxpro6000x8")
    monkeypatch.setenv("FAKE_NVIDIA_APPS", str(tmp_path / "apps"))
    calls = []

    def run(argv, data=None, env=None):
        calls.append(list(argv))
        return remembered_run(argv, data, env)

    def deploy(reuse, **faults):
        for name, value in faults.items():
            monkeypatch.setenv(name, value)
        del calls[:]
        facts = smi.collect(run, shutil.which, nvidia_smi=FAKE_SMI)  # the gpu_facts module (fact gathering)
        gathered = [c for c in calls if c[0] == FAKE_SMI]
        result, _warnings = gate.check(dict(PARAMS, gpu_facts=facts if reuse else {}), run, shutil.which,
                                       str(tmp_path))
        gate_calls = [c for c in calls if c[0] == FAKE_SMI][len(gathered):]
        return result, gathered, gate_calls
    return deploy


def test_the_gate_asks_nvidia_smi_only_its_health_query_and_p2p_when_the_facts_serve(host):
    before, facts_before, gate_before = host(reuse=False)
    after, facts_after, gate_after = host(reuse=True)
    print("nvidia-smi per host: facts %d + gate %d = %d before; facts %d + gate %d = %d after"
          % (len(facts_before), len(gate_before), len(facts_before) + len(gate_before),
             len(facts_after), len(gate_after), len(facts_after) + len(gate_after)))
    assert len(facts_before) == len(facts_after) == 4  # banner, --query-gpu, topo -m, compute apps
    assert [] in [c[1:] for c in gate_before] and len(gate_before) == 5  # banner, health query, topo -m, apps, p2p
    health_query = [c[1:] for c in gate_before if c[1:2] and c[1].startswith("--query-gpu=index,name,pci.bus_id")]
    assert [c[1:] for c in gate_after] == health_query + [["topo", "-p2p", "r"]]
    # the same verdicts and facts, from fewer questions
    assert before["healthy"] and after["healthy"] and before["checks"] == after["checks"]
    assert before["facts"]["topology"]["pcie_only"] is after["facts"]["topology"]["pcie_only"] is True
    assert before["facts"]["pcie_fabric"] == after["facts"]["pcie_fabric"]
    assert after["facts"]["reused"] == ["driver and CUDA versions", "topology", "compute apps"]
    assert (after["facts"]["driver_version"], after["facts"]["cuda_driver_version"]) == \
        (before["facts"]["driver_version"], before["facts"]["cuda_driver_version"])


def test_facts_of_another_driver_or_other_gpus_are_not_reused(host):
    _result, _facts, gate_calls = host(reuse=True)
    assert len(gate_calls) == 2
    result, _facts, _calls = host(reuse=False)
    stale = dict(smi.empty_facts(None), present=True, driver_version="570.00", gpus=result["facts"]["gpus"])
    fresh, _w = gate.check(dict(PARAMS, gpu_facts=stale), lambda a, data=None, env=None: remembered_run(a, data, env),
                           shutil.which, "/tmp")
    assert fresh["facts"]["reused"] == [] and fresh["facts"]["driver_version"] != "570.00"
    other = dict(stale, driver_version=result["facts"]["driver_version"], gpus=result["facts"]["gpus"][:4])
    fresh, _w = gate.check(dict(PARAMS, gpu_facts=other), lambda a, data=None, env=None: remembered_run(a, data, env),
                           shutil.which, "/tmp")
    assert fresh["facts"]["reused"] == []
