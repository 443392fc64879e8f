# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/run.py and host/spawn.py (issue 37): the environment merged, the exact words when a deadline struck, and
every path of a forked child (descriptors, session, setup, a failure before exec), on real programs: the mutants of
tools/mutation's host room that the other tests let through."""
import json
import os
import signal
import sys
import tempfile
import time

import pytest

from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.llmserve.sglang.plugins.module_utils.host import run as host_run
from ansible_collections.llmserve.sglang.plugins.module_utils.host import spawn

# prints the argv of its parent (the runner itself: no timeout(1) in between) and its environment's A, B and C
SHOW = ("import os, json, sys; ppid = os.getppid(); "
        "argv = open('/proc/%d/cmdline' % ppid, 'rb').read().split(b'\\0')[:-1]; "
        "print(json.dumps([[a.decode() for a in argv], [os.environ.get(k) for k in 'ABC'], sys.argv[1:]]))")


@pytest.fixture
def module(monkeypatch):
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": {}})))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    return basic.AnsibleModule(argument_spec={})


def _show(run, *args, **kwargs):
    rc, out, err = run([sys.executable, "-c", SHOW] + list(args), **kwargs)
    assert (rc, err) == (0, ""), err
    return json.loads(out)


@pytest.mark.parametrize("default, given", [(None, None), (None, 0), (0, None)])
def test_no_deadline_runs_the_program_itself(module, default, given):
    parent, _env, _args = _show(host_run.module_runner(module, timeout=default), timeout=given)
    assert os.path.basename(parent[0]) != "timeout"


def test_arguments_become_strings_and_the_environment_is_merged(module):
    run = host_run.module_runner(module, environ_update={"A": "default", "B": "default"})
    assert _show(run, 3, "x")[1:] == [["default", "default", None], ["3", "x"]]
    assert _show(run, environ_update={"B": "call", "C": "c"})[1] == ["default", "call", "c"]
    assert _show(run)[1] == ["default", "default", None]                     # a call's env does not stick
    assert _show(host_run.module_runner(module))[1] == [os.environ.get("A"), os.environ.get("B"), os.environ.get("C")]


def test_data_is_passed_as_bytes(module):
    rc, out, _err = host_run.module_runner(module)(
        [sys.executable, "-c", "import sys; sys.stdout.write(repr(sys.stdin.buffer.read()))"], data=b"\xff\x00a")
    assert (rc, out) == (0, repr(b"\xff\x00a"))


def test_a_struck_deadline_is_said_in_words_after_stderr(module):
    run = host_run.module_runner(module, timeout=1)
    rc, _out, err = run([sys.executable, "-c", "import sys, time; sys.stderr.write('started'); sys.stderr.flush(); "
                                               "time.sleep(30)"])
    assert rc == host_run.TIMED_OUT
    assert err == "started\n%s ran past its 1 s deadline and was stopped" % sys.executable


def test_rc_124_without_a_deadline_is_the_programs_own(module):
    rc, _out, err = host_run.module_runner(module)([sys.executable, "-c", "raise SystemExit(124)"])
    assert (rc, err) == (124, "")


def test_a_program_that_cannot_start_is_rc_127_with_the_reason(module):
    rc, out, err = host_run.module_runner(module)(["/nonexistent/tool", "x"])
    assert (rc, out) == (127, "") and err.startswith("cannot run /nonexistent/tool: ")
    assert "No such file or directory" in err


# ---- spawn

def test_poll_of_a_child_reaped_elsewhere_is_minus_one():
    child = spawn.start([sys.executable, "-c", "pass"])
    os.waitpid(child.pid, 0)
    assert child.poll() == -1 and child.wait() == -1
    child.kill()                                                                 # nothing left to signal: no error


def test_wait_without_a_deadline_and_with_one_already_past():
    child = spawn.start([sys.executable, "-c", "import time; time.sleep(30)"])
    assert child.wait(0) is None and child.returncode is None
    child.terminate()
    assert child.wait() == -signal.SIGTERM
    child.terminate()                                                            # ended: no signal sent, no error
    assert child.poll() == -signal.SIGTERM


def test_stdin_and_stderr_descriptors_and_dev_null_for_the_rest():
    with tempfile.TemporaryFile() as src, tempfile.TemporaryFile() as err:
        src.write(b"from stdin")
        src.seek(0)
        child = spawn.start([sys.executable, "-c", "import sys; sys.stderr.write(sys.stdin.read()); print('lost')"],
                            stdin=src.fileno(), stderr=err.fileno())
        assert child.wait(30) == 0
        err.seek(0)
        assert err.read() == b"from stdin"
    child = spawn.start([sys.executable, "-c", "import sys; sys.exit(0 if sys.stdin.read() == '' else 1)"])
    assert child.wait(30) == 0                                                   # stdin: /dev/null, at its end at once


def test_only_the_three_standard_descriptors_reach_the_program():
    rfd, wfd = os.pipe()
    os.set_inheritable(rfd, True)
    try:
        with tempfile.TemporaryFile() as out:
            child = spawn.start([sys.executable, "-c", "import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))"],
                                stdout=out.fileno())
            assert child.wait(30) == 0
            out.seek(0)
            fds = json.loads(out.read())
        assert rfd not in fds and fds[:3] == [0, 1, 2]
    finally:
        os.close(rfd)
        os.close(wfd)


def test_setup_runs_in_the_child_and_a_failure_before_exec_is_127(tmp_path):
    marker = str(tmp_path / "setup-ran")
    child = spawn.start([sys.executable, "-c", "import os, sys; sys.exit(0 if os.environ.get('SET') == '1' else 1)"],
                        env={"PATH": os.environ["PATH"], "SET": "1"}, setup=lambda: open(marker, "w").close())
    assert child.wait(30) == 0 and os.path.exists(marker)
    assert spawn.start([sys.executable, "-c", "pass"], setup=lambda: 1 / 0).wait(30) == 127
    assert spawn.start([sys.executable, "-c", "pass"], cwd=str(tmp_path / "none")).wait(30) == 127


def test_without_env_the_program_gets_this_processs_environment(monkeypatch):
    monkeypatch.setenv("LLMSERVE_SPAWN_PROBE", "here")
    child = spawn.start([sys.executable, "-c", "import os, sys; sys.exit(0 if os.environ.get('LLMSERVE_SPAWN_PROBE') == "
                                               "'here' else 1)"])
    assert child.wait(30) == 0
    child = spawn.start([sys.executable, "-c", "import os, sys; sys.exit(0 if os.getsid(0) != os.getpid() else 1)"])
    assert child.wait(30) == 0                                                   # no new session unless asked


def test_a_program_is_looked_up_on_the_given_path_and_must_be_executable(tmp_path):
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\nexit 5\n")
    os.chmod(str(tool), 0o755)
    assert spawn.start(["tool"], env={"PATH": str(tmp_path)}).wait(30) == 5
    with pytest.raises(FileNotFoundError, match=r"^No such file or directory: 'tool'$"):
        spawn.start(["tool"], env={"PATH": "/nonexistent"})
    os.chmod(str(tool), 0o644)
    with pytest.raises(FileNotFoundError, match="No such file or directory: '%s'" % tool):
        spawn.start([str(tool)])


@pytest.mark.parametrize("number", [3, 5000])
def test_an_inheritable_descriptor_at_3_or_high_up_does_not_reach_the_program(number):
    # 3: the first one closerange closes; 5000: above the 4096 a failed sysconf would fall back to (the limit is higher)
    if number >= os.sysconf("SC_OPEN_MAX"):
        pytest.skip("the descriptor limit is below %d" % number)
    try:
        saved, inheritable = os.dup(number), os.get_inheritable(number)
    except OSError:
        saved = None
    rfd, wfd = os.pipe()
    os.dup2(rfd, number, inheritable=True)
    try:
        with tempfile.TemporaryFile() as out:
            probe = "import os, stat\ntry:\n    print(stat.S_ISFIFO(os.fstat(%d).st_mode))\nexcept OSError:\n    print(False)" % number
            child = spawn.start([sys.executable, "-c", probe], stdout=out.fileno())
            assert child.wait(30) == 0
            out.seek(0)
            assert out.read() == b"False\n"                                     # the pipe is not there
    finally:
        if saved is None:
            os.close(number)
        else:
            os.dup2(saved, number, inheritable=inheritable)
            os.close(saved)
        os.close(rfd)
        os.close(wfd)


def test_arguments_reach_the_program_as_written_without_home_or_variables_expanded(module, monkeypatch):
    monkeypatch.setenv("A", "expanded")
    assert _show(host_run.module_runner(module), "$A", "~", "~root/x")[2] == ["$A", "~", "~root/x"]


def test_output_that_is_not_utf8_is_kept_byte_for_byte_as_surrogates(module):
    rc, out, err = host_run.module_runner(module)(
        [sys.executable, "-c", "import os; os.write(1, b'a\\xff\\xfeb'); os.write(2, b'\\xc3(')"])
    assert (rc, out, err) == (0, "a\udcff\udcfeb", "\udcc3(")


def test_a_struck_deadline_without_stderr_is_said_alone(module):
    rc, out, err = host_run.module_runner(module, timeout=1)([sys.executable, "-c", "import time; time.sleep(30)"])
    assert (rc, out, err) == (124, "", "\n%s ran past its 1 s deadline and was stopped" % sys.executable)


class _Clock(object):
    """spawn's ``time``: monotonic() stands still unless sleep() moves it; every sleep is written down."""

    def __init__(self, now=100.0, step=0.0):
        self.now, self.step, self.slept = now, step, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += self.step
        if len(self.slept) > 5:
            raise AssertionError("still waiting after %d sleeps" % len(self.slept))


@pytest.mark.parametrize("step, sleeps", [(0.0, []),              # at the deadline at once: no sleep
                                          (0.04, [0.05] * 3),      # 0.04, 0.08 below 0.1; 0.12 past it
                                          (0.05, [0.05] * 2)])     # 0.05 below; 0.10 at it: done
def test_wait_polls_every_50_ms_until_the_deadline_is_reached(monkeypatch, step, sleeps):
    child = spawn.start([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        clock = _Clock(step=step)
        monkeypatch.setattr(spawn, "time", clock)
        assert child.wait(0.1 if step else 0) is None
        assert clock.slept == sleeps
    finally:
        monkeypatch.undo()
        child.kill()
        child.wait()


def test_a_path_is_executed_as_given_not_looked_up(tmp_path):
    """A path (it holds a /) is not searched for on PATH: a directory there is exec'd and fails in the child."""
    os.chmod(str(tmp_path), 0o755)
    child = spawn.start([str(tmp_path)], env={"PATH": "/bin:/usr/bin"})
    assert child.wait() == 127


def test_without_sc_open_max_the_descriptors_up_to_4096_are_closed_and_the_program_runs(monkeypatch):
    def no_sysconf(name):
        raise ValueError("unknown configuration name %s" % name)

    monkeypatch.setattr(os, "sysconf", no_sysconf)
    child = spawn.start([sys.executable, "-c", "pass"])
    monkeypatch.undo()
    assert child.wait() == 0


# -- issue 47: the host room's survivors of run.capture and run.module_runner
def test_a_program_that_ends_within_its_deadline_is_its_own_answer():
    # a short explicit deadline: a reader that never leaves its loop after the output ends fails here, not hangs
    rc, out, err, why = host_run.capture([sys.executable, "-c", "print('done')"], timeout=5)
    assert (rc, out, err, why) == (0, b"done\n", b"", None)
    rc, _out, _err, why = host_run.capture([sys.executable, "-c", "import sys; sys.exit(3)"], timeout=5)
    assert (rc, why) == (3, None)


def test_the_module_environment_sits_under_the_runners_and_the_calls(module):
    module.run_command_environ_update = {"A": "module", "B": "module", "C": "module"}
    run = host_run.module_runner(module, environ_update={"B": "default"})
    assert _show(run)[1] == ["module", "default", "module"]
    assert _show(run, environ_update={"C": "call"})[1] == ["module", "default", "call"]
    assert _show(host_run.module_runner(object()))[1] == [os.environ.get(k) for k in "ABC"]  # no such attribute


def test_text_data_with_a_lone_surrogate_reaches_the_program_as_its_byte(module):
    rc, out, _err = host_run.module_runner(module, timeout=30)(
        [sys.executable, "-c", "import sys; sys.stdout.write(repr(sys.stdin.buffer.read()))"], data="a\udcffb")
    assert (rc, out) == (0, repr(b"a\xffb"))


def test_output_past_the_cap_is_refused_in_these_words():
    flood = "import os\nwhile True:\n    os.write(1, b'x' * 65536)\n"
    rc, out, _err, why = host_run.capture([sys.executable, "-c", flood], timeout=10, cap=1 << 16)
    assert (rc, len(out)) == (host_run.TOO_BIG, 1 << 16)
    assert why == ("%s printed more than 65536 bytes: refused as no answer of this tool (its process group was "
                   "killed)" % sys.executable)


def test_a_leader_gone_while_its_child_holds_the_output_past_the_deadline_is_stopped(tmp_path):
    pidfile = tmp_path / "pid"
    script = ("import os, sys, time\n"
              "child = os.fork()\n"
              "if child == 0:\n"
              "    time.sleep(60); os._exit(0)\n"
              "open(sys.argv[1], 'w').write(str(child))\n")   # the leader exits 0 at once
    kept = None
    try:
        rc, _out, _err, why = host_run.capture([sys.executable, "-c", script, str(pidfile)], timeout=1)
        kept = int(pidfile.read_text())
        assert rc == host_run.TIMED_OUT and why.endswith("ran past its 1 s deadline and was stopped")
        assert _dies(kept)                                   # killed with its group, though its leader was gone
    finally:
        if kept and not _dies(kept, 0):
            os.kill(kept, signal.SIGKILL)


def _dies(pid, polls=100):
    """Whether ``pid`` is a zombie or gone within ``polls`` looks 50 ms apart (a SIGKILL is pending until the
    process runs again: on a busy host not at once)."""
    for _n in range(polls + 1):
        try:
            with open("/proc/%d/stat" % pid) as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except (IOError, OSError):
            return True
        if _n < polls:
            time.sleep(0.05)
    return False


def test_after_the_output_ends_only_the_rest_of_the_deadline_is_waited_then_the_grace(monkeypatch):
    waits, real = [], spawn.Child.wait

    def spy(self, timeout=None):
        waits.append(timeout)
        return real(self, timeout)
    monkeypatch.setattr(spawn.Child, "wait", spy)
    rc, _out, _err, why = host_run.capture(
        [sys.executable, "-c", "import os, time; os.close(1); os.close(2); time.sleep(30)"], timeout=0.9)
    assert rc == host_run.TIMED_OUT and "deadline" in why
    assert waits[-1] == host_run.GRACE_S                         # the killed group: waited for, boundedly
    assert all(0.0 <= w < 0.9 for w in waits[:-1]), waits        # never past what is left of the deadline


def test_the_program_is_put_in_a_process_group_of_its_own(monkeypatch):
    calls = []
    monkeypatch.setattr(host_run.os, "setpgid", lambda *args: calls.append(args))
    host_run._own_group()   # pylint: disable=protected-access
    assert calls == [(0, 0)]   # its own pid as the group: killpg(pid) reaches it and all it forked
