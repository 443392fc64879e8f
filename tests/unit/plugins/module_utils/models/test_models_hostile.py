# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 33 on whole model trees: hostile files refused with file, field and fix, never a traceback; the servability
gaps a real launch found (model_type, an EAGLE-3 draft's vocabulary) refused before launch; and no reader of a model
tree opens a path any other way than through host/untrusted."""
import ast
import json
import os
import struct
import sys

import pytest
import testpaths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.models import checkpoint, manifest, verify
from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import INDEX_NAME, check_checkpoint
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_pair
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import registry
from localrun import local_run
from tinymodels import tiny

H, VOCAB = 64, 256


@pytest.fixture
def target(tmp_path):
    return tiny.write_target(str(tmp_path / "target"), shards=2, hidden=H, vocab=VOCAB)


def _config(root):
    with open(os.path.join(root, "config.json")) as f:
        return json.load(f)


def _set_config(root, **fields):
    path = os.path.join(root, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    for k, v in fields.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    with open(path, "w") as f:
        json.dump(cfg, f)


# ---- hostile files in a checkpoint

@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "model-00001-of-00002.safetensors", INDEX_NAME])
def test_a_fifo_anywhere_is_refused_at_once(target, name):
    os.remove(os.path.join(target, name))
    os.mkfifo(os.path.join(target, name))
    problems = check_checkpoint(target)[0]
    assert any(p.startswith("%s: is a FIFO" % name) or p.startswith("tokenizer %s: is a FIFO" % name)
               for p in problems), problems


@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "model-00002-of-00002.safetensors"])
def test_a_link_to_dev_zero_or_out_of_the_tree_is_refused(target, name):
    os.remove(os.path.join(target, name))
    os.symlink("/dev/zero", os.path.join(target, name))
    problems = check_checkpoint(target)[0]
    assert any("%s: is a symbolic link, not a regular file" % name in p for p in problems), problems


def test_a_list_for_config_and_a_string_for_a_count_are_named(target, tmp_path):
    with open(os.path.join(target, "config.json"), "w") as f:
        json.dump([1, 2], f)
    assert check_checkpoint(target)[0] == ["config.json: is a list, not an object: restore the publisher's config.json"]
    draft = tiny.write_draft(str(tmp_path / "d"), hidden=H, vocab=VOCAB)
    tiny.write_target(target, shards=2, hidden=H, vocab=VOCAB)
    _set_config(draft, num_hidden_layers="one")
    verdict = verify_pair(target, draft, "EAGLE3")
    assert verdict["problems"] == ["the draft's config.json num_hidden_layers: is a string ('one'), not an integer: "
                                   "restore the publisher's file"]


def test_a_header_nested_100k_deep_and_a_string_in_a_shape_are_refusals(target):
    shard = os.path.join(target, "model-00001-of-00002.safetensors")
    raw = b'{"a":{"dtype":"U8","shape":["1"],"data_offsets":[0,1]}}'
    with open(shard, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"\0")
    (problem,) = check_checkpoint(target)[0]
    assert problem.startswith("model-00001-of-00002.safetensors tensor a: shape is not a list of sizes ('1')")
    raw = b"[" * 100000 + b"]" * 100000
    with open(shard, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
    (problem,) = check_checkpoint(target)[0]
    assert "JSON nested deeper than 127 levels" in problem


def test_an_index_naming_100k_shards_is_refused_by_its_cap_in_one_line(target):
    weight_map = dict(("t%d" % i, "s%d.safetensors" % i) for i in range(100000))
    with open(os.path.join(target, INDEX_NAME), "w") as f:
        json.dump({"weight_map": weight_map}, f)
    (problem,) = check_checkpoint(target)[0]
    assert problem == ("model.safetensors.index.json weight_map: names 100000 shards, above the check's cap of "
                       "10000: restore the publisher's index")


def test_at_the_shard_cap_every_missing_shard_is_counted_not_listed(target, monkeypatch):
    monkeypatch.setattr(checkpoint, "MAX_SHARDS", 50)
    for count, refused in ((49, False), (50, False), (51, True)):
        with open(os.path.join(target, INDEX_NAME), "w") as f:
            json.dump({"weight_map": dict(("t%d" % i, "s%d.safetensors" % i) for i in range(count))}, f)
        problems = check_checkpoint(target, workers=1)[0]
        if refused:
            assert problems == ["model.safetensors.index.json weight_map: names 51 shards, above the check's cap of "
                                "50: restore the publisher's index"]
        else:
            assert len(problems) == checkpoint.MAX_PROBLEMS + 1
            assert problems[-1] == "and %d more problems" % (count - checkpoint.MAX_PROBLEMS)


def test_an_unexpected_error_is_a_named_refusal_not_a_traceback(target, monkeypatch):
    def boom(*_a, **_k):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(checkpoint, "tokenizer_problems", boom)
    (problem,) = check_checkpoint(target)[0]
    assert "the check could not read it (ZeroDivisionError while checking the checkpoint: a bug)" in problem
    assert problem.startswith(target)


def test_a_manifest_of_the_wrong_shape_is_refused_named(target):
    with open(os.path.join(target, manifest.MANIFEST_NAME), "w") as f:
        json.dump({"version": "1", "files": {}}, f)
    with pytest.raises(ValueError, match="unreadable manifest .*version: is a string"):
        manifest.load(target)
    os.remove(os.path.join(target, manifest.MANIFEST_NAME))
    os.mkfifo(os.path.join(target, manifest.MANIFEST_NAME))
    with pytest.raises(ValueError, match="is a FIFO"):
        manifest.load(target)


CONFIGS = st.dictionaries(
    st.sampled_from(["architectures", "model_type", "hidden_size", "vocab_size", "num_hidden_layers",
                     "draft_vocab_size", "target_hidden_size", "eagle_config", "text_config", "num_attention_heads",
                     "head_dim", "tie_word_embeddings", "num_aux_hidden_states", "auto_map"]),
    st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.text(max_size=5),
              st.lists(st.one_of(st.integers(-2, 9), st.text(max_size=3)), max_size=4),
              st.dictionaries(st.sampled_from(["eagle_aux_hidden_state_layer_ids", "hidden_size", "AutoModel"]),
                              st.one_of(st.integers(0, 9), st.lists(st.integers(-1, 9), max_size=3)), max_size=2)),
    max_size=8)


@settings(deadline=None, max_examples=60,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(CONFIGS, CONFIGS)
def test_any_pair_of_configs_is_a_verdict_never_a_traceback(tmp_path, draft_cfg, target_cfg):
    target = tiny.write_target(str(tmp_path / "t"), shards=1, hidden=H, vocab=VOCAB)
    draft = tiny.write_draft(str(tmp_path / "d"), hidden=H, vocab=VOCAB)
    for root, cfg in ((draft, draft_cfg), (target, target_cfg)):
        with open(os.path.join(root, "config.json"), "w") as f:
            json.dump(cfg, f)
    verdict = verify_pair(target, draft, "EAGLE3")
    assert isinstance(verdict["ok"], bool) and all(isinstance(p, str) for p in verdict["problems"])


# ---- servable before launch

def _transformers(tmp_path, types):
    root = tmp_path / "tf" / "models"
    (root / "auto").mkdir(parents=True)
    pairs = "\n".join('        ("%s", "%sConfig"),' % (t, t.replace("-", "").title()) for t in types)
    (root / "auto" / "configuration_auto.py").write_text(
        "from collections import OrderedDict\n\nCONFIG_MAPPING_NAMES = OrderedDict[str, str](\n    [\n"
        "        # Add configs here\n%s\n    ]\n)\n\nOTHER = [(\"notatype\", \"X\")]\n" % pairs)
    sg = tmp_path / "sg" / "srt"
    (sg / "models").mkdir(parents=True)
    (sg / "configs").mkdir()
    (sg / "configs" / "kimi.py").write_text("class KimiConfig(PretrainedConfig):\n    model_type = \"kimi_vl\"\n")
    return str(sg / "models"), str(root)


def test_the_installed_transformers_model_types_are_read_from_its_source(tmp_path):
    sg, tf = _transformers(tmp_path, ["llama", "qwen3", "xlm-roberta"])
    assert registry.transformers_model_types(tf) == {"llama", "qwen3", "xlm-roberta"}
    assert registry.sglang_model_types(sg) == {"kimi_vl"}
    assert registry.transformers_model_types(str(tmp_path / "nowhere")) is None


def test_the_5x_layout_is_read_too(tmp_path):
    # transformers 5.x (5.12.1 on the H100, issue 43): the table moved to auto_mappings.py; configuration_auto.py
    # imports it, updates it with a dict and rebinds it - a reader of that file alone found nothing
    auto = tmp_path / "models" / "auto"
    auto.mkdir(parents=True)
    (auto / "auto_mappings.py").write_text(
        "from collections import OrderedDict\n\n\nCONFIG_MAPPING_NAMES = OrderedDict(\n    [\n"
        "        (\"afmoe\", \"AfmoeConfig\"),\n        (\"llama\", \"LlamaConfig\"),\n    ]\n)\n\n"
        "OTHER_NAMES = OrderedDict([(\"notatype\", \"X\")])\n")
    (auto / "configuration_auto.py").write_text(
        "from .auto_mappings import CONFIG_MAPPING_NAMES, SPECIAL_MODEL_TYPE_TO_MODULE_NAME\n\n"
        "CONFIG_MAPPING_NAMES.update(\n    {\n        \"mlcd\": \"MLCDVisionConfig\",\n    }\n)\n\n"
        "CONFIG_MAPPING_NAMES = OrderedDict(**{\"gpt-sw3\": \"GPT2Config\"}, **CONFIG_MAPPING_NAMES)\n\n"
        "SPECIAL_MODEL_TYPE_TO_MODULE_NAME.update({\"EvollaModel\": \"evolla\"})\n")
    assert registry.transformers_model_types(str(tmp_path / "models")) == {"afmoe", "llama", "mlcd", "gpt-sw3"}
    (auto / "auto_mappings.py").unlink()
    assert registry.transformers_model_types(str(tmp_path / "models")) == {"mlcd", "gpt-sw3"}


def _importable_transformers(site, types):
    """A transformers package the server's Python can import (its AutoConfig table only)."""
    auto = site / "transformers" / "models" / "auto"
    auto.mkdir(parents=True)
    for d in (site / "transformers", site / "transformers" / "models", auto):
        (d / "__init__.py").write_text("")
    (auto / "configuration_auto.py").write_text(
        "import json, os\nCONFIG_MAPPING_NAMES = dict((t, 'C') for t in %r)\n"
        "if os.environ.get('SEEN'):\n"
        "    json.dump([os.environ['HF_HOME'], os.environ['SGLANG_CACHE_DIR']], open(os.environ['SEEN'], 'w'))\n"
        % (list(types),))


def test_the_model_types_are_asked_of_the_servers_python(tmp_path):
    site = tmp_path / "site"
    _importable_transformers(site, ["llama", "qwen3"])
    seen = tmp_path / "seen.json"
    env = {"PYTHONPATH": str(site), "SEEN": str(seen), "SGLANG_CACHE_DIR": str(tmp_path / "home" / "cache")}
    types, why = registry.installed_model_types(sys.executable, env, run=local_run)
    assert (types, why) == ({"llama", "qwen3"}, None)
    # the import ran with the Hub's and the compile caches in a throwaway folder, gone afterwards
    hf_home, cache = json.loads(seen.read_text())
    scratch = os.path.dirname(hf_home)
    assert os.path.basename(scratch).startswith("llmserve-sglang-types-") and cache == scratch
    assert not os.path.exists(scratch) and not (tmp_path / "home").exists()
    # a Transformers that cannot be imported: None, and why
    (site / "transformers" / "models" / "auto" / "configuration_auto.py").write_text("raise ImportError('broken')\n")
    types, why = registry.installed_model_types(sys.executable, {"PYTHONPATH": str(site)}, run=local_run)
    assert types is None and "could not import Transformers' AutoConfig table (ImportError: broken)" in why
    assert registry.installed_model_types(None, {}, run=local_run) == (None, "no server python given")


def test_the_registry_falls_back_on_the_source_and_says_so(tmp_path):
    site = tmp_path / "site"
    (site / "sglang" / "srt" / "models").mkdir(parents=True)
    (site / "sglang" / "srt" / "models" / "llama.py").write_text("EntryClass = LlamaForCausalLM\n")
    _importable_transformers(site, ["llama"])
    notes, unchecked = [], []
    found = registry.installed(sys.executable, {"PYTHONPATH": str(site)}, local_run, notes, unchecked)
    assert found["model_types"] == {"llama"} and found["model_types_error"] is None and not notes and not unchecked
    # not importable, but its source has the table in the form the reader knows
    (site / "transformers" / "models" / "auto" / "configuration_auto.py").write_text(
        "raise ImportError('x')\nCONFIG_MAPPING_NAMES = OrderedDict(\n    [\n        (\"llama\", \"L\"),\n    ]\n)\n")
    found = registry.installed(sys.executable, {"PYTHONPATH": str(site)}, local_run, notes, unchecked)
    assert found["model_types"] == {"llama"} and notes[0].startswith("model types read from the Transformers source")
    # neither: None, and both reasons, for the check to refuse or warn
    (site / "transformers" / "models" / "auto" / "configuration_auto.py").write_text("raise ImportError('x')\n")
    found = registry.installed(sys.executable, {"PYTHONPATH": str(site)}, local_run, [], unchecked)
    assert found["model_types"] is None and "nor could they be read from" in found["model_types_error"]
    assert not unchecked
    # no SGLang registry, or an external model package: nothing judged, and said
    assert registry.installed(sys.executable, {"PYTHONPATH": str(tmp_path / "none")}, local_run, [], unchecked) is None
    assert unchecked[0].startswith("architectures and model types not checked: no sglang/srt/models")
    assert registry.installed(sys.executable, {"PYTHONPATH": str(site), "SGLANG_EXTERNAL_MODEL_PACKAGE": "mypkg"},
                              local_run, [], unchecked) is None
    assert "SGLANG_EXTERNAL_MODEL_PACKAGE mypkg adds models not read here" in unchecked[1]


def test_model_type_missing_or_unknown_is_refused_naming_field_and_fix(tmp_path, target):
    sg, tf = _transformers(tmp_path, ["llama", "qwen3"])
    known = registry.transformers_model_types(tf)
    assert registry.model_type_problems({"model_type": "llama"}, sg, known, target) == []
    assert registry.model_type_problems({"model_type": "kimi_vl"}, sg, known, target) == []  # SGLang's own config
    (problem,) = registry.model_type_problems({"model_type": "llamma"}, sg, known, target)
    assert problem.startswith("config.json model_type llamma is unknown to the installed Transformers (3 types) and "
                              "SGLang") and "the nearest it knows: llama" in problem
    (problem,) = registry.model_type_problems({}, sg, known, "/models/m1")
    assert problem.startswith("config.json has no model_type") and "add model_type" in problem
    # AutoConfig guesses from the path, as Transformers does
    assert registry.model_type_problems({}, sg, known, "/models/qwen3-8b") == []
    # the model's own code, trusted, defines its config
    assert registry.model_type_problems({"model_type": "x", "auto_map": {"AutoConfig": "c.C"}}, sg, known, target,
                                        trust_remote_code=True) == []
    with pytest.raises(ValueError, match="config.json model_type: is an integer"):
        registry.model_type_problems({"model_type": 3}, sg, known, target)
    # through the check: a target whose model_type the installed Transformers lacks
    _set_config(target, model_type="llamma")
    verdict = verify_pair(target, sglang={"models": sg, "transformers": tf, "model_types": known})
    assert any("model_type llamma is unknown" in p for p in verdict["problems"]), verdict["problems"]


@pytest.mark.parametrize("model_type", ["llamaX", None, "llama"])
def test_unreadable_model_types_are_never_a_silent_pass(tmp_path, target, model_type):
    # issue 43: on the H100 the types could not be read and llamaX (and no model_type) passed, silently
    sg, tf = _transformers(tmp_path, ["llama"])
    with open(os.path.join(sg, "llama.py"), "w") as f:
        f.write("EntryClass = LlamaForCausalLM\n")
    _set_config(target, model_type=model_type)
    unreadable = {"models": sg, "transformers": tf, "model_types": None, "model_types_error": "ImportError: x"}
    unchecked = []
    assert registry.model_type_problems({"model_type": model_type}, sg, None, target, unchecked=unchecked,
                                        why="ImportError: x") == []
    assert unchecked == ["config.json model_type %s not checked: the model types of the installed Transformers "
                         "could not be read (ImportError: x)" % model_type]
    with pytest.raises(ValueError):   # a caller that gives neither the types nor a place to say so
        registry.model_type_problems({"model_type": model_type}, sg, None, target)
    refused = verify_pair(target, sglang=unreadable)
    assert not refused["ok"] and refused["unchecked"] == ["target " + unchecked[0]]
    assert refused["problems"] == ["target %s: the servability of the model cannot be judged, refused (set "
                                   "server_model_check_unknown: warn, or model_verify's unknown: warn, to let it "
                                   "pass)" % unchecked[0]]
    warned = verify_pair(target, sglang=unreadable, unknown="warn")
    assert warned["ok"] and warned["unchecked"] == refused["unchecked"]
    # readable: refused or passed on its merits, nothing unchecked
    readable = verify_pair(target, sglang=dict(unreadable, model_types=registry.transformers_model_types(tf)))
    assert readable["unchecked"] == [] and readable["ok"] is (model_type == "llama")


def test_an_architecture_without_a_transformers_to_fall_back_on_is_not_a_silent_pass(tmp_path, target):
    sg, _tf = _transformers(tmp_path, ["llama"])
    unchecked = []
    cfg = {"architectures": ["NoSuchForCausalLM"], "model_type": "llama"}
    assert registry.servable_problems(cfg, {"LlamaForCausalLM": "llama.py"}, target, unchecked=unchecked) == []
    assert unchecked == ["model architectures ['NoSuchForCausalLM'] not checked: not in SGLang's registry, and the "
                         "installed Transformers' models could not be found to see whether SGLang can fall back on "
                         "them"]
    unchecked = []
    assert registry.servable_problems({"architectures": ["LlamaForCausalLM"]}, {"LlamaForCausalLM": "llama.py"},
                                      target, unchecked=unchecked) == [] and unchecked == []


def test_what_the_caller_could_not_check_is_refused_or_warned(target):
    verdict = verify_pair(target, unchecked=["architectures and model types not checked: no sglang"])
    assert not verdict["ok"] and verdict["problems"][0].startswith("architectures and model types not checked")
    assert verify_pair(target, unchecked=["x"], unknown="warn")["ok"]


def _eagle3(root, draft_vocab, d2t, vocab=VOCAB, t2d_len=VOCAB):
    os.makedirs(root, exist_ok=True)
    header, offset, data = {}, 0, b""
    for name, dtype, values in (("d2t", "I64", d2t), ("t2d", "U8", [1] * t2d_len)):
        raw = struct.pack("<%d%s" % (len(values), "q" if dtype == "I64" else "B"), *values)
        header[name] = {"dtype": dtype, "shape": [len(values)], "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = json.dumps(header).encode()
    with open(os.path.join(root, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)
    with open(os.path.join(root, "config.json"), "w") as f:
        json.dump({"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": H,
                   "vocab_size": vocab, "draft_vocab_size": draft_vocab, "num_hidden_layers": 1}, f)
    return root


@pytest.mark.parametrize("top,ok", [(VOCAB - 2, True), (VOCAB - 1, True), (VOCAB, False)])
def test_d2t_mapping_past_the_targets_vocabulary_is_refused_at_the_edge(tmp_path, target, top, ok):
    # draft id i maps to target id i + d2t[i]: the last draft token lands on ``top``
    d2t = [0] * 63 + [top - 63]
    draft = _eagle3(str(tmp_path / "d"), 64, d2t)
    fit = verify.fit_problems(draft, _config(draft), _config(target), "EAGLE3")
    d2t_lines = [p for p in fit if "d2t maps" in p]
    if ok:
        assert d2t_lines == []
    else:
        assert d2t_lines == ["the draft's d2t maps 1 of its 64 tokens outside the target's vocabulary (target ids "
                             "0..256, the target's vocab_size is 256; first draft ids: 63): SGLang fails with a CUDA "
                             "device-side assert in its warm-up; use a draft made for this target"]


def test_draft_vocab_size_above_the_targets_is_refused(tmp_path, target):
    draft = _eagle3(str(tmp_path / "d"), VOCAB + 1, [0] * (VOCAB + 1))
    verdict = verify_pair(target, draft, "EAGLE3")
    assert ("the draft's draft_vocab_size is 257, above the target's vocab_size 256: the draft proposes tokens the "
            "target does not have (SGLang fails with a CUDA device-side assert in its warm-up); use a draft made for "
            "this target") in verdict["problems"]
    draft = _eagle3(str(tmp_path / "e"), VOCAB, [0] * VOCAB)
    assert not [p for p in verify_pair(target, draft, "EAGLE3")["problems"] if "vocab" in p or "d2t" in p]


def test_the_drafts_shape_check_never_opens_a_shard_the_index_refused(tmp_path, target, monkeypatch):
    draft = tiny.write_draft(str(tmp_path / "d"), hidden=H, vocab=VOCAB)
    os.rename(os.path.join(draft, "model.safetensors"), os.path.join(draft, "model-1.safetensors"))
    with open(os.path.join(draft, INDEX_NAME), "w") as f:
        json.dump({"weight_map": {"fc.weight": "/etc/shadow", "x": "../model-1.safetensors"}}, f)
    opened = []
    real = checkpoint.read_header
    monkeypatch.setattr(checkpoint, "read_header", lambda *a: opened.append(a[0]) or real(*a))
    verdict = verify_pair(target, draft, "EAGLE3")
    assert any("shards outside the model directory" in p for p in verdict["problems"])
    assert opened and not [n for n in opened if n.startswith("/") or ".." in n]  # the target's shards only


# ---- one way in: every reader of a model tree goes through host/untrusted

ROOMS = ("plugins/module_utils/models/checkpoint.py", "plugins/module_utils/models/verify.py",
         "plugins/module_utils/models/draft.py", "plugins/module_utils/models/manifest.py",
         "plugins/module_utils/sglang/registry.py")
# (file, function): why this open is not of a model tree
ALLOWED = {
    ("plugins/module_utils/models/verify.py", "_known_whole"): "the check's own root-only cache",
    ("plugins/module_utils/models/verify.py", "_remember_whole"): "the check's own root-only cache",
    ("plugins/module_utils/models/manifest.py", "write"): "writes our own manifest",
    ("plugins/module_utils/models/manifest.py", "sha256_file"): "O_NOFOLLOW of a path staging made",
    ("plugins/module_utils/models/manifest.py", "sha256_fd"): "wraps a descriptor host/untrusted opened",
    ("plugins/module_utils/sglang/registry.py", "supported_architectures"): "the installed SGLang's source",
    ("plugins/module_utils/sglang/registry.py", "_transformers_has"): "the installed Transformers' source",
    ("plugins/module_utils/sglang/registry.py", "transformers_model_types"): "the installed Transformers' source",
    ("plugins/module_utils/sglang/registry.py", "sglang_model_types"): "the installed SGLang's source",
}
FORBIDDEN = {"open", "io.open", "os.open", "json.load", "read_text", "read_bytes", "os.fdopen", "codecs.open"}


def _calls(path):
    tree = ast.parse(open(path).read())  # pylint: disable=consider-using-with
    found = []

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.Call):
                f = child.func
                name = (f.id if isinstance(f, ast.Name) else
                        "%s.%s" % (f.value.id, f.attr) if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                        else f.attr if isinstance(f, ast.Attribute) else None)
                if name in FORBIDDEN or (isinstance(f, ast.Attribute) and f.attr in ("read_text", "read_bytes")):
                    found.append((func, name, child.lineno))
            visit(child, inner)
    visit(tree, None)
    return found


def test_no_reader_of_a_model_tree_opens_a_path_any_other_way():
    stray = []
    for rel in ROOMS:
        for func, name, line in _calls(os.path.join(testpaths.REPO, rel)):
            if (rel, func) not in ALLOWED:
                stray.append("%s:%d %s() in %s" % (rel, line, name, func))
    assert stray == [], "open model files through host/untrusted (Tree.open/read/json/header): %s" % stray


def test_the_scan_finds_what_it_forbids(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import json\n\ndef f(p):\n    with open(p) as fh:\n        return json.load(fh)\n")
    assert [(f, n) for f, n, _l in _calls(str(bad))] == [("f", "open"), ("f", "json.load")]


def _stuck(_job):
    import time
    time.sleep(60)


def test_the_parallel_header_parse_has_a_deadline(tmp_path, monkeypatch):
    root = tiny.write_target(str(tmp_path / "t"), shards=checkpoint.PARALLEL_SHARDS)
    monkeypatch.setattr(checkpoint, "_header_digest", _stuck)  # forked children inherit it: none ever answers
    monkeypatch.setattr(checkpoint, "PARALLEL_DEADLINE_S", 0.5)
    (problem,) = checkpoint._check_sharded(root, workers=2)  # pylint: disable=protected-access
    assert problem.startswith("%d shards: their headers were not all read within 0.5 s (TimeoutError)"
                              % checkpoint.PARALLEL_SHARDS)


def test_a_huge_list_in_a_config_prints_a_short_line(tmp_path, target):
    draft = tiny.write_draft(str(tmp_path / "d"), hidden=H, vocab=VOCAB)
    _set_config(draft, eagle_config={"eagle_aux_hidden_state_layer_ids": list(range(300000))},
                architectures=["X%d" % i for i in range(100000)])
    verdict = verify_pair(target, draft, "EAGLE3")
    assert verdict["problems"] and max(len(p) for p in verdict["problems"]) < 1000, verdict["problems"]


@pytest.mark.parametrize("header,said", [
    ({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
      "b": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]}},
     "tensor b: data_offsets [1, 3] overlaps the tensor before it (the data so far ends at 2)"),
    ({"a": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 2]}}, "tensor a: dtype Q4 is not one safetensors knows"),
])
def test_headers_safetensors_refuses_no_longer_pass(target, header, said):
    shard = os.path.join(target, "model-00001-of-00002.safetensors")
    raw = json.dumps(header).encode()
    end = max(t["data_offsets"][1] for t in header.values())
    with open(shard, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"\0" * end)
    (problem,) = check_checkpoint(target)[0]
    assert problem.startswith("model-00001-of-00002.safetensors " + said), problem


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list('CONFIG_MAPPING_NAMES=().[]{}:"ab, \n')), max_size=300))
def test_any_transformers_source_is_a_set_or_none_never_a_traceback(tmp_path, text):
    auto = tmp_path / "m" / "auto"
    auto.mkdir(parents=True, exist_ok=True)
    (auto / "auto_mappings.py").write_text(text)
    found = registry.transformers_model_types(str(tmp_path / "m"))
    assert found is None or (isinstance(found, set) and found and all(isinstance(t, str) for t in found))
