# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pid-file mode's stop, status and ready act only on the processes the supervisor recorded starting
(host/pidfile): pid files naming PID 1, a bystander ``sleep``, a stale or a reused pid, or a link, get a refusal that
names the file and nothing is signalled. Real processes, the real supervisor script."""
import json
import os
import subprocess
import sys
import time

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import pidfile
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.read_process import ProcessSource
from ansible_collections.llmserve.sglang.plugins.module_utils.server import instance as si
from ansible_collections.llmserve.sglang.plugins.module_utils.server import supervise
from test_server_stop import gpu, instance  # noqa: F401  gpu: the fake nvidia-smi fixture  # pylint: disable=unused-import

SUPERVISE = supervise.__file__.replace(".pyc", ".py")


def alive(pid):
    seen = pidfile.observe(pid)
    return seen is not None and seen["state"] not in ("Z", "X")


@pytest.fixture
def bystander():
    p = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield p
    p.kill()
    p.wait()


@pytest.fixture
def supervised(tmp_path):
    """A real supervised 'server' (sleep), started by the supervisor script; stopped at the end."""
    pid_file = str(tmp_path / "server.pid")
    out = subprocess.run([sys.executable, SUPERVISE, "start", "--pid-file", pid_file, "--log", str(tmp_path / "log"),
                          "--timeout", "5", "--", "sleep", "600"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert out.returncode == 0, out.stderr
    with open(pid_file + ".status") as f:
        rec = json.load(f)  # the identities as started: a test may rewrite the file
    yield pid_file
    for who in ("identity", "supervisor"):
        if alive(rec[who]["pid"]) and pidfile.identity_of(rec[who]["pid"])["starttime"] == rec[who]["starttime"]:
            os.kill(rec[who]["pid"], 9)


def ready_source(pid_file):
    return ProcessSource({"pid_file": pid_file, "tail_lines": 5}, time.monotonic, time.sleep)


def test_the_supervisor_records_both_identities_and_the_server_is_ours(supervised):
    st = supervise.state_of(supervised)
    assert st["running"] and st["problem"] is None and st["supervisor_pid"]
    rec = supervise.read_record(supervised)
    assert rec["identity"]["pid"] == st["pid"] and rec["supervisor"]["pid"] == st["supervisor_pid"]
    assert rec["identity"]["exe"] == os.path.realpath(subprocess.check_output(["sh", "-c", "command -v sleep"],
                                                                              universal_newlines=True).strip())
    assert pidfile.verdict(supervised, rec["identity"]) == {"state": "ours", "pid": st["pid"], "group": True,
                                                            "msg": None}
    assert ready_source(supervised).first_look(has_log=False) == st["pid"]
    assert supervise.stop_server(supervised, 5) == "stopped"
    assert not alive(st["pid"]) and not os.path.exists(supervised)


def test_a_pid_file_naming_pid_1_signals_nothing_and_says_so(supervised):
    server = supervise.state_of(supervised)["pid"]
    with open(supervised, "w") as f:
        f.write("1\n")
    with pytest.raises(supervise.NotOurs, match="names pid 1, never a server's"):
        supervise.stop_server(supervised, 5)
    st = supervise.state_of(supervised)
    assert not st["running"] and "names pid 1" in st["problem"]
    state = si.read_state("pidfile", "unused", supervised, None)
    assert state["active_state"] == "inactive" and state["sub_state"].startswith("pid file refused: pid file ")
    with pytest.raises(BadInput, match="pid_file: pid file .* names pid 1"):
        ready_source(supervised).first_look(has_log=True)
    assert alive(server)  # the real server was not signalled either: stop touched nothing


def test_a_bystander_named_by_either_pid_file_lives(tmp_path, bystander, supervised):
    server = supervise.state_of(supervised)["pid"]
    for name in (supervised, supervised + ".supervisor"):
        with open(name) as f:
            kept = f.read()
        with open(name, "w") as f:
            f.write("%d\n" % bystander.pid)
        with pytest.raises(supervise.NotOurs) as exc:
            supervise.stop_server(supervised, 5)
        assert ("pid file %s names pid %d, which is not the process started by the collection" % (name, bystander.pid)
                in str(exc.value)) and "remove the stale pid file %s" % name in str(exc.value)
        assert bystander.poll() is None and alive(server)
        with open(name, "w") as f:
            f.write(kept)
    assert supervise.stop_server(supervised, 5) == "stopped" and bystander.poll() is None


def test_a_bystander_without_any_record_is_not_reported_as_the_server(tmp_path, bystander):
    pid_file = str(tmp_path / "server.pid")
    with open(pid_file, "w") as f:
        f.write("%d\n" % bystander.pid)
    st = supervise.state_of(pid_file)
    assert not st["running"] and "no record of it" in st["problem"] and st.get("pid") is None
    with pytest.raises(BadInput, match="which is not the process started by the collection"):
        ready_source(pid_file).first_look(has_log=True)
    cli = subprocess.run([sys.executable, SUPERVISE, "stop", "--pid-file", pid_file], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert cli.returncode == 1 and "nothing signalled" in cli.stderr and bystander.poll() is None


def test_a_reused_pid_same_pid_another_start_time_is_not_signalled(tmp_path, bystander):
    pid_file = str(tmp_path / "server.pid")
    with open(pid_file, "w") as f:
        f.write("%d\n" % bystander.pid)
    ident = pidfile.identity_of(bystander.pid)
    with open(pid_file + ".status", "w") as f:
        json.dump({"pid": bystander.pid, "identity": dict(ident, starttime=ident["starttime"] - 100)}, f)
    with pytest.raises(supervise.NotOurs, match="start time differs"):
        supervise.stop_server(pid_file, 1)
    assert bystander.poll() is None
    with open(pid_file + ".status", "w") as f:  # the good record next to it: then it is ours, and is stopped
        json.dump({"pid": bystander.pid, "identity": ident}, f)
    assert supervise.stop_server(pid_file, 5) in ("stopped", "stopped (killed)")
    assert bystander.wait(10) == -15


def test_a_stale_pid_after_the_server_ended_is_not_running_and_nothing_is_signalled(tmp_path):
    p = subprocess.Popen(["sleep", "600"], start_new_session=True)
    ident = pidfile.identity_of(p.pid)
    p.kill()
    p.wait()
    pid_file = str(tmp_path / "server.pid")
    with open(pid_file, "w") as f:
        f.write("%d\n" % p.pid)
    with open(pid_file + ".status", "w") as f:
        json.dump({"pid": p.pid, "identity": ident, "returncode": -9}, f)
    assert supervise.stop_server(pid_file, 1) == "not running"
    st = supervise.state_of(pid_file)
    assert not st["running"] and st["problem"] is None


def test_a_link_as_pid_file_is_refused_by_name(tmp_path, supervised):
    server = supervise.state_of(supervised)["pid"]
    real = str(tmp_path / "elsewhere.pid")
    os.rename(supervised, real)
    os.symlink(real, supervised)
    with pytest.raises(supervise.NotOurs, match="is a symbolic link"):
        supervise.stop_server(supervised, 5)
    assert alive(server)
    os.unlink(supervised)
    os.rename(real, supervised)


def test_a_server_started_by_an_earlier_release_is_stopped_by_its_spawn_epoch(supervised):
    """Upgrading the collection under a running pid-file server: its record has no identities yet."""
    st = supervise.state_of(supervised)
    rec = supervise.read_record(supervised)
    legacy = {k: rec[k] for k in ("pid", "started", "ended", "returncode", "stopped")}
    with open(supervised + ".status", "w") as f:
        json.dump(dict(legacy, started=pidfile.observe(st["pid"])["start"]), f)
    assert supervise.state_of(supervised)["supervisor_pid"] == st["supervisor_pid"]  # the server's parent
    with open(supervised + ".status", "w") as f:  # the bad value next to it: another spawn time
        json.dump(dict(legacy, started=pidfile.observe(st["pid"])["start"] - 60), f)
    with pytest.raises(supervise.NotOurs, match="start time differs"):
        supervise.stop_server(supervised, 5)
    assert alive(st["pid"])
    with open(supervised + ".status", "w") as f:
        json.dump(dict(legacy, started=pidfile.observe(st["pid"])["start"]), f)
    assert supervise.stop_server(supervised, 5) == "stopped" and not alive(st["pid"])


def test_an_earlier_release_record_does_not_vouch_for_a_supervisor_pid_file_naming_a_bystander(tmp_path, bystander,
                                                                                               supervised):
    st = supervise.state_of(supervised)
    rec = supervise.read_record(supervised)
    with open(supervised + ".status", "w") as f:
        json.dump({"pid": rec["pid"], "started": pidfile.observe(st["pid"])["start"], "ended": None}, f)
    with open(supervised + ".supervisor", "w") as f:
        f.write("%d\n" % bystander.pid)
    with pytest.raises(supervise.NotOurs, match="no record of it"):
        supervise.stop_server(supervised, 5)
    assert bystander.poll() is None and alive(st["pid"])


@pytest.mark.parametrize("named", ["pid 1", "bystander", "bystander as supervisor"])
def test_the_stop_entry_points_action_fails_naming_the_file_and_signals_nothing(tmp_path, gpu, bystander, named):
    """What stop.yml runs (server_instance action=stop): refused before any signal, the message names the file."""
    inst, p = instance(tmp_path, "ready")
    made = list(inst.changes)  # the test's own directories
    target = p["pid_file"] + (".supervisor" if named.endswith("supervisor") else "")
    with open(target, "w") as f:
        f.write("1\n" if named == "pid 1" else "%d\n" % bystander.pid)
    with pytest.raises(RuntimeError) as exc:
        si.act(inst, {"action": "stop"})
    assert "pid file %s names pid" % target in str(exc.value) and "nothing signalled" in str(exc.value)
    assert bystander.poll() is None and inst.changes == made  # nothing stopped, nothing recorded as stopped
    state = si.read_state("pidfile", "unused", p["pid_file"], None)
    assert state["active_state"] == "inactive" and state["pid"] == 0 and state["problem"]
