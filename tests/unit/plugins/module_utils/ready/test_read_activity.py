# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ready/read_activity: the activity source fills the activity's part of the snapshot and nothing else, from a real
process tree (its I/O, a member stopped by SIGSTOP) and the fake nvidia-smi (real formats); a tree gone or an
nvidia-smi that fails leaves the part as it was."""
import testpaths
import os
import signal
import subprocess
import sys
import time

import pytest

from localrun import local_run
from snapshot_marks import marked, written

from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch
from ansible_collections.llmserve.sglang.plugins.module_utils.ready import read_activity
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import with_defaults

FAKE_NVIDIA = os.path.join(testpaths.REPO, "tools", "fake_nvidia")


def source(stall_timeout=600):
    return read_activity.ActivitySource(with_defaults({"stall_timeout": stall_timeout}), run=local_run)


@pytest.fixture
def writer(tmp_path):
    """A process that keeps writing (its wchar grows)."""
    code = "import time\nwith open(%r, 'w') as f:\n    while True:\n        f.write('x' * 4096); f.flush(); time.sleep(0.01)"
    p = subprocess.Popen([sys.executable, "-c", code % str(tmp_path / "out")])
    yield p
    if p.poll() is None:
        p.kill()
        p.wait()


@pytest.fixture
def gpus(monkeypatch):
    monkeypatch.setenv("PATH", "%s%s%s" % (FAKE_NVIDIA, os.pathsep, os.environ["PATH"]))
    monkeypatch.setenv("FAKE_NVIDIA_PROFILE", "h200x1")


def wait_for(predicate):
    while not predicate():
        time.sleep(0.01)


def test_it_fills_exactly_the_activity_part(writer):
    src = source()
    src.start(writer.pid)
    base = src.use["io_bytes"]
    wait_for(lambda: proc_watch.tree_usage(writer.pid)["io_bytes"] > base)
    s = marked(now=7.0)
    src.see(s, writer.pid, look=True)
    assert written(s, now=7.0) == set(read_activity.PART)
    assert s.last_progress == 7.0 and s.stopped_since is None and src.use["io_bytes"] > base
    assert src.usage()["io_bytes"] == src.use["io_bytes"] and src.slow_polls == 1


def test_between_looks_the_part_is_as_last_seen(writer):
    src = source()
    src.start(writer.pid)
    s = marked(now=3.0)
    src.see(s, writer.pid, look=False)
    assert written(s, now=3.0) == set(read_activity.PART) and s.last_progress == 0.0 and src.slow_polls == 0
    src.moved(5.0)  # the log grew
    s = marked(now=6.0)
    src.see(s, writer.pid, look=False)
    assert s.last_progress == 5.0


def test_a_stopped_member_is_said_from_when_it_was_first_seen(writer):
    src = source()
    src.start(writer.pid)
    os.kill(writer.pid, signal.SIGSTOP)
    wait_for(lambda: proc_watch.proc_stat(writer.pid)[0] in ("T", "t"))
    for now in (10.0, 20.0):
        s = marked(now=now)
        src.see(s, writer.pid, look=True)
        assert s.stopped_since == 10.0
    assert src.stopped_members(writer.pid) == [writer.pid]
    os.kill(writer.pid, signal.SIGCONT)
    wait_for(lambda: proc_watch.proc_stat(writer.pid)[0] not in ("T", "t"))
    s = marked(now=30.0)
    src.see(s, writer.pid, look=True)
    assert s.stopped_since is None and src.stopped_members(writer.pid) == []


def test_a_tree_gone_leaves_the_part_as_it_was(writer):
    src = source()
    src.start(writer.pid)
    src.moved(2.0)
    writer.kill()
    writer.wait()
    s = marked(now=4.0)
    src.see(s, writer.pid, look=True)
    assert written(s, now=4.0) == set(read_activity.PART) and (s.last_progress, s.stopped_since) == (2.0, None)
    assert src.stopped_members(None) == []


def test_the_gpus_are_asked_only_after_a_quiet_while_and_their_first_answer_is_no_progress(gpus):
    src = source(stall_timeout=4)  # asked after min(10 s, half the stall timeout) of quiet
    src.see(marked(now=1.9), None, look=True)
    assert src.use.get("gpu_mem") is None
    s = marked(now=2.0)
    src.see(s, None, look=True)
    assert src.use["gpu_mem"] == 0 and s.last_progress == 0.0
    assert src.report(failed=True)["gpu"]["gpus"][0]["memory_total_mib"] == 143771
    assert src.report(failed=False) == {}


def test_an_nvidia_smi_that_fails_is_no_answer(gpus, monkeypatch):
    monkeypatch.setenv("FAKE_NVIDIA_PROFILE", "nodriver")
    src = source(stall_timeout=4)
    s = marked(now=20.0)
    src.see(s, None, look=True)
    assert src.use.get("gpu_mem") is None and written(s, now=20.0) == set(read_activity.PART)
    assert s.last_progress == 0.0 and src.report(failed=True) == {"gpu": None}
    monkeypatch.setenv("FAKE_NVIDIA_PROFILE", "h200x1")
    src.see(marked(now=29.9), None, look=True)  # asked at most every 10 s
    assert src.use.get("gpu_mem") is None
    src.see(marked(now=30.0), None, look=True)
    assert src.use["gpu_mem"] == 0
