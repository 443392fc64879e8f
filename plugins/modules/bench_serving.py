#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: bench_serving
short_description: Drive closed-loop load against an SGLang server and return bench_serving-style metrics
version_added: "0.1.0"
description:
  - Sends O(num_requests) streamed requests with at most O(concurrency) in flight to an SGLang server (or an
    sglang-router) and returns output throughput, per-request decode speed, TTFT, ITL, TPOT and latency
    statistics under the names C(sglang.bench_serving) uses.
  - With O(engine=sglang) (or O(engine=auto) when it runs there) runs SGLang's own
    C(sglang.benchmark.serving) / C(sglang.bench_serving) with the C(random-ids) dataset and reads its JSON line.
    Otherwise uses a built-in client (Python standard library, threads, streamed C(/v1/chat/completions) or
    C(/generate)). RV(result.engine) says which one ran and RV(result.engine_note) why.
  - With O(expect_mode), reads C(/server_info) first and refuses (nothing sent) when the server does not run
    what the mode means - speculative algorithm, draft, num_steps, adaptive - with the fix.
  - Reads the EAGLE accept length from C(/server_info) after the run.
  - With O(sample_running), samples the server's running batch every O(sample_interval) seconds while the load runs,
    from the decode log's C(#running-req) (O(server_log)), else C(sglang:num_running_reqs) from C(/metrics) (the
    largest rank's); RV(result.running) is the median in the steady middle of the run (None without either), beside
    the client's own ceiling (RV(result.mean_decoding), built-in client).
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_endpoint
options:
  concurrency:
    description: Requests in flight at once (the built-in client's worker pool), 1 to 4096.
    type: int
    default: 1
  num_requests:
    description: Requests to send in total (1 to 1000000). Default is C(max(4 * concurrency, 8)).
    type: int
  max_new_tokens:
    description: Output tokens per request (EOS ignored), 1 to 1048576.
    type: int
    default: 128
  input_len:
    description: Prompt length (words for the built-in client, tokens for SGLang's) of the synthetic load, 1 to 1048576.
    type: int
    default: 32
  prompts:
    description:
      - 'The user''s prompt set on this host instead of the synthetic load - a JSONL file, one object a line,
        C({"messages": [{"role": "user", "content": "..."}]}) (a chat conversation; a trailing assistant turn is the
        reply and is not sent) or C({"prompt": "..."}) - sent in one fixed shuffled order, each with its own length.'
      - Read as untrusted (no link followed, at most 64 MiB, 100000 lines of at most 1 MiB, 256 turns); a bad line
        fails the task before any load, naming its line number and field. Conversations need O(endpoint=chat); the
        built-in client sends the set (O(engine=auto) picks it, O(engine=sglang) is refused).
    type: path
  endpoint:
    description: API the built-in client uses.
    type: str
    choices: [chat, generate]
    default: chat
  model:
    description: C(model) field of chat requests.
    type: str
    default: default
  timeout:
    description:
      - Seconds one request may take, its streamed answer included (a finite number above 0, at most 604800). Past
        it the request ends and is counted failed with the reason; so does a streamed line over 1 MiB or an answer
        over 64 MiB.
    type: float
    default: 600
  engine:
    description:
      - C(builtin) the client of this collection; C(sglang) SGLang's own (fails when it does not run in
        O(sglang_python)); C(auto) SGLang's when C(python -m MODULE --help) exits 0 in O(sglang_python) (found
        but not importable, e.g. without C(datasets), does not count), else the built-in one.
    type: str
    choices: [auto, builtin, sglang]
    default: auto
  sglang_python:
    description: Python of the SGLang venv, used to look for and run SGLang's benchmark client.
    type: path
    default: /opt/sglang/venv/bin/python
  tokenizer:
    description: Tokenizer (model path) for SGLang's client.
    type: str
  expect_mode:
    description:
      - Benchmark mode the server must be running (C(baseline), C(eagle3), C(eagle3_steps1) and C(eagle3_steps2)
        (static EAGLE-3 on a 1- or 2-step chain), C(eagle3_adaptive), C(eagle3_threshold), C(applied),
        C(allreduce_nccl), C(allreduce_pcie_ipc)); checked against C(/server_info) before any load.
    type: str
    choices: [baseline, eagle3, eagle3_steps1, eagle3_steps2, eagle3_adaptive, eagle3_threshold, applied, allreduce_nccl,
      allreduce_pcie_ipc]
  expect_speculative:
    description: The C(server_speculative) the mode was launched with (algorithm, draft_model_path, num_steps).
    type: dict
    default: {}
  labels:
    description: Keys copied into the result as they are (e.g. C(mode) and C(repeat) of a benchmark grid).
    type: dict
    default: {}
  sample_running:
    description: Sample the server's running batch (decode log, C(/metrics)) while the load runs.
    type: bool
    default: true
  sample_interval:
    description: Seconds between two samples of the running batch (0.01 to 3600).
    type: float
    default: 0.25
  server_log:
    description:
      - The server's log on this host; the C(#running-req) of its C(Decode batch) lines written during the load gives
        the running batch (RV(result.running), source C(decode log)), C(/metrics) where it has none.
      - Read without following a link and without blocking; a FIFO, a device or a link in its place is refused before
        any load.
    type: path
  fail_on_errors:
    description: Fail when any request failed.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: In check mode no load is sent and RV(result) is empty.
  diff_mode:
    support: none
    description: Sends load and reports numbers; nothing on the host changes.
notes:
  - Target needs only the Python standard library.
"""

EXAMPLES = r"""
- name: Eight users at once, 256 tokens each
  llmserve.sglang.bench_serving:
    url: http://127.0.0.1:30000
    concurrency: 8
    num_requests: 32
    max_new_tokens: 256
  register: bench

- name: Through the router, built-in client
  llmserve.sglang.bench_serving:
    url: http://gateway:30000
    engine: builtin
    concurrency: 16
"""

RETURN = r"""
result:
  description: Metrics of the run (milliseconds and tokens/s).
  returned: always
  type: dict
  contains:
    concurrency: {description: Requests in flight., type: int}
    completed: {description: Requests that finished., type: int}
    failed: {description: Requests that failed., type: int}
    errors: {description: First few error messages., type: list, elements: str}
    duration: {description: Seconds from first request to last answer., type: float}
    output_throughput: {description: Generated tokens per second over the run., type: float}
    request_throughput: {description: Requests per second., type: float}
    median_ttft_ms: {description: Median time to first token., type: float}
    p99_ttft_ms: {description: 99th percentile time to first token., type: float}
    median_itl_ms: {description: Median gap between streamed chunks., type: float}
    p99_itl_ms: {description: 99th percentile gap between streamed chunks., type: float}
    median_per_request_tps: {description: Median decode speed one request saw (1000 / TPOT)., type: float}
    mean_decoding:
      description: Requests decoding at once, time-averaged (the client's ceiling; built-in client).
      type: float
    running:
      description: The server's running batch (median of the decode-log or C(/metrics) samples in the steady part of
        the run, idle samples left out); null without samples.
      type: float
    running_source:
      description: Where RV(result.running) comes from - C(decode log) or C(metrics); null without samples.
      type: str
    accept_length: {description: EAGLE accept length from /server_info; null without speculation., type: float}
    engine: {description: Client used (builtin or the SGLang module name)., type: str}
    load:
      description:
        - Which load was sent - C(kind) C(synthetic) (C(input_len)) or C(prompts) (C(file), C(entries),
          C(conversations), C(prompts), C(chars_median), C(chars_max)).
      type: dict
    engine_note:
      description: Why that client - for example that SGLang's does not run there, with its error.
      type: str
    server:
      description: What the server runs, from C(/server_info) (version, algorithm, draft_model_path, num_steps,
        adaptive, adaptive_config, disable_cuda_graph, cuda_graph_bs, cuda_graph_max_bs, ...); with O(expect_mode).
      type: dict
  sample:
    concurrency: 8
    completed: 32
    failed: 0
    output_throughput: 475.2
    median_per_request_tps: 59.8
    accept_length: null
    engine: builtin
"""

import json
import os
import tempfile
import threading
import time

from ansible.module_utils.basic import AnsibleModule

try:
    from urllib.parse import urlparse
except ImportError:  # pragma: no cover
    from urlparse import urlparse

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import limits, modes
from ansible_collections.llmserve.sglang.plugins.module_utils.bench import prompts as prompt_set
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.bench.client import (
    choose_engine, from_sglang_result, log_problem, metrics_sampler, run_load, running_fields, server_accept_length, server_info,
    sglang_bench_argv)
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client, endpoint_spec, key_problem


def main():
    module = AnsibleModule(
        argument_spec=endpoint_spec(
            concurrency=dict(type="int", default=1),
            num_requests=dict(type="int"),
            max_new_tokens=dict(type="int", default=128, no_log=False),
            input_len=dict(type="int", default=32),
            endpoint=dict(type="str", choices=["chat", "generate"], default="chat"),
            model=dict(type="str", default="default"),
            timeout=dict(type="float", default=600),
            engine=dict(type="str", choices=["auto", "builtin", "sglang"], default="auto"),
            sglang_python=dict(type="path", default="/opt/sglang/venv/bin/python"),
            tokenizer=dict(type="str", no_log=False),
            fail_on_errors=dict(type="bool", default=False),
            labels=dict(type="dict", default={}),
            expect_mode=dict(type="str", choices=list(modes.MODES)),
            expect_speculative=dict(type="dict", default={}),
            sample_running=dict(type="bool", default=True),
            sample_interval=dict(type="float", default=0.25),
            server_log=dict(type="path"),
            prompts=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if key_problem(p["api_key"]):  # before any request: http.client would quote the key into a traceback
        module.fail_json(msg=key_problem(p["api_key"]))
    try:  # numbers in their bounds before anything is sent (a worker pool of 10^9 threads, a timeout of inf)
        checked = limits.load(p)
    except limits.BenchInputError as exc:
        module.fail_json(msg=str(exc))
    p.update(checked)
    num = checked["num_requests"]
    why = log_problem(p["server_log"]) if p["server_log"] else None
    if why:  # a FIFO, a device or a link as the log: named before any load, never waited on
        module.fail_json(msg="server_log: %s" % why)
    entries, load = None, prompt_set.synthetic(p["input_len"])
    if p["prompts"]:
        # the user's file, read as untrusted before anything is sent: a bad line is a refusal naming line and field
        try:
            entries = prompt_set.read(p["prompts"])
        except (prompt_set.untrusted.Refused, OSError) as exc:
            module.fail_json(msg="prompts: %s" % exc)
        if p["endpoint"] != "chat" and any("messages" in e for e in entries):
            module.fail_json(msg="prompts: %s holds chat conversations: they need endpoint chat, not %s"
                             % (p["prompts"], p["endpoint"]))
        if p["engine"] == "sglang":
            module.fail_json(msg="prompts: engine sglang cannot send a prompt set: use engine builtin or auto")
        load = prompt_set.describe(entries, p["prompts"])
    if module.check_mode:
        module.exit_json(changed=False, result={})

    server = None
    try:
        client = Client(p["url"], p["api_key"])  # the one SGLang client, for /server_info before and after the load
    except ValueError as exc:
        module.fail_json(msg="url: %s" % exc)
    if p["expect_mode"]:
        base = p["url"].rstrip("/")
        try:
            server = modes.server_facts(server_info(base, timeout=30, client=client))
        except Exception as exc:  # pylint: disable=broad-except
            module.fail_json(msg="cannot read %s/server_info to check benchmark mode %s: %s"
                             % (base, p["expect_mode"], exc))
        why = modes.refusal(p["expect_mode"], p["expect_speculative"], server)
        if why:
            module.fail_json(msg=why, server=server)

    python = p["sglang_python"] if p["sglang_python"] and os.access(p["sglang_python"], os.X_OK) else None
    if entries is not None:
        engine, engine_note = "builtin", "a prompt set is given (prompts): the built-in client sends it"
    else:
        engine, engine_note = choose_engine(p["engine"], python, module_runner(module, timeout=180))
    if engine is None:
        module.fail_json(msg="engine=sglang: " + engine_note)

    sample = metrics_sampler(client, log_path=p["server_log"]) if p["sample_running"] else None
    if engine == "builtin":
        result, _records = run_load(p["url"], p["concurrency"], num, p["max_new_tokens"], p["input_len"],
                                    endpoint=p["endpoint"], model=p["model"], api_key=p["api_key"],
                                    timeout=p["timeout"], client=client, sample=sample,
                                    sample_interval=p["sample_interval"], prompts=entries)
    else:
        parsed = urlparse(p["url"])
        fd, out = tempfile.mkstemp(suffix=".jsonl")
        os.close(fd)
        try:
            argv = sglang_bench_argv(p["sglang_python"], engine, parsed.hostname, parsed.port or 80,
                                     p["concurrency"], num, p["max_new_tokens"], p["input_len"], out,
                                     p["tokenizer"])
            env = dict(os.environ)
            if p["api_key"]:
                env["OPENAI_API_KEY"] = p["api_key"]
            samples, stop, started = [], threading.Event(), time.monotonic()

            def sampler():
                while sample and not stop.wait(p["sample_interval"]):
                    try:
                        samples.append((time.monotonic() - started, sample()))
                    except Exception:  # pylint: disable=broad-except
                        samples.append((time.monotonic() - started, None))
            watcher = threading.Thread(target=sampler)
            watcher.daemon = True
            watcher.start()
            # the whole run within every round of requests at its timeout, and a margin; its group killed past that
            rounds = -(-num // p["concurrency"])
            rc, stdout, stderr = module_runner(module)(
                argv, environ_update=env, timeout=min(p["timeout"] * rounds + 600, limits.MAX_SECONDS))
            stop.set()
            watcher.join(timeout=5)
            if rc != 0:
                module.fail_json(msg="%s failed (rc %d)" % (engine, rc), stdout=stdout[-4000:],
                                 stderr=stderr[-4000:], cmd=argv)
            with open(out) as handle:
                lines = [line for line in handle if line.strip()]
            result = from_sglang_result(lines[-1], p["concurrency"])
            result.update(running_fields(samples, float(result.get("duration") or (time.monotonic() - started))))
        finally:
            os.unlink(out)

    if result.get("accept_length") is None:
        result["accept_length"] = server_accept_length(p["url"], client=client)
    result["engine"] = engine
    result["engine_note"] = engine_note
    result["load"] = load
    if server is not None:
        result["server"] = server
    result["max_new_tokens"] = p["max_new_tokens"]
    result["num_requests"] = num
    result.update(p["labels"])
    if p["fail_on_errors"] and result.get("failed"):
        module.fail_json(msg="%d of %d requests failed: %s" % (result["failed"], num, json.dumps(result["errors"])),
                         result=result)
    module.exit_json(changed=False, result=result)


if __name__ == "__main__":
    main()
