# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/ownership.py: the three meanings of "this process is ours", on real processes and real cgroup texts."""
import os
import subprocess
import sys

from ansible_collections.llmserve.sglang.plugins.module_utils.host import ownership

# /proc/PID/cgroup as cgroup v2 and v1 hosts write it
V2_UNIT = "0::/system.slice/sglang-default.service\n"
V2_USER = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope\n"
V1_UNIT = "12:pids:/system.slice/sglang-mol.service\n1:name=systemd:/system.slice/sglang-mol.service\n"


def ident(cgroup, cmdline="python -m sglang.launch_server"):
    return {"cgroup": cgroup, "cmdline": cmdline}


def test_cgroup_units():
    assert ownership.cgroup_units(V2_UNIT) == ["sglang-default.service"]
    assert ownership.cgroup_units(V2_USER) == ["user@1000.service", "vte-spawn-1.scope"]
    assert ownership.cgroup_units(V1_UNIT) == ["sglang-mol.service"]


def test_in_unit_by_name_and_glob():
    assert ownership.in_unit(ident(V2_UNIT), ["sglang-default"])            # a bare name is its .service
    assert ownership.in_unit(ident(V2_UNIT), ["sglang-*.service"])
    assert ownership.in_unit(ident(V1_UNIT), ["sglang-mol.service"])
    assert not ownership.in_unit(ident(V2_UNIT), ["sglang-other"])
    assert not ownership.in_unit(ident(V2_USER), ["sglang-*.service"])
    assert not ownership.in_unit(None, ["sglang-*.service"])                 # not visible here: not ours


def test_cmdline_matches():
    assert ownership.cmdline_matches(ident(V2_USER), [r"sglang\.launch_server"])
    assert not ownership.cmdline_matches(ident(V2_USER, "python3 train.py"), [r"sglang\.launch_server"])
    assert not ownership.cmdline_matches(None, [".*"])


def test_identity_and_descent_of_real_processes():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        me = ownership.identity(os.getpid())
        assert me and os.path.basename(sys.executable) in me["cmdline"]
        assert ownership.parent(child.pid) == os.getpid()
        assert ownership.descends_from(child.pid, os.getpid())
        assert ownership.descends_from(child.pid, child.pid)
        assert not ownership.descends_from(os.getpid(), child.pid)
        assert not ownership.descends_from(child.pid, None)
    finally:
        child.kill()
        child.wait()
    assert ownership.identity(child.pid) is None


def test_a_fake_proc_tree(tmp_path):
    d = tmp_path / "77"
    d.mkdir()
    (d / "cmdline").write_bytes(b"python3\0-m\0sglang.launch_server\0")
    (d / "cgroup").write_text(V2_UNIT)
    got = ownership.identity(77, str(tmp_path))
    assert got["cmdline"] == "python3 -m sglang.launch_server" and ownership.in_unit(got, ["sglang-default"])
