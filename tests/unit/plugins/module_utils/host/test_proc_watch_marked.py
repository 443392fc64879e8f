# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/proc_watch.end_marked: the processes started with a one-time environment marker (a probe and the ranks it
spawned, in another session too) are killed and gone when it returns; a process without the marker is untouched."""
import os
import signal
import subprocess
import sys

from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch

TREE = r'''
import os, subprocess, sys, time
rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
print(rank.pid, flush=True)
time.sleep(600)
'''


def gone(pid):
    st = proc_watch.proc_stat(pid)
    return st is None or st[0] in ("Z", "X")


def test_the_marked_tree_is_gone_when_it_returns_and_a_bystander_lives():
    marker = "test-%d" % os.getpid()
    env = dict(os.environ, MARK_UNDER_TEST=marker)
    probe = subprocess.Popen([sys.executable, "-c", TREE], env=env, stdout=subprocess.PIPE, universal_newlines=True)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 env=dict(os.environ, MARK_UNDER_TEST="another"))
    rank = None
    try:
        rank = int(probe.stdout.readline())
        assert proc_watch.marked("MARK_UNDER_TEST", marker) == sorted([probe.pid, rank])
        assert proc_watch.end_marked("MARK_UNDER_TEST", marker, wait=5) == []  # a bound of its own
        assert gone(probe.pid) and gone(rank)  # no wait here: gone when end_marked returned
        assert bystander.poll() is None and not gone(bystander.pid)
        assert proc_watch.marked("MARK_UNDER_TEST", "another") == [bystander.pid]
    finally:  # killed here too: a failing end_marked must fail the test, not leave it waiting on a 600 s sleep
        for pid in [rank] if rank else []:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for proc in (bystander, probe):
            proc.kill()
            proc.wait()
        probe.stdout.close()


def test_nothing_marked_returns_at_once_and_a_prefix_of_the_marker_is_not_it():
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 env=dict(os.environ, MARK_UNDER_TEST="abc-1"))
    try:
        assert proc_watch.marked("MARK_UNDER_TEST", "abc") == []
        assert proc_watch.end_marked("MARK_UNDER_TEST", "abc", wait=0) == []
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


# -- issue 47: what marked reads (a capped environ, live processes only) and how long end_marked tries
def _fake_proc(tmp_path, environs):
    for pid, env in environs.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "environ").write_bytes(env)
    (tmp_path / "self").mkdir()
    return str(tmp_path)


def _pid_max():
    with open("/proc/sys/kernel/pid_max") as handle:
        return int(handle.read())


def test_only_the_first_environ_cap_bytes_are_read_and_dead_pids_are_not_listed(tmp_path):
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)   # exited, not reaped: a zombie
        far = b"A=1\0" + b"x" * proc_watch.ENVIRON_CAP + b"\0M=v\0"
        proc = _fake_proc(tmp_path, {live.pid: b"A=1\0M=v\0", zombie.pid: b"M=v\0", _pid_max() + 1: b"M=v\0",
                                     os.getpid(): b"M=v\0"})
        assert proc_watch.marked("M", "v", proc=proc) == [live.pid]   # not the zombie, the gone pid, nor this one
        (tmp_path / str(live.pid) / "environ").write_bytes(far)
        assert proc_watch.marked("M", "v", proc=proc) == []           # past the cap: not read
    finally:
        for child in (live, zombie):
            child.kill()
            child.wait()


def test_a_process_in_state_x_is_not_listed(tmp_path, monkeypatch):
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        proc = _fake_proc(tmp_path, {live.pid: b"M=v\0"})
        real = proc_watch.proc_stat
        assert proc_watch.marked("M", "v", proc=proc) == [live.pid]
        for state in ("X", "Z"):   # X (dead) lasts too short to be read from /proc: told here
            monkeypatch.setattr(proc_watch, "proc_stat", lambda pid, s=state: (s,) + tuple(real(pid)[1:]))
            assert proc_watch.marked("M", "v", proc=proc) == []
    finally:
        live.kill()
        live.wait()


class _Clock(object):
    """end_marked's clock and sleep: each look at the clock moves it one second on; the sleeps are written down."""

    def __init__(self):
        self.now, self.slept = 0.0, []

    def clock(self):
        self.now += 1.0
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        if len(self.slept) > 50:
            raise AssertionError("still trying after 50 sleeps")


def test_end_marked_tries_every_20_ms_for_its_wait_then_returns_what_is_left(monkeypatch):
    gone_for_good = _pid_max() + 1   # no process can have it: SIGKILL finds nothing to kill
    monkeypatch.setattr(proc_watch, "marked", lambda name, value: [gone_for_good] if (name, value) == ("M", "v") else [])
    clock = _Clock()
    assert proc_watch.end_marked("M", "v", clock=clock.clock, sleep=clock.sleep) == [gone_for_good]
    assert clock.slept == [0.02] * 9           # deadline 1 + 10: looks at 2 .. 10 sleep, the one at 11 returns
    clock = _Clock()
    assert proc_watch.end_marked("M", "v", wait=2.0, clock=clock.clock, sleep=clock.sleep) == [gone_for_good]
    assert clock.slept == [0.02]               # deadline 3: the look at 2 sleeps, the one at 3 returns
    clock = _Clock()
    assert proc_watch.end_marked("M", "other", clock=clock.clock, sleep=clock.sleep) == []
    assert clock.slept == []                   # nothing marked: at once
