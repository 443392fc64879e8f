# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ready/read_process: the process source fills the process's part of the snapshot and nothing else, from real
processes, a real listener, a real pid file and the supervisor's status file, and systemctl run through the tests'
runner; a process that dies mid-wait is a part that says so, the others untouched."""
import json
import os
import signal
import socket
import stat
import time

import pytest

from localrun import local_run
from snapshot_marks import marked, written

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import read_process
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput, with_defaults

ON_STEP = ("pid", "alive", "died_before")
ON_PORT = ("process_age", "foreign_port", "foreign_seen")


def source(**params):
    return read_process.ProcessSource(with_defaults(params), time.monotonic, time.sleep, run=local_run)


@pytest.fixture
def listener():
    """A port this test's own process listens on: outside any watched child's tree."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


def test_it_fills_exactly_the_process_part(sleeper, listener):
    src = source(pid=sleeper.pid)
    assert src.first_look(has_log=False) == sleeper.pid
    s = marked(now=1.0)
    src.see(s)
    src.see_unit(s, look=True)  # no unit: nothing to say
    assert written(s, now=1.0) == set(ON_STEP)
    assert (s.pid, s.alive, s.died_before) == (sleeper.pid, True, None)
    src.see_port(s, "127.0.0.1", listener, look=True, ask_age=True)
    assert written(s, now=1.0) == set(ON_STEP + ON_PORT)
    assert s.foreign_port is True and s.foreign_seen is True and s.process_age >= 0
    assert src.dump()["foreign"] is True  # remembered: said at the deadline


def test_a_port_on_another_host_is_not_checked_and_the_seen_flag_is_always_said(sleeper, listener):
    src = source(pid=sleeper.pid)
    src.first_look(has_log=False)
    s = marked(now=1.0)
    src.see(s)
    src.see_port(s, "10.0.0.5", listener, look=True, ask_age=False)
    assert s.foreign_port is False and s.foreign_seen is False and written(s, now=1.0) == set(ON_STEP) | {
        "foreign_port", "foreign_seen"}
    quiet = marked(now=2.0)
    src.see_port(quiet, "127.0.0.1", listener, look=False, ask_age=True)
    assert written(quiet, now=2.0) == {"foreign_seen"}


def test_a_process_that_dies_mid_wait_is_said_with_its_exit_status(sleeper):
    src = source(pid=sleeper.pid)
    src.first_look(has_log=False)
    os.kill(sleeper.pid, signal.SIGKILL)
    while read_process.proc_watch.proc_stat(sleeper.pid)[0] not in ("Z", "X"):
        time.sleep(0.01)
    s = marked(now=3.0)
    src.see(s)
    assert written(s, now=3.0) == set(ON_STEP) and (s.pid, s.alive) == (sleeper.pid, False)
    assert src.exit_status() == -signal.SIGKILL
    assert src.report(failed=True) == {"process": {"pid": sleeper.pid, "alive": False, "exit_status": -9}}


def test_a_pid_not_running_at_the_first_look(sleeper):
    sleeper.kill()
    sleeper.wait()
    with pytest.raises(BadInput, match="is not running"):
        source(pid=sleeper.pid).first_look(has_log=False)
    src = source(pid=sleeper.pid)
    assert src.first_look(has_log=True) is None
    s = marked()
    src.see(s)
    assert s.died_before and s.alive is False and s.pid == sleeper.pid


def test_a_supervised_server_that_already_ended(tmp_path):
    pid_file = tmp_path / "server.pid"
    (tmp_path / "server.pid.status").write_text(json.dumps({"pid": 4242, "returncode": 3}))
    src = source(pid_file=str(pid_file))
    assert src.first_look(has_log=True) is None
    s = marked()
    src.see(s)
    assert "4242" in s.died_before and src.exit_status() == 3
    (tmp_path / "server.pid.status").unlink()
    with pytest.raises(BadInput, match="was the server started"):
        source(pid_file=str(pid_file)).first_look(has_log=True)
    pid_file.write_text("nope")
    with pytest.raises(BadInput, match="does not hold a pid"):
        source(pid_file=str(pid_file)).first_look(has_log=True)


def systemctl(tmp_path, monkeypatch, props):
    """A systemctl on PATH answering ``show`` with ``props`` (what the real one prints for -p)."""
    tool = tmp_path / "bin" / "systemctl"
    tool.parent.mkdir(exist_ok=True)
    tool.write_text("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % "\n".join("%s=%s" % kv for kv in props.items()))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", "%s%s%s" % (tool.parent, os.pathsep, os.environ["PATH"]))


def test_a_unit_is_read_every_interval_and_its_new_main_pid_watched(sleeper, tmp_path, monkeypatch):
    systemctl(tmp_path, monkeypatch, {"LoadState": "loaded", "ActiveState": "active", "SubState": "running",
                                      "MainPID": os.getpid()})
    src = source(unit="sglang")
    assert src.first_look(has_log=False) == os.getpid()
    s = marked()
    src.see_unit(s, look=False)
    assert written(s) == {"unit_running", "unit_active", "unit_sub"} and s.unit_running is True
    systemctl(tmp_path, monkeypatch, {"LoadState": "loaded", "ActiveState": "activating", "SubState": "auto-restart",
                                      "MainPID": sleeper.pid})
    s = marked()
    src.see_unit(s, look=True)
    assert (s.unit_running, s.unit_active, s.unit_sub) == (False, "activating", "auto-restart")
    assert src.pid == sleeper.pid and written(s) == {"unit_running", "unit_active", "unit_sub"}


def test_a_unit_that_failed_before_the_wait(tmp_path, monkeypatch):
    systemctl(tmp_path, monkeypatch, {"LoadState": "loaded", "ActiveState": "failed", "SubState": "failed",
                                      "Result": "exit-code", "ExecMainCode": "1", "ExecMainStatus": "2"})
    src = source(unit="sglang")
    assert src.first_look(has_log=True) is None
    s = marked()
    src.see(s)
    assert "sglang" in s.died_before and s.pid is None and s.alive is None
    assert src.report(failed=False)["unit"]["Result"] == "exit-code"
    systemctl(tmp_path, monkeypatch, {"LoadState": "not-found"})
    with pytest.raises(BadInput, match="not found"):
        source(unit="sglang").first_look(has_log=True)


@pytest.mark.parametrize("code, status, expected", [
    ("1", "0", 0), ("1", "2", 2), ("2", "9", -9), ("3", "6", -6), ("0", "0", None), ("1", "", None), (None, None, None),
])
def test_unit_exit_status(code, status, expected):
    assert read_process.unit_exit_status({"ExecMainCode": code, "ExecMainStatus": status}) == expected
