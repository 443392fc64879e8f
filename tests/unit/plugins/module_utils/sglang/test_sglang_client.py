# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/client.py against a real HTTP server that answers as an old or a new SGLang, and the client handed to the
waiter's probe, the accept-length check and the benchmark (they ask through it, never around it)."""
import http.server
import json
import socket
import threading

import netutil
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import client as bench_client
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import spec_accept
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client

INFO = {"version": "0.5.9", "internal_states": [{"avg_spec_accept_length": 2.5}], "speculative_algorithm": "EAGLE3"}


def serve(old, key=None):
    """A server like SGLang before /ready and with /get_server_info only (old) or like 0.5.23 (new)."""
    seen = []

    class H(netutil.JSONHandler):
        def do_GET(self):
            seen.append(("GET", self.path))
            if key and self.headers.get("Authorization") != "Bearer " + key:
                return self.reply(401, {"error": "key"})
            routes = {"/health": {}, "/v1/models": {"data": [{"id": "kimi"}]},
                      "/metrics": b"sglang:num_running_reqs 0\n"}
            routes["/get_server_info" if old else "/server_info"] = INFO
            if not old:
                routes["/ready"] = {"status": "ok"}
            if self.path not in routes:
                return self.reply(404, {"detail": "Not Found"})
            body = routes[self.path]
            return self.reply(200, body, "text/plain" if isinstance(body, bytes) else "application/json")

        def do_POST(self):
            seen.append(("POST", self.path))
            n = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(n) or b"{}")
            mx = req.get("sampling_params", {}).get("max_new_tokens", 1)
            return self.reply(200, {"text": "x" * mx, "meta_info": {"completion_tokens": 10, "spec_verify_ct": 4}})

    return netutil.serve(H), seen


@pytest.fixture
def server():
    made = []

    def start(old=False, key=None):
        srv, seen = serve(old, key)
        made.append(srv)
        return "http://127.0.0.1:%d" % srv.server_port, seen
    yield start
    for s in made:
        s.shutdown()


@pytest.mark.parametrize("old", [False, True])
def test_each_call_on_an_old_and_a_new_server(server, old):
    url, seen = server(old=old, key="sekrit")
    c = Client(url, "sekrit")
    st, info, err = c.server_info()
    assert (st, info, err) == (200, INFO, None)
    # the name that answered is remembered: the next call asks it directly
    seen.clear()
    assert c.server_info()[0] == 200 and len(seen) == 1
    st, _b, _e, path = c.readiness()
    assert (st, path) == (200, "/health" if old else "/ready")
    assert c.readiness(version="0.5.9")[3] == "/health" and c.readiness(version="0.5.23")[3] == "/ready"
    assert c.models() == (200, ["kimi"], None)
    st, text, _e = c.metrics()
    assert st == 200 and text.startswith("sglang:num_running_reqs")
    st, body, _e = c.generate({"text": "hi", "sampling_params": {"max_new_tokens": 3}})
    assert st == 200 and body["text"] == "xxx"
    assert Client(url).server_info()[0] == 401  # no key: SGLang's answer, not an exception


def test_nothing_listening_is_an_answer_not_an_exception():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    c = Client("http://127.0.0.1:%d" % port)
    st, body, err = c.server_info(timeout=1)
    assert st is None and body is None and "Connection" in err
    assert c.port_open() is False


def test_a_bad_url_is_refused_by_name():
    with pytest.raises(ValueError, match="not an http"):
        Client("127.0.0.1:30000")


class Recording(Client):
    """A client that records what it is asked (the injected client is the one that is used)."""

    def __init__(self, url, **kw):
        super(Recording, self).__init__(url, **kw)
        self.asked = []

    def call(self, method, path, body=None, timeout=10.0, parse=True):
        self.asked.append(path)
        return super(Recording, self).call(method, path, body, timeout, parse)


def test_the_checks_and_the_benchmark_ask_through_the_given_client(server):
    url, _seen = server(old=True)
    c = Recording(url)
    # the accept-length check: generations, then /server_info with the fallback it used to lack
    r = spec_accept.check("http://127.0.0.1:9", requests=1, client=c)
    assert c.asked == ["/generate", "/server_info", "/get_server_info"]
    assert r["sources"]["server_info"] == 2.5 and r["sources"]["generate"] == 2.5
    c.asked = []
    assert bench_client.server_accept_length("http://127.0.0.1:9", client=c) == 2.5
    assert c.asked == ["/get_server_info"]  # remembered from the first call


def test_the_waiter_asks_through_the_given_client(server):
    url, _seen = server(old=False)
    c = Recording(url)
    w = Waiter({"url": "http://127.0.0.1:9", "timeout": 10, "interval": 0.1, "verify_generation": False,
                "sglang_version": "0.5.23"}, client=c)
    r = w.run()
    assert not r["failed"], r["msg"]
    assert "/ready" in c.asked and "/server_info" in c.asked and "/v1/models" in c.asked
    assert r["server"]["served_model"] == "kimi" and r["server"]["avg_spec_accept_length"] == 2.5


class Timed(Recording):
    """Records the timeout of each readiness probe."""

    def call(self, method, path, body=None, timeout=10.0, parse=True):
        if path in ("/ready", "/health"):
            self.timeouts.append(timeout)
        return super(Timed, self).call(method, path, body, timeout, parse)


@pytest.mark.parametrize("interval", [0.1, 2.0])
def test_the_waiters_probe_timeout_is_the_gates_one(server, interval):
    # one home of the probe timeout (sglang/gates.py): a fast poll still gives SGLang more than its own 1 s, a slow one
    # five of its intervals
    url, _seen = server(old=False)
    c = Timed(url)
    c.timeouts = []
    w = Waiter({"url": "http://127.0.0.1:9", "timeout": 10, "interval": interval, "verify_generation": False,
                "sglang_version": "0.5.23"}, client=c)
    assert not w.run()["failed"]
    assert c.timeouts and set(c.timeouts) == {gates.probe_timeout(interval)}
    assert min(c.timeouts) >= gates.MIN_PROBE_TIMEOUT_S > gates.SGLANG_HEALTH_BUDGET_S


def test_the_clients_readiness_gives_at_least_the_floor(server):
    url, _seen = server(old=False)
    c = Timed(url)
    c.timeouts = []
    assert c.readiness(version="0.5.23")[0] == 200
    assert c.timeouts == [gates.MIN_PROBE_TIMEOUT_S]


def sse_server(mode):
    """A server streaming /generate as SGLang does (server-sent events, then [DONE]); ``mode`` 'refuse' answers 503,
    'break' closes the connection after the first event, 'key' wants the Bearer key 'k'."""

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(n))
            if mode == "refuse" or (mode == "key" and self.headers.get("Authorization") != "Bearer k"):
                body = b'{"error": "not ready"}'
                self.send_response(503 if mode == "refuse" else 401)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            events = [b'data: {"text": "%s", "meta_info": {"completion_tokens": %d}}\n\n' % (b"x" * i, i)
                      for i in range(1, req["sampling_params"]["max_new_tokens"] + 1)] + [b"data: [DONE]\n\n"]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(sum(len(e) for e in events)))
            self.end_headers()
            for e in events[:1] if mode == "break" else events:
                self.wfile.write(e)
                self.wfile.flush()
            if mode == "break":
                self.close_connection = True

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.mark.parametrize("mode", ["ok", "key", "refuse", "break"])
def test_stream_reads_events_as_they_come_and_never_raises(mode):
    srv = sse_server(mode)
    try:
        c = Client("http://127.0.0.1:%d" % srv.server_port, api_key="k" if mode == "key" else None)
        body = {"text": "hi", "stream": True, "sampling_params": {"max_new_tokens": 3}}
        status, stream, err = c.stream("/generate", body, timeout=10)
        if mode == "refuse":
            assert (status, stream, err) == (503, '{"error": "not ready"}', None)
            return
        assert status == 200 and err is None
        with stream:
            got = [json.loads(p)["meta_info"]["completion_tokens"] for p in stream.events()]
        if mode == "break":
            # the first event arrived; the cut is the stream's error, not an exception
            assert got == [1] and "ended without [DONE]" in stream.error
        else:
            assert got == [1, 2, 3] and stream.error is None
    finally:
        srv.shutdown()


def test_stream_to_nothing_says_what_failed():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert Client("http://127.0.0.1:%d" % port).stream("/generate", {}, timeout=2)[:2] == (None, None)


def test_model_info_falls_back_to_the_old_name(server):
    url, seen = server(old=True)
    c = Client(url)
    assert c.model_info()[0] == 404  # neither name on this server: the last answer, not an exception
    assert [p for _m, p in seen] == ["/model_info", "/get_model_info"]
