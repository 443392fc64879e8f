#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write small but real checkpoints: sharded safetensors with an index, config.json, a tokenizer, an EAGLE-3 draft.

Used by the unit tests, benchmarks/models and the molecule scenario `models`. Stdlib only, so it runs on the
fleet hosts too. The safetensors layout is the format's own (8-byte little-endian header length, JSON header,
data), tensors laid out in name order with no gap, as the safetensors library writes them.

    tiny_checkpoint.py target DIR [--shards 4] [--shard-mib 1] [--layers 8] [--hidden 64] [--vocab 256]
    tiny_checkpoint.py draft DIR [--hidden 64] [--vocab 256] [--aux 1,3,5] [--arch LlamaForCausalLMEagle3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import struct


def write_safetensors(path, tensors, fill=b"\x01", metadata=None):
    """tensors: {name: (dtype, shape)}; every element 2 bytes wide (BF16/F16) or as DTYPE_WIDTH says."""
    widths = {"BF16": 2, "F16": 2, "F32": 4, "I64": 8, "U8": 1}
    header = {}
    offset = 0
    for name in sorted(tensors):
        dtype, shape = tensors[name]
        count = 1
        for dim in shape:
            count *= dim
        nbytes = count * widths[dtype]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    if metadata:
        header["__metadata__"] = metadata
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # the library pads the header to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        block = fill * (1 << 20)
        for name in sorted(tensors):
            begin, end = header[name]["data_offsets"]
            # an EAGLE-3 d2t holds offsets to target ids: zeros map each draft token to the same target id
            chunk = b"\0" * len(block) if name.rsplit(".", 1)[-1] == "d2t" else block
            left = end - begin
            while left:
                n = min(left, len(chunk))
                f.write(chunk[:n])
                left -= n
    return offset


def write_target(root, shards=4, shard_mib=1, layers=8, hidden=64, vocab=256, arch="LlamaForCausalLM"):
    """A sharded target: ``shards`` files of about ``shard_mib`` MiB, an index naming every tensor."""
    os.makedirs(root, exist_ok=True)
    rows = max(1, (shard_mib << 20) // (hidden * 2))
    weight_map = {}
    total = 0
    for i in range(shards):
        name = "model-%05d-of-%05d.safetensors" % (i + 1, shards)
        tensors = {"model.layers.%d.mlp.weight" % i: ("BF16", (rows, hidden)),
                   "model.layers.%d.norm.weight" % i: ("BF16", (hidden,))}
        total += write_safetensors(os.path.join(root, name), tensors, fill=bytes([i % 251 + 1]))
        for tensor in tensors:
            weight_map[tensor] = name
    with open(os.path.join(root, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)
    config = {"architectures": [arch], "model_type": "llama", "hidden_size": hidden, "vocab_size": vocab,
              "num_hidden_layers": layers}
    with open(os.path.join(root, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    with open(os.path.join(root, "tokenizer.json"), "w") as f:
        json.dump({"model": {"type": "BPE", "vocab": dict(("t%d" % i, i) for i in range(vocab))}}, f)
    return root


def write_draft(root, hidden=64, vocab=256, aux=(1, 3, 5), arch="LlamaForCausalLMEagle3", draft_vocab=None):
    """An EAGLE-3 draft for a target of ``hidden`` and ``vocab``; one safetensors file."""
    os.makedirs(root, exist_ok=True)
    write_safetensors(os.path.join(root, "model.safetensors"),
                      {"fc.weight": ("BF16", (hidden, hidden * len(aux))),
                       "midlayer.self_attn.q_proj.weight": ("BF16", (hidden, hidden))})
    config = {"architectures": [arch], "model_type": "llama", "hidden_size": hidden, "target_hidden_size": hidden,
              "vocab_size": vocab,
              "draft_vocab_size": draft_vocab or vocab, "num_hidden_layers": 1,
              "eagle_config": {"eagle_aux_hidden_state_layer_ids": list(aux), "use_aux_hidden_state": True}}
    with open(os.path.join(root, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return root


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["target", "draft"])
    parser.add_argument("dir")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--shard-mib", type=int, default=1)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--vocab", type=int, default=256)
    parser.add_argument("--aux", default="1,3,5")
    parser.add_argument("--arch", default=None)
    args = parser.parse_args()
    if args.what == "target":
        write_target(args.dir, args.shards, args.shard_mib, args.layers, args.hidden, args.vocab,
                     args.arch or "LlamaForCausalLM")
    else:
        write_draft(args.dir, args.hidden, args.vocab, [int(x) for x in args.aux.split(",")],
                    args.arch or "LlamaForCausalLMEagle3")


if __name__ == "__main__":
    main()
