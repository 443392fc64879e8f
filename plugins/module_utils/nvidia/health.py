# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU health gate: read a host's GPUs (nvidia-smi, sysfs, /proc, the kernel log) and judge each check.

Target-side code: Python standard library only, Python >= 3.8. :func:`collect` gathers raw facts through an
injected ``run(argv) -> (rc, out, err)`` and ``which(name)``; :func:`evaluate` turns facts into problems, each
``{check, gpu, severity, detail, remedy}``. Severity ``error`` fails the gate, ``warning`` is printed and passes.
The parsers read the real formats kept in ``tests/fixtures/nvidia/`` (``h200-health/`` is a real H200).
"""

from __future__ import annotations

import csv
import os
import re

from ansible_collections.llmserve.sglang.plugins.module_utils.host import ownership
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import fabric as fabric_mod
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as smi_mod
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import xid as xid_mod

ERROR = "error"
WARNING = "warning"

# One --query-gpu call reads every per-GPU fact the checks need. Fields an older driver does not know are
# dropped and the query retried (nvidia_smi.invalid_field names them); their checks then report "not checked".
HEALTH_FIELDS = [
    "index", "name", "pci.bus_id", "uuid", "driver_version", "persistence_mode",
    "ecc.mode.current", "ecc.mode.pending", "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.uncorrected.aggregate.total", "ecc.errors.corrected.volatile.total",
    "retired_pages.single_bit_ecc.count", "retired_pages.double_bit.count", "retired_pages.pending",
    "remapped_rows.correctable", "remapped_rows.uncorrectable", "remapped_rows.pending", "remapped_rows.failure",
    "remapped_rows.histogram.low", "remapped_rows.histogram.none",
    "clocks_event_reasons.active", "clocks_event_reasons.gpu_idle", "clocks_event_reasons.hw_slowdown",
    "clocks_event_reasons.hw_thermal_slowdown", "clocks_event_reasons.hw_power_brake_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown", "clocks_event_reasons.sw_power_cap",
    "clocks_event_reasons_counters.hw_thermal_slowdown", "clocks_event_reasons_counters.hw_power_brake_slowdown",
    "clocks_event_reasons_counters.sw_thermal_slowdown",
    "pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.gen.gpumax", "pcie.link.gen.hostmax",
    "pcie.link.width.current", "pcie.link.width.max",
    "temperature.gpu", "temperature.gpu.tlimit", "temperature.memory", "power.draw", "memory.used",
    "memory.total", "compute_cap", "pstate", "gpu_recovery_action", "mig.mode.current", "fabric.state",
    "fabric.status",
]
APP_FIELDS = ["pid", "process_name", "used_memory", "gpu_bus_id"]

# NVML clocks event reason bits (nvml.h nvmlClocksEventReason*): used when a named field is not supported.
CLOCK_BITS = {
    "gpu_idle": 0x1, "applications_clocks_setting": 0x2, "sw_power_cap": 0x4, "hw_slowdown": 0x8,
    "sync_boost": 0x10, "sw_thermal_slowdown": 0x20, "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80, "display_clock_setting": 0x100,
}
CLOCK_ERRORS = {
    "hw_slowdown": "hardware slowdown (the board cut its clocks: over-temperature or a power-supply signal)",
    "hw_thermal_slowdown": "hardware thermal slowdown (the GPU is over its temperature limit)",
    "hw_power_brake_slowdown": "hardware power brake (the chassis or power supply asked the GPU to slow down)",
}
CLOCK_WARNINGS = {
    "sw_thermal_slowdown": "software thermal slowdown (the driver lowers clocks to stay under the thermal target)",
}
# Per-direction PCIe bandwidth of an x16 link, GB/s, by generation (after line coding).
PCIE_X16_GBPS = {1: 4.0, 2: 8.0, 3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}

ALL_CHECKS = [
    "nvidia_smi", "gpu_count", "gpu_model", "driver", "toolkit", "ecc_mode", "ecc_errors", "retired_pages",
    "remapped_rows", "recovery_action", "clock_events", "temperature", "pcie_link", "persistence_mode",
    "mig_mode", "foreign_processes", "nvlink", "fabric_manager", "pcie_acs", "iommu", "gpu_p2p", "gpu_firmware", "xid",
    "gpu_answers", "kernel_log", "dcgm_diag", "nccl_allreduce",
]

DEFAULTS = {
    "expected_count": 0, "expected_model": "", "expected_driver_branch": "", "expected_cuda": "",
    "expected_pcie_width": 0, "expected_pcie_gen": 0, "max_temperature": 85, "min_tlimit_margin": 5,
    "own_units": ["sglang-*.service", "sglang-router*.service"], "own_process_patterns": [],
}


def problem(check, severity, detail, remedy, gpu=None):
    return {"check": check, "gpu": gpu, "severity": severity, "detail": detail, "remedy": remedy}


def _yes(value):
    """``Yes``/``Active``/``Enabled`` -> True, ``No``/``Not Active``/``Disabled`` -> False, missing -> None."""
    if value is None or smi_mod.is_missing(value):
        return None
    text = value.strip().lower()
    if text in ("yes", "active", "enabled", "true"):
        return True
    if text in ("no", "not active", "disabled", "false"):
        return False
    return None


def _text(value):
    return None if value is None or smi_mod.is_missing(value) else value.strip()


# What nvidia-smi prints in a field of a GPU that answers with errors (a locked GPU, one whose firmware stopped).
SMI_ERROR_VALUES = ("[Unknown Error]", "[GPU requires reset]", "[GPU is lost]", "ERR!", "[Error]")
SMI_ERROR_RE = re.compile(r"Unable to determine the device handle for GPU|GPU requires reset|GPU is lost|Unknown Error")


def normalize_health_row(row):
    """One ``--query-gpu=HEALTH_FIELDS`` row -> typed per-GPU facts: gpu_facts' own fields (nvidia/smi.normalize_gpu)
    plus the health counters. A field that is no number refuses the reading (nvidia/smi.Unparseable); one outside its
    physical range (a GPU at -40 C, NaN or 1e9 C) is null and listed in ``broken_readings``: a problem of its own; the fields it answered with an error
    (``[Unknown Error]``, ``ERR!``: read as missing) are listed in ``smi_errors``."""
    broken = []

    def _int(field):
        value = smi_mod.reading(row, field, broken)
        return int(value) if value is not None else None

    def _float(field):
        value = smi_mod.reading(row, field, broken)
        return float(value) if value is not None else None

    active = row.get("clocks_event_reasons.active")
    mask = int(active, 16) if active and re.match(r"^0x[0-9a-fA-F]+$", active) else None
    events = {}
    for name, bit in CLOCK_BITS.items():
        named = _yes(row.get("clocks_event_reasons." + name))
        events[name] = named if named is not None else (bool(mask & bit) if mask is not None else None)
    counters = {}
    for name in ("hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"):
        counters[name] = _int("clocks_event_reasons_counters." + name)
    bus = row.get("pci.bus_id")
    gpu = smi_mod.normalize_gpu(row, broken)
    gpu.update({
        "bus_key": xid_mod.bus_key(bus),
        "driver_version": _text(row.get("driver_version")),
        "ecc_mode_current": _yes(row.get("ecc.mode.current")),
        "ecc_mode_pending": _yes(row.get("ecc.mode.pending")),
        "ecc_uncorrected_volatile": _int("ecc.errors.uncorrected.volatile.total"),
        "ecc_uncorrected_aggregate": _int("ecc.errors.uncorrected.aggregate.total"),
        "ecc_corrected_volatile": _int("ecc.errors.corrected.volatile.total"),
        "retired_sbe": _int("retired_pages.single_bit_ecc.count"),
        "retired_dbe": _int("retired_pages.double_bit.count"),
        "retired_pending": _yes(row.get("retired_pages.pending")),
        "remap_correctable": _int("remapped_rows.correctable"),
        "remap_uncorrectable": _int("remapped_rows.uncorrectable"),
        "remap_pending": _yes(row.get("remapped_rows.pending")),
        "remap_failure": _yes(row.get("remapped_rows.failure")),
        "remap_banks_low": _int("remapped_rows.histogram.low"),
        "remap_banks_none": _int("remapped_rows.histogram.none"),
        "clock_events_mask": active,
        "clock_events": events,
        "clock_event_counters_us": counters,
        "pcie_gen_current": _int("pcie.link.gen.current"),
        "pcie_gen_max": _int("pcie.link.gen.max"),
        "pcie_gen_gpumax": _int("pcie.link.gen.gpumax"),
        "pcie_gen_hostmax": _int("pcie.link.gen.hostmax"),
        "pcie_width_current": _int("pcie.link.width.current"),
        "pcie_width_max": _int("pcie.link.width.max"),
        "pcie_width_device_max": None,
        "temperature_c": _int("temperature.gpu"),
        "temperature_tlimit_c": _int("temperature.gpu.tlimit"),
        "temperature_memory_c": _int("temperature.memory"),
        "power_draw_w": _float("power.draw"),
        "pstate": _text(row.get("pstate")),
        "recovery_action": _text(row.get("gpu_recovery_action")),
        "mig_mode": _yes(row.get("mig.mode.current")),
        "fabric_state": _text(row.get("fabric.state")),
        "fabric_status": _text(row.get("fabric.status")),
        "broken_readings": broken,
        "smi_errors": [],
    })
    return gpu


def parse_health_csv(text, fields=None):
    """``--query-gpu=HEALTH_FIELDS --format=csv[,noheader],nounits`` -> list of per-GPU facts, by index.

    Each GPU's ``smi_errors`` names the fields it answered with an error (parse_csv reads those as missing)."""
    gpus = [normalize_health_row(row) for row in smi_mod.parse_csv(text, fields)]
    lines = [line for line in smi_mod.strip_ansi(text or "").splitlines() if line.strip()]
    rows = list(csv.reader(lines, skipinitialspace=True))
    names = fields or [re.sub(r"\s*\[[^\]]*\]\s*$", "", name).strip() for name in (rows.pop(0) if rows else [])]
    for gpu, row in zip(gpus, rows):
        gpu["smi_errors"] = sorted(name for name, cell in zip(names, row) if cell.strip() in SMI_ERROR_VALUES)
    return sorted(gpus, key=lambda gpu: gpu["index"] if gpu["index"] is not None else 0)


def parse_nvlink_status(text):
    """``nvidia-smi nvlink --status`` -> ``{gpu_index: {"up": n, "down": m}}``.

    Format: ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)`` then one ``\\t Link 3: 26.562 GB/s`` (or
    ``<inactive>``) line per link. Prints nothing on a GPU without NVLink.
    """
    links = {}
    current = None
    for line in smi_mod.strip_ansi(text).splitlines():
        gpu = re.match(r"^GPU (\d+):", line)
        if gpu:
            current = int(gpu.group(1))
            links[current] = {"up": 0, "down": 0}
            continue
        link = re.match(r"^\s+Link (\d+):\s*(.*)$", line)
        if link and current is not None:
            state = link.group(2).strip().lower()
            links[current]["down" if (not state or "inactive" in state or "disabled" in state) else "up"] += 1
    return links


def read_sysfs_pcie(bus_id, sysfs):
    """The device's own PCIe link (LnkCap/LnkSta) from the sysfs PCI devices directory ``sysfs`` (collect's): ``{max_width, width}`` or None.

    NVML's ``pcie.link.width.max`` is the maximum *with this slot*: a x16 card in a x4 slot reads max 4, current 4.
    sysfs ``max_link_width`` is the card's capability, which shows the slot limit. NVIDIA functions only.
    """
    if not bus_id:
        return None
    parts = bus_id.lower().split(":")
    if len(parts) != 3:
        return None
    slot = "%04x:%s:%s" % (int(parts[0], 16) & 0xFFFF, parts[1], parts[2])
    path = os.path.join(sysfs, slot)
    try:
        with open(os.path.join(path, "vendor")) as handle:
            if handle.read().strip().lower() != "0x10de":
                return None
        with open(os.path.join(path, "max_link_width")) as handle:
            max_width = int(handle.read().strip())
        with open(os.path.join(path, "current_link_width")) as handle:
            width = int(handle.read().strip())
    except (IOError, OSError, ValueError):
        return None
    return {"max_width": max_width, "width": width}


def is_own(owner, own_units, own_patterns):
    """An app's owner (host/ownership.identity) is ours by its unit (glob) or its command line (regex)."""
    return ownership.in_unit(owner, own_units) or ownership.cmdline_matches(owner, own_patterns)


def query_health(run, smi):
    """Run the health query; drop fields the driver does not know. ``(gpus, rc, out, err, dropped)``."""
    fields = list(HEALTH_FIELDS)
    dropped = []
    while True:
        rc, out, err = run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,nounits"])
        bad = smi_mod.invalid_field((out or "") + (err or ""))
        if rc != 0 and bad and bad in fields and bad != "index":
            fields.remove(bad)
            dropped.append(bad)
            continue
        if rc != 0:
            return None, rc, out, err, dropped
        return parse_health_csv(out), rc, out, err, dropped


def collect(run, which, nvidia_smi=None, sysfs="/sys/bus/pci/devices", proc_root="/proc", kernel_log=True,
            nvcc_path=None, pcie_fabric=True, iommu_groups="/sys/kernel/iommu_groups", known=None):
    """Gather the raw facts. Never raises; a failing tool is recorded in ``facts['errors']``.

    ``known``: the GPU facts this run already gathered (``ansible_facts.gpu``, module gpu_facts). The health query
    always runs (its fields are the gate's own, and it fails on a driver/library mismatch); when it reports the
    driver those facts were read under, the driver and CUDA versions, ``topo -m``, the compute apps and nvcc are
    taken from them instead of asking nvidia-smi again (``facts['reused']`` names what was)."""
    facts = {"nvidia_smi": None, "smi_error": None, "driver_version": None, "cuda_driver_version": None,
             "nvcc": None, "gpus": [], "dropped_fields": [], "pci_devices": [], "topology": None,
             "processes": [], "nvlink": None, "fabricmanager_active": None, "kernel_log_source": None,
             "kernel_log_errors": [], "xids": [], "firmware": [], "nvswitch": False, "pcie_fabric": None}
    facts["pci_devices"] = smi_mod.pci_nvidia_devices(sysfs)
    facts["nvswitch"] = any(dev["class"].startswith("0x0680") for dev in facts["pci_devices"])
    facts["reused"] = []
    smi = nvidia_smi if nvidia_smi else which("nvidia-smi")
    if kernel_log:
        _collect_kernel_log(run, which, facts)
    if not smi or not os.path.exists(smi):
        facts["smi_error"] = smi_mod.REASON_NO_SMI if not nvidia_smi else "nvidia-smi not found at %s" % nvidia_smi
        return facts
    facts["nvidia_smi"] = smi
    try:
        gpus, rc, out, err, dropped = query_health(run, smi)
    except smi_mod.Unparseable as exc:  # garbage is a broken nvidia-smi, never GPUs
        facts["smi_error"] = str(exc)
        return facts
    facts["dropped_fields"] = dropped
    if gpus is None:
        facts["smi_error"] = smi_mod.failure_reason(rc, out, err)
        return facts
    reuse = _reusable(known, gpus)
    if reuse:
        facts["driver_version"], facts["cuda_driver_version"] = known["driver_version"], known.get("cuda_driver_version")
        facts["reused"].append("driver and CUDA versions")
    else:
        rc, out, err = run([smi])
        if rc != 0:
            facts["smi_error"] = smi_mod.failure_reason(rc, out, err)
            return facts
        facts["driver_version"], facts["cuda_driver_version"] = smi_mod.parse_versions(out)
    nvcc = None if reuse and "nvcc" in known else smi_mod.find_nvcc(which, nvcc_path)
    if nvcc:
        rc, out, err = run([nvcc, "--version"])
        facts["nvcc"] = smi_mod.parse_nvcc(out) if rc == 0 else None
    elif reuse and known.get("nvcc"):
        facts["nvcc"] = dict((k, v) for k, v in known["nvcc"].items() if k != "path")
    for gpu in gpus:
        link = read_sysfs_pcie(gpu["pci_bus_id"], sysfs)
        gpu["pcie_width_device_max"] = link["max_width"] if link else None
    facts["gpus"] = gpus
    if reuse and known.get("topology") is not None:
        facts["topology"] = known["topology"]
        facts["reused"].append("topology")
    else:
        rc, out, err = run([smi, "topo", "-m"])
        facts["topology"] = smi_mod.parse_topology(out) if rc == 0 else None
    if reuse and isinstance(known.get("processes"), list):
        apps = [dict(app) for app in known["processes"]]
        facts["reused"].append("compute apps")
    else:
        rc, out, err = run([smi, "--query-compute-apps=" + ",".join(APP_FIELDS), "--format=csv,noheader,nounits"])
        try:
            apps = smi_mod.parse_compute_apps(out, APP_FIELDS) if rc == 0 else None
        except smi_mod.Unparseable as exc:  # what runs on the GPUs is not known: fails closed
            facts["smi_error"] = str(exc)
            return facts
    if apps is not None:
        for app in apps:
            app["owner"] = ownership.identity(app["pid"], proc_root) if app.get("pid") is not None else None
        facts["processes"] = apps
    if facts["topology"] and facts["topology"]["nvlink_counts"]:
        rc, out, err = run([smi, "nvlink", "--status"])
        facts["nvlink"] = parse_nvlink_status(out) if rc == 0 else None
    if facts["nvswitch"] and which("systemctl"):
        rc, out, err = run(["systemctl", "is-active", "nvidia-fabricmanager"])
        facts["fabricmanager_active"] = (out or "").strip() == "active"
    if pcie_fabric:
        facts["pcie_fabric"] = fabric_mod.collect(run, which, smi, gpus, facts["topology"],
                                                  cmdline_path=os.path.join(proc_root, "cmdline"),
                                                  devices_dir=sysfs, groups_dir=iommu_groups)
    return facts


def _reusable(known, gpus):
    """Can the gate use the GPU facts gathered earlier in this run? Only facts of the same GPUs (bus ids) read under
    the driver the health query reports now (a driver installed since then is read afresh)."""
    if not isinstance(known, dict) or not known.get("present") or not known.get("driver_version"):
        return False
    if sorted(str(g.get("pci_bus_id") or "").lower() for g in known.get("gpus") or []) != \
            sorted(str(g.get("pci_bus_id") or "").lower() for g in gpus):
        return False
    return all(str(g.get("driver_version") or "") == str(known["driver_version"]) for g in gpus)


def _first_line(text, rc):
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else "rc=%s" % rc


def _collect_kernel_log(run, which, facts):
    sources = []
    dmesg = which("dmesg")
    if dmesg:
        rc, out, err = run([dmesg])
        if rc == 0:
            sources.append(("dmesg", out))
        else:
            facts["kernel_log_errors"].append("dmesg: %s" % _first_line(err or out, rc))
    else:
        facts["kernel_log_errors"].append("dmesg: not installed")
    journalctl = which("journalctl")
    if journalctl:
        rc, out, err = run([journalctl, "-k", "-b", "--no-pager", "-q", "-o", "short-monotonic"])
        if rc == 0:
            sources.append(("journalctl -k -b", out))
        else:
            facts["kernel_log_errors"].append("journalctl -k: %s" % _first_line(err or out, rc))
    else:
        facts["kernel_log_errors"].append("journalctl: not installed")
    name, events = xid_mod.pick_log(sources)
    facts["kernel_log_source"] = name
    facts["xids"] = events
    # the firmware's lines, from whichever log shows most of them (they may come with no Xid at all)
    facts["firmware"] = max((xid_mod.parse_firmware(text) for _n, text in sources if text is not None), key=len,
                            default=[])


# ---------------------------------------------------------------- checks

def _gpu_label(gpu):
    return "GPU%s (%s)" % (gpu["index"], gpu["pci_bus_id"])


def check_inventory(facts, opts):
    problems = []
    gpus = facts["gpus"]
    expected = opts.get("expected_count") or 0
    seen = set(g["bus_key"] for g in gpus)
    missing = [dev["slot"] for dev in facts["pci_devices"]
               if dev["class"].startswith("0x03") and xid_mod.bus_key(dev["slot"]) not in seen]
    where = ""
    if missing:
        where = "; on the PCI bus but not usable: %s" % ", ".join(missing)
    if expected and len(gpus) != expected:
        problems.append(problem(
            "gpu_count", ERROR,
            "%d GPU(s) visible to the driver, %d expected%s" % (len(gpus), expected, where),
            "a GPU that fell off the bus or failed to initialise disappears from nvidia-smi: read "
            "'dmesg | grep -E \"NVRM|Xid\"', reseat it and check its power cables, then reboot; if the host "
            "really has %d, set gpu_health_expected_count: %d" % (len(gpus), len(gpus))))
    elif missing:
        problems.append(problem(
            "gpu_count", ERROR, "%d GPU(s) visible to the driver%s" % (len(gpus), where),
            "read 'dmesg | grep NVRM' for why the driver did not take them; reseat, check power, reboot"))
    model = (opts.get("expected_model") or "").strip()
    if model:
        for gpu in gpus:
            if model.lower() not in (gpu["name"] or "").lower():
                problems.append(problem(
                    "gpu_model", ERROR, "%s is '%s', expected '%s'" % (_gpu_label(gpu), gpu["name"], model),
                    "deploy on the intended hardware or set gpu_health_expected_model to this model",
                    gpu["index"]))
    return problems


def check_software(facts, opts):
    problems = []
    branch = str(opts.get("expected_driver_branch") or "").strip()
    driver = facts["driver_version"]
    if branch and not driver:  # never a silent pass: what could not be read is said
        problems.append(problem(
            "driver", WARNING, "the driver version could not be read from nvidia-smi: branch %s not checked" % branch,
            "run 'nvidia-smi' by hand; a driver that does not answer is not a checked one"))
    if branch and driver and driver.split(".")[0] != branch:
        problems.append(problem(
            "driver", ERROR, "driver %s is not on the %s branch" % (driver, branch),
            "install the %s branch (roles/cuda, cuda_driver_branch: %s) and reboot, or set "
            "gpu_health_expected_driver_branch" % (branch, branch)))
    cuda = str(opts.get("expected_cuda") or "").strip()
    if cuda:
        have = facts["cuda_driver_version"]
        if not have:
            problems.append(problem(
                "driver", WARNING, "the CUDA version the driver supports could not be read from nvidia-smi: CUDA %s "
                "not checked" % cuda, "run 'nvidia-smi' by hand; a driver that does not answer is not a checked one"))
        if have and _version(have) < _version(cuda):
            problems.append(problem(
                "driver", ERROR, "the driver supports CUDA up to %s, %s expected" % (have, cuda),
                "install a driver branch that supports CUDA %s (roles/cuda) and reboot" % cuda))
        nvcc = facts["nvcc"]
        if nvcc is None:
            problems.append(problem(
                "toolkit", WARNING, "no nvcc found (CUDA toolkit %s expected)" % cuda,
                "run roles/cuda (cuda_toolkit_version: %s); SGLang's JIT kernels need the toolkit" % cuda))
        elif nvcc["release"] != cuda:
            problems.append(problem(
                "toolkit", ERROR, "CUDA toolkit %s installed, %s expected" % (nvcc["release"], cuda),
                "run roles/cuda with cuda_toolkit_version: %s, or set gpu_health_expected_cuda" % cuda))
    return problems


def _version(text):
    return [int(part) for part in re.findall(r"\d+", text or "")]


def check_memory(gpu):
    """ECC mode and errors, retired pages, remapped rows, the driver's recovery action."""
    problems = []
    label, index = _gpu_label(gpu), gpu["index"]
    reset = "reset the GPU (nvidia-smi -r -i %s with nothing running on it) or reboot" % index
    if gpu["ecc_mode_current"] is False:
        problems.append(problem(
            "ecc_mode", WARNING, "%s runs with ECC disabled: memory errors go undetected" % label,
            "enable it (nvidia-smi -e 1 -i %s, then reset or reboot), or accept it with gpu_health_ignore: "
            "[ecc_mode]" % index, index))
    elif gpu["ecc_mode_current"] is not None and gpu["ecc_mode_pending"] is not None \
            and gpu["ecc_mode_current"] != gpu["ecc_mode_pending"]:
        # ECC is on here (off is the warning above), so the pending change turns it off
        problems.append(problem(
            "ecc_mode", WARNING, "%s: ECC mode changes at the next reset (pending off)" % label,
            reset + " to apply it", index))
    if gpu["ecc_uncorrected_volatile"]:
        problems.append(problem(
            "ecc_errors", ERROR, "%s: %d uncorrectable ECC error(s) since the last reset: data in GPU memory "
            "may be corrupt" % (label, gpu["ecc_uncorrected_volatile"]),
            reset + "; if they return, drain the host and RMA the GPU", index))
    remap_known = gpu["remap_correctable"] is not None or gpu["remap_uncorrectable"] is not None
    if gpu["ecc_uncorrected_aggregate"] and not remap_known and not gpu["ecc_uncorrected_volatile"]:
        problems.append(problem(
            "ecc_errors", WARNING, "%s: %d uncorrectable ECC error(s) over its lifetime"
            % (label, gpu["ecc_uncorrected_aggregate"]),
            "watch the count; run 'dcgmi diag -r 3' when the host is drained", index))
    if gpu["retired_pending"]:
        problems.append(problem(
            "retired_pages", ERROR, "%s: a retired page is pending (it takes effect at the next reset)" % label,
            reset, index))
    retired = (gpu["retired_sbe"] or 0) + (gpu["retired_dbe"] or 0)
    if retired >= 60:
        problems.append(problem(
            "retired_pages", WARNING, "%s: %d pages retired (the limit is 64)" % (label, retired),
            "plan an RMA: at the limit the GPU can no longer retire bad memory", index))
    if gpu["remap_pending"]:
        problems.append(problem(
            "remapped_rows", ERROR, "%s: a row remapping is pending: the bad memory row is still in use until "
            "the GPU is reset" % label, reset, index))
    if gpu["remap_failure"]:
        problems.append(problem(
            "remapped_rows", ERROR, "%s: a row remapping failed: the GPU has memory it cannot repair" % label,
            "drain the host and RMA the GPU", index))
    if gpu["remap_banks_none"]:
        problems.append(problem(
            "remapped_rows", WARNING, "%s: %d memory bank(s) have no spare rows left"
            % (label, gpu["remap_banks_none"]), "plan an RMA: the next error in those banks cannot be repaired",
            index))
    action = gpu["recovery_action"]
    if action and action.lower() != "none":
        problems.append(problem(
            "recovery_action", ERROR, "%s: the driver asks for a recovery action: %s" % (label, action),
            "do it (GPU reset: nvidia-smi -r -i %s; node reboot; drain): nothing runs reliably until then"
            % index, index))
    return problems


def check_clocks(gpu, opts):
    problems = []
    label, index = _gpu_label(gpu), gpu["index"]
    # HW Slowdown is the parent of HW Thermal and HW Power Brake: name the specific cause when there is one.
    active = [name for name in ("hw_thermal_slowdown", "hw_power_brake_slowdown") if gpu["clock_events"].get(name)]
    if not active and gpu["clock_events"].get("hw_slowdown"):
        active = ["hw_slowdown"]
    if active:
        problems.append(problem(
            "clock_events", ERROR, "%s: %s active (%s C)" % (
                label, " and ".join(CLOCK_ERRORS[name] for name in active), gpu["temperature_c"]),
            "check the airflow, fans and inlet temperature, the power cables and PSU; the GPU runs far below "
            "its clocks until this clears", index))
    for name, meaning in CLOCK_WARNINGS.items():
        if gpu["clock_events"].get(name):
            problems.append(problem(
                "clock_events", WARNING, "%s: %s is active (%s C)" % (label, meaning, gpu["temperature_c"]),
                "improve cooling; throughput drops while it lasts", index))
    counters = gpu["clock_event_counters_us"]
    slowed = [(name, counters[name]) for name in ("hw_thermal_slowdown", "hw_power_brake_slowdown")
              if counters.get(name)]
    if slowed and not any(gpu["clock_events"].get(name) for name in CLOCK_ERRORS):
        problems.append(problem(
            "clock_events", WARNING, "%s was slowed by hardware since the driver loaded: %s" % (label, ", ".join(
                "%s %.1f s" % (name, micro / 1e6) for name, micro in slowed)),
            "check cooling and power under load (not active now)", index))
    temp, margin = gpu["temperature_c"], gpu["temperature_tlimit_c"]
    limit = opts.get("max_temperature") or 999  # none set: no limit a GPU reaches
    if margin is not None and margin < (opts.get("min_tlimit_margin") or 0):
        problems.append(problem(
            "temperature", WARNING, "%s is %s C, %s" % (label, temp, _margin_text(margin)),
            "check the airflow and fans before loading it", index))
    elif temp is not None and temp >= limit:
        problems.append(problem(
            "temperature", WARNING, "%s is %d C (limit set: %d C)" % (label, temp, limit),
            "check the airflow and fans before loading it", index))
    return problems


def _margin_text(margin):
    if margin >= 0:
        return "%d C from its slowdown limit" % margin
    return "%d C past its slowdown limit" % -margin


def check_pcie(gpu, opts):
    problems = []
    label, index = _gpu_label(gpu), gpu["index"]
    cur, nvml_max, dev_max = gpu["pcie_width_current"], gpu["pcie_width_max"], gpu["pcie_width_device_max"]
    expected = opts.get("expected_pcie_width") or 0
    want, why, fix = None, None, None
    if cur and nvml_max and cur < nvml_max:
        want, why = nvml_max, "the link trained below what the slot allows"
        fix = "reseat the card, check the riser/cable, and reboot"
    else:
        # An operator's expected width wins over the card's capability (slots bifurcated to x8 on purpose).
        limit = expected or dev_max
        if cur and limit and cur < limit:
            want, why = limit, "the slot (or its bifurcation setting) limits it"
            fix = "move the card to an x%d slot or set the slot's lanes to x%d in the BIOS" % (limit, limit)
    if want:
        problems.append(problem(
            "pcie_link", ERROR, "%s runs at PCIe x%d, %s x%d: %s; host-device copies and every all-reduce that "
            "crosses PCIe slow down by up to %dx" % (label, cur, "the card can do" if want != expected else
                                                     "expected", want, why, want // cur),
            fix, index))
    gen, gen_max, gen_gpu = gpu["pcie_gen_current"], gpu["pcie_gen_max"], gpu["pcie_gen_gpumax"]
    expected_gen = opts.get("expected_pcie_gen") or 0
    if gen_gpu and gen_max and gen_max < gen_gpu:
        problems.append(problem(
            "pcie_link", WARNING, "%s: the host allows PCIe Gen%d, the card can do Gen%d" % (label, gen_max, gen_gpu),
            "use a Gen%d slot (check the BIOS link speed setting)" % gen_gpu, index))
    idle = gpu["clock_events"].get("gpu_idle")
    if gen and gen_max and gen < gen_max and idle is False:
        problems.append(problem(
            "pcie_link", WARNING, "%s: PCIe Gen%d while busy, Gen%d possible" % (label, gen, gen_max),
            "check the slot, riser and BIOS link speed", index))
    if expected_gen and gen_max and gen_max < expected_gen:
        problems.append(problem(
            "pcie_link", ERROR, "%s: PCIe Gen%d at most, Gen%d expected" % (label, gen_max, expected_gen),
            "fix the slot or BIOS link speed, or set gpu_health_expected_pcie_gen", index))
    return problems


def check_modes(gpu):
    problems = []
    label, index = _gpu_label(gpu), gpu["index"]
    if gpu["persistence_mode"] is False:
        problems.append(problem(
            "persistence_mode", WARNING, "%s: persistence mode is off: the driver tears the GPU down between "
            "programs and the first CUDA call is slow" % label,
            "systemctl enable --now nvidia-persistenced (roles/cuda, cuda_persistenced: true)", index))
    if gpu["mig_mode"]:
        problems.append(problem(
            "mig_mode", ERROR, "%s: MIG is enabled: SGLang needs whole GPUs" % label,
            "nvidia-smi -mig 0 -i %s and reset the GPU" % index, index))
    return problems


def check_processes(facts, opts):
    problems = []
    by_bus = dict((g["bus_key"], g["index"]) for g in facts["gpus"])
    for app in facts["processes"]:
        if is_own(app.get("owner"), opts.get("own_units") or [], opts.get("own_process_patterns") or []):
            continue
        index = by_bus.get(app["bus_key"])
        who = "%s (pid %s)" % (app["name"], app["pid"])
        if app.get("owner") is None:
            who += ", not visible from this host's /proc (another container?)"
        where = "GPU%s" % index if index is not None else "the GPU at PCI %s" % app["bus_key"]
        problems.append(problem(
            "foreign_processes", ERROR, "%s: %s holds %s MiB" % (where, who, app["used_memory_mib"]),
            "stop it before deploying (SGLang sizes its memory pool from the free memory), or list it in "
            "gpu_health_own_process_patterns if it is meant to share the GPU", index))
    return problems


def check_fabric(facts):
    problems = []
    nvlink = facts["nvlink"]
    if nvlink:
        best = max(state["up"] for state in nvlink.values())
        for index in sorted(nvlink):
            state = nvlink[index]
            if best and state["up"] < best:
                problems.append(problem(
                    "nvlink", ERROR, "GPU%s: %d of %d NVLink links up (%d inactive)"
                    % (index, state["up"], best, best - state["up"]),
                    "reset the GPU or reboot; if links stay down, check the NVLink bridge/baseboard "
                    "('nvidia-smi nvlink -e -i %s')" % index, index))
    for gpu in facts["gpus"]:
        state, status = gpu["fabric_state"], gpu["fabric_status"]
        if state and state.lower() != "completed":
            problems.append(problem(
                "fabric_manager", ERROR, "%s: NVLink fabric state is '%s' (status %s): CUDA will not start on "
                "it" % (_gpu_label(gpu), state, status), "start nvidia-fabricmanager (same version as the "
                "driver) and wait for the fabric to finish training", gpu["index"]))
        elif state and status and status.lower() != "success":
            problems.append(problem(
                "fabric_manager", ERROR, "%s: NVLink fabric status is '%s'" % (_gpu_label(gpu), status),
                "read 'journalctl -u nvidia-fabricmanager'; restart it, reset the GPUs", gpu["index"]))
    if facts["nvswitch"] and facts["fabricmanager_active"] is False:
        problems.append(problem(
            "fabric_manager", ERROR, "NVSwitch present but nvidia-fabricmanager is not active",
            "systemctl enable --now nvidia-fabricmanager (roles/cuda, cuda_fabricmanager: true)"))
    return problems


def check_xids(facts):
    problems = []
    if facts["kernel_log_source"] is None and facts["kernel_log_errors"]:
        problems.append(problem(
            "kernel_log", WARNING, "kernel log not readable (%s): Xid events not checked"
            % "; ".join(facts["kernel_log_errors"]),
            "run the gate with become: true (dmesg needs root where kernel.dmesg_restrict=1)"))
        return problems
    by_bus = dict((g["bus_key"], g["index"]) for g in facts["gpus"])
    grouped = {}
    for event in facts["xids"]:
        key = (event["pci"], event["code"])
        grouped.setdefault(key, []).append(event)
    for (pci, code), events in sorted(grouped.items(), key=lambda item: (str(item[0][0]), item[0][1])):
        klass, meaning, remedy = xid_mod.describe(code)
        if code == 8 and facts.get("firmware"):
            klass, meaning, remedy = xid_mod.XID8_LOCKED
        index = by_bus.get(pci)
        where = "GPU%s (PCI %s)" % (index, pci) if index is not None else "PCI %s (not visible to nvidia-smi)" % pci
        last = events[-1]
        who = ""
        if last.get("pid") and last["pid"] != "<unknown>":
            who = " (last in pid %s%s)" % (last["pid"], ", " + last["process"] if last.get("process") else "")
        detail = "%s: Xid %d x%d since the driver loaded, %s [%s]%s; driver said: %s" % (
            where, code, len(events), meaning, klass, who, last["message"])
        problems.append(problem("xid", ERROR if klass == xid_mod.HARDWARE else WARNING, detail,
                                remedy.replace("{gpu}", str(index if index is not None else pci)), index))
    return problems


def check_firmware(facts):
    """The GPU's firmware stopped answering (Blackwell): its own lines, with or without an Xid."""
    by_kind = {}
    for event in facts.get("firmware") or []:
        by_kind.setdefault(event["kind"], []).append(event)
    return [problem("gpu_firmware", ERROR,
                    "%s: x%d since the driver loaded; driver said: %s" % (events[0]["meaning"], len(events), events[-1]["line"]),
                    xid_mod.DRAIN_REBOOT)
            for _kind, events in sorted(by_kind.items())]


def check_answers(gpu):
    """A GPU that answers nvidia-smi with errors (``[Unknown Error]``, ``[GPU requires reset]``, ``ERR!``)."""
    if not gpu.get("smi_errors"):
        return []
    return [problem("gpu_answers", ERROR, "%s answers nvidia-smi with errors for %s" % (
        _gpu_label(gpu), ", ".join(gpu["smi_errors"][:6]) + (" (+%d more)" % (len(gpu["smi_errors"]) - 6)
                                                             if len(gpu["smi_errors"]) > 6 else "")),
        xid_mod.DRAIN_REBOOT, gpu["index"])]


def evaluate(facts, opts):
    """Facts -> list of problems (errors first, then warnings; each in check order)."""
    opts = dict(DEFAULTS, **dict((k, v) for k, v in (opts or {}).items() if v is not None))
    if facts["smi_error"]:
        locked = SMI_ERROR_RE.search(facts["smi_error"]) or facts.get("firmware")
        problems = [problem("nvidia_smi", ERROR, facts["smi_error"], xid_mod.DRAIN_REBOOT if locked else
                            "install or repair the driver (roles/cuda) and reboot; see 'dmesg | grep NVRM'")]
        problems += check_firmware(facts)
        problems += check_xids(facts)
        return order_problems(problems)
    problems = []
    for field in facts["dropped_fields"]:
        problems.append(problem("nvidia_smi", WARNING, "this driver does not know the field %s: its check "
                                "is skipped" % field, "upgrade the driver for the full check"))
    problems += check_inventory(facts, opts)
    problems += check_software(facts, opts)
    for gpu in facts["gpus"]:
        problems += check_readings(gpu)
        problems += check_answers(gpu)
        problems += check_memory(gpu)
        problems += check_clocks(gpu, opts)
        problems += check_pcie(gpu, opts)
        problems += check_modes(gpu)
    problems += check_processes(facts, opts)
    problems += check_fabric(facts)
    problems += fabric_mod.evaluate(facts.get("pcie_fabric"))[0]
    problems += check_firmware(facts)
    problems += check_xids(facts)
    return order_problems(problems)


def check_readings(gpu):
    """A value outside its physical range (nvidia/smi.RANGES: a GPU at -40 C, NaN or 1e9 C, a negative power draw)
    is a broken sensor or driver reading: the GPU is not known healthy."""
    if not gpu.get("broken_readings"):
        return []
    return [problem(
        "nvidia_smi", ERROR, "%s: nvidia-smi reads %s, outside the physical range: a broken reading, the GPU's state "
        "is not known" % (_gpu_label(gpu), ", ".join(gpu["broken_readings"])),
        "read it again with 'nvidia-smi -q -i %s'; reset the GPU (nvidia-smi -r -i %s, nothing running on it) or "
        "reboot; if it stays, drain the host and have the board checked (sensor or firmware fault)"
        % (gpu["index"], gpu["index"]), gpu["index"])]


def order_problems(problems):
    """Errors first, then warnings; each in check order, host-wide before per-GPU."""
    rank = dict((name, i) for i, name in enumerate(ALL_CHECKS))
    return sorted(problems, key=lambda p: (p["severity"] != ERROR, rank.get(p["check"], 99),
                                           p["gpu"] if p["gpu"] is not None else -1))


def split_ignored(problems, ignore):
    """``(kept, ignored)``: problems whose check is in ``ignore`` (accepted on purpose) are set aside."""
    ignore = set(ignore or [])
    kept = [p for p in problems if p["check"] not in ignore]
    ignored = [p for p in problems if p["check"] in ignore]
    return kept, ignored


def notes(facts):
    """Facts worth a line that are not problems (so the operator sees what was judged fine and why)."""
    lines = []
    for gpu in facts["gpus"]:
        if gpu["ecc_uncorrected_aggregate"] and (gpu["remap_correctable"] is not None) \
                and not gpu["remap_pending"] and not gpu["remap_failure"]:
            lines.append("%s: %d uncorrectable ECC error(s) over its lifetime, repaired by row remapping (%s "
                         "row(s) remapped, none pending)" % (_gpu_label(gpu), gpu["ecc_uncorrected_aggregate"],
                                                             (gpu["remap_correctable"] or 0)
                                                             + (gpu["remap_uncorrectable"] or 0)))
        idle = gpu["clock_events"].get("gpu_idle")
        if gpu["pcie_gen_current"] and gpu["pcie_gen_max"] and gpu["pcie_gen_current"] < gpu["pcie_gen_max"] \
                and idle:
            lines.append("%s: PCIe Gen%d at idle (Gen%d under load; idle GPUs lower the link speed to save "
                         "power)" % (_gpu_label(gpu), gpu["pcie_gen_current"], gpu["pcie_gen_max"]))
    lines += fabric_mod.evaluate(facts.get("pcie_fabric"))[1]
    if facts["kernel_log_source"]:
        lines.append("kernel log read from %s: %d Xid event(s) since the driver loaded"
                     % (facts["kernel_log_source"], len(facts["xids"])))
    return lines


def summary(problems, ignored):
    """One line per problem, for the failure message and the warnings."""
    lines = []
    for p in problems:
        lines.append("[%s] %s: %s -> %s" % (p["severity"], p["check"], p["detail"], p["remedy"]))
    for p in ignored:
        lines.append("[ignored on purpose] %s: %s" % (p["check"], p["detail"]))
    return lines
