# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PCIe fabric checks of the GPU health gate: parsers on real lspci/topo captures, the verdict rules.

Fixtures (tests/fixtures/nvidia/fabric/README.md): a real 8x RTX PRO 6000 Blackwell Server Edition host with ACS
redirect cleared and the IOMMU off (P2P at full speed there), a real 8x H100 host whose only redirecting bridges
are a PMC-Sierra switch's ports, and a public 2x RTX 5090 ``topo -p2p rw`` (GNS).
"""
import testpaths
import os
import subprocess

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import fabric
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as ns

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "nvidia")
FAKE = os.path.join(testpaths.REPO, "tools", "fake_nvidia")
ASUS_GPUS = ["06", "07", "75", "76", "84", "85", "f4", "f5"]  # its nvidia-smi -q Bus Ids, in GPU order
# The real H100 capture's endpoints behind the PMC-Sierra switch whose downstream ports redirect (82:00.0-82:03.0).
# They are NVSwitches there; the walk and the rules read only the bridges, so they stand in for four PCIe GPUs.
H100_REDIRECTED = ["83", "84", "85", "86"]


def fixture(*parts):
    with open(os.path.join(FIX, *parts)) as handle:
        return handle.read()


def fake(argv, profile="rtxpro6000x8", faults="", **env):
    proc = subprocess.run([os.path.join(FAKE, argv[0])] + argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=True,
                          env=dict(os.environ, FAKE_NVIDIA_PROFILE=profile, FAKE_NVIDIA_FAULTS=faults, **env))
    return proc.stdout


def gpus_at(buses):
    return [{"index": i, "pci_bus_id": "00000000:%s:00.0" % bus.upper()} for i, bus in enumerate(buses)]


def sysfs(tmp_path, buses, domain_type=None):
    """A /sys/bus/pci/devices and /sys/kernel/iommu_groups as the kernel lays them out: each GPU's device folder
    (``buses``: bus numbers of GPUs at <bus>:00.0, or full addresses),
    with an ``iommu_group`` link to its group (holding ``type``) when ``domain_type`` is given (None: no IOMMU)."""
    devices, groups = tmp_path / "devices", tmp_path / "iommu_groups"
    devices.mkdir()
    groups.mkdir()
    for number, bus in enumerate(buses):
        dev = devices / (bus if ":" in bus else "0000:%s:00.0" % bus)
        dev.mkdir()
        if domain_type:
            group = groups / str(40 + number)
            group.mkdir()
            (group / "type").write_text(domain_type + "\n")
            os.symlink(str(group), str(dev / "iommu_group"))
    return str(devices), str(groups)


class Host(object):
    """Answers lspci and topo -p2p from text; records nothing else (the fabric collector runs only those)."""

    def __init__(self, lspci, p2p):
        self.lspci, self.p2p = lspci, p2p

    def run(self, argv):
        if argv[0].endswith("lspci"):
            return 0, self.lspci, ""
        if argv[1:4] == ["topo", "-p2p", "r"]:
            return 0, self.p2p, ""
        raise AssertionError("unexpected command %s" % argv)

    @staticmethod
    def which(name):
        return "/usr/bin/" + name


def collect(tmp_path, lspci, buses, p2p, cmdline="", domain_type=None, topology=None):
    devices, groups = sysfs(tmp_path, buses, domain_type)
    (tmp_path / "cmdline").write_text(cmdline)
    host = Host(lspci, p2p)
    topology = topology or {"all_nvlink": False, "pcie_only": True}
    return fabric.collect(host.run, host.which, "/usr/bin/nvidia-smi", gpus_at(buses), topology,
                          cmdline_path=str(tmp_path / "cmdline"), devices_dir=devices, groups_dir=groups)


def verdict(facts, buses):
    problems, notes = fabric.evaluate(facts)
    return problems, notes


def p2p_all(status, count):
    """A ``topo -p2p r`` for ``count`` GPUs in the real layout: the fake's 8-GPU output (format of
    ../cuda13-h200/topo-p2p-rw.txt), cut to ``count`` GPUs when fewer."""
    text = fake(["nvidia-smi", "topo", "-p2p", "r"], faults="" if status == "OK" else ",".join(
        "p2p_ns:%d" % i for i in range(8)))
    lines = text.splitlines(True)
    keep = [lines[0].replace("".join("GPU%d\t" % i for i in range(count, 8)), "")]
    for line in lines[1:count + 1]:
        cells = line.split("\t")
        keep.append("\t".join(cells[:count + 1]) + "\t\n")
    return "".join(keep)


# ---------------------------------------------------------------- parsers on real captures

def test_real_rtxpro6000_host_walks_each_gpu_up_to_its_root_port():
    devices = fabric.parse_lspci(fixture("fabric", "rtxpro6000x8-asus", "lspci-vvv.txt"))
    chains = dict((bus, [d["bdf"] for d in fabric.bridges_above(devices, "0000:%s:00.0" % bus)]) for bus in ASUS_GPUS)
    # GPU -> PEX890xx downstream port -> PEX890xx upstream port -> AMD root port
    assert chains["06"] == ["0000:02:03.0", "0000:01:00.0", "0000:00:01.1"]
    assert chains["f5"] == ["0000:f2:02.0", "0000:f1:00.0", "0000:f0:01.1"]
    root = devices["0000:00:01.1"]
    assert root["acs_ctl"] == {"SrcValid": True, "TransBlk": False, "ReqRedir": False, "CmpltRedir": False,
                               "UpstreamFwd": True, "EgressCtrl": False, "DirectTrans": False}
    assert devices["0000:01:00.0"]["acs_ctl"] is None  # the switch's upstream port has no ACS capability
    # SrcValid+ UpstreamFwd+ (their setpci value 0x0011) does not redirect: P2P ran at ~103 GB/s there
    assert not any(fabric.redirects(devices[bdf]) for chain in chains.values() for bdf in chain)


def test_real_h100_host_finds_the_redirecting_switch_ports():
    devices = fabric.parse_lspci(fixture("fabric", "h100x8-gpud", "lspci-vvv.txt"))
    gpu_chain = fabric.bridges_above(devices, "0000:19:00.0")
    assert [d["bdf"] for d in gpu_chain] == ["0000:17:01.0", "0000:16:00.0", "0000:15:01.0"]
    assert not any(fabric.redirects(d) for d in gpu_chain)
    chain = fabric.bridges_above(devices, "0000:84:00.0")
    assert [(d["bdf"], fabric.redirects(d)) for d in chain] == [
        ("0000:82:01.0", ["ReqRedir", "CmpltRedir"]), ("0000:81:00.0", []), ("0000:80:01.0", [])]
    # SrcValid+ alone (two Intel root ports of this host) is not a redirect
    assert devices["0000:00:0c.0"]["acs_ctl"]["SrcValid"] and not fabric.redirects(devices["0000:00:0c.0"])


def test_lspci_as_a_user_marks_the_capabilities_denied():
    devices = fabric.parse_lspci(fake(["lspci", "-vvv", "-D"], FAKE_LSPCI_USER="1"))
    root = devices["0000:17:01.1"]
    assert root["denied"] and root["acs_ctl"] is None and root["secondary"] == 0x18


def test_p2p_matrices_real_and_fake():
    assert fabric.parse_p2p(fixture("fabric", "public", "topo-p2p-rw-rtx5090x2-gns.txt")) == {"0-1": "GNS"}
    assert fabric.parse_p2p(fixture("cuda13-h200", "topo-p2p-rw.txt")) == {}  # one GPU: no pair
    pairs = fabric.parse_p2p(fake(["nvidia-smi", "topo", "-p2p", "r"], faults="p2p_ns:2"))
    assert len(pairs) == 28 and pairs["0-1"] == "OK" and pairs["2-7"] == "NS" and pairs["1-2"] == "NS"


@pytest.mark.parametrize("cmdline, mode", [
    (None, fabric.OFF),  # the real RTX PRO 6000 host's command line
    ("BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt", fabric.PASSTHROUGH),
    ("BOOT_IMAGE=/vmlinuz ro iommu.passthrough=1", fabric.PASSTHROUGH),
    ("BOOT_IMAGE=/vmlinuz ro intel_iommu=on", fabric.TRANSLATED),
    ("BOOT_IMAGE=/vmlinuz ro quiet", fabric.TRANSLATED),
])
def test_kernel_command_line_mode_where_the_group_has_no_type(cmdline, mode):
    text = cmdline if cmdline is not None else fixture("fabric", "rtxpro6000x8-asus", "proc-cmdline.txt")
    assert fabric._cmdline_mode(fabric.parse_cmdline(text)) == mode


def test_iommu_domain_type_decides_over_the_command_line(tmp_path):
    devices, groups = sysfs(tmp_path, ["18", "2a"], "DMA-FQ")
    info = fabric.read_iommu(["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0"], "iommu=pt", devices, groups)
    assert info["groups"] == 2
    assert info["gpus"]["0000:18:00.0"] == {"group": "40", "type": "DMA-FQ", "mode": fabric.TRANSLATED}
    assert info["gpus"]["0000:3a:00.0"]["mode"] == fabric.UNKNOWN  # not in this sysfs


def test_real_h200_p2p_r_and_iommu_listing(tmp_path):
    # The lent H200 (tests/fixtures/nvidia/h200-fabric): topo -p2p r of one GPU, no IOMMU group although the
    # kernel's default domain type is "Translated"; the GPU's sysfs folder exists (h200-device/pci-sysfs.txt).
    assert fabric.parse_p2p(fixture("h200-fabric", "topo-p2p-r.txt")) == {}
    cmdline = fixture("h200-fabric", "proc-cmdline.txt")
    assert fabric._cmdline_mode(fabric.parse_cmdline(cmdline)) == fabric.TRANSLATED  # what the fallback would say
    assert "Default domain type: Translated" in fixture("h200-fabric", "dmesg-iommu.txt")
    slot = [line.split()[0] for line in fixture("h200-device", "pci-sysfs.txt").splitlines() if "0x10de" in line][0]
    devices, groups = sysfs(tmp_path, [slot])
    assert int(fixture("h200-fabric", "iommu-groups-count.txt")) == len(os.listdir(groups)) == 0
    info = fabric.read_iommu([slot], cmdline, devices, groups)
    assert info["gpus"][slot] == {"group": None, "type": None, "mode": fabric.OFF}
    one = fabric.collect(None, None, "/usr/bin/nvidia-smi", gpus_at(["00"]), ns.parse_topology(
        fixture("h200-health", "topo-m.txt")))
    assert not one["applies"]


# ---------------------------------------------------------------- verdicts

def test_real_rtxpro6000_host_with_acs_redirect_cleared_and_iommu_off_is_clean(tmp_path):
    facts = collect(tmp_path, fixture("fabric", "rtxpro6000x8-asus", "lspci-vvv.txt"), ASUS_GPUS, p2p_all("OK", 8),
                    fixture("fabric", "rtxpro6000x8-asus", "proc-cmdline.txt"),
                    topology=ns.parse_topology(fixture("fabric", "rtxpro6000x8-asus", "topo-m.txt")))
    problems, notes = verdict(facts, ASUS_GPUS)
    assert facts["applies"] and facts["why"] == "8 GPUs, PCIe only"
    assert problems == []
    assert notes == ["IOMMU (0 groups on the host): " + ", ".join("GPU%d (%s:00.0) off" % (i, b) for i, b in enumerate(ASUS_GPUS))]


def test_acs_redirect_with_p2p_ok_and_the_iommu_translating_is_an_error_naming_bridges_and_fix(tmp_path):
    facts = collect(tmp_path, fixture("fabric", "h100x8-gpud", "lspci-vvv.txt"), H100_REDIRECTED,
                    p2p_all("OK", 4), "BOOT_IMAGE=/vmlinuz ro intel_iommu=on", domain_type="DMA")
    problems = verdict(facts, H100_REDIRECTED)[0]
    acs = [p for p in problems if p["check"] == "pcie_acs"]
    assert [(p["severity"], p["gpu"]) for p in acs] == [(fabric.ERROR, 0)]
    detail, remedy = acs[0]["detail"], acs[0]["remedy"]
    assert detail.startswith("GPU0 (83:00.0), GPU1 (84:00.0), GPU2 (85:00.0), GPU3 (86:00.0): ACS redirects")
    assert "82:00.0 (PMC-Sierra Inc. Device 4128: ReqRedir+ CmpltRedir+)" in detail
    assert "nccl#2079" in detail and "translates their DMA" in detail
    for words in ("'ACS Control' -> Disabled", "pci=disable_acs_redir=82:00.0;82:01.0;82:02.0;82:03.0",
                  "setpci -s 82:03.0 ECAP_ACS+0x6.w=0000", "VM passthrough (VFIO)", "reboot"):
        assert words in remedy
    iommu = [p for p in problems if p["check"] == "iommu"]
    assert [(p["severity"], p["gpu"]) for p in iommu] == [(fabric.ERROR, 0)]
    assert "iommu=pt" in iommu[0]["remedy"] and "amd_iommu=off" in iommu[0]["remedy"]


def test_acs_redirect_with_the_iommu_in_passthrough_is_a_warning(tmp_path):
    facts = collect(tmp_path, fixture("fabric", "h100x8-gpud", "lspci-vvv.txt"), H100_REDIRECTED,
                    p2p_all("OK", 4), "intel_iommu=on iommu=pt", domain_type="identity")
    problems, notes = verdict(facts, H100_REDIRECTED)
    assert [(p["check"], p["severity"]) for p in problems] == [("pcie_acs", fabric.WARNING)]
    assert "half the bandwidth" in problems[0]["detail"]
    assert "GPU0 (83:00.0) passthrough" in notes[0]


def test_acs_redirect_where_p2p_is_not_supported_is_a_warning_and_p2p_ns_is_reported(tmp_path):
    facts = collect(tmp_path, fixture("fabric", "h100x8-gpud", "lspci-vvv.txt"), H100_REDIRECTED,
                    p2p_all("NS", 4), "", domain_type="DMA")
    problems = verdict(facts, H100_REDIRECTED)[0]
    by_check = dict((p["check"], p) for p in problems)
    assert sorted(by_check) == ["gpu_p2p", "iommu", "pcie_acs"]
    assert all(p["severity"] == fabric.WARNING for p in problems)
    assert "no P2P for them (NS)" in by_check["pcie_acs"]["detail"]
    assert by_check["gpu_p2p"]["detail"].startswith("no GPU-to-GPU P2P between GPU0-GPU1, GPU0-GPU2")
    assert "NS = not supported" in by_check["gpu_p2p"]["detail"]


def test_iommu_translating_without_acs_redirect_is_an_error_with_p2p_ok(tmp_path):
    facts = collect(tmp_path, fixture("fabric", "rtxpro6000x8-asus", "lspci-vvv.txt"), ASUS_GPUS,
                    p2p_all("OK", 8), "amd_iommu=on", domain_type="DMA-FQ")
    problems = verdict(facts, ASUS_GPUS)[0]
    assert [(p["check"], p["severity"]) for p in problems] == [("iommu", fabric.ERROR)]
    assert "domain type DMA-FQ" in problems[0]["detail"]


def test_gns_is_a_note_not_a_problem(tmp_path):
    text = fixture("fabric", "public", "topo-p2p-rw-rtx5090x2-gns.txt")
    facts = collect(tmp_path, fixture("fabric", "rtxpro6000x8-asus", "lspci-vvv.txt"), ASUS_GPUS[:2], text,
                    "amd_iommu=off")
    problems, notes = verdict(facts, ASUS_GPUS[:2])
    assert problems == [] and any("GNS" in line for line in notes)


def test_one_gpu_or_all_nvlink_is_not_checked():
    one = fabric.collect(None, None, "/usr/bin/nvidia-smi", gpus_at(["06"]), None)
    assert not one["applies"] and fabric.evaluate(one) == (
        [], ["PCIe fabric not checked: one GPU: no GPU-to-GPU traffic"])
    topology = ns.parse_topology(fake(["nvidia-smi", "topo", "-m"], profile="h200x8"))
    nvl = fabric.collect(None, None, "/usr/bin/nvidia-smi", gpus_at(ASUS_GPUS), topology)
    assert not nvl["applies"] and "NVLink" in nvl["why"]


# ---------------------------------------------------------------- through the gate, with the fake tools

def gate(tmp_path, faults, **env):
    environ = dict(os.environ, FAKE_NVIDIA_PROFILE="rtxpro6000x8", FAKE_NVIDIA_FAULTS=faults, **env)

    def run(argv):
        proc = subprocess.run(argv, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    tools = {"nvidia-smi": os.path.join(FAKE, "nvidia-smi"), "lspci": os.path.join(FAKE, "lspci")}
    facts = gh.collect(run, tools.get, sysfs=str(tmp_path / "nosys"), proc_root=str(tmp_path / "proc"),
                       kernel_log=False, iommu_groups=str(tmp_path / "nogroups"))
    return facts, gh.evaluate(facts, {"expected_count": 8})


def test_gate_refuses_acs_redirect_above_a_gpu_naming_the_root_port(tmp_path):
    facts, problems = gate(tmp_path, "acs_redirect:2")
    errs = [p for p in problems if p["severity"] == gh.ERROR]
    assert [(p["check"], p["gpu"]) for p in errs] == [("pcie_acs", 2)]
    assert "GPU2 (3a:00.0)" in errs[0]["detail"]
    assert "39:01.1 (Advanced Micro Devices, Inc. [AMD] Device 153e: ReqRedir+ CmpltRedir+)" in errs[0]["detail"]
    assert "mode is unknown here" in errs[0]["detail"]  # the fake GPUs are in no sysfs
    assert "setpci -s 39:01.1 ECAP_ACS+0x6.w=0000" in errs[0]["remedy"]
    assert gh.ALL_CHECKS.index("pcie_acs") < gh.ALL_CHECKS.index("nccl_allreduce")


def test_gate_without_root_warns_that_acs_was_not_read(tmp_path):
    problems = gate(tmp_path, "", FAKE_LSPCI_USER="1")[1]
    assert [(p["check"], p["severity"]) for p in problems] == [("pcie_acs", gh.WARNING)]
    assert "become: true" in problems[0]["remedy"] and "17:01.1" in problems[0]["detail"]


def test_gate_without_lspci_says_so(tmp_path):
    environ = dict(os.environ, FAKE_NVIDIA_PROFILE="rtxpro6000x8", FAKE_NVIDIA_FAULTS="")

    def run(argv):
        proc = subprocess.run(argv, env=environ, stdout=subprocess.PIPE, universal_newlines=True, check=False)
        return proc.returncode, proc.stdout, ""

    facts = gh.collect(run, {"nvidia-smi": os.path.join(FAKE, "nvidia-smi")}.get, sysfs=str(tmp_path),
                       proc_root=str(tmp_path), kernel_log=False, iommu_groups=str(tmp_path))
    problems = gh.evaluate(facts, {})
    assert [(p["check"], p["severity"]) for p in problems] == [("pcie_acs", gh.WARNING)]
    assert "pciutils" in problems[0]["detail"]


def test_gate_reports_p2p_ns_for_one_gpu(tmp_path):
    problems = gate(tmp_path, "p2p_ns:5")[1]
    assert [(p["check"], p["severity"], p["gpu"]) for p in problems] == [("gpu_p2p", gh.WARNING, 5)]
    assert "GPU0-GPU5" in problems[0]["detail"] and "GPU5-GPU7" in problems[0]["detail"]
