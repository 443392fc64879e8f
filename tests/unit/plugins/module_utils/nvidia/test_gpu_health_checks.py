# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_health checks no other test ran (issue 37): retired pages, pending ECC mode, lifetime ECC errors, a failed
remap, banks without spare rows, temperature, the PCIe generation; each bound at, below and above, and each remedy
held to its words (a wrong remedy for a fatal Xid must fail a test, not only an empty one)."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi

HEALTHY = {
    "index": "0", "name": "NVIDIA H200", "pci.bus_id": "00000000:18:00.0", "uuid": "GPU-1", "driver_version": "580.95.05",
    "persistence_mode": "Enabled", "ecc.mode.current": "Enabled", "ecc.mode.pending": "Enabled",
    "ecc.errors.uncorrected.volatile.total": "0", "ecc.errors.uncorrected.aggregate.total": "0",
    "ecc.errors.corrected.volatile.total": "0", "retired_pages.single_bit_ecc.count": "[N/A]",
    "retired_pages.double_bit.count": "[N/A]", "retired_pages.pending": "[N/A]", "remapped_rows.correctable": "0",
    "remapped_rows.uncorrectable": "0", "remapped_rows.pending": "No", "remapped_rows.failure": "No",
    "remapped_rows.histogram.low": "0", "remapped_rows.histogram.none": "0", "clocks_event_reasons.active": "0x0000000000000001",
    "clocks_event_reasons_counters.hw_thermal_slowdown": "0", "clocks_event_reasons_counters.hw_power_brake_slowdown": "0",
    "clocks_event_reasons_counters.sw_thermal_slowdown": "0", "pcie.link.gen.current": "5", "pcie.link.gen.max": "5",
    "pcie.link.gen.gpumax": "5", "pcie.link.gen.hostmax": "5", "pcie.link.width.current": "16",
    "pcie.link.width.max": "16", "temperature.gpu": "30", "temperature.gpu.tlimit": "57", "power.draw": "75.5",
    "memory.used": "0", "memory.total": "143771", "compute_cap": "9.0", "pstate": "P0", "gpu_recovery_action": "None",
    "mig.mode.current": "Disabled", "fabric.state": "N/A", "fabric.status": "N/A",
}
RESET = "reset the GPU (nvidia-smi -r -i 0 with nothing running on it) or reboot"


def gpu(**fields):
    row = dict(HEALTHY)
    row.update(fields)
    return gh.normalize_health_row(row)


def by_check(problems, check):
    return [(p["severity"], p["detail"], p["remedy"]) for p in problems if p["check"] == check]


def test_the_healthy_row_has_no_problem():
    g = gpu()
    assert gh.check_memory(g) == [] and gh.check_clocks(g, gh.DEFAULTS) == [] and gh.check_pcie(g, gh.DEFAULTS) == []
    assert gh.check_modes(g) == []


@pytest.mark.parametrize("sbe, dbe, warned", [("59", "0", False), ("60", "0", True), ("61", "0", True),
                                              ("30", "29", False), ("30", "30", True), ("[N/A]", "60", True)])
def test_retired_pages_warn_from_60(sbe, dbe, warned):
    got = by_check(gh.check_memory(gpu(**{"retired_pages.single_bit_ecc.count": sbe,
                                          "retired_pages.double_bit.count": dbe})), "retired_pages")
    total = (0 if sbe == "[N/A]" else int(sbe)) + int(dbe)
    assert got == ([("warning", "GPU0 (00000000:18:00.0): %d pages retired (the limit is 64)" % total,
                     "plan an RMA: at the limit the GPU can no longer retire bad memory")] if warned else [])


def test_a_pending_retired_page_is_an_error_with_the_reset():
    got = by_check(gh.check_memory(gpu(**{"retired_pages.pending": "Yes"})), "retired_pages")
    assert got == [("error", "GPU0 (00000000:18:00.0): a retired page is pending (it takes effect at the next reset)",
                    RESET)]
    assert by_check(gh.check_memory(gpu(**{"retired_pages.pending": "No"})), "retired_pages") == []


@pytest.mark.parametrize("current, pending, words", [("Enabled", "Disabled", "pending off"),
                                                     ("Disabled", "Enabled", None), ("Enabled", "Enabled", None),
                                                     ("Enabled", "[N/A]", None)])
def test_a_pending_ecc_mode_change_warns(current, pending, words):
    got = by_check(gh.check_memory(gpu(**{"ecc.mode.current": current, "ecc.mode.pending": pending})), "ecc_mode")
    if words:
        assert got == [("warning", "GPU0 (00000000:18:00.0): ECC mode changes at the next reset (%s)" % words,
                        RESET + " to apply it")]
    elif current == "Disabled":
        assert got == [("warning", "GPU0 (00000000:18:00.0) runs with ECC disabled: memory errors go undetected",
                        "enable it (nvidia-smi -e 1 -i 0, then reset or reboot), or accept it with gpu_health_ignore:"
                        " [ecc_mode]")]
    else:
        assert got == []


def test_a_pending_ecc_mode_on_names_on():
    got = by_check(gh.check_memory(gpu(**{"ecc.mode.current": "Enabled", "ecc.mode.pending": "Enabled"})), "ecc_mode")
    assert got == []
    g = gpu()
    g["ecc_mode_current"], g["ecc_mode_pending"] = True, True
    g["ecc_mode_current"] = None
    assert gh.check_memory(g) == []


def test_lifetime_ecc_errors_warn_only_without_remap_counters_and_volatile_errors():
    no_remap = {"ecc.errors.uncorrected.aggregate.total": "1", "remapped_rows.correctable": "[N/A]",
                "remapped_rows.uncorrectable": "[N/A]"}
    got = by_check(gh.check_memory(gpu(**no_remap)), "ecc_errors")
    assert got == [("warning", "GPU0 (00000000:18:00.0): 1 uncorrectable ECC error(s) over its lifetime",
                    "watch the count; run 'dcgmi diag -r 3' when the host is drained")]
    assert by_check(gh.check_memory(gpu(**{**no_remap, "ecc.errors.uncorrected.aggregate.total": "0"})),
                    "ecc_errors") == []
    # with remap counters the lifetime count is a note (repaired), not a problem
    assert by_check(gh.check_memory(gpu(**{"ecc.errors.uncorrected.aggregate.total": "1"})), "ecc_errors") == []
    assert by_check(gh.check_memory(gpu(**{**no_remap, "remapped_rows.uncorrectable": "0"})), "ecc_errors") == []
    # a volatile error is the error; the lifetime one is not repeated
    got = by_check(gh.check_memory(gpu(**dict(no_remap, **{"ecc.errors.uncorrected.volatile.total": "2"}))), "ecc_errors")
    assert got == [("error", "GPU0 (00000000:18:00.0): 2 uncorrectable ECC error(s) since the last reset: data in GPU "
                    "memory may be corrupt", RESET + "; if they return, drain the host and RMA the GPU")]


def test_a_failed_remap_is_an_rma():
    got = by_check(gh.check_memory(gpu(**{"remapped_rows.failure": "Yes"})), "remapped_rows")
    assert got == [("error", "GPU0 (00000000:18:00.0): a row remapping failed: the GPU has memory it cannot repair",
                    "drain the host and RMA the GPU")]


@pytest.mark.parametrize("banks", ["0", "1", "3"])
def test_banks_without_spare_rows_warn_from_one(banks):
    got = by_check(gh.check_memory(gpu(**{"remapped_rows.histogram.none": banks})), "remapped_rows")
    assert got == ([] if banks == "0" else [
        ("warning", "GPU0 (00000000:18:00.0): %s memory bank(s) have no spare rows left" % banks,
         "plan an RMA: the next error in those banks cannot be repaired")])


def test_a_pending_remap_is_an_error_with_the_reset():
    got = by_check(gh.check_memory(gpu(**{"remapped_rows.pending": "Yes"})), "remapped_rows")
    assert got == [("error", "GPU0 (00000000:18:00.0): a row remapping is pending: the bad memory row is still in use "
                    "until the GPU is reset", RESET)]


@pytest.mark.parametrize("action, asked", [("None", False), ("none", False), ("[N/A]", False), ("Reset", True),
                                           ("Drain and Reset", True)])
def test_a_recovery_action_is_named(action, asked):
    got = by_check(gh.check_memory(gpu(gpu_recovery_action=action)), "recovery_action")
    assert got == ([("error", "GPU0 (00000000:18:00.0): the driver asks for a recovery action: %s" % action,
                     "do it (GPU reset: nvidia-smi -r -i 0; node reboot; drain): nothing runs reliably until then")]
                   if asked else [])


@pytest.mark.parametrize("temp, warned", [(84, False), (85, True), (86, True)])
def test_temperature_warns_at_the_limit(temp, warned):
    g = gpu(**{"temperature.gpu": str(temp), "temperature.gpu.tlimit": "[N/A]"})
    got = by_check(gh.check_clocks(g, dict(gh.DEFAULTS)), "temperature")
    assert got == ([("warning", "GPU0 (00000000:18:00.0) is %d C (limit set: 85 C)" % temp,
                     "check the airflow and fans before loading it")] if warned else [])


@pytest.mark.parametrize("margin, text", [(6, None), (5, None), (4, "4 C from its slowdown limit"),
                                          (0, "0 C from its slowdown limit"), (-1, "1 C past its slowdown limit")])
def test_the_tlimit_margin_warns_below_its_floor(margin, text):
    g = gpu(**{"temperature.gpu": "70", "temperature.gpu.tlimit": str(margin)})
    got = by_check(gh.check_clocks(g, dict(gh.DEFAULTS)), "temperature")
    assert got == ([("warning", "GPU0 (00000000:18:00.0) is 70 C, %s" % text,
                     "check the airflow and fans before loading it")] if text else [])


def test_a_low_margin_is_the_one_temperature_line_and_an_ample_one_leaves_the_absolute_limit():
    g = gpu(**{"temperature.gpu": "90", "temperature.gpu.tlimit": "2"})
    assert [d for _s, d, _r in by_check(gh.check_clocks(g, dict(gh.DEFAULTS)), "temperature")] == [
        "GPU0 (00000000:18:00.0) is 90 C, 2 C from its slowdown limit"]
    g = gpu(**{"temperature.gpu": "90", "temperature.gpu.tlimit": "20"})
    assert [d for _s, d, _r in by_check(gh.check_clocks(g, dict(gh.DEFAULTS)), "temperature")] == [
        "GPU0 (00000000:18:00.0) is 90 C (limit set: 85 C)"]


@pytest.mark.parametrize("gen, gen_max, idle, warned", [(4, 5, "0x0000000000000000", True),
                                                        (5, 5, "0x0000000000000000", False),
                                                        (4, 5, "0x0000000000000001", False)])
def test_a_pcie_generation_below_its_max_warns_only_when_busy(gen, gen_max, idle, warned):
    g = gpu(**{"pcie.link.gen.current": str(gen), "pcie.link.gen.max": str(gen_max), "clocks_event_reasons.active": idle})
    got = by_check(gh.check_pcie(g, dict(gh.DEFAULTS)), "pcie_link")
    assert got == ([("warning", "GPU0 (00000000:18:00.0): PCIe Gen%d while busy, Gen%d possible" % (gen, gen_max),
                     "check the slot, riser and BIOS link speed")] if warned else [])


@pytest.mark.parametrize("expected, refused", [(4, False), (5, False), (6, True)])
def test_an_expected_pcie_generation_is_enforced_from_both_sides(expected, refused):
    got = by_check(gh.check_pcie(gpu(), dict(gh.DEFAULTS, expected_pcie_gen=expected)), "pcie_link")
    assert got == ([("error", "GPU0 (00000000:18:00.0): PCIe Gen5 at most, Gen%d expected" % expected,
                     "fix the slot or BIOS link speed, or set gpu_health_expected_pcie_gen")] if refused else [])


@pytest.mark.parametrize("width, want, factor", [(8, 16, 2), (4, 16, 4), (15, 16, 1)])
def test_a_narrow_link_names_the_slowdown_factor(width, want, factor):
    g = gpu(**{"pcie.link.width.current": str(width)})
    got = by_check(gh.check_pcie(g, dict(gh.DEFAULTS)), "pcie_link")
    assert got == [("error", "GPU0 (00000000:18:00.0) runs at PCIe x%d, the card can do x%d: the link trained below "
                    "what the slot allows; host-device copies and every all-reduce that crosses PCIe slow down by up "
                    "to %dx" % (width, want, factor), "reseat the card, check the riser/cable, and reboot")]


def test_clock_counters_warn_when_not_active_now():
    g = gpu(**{"clocks_event_reasons_counters.hw_thermal_slowdown": "2500000"})
    got = by_check(gh.check_clocks(g, dict(gh.DEFAULTS)), "clock_events")
    assert got == [("warning", "GPU0 (00000000:18:00.0) was slowed by hardware since the driver loaded: "
                    "hw_thermal_slowdown 2.5 s", "check cooling and power under load (not active now)")]
    g = gpu(**{"clocks_event_reasons_counters.hw_thermal_slowdown": "2500000", "clocks_event_reasons.active": "0x40"})
    assert [s for s, _d, _r in by_check(gh.check_clocks(g, dict(gh.DEFAULTS)), "clock_events")] == ["error"]


@pytest.mark.parametrize("mask, words", [("0x8", "hardware slowdown"), ("0x48", "hardware thermal slowdown"),
                                         ("0xc8", "hardware thermal slowdown (the GPU is over its temperature limit) "
                                                  "and hardware power brake")])
def test_the_specific_hardware_slowdown_is_named(mask, words):
    got = by_check(gh.check_clocks(gpu(**{"clocks_event_reasons.active": mask}), dict(gh.DEFAULTS)), "clock_events")
    assert len(got) == 1 and got[0][0] == "error" and got[0][1].startswith("GPU0 (00000000:18:00.0): " + words)
    assert got[0][1].endswith(" active (30 C)")
    assert got[0][2].startswith("check the airflow, fans and inlet temperature, the power cables and PSU")


def test_a_software_thermal_slowdown_warns():
    got = by_check(gh.check_clocks(gpu(**{"clocks_event_reasons.active": "0x20"}), dict(gh.DEFAULTS)), "clock_events")
    assert got == [("warning", "GPU0 (00000000:18:00.0): software thermal slowdown (the driver lowers clocks to stay "
                    "under the thermal target) is active (30 C)", "improve cooling; throughput drops while it lasts")]


def facts_with_xid(code, pci="0000:18:00"):
    return {"kernel_log_source": "dmesg", "kernel_log_errors": [], "gpus": [gpu()],
            "xids": [{"pci": pci, "code": code, "pid": "<unknown>", "process": None, "message": "driver text"}]}


@pytest.mark.parametrize("code, severity, remedy", [
    (79, "error", "drain the host and reboot it; if it comes back, reseat the GPU, check its power cables and riser, "
                  "and RMA"),
    (48, "error", "reset the GPU (nvidia-smi -r -i 0, with nothing running on it) or reboot the host, then run the "
                  "gate again; if it comes back, drain the host and contact the vendor"),
    (64, "error", "reset the GPU (nvidia-smi -r -i 0, with nothing running on it) or reboot the host, then run the "
                  "gate again; if it comes back, drain the host and contact the vendor; a failed remap means RMA"),
    (13, "warning", "a program faulted on this GPU; nothing is wrong with the GPU by itself: read the log of the "
                    "program that ran (pid in the detail) before relaunching")])
def test_a_fatal_xid_gets_its_own_remedy(code, severity, remedy):
    got = gh.check_xids(facts_with_xid(code))
    assert [(p["severity"], p["remedy"], p["gpu"]) for p in got] == [(severity, remedy, 0)]
    assert got[0]["detail"].startswith("GPU0 (PCI 0000:18:00): Xid %d x1 since the driver loaded, " % code)
    assert got[0]["detail"].endswith("; driver said: driver text")


def test_an_xid_of_a_gpu_the_driver_lost_names_its_pci_address():
    got = gh.check_xids(facts_with_xid(79, pci="0000:3b:00"))
    assert got[0]["detail"].startswith("PCI 0000:3b:00 (not visible to nvidia-smi): Xid 79 x1")
    assert got[0]["gpu"] is None and "{gpu}" not in got[0]["remedy"]


def test_order_puts_errors_first_then_check_order_then_gpu():
    ps = [gh.problem("temperature", "warning", "t", "r", 1), gh.problem("xid", "error", "x", "r", 0),
          gh.problem("ecc_errors", "error", "e", "r", 1), gh.problem("ecc_errors", "error", "e", "r", 0),
          gh.problem("gpu_count", "error", "c", "r")]
    assert [(p["check"], p["gpu"]) for p in gh.order_problems(ps)] == [
        ("gpu_count", None), ("ecc_errors", 0), ("ecc_errors", 1), ("xid", 0), ("temperature", 1)]


# -- notes, parsers and the rest held from both sides (mutation, issue 37) ----------------------------------------------
def facts_of(*gpus, **extra):
    facts = {"gpus": list(gpus), "kernel_log_source": None, "xids": [], "pcie_fabric": None}
    facts.update(extra)
    return facts


@pytest.mark.parametrize("correctable, uncorrectable, rows", [
    ("3", "2", 5), ("0", "2", 2), ("3", "0", 3), ("3", "[N/A]", 3)])
def test_lifetime_errors_repaired_by_remapping_are_a_note_with_the_rows_remapped(correctable, uncorrectable, rows):
    g = gpu(**{"ecc.errors.uncorrected.aggregate.total": "4", "remapped_rows.correctable": correctable,
               "remapped_rows.uncorrectable": uncorrectable})
    assert gh.notes(facts_of(g)) == [
        "GPU0 (00000000:18:00.0): 4 uncorrectable ECC error(s) over its lifetime, repaired by row remapping "
        "(%d row(s) remapped, none pending)" % rows]


@pytest.mark.parametrize("fields", [{"remapped_rows.pending": "Yes"}, {"remapped_rows.failure": "Yes"},
                                    {"remapped_rows.correctable": "[N/A]"},
                                    {"ecc.errors.uncorrected.aggregate.total": "0"}])
def test_lifetime_errors_are_not_called_repaired_while_a_remap_is_pending_failed_or_unknown(fields):
    row = {"ecc.errors.uncorrected.aggregate.total": "4"}
    row.update(fields)
    assert gh.notes(facts_of(gpu(**row))) == []


def test_the_healthy_row_has_no_note():
    assert gh.notes(facts_of(gpu())) == []


@pytest.mark.parametrize("gen, gen_max, mask, noted", [("4", "5", "0x1", True), ("5", "5", "0x1", False),
                                                       ("4", "5", "0x0", False), ("5", "5", "0x0", False),
                                                       ("[N/A]", "5", "0x1", False)])
def test_a_slower_pcie_generation_at_idle_is_a_note(gen, gen_max, mask, noted):
    g = gpu(**{"pcie.link.gen.current": gen, "pcie.link.gen.max": gen_max, "clocks_event_reasons.active": mask})
    assert gh.notes(facts_of(g)) == (["GPU0 (00000000:18:00.0): PCIe Gen4 at idle (Gen5 under load; idle GPUs lower "
                                      "the link speed to save power)"] if noted else [])


def test_notes_name_the_kernel_log_and_the_fabric_not_checked():
    facts = facts_of(gpu(), kernel_log_source="dmesg", xids=[{}, {}],
                     pcie_fabric={"applies": False, "why": "one GPU: no peer traffic"})
    assert gh.notes(facts) == ["PCIe fabric not checked: one GPU: no peer traffic",
                               "kernel log read from dmesg: 2 Xid event(s) since the driver loaded"]


def test_nvlink_status_counts_each_gpus_links():
    text = ("\tLink 9: 26.562 GB/s\n"          # before any GPU line: no GPU to count it for
            "GPU 0: NVIDIA H200 (UUID: GPU-1)\n"
            "\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n\t Link 2: Disabled\n\t Link 3:\n"
            "\t NVML: some other line\n"
            "GPU 1: NVIDIA H200 (UUID: GPU-2)\n\t Link 0: 26.562 GB/s\n")
    assert gh.parse_nvlink_status(text) == {0: {"up": 1, "down": 3}, 1: {"up": 1, "down": 0}}


def test_the_device_link_is_read_from_the_sysfs_slot_of_its_bus_id(tmp_path):
    # nvidia-smi's 8-digit domain and upper-case hex; sysfs names the slot with a 4-digit domain, lower case
    for slot in ("0010:3b:00.0", "0000:3b:00.0", "0011:3b:00.0"):
        path = tmp_path / slot
        path.mkdir()
        (path / "vendor").write_text("0x10de\n")
        (path / "max_link_width").write_text("16\n" if slot.startswith("0010") else "1\n")
        (path / "current_link_width").write_text("8\n")
    assert gh.read_sysfs_pcie("00000010:3B:00.0", str(tmp_path)) == {"max_width": 16, "width": 8}


def test_a_process_is_ours_by_its_command_line_too():
    owner = {"cmdline": "python3 -m sglang.launch_server --port 30000", "cgroup": "0::/user.slice/session-1.scope\n"}
    assert gh.is_own(owner, ["sglang-*.service"], [r"sglang\.launch_server"]) is True
    assert gh.is_own(owner, ["sglang-*.service"], [r"vllm"]) is False
    assert gh.is_own(None, ["sglang-*.service"], [r"sglang"]) is False


def known_facts(**changes):
    gpus = [{"pci_bus_id": "00000000:18:00.0"}, {"pci_bus_id": "00000000:3B:00.0"}]
    known = {"present": True, "driver_version": "580.95.05", "gpus": gpus}
    known.update(changes)
    return known


def health_gpus(*bus_ids, **changes):
    return [dict({"pci_bus_id": bus, "driver_version": "580.95.05"}, **changes) for bus in bus_ids]


def test_facts_are_reused_only_for_the_same_gpus_under_the_same_driver():
    now = health_gpus("00000000:3b:00.0", "00000000:18:00.0")  # another order, another case: the same GPUs
    assert gh._reusable(known_facts(), now) is True
    assert gh._reusable(known_facts(), now[:1]) is False
    assert gh._reusable(known_facts(), health_gpus("00000000:18:00.0", "00000000:5e:00.0")) is False
    assert gh._reusable(known_facts(), health_gpus("00000000:3b:00.0", "00000000:18:00.0",
                                                   driver_version="590.10.01")) is False
    assert gh._reusable(known_facts(gpus=[{"pci_bus_id": None}]), health_gpus(None)) is True


@pytest.mark.parametrize("known", [None, "facts", known_facts(present=False), known_facts(driver_version=""),
                                   known_facts(driver_version=None), dict(known_facts(), present=None)])
def test_facts_without_gpus_present_or_a_driver_are_not_reused(known):
    assert gh._reusable(known, health_gpus("00000000:3b:00.0", "00000000:18:00.0")) is False


def test_the_summary_is_one_line_per_problem_then_each_ignored_one():
    kept = [gh.problem("xid", "error", "GPU0: Xid 79", "drain and reboot", 0),
            gh.problem("temperature", "warning", "GPU1 is 86 C", "check the fans", 1)]
    ignored = [gh.problem("ecc_mode", "warning", "GPU0 runs with ECC disabled", "enable it", 0)]
    assert gh.summary(kept, ignored) == ["[error] xid: GPU0: Xid 79 -> drain and reboot",
                                         "[warning] temperature: GPU1 is 86 C -> check the fans",
                                         "[ignored on purpose] ecc_mode: GPU0 runs with ECC disabled"]
    assert gh.summary([], []) == []


@pytest.mark.parametrize("text, rc, line", [("\n  dmesg: read kernel buffer failed: Operation not permitted\nmore\n", 1,
                                             "dmesg: read kernel buffer failed: Operation not permitted"),
                                            ("", 3, "rc=3"), (None, 2, "rc=2"), ("  \n", 1, "rc=1")])
def test_a_failing_tool_is_named_by_its_first_line_or_its_status(text, rc, line):
    assert gh._first_line(text, rc) == line


def inventory(gpus_seen, slots, expected):
    facts = {"gpus": gpus_seen, "pci_devices": [{"slot": s, "class": "0x030200"} for s in slots]}
    return by_check(gh.check_inventory(facts, dict(gh.DEFAULTS, expected_count=expected)), "gpu_count")


@pytest.mark.parametrize("expected, seen, refused", [(0, 2, False), (2, 1, True), (2, 2, False), (2, 3, True)])
def test_the_gpu_count_is_held_only_when_expected(expected, seen, refused):
    gpus_seen = [gpu(index=str(i), **{"pci.bus_id": "00000000:%02x:00.0" % (0x18 + i)}) for i in range(seen)]
    got = inventory(gpus_seen, ["0000:%02x:00.0" % (0x18 + i) for i in range(seen)], expected)
    assert [d for _s, d, _r in got] == (["%d GPU(s) visible to the driver, %d expected" % (seen, expected)]
                                        if refused else [])


def test_a_gpu_on_the_pci_bus_the_driver_did_not_take_is_named():
    got = inventory([gpu()], ["0000:18:00.0", "0000:3b:00.0", "0000:5e:00.0"], 0)
    assert got == [("error", "1 GPU(s) visible to the driver; on the PCI bus but not usable: 0000:3b:00.0, 0000:5e:00.0",
                    "read 'dmesg | grep NVRM' for why the driver did not take them; reseat, check power, reboot")]
    got = inventory([gpu()], ["0000:18:00.0", "0000:3b:00.0"], 2)
    assert [d for _s, d, _r in got] == ["1 GPU(s) visible to the driver, 2 expected; on the PCI bus but not usable: "
                                        "0000:3b:00.0"]


# -- the inventory's and the software's words: what the operator reads is the product (mutation, issue 37) -------------
LOST = ("a GPU that fell off the bus or failed to initialise disappears from nvidia-smi: read 'dmesg | grep -E "
        "\"NVRM|Xid\"', reseat it and check its power cables, then reboot; if the host really has %d, set "
        "gpu_health_expected_count: %d")


@pytest.mark.parametrize("expected", [None, 0])
def test_no_expected_count_holds_no_count(expected):
    two = [gpu(index=str(i), **{"pci.bus_id": "00000000:%02x:00.0" % (0x18 + i)}) for i in range(2)]
    facts = {"gpus": two, "pci_devices": [{"slot": "0000:18:00.0", "class": "0x030200"},
                                          {"slot": "0000:19:00.0", "class": "0x030200"}]}
    assert gh.check_inventory(facts, {"expected_count": expected}) == []
    assert gh.check_inventory(facts, {}) == []


def test_a_lost_gpu_is_one_error_with_its_whole_remedy():
    facts = {"gpus": [gpu()], "pci_devices": [{"slot": "0000:18:00.0", "class": "0x030200"}]}
    assert gh.check_inventory(facts, {"expected_count": 2}) == [
        {"check": "gpu_count", "gpu": None, "severity": "error", "detail": "1 GPU(s) visible to the driver, 2 expected",
         "remedy": LOST % (1, 1)}]
    facts["pci_devices"].append({"slot": "0000:3b:00.0", "class": "0x030200"})
    assert gh.check_inventory(facts, {"expected_count": 2}) == [
        {"check": "gpu_count", "gpu": None, "severity": "error",
         "detail": "1 GPU(s) visible to the driver, 2 expected; on the PCI bus but not usable: 0000:3b:00.0",
         "remedy": LOST % (1, 1)}]
    # without an expected count, the GPU on the bus that the driver did not take is an error too
    assert gh.check_inventory(facts, {}) == [
        {"check": "gpu_count", "gpu": None, "severity": "error",
         "detail": "1 GPU(s) visible to the driver; on the PCI bus but not usable: 0000:3b:00.0",
         "remedy": "read 'dmesg | grep NVRM' for why the driver did not take them; reseat, check power, reboot"}]


@pytest.mark.parametrize("model, refused", [("H200", False), ("h200", False), ("  H200 ", False), ("RTX PRO 6000", True),
                                            ("", False), (None, False)])
def test_the_gpu_model_is_matched_without_case_and_named_with_its_fix(model, refused):
    facts = {"gpus": [gpu(), gpu(index="1", name=None, **{"pci.bus_id": "00000000:19:00.0"})], "pci_devices": []}
    got = gh.check_inventory(facts, {"expected_model": model})
    want = model.strip() if model else ""
    fix = "deploy on the intended hardware or set gpu_health_expected_model to this model"
    first = [{"check": "gpu_model", "gpu": 0, "severity": "error",
              "detail": "GPU0 (00000000:18:00.0) is 'NVIDIA H200', expected '%s'" % want, "remedy": fix}]
    second = [{"check": "gpu_model", "gpu": 1, "severity": "error",
               "detail": "GPU1 (00000000:19:00.0) is 'None', expected '%s'" % want, "remedy": fix}]
    assert got == (first if refused else []) + (second if want else [])


def software(driver="580.95.05", cuda_driver="13.0", nvcc=("13.0", "13.0.88")):
    return {"driver_version": driver, "cuda_driver_version": cuda_driver,
            "nvcc": {"release": nvcc[0], "version": nvcc[1]} if nvcc else None}


def test_the_software_checks_word_for_word():
    want = {"expected_driver_branch": "580", "expected_cuda": "13.0"}
    assert gh.check_software(software(), want) == []
    assert gh.check_software(software(driver="570.172.08", cuda_driver="12.8", nvcc=("12.8", "12.8.93")), want) == [
        {"check": "driver", "gpu": None, "severity": "error", "detail": "driver 570.172.08 is not on the 580 branch",
         "remedy": "install the 580 branch (roles/cuda, cuda_driver_branch: 580) and reboot, or set "
                   "gpu_health_expected_driver_branch"},
        {"check": "driver", "gpu": None, "severity": "error",
         "detail": "the driver supports CUDA up to 12.8, 13.0 expected",
         "remedy": "install a driver branch that supports CUDA 13.0 (roles/cuda) and reboot"},
        {"check": "toolkit", "gpu": None, "severity": "error", "detail": "CUDA toolkit 12.8 installed, 13.0 expected",
         "remedy": "run roles/cuda with cuda_toolkit_version: 13.0, or set gpu_health_expected_cuda"}]
    assert gh.check_software(software(nvcc=None), want) == [
        {"check": "toolkit", "gpu": None, "severity": "warning", "detail": "no nvcc found (CUDA toolkit 13.0 expected)",
         "remedy": "run roles/cuda (cuda_toolkit_version: 13.0); SGLang's JIT kernels need the toolkit"}]


@pytest.mark.parametrize("have, ok", [("12.9", False), ("13.0", True), ("13.1", True), ("13", False), (None, None)])
def test_the_driver_s_cuda_is_held_at_the_expected_version_from_both_sides(have, ok):
    got = gh.check_software(software(cuda_driver=have), {"expected_cuda": "13.0"})
    unread = ["the CUDA version the driver supports could not be read from nvidia-smi: CUDA 13.0 not checked"]
    assert [p["detail"] for p in got if p["check"] == "driver"] == (
        unread if ok is None else [] if ok else ["the driver supports CUDA up to %s, 13.0 expected" % have])
    # unread is a warning (issue 43: never a silent pass), a known mismatch an error
    assert all(p["severity"] == ("warning" if ok is None else "error") for p in got if p["check"] == "driver")


@pytest.mark.parametrize("branch, driver, ok", [("580", "580.95.05", True), ("580", "581.01", False),
                                                ("580", "58.0", False), (" 580 ", "580.1", True), ("", "570.1", True),
                                                ("580", None, None), (580, "580.1", True), ("", None, True)])
def test_the_driver_branch_is_its_first_number(branch, driver, ok):
    got = gh.check_software(software(driver=driver), {"expected_driver_branch": branch})
    assert bool(got) is not bool(ok) and all(p["check"] == "driver" for p in got)
    # a driver version that could not be read: a warning naming the branch not checked (issue 43)
    assert [p["severity"] for p in got] == (["warning"] if ok is None else [] if ok else ["error"])
    if ok is None:
        assert got[0]["detail"] == "the driver version could not be read from nvidia-smi: branch 580 not checked"


# -- the fabric's and the foreign processes' words (mutation, issue 37) ---------------------------------------------
def fabric_facts(nvlink=None, gpus=(), nvswitch=False, fm_active=None):
    return {"nvlink": nvlink, "gpus": list(gpus), "nvswitch": nvswitch, "fabricmanager_active": fm_active}


def test_a_gpu_with_fewer_nvlinks_up_than_the_best_is_named_with_its_count():
    nvlink = {0: {"up": 18, "down": 0}, 1: {"up": 16, "down": 2}, 2: {"up": 18, "down": 0}, 3: {"up": 17, "down": 1}}
    assert gh.check_fabric(fabric_facts(nvlink)) == [
        {"check": "nvlink", "gpu": i, "severity": "error", "detail": "GPU%d: %d of 18 NVLink links up (%d inactive)"
         % (i, 18 - down, down), "remedy": "reset the GPU or reboot; if links stay down, check the NVLink "
         "bridge/baseboard ('nvidia-smi nvlink -e -i %d')" % i} for i, down in ((1, 2), (3, 1))]
    assert gh.check_fabric(fabric_facts({0: {"up": 18, "down": 0}, 1: {"up": 18, "down": 0}})) == []
    assert gh.check_fabric(fabric_facts({0: {"up": 0, "down": 0}, 1: {"up": 0, "down": 4}})) == []  # PCIe only
    assert gh.check_fabric(fabric_facts({})) == [] and gh.check_fabric(fabric_facts(None)) == []


@pytest.mark.parametrize("state, status, want", [
    ("Completed", "Success", None), ("completed", "success", None), ("COMPLETED", None, None), (None, "Failure", None),
    ("N/A", None, "state"), ("In Progress", "N/A", "state"), ("Completed", "Failure", "status"),
    ("Completed", "Insufficient Resources", "status")])
def test_the_fabric_state_and_status_of_each_gpu(state, status, want):
    g = gpu(**{"fabric.state": "X", "fabric.status": "X"})
    g["fabric_state"], g["fabric_status"] = state, status
    got = gh.check_fabric(fabric_facts(gpus=[g]))
    if want is None:
        assert got == []
    elif want == "state":
        assert got == [{"check": "fabric_manager", "gpu": 0, "severity": "error",
                        "detail": "GPU0 (00000000:18:00.0): NVLink fabric state is '%s' (status %s): CUDA will not "
                                  "start on it" % (state, status),
                        "remedy": "start nvidia-fabricmanager (same version as the driver) and wait for the fabric "
                                  "to finish training"}]
    else:
        assert got == [{"check": "fabric_manager", "gpu": 0, "severity": "error",
                        "detail": "GPU0 (00000000:18:00.0): NVLink fabric status is '%s'" % status,
                        "remedy": "read 'journalctl -u nvidia-fabricmanager'; restart it, reset the GPUs"}]


@pytest.mark.parametrize("nvswitch, active, refused", [(True, False, True), (True, True, False), (True, None, False),
                                                       (False, False, False)])
def test_nvswitches_need_the_fabric_manager_running(nvswitch, active, refused):
    assert gh.check_fabric(fabric_facts(nvswitch=nvswitch, fm_active=active)) == ([
        {"check": "fabric_manager", "gpu": None, "severity": "error",
         "detail": "NVSwitch present but nvidia-fabricmanager is not active",
         "remedy": "systemctl enable --now nvidia-fabricmanager (roles/cuda, cuda_fabricmanager: true)"}]
        if refused else [])


FOREIGN_FIX = ("stop it before deploying (SGLang sizes its memory pool from the free memory), or list it in "
               "gpu_health_own_process_patterns if it is meant to share the GPU")


def app(pid, bus, owner, name="python3", mib=100):
    return {"pid": pid, "name": name, "used_memory_mib": mib, "bus_key": bus, "owner": owner}


def test_foreign_processes_are_named_with_their_gpu_and_ours_are_not():
    g0, g1 = gpu(), gpu(index="1", **{"pci.bus_id": "00000000:19:00.0"})
    ours_by_unit = {"cmdline": "python3 -m sglang.launch_server", "cgroup": "0::/system.slice/sglang-default.service\n"}
    ours_by_cmd = {"cmdline": "python3 bench.py --mine", "cgroup": "0::/user.slice\n"}
    theirs = {"cmdline": "python3 train.py", "cgroup": "0::/user.slice\n"}
    facts = {"gpus": [g0, g1], "processes": [
        app(10, g0["bus_key"], ours_by_unit), app(11, g1["bus_key"], ours_by_cmd), app(12, g1["bus_key"], theirs, mib=2048),
        app(13, g0["bus_key"], None, name="java"), app(14, "0000:99:00", theirs)]}
    opts = {"own_units": ["sglang-default"], "own_process_patterns": [r"--mine\b"]}
    assert gh.check_processes(facts, opts) == [
        {"check": "foreign_processes", "gpu": 1, "severity": "error", "detail": "GPU1: python3 (pid 12) holds 2048 MiB",
         "remedy": FOREIGN_FIX},
        {"check": "foreign_processes", "gpu": 0, "severity": "error",
         "detail": "GPU0: java (pid 13), not visible from this host's /proc (another container?) holds 100 MiB",
         "remedy": FOREIGN_FIX},
        {"check": "foreign_processes", "gpu": None, "severity": "error", "detail": "the GPU at PCI 0000:99:00: python3 (pid 14) holds 100 MiB",
         "remedy": FOREIGN_FIX}]
    # (a GPU nvidia-smi's health query did not list is named by its address, not as "GPUNone")
    # with no own units or patterns, ours are foreign too
    assert [p["detail"] for p in gh.check_processes(facts, {})][:2] == [
        "GPU0: python3 (pid 10) holds 100 MiB", "GPU1: python3 (pid 11) holds 100 MiB"]
    assert [p["detail"] for p in gh.check_processes(facts, {"own_units": None, "own_process_patterns": None})][:1] == [
        "GPU0: python3 (pid 10) holds 100 MiB"]


# -- every per-GPU check, word for word, one fault at a time (mutation, issue 37) -----------------------------------
G0 = "GPU0 (00000000:18:00.0)"
HOT = "check the airflow, fans and inlet temperature, the power cables and PSU; the GPU runs far below its clocks until this clears"
COOL = "check the airflow and fans before loading it"
NO_TLIMIT = {"temperature.gpu.tlimit": "[N/A]"}
PER_GPU = [
    # check_memory
    ("memory", {"ecc.mode.current": "Disabled", "ecc.mode.pending": "Disabled"}, {},
     [("ecc_mode", "warning", G0 + " runs with ECC disabled: memory errors go undetected",
       "enable it (nvidia-smi -e 1 -i 0, then reset or reboot), or accept it with gpu_health_ignore: [ecc_mode]")]),
    ("memory", {"ecc.mode.current": "Disabled", "ecc.mode.pending": "Enabled"}, {},
     [("ecc_mode", "warning", G0 + " runs with ECC disabled: memory errors go undetected",
       "enable it (nvidia-smi -e 1 -i 0, then reset or reboot), or accept it with gpu_health_ignore: [ecc_mode]")]),
    ("memory", {"ecc.mode.pending": "Disabled"}, {},
     [("ecc_mode", "warning", G0 + ": ECC mode changes at the next reset (pending off)", RESET + " to apply it")]),
    ("memory", {"ecc.mode.current": "[N/A]", "ecc.mode.pending": "Enabled"}, {}, []),
    ("memory", {"ecc.mode.pending": "[N/A]"}, {}, []),
    ("memory", {"ecc.errors.uncorrected.volatile.total": "2", "ecc.errors.uncorrected.aggregate.total": "2",
                "remapped_rows.correctable": "[N/A]", "remapped_rows.uncorrectable": "[N/A]"}, {},
     [("ecc_errors", "error", G0 + ": 2 uncorrectable ECC error(s) since the last reset: data in GPU memory may be corrupt",
       RESET + "; if they return, drain the host and RMA the GPU")]),
    ("memory", {"ecc.errors.uncorrected.aggregate.total": "3", "remapped_rows.correctable": "[N/A]",
                "remapped_rows.uncorrectable": "[N/A]"}, {},
     [("ecc_errors", "warning", G0 + ": 3 uncorrectable ECC error(s) over its lifetime",
       "watch the count; run 'dcgmi diag -r 3' when the host is drained")]),
    ("memory", {"ecc.errors.uncorrected.aggregate.total": "3", "remapped_rows.correctable": "[N/A]"}, {}, []),
    ("memory", {"ecc.errors.uncorrected.aggregate.total": "3", "remapped_rows.uncorrectable": "[N/A]"}, {}, []),
    ("memory", {"retired_pages.pending": "Yes"}, {},
     [("retired_pages", "error", G0 + ": a retired page is pending (it takes effect at the next reset)", RESET)]),
    ("memory", {"retired_pages.single_bit_ecc.count": "40", "retired_pages.double_bit.count": "20"}, {},
     [("retired_pages", "warning", G0 + ": 60 pages retired (the limit is 64)",
       "plan an RMA: at the limit the GPU can no longer retire bad memory")]),
    ("memory", {"remapped_rows.pending": "Yes"}, {},
     [("remapped_rows", "error", G0 + ": a row remapping is pending: the bad memory row is still in use until the GPU "
       "is reset", RESET)]),
    ("memory", {"remapped_rows.failure": "Yes"}, {},
     [("remapped_rows", "error", G0 + ": a row remapping failed: the GPU has memory it cannot repair",
       "drain the host and RMA the GPU")]),
    ("memory", {"remapped_rows.histogram.none": "2"}, {},
     [("remapped_rows", "warning", G0 + ": 2 memory bank(s) have no spare rows left",
       "plan an RMA: the next error in those banks cannot be repaired")]),
    ("memory", {"gpu_recovery_action": "GPU Reset"}, {},
     [("recovery_action", "error", G0 + ": the driver asks for a recovery action: GPU Reset",
       "do it (GPU reset: nvidia-smi -r -i 0; node reboot; drain): nothing runs reliably until then")]),
    ("memory", {"gpu_recovery_action": "none"}, {}, []),
    ("memory", {"gpu_recovery_action": "[N/A]"}, {}, []),
    # check_clocks
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons.active": "0x40", "temperature.gpu": "80"}), {},
     [("clock_events", "error", G0 + ": hardware thermal slowdown (the GPU is over its temperature limit) active (80 C)",
       HOT)]),
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons.active": "0xC8"}), {},
     [("clock_events", "error", G0 + ": hardware thermal slowdown (the GPU is over its temperature limit) and hardware "
       "power brake (the chassis or power supply asked the GPU to slow down) active (30 C)", HOT)]),
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons.active": "0x8"}), {},
     [("clock_events", "error", G0 + ": hardware slowdown (the board cut its clocks: over-temperature or a "
       "power-supply signal) active (30 C)", HOT)]),
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons.active": "0x20"}), {},
     [("clock_events", "warning", G0 + ": software thermal slowdown (the driver lowers clocks to stay under the "
       "thermal target) is active (30 C)", "improve cooling; throughput drops while it lasts")]),
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons_counters.hw_thermal_slowdown": "2500000",
                                  "clocks_event_reasons_counters.hw_power_brake_slowdown": "100000"}), {},
     [("clock_events", "warning", G0 + " was slowed by hardware since the driver loaded: hw_thermal_slowdown 2.5 s, "
       "hw_power_brake_slowdown 0.1 s", "check cooling and power under load (not active now)")]),
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons_counters.hw_power_brake_slowdown": "3000000",
                                  "clocks_event_reasons_counters.sw_thermal_slowdown": "9000000"}), {},
     [("clock_events", "warning", G0 + " was slowed by hardware since the driver loaded: hw_power_brake_slowdown 3.0 s",
       "check cooling and power under load (not active now)")]),
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons_counters.hw_thermal_slowdown": "2500000",
                                  "clocks_event_reasons.active": "0x80"}), {},
     [("clock_events", "error", G0 + ": hardware power brake (the chassis or power supply asked the GPU to slow down) "
       "active (30 C)", HOT)]),
    ("clocks", {"temperature.gpu.tlimit": "4"}, {}, [("temperature", "warning", G0 + " is 30 C, 4 C from its slowdown limit", COOL)]),
    ("clocks", {"temperature.gpu.tlimit": "5"}, {}, []),
    ("clocks", {"temperature.gpu.tlimit": "0"}, {}, [("temperature", "warning", G0 + " is 30 C, 0 C from its slowdown limit", COOL)]),
    ("clocks", {"temperature.gpu.tlimit": "-3"}, {}, [("temperature", "warning", G0 + " is 30 C, 3 C past its slowdown limit", COOL)]),
    ("clocks", {"temperature.gpu.tlimit": "4"}, {"min_tlimit_margin": None}, []),
    ("clocks", {"temperature.gpu.tlimit": "7"}, {"min_tlimit_margin": 8}, [("temperature", "warning", G0 + " is 30 C, 7 C from its slowdown limit", COOL)]),
    ("clocks", dict(NO_TLIMIT, **{"temperature.gpu": "85"}), {}, [("temperature", "warning", G0 + " is 85 C (limit set: 85 C)", COOL)]),
    ("clocks", dict(NO_TLIMIT, **{"temperature.gpu": "84"}), {}, []),
    ("clocks", dict(NO_TLIMIT, **{"temperature.gpu": "86"}), {"max_temperature": 87}, []),
    ("clocks", dict(NO_TLIMIT, **{"temperature.gpu": "130"}), {"max_temperature": None}, []),  # no limit set
    # out of the physical range: no temperature (check_readings' error, below), not a crash
    ("clocks", dict(NO_TLIMIT, **{"temperature.gpu": "999"}), {"max_temperature": None}, []),
    ("clocks", {"temperature.gpu.tlimit": "0"}, {"min_tlimit_margin": None}, []),
    ("clocks", dict(NO_TLIMIT, **{"clocks_event_reasons_counters.hw_power_brake_slowdown": "1050000"}), {},
     [("clock_events", "warning", G0 + " was slowed by hardware since the driver loaded: hw_power_brake_slowdown 1.1 s",
       "check cooling and power under load (not active now)")]),
    # check_pcie
    ("pcie", {"pcie.link.width.current": "8"}, {},
     [("pcie_link", "error", G0 + " runs at PCIe x8, the card can do x16: the link trained below what the slot allows; "
       "host-device copies and every all-reduce that crosses PCIe slow down by up to 2x",
       "reseat the card, check the riser/cable, and reboot")]),
    ("pcie", {"pcie.link.width.current": "4", "pcie.link.width.max": "4", "device_max": 16}, {},
     [("pcie_link", "error", G0 + " runs at PCIe x4, the card can do x16: the slot (or its bifurcation setting) limits "
       "it; host-device copies and every all-reduce that crosses PCIe slow down by up to 4x",
       "move the card to an x16 slot or set the slot's lanes to x16 in the BIOS")]),
    ("pcie", {"pcie.link.width.current": "8", "pcie.link.width.max": "8"}, {"expected_pcie_width": 16},
     [("pcie_link", "error", G0 + " runs at PCIe x8, expected x16: the slot (or its bifurcation setting) limits "
       "it; host-device copies and every all-reduce that crosses PCIe slow down by up to 2x",
       "move the card to an x16 slot or set the slot's lanes to x16 in the BIOS")]),
    ("pcie", {"pcie.link.width.current": "8", "pcie.link.width.max": "8", "device_max": 16}, {"expected_pcie_width": 8}, []),
    ("pcie", {"pcie.link.width.current": "16", "pcie.link.width.max": "16", "device_max": 16}, {}, []),
    ("pcie", {"pcie.link.gen.max": "4", "pcie.link.gen.current": "4"}, {},
     [("pcie_link", "warning", G0 + ": the host allows PCIe Gen4, the card can do Gen5",
       "use a Gen5 slot (check the BIOS link speed setting)")]),
    ("pcie", {"pcie.link.gen.current": "3", "clocks_event_reasons.active": "0x0"}, {},
     [("pcie_link", "warning", G0 + ": PCIe Gen3 while busy, Gen5 possible", "check the slot, riser and BIOS link speed")]),
    ("pcie", {"pcie.link.gen.current": "3", "clocks_event_reasons.active": "0x1"}, {}, []),
    ("pcie", {"pcie.link.gen.current": "3", "clocks_event_reasons.active": "[N/A]"}, {}, []),
    ("pcie", {"pcie.link.gen.max": "4", "pcie.link.gen.gpumax": "4", "pcie.link.gen.current": "4"}, {"expected_pcie_gen": 5},
     [("pcie_link", "error", G0 + ": PCIe Gen4 at most, Gen5 expected",
       "fix the slot or BIOS link speed, or set gpu_health_expected_pcie_gen")]),
    ("pcie", {"pcie.link.gen.max": "5"}, {"expected_pcie_gen": 5}, []),
    # check_modes
    ("modes", {"persistence_mode": "Disabled"}, {},
     [("persistence_mode", "warning", G0 + ": persistence mode is off: the driver tears the GPU down between programs "
       "and the first CUDA call is slow", "systemctl enable --now nvidia-persistenced (roles/cuda, cuda_persistenced: true)")]),
    ("modes", {"mig.mode.current": "Enabled"}, {},
     [("mig_mode", "error", G0 + ": MIG is enabled: SGLang needs whole GPUs", "nvidia-smi -mig 0 -i 0 and reset the GPU")]),
]


@pytest.mark.parametrize("which, fields, opts, want", PER_GPU)
def test_each_per_gpu_check_word_for_word(which, fields, opts, want):
    fields = dict(fields)
    device_max = fields.pop("device_max", None)
    g = gpu(**fields)
    g["pcie_width_device_max"] = device_max
    opts = dict(gh.DEFAULTS, **opts)
    got = {"memory": lambda: gh.check_memory(g), "clocks": lambda: gh.check_clocks(g, opts),
           "pcie": lambda: gh.check_pcie(g, opts), "modes": lambda: gh.check_modes(g)}[which]()
    assert got == [{"check": c, "gpu": 0, "severity": s, "detail": d, "remedy": r} for c, s, d, r in want]


def xid_event(pci, code, pid="<unknown>", process=None, message="driver text"):
    return {"pci": pci, "code": code, "pid": pid, "process": process, "message": message}


def test_xids_are_grouped_by_address_and_code_counted_and_named_with_the_last_process():
    g1 = gpu(index="1", **{"pci.bus_id": "00000000:3B:00.0"})
    facts = {"kernel_log_source": "dmesg", "kernel_log_errors": ["journalctl: not installed"], "gpus": [gpu(), g1],
             "xids": [xid_event("0000:3b:00", 13, "41822", "python3", "first"), xid_event("0000:18:00", 79),
                      xid_event("0000:3b:00", 13, "41900", None, "second"), xid_event("0000:3b:00", 13, "7", "a", "last"),
                      xid_event("0000:5e:00", 31, "<unknown>")]}
    got = gh.check_xids(facts)
    app = gh.xid_mod.describe(13)
    assert [(p["check"], p["gpu"], p["severity"]) for p in got] == [("xid", 0, "error"), ("xid", 1, "warning"),
                                                                    ("xid", None, "warning")]
    assert got[0]["detail"] == ("GPU0 (PCI 0000:18:00): Xid 79 x1 since the driver loaded, GPU has fallen off the bus "
                                "(it stopped answering on PCIe) [hardware]; driver said: driver text")
    assert got[1]["detail"] == ("GPU1 (PCI 0000:3b:00): Xid 13 x3 since the driver loaded, %s [%s] (last in pid 7, a); "
                                "driver said: last" % (app[1], app[0]))
    assert got[1]["remedy"] == app[2].replace("{gpu}", "1")
    assert got[2]["detail"].startswith("PCI 0000:5e:00 (not visible to nvidia-smi): Xid 31 x1 since the driver loaded, ")
    assert got[2]["remedy"] == gh.xid_mod.describe(31)[2].replace("{gpu}", "0000:5e:00")
    facts["xids"] = [xid_event("0000:18:00", 13, "41900", None, "m")]
    assert gh.check_xids(facts)[0]["detail"].endswith("[%s] (last in pid 41900); driver said: m" % app[0])
    facts["xids"] = [xid_event("0000:18:00", 13, None, "x", "m")]
    assert gh.check_xids(facts)[0]["detail"].endswith("[%s]; driver said: m" % app[0])


@pytest.mark.parametrize("source, errors, warned", [(None, ["dmesg: denied", "journalctl: not installed"], True),
                                                    (None, [], False), ("dmesg", ["journalctl: not installed"], False)])
def test_an_unreadable_kernel_log_is_one_warning_and_no_xid_verdict(source, errors, warned):
    facts = {"kernel_log_source": source, "kernel_log_errors": errors, "gpus": [gpu()],
             "xids": [xid_event("0000:18:00", 79)] if source else []}
    got = gh.check_xids(facts)
    if warned:
        assert got == [{"check": "kernel_log", "gpu": None, "severity": "warning",
                        "detail": "kernel log not readable (dmesg: denied; journalctl: not installed): Xid events not "
                                  "checked",
                        "remedy": "run the gate with become: true (dmesg needs root where kernel.dmesg_restrict=1)"}]
    else:
        assert [p["check"] for p in got] == (["xid"] if source else [])


# -- the readers of nvidia-smi's values, the order of findings, the whole verdict (mutation, issue 37) ---------------
@pytest.mark.parametrize("field, text, number", [
    ("temperature.gpu", "75", 75), ("power.draw", " 700.50 W", 700.5), ("temperature.gpu.tlimit", "-3", -3),
    ("clocks_event_reasons_counters.hw_thermal_slowdown", "41250000 us", 41250000), ("power.draw", "", None),
    ("power.draw", None, None), ("power.draw", "[N/A]", None), ("power.draw", "[Not Supported]", None)])
def test_numbers_are_read_whole_with_their_unit_and_missing_is_none(field, text, number):
    broken = []
    assert smi.reading({field: text}, field, broken) == number and broken == []


@pytest.mark.parametrize("text, flag", [
    ("Yes", True), ("Active", True), ("Enabled", True), ("TRUE", True), (" true ", True), ("No", False),
    ("Not Active", False), ("disabled", False), ("False", False), ("maybe", None), (None, None), ("[N/A]", None)])
def test_flags_read_yes_active_enabled_true_and_their_opposites(text, flag):
    assert gh._yes(text) is flag


def test_findings_are_ordered_errors_first_then_by_check_then_host_wide_before_each_gpu():
    ps = [gh.problem("no_such_check", "error", "a", "r", 0), gh.problem("xid", "error", "b", "r", 1),
          gh.problem("xid", "error", "c", "r", 0), gh.problem("xid", "error", "d", "r"),
          gh.problem("gpu_count", "error", "e", "r"), gh.problem("nvidia_smi", "warning", "f", "r")]
    assert [p["detail"] for p in gh.order_problems(ps)] == ["e", "d", "c", "b", "a", "f"]


def test_health_rows_are_read_by_the_fields_given_and_sorted_by_index():
    row = dict(HEALTHY)
    fields = list(row)

    def line(index, bus):
        return ", ".join(str(dict(row, index=index, **{"pci.bus_id": bus})[f]) for f in fields)
    text = "\n".join([line("1", "00000000:19:00.0"), line("[N/A]", "00000000:1A:00.0"), line("0", "00000000:18:00.0")])
    got = gh.parse_health_csv(text, fields)
    assert [(g["index"], g["pci_bus_id"]) for g in got] == [
        (None, "00000000:1A:00.0"), (0, "00000000:18:00.0"), (1, "00000000:19:00.0")]
    header = ", ".join(fields) + "\n"
    assert [g["index"] for g in gh.parse_health_csv(header + text)] == [None, 0, 1]


def scripted(answers):
    """A runner that answers the health queries in turn: (rc, out, err) each, and records the fields asked."""
    asked = []

    def run(argv):
        asked.append(argv[1][len("--query-gpu="):].split(","))
        return answers[len(asked) - 1]
    return run, asked


def test_the_health_query_drops_each_field_the_driver_refuses_and_asks_again():
    header = ", ".join(gh.HEALTH_FIELDS[:3]) + "\n0, NVIDIA H200, 00000000:18:00.0\n"
    run, asked = scripted([(2, 'Field "fabric.state" is not a valid field to query.\n', ""),
                           (2, "", 'Field "gpu_recovery_action" is not a valid field to query.\n'), (0, header, "")])
    gpus, rc, _out, _err, dropped = gh.query_health(run, "/usr/bin/nvidia-smi")
    assert dropped == ["fabric.state", "gpu_recovery_action"] and rc == 0 and [g["index"] for g in gpus] == [0]
    assert asked[0] == gh.HEALTH_FIELDS and asked[2] == [f for f in gh.HEALTH_FIELDS if f not in dropped]
    # refused: index (it names the GPUs), a field not asked, or a message with rc 0: no retry
    for answer in [(2, 'Field "index" is not a valid field to query.\n', ""), (2, 'Field "power.limit" is not a '
                   'valid field to query.\n', ""), (6, "No devices were found\n", "")]:
        run, asked = scripted([answer, (0, header, "")])
        assert gh.query_health(run, "/usr/bin/nvidia-smi") == (None, answer[0], answer[1], answer[2], [])
        assert len(asked) == 1
    run, asked = scripted([(0, header + 'Field "fabric.state" is not a valid field to query.\n', "")])
    with pytest.raises(smi.Unparseable, match="row 2 has 1 fields, 3 asked for"):  # rc 0 and a stray line: garbage
        gh.query_health(run, "/usr/bin/nvidia-smi")
    assert len(asked) == 1


def test_the_verdict_of_a_host_without_a_working_nvidia_smi_is_its_reason_and_the_xids():
    facts = {"smi_error": "no NVIDIA driver loaded", "kernel_log_source": "dmesg", "kernel_log_errors": [], "gpus": [],
             "xids": [xid_event("0000:18:00", 79)]}
    got = gh.evaluate(facts, {})
    assert got[0] == {"check": "nvidia_smi", "gpu": None, "severity": "error", "detail": "no NVIDIA driver loaded",
                      "remedy": "install or repair the driver (roles/cuda) and reboot; see 'dmesg | grep NVRM'"}
    assert [p["check"] for p in got] == ["nvidia_smi", "xid"]


def test_the_verdict_names_each_dropped_field_and_the_fabric_s_findings():
    facts = {"smi_error": None, "dropped_fields": ["fabric.state", "gpu_recovery_action"], "gpus": [gpu()],
             "pci_devices": [], "driver_version": "580.95.05", "cuda_driver_version": "13.0", "nvcc": None,
             "processes": [], "nvlink": None, "nvswitch": False, "fabricmanager_active": None, "kernel_log_source": "dmesg",
             "kernel_log_errors": [], "xids": [],
             "pcie_fabric": {"applies": True, "why": "", "gpus": [], "iommu": None, "p2p": {}, "lspci_error": "no lspci",
                             "p2p_error": None}}
    got = gh.evaluate(facts, {})
    assert [(p["check"], p["severity"], p["detail"], p["remedy"]) for p in got] == [
        ("nvidia_smi", "warning", "this driver does not know the field fabric.state: its check is skipped",
         "upgrade the driver for the full check"),
        ("nvidia_smi", "warning", "this driver does not know the field gpu_recovery_action: its check is skipped",
         "upgrade the driver for the full check"),
        ("pcie_acs", "warning", "ACS not checked: no lspci",
         "install pciutils (apt-get install pciutils) so the gate can read the bridges")]


def test_a_gpu_without_a_name_never_matches_a_model():
    facts = {"gpus": [gpu(name=None)], "pci_devices": []}
    assert [p["detail"] for p in gh.check_inventory(facts, {"expected_model": "x"})] == [
        "GPU0 (00000000:18:00.0) is 'None', expected 'x'"]


def test_a_health_row_is_read_field_by_field():
    row = dict(HEALTHY, **{"ecc.errors.corrected.volatile.total": "7", "retired_pages.single_bit_ecc.count": "2",
                           "retired_pages.double_bit.count": "1", "retired_pages.pending": "No",
                           "remapped_rows.histogram.low": "3", "clocks_event_reasons.active": "0x00000000000000A5",
                           "clocks_event_reasons_counters.sw_thermal_slowdown": "12",
                           "clocks_event_reasons.sw_power_cap": "Not Active", "temperature.memory": "41",
                           "pcie.link.gen.hostmax": "4", "fabric.state": "Completed", "fabric.status": "Success",
                           "gpu_recovery_action": " None "})
    got = gh.normalize_health_row(row)
    own = dict((k, v) for k, v in got.items() if k not in gh.smi_mod.normalize_gpu(row))
    assert own == {
        "bus_key": "0000:18:00", "driver_version": "580.95.05", "ecc_mode_current": True, "ecc_mode_pending": True,
        "ecc_uncorrected_volatile": 0, "ecc_uncorrected_aggregate": 0, "ecc_corrected_volatile": 7, "retired_sbe": 2,
        "retired_dbe": 1, "retired_pending": False, "remap_correctable": 0, "remap_uncorrectable": 0,
        "remap_pending": False, "remap_failure": False, "remap_banks_low": 3, "remap_banks_none": 0,
        "clock_events_mask": "0x00000000000000A5",
        "clock_events": {"gpu_idle": True, "applications_clocks_setting": False, "sw_power_cap": False,
                         "hw_slowdown": False, "sync_boost": False, "sw_thermal_slowdown": True,
                         "hw_thermal_slowdown": False, "hw_power_brake_slowdown": True, "display_clock_setting": False},
        "clock_event_counters_us": {"hw_thermal_slowdown": 0, "hw_power_brake_slowdown": 0, "sw_thermal_slowdown": 12},
        "pcie_gen_current": 5, "pcie_gen_max": 5, "pcie_gen_gpumax": 5, "pcie_gen_hostmax": 4, "pcie_width_current": 16,
        "pcie_width_max": 16, "pcie_width_device_max": None, "temperature_c": 30, "temperature_tlimit_c": 57,
        "temperature_memory_c": 41, "power_draw_w": 75.5, "pstate": "P0", "recovery_action": "None", "mig_mode": False,
        "fabric_state": "Completed", "fabric_status": "Success", "broken_readings": [], "smi_errors": []}
    assert got["index"] == 0 and got["pci_bus_id"] == "00000000:18:00.0"


@pytest.mark.parametrize("mask, fields, events", [
    ("0x8", {}, {"hw_slowdown": True, "gpu_idle": False}),
    ("0x8", {"clocks_event_reasons.hw_slowdown": "Not Active"}, {"hw_slowdown": False}),  # a named field wins
    ("0x0", {"clocks_event_reasons.gpu_idle": "Active"}, {"gpu_idle": True}),
    ("[N/A]", {}, {"gpu_idle": None, "hw_slowdown": None}), ("0xZZ", {}, {"gpu_idle": None}),
    ("8", {}, {"hw_slowdown": None})])
def test_clock_events_come_from_the_named_fields_else_the_mask(mask, fields, events):
    got = gh.normalize_health_row(dict(HEALTHY, **dict(fields, **{"clocks_event_reasons.active": mask})))
    assert dict((k, got["clock_events"][k]) for k in events) == events


def test_xids_of_one_address_are_ordered_by_code_as_numbers_and_a_lost_gpu_s_remedy_names_its_address():
    facts = {"kernel_log_source": "dmesg", "kernel_log_errors": [], "gpus": [gpu()],
             "xids": [xid_event("0000:18:00", 119), xid_event("0000:18:00", 13), xid_event("0000:3b:00", 48)]}
    got = gh.check_xids(facts)
    assert [p["detail"].split(": Xid ")[1].split(" ")[0] for p in got] == ["13", "119", "48"]
    assert "nvidia-smi -r -i 0000:3b:00" in got[2]["remedy"] and got[2]["gpu"] is None
