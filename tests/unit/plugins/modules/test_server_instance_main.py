# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_instance's main(), in process, pid-file mode on real files and a real process (issue 47): what it writes
and what it reports changed, check mode and diff mode, a failure that names the action and what was done, the
manager ``auto`` resolved on the host, and a start and stop through the supervisor with this Python."""
import json
import os
import stat
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.llmserve.sglang.plugins.module_utils.host import run as host_run
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout
from ansible_collections.llmserve.sglang.plugins.module_utils.server import supervise as server_supervise
from ansible_collections.llmserve.sglang.plugins.modules import server_instance


def instance_paths(tmp_path):
    p = layout.paths({"instance": "t", "config_dir": str(tmp_path / "etc"), "log_dir": str(tmp_path / "log")})
    run_dir = tmp_path / "run"
    p.update(unit=str(tmp_path / "sglang-t.service"), run_dir=str(run_dir), pid_file=str(run_dir / "server.pid"),
             supervisor=server_supervise.__file__, peer_marker=str(run_dir / "peer.json"),
             peer_done=str(run_dir / "done"))
    return p


def dirs(p):
    return [{"path": d, "owner": None, "group": None, "mode": "0750"}
            for d in (p["instance_dir"], p["previous_dir"], os.path.dirname(p["log"]), p["run_dir"])]


def f(path, content, secret=False):
    return {"path": path, "content": content, "mode": "0640", "owner": None, "group": None, "secret": secret}


@pytest.fixture
def call(capsys, monkeypatch):
    """main() with these arguments on a host without systemd: (exit code, the result it printed)."""
    monkeypatch.setattr(server_instance, "service_mgr", lambda: "other")

    def run(args, check=False, diff=False):
        with patch_module_args(dict(args, _ansible_check_mode=check, _ansible_diff=diff)):
            with pytest.raises(SystemExit) as ended:
                server_instance.main()
        return ended.value.code, json.loads(capsys.readouterr().out)
    return run


def test_write_reports_what_it_wrote_and_a_second_run_nothing(call, tmp_path):
    p = instance_paths(tmp_path)
    files = [f(p["env"], "A=1\n"), f(p["api_key"], "api-key: s3cret\n", secret=True)]
    args = {"action": "write", "manager": "pidfile", "paths": p, "dirs": dirs(p), "files": files}
    code, out = call(args, diff=True)
    assert code == 0 and out["changed"] is True and out["action"] == "write"
    assert out["written"] == [p["env"], p["api_key"]]
    assert open(p["env"]).read() == "A=1\n" and stat.S_IMODE(os.stat(p["api_key"]).st_mode) == 0o640
    assert out["state"]["manager"] == "pidfile" and out["state"]["sub_state"] == "never started"
    # the secret file is never diffed (its content rides only in the invocation, which roles/server's no_log hides)
    assert [d["after_header"] for d in out["diff"]] == [p["env"]] and "s3cret" not in json.dumps(out["diff"])
    assert "created %s" % p["instance_dir"] in out["changes"]
    code, out = call(args, diff=True)
    assert code == 0 and out["changed"] is False and out["written"] == [] and out["changes"] == [] and "diff" not in out


def test_without_diff_mode_no_diff_is_returned(call, tmp_path):
    p = instance_paths(tmp_path)
    code, out = call({"action": "write", "manager": "pidfile", "paths": p, "dirs": dirs(p),
                      "files": [f(p["env"], "A=1\n")]})
    assert code == 0 and out["written"] == [p["env"]] and "diff" not in out


def test_check_mode_writes_nothing_and_says_what_it_would(call, tmp_path):
    p = instance_paths(tmp_path)
    code, out = call({"action": "write", "manager": "pidfile", "paths": p, "dirs": dirs(p),
                      "files": [f(p["env"], "A=1\n")]}, check=True)
    assert code == 0 and out["changed"] is True and out["written"] == [p["env"]] and out["state"] is None
    assert not os.path.exists(p["instance_dir"]) and not os.path.exists(p["env"])


def test_a_failure_names_the_action_and_what_was_done(call, tmp_path):
    p = instance_paths(tmp_path)
    blocked = os.path.join(p["instance_dir"], "env", "x")  # a file where its directory should be
    code, out = call({"action": "write", "manager": "pidfile", "paths": p, "dirs": dirs(p),
                      "files": [f(p["env"], "A=1\n"), f(blocked, "B=2\n")]})
    assert code == 1 and out["failed"] is True and out["msg"].startswith("write: [Errno ") and "/env/.x." in out["msg"]
    assert "created %s" % p["instance_dir"] in out["changes"] and open(p["env"]).read() == "A=1\n"


def test_a_refused_directory_fails_before_anything_is_written(call, tmp_path):
    p = instance_paths(tmp_path)
    code, out = call({"action": "write", "manager": "pidfile", "paths": p,
                      "dirs": dirs(p) + [{"path": "/etc", "owner": None, "group": None, "mode": "0700"}],
                      "files": [f(p["env"], "A=1\n")]})
    assert code == 1 and out["msg"].startswith("write: ") and "/etc" in out["msg"] and out["changes"] == []
    assert not os.path.exists(p["instance_dir"])


def test_auto_is_the_pid_file_supervisor_where_systemd_does_not_run(call, tmp_path):
    p = instance_paths(tmp_path)
    code, out = call({"action": "none", "paths": p})
    assert code == 0 and out["changed"] is False and out["state"]["manager"] == "pidfile" and out["changes"] == []


@pytest.fixture
def systemd_host(tmp_path, monkeypatch):
    """A host where systemd runs: its systemctl answers that the unit is loaded and stopped."""
    tool = tmp_path / "bin" / "systemctl"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nprintf 'LoadState=loaded\\nActiveState=inactive\\nSubState=dead\\n'\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", "%s%s%s" % (tool.parent, os.pathsep, os.environ["PATH"]))
    monkeypatch.setattr(server_instance, "service_mgr", lambda: "systemd")


def test_auto_is_systemd_where_systemd_runs(call, tmp_path, systemd_host):
    code, out = call({"action": "none", "paths": instance_paths(tmp_path)})
    assert code == 0 and out["state"]["manager"] == "systemd" and out["state"]["load_state"] == "loaded"


def test_pidfile_stays_pidfile_where_systemd_runs(call, tmp_path, systemd_host):
    code, out = call({"action": "none", "manager": "pidfile", "paths": instance_paths(tmp_path)})
    assert code == 0 and out["state"]["manager"] == "pidfile" and out["state"]["sub_state"] == "never started"


def test_start_and_stop_through_the_supervisor_with_this_python(call, tmp_path, monkeypatch):
    p = instance_paths(tmp_path)
    spec = {"pid_file": p["pid_file"], "log": p["log"], "timeout": 5,
            "command": [sys.executable, "-c", "import time; print('serving', flush=True); time.sleep(60)"]}
    assert call({"action": "write", "manager": "pidfile", "paths": p, "dirs": dirs(p),
                 "files": [f(p["launch_spec"], json.dumps(spec))]})[0] == 0
    seen = []
    capture = host_run.capture

    def watched(cmd, env=None, **kw):
        seen.append((cmd[0], env.get("LC_ALL")))
        return capture(cmd, env=env, **kw)
    monkeypatch.setattr(host_run, "capture", watched)
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    code, out = call({"action": "start", "manager": "pidfile", "paths": p, "fingerprint": "fp1"})
    try:
        assert code == 0 and out["changed"] is True and "start_error" not in out
        assert out["state"]["active_state"] == "active" and out["state"]["pid"] > 0
        assert open(p["fingerprint"]).read() == "fp1\n" and (sys.executable, "C") in seen
    finally:
        code, out = call({"action": "stop", "manager": "pidfile", "paths": p})
    assert code == 0 and out["was_running"] is True and out["changed"] is True
    assert out["state"]["active_state"] == "inactive" and out["stopped"]["killed"] is False
