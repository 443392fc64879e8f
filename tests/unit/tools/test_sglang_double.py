# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang double, exercised as real processes over real HTTP on 127.0.0.1."""
import testpaths
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from netutil import free_port

REPO = testpaths.REPO
DOUBLE = os.path.join(REPO, "tools", "sglang_double")
PACE = "0.05"


class Run(object):
    """One double process tree; always reaped by the fixture."""

    def __init__(self, tmp_path, scenario="ready", version="0.5.23", args=(), env=None):
        self.port = free_port()
        self.events_path = str(tmp_path / "events.jsonl")
        self.out_path, self.err_path = str(tmp_path / "out.log"), str(tmp_path / "err.log")
        e = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE=PACE, SGLANG_DOUBLE_SCENARIO=scenario,
                 SGLANG_DOUBLE_VERSION=version, SGLANG_DOUBLE_EVENTS=self.events_path, SGLANG_DOUBLE_SHARDS="4")
        e.update(env or {})
        self.out, self.err = open(self.out_path, "wb"), open(self.err_path, "wb")
        argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", "/models/kimi",
                "--host", "127.0.0.1", "--port", str(self.port)] + list(args)
        self.proc = subprocess.Popen(argv, env=e, stdout=self.out, stderr=self.err, start_new_session=True)

    def events(self):
        try:
            with open(self.events_path) as f:
                return [json.loads(line) for line in f]
        except IOError:
            return []

    def wait_event(self, name, timeout=15, **match):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for ev in self.events():
                if ev["event"] == name and all(ev.get(k) == v for k, v in match.items()):
                    return ev
            time.sleep(0.05)
        raise AssertionError("no %s event; got %s; stderr:\n%s" % (name, self.events(), self.stderr()[-3000:]))

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stdout(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def get(self, path, headers=None, data=None, timeout=10):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), headers=headers or {},
                                     data=json.dumps(data).encode() if data is not None else None)
        try:
            r = urllib.request.urlopen(req, timeout=timeout)
            return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def port_open(self):
        s = socket.socket()
        s.settimeout(0.5)
        try:
            return s.connect_ex(("127.0.0.1", self.port)) == 0
        finally:
            s.close()

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # own session: reaches the scheduler children too
        except OSError:
            pass
        self.proc.wait()
        self.out.close()
        self.err.close()


@pytest.fixture
def run(tmp_path):
    runs = []

    def start(*a, **kw):
        sub = tmp_path / str(len(runs))
        sub.mkdir()
        r = Run(sub, *a, **kw)
        runs.append(r)
        return r
    yield start
    for r in runs:
        r.kill()


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # a zombie still answers kill(0); read its state
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except IOError:
        return False


# ---------------------------------------------------------------- ready flow

def test_ready_flow_port_closed_then_503_then_200(run, tmp_path):
    # A warm-up long enough to be seen by a poller on a loaded 2-core machine.
    spec = tmp_path / "scenario.json"
    # and a drain window that a loaded machine cannot miss (the 503 after SIGTERM below)
    spec.write_text(json.dumps({"durations": {"warmup": 1.5, "drain": 3.0}}))
    r = run(env={"SGLANG_DOUBLE_SCENARIO_FILE": str(spec)})
    seen_closed = seen_503 = False
    deadline = time.time() + 20
    while time.time() < deadline:
        if not r.port_open():
            seen_closed = True
        else:
            code, _body = r.get("/health")
            if code == 503:
                seen_503 = True
            if code == 200:
                break
        time.sleep(0.01)
    else:
        pytest.fail("never ready: " + r.stderr()[-2000:])
    assert seen_closed and seen_503
    ready = r.wait_event("ready")
    port_open = r.wait_event("port_open")
    assert port_open["t"] < ready["t"]
    err = r.stderr()
    assert err.index("server_args=ServerArgs(") < err.index("Load weight begin") < err.index("Memory pool end")
    assert "The server is fired up and ready to roll!" in err
    assert '"POST /generate HTTP/1.1" 200' in r.stdout()
    stages = [e["stage"] for e in r.events() if e["event"] == "stage"]
    assert stages == ["init", "dist_init", "load_weights", "kv_cache", "cuda_graph", "http", "warmup", "ready"]
    code, body = r.get("/server_info")
    assert code == 200 and json.loads(body)["version"] == "0.5.23"
    assert r.get("/ready")[0] == 200
    # SIGTERM drains: 503 while draining (asked once the double says it drains: no polling window assumed), then
    # exit status 0
    r.proc.send_signal(signal.SIGTERM)
    r.wait_event("draining")
    assert r.get("/health")[0] == 503
    assert r.proc.wait(10) == 0
    assert r.wait_event("exit")["code"] == 0


@pytest.mark.parametrize("version,in_place,desc", [
    ("0.5.9", False, "Loading safetensors checkpoint shards"), ("0.5.10.post1", True, "Multi-thread loading shards")])
def test_weight_bar_style_per_version(run, version, in_place, desc):
    r = run(version=version)
    r.wait_event("ready")
    raw = r.stderr()
    start = raw.index(desc)
    bars = raw[start - 1:raw.index("Load weight end")]
    assert bars.startswith("\r")
    refreshes = bars.count("\r" + desc)
    assert refreshes == 5  # 0/4 .. 4/4
    if in_place:
        bar_only = bars[:bars.index("\n") + 1]
        assert bar_only.count("\r") == refreshes and bar_only.endswith("it/s]\n")  # one newline, at the end
        assert "it/s]\r" + desc in bars or "s/it]\r" + desc in bars
    else:
        assert bars.count("]\n\r" + desc) == refreshes - 1
    assert r.get("/ready")[0] == 404  # /ready exists on 0.5.23 only
    assert "Capture cuda graph begin. This can take up to several minutes." in raw


# ---------------------------------------------------------------- argument parsing

def launch_rc(args, version="0.5.23"):
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_VERSION=version, SGLANG_DOUBLE_PACE=PACE)
    p = subprocess.run([sys.executable, "-m", "sglang.launch_server", "--model-path", "/m"] + args, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20, check=False)
    return p.returncode, p.stderr.decode()


def test_bad_flag_exits_2():
    rc, err = launch_rc(["--no-such-flag"])
    assert rc == 2 and "sglang serve: error: unrecognized arguments: --no-such-flag" in err


def _first_choice(name):
    """How argparse lists the first choice in its "invalid choice" error on this Python: quoted ('auto', ) on the
    older ones, bare (auto, ) on newer ones such as 3.13 - real SGLang, an argparse program, prints the same."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--x", choices=[name, "other"])
    try:
        parser.parse_args(["--x", "nope"])
    except argparse.ArgumentError as exc:
        listed = str(exc).split("(choose from ", 1)[1]
        return listed[:listed.index(", ") + 2]
    raise AssertionError("argparse took a value that is not a choice")


# What real SGLang's parser refuses at launch, the double refuses with argparse's words and status 2 (issue 28;
# tests/real_parser/test_double_parser.py holds every option of every version to the real parsers).
@pytest.mark.parametrize("version,args,error", [
    ("0.5.9", ["--context-length", "abc"], "argument --context-length: invalid int value: 'abc'"),
    ("0.5.23", ["--context-length", "abc"], "argument --context-length: Invalid integer value: 'abc'. Use a plain"),
    ("0.5.15.post1", ["--preferred-sampling-params", "{bad"],
     "argument --preferred-sampling-params: invalid loads value: '{bad'"),
    ("0.5.10.post1", ["--load-format", "nope"], "argument --load-format: invalid choice: 'nope' (choose from " + _first_choice("auto")),
    ("0.5.23", ["--no-trust-remote-code"], "unrecognized arguments: --no-trust-remote-code"),
    ("0.5.9", ["--no-dllm-fdfo"], "unrecognized arguments: --no-dllm-fdfo"),
    ("0.5.23", ["--cuda-graph-config", "[1]"], "argument --cuda-graph-config: --cuda-graph-config must be a JSON "
     "object, got list"),
])
def test_refuses_what_real_sglang_refuses(version, args, error):
    rc, err = launch_rc(args, version)
    assert rc == 2 and ": error: " + error in err, err


def test_negation_stores_false_where_sglang_has_it():
    code = ("import argparse; from sglang.srt.server_args import ServerArgs; p = argparse.ArgumentParser(); "
            "ServerArgs.add_cli_args(p); print(p.parse_args(['--model-path', 'm', '--no-dllm-fdfo']).dllm_fdfo, "
            "p.parse_args(['--model-path', 'm']).dllm_fdfo)")
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_VERSION="0.5.23")
    out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, check=True).stdout.decode()
    assert out.split() == ["False", "True"]  # --no-x is off, and the real default (on) without it


def test_cuda_graph_max_bs_ambiguous_on_0523_only(run):
    rc, err = launch_rc(["--cuda-graph-max-bs", "128"])
    assert rc == 2
    assert ("error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
            "--cuda-graph-max-bs-prefill") in err
    r = run(version="0.5.9", args=["--cuda-graph-max-bs", "16", "--tp", "2"])
    r.wait_event("ready")
    assert "bs=16 " in r.stderr()


def test_server_args_add_cli_args_matches_version():
    code = ("import argparse; from sglang.srt.server_args import ServerArgs; p = argparse.ArgumentParser(); "
            "ServerArgs.add_cli_args(p); print(len(p._actions) - 1); "
            "a = (p.parse_args(['--model-path', 'm', '--tp', '8', '--speculative-algorithm', 'EAGLE3'])); "
            "print(getattr(a, 'tp_size', None) or a.tensor_parallel_size)")
    for version, count in (("0.5.9", 331), ("0.5.23", 531)):
        env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_VERSION=version)
        out = subprocess.check_output([sys.executable, "-c", code], env=env).decode().split()
        assert out == [str(count), "8"]


# ---------------------------------------------------------------- crashes

SCHED_CRASHES = {
    "crash_oom_cuda_graph": "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate",
    "crash_oom_kv": "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    "crash_oom_weights": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate",
    "crash_nccl": "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "crash_scheduler": "KeyError: ",
    "crash_arch": "no kernel image is available for execution on the device",
    "crash_driver": "The NVIDIA driver on your system is too old (found version 12080)",
    # issue 29's classes
    "crash_shm": "Error while creating shared memory segment /dev/shm/nccl-",
    "crash_p2p": "RuntimeError: CUDART error: peer access is not supported between these two devices",
    "crash_arch:hip": "RuntimeError: HIP error: invalid device function",
    "crash_arch:triton": "type fp8e4nv not supported in this architecture",
    "crash_arch:flashinfer": "ValueError: Unsupported compute capability: 120",
    "crash_arch:sglang": "ValueError: Unsupported compute capability: 12.0",
    "crash_arch:ptxas": "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'",
}
SIGQUIT = "Received sigquit from a child process. It usually means the child failed."


@pytest.mark.parametrize("scenario", sorted(SCHED_CRASHES))
def test_scheduler_crash_kills_tree(run, scenario):
    r = run(scenario=scenario)
    assert r.proc.wait(20) == -signal.SIGKILL  # kill_process_tree SIGKILLs the launcher itself
    err = r.stderr()
    assert err.index("Scheduler hit an exception: Traceback") < err.index(SIGQUIT)
    assert SCHED_CRASHES[scenario] in err
    assert r.wait_event("exit")["code"] == -9
    assert not r.port_open()
    if scenario == "crash_oom_cuda_graph":
        assert "--cuda-graph-max-bs-decode to a smaller value" in err  # 0.5.23 wording of the hint


def test_shm_warns_per_rank_before_the_exception(run):
    r = run(scenario="crash_shm", args=("--tp", "2"))
    assert r.proc.wait(20) == -signal.SIGKILL
    err = r.stderr()
    assert "] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-" in err  # NCCL's own line
    assert err.index("NCCL WARN") < err.index("Scheduler hit an exception")


def test_watchdog_ends_a_hung_step(run):
    r = run(scenario="watchdog:cuda_graph", env={"SGLANG_DOUBLE_SCENARIO_FILE": ""})
    assert r.wait_event("hang_start")["stage"] == "cuda_graph"
    assert r.proc.wait(20) == -signal.SIGKILL  # the watchdog SIGQUITs the launcher, which kills the tree
    err = r.stderr()
    assert "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)" in err
    assert err.index("watchdog timeout") < err.index(SIGQUIT)


def test_sigbus_kills_the_scheduler_and_the_launcher_lingers(run):
    r = run(scenario="crash_sigbus")
    deadline = time.time() + 15
    while "Fatal Python error: Bus error" not in r.stderr() and time.time() < deadline:
        time.sleep(0.05)
    err = r.stderr()
    assert 'safetensors/torch.py", line 313 in get_tensor' in err  # faulthandler's frame format
    time.sleep(0.5)
    assert alive(r.proc.pid) and not r.port_open()


@pytest.mark.parametrize("scenario", ["crash_arch:nope", "watchdog:ready"])
def test_unknown_layer_or_stage_is_refused(run, scenario):
    r = run(scenario=scenario)
    assert r.proc.wait(10) != 0 and "unknown" in r.stderr()


def test_sigquit_first_order(run):
    r = run(scenario="crash_scheduler_sigquit_first")
    assert r.proc.wait(20) == -signal.SIGKILL
    err = r.stderr()
    assert err.index(SIGQUIT) < err.index("Scheduler hit an exception:")


@pytest.mark.parametrize("scenario,text,rc", [
    ("crash_import", "ImportError: libcudart.so.12: cannot open shared object file", 1),
    ("crash_model_not_found", "OSError: /models/kimi is not a local folder", 1),
    ("crash_port_in_use", "[Errno 98] error while attempting to bind on address ('127.0.0.1', ", 1),
    ("crash_warmup", "Initialization failed. warmup error: Traceback", -signal.SIGKILL),
])
def test_launcher_failures(run, scenario, text, rc):
    r = run(scenario=scenario)
    assert r.proc.wait(20) == rc
    assert text in r.stderr()
    assert r.wait_event("exit")["code"] == rc


def test_real_port_in_use(run):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    try:
        r = run()
        # point the double at the busy port by restarting with it
        r.kill()
        r2 = run(args=["--port", str(blocker.getsockname()[1])])
        assert r2.proc.wait(20) == 1
        assert "address already in use" in r2.stderr()
        assert "Load weight end" in r2.stderr()  # only after the model has loaded
        assert "fired up" not in r2.stderr()  # what holds the port is not a server: the warm-up reaches nothing
    finally:
        blocker.close()


def test_port_held_by_another_server_as_real_sglang(run, tmp_path):
    # As real 0.5.15.post1 on the H200 (tests/fixtures/sglang_logs/h200/e2e_port_taken.log): the bind error, then
    # the fired-up line (its warm-up reached the other server), then the process stays alive.
    first = run()
    first.wait_event("ready")
    linger = tmp_path / "linger.json"
    linger.write_text(json.dumps({"durations": {"linger": 600}}))
    second = run(args=["--port", str(first.port)], env={"SGLANG_DOUBLE_SCENARIO_FILE": str(linger)})
    second.wait_event("linger")
    err = second.stderr()
    lines = [line for line in err.splitlines() if "Errno 98" in line or "fired up" in line
             or "Application shutdown complete" in line]
    assert ["Errno 98" in lines[0], "fired up" in lines[1], "shutdown complete" in lines[2]] == [True] * 3, lines
    assert second.proc.poll() is None  # lingering: the waiter must not wait for the exit


# ---------------------------------------------------------------- hang, busy, child death

def wait_until(predicate, timeout=15):
    """Poll ``predicate`` until it holds; a timeout is a failure, never a verdict (no wall-clock assertion)."""
    deadline = time.time() + timeout
    while not predicate():
        if time.time() > deadline:
            return False
        time.sleep(0.02)
    return True


def cpu_ticks(pid):
    """utime + stime of a process, clock ticks (1/100 s), all its threads."""
    with open("/proc/%d/stat" % pid) as f:
        return sum(int(x) for x in f.read().split(")")[-1].split()[11:13])


def test_hang_is_alive_and_silent(run):
    r = run(scenario="hang:load_weights")
    hang = r.wait_event("hang_start", stage="load_weights")
    # stderr is one open file shared by the tree: nothing written since the hang began is nothing logged (the event
    # carries where the file stood); the hung server is alive and does not listen.
    assert hang["stderr_at"] is not None and os.path.getsize(r.err_path) == hang["stderr_at"]
    assert r.proc.poll() is None and alive(hang["pid"]) and not r.port_open()


def test_busy_burns_cpu_silently_then_ready(run):
    r = run(scenario="busy:1.0")
    busy = r.wait_event("busy_start")
    end = r.wait_event("busy_end", timeout=20)
    ready = r.wait_event("ready", timeout=20)
    # silent: the shared stderr did not move between the two events
    assert busy["stderr_at"] is not None and end["stderr_at"] == busy["stderr_at"]
    # burning CPU, not sleeping: the phase used its CPU seconds (unless starved past its 4x wall bound), and the
    # kernel's own count for the process agrees
    assert end["cpu"] >= busy["seconds"] or end["bounded"]
    assert cpu_ticks(busy["pid"]) >= int(end["cpu"] * 100) - 2
    assert ready["t"] >= end["t"] >= busy["t"]


def test_child_dies_parent_lingers(run):
    r = run(scenario="child_dies")
    died = r.wait_event("child_died")
    assert wait_until(lambda: not alive(died["pid"])), "the child did not die"
    assert r.proc.poll() is None and not r.port_open()
    assert "Fatal Python error: Segmentation fault" in r.stderr()


def test_generate_fails_while_health_ok(run):
    r = run(scenario="generate_fails")
    r.wait_event("ready")
    assert r.get("/health")[0] == 200
    code, body = r.get("/generate", data={"text": "x", "sampling_params": {"max_new_tokens": 2}})
    assert code == 500 and b"error" in body
    assert r.get("/v1/chat/completions", data={"messages": [{"role": "user", "content": "x"}]})[0] == 400


def test_generate_fails_after_it_was_ready(run):
    r = run(scenario="generate_fails_after:1.0")
    r.wait_event("ready")
    ready, bad = r.wait_event("ready"), r.wait_event("generate_fails")
    assert bad["t"] > ready["t"]
    assert r.get("/generate", data={"text": "x", "sampling_params": {"max_new_tokens": 2}})[0] == 500
    assert r.get("/health")[0] == 200


# ---------------------------------------------------------------- endpoints

def test_worker_node_stub_always_200(run):
    r = run(args=["--node-rank", "1", "--nnodes", "2", "--tp", "2", "--dist-init-addr", "127.0.0.1:5000"],
            env={"SGLANG_DOUBLE_SCENARIO": "hang:load_weights"})
    deadline = time.time() + 10
    while not r.port_open() and time.time() < deadline:
        time.sleep(0.05)
    assert r.get("/health")[0] == 200 and r.get("/ping")[0] == 200  # though still loading
    assert r.get("/generate", data={})[0] == 404


def test_api_key_and_metrics(run):
    r = run(args=["--api-key", "s3cret", "--enable-metrics", "--speculative-algorithm", "EAGLE3"])
    r.wait_event("ready")
    assert r.get("/health")[0] == 200  # probes are exempt
    assert r.get("/v1/models")[0] == 401
    code, body = r.get("/v1/models", headers={"Authorization": "Bearer s3cret"})
    assert code == 200 and json.loads(body)["data"][0]["id"] == "/models/kimi"
    code, body = r.get("/server_info", headers={"Authorization": "Bearer s3cret"})
    # Like SGLang's scheduler: the accept length appears once a decode-log interval (40 steps) has passed.
    assert "avg_spec_accept_length" not in json.loads(body)["internal_states"][0]
    code, body = r.get("/generate", headers={"Authorization": "Bearer s3cret"},
                       data={"text": "hi", "sampling_params": {"max_new_tokens": 140}}, timeout=30)
    assert code == 200 and json.loads(body)["meta_info"]["completion_tokens"] == 140
    code, body = r.get("/server_info", headers={"Authorization": "Bearer s3cret"})
    assert json.loads(body)["internal_states"][0]["avg_spec_accept_length"] == 3.2
    code, body = r.get("/metrics")
    assert code == 200
    for name in ("sglang:num_running_reqs", "sglang:gen_throughput", "sglang:spec_accept_length"):
        assert name in body.decode()


def test_config_file_carries_the_api_key_out_of_argv(run, tmp_path):
    # SGLang merges --config YAML in front of the command line; a key there stays out of ps.
    cfg = tmp_path / "server.yaml"
    cfg.write_text("# written by roles/server\napi-key: 'k3y-from-file'\nenable-metrics: true\n")
    r = run(args=["--config", str(cfg)])
    r.wait_event("ready")
    with open("/proc/%d/cmdline" % r.proc.pid, "rb") as f:
        assert b"k3y-from-file" not in f.read()
    assert r.get("/v1/models")[0] == 401
    assert r.get("/v1/models", headers={"Authorization": "Bearer k3y-from-file"})[0] == 200
    assert r.get("/metrics")[0] == 200  # the boolean became the bare flag


def test_config_file_must_be_yaml(run, tmp_path):
    cfg = tmp_path / "server.json"
    cfg.write_text("{}")
    r = run(args=["--config", str(cfg)])
    assert r.proc.wait(20) != 0
    assert "Config file must be YAML format" in r.stderr()


def test_no_metrics_without_flag(run):
    r = run(version="0.5.10.post1")
    r.wait_event("ready")
    assert r.get("/metrics")[0] == 404
    assert r.get("/get_model_info")[0] == 200


def test_token_rate_follows_model(run):
    # The rate itself (min(per_request_tps, saturation_tps / in flight)) is the engine's pure rule, tested in
    # test_double_engine.py; its wall-clock effect is measured by benchmarks/double/bench_token_rate.py. Here: the
    # model given in the environment is the one the running double serves with.
    perf = {"baseline": {"per_request_tps": 100, "saturation_tps": 150}}
    r = run(env={"SGLANG_DOUBLE_PERF": json.dumps(perf)})
    r.wait_event("ready")
    code, body = r.get("/generate", data={"text": "x", "sampling_params": {"max_new_tokens": 50}})
    assert code == 200 and json.loads(body)["meta_info"]["completion_tokens"] == 50


def test_streaming_chat(run):
    r = run()
    r.wait_event("ready")
    req = urllib.request.Request("http://127.0.0.1:%d/v1/chat/completions" % r.port,
                                 data=json.dumps({"messages": [{"role": "user", "content": "hi"}],
                                                  "max_tokens": 5, "stream": True}).encode())
    body = urllib.request.urlopen(req, timeout=10).read().decode()
    chunks = [line for line in body.split("\n") if line.startswith("data: ")]
    assert len(chunks) == 7 and chunks[-1] == "data: [DONE]"


@pytest.mark.parametrize("topk,disabled", [("4", True), ("1", False)])
def test_adaptive_with_topk_above_one_falls_back_to_static_as_sglang(run, topk, disabled):
    # arg_groups/speculative_hook.py _maybe_disable_adaptive: a warning, then /server_info says static
    r = run(args=["--speculative-algorithm", "EAGLE3", "--speculative-adaptive", "--speculative-eagle-topk", topk,
                  "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4" if topk == "1" else "8"])
    r.wait_event("ready")
    line = "speculative_adaptive disabled: speculative_eagle_topk=4 (only topk=1 is supported). " \
           "Falling back to static speculative params."
    assert (line in r.stdout() + r.stderr()) is disabled
    assert json.loads(r.get("/server_info")[1])["speculative_adaptive"] is (not disabled)
