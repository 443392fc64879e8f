# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every real SGLang log, replayed by a real process that then exits, gets the same verdict
however it reaches the waiter:

  slow  - written in pieces while the waiter polls (pid watched);
  gone  - written at once and the process already ended before the wait begins, started
          by roles/server's real supervisor (pid_file watched, exit status from its
          <pid_file>.status);
  busy  - written in pieces with every core kept busy by spinning processes.

The expected verdict is the hand label in expected.json; no assertion is timed.
"""
import testpaths
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter

REPO = testpaths.REPO
FIX = os.path.join(REPO, "tests", "fixtures", "sglang_logs")
SUPERVISE = os.path.join(REPO, "plugins", "module_utils", "server", "supervise.py")

# The hand-made fixtures (wording from the SGLang sources): category, key.
HANDMADE = {
    "oom_cuda_graph_tp_sigquit_first.log": ("oom_cuda_graph", "Capture cuda graph failed: CUDA out of memory"),
    "oom_kv_docker.log": ("oom_kv", "Not enough memory. Please try to increase --mem-fraction-static"),
    "nccl_tp4.log": ("nccl", "NCCL error in:"),
    "import_sgl_kernel.log": ("import_error", "Could not load any common_ops library"),
    "bad_args_0523.log": ("bad_args", "ambiguous option: --cuda-graph-max-bs"),
    "port_in_use.log": ("port_in_use", "[Errno 98]"),
    "arch_sm120.log": ("arch_unsupported", "ptxas fatal"),
    "driver_old.log": ("driver_mismatch", "driver on your system is too old"),
    "model_not_found.log": ("model_not_found", "HFValidationError"),
    "warmup_failure.log": ("warmup_failure", "warmup error"),
    "host_oom_killer.log": ("host_oom", "exit code: -9"),
    "cut_traceback_scheduler.log": ("scheduler_exception", "Scheduler hit an exception"),
}


def _corpus():
    cases = []
    for name, (cat, key) in sorted(HANDMADE.items()):
        cases.append((name, {"category": cat, "key": key}))
    for sub in ("public", "h200", "batch7"):
        path = os.path.join(FIX, sub, "expected.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for name, exp in sorted(json.load(f).items()):
                if exp.get("replay", True):
                    cases.append((os.path.join(sub, name), exp))
    return cases


CORPUS = _corpus()
IDS = [c[0] for c in CORPUS]

WRITER = r"""
import sys, time
src, dst, pieces, pause, rc = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
data = open(src, 'rb').read()
step = max(1, len(data) // pieces + 1)
with open(dst, 'ab', buffering=0) as out:
    for i in range(0, len(data), step):
        out.write(data[i:i + step])
        time.sleep(pause)
sys.exit(rc)
"""


def _params(log, **kw):
    p = {"log_path": log, "url": "http://127.0.0.1:9", "timeout": 120, "stall_timeout": 60,
         "interval": 0.2, "tick": 0.02, "verify_generation": False}
    p.update(kw)
    return p


def _check(name, exp, r):
    assert r["failed"] and r["reason"] == "crashed", (name, r["msg"])
    assert r["category"] == exp["category"], (name, r["msg"])
    if exp["category"] != "unknown" and not exp.get("known_miss", "").startswith("key"):
        # the label's alternatives (declared with it, before the first replay) are fair key lines too
        keys = [exp["key"]] + [a["key"] for a in exp.get("alternatives") or () if a["category"] == r["category"]]
        assert r["key_line"] and any(k in r["key_line"] for k in keys), (name, r["key_line"])


def replay_slow(tmp_path, name, rc=1):
    log = str(tmp_path / "server.log")
    open(log, "w").close()
    p = subprocess.Popen([sys.executable, "-c", WRITER, os.path.join(FIX, name), log, "6", "0.01", str(rc)])
    try:
        return Waiter(_params(log, pid=p.pid)).run()
    finally:
        p.kill()
        p.wait()


def replay_gone(tmp_path, name, rc=1):
    log = str(tmp_path / "server.log")
    pid_file = str(tmp_path / "server.pid")
    subprocess.run([sys.executable, SUPERVISE, "start", "--pid-file", pid_file, "--log", log, "--",
                    sys.executable, "-c", WRITER, os.path.join(FIX, name), log, "1", "0", str(rc)],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    status = pid_file + ".status"
    for _i in range(2000):  # until the supervisor recorded the end (not a timing assertion)
        try:
            with open(status) as f:
                if json.load(f).get("returncode") is not None:
                    break
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    return Waiter(_params(log, pid_file=pid_file)).run()


@pytest.fixture(scope="module")
def busy_cores():
    """Every core spinning (one more spinner than cores) for the busy replays."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _i in range((os.cpu_count() or 2) + 1)]
    yield len(spinners)
    for s in spinners:
        s.kill()
        s.wait()


@pytest.mark.parametrize("name, exp", CORPUS, ids=IDS)
def test_replay_slow(tmp_path, name, exp):
    _check(name, exp, replay_slow(tmp_path, name))


@pytest.mark.parametrize("name, exp", CORPUS, ids=IDS)
def test_replay_gone_before_the_wait(tmp_path, name, exp):
    r = replay_gone(tmp_path, name)
    _check(name, exp, r)
    assert r["process"]["exit_status"] == 1  # from the supervisor's status file
    assert "before the wait began" in r["msg"]


@pytest.mark.parametrize("name, exp", CORPUS, ids=IDS)
def test_replay_busy_cores(busy_cores, tmp_path, name, exp):
    _check(name, exp, replay_slow(tmp_path, name))


def test_argparse_exit_before_the_wait_is_bad_args(tmp_path):
    # A usage banner cut before its 'error:' line, exit status 2, gone before the first look.
    r = replay_gone(tmp_path, "public/bad_args_usage_cut_4116.log", rc=2)
    assert r["reason"] == "crashed" and r["category"] == "bad_args" and r["process"]["exit_status"] == 2


def test_pid_gone_without_log_is_not_running():
    from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import BadInput
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    with pytest.raises(BadInput, match="is not running"):
        Waiter({"pid": p.pid, "url": "http://127.0.0.1:9"})


def test_pid_file_never_written_is_bad_input(tmp_path):
    from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import BadInput
    with pytest.raises(BadInput, match="was the server started"):
        Waiter({"pid_file": str(tmp_path / "none.pid"), "log_path": str(tmp_path / "l.log")})


def test_last_line_without_newline_is_read(tmp_path):
    # The process died mid-line: the unterminated cause still decides.
    log = tmp_path / "server.log"
    log.write_bytes(b"[2026-01-01 00:00:00 TP0] Load weight begin. avail mem=10 GB\n"
                    b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    r = Waiter(_params(str(log), pid=p.pid)).run()
    assert r["category"] == "oom_weights" and "CUDA out of memory" in r["key_line"]


class _Always200(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_GET

    def log_message(self, *a):
        pass


@pytest.mark.parametrize("fixture", ["port_in_use.log", "e2e_port_taken.log"])
def test_another_server_on_the_port_is_not_ours(tmp_path, fixture):
    # The real H200 capture: a second server on a taken port; /health answered 200 (the OTHER server) from the
    # first second, the bind error came 43 s later and the process lingered 125 s more.  Not ready: crashed.
    # e2e_port_taken.log (launched by roles/server): the warm-up request after the failed bind reached the other
    # server, so "The server is fired up and ready to roll!" follows the bind error; still crashed.
    other = HTTPServer(("127.0.0.1", 0), _Always200)
    t = threading.Thread(target=other.serve_forever, daemon=True)
    t.start()
    log = str(tmp_path / "server.log")
    open(log, "w").close()
    p = subprocess.Popen([sys.executable, "-c", WRITER.replace("sys.exit(rc)", "time.sleep(60)"), os.path.join(FIX, "h200", fixture),
                          log, "20", "0.02", "0"])
    try:
        r = Waiter(_params(log, pid=p.pid, url="http://127.0.0.1:%d" % other.server_port, fatal_grace=1,
                           verify_generation=True)).run()
        assert r["failed"] and r["reason"] == "crashed", r["msg"]
        assert r["category"] == "port_in_use" and "[Errno 98]" in r["key_line"]
        assert r["process"]["alive"] is True, (r["msg"], r.get("stages"), r.get("elapsed"))  # verdict before the exit
    finally:
        p.kill()
        p.wait()
        other.shutdown()
        other.server_close()


def test_an_nccl_verdict_quotes_the_failing_peer_and_keeps_the_error(tmp_path):
    # batch-7's multi-node NCCL failure (NVIDIA/nccl#2076): the key line names the peer, the NCCL error rides beside it.
    r = replay_slow(tmp_path, "batch7/nccl_remote_error_connection_reset_nccl2076.log")
    assert r["category"] == "nccl" and "172....<33759> failed" in r["key_line"]
    assert "DistBackendError" in r["cause_line"] and "172....<33759>" in r["msg"]
