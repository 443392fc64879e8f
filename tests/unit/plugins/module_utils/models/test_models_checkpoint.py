# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkpoint structure without a manifest, on real safetensors files (our writer and the safetensors library)."""
import json
import os
import struct

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models import checkpoint as cp
from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import (
    ShardError, check_checkpoint, read_header)
from tinymodels import tiny


@pytest.fixture
def target(tmp_path):
    return tiny.write_target(str(tmp_path / "target"), shards=4, shard_mib=1)


def _shard(root, i=2, n=4):
    return os.path.join(root, "model-%05d-of-%05d.safetensors" % (i, n))


def test_whole_checkpoint_passes(target):
    assert check_checkpoint(target) == ([], [])


def test_library_written_file_parses_and_short_one_is_named(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    np = pytest.importorskip("numpy")
    path = str(tmp_path / "lib.safetensors")
    st.save_file({"a": np.ones((64, 32), dtype=np.float16), "b": np.zeros((7,), dtype=np.int64)}, path,
                 metadata={"format": "pt"})
    header, size = read_header(path)
    assert size == os.path.getsize(path)
    assert header.tensors["a"][1] == [64, 32] and header.metadata == {"format": "pt"}
    with open(path, "r+b") as f:
        f.truncate(size - 10)
    with pytest.raises(ShardError, match=r"lib.safetensors: short: expected %d bytes, found %d" % (size, size - 10)):
        read_header(path)
    # the library reads what our writer wrote, and the sizes agree for the same tensors
    ours = str(tmp_path / "ours.safetensors")
    tiny.write_safetensors(ours, {"a": ("F16", (64, 32)), "b": ("I64", (7,))}, metadata={"format": "pt"})
    assert read_header(ours)[1] == size
    loaded = st.load_file(ours)
    assert loaded["a"].shape == (64, 32) and loaded["b"].shape == (7,)
    # and refuses the same truncation our check names
    with open(ours, "r+b") as f:
        f.truncate(size - 10)
    with pytest.raises(Exception):
        st.load_file(ours)
    with pytest.raises(ShardError, match="short"):
        read_header(ours)


def test_missing_shard_named_with_its_tensor_count(target):
    os.remove(_shard(target, 3))
    problems = check_checkpoint(target)[0]
    assert problems == ["model-00003-of-00004.safetensors: missing (the index names it for 2 tensors)"]


@pytest.mark.parametrize("name", ["../outside.safetensors", "/etc/outside.safetensors", "a/../../outside.safetensors"])
def test_index_naming_a_shard_outside_the_tree_is_refused_unopened(target, tmp_path, name):
    # a whole safetensors file outside the checkpoint: followed, the index would pass; it must be refused by name
    outside = tmp_path / "outside.safetensors"
    os.rename(_shard(target, 1), str(outside))
    index_path = os.path.join(target, "model.safetensors.index.json")
    with open(index_path) as f:
        index = json.load(f)
    index["weight_map"] = {k: (name if v == os.path.basename(_shard(target, 1)) else v)
                           for k, v in index["weight_map"].items()}
    with open(index_path, "w") as f:
        json.dump(index, f)
    problems = check_checkpoint(target)[0]
    assert len(problems) == 1 and name in problems[0] and "shards outside the model directory" in problems[0], problems


def test_truncated_shard_named_with_expected_and_actual_size(target):
    path = _shard(target)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    problems = check_checkpoint(target)[0]
    assert problems == ["model-00002-of-00004.safetensors: short: expected %d bytes, found %d: the file is truncated "
                        "or not what its header says: download it again" % (size, size // 2)]


def test_shard_cut_inside_its_header(target):
    path = _shard(target)
    with open(path, "r+b") as f:
        f.truncate(20)
    (problem,) = check_checkpoint(target)[0]
    assert problem.startswith("model-00002-of-00004.safetensors: header length") and "(20 bytes)" in problem


def test_garbage_header_named(target):
    path = _shard(target)
    with open(path, "r+b") as f:
        f.seek(8)
        f.write(b"\xff\xfe not json")
    (problem,) = check_checkpoint(target)[0]
    assert "model-00002-of-00004.safetensors: not UTF-8 (byte 0)" in problem


def test_tensor_in_the_wrong_shard(target):
    index_path = os.path.join(target, "model.safetensors.index.json")
    with open(index_path) as f:
        index = json.load(f)
    index["weight_map"]["model.layers.0.mlp.weight"] = "model-00004-of-00004.safetensors"
    with open(index_path, "w") as f:
        json.dump(index, f)
    (problem,) = check_checkpoint(target)[0]
    assert problem == ("model-00004-of-00004.safetensors: 1 tensors the index puts there are not in it "
                       "(first: model.layers.0.mlp.weight)")


def test_offsets_disagreeing_with_shape(tmp_path):
    path = str(tmp_path / "bad.safetensors")
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    with pytest.raises(ShardError, match=r"tensor w: F32 \[4\] needs 16 bytes, its data_offsets \[0, 8\] give 8"):
        read_header(path)


def test_config_and_tokenizer_required(target):
    os.remove(os.path.join(target, "config.json"))
    os.remove(os.path.join(target, "tokenizer.json"))
    problems = check_checkpoint(target)[0]
    assert problems[0] == "config.json: missing (every checkpoint needs it)"
    assert problems[1].startswith("tokenizer: none of tokenizer.json")
    assert check_checkpoint(target, require_tokenizer=False)[0] == problems[:1]


def _as_nobody(fn):
    """fn() in a child that dropped root for nobody (CI runs as root, and root reads a file of mode 000)."""
    import pwd
    if os.geteuid() != 0:
        return fn()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rfd)
            nobody = pwd.getpwnam("nobody")
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            os.write(wfd, json.dumps(fn()).encode())
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as f:
        out = f.read()
    os.waitpid(pid, 0)
    return json.loads(out.decode())


def test_unreadable_shard_named():
    import shutil
    import tempfile
    root = tempfile.mkdtemp(prefix="llmserve-unreadable-")  # pytest's tmp_path is 0700: nobody could not enter it
    try:
        os.chmod(root, 0o755)
        target = tiny.write_target(os.path.join(root, "target"), shards=4, shard_mib=1)
        os.chmod(_shard(target), 0)
        (problem,) = _as_nobody(lambda: check_checkpoint(target)[0])
        assert problem.startswith("model-00002-of-00004.safetensors: cannot be opened (Permission denied)")
    finally:
        shutil.rmtree(root)


def test_no_safetensors_is_a_note(tmp_path):
    root = tmp_path / "bin"
    root.mkdir()
    (root / "config.json").write_text("{}")
    (root / "tokenizer.json").write_text("{}")
    (root / "pytorch_model.bin").write_bytes(b"x")
    assert check_checkpoint(str(root)) == ([], ["no safetensors files: the weights' structure was not checked"])


@pytest.mark.parametrize("workers", [1, 3])
def test_the_parallel_header_parse_finds_what_the_serial_one_does(tmp_path, workers):
    # the default check runs on every start: big checkpoints parse their headers in forked children
    from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import _check_sharded
    root = tiny.write_target(str(tmp_path / "t"), shards=6, shard_mib=1)
    assert _check_sharded(root, workers=workers) == []
    os.remove(_shard(root, 2, 6))
    with open(_shard(root, 4, 6), "r+b") as f:
        f.truncate(100)
    index = os.path.join(root, "model.safetensors.index.json")
    with open(index) as f:
        data = json.load(f)
    data["weight_map"]["model.layers.9.extra"] = "model-00005-of-00006.safetensors"  # a tensor the shard lacks
    with open(index, "w") as f:
        json.dump(data, f)
    problems = _check_sharded(root, workers=workers)
    assert problems[0] == "model-00002-of-00006.safetensors: missing (the index names it for 2 tensors)"
    assert problems[1].startswith("model-00004-of-00006.safetensors: header length")
    assert problems[2] == ("model-00005-of-00006.safetensors: 1 tensors the index puts there are not in it "
                           "(first: model.layers.9.extra)")
    assert len(problems) == 3


# --- issue 37: the rules from both sides, every message as the operator reads it ---------------------------------


@pytest.mark.parametrize("workers", [1, 3])
def test_two_tensors_swapped_between_shards_are_found_though_the_counts_agree(tmp_path, workers):
    root = tiny.write_target(str(tmp_path / "t"), shards=6, shard_mib=1)
    index = os.path.join(root, cp.INDEX_NAME)
    with open(index) as f:
        data = json.load(f)
    data["weight_map"]["model.layers.0.mlp.weight"] = "model-00002-of-00006.safetensors"
    data["weight_map"]["model.layers.1.mlp.weight"] = "model-00001-of-00006.safetensors"
    with open(index, "w") as f:
        json.dump(data, f)
    assert cp._check_sharded(root, workers=workers) == [
        "model-00001-of-00006.safetensors: 1 tensors the index puts there are not in it (first: model.layers.1.mlp.weight)",
        "model-00002-of-00006.safetensors: 1 tensors the index puts there are not in it (first: model.layers.0.mlp.weight)"]


@pytest.mark.parametrize("length, shown", [(159, "x" * 159), (160, "x" * 160), (161, "x" * 160 + "...(161 characters)")])
def test_an_unforeseen_error_is_named_with_its_text_cut_at_160(length, shown):
    assert cp.unexpected("w.safetensors", ZeroDivisionError("x" * length), "reading it") == (
        "w.safetensors: the check could not read it (ZeroDivisionError while reading it: %s): the file is likely "
        "corrupt - download it again; if it is whole, report this" % shown)


def test_a_single_file_checkpoint_names_its_broken_shard(tmp_path, monkeypatch):
    root = tiny.write_target(str(tmp_path / "t"), shards=1, shard_mib=1)
    names = sorted(os.listdir(root))
    single = [n for n in names if n.endswith(".safetensors")]
    if single != [cp.SINGLE_NAME]:
        os.rename(os.path.join(root, single[0]), os.path.join(root, cp.SINGLE_NAME))
        if os.path.exists(os.path.join(root, cp.INDEX_NAME)):
            os.remove(os.path.join(root, cp.INDEX_NAME))
    assert check_checkpoint(root) == ([], [])
    with open(os.path.join(root, cp.SINGLE_NAME), "r+b") as f:
        f.truncate(4)
    (problem,) = check_checkpoint(root)[0]
    assert problem.startswith("model.safetensors: ") and "header" in problem

    def boom(*_a, **_k):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(cp, "read_header", boom)
    assert check_checkpoint(root)[0] == [
        "model.safetensors: the check could not read it (ZeroDivisionError while reading its safetensors header: a "
        "bug): the file is likely corrupt - download it again; if it is whole, report this"]


def test_tensor_shapes_read_every_shard_the_index_names(tmp_path):
    root = tiny.write_target(str(tmp_path / "t"), shards=3, shard_mib=1)
    shapes = cp.tensor_shapes(root)
    assert sorted(shapes) == sorted("model.layers.%d.%s.weight" % (i, k) for i in range(3) for k in ("mlp", "norm"))
    assert all(isinstance(s, list) and s for s in shapes.values())
    assert cp.tensor_shapes(str(tmp_path / "none")) == {}


def test_the_structure_stamp_covers_the_weights_and_the_index_only(tmp_path):
    root = tiny.write_target(str(tmp_path / "t"), shards=2, shard_mib=1)
    stamp = cp.structure_stamp(root)
    assert [s[0] for s in stamp] == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                     cp.INDEX_NAME]
    with open(os.path.join(root, "config.json"), "a") as f:
        f.write(" ")
    assert cp.structure_stamp(root) == stamp
    assert cp.structure_stamp(str(tmp_path / "none")) is None


def test_tensor_shapes_skip_an_unreadable_shard_and_read_the_rest(tmp_path):
    root = tiny.write_target(str(tmp_path / "t"), shards=3, shard_mib=1)
    with open(_shard(root, 1, 3), "r+b") as f:
        f.truncate(4)
    assert sorted(cp.tensor_shapes(root)) == sorted("model.layers.%d.%s.weight" % (i, k) for i in (1, 2)
                                                    for k in ("mlp", "norm"))


def test_an_unforeseen_error_in_a_shard_of_the_index_is_named(tmp_path, monkeypatch):
    root = tiny.write_target(str(tmp_path / "t"), shards=2, shard_mib=1)

    def boom(*_a, **_k):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(cp, "read_header", boom)
    assert cp._check_sharded(root, workers=1) == [
        "model-%05d-of-00002.safetensors: the check could not read it (ZeroDivisionError while reading its safetensors "
        "header: a bug): the file is likely corrupt - download it again; if it is whole, report this" % i for i in (1, 2)]


@pytest.mark.parametrize("count, capped", [(19, 19), (20, 20), (21, 21)])
def test_twenty_problems_are_listed_and_the_rest_counted(count, capped):
    problems = ["p%d" % i for i in range(count)]
    out = cp.capped(problems)
    assert len(out) == capped
    assert out[-1] == ("and 1 more problems" if count == 21 else "p%d" % (count - 1))


def test_read_header_of_a_bare_file_name_reads_the_working_directory(tmp_path, monkeypatch):
    tiny.write_safetensors(str(tmp_path / "w.safetensors"), {"a": ("F16", (4, 2))})
    monkeypatch.chdir(str(tmp_path))
    header, size = read_header("w.safetensors")
    assert header.tensors["a"][1] == [4, 2] and size == os.path.getsize("w.safetensors")


def test_tokenizer_problems_of_a_directory_use_the_names_given_and_read_tiktoken(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    assert cp.tokenizer_problems(str(tmp_path)) == []
    assert cp.tokenizer_problems(str(tmp_path), names=set()) == [
        "tokenizer: none of tokenizer.json, tokenizer.model, tiktoken.model, vocab.json, spiece.model present: copy the "
        "tokenizer files into the checkpoint, or point SGLang at them (server_args: {tokenizer-path: DIR})"]
    (tmp_path / "tokenizer.json").unlink()
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"x")
    assert cp.tokenizer_problems(str(tmp_path)) == []
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"")
    assert cp.tokenizer_problems(str(tmp_path)) == [
        "tokenizer cl100k_base.tiktoken: empty: copy the tokenizer files again"]
    assert cp.tokenizer_problems(str(tmp_path / "none")) == [
        "%s: cannot be opened (No such file or directory): point it at the model directory" % (tmp_path / "none")]


def test_a_checkpoint_found_whole_under_the_same_stamp_is_not_parsed_again(tmp_path):
    root = tiny.write_target(str(tmp_path / "t"), shards=2, shard_mib=1)
    stamp = cp.structure_stamp(root)
    with open(_shard(root, 2, 2), "r+b") as f:
        f.truncate(4)
    assert check_checkpoint(root, known_whole=cp.structure_stamp(root)) == (
        [], ["weights unchanged since they were found whole (size, mtime, ctime, inode of every shard)"])
    assert check_checkpoint(root, known_whole=stamp)[0][0].startswith("model-00002-of-00002.safetensors: ")


def test_a_checkpoint_path_that_is_no_directory_is_named(tmp_path):
    (tmp_path / "file").write_text("x")
    assert check_checkpoint(str(tmp_path / "file")) == (
        ["%s: not a directory: point it at the model directory" % (tmp_path / "file")], [])


@pytest.mark.parametrize("index, message", [
    ({}, "model.safetensors.index.json weight_map: missing: restore the publisher's index"),
    ({"weight_map": None}, "model.safetensors.index.json weight_map: missing: restore the publisher's index"),
    ({"weight_map": ["a"]}, "model.safetensors.index.json weight_map: is a list (['a']), not an object: restore the "
                            "publisher's index"),
    ({"weight_map": {}}, "model.safetensors.index.json weight_map: is empty: restore the publisher's index"),
    ({"weight_map": {"a": 1, "b": "s.safetensors"}}, "model.safetensors.index.json weight_map: the shards of 1 tensors "
     "are not file names (a): restore the publisher's index"),
])
def test_an_index_without_a_usable_weight_map_is_named(target, index, message):
    with open(os.path.join(target, cp.INDEX_NAME), "w") as f:
        json.dump(index, f)
    assert check_checkpoint(target, workers=1)[0] == [message]


def test_an_index_naming_shards_outside_the_tree_is_named_whole(target):
    with open(os.path.join(target, cp.INDEX_NAME), "w") as f:
        json.dump({"weight_map": {"a": "../x.safetensors", "b": "/etc/y.safetensors", "c": "ok.safetensors"}}, f)
    assert check_checkpoint(target, workers=1)[0] == [
        "model.safetensors.index.json weight_map: names 2 shards outside the model directory (../x.safetensors, "
        "/etc/y.safetensors): refused, never opened: restore the publisher's index"]


@pytest.mark.parametrize("count, cpus, parsers", [(15, 64, 1), (16, 64, 8), (17, 64, 8), (64, 64, 32), (66, 64, 32),
                                                  (100, 64, 32), (16, 3, 3), (16, None, 1), (16, 1, 1)])
def test_headers_are_parsed_in_half_as_many_children_as_shards_from_16_on(monkeypatch, count, cpus, parsers):
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    found = cp._workers(count)
    assert found == parsers and isinstance(found, int)


def test_no_children_without_fork_and_the_callers_count_at_least_one(monkeypatch):
    assert cp._workers(5, 4) == 4 and cp._workers(5, 0) == 1 and cp._workers(5, -3) == 1
    monkeypatch.delattr(os, "fork")
    assert cp._workers(100) == 1


def test_when_no_child_can_be_forked_the_headers_are_parsed_here(tmp_path, monkeypatch):
    import multiprocessing

    def no_fork(_method=None):
        raise OSError(11, "Resource temporarily unavailable")  # fork's EAGAIN on a host out of processes
    monkeypatch.setattr(multiprocessing, "get_context", no_fork)
    root = tiny.write_target(str(tmp_path / "t"), shards=4, shard_mib=1)
    assert cp._check_sharded(root, workers=3) == []
    os.remove(_shard(root, 2, 4))
    assert cp._check_sharded(root, workers=3) == [
        "model-00002-of-00004.safetensors: missing (the index names it for 2 tensors)"]


def _boom(*_a, **_k):
    raise ZeroDivisionError("a bug")


def test_an_unforeseen_error_in_a_forked_parser_is_named(tmp_path, monkeypatch):
    root = tiny.write_target(str(tmp_path / "t"), shards=2, shard_mib=1)
    monkeypatch.setattr(cp, "read_header", _boom)  # the forked children inherit it
    assert cp._check_sharded(root, workers=2) == [
        "model-%05d-of-00002.safetensors: the check could not read it (ZeroDivisionError while reading its safetensors "
        "header: a bug): the file is likely corrupt - download it again; if it is whole, report this" % i for i in (1, 2)]


def test_the_deadline_message_names_the_count_the_wait_and_the_fix(tmp_path, monkeypatch):
    root = tiny.write_target(str(tmp_path / "t"), shards=2, shard_mib=1)

    import types
    late = types.SimpleNamespace(get=_boom)  # a map_async result whose get() fails, as a worker's death does
    pool = types.SimpleNamespace(map_async=lambda *_a, **_k: late, terminate=lambda: None)
    import multiprocessing
    monkeypatch.setattr(multiprocessing, "get_context", lambda _method: types.SimpleNamespace(Pool=lambda _n: pool))
    assert cp._check_sharded(root, workers=2) == [
        "2 shards: their headers were not all read within 300 s (ZeroDivisionError): a shard on a hung or slow "
        "filesystem? Check the model directory's storage"]


def test_loose_and_single_shards_are_checked_and_read(tmp_path):
    root = tiny.write_target(str(tmp_path / "t"), shards=2, shard_mib=1)
    os.remove(os.path.join(root, cp.INDEX_NAME))
    assert check_checkpoint(root) == ([], [])
    assert sorted(cp.tensor_shapes(root)) == sorted("model.layers.%d.%s.weight" % (i, k) for i in (0, 1)
                                                    for k in ("mlp", "norm"))
    with open(_shard(root, 2, 2), "r+b") as f:
        f.truncate(4)
    (problem,) = check_checkpoint(root)[0]
    assert problem.startswith("model-00002-of-00002.safetensors: ")
    os.remove(_shard(root, 2, 2))
    os.rename(_shard(root, 1, 2), os.path.join(root, cp.SINGLE_NAME))
    (tmp_path / "t" / "stray.safetensors").write_bytes(b"not a shard")  # SGLang reads model.safetensors alone
    assert check_checkpoint(root) == ([], [])
    assert sorted(cp.tensor_shapes(root)) == ["model.layers.0.mlp.weight", "model.layers.0.norm.weight"]


def test_an_unforeseen_error_reading_the_tokenizer_is_named(tmp_path, monkeypatch):
    (tmp_path / "tokenizer.json").write_text("{}")
    monkeypatch.setattr(cp.untrusted.Tree, "json", _boom)
    assert cp.tokenizer_problems(str(tmp_path)) == [
        "tokenizer tokenizer.json: the check could not read it (ZeroDivisionError while reading it: a bug): the file is "
        "likely corrupt - download it again; if it is whole, report this"]


def test_read_json_reads_a_file_by_its_path_or_bare_name(tmp_path, monkeypatch):
    (tmp_path / "c.json").write_text('{"a": 1}')
    assert cp.read_json(str(tmp_path / "c.json")) == {"a": 1}
    monkeypatch.chdir(str(tmp_path))
    assert cp.read_json("c.json") == {"a": 1}
    (tmp_path / "c.json").write_text("{")
    with pytest.raises(ValueError) as err:
        cp.read_json("c.json")
    assert str(err.value).startswith("c.json: not JSON")


def test_a_forked_parsers_job_gives_problems_or_the_digest_of_the_names(tmp_path, monkeypatch):
    # run here, in this process, what each forked child runs (its coverage is not seen from the children)
    root = tiny.write_target(str(tmp_path / "t"), shards=2, shard_mib=1)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        names = ["model.layers.0.mlp.weight", "model.layers.0.norm.weight"]
        assert cp._header_digest((fd, "model-00001-of-00002.safetensors")) == ([], cp._names_digest(names))
        assert cp._names_digest(names) == cp._names_digest(names[::-1]) != cp._names_digest(names[:1])
        assert cp._names_digest(["a", "b"]) != cp._names_digest(["a", "c"])
        with open(_shard(root, 2, 2), "r+b") as f:
            f.truncate(4)
        (problem,), digest = cp._header_digest((fd, "model-00002-of-00002.safetensors"))
        assert problem.startswith("model-00002-of-00002.safetensors: ") and digest is None
        monkeypatch.setattr(cp, "read_header", _boom)
        assert cp._header_digest((fd, "model-00001-of-00002.safetensors")) == ([
            "model-00001-of-00002.safetensors: the check could not read it (ZeroDivisionError while reading its "
            "safetensors header: a bug): the file is likely corrupt - download it again; if it is whole, report this"],
            None)
    finally:
        os.close(fd)
