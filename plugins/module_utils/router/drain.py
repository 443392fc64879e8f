# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Take one worker out of the gateway before it restarts, and put it back after (the ``router_worker`` module).

Drain: list the gateway's workers, remove the ones with the worker's URL (``DELETE /workers/{id}``: no new requests
go to it), wait until the gateway no longer lists it, then wait until the worker's own ``sglang:num_running_reqs``
is 0 (its in-flight requests finished). A worker whose ``/metrics`` does not answer 200 (401/403 behind a key,
404 or 503 with metrics off or while it stops, or no answer at all) ends that wait: there is nothing to read, and
the result says so. Running requests still above 0 at the deadline end it too (the restart goes ahead, as before);
the result says ``timeout`` and how many were running.

Restore: add the worker back (``POST /workers``) unless the gateway lists it, then wait until the gateway lists it
exactly once and healthy; past the deadline that is an error.

Both take their clients (``sglang/client.Client``: the gateway's, and the worker's for ``/metrics``) and their clock
and sleep, so a test gives real HTTP servers and a clock that moves only when the code sleeps.
"""

from __future__ import annotations

import time

from ansible_collections.llmserve.sglang.plugins.module_utils.router import gateway
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api

METRICS_TIMEOUT_S = 10.0


class DrainError(RuntimeError):
    """A wait that must succeed did not: the message says what was seen last."""


def _seconds(clock, t0):
    return round(max(clock() - t0, 0.0), 2)


def drain(gw, worker_url, metrics=None, check_mode=False, removal_timeout=30.0, timeout=600.0, interval=1.0,
          clock=time.monotonic, sleep=time.sleep):
    """Remove ``worker_url`` from the gateway ``gw`` and wait as the module doc says.

    ``metrics``: the worker's client (None = do not wait for its requests). Returns ``{"changed", "worker_url",
    "removed": [{"id", "url"}], "waits": {"removal": {...}, "requests": {...}}}``; raises GatewayAPIError when the
    gateway refuses, DrainError when it still lists the worker after ``removal_timeout`` seconds."""
    url = gateway.worker_url(worker_url)
    found = gateway.matching(gateway.list_workers(gw), url)
    result = {"changed": bool(found), "worker_url": url,
              "removed": [{"id": w.get("id"), "url": w.get("url")} for w in found], "waits": {}}
    if check_mode:
        result["waits"] = {"removal": {"ended": "check_mode", "seconds": 0.0},
                           "requests": {"ended": "check_mode", "seconds": 0.0}}
        return result
    for w in found:
        gateway.remove_worker(gw, w)

    t0 = clock()
    while True:
        left = gateway.matching(gateway.list_workers(gw), url)
        if not left:
            break
        if clock() - t0 >= removal_timeout:
            raise DrainError("%s still lists %s %.0f s after DELETE /workers/{id} (status %s): the gateway did not "
                             "remove it" % (gw.url, url, removal_timeout,
                                            ", ".join(str(w.get("status", "?")) for w in left)))
        sleep(interval)
    result["waits"]["removal"] = {"ended": "unlisted", "seconds": _seconds(clock, t0)}
    result["waits"]["requests"] = wait_idle(metrics, timeout, interval, clock, sleep)
    return result


def wait_idle(metrics, timeout, interval, clock=time.monotonic, sleep=time.sleep):
    """Wait until the worker runs no request. ``{"ended", "seconds", ...}``; ``ended`` is one of ``idle`` (0 running),
    ``no_metric`` (/metrics has no sglang:num_running_reqs), ``no_metrics`` (/metrics answered another status:
    ``status``), ``unreachable`` (no answer: ``reason``), ``timeout`` (still ``running`` at the deadline) or
    ``skipped`` (no client: the wait is off)."""
    if metrics is None:
        return {"ended": "skipped", "seconds": 0.0, "reason": "router_drain_metrics is false"}
    t0 = clock()
    while True:
        status, text, err = metrics.metrics(timeout=METRICS_TIMEOUT_S)
        if err:
            return {"ended": "unreachable", "seconds": _seconds(clock, t0),
                    "reason": "GET %s/metrics: %s" % (metrics.url, err)}
        if status != 200:
            return {"ended": "no_metrics", "seconds": _seconds(clock, t0), "status": status,
                    "reason": "GET %s/metrics answered %s: nothing to wait on" % (metrics.url, status)}
        running = api.running_requests(text)
        if running is None:
            return {"ended": "no_metric", "seconds": _seconds(clock, t0),
                    "reason": "GET %s/metrics has no sglang:num_running_reqs" % metrics.url}
        if running <= 0:
            return {"ended": "idle", "seconds": _seconds(clock, t0), "running": 0}
        if clock() - t0 >= timeout:
            return {"ended": "timeout", "seconds": _seconds(clock, t0), "running": running,
                    "reason": "{0:g} requests still running after {1:.0f} s (router_drain_timeout)".format(running, timeout)}
        sleep(interval)


def _healthy(workers):
    return len(workers) == 1 and workers[0].get("is_healthy") is True


def restore(gw, worker_url, check_mode=False, timeout=600.0, interval=2.0, clock=time.monotonic, sleep=time.sleep):
    """Add ``worker_url`` back unless listed, then wait until the gateway lists it once and healthy.

    Returns ``{"changed", "worker_url", "added", "waits": {"healthy": {...}}}``; raises GatewayAPIError when the
    gateway refuses, DrainError when it is not listed healthy after ``timeout`` seconds."""
    url = gateway.worker_url(worker_url)
    listed = gateway.matching(gateway.list_workers(gw), url)
    result = {"changed": not listed, "worker_url": url, "added": not listed, "waits": {}}
    if check_mode:
        result["waits"]["healthy"] = {"ended": "check_mode", "seconds": 0.0}
        return result
    if not listed:
        gateway.add_worker(gw, url)
    t0 = clock()
    while True:
        mine = gateway.matching(gateway.list_workers(gw), url)
        if _healthy(mine):
            break
        if clock() - t0 >= timeout:
            seen = "; ".join("%s is_healthy=%s status=%s" % (w.get("id"), w.get("is_healthy"), w.get("status", "?"))
                             for w in mine) or "not listed"
            raise DrainError("%s does not list %s healthy %.0f s after it was added (%s): is the worker up, and its "
                             "health endpoint answering the gateway?" % (gw.url, url, timeout, seen))
        sleep(interval)
    result["waits"]["healthy"] = {"ended": "healthy", "seconds": _seconds(clock, t0)}
    return result
