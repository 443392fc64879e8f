# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""/metrics of the double: the families, types, labels and buckets a real SGLang server exposes.

Real SGLang (prometheus_client in multiprocess mode) writes text format 0.0.4: counters are named with
``_total`` on their TYPE line, histograms expose ``_bucket{le=...}``, ``_sum`` and ``_count``. Scheduler
families carry ``model_name, engine_type, tp_rank, pp_rank, moe_ep_rank``; tokenizer families
``model_name, engine_type``; HTTP families (the FastAPI middleware) ``endpoint, method[, status_code]``.
tests/unit/test_monitoring_metrics.py holds the double to the real names and types (source and capture).
"""
import threading
import time

TTFT_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
ITL_BUCKETS = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100,
               0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
E2E_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400)
QUEUE_BUCKETS = (0.0, 0.001, 0.005, 0.010, 0.050, 0.100, 0.200, 0.500, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70,
                 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000)
MAX_TOTAL_TOKENS = 412160  # what /server_info reports as max_total_num_tokens
TOKENS_PER_RUNNING_REQ = 1100  # the decode-batch line's #token per running request

# (name on the TYPE line, type, help, label group). Scheduler gauges first, as SGLang registers them.
SCHEDULER_GAUGES = (
    ("sglang:num_running_reqs", "The number of running requests."),
    ("sglang:num_queue_reqs", "The number of requests in the waiting queue."),
    ("sglang:num_grammar_queue_reqs", "The number of requests in the grammar waiting queue."),
    ("sglang:gen_throughput", "The generation throughput (token/s)."),
    ("sglang:cache_hit_rate", "The prefix cache hit rate."),
    ("sglang:token_usage", "The token usage."),
    ("sglang:num_used_tokens", "The number of used tokens."),
    ("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool."),
    ("sglang:spec_accept_length", "The average acceptance length of speculative decoding."),
    ("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch)."),
    ("sglang:spec_num_steps", "Number of speculative decoding steps."),
    ("sglang:spec_num_draft_tokens", "Number of draft tokens per speculative verify."),
    ("sglang:num_retracted_reqs", "The number of retracted requests."),
    ("sglang:num_paused_reqs", "The number of paused requests by async weight sync."),
)
TOKENIZER_COUNTERS = (
    ("sglang:prompt_tokens_total", "Number of prefill tokens processed."),
    ("sglang:generation_tokens_total", "Number of generation tokens processed."),
    ("sglang:spec_verify_calls_total", "Number of speculative verify calls."),
    ("sglang:num_requests_total", "The number of requests."),
    ("sglang:num_aborted_requests_total", "Number of requests aborted."),
)
TOKENIZER_HISTOGRAMS = (
    ("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_BUCKETS, "ttft"),
    ("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ITL_BUCKETS, "itl"),
    ("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", E2E_BUCKETS, "e2e"),
)


class Histogram(object):
    def __init__(self, buckets):
        self.bounds = tuple(float(b) for b in buckets)
        self.counts = [0] * len(self.bounds)
        self.count, self.sum = 0, 0.0

    def observe(self, v):
        for i, b in enumerate(self.bounds):
            if v <= b:
                self.counts[i] += 1
        self.count += 1
        self.sum += v


class Request(object):
    """Timing of one generation: TTFT, inter-token gaps and end-to-end latency, as the tokenizer manager measures."""

    def __init__(self, metrics, prompt_tokens):
        self.m, self.prompt_tokens = metrics, prompt_tokens
        self.t0 = self.last = time.monotonic()
        self.first = None
        self.gaps = []

    def token(self, on_token=None):
        def tick(i):
            now = time.monotonic()
            if self.first is None:
                self.first = now - self.t0
            else:
                self.gaps.append(now - self.last)
            self.last = now
            if on_token:
                on_token(i)
        return tick

    def done(self, n_tokens):
        self.m.finished(self, n_tokens, time.monotonic() - self.t0)


class Metrics(object):
    def __init__(self, state):
        self.state = state
        self.lock = threading.Lock()
        self.hist = dict((key, Histogram(b)) for _, _, b, key in TOKENIZER_HISTOGRAMS)
        self.queue_time = Histogram(QUEUE_BUCKETS)
        self.requests = self.aborted = 0
        self.http_requests = {}   # (endpoint, method) -> n
        self.http_responses = {}  # (endpoint, status, method) -> n

    # ---- recording (called from the HTTP handlers)
    def request(self, prompt_tokens):
        return Request(self, prompt_tokens)

    def finished(self, req, n_tokens, e2e):
        with self.lock:
            self.requests += 1
            self.queue_time.observe(0.0)  # the double never queues: admitted at once
            if req.first is not None:
                self.hist["ttft"].observe(req.first)
            for g in req.gaps:
                self.hist["itl"].observe(g)
            self.hist["e2e"].observe(e2e)

    def http_request(self, endpoint, method):
        with self.lock:
            self.http_requests[(endpoint, method)] = self.http_requests.get((endpoint, method), 0) + 1

    def http_response(self, endpoint, method, status):
        key = (endpoint, str(status), method)
        with self.lock:
            self.http_responses[key] = self.http_responses.get(key, 0) + 1

    # ---- exposition
    def _labels(self, group):
        a, model = self.state.args, self.state.model
        base = [("model_name", model), ("engine_type", "unified")]
        if group == "scheduler":
            base += [("tp_rank", "0"), ("pp_rank", "0"), ("moe_ep_rank", "0")]
        return base

    def render(self):
        e = self.state.engine
        spec = bool(getattr(e, "speculative", False))
        al = (e.accept_length() or 0.0) if spec else 0.0
        steps = int(self.state.args.get("speculative_num_steps") or 3) if spec else 0
        drafts = int(self.state.args.get("speculative_num_draft_tokens") or steps + 1) if spec else 0
        running = float(e.running)
        used = running * TOKENS_PER_RUNNING_REQ
        queued = float(getattr(e, "queued", 0))
        gauges = {
            "sglang:num_running_reqs": running, "sglang:num_queue_reqs": queued, "sglang:num_grammar_queue_reqs": 0.0,
            "sglang:gen_throughput": float(e.last_tps), "sglang:cache_hit_rate": 0.0,
            "sglang:token_usage": min(used / MAX_TOTAL_TOKENS, 1.0), "sglang:num_used_tokens": used,
            "sglang:max_total_num_tokens": float(MAX_TOTAL_TOKENS),
            "sglang:spec_accept_length": al, "sglang:spec_accept_rate": (al - 1.0) / (drafts - 1) if drafts > 1 else 0.0,
            "sglang:spec_num_steps": float(steps), "sglang:spec_num_draft_tokens": float(drafts),
            "sglang:num_retracted_reqs": 0.0, "sglang:num_paused_reqs": 0.0,
        }
        with self.lock:
            counters = {
                "sglang:prompt_tokens_total": float(e.prompt_total),
                "sglang:generation_tokens_total": float(e.tokens_total),
                "sglang:spec_verify_calls_total": float(int(e.tokens_total / al)) if al else 0.0,
                "sglang:num_requests_total": float(self.requests),
                "sglang:num_aborted_requests_total": float(self.aborted),
            }
            out = []
            sl = _fmt_labels(self._labels("scheduler"))
            for name, help_ in SCHEDULER_GAUGES:
                out += _family(name, "gauge", help_, ["%s%s %s" % (name, sl, _num(gauges[name]))])
            tl = _fmt_labels(self._labels("tokenizer"))
            for name, help_ in TOKENIZER_COUNTERS:
                out += _family(name, "counter", help_, ["%s%s %s" % (name, tl, _num(counters[name]))])
            out += _family("sglang:queue_time_seconds", "histogram", "Histogram of queueing time in seconds.",
                           _hist_lines("sglang:queue_time_seconds", self._labels("scheduler"), self.queue_time))
            for name, help_, _, key in TOKENIZER_HISTOGRAMS:
                out += _family(name, "histogram", help_, _hist_lines(name, self._labels("tokenizer"), self.hist[key]))
            out += _family("sglang:http_requests_total", "counter",
                           "Total number of HTTP requests by endpoint and method",
                           ["sglang:http_requests_total%s %s" % (_fmt_labels([("endpoint", p), ("method", m)]),
                                                                 _num(n))
                            for (p, m), n in sorted(self.http_requests.items())])
            out += _family("sglang:http_responses_total", "counter",
                           "Total number of HTTP responses by endpoint and status code",
                           ["sglang:http_responses_total%s %s" % (
                               _fmt_labels([("endpoint", p), ("method", m), ("status_code", s)]), _num(n))
                            for (p, s, m), n in sorted(self.http_responses.items())])
        return "".join(line + "\n" for line in out)


def _family(name, kind, help_, samples):
    return ["# HELP %s %s" % (name, help_), "# TYPE %s %s" % (name, kind)] + samples


def _fmt_labels(pairs):
    return "{%s}" % ",".join('%s="%s"' % (k, str(v).replace("\\", "\\\\").replace('"', '\\"')) for k, v in pairs)


def _num(v):
    return repr(float(v))


def _hist_lines(name, labels, h):
    lines = []
    for b, c in zip(h.bounds, h.counts):
        lines.append("%s_bucket%s %s" % (name, _fmt_labels(labels + [("le", _num(b))]), _num(c)))
    lines.append("%s_bucket%s %s" % (name, _fmt_labels(labels + [("le", "+Inf")]), _num(h.count)))
    lines.append("%s_count%s %s" % (name, _fmt_labels(labels), _num(h.count)))
    lines.append("%s_sum%s %s" % (name, _fmt_labels(labels), _num(h.sum)))
    return lines
