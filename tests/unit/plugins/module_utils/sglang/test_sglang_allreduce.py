# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/sglang/allreduce.py: FlashInfer's PCIe-IPC all-reduce, allowed only where the installed SGLang has
it and the group is what it was built for (PCIe-only SM120, TP 2/4/8, bf16, a persistent tuning cache), refused with
the fix elsewhere; checked against the real wheels (0.5.20 lacks it, 0.5.21 and 0.5.23 have it) and through
argv.render as roles/server calls it."""
import os
import re
import sys
import zipfile

import pytest
import testpaths

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import allreduce
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import render

ON = {"SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1"}
SM120_PCIE = {"present": True, "count": 8, "topology": {"pcie_only": True},
              "gpus": [{"compute_cap": "12.0"}] * 8}
H200_NVLINK = {"present": True, "count": 8, "topology": {"pcie_only": False},
               "gpus": [{"compute_cap": "9.0"}] * 8}
MODULE = "sglang/srt/distributed/device_communicators/pcie_ipc_ar.py"


def read(version, member):
    """That file of the real wheel, or None when the release has no such file."""
    with zipfile.ZipFile(W.wheel_path(version)) as whl:
        return whl.read(member).decode() if member in whl.namelist() else None


@pytest.mark.parametrize("version,has", [("0.5.20", False), ("0.5.21", True), ("0.5.23", True)])
def test_the_version_gate_is_what_the_wheels_have(version, has):
    source = read(version, MODULE)
    environ = read(version, "sglang/srt/environ.py")
    assert (source is not None) is has
    assert ("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE = EnvBool(False)" in environ) is has
    if has:
        sizes = re.search(r"_SUPPORTED_WORLD_SIZES = \(([0-9, ]+)\)", source).group(1)
        assert tuple(int(x) for x in sizes.split(",")) == allreduce.WORLD_SIZES
        assert "bfloat16" in source
    errors, _warnings = allreduce.rules(ON, version, {12}, True, 8, {})
    assert (errors == []) is has, errors


def test_off_means_no_rule():
    assert allreduce.rules({}, "0.5.9", {9}, False, 3, {"dtype": "float16"}) == ([], [])
    assert allreduce.rules({"SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "0"}, "0.5.9", {9}, False, 3, {}) == ([], [])


@pytest.mark.parametrize("why,kwargs,needle", [
    ("tp", {"tp": 3}, "groups of 2, 4 or 8"),
    ("not SM120", {"majors": {9}}, "compute capability 9"),
    ("NVLink", {"pcie_only": False}, "NVLink"),
    ("fp16", {"args": {"dtype": "float16"}}, "bf16 only"),
    ("tmpfs cache", {"env": dict(ON, SGLANG_CACHE_DIR="/tmp/sglang")}, "not persistent"),
])
def test_each_case_it_was_not_built_for_is_refused_with_the_fix(why, kwargs, needle):
    call = dict(env=ON, version="0.5.23", majors={12}, pcie_only=True, tp=8, args={})
    call.update(kwargs)
    errors, _warnings = allreduce.rules(**call)
    assert len(errors) == 1 and needle in errors[0], (why, errors)
    assert "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE to 0" in errors[0] or "SGLANG_CACHE_DIR" in errors[0]


def test_render_refuses_or_passes_as_roles_server_calls_it():
    settings = {"model_path": "/m", "tp": 8}
    ok = render(settings, "0.5.23", gpu=SM120_PCIE, env=dict(ON, SGLANG_CACHE_DIR="/var/lib/sglang/.cache/sglang"))
    assert not [e for e in ok["errors"] if "PCIE" in e or "SGLANG_CACHE_DIR" in e]
    old = render(settings, "0.5.15.post1", gpu=SM120_PCIE, env=ON)
    assert any("0.5.21 or later" in e for e in old["errors"])
    h200 = render(settings, "0.5.23", gpu=H200_NVLINK, env=ON)
    assert any("compute capability 9" in e for e in h200["errors"]) and any("NVLink" in e for e in h200["errors"])
    warned = render(settings, "0.5.23", gpu=SM120_PCIE, env=dict(ON, SGLANG_FLASHINFER_AUTOTUNE_CACHE="0"))
    assert any("tuned again at every start" in w for w in warned["warnings"])


# -- the tuning: persisted with the compile cache, and what a start did with it (issue 36) ---------------------------
FI = "2026-12-04 19:00:00,123 - INFO - autotuner.py:%d - flashinfer.jit: [Autotuner]: "
TUNE_FILE = "/var/lib/sglang/compile-cache/kimi/0.5.23/.cache/flashinfer/0.7.2/120/autotune/pcie_ipc_all_reduce_ws8.json"
START = ("[2026-12-04 19:00:00] server_args={'tp_size': 8}",
         "[2026-12-04 19:00:09 TP0] FlashInfer PCIe-IPC all-reduce enabled (world=8, workspace sized on first reduction)",
         "[2026-12-04 19:00:40 TP0] FlashInfer PCIe-IPC workspace built (world=8, max_numel=2097152, hidden=7168)")
AUTOTUNED = "[2026-12-04 19:00:55 TP0] FlashInfer PCIe-IPC all-reduce autotuned 8 shape(s) (hidden=7168, rows=[1, 2])"


def log(*lines):
    return "\n".join(START + lines) + "\n"


def test_the_sglang_lines_the_reader_relies_on_are_in_the_wheel():
    source = read("0.5.23", MODULE)
    for text in (allreduce.ENABLED_LINE, allreduce.TUNED_LINE) + allreduce.SEED_LINES:
        assert text in source, text


@pytest.mark.parametrize("text, state, path", [
    (log(FI % 1048 + "Autotuning process starts ...", AUTOTUNED,
         FI % 3672 + "Saved 8 configs to %s (8 new, 0 from previous config)" % TUNE_FILE), "tuned", TUNE_FILE),
    (log(FI % 3815 + "Loaded 8 configs from %s" % TUNE_FILE, AUTOTUNED,
         FI % 3672 + "Saved 8 configs to %s (0 new, 8 from previous config)" % TUNE_FILE), "reused", TUNE_FILE),
    (log(FI % 3815 + "Loaded 8 configs from %s" % TUNE_FILE, AUTOTUNED), "reused", TUNE_FILE),
    (log("[2026-12-04 19:00:41 TP0] FlashInfer PCIe-IPC all-reduce reached its first reduction inside a graph capture; "
         "skipping autotune and keeping the seed policy."), "seed", None),
    (log("[2026-12-04 19:00:41 TP0] FlashInfer PCIe-IPC all-reduce: --disable-flashinfer-autotune is set; keeping "
         "FlashInfer's seed policy."), "seed", None),
    (log(AUTOTUNED), "unknown", None),  # FLASHINFER_LOGGING_LEVEL above info hides which
])
def test_a_start_tuned_reused_or_kept_the_seed(text, state, path):
    got = allreduce.tuning_from_log(text)
    assert (got["state"], got["path"]) == (state, path) and got["line"]


def test_only_the_last_start_counts_and_no_all_reduce_is_none():
    earlier = log(FI % 3672 + "Saved 8 configs to %s (8 new, 0 from previous config)" % TUNE_FILE)
    again = log(FI % 3815 + "Loaded 8 configs from %s" % TUNE_FILE, AUTOTUNED)
    assert allreduce.tuning_from_log(earlier + again)["state"] == "reused"
    assert allreduce.tuning_from_log("[x] server_args={}\n[x] The server is fired up and ready to roll!\n") is None
    assert allreduce.tuning_from_log("") is None and allreduce.tuning_from_log(None) is None


def test_the_tuning_lands_in_the_compile_cache_keyed_by_flashinfer_version_and_arch():
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches
    env = caches.env("/var/lib/sglang", "kimi", "0.5.23")
    assert "FLASHINFER_AUTOTUNE_DIR" not in env  # FlashInfer's own path keeps the version and arch keys
    folder = caches.autotune_dir("/var/lib/sglang", "kimi", "0.5.23", "0.7.2", "120")
    assert folder == env["FLASHINFER_WORKSPACE_BASE"] + "/.cache/flashinfer/0.7.2/120/autotune"
    assert TUNE_FILE.startswith(folder + "/")
    _errors, warnings = allreduce.rules(dict(ON, FLASHINFER_AUTOTUNE_DIR="/srv/tune"), "0.5.23", {12}, True, 8, {})
    assert any("FLASHINFER_AUTOTUNE_DIR=/srv/tune keeps the all-reduce tuning flat" in w for w in warnings)
    assert not any("FLASHINFER_AUTOTUNE_DIR" in w for w in allreduce.rules(ON, "0.5.23", {12}, True, 8, {})[1])
