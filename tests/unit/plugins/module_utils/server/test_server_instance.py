# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The instance controller (module_utils/server/instance.py) on real files and real processes (pid-file mode)."""
import json
import os
import stat
import subprocess
import sys
import time

from ansible_collections.llmserve.sglang.plugins.module_utils.server import instance as si
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout
from ansible_collections.llmserve.sglang.plugins.module_utils.server import supervise as server_supervise

SUPERVISOR = server_supervise.__file__


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    return p.returncode, p.stdout, p.stderr


def make(tmp_path, manager="pidfile"):
    s = {"instance": "t", "config_dir": str(tmp_path / "etc"), "log_dir": str(tmp_path / "log")}
    p = layout.paths(s)
    p.update(unit=str(tmp_path / "sglang-t.service"), run_dir=str(tmp_path / "run"), pid_file=str(tmp_path / "run" / "server.pid"),
             supervisor=SUPERVISOR, peer_marker=str(tmp_path / "run" / "peer.json"), peer_done=str(tmp_path / "run" / "done"))
    dirs = [{"path": d, "owner": None, "group": None, "mode": "0750"}
            for d in (p["instance_dir"], p["previous_dir"], s["log_dir"], p["run_dir"])]
    params = {"manager": manager, "paths": p, "dirs": dirs, "log_keep": 2, "stop_timeout": 5}
    return si.Instance(params, run, python=sys.executable), p


def f(path, content, secret=False):
    return {"path": path, "content": content, "mode": "0640", "owner": None, "group": None, "secret": secret}


def test_write_only_what_differs_never_diffing_a_secret(tmp_path):
    inst, p = make(tmp_path)
    inst.ensure_dirs()
    assert oct(os.stat(p["instance_dir"]).st_mode & 0o777) == "0o750"
    files = [f(p["env"], "A=\"1\"\n"), f(p["api_key"], 'api-key: "s3cret"\n', secret=True)]
    assert inst.write(files) == [p["env"], p["api_key"]]
    assert open(p["api_key"]).read() == 'api-key: "s3cret"\n'
    assert stat.S_IMODE(os.stat(p["api_key"]).st_mode) == 0o640
    assert [d["after_header"] for d in inst.diff] == [p["env"]]
    assert "s3cret" not in json.dumps(inst.diff)
    assert inst.write(files) == []
    assert inst.write([], remove=[p["api_key"]]) == [p["api_key"]] and not os.path.exists(p["api_key"])


def test_check_mode_changes_nothing(tmp_path):
    inst, p = make(tmp_path)
    inst.check = True
    inst.ensure_dirs()
    assert inst.write([f(p["env"], "A=1\n")]) == [p["env"]]
    assert not os.path.exists(p["instance_dir"])


def test_backup_and_restore_put_the_running_configuration_back(tmp_path):
    inst, p = make(tmp_path)
    inst.ensure_dirs()
    inst.write([f(p["launch_spec"], "old spec\n"), f(p["env"], "old env\n"), f(p["fingerprint"], "fp-old\n")])
    assert sorted(inst.backup()) == ["env", "fingerprint", "launch_spec"]
    inst.write([f(p["launch_spec"], "new spec\n"), f(p["env"], "new env\n"), f(p["api_key"], "k\n", True)])
    assert inst.restore()
    assert open(p["launch_spec"]).read() == "old spec\n" and open(p["env"]).read() == "old env\n"
    assert not os.path.exists(p["api_key"])  # the previous configuration ran without a key
    other, _p = make(tmp_path / "fresh")
    assert not other.restore()


def test_rotate_keeps_the_newest_logs(tmp_path):
    inst, p = make(tmp_path)
    inst.ensure_dirs()
    for i in range(4):
        old = "%s.2026010%dT000000Z" % (p["log"], i)
        open(old, "w").write("x")
        os.utime(old, (1000 + i, 1000 + i))
    open(p["log"], "w").write("last run\n")
    inst.rotate_log()
    kept = sorted(n for n in os.listdir(os.path.dirname(p["log"])) if n != ".llmserve-sglang-dir")  # the dir's marker
    assert "t.log" not in kept and len(kept) == 2
    assert any(open(os.path.join(os.path.dirname(p["log"]), k)).read() == "last run\n" for k in kept)


def test_pidfile_start_record_stop(tmp_path):
    inst, p = make(tmp_path)
    inst.ensure_dirs()
    spec = {"pid_file": p["pid_file"], "log": p["log"], "timeout": 5,
            "command": [sys.executable, "-c", "import time; print('serving', flush=True); time.sleep(60)"]}
    inst.write([f(p["launch_spec"], json.dumps(spec))])
    res = si.act(inst, {"action": "start", "fingerprint": "fp1"})
    try:
        assert "start_error" not in res
        assert res["state"]["active_state"] == "active" and res["state"]["pid"] > 0
        assert open(p["fingerprint"]).read() == "fp1\n"
        with open("/proc/%d/cmdline" % res["state"]["pid"], "rb") as fh:
            assert b"time.sleep(60)" in fh.read()
        info = si.read_state("pidfile", "unused", p["pid_file"], run)
        assert info["pid"] == res["state"]["pid"] and info["since"]
    finally:
        stopped = si.act(inst, {"action": "stop"})
    assert stopped["was_running"] and stopped["state"]["active_state"] == "inactive"
    assert si.act(inst, {"action": "stop"})["was_running"] is False


def test_pidfile_server_that_exits_at_once_is_reported_not_raised(tmp_path):
    inst, p = make(tmp_path)
    inst.ensure_dirs()
    spec = {"pid_file": p["pid_file"], "log": p["log"], "command": [sys.executable, "-c", "raise SystemExit(3)"]}
    inst.write([f(p["launch_spec"], json.dumps(spec))])
    # whether the supervisor still saw it start depends on timing; either way the step returns, the wait diagnoses
    res = si.act(inst, {"action": "start", "fingerprint": "fp"})
    assert res["action"] == "start"
    deadline = time.time() + 10
    while time.time() < deadline and server_supervise.state_of(p["pid_file"]).get("returncode") is None:
        time.sleep(0.1)
    assert si.read_state("pidfile", "x", p["pid_file"], run)["sub_state"] == "exited 3"


def test_hash_files_and_state_of_a_unit_that_does_not_exist(tmp_path):
    (tmp_path / "a").write_text("x")
    h = si.hash_files([str(tmp_path / "missing")], [str(tmp_path)])
    assert h[str(tmp_path / "missing")] is None and len(h[str(tmp_path / "a")]) == 64

    def no_unit(argv):
        return 0, "ActiveState=inactive\nSubState=dead\nMainPID=0\nLoadState=not-found\nUnitFileState=\n", ""

    st = si.read_state("systemd", "sglang-x.service", None, no_unit)
    assert (st["active_state"], st["load_state"], st["enabled"]) == ("inactive", "not-found", False)
