# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Xid events in the kernel log: the parser and what each common Xid means.

Target-side code: Python standard library only, Python >= 3.8.

The NVIDIA driver logs GPU faults as ``NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has
fallen off the bus.`` (older drivers: ``NVRM: Xid (0000:01:00): 3, ...``), with or without the dmesg
``[  123.456789]`` or journal ``Dec 03 09:22:03 host kernel:`` prefix. The classes follow NVIDIA's Xid catalog
(docs.nvidia.com/deploy/xid-errors): ``app`` Xids say a program faulted (the GPU itself is fine), ``hardware``
Xids say the GPU, its memory, its links or its firmware failed and the GPU needs a reset, a reboot or service.
"""

from __future__ import annotations

import re

XID_RE = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.\d)?\): (\d+),?\s*(.*)$")
# A driver (re)load starts a new GPU state: Xids logged before it are history, not the state of this driver.
DRIVER_LOAD_RE = re.compile(r"NVRM: loading NVIDIA UNIX")
DMESG_PREFIX_RE = re.compile(r"^\s*\[\s*(\d+\.\d+)\]\s*")
# R535+ put the faulting process first: "pid=1896, name=python3, <text>" or "pid='<unknown>', name=<unknown>, ..."
PROCESS_RE = re.compile(r"^pid=('?[^,]*'?),\s*(?:name=([^,]*),\s*)?")

APP = "app"
HARDWARE = "hardware"
UNKNOWN = "unknown"

RESET = ("reset the GPU (nvidia-smi -r -i {gpu}, with nothing running on it) or reboot the host, then run the "
         "gate again; if it comes back, drain the host and contact the vendor")
REBOOT = "drain the host and reboot it; if it comes back, reseat the GPU, check its power cables and riser, and RMA"
# Blackwell's GPU firmware (GSP) stops answering under sustained load (open-gpu-kernel-modules 1080, 1111, 1159,
# 1200): Xid 119/154/175, Xid 8 after a heartbeat or "probably locked" line, or only those lines; a reboot recovers it.
DRAIN_REBOOT = ("drain the host and reboot it: the GPU's firmware (GSP) stopped answering and only a reboot recovers "
                "it - never relaunch a server on it; run the gate again after the reboot, and if it comes back update "
                "the driver and GPU firmware and contact the vendor")
RESTART_APP = ("a program faulted on this GPU; nothing is wrong with the GPU by itself: read the log of the "
               "program that ran (pid in the detail) before relaunching")

# code -> (class, meaning, remedy). Codes not listed are reported as 'unknown' warnings with the driver's text.
XIDS = {
    8: (APP, "GPU stopped processing (a kernel did not finish; timeout)", RESTART_APP),
    13: (APP, "graphics engine exception (illegal instruction or out-of-range access in a CUDA kernel)",
         RESTART_APP),
    31: (APP, "GPU memory page fault (a kernel touched an address it does not own)", RESTART_APP),
    32: (HARDWARE, "invalid or corrupted push buffer stream (PCIe or driver fault)", RESET),
    38: (HARDWARE, "driver firmware error", RESET),
    43: (APP, "GPU stopped processing a channel (a program faulted and was stopped)", RESTART_APP),
    45: (APP, "preemptive cleanup after an earlier error (a program was killed or ended while faulted)",
         RESTART_APP),
    48: (HARDWARE, "double-bit (uncorrectable) ECC error in GPU memory", RESET),
    61: (HARDWARE, "internal micro-controller breakpoint/warning", RESET),
    62: (HARDWARE, "internal micro-controller halt", RESET),
    63: (HARDWARE, "ECC page retirement or row remapping recorded (takes effect after a GPU reset)", RESET),
    64: (HARDWARE, "ECC page retirement or row remapping FAILED", RESET + "; a failed remap means RMA"),
    68: (HARDWARE, "video decoder (NVDEC) exception", RESET),
    69: (APP, "graphics engine class error", RESTART_APP),
    74: (HARDWARE, "NVLink error (link down, CRC or replay errors beyond the threshold)", RESET +
         "; check the NVLink bridge or baseboard and the Fabric Manager log"),
    79: (HARDWARE, "GPU has fallen off the bus (it stopped answering on PCIe)", REBOOT),
    92: (HARDWARE, "high single-bit ECC error rate", "drain the host and run 'dcgmi diag -r 3'; contact the vendor "
         "if the rate persists"),
    94: (HARDWARE, "contained ECC error (uncorrectable, the affected program was stopped)", RESET),
    95: (HARDWARE, "uncontained ECC error (uncorrectable, every program on this GPU is affected)", RESET),
    109: (HARDWARE, "context switch timeout", RESET),
    110: (HARDWARE, "security fault", RESET),
    119: (HARDWARE, "GSP RPC timeout (the GPU System Processor firmware stopped answering)", DRAIN_REBOOT),
    120: (HARDWARE, "GSP error (the GPU System Processor firmware faulted)", DRAIN_REBOOT),
    121: (HARDWARE, "C2C link error", RESET),
    123: (HARDWARE, "SPI PMU RPC write failure", RESET),
    136: (HARDWARE, "GPU reset did not complete", REBOOT),
    140: (HARDWARE, "unrecovered ECC error (unrepairable memory)", RESET + "; unrepairable memory means RMA"),
    143: (HARDWARE, "GPU initialisation failure", REBOOT),
    144: (HARDWARE, "NVLink SAW error", RESET),
    145: (HARDWARE, "NVLink RLW error", RESET),
    146: (HARDWARE, "NVLink TLW error", RESET),
    147: (HARDWARE, "NVLink TREX error", RESET),
    148: (HARDWARE, "NVLink NVLPW control error", RESET),
    149: (HARDWARE, "NVLink NETIR error", RESET),
    150: (HARDWARE, "NVLink MSE error", RESET),
    154: (HARDWARE, "GPU recovery action changed (the driver asks for a reset, a reboot or a drain)", DRAIN_REBOOT),
    175: (HARDWARE, "GPU firmware fault (the GSP stopped answering; Blackwell under sustained load)", DRAIN_REBOOT),
}
# Xid 8 is a program's timeout, unless the GPU's firmware had stopped answering first: then the GPU is locked.
XID8_LOCKED = (HARDWARE, "GPU stopped processing after its firmware stopped answering (the GPU is locked)", DRAIN_REBOOT)

# The driver's lines when the GPU's firmware stops answering; logged with or without an Xid.
FIRMWARE_LINES = (
    ("gsp_heartbeat", re.compile(r"GSP RM heartbeat timed out"), "the GSP firmware's heartbeat timed out"),
    ("gpu_locked", re.compile(r"RC watchdog: GPU is probably locked"), "the RC watchdog found the GPU locked"),
    ("riscv_halt", re.compile(r"Timeout waiting for RISC-V to halt"), "the GPU's RISC-V core (GSP) did not halt"),
    ("gsp_rpc_timeout", re.compile(r"Timeout after \d+s of waiting for RPC response from GPU\d* GSP"),
     "an RPC to the GSP firmware timed out"),
)


def describe(code):
    """``(class, meaning, remedy)`` for an Xid code; unknown codes keep the driver's own text."""
    return XIDS.get(code, (UNKNOWN, "Xid %d (not in this table; see NVIDIA's Xid catalog)" % code,
                           "look the code up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors)"))


def bus_key(pci):
    """Normalise a PCI address to ``domain:bus:device`` with a 4-digit domain, lower case.

    The kernel log writes ``0000:3b:00``, nvidia-smi ``00000000:3B:00.0``; both become ``0000:3b:00``.
    """
    if not pci:
        return None
    parts = pci.lower().split(".")[0].split(":")
    if len(parts) != 3:
        return None
    domain, bus, device = parts
    return "%04x:%s:%s" % (int(domain, 16) & 0xFFFF, bus.zfill(2), device.zfill(2))


def parse_xids(text):
    """Kernel log text -> list of ``{code, pci, message, line, time}`` for the current driver load.

    Lines before the last ``NVRM: loading NVIDIA UNIX ... Kernel Module`` are dropped: a driver reload resets
    every GPU, so only Xids logged since then describe the state the server would run on.
    """
    events = []
    for line in (text or "").splitlines():
        if DRIVER_LOAD_RE.search(line):
            events = []
            continue
        match = XID_RE.search(line)
        if not match:
            continue
        stamp = DMESG_PREFIX_RE.match(line)
        text = match.group(3).strip()
        process = PROCESS_RE.match(text)
        events.append({
            "code": int(match.group(2)),
            "pci": bus_key(match.group(1)),
            "message": text[process.end():] if process else text,
            "pid": process.group(1).strip("'") if process else None,
            "process": process.group(2) if process and process.group(2) else None,
            "line": line.strip(),
            "time": float(stamp.group(1)) if stamp else None,
        })
    return events


def parse_firmware(text):
    """Kernel log text -> ``[{kind, meaning, line, time}]``: the firmware's own lines since the last driver load."""
    events = []
    for line in (text or "").splitlines():
        if DRIVER_LOAD_RE.search(line):
            events = []
            continue
        if "NVRM" not in line:
            continue
        for kind, rx, meaning in FIRMWARE_LINES:
            if rx.search(line):
                stamp = DMESG_PREFIX_RE.match(line)
                events.append({"kind": kind, "meaning": meaning, "line": line.strip()[:300],
                               "time": float(stamp.group(1)) if stamp else None})
                break
    return events


def pick_log(sources):
    """Choose one kernel log among ``[(name, text)]``: the one that shows the most Xids for this driver load.

    dmesg (the ring buffer, may have rotated on a long-running host) and ``journalctl -k -b`` (this boot, kept
    on disk, but empty for kernel lines inside containers) see the same events; counting both would double
    them. Returns ``(name, events)``; ``(None, [])`` when no source was readable.
    """
    best = (None, [])
    for name, text in sources:
        if text is None:
            continue
        events = parse_xids(text)
        if best[0] is None or len(events) > len(best[1]):
            best = (name, events)
    return best
