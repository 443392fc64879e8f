# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench_client: statistics, SSE parsing, and a real run against the SGLang double on localhost."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils import bench_client as bc

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


def test_parse_event_chat_and_generate():
    assert bc.parse_event("chat", json.dumps({"choices": [{"delta": {"content": " tok"}}]})) == (True, None, None)
    assert bc.parse_event("chat", json.dumps({"choices": [], "usage": {"completion_tokens": 7}})) == (False, None, 7)
    assert bc.parse_event("generate", json.dumps({"text": " a", "meta_info": {"completion_tokens": 3}})) == (True, 3, None)
    with pytest.raises(RuntimeError):
        bc.parse_event("chat", json.dumps({"error": "boom"}))
    assert bc.accept_length_from_info({"internal_states": [{"avg_spec_accept_length": 3.2}]}) == 3.2
    assert bc.accept_length_from_info({"internal_states": [{}]}) is None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not os.path.isfile(os.path.join(DOUBLE, "sglang", "launch_server.py")), reason="no double")
@pytest.mark.parametrize("speculative", [False, True])
def test_real_double_rates_follow_its_model(speculative):
    perf = {"baseline": {"per_request_tps": 100, "saturation_tps": 250},
            "eagle3": {"per_request_tps": 160, "saturation_tps": 200, "accept_length": 3.2}}
    port = _free_port()
    argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", "/m", "--port", str(port)]
    if speculative:
        argv += ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d"]
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE="0.05", SGLANG_DOUBLE_PERF=json.dumps(perf))
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = "http://127.0.0.1:%d" % port
        for _attempt in range(100):
            try:
                if urllib.request.urlopen(url + "/health", timeout=2).status == 200:
                    break
            except Exception:  # pylint: disable=broad-except
                time.sleep(0.2)
        model = perf["eagle3" if speculative else "baseline"]
        one, _samples = bc.run_load(url, 1, 3, max_new_tokens=30)
        four, _samples = bc.run_load(url, 4, 8, max_new_tokens=30, endpoint="generate")
        assert one["failed"] == 0 and four["failed"] == 0
        assert one["median_per_request_tps"] == pytest.approx(model["per_request_tps"], rel=0.25)
        assert four["output_throughput"] == pytest.approx(
            min(4 * model["per_request_tps"], model["saturation_tps"]), rel=0.3)
        assert bc.server_accept_length(url) == (3.2 if speculative else None)
    finally:
        proc.terminate()
        proc.wait(10)
