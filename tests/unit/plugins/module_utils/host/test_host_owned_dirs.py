# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/host/owned_dirs.py: the one rule for the directories the collection owns, on real directories
(links, another owner through os.chown to nobody: the tests run as root), both sides of every rule."""
import json
import os
import posixpath
import stat

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs as od

NOBODY = 65534
NOBODY_0750 = od._describe(NOBODY, NOBODY, 0o750)  # nobody:nogroup on Debian: pylint: disable=protected-access
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


# ---- the normaliser (pure)

@pytest.mark.parametrize("given_path, clean", [
    ("/etc/", "/etc"), ("//etc", "/etc"), ("///etc//", "/etc"), ("/etc/.", "/etc"), ("/var/lib/sglang/../../../etc", "/etc"),
    ("/./var//lib/", "/var/lib"), ("/", "/"), ("//", "/"), ("/srv/sglang", "/srv/sglang"),
])
def test_normalise_collapses_every_spelling(given_path, clean):
    assert od.normalise(given_path) == clean


@pytest.mark.parametrize("bad", ["", "etc", "./etc", "/etc\n/x", None, 3, "/a\x00b"])
def test_normalise_refuses_what_is_not_an_absolute_path(bad):
    with pytest.raises(od.Refused):
        od.normalise(bad, "server_home")


SEGMENT = st.sampled_from(["", ".", "..", "etc", "var", "lib", "sglang", "a b", "x.y", "-"])


@settings(max_examples=300, deadline=None)
@given(st.lists(SEGMENT, min_size=1, max_size=8), st.booleans())
def test_normalise_properties(segments, trailing):
    path = "/" + "/".join(segments) + ("/" if trailing else "")
    clean = od.normalise(path)
    assert clean.startswith("/") and "//" not in clean
    assert clean == "/" or not clean.endswith("/")
    assert not any(p in (".", "..") for p in clean.split("/"))
    assert od.normalise(clean) == clean                      # idempotent
    assert od.normalise(clean + "/") == clean                # a trailing slash changes nothing
    assert od.normalise("/" + path) == clean                 # nor a doubled leading one
    # the system rule sees the same directory however it is spelled
    assert bool(od.system_problem(path, "x")) == bool(od.system_reason(clean))


# ---- the system-path rule (pure; what server/plan.py asks at plan time)

@pytest.mark.parametrize("path", ["/etc/", "//etc", "/etc", "/var/lib", "/var/lib/", "/", "/usr/local", "/var",
                                  "/var/lib/sglang/..", "/etc/systemd/system", "/home", "/opt/"])
def test_system_directories_are_refused_however_spelled(path):
    problem = od.system_problem(path, "server_home")
    assert problem and "server_home" in problem and "system directory" in problem


@pytest.mark.parametrize("path", ["/var/lib/sglang", "/etc/sglang", "/var/log/sglang", "/srv/sglang/home",
                                  "/usr/local/lib/llmserve-sglang", "/run/llmserve-sglang/default", "/data"])
def test_directories_of_their_own_pass(path):
    assert od.system_problem(path, "server_home") is None


def test_the_stricter_tree_rule_of_the_weights():
    assert od.system_reason("/etc/sglang", trees=True) == "tree"
    assert od.system_reason("/etc/sglang") is None
    assert od.system_reason("/data", trees=True) == "shallow"
    assert od.system_reason("/data/m", trees=True) is None
    assert od.system_reason("/home/alice", trees=True) == "home"
    assert od.system_reason("/home/alice/m", trees=True) is None


# ---- on real directories

def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_missing_directory_is_made_with_its_marker(tmp_path):
    target = str(tmp_path / "a" / "home")
    changes = od.ensure_all([{"path": target + "/", "uid": NOBODY, "gid": NOBODY, "mode": 0o750}])
    assert changes == ["created %s" % target]
    st_ = os.stat(target)
    assert (st_.st_uid, st_.st_gid, _mode(target)) == (NOBODY, NOBODY, 0o750)
    marker = os.path.join(target, od.MARKER)
    assert os.stat(marker).st_uid == 0
    with open(marker) as f:
        assert json.load(f)["path"] == target
    # the second run: ours, nothing to change
    assert od.ensure_all([{"path": target, "uid": NOBODY, "gid": NOBODY, "mode": 0o750}]) == []
    # ours with a changed mode: fixed
    os.chmod(target, 0o777)
    assert od.ensure_all([{"path": target, "uid": NOBODY, "gid": NOBODY, "mode": 0o750}]) == ["mode 0750 %s" % target]
    assert _mode(target) == 0o750


def test_check_mode_changes_nothing(tmp_path):
    target = str(tmp_path / "home")
    assert od.ensure_all([{"path": target, "uid": 0, "gid": 0, "mode": 0o750}], check=True) == ["created %s" % target]
    assert not os.path.exists(target)


def test_an_existing_foreign_directory_is_never_changed(tmp_path):
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    os.chmod(str(foreign), 0o755)
    with pytest.raises(od.Refused) as e:
        od.ensure_all([{"path": str(foreign), "uid": NOBODY, "gid": NOBODY, "mode": 0o750, "what": "server_home"}],
                      setting="server_adopt_dirs")
    msg = str(e.value)
    assert "server_home %s exists and was not made by the collection" % foreign in msg
    assert "server_adopt_dirs" in msg and "it is root:root 0755" in msg and "chown-ed to %s" % NOBODY_0750 in msg
    st_ = os.stat(str(foreign))
    assert (st_.st_uid, _mode(str(foreign))) == (0, 0o755)


def test_an_existing_directory_that_already_fits_is_used_as_it_is(tmp_path):
    made_before = tmp_path / "made-by-an-older-release"
    made_before.mkdir()
    os.chown(str(made_before), NOBODY, NOBODY)
    os.chmod(str(made_before), 0o750)
    assert od.ensure_all([{"path": str(made_before), "uid": NOBODY, "gid": NOBODY, "mode": 0o750}]) == []
    assert not os.path.exists(str(made_before / od.MARKER))  # not silently adopted either


def test_adopting_by_name_changes_it_and_marks_it(tmp_path):
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    os.chmod(str(foreign), 0o755)
    spec = [{"path": str(foreign), "uid": NOBODY, "gid": NOBODY, "mode": 0o750}]
    changes = od.ensure_all(spec, adopt=[str(foreign) + "/"])
    assert changes == ["owner %s %s" % (NOBODY_0750.split(" ")[0], foreign), "mode 0750 %s" % foreign]
    assert os.stat(str(foreign)).st_uid == NOBODY and _mode(str(foreign)) == 0o750
    assert od.ensure_all([{"path": str(foreign), "uid": 0, "gid": 0, "mode": 0o755}]) != []  # now ours


@pytest.mark.parametrize("forge", ["nobody_owned", "link", "other_path", "not_json"])
def test_a_forged_marker_does_not_make_a_directory_ours(tmp_path, forge):
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    marker = str(foreign / od.MARKER)
    if forge == "link":
        real = tmp_path / "real-marker"
        real.write_text(json.dumps({"path": str(foreign)}))
        os.symlink(str(real), marker)
    else:
        with open(marker, "w") as f:
            f.write("{" if forge == "not_json" else json.dumps({"path": str(tmp_path / "elsewhere")
                                                               if forge == "other_path" else str(foreign)}))
        if forge == "nobody_owned":
            os.chown(marker, NOBODY, NOBODY)
    with pytest.raises(od.Refused):
        od.ensure_all([{"path": str(foreign), "uid": NOBODY, "gid": NOBODY, "mode": 0o750}])
    assert os.stat(str(foreign)).st_uid == 0


def test_a_link_to_a_system_directory_is_judged_where_it_points(tmp_path):
    link = tmp_path / "home"
    os.symlink("/etc", str(link))
    before = os.stat("/etc")
    with pytest.raises(od.Refused) as e:
        od.ensure_all([{"path": str(link) + "/", "uid": NOBODY, "gid": NOBODY, "mode": 0o750, "what": "server_home"}])
    assert "really /etc" in str(e.value) and "system directory" in str(e.value)
    after = os.stat("/etc")
    assert (after.st_uid, after.st_mode) == (before.st_uid, before.st_mode)


def test_a_link_in_a_parent_is_resolved(tmp_path):
    os.symlink("/var", str(tmp_path / "v"))
    with pytest.raises(od.Refused) as e:
        od.decide(str(tmp_path / "v" / "lib"), 0, 0, 0o755, "server_log_dir")
    assert "really /var/lib" in str(e.value)


def test_a_link_to_a_directory_of_its_own_is_followed(tmp_path):
    real = tmp_path / "data" / "sglang"
    real.mkdir(parents=True)
    os.chown(str(real), NOBODY, NOBODY)
    os.chmod(str(real), 0o750)
    os.symlink(str(real), str(tmp_path / "home"))
    d = od.decide(str(tmp_path / "home"), NOBODY, NOBODY, 0o750)
    assert d["real"] == str(real) and d["action"] == "none"


def test_a_file_where_a_directory_belongs_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(od.Refused) as e:
        od.decide(str(f), 0, 0, 0o755, "server_log_dir")
    assert "is not a directory" in str(e.value)


def test_all_are_judged_before_any_is_made(tmp_path):
    first = str(tmp_path / "new")
    with pytest.raises(od.Refused):
        od.ensure_all([{"path": first, "uid": 0, "gid": 0, "mode": 0o755},
                       {"path": "/etc/", "uid": NOBODY, "gid": NOBODY, "mode": 0o750, "what": "server_home"}])
    assert not os.path.exists(first)


# ---- caches: never trusted with another owner or a looser mode

def _cache(path, mode=0o700, uid=0):
    return [{"path": path, "uid": uid, "gid": 0, "mode": mode, "what": "cache", "cache": True}]


def test_a_cache_is_made_root_only(tmp_path):
    cache = str(tmp_path / "model-check")
    od.ensure_all(_cache(cache))
    assert _mode(cache) == 0o700 and os.stat(cache).st_uid == 0


@pytest.mark.parametrize("owner, mode, refused", [
    (0, 0o700, False),        # as the collection makes it
    (0, 0o500, False),        # tighter and ours by its marker: fixed back
    (NOBODY, 0o700, True),    # another owner
    (0, 0o701, True),         # one bit looser
    (0, 0o755, True),
])
def test_an_existing_cache_with_another_owner_or_a_looser_mode_is_refused(tmp_path, owner, mode, refused):
    cache = str(tmp_path / "model-check")
    od.ensure_all(_cache(cache))            # made by the collection: its marker is there
    os.chown(cache, owner, 0)
    os.chmod(cache, mode)
    if refused:
        with pytest.raises(od.Refused) as e:
            od.ensure_all(_cache(cache), adopt=[cache])   # not even adopted
        assert "refused, not trusted" in str(e.value) and "Remove it" in str(e.value)
        assert (os.stat(cache).st_uid, _mode(cache)) == (owner, mode)
    else:
        od.ensure_all(_cache(cache))
        assert _mode(cache) == 0o700


def test_a_tighter_cache_the_collection_did_not_make_is_used_as_it_is(tmp_path):
    cache = tmp_path / "model-check"
    cache.mkdir()
    os.chmod(str(cache), 0o500)
    assert od.ensure_all(_cache(str(cache))) == []
    assert _mode(str(cache)) == 0o500


def test_a_cache_below_a_directory_others_can_write_is_refused(tmp_path):
    parent = tmp_path / "run"
    parent.mkdir()
    os.chmod(str(parent), 0o777)
    with pytest.raises(od.Refused) as e:
        od.ensure_all(_cache(str(parent / "model-check")))
    assert "another user could swap the cache" in str(e.value)
    os.chmod(str(parent), 0o1777)      # sticky, as /tmp: nobody else can rename ours
    od.ensure_all(_cache(str(parent / "model-check")))
    os.chmod(str(parent), 0o755)
    os.chown(str(parent), NOBODY, NOBODY)  # a parent another user owns
    with pytest.raises(od.Refused):
        od.ensure_all(_cache(str(parent / "other")))


def test_a_planted_link_as_the_cache_is_judged_where_it_points(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    os.chown(str(victim), NOBODY, NOBODY)
    os.symlink(str(victim), str(tmp_path / "model-check"))
    with pytest.raises(od.Refused) as e:
        od.ensure_all(_cache(str(tmp_path / "model-check")))
    assert "really %s" % victim in str(e.value)
    assert os.stat(str(victim)).st_uid == NOBODY


def test_posixpath_is_what_normalise_uses():
    assert od.normalise("/a/b/../c") == posixpath.normpath("/a/b/../c")


# ---- made by the collection's own processes below a directory it made: adopted, not refused (issue 43)

def _half_made(tmp_path, mode=0o755, owner=0, between_mode=0o755):
    """A deploy that stopped half-way: home made by the collection (marker), then SGLang's import made
    compile-cache/<instance>/<version> with its umask before the role did."""
    home = str(tmp_path / "home")
    od.ensure_all([{"path": home, "uid": NOBODY, "gid": NOBODY, "mode": 0o750}])
    between, cache = home + "/compile-cache", home + "/compile-cache/inst"
    os.mkdir(between, between_mode)
    os.chmod(between, between_mode)
    os.mkdir(cache)
    os.chmod(cache, mode)
    os.chown(cache, owner, owner)
    return home, cache


@pytest.mark.parametrize("owner", [0, NOBODY])
def test_a_cache_made_below_a_collection_directory_is_adopted(tmp_path, owner):
    _home, cache = _half_made(tmp_path, owner=owner)
    changes = od.ensure_all(_cache(cache, mode=0o750, uid=NOBODY))
    assert changes[0] == "adopted %s (made below %s)" % (cache, od.MARKER) and "mode 0750 %s" % cache in changes
    assert (os.stat(cache).st_uid, _mode(cache)) == (NOBODY, 0o750)
    assert os.path.isfile(os.path.join(cache, od.MARKER))
    assert od.ensure_all(_cache(cache, mode=0o750, uid=NOBODY)) == []   # the next run: ours, nothing to do


def test_a_directory_made_below_a_collection_directory_is_adopted_only_when_root_made_it(tmp_path):
    _home, made = _half_made(tmp_path)
    spec = [{"path": made, "uid": 0, "gid": 0, "mode": 0o750}]
    assert od.ensure_all(spec)[0].startswith("adopted ")
    _home2, by_user = _half_made(tmp_path / "other", owner=NOBODY)
    with pytest.raises(od.Refused) as e:   # not a cache: the service user's own folder is not made root's
        od.ensure_all([{"path": by_user, "uid": 0, "gid": 0, "mode": 0o750}])
    assert "was not made by the collection" in str(e.value)
    assert os.stat(by_user).st_uid == NOBODY


@pytest.mark.parametrize("mode, between_mode", [(0o775, 0o755), (0o777, 0o755), (0o755, 0o777), (0o755, 0o775)])
def test_what_another_user_could_have_made_is_not_adopted(tmp_path, mode, between_mode):
    _home, cache = _half_made(tmp_path, mode=mode, between_mode=between_mode)
    with pytest.raises(od.Refused) as e:
        od.ensure_all(_cache(cache, mode=0o750, uid=NOBODY))
    assert "refused, not trusted" in str(e.value) or "another user could swap" in str(e.value)
    assert (os.stat(cache).st_uid, _mode(cache)) == (0, mode)


def test_without_a_marked_ancestor_nothing_is_adopted(tmp_path):
    plain = tmp_path / "plain" / "inst"
    plain.mkdir(parents=True)
    os.chmod(str(plain), 0o755)
    with pytest.raises(od.Refused):
        od.ensure_all([{"path": str(plain), "uid": 0, "gid": 0, "mode": 0o750}])
    assert not od.made_inside_ours(str(plain), os.stat(str(plain)))


def test_nothing_is_adopted_through_a_link(tmp_path):
    home, made = _half_made(tmp_path)
    os.symlink(made, home + "/link")
    with pytest.raises(od.Refused):
        od.ensure_all([{"path": home + "/link", "uid": 0, "gid": 0, "mode": 0o750}])
    assert _mode(made) == 0o755
    assert od.made_inside_ours(made, os.stat(made)) and not od.made_inside_ours(home + "/link/x", os.stat(made))
