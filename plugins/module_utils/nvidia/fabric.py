# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PCIe fabric between GPUs: ACS on the bridges above them, the IOMMU mode, GPU-to-GPU P2P.

Target-side code: Python standard library only, Python >= 3.8. On PCIe-only multi-GPU hosts (8x RTX PRO 6000)
NCCL hangs after init, or runs at half speed, when the bridges above the GPUs redirect peer-to-peer traffic to the
root complex (ACS P2P Request/Completion Redirect) and the IOMMU translates it (NVIDIA/nccl#2079, vllm#33041).
:func:`collect` reads ``lspci -vvv -D``, ``nvidia-smi topo -p2p r``, ``/proc/cmdline`` and the GPUs' IOMMU groups;
:func:`evaluate` judges them (rules in docs/gpu_health.md, "The PCIe fabric"). The parsers read the real outputs
in ``tests/fixtures/nvidia/fabric/``.
"""

from __future__ import annotations

import os
import re

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as smi_mod

ERROR = "error"
WARNING = "warning"
CHECKS = ["pcie_acs", "iommu", "gpu_p2p"]

# ACS control bits (PCIe base spec 7.7.8.3; lspci's names). Only the redirect bits send peer-to-peer traffic up
# to the root complex: Source Validation and Upstream Forwarding alone leave it in the switch (the real 8x RTX
# PRO 6000 box in tests/fixtures/nvidia/fabric/rtxpro6000x8-asus runs P2P at full speed with SrcValid+ UpstreamFwd+).
REDIRECT_BITS = ("ReqRedir", "CmpltRedir", "EgressCtrl")
ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
P2P_MEANING = {
    "OK": "supported", "CNS": "chipset not supported", "GNS": "GPU not supported", "TNS": "topology not supported",
    "NS": "not supported", "DR": "disabled by regkey", "U": "unknown",
}
TRANSLATED = "translated"
PASSTHROUGH = "passthrough"
OFF = "off"
UNKNOWN = "unknown"

HEADER_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])\s+(.*)$")
BUS_RE = re.compile(r"^Bus:\s*primary=([0-9a-fA-F]+),\s*secondary=([0-9a-fA-F]+),\s*subordinate=([0-9a-fA-F]+)")
ACS_RE = re.compile(r"^ACS(Cap|Ctl):\s*(.*)$")
GROUP_RE = re.compile(r"^IOMMU group:\s*(\d+)")


def bdf_of(bus_id):
    """``00000000:18:00.0`` (nvidia-smi) or ``18:00.0`` (lspci) -> ``0000:18:00.0``; None when not an address."""
    parts = (bus_id or "").strip().lower().split(":")
    if len(parts) == 2:
        parts = ["0"] + parts
    if len(parts) != 3 or not re.match(r"^[0-9a-f]{2}\.[0-7]$", parts[2]):
        return None
    try:
        return "%04x:%02x:%s" % (int(parts[0], 16) & 0xFFFF, int(parts[1], 16), parts[2])
    except ValueError:
        return None


def _flags(text):
    return dict((name, sign == "+") for name, sign in re.findall(r"([A-Za-z]+)([+-])", text))


def parse_lspci(text):
    """``lspci -vvv [-D]`` -> ``{bdf: {bdf, name, secondary, subordinate, acs_cap, acs_ctl, denied, group}}``.

    Reads the real output (tabs) and pastes whose tabs became spaces. ``acs_ctl`` is None where the device has no
    ACS capability, ``denied`` is True where lspci could not read the capabilities (not root).
    """
    devices = {}
    current = None
    for line in smi_mod.strip_ansi(text or "").splitlines():
        header = HEADER_RE.match(line)
        if header:
            domain, bus, slot, func, name = header.groups()
            bdf = "%s:%s:%s.%s" % ((domain or "0000").lower(), bus.lower(), slot.lower(), func)
            current = {"bdf": bdf, "name": name.strip(), "secondary": None, "subordinate": None,
                       "acs_cap": None, "acs_ctl": None, "denied": False, "group": None}
            devices[bdf] = current
            continue
        if current is None or not line[:1].isspace():
            continue
        body = line.strip()
        bus = BUS_RE.match(body)
        if bus:
            current["secondary"], current["subordinate"] = int(bus.group(2), 16), int(bus.group(3), 16)
            continue
        acs = ACS_RE.match(body)
        if acs:
            current["acs_cap" if acs.group(1) == "Cap" else "acs_ctl"] = _flags(acs.group(2))
            continue
        if body.startswith("Capabilities: <access denied>"):
            current["denied"] = True
            continue
        group = GROUP_RE.match(body)
        if group:
            current["group"] = int(group.group(1))
    return devices


def bridges_above(devices, bdf):
    """The bridges between a device and its root bus, nearest first (read from the bridges' bus ranges)."""
    chain = []
    domain, bus = bdf.split(":")[0], int(bdf.split(":")[1], 16)
    seen = set()
    while True:
        parent = None
        for dev in devices.values():
            if dev["secondary"] == bus and dev["bdf"].startswith(domain + ":") and dev["bdf"] not in seen:
                parent = dev
                break
        if parent is None:
            return chain
        chain.append(parent)
        seen.add(parent["bdf"])
        bus = int(parent["bdf"].split(":")[1], 16)


def redirects(dev):
    """The ACS redirect bits a bridge has enabled (empty: P2P is routed in the fabric)."""
    return [bit for bit in REDIRECT_BITS if (dev["acs_ctl"] or {}).get(bit)]


def parse_p2p(text):
    """``nvidia-smi topo -p2p r`` (or ``rw``/``w``) -> ``{"i-j": status}`` for each GPU pair i < j, or None."""
    header = None
    pairs = {}
    for line in smi_mod.strip_ansi(text or "").splitlines():
        tokens = line.split()
        if not tokens or tokens[0] == "Legend:":
            if header and pairs:
                break
            continue
        if header is None:
            if all(re.match(r"^GPU\d+$", tok) for tok in tokens):
                header = [int(tok[3:]) for tok in tokens]
            continue
        if re.match(r"^GPU\d+$", tokens[0]):
            row = int(tokens[0][3:])
            for col, cell in zip(header, tokens[1:]):
                if row < col:
                    pairs["%d-%d" % (row, col)] = cell
                elif col < row:
                    pairs.setdefault("%d-%d" % (col, row), cell)
    return pairs if header else None


def parse_cmdline(text):
    """Kernel command line -> the IOMMU and ACS settings on it: ``{intel_iommu, amd_iommu, iommu, passthrough,
    acs}``, each the value as given or None."""
    settings = {"intel_iommu": None, "amd_iommu": None, "iommu": None, "passthrough": None, "acs": []}
    for word in (text or "").split():
        key, value = word.partition("=")[::2]
        if key in ("intel_iommu", "amd_iommu", "iommu"):
            settings[key] = value
        elif key == "iommu.passthrough":
            settings["passthrough"] = value
        elif key == "pci" and "acs" in value:
            settings["acs"].append(word)
        elif key in ("pcie_acs_override", "pci_acs_override"):
            settings["acs"].append(word)
    return settings


def _cmdline_mode(settings):
    """What the command line says about GPU DMA, where the kernel gives no per-group type (before Linux 5.11)."""
    values = [settings["intel_iommu"] or "", settings["amd_iommu"] or "", settings["iommu"] or ""]
    if settings["iommu"] == "pt" or settings["passthrough"] in ("1", "y", "on") or "pt" in values[:2]:
        return PASSTHROUGH
    if settings["iommu"] == "off" or "off" in values[:2]:
        return OFF
    return TRANSLATED


def read_iommu(gpu_bdfs, cmdline_text, devices_dir="/sys/bus/pci/devices", groups_dir="/sys/kernel/iommu_groups"):
    """Each GPU's IOMMU domain: ``{bdf: {group, type, mode}}`` plus the host's ``groups`` count.

    ``mode`` is ``translated`` (domain type DMA/DMA-FQ: every DMA goes through the IOMMU's page tables),
    ``passthrough`` (identity: iommu=pt), ``off`` (the GPU is in no group: no IOMMU), or ``unknown`` (the GPU is not
    in this sysfs: a container without it, a test host).
    """
    try:
        groups = len(os.listdir(groups_dir))
    except OSError:
        groups = None
    settings = parse_cmdline(cmdline_text)
    gpus = {}
    for bdf in gpu_bdfs:
        path = os.path.join(devices_dir, bdf)
        entry = {"group": None, "type": None, "mode": UNKNOWN}
        if os.path.isdir(path):
            link = os.path.join(path, "iommu_group")
            if not os.path.exists(link):
                entry["mode"] = OFF
            else:
                entry["group"] = os.path.basename(os.path.realpath(link))
                try:
                    with open(os.path.join(link, "type")) as handle:
                        entry["type"] = handle.read().strip()
                except (IOError, OSError):
                    entry["type"] = None
                kind = (entry["type"] or "").lower()
                if kind.startswith("dma"):
                    entry["mode"] = TRANSLATED
                elif kind == "identity":
                    entry["mode"] = PASSTHROUGH
                elif kind:
                    entry["mode"] = kind
                else:
                    entry["mode"] = _cmdline_mode(settings)
        gpus[bdf] = entry
    return {"groups": groups, "cmdline": settings, "gpus": gpus}


def applies(gpus, topology):
    """``(True, why)`` where P2P between GPUs crosses PCIe: two or more GPUs and a pair without NVLink."""
    if len(gpus) < 2:
        return False, "one GPU: no GPU-to-GPU traffic"
    if topology and topology.get("all_nvlink"):
        return False, "every GPU pair is joined by NVLink: GPU-to-GPU traffic does not cross PCIe"
    return True, "%d GPUs, %s" % (len(gpus), "PCIe only" if (topology or {}).get("pcie_only") else
                                  "some pairs over PCIe" if topology else "topology unknown")


def collect(run, which, smi, gpus, topology, cmdline_path="/proc/cmdline", devices_dir="/sys/bus/pci/devices",
            groups_dir="/sys/kernel/iommu_groups"):
    """Gather the fabric facts for the GPUs (``gpus`` as health.collect has them). Never raises."""
    ok, why = applies(gpus, topology)
    facts = {"applies": ok, "why": why, "lspci": None, "lspci_error": None, "gpus": [], "p2p": None,
             "p2p_error": None, "iommu": None}
    if not ok:
        return facts
    lspci = which("lspci")
    devices = {}
    if lspci:
        rc, out, err = run([lspci, "-vvv", "-D"])
        if rc == 0:
            devices = parse_lspci(out)
            facts["lspci"] = "ok"
        else:
            facts["lspci_error"] = "lspci -vvv -D: rc=%s %s" % (rc, (err or out or "").strip()[:200])
    else:
        facts["lspci_error"] = "lspci is not installed (package pciutils)"
    for gpu in gpus:
        bdf = bdf_of(gpu["pci_bus_id"])
        bridges = bridges_above(devices, bdf) if bdf and devices else []
        facts["gpus"].append({
            "index": gpu["index"], "bdf": bdf, "in_lspci": bool(bdf and bdf in devices),
            "bridges": [{"bdf": dev["bdf"], "name": dev["name"], "acs_ctl": dev["acs_ctl"],
                         "redirect": redirects(dev), "denied": dev["denied"]} for dev in bridges],
        })
    rc, out, err = run([smi, "topo", "-p2p", "r"])
    if rc == 0:
        facts["p2p"] = parse_p2p(out)
    else:
        facts["p2p_error"] = "nvidia-smi topo -p2p r: rc=%s %s" % (rc, (err or out or "").strip()[:200])
    try:
        with open(cmdline_path) as handle:
            cmdline = handle.read()
    except (IOError, OSError):
        cmdline = ""
    facts["iommu"] = read_iommu([g["bdf"] for g in facts["gpus"] if g["bdf"]], cmdline, devices_dir, groups_dir)
    return facts


# ---------------------------------------------------------------- verdicts

def _problem(check, severity, detail, remedy, gpu=None):
    return {"check": check, "gpu": gpu, "severity": severity, "detail": detail, "remedy": remedy}


def _peer_status(p2p, index, gpus):
    """The P2P statuses nvidia-smi reports between GPU ``index`` and the others (None: not read)."""
    if p2p is None:
        return None
    found = []
    for other in gpus:
        if other["index"] == index:
            continue
        low, high = sorted((index, other["index"]))
        found.append(p2p.get("%d-%d" % (low, high), "U"))
    return found


def _short(bdf):
    return bdf[5:] if bdf and bdf.startswith("0000:") else bdf


ACS_FIX = ("disable ACS redirect on %s: in the BIOS (AMD: 'ACS Enable' -> Disabled under NBIO/PCIe; Intel: "
           "'ACS Control' -> Disabled under IIO/VT-d; some boards call it 'PCIe ACS'), or with the kernel "
           "parameter pci=disable_acs_redir=%s (reboot), or now and at every boot: %s. Cost: ACS is what keeps "
           "devices behind these bridges isolated from each other for VM passthrough (VFIO) and multi-tenant "
           "hosts; the BIOS and kernel routes need a reboot, setpci is lost at the next one. "
           "NCCL_P2P_DISABLE=1 avoids the hang without any of this, but every all-reduce then goes through host "
           "memory")

IOMMU_FIX = ("boot with iommu=pt (the IOMMU stays on for VFIO/passthrough devices, host drivers get an identity "
             "mapping: P2P is no longer translated), or intel_iommu=off / amd_iommu=off (no IOMMU at all: no DMA "
             "protection against a faulty or malicious device, no VFIO passthrough); both need a reboot")


def evaluate(fabric):
    """Fabric facts -> ``(problems, notes)``. Rules (docs/gpu_health.md, "The PCIe fabric"):

    - ``pcie_acs``: a bridge above a GPU has ACS P2P redirect on. Error where nvidia-smi reports P2P OK for that
      GPU (NCCL will use P2P and every transfer bounces off the root complex) and the IOMMU translates its DMA or
      that is unknown: the hang of nccl#2079 / vllm#33041. Warning where the IOMMU is off or in passthrough (the
      transfers arrive, at about half the bandwidth), or where P2P is not OK for any peer (NCCL does not use P2P).
    - ``iommu``: the IOMMU translates the GPUs' DMA. Error where P2P is reported OK between them (peer traffic is
      translated: the reported hangs), warning where it is not.
    - ``gpu_p2p``: a GPU pair without P2P: warning (all-reduce goes through host memory); GNS (a GPU model
      without P2P, GeForce) is a note.
    """
    problems, notes = [], []
    if not fabric or not fabric["applies"]:
        if fabric:
            notes.append("PCIe fabric not checked: %s" % fabric["why"])
        return problems, notes
    by_index = dict((g["index"], g) for g in fabric["gpus"])
    iommu = fabric["iommu"] or {"gpus": {}}
    modes = dict((g["index"], (iommu["gpus"].get(g["bdf"]) or {}).get("mode", UNKNOWN)) for g in fabric["gpus"])
    p2p = fabric["p2p"]
    label = dict((g["index"], "GPU%s (%s)" % (g["index"], _short(g["bdf"]))) for g in fabric["gpus"])

    # ACS: one finding per set of GPUs behind the same redirecting bridges, so the fix lists each bridge once.
    if fabric["lspci_error"]:
        problems.append(_problem("pcie_acs", WARNING, "ACS not checked: %s" % fabric["lspci_error"],
                                 "install pciutils (apt-get install pciutils) so the gate can read the bridges"))
    denied = sorted(set(b["bdf"] for g in fabric["gpus"] for b in g["bridges"] if b["denied"]))
    if denied:
        problems.append(_problem("pcie_acs", WARNING, "ACS not readable on %s: lspci needs root to read the "
                                 "bridges' capabilities" % ", ".join(_short(b) for b in denied),
                                 "run the gate with become: true"))
    if not fabric["lspci_error"]:
        missing = [g["index"] for g in fabric["gpus"] if not g["in_lspci"]]
        if missing:
            notes.append("GPU%s not in lspci's listing: its bridges were not checked" % ", GPU".join(
                str(i) for i in missing))
    for severity, indexes, bridges, why in _acs_findings(fabric, p2p, modes):
        names = ", ".join("%s (%s: %s)" % (_short(b["bdf"]), _device_name(b["name"]), " ".join(
            bit + "+" for bit in b["redirect"])) for b in bridges)
        addresses = [_short(b["bdf"]) for b in bridges]
        setpci = "; ".join("setpci -s %s ECAP_ACS+0x6.w=0000" % a for a in addresses)
        problems.append(_problem(
            "pcie_acs", severity, "%s: ACS redirects peer-to-peer traffic to the root complex on the bridge(s) "
            "above them: %s; %s" % (", ".join(label[i] for i in indexes), names, why),
            ACS_FIX % (", ".join(addresses), ";".join(addresses), setpci), indexes[0]))

    translated = [i for i in sorted(by_index) if modes[i] == TRANSLATED]
    if translated:
        statuses = [s for i in translated for s in (_peer_status(p2p, i, fabric["gpus"]) or ["U"])]
        kind = sorted(set((iommu["gpus"].get(by_index[i]["bdf"]) or {}).get("type") or "from the kernel command "
                          "line" for i in translated))
        detail = "%s: the IOMMU translates their DMA (domain type %s)" % (
            ", ".join(label[i] for i in translated), "/".join(kind))
        if "OK" in statuses or "U" in statuses:
            problems.append(_problem("iommu", ERROR, detail + "; %s, so NCCL sends GPU-to-GPU traffic through the "
                                     "IOMMU: NCCL hangs after init on such hosts (vllm#33041, NVIDIA NCCL "
                                     "troubleshooting 'IOMMU')" % ("nvidia-smi reports P2P OK between them" if "OK" in
                                                                   statuses else "P2P between them was not read"),
                                     IOMMU_FIX, translated[0]))
        else:
            problems.append(_problem("iommu", WARNING, detail + "; P2P is not available between them, so NCCL "
                                     "copies through host memory (slower all-reduce)", IOMMU_FIX, translated[0]))
    elif iommu.get("gpus") and all(m == UNKNOWN for m in modes.values()):
        notes.append("IOMMU mode of the GPUs unknown: they are not in this host's sysfs (kernel command line: "
                     "%s)" % _cmdline_summary(iommu["cmdline"]))
    else:
        notes.append("IOMMU (%s groups on the host): %s" % (
            "?" if iommu.get("groups") is None else iommu["groups"],
            ", ".join("%s %s" % (label[i], modes[i]) for i in sorted(modes))))

    if fabric["p2p_error"]:
        problems.append(_problem("gpu_p2p", WARNING, "P2P not checked: %s" % fabric["p2p_error"],
                                 "run 'nvidia-smi topo -p2p r' by hand to see why"))
    elif p2p is not None:
        bad = dict((pair, status) for pair, status in p2p.items() if status != "OK")
        gns = sorted(pair for pair, status in bad.items() if status == "GNS")
        if gns:
            notes.append("P2P not supported by this GPU model (GNS) for GPU pairs %s: NCCL uses host memory, "
                         "nothing to fix on the host" % ", ".join(gns))
        others = sorted(pair for pair in bad if bad[pair] != "GNS")
        if others:
            # the GPU in most of the pairs: the one whose link to its peers is cut
            ends = [int(end) for pair in others for end in pair.split("-")]
            first = max(sorted(set(ends)), key=ends.count)
            problems.append(_problem(
                "gpu_p2p", WARNING, "no GPU-to-GPU P2P between %s: %s" % (", ".join(
                    "GPU%s-GPU%s" % tuple(pair.split("-")) for pair in others[:8]) + (
                        " and %d more pair(s)" % (len(others) - 8) if len(others) > 8 else ""),
                    "; ".join(sorted(set("%s = %s" % (bad[p], P2P_MEANING.get(bad[p], bad[p])) for p in others)))),
                "NCCL falls back to copies through host memory (all-reduce slower; SGLang's custom all-reduce is "
                "off). Check the BIOS (PCIe P2P / 'Above 4G decoding' / ACS), the IOMMU mode and the driver; "
                "see the pcie_acs and iommu findings", first))
    return problems, notes


def _acs_findings(fabric, p2p, modes):
    """Group GPUs by the redirecting bridges above them: ``[(severity, [gpu indexes], [bridges], why)]``."""
    groups = {}
    for gpu in fabric["gpus"]:
        bad = [b for b in gpu["bridges"] if b["redirect"]]
        if not bad:
            continue
        peers = _peer_status(p2p, gpu["index"], fabric["gpus"])
        mode = modes.get(gpu["index"], UNKNOWN)
        if peers is not None and "OK" not in peers and "U" not in peers:
            severity = WARNING
            why = ("nvidia-smi reports no P2P for them (%s), so NCCL copies through host memory instead: slower, "
                   "no hang; the redirect is a likely reason P2P is off" % "/".join(sorted(set(peers))))
        elif mode in (OFF, PASSTHROUGH):
            severity = WARNING
            why = ("with the IOMMU %s the redirected transfers still arrive, at about half the bandwidth of the "
                   "direct path (a real 8x RTX PRO 6000 box: ~50 vs ~103 GB/s)" % mode)
        else:
            severity = ERROR
            why = ("nvidia-smi reports P2P %s and the IOMMU %s, so NCCL sends GPU-to-GPU traffic that the bridges "
                   "bounce through the IOMMU: the NCCL hang after init of NVIDIA/nccl#2079 and vllm#33041" % (
                       "OK" if peers and "OK" in peers else "not read", "translates their DMA" if mode == TRANSLATED
                       else "mode is unknown here"))
        key = (severity, tuple(b["bdf"] for b in bad))
        groups.setdefault(key, {"gpus": [], "bridges": bad, "why": why})["gpus"].append(gpu["index"])
    findings = []
    for key, entry in sorted(groups.items(), key=lambda item: (item[0][0] != ERROR, item[1]["gpus"])):
        findings.append((key[0], entry["gpus"], entry["bridges"], entry["why"]))
    # Bridges shared by several GPUs (a switch's upstream port, a root port) are named once per finding; merge the
    # findings that share a severity and a reason so an 8-GPU host with one bad root port reads as one line.
    merged = []
    for severity, indexes, bridges, why in findings:
        for item in merged:
            if item[0] == severity and item[3] == why:
                item[1].extend(indexes)
                known = set(b["bdf"] for b in item[2])
                item[2].extend(b for b in bridges if b["bdf"] not in known)
                break
        else:
            merged.append((severity, list(indexes), list(bridges), why))
    return merged


def _device_name(name):
    """``PCI bridge: Advanced Micro Devices, Inc. [AMD] Device 153e (prog-if 00 [Normal decode])`` -> the vendor and
    device only."""
    name = name.split(": ", 1)[-1]
    return re.sub(r"\s*\((?:prog-if|rev) [^)]*\)", "", name).strip()


def _cmdline_summary(settings):
    given = ["%s=%s" % (key, settings[key]) for key in ("intel_iommu", "amd_iommu", "iommu") if settings[key]]
    if settings["passthrough"]:
        given.append("iommu.passthrough=%s" % settings["passthrough"])
    return " ".join(given + settings["acs"]) or "no IOMMU setting (the kernel's default)"
