# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The waiter's own failures come back as a verdict that says what broke and where (never `None: None`),
with the API key blanked; a key no HTTP header can carry is refused before anything is probed."""
import http.client
import os
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import probe as probe_mod
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import read_http
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import BadInput, Waiter, error_result

KEY = "k\nport: 1"  # the fleet's case: a key with a newline


@pytest.mark.parametrize("key", [KEY, "abc\x00", "tab\there", "line\r"])
def test_a_key_with_a_control_character_is_refused_unshown(key):
    with pytest.raises(BadInput) as e:
        Waiter({"url": "http://127.0.0.1:9", "api_key": key})
    assert "api_key holds a control character" in str(e.value)
    assert key not in str(e.value) and repr(key)[1:-1] not in str(e.value)


def test_health_path_with_a_newline_is_refused():
    with pytest.raises(BadInput, match="health_path holds a control character"):
        Waiter({"url": "http://127.0.0.1:9", "health_path": "/ready\nX: y"})


def test_http_client_refusing_a_header_is_a_verdict_naming_it(tmp_path, monkeypatch):
    # The real http.client on the real header the fleet sent: the exception it raises must become a verdict.
    w = Waiter({"url": "http://127.0.0.1:9", "api_key": "good", "timeout": 30})
    w.p["api_key"] = w.probe.client.api_key = KEY  # as if it had slipped past the check (into the one client)
    conn = http.client.HTTPConnection("127.0.0.1", 9)
    with pytest.raises(ValueError) as raised:
        conn.putrequest("GET", "/")
        conn.putheader("Authorization", "Bearer %s" % KEY)
    monkeypatch.setattr(read_http.HttpSource, "port_open", lambda self: True)
    r = w.run()
    assert r["failed"] and r["reason"] == "error" and r["category"] == "unknown" and r["done"]
    assert type(raised.value).__name__ in r["msg"] and "Invalid header value" in r["msg"]
    assert "_send (client.py:" in r["msg"] and "putheader" in r["msg"]  # the client's frame that sent it
    assert "None: None" not in r["msg"]
    assert "port: 1" not in r["msg"] and "k\\nport" not in r["msg"] and "<api_key>" in r["msg"]
    assert "\n" not in r["msg"] and r["remedy"]


def test_any_exception_inside_a_poll_is_a_verdict(tmp_path, monkeypatch):
    log = tmp_path / "s.log"
    log.write_text("")
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        def broken(self, s):
            raise KeyError("stage")
        monkeypatch.setattr(probe_mod.Probe, "see_process", broken)
        r = Waiter({"url": "http://127.0.0.1:9", "log_path": str(log), "pid": p.pid}).run()
    finally:
        p.kill()
        p.wait()
    assert r["reason"] == "error" and r["msg"].startswith("server_ready failed in broken (test_ready_own_errors.py")
    assert "KeyError: 'stage'" in r["msg"] and r["stage"] == "starting"


def test_error_result_without_a_traceback():
    r = error_result(RuntimeError("boom"), {})
    assert r["msg"] == "server_ready failed while waiting: RuntimeError: boom"
    assert os.path.basename(__file__) not in r["msg"]
