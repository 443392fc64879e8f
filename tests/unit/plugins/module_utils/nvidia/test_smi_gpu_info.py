# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_smi.gpu_info reads the fake nvidia-smi (real formats) through the collection's one nvidia-smi parser."""
import testpaths
import os
import subprocess

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as nvidia_smi

FAKE_SMI = os.path.join(testpaths.REPO, "tools", "fake_nvidia", "nvidia-smi")


def runner(profile, **env):
    environ = dict(os.environ, FAKE_NVIDIA_PROFILE=profile, **env)

    def run(argv):
        proc = subprocess.run(argv, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    return run


def test_h200_memory_and_no_processes():
    info = nvidia_smi.gpu_info(FAKE_SMI, run=runner("h200x1"))
    assert info == {"gpus": [{"index": 0, "memory_used_mib": 0, "memory_total_mib": 143771, "utilization_gpu": 0}],
                    "processes": []}


def test_eight_gpus_in_index_order():
    info = nvidia_smi.gpu_info(FAKE_SMI, run=runner("rtxpro6000x8"))
    assert [g["index"] for g in info["gpus"]] == list(range(8))
    assert {g["memory_total_mib"] for g in info["gpus"]} == {97887}
    assert nvidia_smi.gpu_memory_total_used(info) == 0


def test_no_device_or_no_driver_is_none():
    assert nvidia_smi.gpu_info(FAKE_SMI, run=runner("none")) is None
    assert nvidia_smi.gpu_info(FAKE_SMI, run=runner("nodriver")) is None


def test_no_nvidia_smi_is_none():
    assert nvidia_smi.gpu_info("/nonexistent/nvidia-smi") is None


def test_an_unknown_field_is_dropped_not_fatal():
    # R470-era drivers refuse fields they do not know; the reader keeps what it can ask.
    info = nvidia_smi.gpu_info(FAKE_SMI, run=runner("h200x1", FAKE_NVIDIA_INVALID_FIELDS="utilization.gpu"))
    assert info["gpus"] == [{"index": 0, "memory_used_mib": 0, "memory_total_mib": 143771, "utilization_gpu": None}]
