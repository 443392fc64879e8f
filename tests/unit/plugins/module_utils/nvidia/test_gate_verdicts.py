# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gate's verdict (nvidia/gate.py) from the problems found: an error is never hidden by a later warning on the
same check, an ignored problem leaves the host healthy only because the user asked, and a probe ended by timeout(1)
with either of its statuses (124 TERM, 137 KILL) is a hang with its remedy."""
import os
import shutil

import pytest

import testpaths
from localrun import remembered_run

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import gate
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh

FAKE_SMI = os.path.join(testpaths.REPO, "tools", "fake_nvidia", "nvidia-smi")
FACTS = {"smi_error": None, "nvlink": None, "nvswitch": False, "gpus": [{"index": 0, "fabric_state": None}],
         "pcie_fabric": {"applies": False}}


def test_a_warning_after_an_error_on_the_same_check_keeps_the_error():
    kept = [gh.problem("temperature", gh.ERROR, "GPU0 at 95 C", "cool it", gpu=0),
            gh.problem("temperature", gh.WARNING, "GPU1 at 80 C", "watch it", gpu=1)]
    assert gate._verdicts(kept, [], set(), FACTS)["temperature"] == "error"
    # and the other way round the error still wins (a warning alone is a warning)
    assert gate._verdicts(kept[::-1], [], set(), FACTS)["temperature"] == "error"
    assert gate._verdicts(kept[1:], [], set(), FACTS)["temperature"] == "warning"


def test_an_ignored_check_is_ignored_and_a_kept_one_is_not():
    kept = [gh.problem("ecc", gh.ERROR, "uncorrected", "drain", gpu=0)]
    ignored = [gh.problem("temperature", gh.ERROR, "95 C", "cool it", gpu=0)]
    v = gate._verdicts(kept, ignored, set(), FACTS)
    assert v["temperature"] == "ignored" and v["ecc"] == "error" and v["xid"] == "ok"


class Tools(object):
    """nvidia-smi is not reached: the facts are given (gpu_facts), the probe's rc is what the test says."""

    def __init__(self, probe_rc):
        self.probe_rc = probe_rc

    def run(self, argv, data=None, env=None):
        return self.probe_rc, "", "Terminated"

    @staticmethod
    def which(name):
        return "/usr/bin/" + name


PARAMS = dict(expected_count=0, expected_model="", expected_driver_branch="", expected_cuda="",
              expected_pcie_width=0, expected_pcie_gen=0, max_temperature=85, min_tlimit_margin=5,
              own_units=[], own_process_patterns=[], ignore=[], kernel_log=False, pcie_fabric=False,
              dcgm_diag=False, nccl_allreduce="on", nccl_gpus=[0, 1], nccl_world=0, nccl_env={}, nccl_timeout=60,
              nccl_iters=10, nccl_size_mb=64, nccl_min_busbw_gbps=0, probe_timeout=300, nvidia_smi_path="nvidia-smi")


@pytest.mark.parametrize("rc, hang", [(124, True), (137, True), (1, False)])
def test_a_probe_ended_by_timeout_is_a_hang_with_its_remedy(rc, hang, tmp_path, monkeypatch):
    monkeypatch.setattr(gate.os.path, "exists", lambda p: True)
    facts = {"gpus": [{"index": 0}, {"index": 1}], "processes": [], "topology": {}}
    tools = Tools(rc)
    found, nccl = gate._allreduce(dict(PARAMS, nccl_python="/venv/bin/python"), tools.run, tools.which, facts,
                                  str(tmp_path), [0, 1])
    assert [p["check"] for p in found] == ["nccl_allreduce"] and found[0]["severity"] == gh.ERROR
    assert (found[0]["remedy"] == gate.HANG_REMEDY) is hang
    assert bool(nccl.get("timed_out")) is hang
    assert ("did not finish within 60 s" in found[0]["detail"]) is hang


@pytest.mark.parametrize("severity, ignore, healthy", [
    (gh.ERROR, [], False),              # an error fails the gate
    (gh.ERROR, ["temperature"], True),  # ... unless the user ignores that check on purpose (and is told)
    (gh.WARNING, [], True),             # a warning does not
])
def test_healthy_counts_only_the_errors_not_ignored(severity, ignore, healthy, monkeypatch, tmp_path):
    # the facts of a real nvidia-smi output (the fake's 8 RTX PRO 6000), the problem given
    monkeypatch.setenv("FAKE_NVIDIA_PROFILE", "rtxpro6000x8")
    monkeypatch.setenv("FAKE_NVIDIA_APPS", str(tmp_path / "apps"))
    monkeypatch.setattr(gh, "evaluate", lambda f, p: [gh.problem("temperature", severity, "GPU0 at 95 C", "cool it", gpu=0)])
    result, warnings = gate.check(dict(PARAMS, nccl_allreduce="off", ignore=ignore, nvidia_smi_path=FAKE_SMI),
                                  lambda argv, data=None, env=None: remembered_run(argv, data, env), shutil.which,
                                  str(tmp_path))
    assert result["healthy"] is healthy
    assert [p["check"] for p in result["ignored"]] == list(ignore)
    assert [p["check"] for p in result["problems"]] == ([] if ignore else ["temperature"])
    assert any("'temperature' is ignored on purpose" in w for w in warnings) is bool(ignore)
