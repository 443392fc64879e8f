# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 26's rules on real checkpoint files made on the spot: the tokenizer, an EAGLE-3 draft's tensor shapes
against its config and the target's, an architecture the installed SGLang lacks (its real registry, from the wheel),
files the server user cannot read (as root, the check drops to that user in a child) and the filesystem."""
import json
import os
import shutil
import sys
import zipfile

import pytest
import testpaths

from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import check_checkpoint, tensor_shapes
from ansible_collections.llmserve.sglang.plugins.module_utils.models.draft import shape_problems
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_pair
from tinymodels import tiny

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402  pylint: disable=wrong-import-position

ROOT = os.geteuid() == 0
H, HEADS, KV, HD, INTER, VOCAB, DVOCAB = 64, 4, 2, 16, 128, 256, 64


def _cfg(**extra):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": H,
           "intermediate_size": INTER, "num_attention_heads": HEADS, "num_key_value_heads": KV, "head_dim": HD,
           "num_hidden_layers": 8, "vocab_size": VOCAB, "tie_word_embeddings": False}
    cfg.update(extra)
    return cfg


def write_eagle3(root, config_extra=None, hidden=H, aux=3):
    """An EAGLE-3 draft laid out as SGLang's llama_eagle3 loads it (tests/gpu/make_tiny_models.py's names)."""
    os.makedirs(root, exist_ok=True)
    t = {"fc.weight": ("BF16", (hidden, H * aux)), "norm.weight": ("BF16", (hidden,)),
         "midlayer.hidden_norm.weight": ("BF16", (hidden,)), "midlayer.input_layernorm.weight": ("BF16", (hidden,)),
         "embed_tokens.weight": ("BF16", (VOCAB, hidden)), "lm_head.weight": ("BF16", (DVOCAB, hidden)),
         "d2t": ("I64", (DVOCAB,)), "t2d": ("U8", (VOCAB,)),
         "midlayer.self_attn.q_proj.weight": ("BF16", (HEADS * HD, 2 * hidden)),
         "midlayer.self_attn.k_proj.weight": ("BF16", (KV * HD, 2 * hidden)),
         "midlayer.self_attn.v_proj.weight": ("BF16", (KV * HD, 2 * hidden)),
         "midlayer.self_attn.o_proj.weight": ("BF16", (hidden, HEADS * HD)),
         "midlayer.mlp.gate_proj.weight": ("BF16", (INTER, hidden)),
         "midlayer.mlp.up_proj.weight": ("BF16", (INTER, hidden)),
         "midlayer.mlp.down_proj.weight": ("BF16", (hidden, INTER))}
    tiny.write_safetensors(os.path.join(root, "model.safetensors"), t)
    cfg = _cfg(architectures=["LlamaForCausalLMEagle3"], num_hidden_layers=1, draft_vocab_size=DVOCAB,
               target_hidden_size=H, eagle_config={"eagle_aux_hidden_state_layer_ids": [1, 3, 5]})
    cfg.update(config_extra or {})
    with open(os.path.join(root, "config.json"), "w") as f:
        json.dump(cfg, f)
    return root


@pytest.fixture
def pair(tmp_path):
    target = tiny.write_target(str(tmp_path / "target"), shards=2, hidden=H, vocab=VOCAB)
    return target, write_eagle3(str(tmp_path / "draft"))


def _problems(draft, target):
    with open(os.path.join(draft, "config.json")) as f:
        d = json.load(f)
    with open(os.path.join(target, "config.json")) as f:
        t = json.load(f)
    return shape_problems(tensor_shapes(draft), d, t, "EAGLE3")


# ---- 3. the tokenizer

def test_a_missing_tokenizer_is_refused_with_the_fix(pair):
    target = pair[0]
    os.remove(os.path.join(target, "tokenizer.json"))
    (problem,) = check_checkpoint(target)[0]
    assert problem.startswith("tokenizer: none of tokenizer.json") and "tokenizer-path" in problem


def test_a_corrupt_tokenizer_file_is_named(pair):
    target = pair[0]
    with open(os.path.join(target, "tokenizer_config.json"), "w") as f:
        f.write("{not json")
    with open(os.path.join(target, "tokenizer.json"), "w") as f:
        f.write("")
    problems = check_checkpoint(target)[0]
    assert [p.split(":")[0] for p in problems] == ["tokenizer tokenizer.json", "tokenizer tokenizer_config.json"]


def test_tokenizer_path_and_skip_tokenizer_init(pair, tmp_path):
    target = pair[0]
    shutil.move(os.path.join(target, "tokenizer.json"), str(tmp_path / "tokenizer.json"))
    assert not verify_pair(target)["ok"]
    assert verify_pair(target, tokenizer_path=str(tmp_path))["ok"]
    assert verify_pair(target, skip_tokenizer_init=True)["ok"]
    (problem,) = verify_pair(target, tokenizer_path=str(tmp_path / "none"))["problems"]
    assert problem == "target tokenizer-path %s: no such directory" % (tmp_path / "none")


# ---- 4. the draft fits by shape

def test_a_draft_whose_weights_match_its_config_and_the_target_passes(pair):
    target, draft = pair
    assert _problems(draft, target) == []
    assert verify_pair(target, draft, "EAGLE3")["ok"]


def test_hidden_size_doubled_in_the_drafts_config_is_refused_by_its_shapes(pair):
    # the H200 row: config says 128, the weights were trained at 64; target_hidden_size still matches the target
    target, draft = pair
    write_eagle3(draft, {"hidden_size": 2 * H})
    problems = _problems(draft, target)
    assert "the draft's fc.weight is [64, 192] in its weights, but hidden_size 128 x (target_hidden_size 64 x 3 aux " \
           "layers); the target gives 3 aux states of hidden_size 64 make it [128, 192]" in problems[0]
    assert problems[1].startswith("the draft's embed_tokens.weight is [256, 64] in its weights")
    assert problems[2].startswith("the draft's lm_head.weight is [64, 64] in its weights")
    # the rest in one line, not one per tensor
    assert problems[3].startswith("and 10 more of the draft's tensors") and "self_attn.q_proj.weight" in problems[3]
    assert len(problems) == 4
    verdict = verify_pair(target, draft, "EAGLE3")
    assert not verdict["ok"] and verdict["models"]["fit"] == problems


def test_aux_layers_and_target_width_against_fc(pair, tmp_path):
    target = pair[0]
    two = write_eagle3(str(tmp_path / "two"), {"eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 3]}})
    (problem,) = _problems(two, target)  # weights for 3 aux states, config names 2
    assert problem.startswith("the draft's fc.weight is [64, 192] in its weights") and "x 2 aux layers" in problem
    other = tiny.write_target(str(tmp_path / "wide"), shards=1, hidden=80, vocab=VOCAB)
    assert "not a multiple of the target's hidden_size 80" in _problems(write_eagle3(str(tmp_path / "d")), other)[-1]


def test_shapes_are_judged_only_for_eagle3():
    assert shape_problems({"fc.weight": [1, 1]}, {"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 8},
                          {}, "EAGLE") == []


# ---- 2. what the installed SGLang can serve (its real registry)

@pytest.fixture(scope="module")
def sglang_models(tmp_path_factory):
    dest = str(tmp_path_factory.mktemp("sglang"))
    with zipfile.ZipFile(W.wheel_path("0.5.15.post1")) as whl:
        whl.extractall(dest, [n for n in whl.namelist() if n.startswith("sglang/srt/models/") and n.endswith(".py")])
    tf = os.path.join(dest, "transformers", "models")
    os.makedirs(tf)
    # the tiny models' type (the reader of the installed Transformers' types: test_models_hostile)
    return {"models": os.path.join(dest, "sglang", "srt", "models"), "transformers": tf, "model_types": {"llama"}}


def test_an_architecture_sglang_lacks_is_refused_naming_the_near_ones(pair, sglang_models):
    target, draft = pair
    cfg = os.path.join(target, "config.json")
    with open(cfg) as f:
        config = json.load(f)
    config["architectures"] = ["LlamaForCasualLM"]
    with open(cfg, "w") as f:
        json.dump(config, f)
    verdict = verify_pair(target, draft, "EAGLE3", sglang=sglang_models)
    (problem,) = verdict["problems"]
    assert problem.startswith("target config.json architectures ['LlamaForCasualLM']")
    assert "the nearest it supports: LlamaForCausalLM" in problem
    config["architectures"] = ["LlamaForCausalLM"]
    with open(cfg, "w") as f:
        json.dump(config, f)
    assert verify_pair(target, draft, "EAGLE3", sglang=sglang_models)["ok"]


# ---- 5. readable by the server user


@pytest.mark.skipif(not ROOT, reason="judging another user's access needs root (CI runs as root)")
def test_a_file_only_root_reads_is_refused_naming_it_and_the_user(open_dir):
    target = tiny.write_target(os.path.join(open_dir, "t"), shards=2)
    shard = os.path.join(target, "model-00002-of-00002.safetensors")
    os.chmod(shard, 0o600)
    verdict = verify_pair(target, user="nobody")
    (problem,) = verdict["problems"]
    assert problem.startswith("target %s: the server user nobody (uid " % shard)
    assert "cannot read this file (Permission denied; mode 0600 root:root)" in problem
    assert verdict["models"]["target"]["access_method"] == "kernel"
    os.chmod(shard, 0o644)
    assert verify_pair(target, user="nobody")["ok"]
    # a tree copied as root with the safetensors library's 0600: one line, not one per file
    for name in os.listdir(target):
        os.chmod(os.path.join(target, name), 0o600)
    (problem,) = verify_pair(target, user="nobody")["problems"]
    assert problem.startswith("target %s: the server user nobody" % target)
    assert "cannot read 5 files (Permission denied; mode 0600 root:root): config.json, " \
           "model-00001-of-00002.safetensors, model-00002-of-00002.safetensors and 2 more: make it" in problem


def test_an_unknown_server_user_is_named(open_dir):
    target = tiny.write_target(os.path.join(open_dir, "t"), shards=1)
    (problem,) = verify_pair(target, user="no-such-user-26")["problems"]
    assert "the server user no-such-user-26 does not exist on this host" in problem


def test_the_unreadable_shard_is_named_by_the_structure_check_too(open_dir):
    # the old test skipped as root (root reads mode 000); the check as the server user is what runs as root now
    target = tiny.write_target(os.path.join(open_dir, "t"), shards=4)
    os.chmod(os.path.join(target, "model-00002-of-00004.safetensors"), 0)
    if ROOT:
        problems = verify_pair(target, user="nobody")["problems"]
        assert len(problems) == 1 and "model-00002-of-00004.safetensors: the server user nobody" in problems[0]
    else:
        (problem,) = check_checkpoint(target)[0]
        assert problem.startswith("model-00002-of-00004.safetensors: unreadable")


# ---- 6. the filesystem is reported

def test_the_filesystem_is_in_the_verdict(pair):
    target = pair[0]
    fs = verify_pair(target)["models"]["target"]["filesystem"]
    assert fs["mount"].startswith("/") and fs["network"] in (True, False)


# ---- 1. every start: weights found whole are not parsed again while every file is unchanged

def test_weights_found_whole_are_not_parsed_again_until_a_file_changes(tmp_path, monkeypatch):
    from ansible_collections.llmserve.sglang.plugins.module_utils.models import checkpoint
    target = tiny.write_target(str(tmp_path / "t"), shards=4)
    cache = str(tmp_path / "cache")
    assert verify_pair(target, cache_dir=cache)["ok"]
    assert len(os.listdir(cache)) == 1
    parsed = []
    real = checkpoint.read_header
    monkeypatch.setattr(checkpoint, "read_header", lambda *a: parsed.append(a[0]) or real(*a))
    again = verify_pair(target, cache_dir=cache)
    assert again["ok"] and parsed == [] and "weights unchanged" in again["models"]["target"]["notes"][0]
    # a shard cut in place (same name, same inode): its size and ctime move, so it is parsed and refused
    shard = os.path.join(target, "model-00003-of-00004.safetensors")
    with open(shard, "r+b") as f:
        f.truncate(os.path.getsize(shard) - 1)
    verdict = verify_pair(target, cache_dir=cache)
    assert not verdict["ok"] and "model-00003-of-00004.safetensors: short" in verdict["problems"][0]
    assert len(parsed) == 4
    # the config and tokenizer are checked every time, cached or not
    os.remove(shard)
    tiny.write_target(str(tmp_path / "t"), shards=4)
    assert verify_pair(target, cache_dir=cache)["ok"]
    os.remove(os.path.join(target, "tokenizer.json"))
    assert not verify_pair(target, cache_dir=cache)["ok"]
