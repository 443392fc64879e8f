# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Draft-fits-target rules, on config.json files as the tiny writer lays them out (SGLang's field names)."""
import json
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.models import draft as dr
from ansible_collections.llmserve.sglang.plugins.module_utils.models.draft import draft_problems, text_config
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_pair
from tinymodels import tiny


def _config(root):
    with open(os.path.join(root, "config.json")) as f:
        return json.load(f)


@pytest.fixture
def pair(tmp_path):
    target = tiny.write_target(str(tmp_path / "t"), shards=2, layers=8, hidden=64, vocab=256)
    draft = tiny.write_draft(str(tmp_path / "d"), hidden=64, vocab=256, aux=(1, 3, 6))
    return target, draft


def test_fitting_draft_passes(pair):
    target, draft = pair
    assert draft_problems(_config(draft), _config(target), "EAGLE3") == []
    assert verify_pair(target, draft, "EAGLE3")["ok"]


def test_eagle3_draft_under_eagle_is_refused(pair):
    target, draft = pair
    (problem,) = draft_problems(_config(draft), _config(target), "EAGLE")
    assert "EAGLE-3 model (architectures ['LlamaForCausalLMEagle3']) but the algorithm is EAGLE" in problem
    assert "accept length 1.00" in problem


def test_plain_eagle_draft_under_eagle3_is_refused(pair):
    target, draft = pair
    config = dict(_config(draft), architectures=["LlamaForCausalLMEagle"])
    assert "are not an EAGLE-3 model" in draft_problems(config, _config(target), "EAGLE3")[0]


def test_hidden_size_and_vocab_mismatch_named(tmp_path, pair):
    target = pair[0]
    other = tiny.write_draft(str(tmp_path / "o"), hidden=128, vocab=512, aux=(1, 3, 6))
    problems = draft_problems(_config(other), _config(target), "EAGLE3")
    assert problems == [
        "the draft's target_hidden_size is 128, the target's hidden_size is 64: the draft was trained for another "
        "target",
        "the draft's vocab_size is 512, the target's is 256: the draft was trained with another tokenizer",
        "the draft's draft_vocab_size is 512, above the target's vocab_size 256: the draft proposes tokens the target "
        "does not have (SGLang fails with a CUDA device-side assert in its warm-up); use a draft made for this target"]
    verdict = verify_pair(target, other, "EAGLE3")
    assert not verdict["ok"] and verdict["problems"] == problems


def test_aux_layer_beyond_the_target(pair):
    target, draft = pair
    # SGLang captures the input of layer id + 1: with 8 layers, 6 is the last usable id, 7 is not
    config = _config(draft)
    config["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [1, 3, 7]
    (problem,) = draft_problems(config, _config(target), "EAGLE3")
    assert "[1, 3, 7] name layers [7] that the target (8 layers, ids 0..6 usable)" in problem


def test_aux_count_disagreeing_with_num_aux(pair):
    target, draft = pair
    config = dict(_config(draft), num_aux_hidden_states=2)
    assert "num_aux_hidden_states is 2 but eagle_aux_hidden_state_layer_ids names 3" in \
        draft_problems(config, _config(target), "EAGLE3")[0]


def test_multimodal_target_read_from_text_config(pair):
    target, draft = pair
    wrapped = {"architectures": ["KimiK25ForConditionalGeneration"], "text_config": _config(target)}
    assert text_config(wrapped) == _config(target)
    assert draft_problems(_config(draft), wrapped, "EAGLE3") == []
    wrapped["text_config"]["num_hidden_layers"] = 4
    assert "ids 0..2 usable" in draft_problems(_config(draft), wrapped, "EAGLE3")[0]


def test_other_algorithms_not_judged(pair):
    target, draft = pair
    assert draft_problems({"architectures": ["X"]}, _config(target), "NGRAM") == []


# --- issue 37: every rule from both sides, every message as the operator reads it -----------------------------

TARGET = {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "vocab_size": 256, "num_hidden_layers": 8}
DRAFT = {"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 64, "vocab_size": 256,
         "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 3, 6]}}


def _refused(call, *args):
    with pytest.raises(untrusted.Refused) as err:
        call(*args)
    return str(err.value)


@pytest.mark.parametrize("algorithm", ["EAGLE3", "eagle3", "Eagle3"])
def test_the_algorithm_is_read_in_any_case(algorithm):
    assert dr.draft_problems(dict(DRAFT, hidden_size=32), TARGET, algorithm) == [
        "the draft's hidden_size is 32, the target's hidden_size is 64: the draft was trained for another target"]


@pytest.mark.parametrize("algorithm", [None, "", "NGRAM", "EAGLE4"])
def test_no_other_algorithm_is_judged(algorithm):
    assert dr.draft_problems({"hidden_size": "x"}, TARGET, algorithm) == []


@pytest.mark.parametrize("draft, target, message", [
    ([1], TARGET, "the draft's config.json: is a list, not an object: restore the publisher's file"),
    (DRAFT, "x", "the target's config.json: is a string, not an object: restore the publisher's file"),
    (dict(DRAFT, vocab_size="256"), TARGET,
     "the draft's config.json vocab_size: is a string ('256'), not an integer: restore the publisher's file"),
    (DRAFT, dict(TARGET, num_hidden_layers=-1), "the target's config.json num_hidden_layers: is -1, below 0: "
     "restore the publisher's file"),
    (DRAFT, {"text_config": dict(TARGET, head_dim=1.5)}, "the target's config.json text_config.head_dim: is a number "
     "(1.5), not an integer: restore the publisher's file"),
    (dict(DRAFT, architectures=["A", 1]), TARGET, "the draft's config.json architectures: ['A', 1] is not a list of "
     "class names: restore the publisher's file"),
    (dict(DRAFT, architectures=7), TARGET, "the draft's config.json architectures: is an integer (7), not a list or a "
     "string: restore the publisher's file"),
    (dict(DRAFT, eagle_config=[1]), TARGET, "the draft's config.json eagle_config: is a list ([1]), not an object: "
     "restore the publisher's file"),
    (dict(DRAFT, tie_word_embeddings="no"), TARGET, "the draft's config.json tie_word_embeddings: is a string ('no'), "
     "not a boolean: restore the publisher's file"),
])
def test_a_field_of_the_wrong_type_is_refused_naming_file_and_field(draft, target, message):
    assert _refused(dr.draft_problems, draft, target, "EAGLE3") == message


def test_counts_at_zero_pass_the_type_check():
    dr.check_types(dict(DRAFT, num_key_value_heads=0), "the draft's config.json")
    dr.check_types({"text_config": {"hidden_size": 0}}, "the target's config.json")


def test_a_text_config_beside_a_top_level_hidden_size_is_not_read():
    config = {"hidden_size": 64, "text_config": {"hidden_size": 32}}
    assert dr.text_config(config) is config
    assert dr.text_config({"text_config": "x"}) == {"text_config": "x"}
    dr.check_types({"hidden_size": 64, "text_config": {"hidden_size": "bad"}}, "the target's config.json")


def test_the_eagle_kind_by_architecture_both_ways():
    assert dr.draft_problems(dict(DRAFT, architectures="LlamaForCausalLMEagle3"), TARGET, "EAGLE") == [
        "the draft is an EAGLE-3 model (architectures LlamaForCausalLMEagle3) but the algorithm is EAGLE: SGLang runs "
        "it without the target's aux hidden states and accepts nothing (accept length 1.00); set the algorithm to "
        "EAGLE3"]
    assert dr.draft_problems(dict(DRAFT, architectures=["LlamaForCausalLMEagle"]), TARGET, "EAGLE3") == [
        "the algorithm is EAGLE3 but the draft's architectures ['LlamaForCausalLMEagle'] are not an EAGLE-3 model; use "
        "an EAGLE-3 draft or set the algorithm to EAGLE"]
    assert dr.draft_problems(dict(DRAFT, architectures=[]), TARGET, "EAGLE3") == []
    assert dr.draft_problems(dict(DRAFT, architectures=["LlamaForCausalLMEagle"]), TARGET, "EAGLE") == []


@pytest.mark.parametrize("draft, problem", [
    (dict(DRAFT, target_hidden_size=64, hidden_size=32), None),
    (dict(DRAFT, target_hidden_size=65), "the draft's target_hidden_size is 65, the target's hidden_size is 64: the "
     "draft was trained for another target"),
    (dict(DRAFT, hidden_size=63), "the draft's hidden_size is 63, the target's hidden_size is 64: the draft was "
     "trained for another target"),
    (dict(DRAFT, hidden_size=None), None),
])
def test_the_drafts_input_width_against_the_targets_hidden_size(draft, problem):
    assert dr.draft_problems(draft, TARGET, "EAGLE3") == ([problem] if problem else [])


def test_no_width_or_vocabulary_is_judged_when_the_target_does_not_say():
    assert dr.draft_problems(dict(DRAFT, hidden_size=1, vocab_size=1), {"architectures": ["X"]}, "EAGLE3") == []


@pytest.mark.parametrize("vocab, problem", [(255, True), (256, False), (257, True), (None, False)])
def test_the_drafts_vocabulary_equals_the_targets(vocab, problem):
    found = dr.draft_problems(dict(DRAFT, vocab_size=vocab, architectures=["LlamaForCausalLMEagle"]), TARGET, "EAGLE")
    assert found == (["the draft's vocab_size is %s, the target's is 256: the draft was trained with another "
                      "tokenizer" % vocab] if problem else [])


@pytest.mark.parametrize("head, refused", [(255, False), (256, False), (257, True)])
def test_draft_vocab_size_at_most_the_targets_vocabulary(head, refused):
    found = dr.draft_problems(dict(DRAFT, draft_vocab_size=head), TARGET, "EAGLE3")
    assert found == (["the draft's draft_vocab_size is 257, above the target's vocab_size 256: the draft proposes "
                      "tokens the target does not have (SGLang fails with a CUDA device-side assert in its warm-up); "
                      "use a draft made for this target"] if refused else [])
    assert dr.draft_problems(dict(DRAFT, architectures=["X"], draft_vocab_size=head), TARGET, "EAGLE") == []


@pytest.mark.parametrize("ids, outside", [([0, 6], None), ([0, 7], "[7]"), ([-1, 6], "[-1]"), ([-1, 7, 8], "[-1, 7, 8]")])
def test_aux_layer_ids_between_0_and_layers_minus_2(ids, outside):
    draft = dict(DRAFT, eagle_config={"eagle_aux_hidden_state_layer_ids": ids})
    found = dr.draft_problems(draft, TARGET, "EAGLE3")
    assert found == (["the draft's eagle_aux_hidden_state_layer_ids %s name layers %s that the target (8 layers, ids "
                      "0..6 usable) does not have: the draft was trained for another target" % (ids, outside)]
                     if outside else [])
    assert dr.draft_problems(draft, {"hidden_size": 64}, "EAGLE3") == []  # no layer count: not judged


@pytest.mark.parametrize("ids", [[1, True], "1,3", [1.0]])
def test_aux_layer_ids_that_are_not_layer_numbers_are_named(ids):
    assert dr.draft_problems(dict(DRAFT, eagle_config={"eagle_aux_hidden_state_layer_ids": ids}), TARGET, "EAGLE3") == [
        "the draft's eagle_config.eagle_aux_hidden_state_layer_ids %s is not a list of layer numbers"
        % untrusted.printable(ids, 120)]


@pytest.mark.parametrize("declared, problem", [(2, True), (3, False), (4, True), (None, False)])
def test_num_aux_hidden_states_matches_the_layer_ids(declared, problem):
    found = dr.draft_problems(dict(DRAFT, num_aux_hidden_states=declared), TARGET, "EAGLE3")
    assert found == (["the draft's num_aux_hidden_states is %s but eagle_aux_hidden_state_layer_ids names 3 layers"
                      % declared] if problem else [])


def test_no_aux_layer_ids_no_aux_problem():
    assert dr.draft_problems(dict(DRAFT, eagle_config={}, num_aux_hidden_states=9), TARGET, "EAGLE3") == []
    assert dr.draft_problems(dict(DRAFT, eagle_config=None), TARGET, "EAGLE3") == []


@pytest.mark.parametrize("top, ok", [(254, True), (255, True), (256, False)])
def test_d2t_maps_into_the_targets_vocabulary_at_the_edge(top, ok):
    d2t = [0, 0, top - 2]  # target ids 0, 1, top
    found = dr.d2t_problems(d2t, TARGET)
    assert found == ([] if ok else [
        "the draft's d2t maps 1 of its 3 tokens outside the target's vocabulary (target ids 0..256, the target's "
        "vocab_size is 256; first draft ids: 2): SGLang fails with a CUDA device-side assert in its warm-up; use a "
        "draft made for this target"])


def test_d2t_below_zero_and_more_than_three_outside():
    found = dr.d2t_problems([-1, -2, -3, -4, 0], TARGET)
    assert found == ["the draft's d2t maps 4 of its 5 tokens outside the target's vocabulary (target ids -1..4, the "
                     "target's vocab_size is 256; first draft ids: 0, 1, 2 and 1 more): SGLang fails with a CUDA "
                     "device-side assert in its warm-up; use a draft made for this target"]
    assert "first draft ids: 0, 1, 2)" in dr.d2t_problems([-1, -2, -3, 0], TARGET)[0]


def test_d2t_is_not_judged_without_a_target_vocabulary_or_entries():
    assert dr.d2t_problems([], TARGET) == []
    assert dr.d2t_problems([1000], {"vocab_size": None}) == []
    assert dr.d2t_problems([0], {"text_config": {"vocab_size": 1}}) == []
    assert dr.d2t_problems([1], {"text_config": {"vocab_size": 1}})[0].startswith("the draft's d2t maps 1 of its 1")


FULL = {"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 64, "target_hidden_size": 96, "vocab_size": 256,
        "draft_vocab_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
        "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 3, 6]}}


def test_the_expected_shapes_of_an_eagle3_draft():
    shapes = dr.eagle3_expected_shapes(FULL, {"hidden_size": 96, "vocab_size": 256})
    assert dict((k, v[0]) for k, v in shapes.items()) == {
        "fc.weight": [64, 288], "layers.0.hidden_norm.weight": [64], "layers.0.input_layernorm.weight": [64],
        "norm.weight": [64], "embed_tokens.weight": [256, 64], "lm_head.weight": [32, 64], "t2d": [256], "d2t": [32],
        "layers.0.self_attn.q_proj.weight": [64, 128], "layers.0.self_attn.k_proj.weight": [32, 128],
        "layers.0.self_attn.v_proj.weight": [32, 128], "layers.0.self_attn.o_proj.weight": [64, 64],
        "layers.0.mlp.gate_proj.weight": [128, 64], "layers.0.mlp.up_proj.weight": [128, 64],
        "layers.0.mlp.down_proj.weight": [64, 128]}
    assert shapes["fc.weight"][1] == ("hidden_size 64 x (target_hidden_size 96 x 3 aux layers); the target gives 3 aux "
                                      "states of hidden_size 96")
    assert shapes["embed_tokens.weight"][1] == "vocab_size 256 x hidden_size 64; the target's vocab_size is 256"
    assert shapes["lm_head.weight"][1] == "draft_vocab_size 32 x hidden_size 64"
    assert shapes["norm.weight"][1] == "hidden_size 64"
    assert shapes["t2d"][1] == "vocab_size 256" and shapes["d2t"][1] == "draft_vocab_size 32"
    assert shapes["layers.0.self_attn.q_proj.weight"][1] == (
        "(heads x head_dim) x 2 hidden_size: the first layer takes the embedding and the fc output")
    assert shapes["layers.0.self_attn.o_proj.weight"][1] == "hidden_size x (heads x head_dim)"
    assert shapes["layers.0.mlp.up_proj.weight"][1] == "intermediate_size x hidden_size"
    assert shapes["layers.0.mlp.down_proj.weight"][1] == "hidden_size x intermediate_size"


def test_expected_shapes_follow_what_the_config_gives_and_no_more():
    assert dr.eagle3_expected_shapes({"hidden_size": "64"}, {}) == {}
    bare = dr.eagle3_expected_shapes({"hidden_size": 64}, {})
    assert dict((k, v[0]) for k, v in bare.items()) == {
        "fc.weight": [64, 192], "layers.0.hidden_norm.weight": [64], "layers.0.input_layernorm.weight": [64],
        "norm.weight": [64]}
    assert bare["fc.weight"][1] == "hidden_size 64 x (target_hidden_size 64 x 3 aux layers)"
    tied = dr.eagle3_expected_shapes(dict(FULL, tie_word_embeddings=True, draft_vocab_size=None, head_dim=8,
                                          num_key_value_heads=None), {})
    assert "lm_head.weight" not in tied and tied["d2t"][0] == [256]
    assert tied["layers.0.self_attn.q_proj.weight"][0] == [32, 128]
    assert tied["layers.0.self_attn.k_proj.weight"][0] == [32, 128]
    assert tied["embed_tokens.weight"][1] == "vocab_size 256 x hidden_size 64"
    assert "layers.0.self_attn.q_proj.weight" not in dr.eagle3_expected_shapes(dict(FULL, num_attention_heads=0), {})


@pytest.mark.parametrize("declared, ids, aux", [(2, [1, 3, 6], 2), (0, [1, 3], 2), (None, [1], 1), (None, [], 3),
                                                (None, None, 3), (1, None, 1)])
def test_the_aux_count_is_declared_else_the_ids_else_three(declared, ids, aux):
    draft = {"hidden_size": 4, "num_aux_hidden_states": declared, "eagle_config": {"eagle_aux_hidden_state_layer_ids": ids}}
    assert dr.eagle3_expected_shapes(draft, {})["fc.weight"][0] == [4, 4 * aux]
    assert dr.eagle3_expected_shapes({"hidden_size": 4, "eagle_config": "x"}, {})["fc.weight"][0] == [4, 12]


def _shapes(**changed):
    shapes = dict((k, v[0]) for k, v in dr.eagle3_expected_shapes(FULL, {"hidden_size": 96}).items())
    shapes.update(changed)
    return shapes


def test_shapes_that_match_the_config_pass_under_either_prefix():
    target = {"hidden_size": 96, "vocab_size": 256}
    assert dr.shape_problems(_shapes(), FULL, target, "EAGLE3") == []
    prefixed = dict(("model." + k.replace("layers.0.", "midlayer."), v) for k, v in _shapes().items())
    assert dr.shape_problems(prefixed, FULL, target, "eagle3") == []
    bad = dict(prefixed, **{"model.midlayer.mlp.up_proj.weight": [1, 64]})
    assert dr.shape_problems(bad, FULL, target, "EAGLE3") == [
        "the draft's layers.0.mlp.up_proj.weight is [1, 64] in its weights, but intermediate_size x hidden_size make "
        "it [128, 64]: the config does not describe these weights"]


def test_shapes_are_judged_for_an_eagle3_draft_under_eagle3_only():
    bad = _shapes(**{"norm.weight": [1]})
    assert dr.shape_problems(bad, FULL, {}, "EAGLE") == []
    assert dr.shape_problems(bad, dict(FULL, architectures=["LlamaForCausalLMEagle"]), {}, "EAGLE3") == []
    assert dr.shape_problems(bad, dict(FULL, architectures=None), {}, "EAGLE3") == []
    assert dr.shape_problems(bad, FULL, {}, None) == []
    assert len(dr.shape_problems(bad, FULL, {}, "EAGLE3")) == 1
    assert "the draft's config.json hidden_size" in _refused(dr.shape_problems, bad, dict(FULL, hidden_size="64"), {},
                                                             "EAGLE3")
    assert "the target's config.json" in _refused(dr.shape_problems, bad, FULL, [], "EAGLE3")


@pytest.mark.parametrize("target_hidden, refused", [(0, False), (1, False), (95, True), (96, False),
                                                    (97, True)])
def test_the_fc_inputs_are_held_to_a_positive_target_hidden_size(target_hidden, refused):
    shapes = _shapes()
    got = dr.shape_problems(shapes, FULL, {"hidden_size": target_hidden}, "EAGLE3")
    assert got == (["the draft's fc.weight takes %d inputs, not a multiple of the target's hidden_size %d: the draft "
                    "was trained for another target" % (shapes["fc.weight"][1], target_hidden)] if refused else [])


@pytest.mark.parametrize("wrong, listed, more", [(3, 3, None), (4, 3, 1), (5, 3, 2)])
def test_three_wrong_shapes_are_described_and_the_rest_named(wrong, listed, more):
    names = ["fc.weight", "embed_tokens.weight", "lm_head.weight", "d2t", "layers.0.hidden_norm.weight"][:wrong]
    problems = dr.shape_problems(_shapes(**dict((n, [7]) for n in names)), FULL, {}, "EAGLE3")
    assert [p.split(" ")[2] for p in problems[:listed]] == names[:3]
    assert problems[0] == ("the draft's fc.weight is [7] in its weights, but hidden_size 64 x (target_hidden_size 96 x "
                           "3 aux layers) make it [64, 288]: the config does not describe these weights")
    if more:
        assert problems[listed:] == ["and %d more of the draft's tensors do not have the shapes its config gives: %s"
                                     % (more, ", ".join(names[3:]))]
    else:
        assert len(problems) == listed


@pytest.mark.parametrize("inputs, problem", [(288, False), (289, True), (96, False)])
def test_fc_takes_a_multiple_of_the_targets_hidden_size(inputs, problem):
    found = dr.shape_problems({"fc.weight": [64, inputs]}, {"architectures": FULL["architectures"]},
                              {"hidden_size": 96}, "EAGLE3")
    assert found == (["the draft's fc.weight takes %d inputs, not a multiple of the target's hidden_size 96: the draft "
                      "was trained for another target" % inputs] if problem else [])
    assert dr.shape_problems({"fc.weight": [64]}, {"architectures": FULL["architectures"]}, {"hidden_size": 96},
                             "EAGLE3") == []
    assert dr.shape_problems({"fc.weight": [64, inputs]}, {"architectures": FULL["architectures"]}, {}, "EAGLE3") == []


def test_long_values_in_draft_messages_are_cut_at_their_limits():
    archs = ["A" * 100, 1]
    assert _refused(dr.draft_problems, dict(DRAFT, architectures=archs), TARGET, "EAGLE3") == (
        "the draft's config.json architectures: %s is not a list of class names: restore the publisher's file"
        % untrusted.printable(archs, 80))
    long_eagle3 = ["LlamaForCausalLMEagle3" + "x" * 250]
    assert untrusted.printable(long_eagle3, 200) in dr.draft_problems(dict(DRAFT, architectures=long_eagle3), TARGET,
                                                                      "EAGLE")[0]
    assert untrusted.printable(long_eagle3, 201) not in dr.draft_problems(dict(DRAFT, architectures=long_eagle3),
                                                                          TARGET, "EAGLE")[0]
    long_plain = ["LlamaForCausalLM" + "x" * 250]
    found = dr.draft_problems(dict(DRAFT, architectures=long_plain), TARGET, "EAGLE3")[0]
    assert untrusted.printable(long_plain, 200) in found and untrusted.printable(long_plain, 201) not in found
    floats = [1.0] * 60
    assert dr.draft_problems(dict(DRAFT, eagle_config={"eagle_aux_hidden_state_layer_ids": floats}), TARGET,
                             "EAGLE3") == ["the draft's eagle_config.eagle_aux_hidden_state_layer_ids %s is not a list "
                                           "of layer numbers" % untrusted.printable(floats, 120)]
    ids = list(range(100, 160))
    assert dr.draft_problems(dict(DRAFT, eagle_config={"eagle_aux_hidden_state_layer_ids": ids}), TARGET, "EAGLE3") == [
        "the draft's eagle_aux_hidden_state_layer_ids %s name layers [100, 101, 102, 103, 104 and 55 more] that the "
        "target (8 layers, ids 0..6 usable) does not have: the draft was trained for another target"
        % untrusted.printable(ids, 120)]
    shape = [1] * 40
    assert dr.shape_problems({"norm.weight": shape}, FULL, {}, "EAGLE3") == [
        "the draft's norm.weight is %s in its weights, but hidden_size 64 make it [64]: the config does not describe "
        "these weights" % untrusted.printable(shape, 80)]
    shapes = dr.eagle3_expected_shapes(FULL, {})
    assert shapes["layers.0.hidden_norm.weight"][1] == shapes["layers.0.input_layernorm.weight"][1] == "hidden_size 64"
