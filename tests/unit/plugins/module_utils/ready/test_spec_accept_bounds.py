# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""spec_accept held from both sides (issue 37): the accept-length floor at, just below and just above it, the count
of log lines kept, the log tail's size, a request's spec fields, and what the check makes of each answer of the
server (a scripted client stands in for SGLang: the unit under test is the check, not the HTTP client)."""
import json
import threading
import types

import pytest

from netutil import JSONHandler, serve
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import spec_accept as sa
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import MIN_ACCEPT_LENGTH


def _result(sources, requests=(), **extra):
    out = {"sources": dict(sources), "requests": list(requests)}
    out.update(extra)
    return out


@pytest.mark.parametrize("al, status", [(1.29, "low"), (1.2999, "low"), (1.3, "ok"), (1.3001, "ok"), (1.31, "ok")])
def test_the_floor_is_met_at_and_above_it_and_missed_just_below(al, status):
    r = sa.verdict(_result({"generate": al}), MIN_ACCEPT_LENGTH)
    assert (r["status"], r["ok"], r["min_accept_length"]) == (status, status == "ok", 1.3)
    if status == "ok":
        assert r["msg"] == "speculative accept length %.2f (from generate), floor 1.30" % al
    else:
        assert r["msg"] == ("speculative accept length %.2f (from generate) is below the floor 1.30 "
                            "(server_spec_min_accept_length): %s" % (al, sa.REMEDY))


@pytest.mark.parametrize("tokens, status", [(129, "low"), (130, "ok"), (131, "ok")])
def test_the_floor_is_the_one_of_sglang_api(tokens, status):
    # check() without min_accept_length measures against sglang/api's floor (1.3): 129, 130, 131 tokens in 100 steps
    assert MIN_ACCEPT_LENGTH == 1.3
    client = Scripted([(200, {"meta_info": {"completion_tokens": tokens, "spec_verify_ct": 100}}, None)])
    r = sa.check("http://x", requests=1, client=client)
    assert (r["status"], r["min_accept_length"]) == (status, MIN_ACCEPT_LENGTH)


@pytest.mark.parametrize("sources, source", [({"generate": 2.0, "server_info": 1.0, "log": 1.0}, "generate"),
                                             ({"server_info": 2.0, "log": 1.0}, "server_info"),
                                             ({"log": 2.0}, "log"), ({"generate": None, "log": 2.0}, "log")])
def test_the_first_source_in_order_decides(sources, source):
    r = sa.verdict(_result(sources), 1.5)
    assert r["source"] == source and r["status"] == "ok" and r["accept_length"] == 2.0


def test_accept_length_is_rounded_to_three_places():
    assert sa.verdict(_result({"generate": 2.123456}), 1.3)["accept_length"] == 2.123


def test_off_only_when_no_accept_length_and_the_server_says_off():
    r = sa.verdict(_result({}, speculative=False), 1.3)
    assert (r["status"], r["ok"]) == ("off", True)
    assert r["msg"] == "speculative decoding is off on this server (/server_info speculative_algorithm is empty)"
    assert sa.verdict(_result({}, speculative=True), 1.3)["status"] == "unknown"
    assert sa.verdict(_result({"log": 1.0}, speculative=False), 1.3)["status"] == "low"


def test_an_error_or_unknown_is_not_ok_and_says_why():
    err = {"index": 1, "seconds": 0.1, "finished": True, "error": "HTTP 500: boom"}
    r = sa.verdict(_result({}, [err]), 1.3)
    assert (r["ok"], r["msg"]) == (False, "speculative accept-length check: generation failed: HTTP 500: boom")
    r = sa.verdict(_result({}, [dict(err, error=None)]), 1.3)
    assert r["status"] == "unknown" and not r["ok"] and "spec_verify_ct" in r["msg"]
    # a measured accept length wins over a failed request
    assert sa.verdict(_result({"generate": 2.0}, [err]), 1.3)["status"] == "ok"


def test_a_stall_names_what_was_measured_so_far():
    stuck = {"index": 3, "seconds": 30.4, "finished": False}
    r = sa.verdict(_result({"log": 1.0}, [stuck]), 1.3)
    assert r["msg"] == ("speculative accept-length check: request 3 did not finish within 30 s (/health ?, "
                        "/server_info ?); accept length so far 1.00 (log); " + sa.STALL_REMEDY)
    assert not r["ok"]


@pytest.mark.parametrize("meta, want", [
    ({"completion_tokens": 48, "spec_verify_ct": 1}, (48, 1.0)),
    ({"completion_tokens": 48, "spec_verify_ct": 0.5}, (48, 0.5)),
    ({"completion_tokens": 48, "spec_verify_ct": 0}, None), ({"completion_tokens": 48, "spec_verify_ct": -1}, None),
    ({"completion_tokens": 48.0, "spec_verify_ct": 4}, None), ({"completion_tokens": 48, "spec_verify_ct": "4"}, None),
    ({"spec_verify_ct": 4}, None), ([], None), (None, None)])
def test_meta_accept_wants_an_int_count_and_a_positive_verify_count(meta, want):
    assert sa.meta_accept(meta) == want


def test_only_the_last_lines_of_the_log_count():
    text = "\n".join("accept len: %d.50" % i for i in range(1, 26))
    assert sa.log_accept_lengths(text) == [float("%d.5" % i) for i in range(6, 26)]
    assert sa.log_accept_lengths(text, last=1) == [25.5]
    assert sa.log_accept_lengths("accept len: 3") == [3.0]


def test_the_log_tail_is_the_last_bytes(tmp_path):
    log = tmp_path / "log"
    log.write_bytes(b"a" * 10 + b"bcd")
    assert sa.read_log_tail(str(log), size=3) == "bcd"
    assert sa.read_log_tail(str(log), size=13) == "a" * 10 + "bcd"
    assert sa.read_log_tail(str(log), size=100) == "a" * 10 + "bcd"
    log.write_bytes(b"\xff")
    assert sa.read_log_tail(str(log)) == u"\ufffd"
    assert sa.read_log_tail(str(tmp_path / "missing")) is None
    assert sa.LOG_TAIL_BYTES == 256 * 1024


class Scripted(object):
    """Answers each call with the next (status, body, error) of its script and records what was asked."""

    def __init__(self, generate=(), server_info=(200, {}, None), health=(200, "", None)):
        self.generate, self.info, self.health = list(generate), server_info, health
        self.asked = []

    def call(self, method, path, body=None, timeout=10.0):
        self.asked.append((method, path, body, timeout))
        if path == "/health":
            return self.health
        return self.generate.pop(0)

    def server_info(self, timeout=10.0):
        self.asked.append(("GET", "/server_info", None, timeout))
        return self.info


def meta(ct, verify):
    return (200, {"meta_info": {"completion_tokens": ct, "spec_verify_ct": verify}}, None)


def test_check_pools_the_requests_tokens_over_their_verify_steps():
    client = Scripted([meta(40, 10), meta(20, 20), meta(30, 10)], (200, {"speculative_algorithm": "EAGLE3"}, None))
    r = sa.check("http://x", requests=3, max_new_tokens=7, client=client, clock=iter([0.0, 2.5]).__next__)
    assert r["sources"] == {"generate": 90 / 40.0} and r["status"] == "ok" and r["elapsed"] == 2.5
    assert [q["accept_length"] for q in r["requests"]] == [4.0, 1.0, 3.0]
    posted = [a for a in client.asked if a[1] == "/generate"]
    assert len(posted) == 3 and posted[0][2]["sampling_params"] == {
        "max_new_tokens": 7, "temperature": 0, "ignore_eos": True}
    assert [p[2]["text"] for p in posted] == list(sa.DEFAULT_PROMPTS[:3])
    assert "/health" not in [a[1] for a in client.asked]


def test_check_reads_server_info_and_the_log(tmp_path):
    log = tmp_path / "log"
    log.write_text("accept len: 1.00\naccept len: 1.20\n")
    client = Scripted([(200, {"text": "x"}, None)], (200, {"internal_states": [{"avg_spec_accept_length": 1.1}]}, None))
    r = sa.check("http://x", requests=1, client=client, log_path=str(log), min_accept_length=1.2)
    assert r["sources"] == {"server_info": 1.1, "log": 1.1} and r["log_lines"] == [1.0, 1.2]
    assert (r["status"], r["source"], r["server_info"]) == ("low", "server_info", "200")
    assert "speculative" not in r


@pytest.mark.parametrize("answer, text", [((404, "nope", None), "HTTP 404"), ((None, None, "refused"), "refused")])
def test_check_records_an_unhelpful_server_info(answer, text):
    r = sa.check("http://x", requests=1, client=Scripted([(200, {}, None)], answer))
    assert r["server_info"] == text and r["status"] == "unknown"


def test_check_stops_at_the_first_unfinished_request_and_asks_health():
    client = Scripted([meta(10, 5), (None, None, "timed out"), meta(10, 5)], health=(200, "", None))
    r = sa.check("http://x", requests=3, request_timeout=1.0, info_timeout=30.0, client=client)
    assert [q["finished"] for q in r["requests"]] == [True, False] and r["health"] == "200"
    assert r["status"] == "stalled" and r["requests"][1]["error"] == "no answer within 1 s"
    # /health is bounded at 10 s whatever info_timeout is; /server_info gets info_timeout
    assert ("GET", "/health", None, 10.0) in client.asked and ("GET", "/server_info", None, 30.0) in client.asked
    client = Scripted([(None, None, "Timeout reading")], health=(None, None, None))
    assert sa.check("http://x", requests=2, client=client)["health"] == "no answer"


@pytest.mark.parametrize("answer, err", [
    ((500, {"error": "boom"}, None), 'HTTP 500: {"error": "boom"}'), ((502, "bad gateway", None), "HTTP 502: bad gateway"),
    ((200, "<html>", None), "not JSON: '<html>'"), ((None, None, "connection refused"), "connection refused")])
def test_net_turns_each_failure_into_words(answer, err):
    net = sa._Net(Scripted([answer]))
    status, js, got = net.call("POST", "/generate", {})
    assert js is None and got == err and status == answer[0]
    assert sa._Net(Scripted([(399, {"a": 1}, None)])).call("POST", "/generate") == (399, {"a": 1}, None)


def test_net_cuts_a_long_error_body():
    status, _js, err = sa._Net(Scripted([(500, "x" * 1000, None)])).call("POST", "/generate")
    assert err == "HTTP 500: " + "x" * 300
    status, _js, err = sa._Net(Scripted([(200, "y" * 1000, None)])).call("POST", "/generate")
    assert err == "not JSON: %r" % ("y" * 120)


# -- what check() asks, and how it records each answer ---------------------------------------------------------------
class Clock(object):
    """A clock that moves only when read: each read returns the next of its times."""

    def __init__(self, *times):
        self.times = list(times)

    def time(self):
        return self.times.pop(0)


def test_check_asks_with_its_defaults(monkeypatch):
    # 3 requests of 48 tokens, each bounded at 30 s; /server_info at 10 s; POST for a generation, GET for the rest
    monkeypatch.setattr(sa, "time", types.SimpleNamespace(time=Clock(*[0.0] * 8).time))
    client = Scripted([meta(48, 16)] * 3, (200, {"speculative_algorithm": "EAGLE3"}, None))
    r = sa.check("http://x:1", client=client, clock=iter([0.0, 0.0]).__next__)
    generate = [(m, p, b["sampling_params"]["max_new_tokens"], t) for m, p, b, t in client.asked if p == "/generate"]
    assert generate == [("POST", "/generate", 48, 30.0)] * 3
    assert client.asked[-1] == ("GET", "/server_info", None, 10.0)
    assert r["url"] == "http://x:1" and [q["index"] for q in r["requests"]] == [1, 2, 3]
    assert r["requests"][0] == {"index": 1, "seconds": 0.0, "finished": True, "status": 200, "completion_tokens": 48,
                                "spec_verify_ct": 16.0, "accept_length": 3.0}
    assert r["speculative"] is True


def test_check_records_each_requests_time_and_its_own_accept_length(monkeypatch):
    # each bounded call reads the clock before and after: 1.2345 s for the request, the rest for /server_info
    monkeypatch.setattr(sa, "time", types.SimpleNamespace(time=Clock(100.0, 101.2345, 200.0, 200.5).time))
    client = Scripted([meta(7, 3)], (200, {}, None))
    r = sa.check("http://x", requests=1, client=client, clock=iter([10.0, 12.3456]).__next__)
    assert r["requests"] == [{"index": 1, "seconds": 1.23, "finished": True, "status": 200, "completion_tokens": 7,
                              "spec_verify_ct": 3.0, "accept_length": 2.333}]
    assert r["elapsed"] == 2.35


@pytest.mark.parametrize("body, speculative", [({"speculative_algorithm": "EAGLE3"}, True),
                                               ({"speculative_algorithm": None}, False),
                                               ({"speculative_algorithm": ""}, False)])
def test_check_reads_whether_speculation_is_on_from_a_200_server_info(body, speculative):
    r = sa.check("http://x", requests=1, client=Scripted([(200, {}, None)], (200, body, None)))
    assert r["speculative"] is speculative
    assert r["status"] == ("unknown" if speculative else "off")


@pytest.mark.parametrize("status", [202, 204])
def test_a_server_info_that_is_not_200_is_not_read(status):
    body = {"speculative_algorithm": "", "internal_states": [{"avg_spec_accept_length": 2.0}]}
    r = sa.check("http://x", requests=1, client=Scripted([(200, {}, None)], (status, body, None)))
    assert "speculative" not in r and r["sources"] == {} and r["server_info"] == "HTTP %d" % status
    assert r["status"] == "unknown"


def test_server_info_that_says_nothing_is_no_answer():
    r = sa.check("http://x", requests=1, client=Scripted([(200, {}, None)], (None, None, None)))
    assert r["server_info"] == "no answer"


def test_a_generation_that_is_not_a_json_object_gives_no_accept_length():
    r = sa.check("http://x", requests=1, client=Scripted([(200, ["meta_info"], None)], (200, {}, None)))
    assert r["requests"][0]["finished"] and "accept_length" not in r["requests"][0] and r["status"] == "unknown"


class _Sglang(JSONHandler):
    """A loopback server that answers like SGLang and records each request's path and Authorization header."""
    seen = []

    def do_POST(self):
        self.seen.append((self.path, self.headers.get("Authorization")))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.reply(200, {"text": "x", "meta_info": {"completion_tokens": 10, "spec_verify_ct": 4}})

    def do_GET(self):
        self.seen.append((self.path, self.headers.get("Authorization")))
        self.reply(200, {"speculative_algorithm": "EAGLE3"})


def test_check_without_a_client_asks_the_url_with_the_api_key():
    srv = serve(_Sglang)
    try:
        _Sglang.seen = []
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        r = sa.check(url, api_key="k-1", requests=1)
    finally:
        srv.shutdown()
        srv.server_close()
    assert (r["status"], r["accept_length"], r["url"]) == ("ok", 2.5, url)
    assert _Sglang.seen == [("/generate", "Bearer k-1"), ("/server_info", "Bearer k-1")]


# -- the bounded call --------------------------------------------------------------------------------------------------
class Hung(object):
    """A client whose calls block until released (an SGLang request that never finishes)."""

    def __init__(self):
        self.release = threading.Event()

    def call(self, method, path, body=None, timeout=10.0):
        self.release.wait(60)
        return 200, {}, None


class Joined(threading.Thread):
    """A thread that records how it is started and joined, and does not wait at join (the bound is what is held)."""
    made = []

    def __init__(self, *args, **kwargs):
        super(Joined, self).__init__(*args, **kwargs)
        self.joined_for = []
        Joined.made.append(self)

    def join(self, timeout=None):
        self.joined_for.append(timeout)


def test_a_request_that_never_ends_is_joined_for_its_timeout_plus_a_second(monkeypatch):
    monkeypatch.setattr(sa.threading, "Thread", Joined)
    monkeypatch.setattr(sa, "time", types.SimpleNamespace(time=Clock(50.0, 57.5).time))
    Joined.made = []
    hung = Hung()
    try:
        got = sa._Net(hung).bounded("POST", "/generate", {}, 6.0)
    finally:
        hung.release.set()
    assert got == (None, None, "no answer within 6 s", 7.5, False)
    thread, = Joined.made
    assert (thread.name, thread.daemon, thread.joined_for) == ("spec-check", True, [7.0])


@pytest.mark.parametrize("err, finished", [("timed out", False), ("Read TIMED OUT", False), ("read timeout", False),
                                           ("Timeout reading", False), ("connection refused", True)])
def test_a_timeout_error_is_a_request_that_did_not_finish(err, finished):
    got = sa._Net(Scripted([(None, None, err)])).bounded("POST", "/generate", {}, 5.0)
    assert (got[2], got[4]) == (("no answer within 5 s", False) if not finished else (err, True))


def test_each_call_carries_its_timeout():
    client = Scripted([(200, {}, None)])
    sa._Net(client).call("POST", "/generate", {}, timeout=3.5)
    sa._Net(client).call("GET", "/server_info", timeout=4.5)
    assert client.asked == [("POST", "/generate", {}, 3.5), ("GET", "/server_info", None, 4.5)]


@pytest.mark.parametrize("status, error", [(399, None), (400, 'HTTP 400: {"a": 1}'), (401, 'HTTP 401: {"a": 1}')])
def test_an_http_error_begins_at_400(status, error):
    assert sa._Net(Scripted([(status, {"a": 1}, None)])).call("POST", "/generate")[2] == error


def test_unknown_and_stalled_messages_say_what_was_seen():
    r = sa.verdict(_result({}), 1.3)
    assert r["msg"] == ("speculative accept-length check: no accept length from /generate meta_info, /server_info or "
                        "the decode log (is speculative decoding on? does this SGLang report spec_verify_ct?)")
    stuck = {"index": 1, "seconds": 30.0, "finished": False}
    r = sa.verdict(_result({}, [stuck], health="200", server_info="200"), 1.3)
    assert r["msg"] == ("speculative accept-length check: request 1 did not finish within 30 s (/health 200, "
                        "/server_info 200); " + sa.STALL_REMEDY)
    assert json.dumps(r)  # the result is what the module returns: plain JSON
