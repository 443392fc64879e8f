# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does the speculative draft fit its target?  A short, bounded accept-length check.

Accept length = tokens emitted per target verify step (1.0 = no draft token ever accepted; EAGLE-3 with a matched
draft gives about 2.5-4).  Where SGLang reports it (read in the 0.5.15.post1 wheel):

- ``POST /generate`` ``meta_info.spec_verify_ct`` and ``completion_tokens`` of each finished request
  (``tokenizer_manager._calculate_spec_decoding_metrics``; ``spec_accept_length`` = completion / verify_ct).  Exact
  for the requests this check sends, so it is the first source.
- ``GET /server_info`` ``internal_states[i].avg_spec_accept_length`` (``scheduler.get_internal_state``): the total
  since start, but only folded in when a decode log line is printed (every ``--decode-log-interval`` = 40 decode
  steps), so a few short requests on a fresh server may not have produced it yet; absent until then.
- The decode log line ``Decode batch, ... accept len: 1.00, accept rate: 0.00, ...`` (same 40-step cadence).

Every request is bounded twice: a socket timeout, and a thread joined with a deadline, so a request SGLang never
finishes (seen on 0.5.15.post1 with a random draft: one request unfinished for over 30 s while ``/health`` was 200
and ``/server_info`` timed out behind it) is reported as a stall instead of hanging the play.
"""

from __future__ import annotations

import json
import re
import threading
import time

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import MIN_ACCEPT_LENGTH, accept_length
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import SERVER_INFO_PATHS, Client
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import read_tail

DEFAULT_PROMPTS = (
    "Explain in plain words how a hash table handles collisions.",
    "Write a short Python function that returns the n-th Fibonacci number, with a docstring.",
    "List the planets of the solar system in order from the sun, one line each, with one fact about each.",
    "Summarise the causes of the French Revolution in a few sentences.",
)
ACCEPT_LINE = re.compile(r"accept len: ([0-9]+(?:\.[0-9]+)?)")
LOG_TAIL_BYTES = 256 * 1024

REMEDY = (
    "the draft does not fit the target. Check, in this order: (1) the draft was trained for THIS target model and "
    "revision (an EAGLE-3 head for another model, or for the base instead of the instruct variant, accepts almost "
    "nothing); (2) draft and target share the tokenizer and vocabulary (draft_vocab_size and the d2t/t2d maps of "
    "the draft, the target's tokenizer files); (3) num_steps / eagle_topk / num_draft_tokens are what the draft was "
    "published with (num_draft_tokens = num_steps + 1 with eagle_topk 1). Until then speculation costs throughput: "
    "set server_speculative.algorithm to '' to serve without it"
)
STALL_REMEDY = (
    "a generation did not finish within its bound while the server was up. With speculative decoding on, a draft "
    "that does not fit its target (accept length near 1) can slow requests this much; look at the decode log "
    "('accept len'), and compare with a launch without speculation (server_speculative.algorithm: '')"
)


class _Net(object):
    """The check's calls over the one SGLang client (sglang/client.py): an HTTP error or a body that is not JSON
    becomes the error text; /server_info falls back to /get_server_info."""

    def __init__(self, client):
        self.client = client

    def call(self, method, path, body=None, timeout=10.0):
        """(status, parsed json or None, error text or None); never raises."""
        if path == SERVER_INFO_PATHS[0]:
            status, js, err = self.client.server_info(timeout=timeout)
        else:
            status, js, err = self.client.call(method, path, body, timeout=timeout)
        if status is None:
            return None, None, err
        if status >= 400:
            text = js if isinstance(js, str) else json.dumps(js)
            return status, None, "HTTP %d: %s" % (status, text[:300])
        if isinstance(js, str):
            return status, None, "not JSON: %r" % js[:120]
        return status, js, None

    def bounded(self, method, path, body, timeout):
        """call() in a thread joined for at most timeout (+1 s): (status, json, error, seconds, finished)."""
        box = {}

        def run():
            box["r"] = self.call(method, path, body, timeout)

        t0 = time.time()
        t = threading.Thread(target=run, name="spec-check")
        t.daemon = True
        t.start()
        t.join(timeout + 1.0)
        took = time.time() - t0
        if "r" not in box:
            return None, None, "no answer within %.0f s" % timeout, took, False
        status, js, err = box["r"]
        if err and ("timed out" in err.lower() or "timeout" in err.lower()):
            return None, None, "no answer within %.0f s" % timeout, took, False
        return status, js, err, took, True


def log_accept_lengths(text, last=20):
    """The accept-len values of the last `last` decode lines of a log text."""
    vals = [float(m.group(1)) for m in ACCEPT_LINE.finditer(text)]
    return vals[-last:]


def read_log_tail(path, size=LOG_TAIL_BYTES):
    """The log's last ``size`` bytes (sglang/log.read_tail: a link or a FIFO is never read), or None."""
    return read_tail(path, size)


def meta_accept(meta):
    """(completion_tokens, verify_ct) of one finished request's meta_info, or None without spec fields."""
    if not isinstance(meta, dict):
        return None
    ct, verify = meta.get("completion_tokens"), meta.get("spec_verify_ct")
    if isinstance(ct, int) and isinstance(verify, (int, float)) and verify > 0:
        return ct, float(verify)
    return None


def verdict(result, floor):
    """Fill status, ok and msg of a result from its measurements (pure; unit-tested)."""
    al, source = None, None
    for key in ("generate", "server_info", "log"):
        v = result["sources"].get(key)
        if v is not None:
            al, source = v, key
            break
    result["accept_length"] = None if al is None else round(al, 3)
    result["source"] = source
    result["min_accept_length"] = floor
    stalled = [r for r in result["requests"] if not r["finished"]]
    failed = [r for r in result["requests"] if r["finished"] and r.get("error")]
    if stalled:
        first = stalled[0]
        result["status"] = "stalled"
        result["msg"] = (
            "speculative accept-length check: request %d did not finish within %.0f s (/health %s, /server_info %s)%s; "
            "%s" % (first["index"], first["seconds"], result.get("health") or "?", result.get("server_info") or "?",
                    "; accept length so far %.2f (%s)" % (al, source) if al is not None else "", STALL_REMEDY))
    elif al is None and result.get("speculative") is False:
        result["status"] = "off"
        result["msg"] = "speculative decoding is off on this server (/server_info speculative_algorithm is empty)"
    elif al is not None and al < floor:
        result["status"] = "low"
        result["msg"] = (
            "speculative accept length %.2f (from %s) is below the floor %.2f (server_spec_min_accept_length): %s"
            % (al, source, floor, REMEDY))
    elif al is not None:
        result["status"] = "ok"
        result["msg"] = "speculative accept length %.2f (from %s), floor %.2f" % (al, source, floor)
    elif failed:
        result["status"] = "error"
        result["msg"] = "speculative accept-length check: generation failed: %s" % failed[0]["error"]
    else:
        result["status"] = "unknown"
        result["msg"] = (
            "speculative accept-length check: no accept length from /generate meta_info, /server_info or the decode "
            "log (is speculative decoding on? does this SGLang report spec_verify_ct?)")
    result["ok"] = result["status"] in ("ok", "off")
    return result


def check(url, api_key=None, requests=3, max_new_tokens=48, request_timeout=30.0, info_timeout=10.0,
          min_accept_length=MIN_ACCEPT_LENGTH, log_path=None, prompts=DEFAULT_PROMPTS, clock=time.time, client=None):
    """Send `requests` greedy generations one after the other (stop at the first that does not finish), then read
    /server_info and the log.  Never raises on server trouble; returns the verdict() dict. ``client``: the SGLang
    client to ask (sglang/client.Client), else one for ``url`` and ``api_key``."""
    net = _Net(client or Client(url, api_key))
    t0 = clock()
    result = {"requests": [], "sources": {}, "url": url}
    tokens = verify = 0.0
    for i in range(int(requests)):
        body = {"text": prompts[i % len(prompts)],
                "sampling_params": {"max_new_tokens": int(max_new_tokens), "temperature": 0, "ignore_eos": True}}
        status, js, err, took, finished = net.bounded("POST", "/generate", body, float(request_timeout))
        rec = {"index": i + 1, "seconds": round(took, 2), "finished": finished, "status": status}
        if err:
            rec["error"] = err
        meta = (js or {}).get("meta_info") if isinstance(js, dict) else None
        pair = meta_accept(meta)
        if pair:
            rec["completion_tokens"], rec["spec_verify_ct"] = pair[0], pair[1]
            rec["accept_length"] = round(pair[0] / pair[1], 3)
            tokens += pair[0]
            verify += pair[1]
        result["requests"].append(rec)
        if not finished:
            break  # piling more work on a wedged scheduler only makes the report slower
    if verify:
        result["sources"]["generate"] = tokens / verify
    if result["requests"] and not result["requests"][-1]["finished"]:
        st, _js, err, _t, _f = net.bounded("GET", "/health", None, min(10.0, float(info_timeout)))
        result["health"] = str(st) if st is not None else (err or "no answer")
    st, js, err, _t, _f = net.bounded("GET", "/server_info", None, float(info_timeout))
    result["server_info"] = "200" if st == 200 else (("HTTP %s" % st) if st else (err or "no answer"))
    if st == 200 and isinstance(js, dict) and "speculative_algorithm" in js:
        result["speculative"] = bool(js.get("speculative_algorithm"))
    v = accept_length(js) if st == 200 else None
    if v is not None:
        result["sources"]["server_info"] = v
    if log_path:
        text = read_log_tail(log_path)
        vals = log_accept_lengths(text or "")
        if vals:
            result["sources"]["log"] = sum(vals) / len(vals)
            result["log_lines"] = vals
    result["elapsed"] = round(clock() - t0, 2)
    return verdict(result, float(min_accept_length))
