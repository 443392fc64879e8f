# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The waiter against the SGLang double: real processes, real HTTP, real files.

Each test starts ``python3 -m sglang.launch_server`` from tools/sglang_double on
a free loopback port with its stdout+stderr in a log file, and runs the waiter
in-process on it (pid watched).  Skipped when the double is not in the tree.
"""
import testpaths
import json
import os
import signal
import subprocess
import sys

import pytest

from netutil import free_port

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter

REPO = testpaths.REPO
DOUBLE = os.environ.get("SGLANG_DOUBLE_PATH") or os.path.join(REPO, "tools", "sglang_double")
pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(DOUBLE, "sglang", "launch_server.py")), reason="SGLang double not present")


class Double:
    def __init__(self, tmp_path, scenario, pace="0.1", version="0.5.10.post1", extra=(), durations=None):
        self.port = free_port()
        self.log = str(tmp_path / ("server-%d.log" % self.port))  # a test may run two doubles
        self.events = str(tmp_path / ("events-%d.jsonl" % self.port))
        env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_SCENARIO=scenario, SGLANG_DOUBLE_PACE=pace,
                   SGLANG_DOUBLE_VERSION=version, SGLANG_DOUBLE_EVENTS=self.events)
        if durations:  # absolute seconds, e.g. {"linger": 600}
            path = tmp_path / ("durations-%d.json" % self.port)
            path.write_text(json.dumps({"durations": durations}))
            env["SGLANG_DOUBLE_SCENARIO_FILE"] = str(path)
        self.fh = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sglang.launch_server", "--model-path", "/models/test-model",
             "--host", "127.0.0.1", "--port", str(self.port)] + list(extra),
            stdout=self.fh, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def params(self, **kw):
        p = {"url": "http://127.0.0.1:%d" % self.port, "log_path": self.log, "pid": self.proc.pid,
             "timeout": 60, "stall_timeout": 30, "interval": 0.5}
        p.update(kw)
        return p

    def event(self, name):
        try:
            with open(self.events) as f:
                for line in f:
                    e = json.loads(line)
                    if e.get("event") == name or e.get("type") == name:
                        return e
        except OSError:
            pass
        return None

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        self.fh.close()


@pytest.fixture
def double(tmp_path):
    started = []

    def start(scenario, **kw):
        d = Double(tmp_path, scenario, **kw)
        started.append(d)
        return d
    yield start
    for d in started:
        d.stop()


def wait(d, **kw):
    return Waiter(d.params(**kw)).run()


def test_ready(double):
    d = double("ready")
    r = wait(d)
    assert not r["failed"], r["msg"]
    assert r["stage"] == "ready" and r["ready_by"] in ("log+generation", "health+generation")
    assert [s["stage"] for s in r["stages"]][-1] == "ready"
    assert "load_weights" in [s["stage"] for s in r["stages"]]
    assert r["server"].get("served_model")
    t_ready = d.event("ready")
    assert t_ready is not None


@pytest.mark.parametrize("version, told, path", [
    ("0.5.23", None, "/ready"),            # asked, answered: /ready it is
    ("0.5.10.post1", None, "/health"),     # /ready answers 404: /health
    ("0.5.23", "0.5.23", "/ready"),
    ("0.5.23", "0.5.15.post1", "/health"),  # told an older version: /health without asking /ready
])
def test_ready_from_the_endpoint_of_the_version(double, version, told, path):
    # No log: readiness can only come from the endpoint.
    d = double("ready", version=version)
    r = wait(d, log_path=None, sglang_version=told)
    assert not r["failed"], r["msg"]
    assert r["health_path"] == path and r["ready_by"] == "health+generation" and r["health_status"] == 200


@pytest.mark.parametrize("scenario, category", [
    ("crash_oom_cuda_graph", "oom_cuda_graph"),
    ("crash_oom_kv", "oom_kv"),
    ("crash_oom_weights", "oom_weights"),
    ("crash_nccl", "nccl"),
    ("crash_import", "import_error"),
    ("crash_scheduler", "scheduler_exception"),
    # The double's warm-up response names the CUDA fault behind it: that is the cause to report.
    ("crash_warmup", "cuda_error"),
    ("crash_arch", "arch_unsupported"),
    ("crash_driver", "driver_mismatch"),
    ("crash_model_not_found", "model_not_found"),
])
def test_crash_classified(double, scenario, category):
    d = double(scenario)
    r = wait(d)
    assert r["failed"] and r["reason"] == "crashed", r["msg"]
    assert r["category"] == category, (r["msg"], r["log_tail"])
    assert r["key_line"] and "\n" not in r["msg"]
    assert r["process"]["alive"] is False


def test_port_taken_verdict_does_not_wait_for_the_lingering_process(double):
    # Real 0.5.15.post1 stays alive ~70 s after the bind error; here it would outlive the 60 s wait, so a verdict
    # that waited for the exit would be a timeout.
    d = double("crash_port_in_use", durations={"linger": 600})
    r = wait(d)
    assert r["failed"] and r["reason"] == "crashed", r["msg"]
    assert r["category"] == "port_in_use" and "[Errno 98]" in r["key_line"]
    assert r["process"]["alive"] is True and d.event("linger") is not None


@pytest.mark.parametrize("owner_known", [True, False])
def test_another_server_on_our_port_is_never_our_ready(double, monkeypatch, owner_known):
    # The molecule `server` case: a second instance on a port a READY server holds. Its /health answers 200 from
    # the first server seconds before the second has loaded anything. owner_known=False is a container without
    # ptrace rights, where the socket's holder cannot be seen: the log's stage must still refuse that 200.
    from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch
    first = double("ready")
    assert not wait(first)["failed"]
    if not owner_known:
        monkeypatch.setattr(proc_watch, "port_owner", lambda port, pid: None)
    second = double("ready", pace="0.3", durations={"linger": 600}, extra=["--port", str(first.port)])
    r = wait(second, url="http://127.0.0.1:%d" % first.port)
    assert r["failed"] and r["reason"] == "crashed", r["msg"]
    assert r["category"] == "port_in_use" and "[Errno 98]" in r["key_line"]


def test_sigquit_first_reports_the_cause(double):
    d = double("crash_scheduler_sigquit_first", version="0.5.23")
    r = wait(d)
    assert r["failed"] and r["reason"] == "crashed"
    assert "sigquit" not in r["key_line"].lower()


def test_crash_verdict_comes_before_the_timeout(double):
    d = double("crash_oom_kv")
    r = wait(d, timeout=30)
    assert r["failed"] and r["reason"] == "crashed" and r["category"] == "oom_kv", r["msg"]


def test_lingering_parent_after_child_died(double):
    d = double("child_dies")
    r = wait(d)
    assert r["failed"] and r["reason"] == "crashed", r["msg"]
    assert r["process"]["alive"] is True  # the parent is still there: the verdict did not wait for its exit


@pytest.mark.parametrize("version", ["0.5.10.post1", "0.5.23"])
def test_hang_is_stalled_by_stage_budget(double, version):
    d = double("hang:dist_init", version=version, extra=("--tp", "2"))
    # Like real SGLang on a PCIe box with ACS trouble: "Init torch distributed begin." (0.5.21+: "Init parallel
    # begin.") and then nothing - the stage is seen on every version.
    # stall_timeout 30 > timeout 20: only the stage budget can make it "stalled" rather than "timeout".
    r = wait(d, stage_timeouts={"dist_init": 2}, stall_timeout=30, timeout=20)
    assert r["failed"] and r["reason"] == "stalled", r["msg"]
    assert r["stage"] == "dist_init"
    assert r["category"] == "nccl"


def test_hang_in_dist_init_at_tp1_gets_no_nccl_remedy(double):
    # TP 1 has no peer to wait for (issue 29: the H200's frozen TP 1 start-up was given an NCCL/PCIe remedy)
    d = double("hang:dist_init")
    r = wait(d, stage_timeouts={"dist_init": 2}, stall_timeout=30, timeout=20)
    assert r["failed"] and r["reason"] == "stalled" and r["stage"] == "dist_init", r["msg"]
    assert r["category"] != "nccl" and "NCCL_P2P_DISABLE" not in r["remedy"], r["msg"]


RTX_PCIE = {"compute_caps": ["12.0"], "gpu_names": ["NVIDIA RTX PRO 6000 Blackwell Server Edition"], "gpu_count": 8,
            "pcie_only": True, "all_nvlink": False}


@pytest.mark.parametrize("scenario, category, tp, words", [
    ("crash_shm", "shm_exhausted", "2", ("--shm-size",)),
    ("crash_p2p", "nccl", "2", ("--disable-custom-all-reduce", "ACS")),
    ("watchdog:cuda_graph", "watchdog_hang", "2", ("capturing CUDA graphs", "NCCL_P2P_DISABLE=1", "IOMMU")),
    ("watchdog:load_weights", "watchdog_hang", "1", ("no peer", "loading weights")),
    ("crash_arch:cuda", "arch_unsupported", "1", ("sm_120", "RTX PRO 6000")),
    ("crash_arch:hip", "arch_unsupported", "1", ("sm_120",)),
    ("crash_arch:triton", "arch_unsupported", "1", ("sm_120",)),
    ("crash_arch:flashinfer", "arch_unsupported", "1", ("sm_120",)),
    ("crash_arch:sglang", "arch_unsupported", "1", ("CUDA 12.8",)),
    ("crash_arch:ptxas", "arch_unsupported", "1", ("sm_120",)),
])
def test_issue29_classes_from_the_double_with_host_fitted_remedies(double, scenario, category, tp, words):
    d = double(scenario, extra=("--tp", tp), durations={"watchdog": 1.0})
    r = wait(d, host=RTX_PCIE)
    assert r["failed"] and r["reason"] == "crashed" and r["category"] == category, (r["msg"], r["log_tail"])
    for word in words:
        assert word in r["remedy"], (word, r["remedy"])
    if tp == "1":
        assert "NCCL_P2P_DISABLE" not in r["remedy"]


def test_sigbus_while_loading_weights(double):
    d = double("crash_sigbus")
    r = wait(d)
    assert r["failed"] and r["reason"] == "crashed" and r["category"] == "weights_sigbus", r["msg"]
    assert "Bus error" in r["key_line"] and "/models/test-model" in r["remedy"] and "storage" in r["remedy"]
    assert r["process"]["alive"] is True  # the launcher lingers on its ready pipe, as for any dead child


def test_silent_hang_is_stalled(double):
    d = double("hang:load_weights")
    r = wait(d, stall_timeout=3, timeout=30)
    assert r["failed"] and r["reason"] == "stalled", r["msg"]
    assert r["elapsed"] >= 3  # never before stall_timeout of silence


def test_busy_silent_phase_is_not_a_stall(double):
    d = double("busy:5")
    r = wait(d, stall_timeout=2)
    assert not r["failed"], r["msg"]


def test_generate_fails_is_unhealthy(double):
    d = double("generate_fails")
    r = wait(d)
    assert r["failed"] and r["reason"] == "unhealthy", r["msg"]


def test_worker_rank_decides_without_http(double):
    d = double("ready", extra=["--node-rank", "1", "--nnodes", "2", "--dist-init-addr", "127.0.0.1:5000"])
    r = wait(d, node_rank=1)
    assert not r["failed"], r["msg"]
    assert r["health_calls"] == 0


def test_timeout(double):
    d = double("hang:cuda_graph")
    r = wait(d, timeout=2, stall_timeout=100)
    assert r["failed"] and r["reason"] == "timeout"


def test_resumable_same_clock(double):
    d = double("ready", pace="0.3")
    w = Waiter(d.params())
    r = w.run(budget=0.3, return_on_stage_change=True)
    rounds = 1
    while not r["done"]:
        w = Waiter(d.params(), state=json.loads(json.dumps(r["state"])))
        r = w.run(budget=0.3, return_on_stage_change=True)
        rounds += 1
    assert not r["failed"] and rounds > 1
    began = [s["began"] for s in r["stages"]]
    assert began == sorted(began)


# -- issue 45: READY asks the chat path when the model has a chat template
@pytest.mark.parametrize("template, failed", [
    ("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}{% endfor %}", False),
    ("{% for m in messages %}{{ m['content'] }}", True),  # the GPU's row: every chat request 400
])
def test_ready_proves_the_chat_path(double, tmp_path, template, failed):
    model = tmp_path / "chat-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"max_position_embeddings": 4096}))
    (model / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    d = double("ready", version="0.5.23", extra=("--model-path", str(model)))
    r = wait(d, chat_probe=True)
    assert r["failed"] is failed, r["msg"]
    if failed:
        assert r["reason"] == "unhealthy" and r["category"] == "chat_template"
        assert "a 1-token /v1/chat/completions answers 400: " in r["msg"]
        assert "unexpected end of template" in r["key_line"].lower()
    else:
        assert r["ready_by"].endswith("+chat")
    assert not wait(d)["failed"]  # without the probe the same server is READY: the setting turns it off


def test_a_chat_template_file_given_at_launch_is_proven_at_ready(double, tmp_path):
    """--chat-template FILE.jinja: the model check does not render it, SGLang loads it at start without compiling it
    (0.5.15.post1 template_manager: a syntax error reads as the 'string' content format), every chat request 400s."""
    broken = tmp_path / "broken.jinja"
    broken.write_text("{% for m in messages %}{{ m['content'] }}")
    d = double("ready", version="0.5.23", extra=("--chat-template", str(broken)))
    r = wait(d, chat_probe=True)
    assert r["failed"] and r["category"] == "chat_template", r["msg"]
    assert not wait(d)["failed"]  # the same server without the probe: READY on /generate alone, as before
