# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/router's drain and restore (router/drain.py, the router_worker module) against real local HTTP servers:
a gateway double speaking smg's worker API (GET/POST /workers, DELETE /workers/{id}: the worker turns
``draining`` and is dropped a few lists later, as smg's drain settle does; an added worker turns healthy after its
first health checks) and a worker serving a real SGLang /metrics capture with its running-requests gauge set per
answer. The clock moves only when the code sleeps, so the waits are counted, not timed."""
import testpaths
import netutil
from localrun import shown  # pylint: disable=import-error
import json
import os
import subprocess
import sys
import threading
from urllib.parse import unquote

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.router import drain, gateway
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client

CAPTURE = os.path.join(testpaths.FIXTURES, "sglang_metrics", "capture-0.5.15.post1-h200.txt")
KEY = "gw-secret"


class Clock(object):
    """monotonic() and sleep() for the code under test: time passes only by its sleeps."""

    def __init__(self):
        self.now, self.sleeps = 100.0, []

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.sleeps.append(s)
        self.now += s


_server = netutil.serve
_Base = netutil.JSONHandler


class Gateway(object):
    """smg's worker API: {"workers": [{"id", "url", "model_id", "worker_type", "is_healthy", "status", ...}],
    "total": N}. A deleted worker is listed ``draining`` for ``settle`` more lists, an added one unhealthy for
    ``warmup`` lists; ``stuck`` keeps deleted workers listed for ever."""

    def __init__(self, urls, key=KEY, settle=2, warmup=2, stuck=False, refuse_delete=False):
        self.workers = [self._worker(i, u, True) for i, u in enumerate(urls)]
        self.key, self.settle, self.warmup, self.stuck, self.refuse_delete = key, settle, warmup, stuck, refuse_delete
        self.calls, self.lock = [], threading.Lock()
        gw = self

        class H(_Base):
            def authorised(self):
                if gw.key and self.headers.get("Authorization") != "Bearer " + gw.key:
                    self.reply(401, {"error": {"code": "unauthorized", "message": "Invalid or missing API key"}})
                    return False
                return True

            def do_GET(self):
                gw.calls.append(("GET", self.path))
                if not self.authorised():
                    return
                if self.path != "/workers":
                    return self.reply(404, {"error": "not found"})
                with gw.lock:
                    gw._tick()
                    body = {"workers": [dict(w, _left=None) for w in gw.workers], "total": len(gw.workers)}
                for w in body["workers"]:
                    w.pop("_left")
                self.reply(200, body)

            def do_DELETE(self):
                gw.calls.append(("DELETE", self.path))
                if not self.authorised():
                    return
                if gw.refuse_delete:
                    return self.reply(500, {"error": "internal"})
                wid = unquote(self.path[len("/workers/"):])  # a path parameter is percent-decoded, as axum does
                with gw.lock:
                    for w in gw.workers:
                        if w["id"] == wid:
                            w["status"], w["_left"] = "draining", gw.settle
                            return self.reply(202, {"status": "accepted", "worker_id": wid})
                self.reply(404, {"error": "worker %s not found" % wid})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                gw.calls.append(("POST", self.path, body))
                if not self.authorised():
                    return
                with gw.lock:
                    w = gw._worker(len(gw.workers) + 10, body["url"], False)
                    w["_left"] = gw.warmup
                    gw.workers.append(w)
                self.reply(202, {"status": "accepted", "url": body["url"]})

        self.srv = _server(H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]

    @staticmethod
    def _worker(i, url, healthy):
        return {"id": "w-%d/x" % i, "url": url, "model_id": "kimi", "worker_type": "regular", "is_healthy": healthy,
                "status": "ready" if healthy else "pending", "load": 0, "_left": None}

    def _tick(self):
        """One list: draining workers come closer to removal, added ones to healthy."""
        keep = []
        for w in self.workers:
            if w["_left"] is not None:
                w["_left"] -= 1
                if w["_left"] < 0:
                    if w["status"] == "draining":
                        if self.stuck:
                            keep.append(w)
                        continue
                    w["is_healthy"], w["status"], w["_left"] = True, "ready", None
            keep.append(w)
        self.workers = keep

    def client(self, key=KEY):
        return Client(self.url, api_key=key)

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def metrics_text(running):
    """The real 0.5.15.post1 capture, with one num_running_reqs sample per rank given."""
    lines = []
    with open(CAPTURE) as f:
        for line in f.read().splitlines():
            if line.startswith("sglang:num_running_reqs{"):
                labels = line.split("}", 1)[0]
                lines += ["%s,tp_rank_extra=\"%d\"} %s" % (labels, i, v) for i, v in enumerate(running)]
                continue
            lines.append(line)
    return "\n".join(lines) + "\n"


class Worker(object):
    """A worker's /metrics: each answer takes the next of ``answers`` (an int status, or a list of running counts per
    rank), the last one repeating."""

    def __init__(self, answers):
        self.answers, self.seen = list(answers), []
        wk = self

        class H(_Base):
            def do_GET(self):
                wk.seen.append((self.path, self.headers.get("Authorization")))
                a = wk.answers.pop(0) if len(wk.answers) > 1 else wk.answers[0]
                if isinstance(a, int):
                    return self.reply(a, {"detail": "no"})
                self.reply(200, metrics_text(a).encode(), "text/plain; version=0.0.4")

        self.srv = _server(H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def servers():
    made = []

    def make(kind, *a, **kw):
        s = kind(*a, **kw)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


def test_running_requests_reads_the_real_capture_and_sums_the_ranks():
    with open(CAPTURE) as f:
        assert api.running_requests(f.read()) == 0.0
    assert api.running_requests(metrics_text([3, 0, 2])) == 5.0
    assert api.running_requests("sglang:num_queue_reqs 4\n") is None
    assert api.running_requests("") is None
    assert api.running_requests("sglang:num_running_reqs NaN\nsglang:num_running_reqs{tp_rank=\"1\"} 2.0\n") == 2.0


def test_drain_removes_the_worker_waits_until_unlisted_then_until_idle(servers):
    wk = servers(Worker, [[2, 1], [1, 0], [0, 0]])
    gw = servers(Gateway, [wk.url, "http://10.9.9.9:30000"])
    clock = Clock()
    out = drain.drain(gw.client(), wk.url + "/", metrics=Client(wk.url), interval=1.0, clock=clock,
                      sleep=clock.sleep)
    assert out["changed"] is True and out["worker_url"] == wk.url
    assert out["removed"] == [{"id": "w-0/x", "url": wk.url}]
    # the id is sent URL-quoted; the other worker stays
    assert ("DELETE", "/workers/w-0%2Fx") in gw.calls
    assert [w["url"] for w in gw.workers] == ["http://10.9.9.9:30000"]
    # settle=2: listed on two lists after the DELETE, gone on the third; then 3 metrics answers, 2 with requests
    assert out["waits"]["removal"] == {"ended": "unlisted", "seconds": 2.0}
    assert out["waits"]["requests"] == {"ended": "idle", "seconds": 2.0, "running": 0}
    # the gateway key goes to the gateway only, never to the worker
    assert all(auth is None for _p, auth in wk.seen) and all(p == "/metrics" for p, _a in wk.seen)


@pytest.mark.parametrize("status", [401, 403, 404, 503])
def test_a_worker_without_readable_metrics_ends_the_wait_and_says_so(servers, status):
    wk = servers(Worker, [status])
    gw = servers(Gateway, [wk.url], settle=0)
    clock = Clock()
    out = drain.drain(gw.client(), wk.url, metrics=Client(wk.url), clock=clock, sleep=clock.sleep)
    assert out["waits"]["requests"]["ended"] == "no_metrics"
    assert out["waits"]["requests"]["status"] == status
    assert str(status) in out["waits"]["requests"]["reason"]


def test_an_unreachable_worker_ends_the_wait(servers):
    dead = "http://127.0.0.1:%d" % netutil.free_port()  # nothing listens there
    gw = servers(Gateway, [dead], settle=0)
    clock = Clock()
    out = drain.drain(gw.client(), dead, metrics=Client(dead), clock=clock, sleep=clock.sleep)
    assert out["removed"] == [{"id": "w-0/x", "url": dead}]
    assert out["waits"]["requests"]["ended"] == "unreachable"
    assert "/metrics" in out["waits"]["requests"]["reason"]


def test_requests_still_running_at_the_deadline_end_the_wait_with_timeout(servers):
    wk = servers(Worker, [[4]])
    gw = servers(Gateway, [wk.url], settle=0)
    clock = Clock()
    out = drain.drain(gw.client(), wk.url, metrics=Client(wk.url), timeout=10, interval=2, clock=clock,
                      sleep=clock.sleep)
    req = out["waits"]["requests"]
    assert req["ended"] == "timeout" and req["running"] == 4 and req["seconds"] == 10.0
    assert "router_drain_timeout" in req["reason"]


def test_metrics_off_skips_the_request_wait(servers):
    gw = servers(Gateway, ["http://10.0.0.1:30000"], settle=0)
    clock = Clock()
    out = drain.drain(gw.client(), "http://10.0.0.1:30000", metrics=None, clock=clock, sleep=clock.sleep)
    assert out["waits"]["requests"]["ended"] == "skipped"


def test_a_gateway_that_keeps_listing_the_worker_fails_the_drain_at_its_deadline(servers):
    gw = servers(Gateway, ["http://10.0.0.1:30000"], settle=0, stuck=True)
    clock = Clock()
    with pytest.raises(drain.DrainError, match="still lists http://10.0.0.1:30000 30 s after.*draining"):
        drain.drain(gw.client(), "http://10.0.0.1:30000", removal_timeout=30, interval=1, clock=clock,
                    sleep=clock.sleep)
    assert clock.now - 100.0 == 30.0


def test_check_mode_reports_what_it_would_remove_and_changes_nothing(servers):
    gw = servers(Gateway, ["http://10.0.0.1:30000", "http://10.0.0.2:30000"])
    out = drain.drain(gw.client(), "http://10.0.0.1:30000/", check_mode=True)
    assert out["changed"] is True and out["removed"] == [{"id": "w-0/x", "url": "http://10.0.0.1:30000"}]
    assert [c[0] for c in gw.calls] == ["GET"]
    assert len(gw.workers) == 2 and all(w["status"] == "ready" for w in gw.workers)


def test_draining_a_worker_the_gateway_does_not_list_changes_nothing(servers):
    gw = servers(Gateway, ["http://10.0.0.2:30000"])
    clock = Clock()
    out = drain.drain(gw.client(), "http://10.0.0.1:30000", clock=clock, sleep=clock.sleep)
    assert out["changed"] is False and out["removed"] == []
    assert not [c for c in gw.calls if c[0] == "DELETE"]


def test_a_wrong_key_or_a_refused_delete_is_an_error_naming_the_call(servers):
    gw = servers(Gateway, ["http://10.0.0.1:30000"])
    with pytest.raises(gateway.GatewayAPIError, match="GET .*/workers: HTTP 401.*router_api_key"):
        drain.drain(gw.client(key="wrong"), "http://10.0.0.1:30000")
    gw.refuse_delete = True
    with pytest.raises(gateway.GatewayAPIError, match="DELETE .*/workers/w-0/x .*HTTP 500"):
        drain.drain(gw.client(), "http://10.0.0.1:30000")


def test_restore_adds_the_worker_and_waits_until_it_is_listed_healthy(servers):
    gw = servers(Gateway, ["http://10.0.0.2:30000"], warmup=3)
    clock = Clock()
    out = drain.restore(gw.client(), "http://10.0.0.1:30000/", interval=2, clock=clock, sleep=clock.sleep)
    assert out["changed"] is True and out["added"] is True
    assert ("POST", "/workers", {"url": "http://10.0.0.1:30000"}) in gw.calls
    assert out["waits"]["healthy"] == {"ended": "healthy", "seconds": 6.0}


def test_restore_of_a_listed_worker_adds_nothing(servers):
    gw = servers(Gateway, ["http://10.0.0.1:30000"])
    out = drain.restore(gw.client(), "http://10.0.0.1:30000")
    assert out["changed"] is False and out["added"] is False and out["waits"]["healthy"]["ended"] == "healthy"
    assert not [c for c in gw.calls if c[0] == "POST"]


def test_restore_check_mode_adds_nothing(servers):
    gw = servers(Gateway, [])
    out = drain.restore(gw.client(), "http://10.0.0.1:30000", check_mode=True)
    assert out["added"] is True and gw.workers == [] and [c[0] for c in gw.calls] == ["GET"]


def test_restore_fails_when_the_worker_never_turns_healthy(servers):
    gw = servers(Gateway, [], warmup=10 ** 6)
    clock = Clock()
    with pytest.raises(drain.DrainError, match="does not list http://10.0.0.1:30000 healthy 20 s after.*"
                                               "is_healthy=False status=pending"):
        drain.restore(gw.client(), "http://10.0.0.1:30000", timeout=20, interval=2, clock=clock, sleep=clock.sleep)


# -- the module, run as AnsiballZ runs it in the end (arguments as JSON on stdin) ------------------------------------
def run_module(args, check=False):
    env = dict(os.environ, PYTHONPATH=os.path.join(testpaths.REPO, "collections"))
    payload = dict(args, _ansible_check_mode=check)
    proc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "plugins", "modules", "router_worker.py")],
                          input=json.dumps({"ANSIBLE_MODULE_ARGS": payload}), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False)
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def test_module_drains_and_restores_and_keeps_the_key_out_of_its_result(servers):
    wk = servers(Worker, [[1], [0]])
    gw = servers(Gateway, [wk.url], settle=1, warmup=1)
    base = {"gateway_url": gw.url, "api_key": KEY, "worker_url": wk.url + "/", "interval": 0.05}
    out = run_module(dict(base, state="drained"))
    assert out["changed"] is True and out["removed"][0]["url"] == wk.url, out
    assert out["waits"]["removal"]["ended"] == "unlisted" and out["waits"]["requests"]["ended"] == "idle"
    assert gw.workers == [] and KEY not in json.dumps(shown(out))
    again = run_module(dict(base, state="drained"))
    assert again["changed"] is False and again["removed"] == []

    would = run_module(dict(base, state="restored"), check=True)
    assert would["changed"] is True and would["added"] is True and gw.workers == []
    out = run_module(dict(base, state="restored"))
    assert out["changed"] is True and out["waits"]["healthy"]["ended"] == "healthy", out
    assert [w["url"] for w in gw.workers if w["is_healthy"]] == [wk.url]


def test_module_refuses_an_empty_worker_url_and_warns_on_a_drain_timeout(servers):
    out = run_module({"gateway_url": "http://127.0.0.1:9", "worker_url": " ", "state": "drained"})
    assert out["failed"] is True and "router_drain_worker_url" in out["msg"]
    wk = servers(Worker, [[2]])
    gw = servers(Gateway, [wk.url], settle=0)
    out = run_module({"gateway_url": gw.url, "api_key": KEY, "worker_url": wk.url, "state": "drained",
                      "timeout": 0.1, "interval": 0.05})
    assert out["waits"]["requests"]["ended"] == "timeout" and out["waits"]["requests"]["running"] == 2
    assert "still running" in json.dumps(out.get("warnings"))  # ansible-core 2.19 returns them as dicts
