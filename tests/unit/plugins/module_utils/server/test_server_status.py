# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server/status.read (roles/server's status, through the server_status module) against a real HTTP server that
answers as an old SGLang (no /ready, only the get_* names), a new one, or one that is starting (503)."""
import http.server
import json
import threading

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import status
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client

MODEL = {"model_path": "/models/kimi", "served_model_name": "kimi"}
INFO = {"internal_states": [{"avg_spec_accept_length": 3.0}, {"avg_spec_accept_length": 2.0}]}


@pytest.fixture
def server():
    made = []

    def start(kind):
        seen = []

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append(self.path)
                if kind == "old":
                    routes = {"/health": {}, "/get_model_info": MODEL, "/get_server_info": INFO}
                elif kind == "starting":
                    routes = {"/ready": (503, {"status": "starting"}), "/health": {}}
                elif kind == "latched":
                    routes = {"/ready": (503, {}), "/health": {}, "/model_info": MODEL, "/server_info": INFO}
                else:
                    routes = {"/ready": {}, "/health": {}, "/model_info": MODEL, "/server_info": INFO}
                answer = routes.get(self.path, (404, {"detail": "Not Found"}))
                code, body = answer if isinstance(answer, tuple) else (200, answer)
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        made.append(srv)
        return Client("http://127.0.0.1:%d" % srv.server_port), seen
    yield start
    for s in made:
        s.shutdown()


def test_a_new_server_is_asked_the_views_path_and_read_whole(server):
    client, seen = server("new")
    r = status.read(client, "/ready")
    assert r["ready"] and r["health"] == {"path": "/ready", "status": 200, "answer": "200"}
    assert (r["model_path"], r["served_model_name"]) == ("/models/kimi", "kimi")
    assert r["accept_length"] == 2.5  # the mean over the DP ranks (sglang/api.py)
    assert seen == ["/ready", "/model_info", "/server_info"]
    assert r["answers"] == {"/model_info": "200", "/server_info": "200"}


def test_an_old_server_falls_back_to_health_and_the_old_names(server):
    client, seen = server("old")
    r = status.read(client)  # no path, no version: /ready, which this server lacks
    assert r["ready"] and r["health"]["path"] == "/health"
    assert r["model_path"] == "/models/kimi" and r["accept_length"] == 2.5
    assert seen == ["/ready", "/health", "/model_info", "/get_model_info", "/server_info", "/get_server_info"]
    assert r["answers"] == {"/get_model_info": "200", "/get_server_info": "200"}


def test_the_version_picks_the_path(server):
    client, seen = server("old")
    assert status.read(client, version="0.5.15.post1")["ready"]
    assert seen[0] == "/health"


def test_a_starting_server_is_not_asked_more(server):
    client, seen = server("starting")
    r = status.read(client, "/ready")
    assert not r["ready"] and r["health"]["answer"] == "HTTP 503"
    assert seen == ["/ready"] and r["model"] == {} and r["accept_length"] is None


def test_nothing_listening_says_why():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = status.read(Client("http://127.0.0.1:%d" % port), "/health", timeout=2)
    assert not r["ready"] and r["health"]["status"] is None and "Connection" in r["health"]["answer"]


def _log(tmp_path, *lines):
    path = tmp_path / "kimi.log"
    path.write_text("".join("[2026-12-04 19:00:00] %s\n" % line for line in lines))
    return str(path)


LATCH = ("Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. "
         "tic start time: 19:00:01. last_heartbeat time: 19:00:00")


def test_ready_503_with_a_failed_health_check_since_the_start_and_serving_is_the_latch(server, tmp_path):
    client, seen = server("latched")
    log = _log(tmp_path, "The server is fired up and ready to roll!", "Prefill batch. #new-seq: 1", LATCH)
    r = status.read(client, "/ready", log_path=log)
    assert not r["ready"] and r["latch"]["latched"] and r["latch"]["serving"]
    assert r["latch"]["line"].endswith(LATCH) and "health latch" in r["latch"]["note"]
    assert seen == ["/ready", "/model_info"]


def test_a_failed_check_before_the_last_start_is_not_the_latch(server, tmp_path):
    client, seen = server("starting")
    log = _log(tmp_path, LATCH, "The server is fired up and ready to roll!")
    r = status.read(client, "/ready", log_path=log)
    assert r["latch"] == {"latched": False, "serving": None, "line": None, "note": None} and seen == ["/ready"]


def test_a_ready_server_or_an_unreadable_log_is_not_latched(server, tmp_path):
    client, _seen = server("new")
    assert not status.read(client, "/ready", log_path=_log(tmp_path, LATCH))["latch"]["latched"]
    client, _seen = server("starting")
    assert status.read(client, "/ready", log_path=str(tmp_path / "missing.log"))["latch"]["line"] is None


def test_the_status_says_whether_the_last_start_reused_the_all_reduce_tuning(server, tmp_path):
    client, seen = server("new")
    tune = "/var/lib/sglang/compile-cache/kimi/0.5.23/.cache/flashinfer/0.7.2/120/autotune/pcie_ipc_all_reduce_ws8.json"
    log = _log(tmp_path, "server_args={'tp_size': 8}", "FlashInfer PCIe-IPC all-reduce enabled (world=8, ...)",
               "... flashinfer.jit: [Autotuner]: Loaded 8 configs from %s" % tune,
               "The server is fired up and ready to roll!")
    r = status.read(client, "/ready", log_path=log)
    assert r["allreduce_tuning"]["state"] == "reused" and r["allreduce_tuning"]["path"] == tune
    assert status.read(client, "/ready")["allreduce_tuning"] is None
