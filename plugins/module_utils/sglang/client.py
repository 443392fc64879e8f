# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one HTTP client of SGLang's API (standard library only: it runs on the target, inside modules).

What the collection asks a server: readiness (``/ready`` from 0.5.20, else ``/health``), its facts (``/server_info``,
``/get_server_info`` on versions that only have the old name), ``/generate``, ``/v1/models`` and ``/metrics``. Every
call returns ``(status, body, error)`` and never raises: ``body`` is the parsed JSON (or the text, cut), ``status``
None when nothing answered. The waiter's probe (ready/probe.py), the accept-length check (ready/spec_accept.py) and
the benchmark (bench/client.py) are given a client (kubernetes.core's waiter takes its client the same way), so a
test gives them one too, and a fix to how SGLang is asked is made once. sglang/api.py says what the answers mean.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import socket
import ssl

try:
    import http.client as httplib
except ImportError:  # pragma: no cover - Python 2 is not supported on targets
    import httplib  # noqa: F401

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover
    from urlparse import urlsplit  # noqa: F401

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

SERVER_INFO_PATHS = ("/server_info", "/get_server_info")
DEFAULT_URL = "http://127.0.0.1:30000"
# The options of every module of the action group `endpoint` (meta/runtime.yml: server_ready, spec_check,
# bench_serving), documented once by the doc fragment llmserve.sglang.server_endpoint; a module composes its
# argument spec as dict(ENDPOINT_SPEC, ...) (kubernetes.core's AUTH_ARG_SPEC habit).
ENDPOINT_SPEC = {
    "url": {"type": "str", "default": DEFAULT_URL},
    "api_key": {"type": "str", "no_log": True},
}


def endpoint_spec(**options):
    """A module's argument spec: a copy of :data:`ENDPOINT_SPEC` plus its own ``options``."""
    spec = dict((k, dict(v)) for k, v in ENDPOINT_SPEC.items())
    spec.update(options)
    return spec


BODY_LIMIT = 1 << 20  # answers the collection reads are small; a runaway one is cut, not buffered whole


class Client(object):
    """A server at ``url`` (``http(s)://host:port``), with ``api_key`` (Bearer) when given."""

    def __init__(self, url, api_key=None, validate_certs=True, body_limit=BODY_LIMIT):
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
        self.server_info_path = None  # learnt on the first answer: /server_info or /get_server_info

    # -- the one transport ----------------------------------------------------------------------------------------
    def _conn(self, timeout):
        if self.scheme == "https":
            ctx = ssl.create_default_context()
            if not self.validate_certs:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            return httplib.HTTPSConnection(self.host, self.port, timeout=timeout, context=ctx)
        return httplib.HTTPConnection(self.host, self.port, timeout=timeout)

    def call(self, method, path, body=None, timeout=10.0, parse=True):
        """``(status, body, error)``: JSON parsed when ``parse`` and it parses, else the text (cut to 500 characters
        when it is not JSON); error is a one-line reason when nothing answered."""
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer %s" % self.api_key
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        conn = self._conn(timeout)
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            r = conn.getresponse()
            raw = r.read(self.body_limit).decode("utf-8", "replace")
        # not ValueError: http.client raises it for a header no request can carry (a key with a newline), a bug of
        # the caller that must surface as the waiter's own error, naming where it broke
        except (OSError, socket.error, httplib.HTTPException, ssl.SSLError) as e:
            return None, None, "%s: %s" % (type(e).__name__, e)
        finally:
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

    def server_info(self, timeout=10.0):
        """``(status, body, error)`` of ``/server_info``, or ``/get_server_info`` where the new name is a 404."""
        paths = (self.server_info_path,) if self.server_info_path else SERVER_INFO_PATHS
        out = (None, None, "not asked")
        for path in paths:
            out = self.call("GET", path, timeout=timeout)
            if out[0] != 404:
                if out[0] == 200:
                    self.server_info_path = path
                return out
        return out

    def generate(self, body, timeout=60.0):
        return self.call("POST", "/generate", body, timeout=timeout)

    def models(self, timeout=10.0):
        """``(status, [model ids], error)`` from ``/v1/models``."""
        st, body, err = self.call("GET", "/v1/models", timeout=timeout)
        ids = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
        return st, ids, err

    def metrics(self, timeout=10.0):
        """``(status, Prometheus text, error)`` from ``/metrics``."""
        return self.call("GET", "/metrics", timeout=timeout, parse=False)
