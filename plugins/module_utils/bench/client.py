# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Closed-loop load generator for an SGLang server (or a router in front of several).

Standard library only (threads; the streamed requests go through the one SGLang client, sglang/client.Client.stream),
so it runs on a target host or on the controller.
It measures what ``sglang.bench_serving`` reports, under the same names:

- ``output_throughput`` (generated tokens/s over the whole run), ``request_throughput``;
- ``mean/median/p99_ttft_ms`` (time to the first streamed chunk);
- ``mean/median/p99_itl_ms`` (gaps between streamed chunks, as SGLang measures them: with speculative
  decoding one chunk can carry several tokens);
- ``mean/median/p99_tpot_ms`` ((e2e - ttft) / (tokens - 1)), ``median_e2e_latency_ms``;
- ``mean/median_per_request_tps`` (1000 / TPOT: the decode speed one user sees);
- ``completed``, ``failed``, ``errors`` (first few), ``duration``, ``concurrency``;
- ``mean_in_flight``, ``mean_decoding``: time-averaged requests in flight / past their first token (how much of
  ``concurrency`` the client really kept busy: the client's own ceiling);
- ``running``: the running batch the server reported while the load ran - the scheduler's own ``Decode batch ...
  #running-req: N`` lines of the server log when given (``running_log``), else ``sglang:num_running_reqs`` from
  ``/metrics`` (``running_metrics``, the largest rank's), sampled every ``sample_interval`` s; the median of the
  samples in the steady middle of the run, between STEADY[0] and STEADY[1] of its duration; ``running_source``,
  ``running_max``, ``running_samples``; None without either.

``accept_length`` comes from ``/server_info`` (the mean over DP ranks, module_utils/sglang/api.py), see
:func:`server_accept_length`.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.llmserve.sglang.plugins.module_utils.bench.prompts import order as prompt_order
from ansible_collections.llmserve.sglang.plugins.module_utils.bench.limits import MAX_CONCURRENCY
from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import accept_length
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client

ENDPOINTS = ("chat", "generate")
STEADY = (0.1, 0.8)  # the part of a run whose running-batch samples count (ramp-up and drain left out)
# One rank's sample of the running-requests gauge (Prometheus text 0.0.4, optional labels: tp_rank, dp_rank, ...).
_RUNNING = re.compile(r"(?m)^sglang:num_running_reqs(?:\{[^}]*\})? ([0-9.eE+-]+)\s*$")
_WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
          "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def percentile(values, pct):
    """Linear-interpolated percentile (numpy's default method); None for an empty list."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * (float(pct) / 100.0)
    low = int(math.floor(rank))
    high = min(low + 1, len(ordered) - 1)
    frac = rank - low
    return float(ordered[low] + (ordered[high] - ordered[low]) * frac)


def _mean(values):
    return float(sum(values)) / len(values) if values else None


def make_prompt(index, input_len):
    """A deterministic prompt of ``input_len`` words; different per request so no prefix cache is shared."""
    words = ["request-%d" % index]
    for i in range(max(0, int(input_len) - 1)):
        words.append(_WORDS[(index * 7 + i * 13) % len(_WORDS)])
    return " ".join(words)


def build_request(endpoint, prompt, max_new_tokens, model="default"):
    """Return (path, body) of one streamed request. ``prompt``: a text, or an entry of the user's prompt set
    (bench/prompts.py: ``{"prompt": text}`` or ``{"messages": [...]}``, a conversation the chat endpoint sends)."""
    messages = None
    if isinstance(prompt, dict):
        messages = prompt.get("messages")
        prompt = prompt.get("prompt", "")
    if messages is not None and endpoint != "chat":
        raise ValueError("chat conversations of a prompt set need endpoint chat, not %r" % endpoint)
    if endpoint == "generate":
        path = "/generate"
        body = {"text": prompt, "stream": True,
                "sampling_params": {"max_new_tokens": int(max_new_tokens), "temperature": 0.0,
                                    "ignore_eos": True}}
    elif endpoint == "chat":
        path = "/v1/chat/completions"
        body = {"model": model, "messages": messages or [{"role": "user", "content": prompt}],
                "max_tokens": int(max_new_tokens), "temperature": 0.0, "stream": True,
                "ignore_eos": True, "stream_options": {"include_usage": True}}
    else:
        raise ValueError("endpoint must be one of %s, not %r" % (", ".join(ENDPOINTS), endpoint))
    return path, body


def parse_event(endpoint, payload):
    """Read one SSE ``data:`` payload.

    Returns (has_output, tokens_so_far_or_None, usage_tokens_or_None).  ``has_output`` is true when the
    chunk carries generated text (it counts as an arrival for TTFT/ITL).
    """
    try:
        data = json.loads(payload)
    except ValueError:
        return False, None, None
    if not isinstance(data, dict):
        return False, None, None
    if "error" in data and data.get("error"):
        raise RuntimeError("server error in stream: %s" % (data["error"],))
    if endpoint == "generate":
        meta = data.get("meta_info") or {}
        tokens = meta.get("completion_tokens")
        return bool(data.get("text") is not None and tokens), tokens, None
    usage = data.get("usage") or {}
    usage_tokens = usage.get("completion_tokens")
    has_output = False
    for choice in data.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("reasoning_content"):
            has_output = True
    return has_output, None, usage_tokens


def one_request(client, endpoint, prompt, max_new_tokens, model="default", timeout=600.0):
    """Send one streamed request through ``client`` (sglang/client.Client); return a record with timings (seconds)
    or an ``error``."""
    path, body = build_request(endpoint, prompt, max_new_tokens, model)
    start = time.monotonic()
    record = {"start": start, "ttft": None, "latency": None, "output_tokens": 0, "itl": [], "error": None}
    arrivals = []
    tokens = None
    usage_tokens = None
    # the whole request within ``timeout``: a server streaming forever, or a line without end, ends it failed
    status, stream, error = client.stream(path, body, timeout=timeout, deadline=start + timeout)
    if status is None:
        record["error"] = error
    elif status != 200:
        record["error"] = "HTTP %s %s" % (status, stream)
    else:
        with stream:
            try:
                for payload in stream.events():
                    has_output, tok, utok = parse_event(endpoint, payload)
                    if tok is not None:
                        tokens = tok
                    if utok is not None:
                        usage_tokens = utok
                    if has_output:
                        arrivals.append(time.monotonic())
            except RuntimeError as exc:  # the server's error inside the stream
                record["error"] = "%s: %s" % (type(exc).__name__, exc)
        record["error"] = record["error"] or stream.error
    end = time.monotonic()
    record["latency"] = end - start
    if record["error"] is None and not arrivals:
        record["error"] = "no output in stream"
    if record["error"] is None:
        record["ttft"] = arrivals[0] - start
        record["itl"] = [b - a for a, b in zip(arrivals, arrivals[1:])]
        if usage_tokens is not None:
            record["output_tokens"] = int(usage_tokens)
        elif tokens is not None:
            record["output_tokens"] = int(tokens)
        else:
            record["output_tokens"] = len(arrivals)
    record["end"] = end
    return record


def running_batch(metrics_text):
    """The running batch from the text of ``GET /metrics``: the largest rank's ``sglang:num_running_reqs`` (each
    rank decodes its own batch; summing tensor-parallel ranks would count one batch several times); None without."""
    values = []
    for raw in _RUNNING.findall(metrics_text or ""):
        try:
            value = float(raw)
        except ValueError:
            continue
        if not math.isnan(value) and not math.isinf(value):
            values.append(value)
    return max(values) if values else None


_DECODE_RUNNING = re.compile(r"Decode batch\W.*?#running-req: (\d+)")


def open_log(path):
    """``(fd, stat)`` of the server log, opened through host/untrusted (no link followed, nothing that blocks: a FIFO
    or a device in its place is refused by name); raises untrusted.Refused."""
    folder, name = os.path.split(path)
    try:
        with untrusted.Tree(folder or ".") as tree:
            return tree.open(name, untrusted.WEIGHTS)  # only its new tail is read: no size cap on the file
    except untrusted.Refused as exc:
        raise untrusted.Refused(untrusted.printable(path), exc.what, exc.fix)


def log_problem(path):
    """Why the server log cannot be watched (not a regular file, a link, ...), or None; a log not there yet is
    no problem (the running batch then comes from /metrics)."""
    try:
        fd = open_log(path)[0]
    except untrusted.Refused as exc:
        return None if exc.what == "missing" else str(exc)
    os.close(fd)
    return None


class LogTail(object):
    """The server log's ``Decode batch ... #running-req: N`` lines written since it was opened (SGLang's scheduler
    prints one every --decode-log-interval decode steps: the batch it really decoded)."""

    def __init__(self, path, limit=1 << 20):
        self.path, self.limit, self.offset = path, limit, None
        try:
            fd, st = open_log(path)
            os.close(fd)
            self.offset = st.st_size
        except (untrusted.Refused, IOError, OSError):
            self.offset = None

    def read(self):
        """The largest running batch of the decode lines written since the last call; None without one."""
        if self.offset is None:
            return None
        try:
            fd, st = open_log(self.path)
            try:
                end = st.st_size
                if end < self.offset:  # rotated or truncated: start again from its beginning
                    self.offset = 0
                start = max(self.offset, end - self.limit)
                text = untrusted.read_exact(fd, start, end - start, self.path, short_ok=True).decode("utf-8", "replace")
            finally:
                os.close(fd)
            self.offset = end
        except (untrusted.Refused, IOError, OSError):
            return None
        cut = text.rfind("\n")  # a line still being written is read next time
        if cut < 0:
            self.offset -= len(text.encode("utf-8"))
            return None
        self.offset -= len(text[cut + 1:].encode("utf-8"))
        values = [int(n) for n in _DECODE_RUNNING.findall(text[:cut])]
        return max(values) if values else None


def steady_running(samples, duration):
    """(median, max, count) of the running-batch samples [(seconds since start, value)] in the steady part of a
    run; (None, None, 0) without samples. A sample of 0 is the server idle between two closed-loop requests (no decode
    step runs, SGLang prints no decode line): there is no batch to measure then, so it is left out."""
    vals = [v for t, v in samples if v and STEADY[0] * duration <= t <= STEADY[1] * duration]
    if not vals:
        vals = [v for _t, v in samples if v]
    if not vals:
        return None, None, 0
    return percentile(vals, 50), max(vals), len(vals)


def running_fields(samples, duration):
    """running, running_max, running_samples, running_source, running_log, running_metrics of a run's samples
    [(seconds since start, metrics value or (metrics value, decode-log value))]: the decode log's count (the batch
    the scheduler decoded) where it has one, /metrics otherwise."""
    metrics = [(t, v[0] if isinstance(v, tuple) else v) for t, v in samples or []]
    decode = [(t, v[1]) for t, v in samples or [] if isinstance(v, tuple)]
    out = {"running_metrics": steady_running(metrics, duration)[0], "running_log": steady_running(decode, duration)[0]}
    source = decode if out["running_log"] is not None else metrics
    out["running_source"] = ("decode log" if source is decode else "metrics") if out["running_log"] is not None or \
        out["running_metrics"] is not None else None
    out["running"], out["running_max"], out["running_samples"] = steady_running(source, duration)
    return out


def summarize(records, duration, concurrency, max_errors=5, samples=None):
    """Aggregate per-request records into bench_serving-style metrics (milliseconds, tokens/s); ``samples``: the
    running batch sampled during the run [(seconds since start, value)]."""
    ok = [r for r in records if r.get("error") is None]
    failed = [r for r in records if r.get("error") is not None]
    ttft = [r["ttft"] * 1000.0 for r in ok]
    itl = [gap * 1000.0 for r in ok for gap in r["itl"]]
    e2e = [r["latency"] * 1000.0 for r in ok]
    tpot = [(r["latency"] - r["ttft"]) * 1000.0 / (r["output_tokens"] - 1) for r in ok if r["output_tokens"] > 1]
    per_request_tps = [1000.0 / t for t in tpot if t > 0]
    total_out = sum(r["output_tokens"] for r in ok)
    duration = float(duration) if duration and duration > 0 else 0.0
    result = {
        "concurrency": int(concurrency),
        "completed": len(ok),
        "failed": len(failed),
        "errors": [r["error"] for r in failed[:max_errors]],
        "duration": duration,
        "total_output_tokens": total_out,
        "output_throughput": total_out / duration if duration else 0.0,
        "request_throughput": len(ok) / duration if duration else 0.0,
    }
    # Time-averaged number of requests in flight / decoding (past their first token): a starved client keeps fewer
    # than `concurrency` requests decoding, and the point then measures a smaller batch than its label says.
    if duration:
        result["mean_in_flight"] = sum(r["latency"] for r in ok) / duration
        result["mean_decoding"] = sum(r["latency"] - r["ttft"] for r in ok) / duration
    result.update(running_fields(samples, duration))
    for name, values in (("ttft_ms", ttft), ("itl_ms", itl), ("tpot_ms", tpot), ("e2e_latency_ms", e2e),
                         ("per_request_tps", per_request_tps)):
        result["mean_" + name] = _mean(values)
        result["median_" + name] = percentile(values, 50)
        result["p99_" + name] = percentile(values, 99)
    return result


def run_load(base_url, concurrency, num_requests, max_new_tokens=128, input_len=32, endpoint="chat",
             model="default", api_key=None, timeout=600.0, seed=0, client=None, sample=None, sample_interval=0.5,
             prompts=None):
    """Closed loop: a pool of ``concurrency`` workers (at most ``MAX_CONCURRENCY``), each sending its next request as
    soon as the previous ends, until ``num_requests`` were sent.  Returns (summary, records).

    ``prompts``: the user's prompt set (bench/prompts.read), sent in its fixed shuffled order (request i the
    entry order[i mod n]) with each entry's own length; else synthetic prompts of ``input_len`` words.

    ``client``: the SGLang client to send through (sglang/client.Client), else one for ``base_url`` and ``api_key``.
    One connection per request, as SGLang's own benchmark client opens them; each request ends by ``timeout``
    (s), its stream included. ``sample``: a callable returning the server's running batch (or None), called every
    ``sample_interval`` seconds while the load runs."""
    build_request(endpoint, "", 1)  # an unknown endpoint is refused before a thread starts
    sequence = prompt_order(len(prompts), seed) if prompts else None
    if prompts and endpoint != "chat" and any("messages" in e for e in prompts):
        build_request(endpoint, {"messages": []}, 1)  # refused before a thread starts, as above
    client = client or Client(base_url, api_key)
    concurrency = max(1, int(concurrency))
    num_requests = max(1, int(num_requests))
    workers = min(concurrency, num_requests, MAX_CONCURRENCY)

    def send(index):
        begun = time.monotonic()
        try:
            prompt = (prompts[sequence[index % len(sequence)]] if sequence
                      else make_prompt(seed * 100000 + index, input_len))
            return one_request(client, endpoint, prompt, max_new_tokens, model=model, timeout=timeout)
        except Exception as exc:  # pylint: disable=broad-except  # one request's surprise fails that request only
            now = time.monotonic()
            return {"start": begun, "end": now, "ttft": None, "latency": now - begun, "output_tokens": 0, "itl": [],
                    "error": "%s: %s" % (type(exc).__name__, exc)}

    samples = []
    done = threading.Event()

    def sampler():
        while not done.wait(sample_interval):
            try:
                value = sample()
            except Exception:  # pylint: disable=broad-except  # a missed sample is no reason to stop the load
                value = None
            samples.append((time.monotonic() - started, value))

    started = time.monotonic()
    watcher = threading.Thread(target=sampler, name="bench-sampler") if sample else None
    if watcher:
        watcher.daemon = True
        watcher.start()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bench") as pool:
        records = list(pool.map(send, range(num_requests)))
    duration = time.monotonic() - started
    done.set()
    if watcher:
        watcher.join(timeout=max(2 * sample_interval, 5.0))
    return summarize(records, duration, concurrency, samples=samples), records


def metrics_sampler(client, timeout=2.0, log_path=None):
    """A ``sample`` callable for run_load: the running batch from ``client``'s /metrics (None when it has none) and,
    with ``log_path``, from the server log's decode lines since the last sample: ``(metrics, decode log)``."""
    tail = LogTail(log_path) if log_path else None

    def sample():
        status, text, _err = client.metrics(timeout=timeout)
        got = running_batch(text if isinstance(text, str) else "") if status == 200 else None
        return (got, tail.read()) if tail else got
    return sample


def server_info(base_url, api_key=None, timeout=10.0, client=None):
    """``/server_info`` (``/get_server_info`` on old versions) as a dict; raises RuntimeError naming what failed.

    ``client``: the SGLang client to ask (sglang/client.Client), else one for ``base_url`` and ``api_key``."""
    client = client or Client(base_url, api_key)
    status, body, err = client.server_info(timeout=timeout)
    if status != 200 or not isinstance(body, dict):
        raise RuntimeError(err or "HTTP %s: %s" % (status, str(body)[:200]))
    return body


def server_accept_length(base_url, api_key=None, timeout=10.0, client=None):
    """EAGLE accept length from ``/server_info`` (``/get_server_info`` on old versions); None if absent."""
    try:
        return accept_length(server_info(base_url, api_key, timeout, client))
    except RuntimeError:
        return None


# ---------------------------------------------------------------- SGLang's own client (real deployments)

SGLANG_BENCH_MODULES = ("sglang.benchmark.serving", "sglang.bench_serving")  # 0.5.23 moved it


def choose_engine(requested, python, run, modules=SGLANG_BENCH_MODULES):
    """(engine, note): which client a run uses - ``builtin`` or the SGLang module name - and why.

    ``auto`` takes SGLang's client only when ``python -m MODULE --help`` exits 0 there: finding the module is not
    enough (0.5.15.post1's imports ``datasets``, which a serving venv may lack: every load point then failed).
    ``sglang`` fails (engine None) when no module runs. ``run(argv)`` returns (rc, stdout, stderr).
    """
    if requested == "builtin":
        return "builtin", "asked for"
    tried = []
    if python:
        for module in modules:
            rc, _out, err = run([python, "-m", module, "--help"])
            if rc == 0:
                return module, "%s runs in %s" % (module, python)
            last = [line for line in (err or "").strip().splitlines() if line.strip()]
            tried.append("%s: %s" % (module, last[-1] if last else "rc %s" % rc))
    else:
        tried.append("no python given")
    why = "SGLang's client does not run (%s)" % "; ".join(tried)
    if requested == "sglang":
        return None, why
    return "builtin", why + ": using the built-in client"


def sglang_bench_argv(python, module, host, port, concurrency, num_requests, max_new_tokens, input_len,
                      output_file, tokenizer=None):
    """argv for ``python -m sglang.bench_serving`` with a fixed-length random-ids workload."""
    argv = [python, "-m", module, "--backend", "sglang", "--host", str(host), "--port", str(port),
            "--dataset-name", "random-ids", "--random-input-len", str(int(input_len)),
            "--random-output-len", str(int(max_new_tokens)), "--random-range-ratio", "1",
            "--num-prompts", str(int(num_requests)), "--max-concurrency", str(int(concurrency)),
            "--output-file", output_file]
    if tokenizer:
        argv += ["--tokenizer", tokenizer]
    return argv


def from_sglang_result(line, concurrency):
    """Map one JSON line written by ``sglang.bench_serving --output-file`` to this module's result names."""
    data = json.loads(line)
    result = {"concurrency": int(concurrency), "errors": []}
    for key in ("completed", "duration", "output_throughput", "request_throughput", "accept_length",
                "total_output_tokens"):
        if key in data:
            result[key] = data[key]
    for name in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_latency_ms"):
        for stat in ("mean", "median", "p99"):
            key = "%s_%s" % (stat, name)
            if key in data:
                result[key] = data[key]
    for stat in ("mean", "median"):
        tpot = result.get("%s_tpot_ms" % stat)
        result["%s_per_request_tps" % stat] = 1000.0 / tpot if tpot else None
    result["p99_per_request_tps"] = None
    num = data.get("num_prompts") or data.get("completed")
    result["failed"] = max(0, int(num or 0) - int(data.get("completed") or 0))
    return result
