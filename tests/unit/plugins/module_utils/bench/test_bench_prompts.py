# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/prompts (issue 44 item 4): the user's prompt set is read as untrusted - every bad line a refusal naming
its line number and field, caps on bytes, lines, depth and turns, no link followed - and the load sends it, in one
fixed order with each entry's own length, through a real local HTTP server that records what it was sent."""
import testpaths  # puts the checkout on sys.path as the collection
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import client as bc
from ansible_collections.llmserve.sglang.plugins.module_utils.bench import prompts as P
from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted as U
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as bench_report

CHAT = {"messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a prime."},
                     {"role": "assistant", "content": "7"}, {"role": "user", "content": "And one above 100?"},
                     {"role": "assistant", "content": "101"}]}


def jsonl(*objs):
    return ("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n").encode("utf-8")


def refusal(data):
    with pytest.raises(U.Refused) as e:
        P.parse(data, "/srv/prompts.jsonl")
    return str(e.value)


def test_conversations_and_prompts_are_read_with_their_lengths():
    entries = P.parse(jsonl(CHAT, "", {"prompt": "Write a haiku about GPUs."}, "   "), "p.jsonl")
    # the trailing assistant turn is the reply the server generates: not sent; the earlier one is context
    assert entries[0]["messages"] == CHAT["messages"][:4]
    assert entries[0]["chars"] == sum(len(m["content"]) for m in CHAT["messages"][:4])
    assert entries[1] == {"prompt": "Write a haiku about GPUs.", "chars": 25}
    assert P.describe(entries, "/srv/p.jsonl") == {"kind": "prompts", "file": "/srv/p.jsonl", "entries": 2,
                                                   "conversations": 1, "prompts": 1, "chars_median": 46,
                                                   "chars_max": 46}


@pytest.mark.parametrize("line, where, what", [
    ("{not json", "line 2", "not JSON"),
    ("[1, 2]", "line 2", "is a list, not an object"),
    ({"text": "hi"}, "line 2", "neither messages nor prompt"),
    ({"prompt": "hi", "messages": []}, "line 2", "both messages and prompt"),
    ({"prompt": 5}, "line 2 prompt", "not a string"),
    ({"prompt": "  "}, "line 2 prompt", "is empty"),
    ({"messages": "hi"}, "line 2 messages", "not a list"),
    ({"messages": ["hi"]}, "line 2 messages[0]", "not an object"),
    ({"messages": [{"content": "hi"}]}, "line 2 messages[0].role", "missing"),
    ({"messages": [{"role": "wizard", "content": "hi"}]}, "line 2 messages[0].role", "not one of system"),
    ({"messages": [{"role": "user", "content": ["parts"]}]}, "line 2 messages[0].content", "not a string"),
    ({"messages": [{"role": "user", "content": None}]}, "line 2 messages[0].content", "missing"),
    ({"messages": [{"role": "assistant", "content": "hi"}]}, "line 2 messages", "no user turn"),
    ({"messages": []}, "line 2 messages", "no user turn"),
    ({"messages": [{"role": "user", "content": "x"}] * (P.MAX_MESSAGES + 1)}, "line 2 messages", "turns, above the cap"),
    ('{"prompt": "x"' + ', "a": [' * 9 + ']' * 9 + '}', "line 2", "nested"),
])
def test_every_bad_line_is_a_refusal_naming_its_line_and_field(line, where, what):
    msg = refusal(jsonl({"prompt": "fine"}, line))
    assert msg.startswith("/srv/prompts.jsonl %s: " % where), msg
    assert what in msg, msg


def test_the_caps_hold_from_both_sides():
    at_cap = jsonl(*([{"messages": [{"role": "user", "content": "x"}] * P.MAX_MESSAGES}]))
    assert len(P.parse(at_cap)[0]["messages"]) == P.MAX_MESSAGES
    line = b'{"prompt": "' + b"y" * (P.MAX_LINE_BYTES - 14) + b'"}'
    assert len(line) == P.MAX_LINE_BYTES and P.parse(line)[0]["chars"] == P.MAX_LINE_BYTES - 14
    msg = refusal(b'{"prompt": "' + b"y" * (P.MAX_LINE_BYTES - 13) + b'"}')
    assert "line 1" in msg and "above the cap of %d for one line" % P.MAX_LINE_BYTES in msg
    assert len(P.parse(b'{"prompt": "a"}\n' * P.MAX_LINES)) == P.MAX_LINES
    assert "more than %d lines" % P.MAX_LINES in refusal(b'{"prompt": "a"}\n' * (P.MAX_LINES + 1))
    assert "holds no prompt" in refusal(b"\n  \n")
    assert "above the cap" in refusal(b" " * (P.MAX_BYTES + 1))


def test_the_file_is_read_untrusted(tmp_path):
    good = tmp_path / "p.jsonl"
    good.write_bytes(jsonl({"prompt": "hello"}))
    assert P.read(str(good)) == [{"prompt": "hello", "chars": 5}]
    os.symlink(str(good), str(tmp_path / "link.jsonl"))
    with pytest.raises(U.Refused) as e:
        P.read(str(tmp_path / "link.jsonl"))
    assert "symbolic link" in str(e.value)
    os.mkfifo(str(tmp_path / "fifo.jsonl"))
    with pytest.raises(U.Refused) as e:
        P.read(str(tmp_path / "fifo.jsonl"))  # opened without blocking, refused
    assert "FIFO" in str(e.value) or "not a regular file" in str(e.value)
    for bad, what in (("p.jsonl", "not an absolute path"), (str(tmp_path / "none.jsonl"), "missing")):
        with pytest.raises(U.Refused) as e:
            P.read(bad)
        assert what in str(e.value)


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400) | st.lists(st.one_of(
    st.text(max_size=30), st.dictionaries(st.sampled_from(["prompt", "messages", "role", "content"]),
                                          st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                                                       lambda c: st.lists(c, max_size=3)
                                                       | st.dictionaries(st.sampled_from(["role", "content"]), c,
                                                                         max_size=2), max_leaves=8), max_size=3)),
    max_size=5).map(lambda objs: jsonl(*objs)))
def test_any_bytes_give_entries_or_a_named_refusal(data):
    try:
        entries = P.parse(data, "/srv/prompts.jsonl")
    except U.Refused as exc:
        assert str(exc).startswith("/srv/prompts.jsonl")
        return
    for e in entries:
        assert ("prompt" in e) != ("messages" in e) and isinstance(e["chars"], int)
        if "messages" in e:
            assert e["messages"] and any(m["role"] == "user" for m in e["messages"])
            assert all(isinstance(m["content"], str) for m in e["messages"])


def test_the_order_is_shuffled_once_and_the_same_every_time():
    assert P.order(6) == P.order(6) and sorted(P.order(6)) == list(range(6)) and P.order(6) != list(range(6))
    assert P.order(6, seed=1) != P.order(6)


# ---- the load sends them: a real local HTTP server records each request's body

class _Recorder(BaseHTTPRequestHandler):
    bodies = []

    def do_POST(self):  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        if self.path == "/generate":
            chunk = {"text": "ok", "meta_info": {"completion_tokens": 1}}
        else:
            chunk = {"choices": [{"delta": {"content": "ok"}}], "usage": {"completion_tokens": 1}}
        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n")

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder():
    _Recorder.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_address[1], _Recorder.bodies
    finally:
        server.shutdown()
        server.server_close()


def test_the_load_sends_the_users_conversations_in_the_fixed_order(recorder):
    url, bodies = recorder
    entries = P.parse(jsonl(CHAT, {"prompt": "p1"}, {"prompt": "p2"}))
    res, _recs = bc.run_load(url, 1, 5, max_new_tokens=4, prompts=entries)
    assert res["completed"] == 5 and res["failed"] == 0
    sent = [b["messages"] for _path, b in bodies]
    want = [entries[i]["messages"] if "messages" in entries[i] else [{"role": "user", "content": entries[i]["prompt"]}]
            for i in (P.order(3) * 2)[:5]]
    assert sent == want and all(b["max_tokens"] == 4 for _p, b in bodies)
    # prompts through the generate endpoint are their text; conversations need chat (refused before any request)
    del bodies[:]
    bc.run_load(url, 1, 2, max_new_tokens=4, endpoint="generate", prompts=entries[1:])
    assert sorted(b["text"] for _p, b in bodies) == ["p1", "p2"]
    del bodies[:]
    with pytest.raises(ValueError, match="need endpoint chat"):
        bc.run_load(url, 1, 2, endpoint="generate", prompts=entries)
    assert bodies == []


def test_the_report_says_which_load_ran():
    entries = P.parse(jsonl(CHAT, {"prompt": "p1"}))
    raw = {"meta": {"input_len": 32}, "results": [{"load": P.describe(entries, "/srv/p.jsonl")}]}
    assert bench_report.load_of(raw)["words"] == (
        "the user's prompt set /srv/p.jsonl (2 entries: 1 conversations, 1 prompts; 46 characters at the median, "
        "46 the longest), in one fixed order")
    raw = {"meta": {"input_len": 32}, "results": [{"load": P.synthetic(32)}]}
    assert bench_report.load_of(raw)["words"] == "synthetic (32 words a prompt, distinct per request)"
    assert bench_report.load_of({"meta": {}, "results": [{}]})["words"] == "not recorded"


def _module(args):
    """bench_serving run as Ansible runs it (a child python with its arguments on stdin)."""
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.join(testpaths.REPO, "collections"))
    proc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "plugins", "modules", "bench_serving.py")],
                          input=json.dumps({"ANSIBLE_MODULE_ARGS": args}), capture_output=True, text=True, env=env,
                          check=False, timeout=120)
    return json.loads(proc.stdout)


def test_bench_serving_refuses_a_bad_line_before_any_load_and_reports_the_load(recorder, tmp_path):
    url, bodies = recorder
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(jsonl({"prompt": "fine"}, {"messages": [{"role": "user", "content": 3}]}))
    out = _module({"url": url, "prompts": str(bad), "sample_running": False, "num_requests": 2})
    assert out["failed"] and out["msg"] == (
        "prompts: %s line 2 messages[0].content: is an integer (3), not a string: give each turn's text as a string"
        % bad)
    assert bodies == []  # nothing was sent
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(CHAT, {"prompt": "p1"}))
    out = _module({"url": url, "prompts": str(good), "sample_running": False, "num_requests": 2,
                   "max_new_tokens": 4})
    assert not out.get("failed"), out
    assert out["result"]["engine"] == "builtin" and "prompt set is given" in out["result"]["engine_note"]
    assert out["result"]["load"] == P.describe(P.parse(good.read_bytes()), str(good))
    assert len(bodies) == 2
    out = _module({"url": url, "sample_running": False, "num_requests": 1, "max_new_tokens": 4, "engine": "builtin",
                   "input_len": 5})
    assert out["result"]["load"] == {"kind": "synthetic", "input_len": 5}
    out = _module({"url": url, "prompts": str(good), "endpoint": "generate"})
    assert out["failed"] and "holds chat conversations: they need endpoint chat" in out["msg"]
