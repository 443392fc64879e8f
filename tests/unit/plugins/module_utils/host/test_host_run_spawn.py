# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/run.py (run_command with a deadline) over a real AnsibleModule, and host/spawn.py (fork and exec) on real
programs: the two ways the modules run programs now that ansible-core 2.21 refuses subprocess in them."""
import json
import os
import sys
import tempfile

import pytest

from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.llmserve.sglang.plugins.module_utils.host import run as host_run
from ansible_collections.llmserve.sglang.plugins.module_utils.host import spawn


@pytest.fixture
def module(monkeypatch):
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": {}})))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    return basic.AnsibleModule(argument_spec={})


def test_runner_returns_rc_out_err_and_passes_data_and_env(module):
    run = host_run.module_runner(module, environ_update={"A_VAR": "one"})
    rc, out, err = run([sys.executable, "-c", "import os,sys; print(os.environ['A_VAR'], sys.stdin.read())"],
                       data="in-$HOME-~", environ_update={"B": "2"})
    assert (rc, out.strip(), err) == (0, "one in-$HOME-~", "")  # no variable or ~ expansion


def test_runner_deadline_kills_and_says_so(module):
    run = host_run.module_runner(module, timeout=1)
    rc, _out, err = run([sys.executable, "-c", "import time; time.sleep(30)"])
    assert rc == host_run.TIMED_OUT and "deadline" in err


def test_runner_missing_program_is_rc_127_not_a_failure(module):
    rc, _out, err = host_run.module_runner(module)(["/nonexistent/tool", "x"])
    assert rc == host_run.NOT_RUN and "/nonexistent/tool" in err


def test_spawn_runs_with_fds_env_cwd_and_reports_rc(tmp_path):
    with tempfile.TemporaryFile(mode="w+") as out:
        child = spawn.start([sys.executable, "-c", "import os; print(os.getcwd(), os.environ.get('X')); raise SystemExit(3)"],
                            env={"X": "y", "PATH": os.environ["PATH"]}, stdout=out.fileno(), cwd=str(tmp_path))
        assert child.wait(30) == 3
        out.seek(0)
        assert out.read().split() == [str(tmp_path), "y"]


def test_spawn_wait_times_out_then_kill_reports_the_signal():
    child = spawn.start([sys.executable, "-c", "import time; time.sleep(30)"])
    assert child.wait(0.2) is None
    child.kill()
    assert child.wait(10) == -9


def test_spawn_new_session_and_missing_program():
    child = spawn.start([sys.executable, "-c", "import os,sys; sys.exit(0 if os.getsid(0) == os.getpid() else 1)"],
                        new_session=True)
    assert child.wait(30) == 0
    with pytest.raises(FileNotFoundError):
        spawn.start(["no-such-program-here"])
