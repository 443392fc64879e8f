# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready's HTTP source: rank 0's API through the one SGLang client (sglang/client.py). A TCP connect while
the port is closed, then the readiness endpoint (``/ready``, or ``/health`` on an SGLang without it) when due; once
ready, one real generation and the server's facts.

Fills the HTTP part of a verdicts.Snapshot (``PART``). Nothing answering is a status of None with the error kept.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import readiness_path
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

PORT_PROBE = 0.25       # TCP connect while the port is closed
VERIFY_TRIES = 3

# The snapshot fields this source writes, and no other.
PART = ("ready_hint_at", "health_path", "fast", "health", "health_error", "answered_early_seen")


class HttpSource:
    """``client``: the SGLang client (sglang/client.Client); ``params``: interval (how often the endpoint is asked),
    health_path; ``sleep`` between generation tries."""

    def __init__(self, params, client, sleep, state=None):
        self.client, self.sleep = client, sleep
        self.interval = params["interval"]
        self.h = state or {"status": None, "port_open": False, "last": None, "error": None,
                           "calls": 0, "ready_hint_at": None, "path": readiness_path(params), "asked": False}
        self._last_port_probe = -1e9

    def dump(self):
        return self.h

    def hint_ready(self, now):
        """The log said "fired up": remembered from the first time."""
        if self.h["ready_hint_at"] is None:
            self.h["ready_hint_at"] = now

    def remember_answered_early(self):
        """A 200 came before our server could answer (verdicts.answered_before_our_http): said at the deadline."""
        self.h["answered_early"] = True

    def health_path(self):
        """The readiness endpoint in use (None until an SGLang of unknown version answered once)."""
        return self.h["path"]

    def see(self, s, urgent):
        """Rank 0's readiness: the endpoint when due (at once when ``urgent``), or the log's "fired up" when a
        generation will prove it (``fast``); then fill the HTTP part."""
        s.ready_hint_at = self.h["ready_hint_at"]
        if not s.rank0:
            return
        s.fast = s.stage == "ready" and s.verify_generation
        s.health = 200 if s.fast else self._poll(s.now, urgent or (s.stage == "ready" and self.h["status"] != 200))
        s.health_error = self.h["error"]
        s.health_path = self.h["path"] or "/ready"
        s.answered_early_seen = bool(self.h.get("answered_early"))

    # -- the calls --------------------------------------------------------------------------------
    def request(self, method, path, body=None, timeout=30):
        """(status, parsed-or-text body, error string)."""
        return self.client.call(method, path, body, timeout=timeout)

    def port_open(self):
        return self.client.port_open()

    def _poll(self, now, urgent):
        """Probe the port, then the health endpoint (when due).  Return its status or None."""
        if not self.h["port_open"]:
            if now - self._last_port_probe < PORT_PROBE and not urgent:
                return None
            self._last_port_probe = now
            if not self.port_open():
                return None
            self.h["port_open"] = True
            self.h["last"] = None  # probe the endpoint right away
        if not urgent and self.h["last"] is not None and now - self.h["last"] < self.interval:
            return None
        self.h["last"] = now
        self.h["calls"] += 1
        timeout = gates.probe_timeout(self.interval)  # never under SGLang's own /health budget
        if self.h["path"] is None:
            # The version is unknown: /ready where the server has it, else /health (an SGLang before 0.5.20
            # answers 404 for a route it lacks; the answer is kept for the rest of the wait).
            st, _body, err = self.request("GET", "/ready", timeout=timeout)
            if st is not None:
                self.h["path"] = "/health" if st == 404 else "/ready"
        if self.h["path"] is not None:
            st, _body, err = self.request("GET", self.h["path"], timeout=timeout)
        self.h["status"], self.h["error"] = st, err
        if st is None:
            self.h["port_open"] = self.port_open()
        return st

    def verify_generation(self):
        """One real 1-token generation: (ok, {status, error})."""
        last = None
        for i in range(VERIFY_TRIES):
            st, body, err = self.request("POST", "/generate", {
                "text": "ping", "sampling_params": {"max_new_tokens": 1, "temperature": 0}}, timeout=60)
            if st == 404:  # not the native API: fall back to the server's own check
                st, body, err = self.request("GET", "/health_generate", timeout=60)
            ok = st == 200 and not (isinstance(body, dict) and body.get("error"))
            last = {"status": st, "error": err or (body if not ok else None)}
            if ok:
                return True, last
            if i + 1 < VERIFY_TRIES:
                self.sleep(1.0)
        return False, last

    def verify_chat(self, model=None):
        """One 1-token chat completion, the path OpenAI clients call (SGLang renders the chat template for it):
        (ok, {status, error}). One try: a template that does not render fails every time."""
        body = {"messages": [{"role": "user", "content": "ping"}], "max_tokens": 1, "temperature": 0}
        if model:
            body["model"] = model
        st, answer, err = self.request("POST", "/v1/chat/completions", body, timeout=60)
        ok = st == 200 and isinstance(answer, dict) and bool(answer.get("choices"))
        return ok, {"status": st, "error": None if ok else (answer if answer not in (None, "") else err)}

    def server_facts(self):
        """What the ready server says it serves: models, version, paths, TP, speculation and its accept length."""
        info = {}
        st, models, _err = self.client.models(timeout=10)
        if st == 200:
            info["models"] = models
            if info["models"]:
                info["served_model"] = info["models"][0]
        st, body, _err = self.client.server_info(timeout=10)
        if st == 200 and isinstance(body, dict):
            info["version"] = body.get("version")
            for k in ("model_path", "served_model_name", "tp_size", "speculative_algorithm",
                      "speculative_draft_model_path"):
                if k in body:
                    info[k] = body[k]
            accept = api.accept_length(body)
            if accept is not None:
                info["avg_spec_accept_length"] = accept
        return info
