# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The double's /metrics against real SGLang, and every query of roles/monitoring against real metric names.

References (tests/fixtures/sglang_metrics/): the /metrics of a real SGLang 0.5.15.post1 server on an H200 after
traffic (capture-*), every family in the real 0.5.15.post1 and 0.5.23 wheels (source-*, tools/sglang_double/
gen_metric_table.py) and a scrape of the real sglang-router 0.3.2 with one worker down (router-*).
"""
import testpaths
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from netutil import free_port

REPO = testpaths.REPO
DOUBLE = os.path.join(REPO, "tools", "sglang_double")
FIX = os.path.join(REPO, "tests", "fixtures", "sglang_metrics")
RULES = os.path.join(REPO, "roles", "monitoring", "templates", "llmserve-sglang.rules.yml.j2")
DASHBOARD = os.path.join(REPO, "roles", "monitoring", "files", "grafana", "sglang.json")
SUFFIXES = {"histogram": ("_bucket", "_count", "_sum"), "summary": ("_count", "_sum")}
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$')


def parse(text):
    """Text format 0.0.4, strictly: {family: {"type", "labels": set of label-name tuples, "samples": [...]}}."""
    fams, cur = {}, None
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split(" ", 3)[2:]
            assert name not in fams, "family %s twice" % name
            cur = fams[name] = {"type": kind, "labels": set(), "samples": []}
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        name, labels, value = m.groups()
        float(value)  # NaN, +Inf and exponents included
        assert cur is not None and (name == cur_name(fams, cur) or name[len(cur_name(fams, cur)):]
                                    in SUFFIXES.get(cur["type"], ())), "%s outside its family" % name
        keys = tuple(sorted(k for k in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', labels or "") if k != "le"))
        cur["labels"].add(keys)
        cur["samples"].append((name, labels or "", float(value)))
    return fams


def cur_name(fams, cur):
    return next(n for n, f in fams.items() if f is cur)


def load(name):
    with open(os.path.join(FIX, name)) as f:
        return json.load(f)["metrics"] if name.endswith(".json") else parse(f.read())


class Double(object):
    def __init__(self, tmp_path, version, scenario="ready"):
        self.port = free_port()
        env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE="0.05", SGLANG_DOUBLE_SCENARIO=scenario,
                   SGLANG_DOUBLE_VERSION=version, SGLANG_DOUBLE_SHARDS="2")
        self.log = open(str(tmp_path / ("double-%s.log" % version)), "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sglang.launch_server", "--model-path", "/models/kimi", "--host", "127.0.0.1",
             "--port", str(self.port), "--enable-metrics", "--speculative-algorithm", "EAGLE3",
             "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 30
        while self.get("/health")[0] != 200:
            assert time.time() < deadline and self.proc.poll() is None, "double did not get ready"
            time.sleep(0.1)

    def get(self, path, data=None):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path),
                                     data=json.dumps(data).encode() if data is not None else None)
        try:
            r = urllib.request.urlopen(req, timeout=20)
            return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except (IOError, OSError):
            return None, ""

    def metrics(self):
        code, body = self.get("/metrics")
        assert code == 200
        return parse(body)

    def stop(self):
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()


@pytest.fixture
def double(tmp_path):
    started = []

    def start(version="0.5.23", scenario="ready"):
        d = Double(tmp_path, version, scenario)
        started.append(d)
        return d
    yield start
    for d in started:
        d.stop()


def value(fams, family, sample=None, **labels):
    total = None
    for name, lab, v in fams[family]["samples"]:
        if name == (sample or family) and all('%s="%s"' % kv in lab for kv in labels.items()):
            total = (total or 0.0) + v
    return total


def test_capture_is_consistent_with_the_real_source():
    # The capture and the source table agree on every family's type: the extractor reads SGLang right.
    cap, src = load("capture-0.5.15.post1-h200.txt"), load("source-0.5.15.post1.json")
    assert len(cap) == 64
    for name, fam in cap.items():
        assert name in src, name
        assert src[name]["type"] == fam["type"], name


def test_double_exposes_what_real_sglang_0_5_15_exposes(double):
    d = double()  # flags of 0.5.23 (no 0.5.15 flag table in the double); the metric families follow the capture
    d.get("/generate", {"text": "hi there", "sampling_params": {"max_new_tokens": 6}})
    cap = load("capture-0.5.15.post1-h200.txt")
    got = d.metrics()
    gone = {"sglang:engine_startup_time", "sglang:engine_load_weights_time"}  # not in 0.5.23's source
    assert set(got) == set(cap) - gone
    for name, fam in got.items():
        assert fam["type"] == cap[name]["type"], name
        if fam["samples"] and cap[name]["samples"]:
            assert fam["labels"] == cap[name]["labels"], name


@pytest.mark.parametrize("version", ["0.5.23", "0.5.10.post1"])
def test_double_families_exist_in_the_real_source_of_its_version(double, version):
    d = double(version)
    src = load("source-0.5.23.json" if version == "0.5.23" else "source-0.5.15.post1.json")
    for name, fam in d.metrics().items():
        assert name in src and src[name]["type"] == fam["type"], name


def test_double_counts_what_the_rules_read(double):
    d = double()
    before = d.metrics()
    assert d.get("/generate", {"text": "a b c", "sampling_params": {"max_new_tokens": 5}})[0] == 200
    chat = {"messages": [{"role": "user", "content": "x"}], "max_tokens": 3, "stream": True}
    code = d.get("/v1/chat/completions", chat)[0]
    assert code == 200
    after = d.metrics()
    assert value(after, "sglang:generation_tokens_total") - value(before, "sglang:generation_tokens_total") == 8
    assert value(after, "sglang:num_requests_total") - value(before, "sglang:num_requests_total") == 2
    ttft = "sglang:time_to_first_token_seconds"
    assert value(after, ttft, ttft + "_count") - value(before, ttft, ttft + "_count") == 2
    itl = "sglang:inter_token_latency_seconds"
    assert value(after, itl, itl + "_count") - value(before, itl, itl + "_count") == 4 + 2
    assert value(after, ttft, ttft + "_bucket", le="+Inf") == value(after, ttft, ttft + "_count")
    ok = dict(endpoint="/generate", status_code="200")  # the warm-up /generate counts too, as in real SGLang
    assert value(after, "sglang:http_responses_total", **ok) - value(before, "sglang:http_responses_total", **ok) == 1
    assert value(after, "sglang:spec_accept_length") > 1.0
    assert value(after, "sglang:spec_num_draft_tokens") == 4


def test_double_counts_failing_generation_while_health_is_200(double):
    d = double(scenario="generate_fails")
    assert d.get("/health")[0] == 200
    assert d.get("/generate", {"text": "x", "sampling_params": {"max_new_tokens": 2}})[0] == 500
    fams = d.metrics()
    assert value(fams, "sglang:http_responses_total", endpoint="/generate", status_code="500") >= 1
    assert value(fams, "sglang:http_responses_total", endpoint="/health", status_code="200") >= 1


def _referenced():
    with open(RULES) as f:
        rules = f.read()
    with open(DASHBOARD) as f:
        dash = json.load(f)
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dash["templating"]["list"] if "definition" in v]
    # The whole rules file: expressions, and the names that descriptions and runbooks point the reader to.
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', "\n".join(exprs + [rules]))  # label values are not metric names
    names = set(re.findall(r"\b([a-zA-Z_][a-zA-Z0-9_]*:[a-zA-Z0-9_][a-zA-Z0-9_:]*|smg_[a-z0-9_]+|up|ALERTS)\b", text))
    recorded = set(re.findall(r"- record: (\S+)", rules))
    return names, recorded


def test_every_query_names_a_real_metric(double):
    names, recorded = _referenced()
    cap = load("capture-0.5.15.post1-h200.txt")
    router = load("router-0.3.2-scrape.txt")
    served = double().metrics()
    checked = set()
    for n in sorted(names):
        if n in ("up", "ALERTS") or n in recorded:
            continue
        family = n
        if n.startswith("sglang:"):
            for suffix in ("_bucket", "_count", "_sum"):
                if n.endswith(suffix) and n[:-len(suffix)] in cap and cap[n[:-len(suffix)]]["type"] == "histogram":
                    family = n[:-len(suffix)]
            assert family in cap, "%s: not exposed by real SGLang 0.5.15.post1" % n
            assert family in served, "%s: not exposed by the double" % n
        else:
            assert n.startswith("smg_") and n in router, "%s: not exposed by real sglang-router 0.3.2" % n
        checked.add(family)
    # The test reads the rules and dashboard for real: the families the issue names are all there.
    assert {"sglang:generation_tokens_total", "sglang:time_to_first_token_seconds",
            "sglang:inter_token_latency_seconds", "sglang:num_running_reqs", "sglang:num_queue_reqs",
            "sglang:token_usage", "sglang:cache_hit_rate", "sglang:spec_accept_length",
            "sglang:http_responses_total", "smg_worker_health"} <= checked
    # Recording rules used by alerts exist.
    assert {"instance:sglang_ttft_seconds:p95", "instance:sglang_generate_errors:ratio",
            "instance:smg_worker_health:healthy"} <= recorded
