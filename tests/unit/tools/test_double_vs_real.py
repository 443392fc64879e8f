# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang double held to real SGLang 0.5.15.post1, as captured on the H200 (docs/evidence/real-sglang-h200/).

Real SGLang is the referee: when these fail, the double changes, not the capture. Compared: the start-up stage
markers and their order, what /health answers while the server starts, and the names and shapes of /server_info,
/model_info and /v1/models. The double runs as real processes over real HTTP, as in test_sglang_double.py.
"""
import testpaths
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import stage_of
from netutil import free_port

REPO = testpaths.REPO
DOUBLE = os.path.join(REPO, "tools", "sglang_double")
REAL = os.path.join(REPO, "docs", "evidence", "real-sglang-h200", "run1", "base")
VERSION = "0.5.15.post1"
# The flags the real base server ran with (run1/base/result.json).
REAL_ARGS = ["--attention-backend", "triton", "--sampling-backend", "pytorch", "--grammar-backend", "none",
             "--disable-cuda-graph", "--enable-metrics", "--log-level", "info", "--mem-fraction-static", "0.3"]


def stages_in(text):
    """Stages in the order the log first reaches them (what server_ready follows)."""
    seen = []
    for line in text.replace("\r", "\n").splitlines():
        s = stage_of(line)
        if s is not None and s not in seen:
            seen.append(s)
    return seen


def health_states(path):
    """'refused', 503, 200, ... in the order /health went through them (consecutive repeats folded)."""
    out = []
    with open(path) as fh:
        for line in fh:
            h = json.loads(line)["health"]
            if isinstance(h, str):
                if "Refused" not in h:
                    continue  # timeouts and resets while the real server stopped at the end of the capture
                h = "refused"
            state = h
            if not out or out[-1] != state:
                out.append(state)
    return out


def _get(port, path, timeout=5):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, ConnectionError, socket.timeout) as exc:
        reason = getattr(exc, "reason", exc)
        return ("refused" if isinstance(reason, ConnectionRefusedError) else "error"), b""


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """One double started like the real base server; /health polled from the launch until 200."""
    tmp = tmp_path_factory.mktemp("double")
    port = free_port()
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE="0.3", SGLANG_DOUBLE_VERSION=VERSION,
               SGLANG_DOUBLE_SCENARIO="ready")
    log = open(str(tmp / "server.log"), "wb")
    proc = subprocess.Popen([sys.executable, "-m", "sglang.launch_server", "--model-path", "/models/llama-tiny",
                             "--host", "127.0.0.1", "--port", str(port)] + REAL_ARGS,
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    states, deadline = [], time.time() + 60
    while time.time() < deadline:
        status, _body = _get(port, "/health", timeout=2)
        if status != "error" and (not states or states[-1] != status):
            states.append(status)
        if status == 200:
            break
        time.sleep(0.05)
    try:
        yield {"port": port, "health": states, "log": str(tmp / "server.log")}
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_startup_stages_in_the_real_order(started):
    with open(os.path.join(REAL, "server.log"), encoding="utf-8", errors="replace") as fh:
        real = stages_in(fh.read())
    with open(started["log"], encoding="utf-8", errors="replace") as fh:
        double = stages_in(fh.read())
    assert real[-1] == "ready" and len(real) >= 6, real  # the capture itself is whole
    assert double == real


def test_health_while_starting_as_real(started):
    # Real: connection refused until uvicorn binds, 503 through the warm-up, then 200.
    real = health_states(os.path.join(REAL, "http.jsonl"))
    assert real == ["refused", 503, 200]
    assert started["health"] == real


def _keys(obj):
    return set(obj) if isinstance(obj, dict) else set()


@pytest.mark.parametrize("path,fixture", [("/server_info", "after_server_info.json"),
                                          ("/get_server_info", "after_get_server_info.json"),
                                          ("/model_info", "after_model_info.json"),
                                          ("/v1/models", "after_v1_models.json")])
def test_endpoint_names_and_shapes_as_real(started, path, fixture):
    with open(os.path.join(REAL, fixture)) as fh:
        real = json.load(fh)
    status, body = _get(started["port"], path)
    assert status == 200
    double = json.loads(body)
    assert sorted(_keys(real) - _keys(double)) == [], "keys real SGLang has and the double lacks"
    assert sorted(_keys(double) - _keys(real)) == [], "keys the double invents"
    for key in sorted(_keys(real)):
        r, d = real[key], double[key]
        if r is None or d is None:
            continue  # e.g. preferred_sampling_params: null on both unless set
        assert type(d) is type(r) or (isinstance(r, (int, float)) and isinstance(d, (int, float))), key
    if path.endswith("server_info"):
        r_int, d_int = real["internal_states"][0], double["internal_states"][0]
        # Private attributes of ServerArgs (_mx_config_cache, ...) leak into the real answer; nothing reads them.
        assert sorted(k for k in _keys(r_int) - _keys(d_int) if not k.startswith("_")) == []
        assert sorted(_keys(real["internal_states"][0]["memory_usage"])) == sorted(_keys(d_int["memory_usage"]))
    if path == "/v1/models":
        assert sorted(_keys(real["data"][0])) == sorted(_keys(double["data"][0]))
