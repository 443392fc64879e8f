# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""router/drain's deadlines at, just before and just after them (issue 37). Scripted clients stand in for the
gateway and the worker (test_router_drain.py runs the same code against real HTTP servers); a clock that moves
only when the code sleeps makes each deadline exact."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.router import drain

from test_router_drain import Clock  # pylint: disable=import-error

URL = "http://10.0.0.1:30000"


class Gateway(object):
    """Lists the worker for the first ``listed`` GETs (after the DELETE), then not; ``healthy_from``: the GET from
    which a listed worker is healthy."""

    url = "http://gw:30080"

    def __init__(self, listed, healthy_from=0, present=True):
        self.listed, self.healthy_from, self.present = listed, healthy_from, present
        self.gets, self.calls = 0, []

    def call(self, method, path, body=None, timeout=10.0):
        self.calls.append((method, path))
        if method == "GET":
            self.gets += 1
            show = self.present if self.gets == 1 else self.gets - 1 <= self.listed
            ws = [{"id": "w1", "url": URL + "/", "is_healthy": self.gets > self.healthy_from, "status": "draining"}]
            return 200, {"workers": ws if show else []}, None
        self.present = method == "POST"
        return (202 if method == "POST" else 200), {}, None


class Worker(object):
    url = URL

    def __init__(self, answers):
        self.answers, self.asked = list(answers), []

    def metrics(self, timeout=10.0):
        self.asked.append(timeout)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, tuple):
            return answer
        return 200, "sglang:num_running_reqs{tp_rank=\"0\"} %s\n" % answer, None


@pytest.mark.parametrize("listed, ok", [(2, True), (3, True), (4, False)])
def test_the_removal_deadline_is_met_by_the_last_look_at_it(listed, ok):
    # timeout 3 s, one look a second: looks at 0, 1, 2 and 3 s; the worker must be gone by the look at 3 s
    gw, clock = Gateway(listed), Clock()
    if ok:
        out = drain.drain(gw, URL, removal_timeout=3, interval=1, clock=clock, sleep=clock.sleep)
        assert out["waits"] == {"removal": {"ended": "unlisted", "seconds": float(listed)},
                                "requests": {"ended": "skipped", "seconds": 0.0, "reason": "router_drain_metrics is false"}}
        assert out["removed"] == [{"id": "w1", "url": URL + "/"}] and out["changed"] and out["worker_url"] == URL
    else:
        with pytest.raises(drain.DrainError) as err:
            drain.drain(gw, URL, removal_timeout=3, interval=1, clock=clock, sleep=clock.sleep)
        assert str(err.value) == ("http://gw:30080 still lists %s 3 s after DELETE /workers/{id} (status draining): the "
                                  "gateway did not remove it" % URL)
        assert clock.now == 103.0 and clock.sleeps == [1, 1, 1]


@pytest.mark.parametrize("answers, ended, seconds", [
    ([3, 2, 0], "idle", 4.0), ([3, 0], "idle", 2.0), ([0], "idle", 0.0),
    ([3, 3, 3, 0], "idle", 6.0),  # the look at exactly the deadline (6 s) still counts
    ([3, 3, 3, 3, 0], "timeout", 6.0)])
def test_the_request_wait_ends_idle_up_to_its_deadline(answers, ended, seconds):
    clock = Clock()
    out = drain.wait_idle(Worker(answers), timeout=6, interval=2, clock=clock, sleep=clock.sleep)
    assert (out["ended"], out["seconds"]) == (ended, seconds)
    if ended == "timeout":
        assert out == {"ended": "timeout", "seconds": 6.0, "running": 3,
                       "reason": "3 requests still running after 6 s (router_drain_timeout)"}
    else:
        assert out["running"] == 0


def test_a_fraction_of_a_request_is_still_running():
    clock = Clock()
    out = drain.wait_idle(Worker([0.5]), timeout=1, interval=1, clock=clock, sleep=clock.sleep)
    assert out["ended"] == "timeout" and out["reason"].startswith("0.5 requests still running after 1 s")


def test_the_metrics_read_is_bounded_and_each_ending_says_why():
    w = Worker([(None, None, "connection refused")])
    out = drain.wait_idle(w, 60, 1, clock=Clock(), sleep=Clock().sleep)
    assert out == {"ended": "unreachable", "seconds": 0.0, "reason": "GET %s/metrics: connection refused" % URL}
    assert w.asked == [drain.METRICS_TIMEOUT_S] and drain.METRICS_TIMEOUT_S == 10.0
    out = drain.wait_idle(Worker([(401, "no", None)]), 60, 1, clock=Clock(), sleep=Clock().sleep)
    assert out == {"ended": "no_metrics", "seconds": 0.0, "status": 401,
                   "reason": "GET %s/metrics answered 401: nothing to wait on" % URL}
    out = drain.wait_idle(Worker([(200, "other_metric 1\n", None)]), 60, 1, clock=Clock(), sleep=Clock().sleep)
    assert out == {"ended": "no_metric", "seconds": 0.0, "reason": "GET %s/metrics has no sglang:num_running_reqs" % URL}


@pytest.mark.parametrize("healthy_from, ok", [(2, True), (3, True), (4, False)])
def test_the_restore_deadline_is_met_by_the_last_look_at_it(healthy_from, ok):
    # absent, so POSTed; looks at 0, 2, 4 s (GETs 2, 3, 4; timeout 4 s, every 2 s): healthy by the look at 4 s or not
    gw, clock = Gateway(listed=99, healthy_from=healthy_from, present=False), Clock()
    gw.listed = 99
    if ok:
        out = drain.restore(gw, URL + "/", timeout=4, interval=2, clock=clock, sleep=clock.sleep)
        assert out == {"changed": True, "worker_url": URL, "added": True,
                       "waits": {"healthy": {"ended": "healthy", "seconds": 2.0 * (healthy_from - 1)}}}
        assert ("POST", "/workers") in gw.calls
    else:
        with pytest.raises(drain.DrainError) as err:
            drain.restore(gw, URL, timeout=4, interval=2, clock=clock, sleep=clock.sleep)
        assert str(err.value) == ("http://gw:30080 does not list %s healthy 4 s after it was added (w1 is_healthy=False "
                                  "status=draining): is the worker up, and its health endpoint answering the gateway?"
                                  % URL)
        assert clock.now == 104.0


def test_restore_of_a_listed_worker_posts_nothing_and_check_mode_waits_nothing():
    gw = Gateway(listed=99, healthy_from=0)
    out = drain.restore(gw, URL, interval=2, clock=Clock(), sleep=Clock().sleep)
    assert (out["changed"], out["added"]) == (False, False) and ("POST", "/workers") not in gw.calls
    gw = Gateway(listed=99, present=False)
    out = drain.restore(gw, URL, check_mode=True)
    assert out == {"changed": True, "worker_url": URL, "added": True,
                   "waits": {"healthy": {"ended": "check_mode", "seconds": 0.0}}}
    assert gw.calls == [("GET", "/workers")]


def test_drain_check_mode_deletes_nothing():
    gw = Gateway(listed=0)
    out = drain.drain(gw, URL, check_mode=True)
    assert gw.calls == [("GET", "/workers")] and out["changed"] and out["waits"] == {
        "removal": {"ended": "check_mode", "seconds": 0.0}, "requests": {"ended": "check_mode", "seconds": 0.0}}


class Listing(object):
    """A gateway that lists the same workers at every GET (a DELETE or POST changes nothing)."""

    url = "http://gw:30080"

    def __init__(self, workers):
        self.workers = workers

    def call(self, method, path, body=None, timeout=10.0):
        if method == "GET":
            return 200, {"workers": [dict(w) for w in self.workers]}, None
        return 202, {}, None


def test_a_drain_that_never_ends_names_every_status_left():
    # two entries for the worker, one with no status: each is named, "?" for the missing one
    gw, clock = Listing([{"id": "a", "url": URL, "status": "draining"}, {"id": "b", "url": URL}]), Clock()
    with pytest.raises(drain.DrainError) as err:
        drain.drain(gw, URL, removal_timeout=2, interval=1, clock=clock, sleep=clock.sleep)
    assert "(status draining, ?)" in str(err.value)


def test_a_restore_that_never_ends_names_what_the_gateway_lists():
    gw = Listing([{"id": "a", "url": URL, "is_healthy": True, "status": "ready"}, {"id": "b", "url": URL}])
    clock = Clock()
    with pytest.raises(drain.DrainError) as err:
        drain.restore(gw, URL, timeout=2, interval=1, clock=clock, sleep=clock.sleep)
    # listed twice is not "listed once and healthy"
    assert "(a is_healthy=True status=ready; b is_healthy=None status=?)" in str(err.value)
    clock = Clock()
    with pytest.raises(drain.DrainError) as err:
        drain.restore(Listing([]), URL, timeout=2, interval=1, clock=clock, sleep=clock.sleep)
    assert str(err.value) == ("http://gw:30080 does not list %s healthy 2 s after it was added (not listed): is the "
                              "worker up, and its health endpoint answering the gateway?" % URL)


@pytest.mark.parametrize("interval, seconds", [(1.2345, 1.23), (0.001, 0.0), (0.006, 0.01), (2.0, 2.0)])
def test_a_wait_is_reported_to_the_hundredth_of_a_second(interval, seconds):
    clock = Clock()
    out = drain.wait_idle(Worker([3, 0]), timeout=60, interval=interval, clock=clock, sleep=clock.sleep)
    assert out == {"ended": "idle", "seconds": seconds, "running": 0}
    assert isinstance(out["seconds"], float)
