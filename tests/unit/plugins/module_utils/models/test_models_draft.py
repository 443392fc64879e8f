# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Draft-fits-target rules, on config.json files as the tiny writer lays them out (SGLang's field names)."""
import json
import os

import pytest

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
