# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one HTTP client of SGLang's API (standard library only: it runs on the target, inside modules).

What the collection asks a server: readiness (``/ready`` from 0.5.20, else ``/health``), its facts (``/server_info``,
``/get_server_info`` on versions that only have the old name; ``/model_info``, likewise ``/get_model_info``),
``/generate``, ``/v1/models``, ``/metrics``, and a streamed generation (``stream``: the load generator's transport).
Every call returns ``(status, body, error)`` and never raises: ``body`` is the parsed JSON (or the text, cut),
``status`` None when nothing answered. The waiter's probe (ready/probe.py), the accept-length check
(ready/spec_accept.py), the status read (server/status.py) and the benchmark (bench/client.py) are given a client
(kubernetes.core's waiter takes its client the same way), so a test gives them one too, and a fix to how SGLang is
asked is made once. sglang/api.py says what the answers mean.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time

import http.client as httplib
from urllib.parse import urlsplit

from ansible_collections.llmserve.sglang.plugins.module_utils.host import values
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

SERVER_INFO_PATHS = ("/server_info", "/get_server_info")
MODEL_INFO_PATHS = ("/model_info", "/get_model_info")
# roles/server's server_port default (defaults/main.yml; the view's DEFAULTS take it from here, a test holds them equal)
DEFAULT_PORT = 30000
DEFAULT_URL = "http://127.0.0.1:%d" % DEFAULT_PORT
# The options of every module of the action group `endpoint` (meta/runtime.yml: server_ready, spec_check, server_drift,
# bench_serving), documented once by the doc fragment llmserve.sglang.server_endpoint; a module composes its
# argument spec as dict(ENDPOINT_SPEC, ...) (kubernetes.core's AUTH_ARG_SPEC habit).
ENDPOINT_SPEC = {
    "url": {"type": "str", "default": DEFAULT_URL},
    "api_key": {"type": "str", "no_log": True},
}


def key_problem(api_key, name="api_key"):
    """None for an API key an Authorization header can carry, else why not - in words that never hold the key
    (http.client's own error quotes the header, key included, into a traceback)."""
    problem = values.text_problem(api_key)
    if not problem and isinstance(api_key, str) and any(ord(c) > 0xff for c in api_key):
        problem = "has a character outside Latin-1"
    if problem:
        return ("%s %s: no HTTP header can carry it; give the key on one line (a key read from a file keeps its "
                "trailing newline: | trim it)" % (name, problem))
    return None


def endpoint_spec(**options):
    """A module's argument spec: a copy of :data:`ENDPOINT_SPEC` plus its own ``options``."""
    spec = dict((k, dict(v)) for k, v in ENDPOINT_SPEC.items())
    spec.update(options)
    return spec


BODY_LIMIT = 1 << 20  # answers the collection reads are small; a runaway one is cut, not buffered whole
LINE_LIMIT = 1 << 20  # one line of a streamed answer (an SSE event of one chunk is a few hundred bytes)
STREAM_LIMIT = 64 << 20  # one streamed answer in all
TRANSPORT_ERRORS = (OSError, socket.error, httplib.HTTPException, ssl.SSLError)


def _reason(exc):
    return "%s: %s" % (type(exc).__name__, exc)


class Stream(object):
    """A streamed answer, read as it arrives: :meth:`events` yields the ``data:`` payload of each server-sent event
    up to ``[DONE]`` (SGLang ends both /generate and the OpenAI routes with it). It never raises: a transport that
    breaks, an answer that ends without ``[DONE]`` (a server that died mid-generation), one still streaming at
    ``deadline`` (``time.monotonic()``; its socket is shut then, so a server that streams forever or trickles a
    line never holds the reader), a line over ``line_limit`` bytes or an answer over ``total_limit`` bytes ends the
    events and sets :attr:`error`."""

    def __init__(self, conn, response, deadline=None, line_limit=LINE_LIMIT, total_limit=STREAM_LIMIT):
        self._conn, self._response = conn, response
        self._deadline, self._line_limit, self._total_limit = deadline, line_limit, total_limit
        self._expired = False
        self._seconds = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.error = None

    def _expire(self):
        self._expired = True
        try:
            self._conn.sock.shutdown(socket.SHUT_RDWR)
        except (AttributeError, OSError):
            pass

    def _past_deadline(self):
        return "the answer ran past its deadline (%.0f s): ended" % self._seconds

    def events(self):
        timer = None
        if self._deadline is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                self.error = self._past_deadline()
                return
            timer = threading.Timer(left, self._expire)
            timer.daemon = True
            timer.start()
        try:
            yield from self._payloads()
        finally:
            if timer is not None:
                timer.cancel()

    def _payloads(self):
        read = 0
        try:
            while True:
                raw = self._response.readline(self._line_limit + 1)
                if self._expired:
                    self.error = self._past_deadline()
                    return
                if not raw:
                    break
                read += len(raw)
                if len(raw) > self._line_limit:
                    self.error = "a line of the answer is longer than %d bytes: ended" % self._line_limit
                    return
                if read > self._total_limit:
                    self.error = "the answer is longer than %d bytes: ended" % self._total_limit
                    return
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    return
                yield payload
        except TRANSPORT_ERRORS as e:
            # the socket's own timeout can fire before the deadline's timer thread runs (a loaded host): past the
            # deadline, the deadline is the reason
            late = self._deadline is not None and time.monotonic() >= self._deadline
            self.error = self._past_deadline() if self._expired or late else _reason(e)
            return
        self.error = "the stream ended without [DONE]: the server closed it mid-answer"

    def close(self):
        self._response.close()
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Client(object):
    """A server at ``url`` (``http(s)://host:port``), with ``api_key`` (Bearer) when given."""

    def __init__(self, url, api_key=None, validate_certs=True, body_limit=BODY_LIMIT):
        if key_problem(api_key):
            raise ValueError(key_problem(api_key))
        parts = urlsplit(str(url).rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("%r is not an http(s)://HOST:PORT URL" % (url,))
        self.url = str(url).rstrip("/")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.api_key = api_key or None
        self.validate_certs = validate_certs
        self.body_limit = body_limit
        # learnt on the first answer: /server_info or /get_server_info, /model_info or /get_model_info
        self.server_info_path = None
        self.model_info_path = None
        self._ssl = None  # one TLS context per client: building one per request costs ~50 ms of CPU

    # -- the one transport ----------------------------------------------------------------------------------------
    def _conn(self, timeout):
        if self.scheme == "https":
            if self._ssl is None:
                ctx = ssl.create_default_context()
                if not self.validate_certs:
                    ctx.check_hostname = False
                    ctx.verify_mode = ssl.CERT_NONE
                self._ssl = ctx
            return httplib.HTTPSConnection(self.host, self.port, timeout=timeout, context=self._ssl)
        return httplib.HTTPConnection(self.host, self.port, timeout=timeout)

    def _send(self, method, path, body, timeout, accept):
        """``(connection, response)`` with the headers read; raises the transport's errors (the caller closes)."""
        headers = {"Accept": accept}
        if self.api_key:
            headers["Authorization"] = "Bearer %s" % self.api_key
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        conn = self._conn(timeout)
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            return conn, conn.getresponse()
        except BaseException:
            conn.close()
            raise

    def call(self, method, path, body=None, timeout=10.0, parse=True):
        """``(status, body, error)``: JSON parsed when ``parse`` and it parses, else the text (cut to 500 characters
        when it is not JSON); error is a one-line reason when nothing answered."""
        conn = None
        try:
            conn, r = self._send(method, path, body, timeout, "application/json")
            raw = r.read(self.body_limit).decode("utf-8", "replace")
        # not ValueError: http.client raises it for a header no request can carry (a key with a newline), a bug of
        # the caller that must surface as the waiter's own error, naming where it broke
        except TRANSPORT_ERRORS as e:
            return None, None, _reason(e)
        finally:
            if conn is not None:
                conn.close()
        if not parse:
            return r.status, raw, None
        try:
            return r.status, json.loads(raw) if raw else None, None
        except ValueError:
            return r.status, raw[:500], None

    def port_open(self, timeout=0.5):
        try:
            s = socket.create_connection((self.host, self.port), timeout=timeout)
        except (OSError, socket.error):
            return False
        s.close()
        return True

    # -- what the collection asks --------------------------------------------------------------------------------
    def readiness(self, path=None, version=None, timeout=gates.MIN_PROBE_TIMEOUT_S):
        """``(status, body, error, path)``: ``path`` when given, else the version's (sglang/gates.health_path);
        with neither, ``/ready`` and ``/health`` when the server has no ``/ready`` (404)."""
        path = path or (gates.health_path([version]) if version else None)
        if path:
            return self.call("GET", path, timeout=timeout) + (path,)
        st, body, err = self.call("GET", "/ready", timeout=timeout)
        if st == 404:
            return self.call("GET", "/health", timeout=timeout) + ("/health",)
        return st, body, err, ("/ready" if st is not None else None)

    def _renamed(self, learnt, paths, timeout):
        """GET the first of ``paths`` (a new name, then the old one) that is not a 404; the one that answered 200 is
        kept in attribute ``learnt`` and asked alone from then on."""
        out = (None, None, "not asked")
        for path in (getattr(self, learnt),) if getattr(self, learnt) else paths:
            out = self.call("GET", path, timeout=timeout)
            if out[0] != 404:
                if out[0] == 200:
                    setattr(self, learnt, path)
                return out
        return out

    def server_info(self, timeout=10.0):
        """``(status, body, error)`` of ``/server_info``, or ``/get_server_info`` where the new name is a 404."""
        return self._renamed("server_info_path", SERVER_INFO_PATHS, timeout)

    def model_info(self, timeout=10.0):
        """``(status, body, error)`` of ``/model_info``, or ``/get_model_info`` where the new name is a 404."""
        return self._renamed("model_info_path", MODEL_INFO_PATHS, timeout)

    def generate(self, body, timeout=60.0):
        return self.call("POST", "/generate", body, timeout=timeout)

    def stream(self, path, body, timeout=600.0, deadline=None):
        """POST ``body`` to ``path`` for a streamed answer (``"stream": true``: server-sent events).

        ``(200, Stream, None)`` to read the events from as they arrive (close it, or use it as a context manager;
        ``deadline``: the ``time.monotonic()`` its events end at, see :class:`Stream`);
        ``(status, text, None)`` when the server refused (the text cut to 200 characters); ``(None, None, error)``
        when nothing answered."""
        conn = None
        try:
            conn, r = self._send("POST", path, body, timeout, "text/event-stream")
            if r.status != 200:
                text = r.read(200).decode("utf-8", "replace").strip()
                conn.close()
                return r.status, text, None
        except TRANSPORT_ERRORS as e:
            if conn is not None:
                conn.close()
            return None, None, _reason(e)
        return r.status, Stream(conn, r, deadline=deadline), None

    def models(self, timeout=10.0):
        """``(status, [model ids], error)`` from ``/v1/models``."""
        st, body, err = self.call("GET", "/v1/models", timeout=timeout)
        ids = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
        return st, ids, err

    def metrics(self, timeout=10.0):
        """``(status, Prometheus text, error)`` from ``/metrics``."""
        return self.call("GET", "/metrics", timeout=timeout, parse=False)
