# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 46: Blackwell's own failures. RTX PRO 6000 hosts whose GPU firmware (GSP) stops answering under sustained
load (open-gpu-kernel-modules 1080, 1111, 1159, 1200): Xid 175, 119 and 154, Xid 8 after a firmware heartbeat or
"GPU is probably locked" line, the GSP timeout lines with no Xid at all, a GPU that answers nvidia-smi with errors.
Each is refused with the one remedy that works - drain and reboot the host, never a relaunch on it - through the
fake nvidia-smi/dmesg profiles run in process, as the gate runs the real tools."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import xid as gx

from fake_nvidia_tools import fake_host  # pylint: disable=import-error


def gate(tmp_path, faults):
    run, which = fake_host("rtxpro6000x8", faults)
    facts = gh.collect(run, which, sysfs=str(tmp_path / "nosys"), proc_root=str(tmp_path / "proc"))
    return facts, [p for p in gh.evaluate(facts, {"expected_count": 8}) if p["severity"] == gh.ERROR]


@pytest.mark.parametrize("faults, check, gpu, words", [
    ("xid175:3", "xid", 3, "Xid 175 x1 since the driver loaded, GPU firmware fault"),
    ("xid119:2", "xid", 2, "Xid 119 x1 since the driver loaded, GSP RPC timeout"),
    ("xid154:6", "xid", 6, "Xid 154 x1 since the driver loaded, GPU recovery action changed"),
    ("gsp_heartbeat:1", "xid", 1, "Xid 8 x1 since the driver loaded, GPU stopped processing after its firmware"),
    ("gsp_heartbeat:1", "gpu_firmware", None, "the GSP firmware's heartbeat timed out"),
    ("gsp_heartbeat:1", "gpu_firmware", None, "the RC watchdog found the GPU locked"),
    ("gsp_halt", "gpu_firmware", None, "the GPU's RISC-V core (GSP) did not halt"),
    ("smi_unknown_error:4", "gpu_answers", 4, "answers nvidia-smi with errors for"),
])
def test_a_host_whose_gpu_firmware_stopped_is_refused_with_drain_and_reboot(tmp_path, faults, check, gpu, words):
    _facts, errs = gate(tmp_path, faults)
    hits = [p for p in errs if p["check"] == check and words in p["detail"]]
    assert hits, errs
    assert hits[0]["gpu"] == gpu and hits[0]["remedy"] == gx.DRAIN_REBOOT
    assert "reboot" in hits[0]["remedy"] and "never relaunch" in hits[0]["remedy"]


def test_xid_8_alone_stays_a_program_fault(tmp_path):
    # the same Xid 8 without the firmware's lines: a program timed out, the GPU is fine (a warning, no reboot)
    run, which = fake_host("rtxpro6000x8", "xid8:1")
    facts = gh.collect(run, which, sysfs=str(tmp_path / "nosys"), proc_root=str(tmp_path / "proc"))
    problems = gh.evaluate(facts, {"expected_count": 8})
    assert [(p["check"], p["severity"], p["gpu"]) for p in problems] == [("xid", gh.WARNING, 1)]
    assert "[app]" in problems[0]["detail"] and problems[0]["remedy"] == gx.RESTART_APP


def test_a_clean_blackwell_host_has_no_firmware_event(tmp_path):
    facts, errs = gate(tmp_path, "")
    assert facts["firmware"] == [] and errs == []
    assert all(g["smi_errors"] == [] for g in facts["gpus"])


def test_firmware_lines_before_the_driver_reload_are_history():
    log = ("[ 10.0] NVRM: _kgspRpcRecvPoll: GSP RM heartbeat timed out\n"
           "[ 20.0] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05\n"
           "[ 30.0] NVRM: kflcnWaitForHaltRiscv_GA102: Timeout waiting for RISC-V to halt\n"
           "[ 40.0] usb 1-1: GSP RM heartbeat timed out (not the driver's line)\n")
    events = gx.parse_firmware(log)
    assert [(e["kind"], e["time"]) for e in events] == [("riscv_halt", 30.0)]


def test_nvidia_smi_that_cannot_reach_a_gpu_gets_the_reboot_remedy():
    facts = {"smi_error": "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error", "gpus": [],
             "xids": [], "firmware": [], "kernel_log_source": "dmesg", "kernel_log_errors": []}
    problems = gh.evaluate(facts, {})
    assert [(p["check"], p["remedy"]) for p in problems] == [("nvidia_smi", gx.DRAIN_REBOOT)]
    # a missing driver keeps the driver's remedy
    facts["smi_error"] = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    assert "roles/cuda" in gh.evaluate(facts, {})[0]["remedy"]
