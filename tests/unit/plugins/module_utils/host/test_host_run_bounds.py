# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/run.py's bounds (issue 42, item 5): a deadline that kills the program's whole process group, a cap on what
it prints, each refusal named; the program within both bounds answers in full beside them."""
import json
import sys

import pytest

from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.llmserve.sglang.plugins.module_utils.host import run as host_run


@pytest.fixture
def module(monkeypatch):
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": {}})))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    return basic.AnsibleModule(argument_spec={})


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (IOError, OSError):
        return False


def test_a_hung_program_and_its_children_are_killed_and_named(module, tmp_path):
    pids = tmp_path / "pids"
    script = ("import os, sys, time\n"
              "child = os.fork()\n"
              "if child == 0:\n"
              "    time.sleep(60); os._exit(0)\n"
              "open(sys.argv[1], 'w').write('%d %d' % (os.getpid(), child))\n"
              "time.sleep(60)\n")
    rc, _out, err = host_run.module_runner(module, timeout=1)([sys.executable, "-c", script, str(pids)])
    assert rc == host_run.TIMED_OUT and err.endswith("ran past its 1 s deadline and was stopped")
    leader, child = (int(p) for p in pids.read_text().split())
    assert not _alive(leader) and not _alive(child)                    # the whole group, the forked child too


def test_a_program_that_closes_its_output_and_hangs_is_stopped_too(module):
    rc, _out, err = host_run.module_runner(module)(
        [sys.executable, "-c", "import os, time; os.close(1); os.close(2); time.sleep(60)"], timeout=1)
    assert rc == host_run.TIMED_OUT and "deadline" in err


@pytest.mark.parametrize("stream", [1, 2])
def test_output_past_the_cap_is_refused_and_named(module, stream):
    cap = 1 << 16
    flood = "import os\nwhile True:\n    os.write(%d, b'x' * 65536)\n" % stream
    rc, out, err = host_run.module_runner(module, timeout=10, cap=cap)([sys.executable, "-c", flood])
    assert rc == host_run.TOO_BIG and "printed more than %d bytes" % cap in err
    assert len(out) <= cap and len(err) <= cap + 200


def test_output_at_the_cap_is_read_whole(module):
    cap = 1 << 16
    rc, out, err = host_run.module_runner(module, cap=cap)(
        [sys.executable, "-c", "import os; os.write(1, b'y' * %d); os.write(2, b'e' * %d)" % (cap, cap)])
    assert (rc, len(out), len(err)) == (0, cap, cap)


def test_a_program_that_ends_in_time_keeps_its_rc(module):
    rc, out, err = host_run.module_runner(module, timeout=30)([sys.executable, "-c", "print('ok'); raise SystemExit(3)"])
    assert (rc, out, err) == (3, "ok\n", "")


def test_the_capture_runs_in_its_own_process_group(module):
    rc, out, _err = host_run.module_runner(module)([sys.executable, "-c", "import os; print(os.getpgid(0) == os.getpid())"])
    assert (rc, out) == (0, "True\n")
