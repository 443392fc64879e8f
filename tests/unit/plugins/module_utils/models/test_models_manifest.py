# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The manifest: full hash, cheap size+mtime re-check, and the verdict that combines it with the structure."""
import hashlib
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_tree
from tinymodels import tiny

SHARD = "model-00002-of-00004.safetensors"


@pytest.fixture
def staged(tmp_path):
    root = tiny.write_target(str(tmp_path / "m"), shards=4, shard_mib=1)
    mf.write(root, mf.build(root, {"kind": "dir", "path": "/src"}, "abc", workers=2))
    return root


def test_manifest_lists_every_file_with_its_sha256(staged):
    manifest = mf.load(staged)
    paths = [e["path"] for e in manifest["files"]]
    assert mf.MANIFEST_NAME not in paths and len(paths) == 7
    with open(os.path.join(staged, SHARD), "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest()
    assert {e["path"]: e["sha256"] for e in manifest["files"]}[SHARD] == want
    assert manifest["revision"] == "abc" and manifest["source"]["kind"] == "dir"


def test_cheap_recheck_reads_nothing_when_untouched(staged):
    assert mf.verify(staged, mf.load(staged)) == ([], 0)
    result = verify_tree(staged)
    assert result["ok"] and result["method"] == "manifest-cheap" and result["hashed"] == 0


def test_full_check_hashes_everything(staged):
    assert mf.verify(staged, mf.load(staged), full=True, workers=1) == ([], 7)


def test_same_size_corruption_found_by_full_check_and_by_cheap_once_mtime_moved(staged):
    path = os.path.join(staged, SHARD)
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(st.st_size - 100)
        f.write(b"\x00" * 10)
    # a corruption that kept the mtime (bit rot) is seen by the full check only
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert mf.verify(staged, mf.load(staged)) == ([], 0)
    (problem,), hashed = mf.verify(staged, mf.load(staged), full=True)
    assert problem.startswith(SHARD + ": sha256 ") and "corrupt, stage it again" in problem and hashed == 7
    # a write that moved the mtime is hashed by the cheap check too, and only that file
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))
    (problem,), hashed = mf.verify(staged, mf.load(staged))
    assert problem.startswith(SHARD) and hashed == 1


def test_missing_and_short_named_with_sizes(staged):
    size = os.path.getsize(os.path.join(staged, SHARD))
    with open(os.path.join(staged, SHARD), "r+b") as f:
        f.truncate(1000)
    os.remove(os.path.join(staged, "config.json"))
    problems = mf.verify(staged, mf.load(staged))[0]
    assert problems == ["config.json: missing (expected %d bytes)" % mf.expected_files(mf.load(staged))[
        "config.json"]["size"], "%s: expected %d bytes, found 1000" % (SHARD, size)]


def test_structure_checked_even_with_a_manifest(tmp_path):
    # a manifest written for a tree that already lacked a shard must not vouch for it
    root = tiny.write_target(str(tmp_path / "m"), shards=4)
    os.remove(os.path.join(root, SHARD))
    mf.write(root, mf.build(root, {"kind": "dir"}))
    result = verify_tree(root)
    assert not result["ok"] and result["problems"] == [SHARD + ": missing (the index names it for 2 tensors)"]


def test_build_against_what_the_source_promised(staged):
    expected = mf.expected_files(mf.load(staged))
    expected[SHARD]["sha256"] = "0" * 64
    with pytest.raises(ValueError, match=SHARD + r": sha256 [0-9a-f]{12}, expected 000000000000: corrupt"):
        mf.build(staged, {"kind": "dir"}, expected=expected)


def test_no_manifest_falls_back_to_structure(tmp_path):
    root = tiny.write_target(str(tmp_path / "m"), shards=2)
    result = verify_tree(root, mode="full")
    assert result["ok"] and result["method"] == "structure"
    assert result["notes"] == ["no manifest: a full check is not possible, the structure was checked"]


def test_unreadable_manifest_named(staged):
    with open(os.path.join(staged, mf.MANIFEST_NAME), "w") as f:
        f.write("{not json")
    result = verify_tree(staged)
    assert not result["ok"] and "unreadable manifest" in result["problems"][0]
