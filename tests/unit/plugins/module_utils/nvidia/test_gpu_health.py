# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health gate: healthy on the real H200 captures, each fault of the fake caught with its check and remedy."""
import testpaths
import csv
import os
import re

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import ownership
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as ns

from fake_nvidia_tools import fake_host  # pylint: disable=import-error

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "nvidia")
HEALTH = os.path.join(FIX, "h200-health")
STRICT = {"expected_count": 1, "expected_model": "H200", "expected_driver_branch": "580", "expected_cuda": "13.0"}


def fixture(*parts):
    with open(os.path.join(FIX, *parts)) as handle:
        return handle.read()


def csv_values(text):
    """Header -> value of a one-GPU ``--format=csv`` capture (units stripped from names and values)."""
    rows = list(csv.reader([line for line in text.splitlines() if line.strip()], skipinitialspace=True))
    values = {}
    for head, value in zip(rows[0], rows[1]):
        match = re.match(r"^(\S+)(?: \[(.+)\])?$", head)
        unit = match.group(2)
        if unit and value.endswith(" " + unit):
            value = value[:-len(unit) - 1]
        values[match.group(1)] = value
    return values


def h200_health_csv():
    """The module's query answered with the real H200's values.

    Verbatim when the lead's capture of the exact query exists (``query-gpu-health-module.csv``). Otherwise each
    field comes from a real capture on the lent H200 (health, clock event, remapped rows and fabric queries),
    and the few it did not ask for (T.Limit, event counters, bank histogram, recovery action, MIG, pstate) from
    the same kind of H200 host's all-fields capture.
    """
    verbatim = os.path.join(HEALTH, "query-gpu-health-module.csv")
    if os.path.exists(verbatim):
        with open(verbatim) as handle:
            return handle.read()
    values = csv_values(fixture("h200-health", "query-gpu-all-fields-host2.csv"))
    for name in ("query-gpu-health.csv", "query-clocks-event-reasons.csv", "query-fabric.csv"):
        values.update(csv_values(fixture("h200-health", name)))
    remap = csv_values(fixture("h200-health", "query-remapped-rows.csv"))
    values.update((k, v) for k, v in remap.items() if k.startswith("remapped_rows."))
    return ", ".join(gh.HEALTH_FIELDS) + "\n" + ", ".join(values[f] for f in gh.HEALTH_FIELDS) + "\n"


def sysfs_dir(tmp_path, slot, max_width, width, vendor="0x10de", klass="0x030200"):
    path = tmp_path / "sys" / slot
    path.mkdir(parents=True)
    for name, value in (("vendor", vendor), ("device", "0x2335"), ("class", klass),
                        ("max_link_width", str(max_width)), ("current_link_width", str(width))):
        (path / name).write_text(value + "\n")
    return str(tmp_path / "sys")


class Host(object):
    """A host whose tools answer from real captured text: ``answers`` maps an argv pattern to (rc, out, err)."""

    def __init__(self, answers, tools):
        self.answers = answers
        self.tools = tools
        self.calls = []

    def run(self, argv):
        self.calls.append(argv)
        line = " ".join(argv)
        for pattern, answer in self.answers:
            if re.search(pattern, line):
                return answer
        raise AssertionError("unexpected command: %s" % line)

    def which(self, name):
        return self.tools.get(name)


def real_h200_host():
    apps = fixture("h200-health", "query-compute-apps-idle.csv").splitlines(True)[1:]  # as with noheader
    return Host([
        (r"^/usr/bin/nvidia-smi$", (0, fixture("cuda13-h200", "nvidia-smi.txt"), "")),
        (r"--query-gpu=", (0, h200_health_csv(), "")),
        (r"topo -m", (0, fixture("h200-health", "topo-m.txt"), "")),
        (r"--query-compute-apps=", (0, "".join(apps), "")),
        (r"nvcc --version", (0, fixture("cuda13-h200", "nvcc-version.txt"), "")),
        (r"^/usr/bin/dmesg$", (0, fixture("h200-health", "dmesg.txt"), "")),
    ], {"nvidia-smi": "/usr/bin/nvidia-smi", "dmesg": "/usr/bin/dmesg", "nvcc": "/usr/local/cuda/bin/nvcc"})


def collect_real(host, tmp_path, **kw):
    link = fixture("h200-health", "sysfs-pcie-link.txt").split()
    widths = [int(word[1:]) for word in link if re.match(r"^x\d+$", word)]  # "... PCIe x16 max ... PCIe x16"
    sysfs = sysfs_dir(tmp_path, "0000:00:06.0", widths[1], widths[0])
    real_exists = os.path.exists
    gh.os.path.exists = lambda p: True if p == "/usr/bin/nvidia-smi" else real_exists(p)
    try:
        return gh.collect(host.run, host.which, sysfs=sysfs, proc_root=str(tmp_path / "proc"), **kw)
    finally:
        gh.os.path.exists = real_exists


# ---------------------------------------------------------------- the real H200: healthy, no false alarm

def test_real_h200_is_healthy_without_a_single_warning(tmp_path):
    facts = collect_real(real_h200_host(), tmp_path)
    assert facts["smi_error"] is None and len(facts["gpus"]) == 1
    gpu = facts["gpus"][0]
    assert gpu["name"] == "NVIDIA H200" and gpu["pcie_width_current"] == 16 and gpu["pcie_width_device_max"] == 16
    assert gpu["remap_pending"] is False and gpu["ecc_uncorrected_volatile"] == 0
    assert gpu["clock_events"]["gpu_idle"] is True and gpu["clock_events"]["hw_slowdown"] is False
    assert facts["kernel_log_source"] == "dmesg" and facts["xids"] == []
    assert "journalctl: not installed" in facts["kernel_log_errors"]  # as on the H200: no journalctl there
    assert gh.evaluate(facts, STRICT) == []


def test_real_h200_all_fields_host_lifetime_errors_are_a_note_not_a_problem(tmp_path):
    # The second real H200 host: 2 uncorrectable errors over its life, both rows remapped, nothing pending.
    values = csv_values(fixture("h200-health", "query-gpu-all-fields-host2.csv"))
    text = ", ".join(gh.HEALTH_FIELDS) + "\n" + ", ".join(values[f] for f in gh.HEALTH_FIELDS) + "\n"
    host = real_h200_host()
    host.answers[1] = (r"--query-gpu=", (0, text, ""))
    facts = collect_real(host, tmp_path)
    assert facts["gpus"][0]["ecc_uncorrected_aggregate"] == 2
    assert gh.evaluate(facts, STRICT) == []
    assert any("repaired by row remapping" in line for line in gh.notes(facts))


def test_real_host2_health_capture_parses_the_same_query_fields():
    # nvidia-smi-health-host2.txt holds a real --query-gpu with ECC, clock event and PCIe fields.
    text = fixture("h200-health", "nvidia-smi-health-host2.txt")
    block = text.split("### nvidia-smi --query-gpu=")[1].split("### rc=")[0].split("\n", 1)[1]
    gpu = gh.parse_health_csv(block)[0]
    assert gpu["pcie_gen_current"] == 5 and gpu["pcie_width_max"] == 16 and gpu["temperature_c"] == 40
    assert gpu["clock_events"]["hw_power_brake_slowdown"] is False and gpu["clock_events_mask"].endswith("1")
    assert gpu["retired_pending"] is None  # [N/A] on Hopper (rows are remapped, pages not retired)


# ---------------------------------------------------------------- the fake nvidia-smi's fault profiles

def fake_problems(tmp_path, profile, faults, **opts):
    run, which = fake_host(profile, faults)
    facts = gh.collect(run, which, sysfs=str(tmp_path / "nosys"), proc_root=str(tmp_path / "proc"))
    return facts, gh.evaluate(facts, dict({"expected_count": 8}, **opts))


def errors(problems):
    return [p for p in problems if p["severity"] == gh.ERROR]


def test_fake_rtxpro6000x8_without_faults_is_healthy(tmp_path):
    facts, problems = fake_problems(tmp_path, "rtxpro6000x8", "", expected_model="RTX PRO 6000",
                                    expected_driver_branch="580")
    assert len(facts["gpus"]) == 8 and problems == []


@pytest.mark.parametrize("faults, check, gpu, words", [
    ("remap_pending:3", "remapped_rows", 3, "row remapping is pending"),
    ("ecc_uncorrectable:1", "ecc_errors", 1, "4 uncorrectable ECC error(s) since the last reset"),
    ("xid79:5", "xid", 5, "Xid 79 x1 since the driver loaded, GPU has fallen off the bus"),
    ("pcie_x4:2", "pcie_link", 2, "runs at PCIe x4, the card can do x16: the link trained below"),
    ("thermal:6", "clock_events", 6, "hardware thermal slowdown"),
    ("gpu_lost:7", "gpu_count", None, "7 GPU(s) visible to the driver, 8 expected"),
])
def test_each_fault_is_caught_with_its_check_and_a_remedy(tmp_path, faults, check, gpu, words):
    facts, problems = fake_problems(tmp_path, "rtxpro6000x8", faults)
    errs = errors(problems)
    assert errs, "fault %s not caught" % faults
    first = [p for p in errs if p["check"] == check][0]
    assert (first["check"], first["gpu"]) == (check, gpu), errs
    assert words in first["detail"]
    assert len(first["remedy"]) > 20
    # only the faulty GPU is blamed
    assert set(p["gpu"] for p in errs) == {gpu}


def test_remap_pending_also_reports_the_volatile_error_it_came_with(tmp_path):
    facts, problems = fake_problems(tmp_path, "rtxpro6000x8", "remap_pending:3")
    assert [p["check"] for p in errors(problems)] == ["ecc_errors", "remapped_rows"]
    assert "nvidia-smi -r -i 3" in errors(problems)[0]["remedy"]


def test_thermal_fault_warns_on_temperature_too(tmp_path):
    facts, problems = fake_problems(tmp_path, "rtxpro6000x8", "thermal:6")
    checks = [(p["check"], p["severity"]) for p in problems]
    assert ("clock_events", "error") in checks and ("clock_events", "warning") in checks
    assert ("temperature", "warning") in checks
    assert any("94 C, 3 C past its slowdown limit" in p["detail"] for p in problems)


def test_h200x8_nvlink_all_up_is_healthy_and_read(tmp_path):
    facts, problems = fake_problems(tmp_path, "h200x8", "")
    assert facts["nvlink"] == dict((i, {"up": 18, "down": 0}) for i in range(8))
    assert problems == []


def test_unknown_field_on_an_older_driver_is_dropped_with_a_warning(tmp_path):
    run, which = fake_host("h200x1", FAKE_NVIDIA_INVALID_FIELDS="gpu_recovery_action,fabric.state")
    facts = gh.collect(run, which, sysfs=str(tmp_path), proc_root=str(tmp_path))
    assert facts["dropped_fields"] == ["gpu_recovery_action", "fabric.state"]
    problems = gh.evaluate(facts, {"expected_count": 1})
    assert [p["check"] for p in problems] == ["nvidia_smi", "nvidia_smi"]
    assert all(p["severity"] == gh.WARNING for p in problems)


def test_no_driver_is_one_clear_error(tmp_path):
    facts, problems = fake_problems(tmp_path, "nodriver", "")
    assert problems[0]["check"] == "nvidia_smi" and problems[0]["severity"] == gh.ERROR
    assert problems[0]["detail"] == ns.REASON_NO_DRIVER


# ---------------------------------------------------------------- single checks on edited real rows

def real_gpu(**changes):
    gpu = gh.parse_health_csv(h200_health_csv())[0]
    gpu.update(changes)
    return gpu


def facts_with(gpus, **changes):
    facts = {"smi_error": None, "dropped_fields": [], "gpus": gpus, "pci_devices": [], "driver_version": "580.159.04",
             "cuda_driver_version": "13.0", "nvcc": {"release": "13.0", "version": "13.0.88"}, "processes": [],
             "nvlink": None, "nvswitch": False, "fabricmanager_active": None, "kernel_log_source": "dmesg",
             "kernel_log_errors": [], "xids": [], "topology": None}
    facts.update(changes)
    return facts


def test_slot_limited_link_is_caught_from_sysfs_where_nvml_says_max_x4():
    # NVML's max is the max *in this slot*; only the card's own LnkCap (sysfs) shows x16.
    gpu = real_gpu(pcie_width_current=4, pcie_width_max=4, pcie_width_device_max=16)
    problems = gh.evaluate(facts_with([gpu]), {})
    assert [(p["check"], p["severity"]) for p in problems] == [("pcie_link", "error")]
    assert "the slot (or its bifurcation setting) limits it" in problems[0]["detail"]
    assert "x16 slot" in problems[0]["remedy"]


def test_slot_limited_link_without_sysfs_needs_expected_width():
    gpu = real_gpu(pcie_width_current=4, pcie_width_max=4, pcie_width_device_max=None)
    assert gh.evaluate(facts_with([gpu]), {}) == []
    problems = gh.evaluate(facts_with([gpu]), {"expected_pcie_width": 16})
    assert [p["check"] for p in problems] == ["pcie_link"]


def test_expected_width_below_the_card_is_accepted_and_enforced():
    # Slots bifurcated to x8 on purpose: the operator's expectation wins over the card's x16 capability.
    gpu = real_gpu(pcie_width_current=8, pcie_width_max=8, pcie_width_device_max=16)
    assert gh.evaluate(facts_with([gpu]), {"expected_pcie_width": 8}) == []
    narrow = real_gpu(pcie_width_current=4, pcie_width_max=4, pcie_width_device_max=16)
    problems = gh.evaluate(facts_with([narrow]), {"expected_pcie_width": 8})
    assert [p["check"] for p in problems] == ["pcie_link"] and "x4, expected x8" in problems[0]["detail"]


def test_pcie_gen_drop_at_idle_is_a_note_under_load_a_warning():
    idle = real_gpu(pcie_gen_current=1)
    assert gh.evaluate(facts_with([idle]), {}) == []
    assert any("idle GPUs lower the link speed" in n for n in gh.notes(facts_with([idle])))
    busy = real_gpu(pcie_gen_current=3)
    busy["clock_events"] = dict(busy["clock_events"], gpu_idle=False)
    problems = gh.evaluate(facts_with([busy]), {})
    assert [(p["check"], p["severity"]) for p in problems] == [("pcie_link", "warning")]


def test_gen4_slot_for_a_gen5_card_warns():
    gpu = real_gpu(pcie_gen_max=4, pcie_gen_gpumax=5, pcie_gen_current=4)
    problems = gh.evaluate(facts_with([gpu]), {})
    assert [(p["check"], p["severity"]) for p in problems] == [("pcie_link", "warning")]


def test_driver_branch_toolkit_and_model_mismatch():
    facts = facts_with([real_gpu()], driver_version="570.172.08", nvcc={"release": "12.8", "version": "12.8.93"},
                       cuda_driver_version="12.8")
    problems = gh.evaluate(facts, {"expected_driver_branch": "580", "expected_cuda": "13.0",
                                   "expected_model": "RTX PRO 6000"})
    assert sorted(p["check"] for p in problems) == ["driver", "driver", "gpu_model", "toolkit"]
    assert all(p["severity"] == gh.ERROR for p in problems)


def test_ecc_off_persistence_off_mig_on_recovery_action():
    gpu = real_gpu(ecc_mode_current=False, ecc_mode_pending=False, persistence_mode=False, mig_mode=True,
                   recovery_action="GPU Reset")
    problems = gh.evaluate(facts_with([gpu]), {})
    assert sorted((p["check"], p["severity"]) for p in problems) == [
        ("ecc_mode", "warning"), ("mig_mode", "error"), ("persistence_mode", "warning"),
        ("recovery_action", "error")]


def test_gpu_missing_from_the_driver_but_on_the_pci_bus_is_named():
    facts = facts_with([real_gpu()], pci_devices=[
        {"slot": "0000:00:06.0", "device_id": "0x2335", "class": "0x030200"},
        {"slot": "0000:00:07.0", "device_id": "0x2335", "class": "0x030200"}])
    problems = gh.evaluate(facts, {})
    assert [p["check"] for p in problems] == ["gpu_count"]
    assert "0000:00:07.0" in problems[0]["detail"]


def test_foreign_process_is_an_error_ours_is_not(tmp_path):
    for pid, unit, cmd in ((101, "sglang-mol.service", "/opt/sglang/venv/bin/python -m sglang.launch_server"),
                           (202, "user@1000.service/app.slice/x.scope", "python3 train.py")):
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "cmdline").write_bytes(cmd.replace(" ", "\0").encode())
        (d / "cgroup").write_text("0::/system.slice/%s\n" % unit)
    gpu = real_gpu()
    apps = [{"pid": pid, "name": "python3", "used_memory_mib": 70000, "bus_key": gpu["bus_key"],
             "owner": ownership.identity(pid, str(tmp_path))} for pid in (101, 202, 303)]
    problems = gh.evaluate(facts_with([gpu], processes=apps), {})
    assert [(p["check"], p["gpu"]) for p in problems] == [("foreign_processes", 0)] * 2
    assert "pid 202" in problems[0]["detail"] and "pid 303" in problems[1]["detail"]
    assert "not visible from this host's /proc" in problems[1]["detail"]


def test_nvlink_down_links_are_named():
    text = ("GPU 0: NVIDIA H200 (UUID: GPU-0)\n" + "".join("\t Link %d: 26.562 GB/s\n" % i for i in range(18)) +
            "GPU 1: NVIDIA H200 (UUID: GPU-1)\n" + "".join("\t Link %d: 26.562 GB/s\n" % i for i in range(16)) +
            "\t Link 16: <inactive>\n\t Link 17: <inactive>\n")
    links = gh.parse_nvlink_status(text)
    assert links == {0: {"up": 18, "down": 0}, 1: {"up": 16, "down": 2}}
    problems = gh.check_fabric(facts_with([real_gpu()], nvlink=links))
    assert [(p["check"], p["gpu"]) for p in problems] == [("nvlink", 1)]
    assert "16 of 18 NVLink links up" in problems[0]["detail"]


def test_fabric_manager_not_started_and_not_running():
    gpu = real_gpu(fabric_state="In Progress", fabric_status="N/A")
    problems = gh.check_fabric(facts_with([gpu], nvswitch=True, fabricmanager_active=False))
    assert [p["check"] for p in problems] == ["fabric_manager", "fabric_manager"]


def test_kernel_log_unreadable_is_a_warning_naming_become():
    facts = facts_with([real_gpu()], kernel_log_source=None,
                       kernel_log_errors=["dmesg: read kernel buffer failed: Operation not permitted",
                                          "journalctl: not installed"])
    problems = gh.evaluate(facts, {})
    assert [(p["check"], p["severity"]) for p in problems] == [("kernel_log", "warning")]
    assert "become" in problems[0]["remedy"]


def test_app_xid_warns_hardware_xid_fails():
    from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import xid as gx
    log = ("[  1.0] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n"
           "[ 99.1] NVRM: Xid (PCI:0000:00:06): 13, pid=41822, name=python3, Graphics SM Warp Exception\n"
           "[ 99.2] NVRM: Xid (PCI:0000:00:06): 13, pid=41822, name=python3, Graphics SM Warp Exception\n"
           "Dec 03 09:22:03 h kernel: NVRM: Xid (PCI:0000:00:06): 94, pid=41822, name=python3, Contained: SM\n")
    facts = facts_with([real_gpu()], xids=gx.parse_xids(log))
    problems = gh.evaluate(facts, {})
    assert [(p["check"], p["severity"]) for p in problems] == [("xid", "error"), ("xid", "warning")]
    assert "Xid 94 x1" in problems[0]["detail"] and "Xid 13 x2" in problems[1]["detail"]
    assert "[app]" in problems[1]["detail"] and "nvidia-smi -r -i 0" in problems[0]["remedy"]


def test_split_ignored():
    problems = [gh.problem("ecc_mode", gh.WARNING, "d", "r", 0), gh.problem("xid", gh.ERROR, "d", "r", 1)]
    kept, ignored = gh.split_ignored(problems, ["xid"])
    assert [p["check"] for p in kept] == ["ecc_mode"] and [p["check"] for p in ignored] == ["xid"]


# -- collect(): what it returns on each path, whole (mutation, issue 37) --------------------------------------------------
EMPTY = {"nvidia_smi": None, "smi_error": None, "driver_version": None, "cuda_driver_version": None, "nvcc": None,
         "gpus": [], "dropped_fields": [], "pci_devices": [], "topology": None, "processes": [], "nvlink": None,
         "fabricmanager_active": None, "kernel_log_source": None, "kernel_log_errors": [], "xids": [], "firmware": [],
         "nvswitch": False, "pcie_fabric": None, "reused": []}


def test_without_nvidia_smi_the_facts_are_empty_but_the_reason(tmp_path):
    facts = gh.collect(lambda argv: (0, "", ""), lambda name: None, sysfs=str(tmp_path), kernel_log=False)
    assert facts == dict(EMPTY, smi_error=ns.REASON_NO_SMI)
    facts = gh.collect(lambda argv: (0, "", ""), lambda name: None, nvidia_smi=str(tmp_path / "nvidia-smi"),
                       sysfs=str(tmp_path), kernel_log=False)
    assert facts == dict(EMPTY, smi_error="nvidia-smi not found at %s" % (tmp_path / "nvidia-smi"))


def test_a_named_nvidia_smi_wins_over_the_path_and_a_failing_one_is_named(tmp_path):
    run, which = fake_host("nodriver")
    facts = gh.collect(run, lambda name: None, nvidia_smi=which("nvidia-smi"), sysfs=str(tmp_path), kernel_log=False)
    assert facts == dict(EMPTY, nvidia_smi=which("nvidia-smi"), smi_error=ns.REASON_NO_DRIVER)


def kernel_tools(dmesg, journalctl):
    """A runner and which() with dmesg and journalctl answering (rc, out, err), or absent (None)."""
    answers = {"/bin/dmesg": dmesg, "/bin/journalctl": journalctl}

    def run(argv):
        if argv[0] == "/bin/journalctl":
            assert argv[1:] == ["-k", "-b", "--no-pager", "-q", "-o", "short-monotonic"]
        return answers[argv[0]]
    return run, lambda name: "/bin/" + name if answers.get("/bin/" + name) else None


XID = "[ 12.5] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"


@pytest.mark.parametrize("dmesg, journalctl, source, errors", [
    (None, None, None, ["dmesg: not installed", "journalctl: not installed"]),
    ((1, "", "dmesg: read kernel buffer failed: Operation not permitted\nmore\n"), None, None,
     ["dmesg: dmesg: read kernel buffer failed: Operation not permitted", "journalctl: not installed"]),
    ((1, "out first\n", ""), (4, "", ""), None, ["dmesg: out first", "journalctl -k: rc=4"]),
    ((1, "", ""), (4, "", "journal said\n"), None, ["dmesg: rc=1", "journalctl -k: journal said"]),
    ((1, "", ""), (5, "journal out\n", ""), None, ["dmesg: rc=1", "journalctl -k: journal out"]),
    ((0, XID, ""), None, "dmesg", ["journalctl: not installed"]),
    (None, (0, XID, ""), "journalctl -k -b", ["dmesg: not installed"]),
    ((1, "", "denied"), (0, XID, ""), "journalctl -k -b", ["dmesg: denied"]),
])
def test_the_kernel_log_is_read_from_what_answers_and_each_failure_named(tmp_path, dmesg, journalctl, source, errors):
    run, which = kernel_tools(dmesg, journalctl)
    facts = gh.collect(run, which, sysfs=str(tmp_path))
    assert facts["kernel_log_errors"] == errors and facts["kernel_log_source"] == source
    assert [(x["pci"], x["code"]) for x in facts["xids"]] == ([("0000:18:00", 79)] if source else [])
    assert facts["smi_error"] == ns.REASON_NO_SMI


def test_known_facts_of_the_same_gpus_and_driver_are_reused_and_nvidia_smi_asked_less(tmp_path):
    run, which = fake_host("rtxpro6000x8")
    smi = which("nvidia-smi")
    nvcc = os.path.join(os.path.dirname(smi), "nvcc")
    known = ns.collect(run, which, nvidia_smi=smi, nvcc_path=nvcc, sysfs=str(tmp_path))
    assert known["present"] and known["nvcc"]["path"] == nvcc
    calls = []

    def counted(argv):
        calls.append(list(argv))
        return run(argv)
    fresh = gh.collect(counted, which, nvidia_smi=smi, sysfs=str(tmp_path), kernel_log=False, nvcc_path=nvcc,
                       pcie_fabric=False)
    asked = [c[1:] for c in calls]
    del calls[:]
    reused = gh.collect(counted, which, nvidia_smi=smi, sysfs=str(tmp_path), kernel_log=False, nvcc_path=nvcc,
                        pcie_fabric=False, known=known)
    assert fresh["reused"] == [] and reused["reused"] == ["driver and CUDA versions", "topology", "compute apps"]
    assert [] in asked and ["topo", "-m"] in asked and ["--version"] in asked and len(asked) == 5
    assert [c[1:] for c in calls] == [asked[0]]  # the health query only
    assert reused["nvcc"] == dict((k, v) for k, v in known["nvcc"].items() if k != "path") == fresh["nvcc"]
    for key in ("driver_version", "cuda_driver_version", "gpus", "processes", "nvlink"):
        assert reused[key] == fresh[key], key
    assert reused["topology"] == known["topology"] and reused["topology"]["matrix"] == fresh["topology"]["matrix"]
    assert fresh["driver_version"] and fresh["topology"]["pcie_only"] is True and len(fresh["gpus"]) == 8
    # known facts without the parts: each asked again
    bare = dict(known, topology=None, processes=None)
    bare.pop("nvcc")
    del calls[:]
    again = gh.collect(counted, which, nvidia_smi=smi, sysfs=str(tmp_path), kernel_log=False, nvcc_path=nvcc,
                       pcie_fabric=False, known=bare)
    assert again["reused"] == ["driver and CUDA versions"] and len(calls) == 4 and again["nvcc"] == fresh["nvcc"]
    assert again["topology"] == fresh["topology"] and again["processes"] == fresh["processes"]


def nvswitch_sysfs(root):
    """A sysfs PCI devices directory holding one NVIDIA NVSwitch (class 0x0680xx), as an HGX baseboard shows it."""
    dev = root / "0000:c1:00.0"
    dev.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("device", "0x22a3"), ("class", "0x068000")):
        (dev / name).write_text(value + "\n")
    return str(root)


@pytest.mark.parametrize("answer, active", [("active\n", True), ("inactive\n", False), ("", False), (None, False)])
def test_an_nvswitch_host_asks_systemd_whether_the_fabric_manager_is_active(tmp_path, answer, active):
    run, which = fake_host("h200x8")
    asked = []

    def with_systemctl(argv):
        if argv[0] == "systemctl":
            asked.append(argv)
            return (0 if active else 3), answer, ""
        return run(argv)
    sysfs = nvswitch_sysfs(tmp_path / "sys")
    facts = gh.collect(with_systemctl, lambda n: "/bin/systemctl" if n == "systemctl" else which(n), sysfs=sysfs,
                       proc_root=str(tmp_path), kernel_log=False, pcie_fabric=False)
    assert facts["nvswitch"] is True and facts["fabricmanager_active"] is active
    assert asked == [["systemctl", "is-active", "nvidia-fabricmanager"]]
    # no systemctl: not asked, not known; no NVSwitch: not asked
    assert gh.collect(with_systemctl, which, sysfs=sysfs, proc_root=str(tmp_path), kernel_log=False,
                      pcie_fabric=False)["fabricmanager_active"] is None
    plain = gh.collect(with_systemctl, lambda n: "/bin/systemctl" if n == "systemctl" else which(n),
                       sysfs=str(tmp_path / "none"), proc_root=str(tmp_path), kernel_log=False, pcie_fabric=False)
    assert plain["nvswitch"] is False and plain["fabricmanager_active"] is None and len(asked) == 1


def test_compute_apps_carry_their_owner_read_from_the_given_proc(tmp_path, monkeypatch):
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / str(os.getpid())).write_text('{"used_memory": 1024, "process_name": "python3"}')
    run, which = fake_host("rtxpro6000x8", FAKE_NVIDIA_APPS=str(apps))
    facts = gh.collect(run, which, sysfs=str(tmp_path), proc_root="/proc", kernel_log=False, pcie_fabric=False)
    assert [(a["pid"], a["used_memory_mib"]) for a in facts["processes"]] == [(os.getpid(), 1024)]
    owner = ownership.identity(os.getpid(), "/proc")
    assert owner is not None and facts["processes"][0]["owner"] == owner
    elsewhere = gh.collect(run, which, sysfs=str(tmp_path), proc_root=str(tmp_path), kernel_log=False,
                           pcie_fabric=False)
    assert elsewhere["processes"][0]["owner"] is None  # not visible from that /proc
    seen = []
    monkeypatch.setattr(gh.ownership, "identity", lambda pid, root: seen.append((pid, root)) or {"cmdline": "x", "cgroup": ""})
    gh.collect(run, which, sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False)
    assert seen == [(os.getpid(), "/proc")]  # the host's own /proc by default
    # a failing compute-apps query leaves the processes empty, not unread
    failing = gh.collect(lambda argv: (2, "", "error") if any("compute-apps" in a for a in argv) else run(argv), which,
                         sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False)
    assert failing["processes"] == [] and failing["smi_error"] is None


def test_a_banner_that_fails_after_the_health_query_is_the_reason(tmp_path):
    run, which = fake_host("h200x1")
    smi = which("nvidia-smi")

    def banner_fails(argv):
        return (14, "", "Unable to determine the device handle: Unknown Error\n") if argv == [smi] else run(argv)
    facts = gh.collect(banner_fails, which, sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False)
    assert facts["smi_error"] == "nvidia-smi failed (rc=14): Unable to determine the device handle: Unknown Error"
    assert facts["driver_version"] is None and facts["topology"] is None and len(facts["gpus"]) == 0

    def query_fails(argv):
        return (15, "out line\n", "") if argv[1:2] and argv[1].startswith("--query-gpu=") else run(argv)
    facts = gh.collect(query_fails, which, sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False)
    assert facts["smi_error"] == "nvidia-smi failed (rc=15): out line"

    def query_fails_on_stderr(argv):
        return (15, "", "err line\n") if argv[1:2] and argv[1].startswith("--query-gpu=") else run(argv)
    assert gh.collect(query_fails_on_stderr, which, sysfs=str(tmp_path), kernel_log=False,
                      pcie_fabric=False)["smi_error"] == "nvidia-smi failed (rc=15): err line"


def test_tools_that_fail_leave_their_facts_unknown(tmp_path):
    run, which = fake_host("h200x8")
    smi = which("nvidia-smi")
    nvcc = os.path.join(os.path.dirname(smi), "nvcc")

    def failing(argv):
        if argv[1:] in (["topo", "-m"], ["nvlink", "--status"], ["--version"]):
            return 3, "garbage", ""
        return run(argv)
    facts = gh.collect(failing, which, sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False, nvcc_path=nvcc)
    assert facts["topology"] is None and facts["nvlink"] is None and facts["nvcc"] is None
    good = gh.collect(run, which, sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False, nvcc_path=nvcc)
    assert good["topology"]["nvlink_counts"] and len(good["nvlink"]) == 8 and good["nvcc"]["release"]
    assert gh.collect(run, which, sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False,
                      nvcc_path=str(tmp_path / "no-nvcc"))["nvcc"] is None  # a named nvcc that is not there


def test_the_host_s_sysfs_proc_and_iommu_groups_are_read_by_default_and_the_fabric_gets_them(tmp_path, monkeypatch):
    run, which = fake_host("rtxpro6000x8")
    read, calls = [], []
    real_devices = gh.smi_mod.pci_nvidia_devices
    monkeypatch.setattr(gh.smi_mod, "pci_nvidia_devices", lambda sysfs: read.append(sysfs) or real_devices(str(tmp_path)))
    monkeypatch.setattr(gh.fabric_mod, "collect", lambda *a, **kw: calls.append((a, kw)) or {"applies": False})
    facts = gh.collect(run, which, kernel_log=False)
    assert read == ["/sys/bus/pci/devices"] and facts["pcie_fabric"] == {"applies": False}
    (args, kwargs), = calls
    assert args[:3] == (run, which, which("nvidia-smi")) and args[3] == facts["gpus"] and args[4] == facts["topology"]
    assert kwargs == {"cmdline_path": "/proc/cmdline", "devices_dir": "/sys/bus/pci/devices",
                      "groups_dir": "/sys/kernel/iommu_groups"}
    del calls[:]
    gh.collect(run, which, kernel_log=False, sysfs="/s", proc_root="/p", iommu_groups="/g")
    assert calls[0][1] == {"cmdline_path": "/p/cmdline", "devices_dir": "/s", "groups_dir": "/g"} and read[-1] == "/s"


def test_output_of_a_tool_that_failed_is_not_read_even_when_it_parses(tmp_path):
    """A failing status wins over output that would parse (a tool can print a table, then fail)."""
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / str(os.getpid())).write_text('{"used_memory": 512}')
    run, which = fake_host("h200x8", FAKE_NVIDIA_APPS=str(apps))
    smi = which("nvidia-smi")
    nvcc = os.path.join(os.path.dirname(smi), "nvcc")

    def failing_with_output(argv):
        rc, out, err = run(argv)
        tool = argv[1:2] and argv[1]
        return (7 if tool in ("topo", "nvlink", "--version") or str(tool).startswith("--query-compute-apps") else rc,
                out, err)
    kept = dict(sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False, nvcc_path=nvcc)
    good = gh.collect(run, which, **kept)
    assert good["topology"] and good["nvlink"] and good["nvcc"] and len(good["processes"]) == 1
    failed = gh.collect(failing_with_output, which, **kept)
    assert (failed["topology"], failed["nvlink"], failed["nvcc"], failed["processes"]) == (None, None, None, [])
    # the NVLink status is asked only where the topology shows links: fail it alone
    nvlink_fails = gh.collect(lambda argv: (7,) + run(argv)[1:] if argv[1:2] == ["nvlink"] else run(argv), which, **kept)
    assert nvlink_fails["topology"] == good["topology"] and nvlink_fails["nvlink"] is None


def test_known_compute_apps_are_copied_and_get_their_owner(tmp_path):
    run, which = fake_host("rtxpro6000x8")
    smi = which("nvidia-smi")
    known = ns.collect(run, which, nvidia_smi=smi, sysfs=str(tmp_path))
    mine = {"pid": os.getpid(), "name": "python3", "used_memory_mib": 64, "bus_key": "0000:18:00"}
    known["processes"] = [mine, dict(mine, pid=None)]
    facts = gh.collect(run, which, nvidia_smi=smi, sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False,
                       known=known)
    assert "compute apps" in facts["reused"]
    assert [a["pid"] for a in facts["processes"]] == [os.getpid(), None]
    assert facts["processes"][0]["owner"] == ownership.identity(os.getpid()) and facts["processes"][1]["owner"] is None
    assert "owner" not in mine  # copies: the known facts are left as they were


def test_a_banner_failure_is_named_by_its_output_when_stderr_is_empty(tmp_path):
    run, which = fake_host("h200x1")
    smi = which("nvidia-smi")
    facts = gh.collect(lambda argv: (14, "banner said\n", "") if argv == [smi] else run(argv), which,
                       sysfs=str(tmp_path), kernel_log=False, pcie_fabric=False)
    assert facts["smi_error"] == "nvidia-smi failed (rc=14): banner said"
