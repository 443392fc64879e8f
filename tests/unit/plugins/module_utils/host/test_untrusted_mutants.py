# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/untrusted (issue 37): each refusal's whole message (file, field, what, fix) and both sides of every cap, on
real files; the mutants of tools/mutation's host/untrusted room that the reader's other tests let through."""
import json
import os
import stat
import struct

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted as U

ROOT = os.geteuid() == 0
HEADER_FIX = "the file is corrupt or not safetensors: download it again"


def _st(header, data=b""):
    text = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode("utf-8")
    return struct.pack("<Q", len(text)) + text + data


def _write(path, data):
    with open(str(path), "wb") as f:
        f.write(data)
    return str(path)


def _refused(call, *args, **kwargs):
    with pytest.raises(U.Refused) as e:
        call(*args, **kwargs)
    return e.value


# ---- Kind's defaults: depth 64, a million values, the publisher's file

def test_a_kinds_default_depth_is_64_at_and_above():
    kind = U.Kind("config", 1 << 20)
    U.parse_json(b"[" * 64 + b"]" * 64, "c.json", kind)
    e = _refused(U.parse_json, b"[" * 65 + b"]" * 65, "c.json", kind)
    assert str(e) == "c.json: JSON nested deeper than 64 levels, the check's cap for a config file: " \
                     "replace it with the publisher's file"


def test_a_kinds_default_value_cap_is_a_million_at_and_above():
    kind = U.Kind("index", 64 << 20)
    at = b"[" + b"0," * 999999 + b"0]"           # 999,999 commas and one bracket: 1,000,000 values
    assert len(U.parse_json(at, "i.json", kind)) == 1000000
    e = _refused(U.parse_json, b"[" + b"0," * 1000000 + b"0]", "i.json", kind)
    assert str(e) == "i.json: holds about 1000001 JSON values, above the check's cap of 1000000 for a index file: " \
                     "replace it with the publisher's file"


def test_a_kinds_fix_is_its_own_or_the_publishers_file():
    assert U.Kind("config", 1).fix == "replace it with the publisher's file"
    assert U.Kind("config", 1, fix="stage it again").fix == "stage it again"


# ---- what a file is, in words

@pytest.mark.parametrize("mode, words", [
    (stat.S_IFLNK | 0o777, "a symbolic link"), (stat.S_IFIFO | 0o600, "a FIFO (named pipe)"),
    (stat.S_IFCHR | 0o600, "a character device"), (stat.S_IFBLK | 0o600, "a block device"),
    (stat.S_IFSOCK | 0o600, "a socket"), (stat.S_IFDIR | 0o755, "a directory"),
    (stat.S_IFREG | 0o644, "a regular file"), (0, "not a regular file"),
])
def test_describe_mode_names_each_kind(mode, words):
    assert U.describe_mode(mode) == words


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
def test_a_block_device_is_named(tmp_path):
    os.mknod(str(tmp_path / "w.safetensors"), 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    with U.Tree(str(tmp_path)) as t:
        e = _refused(t.header, "w.safetensors")
    assert str(e) == "w.safetensors: is a block device, not a regular file: only regular files are read " \
                     "(nothing is followed): put the real file there"


# ---- lstat: no link followed, on the way or at the end

def test_lstat_does_not_follow_the_last_link(tmp_path):
    _write(tmp_path / "real.json", b"{}")
    os.symlink("real.json", str(tmp_path / "link.json"))
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "x.json", b"{}")
    with U.Tree(str(tmp_path)) as t:
        assert stat.S_ISLNK(t.lstat("link.json").st_mode)
        assert stat.S_ISREG(t.lstat("sub/x.json").st_mode)   # a real subdirectory: opened and closed again
        assert t.lstat("sub/missing.json") is None
        assert t.lstat("missing/x.json") is None


def test_lstat_through_a_linked_directory_is_refused_by_name(tmp_path):
    (tmp_path / "real").mkdir()
    _write(tmp_path / "real" / "x.json", b"{}")
    os.symlink("real", str(tmp_path / "sub"))
    with U.Tree(str(tmp_path)) as t:
        e = _refused(t.lstat, "sub/x.json")
    assert str(e) == "sub/x.json: sub is not a plain directory (a link or a file): only regular files are read " \
                     "(nothing is followed): put the real file there"


# ---- tensor_values: integer tensors only, a cap on what is read, read where the header says

def _two_tensor_file(tmp_path, second=(1, 2, 3)):
    first = struct.pack("<4h", -1, 2, -3, 4)
    data = struct.pack("<%dq" % len(second), *second)
    header = {"a": {"dtype": "I16", "shape": [4], "data_offsets": [0, 8]},
              "b": {"dtype": "I64", "shape": [len(second)], "data_offsets": [8, 8 + len(data)]},
              "f": {"dtype": "F32", "shape": [1], "data_offsets": [8 + len(data), 12 + len(data)]}}
    return _write(tmp_path / "d.safetensors", _st(header, first + data + b"\0\0\0\0"))


def test_tensor_values_reads_each_tensor_where_its_offsets_say(tmp_path):
    _two_tensor_file(tmp_path)
    with U.Tree(str(tmp_path)) as t:
        header = t.header("d.safetensors")
        assert list(t.tensor_values("d.safetensors", header, "a")) == [-1, 2, -3, 4]
        assert list(t.tensor_values("d.safetensors", header, "b")) == [1, 2, 3]


def test_tensor_values_refuses_a_float_tensor_by_name(tmp_path):
    _two_tensor_file(tmp_path)
    with U.Tree(str(tmp_path)) as t:
        header = t.header("d.safetensors")
        e = _refused(t.tensor_values, "d.safetensors", header, "f")
    assert str(e) == "d.safetensors tensor f: is F32, not an integer type: the draft's f must hold token ids"
    assert (e.name, e.field) == ("d.safetensors", "tensor f")


def test_tensor_values_cap_at_and_just_below(tmp_path):
    _two_tensor_file(tmp_path)
    with U.Tree(str(tmp_path)) as t:
        header = t.header("d.safetensors")
        assert list(t.tensor_values("d.safetensors", header, "b", max_bytes=24)) == [1, 2, 3]   # 24 bytes: at
        e = _refused(t.tensor_values, "d.safetensors", header, "b", max_bytes=23)
    assert str(e) == "d.safetensors tensor b: 24 bytes, above the check's cap of 23"
    assert (e.field, e.fix) == ("tensor b", None)


def test_tensor_values_of_a_tensor_with_a_long_name_cuts_it_at_80(tmp_path):
    ints, floats = "t" * 100, "f" * 100
    _write(tmp_path / "l.safetensors", _st({ints: {"dtype": "I16", "shape": [1], "data_offsets": [0, 2]},
                                            floats: {"dtype": "F16", "shape": [1], "data_offsets": [2, 4]}}, b"\0" * 4))
    with U.Tree(str(tmp_path)) as t:
        header = t.header("l.safetensors")
        e = _refused(t.tensor_values, "l.safetensors", header, floats)
        assert e.field == "tensor " + "f" * 80 + "...(100 characters)"
        e = _refused(t.tensor_values, "l.safetensors", header, ints, max_bytes=1)
        assert e.field == "tensor " + "t" * 80 + "...(100 characters)"
        assert str(e) == "l.safetensors tensor %s: 2 bytes, above the check's cap of 1" % e.field[len("tensor "):]


def test_tensor_values_of_a_file_cut_short_since_its_header_is_refused_by_name(tmp_path):
    path = _two_tensor_file(tmp_path)
    with U.Tree(str(tmp_path)) as t:
        header = t.header("d.safetensors")
        with open(path, "r+b") as f:
            f.truncate(header.data_start + 12)
        e = _refused(t.tensor_values, "d.safetensors", header, "b")
    assert str(e) == "d.safetensors: shorter than it was a moment ago (4 of 24 bytes read): stop whatever writes " \
                     "into the model directory and check again"


# ---- int_list_field

def test_int_list_field_both_sides():
    assert U.int_list_field({"ids": [1, 2, 3]}, "ids", "c.json") == [1, 2, 3]
    assert U.int_list_field({"ids": []}, "ids", "c.json") == []
    assert U.int_list_field({}, "ids", "c.json") is None                          # absent, not required
    assert U.int_list_field({"ids": None}, "ids", "c.json") is None
    e = _refused(U.int_list_field, {}, "ids", "c.json", required=True)
    assert str(e) == "c.json ids: missing: restore the publisher's file"
    e = _refused(U.int_list_field, {"ids": "1,2"}, "ids", "c.json", path="draft.ids", fix="use the draft's own")
    assert str(e) == "c.json draft.ids: is a string ('1,2'), not a list: use the draft's own"


@pytest.mark.parametrize("bad", [[1, True], [1, "2"], [1.0], [None]])
def test_int_list_field_refuses_a_list_holding_anything_but_integers(bad):
    e = _refused(U.int_list_field, {"ids": bad}, "ids", "c.json")
    assert str(e) == "c.json ids: %s is not a list of integers: restore the publisher's file" % repr(bad)
    e = _refused(U.int_list_field, {"ids": bad}, "ids", "c.json", path="x.ids", fix="fix it")
    assert (e.field, e.fix) == ("x.ids", "fix it")


def test_int_list_field_cuts_a_long_list_at_80():
    bad = ["x"] * 100
    e = _refused(U.int_list_field, {"ids": bad}, "ids", "c.json")
    assert e.what == repr(bad)[:80] + "...(%d characters)" % len(repr(bad)) + " is not a list of integers"


# ---- read_header_fd: a file shorter than the 8-byte length, a header longer than the file holds

def test_a_file_shorter_than_the_header_length_is_refused_by_name(tmp_path):
    _write(tmp_path / "s.safetensors", b"\1\2\3")
    with U.Tree(str(tmp_path)) as t:
        e = _refused(t.header, "s.safetensors")
    assert str(e) == "s.safetensors: 3 bytes, shorter than the 8-byte header length: " + HEADER_FIX


def test_a_header_cut_short_while_read_is_refused_by_name(tmp_path):
    path = _write(tmp_path / "c.safetensors", struct.pack("<Q", 50) + b"{" * 12)
    fd = os.open(path, os.O_RDONLY)
    try:
        e = _refused(U.read_header_fd, fd, 100, "c.safetensors")   # the size seen before the file shrank
    finally:
        os.close(fd)
    assert str(e) == "c.safetensors: shorter than it was a moment ago (12 of 50 bytes read): stop whatever writes " \
                     "into the model directory and check again"


# ---- read_exact: chunks of 16 MiB put back in order, a short file, a growing one

def test_a_read_past_one_chunk_is_whole_and_in_order(tmp_path):
    length = 16 * U.MIB + 3 * 4096
    data = b"".join(struct.pack("<I", i) for i in range((length + 4096) // 4))   # every 4 bytes say where they are
    path = _write(tmp_path / "big", data)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = U.read_exact(fd, 0, length, "big")
        assert len(got) == length and got == data[:length]
        assert U.read_exact(fd, 8, length, "big") == data[8:8 + length]
    finally:
        os.close(fd)


def test_a_short_read_is_refused_unless_short_is_allowed(tmp_path):
    _write(tmp_path / "empty", b"")
    _write(tmp_path / "five", b"12345")
    with U.Tree(str(tmp_path)) as t:
        assert t.first_byte("empty") == b""
        assert t.first_byte("five") == b"1"
        fd = t.open("five")[0]
    try:
        assert U.read_exact(fd, 0, 9, "five", short_ok=True) == b"12345"
        assert U.read_exact(fd, 0, 5, "five") == b"12345"                      # at: whole
        e = _refused(U.read_exact, fd, 0, 6, "five")                            # one byte more than there is
        assert str(e) == "five: shorter than it was a moment ago (5 of 6 bytes read): stop whatever writes into " \
                         "the model directory and check again"
    finally:
        os.close(fd)


def test_growth_is_refused_by_name_only_when_asked(tmp_path):
    _write(tmp_path / "five", b"12345")
    with U.Tree(str(tmp_path)) as t:
        fd = t.open("five")[0]
    try:
        assert U.read_exact(fd, 0, 5, "five", allow_growth=False) == b"12345"    # at the end: nothing more
        assert U.read_exact(fd, 0, 4, "five") == b"1234"                         # growth allowed by default
        e = _refused(U.read_exact, fd, 0, 4, "five", allow_growth=False)         # one byte past what was asked
        assert str(e) == "five: grew while it was read: stop whatever writes into the model directory and check again"
    finally:
        os.close(fd)


def test_tree_read_refuses_a_file_that_says_0_bytes_and_holds_more():
    # procfs: regular files of size 0 that read as text, the way a file grows between fstat and read
    with U.Tree("/proc/self") as t:
        e = _refused(t.read, "status", U.CONFIG)
    assert str(e) == "status: grew while it was read: stop whatever writes into the model directory and check again"


def test_tree_read_holds_the_kinds_cap_itself(tmp_path):
    _write(tmp_path / "at.json", b"0123")
    _write(tmp_path / "above.json", b"01234")
    kind = U.Kind("config", 4)
    with U.Tree(str(tmp_path)) as t:
        assert t.read("at.json", kind) == b"0123"
        e = _refused(t.read, "above.json", kind)
    assert str(e) == "above.json: 5 bytes, above the check's cap of 4 for a config file: replace it with the " \
                     "publisher's file"


def test_tree_json_names_the_file(tmp_path):
    _write(tmp_path / "bad.json", b"{x")
    with U.Tree(str(tmp_path)) as t:
        e = _refused(t.json, "bad.json", U.CONFIG)
    assert e.name == "bad.json" and str(e).startswith("bad.json: not JSON (")


# ---- check_rel: each rule on its own, the whole message

_OUTSIDE = ": not a relative path inside the model directory: refused, never opened"
_NOT_PLAIN = ": leaves the model directory or is not a plain path ('..', '.', '//'): refused, never opened"


@pytest.mark.parametrize("rel, message", [
    ("/etc/passwd", "/etc/passwd" + _OUTSIDE),        # absolute, each part plain
    ("/x", "/x" + _OUTSIDE),
    ("a\x00b", "a\\x00b" + _OUTSIDE),                  # a NUL, nothing else wrong
    ("", "" + _OUTSIDE),
    (3, "3" + _OUTSIDE),
    ("a//b", "a//b" + _NOT_PLAIN), ("a/./b", "a/./b" + _NOT_PLAIN), ("a/../b", "a/../b" + _NOT_PLAIN),
    ("a/", "a/" + _NOT_PLAIN),
])
def test_check_rel_refuses_each_way_out_with_its_message(rel, message):
    assert str(_refused(U.check_rel, rel)) == message
    assert _refused(U.check_rel, rel, "given name").name == "given name"


@pytest.mark.parametrize("rel, parts", [("a", ["a"]), ("a/b.json", ["a", "b.json"]), ("x\\y", ["x\\y"]),
                                        ("a/.b", ["a", ".b"]), ("...", ["..."])])
def test_check_rel_passes_plain_relative_paths(rel, parts):
    assert U.check_rel(rel) == parts


# ---- _parent: every directory on the way opened without following, and named when it is not one

def test_a_link_two_levels_down_is_named_by_its_whole_path(tmp_path):
    (tmp_path / "a" / "real").mkdir(parents=True)
    _write(tmp_path / "a" / "real" / "x.json", b"{}")
    os.symlink("real", str(tmp_path / "a" / "sub"))
    with U.Tree(str(tmp_path)) as t:
        e = _refused(t.json, "a/sub/x.json", U.CONFIG)
        assert str(e) == "a/sub/x.json: a/sub is not a plain directory (a link or a file): only regular files are " \
                         "read (nothing is followed): put the real file there"
        assert t.json("a/real/x.json", U.CONFIG) == {}       # the tree's own descriptor still open and usable
        e = _refused(t.lstat, "a/sub/x.json")
        assert e.name == "a/sub/x.json"


def test_a_file_on_the_way_is_named_as_not_a_directory(tmp_path):
    _write(tmp_path / "f", b"{}")
    with U.Tree(str(tmp_path)) as t:
        e = _refused(t.json, "f/x.json", U.CONFIG)
    assert str(e) == "f/x.json: f is not a plain directory (a link or a file): only regular files are read " \
                     "(nothing is followed): put the real file there"


def test_three_levels_down_are_read_and_every_descriptor_closed(tmp_path):
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    _write(tmp_path / "a" / "b" / "c" / "x.json", b'{"k": 1}')
    before = len(os.listdir("/proc/self/fd"))
    with U.Tree(str(tmp_path)) as t:
        for _round in range(3):
            assert t.json("a/b/c/x.json", U.CONFIG) == {"k": 1}
            assert stat.S_ISREG(t.lstat("a/b/c/x.json").st_mode)
            assert t.lstat("a/b/c/none.json") is None
            _refused(t.json, "a/b/c/none.json", U.CONFIG)
    assert len(os.listdir("/proc/self/fd")) == before


# ---- Tree: its own descriptor (close-on-exec, closed with it), or a caller's (left open)

def _flags(fd):
    import fcntl
    return fcntl.fcntl(fd, fcntl.F_GETFD), fcntl.fcntl(fd, fcntl.F_GETFL)


def test_a_trees_own_descriptor_is_close_on_exec_and_closed_with_it(tmp_path):
    import fcntl
    t = U.Tree(str(tmp_path))
    fd = t.fd
    try:
        assert t.path == str(tmp_path) and t.owned is True
        fd_flags, fl_flags = _flags(fd)
        assert fd_flags & fcntl.FD_CLOEXEC and fl_flags & os.O_NONBLOCK
        assert stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        t.close()
    assert t.fd is None
    with pytest.raises(OSError):
        os.fstat(fd)


def test_a_callers_descriptor_is_left_open(tmp_path):
    fd = os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        with U.Tree(fd=fd) as t:
            assert t.owned is False and t.names() == []
        assert t.fd is None
        assert stat.S_ISDIR(os.fstat(fd).st_mode)          # still open: the caller's to close
    finally:
        os.close(fd)


def test_a_tree_that_is_not_a_directory_is_named(tmp_path):
    path = _write(tmp_path / "file", b"")
    e = _refused(U.Tree, path)
    assert str(e) == "%s: not a directory: point it at the model directory" % path
    e = _refused(U.Tree, str(tmp_path / "none"))
    assert str(e) == "%s: cannot be opened (No such file or directory): point it at the model directory" % (
        tmp_path / "none")


def test_an_opened_file_is_close_on_exec_and_does_not_block(tmp_path):
    import fcntl
    _write(tmp_path / "x.json", b"{}")
    with U.Tree(str(tmp_path)) as t:
        fd, st_ = t.open("x.json", U.CONFIG)
    try:
        fd_flags, fl_flags = _flags(fd)
        assert fd_flags & fcntl.FD_CLOEXEC and fl_flags & os.O_NONBLOCK and not fl_flags & os.O_ACCMODE
        assert st_.st_size == 2
    finally:
        os.close(fd)


# ---- the safetensors header: each refusal's whole message (what, field, fix)

TRUNCATED_FIX = "the file is truncated or not what its header says: download it again"
_U8 = '"dtype":"U8","shape":[%s],"data_offsets":[%s]'


@pytest.mark.parametrize("raw, data, field, what", [
    ('{"t":{%s,"x":1e400}}' % (_U8 % ("1", "0,1")), 1, None,
     "not JSON as safetensors reads it (number out of range: 1e400)"),
    ('[]', 0, None, "the header is a list, not an object"),
    ('{"__metadata__":{},"__metadata__":{}}', 0, "header", "__metadata__ given twice"),
    ('{"__metadata__":[]}', 0, "__metadata__", "is a list, not a map of strings"),
    ('{"__metadata__":{"a":1,"b":"s","c":null}}', 0, "__metadata__", "values of a, c are not strings"),
    ('{"a":{%s},"b":{%s}}' % (_U8 % ("2", "0,2"), _U8 % ("1", "1,2")), 2, "tensor b",
     "data_offsets [1, 2] overlaps the tensor before it (the data so far ends at 2)"),
    ('{"a":{%s}}' % (_U8 % ("1", "1,2")), 2, "tensor a",
     "data_offsets [1, 2] leaves a gap after the tensor before it (the data so far ends at 0)"),
    ('{"a":{%s},"b":{%s},"c":{%s}}' % (_U8 % ("0", "0,0"), _U8 % ("1", "0,1"), _U8 % ("", "1,0")), 1, "tensor c",
     "data_offsets [1, 0] ends before it begins (the data so far ends at 1)"),
    ('{"a":{%s}}' % (_U8 % ("4294967296,4294967296", "0,1")), 1, "tensor a", "shape [4294967296, 4294967296] overflows 64 bits"),
    ('{"a":{%s}}' % (_U8 % ("4294967296,4294967295", "0,1")), 1, "tensor a",       # 2^64 - 2^32 elements: fits, bits do not
     "shape [4294967296, 4294967295] x U8 overflows 64 bits"),
    ('{"a":{"dtype":"F4","shape":[18446744073709551615],"data_offsets":[0,1]}}', 1, "tensor a",   # the count at U64_MAX
     "shape [18446744073709551615] x F4 overflows 64 bits"),
    ('{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}', 2, "tensor a", "F4 [3] is 12 bits, not a whole number of bytes"),
    ('{"a":{"dtype":"F4","shape":[3,1,1,1,1,1,1,1,1],"data_offsets":[0,2]}}', 2, "tensor a",
     "F4 [3, 1, 1, 1, ... 9 dimensions] is 12 bits, not a whole number of bytes"),
    ('{"a":{"dtype":"U16","shape":[2],"data_offsets":[0,3]}}', 3, "tensor a", "U16 [2] needs 4 bytes, its data_offsets [0, 3] give 3"),
    ('{"a":{"dtype":"U16","shape":[1,1,1,1,1,1,1,2],"data_offsets":[0,3]}}', 3, "tensor a",
     "U16 [1, 1, 1, 1, 1, 1, 1, 2] needs 4 bytes, its data_offsets [0, 3] give 3"),
    ('{"t":["U8",[1]]}', 0, "tensor t", "a sequence of 2 items, not [dtype, shape, data_offsets]"),
    ('{"t":["U8",[1],[0,1],4]}', 1, "tensor t", "a sequence of 4 items, not [dtype, shape, data_offsets]"),
    ('{"t":{"dtype":"U8",%s}}' % (_U8 % ("1", "0,1")), 1, "tensor t", "dtype given twice"),
    ('{"t":{%s,"shape":[1],"data_offsets":[0,1]}}' % (_U8 % ("1", "0,1")), 1, "tensor t", "shape, data_offsets given twice"),
    ('{"t":{"dtype":"U8"}}', 0, "tensor t", "no shape, data_offsets"),
    ('{"t":{"shape":[1],"data_offsets":[0,1]}}', 1, "tensor t", "no dtype"),
    ('{"t":3}', 0, "tensor t", "is an integer, not {dtype, shape, data_offsets}"),
    ('{"t":{"dtype":"X","shape":[1],"data_offsets":[0,1]}}', 1, "tensor t",
     "dtype X is not one safetensors knows (BF16, BOOL, C64, F16 and 18 more)"),
    ('{"t":{"dtype":{"U8":1},"shape":[1],"data_offsets":[0,1]}}', 1, "tensor t",
     "dtype {'U8': 1} is not one safetensors knows (BF16, BOOL, C64, F16 and 18 more)"),
    ('{"t":{"dtype":{"U8":null,"I8":null},"shape":[1],"data_offsets":[0,1]}}', 1, "tensor t",
     "dtype {'U8': None, 'I8': None} is not one safetensors knows (BF16, BOOL, C64, F16 and 18 more)"),
    ('{"t":{"dtype":"U8","shape":[-1,2],"data_offsets":[0,1]}}', 1, "tensor t", "shape is not a list of sizes (-1.0)"),
    ('{"t":{"dtype":"U8","shape":[1,true,18446744073709551616],"data_offsets":[0,1]}}', 1, "tensor t",
     "shape is not a list of sizes (True, 18446744073709551616)"),
    ('{"t":{"dtype":"U8","shape":"x","data_offsets":[0,1]}}', 1, "tensor t", "shape is not a list of sizes (x)"),
    ('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0]}}', 1, "tensor t", "data_offsets [0] is not [begin, end]"),
    ('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1,1]}}', 1, "tensor t", "data_offsets [0, 1, 1] is not [begin, end]"),
    ('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,-1]}}', 1, "tensor t", "data_offsets [0, -1.0] is not [begin, end]"),
    ('{"t":{"dtype":"U8","shape":[1],"data_offsets":"0,1"}}', 1, "tensor t", "data_offsets 0,1 is not [begin, end]"),
])
def test_each_header_refusal_names_file_field_and_fix(raw, data, field, what):
    raw = raw.encode()
    e = _refused(U.header_of_bytes, struct.pack("<Q", len(raw)) + raw + b"\0" * data, "x.safetensors")
    assert (e.name, e.field, e.what, e.fix) == ("x.safetensors", field, what, HEADER_FIX)
    assert str(e) == "x.safetensors%s: %s: %s" % (" " + field if field else "", what, HEADER_FIX)


@pytest.mark.parametrize("extra, what", [
    (-1, "short: expected 63 bytes, found 62"), (1, "longer than its header says: expected 63 bytes, found 64")])
def test_a_file_one_byte_off_its_header_is_refused_either_way(extra, what):
    data = _st(b'{"a":{%s}}' % (_U8 % ("2", "0,2")).encode(), b"\0" * (2 + extra))
    e = _refused(U.header_of_bytes, data, "x.safetensors")
    assert str(e) == "x.safetensors: %s: %s" % (what, TRUNCATED_FIX)
    assert U.header_of_bytes(_st(b'{"a":{%s}}' % (_U8 % ("2", "0,2")).encode(), b"\0\0"), "x").size == 63


@pytest.mark.parametrize("raw", [
    '{"t":{"dtype":{"BF16":null},"shape":[1],"data_offsets":[0,2]}}',     # serde's tagged form of a unit variant
    '{"t":["BF16",[1],[0,2]]}', '{"__metadata__":{"a":"b"},"t":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}',
    '{"__metadata__":null,"t":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}',
])
def test_the_other_forms_safetensors_reads_pass(raw):
    header = U.header_of_bytes(_st(raw.encode(), b"\0\0"), "x")
    assert header.tensors == {"t": ("BF16", [1], 0, 2)} and header.size == 8 + len(raw) + 2
    assert header.metadata in (None, {"a": "b"})


# ---- the 8-byte length: shorter than it, above safetensors' limit, longer than the file

def test_the_header_length_both_sides_of_each_bound(tmp_path):
    e = _refused(U.header_of_bytes, b"\0" * 7, "x")
    assert str(e) == "x: 7 bytes, shorter than the 8-byte header length: " + HEADER_FIX
    e = _refused(U.header_of_bytes, struct.pack("<Q", 3) + b"{}", "x")
    assert str(e) == "x: header length 3 does not fit the file (10 bytes): the file is truncated or not safetensors: " \
                     "download it again"
    assert U.header_of_bytes(struct.pack("<Q", 2) + b"{}", "x").size == 10   # at: fits exactly
    e = _refused(U.header_of_bytes, struct.pack("<Q", U.HEADER_MAX_BYTES + 1) + b"{}", "x")
    assert str(e) == "x: header length 100000001 is above safetensors' limit of 100000000: " + HEADER_FIX
    e = _refused(U.header_of_bytes, struct.pack("<Q", U.HEADER_MAX_BYTES) + b"{}", "x")
    assert e.what == "header length 100000000 does not fit the file (10 bytes)"
    path = _write(tmp_path / "h", struct.pack("<Q", 2) + b"{}")
    fd = os.open(path, os.O_RDONLY)
    try:
        e = _refused(U.read_header_fd, fd, 7, "h")          # a size below 8 from the caller: refused, not read
        assert str(e) == "h: 7 bytes, shorter than the 8-byte header length: " + HEADER_FIX
    finally:
        os.close(fd)


# ---- JSON under a kind's limits: each refusal's whole message

@pytest.mark.parametrize("data, kind, what", [
    (b'{"a": "01234567"}', U.Kind("config", 16), "17 bytes, above the check's cap of 16 for a config file"),
    (b'"\xff"', U.CONFIG, "not UTF-8 (byte 1)"),
    (b"{x", U.CONFIG, "not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    (b"[NaN]", U.CONFIG, "not JSON (NaN is not JSON)"),
    (b"[" * 5000 + b"]" * 5000, U.Kind("deep", 1 << 20, 10 ** 6, 10 ** 6), "JSON nested too deep"),
])
def test_each_json_refusal_names_the_file_and_the_kinds_fix(data, kind, what):
    e = _refused(U.parse_json, data, "f.json", kind)
    assert str(e) == "f.json: %s: %s" % (what, kind.fix)


def test_a_lone_surrogate_is_refused_only_where_safetensors_reads_the_json():
    data = b'{"a":"\\ud800"}'
    assert U.parse_json(data, "f.json", U.CONFIG) == {"a": u"\ud800"}
    e = _refused(U.parse_json, data, "f.json", U.HEADER, strict_numbers=True)
    assert str(e) == "f.json: JSON string with a lone surrogate escape (\\uD800-\\uDFFF): " + HEADER_FIX
    assert U.parse_json(b'{"a":"\\ud83d\\ude00"}', "f.json", U.HEADER, strict_numbers=True) == {"a": u"\U0001f600"}


# ---- Tree.open: each refusal's whole message

_REGULAR_FIX = "only regular files are read (nothing is followed): put the real file there"


def test_each_open_refusal_names_the_file_and_its_fix(tmp_path):
    os.mkfifo(str(tmp_path / "fifo"))
    _write(tmp_path / "real", b"x")
    os.symlink("real", str(tmp_path / "link"))
    with U.Tree(str(tmp_path)) as t:
        cases = {
            "missing/x.json": "cannot be opened (No such file or directory): check the model directory",
            "none.json": "missing: copy it into the model directory or stage the model again",
            "n" * 300: "cannot be read (File name too long): check the model directory",
            "fifo": "is a FIFO (named pipe), not a regular file: " + _REGULAR_FIX,
            "link": "is a symbolic link, not a regular file: " + _REGULAR_FIX,
        }
        for rel, message in cases.items():
            e = _refused(t.open, rel)
            assert str(e) == "%s: %s" % (U.printable(rel), message), rel
        # the name is checked as given, not as printed: a NUL or a number is refused, never looked up
        assert str(_refused(t.open, "a\x00b")) == "a\\x00b" + _OUTSIDE
        assert str(_refused(t.open, 3)) == "3" + _OUTSIDE
        assert str(_refused(t.open, "a\nb")) == "a\\x0ab: missing: copy it into the model directory or stage the " \
                                                "model again"


def test_open_holds_the_kinds_cap_at_and_above(tmp_path):
    _write(tmp_path / "w", b"12345")
    with U.Tree(str(tmp_path)) as t:
        fd, st_ = t.open("w", U.Kind("tokenizer", 5))
        os.close(fd)
        assert st_.st_size == 5
        before = len(os.listdir("/proc/self/fd"))
        e = _refused(t.open, "w", U.Kind("tokenizer", 4, fix="fetch it again"))
        assert len(os.listdir("/proc/self/fd")) == before                # the refused file's descriptor closed
    assert str(e) == "w: 5 bytes, above the check's cap of 4 for a tokenizer file: fetch it again"


# ---- messages: printable, sample, type_name

def test_printable_cuts_at_its_limit_and_escapes_controls_only():
    assert U.printable("x" * 120) == "x" * 120                                   # at: whole
    assert U.printable("x" * 121) == "x" * 120 + "...(121 characters)"           # one above: cut
    assert U.printable("x" * 11, 10) == "x" * 10 + "...(11 characters)"
    assert U.printable("a\x00\x1f\x7f\x9f\xa0 z") == "a\\x00\\x1f\\x7f\\x9f\xa0 z"
    assert U.printable(b"\n") == "b'\\n'" and U.printable(None) == "None"


def test_sample_shows_three_and_counts_the_rest():
    assert U.sample(["a", "b", "c"]) == "a, b, c"
    assert U.sample(["a", "b", "c", "d"]) == "a, b, c and 1 more"
    assert U.sample(["a", "b"], 1) == "a and 1 more"
    assert U.sample(["y" * 81]) == "y" * 80 + "...(81 characters)"
    assert U.sample([]) == ""


@pytest.mark.parametrize("value, name", [(True, "a boolean"), (1, "an integer"), (1.5, "a number"), ("s", "a string"),
                                         ([], "a list"), ({}, "an object"), (None, "null"), (b"", "bytes")])
def test_type_name_of_each_json_type(value, name):
    assert U.type_name(value) == name


# ---- field and int_field

def test_field_names_the_types_it_wanted_and_the_one_it_found():
    e = _refused(U.field, {"k": [1]}, "k", (int, str), "c.json")
    assert str(e) == "c.json k: is a list ([1]), not an integer or a string: restore the publisher's file"
    e = _refused(U.field, {"k": 1}, "k", (str, type(None)), "c.json", path="a.k", fix="fix it")
    assert str(e) == "c.json a.k: is an integer (1), not a string or null: fix it"
    assert U.field({"k": True}, "k", (bool, int), "c.json") is True              # a boolean where one is wanted
    assert U.field({"k": 0}, "k", int, "c.json") == 0
    e = _refused(U.field, {"k": "v" * 100}, "k", int, "c.json")
    assert e.what == "is a string (%s), not an integer" % (repr("v" * 100)[:60] + "...(102 characters)")


def test_field_of_something_not_an_object_names_the_parent_field():
    e = _refused(U.field, [1], "k", int, "c.json", path="draft.k")
    assert str(e) == "c.json draft: is a list, not an object: restore the publisher's file"
    e = _refused(U.field, "s", "k", int, "c.json", path="a.b.k", fix="fix it")
    assert (e.field, e.fix) == ("a.b", "fix it")
    e = _refused(U.field, None, "k", int, "c.json")
    assert str(e) == "c.json: is null, not an object: restore the publisher's file"


def test_a_required_field_given_as_null_is_missing():
    e = _refused(U.field, {"k": None}, "k", int, "c.json", path="x.k", required=True, fix="set it")
    assert str(e) == "c.json x.k: missing: set it"


def test_int_field_minimum_at_below_above():
    assert U.int_field({"n": 8}, "n", "c.json", minimum=7) == 8
    assert U.int_field({"n": 7}, "n", "c.json", minimum=7) == 7
    assert U.int_field({"n": -5}, "n", "c.json") == -5                       # no minimum: any integer
    e = _refused(U.int_field, {"n": 6}, "n", "c.json", minimum=7)
    assert str(e) == "c.json n: is 6, below 7: restore the publisher's file"
    e = _refused(U.int_field, {"n": 6}, "n", "c.json", path="cfg.n", minimum=7, fix="fix it")
    assert str(e) == "c.json cfg.n: is 6, below 7: fix it"
    assert U.int_field({}, "n", "c.json", minimum=7) is None
    e = _refused(U.int_field, {}, "n", "c.json", required=True)
    assert str(e) == "c.json n: missing: restore the publisher's file"


# ---- numbers as serde_json reads them

def test_serde_numbers():
    assert U._parse_int("-0") == 0.0 and isinstance(U._parse_int("-0"), float)   # pylint: disable=protected-access
    assert U._parse_int("-3") == -3.0 and isinstance(U._parse_int("-3"), float)  # pylint: disable=protected-access
    twenty = "1" * 20
    assert U._parse_int(twenty) == int(twenty) and isinstance(U._parse_int(twenty), int)  # pylint: disable=protected-access
    assert isinstance(U._parse_int("1" * 21), float)                            # pylint: disable=protected-access
    assert U._parse_float("1e308") == 1e308                                     # pylint: disable=protected-access
    for text in ("1e309", "-1e309"):
        with pytest.raises(ValueError, match="number out of range: %s" % text):
            U._parse_float(text)                                                # pylint: disable=protected-access
    with pytest.raises(ValueError, match="^number out of range: " + "9" * 40 + r"\.\.\.\(402 characters\)$"):
        U._parse_float("9" * 400 + "e0")                                        # pylint: disable=protected-access


def test_keys_given_twice_are_remembered_with_what_they_hid():
    obj = U._strict_loads('{"a": 1, "b": 2, "a": 3, "a": 4}')                   # pylint: disable=protected-access
    assert obj == {"a": 4, "b": 2} and obj.twice == {"a"}
    assert obj.hidden == [("a", 1), ("a", 3), ("a", 4)]
    plain = U._strict_loads('{"a": 1, "b": 2}')                                 # pylint: disable=protected-access
    assert plain.twice == () and plain.hidden == ()


def test_maybe_twice_counts_each_key_per_tensor():
    one = b'{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'
    assert not U._maybe_twice(one, 1)                                           # pylint: disable=protected-access
    assert U._maybe_twice(one, 2)                                               # pylint: disable=protected-access
    assert U._maybe_twice(b'"__metadata__""__metadata__"' + one, 1)              # pylint: disable=protected-access
    assert not U._maybe_twice(b'"__metadata__"' + one, 1)                        # pylint: disable=protected-access
    for key in (b'"dtype"', b'"shape"', b'"data_offsets"'):
        assert U._maybe_twice(one + key, 1)                                     # pylint: disable=protected-access


# ---- the fast path (_bulk): a plain valid header settled at once, anything else left to the careful path

def _t(dtype="U8", shape=(2,), offsets=(0, 2)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


def test_the_fast_path_settles_a_plain_valid_header():
    parsed = {"__metadata__": {"f": "pt"}, "a": _t(), "b": _t("U16", (1, 3), (2, 8))}
    assert U._bulk(parsed, 8) == {"a": ("U8", [2], 0, 2), "b": ("U16", [1, 3], 2, 8)}   # pylint: disable=protected-access
    assert U._bulk({"a": _t(shape=(), offsets=(0, 1))}, 1) == {"a": ("U8", [], 0, 1)}  # pylint: disable=protected-access


@pytest.mark.parametrize("parsed, size", [
    ({"__metadata__": {}}, 0), ({}, 0),                                          # no tensor
    ({"a": ["U8", [2], [0, 2]]}, 2),                                             # the sequence form
    ({"a": dict(_t(), x=1)}, 2), ({"a": {"dtype": "U8", "shape": [2], "x": [0, 2]}}, 2),
    ({"a": _t(dtype={"U8": None})}, 2), ({"a": _t(dtype="X")}, 2),
    ({"a": dict(_t(), shape=2)}, 2), ({"a": dict(_t(), data_offsets="0,2")}, 2), ({"a": _t(offsets=(0, 2, 2))}, 2),
    ({"a": _t(shape=(0,), offsets=(0, 0))}, 0), ({"a": _t(shape=(-2,))}, 2), ({"a": _t(shape=(True, 2))}, 2),
    ({"a": _t(shape=(2.0,))}, 2), ({"a": _t(shape=(U.U64_MAX + 1,), offsets=(0, 2))}, 2),
    ({"a": _t(offsets=(-1, 1))}, 2), ({"a": _t(offsets=(0, 2.0))}, 2), ({"a": _t(offsets=(0, U.U64_MAX + 1))}, 2),
    ({"a": _t(offsets=(1, 3))}, 3),                                              # not from 0
    ({"a": _t(), "b": _t(offsets=(3, 5))}, 5),                                   # a gap
    ({"a": _t(), "b": _t(offsets=(1, 3))}, 3),                                   # an overlap
    ({"a": _t()}, 3), ({"a": _t()}, 1),                                          # not to the end
    ({"a": _t(shape=(), offsets=(1, 0)), "b": _t(shape=(1,), offsets=(0, 1))}, 1),   # ends before it begins
    ({"a": _t("F4", (4,), (0, 2))}, 2),                                          # sub-byte: counted by the careful path
    ({"a": _t("U16", (2,), (0, 2))}, 2),                                         # span is not count x bytes
    ({"a": _t(shape=(1 << 62,), offsets=(0, 1 << 62))}, 1 << 62),                # 2^62 x 8 bits: past 64 bits
])
def test_the_fast_path_leaves_everything_else_to_the_careful_one(parsed, size):
    assert U._bulk(parsed, size) is None                                        # pylint: disable=protected-access


def test_the_fast_path_at_its_bit_bound():
    # 2^61 - 1 elements of U8: (2^61 - 1) x 8 bits fits 64 bits; 2^61 would not
    count = (1 << 61) - 1
    assert U._bulk({"a": _t(shape=(count,), offsets=(0, count))}, count) == {  # pylint: disable=protected-access
        "a": ("U8", [count], 0, count)}
    assert U._bulk({"a": _t(shape=(count + 1,), offsets=(0, count + 1))}, count + 1) is None  # pylint: disable=protected-access


# ---- prescan: a '-' outside the strings sends numbers the careful way

@pytest.mark.parametrize("data, minus", [
    (b'{"a": -1}', True), (b'{"a-b": 1}', False), (b'{"a": "-"}', False), (b'{"a\\"-": 1}', False),
    (b'{"a\\"": -1}', True), (b'{"[": -1}', True), (b'{"[-": 1}', False), (b'[1e-5]', True), (b"[1]", False),
])
def test_prescan_finds_a_minus_outside_the_strings(data, minus):
    assert U.prescan(data, "f.json", U.CONFIG) is minus


def test_a_negative_is_a_float_and_an_escape_keeps_keys_given_twice_only_where_safetensors_reads():
    assert U.parse_json(b'{"a": -1}', "f", U.HEADER, strict_numbers=True) == {"a": -1.0}
    assert isinstance(U.parse_json(b'{"a": -1}', "f", U.HEADER, strict_numbers=True)["a"], float)
    assert isinstance(U.parse_json(b'{"a": -1}', "f", U.CONFIG)["a"], int)
    escaped = U.parse_json(b'{"\\u0061": 1, "a": 2}', "f", U.HEADER, strict_numbers=True)
    assert escaped == {"a": 2} and escaped.twice == {"a"}
    plain = U.parse_json(b'{"a": 1, "a": 2}', "f", U.HEADER, strict_numbers=True)
    assert plain == {"a": 2} and not hasattr(plain, "twice")                    # the C parser: header_from re-reads


def test_strings_with_quotes_and_brackets_count_neither_depth_nor_values():
    kind = U.Kind("config", 1 << 20, 2, 3)
    assert U.parse_json(b'{"a": "[[[{{{,,,\\"[[["}', "f", kind) == {"a": '[[[{{{,,,"[[['}
    assert U.parse_json(b'[["]]]]"]]', "f", kind) == [["]]]]"]]
    e = _refused(U.parse_json, b'[[["x"]]]', "f", kind)
    assert e.what == "JSON nested deeper than 2 levels, the check's cap for a config file"
    e = _refused(U.parse_json, b'[1,2,"\\"",4]', "f", kind)
    assert e.what == "holds about 4 JSON values, above the check's cap of 3 for a config file"


def test_first_byte_holds_the_kind_it_is_given(tmp_path):
    _write(tmp_path / "tok", b"12345")
    with U.Tree(str(tmp_path)) as t:
        assert t.first_byte("tok", U.Kind("tokenizer", 5)) == b"1"
        e = _refused(t.first_byte, "tok", U.Kind("tokenizer", 4))
    assert str(e) == "tok: 5 bytes, above the check's cap of 4 for a tokenizer file: replace it with the publisher's file"


def test_a_regular_file_that_cannot_be_opened_is_named_with_the_reason(tmp_path):
    import resource
    _write(tmp_path / "w", b"x")
    with U.Tree(str(tmp_path)) as t:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        probe = os.open("/", os.O_RDONLY)                                        # the lowest free descriptor
        os.close(probe)
        resource.setrlimit(resource.RLIMIT_NOFILE, (probe, hard))                # stat works, the open does not
        try:
            e = _refused(t.open, "w")
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert str(e) == "w: cannot be opened (Too many open files): check its owner and mode"


def test_int_field_passes_path_and_fix_on():
    e = _refused(U.int_field, {"n": "x"}, "n", "c.json", path="cfg.n", fix="fix it")
    assert str(e) == "c.json cfg.n: is a string ('x'), not an integer: fix it"


def test_the_largest_double_is_a_number_and_nan_is_refused_before_a_surrogate_is_looked_at():
    import sys
    assert U._parse_float("1.7976931348623157e308") == sys.float_info.max        # pylint: disable=protected-access
    e = _refused(U.parse_json, b'{"a": NaN, "b": "\\ud800"}', "f.json", U.HEADER, strict_numbers=True)
    assert str(e) == "f.json: not JSON (NaN is not JSON): " + HEADER_FIX


def test_nan_is_refused_on_the_careful_path_too():
    e = _refused(U.parse_json, b"[-1, NaN]", "f.json", U.HEADER, strict_numbers=True)
    assert str(e) == "f.json: not JSON (NaN is not JSON): " + HEADER_FIX


def test_header_of_bytes_names_safetensors_by_default():
    assert str(_refused(U.header_of_bytes, b"\0")) == "safetensors: 1 bytes, shorter than the 8-byte header length: " + HEADER_FIX


def test_long_names_and_values_in_header_refusals_are_cut_at_their_limits():
    long_name, long_dtype, long_text = "t" * 100, "D" * 50, "s" * 70
    cases = [
        ({long_name: {"dtype": "X", "shape": [1], "data_offsets": [0, 1]}}, "field",
         "tensor " + "t" * 80 + "...(100 characters)"),
        ({"t": {"dtype": long_dtype, "shape": [1], "data_offsets": [0, 1]}}, "what",
         "dtype %s...(50 characters) is not one safetensors knows (BF16, BOOL, C64, F16 and 18 more)" % ("D" * 40)),
        ({"t": {"dtype": "U8", "shape": long_text, "data_offsets": [0, 1]}}, "what",
         "shape is not a list of sizes (%s...(70 characters))" % ("s" * 60)),
        ({"t": {"dtype": "U8", "shape": [1], "data_offsets": long_text}}, "what",
         "data_offsets %s...(70 characters) is not [begin, end]" % ("s" * 60)),
    ]
    for header, attribute, expected in cases:
        e = _refused(U.header_of_bytes, _st(header, b"\0"), "x")
        assert getattr(e, attribute) == expected


def _tiles(counts, dtype="U8"):
    parsed, begin = {}, 0
    for i, count in enumerate(counts):
        parsed["t%d" % i] = _t(dtype, (count,), (begin, begin + count))
        begin += count
    return parsed, begin


def test_the_fast_path_at_the_u64_end_of_the_data():
    # nine U8 tensors, each within 64 bits of bits, ending exactly at U64_MAX: settled; one byte further: not
    big = (1 << 61) - 1
    parsed, end = _tiles([big] * 8 + [7])
    assert end == U.U64_MAX and len(U._bulk(parsed, end)) == 9                  # pylint: disable=protected-access
    parsed, end = _tiles([big] * 8 + [8])
    assert end == U.U64_MAX + 1 and U._bulk(parsed, end) is None                # pylint: disable=protected-access


def test_the_fast_path_leaves_sub_byte_types_to_the_careful_one_even_when_the_bytes_add_up():
    assert U._bulk({"a": _t("F4", (1,), (0, 0))}, 0) is None                    # pylint: disable=protected-access
    e = _refused(U.header_of_bytes, _st({"a": _t("F4", (1,), (0, 0))}), "x")
    assert e.what == "F4 [1] is 4 bits, not a whole number of bytes"


def test_a_header_that_is_not_json_is_named():
    e = _refused(U.header_of_bytes, _st(b"{x"), "x.safetensors")
    assert str(e).startswith("x.safetensors: not JSON (Expecting property name") and e.name == "x.safetensors"


def test_the_8_byte_length_at_eight_bytes_and_past_i64():
    e = _refused(U.header_of_bytes, struct.pack("<Q", 0), "x")                   # 8 bytes: a length of 0, no JSON
    assert e.what.startswith("not JSON (Expecting value")
    e = _refused(U.header_of_bytes, struct.pack("<Q", 1 << 63) + b"{}", "x")
    assert e.what == "header length 9223372036854775808 is above safetensors' limit of 100000000"


def test_the_careful_path_names_a_hidden_entry_keeps_metadata_and_long_names():
    raw = b'{"t0":{"shape":[],"data_offsets":[0,0]},"t0":["BF16",[],[0,2]]}'
    e = _refused(U.header_of_bytes, _st(raw, b"\0\0"), "x.safetensors")
    assert str(e) == "x.safetensors tensor t0: no dtype: " + HEADER_FIX
    raw = b'{"__metadata__":{"a":"b"},"\\u0074":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'
    header = U.header_of_bytes(_st(raw, b"\0"), "x")
    assert header.metadata == {"a": "b"} and header.tensors == {"t": ("U8", [1], 0, 1)}
    name = "n" * 100
    e = _refused(U.header_of_bytes, _st({name: _t(offsets=(1, 3))}, b"\0" * 3), "x")
    assert e.field == "tensor " + "n" * 80 + "...(100 characters)"
    e = _refused(U.header_of_bytes, _st({"a": _t(), "b": _t("U16", (2,), (2, 5))}, b"\0" * 5), "x")
    assert e.what == "U16 [2] needs 4 bytes, its data_offsets [2, 5] give 3"


# ---- the race between Tree.open's stat and its open, made deterministic: the reader's own os.stat is wrapped so
# that, just after it has looked at the file, the test replaces the file on disk (as a writer racing the check would)

class _SwapAfterStat(object):
    """untrusted's ``os``: the real module, but ``stat`` of ``name`` runs ``swap()`` after it has answered, once."""

    def __init__(self, name, swap):
        self.name, self.swap, self.swapped = name, swap, 0

    def __getattr__(self, attr):
        return getattr(os, attr)

    def stat(self, path, *args, **kwargs):
        st = os.stat(path, *args, **kwargs)
        if path == self.name and not self.swapped:
            self.swapped += 1
            self.swap()
        return st


def _open_fds():
    return sorted(os.listdir("/proc/self/fd"))


def _race(monkeypatch, tmp_path, swap):
    """Tree.open("w") on a regular file that ``swap(path)`` replaces between the stat and the open: the Refused."""
    path = _write(tmp_path / "w", b"weights")
    _write(tmp_path / "other", b"another file")
    hook = _SwapAfterStat("w", lambda: swap(path))
    with U.Tree(str(tmp_path)) as t:
        fds = _open_fds()
        monkeypatch.setattr(U, "os", hook)
        try:
            e = _refused(t.open, "w")
        finally:
            monkeypatch.setattr(U, "os", os)
        assert _open_fds() == fds                                                 # nothing left open
    assert hook.swapped == 1
    return str(e)


def _to_link(path):
    os.unlink(path)
    os.symlink(os.path.join(os.path.dirname(path), "other"), path)


def _to_fifo(path):
    os.unlink(path)
    os.mkfifo(path)


def _to_other_file(path):
    os.rename(os.path.join(os.path.dirname(path), "other"), path)                 # a regular file, another inode


def _to_directory(path):
    os.unlink(path)
    os.mkdir(path)


def _gone(path):
    os.unlink(path)


REPLACED_FIX = "stop whatever writes into the model directory and check again"


def test_a_file_swapped_for_a_link_after_the_stat_is_not_followed(monkeypatch, tmp_path):
    assert _race(monkeypatch, tmp_path, _to_link) == \
        "w: is a symbolic link, not a regular file: only regular files are read (nothing is followed): put the real file there"


@pytest.mark.parametrize("swap, now", [(_to_fifo, "a FIFO (named pipe)"), (_to_other_file, "a regular file"),
                                       (_to_directory, "a directory")])
def test_a_file_swapped_after_the_stat_is_refused_as_replaced(monkeypatch, tmp_path, swap, now):
    """Another regular file in its place counts as replaced too: the inode opened is not the one looked at."""
    assert _race(monkeypatch, tmp_path, swap) == "w: was replaced while it was opened (now %s): %s" % (now, REPLACED_FIX)


def test_a_file_removed_after_the_stat_cannot_be_opened(monkeypatch, tmp_path):
    assert _race(monkeypatch, tmp_path, _gone) == "w: cannot be opened (No such file or directory): check its owner and mode"


def test_the_same_file_untouched_between_stat_and_open_is_read(monkeypatch, tmp_path):
    path = _write(tmp_path / "w", b"weights")
    hook = _SwapAfterStat("w", lambda: os.utime(path, (1, 1)))                  # looked at again, the same inode
    monkeypatch.setattr(U, "os", hook)
    with U.Tree(str(tmp_path)) as t:
        fd, st = t.open("w")
        os.close(fd)
    assert hook.swapped == 1 and st.st_size == 7


# ---- prescan: the value cap and the depth cap on both of its paths (the quick one for texts whose strings hold no
# bracket, quote or backslash; the exact one otherwise), each at, below and above the cap

CONFIG_FIX = "replace it with the publisher's file"


def _config(max_depth=64, max_values=1000000):
    return U.Kind("config", 1 << 20, max_depth, max_values)


def test_objects_count_as_values_at_and_above_the_cap():
    data = b"[{},{},{}]"                                                          # 2 commas, 1 array, 3 objects
    assert U.parse_json(data, "c.json", _config(max_values=6)) == [{}, {}, {}]
    e = _refused(U.parse_json, data, "c.json", _config(max_values=5))
    assert str(e) == "c.json: holds about 6 JSON values, above the check's cap of 5 for a config file: " + CONFIG_FIX


def test_depth_counts_an_innermost_array_that_holds_a_value():
    data = b"[[[[1]]]]"
    assert U.parse_json(data, "c.json", _config(max_depth=4)) == [[[[1]]]]
    e = _refused(U.parse_json, data, "c.json", _config(max_depth=3))
    assert str(e) == "c.json: JSON nested deeper than 3 levels, the check's cap for a config file: " + CONFIG_FIX


def test_depth_on_the_exact_path_ignores_what_the_innermost_array_holds():
    data = b'[[["\\n",1]]]'                                                       # a backslash: the exact path
    assert U.parse_json(data, "c.json", _config(max_depth=3)) == [[["\n", 1]]]
    e = _refused(U.parse_json, data, "c.json", _config(max_depth=2))
    assert str(e) == "c.json: JSON nested deeper than 2 levels, the check's cap for a config file: " + CONFIG_FIX


def test_the_exact_path_counts_values_at_and_above_the_cap():
    data = b'["\\n",1,2]'                                                         # 3 values, the string's none
    assert U.parse_json(data, "c.json", _config(max_values=3)) == ["\n", 1, 2]
    e = _refused(U.parse_json, data, "c.json", _config(max_values=2))
    assert str(e) == "c.json: holds about 3 JSON values, above the check's cap of 2 for a config file: " + CONFIG_FIX


def test_brackets_inside_a_string_are_no_nesting():
    assert U.parse_json(b'["[[[]]]"]', "c.json", _config(max_depth=2)) == ["[[[]]]"]
    assert U.parse_json(b'["{{{}}}", 1]', "c.json", _config(max_depth=1)) == ["{{{}}}", 1]


def test_an_unterminated_string_is_not_json_whatever_it_holds():
    e = _refused(U.parse_json, b'["' + b"," * 10, "c.json", _config(max_values=5))
    assert str(e) == "c.json: not JSON (Unterminated string starting at: line 1 column 2 (char 1)): " + CONFIG_FIX


def test_a_negative_number_beside_escaped_quotes_is_read_as_serde_json_reads_it():
    # splitting at every quote would put the -1 inside a string: the escapes are read, so it is a float (serde_json)
    got = U.parse_json(b'["\\"", -1, "\\""]', "h", U.HEADER, strict_numbers=True)
    assert repr(got) == "['\"', -1.0, '\"']"


def test_a_negative_number_in_nesting_that_the_depth_passes_empty_is_still_seen():
    kind = U.Kind("header", 1 << 20, max_depth=2)
    assert repr(U.parse_json(b"[[-1],[2]]", "h", kind, strict_numbers=True)) == "[[-1.0], [2]]"
    assert repr(U.parse_json(b"[[-1],[2]]", "h", kind)) == "[[-1], [2]]"        # not strict: Python's int


def test_a_long_parser_message_is_kept_whole_up_to_160_characters():
    why = None
    try:
        int("1" * 5000)
    except ValueError as e:
        why = str(e)
    if why is None:
        pytest.skip("this Python converts integers of any length")
    assert 120 < len(why) <= 160                                                  # longer than printable's default
    e = _refused(U.parse_json, b"1" * 5000, "c.json", U.CONFIG)
    assert str(e) == "c.json: not JSON (%s): %s" % (why, CONFIG_FIX)


def test_a_tensor_of_2_pow_53_plus_1_bytes_is_counted_exactly():
    # beyond 2**53 a float cannot hold every integer: the byte count is compared as an integer
    size = 2 ** 53 + 1
    raw = json.dumps({"__metadata__": {"k": "\\u0041"}, "t": {"dtype": "U8", "shape": [size], "data_offsets": [0, size]}},
                     separators=(",", ":")).replace("\\\\u", "\\u").encode()    # a \\u escape: the careful path
    header = U.header_from(raw, 8 + len(raw) + size, "big.safetensors")
    assert header.tensors["t"][3] == size and header.metadata == {"k": "A"}


# ---- issue 47: the careful path checks the tiling in offset order, and a hidden entry of any tensor's name is read

def _library_loads(data):
    safetensors = pytest.importorskip("safetensors")
    try:
        safetensors.deserialize(data)
        return True
    except Exception:  # the library's own error types vary by version: pylint: disable=broad-except
        return False


# Given in the order m, z, a; named in the order a, m, z; laid out in the order z [0,1], a [1,3], m [3,4]: neither
# the names nor the order given is the order of the data. Each way into the careful path: a \u escape, a sub-byte
# dtype, the 3-sequence form.
_SHUFFLED = [
    b'{"m":{"dtype":"U8","shape":[1],"data_offsets":[3,4]},"\\u007a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
    b'"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}',
    b'{"m":{"dtype":"U8","shape":[1],"data_offsets":[3,4]},"z":{"dtype":"F4","shape":[2],"data_offsets":[0,1]},'
    b'"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}',
    b'{"m":["U8",[1],[3,4]],"z":["U8",[1],[0,1]],"a":["U8",[2],[1,3]]}',
]


@pytest.mark.parametrize("raw", _SHUFFLED)
def test_the_careful_path_tiles_the_data_in_offset_order_not_name_order(raw):
    data = _st(raw, b"\0" * 4)
    assert _library_loads(data)
    assert U._bulk(json.loads(raw.decode()), 4) is None or b"\\u" in raw  # pylint: disable=protected-access
    header = U.header_of_bytes(data, "x.safetensors")
    assert sorted((t[2], t[3], n) for n, t in header.tensors.items()) == [(0, 1, "z"), (1, 3, "a"), (3, 4, "m")]
    assert header.size == 8 + len(raw) + 4
    # the other side: the same order with a one-byte gap after z, refused by both, naming the tensor after the gap
    gap = raw.replace(b"[3,4]", b"[4,5]").replace(b"[1,3]", b"[2,4]")
    assert not _library_loads(_st(gap, b"\0" * 5))
    e = _refused(U.header_of_bytes, _st(gap, b"\0" * 5), "x.safetensors")
    assert e.field == "tensor a" and e.what == "data_offsets [2, 4] leaves a gap after the tensor before it " \
                                               "(the data so far ends at 1)"


@pytest.mark.parametrize("name", ["__METADATA__", "XX__metadata__XX", "__metadata"])
def test_a_tensor_named_like_metadata_given_twice_has_its_first_entry_read(name):
    # only "__metadata__" itself is not a tensor: any other name given twice has each entry read, the last counts
    bad = ('{"%s":{"dtype":"NOPE","shape":[1],"data_offsets":[0,1]},"%s":["U8",[1],[0,1]]}' % (name, name)).encode()
    assert not _library_loads(_st(bad, b"\0"))
    e = _refused(U.header_of_bytes, _st(bad, b"\0"), "x.safetensors")
    assert e.field == "tensor " + name and e.what.startswith("dtype NOPE is not one safetensors knows")
    good = ('{"%s":{"dtype":"U16","shape":[1],"data_offsets":[0,9]},"%s":["U8",[1],[0,1]]}' % (name, name)).encode()
    assert _library_loads(_st(good, b"\0"))
    assert U.header_of_bytes(_st(good, b"\0"), "x.safetensors").tensors == {name: ("U8", [1], 0, 1)}
