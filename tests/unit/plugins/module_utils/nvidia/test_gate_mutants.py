# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 47: the gate's rules (nvidia/gate.py) its mutants showed no test held, each from both sides: what did not
run is skipped and never passed, the probes run under the deadline the runner's own bound stays behind, an ignored
problem is said to be there, a probe's failure keeps its output and its remedy.

Fast on purpose (every mutant runs these): a missing nvidia-smi needs no process; the fake nvidia-smi's answers
(tools/fake_nvidia, real formats) are asked once per session; the all-reduce's runner answers as a probe would."""
import json
import os

import pytest

import testpaths
from localrun import local_run, remembered_run

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import gate
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import health as gh
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import probes

FAKE_SMI = os.path.join(testpaths.REPO, "tools", "fake_nvidia", "nvidia-smi")
PARAMS = dict(expected_count=0, expected_model="", expected_driver_branch="", expected_cuda="",
              expected_pcie_width=0, expected_pcie_gen=0, max_temperature=85, min_tlimit_margin=5,
              own_units=[], own_process_patterns=[], ignore=[], kernel_log=False, pcie_fabric=False,
              dcgm_diag=False, nccl_allreduce="off", nccl_gpus=[], nccl_world=0, nccl_env={}, nccl_timeout=60,
              nccl_iters=10, nccl_size_mb=64, nccl_min_busbw_gbps=0, probe_timeout=300, nccl_python="/nonexistent",
              nvidia_smi_path="/nonexistent/nvidia-smi")
NO_SMI = dict(PARAMS)  # nvidia-smi missing: the gate refuses without starting a process


def which_none(_name):
    return None


def which_usr(name):
    return "/usr/bin/" + name


def which_timeout(name):
    return "/usr/bin/timeout" if name == "timeout" else None


def cached_run(argv, data=None, env=None):
    return remembered_run(argv, data, env)


@pytest.fixture
def smi(monkeypatch):
    monkeypatch.setenv("FAKE_NVIDIA_PROFILE", "rtxpro6000x8")
    monkeypatch.setenv("FAKE_NVIDIA_APPS", "/nonexistent/fake-nvidia-apps")  # no compute apps

    def check(**params):
        return gate.check(dict(PARAMS, nvidia_smi_path=FAKE_SMI, **params), cached_run, which_none, "/tmp")
    return check


# -- what did not run is skipped, never passed ------------------------------------------------------------------------
def test_without_nvidia_smi_the_gate_fails_and_what_did_not_run_is_skipped():
    result, warnings = gate.check(NO_SMI, local_run, which_none, "/tmp")
    assert result["healthy"] is False and warnings == []
    assert [p["check"] for p in result["problems"]] == ["nvidia_smi"]
    assert result["problems"][0]["detail"] == "nvidia-smi not found at /nonexistent/nvidia-smi"
    # no kernel log, no DCGM, no all-reduce asked for: skipped; what nvidia-smi would have answered: skipped too
    assert result["checks"] == dict(
        dict((name, "skipped") for name in gh.ALL_CHECKS), nvidia_smi="error", gpu_firmware="ok")
    assert result["summary"] == ["[error] nvidia_smi: nvidia-smi not found at /nonexistent/nvidia-smi -> %s"
                                 % result["problems"][0]["remedy"]]
    assert result["nccl"] == {"skipped": "skipped on purpose (gpu_health_nccl_allreduce: off)", "gpus": []}


def test_a_kernel_log_asked_for_is_checked_not_skipped():
    result, _warnings = gate.check(dict(NO_SMI, kernel_log=True), local_run, which_none, "/tmp")
    assert result["checks"]["xid"] == "ok" and result["checks"]["kernel_log"] == "warning"
    assert [p["detail"] for p in result["problems"] if p["check"] == "kernel_log"] == [
        "kernel log not readable (dmesg: not installed; journalctl: not installed): Xid events not checked"]
    assert result["checks"]["dcgm_diag"] == "skipped"


def test_dcgm_asked_for_without_dcgmi_is_a_warning_with_its_remedy():
    result, _warnings = gate.check(dict(NO_SMI, dcgm_diag=True), local_run, which_none, "/tmp")
    dcgm = [p for p in result["problems"] if p["check"] == "dcgm_diag"]
    assert result["checks"]["dcgm_diag"] == "warning" and [p["severity"] for p in dcgm] == [gh.WARNING]
    assert dcgm[0]["detail"] == "dcgmi is not installed: the DCGM diagnostic did not run"
    assert dcgm[0]["remedy"] == ("install datacenter-gpu-manager (and start nvidia-dcgm) or set gpu_health_dcgm_diag: "
                                 "false")


def test_dcgm_runs_under_the_probe_deadline_and_its_failure_is_an_error():
    calls = []

    def run(argv, data=None, env=None):
        calls.append(list(argv))
        return 1, "", "Error: unable to connect to host engine"
    result, _warnings = gate.check(dict(NO_SMI, dcgm_diag=True, probe_timeout=7), run, which_usr, "/tmp")
    assert calls == [["/usr/bin/timeout", "--kill-after=10", "7", "/usr/bin/dcgmi", "diag", "-r", "1", "-j"]]
    assert gate.bounded_by(calls[0]) == 7 + 20  # the runner's own deadline stays behind timeout(1)'s (+10 +margin)
    assert [p["check"] for p in result["problems"]] == ["nvidia_smi", "dcgm_diag"]  # added to what was found before
    assert result["checks"]["dcgm_diag"] == "error"
    assert result["problems"][1]["detail"] == "dcgmi diag failed (rc=1): Error: unable to connect to host engine"


# -- ignored on purpose: said to be there, never counted as healthy by accident ---------------------------------------
def test_an_ignored_problem_is_named_and_an_ignore_that_passes_is_told_to_go():
    result, warnings = gate.check(dict(NO_SMI, ignore=["nvidia_smi", "ecc_errors"]), local_run, which_none, "/tmp")
    assert result["healthy"] is True and result["problems"] == []  # the user's choice, and they are told so:
    assert [p["check"] for p in result["ignored"]] == ["nvidia_smi"] and result["checks"]["nvidia_smi"] == "ignored"
    assert warnings == [
        "gpu_health: 'nvidia_smi' is ignored on purpose (gpu_health_ignore), it is still there: nvidia-smi not found "
        "at /nonexistent/nvidia-smi",
        "gpu_health: 'ecc_errors' is in gpu_health_ignore but passes now; remove it from the list"]
    assert result["summary"] == ["[ignored on purpose] nvidia_smi: nvidia-smi not found at /nonexistent/nvidia-smi"]


def test_a_warning_alone_leaves_the_host_healthy_an_error_does_not():
    warned, _w = gate.check(dict(NO_SMI, dcgm_diag=True, ignore=["nvidia_smi"]), local_run, which_none, "/tmp")
    failed, _w = gate.check(dict(NO_SMI, dcgm_diag=True), local_run, which_none, "/tmp")
    assert warned["healthy"] is True and [p["severity"] for p in warned["problems"]] == [gh.WARNING]
    assert failed["healthy"] is False


# -- what has nothing to compare with is skipped; given an expectation it is judged -----------------------------------
def test_expectations_not_given_are_skipped_and_given_ones_are_judged(smi):
    result, _w = smi()
    assert result["healthy"] and result["checks"]["nvidia_smi"] == "ok" and result["checks"]["ecc_errors"] == "ok"
    assert [result["checks"][c] for c in ("gpu_model", "driver", "toolkit")] == ["skipped"] * 3
    # PCIe only, no NVSwitch, no fabric state, no PCIe fabric check asked: those checks are skipped
    assert [result["checks"][c] for c in ("nvlink", "fabric_manager", "pcie_acs", "iommu", "gpu_p2p")] == ["skipped"] * 5
    model, _w = smi(expected_model="RTX PRO 6000")
    assert model["checks"]["gpu_model"] == "ok" and model["checks"]["driver"] == "skipped"
    branch, _w = smi(expected_driver_branch="580")
    assert branch["checks"]["driver"] == "ok" and branch["checks"]["toolkit"] == "skipped"
    cuda, _w = smi(expected_cuda="12.8")
    assert cuda["checks"]["driver"] != "skipped" and cuda["checks"]["toolkit"] != "skipped"
    assert cuda["checks"]["gpu_model"] == "skipped"


FACTS = {"smi_error": None, "nvlink": None, "nvswitch": False, "gpus": [{"index": 0, "fabric_state": None}],
         "pcie_fabric": {"applies": False}}


def test_the_verdicts_of_the_facts_that_apply():
    base = gate._verdicts([], [], set(), FACTS)
    assert [base[c] for c in ("nvlink", "fabric_manager", "pcie_acs", "iommu", "gpu_p2p")] == ["skipped"] * 5
    assert base["ecc_errors"] == base["temperature"] == "ok"
    links = gate._verdicts([], [], set(), dict(FACTS, nvlink={"GPU0": []}, nvswitch=True,
                                               pcie_fabric={"applies": True}))
    assert [links[c] for c in ("nvlink", "fabric_manager", "pcie_acs", "iommu", "gpu_p2p")] == ["ok"] * 5
    fabric = gate._verdicts([], [], set(), dict(FACTS, gpus=[{"index": 0, "fabric_state": "Completed"}]))
    assert fabric["fabric_manager"] == "ok"
    no_fabric = gate._verdicts([], [], set(), dict(FACTS, pcie_fabric=None))
    assert no_fabric["pcie_acs"] == "skipped"
    # nvidia-smi failed: what it answers is skipped, what other sources answer is not
    broken = gate._verdicts([], [], set(), dict(FACTS, smi_error="GPU is lost"))
    assert [c for c in gh.ALL_CHECKS if broken[c] != "skipped"] == ["nvidia_smi", "gpu_firmware", "xid", "kernel_log",
                                                                    "dcgm_diag", "nccl_allreduce"]


def test_an_ignored_check_and_a_kept_error_on_another_each_keep_their_verdict():
    kept = [gh.problem("xid", gh.WARNING, "Xid 31", "read it")]
    ignored = [gh.problem("ecc_errors", gh.ERROR, "2 uncorrected", "drain")]
    v = gate._verdicts(kept, ignored, {"xid", "ecc_errors"}, FACTS)
    assert v["ecc_errors"] == "ignored" and v["xid"] == "warning"  # a problem found outranks "skipped"


# -- inputs refused before anything runs -----------------------------------------------------------------------------
@pytest.mark.parametrize("given, bad", [
    ({"probe_timeout": 1, "nccl_timeout": 0}, []),
    ({"probe_timeout": 86400, "nccl_timeout": 86400}, []),
    ({"probe_timeout": None, "nccl_timeout": None}, []),
    ({}, []),
    ({"probe_timeout": 0}, ["probe_timeout: 0 is outside 1..86400 seconds"]),
    ({"probe_timeout": 86401, "nccl_timeout": -1}, ["probe_timeout: 86401 is outside 1..86400 seconds",
                                                    "nccl_timeout: -1 is outside 0..86400 seconds"]),
    ({"nccl_timeout": 86401}, ["nccl_timeout: 86401 is outside 0..86400 seconds"]),
])
def test_probe_deadlines_are_bounded_on_both_sides(given, bad):
    assert gate.input_problems(given) == bad


def test_a_process_pattern_that_is_no_regex_is_refused_by_name():
    assert gate.input_problems({"own_process_patterns": ["^python3 -m sglang"]}) == []
    bad = gate.input_problems({"own_process_patterns": ["(unclosed"]})
    assert len(bad) == 1 and bad[0].startswith("own_process_patterns[0] '(unclosed' refused: bad regex")


def test_unknown_ignores_are_the_names_that_are_no_check():
    assert gate.unknown_ignores(["ecc_errors", "nccl_allreduce", "ecc", "XID"]) == ["ecc", "XID"]
    assert gate.unknown_ignores([]) == []


# -- the deadline wrapper and the bound the runner keeps behind it -----------------------------------------------------
def test_the_probe_deadline_wraps_with_timeout_only_where_it_exists():
    assert gate._timeout(which_usr, 30) == ["/usr/bin/timeout", "--kill-after=10", "30"]
    assert gate._timeout(which_none, 30) == []


@pytest.mark.parametrize("argv, bound", [
    (["/usr/bin/timeout", "--kill-after=10", "300", "/usr/bin/dcgmi", "diag"], 320),
    (["timeout", "--kill-after=10", "5", "python"], 25),
    (["/usr/bin/timeout", "--kill-after=10", "300"], None),          # no command: no probe call
    (["/usr/bin/timeout", "--kill-after=5", "300", "dcgmi"], None),  # not the gate's own wrapper
    (["/usr/bin/nvidia-smi", "--kill-after=10", "300", "x"], None),
    (["/usr/bin/dcgmi", "diag", "-r", "1"], None),
])
def test_bounded_by_reads_only_the_gates_own_wrapper(argv, bound):
    assert gate.bounded_by(argv) == bound


@pytest.mark.parametrize("value, mode", [
    (True, "on"), (False, "off"), ("on", "on"), (" YES ", "on"), ("true", "on"), ("1", "on"), ("Off", "off"),
    ("no", "off"), ("false", "off"), ("0", "off"), ("auto", "auto"), ("sometimes", "auto"), ("", "auto"),
])
def test_nccl_mode_reads_the_users_words(value, mode):
    assert gate.nccl_mode(value) == mode


# -- which GPUs the all-reduce runs over ------------------------------------------------------------------------------
GPUS8 = {"gpus": [{"index": i} for i in range(8)], "processes": []}


@pytest.mark.parametrize("params, mode, gpus, why", [
    ({}, "off", [], "skipped on purpose (gpu_health_nccl_allreduce: off)"),
    ({}, "auto", [], "no instance spans several GPUs here (gpu_health_nccl_gpus / gpu_health_nccl_world)"),
    ({}, "on", list(range(8)), None),
    ({"nccl_world": 3}, "auto", [0, 1, 2], None),
    ({"nccl_gpus": ["6", "7"], "nccl_world": 3}, "auto", [6, 7], None),  # the list wins over the world
    ({"nccl_gpus": [5]}, "on", [5], "one GPU: no collective to test"),
    ({"nccl_gpus": [7, 8, 9]}, "auto", [7, 8, 9],
     "GPU(s) GPU8, GPU9 are not on this host (it has GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, GPU6, GPU7)"),
])
def test_the_probe_runs_over_exactly_the_instances_gpus(params, mode, gpus, why):
    assert gate.probe_gpus(params, GPUS8, mode) == (gpus, why)


def test_no_gpu_and_a_busy_gpu_are_not_probed():
    assert gate.probe_gpus({"nccl_world": 2}, {"gpus": [], "processes": []}, "on") == ([], "no GPU answered nvidia-smi")
    busy = dict(GPUS8, processes=[{"pid": 1}, {"pid": 2}])
    assert gate.probe_gpus({"nccl_world": 2}, busy, "auto") == (
        [0, 1], "2 GPU process(es) run on this host (a running instance): not probed, a collective would compete "
                "with them")


# -- the all-reduce: its argv and environment, and what its failures keep ---------------------------------------------
class Probe(object):
    """The probe's runner: records what the gate starts and answers as the probe would (rc, stdout, stderr)."""

    def __init__(self, rc=0, out="", err=""):
        self.answer, self.calls = (rc, out, err), []

    def run(self, argv, data=None, env=None):
        self.calls.append((list(argv), dict(env or {})))
        return self.answer


TOPO = {"pcie_only": True, "all_nvlink": False, "matrix": {}, "nvlink_counts": {}}
ON2 = {"gpus": [{"index": 0, "name": "RTX"}, {"index": 1, "name": "RTX"}],  # their links unknown: no floor of their own
       "processes": [], "topology": TOPO}


def passed(correct=True, busbw=25.0):
    return json.dumps({"world_size": 2, "size_mb": 64, "iters": 10, "seconds": 0.01, "algbw_gbps": busbw,
                       "busbw_gbps": busbw, "correct": correct})


def allreduce(probe, tmp_path, **params):
    p = dict(PARAMS, nccl_python=str(tmp_path / "python"), **params)
    (tmp_path / "python").write_text("")
    return gate._allreduce(p, probe.run, which_usr, ON2, str(tmp_path), [0, 1])


def test_the_probe_runs_its_script_under_the_deadline_with_exactly_the_gpus_and_a_marker(tmp_path):
    probe = Probe(0, passed())
    found, nccl = allreduce(probe, tmp_path, nccl_timeout=0, probe_timeout=9, nccl_iters=None,
                            nccl_env={"NCCL_P2P_DISABLE": "1"})
    assert found == [] and nccl["deadline_s"] == 9 and nccl["gpus"] == [0, 1]  # nccl_timeout 0: the probe's deadline
    (argv, env), = probe.calls
    assert argv[:3] == ["/usr/bin/timeout", "--kill-after=10", "9"] and argv[3] == str(tmp_path / "python")
    assert argv[5:] == ["64", "10"] and os.path.dirname(argv[4]) == str(tmp_path)
    assert os.path.basename(argv[4]).startswith("gpu_health_nccl_") and argv[4].endswith(".py")
    with open(argv[4]) as script:
        assert script.read() == probes.NCCL_PROBE
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1" and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert env["NCCL_P2P_DISABLE"] == "1" and nccl["env"] == {"NCCL_P2P_DISABLE": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                                                              "CUDA_VISIBLE_DEVICES": "0,1"}
    pid, _sep, token = env[gate.PROBE_MARKER].partition("-")
    assert pid == str(os.getpid()) and len(token) == 16 and int(token, 16) >= 0
    assert nccl["report"] == ("nccl_allreduce over GPU0, GPU1: bus bandwidth 25.0 GB/s (floor none), 64 MiB, "
                              "sum correct")
    sized = Probe(0, passed())
    _found, again = allreduce(sized, tmp_path, nccl_timeout=5, probe_timeout=9, nccl_size_mb=32, nccl_iters=3)
    assert again["deadline_s"] == 5 and gate.PROBE_MARKER not in again["env"] and sized.calls[0][0][5:] == ["32", "3"]


def test_a_bandwidth_floor_is_reported_and_a_slow_link_refused(tmp_path):
    found, nccl = allreduce(Probe(0, passed(busbw=25.0)), tmp_path, nccl_min_busbw_gbps=20)
    assert found == [] and "(floor 20.0 GB/s)" in nccl["report"]
    found, nccl = allreduce(Probe(0, passed(busbw=15.0)), tmp_path, nccl_min_busbw_gbps=20)
    assert [p["severity"] for p in found] == [gh.ERROR] and "15.0 GB/s" in found[0]["detail"]


def test_a_wrong_sum_names_the_gpus_and_the_drain_remedy(tmp_path):
    found, nccl = allreduce(Probe(0, passed(correct=False)), tmp_path)
    assert [p["detail"] for p in found] == ["the all-reduce over GPU0, GPU1 returned a wrong sum: a GPU or link "
                                            "corrupts data"]
    assert found[0]["remedy"] == gate.WRONG_SUM_REMEDY and nccl["report"].endswith(", WRONG SUM")


def test_a_failed_probe_keeps_its_last_error_lines(tmp_path):
    err = "loading torch\nNCCL WARN a\nNCCL WARN b\nRuntimeError: NCCL error: unhandled system error\n"
    # a result line and then a failing exit (a rank died after rank 0 printed): a failure, with stderr's last lines
    found, nccl = allreduce(Probe(1, passed(), err), tmp_path)
    assert [p["detail"] for p in found] == ["the NCCL all-reduce did not run: rc=1: NCCL WARN a | NCCL WARN b | "
                                            "RuntimeError: NCCL error: unhandled system error"]
    assert "report" not in nccl and found[0]["remedy"] != gate.HANG_REMEDY
    found, _nccl = allreduce(Probe(1, "", err), tmp_path)  # no result line at all
    assert found[0]["detail"] == ("the NCCL all-reduce did not run: rc=1: no output | NCCL WARN a | NCCL WARN b | "
                                  "RuntimeError: NCCL error: unhandled system error")
    # the probe's own error line and its stderr's last lines, both kept
    out = json.dumps({"error": "init failed"})
    found, _nccl = allreduce(Probe(3, out, "w\nx\ny\nz\n"), tmp_path)
    assert found[0]["detail"] == "the NCCL all-reduce did not run: rc=3: init failed | x | y | z"
    found, _nccl = allreduce(Probe(3, out, ""), tmp_path)  # nothing on stderr: nothing made up
    assert found[0]["detail"] == "the NCCL all-reduce did not run: rc=3: init failed | "
    found, _nccl = allreduce(Probe(3, passed(), None), tmp_path)
    assert found[0]["detail"] == "the NCCL all-reduce did not run: rc=3: "
    found, nccl = allreduce(Probe(0, out, "x\n"), tmp_path)  # rc 0 with an error: the error alone
    assert found[0]["detail"] == "the NCCL all-reduce did not run: init failed" and "report" not in nccl
    # an error beside a measured bandwidth: refused, and no bandwidth reported as if it had passed
    both = dict(json.loads(passed()), error="rank 1 lost")
    found, nccl = allreduce(Probe(0, json.dumps(both)), tmp_path)
    assert found[0]["detail"] == "the NCCL all-reduce did not run: rank 1 lost" and "report" not in nccl


@pytest.mark.parametrize("rc", [124, 137])
def test_a_probe_ended_by_timeout_is_a_hang_naming_the_gpus_and_the_deadline(rc, tmp_path):
    found, nccl = allreduce(Probe(rc, "", "Terminated"), tmp_path, nccl_timeout=4)
    assert found[0]["detail"] == ("the NCCL all-reduce over GPU0, GPU1 did not finish within 4 s: it hangs (P2P checks can "
                                  "pass while the first collective hangs)")
    assert found[0]["remedy"] == gate.HANG_REMEDY and found[0]["severity"] == gh.ERROR
    assert nccl == {"gpus": [0, 1], "timed_out": True, "deadline_s": 4, "env": nccl["env"]}


def test_a_probe_tree_that_does_not_go_is_an_error_naming_its_processes(tmp_path, monkeypatch):
    ended = []

    def end_marked(name, marker, seconds):  # a rank in state D: SIGKILL does not end it
        ended.append((name, marker, seconds))
        return [4242, 4243]
    monkeypatch.setattr(gate.proc_watch, "end_marked", end_marked)
    probe = Probe(0, passed())
    found, nccl = allreduce(probe, tmp_path)
    assert ended == [(gate.PROBE_MARKER, probe.calls[0][1][gate.PROBE_MARKER], 10)]
    assert [p["check"] for p in found] == ["nccl_allreduce"]
    assert [p["detail"] for p in found] == ["the NCCL all-reduce probe's process(es) 4242, 4243 are still there 10 s "
                                            "after SIGKILL (state D: a GPU or driver call that does not return)"]
    assert found[0]["remedy"] == gate.HANG_REMEDY and found[0]["severity"] == gh.ERROR
    assert nccl == {"gpus": [0, 1], "left": [4242, 4243], "deadline_s": 60, "env": {"CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                                                                                    "CUDA_VISIBLE_DEVICES": "0,1"}}


def test_without_the_probes_interpreter_the_probe_is_an_error_before_it_starts(tmp_path):
    probe = Probe(0, passed())
    found, nccl = gate._allreduce(dict(PARAMS, nccl_python=str(tmp_path / "nope")), probe.run, which_usr, ON2,
                                  str(tmp_path), [0, 1])
    assert probe.calls == [] and nccl is None and os.listdir(str(tmp_path)) == []
    assert found[0]["detail"] == "%s does not exist: no torch to run the all-reduce with" % (tmp_path / "nope")
    assert found[0]["remedy"] == "install SGLang first (roles/sglang) or set gpu_health_nccl_python"
    assert found[0]["check"] == "nccl_allreduce" and found[0]["severity"] == gh.ERROR


def test_the_pcie_fabric_is_asked_only_when_wanted_and_by_default(smi, monkeypatch):
    asked = []

    def run(argv, data=None, env=None):
        asked.append(list(argv[1:]))
        return cached_run(argv, data, env)
    params = dict(PARAMS, nvidia_smi_path=FAKE_SMI)
    gate.check(dict(params, pcie_fabric=False), run, which_none, "/tmp")
    assert ["topo", "-p2p", "r"] not in asked
    gate.check(dict(params, pcie_fabric=True), run, which_none, "/tmp")
    assert ["topo", "-p2p", "r"] in asked
    del asked[:]
    gate.check(dict((k, v) for k, v in params.items() if k != "pcie_fabric"), run, which_none, "/tmp")
    assert ["topo", "-p2p", "r"] in asked  # on unless turned off


def test_the_probes_verdict_joins_what_the_facts_found(smi, tmp_path):
    (tmp_path / "python").write_text("")
    probe = Probe(0, passed())

    def run(argv, data=None, env=None):
        return cached_run(argv, data, env) if argv[0] == FAKE_SMI else probe.run(argv, data, env)
    params = dict(PARAMS, nvidia_smi_path=FAKE_SMI, nccl_python=str(tmp_path / "python"), nccl_allreduce="auto", nccl_gpus=[2, 3],
                  expected_model="H200")
    result, _w = gate.check(params, run, which_timeout, str(tmp_path))
    assert set(p["check"] for p in result["problems"]) == {"gpu_model"} and result["healthy"] is False
    assert result["checks"]["gpu_model"] == "error" and result["checks"]["nccl_allreduce"] == "ok"
    assert result["notes"][-1].startswith("nccl_allreduce over GPU2, GPU3: bus bandwidth 25.0 GB/s")
    assert [env["CUDA_VISIBLE_DEVICES"] for _argv, env in probe.calls if gate.PROBE_MARKER in env] == ["2,3"]
    assert [os.path.dirname(argv[4]) for argv, env in probe.calls if gate.PROBE_MARKER in env] == [str(tmp_path)]
    probe.answer = (0, passed(correct=False), "")
    result, _w = gate.check(params, run, which_timeout, str(tmp_path))
    assert set(p["check"] for p in result["problems"]) == {"gpu_model", "nccl_allreduce"}


def test_the_bandwidth_floor_comes_from_exactly_the_probed_gpus_links_and_the_topology(tmp_path):
    (tmp_path / "python").write_text("")
    gpus = [{"index": 0, "pcie_gen_max": 4, "pcie_width_max": 16}, {"index": 1, "pcie_gen_max": 4, "pcie_width_max": 16},
            {"index": 2, "pcie_gen_max": 5, "pcie_width_max": 16}]  # GPU2 is faster, and not probed
    for topology in (TOPO, {"all_nvlink": True, "nvlink_counts": {"GPU0-GPU1": 6}, "pcie_only": False}):
        facts = {"gpus": gpus, "processes": [], "topology": topology}
        found, nccl = gate._allreduce(dict(PARAMS, nccl_python=str(tmp_path / "python")), Probe(0, passed(busbw=400.0)).run,
                                      which_usr, facts, str(tmp_path), [0, 1])
        floor, _why = probes.expected_busbw(gpus[:2], topology)
        assert found == [] and floor and nccl["expected_min_busbw_gbps"] == floor
        assert "(floor %.1f GB/s)" % floor in nccl["report"]
    assert probes.expected_busbw(gpus[:2], TOPO)[0] != probes.expected_busbw(gpus[1:], TOPO)[0]


def test_a_result_without_its_sum_or_bandwidth_reads_as_the_probe_wrote_it(tmp_path):
    result = json.loads(passed())
    del result["correct"]  # an older probe that did not check the sum
    _found, nccl = allreduce(Probe(0, json.dumps(result)), tmp_path)
    assert nccl["report"].endswith(", sum correct")
    del result["busbw_gbps"]  # nothing measured: no report of a bandwidth
    found, nccl = allreduce(Probe(0, json.dumps(result)), tmp_path)
    assert found == [] and "report" not in nccl
