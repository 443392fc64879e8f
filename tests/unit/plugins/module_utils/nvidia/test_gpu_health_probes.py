# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Xid parsing on real driver log formats, and the judges of the optional probes (DCGM, NCCL all-reduce)."""
import json

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import probes
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import xid as gx


def test_xid_formats_of_real_driver_logs():
    # dmesg (R535+ with pid/name), journal prefix, R5xx without pid, pre-R450 without 'PCI:'.
    log = "\n".join([
        "[6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "May 18 19:02:39 host kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
        "[  269.517039] NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007 M 00001ffc Data ffffffff",
        "[  269.517040] NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.",
    ])
    events = gx.parse_xids(log)
    assert [(e["code"], e["pci"]) for e in events] == [
        (79, "0000:91:00"), (79, "0000:2b:00"), (63, "0000:10:1c"), (3, "0000:01:00")]
    assert events[0]["time"] == 6781741.548779 and events[1]["time"] is None
    assert events[2]["message"].startswith("Row Remapper") and events[2]["pid"] == "1896"
    assert events[0]["message"] == "GPU has fallen off the bus." and events[0]["pid"] == "<unknown>"


def test_xids_before_the_last_driver_load_are_history():
    log = ("[ 10.0] NVRM: Xid (PCI:0000:91:00): 48, pid=1, DBE\n"
           "[ 99.0] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n"
           "[120.0] NVRM: Xid (PCI:0000:91:00): 13, pid=2, Graphics Exception\n")
    assert [e["code"] for e in gx.parse_xids(log)] == [13]


def test_bus_key_matches_nvidia_smi_and_kernel_spellings():
    assert gx.bus_key("00000000:3B:00.0") == gx.bus_key("0000:3b:00") == "0000:3b:00"


def test_classes_follow_the_issue():
    for code in (13, 31, 43, 45):
        assert gx.describe(code)[0] == gx.APP
    for code in (48, 63, 64, 74, 79, 92, 94, 95, 119, 120):
        assert gx.describe(code)[0] == gx.HARDWARE
    assert gx.describe(999)[0] == gx.UNKNOWN


def test_pick_log_prefers_the_source_with_the_events_and_never_double_counts():
    line = "NVRM: Xid (PCI:0000:91:00): 79, GPU has fallen off the bus."
    name, events = gx.pick_log([("dmesg", "[ 5.0] " + line), ("journalctl -k -b", "Dec 03 kernel: " + line)])
    assert name == "dmesg" and len(events) == 1
    name, events = gx.pick_log([("dmesg", ""), ("journalctl -k -b", "Dec 03 kernel: " + line)])
    assert name == "journalctl -k -b" and len(events) == 1
    assert gx.pick_log([]) == (None, [])


def gpus(n, gen=5, width=16, cap="12.0"):
    return [{"index": i, "pcie_gen_gpumax": gen, "pcie_gen_max": gen, "pcie_width_max": width,
             "pcie_width_device_max": width, "compute_cap": cap} for i in range(n)]


def test_one_gpu_allreduce_says_what_it_could_not_measure():
    result = {"world_size": 1, "busbw_gbps": 0.0, "algbw_gbps": 812.0, "correct": True}
    problems, facts = probes.judge_allreduce(result, gpus(1, cap="9.0"), None)
    assert problems == []
    assert "no NVLink or PCIe peer link was crossed" in facts["not_measured"]
    assert facts["expected_min_busbw_gbps"] is None


def test_pcie_ring_with_a_slow_link_is_below_the_floor():
    topo = {"all_nvlink": False, "pcie_only": True, "nvlink_counts": {}}
    ok, facts = probes.judge_allreduce({"world_size": 8, "busbw_gbps": 24.0, "correct": True}, gpus(8), topo)
    assert ok == [] and round(facts["expected_min_busbw_gbps"], 1) == 18.9
    slow = probes.judge_allreduce({"world_size": 8, "busbw_gbps": 5.1, "correct": True}, gpus(8), topo)[0]
    assert [p["check"] for p in slow] == ["nccl_allreduce"] and "PCIe Gen5 x16" in slow[0]["detail"]


def test_nvlink_floor_and_wrong_sum():
    topo = {"all_nvlink": True, "pcie_only": False, "nvlink_counts": {"0-1": 18}}
    problems, facts = probes.judge_allreduce({"world_size": 2, "busbw_gbps": 300.0, "correct": False},
                                             gpus(2, cap="9.0"), topo)
    assert facts["expected_min_busbw_gbps"] == 225.0
    assert [p["detail"].split(":")[0] for p in problems] == ["the all-reduce returned a wrong sum"]


def test_allreduce_that_did_not_run():
    result = probes.parse_allreduce("Traceback ...\nRuntimeError: NCCL error: unhandled system error\n")
    problems = probes.judge_allreduce(result, gpus(2), None)[0]
    assert "NCCL error: unhandled system error" in problems[0]["detail"]


def test_dcgm_failures_are_read_from_the_json():
    report = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [
        {"name": "Denylist", "results": [{"status": "Pass"}]},
        {"name": "PCIe", "results": [{"gpu_id": "3", "status": "Fail",
                                      "warnings": [{"warning": "GPU 3 PCIe link width x4, expected x16"}]}]}]}]}}
    problems = probes.judge_dcgm(1, json.dumps(report), "")
    assert [(p["check"], p["gpu"]) for p in problems] == [("dcgm_diag", 3)]
    assert "PCIe" in problems[0]["detail"] and "x4" in problems[0]["detail"]
    assert probes.judge_dcgm(0, json.dumps({"ok": [{"status": "Pass"}]}), "") == []
    assert "nv-hostengine" in probes.judge_dcgm(255, "Error: unable to connect to host engine", "")[0]["remedy"]


def test_probe_script_is_valid_python():
    compile(probes.NCCL_PROBE, "nccl_probe", "exec")


def test_a_dcgm_report_that_cannot_be_read_is_a_warning_never_a_pass():
    # issue 43: rc 0 with text, or JSON of a shape the reader does not know, said a clean pass
    (problem,) = probes.judge_dcgm(0, "Successfully ran diagnostic\n", "")
    assert problem["severity"] == probes.WARNING and "not with JSON (Successfully ran diagnostic)" in problem["detail"]
    (problem,) = probes.judge_dcgm(0, json.dumps({"tests": [{"name": "memory", "outcome": "Pass"}]}), "")
    assert problem["severity"] == probes.WARNING and "no test result this reader knows" in problem["detail"]
    # readable: a clean report passes, a failed test is an error
    assert probes.judge_dcgm(0, json.dumps({"tests": [{"name": "memory", "status": "Pass"}]}), "") == []
    (failed,) = probes.judge_dcgm(0, json.dumps({"tests": [{"name": "memory", "status": "Fail", "gpu_id": 1}]}), "")
    assert failed["severity"] == probes.ERROR and failed["gpu"] == 1
