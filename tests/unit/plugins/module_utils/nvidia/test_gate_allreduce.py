# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective before launch (nvidia/gate.py): by default an all-reduce over exactly the instance's GPUs where it
spans several on one host and nothing runs on them, under a hard deadline that kills the probe's process tree.

The facts come from the fake nvidia-smi (8 RTX PRO 6000, PCIe only); the all-reduce's interpreter is a CPU stand-in
(``nccl_python``) that records what it was given and then passes, returns a wrong sum, or hangs with a spawned rank,
as a first all-reduce over PCIe P2P can (local-inference-lab/rtx6kpro#15). The real probe script under real torch is
tests/real_parser/test_probe_torch.py.

The hang is bounded (HANG_S, far past the 2 s deadline the test gives): a gate that lost its deadline sees the probe
pass late, which the test refuses, instead of waiting ten minutes (each such mutant used to run to mutmut's limit)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import testpaths
from localrun import remembered_run

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import gate

FAKE_SMI = os.path.join(testpaths.REPO, "tools", "fake_nvidia", "nvidia-smi")

HANG_S = 20  # how long the hanging stand-in (and its rank) sleeps before it "passes" after all

STAND_IN = r'''#!%s
import json, os, subprocess, sys, time
HANG_S = %d
mode = os.environ.get("FAKE_PROBE", "ok")
world = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))
seen = {"argv": sys.argv[2:], "cvd": os.environ["CUDA_VISIBLE_DEVICES"], "order": os.environ.get("CUDA_DEVICE_ORDER"),
        "p2p": os.environ.get("NCCL_P2P_DISABLE"), "pid": os.getpid()}
if mode == "hang":  # a spawned rank, then the first collective never returns
    seen["rank_pid"] = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(" + str(HANG_S) + ")"]).pid
with open(os.environ["FAKE_PROBE_LOG"], "a") as log:
    log.write(json.dumps(seen) + "\n")
if mode == "hang":
    time.sleep(HANG_S)
print(json.dumps({"world_size": world, "size_mb": int(sys.argv[2]), "iters": int(sys.argv[3]), "seconds": 0.01,
                  "algbw_gbps": 20.0, "busbw_gbps": 20.0 * 2 * (world - 1) / world, "correct": mode != "wrong",
                  "backend": "nccl", "torch": "2.9.1", "nccl": "2.27.7"}))
'''

PARAMS = dict(expected_count=0, expected_model="", expected_driver_branch="", expected_cuda="",
              expected_pcie_width=0, expected_pcie_gen=0, max_temperature=85, min_tlimit_margin=5,
              own_units=[], own_process_patterns=[], ignore=[], kernel_log=False, pcie_fabric=False,
              dcgm_diag=False, nccl_allreduce="auto", nccl_gpus=[], nccl_world=0, nccl_env={}, nccl_timeout=60,
              nccl_iters=10, nccl_size_mb=64, nccl_min_busbw_gbps=0, probe_timeout=300, nvidia_smi_path=FAKE_SMI)


@pytest.fixture
def probe(tmp_path, monkeypatch):
    python = tmp_path / "python"
    python.write_text(STAND_IN % (sys.executable, HANG_S))
    python.chmod(0o755)
    log = tmp_path / "probe.log"
    monkeypatch.setenv("FAKE_NVIDIA_PROFILE", "rtxpro6000x8")
    monkeypatch.setenv("FAKE_NVIDIA_APPS", str(tmp_path / "apps"))
    monkeypatch.setenv("FAKE_PROBE_LOG", str(log))

    def check(mode="ok", **params):
        monkeypatch.setenv("FAKE_PROBE", mode)
        p = dict(PARAMS, nccl_python=str(python), **params)
        result, _warnings = gate.check(p, lambda argv, data=None, env=None: remembered_run(argv, data, env),
                                       shutil.which, str(tmp_path))
        runs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return result, runs
    return check


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # X: dead, being released
    except OSError:
        return False


def alive_of_this_test(pid, tmp_path):
    """``pid`` runs and is one of this test's probe tree (its environment names this test's probe log): under load a
    pid of the ended tree may already be another process's (pid_max 32768), which is not the tree living on."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            mine = ("FAKE_PROBE_LOG=%s" % (tmp_path / "probe.log")).encode() in f.read().split(b"\0")
    except OSError:
        return False
    return mine and alive(pid)


def test_a_tp4_instance_is_probed_over_exactly_its_gpus_by_default(probe):
    result, runs = probe(nccl_gpus=[4, 5, 6, 7], nccl_env={"NCCL_P2P_DISABLE": "1"})
    assert result["healthy"] and result["checks"]["nccl_allreduce"] == "ok"
    assert runs == [dict(runs[0], argv=["64", "10"], cvd="4,5,6,7", order="PCI_BUS_ID", p2p="1")]
    assert result["nccl"]["gpus"] == [4, 5, 6, 7] and result["nccl"]["busbw_gbps"] == 30.0
    assert any(n.startswith("nccl_allreduce over GPU4, GPU5, GPU6, GPU7: bus bandwidth 30.0 GB/s") for n in result["notes"])


def test_without_a_gpu_list_the_first_world_gpus(probe):
    result, runs = probe(nccl_world=2)
    assert runs[0]["cvd"] == "0,1" and result["checks"]["nccl_allreduce"] == "ok"


def test_a_hang_is_killed_at_the_deadline_with_its_ranks_and_refuses_naming_gpus_and_remedies(probe, tmp_path):
    # probe_timeout is bounded too: a gate that took it instead of nccl_timeout ends at 3 s and says so (deadline_s)
    result, runs = probe("hang", nccl_gpus=[0, 1], nccl_timeout=2, probe_timeout=3)
    assert not result["healthy"] and result["checks"]["nccl_allreduce"] == "error"
    assert result["nccl"]["timed_out"] and result["nccl"]["deadline_s"] == 2
    problem = [p for p in result["problems"] if p["check"] == "nccl_allreduce"][0]
    assert "over GPU0, GPU1 did not finish within 2 s" in problem["detail"]
    assert all(word in problem["remedy"] for word in ("NCCL_P2P_DISABLE=1", "ACS", "IOMMU", "iommu=pt"))
    # the whole process tree is gone
    assert not alive_of_this_test(runs[0]["pid"], tmp_path) and not alive_of_this_test(runs[0]["rank_pid"], tmp_path)


def test_a_wrong_sum_refuses_naming_the_gpus(probe):
    result, _runs = probe("wrong", nccl_gpus=[2, 3])
    problem = [p for p in result["problems"] if p["check"] == "nccl_allreduce"][0]
    assert not result["healthy"] and "over GPU2, GPU3 returned a wrong sum" in problem["detail"]
    assert "NCCL_P2P_DISABLE=1" in problem["remedy"]


@pytest.mark.parametrize("params, why", [
    ({"nccl_world": 1}, "one GPU: no collective to test"),
    ({"nccl_gpus": [3]}, "one GPU: no collective to test"),
    ({}, "no instance spans several GPUs here"),
    ({"nccl_allreduce": "off", "nccl_world": 8}, "skipped on purpose (gpu_health_nccl_allreduce: off)"),
    ({"nccl_allreduce": False, "nccl_world": 8}, "skipped on purpose"),
    ({"nccl_gpus": [7, 8]}, "GPU(s) GPU8 are not on this host"),
])
def test_what_is_not_probed_is_skipped_not_passed(probe, params, why):
    result, runs = probe(**params)
    assert runs == [] and result["checks"]["nccl_allreduce"] == "skipped" and why in result["nccl"]["skipped"]


def test_on_probes_every_gpu_without_an_instance_and_a_running_instance_is_not_disturbed(probe, tmp_path):
    result, runs = probe(nccl_allreduce="on")
    assert runs[0]["cvd"] == "0,1,2,3,4,5,6,7" and result["checks"]["nccl_allreduce"] == "ok"
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / str(os.getpid())).write_text(json.dumps({"used_memory": 70000, "process_name": "python3"}))
    result, runs_after = probe(nccl_world=8)
    assert len(runs_after) == 1 and "GPU process(es) run on this host" in result["nccl"]["skipped"]


def test_alive_of_this_test_is_a_living_process_of_this_tests_tree_only(tmp_path):
    env = dict(os.environ, FAKE_PROBE_LOG=str(tmp_path / "probe.log"))
    mine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             env=dict(env, FAKE_PROBE_LOG=str(tmp_path / "other.log")))
    try:
        assert alive_of_this_test(mine.pid, tmp_path) and not alive_of_this_test(other.pid, tmp_path)
    finally:
        for p in (mine, other):
            p.kill()
            p.wait()
    assert not alive_of_this_test(mine.pid, tmp_path)
