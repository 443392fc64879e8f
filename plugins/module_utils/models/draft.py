# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does a speculative draft fit its target? Read from both config.json files (stdlib only, Python >= 3.8).

The fields and their meaning are SGLang's (0.5.15.post1): srt/models/llama_eagle3.py and kimi_k25_eagle3.py take the
draft's input width from ``target_hidden_size`` (else ``hidden_size``) and the number of aux hidden states from
``eagle_config.eagle_aux_hidden_state_layer_ids``; srt/model_executor/model_runner.py hands those ids to the
target's ``set_eagle3_layers_to_capture``, which captures the input of layer ``id + 1`` - so an id must be at most
``num_hidden_layers - 2`` or that state is never captured. The draft embeds the target's token ids (``vocab_size``);
``draft_vocab_size`` may be smaller (the hot-token head). A multimodal target keeps these in ``text_config``
(SGLang's get_hf_text_config).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

EAGLE_ALGORITHMS = ("EAGLE", "EAGLE3")


def text_config(config):
    """The part of a config that describes the language model (SGLang reads ``text_config`` when there is one)."""
    inner = config.get("text_config")
    if isinstance(inner, dict) and "hidden_size" not in config:
        return inner
    return config


def _is_eagle3(architectures):
    return any("eagle3" in str(a).lower() for a in architectures)


def draft_problems(draft, target, algorithm):
    """Mismatches between a draft's and a target's config.json for ``algorithm``; each names the fields and values."""
    algorithm = (algorithm or "").upper()
    if algorithm not in EAGLE_ALGORITHMS:
        return []
    problems = []
    archs = draft.get("architectures") or []
    if _is_eagle3(archs) and algorithm == "EAGLE":
        problems.append("the draft is an EAGLE-3 model (architectures %s) but the algorithm is EAGLE: SGLang runs it "
                        "without the target's aux hidden states and accepts nothing (accept length 1.00); set "
                        "the algorithm to EAGLE3" % archs)
    elif algorithm == "EAGLE3" and archs and not _is_eagle3(archs):
        problems.append("the algorithm is EAGLE3 but the draft's architectures %s are not an EAGLE-3 model; use an "
                        "EAGLE-3 draft or set the algorithm to EAGLE" % archs)
    draft_text, target_text = text_config(draft), text_config(target)
    target_hidden = target_text.get("hidden_size")
    draft_in = draft.get("target_hidden_size", draft.get("hidden_size"))
    field = "target_hidden_size" if "target_hidden_size" in draft else "hidden_size"
    if target_hidden is not None and draft_in is not None and draft_in != target_hidden:
        problems.append("the draft's %s is %s, the target's hidden_size is %s: the draft was trained for another "
                        "target" % (field, draft_in, target_hidden))
    target_vocab, draft_vocab = target_text.get("vocab_size"), draft_text.get("vocab_size")
    if target_vocab is not None and draft_vocab is not None and draft_vocab != target_vocab:
        problems.append("the draft's vocab_size is %s, the target's is %s: the draft was trained with another "
                        "tokenizer" % (draft_vocab, target_vocab))
    if algorithm == "EAGLE3":
        problems.extend(_aux_problems(draft, target_text.get("num_hidden_layers")))
    return problems


def _aux_problems(draft, target_layers):
    eagle_config = draft.get("eagle_config") or {}
    layer_ids = eagle_config.get("eagle_aux_hidden_state_layer_ids") if isinstance(eagle_config, dict) else None
    if layer_ids is None:
        return []
    if not isinstance(layer_ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in layer_ids):
        return ["the draft's eagle_config.eagle_aux_hidden_state_layer_ids %r is not a list of layer numbers"
                % (layer_ids,)]
    problems = []
    declared = draft.get("num_aux_hidden_states")
    if declared is not None and declared != len(layer_ids):
        problems.append("the draft's num_aux_hidden_states is %s but eagle_aux_hidden_state_layer_ids names %d "
                        "layers" % (declared, len(layer_ids)))
    if target_layers is not None:
        # SGLang captures the input of layer id + 1, which must be one of the target's layers.
        outside = [i for i in layer_ids if not 0 <= i <= target_layers - 2]
        if outside:
            problems.append("the draft's eagle_aux_hidden_state_layer_ids %s name layers %s that the target (%d "
                            "layers, ids 0..%d usable) does not have: the draft was trained for another target"
                            % (layer_ids, outside, target_layers, target_layers - 2))
    return problems
