# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 46: never a false failure. Lines a server survives (a transport's logged error retried, a per-request
KV-transfer error, a retried tokenizer load) - real ones, batch-7's ``noisy_ready`` logs - are written into a real
start-up (the H200 ``base.log`` capture, up to its "fired up" line) by a process that stays alive and answers HTTP
itself: the verdict is ready, with the lines counted as warnings. The same start-up with a line that ends a server
(a raised exception) while the process lingers is still a failure. No assertion is timed."""
import testpaths
import json
import os
import socket
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")
BASE = os.path.join(FIX, "h200", "base.log")

with open(os.path.join(FIX, "batch7", "expected.json"), encoding="utf-8") as _f:
    NOISY = sorted(n for n, e in json.load(_f).items() if e.get("noisy_ready"))

# Writes the log in pieces and serves 200 from this very process (the waiter trusts only its own tree's port).
SERVER = r"""
import sys, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer
src, dst, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"text": "x", "meta_info": {}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_POST = do_GET
    def log_message(self, *a):
        pass
threading.Thread(target=HTTPServer(("127.0.0.1", port), H).serve_forever, daemon=True).start()
data = open(src, 'rb').read()
step = max(1, len(data) // 8 + 1)
with open(dst, 'ab', buffering=0) as out:
    for i in range(0, len(data), step):
        out.write(data[i:i + step])
        time.sleep(0.01)
time.sleep(120)
"""


def start_up_with(noise_lines, tmp_path):
    """The H200 start-up to its 'fired up' line, with ``noise_lines`` right after its KV-cache line."""
    with open(BASE, encoding="utf-8") as f:
        base = f.read().splitlines(True)
    kv = next(i for i, line in enumerate(base) if "max_total_num_tokens=" in line)
    fired = next(i for i, line in enumerate(base) if "fired up" in line)
    src = tmp_path / "start-up.log"
    src.write_text("".join(base[:kv + 1] + noise_lines + base[kv + 1:fired + 1]), encoding="utf-8")
    return str(src)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def serve_and_wait(src, tmp_path, **kw):
    log, port = str(tmp_path / "server.log"), free_port()
    open(log, "w").close()
    p = subprocess.Popen([sys.executable, "-c", SERVER, src, log, str(port)])
    try:
        params = {"log_path": log, "pid": p.pid, "url": "http://127.0.0.1:%d" % port, "health_path": "/health",
                  "timeout": 120, "stall_timeout": 60, "interval": 0.2, "tick": 0.02, "verify_generation": True}
        params.update(kw)
        return Waiter(params).run()
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("name", NOISY)
def test_noisy_but_ready_is_ready_with_warnings(tmp_path, name):
    with open(os.path.join(FIX, "batch7", name), encoding="utf-8") as f:
        noise = f.read().splitlines(True)
    r = serve_and_wait(start_up_with(noise, tmp_path), tmp_path, fatal_grace=1)
    assert not r["failed"] and r["stage"] == "ready", r["msg"]
    assert r["log_warnings"]["count"] >= 1 and r["log_warnings"]["lines"], r["log_warnings"]
    assert "warning" in r["msg"]


def test_a_terminal_line_in_the_same_start_up_is_still_a_failure(tmp_path):
    # batch-6's real Mooncake failure, raised: the server does not survive it, whatever answers HTTP afterwards.
    noise = ["RuntimeError: Mooncake memory registration failed.\n"]
    r = serve_and_wait(start_up_with(noise, tmp_path), tmp_path, fatal_grace=1)
    assert r["failed"] and r["reason"] == "crashed", r["msg"]
    assert r["category"] == "transfer_engine" and "registration failed" in r["key_line"]


def test_a_clean_start_up_reports_no_warning(tmp_path):
    r = serve_and_wait(start_up_with([], tmp_path), tmp_path)
    assert not r["failed"] and r["log_warnings"] == {"count": 0, "lines": []}
    assert "warning" not in r["msg"]
