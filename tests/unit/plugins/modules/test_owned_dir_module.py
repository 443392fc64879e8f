# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The owned_dir module as Ansible runs it (arguments as JSON on stdin), on real directories."""
import json
import os
import stat
import subprocess
import sys

import pytest

import testpaths

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _run(args, check=False):
    env = dict(os.environ, PYTHONPATH=os.path.join(testpaths.REPO, "collections"))
    args = dict(args, _ansible_check_mode=check)
    proc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "plugins", "modules", "owned_dir.py")],
                          input=json.dumps({"ANSIBLE_MODULE_ARGS": args}), capture_output=True, text=True, env=env,
                          check=False)
    return json.loads(proc.stdout)


def test_makes_then_leaves_alone(tmp_path):
    path = str(tmp_path / "llmserve")
    assert _run({"path": path + "/"}, check=True)["changed"] and not os.path.exists(path)
    made = _run({"path": path + "/", "mode": "0750"})
    assert made["changed"] and made["path"] == path and stat.S_IMODE(os.stat(path).st_mode) == 0o750
    assert not _run({"path": path, "mode": "0750"})["changed"]


@pytest.mark.parametrize("path", ["/etc/", "//etc", "/var/lib", "/root/.."])
def test_a_system_directory_is_refused_and_left_alone(path):
    before = os.stat("/etc")
    res = _run({"path": path, "mode": "0700", "owner": "nobody"})
    assert res["failed"] and "system directory" in res["msg"]
    after = os.stat("/etc")
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)


def test_a_foreign_directory_is_refused_naming_the_setting_and_adopted_by_it(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chmod(str(theirs), 0o700)
    res = _run({"path": str(theirs), "mode": "0755", "adopt_setting": "cuda_adopt_dirs"})
    assert res["failed"] and "cuda_adopt_dirs" in res["msg"] and stat.S_IMODE(os.stat(str(theirs)).st_mode) == 0o700
    assert _run({"path": str(theirs), "mode": "0755", "adopt": [str(theirs)]})["changed"]
    assert stat.S_IMODE(os.stat(str(theirs)).st_mode) == 0o755


def test_an_unknown_owner_is_refused_by_name(tmp_path):
    res = _run({"path": str(tmp_path / "x"), "owner": "no-such-user-here"})
    assert res["failed"] and "no-such-user-here" in res["msg"] and not os.path.exists(str(tmp_path / "x"))
