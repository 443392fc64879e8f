# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiter logic without the double: interface validation, real short-lived
processes replaying real-wording logs, a real stdlib HTTP server."""
import testpaths
import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import BadInput, Waiter

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")


@pytest.mark.parametrize("params, words", [
    ({"url": "localhost:30000"}, "not an http"),
    ({"url": "http://127.0.0.1:99999"}, "invalid port"),
    ({"timeout": 0}, "timeout must be a positive"),
    ({"stall_timeout": -1}, "stall_timeout must be a positive"),
    ({"stage_timeouts": {"dist_init": 0}}, "stage_timeouts[dist_init]"),
    ({"stage_timeouts": {"nccl": 5}}, "unknown stage"),
    ({"pid": 2 ** 22 + 12345}, "is not running"),
    ({"node_rank": 1}, "always-200 stub"),
    ({"extra_patterns": [{"regex": "("}]}, "bad regex"),
    ({"extra_patterns": [{"regex": "x", "category": "nope"}]}, "category must be one of"),
])
def test_bad_input_fails_at_once(params, words):
    with pytest.raises(BadInput) as e:
        Waiter(params)
    assert words in str(e.value)


def test_unreadable_log(tmp_path):
    with pytest.raises(BadInput, match="not a regular file"):
        Waiter({"log_path": str(tmp_path)})


def test_pid_file_garbage(tmp_path):
    pf = tmp_path / "pid"
    pf.write_text("nope")
    with pytest.raises(BadInput, match="pid_file"):
        Waiter({"pid_file": str(pf)})


def replay(tmp_path, fixture, rc, linger=0.0):
    """A real process that writes a real-wording log then exits with rc."""
    log = tmp_path / "server.log"
    log.write_text("")
    src = os.path.join(FIX, fixture)
    code = ("import shutil,sys,time\nwith open(%r,'ab') as o, open(%r,'rb') as i: shutil.copyfileobj(i,o)\n"
            "time.sleep(%r)\nsys.exit(%d)" % (str(log), src, linger, rc))
    p = subprocess.Popen([sys.executable, "-c", code])
    return p, str(log)


def test_crash_explained_from_log_and_exit_status(tmp_path):
    p, log = replay(tmp_path, "oom_kv_docker.log", 1, linger=0.3)
    r = Waiter({"log_path": log, "pid": p.pid, "url": "http://127.0.0.1:9", "timeout": 30}).run()
    assert r["failed"] and r["reason"] == "crashed"
    assert r["category"] == "oom_kv" and "Not enough memory" in r["key_line"]
    assert r["process"]["exit_status"] == 1
    assert r["msg"].count("\n") == 0 and "mem-fraction-static" in r["msg"]


def test_argparse_exit_2_without_log(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", "import time,sys; time.sleep(0.3); sys.exit(2)"])
    r = Waiter({"pid": p.pid, "url": "http://127.0.0.1:9", "timeout": 30}).run()
    assert r["reason"] == "crashed" and r["category"] == "bad_args"


def test_fatal_line_while_process_lingers(tmp_path):
    p, log = replay(tmp_path, "nccl_tp4.log", 0, linger=60)
    try:
        # The process lingers 60 s, past the 30 s timeout: waiting for its exit would give "timeout".
        r = Waiter({"log_path": log, "pid": p.pid, "url": "http://127.0.0.1:9", "fatal_grace": 1,
                    "timeout": 30}).run()
        assert r["reason"] == "crashed" and r["category"] == "nccl" and r["process"]["alive"] is True
    finally:
        p.kill()
        p.wait()


def test_stall_on_silent_sleeping_process(tmp_path):
    log = tmp_path / "s.log"
    shutil.copy(os.path.join(FIX, "bars_0510_live.log"), str(log))
    p = subprocess.Popen(["sleep", "60"])
    try:
        r = Waiter({"log_path": str(log), "pid": p.pid, "url": "http://127.0.0.1:9",
                    "stall_timeout": 1.5, "interval": 0.2, "timeout": 30}).run()
        assert r["reason"] == "stalled" and r["stage"] == "load_weights"
        assert r["elapsed"] >= 1.5  # never before stall_timeout of silence
        assert "62/64" in r["log_tail"][-1]
    finally:
        p.kill()
        p.wait()


class _Handler(BaseHTTPRequestHandler):
    generate_status = 200

    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self._send(200, {})
        elif self.path == "/v1/models":
            self._send(200, {"data": [{"id": "kimi-k2.5"}]})
        elif self.path == "/server_info":
            self._send(200, {"version": "0.5.23", "model_path": "/m"})
        else:
            self._send(404, {})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._send(self.generate_status, {"text": "x"} if self.generate_status == 200 else {"error": "boom"})

    def log_message(self, *a):
        pass


@pytest.fixture
def http_server():
    srv = HTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_ready_over_http_without_log(http_server):
    r = Waiter({"url": "http://127.0.0.1:%d" % http_server.server_port, "timeout": 30}).run()
    assert not r["failed"] and r["health_status"] == 200
    assert r["server"] == {"models": ["kimi-k2.5"], "served_model": "kimi-k2.5", "version": "0.5.23",
                           "model_path": "/m"}


def test_health_200_generation_fails_is_unhealthy(http_server, monkeypatch):
    monkeypatch.setattr(_Handler, "generate_status", 500)
    r = Waiter({"url": "http://127.0.0.1:%d" % http_server.server_port, "timeout": 30}, sleep=lambda s: None).run()
    assert r["failed"] and r["reason"] == "unhealthy"


def test_check_resume_state_survives_json(tmp_path):
    log = tmp_path / "s.log"
    shutil.copy(os.path.join(FIX, "bars_059.log"), str(log))
    p = subprocess.Popen(["sleep", "30"])
    try:
        w = Waiter({"log_path": str(log), "pid": p.pid, "url": "http://127.0.0.1:9"})
        r = w.run(budget=0.2)
        assert not r["done"] and r["stage"] == "load_weights"
        w2 = Waiter({"log_path": str(log), "pid": p.pid, "url": "http://127.0.0.1:9", "timeout": 0.5},
                    state=json.loads(json.dumps(r["state"])))
        r2 = w2.run()
        assert r2["reason"] == "timeout" and r2["elapsed"] >= 0.5
        assert r2["stages"][:3] == r["stages"][:3]
    finally:
        p.kill()
        p.wait()
