# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdicts held from both sides (issue 37): each time bound at, just below and just above it, both branches of
each rule, and the whole Ending each predicate gives (reason, why, and how the waiter explains it: waiter.py reads
``explain`` to pick the refinement and ``why == "worker"`` to tell a worker from rank 0)."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import messages
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import verdicts as V
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.verdicts import Snapshot

UNKNOWN = {"category": "unknown", "line": None, "remedy": "no known failure line"}


def whole(ending):
    return (ending.reason, ending.why, ending.key, ending.explain)


def test_snapshot_names_every_unknown_field_in_order():
    with pytest.raises(TypeError) as err:
        Snapshot(zeta=1, alpha=2)
    assert str(err.value) == "unknown snapshot field(s): alpha, zeta"


# -- the process and its activity --------------------------------------------------------------
def test_each_crash_ending_is_explained_as_a_crash():
    assert whole(V.process_exited(Snapshot(pid=41, alive=False))) == ("crashed", "server process 41 exited", None, "crash")
    assert whole(V.unit_stopped(Snapshot(unit="u", unit_running=False, unit_active="failed", unit_sub="dead"))) == (
        "crashed", "unit u is failed/dead", None, "crash")
    assert whole(V.died_before_the_wait(Snapshot(died_before="gone"))) == ("crashed", "gone", None, "crash")


@pytest.mark.parametrize("now, ends", [(14.9, False), (15.0, True), (15.1, True)])
def test_a_fatal_line_ends_the_wait_at_its_grace(now, ends):
    e = V.fatal_line_lingers(Snapshot(now=now, first_strong_at=10.0, fatal_grace=5.0))
    assert (e is not None) == ends
    if ends:
        assert whole(e) == ("crashed", messages.FATAL_LINGERS % (now - 10.0), None, "crash")
        assert e.why == "fatal error in log %.0fs ago and no recovery" % (now - 10.0)


@pytest.mark.parametrize("fatal_at, undone", [
    (5.0, False),            # fatal line and "fired up" in the same millisecond: the fatal line stands
    (5.0 + 0.001, False),    # one rounding step after ready_at: still the same instant
    (5.0 + 0.002, True),     # later than ready_at can be rounded: "fired up" was read before it
    (4.0, False),
])
def test_a_fired_up_before_the_fatal_line_undoes_it_only_beyond_the_rounding(fatal_at, undone):
    # ready_at is rounded to 1 ms; a fatal line inside that millisecond was not read after "fired up"
    e = V.fatal_line_lingers(Snapshot(now=20.0, first_strong_at=fatal_at, ready_at=5.0, fatal_grace=5.0))
    assert (e is None) == undone


# -- readiness ---------------------------------------------------------------------------------
@pytest.mark.parametrize("stage, early", [("starting", False), ("init", True), ("dist_init", True), ("http", True),
                                          ("warmup", False), ("ready", False)])
def test_our_http_is_not_up_from_init_through_http(stage, early):
    assert V.answered_before_our_http(Snapshot(stage=stage, has_log=True, pid=5, process_age=100.0)) is early


@pytest.mark.parametrize("age, early", [(2.9, True), (3.0, False), (3.1, False), (None, False)])
def test_a_fresh_process_is_younger_than_three_seconds(age, early):
    assert V.answered_before_our_http(Snapshot(stage="starting", has_log=True, pid=5, process_age=age)) is early
    assert V.answered_before_our_http(Snapshot(stage="starting", has_log=True, pid=None, process_age=age)) is False


def test_ready_on_rank0_says_ready():
    e = V.ready_on_rank0(Snapshot(health=200, stage="warmup", pid=5))
    assert whole(e) == (None, "ready", None, None) and not e.failed
    assert V.ready_on_rank0(Snapshot(health=200, stage="http", pid=5)) is None  # the 200 is not ours yet


def _disagree(**changes):
    values = dict(stage="ready", health=503, ready_hint_at=10.0, base="http://h:1", health_path="/ready", now=25.0)
    values.update(changes)
    return V.log_ready_but_endpoint_disagrees(Snapshot(**values))


@pytest.mark.parametrize("now, ends", [(24.9, False), (25.0, True), (25.1, True)])
def test_log_ready_endpoint_disagrees_after_its_grace(now, ends):
    e = _disagree(now=now)
    assert (e is not None) == ends
    if ends:
        assert whole(e) == ("unhealthy", "log says ready but http://h:1/ready answers 503",
                            {"category": "unknown", "line": messages.FIRED_UP, "remedy": messages.R_CHECK_URL}, None)


def test_log_ready_endpoint_disagrees_names_what_answered():
    assert _disagree(health=None, health_error="connection refused").why == (
        "log says ready but http://h:1/ready answers connection refused")
    assert _disagree(health=None, health_error=None).why == "log says ready but http://h:1/ready answers nothing"


@pytest.mark.parametrize("changes", [dict(rank0=False), dict(stage="warmup"), dict(health=200), dict(ready_hint_at=None)])
def test_log_ready_endpoint_disagrees_needs_each_condition(changes):
    assert _disagree() is not None
    assert _disagree(**changes) is None


def _worker(stage="cuda_graph", began=0.0, quiet_since=0.0, alive=True, now=20.0):
    return V.worker_initialised(Snapshot(rank0=False, node_rank=1, now=now, stage=stage, stage_began=began,
                                         last_progress=quiet_since, alive=alive))


@pytest.mark.parametrize("quiet_since, ready", [(15.1, False), (15.0, True), (14.9, True)])
def test_a_worker_is_settled_after_five_quiet_seconds(quiet_since, ready):
    e = _worker(quiet_since=quiet_since)
    assert (e is not None) == ready
    if ready:
        assert whole(e) == (None, "worker", None, None)


@pytest.mark.parametrize("began, ready", [(10.1, False), (10.0, True), (9.9, True)])
def test_a_worker_is_settled_after_ten_seconds_in_its_stage(began, ready):
    assert (_worker(began=began) is not None) == ready


@pytest.mark.parametrize("stage, ready", [("kv_cache", False), ("http", True), ("warmup", True)])
def test_a_worker_past_its_init_is_serving_however_busy(stage, ready):
    e = _worker(stage=stage, began=19.0, quiet_since=20.0)
    assert (e is not None) == ready
    if ready:
        assert e.why == "worker"


def test_generation_fails_keeps_the_first_300_characters_of_the_detail():
    detail = "x" * 299 + "yz"
    e = V.generation_fails(Snapshot(generation=(False, detail), health_path="/health"))
    assert whole(e) == ("unhealthy", "/health answers 200 but a 1-token generation fails (%s)" % detail,
                        {"category": "scheduler_exception", "line": "x" * 299 + "y", "remedy": messages.R_GENERATION},
                        None)
    e = V.generation_fails(Snapshot(generation=(False, {"status": 500}), fast=True))
    assert e.why == "the log says ready but a 1-token generation fails ({'status': 500})"
    assert e.key["line"] == "{'status': 500}"


# -- the limits --------------------------------------------------------------------------------
@pytest.mark.parametrize("now, ends", [(39.9, False), (40.0, False), (40.1, True)])
def test_a_stage_budget_is_spent_only_past_it(now, ends):
    e = V.stage_over_budget(Snapshot(now=now, stage="dist_init", stage_began=10.0, stage_timeouts={"dist_init": 30}))
    assert (e is not None) == ends
    if ends:
        assert whole(e) == ("stalled", "stage dist_init over its 30s budget (30s)", None, "stall")


@pytest.mark.parametrize("since, ends", [(70.1, False), (70.0, True), (69.9, True)])
def test_a_stopped_member_holds_the_start_up_after_thirty_seconds(since, ends):
    e = V.member_stopped(Snapshot(now=100.0, stopped_since=since))
    assert (e is not None) == ends
    if ends:
        assert whole(e) == ("stalled", messages.MEMBER_STOPPED % (100.0 - since), None, "stall")


@pytest.mark.parametrize("last, ends", [(40.1, False), (40.0, True), (39.9, True)])
def test_stalled_at_the_stall_timeout(last, ends):
    e = V.stalled(Snapshot(now=100.0, last_progress=last, stall_timeout=60))
    assert (e is not None) == ends
    if ends:
        assert whole(e) == ("stalled", "no log output, CPU, I/O or GPU memory change for %.0fs" % (100.0 - last),
                            None, "stall")


@pytest.mark.parametrize("now, ends", [(99.9, False), (100.0, True), (100.1, True)])
def test_timed_out_at_the_timeout(now, ends):
    e = V.timed_out(Snapshot(now=now, timeout=100))
    assert (e is not None) == ends
    if ends:
        assert whole(e) == ("timeout", "not ready within timeout 100s", None, "timeout")


# -- explanations ------------------------------------------------------------------------------
def test_an_ending_with_nothing_to_explain_reports_the_classifiers_verdict():
    assert V.explain(V.Ending("unhealthy", "y"), UNKNOWN, Snapshot()) is UNKNOWN


def test_exit_2_keeps_the_line_and_names_argparse():
    verdict = {"category": "unknown", "line": "usage: launch_server", "remedy": "r", "stage": "init"}
    assert V.explain_crash(verdict, Snapshot(), exit_status=2) == {
        "category": "bad_args", "line": "usage: launch_server", "remedy": messages.R_EXIT_2, "stage": "init"}


def test_a_stall_with_a_stopped_member_names_the_pids():
    s = Snapshot(stage="dist_init", tail=("a", "b"), stopped=(12, 13))
    assert V.explain_stall(UNKNOWN, s) == {"category": "unknown", "line": "b", "remedy": messages.R_STALL_STOPPED % "12, 13"}
    assert "12, 13 of the server are stopped" in V.explain_stall(UNKNOWN, s)["remedy"]


def test_a_stall_with_no_tail_has_no_line():
    assert V.explain_stall(UNKNOWN, Snapshot(stage="load_weights")) == {
        "category": "unknown", "line": None, "remedy": messages.R_STALL}


@pytest.mark.parametrize("line", ["Init torch distributed ends. mem usage=0.1 GB", "Init parallel ends. mem usage=1 GB",
                                  "Init parallel ends"])
def test_dist_init_is_done_once_its_end_line_is_read_with_or_without_its_full_stop(line):
    v = V.explain_stall(UNKNOWN, Snapshot(stage="dist_init", tail=(line, "after")))
    assert v == {"category": "unknown", "line": "after", "remedy": messages.R_STALL}


def test_a_stall_in_dist_init_without_peers_is_not_nccl():
    found = {"category": "unknown", "line": "the classifier's line", "remedy": "r"}
    s = Snapshot(stage="dist_init", tail=("a", "last"), peers=False)
    assert V.explain_stall(found, s) == {"category": "unknown", "line": "the classifier's line",
                                         "remedy": messages.R_STALL_NO_PEERS}
    assert V.explain_stall(UNKNOWN, s) == {"category": "unknown", "line": "last", "remedy": messages.R_STALL_NO_PEERS}
    # with peers (or not known) it is NCCL's, on the classifier's line
    for peers in (True, None):
        s = Snapshot(stage="dist_init", tail=("a", "last"), peers=peers)
        assert V.explain_stall(found, s) == {"category": "nccl", "line": "the classifier's line",
                                             "remedy": messages.R_STALL_NCCL}
        assert V.explain_stall(UNKNOWN, s) == {"category": "nccl", "line": None, "remedy": messages.R_STALL_NCCL}


def test_a_timeout_keeps_the_classifiers_line_and_fills_a_missing_one():
    known = {"category": "oom_kv", "line": "l", "remedy": "r"}
    assert V.explain_timeout(known, Snapshot(tail=("last",))) == known
    assert V.explain_timeout(dict(known, line=None), Snapshot(tail=("last",))) == dict(known, line="last")
    assert V.explain_timeout(dict(known, line=None), Snapshot())["line"] is None
    assert V.explain_timeout(known, Snapshot(foreign_seen=True, base="http://h:2", tail=("last",))) == {
        "category": "port_in_use", "line": "l", "remedy": messages.R_FOREIGN_PORT % "http://h:2"}


def test_an_ending_shows_its_reason_and_why():
    # what a failed assertion on a predicate prints
    assert repr(V.Ending("crashed", "server process 4 exited")) == "Ending('crashed', 'server process 4 exited')"
    assert repr(V.Ending(None, "ready")) == "Ending(None, 'ready')"
