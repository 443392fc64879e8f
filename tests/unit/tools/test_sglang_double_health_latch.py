# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The double's health latch, as SGLang 0.5.9-0.5.23 has it (entrypoints/http_server.py health_generate,
managers/tokenizer_manager.py): /health and /health_generate run a 1-token generation that passes on any output
within SGLANG_HEALTH_CHECK_TIMEOUT; a failure latches the server UnHealthy, so /ready answers 503 while the process
still serves, until a later check passes. A long prefill (the double's SGLANG_DOUBLE_PREFILL_TPS) emits nothing, as
a long chunked prefill does (sglang#22511). PACE 0.05: the default 20 s timeout is 1 s here."""
import signal
import threading
import time

import test_sglang_double

from ansible_collections.llmserve.sglang.plugins.module_utils.server import status
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client

run = test_sglang_double.run  # the double's fixture: one process tree per test, always reaped
LATCH_LINE = "Health check failed. Server couldn't get a response from detokenizer for last 20 seconds."
PREFILL_TPS = "1000"
LONG_PROMPT = list(range(6000))  # 6 s of prefill with no output, against a 1 s health timeout


def _long_prefill(r):
    """Start a request whose prefill holds the scheduler; returns the thread and its [status]."""
    out = []

    def send():
        try:
            out.append(r.get("/generate", data={"input_ids": LONG_PROMPT, "sampling_params": {"max_new_tokens": 2}},
                             timeout=60)[0])
        except OSError as exc:  # the server went away under it (the SIGTERM test)
            out.append(exc)
    t = threading.Thread(target=send)
    t.start()
    time.sleep(0.3)
    return t, out


def test_a_health_probe_during_a_long_prefill_latches_ready_until_a_later_check_passes(run):
    r = run(env={"SGLANG_DOUBLE_PREFILL_TPS": PREFILL_TPS})
    r.wait_event("ready")
    assert r.get("/ready")[0] == 200
    t, out = _long_prefill(r)
    assert r.get("/health", timeout=30)[0] == 503
    assert LATCH_LINE in r.stderr() and "last_heartbeat time: " in r.stderr()
    assert r.get("/ready")[0] == 503  # latched while the prefill still runs
    t.join(60)
    assert out == [200]  # the request that caused it was served
    assert r.get("/ready")[0] == 503  # and the latch outlives it: the process serves, /ready says no
    # roles/server's status (server_status) names it from /ready, /model_info and the log
    latch = status.read(Client("http://127.0.0.1:%d" % r.port), "/ready", log_path=r.err_path)["latch"]
    assert latch["latched"] and latch["serving"] and LATCH_LINE in latch["line"]
    assert r.get("/generate", data={"text": "x", "sampling_params": {"max_new_tokens": 2}})[0] == 200
    assert r.get("/health_generate", timeout=30)[0] == 200  # a later passing check lifts it
    assert r.get("/ready")[0] == 200
    assert status.read(Client("http://127.0.0.1:%d" % r.port), "/ready", log_path=r.err_path)["ready"]


def test_health_as_a_status_check_cannot_latch_but_health_generate_still_generates(run):
    r = run(env={"SGLANG_DOUBLE_PREFILL_TPS": PREFILL_TPS, "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "0"})
    r.wait_event("ready")
    t, _out = _long_prefill(r)
    assert r.get("/health", timeout=30)[0] == 200
    assert r.get("/ready")[0] == 200 and LATCH_LINE not in r.stderr()
    assert r.get("/health_generate", timeout=30)[0] == 503  # the path that always generates
    assert r.get("/ready")[0] == 503
    t.join(60)


def test_a_timeout_above_the_longest_prefill_passes_through_it(run):
    # 200 x PACE 0.05 = 10 s > the 6 s prefill: the check waits for the first output and passes
    r = run(env={"SGLANG_DOUBLE_PREFILL_TPS": PREFILL_TPS, "SGLANG_HEALTH_CHECK_TIMEOUT": "200"})
    r.wait_event("ready")
    t, _out = _long_prefill(r)
    assert r.get("/health_generate", timeout=60)[0] == 200
    assert r.get("/ready")[0] == 200 and "Health check failed" not in r.stderr()
    t.join(60)


def test_sigterm_on_a_latched_server_force_exits_without_draining(run):
    r = run(env={"SGLANG_DOUBLE_PREFILL_TPS": PREFILL_TPS})
    r.wait_event("ready")
    t, _out = _long_prefill(r)
    assert r.get("/health", timeout=30)[0] == 503
    r.proc.send_signal(signal.SIGTERM)
    assert r.proc.wait(30) == 1
    assert "Signal SIGTERM received while health check failed. Force exiting." in r.stderr()
    t.join(60)


def test_before_ready_health_is_503_and_nothing_latches(run):
    r = run(scenario="hang:warmup")
    r.wait_event("hang_start")
    assert r.get("/health")[0] == 503 and "Health check failed" not in r.stderr()
