# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
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

The vocabulary (issue 33: a CUDA device-side assert in the warm-up, 85 s after launch, on the H200): the draft's
lm_head scores ``draft_vocab_size`` tokens and llama_eagle3.load_weights makes ``hot_token_id = d2t +
arange(len(d2t))``, the target token of each draft token; the target embeds it, so every ``i + d2t[i]`` must be a
target token id (0 <= id < the target's ``vocab_size``), and without ``d2t`` the draft's ids are used as they are.
Every field is read with its type checked (host/untrusted): a wrong type is a refusal naming file and field.
"""

from __future__ import annotations

from itertools import islice
from operator import add

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted

EAGLE_ALGORITHMS = ("EAGLE", "EAGLE3")


DRAFT_CONFIG = "the draft's config.json"
TARGET_CONFIG = "the target's config.json"
# config fields that must be counts when present (a string or a list there is refused, named)
INT_FIELDS = ("hidden_size", "target_hidden_size", "vocab_size", "draft_vocab_size", "num_hidden_layers",
              "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size", "num_aux_hidden_states")


def text_config(config):
    """The part of a config that describes the language model (SGLang reads ``text_config`` when there is one)."""
    inner = config.get("text_config")
    if isinstance(inner, dict) and "hidden_size" not in config:
        return inner
    return config


def check_types(config, name):
    """Refused naming the field when a count this module reads is not an integer (or ``architectures`` not a
    list of names, ``eagle_config`` not an object)."""
    if not isinstance(config, dict):
        raise untrusted.Refused(name, "is %s, not an object" % untrusted.type_name(config), "restore the publisher's file")
    for prefix, part in (("", config), ("text_config.", text_config(config) if text_config(config) is not config
                                        else {})):
        for key in INT_FIELDS:
            untrusted.int_field(part, key, name, path=prefix + key, minimum=0)
    archs = untrusted.field(config, "architectures", (list, str), name)
    if isinstance(archs, list) and not all(isinstance(a, str) for a in archs):
        raise untrusted.Refused(name, "%s is not a list of class names" % untrusted.printable(archs, 80),
                                "restore the publisher's file", field="architectures")
    untrusted.field(config, "eagle_config", dict, name)
    untrusted.field(config, "tie_word_embeddings", bool, name)


def _is_eagle3(architectures):
    if isinstance(architectures, str):
        architectures = [architectures]
    return any("eagle3" in str(a).lower() for a in architectures)


def draft_problems(draft, target, algorithm):
    """Mismatches between a draft's and a target's config.json for ``algorithm``; each names the fields and values."""
    algorithm = (algorithm or "").upper()
    if algorithm not in EAGLE_ALGORITHMS:
        return []
    check_types(draft, DRAFT_CONFIG)
    check_types(target, TARGET_CONFIG)
    problems = []
    archs = draft.get("architectures") or []
    if _is_eagle3(archs) and algorithm == "EAGLE":
        problems.append("the draft is an EAGLE-3 model (architectures %s) but the algorithm is EAGLE: SGLang runs it "
                        "without the target's aux hidden states and accepts nothing (accept length 1.00); set "
                        "the algorithm to EAGLE3" % untrusted.printable(archs, 200))
    elif algorithm == "EAGLE3" and archs and not _is_eagle3(archs):
        problems.append("the algorithm is EAGLE3 but the draft's architectures %s are not an EAGLE-3 model; use an "
                        "EAGLE-3 draft or set the algorithm to EAGLE" % untrusted.printable(archs, 200))
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
        draft_head = draft.get("draft_vocab_size")
        if isinstance(target_vocab, int) and isinstance(draft_head, int) and draft_head > target_vocab:
            problems.append("the draft's %s is %d, above the target's vocab_size %d: the draft proposes tokens the "
                            "target does not have (SGLang fails with a CUDA device-side assert in its warm-up); use "
                            "a draft made for this target" % ("draft_vocab_size", draft_head, target_vocab))
    return problems


def d2t_problems(d2t, target):
    """The draft's ``d2t`` values (offsets: target id = draft id + d2t[draft id]) against the target's vocab_size."""
    target_vocab = text_config(target).get("vocab_size")
    if not isinstance(target_vocab, int) or not len(d2t):
        return []
    low = min(map(add, d2t, range(len(d2t))))  # C-level passes: a million entries, no list of them
    high = max(map(add, d2t, range(len(d2t))))
    problems = []
    if high >= target_vocab or low < 0:
        outside = (i for i, t in enumerate(map(add, d2t, range(len(d2t)))) if not 0 <= t < target_vocab)
        first = list(islice(outside, 3))
        count = len(first) + sum(1 for _i in outside)
        problems.append("the draft's d2t maps %d of its %d tokens outside the target's vocabulary (target ids %d..%d, "
                        "the target's vocab_size is %d; first draft ids: %s): SGLang fails with a CUDA device-side "
                        "assert in its warm-up; use a draft made for this target"
                        % (count, len(d2t), low, high, target_vocab,
                           untrusted.sample(first) + (" and %d more" % (count - 3) if count > 3 else "")))
    return problems


def _aux_problems(draft, target_layers):
    eagle_config = draft.get("eagle_config") or {}
    layer_ids = eagle_config.get("eagle_aux_hidden_state_layer_ids") if isinstance(eagle_config, dict) else None
    if layer_ids is None:
        return []
    if not isinstance(layer_ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in layer_ids):
        return ["the draft's eagle_config.eagle_aux_hidden_state_layer_ids %s is not a list of layer numbers"
                % (untrusted.printable(layer_ids, 120),)]
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
                            % (untrusted.printable(layer_ids, 120), "[%s]" % untrusted.sample(outside, 5),
                               target_layers, target_layers - 2))
    return problems


def _eagle3_aux_count(draft):
    # llama_eagle3.LlamaModel: num_aux_hidden_states, else len(eagle_aux_hidden_state_layer_ids), else 3
    declared = draft.get("num_aux_hidden_states")
    if isinstance(declared, int) and declared > 0:
        return declared
    eagle_config = draft.get("eagle_config") if isinstance(draft.get("eagle_config"), dict) else {}
    ids = eagle_config.get("eagle_aux_hidden_state_layer_ids")
    return len(ids) if isinstance(ids, list) and ids else 3


def _normalise(name):
    # llama_eagle3.load_weights: the legacy "midlayer" is layers.0; tensors may carry the "model." prefix
    name = name[len("model."):] if name.startswith("model.") else name
    return name.replace("midlayer.", "layers.0.")


def eagle3_expected_shapes(draft, target):
    """{tensor: (shape, why)} an EAGLE-3 draft (SGLang's llama_eagle3) must have, from its config and the target's.

    Only what the configs determine: a dimension whose field is absent is not judged.
    """
    text, target_text = text_config(draft), text_config(target)
    hidden = text.get("hidden_size")
    if not isinstance(hidden, int):
        return {}
    hidden_in = draft.get("target_hidden_size") or hidden
    aux = _eagle3_aux_count(draft)
    vocab = text.get("vocab_size")
    draft_vocab = draft.get("draft_vocab_size") or vocab
    heads, kv_heads = text.get("num_attention_heads"), text.get("num_key_value_heads") or text.get("num_attention_heads")
    head_dim = text.get("head_dim") or (hidden // heads if isinstance(heads, int) and heads else None)
    inter = text.get("intermediate_size")
    out = {"fc.weight": ([hidden, hidden_in * aux],
                         "hidden_size %s x (target_hidden_size %s x %d aux layers)" % (hidden, hidden_in, aux)),
           "layers.0.hidden_norm.weight": ([hidden], "hidden_size %s" % hidden),
           "layers.0.input_layernorm.weight": ([hidden], "hidden_size %s" % hidden),
           "norm.weight": ([hidden], "hidden_size %s" % hidden)}
    if isinstance(vocab, int):
        out["embed_tokens.weight"] = ([vocab, hidden], "vocab_size %s x hidden_size %s" % (vocab, hidden))
        if not draft.get("tie_word_embeddings"):
            out["lm_head.weight"] = ([draft_vocab, hidden], "draft_vocab_size %s x hidden_size %s"
                                     % (draft_vocab, hidden))
        out["t2d"] = ([vocab], "vocab_size %s" % vocab)
        out["d2t"] = ([draft_vocab], "draft_vocab_size %s" % draft_vocab)
    if isinstance(heads, int) and isinstance(head_dim, int):
        why = "(heads x head_dim) x 2 hidden_size: the first layer takes the embedding and the fc output"
        out["layers.0.self_attn.q_proj.weight"] = ([heads * head_dim, 2 * hidden], why)
        out["layers.0.self_attn.k_proj.weight"] = ([kv_heads * head_dim, 2 * hidden], why)
        out["layers.0.self_attn.v_proj.weight"] = ([kv_heads * head_dim, 2 * hidden], why)
        out["layers.0.self_attn.o_proj.weight"] = ([hidden, heads * head_dim], "hidden_size x (heads x head_dim)")
    if isinstance(inter, int):
        for proj in ("gate_proj", "up_proj"):
            out["layers.0.mlp.%s.weight" % proj] = ([inter, hidden], "intermediate_size x hidden_size")
        out["layers.0.mlp.down_proj.weight"] = ([hidden, inter], "hidden_size x intermediate_size")
    target_hidden, target_vocab = target_text.get("hidden_size"), target_text.get("vocab_size")
    if isinstance(target_hidden, int):
        out["fc.weight"] = (out["fc.weight"][0], out["fc.weight"][1]
                            + "; the target gives %d aux states of hidden_size %d" % (aux, target_hidden))
    if isinstance(target_vocab, int) and "embed_tokens.weight" in out:
        out["embed_tokens.weight"] = (out["embed_tokens.weight"][0], out["embed_tokens.weight"][1]
                                      + "; the target's vocab_size is %d" % target_vocab)
    return out


def shape_problems(shapes, draft, target, algorithm):
    """The EAGLE-3 draft's tensor shapes (``shapes`` from its safetensors headers) against its own config and the
    target's: each problem names the tensor, its shape, the shape expected and the fields that say so."""
    if (algorithm or "").upper() != "EAGLE3" or not _is_eagle3(draft.get("architectures") or []):
        return []
    check_types(draft, DRAFT_CONFIG)
    check_types(target, TARGET_CONFIG)
    have = dict((_normalise(k), v) for k, v in shapes.items())
    problems, more = [], []
    expected = eagle3_expected_shapes(draft, target)
    first = [n for n in ("fc.weight", "embed_tokens.weight", "lm_head.weight") if n in expected]
    for name in first + sorted(n for n in expected if n not in first):
        want, why = expected[name]
        got = have.get(name)
        if got is not None and list(got) != list(want):
            if len(problems) < 3:
                problems.append("the draft's %s is %s in its weights, but %s make it %s: the config does not "
                                "describe these weights" % (name, untrusted.printable(list(got), 80), why, want))
            else:
                more.append(name)
    if more:
        problems.append("and %d more of the draft's tensors do not have the shapes its config gives: %s"
                        % (len(more), ", ".join(more)))  # at most the dozen names eagle3_expected_shapes gives
    fc = have.get("fc.weight")
    target_hidden = text_config(target).get("hidden_size")
    if fc is not None and len(fc) == 2 and isinstance(target_hidden, int) and target_hidden > 0 and fc[1] % target_hidden:
        problems.append("the draft's fc.weight takes %d inputs, not a multiple of the target's hidden_size %d: the "
                        "draft was trained for another target" % (fc[1], target_hidden))
    return problems
