# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""owned_dir's main(), in process on real directories (issue 47): the owner, group and mode asked for reach the
directory, an octal mode is read as octal, an empty group keeps the directory's own, check mode changes nothing, a
refusal fails the task naming the directory and changes nothing, and every option the roles pass is obeyed."""
import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.llmserve.sglang.plugins.modules import owned_dir

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
NOBODY, NOGROUP = 65534, 65534


@pytest.fixture
def call(capsys):
    """main() with these arguments: (exit code, the result it printed)."""
    def run(args, check=False):
        with patch_module_args(dict(args, _ansible_check_mode=check)):
            with pytest.raises(SystemExit) as ended:
                owned_dir.main()
        return ended.value.code, json.loads(capsys.readouterr().out)
    return run


def st(path):
    s = os.stat(path)
    return s.st_uid, s.st_gid, stat.S_IMODE(s.st_mode)


def test_a_new_directory_gets_what_was_asked_and_a_second_run_changes_nothing(call, tmp_path):
    path = str(tmp_path / "cache")
    code, out = call({"path": path + "/", "owner": "nobody", "group": "nogroup", "mode": "0750"})
    assert code == 0 and out["changed"] is True and out["path"] == path and out["changes"] == ["created %s" % path]
    assert st(path) == (NOBODY, NOGROUP, 0o750)
    code, out = call({"path": path, "owner": "nobody", "group": "nogroup", "mode": "0750"})
    assert code == 0 and out["changed"] is False and out["changes"] == []


def test_the_defaults_are_root_root_0755(call, tmp_path):
    path = str(tmp_path / "d")
    assert call({"path": path})[0] == 0 and st(path) == (0, 0, 0o755)


def test_the_path_is_returned_with_its_links_resolved(call, tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(str(tmp_path / "real"), str(tmp_path / "link"))
    code, out = call({"path": str(tmp_path / "link" / "d")})
    assert code == 0 and out["path"] == str(tmp_path / "real" / "d") and os.path.isdir(out["path"])
    # follow=false: a path reached through a link is refused, naming both, and nothing is made
    code, out = call({"path": str(tmp_path / "link" / "e"), "follow": False})
    assert code == 1 and out["changes"] == [] and not os.path.exists(str(tmp_path / "real" / "e"))
    assert out["msg"].startswith("directory %s is reached through a symbolic link" % (tmp_path / "link" / "e"))


def test_an_empty_group_keeps_the_directorys_own(call, tmp_path):
    path = tmp_path / "d"
    path.mkdir()
    os.chown(str(path), 0, NOGROUP)
    os.chmod(str(path), 0o700)
    code, out = call({"path": str(path), "group": "", "mode": "0700", "adopt": [str(path)]})
    assert code == 0 and out["changed"] is False and st(str(path)) == (0, NOGROUP, 0o700)
    code, out = call({"path": str(path), "group": "root", "mode": "0700", "adopt": [str(path)]})
    assert code == 0 and out["changed"] is True and st(str(path)) == (0, 0, 0o700)


def test_check_mode_reports_and_makes_nothing(call, tmp_path):
    path = str(tmp_path / "d")
    code, out = call({"path": path, "mode": "0700"}, check=True)
    assert code == 0 and out["changed"] is True and out["changes"] == ["created %s" % path]
    assert not os.path.exists(path)


@pytest.mark.parametrize("args, words", [
    ({"mode": "rwx"}, "owner root, group root, mode rwx: invalid literal for int() with base 8"),
    ({"mode": "0789"}, "mode 0789: invalid literal for int() with base 8"),
    ({"owner": "no-such-user-here"}, "owner no-such-user-here, group root, mode 0755: "),
    ({"group": "no-such-group-here"}, "group no-such-group-here, mode 0755: "),
])
def test_a_bad_owner_group_or_mode_fails_naming_it_and_makes_nothing(call, tmp_path, args, words):
    path = str(tmp_path / "d")
    code, out = call(dict({"path": path}, **args))
    assert code == 1 and out["failed"] is True and out["changes"] == [] and not os.path.exists(path)
    assert out["msg"].startswith("owned_dir %s: " % path) and words in out["msg"]


def test_a_system_directory_is_refused_by_the_rule(call):
    before = os.stat("/etc")
    code, out = call({"path": "/etc", "mode": "0700"})
    assert code == 1 and out["changes"] == [] and out["msg"].startswith("directory /etc is a system directory")
    assert os.stat("/etc").st_mode == before.st_mode


def test_an_existing_directory_is_taken_over_only_when_adopted_naming_the_setting(call, tmp_path):
    path = tmp_path / "theirs"
    path.mkdir()
    os.chmod(str(path), 0o700)
    code, out = call({"path": str(path), "mode": "0755", "adopt_setting": "models_adopt_dirs"})
    assert code == 1 and "add %s to models_adopt_dirs" % path in out["msg"] and st(str(path))[2] == 0o700
    code, out = call({"path": str(path), "mode": "0755"})
    assert code == 1 and "add %s to adopt to let" % path in out["msg"]
    code, out = call({"path": str(path), "mode": "0755", "adopt": [str(path)]})
    assert code == 0 and out["changed"] is True and st(str(path))[2] == 0o755


def test_a_cache_with_a_looser_mode_is_refused_but_a_plain_directory_is_adopted(call, tmp_path):
    path = tmp_path / "cache"
    path.mkdir()
    os.chmod(str(path), 0o777)
    code, out = call({"path": str(path), "mode": "0700", "cache": True, "adopt": [str(path)]})
    assert code == 1 and "is a cache the collection reads back" in out["msg"] and st(str(path))[2] == 0o777
    code, out = call({"path": str(path), "mode": "0700", "cache": False, "adopt": [str(path)]})
    assert code == 0 and st(str(path))[2] == 0o700
