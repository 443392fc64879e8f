# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""models/manifest's bounds from both sides (issue 37), through its public functions: a file one byte short, exact
and one byte long; a size of -1, 0 and 1; a digest reused only while both size and mtime hold."""
import calendar
import errno
import hashlib
import json
import os
import stat
import time

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf

DATA = b"0123456789"
SHA = hashlib.sha256(DATA).hexdigest()


def tree(tmp_path, data=DATA):
    root = tmp_path / "m"
    root.mkdir()
    (root / "w.bin").write_bytes(data)
    return str(root)


@pytest.mark.parametrize("size, ok", [(-1, False), (0, True), (1, True), (True, False), (1.0, False), ("1", False)])
def test_a_manifest_size_is_a_non_negative_integer(size, ok):
    m = {"files": [{"path": "w.bin", "size": size, "sha256": SHA}]}
    if ok:
        assert mf.expected_files(m) == {"w.bin": {"size": size, "sha256": SHA}}
    else:
        with pytest.raises(contain.Refused, match="manifest entry w.bin: size .* is not a byte count"):
            mf.expected_files(m)


@pytest.mark.parametrize("digest, ok", [(SHA, True), (None, True), (SHA[:-1], False), (SHA + "0", False),
                                        (SHA.upper(), False), ("g" * 64, False), (SHA + "\n", False)])
def test_a_manifest_digest_is_64_hex_digits_or_absent(digest, ok):
    m = {"files": [{"path": "w.bin", "size": 1, "sha256": digest}]}
    if ok:
        assert mf.expected_files(m)["w.bin"]["sha256"] == digest
    else:
        with pytest.raises(contain.Refused, match="is not 64 hex digits"):
            mf.expected_files(m)


@pytest.mark.parametrize("have, problem", [(DATA[:-1], "w.bin: expected 10 bytes, found 9"), (DATA, None),
                                           (DATA + b"!", "w.bin: expected 10 bytes, found 11")])
def test_verify_refuses_a_file_short_or_long_by_one_byte(tmp_path, have, problem):
    root = tree(tmp_path)
    m = mf.build(root, "src")
    (tmp_path / "m" / "w.bin").write_bytes(have)
    problems, _hashed = mf.verify(root, m)
    assert problems == ([problem] if problem else [])


@pytest.mark.parametrize("size, problem", [(9, "w.bin: expected 9 bytes, found 10"), (10, None),
                                           (11, "w.bin: expected 11 bytes, found 10")])
def test_build_against_expected_sizes_from_both_sides(tmp_path, size, problem):
    root = tree(tmp_path)
    if problem:
        with pytest.raises(ValueError) as err:
            mf.build(root, "src", expected={"w.bin": {"size": size, "sha256": SHA}})
        assert str(err.value) == problem
    else:
        assert mf.build(root, "src", expected={"w.bin": {"size": size, "sha256": SHA}})["files"][0]["sha256"] == SHA


def test_a_known_digest_is_reused_only_at_the_same_size_and_mtime(tmp_path):
    root = tree(tmp_path)
    st = os.stat(os.path.join(root, "w.bin"))
    wrong = "f" * 64
    reused = mf.build(root, "src", known={"w.bin": (st.st_size, st.st_mtime_ns, wrong)})
    assert reused["files"][0]["sha256"] == wrong  # trusted: taken while the file was written
    moved = mf.build(root, "src", known={"w.bin": (st.st_size, st.st_mtime_ns + 1, wrong)})
    assert moved["files"][0]["sha256"] == SHA
    resized = mf.build(root, "src", known={"w.bin": (st.st_size + 1, st.st_mtime_ns, wrong)})
    assert resized["files"][0]["sha256"] == SHA


def test_verify_hashes_only_what_moved_unless_full(tmp_path):
    root = tree(tmp_path)
    m = mf.build(root, "src")
    assert mf.verify(root, m) == ([], 0)
    assert mf.verify(root, m, full=True) == ([], 1)
    path = os.path.join(root, "w.bin")
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.write(b"X")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert mf.verify(root, m) == ([], 0)  # same size and mtime: the cheap check does not read it
    problems, hashed = mf.verify(root, m, full=True)
    assert hashed == 1 and len(problems) == 1 and problems[0].startswith("w.bin: sha256 ")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    problems, hashed = mf.verify(root, m)
    assert hashed == 1 and problems[0].endswith(": corrupt, stage it again")


def test_total_size_counts_every_byte(tmp_path):
    root = tree(tmp_path)
    (tmp_path / "m" / "empty").write_bytes(b"")
    assert mf.total_size(mf.build(root, "src")) == len(DATA)


def test_verify_names_an_entry_behind_a_symlinked_directory_and_checks_the_rest(tmp_path):
    root = tmp_path / "m"
    (root / "a").mkdir(parents=True)
    (root / "a" / "w.bin").write_bytes(DATA)
    (root / "z.bin").write_bytes(DATA)
    m = mf.build(str(root), "src")
    assert [e["path"] for e in m["files"]] == ["a/w.bin", "z.bin"]
    outside = tmp_path / "outside"
    os.rename(str(root / "a"), str(outside))
    os.symlink(str(outside), str(root / "a"))
    os.unlink(str(root / "z.bin"))
    problems, hashed = mf.verify(str(root), m)
    assert problems == ["a/w.bin: %s/a is a symlink or not a directory; refused (nothing is followed out of the tree)"
                        % root, "z.bin: missing (expected 10 bytes)"]
    assert hashed == 0


@pytest.mark.parametrize("content, why", [
    ({"files": []}, ".llmserve-manifest.json version: missing: stage the model again"),
    ({"version": "1", "files": []}, ".llmserve-manifest.json version: is a string ('1'), not an integer: stage the "
                                    "model again"),
    ({"version": 0, "files": []}, "version 0 unknown"),
    ({"version": 2, "files": []}, "version 2 unknown"),
    ({"version": 1}, ".llmserve-manifest.json files: missing: stage the model again"),
    ({"version": 1, "files": {}}, ".llmserve-manifest.json files: is an object ({}), not a list: stage the model again"),
    ({"version": 1, "files": [{"path": "/x", "size": 1}]}, "manifest entry /x is absolute"),
    ([1], ".llmserve-manifest.json: is a list, not an object: stage the model again"),
])
def test_load_names_the_manifest_the_field_and_the_fix(tmp_path, content, why):
    (tmp_path / mf.MANIFEST_NAME).write_text(json.dumps(content))
    with pytest.raises(ValueError) as err:
        mf.load(str(tmp_path))
    assert str(err.value) == "%s/%s: unreadable manifest (%s)" % (tmp_path, mf.MANIFEST_NAME, why)


def test_load_reads_version_1_and_nothing_when_there_is_no_manifest(tmp_path):
    assert mf.load(str(tmp_path)) is None
    (tmp_path / mf.MANIFEST_NAME).write_text(json.dumps({"version": 1, "files": []}))
    assert mf.load(str(tmp_path)) == {"version": 1, "files": []}


def test_compare_names_a_missing_file_with_its_size_or_a_question_mark():
    assert mf.compare({"files": []}, {"a": {"size": 3}, "b": {}}) == [
        ("a", "a: missing (expected 3 bytes)"), ("b", "b: missing (expected ? bytes)")]


def test_verify_names_both_digests_by_their_first_12_digits(tmp_path):
    root = tree(tmp_path)
    m = mf.build(root, "src")
    m["files"][0]["sha256"] = "ab" * 32
    m["files"][0]["mtime_ns"] -= 1
    assert mf.verify(root, m) == (["w.bin: sha256 %s, the manifest says %s: corrupt, stage it again"
                                   % (SHA[:12], "ab" * 6)], 1)


def test_a_read_error_while_hashing_is_a_problem_not_a_traceback(tmp_path, monkeypatch):
    root = tree(tmp_path)
    (tmp_path / "m" / "x.bin").write_bytes(b"x")
    m = mf.build(root, "src")
    os.unlink(os.path.join(root, "x.bin"))

    def bad_disk(_root, _rel, buffer_size=mf.READ_BUFFER):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(mf, "sha256_in", bad_disk)  # a disk read error: nothing else makes a regular file unreadable to root
    assert mf.verify(root, m, full=True) == (["x.bin: missing (expected 1 bytes)",
                                              "unreadable: [Errno 5] Input/output error"], 1)


def test_compare_names_a_corrupt_file_by_both_digests():
    have = {"files": [{"path": "w.bin", "size": 10, "sha256": SHA}]}
    assert mf.compare(have, {"w.bin": {"size": 10, "sha256": "ab" * 32}}) == [
        ("w.bin", "w.bin: sha256 %s, expected %s: corrupt" % (SHA[:12], "ab" * 6))]
    assert mf.compare(have, {"w.bin": {"size": 10, "sha256": SHA}}) == []
    assert mf.compare(have, {"w.bin": {"size": None, "sha256": None}}) == []


def test_write_is_sorted_indented_by_one_and_leaves_no_temporary(tmp_path):
    root = tree(tmp_path)
    stale = os.path.join(root, mf.MANIFEST_NAME + ".tmp")  # left by a writer that died
    with open(stale, "w") as f:
        f.write("{}")
    path = mf.write(root, {"version": 1, "files": [{"size": 1, "path": "w.bin"}]})
    assert path == os.path.join(root, mf.MANIFEST_NAME)
    with open(path) as f:
        assert f.read() == '{\n "files": [\n  {\n   "path": "w.bin",\n   "size": 1\n  }\n ],\n "version": 1\n}\n'
    assert not os.path.exists(stale)
    assert mf.list_files(root) == ["w.bin"]


def test_list_files_skips_the_hub_cache_at_the_top_only_and_walks_every_other_directory(tmp_path):
    root = tree(tmp_path)
    for rel in (".cache/huggingface/x.lock", "a/.cache/kept.bin", "b/c.bin", "z/d.bin"):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(b"x")
    assert mf.list_files(root) == ["a/.cache/kept.bin", "b/c.bin", "w.bin", "z/d.bin"]


def test_list_files_refuses_a_symlinked_directory_naming_it(tmp_path):
    root = tree(tmp_path)
    os.makedirs(os.path.join(root, "sub", "real"))
    os.symlink("real", os.path.join(root, "sub", "link"))
    with pytest.raises(contain.Refused) as err:
        mf.list_files(root)
    assert str(err.value) == ("%s holds what is not a plain file or directory (a symlink, a device, a fifo): sub/link; "
                              "refused, nothing is followed" % root)


def test_hash_files_names_a_file_gone_since_it_was_listed(tmp_path):
    root = tree(tmp_path)
    assert mf.hash_files(root, ["w.bin"], workers=1) == {"w.bin": SHA}
    with pytest.raises(untrusted.Refused) as err:
        mf.hash_files(root, ["w.bin", "gone.bin"], workers=1)
    assert str(err.value) == "gone.bin: missing: copy it into the model directory or stage the model again"


def test_build_gives_every_nested_file_and_directory_the_roles_modes(tmp_path):
    root = tree(tmp_path)
    os.makedirs(os.path.join(root, "a", "b"))
    with open(os.path.join(root, "a", "b", "x.bin"), "wb") as f:
        f.write(b"x")
    os.chmod(os.path.join(root, "a", "b", "x.bin"), 0o4777)
    os.chmod(os.path.join(root, "a", "b"), 0o777)
    os.chmod(os.path.join(root, "a"), 0o700)
    os.chmod(root, 0o777)
    mf.build(root, "src")
    modes = dict((rel, stat.S_IMODE(os.lstat(os.path.join(root, rel)).st_mode))
                 for rel in (".", "a", "a/b", "a/b/x.bin", "w.bin"))
    assert modes == {".": 0o755, "a": 0o755, "a/b": 0o755, "a/b/x.bin": 0o644, "w.bin": 0o644}


def test_set_modes_changes_nothing_through_a_link(tmp_path):
    root = tree(tmp_path)
    outside_file, outside_dir = tmp_path / "secret", tmp_path / "private"
    outside_file.write_bytes(b"s")
    outside_dir.mkdir()
    os.chmod(str(outside_file), 0o600)
    os.chmod(str(outside_dir), 0o700)
    os.symlink(str(outside_file), os.path.join(root, "file-link"))
    os.symlink(str(outside_dir), os.path.join(root, "dir-link"))
    mf.set_modes(root)
    assert stat.S_IMODE(os.stat(str(outside_file)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(outside_dir)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.join(root, "w.bin")).st_mode) == 0o644


def test_staged_at_is_utc_whatever_the_hosts_zone(tmp_path, monkeypatch):
    root = tree(tmp_path)
    monkeypatch.setenv("TZ", "XYZ-05:30")
    time.tzset()
    try:
        before = int(time.time())
        staged = mf.build(root, "src")["staged_at"]
        after = int(time.time())
    finally:
        monkeypatch.undo()
        time.tzset()
    assert before <= calendar.timegm(time.strptime(staged, "%Y-%m-%dT%H:%M:%SZ")) <= after


def test_build_names_every_mismatch_in_one_line(tmp_path):
    root = tree(tmp_path)
    with pytest.raises(ValueError) as err:
        mf.build(root, "src", expected={"w.bin": {"size": 9}, "x.bin": {"size": 1}})
    assert str(err.value) == "w.bin: expected 9 bytes, found 10; x.bin: missing (expected 1 bytes)"


@pytest.mark.parametrize("manifest", [[{"files": []}], {"files": {}}, {"files": None}, {}, None])
def test_a_manifest_without_a_list_of_files_is_refused(manifest):
    with pytest.raises(contain.Refused) as err:
        mf.expected_files(manifest)
    assert str(err.value) == "the manifest has no list of files"


def test_an_entry_that_is_not_a_mapping_is_named_and_the_rest_still_checked():
    m = {"files": ["y" * 100, {"path": "a", "size": -1}]}
    with pytest.raises(contain.Refused) as err:
        mf.expected_files(m, "source entry")
    assert str(err.value) == "source entry %s is not a mapping; source entry a: size -1 is not a byte count" % ("y" * 80)


@pytest.mark.parametrize("length", [199, 200, 201, 250])
def test_a_refused_entry_is_named_in_at_most_200_characters(length):
    rel = "p" * length
    m = {"files": [{"path": rel, "size": "9" * 50, "sha256": "g" * 100}]}
    with pytest.raises(contain.Refused) as err:
        mf.expected_files(m)
    assert str(err.value) == ("manifest entry %s: size %s is not a byte count; manifest entry %s: sha256 %s is not 64 "
                              "hex digits" % (rel[:200], "9" * 40, rel[:200], "g" * 80))


def test_an_entry_listed_twice_is_named():
    m = {"files": [{"path": "w.bin", "size": 1}, {"path": "x.bin", "size": 1}, {"path": "w.bin", "size": 1}]}
    with pytest.raises(contain.Refused) as err:
        mf.expected_files(m)
    assert str(err.value) == "manifest entry w.bin: listed twice"
    del m["files"][2]
    assert sorted(mf.expected_files(m)) == ["w.bin", "x.bin"]


@pytest.mark.parametrize("files, message", [
    ([{"path": "/abs", "size": -1}], "manifest entry /abs is absolute; manifest entry /abs: size -1 is not a byte count"),
    ([{"path": ["a"], "size": 1}], "manifest entry ['a'] is not a path"),
    ([{"path": 5, "size": 1}, {"path": "None", "size": 1}], "manifest entry 5 is not a path"),
])
def test_the_path_rule_comes_first_and_an_odd_path_is_named_not_a_traceback(files, message):
    with pytest.raises(contain.Refused) as err:
        mf.expected_files({"files": files})
    assert str(err.value) == message


def test_list_files_leaves_out_our_own_files_at_the_top_and_temporaries_anywhere(tmp_path):
    root = tree(tmp_path)
    for rel in (mf.MANIFEST_NAME, ".llmserve-stage.json", "x.bin.incomplete", "a/y.bin.llmserve-tmp",
                "a/" + mf.MANIFEST_NAME, "a/z.bin"):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(b"x")
    assert mf.list_files(root) == ["a/" + mf.MANIFEST_NAME, "a/z.bin", "w.bin"]


@pytest.mark.parametrize("count, shown", [(10, 10), (11, 10), (9, 9)])
def test_list_files_names_at_most_ten_odd_entries_sorted(tmp_path, count, shown):
    root = tree(tmp_path)
    for i in range(count):
        os.symlink("w.bin", os.path.join(root, "l%02d" % i))
    with pytest.raises(contain.Refused) as err:
        mf.list_files(root)
    assert str(err.value) == ("%s holds what is not a plain file or directory (a symlink, a device, a fifo): %s; "
                              "refused, nothing is followed" % (root, ", ".join("l%02d" % i for i in range(shown))))


def test_list_files_names_a_file_whose_name_breaks_the_path_rule(tmp_path):
    root = tree(tmp_path)
    with open(os.path.join(root, "a\\b"), "wb") as f:
        f.write(b"x")
    with pytest.raises(contain.Refused) as err:
        mf.list_files(root)
    assert str(err.value) == "file a\\b has a control character or a backslash"


def test_sha256_file_reads_a_file_and_refuses_a_link(tmp_path):
    root = tree(tmp_path)
    assert mf.sha256_file(os.path.join(root, "w.bin")) == SHA
    assert mf.sha256_file(os.path.join(root, "w.bin"), buffer_size=3) == SHA
    os.symlink("w.bin", os.path.join(root, "link"))
    with pytest.raises(OSError) as err:
        mf.sha256_file(os.path.join(root, "link"))
    assert err.value.errno == errno.ELOOP


def test_refresh_mtimes_takes_every_files_current_mtime(tmp_path):
    root = tree(tmp_path)
    with open(os.path.join(root, "x.bin"), "wb") as f:
        f.write(b"x")
    m = mf.build(root, "src")
    os.utime(os.path.join(root, "w.bin"), ns=(1, 1000))
    os.utime(os.path.join(root, "x.bin"), ns=(1, 2000))
    assert mf.refresh_mtimes(root, m) is m
    assert [(e["path"], e["mtime_ns"]) for e in m["files"]] == [("w.bin", 1000), ("x.bin", 2000)]
    assert mf.verify(root, m) == ([], 0)


def test_more_than_ten_problems_are_cut_at_ten():
    files = [{"path": "f%02d" % i, "size": -1} for i in range(11)]
    with pytest.raises(contain.Refused) as err:
        mf.expected_files({"files": files})
    assert str(err.value) == "; ".join("manifest entry f%02d: size -1 is not a byte count" % i for i in range(10))
