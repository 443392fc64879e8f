# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The unit tests run the fake GPU tools' main()s in process (tests/unit/fake_nvidia_tools.py): they must answer as
the executables do, or the gpu_health tests would test a different program."""
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh

from fake_nvidia_tools import FAKE, executable, fake_host, in_process  # pylint: disable=import-error


@pytest.mark.parametrize("profile, faults, env", [
    ("rtxpro6000x8", "", {}), ("h200x8", "xid79:5,ecc_uncorrectable:1,gpu_lost:7", {}), ("nodriver", "", {}),
    ("h200x1", "", {"FAKE_NVIDIA_INVALID_FIELDS": "gpu_recovery_action,fabric.state"})])
def test_in_process_runs_answer_as_the_executables(tmp_path, profile, faults, env):
    """Every call a collect() makes, run both ways: the same status, output and errors, byte for byte."""
    calls = []
    run, which = fake_host(profile, faults, **env)

    def recording(argv):
        calls.append(list(argv))
        return run(argv)
    gh.collect(recording, which, sysfs=str(tmp_path), proc_root=str(tmp_path))
    assert len(calls) >= 2 and set(os.path.basename(c[0]) for c in calls) >= {"nvidia-smi", "dmesg"}
    by_exec = fake_host(profile, faults, runner=executable, **env)[0]
    for argv in calls:
        assert run(argv) == by_exec(argv), argv
    assert executable([os.path.join(FAKE, "nvidia-smi"), "--no-such-flag"], {}) == \
        in_process([os.path.join(FAKE, "nvidia-smi"), "--no-such-flag"], {})
