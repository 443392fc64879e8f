# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make a full-cost target and an EAGLE-3 draft that fits it BY CONSTRUCTION (no training, no hub).

    make_fitting_models.py OUT_DIR [--agree K] [--hidden H] [--layers L]
        -> OUT_DIR/llama-fixed (target), OUT_DIR/eagle3-fixed (draft), tokenizer from make_tiny_models

Why: a random draft accepts nothing (accept length 1.00), so on a GPU host without real weights the benchmark could
only show speculation losing. This pair gives SGLang a real verify path at real cost with a known acceptance.

The target (LlamaForCausalLM, random layers at full size: every matmul runs) has a greedy output fixed by
construction: every token embedding carries the same large component on dim 0 (EMBED0), no layer writes dim 0
(row 0 of every o_proj and down_proj is zero), the final norm keeps dim 0 only and the lm_head column 0 is zero
except for token TOKEN_T. Its logits do not depend on the context: it always emits TOKEN_T.

The draft (LlamaForCausalLMEagle3, SGLang's llama_eagle3 loader; SGLang gives it the TARGET's embedding):
- fc sums dim 0 of the three auxiliary hidden states (3 x EMBED0) into its dim 0;
- its attention adds a constant DELTA to dim 1 at every forward: v_proj reads only dim 0 of the normed
  embedding (the same for every token), so every value vector is the same and so is any softmax mix of them;
  o_proj row 1 turns that vector into DELTA, row 0 is zero; the MLP writes neither dim (down_proj rows 0, 1 zero);
- draft token k comes from a hidden state with dim 0 = 3 x EMBED0 and dim 1 = k x DELTA (draft-extend gives
  token 1, each further draft step feeds its pre-norm output back: one more DELTA);
- the final norm keeps dims 0 and 1, lm_head row TOKEN_T reads dim 0 (weight A), row TOKEN_U reads dim 1 (1.0):
  token k is TOKEN_T while A x 3 x EMBED0 > k x DELTA, else TOKEN_U.
A is chosen so that exactly K draft tokens agree with the target, then one disagrees: accept length K + 1 with
num_steps >= K + 1 (K = num_steps gives num_steps + 1: every draft token accepted).

What this shows: SGLang's real draft/verify path, its real cost (a full-size target verifying num_steps + 1 tokens
per request; a one-layer draft), CUDA graphs, and where that cost stops paying at a KNOWN acceptance. What it
does not show: a real model's acceptance, which varies with the text; here it is constant by construction.
"""
import argparse
import json
import os
import sys

import torch
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_models as tiny  # noqa: E402  (its tokenizer, config and file layout)

EMBED0 = 100.0         # dim 0 of every token embedding (the rest is N(0, 0.02))
DELTA = 100.0          # what each draft forward adds to dim 1
TOKEN_T, TOKEN_U = 300, 301   # the target's only output; the draft's "wrong" token (both < DRAFT_VOCAB)
DRAFT_VOCAB = 1024


def rand(*shape, device):
    return (torch.randn(*shape, device=device) * 0.02).to(torch.bfloat16)


def target_weights(hidden, inter, heads, kv_heads, layers, vocab, device):
    head_dim = hidden // heads
    embed = rand(vocab, hidden, device=device)
    embed[:, 0] = EMBED0
    norm = torch.zeros(hidden, dtype=torch.bfloat16, device=device)
    norm[0] = 1.0
    head = torch.zeros(vocab, hidden, dtype=torch.bfloat16, device=device)
    head[TOKEN_T, 0] = 1.0
    w = {"model.embed_tokens.weight": embed, "model.norm.weight": norm, "lm_head.weight": head}
    for i in range(layers):
        p = "model.layers.%d." % i
        o_proj, down = rand(hidden, heads * head_dim, device=device), rand(hidden, inter, device=device)
        o_proj[0] = 0   # no layer writes dim 0: it stays EMBED0 up to the final norm
        down[0] = 0
        w.update({p + "self_attn.q_proj.weight": rand(heads * head_dim, hidden, device=device),
                  p + "self_attn.k_proj.weight": rand(kv_heads * head_dim, hidden, device=device),
                  p + "self_attn.v_proj.weight": rand(kv_heads * head_dim, hidden, device=device),
                  p + "self_attn.o_proj.weight": o_proj,
                  p + "mlp.gate_proj.weight": rand(inter, hidden, device=device),
                  p + "mlp.up_proj.weight": rand(inter, hidden, device=device),
                  p + "mlp.down_proj.weight": down,
                  p + "input_layernorm.weight": torch.ones(hidden, dtype=torch.bfloat16, device=device),
                  p + "post_attention_layernorm.weight": torch.ones(hidden, dtype=torch.bfloat16, device=device)})
    return w


def draft_weights(hidden, inter, heads, kv_heads, vocab, agree, device):
    head_dim = hidden // heads

    def ones(n):
        return torch.ones(n, dtype=torch.bfloat16, device=device)

    fc = rand(hidden, 3 * hidden, device=device)
    fc[0] = 0
    fc[1] = 0
    for k in range(3):
        fc[0, k * hidden] = 1.0          # dim 0 = sum of the aux states' dim 0 = 3 x EMBED0
    v = torch.zeros(kv_heads * head_dim, 2 * hidden, dtype=torch.float32, device=device)
    v[:, 0] = torch.randn(kv_heads * head_dim, device=device) * 0.02 + 0.05   # reads dim 0 of the normed embedding
    # Every value vector is v[:, 0] * e0n, e0n = dim 0 of the normed embedding (~ EMBED0 / rms, the same for every
    # token); the attention output repeats each kv head over its query heads (GQA).
    e0n = EMBED0 / ((EMBED0 ** 2 + (hidden - 1) * 0.02 ** 2) / hidden) ** 0.5
    attn_out = (v[:, 0] * e0n).view(kv_heads, head_dim).repeat_interleave(heads // kv_heads, dim=0).reshape(-1)
    o_proj = rand(hidden, heads * head_dim, device=device).float()
    o_proj[0] = 0
    o_proj[1] = DELTA * attn_out / attn_out.dot(attn_out)
    down = rand(hidden, inter, device=device)
    down[0] = 0
    down[1] = 0
    norm = torch.zeros(hidden, dtype=torch.bfloat16, device=device)
    norm[0] = norm[1] = 1.0
    # Token k (dim 1 = k x DELTA) is T while A x 3 x EMBED0 > k x DELTA: A between agree and agree + 1 steps.
    a = (agree + 0.5) * DELTA / (3 * EMBED0)
    head = torch.zeros(DRAFT_VOCAB, hidden, dtype=torch.bfloat16, device=device)
    head[TOKEN_T, 0] = a
    head[TOKEN_U, 1] = 1.0
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[:DRAFT_VOCAB] = True
    w = {"midlayer.hidden_norm.weight": ones(hidden), "midlayer.input_layernorm.weight": ones(hidden),
         "midlayer.post_attention_layernorm.weight": ones(hidden), "fc.weight": fc, "norm.weight": norm,
         "lm_head.weight": head, "embed_tokens.weight": rand(vocab, hidden, device=device),
         "d2t": torch.zeros(DRAFT_VOCAB, dtype=torch.int64), "t2d": t2d,
         "midlayer.self_attn.q_proj.weight": rand(heads * head_dim, 2 * hidden, device=device),
         "midlayer.self_attn.k_proj.weight": rand(kv_heads * head_dim, 2 * hidden, device=device),
         "midlayer.self_attn.v_proj.weight": v.to(torch.bfloat16),
         "midlayer.self_attn.o_proj.weight": o_proj.to(torch.bfloat16),
         "midlayer.mlp.gate_proj.weight": rand(inter, hidden, device=device),
         "midlayer.mlp.up_proj.weight": rand(inter, hidden, device=device),
         "midlayer.mlp.down_proj.weight": down}
    return w, a


def save(weights, folder):
    save_file({k: t.contiguous().cpu() for k, t in weights.items()}, os.path.join(folder, "model.safetensors"),
              metadata={"format": "pt"})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("out_dir")
    ap.add_argument("--agree", type=int, default=2, help="draft tokens that agree before one that does not")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--inter", type=int, default=11008)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    args = ap.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    target, draft = os.path.join(args.out_dir, "llama-fixed"), os.path.join(args.out_dir, "eagle3-fixed")
    os.makedirs(target, exist_ok=True)
    os.makedirs(draft, exist_ok=True)
    n_tokens = tiny.make_tokenizer(target)
    dims = dict(hidden_size=args.hidden, intermediate_size=args.inter, num_attention_heads=args.heads,
                num_key_value_heads=args.kv_heads, head_dim=args.hidden // args.heads)
    torch.manual_seed(0)
    save(target_weights(args.hidden, args.inter, args.heads, args.kv_heads, args.layers, tiny.VOCAB, device), target)
    with open(os.path.join(target, "config.json"), "w") as fh:
        json.dump(tiny.llama_config(num_hidden_layers=args.layers, **dims), fh, indent=1)
    weights, a = draft_weights(args.hidden, args.inter, args.heads, args.kv_heads, tiny.VOCAB, args.agree, device)
    save(weights, draft)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        with open(os.path.join(target, name), "rb") as src, open(os.path.join(draft, name), "wb") as dst:
            dst.write(src.read())
    aux = [1, args.layers // 2 - 1, args.layers - 4]
    with open(os.path.join(draft, "config.json"), "w") as fh:
        json.dump(tiny.llama_config(architectures=["LlamaForCausalLMEagle3"], num_hidden_layers=1,
                                    draft_vocab_size=DRAFT_VOCAB, target_hidden_size=args.hidden,
                                    eagle_config={"eagle_aux_hidden_state_layer_ids": aux}, **dims), fh, indent=1)
    for folder in (target, draft):
        for name in os.listdir(folder):
            os.chmod(os.path.join(folder, name), 0o644)
    size = os.path.getsize(os.path.join(target, "model.safetensors")) / 2**30
    facts = (target, size, args.layers, args.hidden, n_tokens, TOKEN_T, draft, args.agree, a, aux)
    print("made %s (%.2f GiB, %d layers, hidden %d, tokenizer %d tokens, greedy output token %d) and %s "
          "(agrees on %d draft tokens, A=%.3f, aux layers %s)" % facts)


if __name__ == "__main__":
    main()
