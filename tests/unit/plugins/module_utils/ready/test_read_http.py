# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ready/read_http: the HTTP source fills the HTTP part of the snapshot and nothing else, against a real stdlib HTTP
server through the one SGLang client; a server that goes away is a part that says so (no status, the error kept)."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from snapshot_marks import marked, written

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import read_http
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import with_defaults
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client

RANK0 = {"rank0": True, "stage": "starting", "verify_generation": False}


@pytest.fixture
def server():
    """An SGLang-shaped server: /health 200, /ready 404 (before 0.5.20), /generate 200; records the paths asked."""
    asked = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            asked.append(self.path)
            if self.path == "/ready":
                self.answer(404, {"detail": "Not Found"})
            else:
                self.answer(200, {})

        def do_POST(self):
            asked.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.answer(200, {"text": "p"})

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd, asked
    httpd.shutdown()
    httpd.server_close()


def source(httpd, **params):
    url = "http://127.0.0.1:%d" % httpd.server_address[1]
    return read_http.HttpSource(with_defaults(dict(params, url=url)), Client(url), time.sleep)


def test_it_fills_exactly_the_http_part(server):
    httpd, asked = server
    src = source(httpd)
    s = marked(now=1.0, **RANK0)
    src.see(s, urgent=False)
    assert written(s, now=1.0, **RANK0) == set(read_http.PART)
    # the version unknown: /ready asked first, its 404 says /health is the endpoint, kept from then on
    assert (s.health, s.health_path, s.health_error, s.fast) == (200, "/health", None, False)
    assert (s.ready_hint_at, s.answered_early_seen) == (None, False) and asked == ["/ready", "/health"]
    assert src.health_path() == "/health" and src.dump()["calls"] == 1


def test_the_endpoint_is_asked_once_an_interval_unless_urgent(server):
    httpd, asked = server
    src = source(httpd, sglang_version="0.5.10", interval=2.0)
    for now, urgent in ((0.0, False), (1.9, False), (2.0, False), (2.1, True)):
        src.see(marked(now=now, **RANK0), urgent=urgent)
    assert asked == ["/health", "/health", "/health"]  # at 0.0, 2.0 and the urgent 2.1


def test_a_worker_rank_asks_nothing_and_fills_only_the_hint(server):
    httpd, asked = server
    src = source(httpd)
    src.hint_ready(4.0)
    src.hint_ready(5.0)  # the first time is kept
    s = marked(now=6.0, rank0=False)
    src.see(s, urgent=True)
    assert written(s, now=6.0, rank0=False) == {"ready_hint_at"} and s.ready_hint_at == 4.0 and asked == []


def test_the_logs_fired_up_is_proved_by_a_generation_not_the_endpoint(server):
    httpd, asked = server
    src = source(httpd)
    inputs = dict(RANK0, stage="ready", verify_generation=True)
    s = marked(now=1.0, **inputs)
    src.see(s, urgent=True)
    assert (s.fast, s.health) == (True, 200) and asked == []
    assert src.verify_generation() == (True, {"status": 200, "error": None}) and asked == ["/generate"]


def test_a_server_gone_is_no_status_with_the_error_kept(server):
    httpd, _asked = server
    src = source(httpd, sglang_version="0.5.23")
    src.see(marked(now=0.0, **RANK0), urgent=True)
    httpd.shutdown()
    httpd.server_close()
    s = marked(now=1.0, **RANK0)
    src.see(s, urgent=True)
    assert written(s, now=1.0, **RANK0) == set(read_http.PART)
    assert s.health is None and s.health_error and s.health_path == "/ready"
    assert src.dump()["port_open"] is False and src.dump()["status"] is None
    again = marked(now=1.1, **RANK0)
    src.see(again, urgent=False)  # the port closed: a TCP connect only, the endpoint is not asked
    assert again.health is None and src.dump()["calls"] == 2


def test_the_state_carries_the_endpoint_and_the_remembered_answers(server):
    httpd, asked = server
    src = source(httpd)
    src.see(marked(now=0.0, **RANK0), urgent=True)
    src.remember_answered_early()
    again = read_http.HttpSource(with_defaults({}), src.client, time.sleep, src.dump())
    s = marked(now=0.5, **RANK0)
    again.see(s, urgent=True)
    assert s.answered_early_seen is True and s.health_path == "/health" and asked[-1] == "/health"
