# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45: READY proves the path users call. The 1-token chat completion against a real local HTTP server (the
stdlib's) answering 200 as SGLang does, and 400 with SGLang's error body for a template that does not render; the
verdict and its words."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import messages, verdicts
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.read_http import HttpSource
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import CATEGORIES

TEMPLATE_ERROR = "unexpected end of template, expected 'end of print statement'."


class Handler(BaseHTTPRequestHandler):
    answer = (200, None)
    seen = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.seen.append((self.path, body))
        status, message = Handler.answer
        if status == 200:
            out = {"id": "chatcmpl-1", "object": "chat.completion", "model": body.get("model"),
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": "p"},
                                "finish_reason": "length"}]}
        else:  # SGLang's OpenAI error body (entrypoints/openai/serving_base.create_error_response)
            out = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": status}
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Handler.seen = []
    yield "http://127.0.0.1:%d" % httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def source(url):
    return HttpSource({"interval": 1.0, "sglang_version": "0.5.23"}, Client(url), sleep=lambda s: None)


def test_a_chat_that_answers_is_ready_and_asks_one_token_of_the_served_model(server):
    Handler.answer = (200, None)
    ok, detail = source(server).verify_chat("tiny-llama")
    assert ok and detail == {"status": 200, "error": None}
    assert Handler.seen == [("/v1/chat/completions", {"messages": [{"role": "user", "content": "ping"}],
                                                      "max_tokens": 1, "temperature": 0, "model": "tiny-llama"})]
    assert verdicts.chat_fails(verdicts.Snapshot(chat=(ok, detail), chat_probe=True)) is None


@pytest.mark.parametrize("status", [400, 500])
def test_a_chat_that_fails_is_a_failed_start_quoting_the_server(server, status):
    Handler.answer = (status, TEMPLATE_ERROR)
    ok, detail = source(server).verify_chat("m")
    assert not ok and detail["status"] == status and len(Handler.seen) == 1
    ending = verdicts.chat_fails(verdicts.Snapshot(chat=(ok, detail), chat_probe=True))
    assert ending.reason == "unhealthy"
    assert ending.why == "ready, but a 1-token /v1/chat/completions answers %d: %s" % (status, TEMPLATE_ERROR)
    assert ending.key == {"category": "chat_template", "line": TEMPLATE_ERROR, "remedy": messages.R_CHAT}
    assert "chat_template" in CATEGORIES and "server_ready_chat_probe: false" in messages.R_CHAT


def test_nothing_answering_is_a_failure_with_the_transport_error():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ok, detail = source("http://127.0.0.1:%d" % port).verify_chat()
    assert not ok and detail["status"] is None and detail["error"]


def test_not_asked_no_verdict():
    assert verdicts.chat_fails(verdicts.Snapshot()) is None


@pytest.mark.parametrize("detail, said", [
    ({"status": 400, "error": {"object": "error", "message": "bad  template\\n"}}, "bad template\\n"),
    ({"status": 400, "error": {"error": {"message": "nested"}}}, "nested"),
    ({"status": 502, "error": "Bad Gateway"}, "Bad Gateway"),
    ({"status": None, "error": None}, "no answer"),
])
def test_the_servers_message_is_quoted_on_one_line(detail, said):
    assert messages.server_said(detail) == said


@pytest.mark.parametrize("length", [299, 300, 301, 1200])
def test_the_key_line_quotes_at_most_300_characters_of_a_long_answer(length):
    # the why quotes up to 1000 characters (messages.server_said); the key line, what a summary shows, 300
    said = ("x" * (length - 1)) + "!"
    ending = verdicts.chat_fails(verdicts.Snapshot(chat=(False, {"status": 400, "error": said}), chat_probe=True))
    assert ending.key["line"] == said[:min(length, 1000)][:300]
    assert len(ending.key["line"]) == min(length, 300)
