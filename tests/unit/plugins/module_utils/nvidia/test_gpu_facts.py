# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_facts: collect() over the fake nvidia-smi (a real process printing real formats), and the module itself."""
import testpaths
import json
import os
import subprocess

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as ns

REPO = testpaths.REPO
FAKE = os.path.join(REPO, "tools", "fake_nvidia")
PROC = os.path.join(REPO, "tests", "fixtures", "nvidia", "cuda13-h200", "proc-driver-nvidia-version.txt")


def runner(profile, **env):
    environ = dict(os.environ, FAKE_NVIDIA_PROFILE=profile)
    environ.update(env)
    calls = []

    def run(argv):
        calls.append(argv)
        proc = subprocess.run(argv, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    run.calls = calls
    return run


def which_fake(name):
    path = os.path.join(FAKE, name)
    return path if os.path.exists(path) else None


def which_none(name):
    return None


def collect(profile, which=which_fake, proc=PROC, tmp=None, nvcc=None, **env):
    sysfs = str(tmp) if tmp else "/nonexistent"
    return ns.collect(runner(profile, **env), which, nvcc_path=nvcc, proc_version_path=proc, sysfs=sysfs)


def test_h200x1_full_facts():
    facts = collect("h200x1")
    assert facts == {
        "present": True, "reason": None, "count": 1, "driver_version": "580.159.04", "cuda_driver_version": "13.0",
        "kernel_module_flavor": "open",
        "nvcc": {"path": os.path.join(FAKE, "nvcc"), "release": "13.0", "version": "13.0.88"},
        "gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-00000000-1111-2222-3333-444444444444",
                  "pci_bus_id": "00000000:00:06.0", "compute_cap": "9.0", "compute_major": 9,
                  "memory_total_mib": 143771, "memory_used_mib": 0, "utilization_gpu": 0,
                  "persistence_mode": True}],
        "compute_caps": ["9.0"],
        "topology": {"matrix": {"GPU0": {}}, "nvlink_counts": {}, "all_nvlink": False, "pcie_only": False,
                     "nvswitch": None, "affinity": {"GPU0": {"cpu": "0-15", "numa": "0"}}},
        "processes": [], "pci_devices": [], "warnings": [],
    }


def test_rtxpro6000x8():
    facts = collect("rtxpro6000x8")
    assert facts["count"] == 8 and facts["compute_caps"] == ["12.0"]
    assert [g["index"] for g in facts["gpus"]] == list(range(8))
    assert facts["topology"]["pcie_only"] and not facts["topology"]["all_nvlink"]
    assert facts["driver_version"] == "580.95.05"


def test_h200x8_nvswitch_from_sysfs(tmp_path):
    switch = tmp_path / "0000:05:00.0"
    switch.mkdir()
    for name, value in (("vendor", "0x10de"), ("device", "0x22a3"), ("class", "0x068000")):
        (switch / name).write_text(value + "\n")
    facts = collect("h200x8", tmp=tmp_path)
    assert facts["topology"]["all_nvlink"] and facts["topology"]["nvlink_counts"]["0-7"] == 18
    assert facts["topology"]["nvswitch"] is True


@pytest.mark.parametrize("profile,reason,rc_driver", [("none", ns.REASON_NO_DEVICES, "580.159.04"),
                                                      ("nodriver", ns.REASON_NO_DRIVER, "580.159.04")])
def test_no_gpu_never_fails(profile, reason, rc_driver):
    facts = collect(profile)
    assert facts["present"] is False and facts["reason"] == reason
    assert facts["count"] == 0 and facts["gpus"] == []
    assert facts["driver_version"] == rc_driver  # still known from /proc/driver/nvidia/version


def test_no_nvidia_smi():
    facts = collect("h200x1", which=which_none, proc="/nonexistent", nvcc="/nonexistent/nvcc")
    assert facts["present"] is False and facts["reason"] == ns.REASON_NO_SMI
    assert facts["kernel_module_flavor"] is None and facts["nvcc"] is None


def test_explicit_missing_path():
    facts = ns.collect(runner("h200x1"), which_fake, nvidia_smi="/opt/nope/nvidia-smi", proc_version_path="/x")
    assert facts["reason"] == "nvidia-smi not found at /opt/nope/nvidia-smi (fix nvidia_smi_path)"


def test_r470_without_compute_cap_falls_back():
    run = runner("h200x1", FAKE_NVIDIA_INVALID_FIELDS="compute_cap")
    facts = ns.collect(run, which_fake, proc_version_path=PROC, sysfs="/nonexistent")
    assert facts["present"] is True
    assert facts["gpus"][0]["compute_cap"] is None and facts["gpus"][0]["memory_total_mib"] == 143771
    assert facts["compute_caps"] == []
    assert "compute_cap" in facts["warnings"][0]
    queries = [c for c in run.calls if len(c) > 1 and c[1].startswith("--query-gpu=")]
    assert len(queries) == 2 and "compute_cap" not in queries[1][1]


ANSIBLE = os.path.join(REPO, ".venv", "bin", "ansible")


@pytest.mark.skipif(not os.path.exists(ANSIBLE), reason="controller venv missing (make setup)")
@pytest.mark.parametrize("profile,check", [("rtxpro6000x8", False), ("none", True)])
def test_module_end_to_end(tmp_path, profile, check):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("nvidia-smi", "nvcc"):
        os.symlink(os.path.join(FAKE, tool), str(bindir / tool))
    env = dict(os.environ, FAKE_NVIDIA_PROFILE=profile, PATH="%s:%s" % (bindir, os.environ["PATH"]),
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.minimal",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_LOCALHOST_WARNING="0")
    argv = [ANSIBLE, "localhost", "-c", "local", "-m", "llmserve.sglang.gpu_facts", "-a", "gather_processes=true"]
    if check:
        argv.append("--check")
    out = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    assert out.startswith("localhost | SUCCESS => ")
    result = json.loads(out.split("=> ", 1)[1])
    gpu = result["ansible_facts"]["gpu"]
    assert result["changed"] is False
    if profile == "none":
        assert gpu["present"] is False and gpu["reason"].startswith("no devices found")
    else:
        assert gpu["count"] == 8 and gpu["compute_caps"] == ["12.0"] and gpu["topology"]["pcie_only"]
        assert gpu["nvcc"]["release"] == "13.0"
