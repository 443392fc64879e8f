# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/owned_dirs (issue 37): the marker's bounds and form, the descriptors that never follow a link, the modes a
new directory and its parents get, the parents of a cache up to /, and whole messages; on real directories (root),
the mutants of tools/mutation's host/owned_dirs room that the rule's other tests let through."""
import json
import os
import resource
import stat

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs as od

NOBODY = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _mode(path):
    return stat.S_IMODE(os.lstat(str(path)).st_mode)


def _foreign(tmp_path, name="theirs", mode=0o755):
    path = tmp_path / name
    path.mkdir()
    os.chmod(str(path), mode)
    return str(path)


def _marker(directory, text):
    with open(os.path.join(directory, od.MARKER), "w") as f:
        f.write(text)


# ---- printable and _describe

def test_printable_escapes_controls_as_lowercase_hex_and_shows_other_values_as_repr():
    assert od.printable("/srv/a b") == "/srv/a b"
    assert od.printable("/a\n\x7f\x1b") == "/a\\x0a\\x7f\\x1b"
    assert od.printable(3) == "3" and od.printable(None) == "None" and od.printable(b"/x") == "b'/x'"


def test_normalise_strips_only_slashes_before_the_first_name():
    assert od.normalise("/Xdir") == "/Xdir" and od.normalise("//XX//y") == "/XX/y"


@pytest.mark.parametrize("path, root, inside", [
    ("/data/MODELX/m", "/data/MODELX", True), ("/data/MODELX", "/data/MODELX/", True), ("/data/MODEL/m", "/data/MODELX", False),
    ("/data/MODELXY", "/data/MODELX", False), ("/etc", "/", True), ("/", "/", True), ("/", "//", True)])
def test_under_strips_only_slashes_from_the_root(path, root, inside):
    assert od.under(path, root) is inside


def test_describe_names_unknown_ids_by_number():
    assert od._describe(0, 0, 0o750) == "root:root 0750"                        # pylint: disable=protected-access
    assert od._describe(4242424, 4242425, 0o7) == "4242424:4242425 0007"        # pylint: disable=protected-access


# ---- the marker: a root-owned regular file of at most 4096 bytes naming the directory

def _padded(path, size):
    text = json.dumps({"path": path})
    return text + " " * (size - len(text))


@pytest.mark.parametrize("size, ours", [(4095, True), (4096, True), (4097, False)])
def test_a_marker_of_at_most_4096_bytes_counts(tmp_path, size, ours):
    theirs = _foreign(tmp_path)
    _marker(theirs, _padded(theirs, size))
    assert os.path.getsize(os.path.join(theirs, od.MARKER)) == size
    if ours:
        d = od.decide(theirs, NOBODY, NOBODY, 0o750)
        assert d["action"] == "fix" and d["adopt"] is False
    else:
        with pytest.raises(od.Refused, match="was not made by the collection"):
            od.decide(theirs, NOBODY, NOBODY, 0o750)


def test_a_marker_that_cannot_be_opened_is_not_ours(tmp_path):
    theirs = _foreign(tmp_path)
    _marker(theirs, json.dumps({"path": theirs}))
    assert od.decide(theirs, NOBODY, NOBODY, 0o750)["action"] == "fix"          # readable: ours
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    probe = os.open("/", os.O_RDONLY)                                            # the lowest free descriptor
    os.close(probe)
    resource.setrlimit(resource.RLIMIT_NOFILE, (probe + 1, hard))                # the directory opens, its marker not
    try:
        with pytest.raises(od.Refused):
            od.decide(theirs, NOBODY, NOBODY, 0o750)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert os.stat(theirs).st_uid == 0


def test_the_marker_written_is_root_s_0644_and_says_who_made_what(tmp_path):
    old = os.umask(0)
    try:
        target = str(tmp_path / "new")
        od.ensure_all([{"path": target, "uid": NOBODY, "gid": NOBODY, "mode": 0o750}])
    finally:
        os.umask(old)
    marker = os.path.join(target, od.MARKER)
    st_ = os.lstat(marker)
    assert (st_.st_uid, st_.st_gid, stat.S_IMODE(st_.st_mode)) == (0, 0, 0o644)
    with open(marker) as f:
        assert f.read() == json.dumps({"made_by": "llmserve.sglang", "path": target}) + "\n"


def test_adopting_rewrites_a_longer_old_marker_whole(tmp_path):
    theirs = _foreign(tmp_path)
    _marker(theirs, json.dumps({"path": "/somewhere/else", "note": "x" * 500}))
    od.ensure_all([{"path": theirs, "uid": NOBODY, "gid": NOBODY, "mode": 0o750}], adopt=[theirs])
    with open(os.path.join(theirs, od.MARKER)) as f:
        assert json.load(f) == {"made_by": "llmserve.sglang", "path": theirs}
    assert od.ensure_all([{"path": theirs, "uid": 0, "gid": 0, "mode": 0o755}]) == [
        "owner root:root %s" % theirs, "mode 0755 %s" % theirs]                  # ours now: changed without adopt


def test_adopting_never_writes_through_a_planted_marker_link(tmp_path):
    theirs = _foreign(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(str(victim), os.path.join(theirs, od.MARKER))
    with pytest.raises(OSError):
        od.ensure_all([{"path": theirs, "uid": NOBODY, "gid": NOBODY, "mode": 0o750}], adopt=[theirs])
    assert victim.read_text() == "keep"
    assert os.stat(theirs).st_uid == 0 and _mode(theirs) == 0o755                # nothing changed before the refusal


# ---- ensure acts on what was judged: a directory swapped for a link since is not followed

def test_a_directory_swapped_for_a_link_after_the_decision_is_not_changed(tmp_path):
    judged = str(tmp_path / "home")
    os.mkdir(judged)
    decision = od.decide(judged, NOBODY, NOBODY, 0o750, adopt=[judged])
    assert decision["action"] == "fix"
    victim = _foreign(tmp_path, "victim", 0o755)
    os.rmdir(judged)
    os.symlink(victim, judged)
    with pytest.raises(OSError):
        od.ensure(decision, NOBODY, NOBODY, 0o750)
    assert os.stat(victim).st_uid == 0 and _mode(victim) == 0o755
    assert not os.path.exists(os.path.join(victim, od.MARKER))


@pytest.mark.parametrize("umask", [0, 0o022, 0o077])
def test_parents_are_made_root_0755_whatever_the_umask(tmp_path, umask):
    target = tmp_path / "a" / "b" / "home"
    old = os.umask(umask)
    try:
        od.ensure_all([{"path": str(target), "uid": NOBODY, "gid": NOBODY, "mode": 0o750}])
        assert os.umask(umask) == umask                                          # the session's umask given back
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a") == 0o755 and _mode(tmp_path / "a" / "b") == 0o755
    assert _mode(target) == 0o750 and os.stat(str(target)).st_uid == NOBODY


@pytest.mark.parametrize("umask", [0, 0o022])
def test_a_new_directory_is_root_0700_from_its_first_moment_until_its_mode_is_set(tmp_path, monkeypatch, umask):
    # between mkdir and the final chown/chmod the directory must not be open to others (umask 0 would make a
    # mode-less mkdir 0777): each mkdir's result is looked at the moment it returns
    made, mkdir = {}, os.mkdir

    def watched(path, mode=0o777, **kwargs):
        mkdir(path, mode, **kwargs)
        made[str(path)] = _mode(path)
    monkeypatch.setattr(od.os, "mkdir", watched)
    target = tmp_path / "a" / "home"
    old = os.umask(umask)
    try:
        od.ensure_all([{"path": str(target), "uid": NOBODY, "gid": NOBODY, "mode": 0o750}])
    finally:
        os.umask(old)
    assert made == {str(tmp_path / "a"): 0o755, str(target): 0o700}
    assert _mode(target) == 0o750 and os.stat(str(target)).st_uid == NOBODY     # then the mode asked for


# ---- a cache's parents, all the way up to /

def test_a_writable_grandparent_of_a_cache_is_refused_by_name(tmp_path):
    top = _foreign(tmp_path, "ww", 0o777)
    os.mkdir(os.path.join(top, "sub"))
    os.chmod(os.path.join(top, "sub"), 0o755)
    cache = os.path.join(top, "sub", "model-check")
    with pytest.raises(od.Refused) as e:
        od.ensure_all([{"path": cache, "uid": 0, "gid": 0, "mode": 0o700, "what": "server_cache", "cache": True}])
    assert str(e.value) == (
        "server_cache %s is a cache below %s, which is root:root 0777: another user could swap the cache for a link; "
        "refused, not trusted. Give a cache directory below directories only root can write" % (cache, top))
    assert not os.path.exists(cache)


def test_a_parent_owned_by_root_is_fine_for_a_cache_of_another_owner_whoever_runs_the_check():
    # root (uid 0) may own a cache's parents even when the check runs under another effective uid (the other side,
    # a parent of a third user refused, is test_host_owned_dirs' test_a_cache_below_a_directory_others_can_write)
    os.seteuid(NOBODY)
    try:
        od._check_parents("/usr/lib/llmserve-cache", NOBODY, "cache", "/usr/lib/llmserve-cache")  # pylint: disable=protected-access
    finally:
        os.seteuid(0)


# ---- ensure_all's defaults and its one refusal for all

def test_ensure_all_names_the_default_setting_and_what_and_joins_every_problem(tmp_path):
    one, two = _foreign(tmp_path, "one"), _foreign(tmp_path, "two")
    with pytest.raises(od.Refused) as e:
        od.ensure_all([{"path": one, "uid": NOBODY, "gid": NOBODY, "mode": 0o750},
                       {"path": two, "uid": NOBODY, "gid": NOBODY, "mode": 0o750}])
    message = "directory %s exists and was not made by the collection (no %s in it): it is root:root 0755 and would " \
              "be chmod-ed and chown-ed to %s. Give a directory of its own, or add %s to the " \
              "role's adopt_dirs to let the collection take it over"
    wanted = od._describe(NOBODY, NOBODY, 0o750)                               # pylint: disable=protected-access
    assert str(e.value) == (message % (one, od.MARKER, wanted, one)) + "; " + (message % (two, od.MARKER, wanted, two))


# ---- normalise, resolve, under, system_problem: whole messages, both sides

def test_normalise_refusals_name_what_and_default_to_path():
    assert str(pytest.raises(od.Refused, od.normalise, "").value) == "path  is not a path; give an absolute one"
    assert str(pytest.raises(od.Refused, od.normalise, None, "x").value) == "x None is not a path; give an absolute one"
    assert str(pytest.raises(od.Refused, od.normalise, "/a\nb").value) == "path /a\\x0ab has a control character"
    assert str(pytest.raises(od.Refused, od.normalise, "a/b", "server_home").value) == \
        "server_home a/b is a relative path; give an absolute one"
    assert str(pytest.raises(od.Refused, od.resolve, "a/b").value) == "path a/b is a relative path; give an absolute one"
    assert str(pytest.raises(od.Refused, od.resolve, "a/b", "x").value) == "x a/b is a relative path; give an absolute one"


def test_a_link_to_a_name_with_a_control_character_is_refused_by_what(tmp_path):
    target = tmp_path / "a\nb"
    target.mkdir()
    os.symlink(str(target), str(tmp_path / "home"))
    shown = str(tmp_path / "a\\x0ab")
    e = pytest.raises(od.Refused, od.resolve, str(tmp_path / "home"), "server_home").value
    assert str(e) == "server_home %s has a control character" % shown
    e = pytest.raises(od.Refused, od.decide, str(tmp_path / "home"), 0, 0, 0o755, "server_log_dir").value
    assert str(e) == "server_log_dir %s has a control character" % shown
    assert str(pytest.raises(od.Refused, od.resolve, str(tmp_path / "home")).value) == "path %s has a control character" % shown


@pytest.mark.parametrize("path, root, inside", [
    ("/srv/x", "/srv/", True), ("/srv", "/srv/", True), ("/srv", "/srv", True), ("/srvx", "/srv", False),
    ("/srv/x", "/srv", True), ("/x", "/", True), ("/", "/", True), ("/", "//", True), ("/srv", "/srv/x", False),
    ("/srv", "/srvX", False), ("/aX/b", "/aX", True), ("/aX/b", "/aX/", True),   # only slashes are stripped
])
def test_under_both_sides(path, root, inside):
    assert od.under(path, root) is inside


def test_system_problem_whole_messages():
    assert od.system_reason("/etc") == "system" and od.system_reason("/etc/x") is None
    assert od.system_problem("etc", "server_home") == "server_home etc is a relative path; give an absolute one"
    tail = " is a system directory or holds one: the collection would chmod and chown it; give a directory of its " \
           "own, e.g. /var/lib/sglang"
    assert od.system_problem("/etc", "x") == "x /etc" + tail
    assert od.system_problem("//etc/", "x") == "x //etc/ (/etc)" + tail


# ---- decide: defaults, the dict it returns, owners given as -1, whole messages

def test_decide_returns_what_it_found(tmp_path):
    new = str(tmp_path / "new")
    assert od.decide(new + "/", 0, 0, 0o755) == {"path": new, "real": new, "action": "create", "adopt": False,
                                                 "changes": ["created %s" % new]}
    fits = _foreign(tmp_path, "fits", 0o755)
    assert od.decide(fits, 0, 0, 0o755) == {"path": fits, "real": fits, "action": "none", "adopt": False, "changes": []}
    _marker(fits, json.dumps({"path": fits}))
    assert od.decide(fits, 0, NOBODY, 0o750) == {
        "path": fits, "real": fits, "action": "fix", "adopt": False,
        "changes": ["owner %s %s" % (od._describe(0, NOBODY, 0).split(" ")[0], fits),   # pylint: disable=protected-access
                    "mode 0750 %s" % fits]}
    assert od.decide(fits, 0, 0, 0o750, adopt=[fits])["adopt"] is True


@pytest.mark.parametrize("uid, gid", [(-1, -1), (-1, 0), (0, -1)])
def test_an_owner_or_group_of_minus_one_is_either(tmp_path, uid, gid):
    fits = _foreign(tmp_path, "fits", 0o755)
    assert od.decide(fits, uid, gid, 0o755)["action"] == "none"
    e = pytest.raises(od.Refused, od.decide, fits, uid, gid, 0o750).value
    assert "would be chmod-ed and chown-ed to root:root 0750." in str(e)


def test_decide_defaults_name_directory_and_the_roles_setting(tmp_path):
    theirs = _foreign(tmp_path)
    e = pytest.raises(od.Refused, od.decide, theirs, NOBODY, NOBODY, 0o750).value
    assert str(e).startswith("directory %s exists and was not made by the collection" % theirs)
    assert str(e).endswith("or add %s to the role's adopt_dirs to let the collection take it over" % theirs)
    f = tmp_path / "file"
    f.write_text("x")
    e = pytest.raises(od.Refused, od.decide, str(f), 0, 0, 0o755).value
    assert str(e) == "directory %s is not a directory (Not a directory); move it away or give another path" % f
    e = pytest.raises(od.Refused, od.decide, "rel", 0, 0, 0o755, "server_home").value
    assert str(e) == "server_home rel is a relative path; give an absolute one"


def test_a_link_to_a_system_directory_whole_message(tmp_path):
    os.symlink("/etc", str(tmp_path / "home"))
    e = pytest.raises(od.Refused, od.decide, str(tmp_path / "home"), 0, 0, 0o755, "server_home").value
    assert str(e) == "server_home %s (really /etc) is a system directory or holds one: the collection would chmod " \
                     "and chown it; give a directory of its own, e.g. /var/lib/sglang" % (tmp_path / "home")


def test_a_cache_with_another_owner_whole_message(tmp_path):
    cache = _foreign(tmp_path, "cache", 0o700)
    os.chown(cache, NOBODY, NOBODY)
    e = pytest.raises(od.Refused, od.decide, cache, 0, 0, 0o700, "server_cache", cache=True).value
    assert str(e) == "server_cache %s is a cache the collection reads back, and it is %s, not root:root 0700: " \
                     "refused, not trusted. Remove it (the collection makes it again)" % (
                         cache, od._describe(NOBODY, NOBODY, 0o700))          # pylint: disable=protected-access


# ---- issue 47: the live-tree refusal's whole words, and the parents' walk ends at /

@pytest.mark.parametrize("path, tree", [("/sys/fs/cgroup/x", "/sys"), ("/run/x", "/run"), ("/var/run/x", "/var/run")])
def test_the_live_tree_refusal_says_why_and_the_fix_in_full(path, tree):
    assert od.refusal(path) == (
        "is inside %s, a tree of the kernel or of the running system (a directory made under /sys/fs/cgroup is a "
        "cgroup, one under /dev, /proc or /run is no directory on a disk)" % tree,
        "give a directory on a disk, e.g. /var/lib/sglang")
    assert od.refusal("/var/lib/sglang") is None and od.refusal("/run/llmserve-sglang/x") is None


def test_a_caches_parents_are_each_looked_at_once_up_to_the_root(monkeypatch):
    looked, real_stat = [], os.stat

    def counted(path, *args, **kwargs):
        looked.append(path)
        if len(looked) > 20:  # a walk that never reaches / (no time limit needed to see it)
            raise AssertionError("the parents' walk does not end: %s" % looked[-3:])
        return real_stat(path, *args, **kwargs)
    with monkeypatch.context() as patch:  # undone before pytest itself needs os.stat again
        patch.setattr(od.os, "stat", counted)
        od._check_parents("/nonexistent-llmserve/a/b/cache", NOBODY, "cache", "c")  # pylint: disable=protected-access
    assert looked == ["/nonexistent-llmserve/a/b", "/nonexistent-llmserve/a", "/nonexistent-llmserve", "/"]


# ---- made_inside_ours (issue 43): the folder and every directory up to the marked one root's (or a cache owner's),
# writable by nobody else; the walk stops at a system directory

def _below_ours(tmp_path, between_mode=0o755, between_owner=0, made_owner=0, made_mode=0o755):
    """home (made by the collection: marker) / between / made, as a deploy that stopped half-way leaves them."""
    home = str(tmp_path / "home")
    od.ensure_all([{"path": home, "uid": 0, "gid": 0, "mode": 0o755}])
    between, made = home + "/between", home + "/between/made"
    os.mkdir(between)
    os.chmod(between, between_mode)
    os.chown(between, between_owner, between_owner)
    os.mkdir(made)
    os.chmod(made, made_mode)
    os.chown(made, made_owner, made_owner)
    return home, between, made


@pytest.mark.parametrize("between_mode, between_owner, adopted", [
    (0o755, 0, True), (0o751, 0, True), (0o700, 0, True),
    (0o775, 0, False), (0o757, 0, False), (0o777, 0, False), (0o755, NOBODY, False)])
def test_a_folder_is_adopted_only_when_nobody_else_could_write_on_the_way_up(tmp_path, between_mode, between_owner,
                                                                             adopted):
    _home, _between, made = _below_ours(tmp_path, between_mode, between_owner)
    spec = [{"path": made, "uid": 0, "gid": 0, "mode": 0o750}]
    assert od.made_inside_ours(made, os.stat(made)) is adopted
    if adopted:
        assert od.decide(made, 0, 0, 0o750) == {"path": made, "real": made, "action": "fix", "adopt": True, "changes": [
            "adopted %s (made below %s)" % (made, od.MARKER), "mode 0750 %s" % made]}
        assert od.ensure_all(spec)[0] == "adopted %s (made below %s)" % (made, od.MARKER)
        assert _mode(made) == 0o750
    else:   # another user could have made it (or swapped it in): not the collection's to chmod
        with pytest.raises(od.Refused, match="exists and was not made by the collection"):
            od.ensure_all(spec)
        assert _mode(made) == 0o755 and not os.path.exists(os.path.join(made, od.MARKER))


def test_a_cache_its_owner_made_below_ours_is_adopted_for_that_owner_only(tmp_path):
    # daemon (uid 1): any service user's uid counts, not only nobody's
    _home, _between, made = _below_ours(tmp_path, made_owner=1)
    assert od.made_inside_ours(made, os.stat(made), 1) and not od.made_inside_ours(made, os.stat(made), NOBODY)
    assert not od.made_inside_ours(made, os.stat(made))
    with pytest.raises(od.Refused, match="is a cache the collection reads back, and it is daemon:daemon 0755"):
        od.ensure_all([{"path": made, "uid": NOBODY, "gid": 0, "mode": 0o700, "what": "cache", "cache": True}])
    changes = od.ensure_all([{"path": made, "uid": 1, "gid": 0, "mode": 0o700, "what": "cache", "cache": True}])
    assert changes == ["adopted %s (made below %s)" % (made, od.MARKER), "owner daemon:root %s" % made,
                       "mode 0700 %s" % made]
    assert (os.stat(made).st_uid, os.stat(made).st_gid, _mode(made)) == (1, 0, 0o700)


def test_what_root_made_is_root_s_whoever_runs_the_check(tmp_path, monkeypatch):
    # the check under another effective uid (its marker that uid's): a folder root made still counts, one of a
    # third user does not
    _home, _between, made = _below_ours(tmp_path)
    os.chown(os.path.join(_home, od.MARKER), NOBODY, NOBODY)
    monkeypatch.setattr(os, "geteuid", lambda: NOBODY)
    assert od.made_inside_ours(made, os.stat(made))
    os.chown(made, 1, 1)
    assert not od.made_inside_ours(made, os.stat(made))


def test_the_walk_up_stops_at_a_system_directory(tmp_path, monkeypatch):
    # a marker above a system directory (here: one named so for the test) vouches for nothing below it
    home, between, made = _below_ours(tmp_path)
    assert od.made_inside_ours(made, os.stat(made))
    monkeypatch.setattr(od, "SYSTEM_PATHS", od.SYSTEM_PATHS + (between,))
    assert od.system_reason(between) == "system" and od.system_reason(made) is None
    assert not od.made_inside_ours(made, os.stat(made))
    with pytest.raises(od.Refused, match="exists and was not made by the collection"):
        od.ensure_all([{"path": made, "uid": 0, "gid": 0, "mode": 0o750}])
    assert os.path.isfile(os.path.join(home, od.MARKER))


def test_only_a_cache_trusts_its_owner_s_processes(tmp_path):
    # the service user's folder below ours is adopted as its cache, never as a directory the collection owns
    _home, _between, made = _below_ours(tmp_path, made_owner=NOBODY)
    with pytest.raises(od.Refused, match="exists and was not made by the collection"):
        od.decide(made, NOBODY, NOBODY, 0o750)
    assert od.decide(made, NOBODY, NOBODY, 0o750, cache=True)["adopt"] is True
