# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""/metrics of the double: the families, types, labels and buckets a real SGLang server exposes.

Real SGLang (prometheus_client in multiprocess mode) writes text format 0.0.4: counters are named with
``_total`` on their TYPE line, histograms expose ``_bucket{le=...}``, ``_sum`` and ``_count``. Scheduler
families carry ``model_name, engine_type, tp_rank, pp_rank, moe_ep_rank``; tokenizer families
``model_name, engine_type``; HTTP families (the FastAPI middleware) ``endpoint, method[, status_code]``.
tests/unit/roles/test_monitoring_metrics.py holds the double to the real names and types (source and capture).
"""
import os
import threading
import time

from sglang.version import at_least

TTFT_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
ITL_BUCKETS = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100,
               0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
E2E_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400)
QUEUE_BUCKETS = (0.0, 0.001, 0.005, 0.010, 0.050, 0.100, 0.200, 0.500, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70,
                 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000)
MAX_TOTAL_TOKENS = 412160  # what /server_info reports as max_total_num_tokens
TOKENS_PER_RUNNING_REQ = 1100  # the decode-batch line's #token per running request

TOKEN_BUCKETS = (100, 300, 500, 700, 1000, 1500, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000, 12500, 15000,
                 17500, 20000, 22500, 25000, 27500, 30000, 35000, 40000, 60000, 80000, 100000, 200000, 300000, 400000,
                 600000, 800000, 1000000, 1100000)
STAGE_BUCKETS = tuple(0.001 * 1.62 ** i for i in range(30))
ROUTING_KEY_BOUNDS = (0, 1, 2, 3, 5, 7, 10, 20, 50, 100, 200)
# Start-up gauges that 0.5.23 no longer has (tests/fixtures/sglang_metrics/source-0.5.23.json).
GONE_IN_0_5_23 = ("sglang:engine_startup_time", "sglang:engine_load_weights_time")

# Every family a real 0.5.15.post1 server exposes (tests/fixtures/sglang_metrics/capture-0.5.15.post1-h200.txt),
# in its order: (name on the TYPE line, type, help, label group). Label groups: "sched" = model_name, engine_type,
# tp_rank, pp_rank, moe_ep_rank; "tok" = model_name, engine_type; others as named.
FAMILIES = (
    ("sglang:max_total_num_tokens", "gauge", "Maximum total number of tokens in the KV cache pool.", "sched"),
    ("sglang:engine_startup_time", "gauge", "The time taken for the engine to start up.", "sched"),
    ("sglang:engine_load_weights_time", "gauge", "The time taken for the engine to load weights.", "sched"),
    ("sglang:page_size", "gauge", "KV cache page size in tokens.", "sched"),
    ("sglang:num_pages", "gauge", "Number of KV cache pages.", "sched"),
    ("sglang:context_len", "gauge", "Maximum context length.", "sched"),
    ("sglang:startup_available_gpu_memory_gb", "gauge", "Available GPU memory in GB at startup.", "sched"),
    ("sglang:num_running_reqs", "gauge", "The number of running requests.", "sched"),
    ("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", "sched"),
    ("sglang:num_grammar_queue_reqs", "gauge", "The number of requests in the grammar waiting queue.", "sched"),
    ("sglang:gen_throughput", "gauge", "The generation throughput (token/s).", "sched"),
    ("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate.", "sched"),
    ("sglang:decode_sum_seq_lens", "gauge", "The sum of all sequence lengths in decode.", "sched"),
    ("sglang:token_usage", "gauge", "The token usage.", "sched"),
    ("sglang:full_token_usage", "gauge", "The token usage for full attention layers.", "sched"),
    ("sglang:swa_token_usage", "gauge", "The token usage for SWA layers.", "sched"),
    ("sglang:mamba_usage", "gauge", "The token usage for Mamba layers.", "sched"),
    ("sglang:num_used_tokens", "gauge", "The number of used tokens.", "sched"),
    ("sglang:kv_available_tokens", "gauge", "Number of free token slots in the KV cache pool.", "sched"),
    ("sglang:kv_evictable_tokens", "gauge", "Number of evictable (radix-cached) token slots in the KV cache pool.", "sched"),
    ("sglang:kv_used_tokens", "gauge", "Number of actively used token slots in the KV cache pool.", "sched"),
    ("sglang:swa_available_tokens", "gauge", "Number of free token slots in the SWA pool (hybrid-SWA only).", "sched"),
    ("sglang:swa_evictable_tokens", "gauge", "Number of evictable (radix-cached) token slots in the SWA pool.", "sched"),
    ("sglang:swa_used_tokens", "gauge", "Number of actively used token slots in the SWA pool.", "sched"),
    ("sglang:mamba_available_tokens", "gauge", "Number of free state slots in the mamba SSM pool (hybrid-SSM only).", "sched"),
    ("sglang:mamba_evictable_tokens", "gauge", "Number of evictable (radix-cached) state slots in the mamba SSM pool.", "sched"),
    ("sglang:mamba_used_tokens", "gauge", "Number of actively used state slots in the mamba SSM pool.", "sched"),
    ("sglang:spec_accept_length", "gauge",
     "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).", "sched"),
    ("sglang:spec_accept_rate", "gauge", "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).", "sched"),
    ("sglang:spec_num_steps", "gauge", "Currently active speculative_num_steps.", "sched"),
    ("sglang:spec_num_draft_tokens", "gauge",
     "Currently active speculative_num_draft_tokens (decouples from steps under topk>1).", "sched"),
    ("sglang:num_prefill_bootstrap_queue_reqs", "gauge", "The number of requests in the prefill bootstrap queue.", "sched"),
    ("sglang:num_prefill_inflight_queue_reqs", "gauge", "The number of requests in the prefill inflight queue.", "sched"),
    ("sglang:num_decode_prealloc_queue_reqs", "gauge", "The number of requests in the decode prealloc queue.", "sched"),
    ("sglang:num_decode_transfer_queue_reqs", "gauge", "The number of requests in the decode transfer queue.", "sched"),
    ("sglang:pending_prealloc_token_usage", "gauge",
     "The token usage for pending preallocated tokens (not preallocated yet).", "sched"),
    ("sglang:utilization", "gauge", "The utilization.", "sched"),
    ("sglang:fwd_occupancy", "gauge", "Forward pass GPU occupancy percentage.", "sched"),
    ("sglang:new_token_ratio", "gauge", "The new token ratio.", "sched"),
    ("sglang:is_cuda_graph", "gauge", "Whether the batch is using CUDA graph.", "sched"),
    ("sglang:num_unique_running_routing_keys", "gauge", "Number of unique routing keys in running batch.", "sched"),
    ("sglang:routing_key_running_req_count", "gauge",
     "Distribution of routing keys by running request count (gt < count <= le).", "sched+gt_le"),
    ("sglang:routing_key_all_req_count", "gauge",
     "Distribution of routing keys by running+waiting request count (gt < count <= le).", "sched+gt_le"),
    ("sglang:cuda_graph_passes_total", "counter", "Total number of forward passes categorized by CUDA graph.", "sched+mode"),
    ("sglang:realtime_tokens_total", "counter", "Total number of tokens processed (updated on each log interval). "
     "mode: prefill_compute, prefill_cache, decode.", "sched+mode"),
    ("sglang:per_stage_req_latency_seconds", "histogram", "The latency of each stage of requests.", "sched+stage"),
    ("sglang:queue_time_seconds", "histogram", "Histogram of queueing time in seconds.", "sched"),
    ("sglang:routing_keys_active", "gauge", "Number of unique routing keys with active requests", "none"),
    ("sglang:http_requests_active", "gauge", "Number of currently active HTTP requests", "http"),
    ("sglang:time_to_first_token_seconds", "histogram", "Histogram of time to first token in seconds.", "tok"),
    ("sglang:e2e_request_latency_seconds", "histogram", "Histogram of End-to-end request latency in seconds", "tok"),
    ("sglang:prompt_tokens_histogram", "histogram", "Histogram of prompt token length.", "tok"),
    ("sglang:uncached_prompt_tokens_histogram", "histogram", "Histogram of uncached (compute) prompt token length.", "tok"),
    ("sglang:generation_tokens_histogram", "histogram", "Histogram of generation token length.", "tok"),
    ("sglang:inter_token_latency_seconds", "histogram", "Histogram of inter-token latency in seconds.", "tok"),
    ("sglang:process_cpu_seconds_total", "counter", "Total CPU time consumed by this process (user + system)", "component"),
    ("sglang:num_retracted_reqs", "gauge", "The number of retracted requests.", "sched+pid"),
    ("sglang:num_paused_reqs", "gauge", "The number of paused requests by async weight sync.", "sched+pid"),
    ("sglang:http_requests_total", "counter", "Total number of HTTP requests by endpoint and method", "http"),
    ("sglang:http_responses_total", "counter", "Total number of HTTP responses by endpoint and status code", "http+status"),
    ("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", "tok"),
    ("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", "tok"),
    ("sglang:num_requests_total", "counter", "Number of requests processed.", "tok"),
    ("sglang:cached_tokens_total", "counter", "Number of cached prompt tokens by source (device/host/storage).", "tok+cache"),
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
        self.started = time.time()
        self.hist = {"ttft": Histogram(TTFT_BUCKETS), "itl": Histogram(ITL_BUCKETS), "e2e": Histogram(E2E_BUCKETS),
                     "queue": Histogram(QUEUE_BUCKETS), "prompt": Histogram(TOKEN_BUCKETS),
                     "uncached": Histogram(TOKEN_BUCKETS), "gen": Histogram(TOKEN_BUCKETS)}
        self.stages = {"request_process": Histogram(STAGE_BUCKETS), "prefill_forward": Histogram(STAGE_BUCKETS)}
        self.requests = 0
        self.http_requests = {}   # (endpoint, method) -> n
        self.http_responses = {}  # (endpoint, status, method) -> n
        self.http_active = {}     # (endpoint, method) -> n in flight

    # ---- recording (called from the HTTP handlers)
    def request(self, prompt_tokens):
        return Request(self, prompt_tokens)

    def finished(self, req, n_tokens, e2e):
        with self.lock:
            self.requests += 1
            self.hist["queue"].observe(0.0)  # the double admits every request at once
            if req.first is not None:
                self.hist["ttft"].observe(req.first)
                self.stages["prefill_forward"].observe(req.first)
            self.stages["request_process"].observe(0.0005)
            for g in req.gaps:
                self.hist["itl"].observe(g)
            self.hist["e2e"].observe(e2e)
            self.hist["prompt"].observe(req.prompt_tokens)
            self.hist["uncached"].observe(req.prompt_tokens)
            self.hist["gen"].observe(n_tokens)

    def http_request(self, endpoint, method):
        with self.lock:
            self.http_requests[(endpoint, method)] = self.http_requests.get((endpoint, method), 0) + 1
            self.http_active[(endpoint, method)] = self.http_active.get((endpoint, method), 0) + 1

    def http_response(self, endpoint, method, status):
        key = (endpoint, str(status), method)
        with self.lock:
            self.http_responses[key] = self.http_responses.get(key, 0) + 1
            if self.http_active.get((endpoint, method), 0) > 0:
                self.http_active[(endpoint, method)] -= 1

    # ---- exposition
    def _values(self):
        e, a = self.state.engine, self.state.args
        spec = bool(getattr(e, "speculative", False))
        al = (e.accept_length() or 0.0) if spec else 0.0
        steps = int(a.get("speculative_num_steps") or 3) if spec else 0
        drafts = int(a.get("speculative_num_draft_tokens") or steps + 1) if spec else 0
        running = float(e.running)
        used = running * TOKENS_PER_RUNNING_REQ
        usage = min(used / MAX_TOTAL_TOKENS, 1.0)
        return {
            "sglang:max_total_num_tokens": MAX_TOTAL_TOKENS, "sglang:page_size": 1, "sglang:num_pages": MAX_TOTAL_TOKENS,
            "sglang:context_len": 262144, "sglang:startup_available_gpu_memory_gb": 96.03,
            "sglang:num_running_reqs": running, "sglang:num_queue_reqs": float(getattr(e, "queued", 0)),
            "sglang:gen_throughput": float(e.last_tps), "sglang:decode_sum_seq_lens": used,
            "sglang:token_usage": usage, "sglang:full_token_usage": usage, "sglang:num_used_tokens": used,
            "sglang:kv_available_tokens": MAX_TOTAL_TOKENS - used, "sglang:kv_used_tokens": used,
            "sglang:spec_accept_length": al,
            "sglang:spec_accept_rate": (al - 1.0) / (drafts - 1) if drafts > 1 else 0.0,
            "sglang:spec_num_steps": steps, "sglang:spec_num_draft_tokens": drafts,
            "sglang:new_token_ratio": 0.7, "sglang:is_cuda_graph": 1.0 if running else 0.0,
            "sglang:prompt_tokens_total": e.prompt_total, "sglang:generation_tokens_total": e.tokens_total,
            "sglang:num_requests_total": self.requests,
        }

    def render(self):
        e, model = self.state.engine, self.state.model
        tok = [("engine_type", "unified"), ("model_name", model)]
        sched = tok + [("moe_ep_rank", "0"), ("pp_rank", "0"), ("tp_rank", "0")]
        cpu = time.process_time()
        with self.lock:
            v = self._values()
            out = []
            for name, kind, help_, group in FAMILIES:
                if name in GONE_IN_0_5_23 and at_least("0.5.23"):
                    continue
                base = tok if group.startswith("tok") else sched if group.startswith("sched") else []
                if group == "sched+gt_le":
                    bounds = ROUTING_KEY_BOUNDS
                    samples = [(name, base + [("gt", str(g)), ("le", str(le))], 0.0)
                               for g, le in zip(bounds, bounds[1:] + ("+Inf",))]
                elif group == "sched+mode" and name == "sglang:cuda_graph_passes_total":
                    samples = [(name, base + [("mode", "decode_none")], float(e.tokens_total))]
                elif group == "sched+mode":
                    samples = [(name, base + [("mode", "prefill_compute")], float(e.prompt_total)),
                               (name, base + [("mode", "decode")], float(e.tokens_total))]
                elif group == "sched+stage":
                    samples = []
                    for stage in sorted(self.stages):
                        samples += _hist_samples(name, base + [("stage", stage)], self.stages[stage])
                elif kind == "histogram":
                    key = {"sglang:queue_time_seconds": "queue", "sglang:time_to_first_token_seconds": "ttft",
                           "sglang:e2e_request_latency_seconds": "e2e", "sglang:prompt_tokens_histogram": "prompt",
                           "sglang:uncached_prompt_tokens_histogram": "uncached",
                           "sglang:generation_tokens_histogram": "gen",
                           "sglang:inter_token_latency_seconds": "itl"}[name]
                    samples = _hist_samples(name, base, self.hist[key])
                elif group == "sched+pid":
                    samples = [(name, base + [("pid", str(os.getpid()))], 0.0)]
                elif group == "component":
                    samples = [(name, [("component", "detokenizer")], cpu / 4),
                               (name, [("component", "tokenizer")], cpu)]
                elif group == "http":
                    table = self.http_requests if kind == "counter" else self.http_active
                    samples = [(name, [("endpoint", p), ("method", m)], n) for (p, m), n in sorted(table.items())]
                elif group == "http+status":
                    samples = [(name, [("endpoint", p), ("method", m), ("status_code", st)], n)
                               for (p, st, m), n in sorted(self.http_responses.items())]
                elif group == "tok+cache":
                    samples = [(name, base + [("cache_source", "device")], 0.0)]
                else:
                    samples = [(name, base, v.get(name, 0.0))]
                out += _family(name, kind, help_, ["%s%s %s" % (n, _fmt_labels(sorted(lab)), _num(val))
                                                   for n, lab, val in samples])
        return "".join(line + "\n" for line in out)


def _family(name, kind, help_, samples):
    return ["# HELP %s %s" % (name, help_), "# TYPE %s %s" % (name, kind)] + samples


def _fmt_labels(pairs):
    return "{%s}" % ",".join('%s="%s"' % (k, str(v).replace("\\", "\\\\").replace('"', '\\"')) for k, v in pairs)


def _num(v):
    return repr(float(v))


def _hist_samples(name, labels, h):
    """Buckets, count and sum, labels in SGLang's (sorted) order; `le` as prometheus_client writes it."""
    out = [(name + "_bucket", labels + [("le", _num(b))], c) for b, c in zip(h.bounds, h.counts)]
    out.append((name + "_bucket", labels + [("le", "+Inf")], h.count))
    out.append((name + "_count", labels, h.count))
    out.append((name + "_sum", labels, h.sum))
    return out
