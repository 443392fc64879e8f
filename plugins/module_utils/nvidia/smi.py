# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for ``nvidia-smi``, ``nvcc`` and ``/proc/driver/nvidia/version`` output, and a fact collector.

Target-side code: Python standard library only, Python >= 3.8.  Every parser takes the text a real tool prints
(see ``tests/fixtures/nvidia/``); :func:`collect` runs the tools through an injected ``run`` callable so it can be
used from an Ansible module (``module.run_command``) and from unit tests alike.
"""

from __future__ import annotations

import csv
import glob
import math
import os
import re
import shutil

from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import TIMED_OUT, TOO_BIG
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import xid as xid_mod

ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
INVALID_FIELD_RE = re.compile(r'Field "([^"]+)" is not a valid field to query')
NV_RE = re.compile(r"^NV(\d+)$")
# what nvidia-smi prints for a field it has no value for; the error answers (a GPU that does not answer) are read as
# missing too, and nvidia/health lists them per GPU (``smi_errors``, its gpu_answers check)
MISSING = ("[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]", "", "ERR!", "[GPU requires reset]",
           "[GPU is lost]", "[Error]")

# Fields gpu_facts asks for, in order.  ``compute_cap`` is unknown to R470-era drivers: it is dropped and the
# query retried when nvidia-smi says it is not a valid field.
GPU_FIELDS = [
    "index", "name", "uuid", "pci.bus_id", "compute_cap", "driver_version",
    "memory.total", "memory.used", "utilization.gpu", "persistence_mode",
]
APP_FIELDS = ["pid", "process_name", "used_memory"]
NVCC_FALLBACKS = ["/usr/local/cuda/bin/nvcc"]
PROC_VERSION = "/proc/driver/nvidia/version"

REASON_NO_SMI = ("nvidia-smi not found on PATH: no NVIDIA driver user space is installed "
                 "(install the driver, e.g. with the llmserve.sglang.cuda role)")
REASON_NO_DRIVER = ("no NVIDIA driver loaded: nvidia-smi could not communicate with the driver "
                    "(load the nvidia module or reboot after the driver install)")
REASON_NO_DEVICES = ("no devices found: the driver is loaded but sees no GPU (Blackwell needs the open kernel "
                     "modules; check Resizable BAR/Above 4G decoding and 'dmesg | grep NVRM')")
REASON_HUNG = ("nvidia-smi hung: %s; a GPU or the driver is stuck (read 'dmesg | grep -E \"NVRM|Xid\"', reset the "
               "GPU with nvidia-smi -r or reboot)")
REASON_HUGE = "nvidia-smi output refused: %s; this is no nvidia-smi answer (check the nvidia-smi on PATH or nvidia_smi_path)"
REASON_MISMATCH = ("driver/library version mismatch: the loaded kernel module differs from the installed "
                   "user space (reboot to load the new driver)")


def strip_ansi(text):
    """Remove terminal escape sequences (nvidia-smi underlines the topo header even when piped)."""
    return ANSI_RE.sub("", text or "")


def is_missing(value):
    return value is None or value.strip() in MISSING


class Refused(ValueError):
    """A reading of nvidia-smi refused (hung, too much output, garbage): gpu_facts fails naming it, never reads
    "no GPU" from it."""


class Unparseable(Refused):
    """nvidia-smi printed something that is not what it prints (random bytes, a cut or extra field): the reading is
    refused, never read as GPUs."""

    def __init__(self, why):
        Refused.__init__(self, "unparseable nvidia-smi output: %s (check the nvidia-smi on PATH or nvidia_smi_path, "
                               "and 'nvidia-smi -q' by hand)" % why)


# A number as nvidia-smi prints one (``143771``, ``700.00 W``, ``41250000 us``, ``0 %``); nan/inf and exponents are
# numbers too, read and then judged by their range (a broken sensor, not garbage).
_NUMBER_RE = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf(?:inity)?))(?:\s+([A-Za-z%]+))?\s*\Z",
                        re.IGNORECASE)
# The physical range of a reading (bounds included); outside it the reading is broken (a sensor or driver fault).
RANGES = {
    "index": (0, 1023), "pid": (1, 1 << 22),
    "memory.total": (1, 1 << 22), "memory.used": (0, 1 << 22), "used_memory": (0, 1 << 22),
    "used_gpu_memory": (0, 1 << 22), "utilization.gpu": (0, 100),
    "temperature.gpu": (0, 130), "temperature.memory": (0, 150), "temperature.gpu.tlimit": (-100, 150),
    "power.draw": (0, 5000), "clocks.sm": (0, 10000), "clocks.mem": (0, 20000),
    "pcie.link.gen.current": (1, 8), "pcie.link.gen.max": (1, 8), "pcie.link.gen.gpumax": (1, 8),
    "pcie.link.gen.hostmax": (1, 8), "pcie.link.width.current": (1, 32), "pcie.link.width.max": (1, 32),
}
COUNT_RANGE = (0, 1 << 40)  # error and page counters, slowdown microseconds


def reading(row, field, broken=None):
    """The number in ``row[field]`` (int when whole), None when nvidia-smi printed it missing. Text that is no
    number raises :class:`Unparseable` naming the field; a number outside the field's physical range (``RANGES``,
    else ``COUNT_RANGE``), NaN or infinite is a broken reading: None, and ``field=value`` appended to ``broken``."""
    value = row.get(field)
    if is_missing(value):
        return None
    match = _NUMBER_RE.match(value)
    if not match:
        raise Unparseable("field %s is %r, not a number" % (field, value[:40]))
    number = float(match.group(1))
    low, high = RANGES.get(field, COUNT_RANGE)
    if math.isnan(number) or not low <= number <= high:
        if broken is not None:
            broken.append("%s=%s" % (field, value.strip()[:40]))
        return None
    whole = re.match(r"^[-+]?\d+$", match.group(1))
    return int(match.group(1)) if whole else number


def _number(value):
    """``'143771 MiB'`` / ``'143771'`` / ``'0 %'`` / ``'700.00 W'`` -> int or float; missing or out of range -> None."""
    return reading({"value": value}, "value")


def invalid_field(text):
    """Name of the field nvidia-smi refused (``Field "x" is not a valid field to query.``), else None."""
    match = INVALID_FIELD_RE.search(text or "")
    return match.group(1) if match else None


def parse_csv(text, fields=None):
    """Parse ``--format=csv[,noheader][,nounits]`` output into a list of dicts.

    With a header line the keys are the header names without their unit (``memory.total [MiB]`` ->
    ``memory.total``); for ``noheader`` output pass ``fields``.  Values are stripped strings, units included
    when nvidia-smi printed them; missing values (``[N/A]``, ``[Not Supported]``) become None. A row with more or
    fewer fields than asked for raises :class:`Unparseable`.
    """
    lines = [line for line in strip_ansi(text).splitlines() if line.strip()]
    if not lines:
        return []
    try:
        rows = list(csv.reader(lines, skipinitialspace=True, strict=True))
    except csv.Error as exc:
        raise Unparseable("not CSV (%s)" % exc)
    if fields is None:
        header = rows.pop(0)
        fields = [re.sub(r"\s*\[[^\]]*\]\s*$", "", name).strip() for name in header]
    result = []
    for number, row in enumerate(rows, 1):
        if len(row) != len(fields):
            raise Unparseable("row %d has %d fields, %d asked for (%s)" % (number, len(row), len(fields),
                                                                           ",".join(fields)[:200]))
        values = [None if is_missing(cell) else cell.strip() for cell in row]
        result.append(dict(zip(fields, values)))
    return result


def _persistence(value):
    if is_missing(value):
        return None
    return value.strip().lower() == "enabled"


def normalize_gpu(row, broken=None):
    """One ``--query-gpu`` row (dict from :func:`parse_csv`) -> the gpu_facts per-GPU dict; its broken readings
    (:func:`reading`) are appended to ``broken``."""
    cap = row.get("compute_cap")
    major = None
    if cap and re.match(r"^\d+\.\d+$", cap):
        major = int(cap.split(".")[0])
    else:
        cap = None
    broken = [] if broken is None else broken
    index = reading(row, "index")
    if index is None and row.get("index") is not None or isinstance(index, float):
        raise Unparseable("field index is %r, not a GPU index" % (row.get("index") or "")[:40])
    return {
        "index": index,
        "name": row.get("name"),
        "uuid": row.get("uuid"),
        "pci_bus_id": row.get("pci.bus_id"),
        "compute_cap": cap,
        "compute_major": major,
        "memory_total_mib": reading(row, "memory.total", broken),
        "memory_used_mib": reading(row, "memory.used", broken),
        "utilization_gpu": reading(row, "utilization.gpu", broken),
        "persistence_mode": _persistence(row.get("persistence_mode")),
    }


def parse_query_gpu(text, fields=None, broken=None):
    """``--query-gpu`` rows -> per-GPU dicts; a GPU index twice is :class:`Unparseable` (no driver prints it).
    ``broken``: a dict that gets ``{index: [field=value, ...]}`` of the readings out of their physical range."""
    gpus = []
    for row in parse_csv(text, fields):
        bad = []
        gpus.append(normalize_gpu(row, bad))
        if bad and broken is not None:
            broken[gpus[-1]["index"]] = bad
    indices = [g["index"] for g in gpus if g["index"] is not None]
    if len(set(indices)) != len(indices):
        raise Unparseable("GPU index listed twice (%s)" % ", ".join(str(i) for i in indices)[:200])
    return gpus


def parse_compute_apps(text, fields=None):
    """``--query-compute-apps=pid,process_name,used_memory[,gpu_bus_id]`` -> ``[{pid, name, used_memory_mib, bus_key}]``.

    The collection's one reader of compute apps (server preflight, the waiter's GPU sample, gpu_health);
    ``bus_key`` is None unless ``gpu_bus_id`` was queried.
    """
    apps = []
    for row in parse_csv(text, fields):
        pid = reading(row, "pid")
        if isinstance(pid, float) or pid is None and row.get("pid") is not None:
            raise Unparseable("field pid is %r, not a process id" % (row.get("pid") or "")[:40])
        apps.append({
            "pid": pid,
            "name": row.get("process_name", row.get("name")),
            "used_memory_mib": reading(row, "used_gpu_memory" if "used_gpu_memory" in row else "used_memory"),
            "bus_key": xid_mod.bus_key(row.get("gpu_bus_id")),
        })
    return apps


def parse_versions(text):
    """Driver version and the highest CUDA version the driver supports.

    Reads the plain ``nvidia-smi`` banner (``Driver Version: 580.159.04     CUDA Version: 13.0``) as well as
    ``nvidia-smi --version`` (``DRIVER version      : 580.159.04`` / ``CUDA Version        : 13.0``).
    """
    text = strip_ansi(text)
    driver = re.search(r"driver version\s*:\s*([0-9][0-9.]*)", text, re.IGNORECASE)
    cuda = re.search(r"cuda version\s*:\s*([0-9][0-9.]*)", text, re.IGNORECASE)
    return (driver.group(1) if driver else None, cuda.group(1) if cuda else None)


def parse_nvcc(text):
    """``nvcc --version`` -> ``{release: '13.0', version: '13.0.88'}`` or None."""
    match = re.search(r"release\s+(\d+\.\d+),\s*V(\d+(?:\.\d+)+)", text or "")
    if not match:
        return None
    return {"release": match.group(1), "version": match.group(2)}


def parse_proc_version(text):
    """``/proc/driver/nvidia/version`` -> ``(flavor, driver_version)``; flavor is open, proprietary or None."""
    first = (text or "").strip().splitlines()[:1]
    if not first or "Kernel Module" not in first[0]:
        return None, None
    flavor = "open" if "Open Kernel Module" in first[0] else "proprietary"
    match = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", first[0])
    return flavor, match.group(1) if match else None


def parse_topology(text):
    """``nvidia-smi topo -m`` -> topology dict (GPU pairs only; NIC columns and affinities kept aside).

    Accepts the real tab-separated output (underline escape codes included) and copies where tabs became
    spaces.  Returns ``{matrix, nvlink_counts, all_nvlink, pcie_only, affinity}`` or None when no matrix is found.
    """
    lines = strip_ansi(text).splitlines()
    header = None
    rows = {}
    for line in lines:
        tokens = line.split()
        if not tokens:
            if header is not None and rows:
                break
            continue
        if tokens[0] == "Legend:":
            break
        if header is None:
            if re.match(r"^GPU\d+$", tokens[0]) and not line.startswith("GPU"):
                # header row: device names until 'CPU Affinity' (or the end of line)
                header = []
                for token in tokens:
                    if token in ("CPU", "NUMA"):
                        break
                    header.append(token)
            continue
        if tokens[0] in header:
            rows[tokens[0]] = tokens[1:]
    if not header:
        return None
    gpus = [name for name in header if re.match(r"^GPU\d+$", name)]
    matrix = {}
    affinity = {}
    for name in gpus:
        cells = rows.get(name)
        if cells is None:
            continue
        matrix[name] = {}
        for col, cell in zip(header, cells):
            if col != name and col in gpus:
                matrix[name][col] = cell
        rest = cells[len(header):]
        affinity[name] = {
            "cpu": rest[0] if len(rest) > 0 and not is_missing(rest[0]) else None,
            "numa": rest[1] if len(rest) > 1 and not is_missing(rest[1]) else None,
        }
    counts = {}
    pairs = 0
    nv_pairs = 0
    for a in gpus:
        for b in gpus:
            ia, ib = int(a[3:]), int(b[3:])
            if ia >= ib:
                continue
            cell = matrix.get(a, {}).get(b) or matrix.get(b, {}).get(a)
            pairs += 1
            match = NV_RE.match(cell or "")
            if match:
                nv_pairs += 1
                counts["%d-%d" % (ia, ib)] = int(match.group(1))
    return {
        "matrix": matrix,
        "nvlink_counts": counts,
        "all_nvlink": pairs > 0 and nv_pairs == pairs,
        "pcie_only": pairs > 0 and nv_pairs == 0,
        "affinity": affinity,
    }


def failure_reason(rc, out, err):
    """Turn a failed nvidia-smi run into a one-line reason naming the cause and the fix."""
    if rc in (TIMED_OUT, TOO_BIG):  # host/run.py's refusals: its words are stderr's last line
        lines = (err or "").strip().splitlines()
        said = lines[-1] if lines else "rc=%s" % rc
        return (REASON_HUNG if rc == TIMED_OUT else REASON_HUGE) % said
    text = strip_ansi((out or "") + "\n" + (err or "")).strip()
    if "No devices were found" in text:
        return REASON_NO_DEVICES
    if "couldn't communicate with the NVIDIA driver" in text or "driver not loaded" in text.lower():
        return REASON_NO_DRIVER
    if "version mismatch" in text:
        return REASON_MISMATCH
    first = text.splitlines()[0] if text else "no output"
    return "nvidia-smi failed (rc=%s): %s" % (rc, first)


def pci_nvidia_devices(sysfs="/sys/bus/pci/devices"):
    """NVIDIA PCI functions from sysfs: ``[{slot, device_id, class}]`` (works without a driver)."""
    found = []
    for path in sorted(glob.glob(os.path.join(sysfs, "*"))):
        try:
            with open(os.path.join(path, "vendor")) as handle:
                vendor = handle.read().strip()
            if vendor.lower() != "0x10de":
                continue
            with open(os.path.join(path, "device")) as handle:
                device = handle.read().strip().lower()
            with open(os.path.join(path, "class")) as handle:
                klass = handle.read().strip().lower()
        except (IOError, OSError):
            continue
        found.append({"slot": os.path.basename(path), "device_id": device, "class": klass})
    return found


def is_blackwell_or_newer_pci(device_id):
    """Blackwell data-centre and RTX parts have PCI device ids from 0x2900 (B200 0x2901, GB202 0x2b85...)."""
    try:
        return int(device_id, 16) >= 0x2900
    except (TypeError, ValueError):
        return False


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def find_nvcc(which, nvcc_path=None, exists=os.path.exists):
    if nvcc_path:
        return nvcc_path if exists(nvcc_path) else None
    found = which("nvcc")
    if found:
        return found
    for candidate in NVCC_FALLBACKS + sorted(glob.glob("/usr/local/cuda-*/bin/nvcc"), reverse=True):
        if exists(candidate):
            return candidate
    return None


def empty_facts(reason):
    return {
        "present": False, "reason": reason, "count": 0, "driver_version": None, "cuda_driver_version": None,
        "kernel_module_flavor": None, "nvcc": None, "gpus": [], "compute_caps": [], "topology": None,
        "processes": [], "pci_devices": [], "warnings": [],
    }


def query_gpus(run, smi, fields=None, broken=None):
    """Run ``--query-gpu``; drop fields the driver does not know (R470: compute_cap) and retry.

    Returns ``(gpus, rc, out, err, dropped_fields)``; ``broken`` as :func:`parse_query_gpu`'s.
    """
    fields = list(fields or GPU_FIELDS)
    dropped = []
    while True:
        rc, out, err = run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
        bad = invalid_field((out or "") + (err or ""))
        if rc != 0 and bad and bad in fields and len(fields) > 1:
            fields.remove(bad)
            dropped.append(bad)
            continue
        if rc != 0:
            return None, rc, out, err, dropped
        return parse_query_gpu(out, fields, broken), rc, out, err, dropped  # Unparseable: the caller's refusal


def collect(run, which, nvidia_smi=None, nvcc_path=None, proc_version_path=PROC_VERSION,
            sysfs="/sys/bus/pci/devices", gather_topology=True, gather_processes=True):
    """Collect ``ansible_facts.gpu``.  Never raises for a host without GPUs: ``present`` False + ``reason``.

    ``run(argv) -> (rc, stdout, stderr)``; ``which(name) -> path or None``.
    """
    facts = empty_facts(None)
    facts["pci_devices"] = pci_nvidia_devices(sysfs)
    flavor, proc_driver = parse_proc_version(_read(proc_version_path))
    facts["kernel_module_flavor"] = flavor
    facts["driver_version"] = proc_driver

    nvcc = find_nvcc(which, nvcc_path)
    if nvcc:
        rc, out, err = run([nvcc, "--version"])
        parsed = parse_nvcc(out) if rc == 0 else None
        if parsed:
            facts["nvcc"] = dict(path=nvcc, **parsed)

    if nvidia_smi:
        smi = nvidia_smi if os.path.exists(nvidia_smi) else None
    else:
        smi = which("nvidia-smi")
    if not smi:
        facts["reason"] = REASON_NO_SMI if not nvidia_smi else "nvidia-smi not found at %s (fix nvidia_smi_path)" % nvidia_smi
        return facts

    rc, out, err = run([smi])
    if rc in (TIMED_OUT, TOO_BIG):
        raise Refused(failure_reason(rc, out, err))
    if rc != 0:
        facts["reason"] = failure_reason(rc, out, err)
        return facts
    driver, cuda = parse_versions(out)
    facts["driver_version"] = driver or facts["driver_version"]
    facts["cuda_driver_version"] = cuda

    broken = {}
    gpus, rc, out, err, dropped = query_gpus(run, smi, broken=broken)  # Unparseable: refused, never read as no GPU
    if gpus is None:
        if rc in (TIMED_OUT, TOO_BIG):
            raise Refused(failure_reason(rc, out, err))
        facts["reason"] = failure_reason(rc, out, err)
        return facts
    for index, items in sorted(broken.items()):
        facts["warnings"].append("GPU%s: nvidia-smi read %s, outside the physical range: a broken reading, reported "
                                 "as null (reset the GPU or reboot; if it stays, the board is faulty)"
                                 % (index, ", ".join(items)))
    for field in dropped:
        facts["warnings"].append("nvidia-smi does not know the field %s (driver too old); reported as null" % field)
    gpus.sort(key=lambda gpu: gpu["index"] if gpu["index"] is not None else 0)
    if not gpus:
        facts["reason"] = REASON_NO_DEVICES
        return facts
    facts["gpus"] = gpus
    facts["count"] = len(gpus)
    facts["present"] = True
    facts["compute_caps"] = sorted(set(g["compute_cap"] for g in gpus if g["compute_cap"]),
                                   key=lambda c: [int(p) for p in c.split(".")])

    if gather_topology:
        rc, out, err = run([smi, "topo", "-m"])
        topology = parse_topology(out) if rc == 0 else None
        if topology is not None:
            switches = [d for d in facts["pci_devices"] if d["class"].startswith("0x0680")]
            topology["nvswitch"] = bool(switches) if facts["pci_devices"] else None
        facts["topology"] = topology
    if gather_processes:
        rc, out, err = run([smi, "--query-compute-apps=" + ",".join(APP_FIELDS), "--format=csv,noheader,nounits"])
        if rc == 0:
            facts["processes"] = parse_compute_apps(out, APP_FIELDS)
    return facts


# -- GPUs ----------------------------------------------------------------------
# Memory and utilisation only: cheap enough to ask while a server loads, enough to tell a busy load from a stall.
WATCH_FIELDS = ["index", "memory.used", "memory.total", "utilization.gpu"]
WATCH_KEYS = ("index", "memory_used_mib", "memory_total_mib", "utilization_gpu")


def gpu_info(smi="nvidia-smi", run=None):
    """Per-GPU memory/utilisation and GPU processes, or None without (a working) nvidia-smi.
    ``run(argv) -> (rc, stdout, stderr)``: the caller's runner (host/run.py)."""
    path = shutil.which(smi)
    if not path or run is None:
        return None
    try:
        gpus = query_gpus(run, path, WATCH_FIELDS)[0]
        if gpus is None:
            return None
        rc, out, _err = run([path, "--query-compute-apps=" + ",".join(APP_FIELDS),
                             "--format=csv,noheader,nounits"])
        procs = parse_compute_apps(out, APP_FIELDS) if rc == 0 else []
    except Unparseable:  # a sample nvidia-smi garbled is no sample
        return None
    return {"gpus": [dict((k, g[k]) for k in WATCH_KEYS) for g in gpus], "processes": procs}


def gpu_memory_total_used(info):
    if not info:
        return None
    return sum(g["memory_used_mib"] or 0 for g in info["gpus"])
