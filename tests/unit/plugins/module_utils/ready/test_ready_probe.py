# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ready/probe: the readers' parts tile the snapshot (each field has one writer), and a poll where one source fails
keeps the others' parts as their sources say (real log, real process, a port nothing listens on)."""
import testpaths
import os
import time

from netutil import free_port

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import read_activity, read_http, read_log, read_process
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import validate, with_defaults
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.probe import Probe
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.verdicts import Snapshot

# What the waiter sets itself: its settings at each poll (waiter._snapshot), and at the end what it asked.
WAITER = ("now", "rank0", "node_rank", "unit", "base", "fatal_grace", "stage_timeouts", "stall_timeout", "timeout",
          "verify_generation", "peers", "stopped", "generation", "chat_probe", "chat")
PARTS = (read_log.PART, read_process.PART, read_activity.PART, read_http.PART, WAITER)

OOM = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs", "oom_kv_docker.log")


def test_each_snapshot_field_has_one_writer():
    fields = [f for part in PARTS for f in part]
    assert len(fields) == len(set(fields)), "a field in two parts"
    assert set(fields) == set(Snapshot.FIELDS)


def probe(tmp_path, pid, lines):
    log = tmp_path / "server.log"
    with open(OOM) as f:
        log.write_text("".join(f.readlines()[:lines]))
    p = with_defaults({"url": "http://127.0.0.1:%d" % free_port(), "log_path": str(log), "pid": pid,
                       "sglang_version": "0.5.23"})
    return Probe(p, validate(p), clock=time.monotonic, sleep=time.sleep), str(log)


def test_http_down_leaves_the_log_and_the_process_as_they_are(tmp_path, sleeper):
    pr, _log = probe(tmp_path, sleeper.pid, 4)
    s = Snapshot(now=1.0)
    assert pr.poll(s, costly=True) is None
    assert (s.stage, s.has_log, s.pid, s.alive, s.last_progress) == ("load_weights", True, sleeper.pid, True, 1.0)
    assert (s.health, s.health_error, s.health_path) == (None, None, "/ready")


def test_a_log_gone_and_a_process_dead_is_a_crash_with_the_log_as_last_read(tmp_path, sleeper):
    pr, log = probe(tmp_path, sleeper.pid, 4)
    pr.poll(Snapshot(now=1.0), costly=True)
    os.unlink(log)
    sleeper.kill()
    sleeper.wait()
    s = Snapshot(now=2.0)
    ending = pr.poll(s, costly=False)
    assert ending.reason == "crashed" and (s.alive, s.stage) == (False, "load_weights")
    assert s.health is None and s.tail[-1].endswith("Load weight begin. avail mem=78.53 GB")
    r = pr.report(failed=False)
    assert r["process"]["pid"] == sleeper.pid and r["process"]["cpu_seconds"] is not None
    assert r["log_bytes_read"] > 0


def test_the_state_is_one_part_per_source_and_a_resumed_probe_looks_no_more_at_the_start(tmp_path, sleeper):
    pr, _log = probe(tmp_path, sleeper.pid, 4)
    pr.poll(Snapshot(now=1.0), costly=True)
    state = pr.dump()
    assert sorted(state) == ["activity", "http", "log", "process"]
    sleeper.kill()
    sleeper.wait()
    p = with_defaults({"url": "http://127.0.0.1:9", "pid": sleeper.pid})
    again = Probe(p, validate(p), state, time.monotonic, time.sleep)  # a dead pid at a first look would be refused
    assert again.process.pid == sleeper.pid and again.log.stages.stage == "load_weights"
    assert again.activity.last_progress == 1.0 and again.http.health_path() == "/ready"
