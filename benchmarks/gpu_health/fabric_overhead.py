#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the PCIe fabric checks add to the GPU health gate on a healthy host, against the gate without them.

1. The gate end to end (module_utils/nvidia/health collect + evaluate, every command a real process) on a healthy
   8x RTX PRO 6000 fake host (tools/fake_nvidia: nvidia-smi, lspci, dmesg), pcie_fabric off and on, interleaved in
   one run so both see the same machine load. The fabric adds two commands (lspci -vvv -D, nvidia-smi topo -p2p r)
   and a few sysfs reads.
2. The fabric's own parsing and judging on the real lspci captures of tests/fixtures/nvidia/fabric (an 8x RTX PRO
   6000 host, 202 PCI functions; an 8x H100 host, 517), which are far larger than the fake's 16-device tree.

The fake tools are Python scripts, so each command costs a Python start here; real nvidia-smi calls cost more and
a real lspci -vvv reads every device's config space: the ratio is a bound on this machine, not a GPU host's figure.

Usage: python3 benchmarks/gpu_health/fabric_overhead.py [--runs 15]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "collections"))

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import fabric  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health  # noqa: E402

FAKE = os.path.join(REPO, "tools", "fake_nvidia")
FIX = os.path.join(REPO, "tests", "fixtures", "nvidia", "fabric")


def fake_host():
    env = dict(os.environ, FAKE_NVIDIA_PROFILE="rtxpro6000x8", FAKE_NVIDIA_FAULTS="")
    calls = []

    def run(argv):
        calls.append(argv)
        proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    tools = {"nvidia-smi": os.path.join(FAKE, "nvidia-smi"), "lspci": os.path.join(FAKE, "lspci"),
             "dmesg": os.path.join(FAKE, "dmesg")}
    return run, tools.get, calls


def gate_once(pcie_fabric, scratch):
    run, which, calls = fake_host()
    start = time.perf_counter()
    facts = health.collect(run, which, sysfs=os.path.join(scratch, "sys"), proc_root=os.path.join(scratch, "proc"),
                           pcie_fabric=pcie_fabric, iommu_groups=os.path.join(scratch, "groups"))
    problems = health.evaluate(facts, {"expected_count": 8})
    elapsed = time.perf_counter() - start
    if [p for p in problems if p["severity"] == health.ERROR]:
        raise SystemExit("the healthy fake host is not healthy: %s" % problems)
    return elapsed, len(calls)


def parse_once(name, buses):
    with open(os.path.join(FIX, name, "lspci-vvv.txt")) as handle:
        text = handle.read()
    gpus = [{"index": i, "pci_bus_id": "00000000:%s:00.0" % bus} for i, bus in enumerate(buses)]
    p2p = dict(("%d-%d" % (a, b), "OK") for a in range(len(buses)) for b in range(a + 1, len(buses)))
    start = time.perf_counter()
    devices = fabric.parse_lspci(text)
    facts = {"applies": True, "why": "", "lspci_error": None, "p2p": p2p, "p2p_error": None,
             "iommu": {"gpus": {}, "cmdline": fabric.parse_cmdline("")}, "gpus": []}
    for gpu in gpus:
        bdf = fabric.bdf_of(gpu["pci_bus_id"])
        facts["gpus"].append({"index": gpu["index"], "bdf": bdf, "in_lspci": bdf in devices, "bridges": [
            {"bdf": d["bdf"], "name": d["name"], "acs_ctl": d["acs_ctl"], "redirect": fabric.redirects(d),
             "denied": d["denied"]} for d in fabric.bridges_above(devices, bdf)]})
    fabric.evaluate(facts, gpus)
    return time.perf_counter() - start, len(devices)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="fabric_bench_")
    gate_once(True, scratch)  # warm the page cache and the interpreter's imports
    times = {False: [], True: []}
    commands = {}
    for i in range(args.runs):
        for flag in ((False, True) if i % 2 == 0 else (True, False)):
            elapsed, count = gate_once(flag, scratch)
            times[flag].append(elapsed)
            commands[flag] = count
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print("gate on a healthy fake 8x RTX PRO 6000 host, %d interleaved runs each:" % args.runs)
    print("  without the fabric checks: median %.1f ms (max %.1f), %d commands" % (
        off * 1e3, max(times[False]) * 1e3, commands[False]))
    print("  with the fabric checks:    median %.1f ms (max %.1f), %d commands" % (
        on * 1e3, max(times[True]) * 1e3, commands[True]))
    print("  added: %.1f ms, ratio with/without %.2f" % ((on - off) * 1e3, on / off))
    for name, buses in (("rtxpro6000x8-asus", ["06", "07", "75", "76", "84", "85", "F4", "F5"]),
                        ("h100x8-gpud", ["19", "3B", "4C", "5D", "9B", "BB", "CB", "DB"])):
        samples = [parse_once(name, buses) for _ in range(args.runs)]
        print("parse + walk + judge the real %s lspci (%d functions): median %.1f ms" % (
            name, samples[0][1], statistics.median(s[0] for s in samples) * 1e3))


if __name__ == "__main__":
    main()
