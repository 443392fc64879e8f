# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One deploy of an instance at a time (module_utils/host/lock.py), and a write that is whole or absent."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import lock
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout


def holder(token, since=None):
    return {"controller": "ctl", "user": "ops", "pid": 4242, "since": time.time() if since is None else since,
            "token": token}


def test_the_second_taker_is_refused_with_the_holder_named(tmp_path):
    path = str(tmp_path / "run" / "mol.deploy.lock")
    first = lock.take(path, holder("a"), 7200)
    assert first["taken"] and first["took_over"] is None
    second = lock.take(path, holder("b"), 7200)
    assert not second["taken"] and second["held_by"]["token"] == "a"
    assert second["message"].startswith("held by ops@ctl (ansible-playbook pid 4242) since ")
    assert lock.take(path, holder("a"), 7200)["message"] == "holds the lock already"


def test_a_stale_lock_is_taken_over_old_or_dead(tmp_path):
    path = str(tmp_path / "l")
    lock.take(path, holder("old", since=time.time() - 9000), 7200)
    got = lock.take(path, holder("new"), 7200)
    assert got["taken"] and got["took_over"]["token"] == "old" and "older than 7200 s" in got["message"]
    got = lock.take(path, holder("third"), 7200, holder_dead=True)
    assert got["taken"] and "controller process is gone" in got["message"]
    assert lock.read(path)["token"] == "third"


def test_only_the_holder_releases(tmp_path):
    path = str(tmp_path / "l")
    lock.take(path, holder("a"), 7200)
    assert not lock.release(path, "b") and os.path.exists(path)
    assert lock.release(path, "a") and not os.path.exists(path)
    assert not lock.release(path, "a")


def test_check_mode_takes_nothing(tmp_path):
    path = str(tmp_path / "l")
    assert lock.take(path, holder("a"), 7200, check=True)["taken"] and not os.path.exists(path)


TAKER = """
import json, sys
sys.path[:0] = %r
from ansible_collections.llmserve.sglang.plugins.module_utils.host import lock
import time
print(json.dumps(lock.take(sys.argv[1], {"token": sys.argv[2], "since": time.time(), "controller": "c", "user": "u",
                                         "pid": 1}, 600)["taken"]))
"""


@pytest.mark.parametrize("existing", [None, "stale"])
def test_racing_takers_never_both_win(tmp_path, existing):
    """Four processes take the same lock at once - free, or held by a holder long stale: one wins."""
    code = TAKER % (sys.path,)
    for round_ in range(10):
        path = str(tmp_path / ("l%d" % round_))
        if existing:
            lock.take(path, holder("stale", since=time.time() - 3600), 600)
        procs = [subprocess.Popen([sys.executable, "-c", code, path, "t%d" % i], stdout=subprocess.PIPE) for i in range(4)]
        wins = [json.loads(p.communicate()[0]) for p in procs]
        assert wins.count(True) == 1, wins


WRITER = """
import sys
sys.path[:0] = %r
paths = dict(%r)
inst = si.Instance({"manager": "pidfile", "paths": paths, "dirs": []}, None)
files = [{"path": p, "content": c * (4 << 20), "mode": "0644", "owner": None, "group": None} for p, c in %r]
sys.stdout.write("go\\n"); sys.stdout.flush()
while True:
    inst.backup()
    inst.write(files)
    inst.write([dict(f, content=f["content"].swapcase()) for f in files])
"""


def test_a_deploy_killed_while_it_writes_never_leaves_half_a_file(tmp_path):
    p = layout.paths({"instance": "t", "config_dir": str(tmp_path / "etc"), "log_dir": str(tmp_path / "log")})
    os.makedirs(p["previous_dir"])
    files = [(p["env"], "e"), (p["argv"], "a"), (p["launch_spec"], "s")]
    whole = set()
    for path, c in files:
        whole |= {c * (4 << 20), c.upper() * (4 << 20)}
    code = WRITER % (sys.path, p, files)
    for kill_after in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5):
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
        proc.stdout.readline()
        time.sleep(kill_after)  # where the kill lands varies; what it leaves must be whole whatever it is
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for path in [f for f, _c in files] + [os.path.join(p["previous_dir"], os.path.basename(f)) for f, _c in files]:
            if os.path.exists(path):
                with open(path) as fh:
                    assert fh.read() in whole, path


def test_the_controller_tells_a_dead_holder_from_a_live_one():
    from ansible_collections.llmserve.sglang.plugins.action import server_lock as action

    me = os.getpid()
    assert action._alive(me, action._start_time(me))
    assert not action._alive(me, "1")  # the pid now runs another process than the one that took the lock
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not action._alive(gone.pid, "?")
    assert not action._alive(None, None)
