# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make a tiny random-weight Llama and a random EAGLE-3 draft for it, on the spot (no hub, no download).

    make_tiny_models.py OUT_DIR            -> OUT_DIR/llama-tiny, OUT_DIR/eagle3-tiny

The target: LlamaForCausalLM, hidden 256, 4 layers (EAGLE-3 reads auxiliary hidden states from 3 distinct
layers), vocab 4096, bf16 safetensors, a BPE tokenizer trained here with `tokenizers` and a chat template.
The draft: LlamaForCausalLMEagle3, one layer, draft vocabulary 1024 with d2t/t2d maps, the names SGLang's
llama_eagle3 loader reads. Weights are random: the draft predicts nothing, so its acceptance is near zero.
That is the point of the accept-length check, not a bug. Needs torch, safetensors and tokenizers only.
"""
import glob
import json
import os
import sys
import sysconfig

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HIDDEN, INTER, HEADS, KV_HEADS, LAYERS, VOCAB, DRAFT_VOCAB, CTX = 256, 512, 4, 2, 4, 4096, 1024, 4096
HEAD_DIM = HIDDEN // HEADS
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
SPECIALS = ["<unk>", "<s>", "</s>", "<pad>", "<|system|>", "<|user|>", "<|assistant|>"]


def corpus():
    """Some English-ish text that every Python install carries: the standard library's docstrings."""
    for path in sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py")))[:400]:
        with open(path, encoding="utf-8", errors="ignore") as fh:
            yield fh.read()


def make_tokenizer(out):
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus(), trainer=trainer)
    tok.save(os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as fh:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
                   "unk_token": "<unk>", "pad_token": "<pad>", "model_max_length": CTX,
                   "chat_template": CHAT_TEMPLATE}, fh, indent=1)
    return tok.get_vocab_size()


def rand(*shape):
    return (torch.randn(*shape) * 0.02).to(torch.bfloat16)


def ones(n):
    return torch.ones(n, dtype=torch.bfloat16)


def llama_config(**extra):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
           "intermediate_size": INTER, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
           "head_dim": HEAD_DIM, "num_hidden_layers": LAYERS, "vocab_size": VOCAB,
           "max_position_embeddings": CTX, "rms_norm_eps": 1e-5, "hidden_act": "silu", "rope_theta": 10000.0,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
           "pad_token_id": 3}
    cfg.update(extra)
    return cfg


def layer(prefix, in_dim):
    return {
        prefix + "self_attn.q_proj.weight": rand(HEADS * HEAD_DIM, in_dim),
        prefix + "self_attn.k_proj.weight": rand(KV_HEADS * HEAD_DIM, in_dim),
        prefix + "self_attn.v_proj.weight": rand(KV_HEADS * HEAD_DIM, in_dim),
        prefix + "self_attn.o_proj.weight": rand(HIDDEN, HEADS * HEAD_DIM),
        prefix + "mlp.gate_proj.weight": rand(INTER, HIDDEN),
        prefix + "mlp.up_proj.weight": rand(INTER, HIDDEN),
        prefix + "mlp.down_proj.weight": rand(HIDDEN, INTER),
        prefix + "input_layernorm.weight": ones(HIDDEN),
        prefix + "post_attention_layernorm.weight": ones(HIDDEN),
    }


def make_target(out):
    os.makedirs(out, exist_ok=True)
    n_tokens = make_tokenizer(out)
    weights = {"model.embed_tokens.weight": rand(VOCAB, HIDDEN), "model.norm.weight": ones(HIDDEN),
               "lm_head.weight": rand(VOCAB, HIDDEN)}
    for i in range(LAYERS):
        weights.update(layer("model.layers.%d." % i, HIDDEN))
    save_file(weights, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as fh:
        json.dump(llama_config(), fh, indent=1)
    return n_tokens


def make_draft(out, target):
    os.makedirs(out, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        with open(os.path.join(target, name), "rb") as src, open(os.path.join(out, name), "wb") as dst:
            dst.write(src.read())
    # The draft predicts over the first DRAFT_VOCAB target ids: d2t holds target - draft id offsets (all 0).
    t2d = torch.zeros(VOCAB, dtype=torch.bool)
    t2d[:DRAFT_VOCAB] = True
    weights = {"midlayer.hidden_norm.weight": ones(HIDDEN), "fc.weight": rand(HIDDEN, 3 * HIDDEN),
               "norm.weight": ones(HIDDEN), "lm_head.weight": rand(DRAFT_VOCAB, HIDDEN),
               "embed_tokens.weight": rand(VOCAB, HIDDEN),
               "d2t": torch.zeros(DRAFT_VOCAB, dtype=torch.int64), "t2d": t2d}
    weights.update(layer("midlayer.", 2 * HIDDEN))
    save_file(weights, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as fh:
        # SGLang's default aux layers for a target of L layers are [2, L // 2, L - 3]: with 4 layers two of them
        # coincide and the fc input is 2x, not 3x, hidden (the real crash: "mat1 and mat2 shapes cannot be
        # multiplied (11x512 and 768x256)"). Name three distinct layers, as trained drafts do.
        json.dump(llama_config(architectures=["LlamaForCausalLMEagle3"], num_hidden_layers=1,
                               draft_vocab_size=DRAFT_VOCAB, target_hidden_size=HIDDEN,
                               eagle_config={"eagle_aux_hidden_state_layer_ids": [0, 1, 2]}), fh, indent=1)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    target, draft = os.path.join(argv[1], "llama-tiny"), os.path.join(argv[1], "eagle3-tiny")
    n = make_target(target)
    make_draft(draft, target)
    for folder in (target, draft):  # safetensors writes 0600; the server may run as another user
        for name in os.listdir(folder):
            os.chmod(os.path.join(folder, name), 0o644)
    print("made %s (tokenizer: %d tokens) and %s" % (target, n, draft))


if __name__ == "__main__":
    main(sys.argv)
