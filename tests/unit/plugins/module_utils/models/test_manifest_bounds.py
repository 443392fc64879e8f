# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""models/manifest's bounds from both sides (issue 37), through its public functions: a file one byte short, exact
and one byte long; a size of -1, 0 and 1; a digest reused only while both size and mtime hold."""
import hashlib
import os

import pytest

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
