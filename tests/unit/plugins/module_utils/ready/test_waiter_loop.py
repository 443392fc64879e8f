# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The waiter's loop on a clock that moves only when it sleeps (issue 47): each verdict - ready, crash, stall,
timeout - ends the wait when its time has come and not a tick before, a budget hands back a state that resumes on
the same clock, and what the result says is what the sources saw. Real logs, real processes, a real HTTP server;
only time is injected."""
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

import testpaths
from localrun import local_run
from netutil import JSONHandler, free_port, serve

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import waiter as waiter_mod
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import BadInput, Waiter, error_result
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")
T0 = 1000.0
BOOT_ID = "/proc/sys/kernel/random/boot_id"
SERVER_ARGS = "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/m', tp_size=1, nnodes=1)\n"
LOAD = "[2026-01-01 00:00:05 TP0] Load weight begin. avail mem=78.50 GB\n"
UVICORN = "INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)\n"
FIRED_UP = "[2026-01-01 00:01:00] The server is fired up and ready to roll!\n"
# a server that appends argv[2] to its log argv[1] and exits with the given status once its stdin closes
WRITE_ON_RELEASE = "import sys\nsys.stdin.read()\nopen(sys.argv[1], 'a').write(sys.argv[2])\nsys.exit(%d)"


class Clock(object):
    """Monotonic seconds that pass only in sleep(); ``at`` runs callbacks once the clock reaches their time."""

    def __init__(self):
        self.t = T0
        self.sleeps = []
        self.at = []

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        if self.t - T0 > 600:  # no wait here needs 600 s: a loop that cannot end fails the test, it does not spin
            raise AssertionError("the wait ran past 600 s of its clock")
        self.sleeps.append(seconds)
        self.t += seconds
        for when, action in list(self.at):
            if self.t - T0 >= when:
                self.at.remove((when, action))
                action()


def closed_url():
    return "http://127.0.0.1:%d" % free_port()


def waiter(params, clock, state=None, **kw):
    """A Waiter on ``clock``; 60 s of it at most unless the test says (a broken loop ends, it does not hang)."""
    return Waiter(dict({"timeout": 60}, **params), state=state, clock=clock, sleep=clock.sleep, **kw)


def wait_on_a_server(params, at, script, *args):
    """``(result, pid)`` of the wait (``params`` and the pid) on a server ``python -c script args`` that waits on its
    stdin, closed when the clock reaches ``at`` seconds (WRITE_ON_RELEASE), and is ended however the wait ended."""
    p = subprocess.Popen([sys.executable, "-c", script] + [str(a) for a in args], stdin=subprocess.PIPE)
    clock = Clock()
    clock.at.append((at, p.stdin.close))
    try:
        return waiter(dict(params, pid=p.pid), clock).run(), p.pid
    finally:
        p.stdin.close()
        if p.poll() is None:
            p.kill()
        p.wait()


def append(path, text):
    def write():
        with open(str(path), "a") as f:
            f.write(text)
    return write


# -- timeout, tick, budget and resume ---------------------------------------------------------------------------

def test_the_deadline_ends_the_wait_at_timeout_and_not_before():
    clock = Clock()
    r = waiter({"url": closed_url(), "timeout": 3}, clock).run()
    assert r["done"] is True and r["failed"] is True and r["reason"] == "timeout"
    assert 3.0 <= r["elapsed"] <= 3.1 and clock.t - T0 >= 3.0
    assert set(clock.sleeps) == {waiter_mod.TICK} and r["polls"] == len(clock.sleeps) + 1
    assert r["msg"].startswith("not ready within timeout 3s in stage starting") and r["stage"] == "starting"
    assert r["stage_label"] == "starting" and r["stages"] == [{"stage": "starting", "began": 0.0}]
    assert r["health_status"] is None and r["health_path"] is None and r["health_calls"] == 0
    assert r["log_warnings"] == {"count": 0, "lines": []} and r["key_line"] is None and r["remedy"]
    assert "gpu" in r and "cause_line" not in r  # a failure reports the GPUs (None: no nvidia-smi answered)


def test_the_tick_option_sets_the_pause_between_looks():
    clock = Clock()
    r = waiter({"url": closed_url(), "timeout": 3, "tick": 0.5}, clock).run()
    assert r["reason"] == "timeout" and set(clock.sleeps) == {0.5} and r["polls"] == len(clock.sleeps) + 1 == 7


def test_the_elapsed_time_is_kept_to_the_hundredth():
    # 3 ticks of 0.125 s: 0.375 s, said as 0.38
    clock = Clock()
    r = waiter({"url": closed_url(), "tick": 0.125, "timeout": 0.3}, clock).run()
    assert r["reason"] == "timeout" and r["elapsed"] == 0.38 and clock.t - T0 == 0.375
    clock = Clock()
    r = waiter({"url": closed_url(), "tick": 0.125}, clock).run(budget=0.3)
    assert r["done"] is False and r["elapsed"] == 0.38 and clock.t - T0 == 0.375


def test_a_budget_hands_back_a_state_that_resumes_on_the_same_clock():
    clock = Clock()
    url = closed_url()
    r = waiter({"url": url, "timeout": 3}, clock).run(budget=1.0)
    assert r["done"] is False and "failed" not in r and "reason" not in r
    assert 1.0 <= r["elapsed"] < 1.1 and r["stage"] == r["stage_label"] == "starting"
    assert r["stages"] == [{"stage": "starting", "began": 0.0}] and r["health_status"] is None
    assert "cpu_seconds" not in r  # no process watched
    state = json.loads(json.dumps(r["state"]))
    with open(BOOT_ID) as f:
        assert state["boot_id"] == f.read().strip() and state["boot_id"]
    assert state["v"] == waiter_mod.STATE_VERSION and state["t0"] == T0 and state["reported_stage"] == "starting"
    assert state["n"] == {"polls": len(clock.sleeps) + 1} and set(state["probe"]) == {"log", "process", "activity",
                                                                                      "http"}
    # the next call carries on: the deadline counts from the first call's start, the polls add up
    first_polls = state["n"]["polls"]
    r2 = waiter({"url": url, "timeout": 3}, clock, state=state).run()
    assert r2["reason"] == "timeout" and 3.0 <= r2["elapsed"] <= 3.1
    assert r2["polls"] == len(clock.sleeps) + 2 and r2["polls"] > first_polls


def test_a_budget_with_a_watched_process_reports_its_cpu(sleeper):
    clock = Clock()
    r = waiter({"url": closed_url(), "pid": sleeper.pid}, clock).run(budget=0.5)
    assert r["done"] is False and isinstance(r["cpu_seconds"], float) and r["cpu_seconds"] >= 0


@pytest.mark.parametrize("change, words", [
    ({"v": waiter_mod.STATE_VERSION - 1}, "resume state is from another version of this module"),
    ({"boot_id": "00000000-0000-0000-0000-000000000000"}, "resume state is from before a reboot"),
])
def test_a_state_from_another_version_or_boot_is_refused(change, words):
    clock = Clock()
    params = {"url": closed_url(), "timeout": 3}
    state = waiter(params, clock).run(budget=0.2)["state"]
    assert waiter(params, clock, state=dict(state)).p["timeout"] == 3  # the state as it came: accepted
    with pytest.raises(BadInput) as e:
        waiter(params, clock, state=dict(state, **change))
    assert str(e.value) == words


def test_a_stage_change_ends_a_call_with_a_budget_but_the_http_stages_do_not(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS)
    clock = Clock()
    params = {"url": closed_url(), "log_path": str(log)}
    r0 = waiter(params, clock).run(budget=5, return_on_stage_change=True)
    assert r0["done"] is False and r0["stage"] == "init" and r0["elapsed"] == 0.0  # the first look saw init
    clock.at.append((0.5, append(log, LOAD)))
    r = waiter(params, clock, state=json.loads(json.dumps(r0["state"]))).run(budget=5, return_on_stage_change=True)
    assert r["done"] is False and r["stage"] == "load_weights" and 0.5 <= r["elapsed"] < 0.7
    assert r["state"]["reported_stage"] == "load_weights"
    # resumed: the stage it reported does not end the next call, nor do the http and warmup stages
    w2 = waiter(params, clock, state=json.loads(json.dumps(r["state"])))
    clock.at.append((1.5, append(log, "max_total_num_tokens=1000, chunked_prefill_size=8192\n")))
    clock.at.append((2.0, append(log, UVICORN)))
    r2 = w2.run(budget=3, return_on_stage_change=True)
    assert r2["done"] is False and r2["stage"] == "warmup" and 3.5 <= r2["elapsed"] < 3.7
    assert [x["stage"] for x in r2["stages"]][-2:] == ["http", "warmup"]
    # by default a stage change does not end the call
    clock2 = Clock()
    log.write_text(SERVER_ARGS)
    w3 = waiter(params, clock2)
    clock2.at.append((0.5, append(log, LOAD)))
    r3 = w3.run(budget=2)
    assert r3["done"] is False and r3["stage"] == "load_weights" and 2.0 <= r3["elapsed"] < 2.1


def test_a_first_call_without_a_stage_change_runs_its_whole_budget(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("")
    r = waiter({"url": closed_url(), "log_path": str(log)}, Clock()).run(budget=2, return_on_stage_change=True)
    assert r["done"] is False and r["stage"] == "starting" and 2.0 <= r["elapsed"] < 2.1


# -- crash, fatal line, stall -------------------------------------------------------------------------------------

def fixture_log(tmp_path, name):
    log = tmp_path / "server.log"
    shutil.copy(os.path.join(FIX, name), str(log))
    return log


@pytest.mark.parametrize("grace, ends", [({}, waiter_mod.FATAL_GRACE), ({"fatal_grace": 1}, 1.0)])
def test_a_fatal_line_while_the_process_lingers_ends_the_wait_after_the_grace(tmp_path, sleeper, grace, ends):
    log = fixture_log(tmp_path, "nccl_tp4.log")
    clock = Clock()
    r = waiter(dict({"url": closed_url(), "log_path": str(log), "pid": sleeper.pid, "timeout": 30}, **grace),
               clock).run()
    assert r["reason"] == "crashed" and r["category"] == "nccl" and r["process"]["alive"] is True
    assert ends <= r["elapsed"] <= ends + 0.3, r["elapsed"]
    assert r["key_line"] and r["key_line"] in r["msg"] and r["remedy"] and r["stage"] == "dist_init"


def test_a_rank_that_fails_while_another_goes_on_is_reported_in_its_stage(tmp_path, sleeper):
    # TP1 runs out of memory loading the weights while TP0 finished them: the verdict's stage is where it broke
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS.replace("tp_size=1", "tp_size=2") + LOAD + LOAD.replace("TP0", "TP1")
                   + "[2026-01-01 00:00:09 TP1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
                   " GPU 1 has a total capacity of 79.19 GiB of which 1.06 GiB is free.\n"
                   "[2026-01-01 00:00:10 TP0] Load weight end. type=DeepseekV3ForCausalLM, avail mem=12.00 GB\n")
    r = waiter({"url": closed_url(), "log_path": str(log), "pid": sleeper.pid}, Clock()).run()
    assert r["reason"] == "crashed" and r["category"] == "oom_weights" and r["stages"][-1]["stage"] == "kv_cache"
    assert r["stage"] == "load_weights" and " in stage load_weights after " in r["msg"]


def test_an_nccl_verdict_keeps_the_error_beside_the_peer_line(tmp_path, sleeper):
    log = fixture_log(tmp_path, "batch7/nccl_remote_error_connection_reset_nccl2076.log")
    r = waiter({"url": closed_url(), "log_path": str(log), "pid": sleeper.pid}, Clock()).run()
    assert r["category"] == "nccl" and "172....<33759> failed" in r["key_line"]
    assert r["cause_line"].startswith("torch.distributed.DistBackendError: NCCL error in:")


def test_a_crash_is_explained_from_the_whole_log_and_the_exit_status(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS + LOAD)
    with open(os.path.join(FIX, "oom_kv_docker.log")) as f:
        rest = f.read()
    # the process writes the rest of the log and exits 3 once told to (the clock's 1.0 s)
    r, pid = wait_on_a_server({"url": closed_url(), "log_path": str(log), "timeout": 600}, 1.0,
                              WRITE_ON_RELEASE % 3, log, rest)
    assert r["reason"] == "crashed" and r["category"] == "oom_kv" and "Not enough memory" in r["key_line"]
    assert r["process"]["exit_status"] == 3 and r["process"]["alive"] is False
    assert r["msg"].startswith("server process %d exited (exit status 3) in stage kv_cache " % pid), r["msg"]
    assert r["elapsed"] >= 1.0 and r["stage"] == r["stages"][-1]["stage"]


def test_a_last_line_cut_by_the_exit_counts_when_it_was_read(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS)
    # the process dies mid-line: "Load weight begin." without its newline
    r, _pid = wait_on_a_server({"url": closed_url(), "log_path": str(log), "timeout": 600}, 1.0,
                               WRITE_ON_RELEASE % 1, log, LOAD.rstrip("\n"))
    assert r["reason"] == "crashed" and r["stage"] == "load_weights"
    assert [x["stage"] for x in r["stages"]] == ["starting", "init", "load_weights"]
    assert 1.0 <= r["stages"][-1]["began"] <= r["elapsed"]


def test_a_hang_is_fitted_to_the_stage_the_log_reached(tmp_path):
    # the scheduler's watchdog line lands before the main process's stage lines (two writers, one log): the remedy
    # names the stage the log reached, for a host with no peer to wait for
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 00:00:40 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n"
                   + SERVER_ARGS + "[2026-01-01 00:00:30 TP0] Init torch distributed begin.\n")
    r, _pid = wait_on_a_server({"url": closed_url(), "log_path": str(log), "host": {"tp_size": 1, "nnodes": 1}}, 0.5,
                               "import sys\nsys.stdin.read()\nsys.exit(1)")
    assert r["reason"] == "crashed" and r["category"] == "watchdog_hang"
    assert r["remedy"].startswith("it hung in init distributed with no peer to wait for"), r["remedy"]


def test_a_silent_idle_process_is_a_stall_after_stall_timeout_and_not_before(tmp_path, sleeper):
    log = fixture_log(tmp_path, "bars_0510_live.log")
    clock = Clock()
    r = waiter({"url": closed_url(), "log_path": str(log), "pid": sleeper.pid, "stall_timeout": 2,
                "interval": 0.2, "timeout": 60}, clock).run()
    assert r["reason"] == "stalled" and r["stage"] == "load_weights" and r["elapsed"] >= 2.0
    assert "62/64" in r["log_tail"][-1] and "stopped" not in r["remedy"]


@pytest.mark.parametrize("budgets, reason, ends", [({"load_weights": 2}, "stalled", 2.0),
                                                   ({"kv_cache": 2}, "timeout", 5.0)])
def test_a_stage_budget_ends_the_wait_in_its_stage_only(tmp_path, sleeper, budgets, reason, ends):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS + LOAD)
    r = waiter({"url": closed_url(), "log_path": str(log), "pid": sleeper.pid, "stage_timeouts": budgets,
                "timeout": 5}, Clock()).run()
    assert r["reason"] == reason and r["stage"] == "load_weights" and ends <= r["elapsed"] <= ends + 0.2, r["msg"]


DIST_INIT = "[2026-01-01 00:00:30 TP0] Init torch distributed begin.\n"
PCIE = {"tp_size": 2, "nnodes": 1, "gpu_count": 8, "compute_caps": ["12.0"], "pcie_only": True, "all_nvlink": False}


@pytest.mark.parametrize("tp, host, category, words", [
    (1, PCIE, "unknown", "no peer"),  # the launch's own tp_size=1 wins over the host option
    (2, PCIE, "nccl", "NCCL_P2P_DISABLE=1"),
])
def test_a_stall_at_dist_init_gets_the_remedy_of_the_host(tmp_path, sleeper, tp, host, category, words):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS.replace("tp_size=1", "tp_size=%d" % tp) + DIST_INIT)
    r = waiter({"url": closed_url(), "log_path": str(log), "pid": sleeper.pid, "stall_timeout": 2, "host": host},
               Clock()).run()
    assert r["reason"] == "stalled" and r["stage"] == "dist_init" and r["category"] == category
    assert words in r["remedy"], r["remedy"]


def test_a_stall_names_the_stopped_process(tmp_path, sleeper):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS + DIST_INIT)
    os.kill(sleeper.pid, signal.SIGSTOP)
    try:
        r = waiter({"url": closed_url(), "log_path": str(log), "pid": sleeper.pid, "stall_timeout": 2,
                    "interval": 0.2, "timeout": 60, "host": {"tp_size": 1, "nnodes": 1}}, Clock()).run()
    finally:
        os.kill(sleeper.pid, signal.SIGCONT)
    assert r["reason"] == "stalled" and "%d" % sleeper.pid in r["remedy"] and "stopped" in r["remedy"], r["msg"]


# -- ready ------------------------------------------------------------------------------------------------------

class Sglang(JSONHandler):
    generate = 200
    chat = 200
    posts = []
    keys = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Sglang.keys.append(self.headers.get("Authorization"))
        answers = {"/health": {}, "/v1/models": {"data": [{"id": "kimi-k2.5"}]},
                   "/server_info": {"version": "0.5.19", "model_path": "/m"}}
        self.reply(200 if self.path in answers else 404, answers.get(self.path, {}))

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Sglang.posts.append((self.path, body))
        if self.path == "/generate":
            self.reply(Sglang.generate, {"text": "x"} if Sglang.generate == 200 else {"error": "boom"})
        elif Sglang.chat == 200:
            self.reply(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "p"}}]})
        else:
            self.reply(Sglang.chat, {"object": "error", "message": "template does not render", "code": Sglang.chat})


@pytest.fixture
def sglang(monkeypatch):
    monkeypatch.setattr(Sglang, "generate", 200)
    monkeypatch.setattr(Sglang, "chat", 200)
    monkeypatch.setattr(Sglang, "posts", [])
    monkeypatch.setattr(Sglang, "keys", [])
    srv = serve(Sglang)
    yield "http://127.0.0.1:%d" % srv.server_port
    srv.shutdown()
    srv.server_close()


FACTS = {"models": ["kimi-k2.5"], "served_model": "kimi-k2.5", "version": "0.5.19", "model_path": "/m"}


@pytest.mark.parametrize("extra, ready_by, posts", [
    ({"verify_generation": False}, "health", []),
    ({}, "health+generation", ["/generate"]),
    ({"chat_probe": True}, "health+generation+chat", ["/generate", "/v1/chat/completions"]),
    ({"chat_probe": True, "verify_generation": False}, "health+chat", ["/v1/chat/completions"]),
])
def test_ready_by_the_health_endpoint_says_what_proved_it(sglang, extra, ready_by, posts):
    r = waiter(dict({"url": sglang, "sglang_version": "0.5.19"}, **extra), Clock()).run()
    assert r["done"] is True and r["failed"] is False and "reason" not in r
    assert r["ready_by"] == ready_by and r["health_status"] == 200 and r["health_path"] == "/health"
    assert r["server"] == FACTS and r["stage"] == "ready" and r["stages"][-1]["stage"] == "ready"
    assert [p for p, _body in Sglang.posts] == posts
    assert all(body["model"] == "kimi-k2.5" for p, body in Sglang.posts if p == "/v1/chat/completions")
    assert r["msg"] == "SGLang server ready after %.1fs" % r["elapsed"] and r["health_calls"] >= 1
    assert "gpu" not in r and r["log_warnings"] == {"count": 0, "lines": []}


def test_ready_by_the_log_proves_it_with_one_generation_and_no_health_call(sglang, tmp_path):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS + UVICORN + FIRED_UP)
    r = waiter({"url": sglang, "sglang_version": "0.5.19", "log_path": str(log)}, Clock()).run()
    assert r["failed"] is False and r["ready_by"] == "log+generation" and r["server"] == FACTS
    assert r["stage"] == r["stage_label"] == "ready"
    assert r["health_status"] is None and [p for p, _body in Sglang.posts] == ["/generate"]


def test_ready_says_which_warning_lines_it_survived(sglang, tmp_path):
    log = tmp_path / "server.log"
    warning = "E0325 09:33:41.563210  8274 rdma_context.cpp:319] Context is not active: mlx5_9"
    log.write_text(SERVER_ARGS + warning + "\n" + UVICORN + FIRED_UP)
    r = waiter({"url": sglang, "sglang_version": "0.5.19", "log_path": str(log)}, Clock()).run()
    assert r["failed"] is False and r["log_warnings"] == {"count": 1, "lines": [warning]}
    assert r["msg"] == ("SGLang server ready after %.1fs, with 1 warning line(s) it survived (first: %s)"
                        % (r["elapsed"], warning))


def test_a_log_that_says_ready_while_the_endpoint_does_not_is_unhealthy_naming_the_url(sglang, tmp_path,
                                                                                       monkeypatch):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS + UVICORN + FIRED_UP)
    monkeypatch.setattr(Sglang, "do_GET", lambda self: self.reply(503, {}))
    r = waiter({"url": sglang, "sglang_version": "0.5.19", "log_path": str(log), "verify_generation": False},
               Clock()).run()
    assert r["failed"] is True and r["reason"] == "unhealthy" and r["health_status"] == 503
    assert r["msg"].startswith("log says ready but %s/health answers 503" % sglang) and r["elapsed"] >= 15


def test_a_failed_generation_is_unhealthy(sglang, monkeypatch):
    monkeypatch.setattr(Sglang, "generate", 500)
    r = waiter({"url": sglang, "sglang_version": "0.5.19"}, Clock()).run()
    assert r["done"] is True and r["failed"] is True and r["reason"] == "unhealthy" and "server" not in r
    assert "ready_by" not in r and r["category"] == "scheduler_exception" and "500" in r["key_line"]
    assert r["msg"].startswith("/health answers 200 but a 1-token generation fails (")


def test_a_chat_that_fails_is_unhealthy_with_the_servers_words(sglang, monkeypatch):
    monkeypatch.setattr(Sglang, "chat", 400)
    r = waiter({"url": sglang, "sglang_version": "0.5.19", "chat_probe": True}, Clock()).run()
    assert r["failed"] is True and r["reason"] == "unhealthy" and r["category"] == "chat_template"
    assert r["msg"].startswith("ready, but a 1-token /v1/chat/completions answers 400: template does not render")
    assert "ready_by" not in r
    # without the chat probe the same server is ready
    assert waiter({"url": sglang, "sglang_version": "0.5.19"}, Clock()).run()["failed"] is False


def test_a_worker_is_ready_from_its_log_without_asking_its_stub(sglang, tmp_path):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS + UVICORN + FIRED_UP)
    r = waiter({"url": sglang, "node_rank": 1, "log_path": str(log)}, Clock()).run()
    assert r["failed"] is False and r["stage"] == "ready"
    assert r["msg"] == "SGLang worker (node_rank 1) initialised after %.1fs" % r["elapsed"]
    assert "ready_by" not in r and "server" not in r and Sglang.posts == []


def test_the_waiter_talks_through_the_client_it_is_given(sglang):
    r = waiter({"url": sglang, "sglang_version": "0.5.19"}, Clock(), client=Client(sglang, "given-key")).run()
    assert r["failed"] is False and Sglang.keys and set(Sglang.keys) == {"Bearer given-key"}


# -- a systemd unit, through the runner the waiter is given --------------------------------------------------------

def fake_systemctl(tmp_path, monkeypatch, props):
    """A systemctl on PATH answering ``show`` from a file; returns a callable that changes the answer."""
    state = tmp_path / "unit.props"
    tool = tmp_path / "bin" / "systemctl"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\ncat %s\n" % state)
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", "%s%s%s" % (tool.parent, os.pathsep, os.environ["PATH"]))

    def answer(**kv):
        state.write_text("".join("%s=%s\n" % item for item in kv.items()))
    answer(**props)
    return answer


def test_a_unit_that_fails_ends_the_wait_naming_it(tmp_path, monkeypatch, sleeper):
    answer = fake_systemctl(tmp_path, monkeypatch, {"LoadState": "loaded", "ActiveState": "active",
                                                    "SubState": "running", "MainPID": sleeper.pid})
    ran = []

    def run(argv, **kw):
        ran.append(argv[0])
        return local_run(argv, **kw)
    clock = Clock()
    clock.at.append((1.0, lambda: answer(LoadState="loaded", ActiveState="failed", SubState="failed",
                                         Result="exit-code", ExecMainCode="1", ExecMainStatus="3")))
    r = waiter({"url": closed_url(), "unit": "sglang-test", "interval": 0.2}, clock, run=run).run()
    assert r["reason"] == "crashed" and r["msg"].startswith("unit sglang-test is failed/failed in stage starting")
    assert 1.0 <= r["elapsed"] <= 1.5 and "systemctl" in ran


def test_the_costly_looks_run_every_interval_not_every_tick(tmp_path, monkeypatch, sleeper):
    fake_systemctl(tmp_path, monkeypatch, {"LoadState": "loaded", "ActiveState": "active", "SubState": "running",
                                           "MainPID": sleeper.pid})
    ran = []

    def run(argv, **kw):
        ran.append(argv[0])
        return local_run(argv, **kw)
    clock = Clock()
    r = waiter({"url": closed_url(), "unit": "sglang-test", "interval": 0.25, "tick": 0.125}, clock,
               run=run).run(budget=1.0)
    # the first look, then one at 0, 0.25, 0.5, 0.75 and 1.0 (9 polls)
    assert r["done"] is False and clock.sleeps == [0.125] * 8 and ran.count("systemctl") == 1 + 5


# -- the waiter's own failure -------------------------------------------------------------------------------------

def raised(chain):
    """The exception of a call chain whose functions live in the files named: [(file, function), ...], the last
    one raising; the k-th (from 0) calls the next, or raises, on line k + 3 of its file. It is caught in server_ready's
    main(), as the module catches the waiter's own failures."""
    scope = {}
    for k, (path, name) in enumerate(chain):
        body = "return %s()" % chain[k + 1][1] if k + 1 < len(chain) else "raise KeyError('stage')"
        code = "\n" * (k + 1) + "def %s():\n    %s\n" % (name, body)
        exec(compile(code, path, "exec"), scope)  # noqa: S102 (test-made code)
    catch = "def main():\n    try:\n        %s()\n    except KeyError as e:\n        return e\n" % chain[0][1]
    exec(compile(catch, "/c/plugins/modules/server_ready.py", "exec"), scope)  # noqa: S102
    return scope["main"]()


@pytest.mark.parametrize("chain, where", [
    # ours calls another's code that raises: ours is named, and who raised
    ([("/c/module_utils/ready/probe.py", "poll"), ("/c/module_utils/ready/read_log.py", "see"),
      ("/usr/lib/python3/json/decoder.py", "raw_decode")],
     "in see (read_log.py:4) raised by raw_decode (decoder.py:5)"),
    # ours raised: named once
    ([("/c/module_utils/ready/probe.py", "poll"), ("/c/module_utils/ready/read_log.py", "see")],
     "in see (read_log.py:4)"),
    # none of ours: the frame that raised
    ([("/usr/lib/a.py", "outer"), ("/usr/lib/b.py", "inner")], "in inner (b.py:4)"),
])
def test_the_waiters_own_failure_names_where_it_broke(chain, where):
    r = error_result(raised(chain), {"api_key": "s3cret"})
    assert r["msg"] == "server_ready failed %s: KeyError: 'stage'" % where
    assert r["done"] is True and r["failed"] is True and r["reason"] == "error" and r["category"] == "unknown"
    assert r["key_line"] is None and r["elapsed"] == 0.0 and r["remedy"] == waiter_mod.messages.R_OWN_ERROR


def test_an_error_result_keeps_the_time_to_the_hundredth_and_blanks_the_key():
    r = error_result(RuntimeError("key s3cret refused"), {"api_key": "s3cret"}, elapsed=1.234)
    assert r["elapsed"] == 1.23 and r["msg"] == "server_ready failed while waiting: RuntimeError: key <api_key> refused"


def test_a_failure_in_a_poll_reports_the_stage_reached(tmp_path, monkeypatch):
    log = tmp_path / "server.log"
    log.write_text(SERVER_ARGS + LOAD)
    clock = Clock()
    w = waiter({"url": closed_url(), "log_path": str(log), "api_key": "s3cret"}, clock)

    def broken(s, costly):
        raise RuntimeError("s3cret in the way")
    clock.at.append((0.3, lambda: monkeypatch.setattr(w.probe, "poll", broken)))
    r = w.run()
    assert r["reason"] == "error" and r["done"] is True and r["stage"] == "load_weights"
    assert [s["stage"] for s in r["stages"]] == ["starting", "init", "load_weights"] and 0.3 <= r["elapsed"] < 0.5
    assert "RuntimeError: <api_key> in the way" in r["msg"] and "s3cret" not in r["msg"]
