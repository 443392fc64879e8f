# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile nvidia-smi (issue 42, items 5 and 6): a hung, a flooding and a garbling nvidia-smi (the fake's hang, huge
and garbage profiles, real processes run by host/run.py) are refused by name in gpu_facts and gpu_health, never read
as GPUs or as no GPU; readings outside their physical range are broken readings, next to the good values accepted."""
import json
import math
import os

import pytest
from hypothesis import given, settings, strategies as st

from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.host import run as host_run
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import gate
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import smi

FAKE_SMI = os.path.join(testpaths.REPO, "tools", "fake_nvidia", "nvidia-smi")
FIELDS = ["index", "name", "uuid", "pci.bus_id", "memory.total", "memory.used", "utilization.gpu"]


@pytest.fixture
def module(monkeypatch):
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": {}})))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    return basic.AnsibleModule(argument_spec={})


def _fake(module, profile, timeout=1, cap=host_run.CAP, seed=0):
    return host_run.module_runner(module, timeout=timeout, cap=cap,
                                  environ_update={"FAKE_NVIDIA_PROFILE": profile, "FAKE_NVIDIA_SEED": str(seed)})


def _which(name):
    return FAKE_SMI if name == "nvidia-smi" else None


# ---- the three broken tools, through the one runner

@pytest.mark.parametrize("profile, words", [("hang", "nvidia-smi hung: "), ("huge", "nvidia-smi output refused: ")])
def test_a_hung_or_flooding_nvidia_smi_fails_gpu_facts_by_name(module, profile, words):
    with pytest.raises(smi.Refused) as refused:
        smi.collect(_fake(module, profile, cap=1 << 20), _which, proc_version_path="/nonexistent", sysfs="/nonexistent")
    assert str(refused.value).startswith(words)
    assert ("deadline" if profile == "hang" else "printed more than %d bytes" % (1 << 20)) in str(refused.value)


@pytest.mark.parametrize("profile, words", [("hang", "nvidia-smi hung: "), ("huge", "nvidia-smi output refused: "),
                                            ("garbage", "unparseable nvidia-smi output: ")])
def test_gpu_health_names_a_broken_nvidia_smi_as_its_error(module, profile, words):
    facts = gh.collect(_fake(module, profile, cap=1 << 20), _which, sysfs="/nonexistent", kernel_log=False,
                       pcie_fabric=False)
    assert facts["smi_error"].startswith(words) and facts["gpus"] == []
    verdict = gh.evaluate(facts, {})
    assert verdict[0]["check"] == "nvidia_smi" and verdict[0]["severity"] == gh.ERROR


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes_are_refused_not_read_as_gpus(module, seed):
    with pytest.raises(smi.Unparseable, match="^unparseable nvidia-smi output: "):
        smi.collect(_fake(module, "garbage", timeout=30, seed=seed), _which, proc_version_path="/nonexistent",
                    sysfs="/nonexistent")


def test_the_same_runner_reads_a_working_nvidia_smi_whole(module):
    facts = smi.collect(_fake(module, "rtxpro6000x8", timeout=30), _which, proc_version_path="/nonexistent",
                        sysfs="/nonexistent")
    assert facts["present"] and facts["count"] == 8 and facts["warnings"] == []


# ---- the CSV reader: rows of the right width that parse whole, or a refusal naming the field

@pytest.mark.parametrize("text, named", [
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771, 0\n", "row 1 has 6 fields, 7 asked for"),
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771, 0, 0, 9\n", "row 1 has 8 fields, 7 asked for"),
    ("x, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771, 0, 0\n", "field index is 'x'"),
    ("0.5, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771, 0, 0\n", "field index is '0.5'"),
    ("-1, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771, 0, 0\n", "field index is '-1'"),
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 14377l, 0, 0\n", "field memory.total is '14377l'"),
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771 MiB extra, 0, 0\n", "field memory.total is"),
    ("0, a, b, c, 1, 0, 0\n0, a, b, c, 1, 0, 0\n", "GPU index listed twice (0, 0)"),
])
def test_a_row_that_nvidia_smi_never_prints_is_refused_by_name(text, named):
    with pytest.raises(smi.Unparseable) as refused:
        smi.parse_query_gpu(text, FIELDS)
    assert named in str(refused.value)


@pytest.mark.parametrize("text, memory, broken", [
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771, 0, 0\n", 143771, {}),              # the good row beside them
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 143771 MiB, 12 MiB, 100 %\n", 143771, {}),  # units as printed
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, [N/A], 0, 0\n", None, {}),                  # missing: None, not broken
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 0, 0, 0\n", None, {0: ["memory.total=0"]}),
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, 1e12, 0, 0\n", None, {0: ["memory.total=1e12"]}),
    ("0, NVIDIA H200, GPU-1, 00000000:18:00.0, nan, 0, 101\n", None, {0: ["memory.total=nan", "utilization.gpu=101"]}),
])
def test_a_number_out_of_its_physical_range_is_a_broken_reading(text, memory, broken):
    got = {}
    gpus = smi.parse_query_gpu(text, FIELDS, got)
    assert gpus[0]["memory_total_mib"] == memory and got == broken


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400) | st.binary(max_size=400).map(lambda b: b.decode("latin-1")))
def test_any_text_is_gpus_within_range_or_a_refusal(text):
    try:
        gpus = smi.parse_query_gpu(text, FIELDS)
    except smi.Unparseable as exc:
        assert str(exc).startswith("unparseable nvidia-smi output: ")
        return
    indices = [g["index"] for g in gpus]
    assert len(set(indices)) == len(indices) and all(isinstance(i, int) and 0 <= i <= 1023 for i in indices)
    for gpu in gpus:
        for key, field in (("memory_total_mib", "memory.total"), ("utilization_gpu", "utilization.gpu")):
            low, high = smi.RANGES[field]
            assert gpu[key] is None or low <= gpu[key] <= high


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 1 << 22), st.integers(0, 100)), min_size=1, max_size=16))
def test_rows_nvidia_smi_prints_are_read_exactly(rows):
    text = "".join("%d, GPU %d, GPU-%d, 00000000:%02X:00.0, %d, 0, %d\n" % (i, i, i, i, mem, util)
                   for i, (mem, util) in enumerate(rows))
    got = {}
    gpus = smi.parse_query_gpu(text, FIELDS, got)
    assert [(g["memory_total_mib"], g["utilization_gpu"]) for g in gpus] == rows and got == {}


# ---- gpu_health: a broken reading is an error of that GPU, with a remedy; the healthy reading beside it passes

def _health_row(**fields):
    row = {"index": "0", "name": "NVIDIA H200", "pci.bus_id": "00000000:18:00.0", "temperature.gpu": "30",
           "temperature.gpu.tlimit": "57", "power.draw": "75.5", "memory.used": "0", "memory.total": "143771",
           "pcie.link.width.current": "16", "pcie.link.width.max": "16"}
    row.update(fields)
    return row


@pytest.mark.parametrize("field, value, broken", [
    ("temperature.gpu", "30", False), ("temperature.gpu", "0", False), ("temperature.gpu", "130", False),
    ("temperature.gpu", "-40", True), ("temperature.gpu", "-1", True), ("temperature.gpu", "131", True),
    ("temperature.gpu", "NaN", True), ("temperature.gpu", "1e9", True), ("temperature.gpu", "inf", True),
    ("power.draw", "700.00 W", False), ("power.draw", "-5", True), ("power.draw", "5001", True),
    ("memory.used", "143771", False), ("memory.used", "-1", True), ("memory.total", "0", True),
    ("pcie.link.width.current", "16", False), ("pcie.link.width.current", "0", True),
    ("pcie.link.width.current", "64", True), ("temperature.gpu.tlimit", "-3", False),
    ("ecc.errors.uncorrected.volatile.total", "-2", True), ("ecc.errors.uncorrected.volatile.total", "0", False),
])
def test_gpu_health_reports_a_broken_reading_as_an_error_with_a_remedy(field, value, broken):
    gpu = gh.normalize_health_row(_health_row(**{field: value}))
    found = gh.check_readings(gpu)
    if not broken:
        assert found == [] and gpu["broken_readings"] == []
        return
    assert [p["check"] for p in found] == ["nvidia_smi"] and found[0]["severity"] == gh.ERROR
    assert "%s=%s" % (field, value) in found[0]["detail"] and "GPU0 (00000000:18:00.0)" in found[0]["detail"]
    assert "nvidia-smi -r -i 0" in found[0]["remedy"]


def test_a_broken_temperature_makes_the_host_unhealthy():
    facts = {"smi_error": None, "dropped_fields": [], "gpus": [gh.normalize_health_row(_health_row(**{
        "temperature.gpu": "-40"}))], "pci_devices": [], "driver_version": None, "cuda_driver_version": None,
        "nvcc": None, "processes": [], "nvswitch": False, "fabricmanager_active": None, "nvlink": None,
        "kernel_log_source": None, "kernel_log_errors": [], "xids": [], "pcie_fabric": None}
    errors = [p for p in gh.evaluate(facts, {}) if p["severity"] == gh.ERROR]
    assert [p["check"] for p in errors] == ["nvidia_smi"]
    assert gh.normalize_health_row(_health_row())["temperature_c"] == 30  # the good reading is read


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10 ** 12, 10 ** 12))
def test_any_temperature_is_in_range_or_broken(number):
    gpu = gh.normalize_health_row(_health_row(**{"temperature.gpu": repr(number)}))
    value = float(number)
    if not math.isnan(value) and 0 <= value <= 130:
        assert gpu["temperature_c"] == int(value) and gpu["broken_readings"] == []
    else:
        assert gpu["temperature_c"] is None and gh.check_readings(gpu)


# ---- gpu_health's runner: every tool within its deadline, a probe timeout(1) already bounds within that one

@pytest.mark.parametrize("argv, seconds", [
    (["/usr/bin/timeout", "--kill-after=10", "300", "/usr/bin/dcgmi", "diag"], 320),
    (["timeout", "--kill-after=10", "2", "python", "probe.py"], 22),
    (["/usr/bin/nvidia-smi", "topo", "-m"], None), (["timeout", "5", "x"], None),
    (["/usr/bin/timeout", "--kill-after=10", "300"], None)])
def test_a_probe_wrapped_by_timeout_gets_its_own_bound_and_every_other_call_the_tools(argv, seconds):
    assert gate.bounded_by(argv) == seconds
