# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of llmserve.sglang's nvidia_smi module_utils, against real captured output."""
import testpaths
import os
import subprocess

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi as ns

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "nvidia")
H200 = os.path.join(FIX, "cuda13-h200")
PUBLIC = os.path.join(FIX, "public")
FAKE = os.path.join(testpaths.REPO, "tools", "fake_nvidia")


def fixture(*parts):
    with open(os.path.join(FIX, *parts)) as handle:
        return handle.read()


def fake(profile, *args, **env):
    environ = dict(os.environ, FAKE_NVIDIA_PROFILE=profile)
    environ.update(env)
    proc = subprocess.run([os.path.join(FAKE, "nvidia-smi")] + list(args), env=environ,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def test_query_gpu_with_header_and_units():
    gpus = ns.parse_query_gpu(fixture("cuda13-h200", "query-gpu.csv"))
    assert gpus == [{
        "index": 0, "name": "NVIDIA H200", "uuid": "GPU-00000000-1111-2222-3333-444444444444",
        "pci_bus_id": "00000000:00:06.0", "compute_cap": "9.0", "compute_major": 9,
        "memory_total_mib": 143771, "memory_used_mib": 0, "utilization_gpu": 0, "persistence_mode": True,
    }]


def test_query_gpu_noheader_nounits():
    fields = ["index", "name", "compute_cap", "driver_version", "memory.total", "memory.used", "utilization.gpu"]
    gpus = ns.parse_query_gpu(fixture("cuda13-h200", "query-gpu-noheader-nounits.csv"), fields)
    assert gpus[0]["compute_cap"] == "9.0"
    assert gpus[0]["memory_total_mib"] == 143771
    assert gpus[0]["uuid"] is None  # not queried


def test_all_fields_csv_missing_values_become_none():
    rows = ns.parse_csv(fixture("cuda13-h200", "query-gpu-all-fields.csv"))
    assert len(rows) == 1 and len(rows[0]) == 198
    assert rows[0]["hostname"] is None  # [N/A]
    assert rows[0]["memory.total"] == "143771 MiB"
    assert ns.normalize_gpu(rows[0])["memory_total_mib"] == 143771


def test_not_supported_values():
    gpus = ns.parse_query_gpu("0, NVIDIA A100, [N/A], [Not Supported], [N/A]\n",
                              ["index", "name", "compute_cap", "memory.total", "persistence_mode"])
    assert gpus[0]["compute_cap"] is None and gpus[0]["compute_major"] is None
    assert gpus[0]["memory_total_mib"] is None and gpus[0]["persistence_mode"] is None


def test_invalid_field_message():
    assert ns.invalid_field(fixture("cuda13-h200", "query-invalid-field.txt")) == "bogus.field"
    assert ns.invalid_field('Field "compute_cap" is not a valid field to query.\n') == "compute_cap"
    assert ns.invalid_field("0, NVIDIA H200") is None


def test_versions_from_banner_and_version_flag():
    assert ns.parse_versions(fixture("cuda13-h200", "nvidia-smi.txt")) == ("580.159.04", "13.0")
    assert ns.parse_versions(fixture("cuda13-h200", "nvidia-smi-version.txt")) == ("580.159.04", "13.0")


def test_nvcc():
    assert ns.parse_nvcc(fixture("cuda13-h200", "nvcc-version.txt")) == {"release": "13.0", "version": "13.0.88"}
    assert ns.parse_nvcc("bash: nvcc: command not found") is None


def test_proc_version_open_and_proprietary():
    assert ns.parse_proc_version(fixture("cuda13-h200", "proc-driver-nvidia-version.txt")) == ("open", "580.159.04")
    prop = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"
    assert ns.parse_proc_version(prop) == ("proprietary", "550.54.14")
    assert ns.parse_proc_version(None) == (None, None)
    assert ns.parse_proc_version("") == (None, None)


def test_compute_apps_header_only_and_rows():
    assert ns.parse_compute_apps(fixture("cuda13-h200", "query-compute-apps.csv")) == []
    apps = ns.parse_compute_apps("4242, /usr/bin/python3, 130000\n", ns.APP_FIELDS)
    assert apps == [{"pid": 4242, "name": "/usr/bin/python3", "used_memory_mib": 130000, "bus_key": None}]
    # gpu_health asks for the bus too: the same reader, one more column
    apps = ns.parse_compute_apps("4242, python3, 130000, 00000000:3B:00.0\n", ns.APP_FIELDS + ["gpu_bus_id"])
    assert apps[0]["bus_key"] == "0000:3b:00" and apps[0]["used_memory_mib"] == 130000


def test_topology_single_gpu_with_escape_codes():
    text = fixture("cuda13-h200", "topo-m.txt")
    assert "\x1b[4m" in text  # the real capture has the underline codes
    topo = ns.parse_topology(text)
    assert topo["matrix"] == {"GPU0": {}}
    assert topo["nvlink_counts"] == {}
    assert topo["all_nvlink"] is False and topo["pcie_only"] is False
    assert topo["affinity"] == {"GPU0": {"cpu": "0-15", "numa": "0"}}


def test_topology_h100x8_nv18_spaces():
    topo = ns.parse_topology(fixture("public", "topo-m-h100x8-nv18.txt"))
    assert len(topo["matrix"]) == 8
    assert topo["matrix"]["GPU0"]["GPU7"] == "NV18"
    assert len(topo["nvlink_counts"]) == 28 and set(topo["nvlink_counts"].values()) == {18}
    assert topo["all_nvlink"] is True and topo["pcie_only"] is False
    assert topo["affinity"]["GPU4"] == {"cpu": "48-95,144-191", "numa": "1"}


def test_topology_pcie_with_nic_columns():
    topo = ns.parse_topology(fixture("public", "topo-m-rtx4090x8-sys-nics.txt"))
    assert sorted(topo["matrix"]) == ["GPU%d" % i for i in range(8)]
    assert "NIC0" not in topo["matrix"]["GPU6"]  # NIC columns are not GPU links
    assert topo["pcie_only"] is True and topo["all_nvlink"] is False
    assert topo["affinity"]["GPU6"]["cpu"] == "56-111,168-223"


@pytest.mark.parametrize("name,cell", [("topo-m-rtx4090x5-node-sys.txt", ("GPU1", "GPU2", "PHB")),
                                       ("topo-m-rtx5090x2-phb.txt", ("GPU0", "GPU1", "PHB"))])
def test_topology_mixed_pcie(name, cell):
    topo = ns.parse_topology(fixture("public", name))
    assert topo["matrix"][cell[0]][cell[1]] == cell[2]
    assert topo["pcie_only"] is True


def test_topology_garbage():
    assert ns.parse_topology("") is None
    assert ns.parse_topology("No devices were found\n") is None


def test_failure_reasons():
    assert ns.failure_reason(6, "No devices were found\n", "") == ns.REASON_NO_DEVICES
    rc, out, err = fake("nodriver")
    assert rc == 9 and ns.failure_reason(rc, out, err) == ns.REASON_NO_DRIVER
    mismatch = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161\n"
    assert ns.failure_reason(18, mismatch, "") == ns.REASON_MISMATCH
    assert ns.failure_reason(255, "", "Segmentation fault") == "nvidia-smi failed (rc=255): Segmentation fault"


def test_blackwell_pci_ids():
    assert ns.is_blackwell_or_newer_pci("0x2bb5")  # RTX PRO 6000 Blackwell Server Edition
    assert ns.is_blackwell_or_newer_pci("0x2901")  # B200
    assert not ns.is_blackwell_or_newer_pci("0x2335")  # H200
    assert not ns.is_blackwell_or_newer_pci(None)


def test_pci_devices_from_sysfs(tmp_path):
    for slot, vendor, device, klass in [("0000:18:00.0", "0x10de", "0x2bb5", "0x030200"),
                                        ("0000:05:00.0", "0x10de", "0x22a3", "0x068000"),
                                        ("0000:00:1f.0", "0x8086", "0x1234", "0x060100")]:
        folder = tmp_path / slot
        folder.mkdir()
        (folder / "vendor").write_text(vendor + "\n")
        (folder / "device").write_text(device + "\n")
        (folder / "class").write_text(klass + "\n")
    found = ns.pci_nvidia_devices(str(tmp_path))
    assert [d["slot"] for d in found] == ["0000:05:00.0", "0000:18:00.0"]
    assert found[1] == {"slot": "0000:18:00.0", "device_id": "0x2bb5", "class": "0x030200"}


# The fake nvidia-smi must print exactly what the real tool printed on the H200 host.
H200_COMMANDS = [
    ("nvidia-smi.txt", []),
    ("query-gpu.csv", ["--query-gpu=index,name,uuid,pci.bus_id,compute_cap,driver_version,memory.total,"
                       "memory.used,memory.free,utilization.gpu,persistence_mode,power.limit,temperature.gpu",
                       "--format=csv"]),
    ("query-gpu-noheader-nounits.csv", ["--query-gpu=index,name,compute_cap,driver_version,memory.total,"
                                        "memory.used,utilization.gpu", "--format=csv,noheader,nounits"]),
    ("query-compute-apps.csv", ["--query-compute-apps=pid,process_name,used_memory", "--format=csv"]),
    ("topo-m.txt", ["topo", "-m"]),
    ("topo-p2p-rw.txt", ["topo", "-p2p", "rw"]),
    ("nvidia-smi-L.txt", ["-L"]),
    ("nvidia-smi-version.txt", ["--version"]),
    ("nvidia-smi-q.txt", ["-q"]),
]


@pytest.mark.parametrize("name,args", H200_COMMANDS)
def test_fake_h200x1_is_byte_identical(name, args):
    rc, out, _err = fake("h200x1", *args)
    assert rc == 0
    assert out == fixture("cuda13-h200", name)


def test_fake_all_fields_query_reproduces_capture():
    header = fixture("cuda13-h200", "query-gpu-all-fields.csv").splitlines()[0]
    fields = ",".join(name.split(" [")[0] for name in header.split(", "))
    rc, out, _err = fake("h200x1", "--query-gpu=" + fields, "--format=csv")
    assert rc == 0
    assert out.splitlines()[0] == header
    assert len(out.splitlines()[1].split(", ")) == 198


def test_fake_invalid_field_is_byte_identical():
    rc, out, _err = fake("h200x1", "--query-gpu=bogus.field", "--format=csv")
    assert rc == 2 and out == fixture("cuda13-h200", "query-invalid-field.txt")


def test_fake_nvcc_is_byte_identical():
    out = subprocess.check_output([os.path.join(FAKE, "nvcc"), "--version"], universal_newlines=True)
    assert out == fixture("cuda13-h200", "nvcc-version.txt")


def test_fake_none_profile():
    rc, out, _err = fake("none")
    assert (rc, out) == (6, "No devices were found\n")


def test_fake_rtxpro6000x8_parses_as_pcie_blackwell():
    rc, out, _err = fake("rtxpro6000x8", "--query-gpu=" + ",".join(ns.GPU_FIELDS), "--format=csv,noheader,nounits")
    gpus = ns.parse_query_gpu(out, ns.GPU_FIELDS)
    assert len(gpus) == 8
    assert {g["compute_cap"] for g in gpus} == {"12.0"}
    assert gpus[7]["name"] == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert gpus[7]["memory_total_mib"] == 97887
    topo = ns.parse_topology(fake("rtxpro6000x8", "topo", "-m")[1])
    assert topo["pcie_only"] and topo["matrix"]["GPU0"]["GPU3"] == "NODE" and topo["matrix"]["GPU0"]["GPU4"] == "SYS"
    banner = fake("rtxpro6000x8")[1]
    assert ns.parse_versions(banner) == ("580.95.05", "13.0")
    # every banner line keeps the real table width
    assert {len(line) for line in banner.splitlines()[1:] if line} == {91}


def test_fake_h200x8_all_nvlink():
    topo = ns.parse_topology(fake("h200x8", "topo", "-m")[1])
    assert topo["all_nvlink"] and len(topo["nvlink_counts"]) == 28
