# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's bounds (issue 42, items 5 and 6): its numbers checked as numbers (bench/limits: concurrency
"64" is 64, never [6, 4]; 0, -8, 10^9, NaN, inf and 1e309 refused by name, the good values beside them accepted),
one worker pool of at most ``concurrency`` threads, and every request ended at its deadline or a line/answer cap by
a real local server that streams forever or sends a line without end, counted failed with the reason; a FIFO or a
link as the server log is refused by name, never waited on."""
import http.server
import os
import math
import socketserver
import threading
import time

import pytest
from hypothesis import given, settings, strategies as st

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.filter._bench import _bench_grid, _bench_next
from ansible_collections.llmserve.sglang.plugins.module_utils.bench import client as bc
from ansible_collections.llmserve.sglang.plugins.module_utils.bench import limits
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import client as sc

GOOD = {"concurrency": 8, "num_requests": None, "max_new_tokens": 128, "input_len": 32, "timeout": 600.0,
        "sample_interval": 0.25}


# ---- numbers as numbers

@pytest.mark.parametrize("given, grid", [
    ("64", [64]), (64, [64]), ([1, 2, 4], [1, 2, 4]), (["8", 2, 2], [2, 8]), ([4096], [4096]), (None, [1, 2, 4, 8]),
    ([], [1, 2, 4, 8]), ("", [1, 2, 4, 8])])
def test_the_grid_accepts_a_number_a_digit_string_or_a_list_of_them(given, grid):
    assert _bench_grid(8, given) == grid


@pytest.mark.parametrize("given, named", [
    (0, "benchmark_concurrency: 0 is outside 1..4096"), ("0", "outside 1..4096"), (-8, "-8 is outside 1..4096"),
    ([0, -8], "benchmark_concurrency[0]: 0 is outside"), (10 ** 9, "1000000000 is outside 1..4096"),
    ([4097], "benchmark_concurrency[0]: 4097 is outside"), ("6 4", "not the string '6 4'"), ("64.0", "not the string"),
    (True, "not True"), ([True], "benchmark_concurrency[0]"), ({"a": 1}, "not {'a': 1}"), (2.5, "not 2.5"),
    (["x"], "not the string 'x'"), (list(range(1, 70)), "69 entries, at most 64"), (float("nan"), "not nan")])
def test_the_grid_refuses_what_is_no_batch_size_by_name(given, named):
    with pytest.raises(AnsibleFilterError) as refused:
        _bench_grid(8, given)
    assert named in str(refused.value)


@pytest.mark.parametrize("max_batch, ok", [(1, True), ("256", True), (4096, True), (0, False), (4097, False),
                                           ("1e9", False), (10 ** 9, False), (None, False)])
def test_the_doubling_grid_is_bounded(max_batch, ok):
    if ok:
        assert _bench_grid(max_batch)[-1] == int(max_batch)
    else:
        with pytest.raises(AnsibleFilterError, match="benchmark_max_batch"):
            _bench_grid(max_batch)


@pytest.mark.parametrize("batch, plan, named", [
    (8, {"repeats": 3, "budget_s": 1800.0}, None), ("8", {"repeats": 100, "budget_s": 0.0}, None),
    (8, {}, None), (8, {"repeats": 0}, "benchmark_repeats: 0 is outside 1..100"),
    (8, {"repeats": 10 ** 9}, "benchmark_repeats: 1000000000 is outside 1..100"),
    (8, {"budget_s": float("inf")}, "benchmark_time_budget must be a finite number of seconds, not inf"),
    (8, {"budget_s": float("nan")}, "not nan"), (8, {"budget_s": -1.0}, "benchmark_time_budget: -1.0 s is outside"),
    (0, {}, "batch size: 0 is outside 1..4096"), (10 ** 9, {}, "batch size: 1000000000 is outside")])
def test_the_next_point_checks_its_counts_first(batch, plan, named):
    if named is None:
        assert _bench_next([], "baseline", batch, dict(plan, first_mode="baseline"))["measure"] is True
        return
    with pytest.raises(AnsibleFilterError) as refused:
        _bench_next([], "baseline", batch, dict(plan, first_mode="baseline"))
    assert named in str(refused.value)


def test_the_good_load_settings_pass_and_num_requests_defaults():
    assert limits.load(GOOD) == dict(GOOD, num_requests=32)
    assert limits.load(dict(GOOD, concurrency=4096, num_requests="1000000"))["num_requests"] == 1000000
    assert limits.load(dict(GOOD, timeout=0.001, sample_interval=0.01))["timeout"] == 0.001


@pytest.mark.parametrize("field, value, named", [
    ("concurrency", 0, "concurrency: 0 is outside 1..4096"), ("concurrency", -8, "concurrency: -8 is outside"),
    ("concurrency", 10 ** 9, "concurrency: 1000000000 is outside 1..4096"), ("concurrency", [4, 6], "not [4, 6]"),
    ("num_requests", 0, "num_requests: 0 is outside"), ("num_requests", 10 ** 7, "num_requests: 10000000 is outside"),
    ("max_new_tokens", 0, "max_new_tokens: 0"), ("input_len", 1 << 21, "input_len: 2097152"),
    ("timeout", 0, "timeout: 0 s must be above 0 and at most 604800 s"), ("timeout", -8, "timeout: -8 s must be above 0"),
    ("timeout", float("inf"), "timeout must be a finite number of seconds, not inf"),
    ("timeout", float("1e309"), "not inf"), ("timeout", "1e309", "not '1e309'"),
    ("timeout", float("nan"), "not nan"), ("timeout", [0, -8], "must be a number of seconds, not [0, -8]"),
    ("timeout", 10 ** 7, "must be above 0 and at most 604800 s"), ("timeout", True, "not True"),
    ("sample_interval", 0, "sample_interval: 0 s is outside 0.01..3600 s"),
])
def test_a_load_setting_out_of_bounds_is_refused_by_name(field, value, named):
    with pytest.raises(limits.BenchInputError) as refused:
        limits.load(dict(GOOD, **{field: value}))
    assert named in str(refused.value)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(-10 ** 12, 10 ** 12), st.text(max_size=12), st.booleans(), st.none(),
                 st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(-5, 5000), max_size=5)))
def test_concurrency_is_one_int_in_bounds_or_refused(value):
    try:
        got = limits.whole(value, "concurrency")
    except limits.BenchInputError as exc:
        assert str(exc).startswith("concurrency")
        return
    assert isinstance(got, int) and not isinstance(got, bool) and 1 <= got <= limits.MAX_CONCURRENCY
    assert got == (value if isinstance(value, int) else int(value.strip()))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 12, 10 ** 12),
                 st.text(max_size=12), st.lists(st.floats(), max_size=3)))
def test_a_timeout_is_a_finite_positive_number_in_bounds_or_refused(value):
    try:
        got = limits.seconds(value, "timeout")
    except limits.BenchInputError as exc:
        assert str(exc).startswith("timeout")
        return
    assert math.isfinite(got) and 0 < got <= limits.MAX_SECONDS


# ---- one worker pool, per-request deadlines and caps, against real local servers

class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def _serve(behaviour):
    """A local HTTP server answering every POST with ``behaviour(handler)``; yields its URL."""
    peak = {"now": 0, "max": 0}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                peak["now"] += 1
                peak["max"] = max(peak["max"], peak["now"])
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                behaviour(self.wfile)
            except OSError:
                pass
            finally:
                with lock:
                    peak["now"] -= 1
            if behaviour is _good:  # the end after the count: the client's next request may start on it
                self.wfile.write(b"data: [DONE]\n\n")

    server = _Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, "http://127.0.0.1:%d" % server.server_address[1], peak


def _good(out):
    for _event in range(3):
        out.write(b'data: {"text": "a", "meta_info": {"completion_tokens": 1}}\n\n')
        out.flush()
        time.sleep(0.01)


def _forever(out):
    while True:
        out.write(b'data: {"text": "a", "meta_info": {"completion_tokens": 1}}\n\n')
        out.flush()
        time.sleep(0.01)


def _endless_line(out):
    out.write(b"data: ")
    while True:
        out.write(b"x" * 65536)
        out.flush()


def _silent(out):
    out.write(b'data: {"text": "a", "meta_info": {"completion_tokens": 1}}\n\n')
    out.flush()
    time.sleep(60)


@pytest.mark.parametrize("behaviour, reason", [
    (_forever, "ran past its deadline"), (_silent, "ran past its deadline"),
    (_endless_line, "a line of the answer is longer than %d bytes" % sc.LINE_LIMIT)])
def test_a_hostile_stream_ends_the_request_failed_with_the_reason(behaviour, reason):
    server, url, _peak = _serve(behaviour)
    try:
        res, recs = bc.run_load(url, 2, 2, max_new_tokens=8, endpoint="generate", timeout=1.5)
    finally:
        server.shutdown()
    assert (res["completed"], res["failed"]) == (0, 2) and all(reason in r["error"] for r in recs)


def test_a_good_stream_beside_them_completes_and_the_pool_holds_concurrency():
    server, url, peak = _serve(_good)
    try:
        res, recs = bc.run_load(url, 3, 12, max_new_tokens=8, endpoint="generate", timeout=30)
    finally:
        server.shutdown()
    assert (res["completed"], res["failed"]) == (12, 0) and len(recs) == 12
    assert 1 <= peak["max"] <= 3


def test_an_answer_past_its_total_cap_is_ended():
    server, url, _peak = _serve(_forever)
    try:
        client = sc.Client(url)
        status, stream, _err = client.stream("/generate", {}, timeout=30, deadline=None)
        assert status == 200
        stream._total_limit = 1 << 16  # pylint: disable=protected-access  # the cap a Stream is made with
        with stream:
            got = sum(1 for _payload in stream.events())
    finally:
        server.shutdown()
    assert got > 0 and stream.error == "the answer is longer than 65536 bytes: ended"


def test_the_pool_never_starts_more_workers_than_the_cap(monkeypatch):
    made = []
    real = bc.ThreadPoolExecutor

    def counting(max_workers, **kwargs):
        made.append(max_workers)
        return real(max_workers=max_workers, **kwargs)
    monkeypatch.setattr(bc, "ThreadPoolExecutor", counting)
    monkeypatch.setattr(bc, "one_request", lambda *a, **k: {"start": 0.0, "end": 0.0, "ttft": None, "latency": 0.0,
                                                            "output_tokens": 0, "itl": [], "error": "x"})
    res, _recs = bc.run_load("http://127.0.0.1:9", 10 ** 9, 5000, endpoint="generate")
    assert made == [limits.MAX_CONCURRENCY] and res["failed"] == 5000
    bc.run_load("http://127.0.0.1:9", 7, 3, endpoint="generate")
    assert made[-1] == 3


# ---- a FIFO (or a link) as bench_serving's server log: refused by name, never waited on


@pytest.fixture
def log_dir(tmp_path):
    os.mkfifo(str(tmp_path / "fifo.json"))
    (tmp_path / "secret").write_text('{"stolen": true}')
    os.symlink(str(tmp_path / "secret"), str(tmp_path / "link.json"))
    return tmp_path


def test_a_fifo_or_a_link_as_the_server_log_is_named_and_a_log_is_tailed(log_dir):
    assert "is a FIFO" in bc.log_problem(str(log_dir / "fifo.json"))
    assert "is a symbolic link" in bc.log_problem(str(log_dir / "link.json"))
    assert bc.log_problem(str(log_dir / "not-yet.log")) is None
    log = log_dir / "server.log"
    log.write_text("old Decode batch, #running-req: 99\n")
    tail = bc.LogTail(str(log))
    with open(str(log), "a") as handle:
        handle.write("Decode batch. #running-req: 5\nDecode batch. #running-req: 7\nDecode batch. #running-")
    assert tail.read() == 7 and tail.read() is None
    assert bc.LogTail(str(log_dir / "fifo.json")).read() is None  # never opened for reading, never blocks
