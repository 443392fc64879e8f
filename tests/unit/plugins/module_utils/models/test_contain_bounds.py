# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""models/contain's rules from both sides (issue 37), on real trees: name lengths at, below and above the file
system's limits, the message of every refusal as the operator reads it, the walk that never follows a link, what
open/lstat/remove do to the tree around them (and to nothing outside it), the dest rule per reason, and the bounded
walks of world_writable and hostile_entries."""
import errno
import os
import socket
import stat

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain


@pytest.fixture
def umask():
    """Set a umask for one test, restored after it."""
    old = []

    def set_mask(mask):
        old.append(os.umask(mask))
    yield set_mask
    if old:
        os.umask(old[0])


def refusal(call, *args, **kwargs):
    with pytest.raises(contain.Refused) as err:
        call(*args, **kwargs)
    assert err.type is contain.Refused  # the refusal itself, not a subclass
    return str(err.value)


# --- printable ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, shown", [("a\nb", "a\\x0ab"), ("plain", "plain"), (None, "None"), (5, "5"),
                                          (b"x\n", "b'x\\n'"), (["a\x1b"], "['a\\x1b']")])
def test_printable_escapes_controls_and_reprs_what_is_not_a_string(value, shown):
    assert contain.printable(value) == shown


# --- check_rel: every refusal, named -----------------------------------------------------------------------------

@pytest.mark.parametrize("rel, message", [
    ("", "entry  is not a path"),
    (None, "entry None is not a path"),
    (7, "entry 7 is not a path"),
    ("a\nb", "entry a\\x0ab has a control character or a backslash"),
    ("a\\b", "entry a\\b has a control character or a backslash"),
    ("/etc/passwd", "entry /etc/passwd is absolute"),
    ("a/../b", "entry a/../b is not a normalised path inside the tree (empty, . or .. component)"),
    ("a/", "entry a/ is not a normalised path inside the tree (empty, . or .. component)"),
])
def test_check_rel_names_the_entry_and_the_rule(rel, message):
    assert refusal(contain.check_rel, rel) == message


def test_check_rel_names_what_the_caller_calls_it():
    assert refusal(contain.check_rel, "/x", "shard") == "shard /x is absolute"
    assert contain.check_rel("a/b", "shard") == "a/b"


@pytest.mark.parametrize("size, ok", [(254, True), (255, True), (256, False)])
def test_a_component_of_255_bytes_passes_and_256_does_not(size, ok):
    rel = "d/" + "x" * size
    if ok:
        assert contain.check_rel(rel) == rel
    else:
        assert refusal(contain.check_rel, rel) == "entry %s is longer than a file system allows" % rel[:80]


def test_a_component_is_counted_in_utf8_bytes_not_characters():
    assert contain.check_rel(u"\u00e9" * 127)  # 254 bytes
    assert "longer than a file system allows" in refusal(contain.check_rel, u"\u00e9" * 128)  # 256 bytes


@pytest.mark.parametrize("length, ok", [(3999, True), (4000, True), (4001, False)])
def test_a_path_of_4000_characters_passes_and_4001_does_not(length, ok):
    part = "y" * 199 + "/"  # 200 characters a component, well under 255
    rel = (part * 21)[:length - 1] + "z"
    assert len(rel) == length and "//" not in rel
    if ok:
        assert contain.check_rel(rel) == rel
    else:
        assert refusal(contain.check_rel, rel) == "entry %s is longer than a file system allows" % rel[:80]


# --- check_names --------------------------------------------------------------------------------------------------

def test_a_file_that_is_the_directory_of_a_deeper_entry_is_named():
    assert refusal(contain.check_names, ["a/b", "a/b/c/d", "e"], "file") == (
        "file a/b is both a file and the directory of a/b/c/d")
    assert contain.check_names(["a/b/c", "a/bc", "a/b/cd"]) == ["a/b/c", "a/b/cd", "a/bc"]


@pytest.mark.parametrize("count, tail", [(10, ""), (11, "; and 1 more"), (12, "; and 2 more")])
def test_ten_problems_are_listed_and_the_rest_counted(count, tail):
    bad = ["/abs%02d" % i for i in range(count)]
    listed = "; ".join("entry /abs%02d is absolute" % i for i in range(10))
    assert refusal(contain.check_names, bad) == listed + tail


# --- _dir_fd, open_in, lstat_in, remove_in: the walk ---------------------------------------------------------------

def test_open_in_writes_creates_the_parents_inside_the_root_with_the_roles_modes(tmp_path, monkeypatch, umask):
    root, elsewhere = tmp_path / "root", tmp_path / "cwd"
    root.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    umask(0)
    fd = contain.open_in(str(root), "a/b/w.bin", os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"data")
    os.close(fd)
    assert (root / "a" / "b" / "w.bin").read_bytes() == b"data"
    assert list(elsewhere.iterdir()) == []  # nothing made relative to the working directory
    assert stat.S_IMODE(os.stat(str(root / "a")).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(str(root / "a" / "b")).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(str(root / "a" / "b" / "w.bin")).st_mode) == 0o644


def test_open_in_passes_the_mode_it_is_given(tmp_path, umask):
    umask(0)
    fd = contain.open_in(str(tmp_path), "x", os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)
    assert stat.S_IMODE(os.stat(str(tmp_path / "x")).st_mode) == 0o600


def test_open_in_reads_a_nested_file_and_creates_nothing_for_a_missing_one(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "w").write_bytes(b"w")
    fd = contain.open_in(str(tmp_path), "a/b/w", os.O_RDONLY)
    try:
        assert os.read(fd, 4) == b"w"
    finally:
        os.close(fd)
    with pytest.raises(OSError) as err:
        contain.open_in(str(tmp_path), "new/w", os.O_RDONLY)
    assert err.value.errno == errno.ENOENT
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("flags", [os.O_WRONLY | os.O_CREAT, os.O_RDWR | os.O_CREAT])
def test_open_in_creates_parents_for_either_write_flag(tmp_path, flags):
    os.close(contain.open_in(str(tmp_path), "p/w", flags))
    assert (tmp_path / "p" / "w").is_file()


def test_a_symlinked_directory_on_the_way_is_refused_naming_root_and_entry(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (outside / "b").mkdir(parents=True)
    (outside / "b" / "x").write_bytes(b"secret")
    root.mkdir()
    os.symlink(str(outside), str(root / "a"))
    want = ("%s/a/b is a symlink or not a directory; refused (nothing is followed out of the tree)" % root)
    assert refusal(contain.open_in, str(root), "a/b/x", os.O_RDONLY) == want
    assert refusal(contain.lstat_in, str(root), "a/b/x") == want
    assert refusal(contain.remove_in, str(root), "a/b/x") == want
    assert (outside / "b" / "x").read_bytes() == b"secret"


def test_a_plain_file_on_the_way_is_refused_as_not_a_directory(tmp_path):
    (tmp_path / "f").write_bytes(b"f")
    want = "%s/f is a symlink or not a directory; refused (nothing is followed out of the tree)" % tmp_path
    assert refusal(contain.open_in, str(tmp_path), "f/x", os.O_RDONLY) == want


def test_a_symlink_as_the_last_component_is_refused_naming_it(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "target").write_bytes(b"t")
    os.symlink(str(tmp_path / "target"), str(root / "w"))
    assert refusal(contain.open_in, str(root), "w", os.O_RDONLY) == "%s/w is a symlink; refused" % root


def test_a_directory_where_a_file_belongs_is_refused_as_not_a_plain_file(tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    assert refusal(contain.open_in, str(tmp_path), "d/e", os.O_RDONLY) == "%s/d/e is not a plain file; refused" % tmp_path


def test_a_root_that_is_a_file_holds_nothing(tmp_path):
    (tmp_path / "f").write_bytes(b"f")
    assert contain.lstat_in(str(tmp_path / "f"), "a/x") is None
    assert contain.remove_in(str(tmp_path / "f"), "a/x") is False


def test_lstat_in_sees_a_nested_file_and_makes_nothing(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c").write_bytes(b"abc")
    (tmp_path / "a" / "c").write_bytes(b"x")  # what a walk one level short would find
    assert contain.lstat_in(str(tmp_path), "a/b/c").st_size == 3
    assert contain.lstat_in(str(tmp_path), "a/b/none") is None
    assert contain.lstat_in(str(tmp_path), "new/x") is None
    assert not (tmp_path / "new").exists()


def test_lstat_in_does_not_follow_a_link(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 100)
    os.symlink("big", str(tmp_path / "link"))
    assert stat.S_ISLNK(contain.lstat_in(str(tmp_path), "link").st_mode)


def test_remove_in_removes_a_nested_file_and_says_whether_it_was_there(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "w").write_bytes(b"w")
    assert contain.remove_in(str(tmp_path), "a/b/w") is True
    assert not (tmp_path / "a" / "b" / "w").exists() and (tmp_path / "a" / "b").is_dir()
    assert contain.remove_in(str(tmp_path), "a/b/w") is False  # the directory is there, the file is not
    assert contain.remove_in(str(tmp_path), "new/w") is False  # no such directory: nothing made
    assert not (tmp_path / "new").exists()


def test_remove_in_never_removes_a_directory(tmp_path):
    (tmp_path / "a" / "d").mkdir(parents=True)
    with pytest.raises(OSError) as err:
        contain.remove_in(str(tmp_path), "a/d")
    assert err.value.errno in (errno.EISDIR, errno.EPERM)
    assert (tmp_path / "a" / "d").is_dir()


def test_remove_in_removes_a_link_not_what_it_points_at(tmp_path):
    (tmp_path / "t").write_bytes(b"t")
    os.symlink("t", str(tmp_path / "l"))
    assert contain.remove_in(str(tmp_path), "l") is True
    assert (tmp_path / "t").read_bytes() == b"t"


# --- check_dest: one reason each, named ----------------------------------------------------------------------------

SYSTEM = ("is a system directory or holds one; the role replaces its dest whole - give a directory of its own, "
          "e.g. /models/<name>")


@pytest.mark.parametrize("dest, problems", [
    ("/models/llama", []),
    ("/data/models/llama", []),
    ("/home/alice/models", []),
    ("", ["dest  is not a path"]),
    (None, ["dest None is not a path"]),
    (["/models/x"], ["dest ['/models/x'] is not a path"]),
    ("/models/a\nb", ["dest /models/a\\x0ab has a control character"]),
    ("models/llama", ["dest models/llama is a relative path; give an absolute one"]),
    ("/models/../models/llama", ["dest /models/../models/llama has a .. component; give the path it means"]),
    ("/etc", ["dest /etc " + SYSTEM]),
    ("/usr", ["dest /usr " + SYSTEM]),
    ("/", ["dest / " + SYSTEM]),
    ("/models/../etc", ["dest /models/../etc has a .. component; give the path it means", "dest /models/../etc " + SYSTEM]),
    ("/etc/models", ["dest /etc/models is inside a system tree; weights do not belong there"]),
    ("/usr/lib/x/y", ["dest /usr/lib/x/y is inside a system tree; weights do not belong there"]),
    ("/models", ["dest /models is too shallow (fewer than 2 components): it would be a whole tree of the host; give "
                 "a directory of its own, e.g. /models/<name>"]),
    ("/home/alice", ["dest /home/alice is a home directory; give a directory of its own below it"]),
])
def test_check_dest_gives_one_reason_per_rule(dest, problems):
    assert contain.check_dest(dest) == problems


def test_check_dest_follows_a_link_on_the_way_to_a_system_tree(tmp_path):
    os.symlink("/etc", str(tmp_path / "etc-link"))
    dest = str(tmp_path / "etc-link" / "models")
    assert contain.check_dest(dest) == ["dest %s (really /etc/models) is inside a system tree; weights do not belong "
                                        "there" % dest]
    os.symlink(str(tmp_path), str(tmp_path / "self"))
    assert contain.check_dest(str(tmp_path / "self" / "models")) == []


@pytest.mark.skipif(os.path.realpath("/lib") == "/lib", reason="needs /lib to be a link (merged /usr)")
def test_check_dest_names_the_first_reason_only_when_the_path_and_its_target_both_break_a_rule():
    assert contain.check_dest("/lib/models") == ["dest /lib/models is inside a system tree; weights do not belong there"]


# --- world_writable: counted, listed, bounded ----------------------------------------------------------------------

def _writable_tree(tmp_path, count):
    root = tmp_path / "m"
    root.mkdir()
    for i in range(count):
        path = root / ("w%d" % i)
        path.write_bytes(b"w")
        os.chmod(str(path), 0o666)
    return str(root)


@pytest.mark.parametrize("count, limit, listed", [(4, 5, 4), (5, 5, 5), (6, 5, 5), (3, 2, 2)])
def test_world_writable_lists_at_most_limit_and_counts_all(tmp_path, count, limit, listed):
    root = _writable_tree(tmp_path, count)
    found, some = contain.world_writable(root, limit=limit)
    assert found == count and len(some) == listed
    assert set(some) <= set("w%d" % i for i in range(count))


def test_world_writable_names_nested_entries_relative_to_the_root(tmp_path):
    root = tmp_path / "m"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_bytes(b"f")
    os.chmod(str(root / "d" / "f"), 0o646)
    os.chmod(str(root / "d"), 0o757)
    assert contain.world_writable(str(root)) == (2, ["d", "d/f"])
    os.chmod(str(root / "d" / "f"), 0o644)
    os.chmod(str(root / "d"), 0o755)
    assert contain.world_writable(str(root)) == (0, [])


@pytest.mark.parametrize("max_entries, found", [(2, 2), (3, 3), (4, 3)])
def test_world_writable_looks_at_max_entries_and_no_more(tmp_path, max_entries, found):
    root = _writable_tree(tmp_path, 3)
    assert contain.world_writable(root, max_entries=max_entries)[0] == found


def test_world_writable_of_a_missing_root_is_nothing(tmp_path):
    assert contain.world_writable(str(tmp_path / "none")) == (0, [])


def test_world_writable_root_is_named_dot(tmp_path):
    root = _writable_tree(tmp_path, 0)
    os.chmod(root, 0o777)
    assert contain.world_writable(root) == (1, ["."])


def test_the_warning_names_the_entries_and_the_fix(tmp_path):
    root = _writable_tree(tmp_path, 1)
    assert contain.world_writable_warning(root) == (
        "the model at %s has 1 file(s) or directories every user may write (w0): anyone on the host can change "
        "what is served. Run chmod -R o-w %s" % (root, root))
    assert contain.world_writable_warning(root, "the draft").startswith("the draft at %s has 1 " % root)


def test_the_warning_says_there_are_more_than_it_lists(tmp_path):
    root = _writable_tree(tmp_path, 6)
    warning = contain.world_writable_warning(root)
    assert " has 6 file(s) or directories every user may write (" in warning
    assert ", ...): anyone on the host" in warning and warning.count(", w") == 4
    (tmp_path / "five").mkdir()
    exact = contain.world_writable_warning(_writable_tree(tmp_path / "five", 5))
    assert "..." not in exact and exact.count(", w") == 4


def test_no_warning_for_a_tree_only_its_owner_writes(tmp_path):
    assert contain.world_writable_warning(_writable_tree(tmp_path, 0)) is None


# --- hostile_entries: each kind named with its fix, the walk bounded ----------------------------------------------

def test_hostile_entries_names_each_kind_with_its_fix(tmp_path, monkeypatch):
    root = tmp_path / "m"
    root.mkdir()
    (root / "w.bin").write_bytes(b"w")
    (tmp_path / "outside").write_bytes(b"o")
    os.mkfifo(str(root / "fifo"))
    os.symlink("../outside", str(root / "out"))
    os.symlink("missing", str(root / "gone"))
    monkeypatch.chdir(str(root))
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind("sock")
        assert contain.hostile_entries(str(root)) == [
            "fifo is a FIFO, not a plain file: a read would block or never end; replace it with the file it stands for",
            "gone is a symbolic link to nothing (missing)",
            "out is a symbolic link that leaves the model's tree (to ../outside): the check and SGLang would read it "
            "as root; copy the file into the tree",
            "sock is a socket, not a plain file: a read would block or never end; replace it with the file it "
            "stands for"]
    finally:
        sock.close()


def test_a_device_in_the_tree_is_named(tmp_path):
    try:
        os.mknod(str(tmp_path / "null"), stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (OSError, AttributeError) as e:
        pytest.skip("cannot make a device node here: %s" % e)
    assert contain.hostile_entries(str(tmp_path)) == [
        "null is a device, not a plain file: a read would block or never end; replace it with the file it stands for"]


def test_links_inside_the_tree_pass_and_a_link_to_a_fifo_is_named(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "w").write_bytes(b"w")
    os.symlink("sub/w", str(tmp_path / "a-file"))
    os.symlink("sub", str(tmp_path / "a-dir"))
    assert contain.hostile_entries(str(tmp_path)) == []
    os.mkfifo(str(tmp_path / "sub" / "p"))
    os.symlink("sub/p", str(tmp_path / "a-pipe"))
    assert [p.split(" ")[0] for p in contain.hostile_entries(str(tmp_path))] == ["a-pipe", "sub/p"]


def test_hostile_entries_through_a_root_that_is_a_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "w").write_bytes(b"w")
    os.symlink("w", str(real / "alias"))
    os.symlink(str(real), str(tmp_path / "root"))
    assert contain.hostile_entries(str(tmp_path / "root") + "/") == []


@pytest.mark.parametrize("limit, found", [(2, 2), (3, 3), (4, 3)])
def test_hostile_entries_lists_at_most_limit(tmp_path, limit, found):
    for i in range(3):
        os.mkfifo(str(tmp_path / ("p%d" % i)))
    problems = contain.hostile_entries(str(tmp_path), limit=limit)
    assert [p.split(" ")[0] for p in problems] == ["p0", "p1", "p2"][:found]


@pytest.mark.parametrize("max_entries, found", [(2, 2), (3, 3), (4, 3)])
def test_hostile_entries_looks_at_max_entries_and_no_more(tmp_path, max_entries, found):
    for i in range(3):
        os.mkfifo(str(tmp_path / ("p%d" % i)))
    assert len(contain.hostile_entries(str(tmp_path), max_entries=max_entries)) == found


def test_hostile_entries_lists_ten_by_default(tmp_path):
    for i in range(11):
        os.mkfifo(str(tmp_path / ("p%02d" % i)))
    assert [p.split(" ")[0] for p in contain.hostile_entries(str(tmp_path))] == ["p%02d" % i for i in range(10)]


def _deep(tmp_path):
    """A directory whose path is just short of PATH_MAX (4096), made one component at a time: an entry there with
    a long name cannot be lstat'ed by its full path (ENAMETOOLONG), though the walk lists it."""
    fd = os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY)
    path = str(tmp_path)
    try:
        while len(path) < 3880:
            part = "d" * min(250, 3900 - len(path))
            os.mkdir(part, dir_fd=fd)
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, path = nxt, path + "/" + part
        os.mkdir("a" * 250, dir_fd=fd)  # its full path is past PATH_MAX
    finally:
        os.close(fd)
    return path


def test_an_entry_lstat_cannot_reach_is_skipped_and_the_walk_goes_on(tmp_path):
    deep = _deep(tmp_path)
    with pytest.raises(OSError) as err:
        os.lstat(deep + "/" + "a" * 250)
    assert err.value.errno == errno.ENAMETOOLONG
    os.mkfifo(deep + "/zz")
    os.chmod(deep + "/zz", 0o666)
    rel = os.path.relpath(deep + "/zz", str(tmp_path))
    assert contain.world_writable(str(tmp_path)) == (1, [rel])
    assert contain.hostile_entries(str(tmp_path)) == [
        "%s is a FIFO, not a plain file: a read would block or never end; replace it with the file it stands for" % rel]


def test_the_walks_default_cap_is_100000_entries(tmp_path):
    """Both walks stop after 100,000 entries unless told otherwise: a tree of exactly 100,000 is looked at whole, the
    100,001st entry is not. Every file is a hard link to a world-writable one (cheap: no inode each; ext4 allows
    65,000 links per inode), and the last entry in sorted order is a FIFO."""
    root = tmp_path / "t"
    root.mkdir()
    sources = []
    for i in range(2):
        src = tmp_path / ("src%d" % i)
        src.write_bytes(b"")
        os.chmod(str(src), 0o666)
        sources.append(str(src))
    for i in range(99999):
        os.link(sources[i // 50000], str(root / ("f%06d" % i)))
    os.mkfifo(str(root / "zz-fifo"))
    os.chmod(str(root / "zz-fifo"), 0o666)
    # at the cap: every entry looked at (the FIFO, last in sorted order, is found; all 100,000 are world-writable)
    assert [p.split(" ")[0] for p in contain.hostile_entries(str(root))] == ["zz-fifo"]
    assert contain.world_writable(str(root))[0] == 100000
    # one above: the walk stops before the 100,001st (the FIFO, sorted last; one more writable entry not counted)
    os.link(sources[1], str(root / "f099999"))
    assert contain.hostile_entries(str(root)) == []
    assert contain.world_writable(str(root))[0] == 100000
    assert contain.world_writable(str(root), max_entries=100001)[0] == 100001


def _mostly_clean_tree(tmp_path, make_bad):
    """Five clean files and a clean directory at the top, one bad entry below it: os.walk looks at the six top
    entries first, the bad one is the seventh entry looked at (and the first found)."""
    root = tmp_path / "m"
    (root / "sub").mkdir(parents=True)
    for i in range(5):
        (root / ("f%d" % i)).write_bytes(b"ok")
        os.chmod(str(root / ("f%d" % i)), 0o644)
    os.chmod(str(root), 0o755)
    os.chmod(str(root / "sub"), 0o755)
    make_bad(str(root / "sub" / "bad"))
    return str(root)


def _writable_file(path):
    with open(path, "wb") as handle:
        handle.write(b"w")
    os.chmod(path, 0o666)


@pytest.mark.parametrize("max_entries, found", [(6, (0, [])), (7, (1, ["sub/bad"])), (8, (1, ["sub/bad"]))])
def test_world_writable_caps_entries_looked_at_not_entries_found(tmp_path, max_entries, found):
    # issue 47: a cap on what is found would let a tree of millions of clean entries be walked whole
    root = _mostly_clean_tree(tmp_path, _writable_file)
    assert contain.world_writable(root, max_entries=max_entries) == found


@pytest.mark.parametrize("max_entries, found", [(6, []), (7, ["sub/bad"]), (8, ["sub/bad"])])
def test_hostile_entries_caps_entries_looked_at_not_entries_found(tmp_path, max_entries, found):
    root = _mostly_clean_tree(tmp_path, os.mkfifo)
    assert [p.split(" ")[0] for p in contain.hostile_entries(root, max_entries=max_entries)] == found
