# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module that takes an API key keeps it out of its output: the option is no_log, and a key no HTTP header can
carry (a newline read from a file) is refused before any request, in words without the key (http.client's own error
quoted it into a traceback). router_worker also hides a password in its URLs."""
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import testpaths
from localrun import shown  # pylint: disable=import-error

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import client

SECRET = "Zq7-key-material"
CLOSED = "http://127.0.0.1:9"  # nothing listens: a module that asked would say so, not refuse the key
MODULES = {
    "server_status": {"url": CLOSED},
    "spec_check": {"url": CLOSED},
    "server_drift": {"url": CLOSED},
    "bench_serving": {"url": CLOSED},
    "router_worker": {"gateway_url": CLOSED, "worker_url": "http://127.0.0.1:10", "state": "drained"},
}


def run_module(name, args):
    env = dict(os.environ, PYTHONPATH=os.path.join(testpaths.REPO, "collections"))
    proc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "plugins", "modules", name + ".py")],
                          input=json.dumps({"ANSIBLE_MODULE_ARGS": args}), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False, timeout=120)
    return proc, json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None


def spec_of(name):
    """The module's argument spec as AnsibleModule sees it (its api_key option)."""
    if name == "router_worker":
        with open(os.path.join(testpaths.REPO, "plugins", "modules", "router_worker.py")) as f:
            return "api_key=dict(type=\"str\", no_log=True)" in f.read()
    return client.ENDPOINT_SPEC["api_key"].get("no_log") is True


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_api_key_option_is_no_log(name):
    assert spec_of(name)


@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("key", [SECRET + "\n", SECRET + "\r\nX-Evil: 1", SECRET + "\x00", "\t" + SECRET])
def test_a_key_no_header_can_carry_is_refused_without_the_key_and_without_a_traceback(name, key):
    proc, out = run_module(name, dict(MODULES[name], api_key=key))
    assert out is not None, proc.stderr[-2000:]
    assert out["failed"] is True and "api_key contains" in out["msg"] and "| trim" in out["msg"], out
    assert SECRET not in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["server_status", "server_drift"])
def test_a_good_key_is_taken(name):
    proc, out = run_module(name, dict(MODULES[name], api_key=SECRET))
    assert out is not None and "api_key contains" not in out.get("msg", ""), proc.stderr[-2000:]
    assert SECRET not in json.dumps(shown(out))


def test_router_worker_never_shows_a_url_password():
    url = "http://router:%s@127.0.0.1:10" % SECRET
    proc, out = run_module("router_worker", {"gateway_url": "http://gw:%s@127.0.0.1:9" % SECRET, "worker_url": url,
                                             "state": "drained", "api_key": "gw-key-1234"})
    assert out is not None and out["failed"] is True, proc.stderr[-2000:]
    assert "127.0.0.1:9" in out["msg"]  # it says what failed ...
    assert SECRET not in json.dumps(shown(out)) and SECRET not in proc.stderr  # ... without the password


@pytest.mark.parametrize("key, ok", [(SECRET, True), (None, True), ("", True), ("a b", True), ("k\xe9", True),
                                     ("k\n", False), ("k\x1b", False), (["k"], False), ("k\u2028", False),
                                     ("k\u6f22", False)])
def test_key_problem_table(key, ok):
    problem = client.key_problem(key)
    assert (problem is None) is ok
    if not ok:
        assert "k\n" not in problem and "api_key" in problem
        with pytest.raises(ValueError) as e:
            client.Client(CLOSED, api_key=key)
        assert str(e.value) == problem
    else:
        assert client.Client(CLOSED, api_key=key).api_key == (key or None)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_a_key_either_fits_a_header_or_is_refused_without_being_quoted(text):
    import http.client
    key = "KEYMARK" + text
    problem = client.key_problem(key)
    if problem is None:  # http.client takes it as it is (no ValueError, no UnicodeEncodeError)
        conn = http.client.HTTPConnection("127.0.0.1", 9)
        conn.putrequest("GET", "/")
        conn.putheader("Authorization", "Bearer %s" % key)
    else:
        assert "KEYMARK" not in problem and problem.startswith("api_key ")


@pytest.mark.parametrize("field, bad", [("worker_url", "http://127.0.0.1:10\r\nX: 1"), ("worker_url", "ftp://w/x"),
                                        ("gateway_url", "http://127.0.0.1:9\n"), ("gateway_url", "http://g:70000")])
def test_router_worker_refuses_a_url_that_is_not_one_http_url(field, bad):
    args = dict(MODULES["router_worker"], api_key="gw-key-1234")
    args[field] = bad
    proc, out = run_module("router_worker", args)
    assert out is not None and out["failed"] is True and field in out["msg"], proc.stderr[-2000:]
    assert "\n" not in out["msg"] and "give http(s)://HOST:PORT" in out["msg"]
