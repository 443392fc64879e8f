# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each verdict predicate on hand-built snapshots: no process, no file, no socket."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import verdicts as V
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.verdicts import Snapshot

UNKNOWN = {"category": "unknown", "line": None, "remedy": "no known failure line"}


def test_snapshot_refuses_a_field_no_predicate_reads():
    with pytest.raises(TypeError, match="helth"):
        Snapshot(helth=200)


def test_every_predicate_is_in_a_step():
    steps = V.PROCESS + V.ACTIVITY + V.READINESS + V.LIMITS
    assert len(set(steps)) == len(steps)
    # mutmut (tools/mutation) adds its own functions to the module: x_<name>__mutmut_<n> and its trampolines
    assert set(steps) | {V.generation_fails, V.chat_fails} == {  # the two asked once READY is seen (waiter._ready)
        f for n, f in vars(V).items() if callable(f) and getattr(f, "__module__", "") == V.__name__
        and not isinstance(f, type) and "mutmut" not in n and not n.startswith("x_")
        and n not in ("first", "explain", "explain_crash", "explain_stall", "explain_timeout", "answered_before_our_http")}


def test_died_before_the_wait():
    assert V.died_before_the_wait(Snapshot()) is None
    e = V.died_before_the_wait(Snapshot(died_before="pid 7 is not running"))
    assert (e.reason, e.why, e.explain) == ("crashed", "pid 7 is not running", "crash")


@pytest.mark.parametrize("alive, ends", [(True, False), (None, False), (False, True)])
def test_process_exited(alive, ends):
    e = V.process_exited(Snapshot(pid=41, alive=alive))
    assert (e is not None) == ends
    if ends:
        assert e.reason == "crashed" and "41 exited" in e.why


def test_unit_stopped():
    assert V.unit_stopped(Snapshot(unit="sglang", unit_running=True)) is None
    assert V.unit_stopped(Snapshot(unit="sglang")) is None  # not asked yet
    e = V.unit_stopped(Snapshot(unit="sglang", unit_running=False, unit_active="failed", unit_sub="failed"))
    assert e.reason == "crashed" and e.why == "unit sglang is failed/failed"


@pytest.mark.parametrize("now, fatal_at, ready_at, ends", [
    (10.0, None, None, False),   # no fatal line
    (10.0, 7.0, None, False),    # inside the grace
    (10.0, 5.0, None, True),     # past it, the parent lingers
    (10.0, 5.0, 6.0, True),      # "fired up" read after the fatal line does not undo it (a foreign warm-up)
    (10.0, 5.0, 4.0, False),     # one read before it does
])
def test_fatal_line_lingers(now, fatal_at, ready_at, ends):
    s = Snapshot(now=now, first_strong_at=fatal_at, ready_at=ready_at, fatal_grace=5.0)
    e = V.fatal_line_lingers(s)
    assert (e is not None) == ends


def test_ready_on_rank0_needs_a_200_that_is_ours():
    def snap(**changes):
        values = {"health": 200, "stage": "warmup", "pid": 5}
        values.update(changes)
        return Snapshot(**values)
    assert V.ready_on_rank0(snap()).failed is False
    assert V.ready_on_rank0(snap(health=503)) is None
    assert V.ready_on_rank0(snap(first_strong_at=3.0)) is None
    assert V.ready_on_rank0(snap(foreign_port=True)) is None
    assert V.ready_on_rank0(snap(rank0=False)) is None


@pytest.mark.parametrize("stage, has_log, age, early", [
    ("load_weights", True, 100.0, True),   # our uvicorn is not up before the weights
    ("http", True, 100.0, True),
    ("warmup", True, 100.0, False),
    ("starting", True, 1.0, True),         # empty log and a process a second old
    ("starting", True, 30.0, False),       # --log-level warning: no stage lines ever
    ("starting", False, 1.0, False),       # no log to judge from
])
def test_answered_before_our_http(stage, has_log, age, early):
    assert V.answered_before_our_http(Snapshot(stage=stage, has_log=has_log, pid=5, process_age=age)) is early


def test_log_ready_but_endpoint_disagrees():
    s = dict(stage="ready", health=503, ready_hint_at=10.0, base="http://h:1", health_path="/health")
    assert V.log_ready_but_endpoint_disagrees(Snapshot(now=20.0, **s)) is None
    e = V.log_ready_but_endpoint_disagrees(Snapshot(now=26.0, **s))
    assert e.reason == "unhealthy" and e.why == "log says ready but http://h:1/health answers 503"
    assert e.key["category"] == "unknown"
    s["health"] = 200
    assert V.log_ready_but_endpoint_disagrees(Snapshot(now=26.0, **s)) is None


@pytest.mark.parametrize("stage, began, quiet_since, alive, ready", [
    ("http", 0.0, 0.0, True, True),
    ("cuda_graph", 0.0, 4.0, True, True),      # 10 s in the stage, 6 s quiet
    ("cuda_graph", 0.0, 8.0, True, False),     # still writing
    ("cuda_graph", 5.0, 0.0, True, False),     # not long in the stage
    ("cuda_graph", 0.0, 4.0, False, False),    # gone
    ("kv_cache", 0.0, 0.0, True, False),
])
def test_worker_initialised(stage, began, quiet_since, alive, ready):
    s = Snapshot(rank0=False, node_rank=1, now=10.0, stage=stage, stage_began=began, last_progress=quiet_since,
                 alive=alive)
    assert (V.worker_initialised(s) is not None) is ready
    assert V.worker_initialised(Snapshot(stage="http")) is None  # rank 0 is judged over HTTP


def test_generation_fails():
    assert V.generation_fails(Snapshot()) is None
    assert V.generation_fails(Snapshot(generation=(True, {"status": 200}))) is None
    e = V.generation_fails(Snapshot(generation=(False, {"status": 500}), health_path="/ready"))
    assert e.reason == "unhealthy" and e.why.startswith("/ready answers 200 but")
    assert e.key["category"] == "scheduler_exception"


def test_stage_over_budget():
    s = dict(stage="dist_init", stage_began=10.0, stage_timeouts={"dist_init": 30})
    assert V.stage_over_budget(Snapshot(now=39.0, **s)) is None
    e = V.stage_over_budget(Snapshot(now=41.0, **s))
    assert e.reason == "stalled" and e.why == "stage dist_init over its 30s budget (31s)"
    assert V.stage_over_budget(Snapshot(now=41.0, stage="init", stage_began=0.0)) is None


def test_stalled():
    assert V.stalled(Snapshot(now=100.0, last_progress=50.0, stall_timeout=60)) is None
    assert V.stalled(Snapshot(now=110.0, last_progress=50.0, stall_timeout=60)).reason == "stalled"


def test_member_stopped():
    # the others' CPU (last_progress now) does not matter: a stopped member holds the start-up
    assert V.member_stopped(Snapshot(now=100.0, last_progress=100.0, stopped_since=None)) is None
    assert V.member_stopped(Snapshot(now=100.0, last_progress=100.0, stopped_since=75.0)) is None
    e = V.member_stopped(Snapshot(now=100.0, last_progress=100.0, stopped_since=70.0))
    assert e.reason == "stalled" and e.why == "a process of the server has been stopped (state T) for 30s"
    # a short stall_timeout shortens the wait for it too
    assert V.member_stopped(Snapshot(now=100.0, stopped_since=95.0, stall_timeout=5)).reason == "stalled"


def test_timed_out():
    assert V.timed_out(Snapshot(now=99.0, timeout=100)) is None
    assert V.timed_out(Snapshot(now=100.0, timeout=100)).why == "not ready within timeout 100s"


def test_first_takes_the_earliest_predicate_of_a_step():
    s = Snapshot(died_before="gone", alive=False, pid=3)
    assert V.first(V.PROCESS, s).why == "gone"


def test_explain_crash_exit_2_is_argparse():
    e = V.Ending("crashed", "x", explain="crash")
    assert V.explain(e, UNKNOWN, Snapshot(), exit_status=2)["category"] == "bad_args"
    assert V.explain(e, UNKNOWN, Snapshot(), exit_status=1)["category"] == "unknown"
    known = {"category": "nccl", "line": "NCCL error", "remedy": "r"}
    assert V.explain(e, known, Snapshot(), exit_status=2) is known


def test_explain_stall_in_dist_init_is_nccl():
    e = V.Ending("stalled", "x", explain="stall")
    assert V.explain(e, UNKNOWN, Snapshot(stage="dist_init", tail=["a"]))["category"] == "nccl"
    done = Snapshot(stage="dist_init", tail=["Init torch distributed ends. mem usage=0.1 GB", "b"])
    v = V.explain(e, UNKNOWN, done)
    assert v["category"] == "unknown" and v["line"] == "b" and "py-spy" in v["remedy"]


def test_explain_timeout_names_who_answered():
    e = V.Ending("timeout", "x", explain="timeout")
    v = V.explain(e, UNKNOWN, Snapshot(stage="load_weights", stage_label="loading weights", tail=["last"]))
    assert v["line"] == "last" and v["remedy"].startswith("still loading weights")
    v = V.explain(e, UNKNOWN, Snapshot(answered_early_seen=True, base="http://127.0.0.1:30000"))
    assert v["category"] == "port_in_use" and "http://127.0.0.1:30000" in v["remedy"]
    known = {"category": "oom_kv", "line": "l", "remedy": "r"}
    assert V.explain(e, known, Snapshot(answered_early_seen=True))["category"] == "oom_kv"
    assert V.explain(e, known, Snapshot(foreign_seen=True))["category"] == "port_in_use"


def test_an_ending_with_its_own_key_is_reported_as_is():
    key = {"category": "scheduler_exception", "line": "x", "remedy": "r"}
    assert V.explain(V.Ending("unhealthy", "y", key=key), UNKNOWN, Snapshot()) is key
