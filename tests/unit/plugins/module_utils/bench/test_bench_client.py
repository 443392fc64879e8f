# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench_client: statistics, SSE parsing, and a real run against the SGLang double on localhost."""
import testpaths
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import client as bc

REPO = testpaths.REPO
DOUBLE = os.path.join(REPO, "tools", "sglang_double")


def test_percentile_matches_linear_interpolation():
    assert bc.percentile([], 50) is None
    assert bc.percentile([5], 99) == 5.0
    assert bc.percentile([1, 2, 3, 4], 50) == 2.5
    assert bc.percentile(list(range(101)), 99) == pytest.approx(99.0)


def test_summarize_counts_failures_and_rates():
    ok = {"error": None, "ttft": 0.1, "latency": 1.1, "output_tokens": 11, "itl": [0.1] * 10}
    bad = {"error": "HTTP 503", "ttft": None, "latency": 0.01, "output_tokens": 0, "itl": []}
    res = bc.summarize([ok, ok, bad], duration=2.0, concurrency=2)
    assert (res["completed"], res["failed"], res["errors"]) == (2, 1, ["HTTP 503"])
    assert res["output_throughput"] == pytest.approx(11.0)
    assert res["median_per_request_tps"] == pytest.approx(10.0)
    assert res["median_ttft_ms"] == pytest.approx(100.0)
    # two requests of 1.1 s each in 2 s: 1.1 in flight on average, 1.0 of it past the first token
    assert res["mean_in_flight"] == pytest.approx(1.1) and res["mean_decoding"] == pytest.approx(1.0)


def test_parse_event_chat_and_generate():
    assert bc.parse_event("chat", json.dumps({"choices": [{"delta": {"content": " tok"}}]})) == (True, None, None)
    assert bc.parse_event("chat", json.dumps({"choices": [], "usage": {"completion_tokens": 7}})) == (False, None, 7)
    assert bc.parse_event("generate", json.dumps({"text": " a", "meta_info": {"completion_tokens": 3}})) == (True, 3, None)
    with pytest.raises(RuntimeError):
        bc.parse_event("chat", json.dumps({"error": "boom"}))


def _peak_in_flight(records):
    events = sorted([(r["start"], 1) for r in records] + [(r["end"], -1) for r in records], key=lambda e: (e[0], e[1]))
    peak = now = 0
    for _t, step in events:
        now += step
        peak = max(peak, now)
    return peak


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _double(args=(), **env_extra):
    """The SGLang double on a free port, healthy; yields its URL and stops it afterwards."""
    port = _free_port()
    argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", "/m", "--port", str(port)] + list(args)
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE="0.05", **env_extra)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = "http://127.0.0.1:%d" % port
        for _attempt in range(100):
            try:
                if urllib.request.urlopen(url + "/health", timeout=2).status == 200:
                    break
            except Exception:  # pylint: disable=broad-except
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.skipif(not os.path.isfile(os.path.join(DOUBLE, "sglang", "launch_server.py")), reason="no double")
@pytest.mark.parametrize("speculative", [False, True])
def test_real_double_counts_every_token_and_times_consistently(speculative):
    """Deterministic: what the client counts and how its timings relate, not how fast the double was.

    Rates against the double's model are a benchmark's business (docs/benchmark.md, molecule scenario
    `benchmark`); here a broken client shows as wrong counts, missing chunks or timings out of order.
    """
    perf = {"baseline": {"per_request_tps": 400, "saturation_tps": 4000},
            "eagle3": {"per_request_tps": 800, "saturation_tps": 4000, "accept_length": 3.2}}
    spec = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d"] if speculative else []
    with _double(spec, SGLANG_DOUBLE_PERF=json.dumps(perf)) as url:
        one, one_recs = bc.run_load(url, 1, 3, max_new_tokens=30)
        four, four_recs = bc.run_load(url, 4, 8, max_new_tokens=30, endpoint="generate")
        for res, recs, num in ((one, one_recs, 3), (four, four_recs, 8)):
            assert (res["completed"], res["failed"], res["errors"]) == (num, 0, [])
            assert res["total_output_tokens"] == 30 * num
            # the double streams one chunk per token: 29 gaps per request, first chunk before the last
            assert all(r["output_tokens"] == 30 and len(r["itl"]) == 29 for r in recs)
            assert all(0 < r["ttft"] <= r["latency"] for r in recs)
            assert res["median_ttft_ms"] <= res["median_e2e_latency_ms"]
            assert res["output_throughput"] == pytest.approx(30 * num / res["duration"])
            assert res["median_per_request_tps"] > 0
        # closed loop: never more requests in flight than the concurrency (one thread's never overlap)
        assert _peak_in_flight(one_recs) == 1
        assert 2 <= _peak_in_flight(four_recs) <= 4
        # 8 x 30 + 3 x 30 tokens at 3.2 per step = 103 verify steps: past the 40-step interval, /server_info has it
        assert bc.server_accept_length(url) == (3.2 if speculative else None)


@pytest.mark.skipif(not os.path.isfile(os.path.join(DOUBLE, "sglang", "launch_server.py")), reason="no double")
def test_http_errors_are_counted_with_their_body():
    with _double(SGLANG_DOUBLE_SCENARIO="generate_fails") as url:
        res, _recs = bc.run_load(url, 2, 3, max_new_tokens=8, endpoint="generate")
        assert (res["completed"], res["failed"]) == (0, 3)
        assert res["errors"][0].startswith("HTTP 500") and "illegal memory access" in res["errors"][0]
        res, _recs = bc.run_load("http://127.0.0.1:%d" % _free_port(), 1, 1, max_new_tokens=8)
        assert res["failed"] == 1 and "Connection refused" in res["errors"][0]


# ---- the running batch (issue 34): /metrics and the decode log, beside the client's ceiling

def test_running_batch_is_the_largest_ranks_gauge():
    text = ('# HELP sglang:num_running_reqs x\nsglang:num_running_reqs{tp_rank="0"} 16.0\n'
            'sglang:num_running_reqs{tp_rank="1"} 15.0\nsglang:num_running_reqs_total 3\n')
    assert bc.running_batch(text) == 16.0
    assert bc.running_batch("sglang:num_running_reqs NaN\n") is None
    assert bc.running_batch("") is None and bc.running_batch(None) is None


def test_steady_running_leaves_ramp_up_and_drain_out():
    samples = [(0.5, 1.0), (1.5, 8.0), (4.0, 8.0), (5.0, 0.0), (6.0, 0.0), (7.0, 8.0), (8.5, 2.0), (9.5, 0.0)]
    assert bc.steady_running(samples, 10.0) == (8.0, 8.0, 3)  # idle moments between requests are no batch
    assert bc.steady_running([(5.0, 0.0)], 10.0) == (None, None, 0)
    assert bc.steady_running([(9.9, 3.0)], 10.0) == (3.0, 3.0, 1)  # nothing steady: every sample
    assert bc.steady_running([(1.0, None)], 10.0) == (None, None, 0)
    fields = bc.running_fields([(2.0, (7.0, 8)), (5.0, (7.0, None)), (6.0, (7.0, 8))], 10.0)
    assert (fields["running"], fields["running_source"], fields["running_metrics"]) == (8.0, "decode log", 7.0)
    fields = bc.running_fields([(2.0, (7.0, None))], 10.0)
    assert (fields["running"], fields["running_source"]) == (7.0, "metrics")
    assert bc.running_fields([], 10.0)["running_source"] is None


def test_log_tail_reads_only_new_whole_decode_lines(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[x] Decode batch, #running-req: 99, #token: 1\n")
    tail = bc.LogTail(str(log))
    assert tail.read() is None  # what was there before the load does not count
    with open(log, "a") as f:
        f.write("[x] Prefill batch, #new-seq: 4\n[x] Decode batch. #running-req: 12, #token: 9\n"
                "[x] Decode batch, #running-req: 16, #tok")
    assert tail.read() == 12  # the half-written line waits
    with open(log, "a") as f:
        f.write("en: 3\n")
    assert tail.read() == 16 and tail.read() is None
    log.write_text("[y] Decode batch, #running-req: 5, #token: 1\n")  # rotated: read from the start
    assert tail.read() == 5
    assert bc.LogTail(str(tmp_path / "missing.log")).read() is None


@pytest.mark.skipif(not os.path.isfile(os.path.join(DOUBLE, "sglang", "launch_server.py")), reason="no double")
def test_the_running_batch_is_sampled_from_the_double_and_capped_by_max_running_requests():
    perf = {"baseline": {"per_request_tps": 200, "saturation_tps": 100000}}
    with _double(["--enable-metrics", "--max-running-requests", "4"], SGLANG_DOUBLE_PERF=json.dumps(perf)) as url:
        client = bc.Client(url)
        res, _recs = bc.run_load(url, 8, 16, max_new_tokens=60, client=client, sample=bc.metrics_sampler(client),
                                 sample_interval=0.1)
    assert res["completed"] == 16 and res["running_source"] == "metrics"
    # the client kept 8 in flight, the server ran 4: the batch did not fill
    assert res["running_max"] == 4.0 and res["running"] <= 4.0 and res["mean_in_flight"] > 5
