# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""spec_accept: the accept-length check, on its parsing rules and against the SGLang double over real HTTP."""
import testpaths
import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from netutil import free_port
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import spec_accept as sa
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import accept_length

REPO = testpaths.REPO
DOUBLE = os.path.join(REPO, "tools", "sglang_double")
# The decode line of real SGLang 0.5.15.post1 on the H200 with a random EAGLE-3 draft (reference notes).
REAL_LINE = ("[2026-12-03 08:14:02] Decode batch, #running-req: 1, #token: 97, token usage: 0.00, accept len: 1.00, "
             "accept rate: 0.00, cuda graph: False, gen throughput (token/s): 23.41, #queue-req: 0,")


def test_log_lines_and_server_info_layouts():
    text = "\n".join([REAL_LINE.replace("1.00", "2.50", 1), "noise", REAL_LINE])
    assert sa.log_accept_lengths(text) == [2.5, 1.0]
    assert sa.log_accept_lengths("Decode batch, #running-req: 1, gen throughput (token/s): 9,") == []
    assert accept_length({"internal_states": [{"avg_spec_accept_length": 3.0},
                                              {"avg_spec_accept_length": 2.0}]}) == 2.5
    assert accept_length({"internal_states": [{"last_gen_throughput": 1.0}]}) is None
    assert accept_length(None) is None
    assert sa.meta_accept({"completion_tokens": 48, "spec_verify_ct": 15}) == (48, 15.0)
    assert sa.meta_accept({"completion_tokens": 48}) is None


def _result(sources, requests=()):
    return {"sources": dict(sources), "requests": list(requests)}


def test_verdict_prefers_the_checks_own_requests_and_names_the_remedy():
    r = sa.verdict(_result({"generate": 1.02, "server_info": 3.0}), 1.3)
    assert (r["status"], r["source"], r["accept_length"], r["ok"]) == ("low", "generate", 1.02, False)
    assert "trained for THIS target" in r["msg"] and "tokenizer" in r["msg"] and "num_steps" in r["msg"]
    r = sa.verdict(_result({"server_info": 3.2}), 1.3)
    assert (r["status"], r["source"], r["ok"]) == ("ok", "server_info", True)
    assert sa.verdict(_result({"log": 1.0}), 1.3)["status"] == "low"
    assert sa.verdict(_result({}), 1.3)["status"] == "unknown"
    err = {"index": 1, "seconds": 0.1, "finished": True, "error": "HTTP 500: boom"}
    assert sa.verdict(_result({}, [err]), 1.3)["status"] == "error"


def test_verdict_reports_a_stall_before_anything_else():
    stuck = {"index": 2, "seconds": 31.0, "finished": False, "error": "no answer within 30 s"}
    r = sa.verdict(dict(_result({"generate": 3.0}, [stuck]), health="200", server_info="no answer within 10 s"), 1.3)
    assert r["status"] == "stalled" and not r["ok"]
    assert "request 2 did not finish within 31 s (/health 200, /server_info no answer within 10 s)" in r["msg"]


class Double(object):
    def __init__(self, tmp_path, perf=None, args=()):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.log = str(tmp_path / "server.log")
        env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE="0.05")
        if perf:
            env["SGLANG_DOUBLE_PERF"] = json.dumps(perf)
        argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", "/m", "--port", str(self.port),
                "--decode-log-interval", "40"] + list(args)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(self.url + "/health", timeout=2).status == 200:
                    return
            except Exception:  # pylint: disable=broad-except
                time.sleep(0.1)
        raise AssertionError("double not ready: " + open(self.log).read()[-2000:])

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


SPEC = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d")
FAST = {"baseline": {"per_request_tps": 400, "saturation_tps": 4000},
        "eagle3": {"per_request_tps": 800, "saturation_tps": 2000, "accept_length": 3.2}}


@pytest.fixture
def double(tmp_path):
    made = []

    def start(perf=None, args=SPEC):
        d = Double(tmp_path, perf, args)
        made.append(d)
        return d
    yield start
    for d in made:
        d.stop()


def test_matched_draft_passes(double):
    d = double(FAST)
    r = sa.check(d.url, requests=3, max_new_tokens=48, min_accept_length=1.3, log_path=d.log)
    assert r["status"] == "ok", r
    assert r["source"] == "generate" and r["accept_length"] == pytest.approx(3.2, rel=0.05)
    assert [q["completion_tokens"] for q in r["requests"]] == [48, 48, 48]
    # 3 x 48 tokens at 3.2 per step = 45 verify steps: past the 40-step decode-log interval, so /server_info has it
    assert r["sources"]["server_info"] == pytest.approx(3.2)


def test_mismatched_draft_trips(double):
    d = double(dict(FAST, eagle3=dict(FAST["eagle3"], draft="mismatched")))
    r = sa.check(d.url, requests=3, max_new_tokens=48, min_accept_length=1.3, log_path=d.log)
    assert r["status"] == "low" and r["accept_length"] == pytest.approx(1.0)
    assert r["sources"]["server_info"] == pytest.approx(1.0)
    assert "draft does not fit the target" in r["msg"]


def test_a_stuck_generation_is_reported_within_its_bound(double):
    # The H200 case: one generation never finishes, /health answers 200, /server_info waits behind the batch.
    d = double(dict(FAST, eagle3=dict(FAST["eagle3"], stall_seconds=60)))
    # The request would finish after 60 s: "stalled" with it unfinished means the check gave up at its own bound.
    r = sa.check(d.url, requests=3, max_new_tokens=48, request_timeout=2, info_timeout=1)
    assert r["status"] == "stalled", r
    assert len(r["requests"]) == 1 and not r["requests"][0]["finished"]
    assert r["health"] == "200" and "no answer" in r["server_info"]


def test_a_server_without_speculation_says_off(double):
    d = double(FAST, args=())
    r = sa.check(d.url, requests=1, max_new_tokens=8)
    assert (r["status"], r["ok"], r["accept_length"]) == ("off", True, None)


def test_a_read_only_look_at_a_server_without_speculation_says_off(double):
    d = double(FAST, args=())
    r = sa.check(d.url, requests=0)
    assert (r["status"], r["ok"], r["requests"]) == ("off", True, [])


FIXTURES = os.path.join(REPO, "tests", "fixtures", "spec_check")


def test_real_0515_random_draft_reads_as_low():
    """Real SGLang 0.5.15.post1 on the H200, EAGLE-3 with a random draft (lead's capture, e2e_eagle3_ready)."""
    with open(os.path.join(FIXTURES, "server_info_0.5.15.post1_eagle3_random_draft.json")) as f:
        info = json.load(f)
    assert info["version"] == "0.5.15.post1" and info["speculative_algorithm"] == "EAGLE3"
    assert accept_length(info) == 1.0
    with open(os.path.join(FIXTURES, "server_0.5.15.post1_eagle3_random_draft.log")) as f:
        vals = sa.log_accept_lengths(f.read())
    assert vals and set(vals) == {1.0}
    r = sa.verdict({"sources": {"server_info": 1.0, "log": sum(vals) / len(vals)}, "requests": []}, 1.3)
    assert r["status"] == "low" and r["source"] == "server_info"
