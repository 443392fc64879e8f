# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""models/verify's rules held word for word (issue 37): the known-whole cache (its file name, mode, the path it
vouches for, a broken tree never in it), verify_tree's keys and modes, verify_pair's tokenizer-path, draft and
server-user rules, what the installed SGLang serves (a registry laid out on the spot), the d2t mapping and the
readable-by-the-server-user lines an operator reads."""
import grp
import hashlib
import json
import os
import pwd
import struct
import sys
import tempfile

import pytest

from localrun import local_run

from ansible_collections.llmserve.sglang.plugins.module_utils.host import access, mounts
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import registry
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models import verify as vf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import (
    fit_problems, readable_problems, verify_pair, verify_tree)
from tinymodels import tiny

ROOT = os.geteuid() == 0
FIX = ("make it readable for that user (chmod o+r / o+x on directories, or a group it is in) or set server_user "
       "to one that can")
# the cache's private helpers: the file name, the path check and the 0700 directory are its safety rules
cache_file, known_whole, remember_whole, filesystem = (vf._cache_file, vf._known_whole,  # pylint: disable=protected-access
                                                       vf._remember_whole, vf._filesystem)  # pylint: disable=protected-access
needs_root = pytest.mark.skipif(not ROOT, reason="judging another user's access needs root (CI runs as root)")


def _who(user):
    pw = pwd.getpwnam(user)
    groups = sorted(set(os.getgrouplist(pw.pw_name, pw.pw_gid)))
    return "the server user %s (uid %d, groups %s)" % (user, pw.pw_uid, ",".join(str(g) for g in groups))


def _owner(path):
    st = os.stat(path)
    return "%s:%s" % (pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name)


# ---- the known-whole cache: one file per real path, 0700, a path check, never a broken tree

def test_the_cache_file_is_the_sha256_of_the_real_path_dot_json(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    link = str(tmp_path / "link")
    os.symlink(target, link)
    cache = str(tmp_path / "cache")
    assert verify_pair(link, cache_dir=cache)["ok"]
    want = hashlib.sha256(os.path.realpath(target).encode("utf-8")).hexdigest() + ".json"
    assert os.listdir(cache) == [want]
    with open(os.path.join(cache, want)) as f:
        assert json.load(f)["path"] == os.path.realpath(target)


def test_a_cache_entry_vouches_only_for_the_path_it_names(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    cache = str(tmp_path / "cache")
    stamp = vf.structure_stamp(target)
    remember_whole(cache, target, stamp)
    assert known_whole(cache, target) == stamp
    # the same file name, written for another path (a renamed tree, a copied cache): it vouches for nothing
    with open(cache_file(cache, target), "w") as f:
        json.dump({"path": str(tmp_path / "other"), "stamp": stamp}, f)
    assert known_whole(cache, target) is None
    assert known_whole(None, target) is None


def test_the_cache_directory_is_made_0700_and_an_existing_one_is_used(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    stamp = vf.structure_stamp(target)
    old = os.umask(0o022)
    try:
        cache = str(tmp_path / "new")
        remember_whole(cache, target, stamp)
        assert oct(os.stat(cache).st_mode & 0o7777) == "0o700"
        assert os.listdir(cache) == [os.path.basename(cache_file(cache, target))]
        there = str(tmp_path / "there")
        os.mkdir(there, 0o700)
        remember_whole(there, target, stamp)
        assert os.listdir(there) == [os.path.basename(cache_file(there, target))]
        assert known_whole(there, target) == stamp
    finally:
        os.umask(old)


def test_nothing_is_remembered_without_a_cache_dir_or_a_stamp(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    cache = str(tmp_path / "cache")
    assert remember_whole(cache, target, None) is None
    assert not os.path.exists(cache)
    assert remember_whole(None, target, vf.structure_stamp(target)) is None
    assert remember_whole("", target, vf.structure_stamp(target)) is None


def test_a_broken_tree_is_never_remembered_as_whole(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=2)
    shard = os.path.join(target, "model-00002-of-00002.safetensors")
    with open(shard, "r+b") as f:
        f.truncate(os.path.getsize(shard) - 1)
    cache = str(tmp_path / "cache")
    for _unused in range(2):
        verdict = verify_tree(target, cache_dir=cache)
        assert not verdict["ok"] and "model-00002-of-00002.safetensors: short" in verdict["problems"][0]
        assert not os.path.exists(cache) or os.listdir(cache) == []
    # whole again: remembered, and the next check says so
    tiny.write_target(target, shards=2)
    assert verify_tree(target, cache_dir=cache)["ok"] and len(os.listdir(cache)) == 1
    assert any("weights unchanged" in n for n in verify_tree(target, cache_dir=cache)["notes"])


def test_a_full_check_never_trusts_the_cache(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=2)
    cache = str(tmp_path / "cache")
    assert verify_tree(target, cache_dir=cache)["ok"]
    assert any("weights unchanged" in n for n in verify_tree(target, cache_dir=cache)["notes"])
    full = verify_tree(target, mode="full", cache_dir=cache)
    assert full["ok"] and not any("weights unchanged" in n for n in full["notes"])
    assert full["notes"][0] == "no manifest: a full check is not possible, the structure was checked"


def test_the_draft_is_remembered_too(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    draft = tiny.write_draft(str(tmp_path / "d"))
    cache = str(tmp_path / "cache")
    assert verify_pair(target, draft, "EAGLE3", cache_dir=cache)["ok"]
    assert sorted(os.listdir(cache)) == sorted(os.path.basename(cache_file(cache, p)) for p in (target, draft))


# ---- verify_tree: its keys, its modes

def test_a_missing_directory_is_the_whole_verdict(tmp_path):
    missing = str(tmp_path / "none")
    assert verify_tree(missing) == {"path": missing, "hashed": 0, "method": "structure", "notes": [], "ok": False,
                                    "problems": ["%s: no such directory (stage the model first)" % missing]}


def test_the_structure_verdict_keys_and_the_tokenizer_by_default(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    result = verify_tree(target)
    assert result["path"] == target and result["hashed"] == 0 and result["method"] == "structure"
    assert result["ok"] is True
    os.remove(os.path.join(target, "tokenizer.json"))
    (problem,) = verify_tree(target)["problems"]
    assert problem.startswith("tokenizer: none of tokenizer.json")
    assert verify_tree(target, require_tokenizer=False)["ok"]


@pytest.fixture
def staged(tmp_path):
    root = tiny.write_target(str(tmp_path / "m"), shards=2)
    mf.write(root, mf.build(root, {"kind": "dir", "path": "/src"}, "abc", workers=1))
    return root


def test_full_hashes_every_file_and_finds_what_kept_its_mtime(staged):
    cheap = verify_tree(staged)
    assert cheap["ok"] and cheap["method"] == "manifest-cheap" and cheap["hashed"] == 0
    assert cheap["source"] == {"kind": "dir", "path": "/src"} and cheap["revision"] == "abc"
    full = verify_tree(staged, mode="full")
    assert full["ok"] and full["method"] == "manifest-full" and full["hashed"] == 5
    shard = os.path.join(staged, "model-00001-of-00002.safetensors")
    st = os.stat(shard)
    with open(shard, "r+b") as f:
        f.seek(st.st_size - 10)
        f.write(b"\0" * 10)
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert verify_tree(staged)["ok"]
    (problem,) = verify_tree(staged, mode="full")["problems"]
    assert problem.startswith("model-00001-of-00002.safetensors: sha256 ")
    # verify_pair passes its mode to the target and the draft alike
    pair = verify_pair(staged, staged, mode="full")["models"]
    assert pair["target"]["method"] == pair["draft"]["method"] == "manifest-full"


def test_structure_mode_reads_no_manifest(staged):
    with open(os.path.join(staged, mf.MANIFEST_NAME), "w") as f:
        f.write("{not json")
    assert not verify_tree(staged)["ok"]
    result = verify_tree(staged, mode="structure")
    assert result["ok"] and result["method"] == "structure" and "source" not in result
    pair = verify_pair(staged, staged, mode="structure")
    assert pair["ok"], pair["problems"]


# ---- verify_pair: the tokenizer path, the draft, the verdict per model

def test_the_tokenizer_path_is_checked_only_when_sglang_reads_it_from_a_directory(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    os.remove(os.path.join(target, "tokenizer.json"))
    # skip_tokenizer_init: no tokenizer is read, wherever tokenizer_path points
    assert verify_pair(target, tokenizer_path=str(tmp_path / "none"), skip_tokenizer_init=True)["ok"]
    # a hub id is not a directory of this host: not checked here
    assert verify_pair(target, tokenizer_path="some-org/some-tokenizer")["ok"]
    empty = str(tmp_path / "tok")
    os.mkdir(empty)
    verdict = verify_pair(target, tokenizer_path=empty)
    assert len(verdict["problems"]) == 1
    assert verdict["problems"][0].startswith("target tokenizer-path %s: tokenizer: none of tokenizer.json" % empty)


def test_a_draft_problem_is_named_with_draft_and_a_missing_target_still_judges_the_draft(tmp_path):
    draft = tiny.write_draft(str(tmp_path / "d"))
    os.remove(os.path.join(draft, "config.json"))
    missing = str(tmp_path / "none")
    verdict = verify_pair(missing, draft, "EAGLE3")
    assert verdict["problems"] == ["target %s: no such directory (stage the model first)" % missing,
                                   "draft config.json: missing (every checkpoint needs it)"]
    assert "filesystem" in verdict["models"]["draft"] and verdict["models"]["fit"] == []


def test_no_fit_without_an_algorithm_or_a_draft_config(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    wide = tiny.write_draft(str(tmp_path / "wide"), hidden=128)
    verdict = verify_pair(target, wide)  # no algorithm: nothing to fit against
    assert verdict["ok"] and verdict["models"]["fit"] == []
    assert verify_pair(target, wide, "EAGLE3")["models"]["fit"] != []
    broken = tiny.write_draft(str(tmp_path / "broken"))
    with open(os.path.join(broken, "config.json"), "w") as f:
        f.write("{not json")
    verdict = verify_pair(target, broken, "EAGLE3")
    assert verdict["models"]["fit"] == [] and all(p.startswith("draft config.json") for p in verdict["problems"])


@needs_root
def test_a_verdict_the_server_user_changes_is_not_ok(open_dir):
    target = tiny.write_target(os.path.join(open_dir, "t"), shards=1)
    assert verify_pair(target, user="nobody")["models"]["target"]["ok"] is True
    os.chmod(os.path.join(target, "config.json"), 0o600)
    verdict = verify_pair(target, user="nobody")
    assert verdict["models"]["target"]["ok"] is False and verdict["ok"] is False


# ---- the filesystem note

NFS = "36 25 0:32 / %s rw,relatime shared:1 - nfs4 storage:/export/models rw,vers=4.2\n"


def test_a_network_filesystem_is_named_in_a_note(tmp_path, monkeypatch):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    real = os.path.realpath(target)
    read = mounts.filesystem
    monkeypatch.setattr(mounts, "filesystem", lambda path: read(path, mountinfo=NFS % real))
    verdict = verify_pair(target)
    assert verdict["models"]["target"]["notes"] == [
        "%s is on a network filesystem (nfs4 at %s, from storage:/export/models): every shard is read over the "
        "network at each start" % (target, real)]
    local = "36 25 0:32 / %s rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    monkeypatch.setattr(mounts, "filesystem", lambda path: read(path, mountinfo=local % real))
    assert verify_pair(target)["models"]["target"]["notes"] == []
    monkeypatch.setattr(mounts, "filesystem", lambda path: read(path, mountinfo=""))
    assert filesystem(target) == (None, [])


# ---- what the installed SGLang serves: a registry laid out as the wheel and transformers lay it out

def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture
def sglang(tmp_path):
    """Two SGLang model modules (llama, qwen2), one SGLang-only config type, a Transformers that knows llama and
    qwen2 and has a modeling file for Qwen2ForCausalLM only."""
    root = str(tmp_path / "site")
    _write(root + "/sglang/srt/models/llama.py", "EntryClass = LlamaForCausalLM\n")
    _write(root + "/sglang/srt/models/qwen2.py", "EntryClass = [Qwen2ForCausalLM]\n")
    _write(root + "/sglang/srt/configs/sglonly.py", "class SglOnlyConfig:\n    model_type = \"sglonly\"\n")
    _write(root + "/transformers/models/auto/configuration_auto.py",
           "CONFIG_MAPPING_NAMES = OrderedDict(\n    [\n        (\"llama\", \"LlamaConfig\"),\n"
           "        (\"qwen2\", \"Qwen2Config\"),\n    ]\n)\n")
    _write(root + "/transformers/models/qwen2/modeling_qwen2.py", "class Qwen2ForCausalLM(Base):\n    pass\n")
    return {"models": root + "/sglang/srt/models", "transformers": root + "/transformers/models",
            "model_types": registry.transformers_model_types(root + "/transformers/models")}


def _model(root, **fields):
    """A tiny target whose config.json has ``fields`` changed (None: removed)."""
    target = tiny.write_target(root, shards=1)
    with open(os.path.join(target, "config.json")) as f:
        config = json.load(f)
    config.update(fields)
    config = dict((k, v) for k, v in config.items() if v is not None)
    with open(os.path.join(target, "config.json"), "w") as f:
        json.dump(config, f)
    return target


NO_SUCH_MODEL = ("target config.json architectures ['%s'] (model_type llama): the installed SGLang has no such model "
                 "(%d architectures in its registry, sglang/srt/models) and transformers has none to fall back on; "
                 "the nearest it supports: %s: use a checkpoint of a supported architecture, a newer SGLang, or fix "
                 "config.json's architectures")


def test_an_architecture_sglang_disables_is_not_served(tmp_path, sglang):
    target = _model(str(tmp_path / "m"))
    assert verify_pair(target, sglang=sglang)["ok"]
    assert verify_pair(target, sglang=dict(sglang, disabled=["qwen2"]))["ok"]
    verdict = verify_pair(target, sglang=dict(sglang, disabled=["llama"]))
    assert verdict["problems"] == [NO_SUCH_MODEL % ("LlamaForCausalLM", 1, "Qwen2ForCausalLM")]
    assert verdict["models"]["target"]["ok"] is False


def test_a_model_type_unknown_to_transformers_and_sglang(tmp_path, sglang):
    target = _model(str(tmp_path / "m"), model_type="lama")
    # the architecture is served: the model_type alone is the problem, named with its nearest
    assert verify_pair(target, sglang=sglang)["problems"] == [
        "target config.json model_type lama is unknown to the installed Transformers (3 types) and SGLang: AutoConfig "
        "cannot load it (SGLang stops with model_unsupported); the nearest it knows: llama: fix model_type, or "
        "install a Transformers that has it"]
    # a type only SGLang's own configs register is known
    assert verify_pair(_model(str(tmp_path / "s"), model_type="sglonly"), sglang=sglang)["ok"]


def test_a_missing_model_type_is_guessed_from_the_path_as_transformers_does(tmp_path, sglang):
    assert verify_pair(_model(str(tmp_path / "llama-tiny"), model_type=None), sglang=sglang)["ok"]
    plain = _model(tempfile.mkdtemp(prefix="m-", dir=str(tmp_path)), model_type=None)
    assert verify_pair(plain, sglang=sglang)["problems"] == [
        "target config.json has no model_type: Transformers' AutoConfig cannot tell which model this is (SGLang stops "
        "with model_not_found): add model_type (the publisher's config.json has it: llama, qwen3, ...)"]


def test_the_models_own_config_code_with_trust_remote_code(tmp_path, sglang):
    target = _model(str(tmp_path / "m"), model_type="lama", auto_map={"AutoConfig": "configuration_my.MyConfig"})
    assert verify_pair(target, sglang=sglang, trust_remote_code=True)["ok"]
    (problem,) = verify_pair(target, sglang=sglang)["problems"]  # trust_remote_code is off unless asked
    assert problem.startswith("target config.json model_type lama is unknown")


def test_the_models_own_model_code(tmp_path, sglang):
    target = _model(str(tmp_path / "m"), architectures=["MyModelForCausalLM"],
                    auto_map={"AutoModel": "modeling_my.MyModel"})
    assert verify_pair(target, sglang=sglang)["problems"] == [
        "target config.json architectures ['MyModelForCausalLM'] are not in SGLang's registry and run only from the "
        "model's own code (auto_map.AutoModel modeling_my.MyModel): set trust-remote-code (server_args: "
        "{trust-remote-code: true}) if you trust that code"]
    assert verify_pair(target, sglang=sglang, trust_remote_code=True)["problems"] == [
        "target config.json auto_map names modeling_my.py, not in %s: the model's own code is missing" % target]
    _write(os.path.join(target, "modeling_my.py"), "class MyModel:\n    pass\n")
    assert verify_pair(target, sglang=sglang, trust_remote_code=True)["ok"]


def test_model_impl_transformers_is_not_judged_by_sglangs_registry(tmp_path, sglang):
    target = _model(str(tmp_path / "m"), architectures=["MyModelForCausalLM"])
    assert verify_pair(target, sglang=sglang, model_impl="transformers")["ok"]
    assert verify_pair(target, sglang=sglang)["problems"] == [
        NO_SUCH_MODEL % ("MyModelForCausalLM", 2, "Qwen2ForCausalLM, LlamaForCausalLM")]


def test_a_refusal_or_an_error_while_judging_what_sglang_serves_is_a_problem(tmp_path, sglang):
    target = _model(str(tmp_path / "m"), architectures=[1])
    verdict = verify_pair(target, sglang=sglang)
    assert verdict["problems"] == ["target config.json architectures: [1] is not a list of class names: restore the "
                                   "publisher's config.json"]
    assert verdict["models"]["target"]["ok"] is False
    target = _model(str(tmp_path / "n"))
    assert verify_pair(target, sglang=dict(sglang, disabled=5))["problems"] == [
        "target config.json: the check could not read it (TypeError while reading what the installed SGLang serves: "
        "argument of type 'int' is not iterable): the file is likely corrupt - download it again; if it is whole, "
        "report this"]


# ---- the draft's d2t mapping and the errors of fit_problems

def _safetensors(path, tensors):
    """{name: (dtype, shape, data)}: the bytes given, as the safetensors library lays them out."""
    header, blob = {}, b""
    for name in sorted(tensors):
        dtype, shape, data = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    raw = json.dumps(header).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + blob)


@pytest.fixture
def d2t_pair(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=1)
    draft = tiny.write_draft(str(tmp_path / "d"), draft_vocab=4)
    with open(os.path.join(target, "config.json")) as f:
        target_cfg = json.load(f)
    with open(os.path.join(draft, "config.json")) as f:
        draft_cfg = json.load(f)

    def write(name, values, dtype="I64"):
        data = struct.pack("<%dq" % len(values), *values) if dtype == "I64" else b"\0" * 4 * len(values)
        _safetensors(os.path.join(draft, "model.safetensors"),
                     {"fc.weight": ("BF16", (64, 192), b"\1" * 64 * 192 * 2), name: (dtype, (len(values),), data)})
        return draft, draft_cfg, target_cfg
    return write


OUTSIDE = ("the draft's d2t maps 1 of its 4 tokens outside the target's vocabulary (target ids 0..301, the target's "
           "vocab_size is 256; first draft ids: 1): SGLang fails with a CUDA device-side assert in its warm-up; use a "
           "draft made for this target")
EAGLE_FOR_EAGLE3 = ("the draft is an EAGLE-3 model (architectures ['LlamaForCausalLMEagle3']) but the algorithm is "
                    "EAGLE: SGLang runs it without the target's aux hidden states and accepts nothing (accept length "
                    "1.00); set the algorithm to EAGLE3")


def test_a_d2t_outside_the_targets_vocabulary_is_refused_for_eagle3_only(d2t_pair):
    draft, draft_cfg, target_cfg = d2t_pair("d2t", [0, 0, 0, 0])
    assert fit_problems(draft, draft_cfg, target_cfg, "EAGLE3") == []
    d2t_pair("d2t", [0, 300, 0, 0])
    assert fit_problems(draft, draft_cfg, target_cfg, "EAGLE3") == [OUTSIDE]
    assert fit_problems(draft, draft_cfg, target_cfg, "eagle3") == [OUTSIDE]
    assert fit_problems(draft, draft_cfg, target_cfg, "EAGLE") == [EAGLE_FOR_EAGLE3]
    # the tensor found by its last name part, wherever the draft's writer put it
    d2t_pair("model.d2t", [0, 300, 0, 0])
    assert fit_problems(draft, draft_cfg, target_cfg, "EAGLE3") == [OUTSIDE]
    d2t_pair("model.d2t_extra", [0, 300, 0, 0])
    assert fit_problems(draft, draft_cfg, target_cfg, "EAGLE3") == []


def test_a_d2t_of_floats_is_refused_naming_the_draft(d2t_pair):
    draft, draft_cfg, target_cfg = d2t_pair("d2t", [0, 0, 0, 0], dtype="F32")
    assert fit_problems(draft, draft_cfg, target_cfg, "EAGLE3") == [
        "draft model.safetensors tensor d2t: is F32, not an integer type: the draft's d2t must hold token ids"]


def test_a_config_refused_or_an_error_while_matching_is_one_problem(d2t_pair, monkeypatch):
    draft, draft_cfg, target_cfg = d2t_pair("d2t", [0, 0, 0, 0])
    assert fit_problems(draft, dict(draft_cfg, hidden_size="64"), target_cfg, "EAGLE3") == [
        "the draft's config.json hidden_size: is a string ('64'), not an integer: restore the publisher's file"]
    # a target hidden_size of 0 is a mismatch to name, not a division by zero
    zero = fit_problems(draft, draft_cfg, dict(target_cfg, hidden_size=0), "EAGLE3")
    assert zero and all("ZeroDivisionError" not in p for p in zero)
    assert "the target's hidden_size is 0: the draft was trained for another target" in zero[0]

    def unforeseen(*_args):
        raise ZeroDivisionError("integer modulo by zero")
    monkeypatch.setattr(vf, "shape_problems", unforeseen)
    assert fit_problems(draft, draft_cfg, target_cfg, "EAGLE3") == [
        "the draft's config.json: the check could not read it (ZeroDivisionError while matching the draft to the "
        "target: integer modulo by zero): the file is likely corrupt - download it again; if it is whole, report this"]


# ---- readable by the server user, line by line

def _locked_files(root, names, mode=0o600):
    model = os.path.join(root, "m")
    os.makedirs(model, exist_ok=True)
    os.chmod(model, 0o755)
    for name in names:
        _write(os.path.join(model, name), "x")
        os.chmod(os.path.join(model, name), mode)
    return model


def test_an_unknown_server_user_is_named_with_the_fix(open_dir):
    assert readable_problems(open_dir, "no-such-user-37", "target") == (
        ["target: the server user no-such-user-37 does not exist on this host: create it or set server_user"], None)


@needs_root
def test_a_directory_on_the_way_and_the_directory_itself(open_dir):
    locked = os.path.join(open_dir, "locked")
    model = _locked_files(locked, ["a"], mode=0o644)
    os.chmod(locked, 0o700)
    who = _who("nobody")
    problems, method = readable_problems(model, "nobody", "target")
    assert method == "kernel"
    assert problems == [
        "target %s: %s cannot enter this directory (permission denied; mode 0700 %s): %s"
        % (locked, who, _owner(locked), FIX),
        "target %s: %s cannot list this directory (Permission denied; mode 0755 %s): %s" % (model, who, _owner(model), FIX),
        "target %s/a: %s cannot read this file (Permission denied; mode 0644 %s): %s" % (model, who, _owner(model), FIX)]
    os.chmod(locked, 0o755)
    os.chmod(model, 0o711)  # enterable, not listable: the files open, the listing fails
    assert readable_problems(model, "nobody", "target") == (
        ["target %s: %s cannot list this directory (Permission denied; mode 0711 %s): %s"
         % (model, who, _owner(model), FIX)], "kernel")
    os.chmod(model, 0o755)
    assert readable_problems(model, "nobody", "target") == ([], "kernel")


@needs_root
def test_hidden_files_and_subdirectories_are_not_read(open_dir):
    model = _locked_files(open_dir, ["config.json"], mode=0o644)
    _write(os.path.join(model, ".cache", "x"), "x")
    os.chmod(os.path.join(model, ".cache"), 0o700)
    _write(os.path.join(model, ".lock"), "x")
    os.chmod(os.path.join(model, ".lock"), 0o600)
    os.mkdir(os.path.join(model, "original"))
    assert readable_problems(model, "nobody", "target") == ([], "kernel")


def test_a_directory_that_is_not_there_is_named_not_a_traceback(open_dir):
    missing = os.path.join(open_dir, "none")
    problems = readable_problems(missing, "nobody", "target")[0]
    assert len(problems) == 1 and problems[0].startswith("target %s: %s cannot list this directory (" % (missing, _who("nobody")))


@needs_root
@pytest.mark.parametrize("count, shown", [
    (2, "f0, f1"),
    (3, "f0, f1, f2"),
    (4, "f0, f1, f2 and 1 more"),
])
def test_files_alike_are_one_line_naming_three(open_dir, count, shown):
    model = _locked_files(open_dir, ["f%d" % i for i in range(count)])
    assert readable_problems(model, "nobody", "target")[0] == [
        "target %s: %s cannot read %d files (Permission denied; mode 0600 %s): %s: %s"
        % (model, _who("nobody"), count, _owner(model), shown, FIX)]


def _user_with_groups():
    """A user other than root whose uid is not its gid and who is in two groups or more (postgres here)."""
    for pw in sorted(pwd.getpwall(), key=lambda p: p.pw_uid):
        if pw.pw_uid and pw.pw_uid != pw.pw_gid and len(set(os.getgrouplist(pw.pw_name, pw.pw_gid))) > 1:
            return pw.pw_name
    return None


@needs_root
@pytest.mark.skipif(_user_with_groups() is None, reason="no user on this host with uid != gid and two groups")
def test_the_server_user_is_named_with_its_uid_and_every_group(open_dir):
    user = _user_with_groups()
    model = _locked_files(open_dir, ["config.json"])
    who = _who(user)
    assert "," in who.split("groups ")[1]
    assert readable_problems(model, user, "target")[0] == [
        "target %s/config.json: %s cannot read this file (Permission denied; mode 0600 %s): %s"
        % (model, who, _owner(model), FIX)]


# ---- what the installed SGLang's registry could not judge: named with its model and why, refused unless warn

UNJUDGED = ": the servability of the model cannot be judged, refused (set server_model_check_unknown: warn, or " \
           "model_verify's unknown: warn, to let it pass)"


def test_unreadable_model_types_are_named_with_why_and_refused_unless_warn(tmp_path, sglang):
    target = _model(str(tmp_path / "m"))
    assert verify_pair(target, sglang=sglang)["unchecked"] == []
    why = "transformers/models/auto/configuration_auto.py: no such file"
    unread = dict(sglang, model_types=None, model_types_error=why)
    line = "target config.json model_type llama not checked: the model types of the installed Transformers could " \
           "not be read (%s)" % why
    verdict = verify_pair(target, sglang=unread)
    assert (verdict["ok"], verdict["unchecked"], verdict["problems"]) == (False, [line], [line + UNJUDGED])
    warned = verify_pair(target, sglang=unread, unknown="warn")
    assert (warned["ok"], warned["unchecked"], warned["problems"]) == (True, [line], [])


def test_an_architecture_that_may_need_the_transformers_fallback_is_named_when_it_cannot_be_judged(tmp_path, sglang):
    no_transformers = dict(sglang, transformers=None)
    assert verify_pair(_model(str(tmp_path / "served")), sglang=no_transformers)["unchecked"] == []
    verdict = verify_pair(_model(str(tmp_path / "m"), architectures=["MyModelForCausalLM"]), sglang=no_transformers)
    line = "target config.json architectures ['MyModelForCausalLM'] not checked: not in SGLang's registry, and the " \
           "installed Transformers' models could not be found to see whether SGLang can fall back on them"
    assert (verdict["ok"], verdict["unchecked"], verdict["problems"]) == (False, [line], [line + UNJUDGED])


# ---- the chat template is the publisher's code: rendered as the server user, or nobody, never as root

def test_the_chat_template_is_rendered_as_the_server_user_or_nobody_never_root(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 4}))
    (d / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}}}))
    (d / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{% for m in messages %}{{ m['content'] }}"
                                                                          "{% endfor %}"}))
    seen = []

    def run(argv, data=None, **kw):   # the real runner, recording whom the job renders as
        seen.append(json.loads(data)["as"])
        return local_run(argv, data=data, **kw)

    for user in (None, "no-such-user-llmserve", "daemon"):
        verdict = verify_pair(str(d), mode="structure", chat={"python": sys.executable, "run": run, "user": user})
        assert verdict["chat_template"] is True
    nobody, daemon = [list(access.identity(u)) for u in ("nobody", "daemon")]
    assert seen == [nobody, nobody, daemon] and 0 not in (nobody[0], daemon[0])


def _chat_model(root, template=None):
    d = os.path.join(str(root), "m")
    os.makedirs(d)
    _write(d + "/config.json", json.dumps({"model_type": "llama", "vocab_size": 4}))
    _write(d + "/tokenizer.json", json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}}}))
    _write(d + "/tokenizer_config.json", json.dumps({"chat_template": template} if template else {}))
    return d


def _chat(**kw):
    return dict({"python": sys.executable, "run": local_run, "user": str(os.geteuid())}, **kw)  # the tests' own user


def test_the_template_is_rendered_in_the_server_s_environment(tmp_path):
    d = _chat_model(tmp_path, "{{ messages[0]['content'] }}")
    assert verify_pair(d, mode="structure", chat=_chat())["ok"]
    shadow = str(tmp_path / "site")
    _write(shadow + "/jinja2.py", "raise ImportError('no jinja2 in this venv')\n")
    verdict = verify_pair(d, mode="structure", chat=_chat(env={"PYTHONPATH": shadow}))
    (problem,) = verdict["problems"]
    assert problem.startswith("target the chat template could not be rendered in the server's python: ")
    assert problem.endswith(": check the server venv (jinja2 comes with transformers)")


def test_a_template_given_to_sglang_stands_for_the_model_s_missing_one(tmp_path):
    d = _chat_model(tmp_path)
    bare = verify_pair(d, mode="structure", chat=_chat())
    assert bare["chat_template"] is False and bare["warnings"][0].startswith("the model has no chat template")
    given = verify_pair(d, mode="structure", chat=_chat(given="chatml"))
    assert (given["ok"], given["chat_template"], given["warnings"]) == (True, True, [])


def test_chat_requests_are_counted_on_only_when_the_template_was_checked_where_sglang_reads_it(tmp_path):
    d = _chat_model(tmp_path, "{{ messages[0]['content'] }}")
    assert verify_pair(d, mode="structure", chat=_chat())["chat_template"] is True
    assert verify_pair(d, mode="structure")["chat_template"] is False                  # no server python: not rendered
    # SGLang reads the tokenizer from a hub id or from a directory not there: nothing here to render
    for elsewhere in ("org/llama-tokenizer", str(tmp_path / "no-such-tokenizer")):
        verdict = verify_pair(d, mode="structure", tokenizer_path=elsewhere, chat=_chat())
        assert verdict["chat_template"] is False


def test_what_could_not_be_judged_is_named_with_its_model_and_the_caller_s_own_is_kept(tmp_path, sglang):
    target = _model(str(tmp_path / "m"))
    draft = tiny.write_draft(str(tmp_path / "d"))
    _write(sglang["models"] + "/llama_eagle3.py", "EntryClass = [LlamaForCausalLMEagle3]\n")
    assert verify_pair(target, draft, "EAGLE3", sglang=sglang)["ok"]
    verdict = verify_pair(target, draft, "EAGLE3", sglang=dict(sglang, model_types=None),
                          unchecked=["the installed SGLang's registry: unreadable"])
    assert [u.split(" not checked")[0] for u in verdict["unchecked"]] == [
        "the installed SGLang's registry: unreadable", "target config.json model_type llama",
        "draft config.json model_type llama"]
    assert verdict["problems"] == [u + UNJUDGED for u in verdict["unchecked"]]
    assert verify_pair(target, unchecked=["the registry"], unknown="warn")["ok"]


def test_a_tokenizer_sglang_never_reads_is_not_held_to_vocab_size(tmp_path):
    d = _chat_model(tmp_path)
    _write(d + "/tokenizer.json", json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 4}}}))
    (problem,) = verify_pair(d, mode="structure")["problems"]
    assert problem.startswith("target tokenizer.json: 1 token ids are at or above config.json vocab_size 4")
    assert verify_pair(d, mode="structure", skip_tokenizer_init=True)["ok"]


def test_a_tokenizer_that_cannot_be_read_is_named_and_no_chat_is_counted_on(tmp_path, monkeypatch):
    d = _chat_model(tmp_path, "{{ messages[0]['content'] }}")
    skipped = verify_pair(d, mode="structure", skip_tokenizer_init=True, chat=_chat())
    assert (skipped["ok"], skipped["chat_template"], skipped["warnings"]) == (True, False, [])

    def unforeseen(*_a):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(vf.serving, "vocab_problems", unforeseen)
    _write(d + "/tokenizer.json", json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}}}))
    verdict = verify_pair(d, mode="structure", chat=_chat())
    assert verdict["chat_template"] is False
    assert verdict["problems"] == ["target the tokenizer: the check could not read it (ZeroDivisionError while "
                                   "checking what a request needs: boom): the file is likely corrupt - download it "
                                   "again; if it is whole, report this"]
