# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/server's directories go through host/owned_dirs: a system directory however spelled is refused at plan
time (controller), a link to one or a foreign directory when the instance is written (target), before anything is
made or changed; the compile caches are never trusted with another owner or a looser mode."""
import os
import stat
import subprocess

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs
from ansible_collections.llmserve.sglang.plugins.module_utils.server import instance as si
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches

from test_server_plan import defaults, host, running  # pylint: disable=import-error

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


@pytest.mark.parametrize("name, value", [
    ("home", "/etc/"), ("home", "//etc"), ("home", "/var/lib"), ("home", "/etc"),
    ("home", "/usr/local/"), ("config_dir", "/etc/"), ("config_dir", "//etc"), ("log_dir", "/var/log/"),
    ("log_dir", "/var/./log"), ("home", "/"),
])
def test_a_system_directory_however_spelled_is_refused_at_plan_time(name, value):
    s = defaults()
    s[name] = value
    pl = sp.plan(sp.validate(s), running(sp.plan(sp.validate(defaults()), host())))
    assert pl["action"] == "none" and not pl.get("write")  # the running server is not touched
    assert any(r.startswith("server_%s=" % name) and "is a system directory or holds one" in r for r in pl["refusals"])


@pytest.mark.parametrize("name, value", [("home", "/var/lib/sglang/"), ("home", "/srv/sglang"),
                                         ("config_dir", "/etc/sglang"), ("log_dir", "/var/log/sglang/")])
def test_directories_of_their_own_are_planned(name, value):
    s = defaults()
    s[name] = value
    assert sp.plan(sp.validate(s), host())["refusals"] == []


def _instance(tmp_path, home, adopt=(), check=False):
    s = {"instance": "t", "config_dir": str(tmp_path / "etc"), "log_dir": str(tmp_path / "log")}
    p = layout.paths(s)
    p.update(run_dir=str(tmp_path / "run" / "t"), helper_dir=str(tmp_path / "lib"))
    dirs = layout.instance_dirs(home, s["config_dir"], s["log_dir"], p, "nobody", "nogroup")
    dirs += [(caches.root(home, "t"), "nobody", "nogroup", "0750"),
             (caches.version_dir(home, "t", "0.5.23"), "nobody", "nogroup", "0750")]
    params = {"paths": p, "dirs": [{"path": d, "owner": o, "group": g, "mode": m} for d, o, g, m in dirs],
              "adopt_dirs": list(adopt)}
    return si.Instance(params, None, check_mode=check)


def _tree(root):
    out = {}
    for d, subdirs, files in os.walk(str(root)):
        for n in subdirs + files:
            st = os.lstat(os.path.join(d, n))
            out[os.path.join(d, n)] = (st.st_uid, st.st_gid, st.st_mode)
    return out


def test_a_fresh_instance_gets_its_directories(tmp_path):
    home = str(tmp_path / "home")
    inst = _instance(tmp_path, home)
    inst.ensure_dirs()
    st = os.stat(home)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (65534, 0o750)
    assert os.path.isfile(os.path.join(caches.version_dir(home, "t", "0.5.23"), owned_dirs.MARKER))
    again = _instance(tmp_path, home)
    again.ensure_dirs()
    assert again.changes == []


@pytest.mark.parametrize("home_kind", ["link_to_etc", "foreign", "link_to_foreign"])
def test_a_home_that_is_not_the_collections_is_refused_before_anything_is_made(tmp_path, home_kind):
    foreign = tmp_path / "someone-else"
    foreign.mkdir()
    os.chmod(str(foreign), 0o755)
    target = {"link_to_etc": "/etc", "foreign": None, "link_to_foreign": str(foreign)}[home_kind]
    home = str(tmp_path / "home") if target else str(foreign)
    if target:
        os.symlink(target, home)
    etc_before = os.stat("/etc")
    tree_before = _tree(tmp_path)
    with pytest.raises(RuntimeError) as e:
        _instance(tmp_path, home + "/").ensure_dirs()
    assert "server_home" in str(e.value) and "the running server was not touched" in str(e.value)
    assert ("system directory" if home_kind == "link_to_etc" else "server_adopt_dirs") in str(e.value)
    assert _tree(tmp_path) == tree_before            # not even the config or log directory was made
    etc_after = os.stat("/etc")
    before = (etc_before.st_uid, etc_before.st_gid, etc_before.st_mode)
    assert (etc_after.st_uid, etc_after.st_gid, etc_after.st_mode) == before


def test_an_adopted_home_is_taken_over(tmp_path):
    foreign = tmp_path / "someone-else"
    foreign.mkdir()
    _instance(tmp_path, str(foreign), adopt=[str(foreign)]).ensure_dirs()
    assert os.stat(str(foreign)).st_uid == 65534


def test_a_compile_cache_with_another_owner_is_refused_even_in_a_home_of_ours(tmp_path):
    home = str(tmp_path / "home")
    _instance(tmp_path, home).ensure_dirs()
    cache = caches.version_dir(home, "t", "0.5.23")
    os.chown(cache, 0, 0)
    with pytest.raises(RuntimeError) as e:
        _instance(tmp_path, home).ensure_dirs()
    assert "the compile cache" in str(e.value) or "refused, not trusted" in str(e.value)
    os.chmod(cache, 0o700)
    os.chown(cache, 65534, 65534)
    _instance(tmp_path, home).ensure_dirs()   # tighter, ours: fixed back to 0750
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o750


def test_check_mode_judges_and_makes_nothing(tmp_path):
    home = str(tmp_path / "home")
    inst = _instance(tmp_path, home, check=True)
    inst.ensure_dirs()
    assert "created %s" % home in inst.changes and not os.path.exists(home)
    with pytest.raises(RuntimeError):
        _instance(tmp_path, "/etc/", check=True).ensure_dirs()


def test_server_plan_reaches_host_owned_dirs_only():
    # the rule has one home: server/plan.py keeps no list of system paths of its own
    out = subprocess.run(["grep", "-n", '"/var/log"', sp.__file__], stdout=subprocess.PIPE, check=False)
    assert out.stdout == b""
