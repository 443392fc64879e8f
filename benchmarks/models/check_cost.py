#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model check's own cost on the seed's case (issue 33): 64 shards, each a real safetensors header of
``--tensors`` tensors (small data, so the header parsing is what is timed), an index naming every tensor, a config
and a tokenizer. Times models/checkpoint.check_checkpoint (one process, then forked children as the check runs it)
and models/verify.verify_tree, the median of ``--runs``; run it on two commits to compare.

  python3 benchmarks/models/check_cost.py [--shards 64] [--tensors 3300] [--runs 5] [--dir /var/tmp/x] [--repo DIR]
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import shutil
import statistics
import struct
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_tree(root, shards, tensors):
    """``shards`` safetensors files of ``tensors`` tensors each (I8 [2, 4]: 8 bytes of data), index, config."""
    os.makedirs(root)
    weight_map = {}
    for s in range(shards):
        name = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        header, offset = {}, 0
        for t in range(tensors):
            tensor = "model.layers.%d.mlp.experts.%d.down_proj.weight_packed" % (s, t)
            header[tensor] = {"dtype": "I8", "shape": [2, 4], "data_offsets": [offset, offset + 8]}
            offset += 8
            weight_map[tensor] = name
        header["__metadata__"] = {"format": "pt"}
        raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
        raw += b" " * (-len(raw) % 8)
        with open(os.path.join(root, name), "wb") as f:
            f.write(struct.pack("<Q", len(raw)) + raw + b"\0" * offset)
    with open(os.path.join(root, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 8 * shards * tensors}, "weight_map": weight_map}, f)
    with open(os.path.join(root, "config.json"), "w") as f:
        json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
                   "num_hidden_layers": shards, "vocab_size": 256}, f)
    with open(os.path.join(root, "tokenizer.json"), "w") as f:
        json.dump({"model": {"vocab": dict(("t%d" % i, i) for i in range(256))}}, f)


def median_time(runs, fn):
    """(median wall s, best wall s, median CPU s of this process) of ``runs`` calls (CPU time: a busy shared
    machine stretches the wall clock, not the work done)."""
    times, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        problems = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        assert not problems, problems[:3]
    return statistics.median(times), min(times), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--tensors", type=int, default=3300)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--repo", default=REPO, help="the checkout whose check is timed (default: this one)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.repo, "collections"))  # that checkout as ansible_collections.llmserve.sglang
    from ansible_collections.llmserve.sglang.plugins.module_utils.models import checkpoint, verify
    base = tempfile.mkdtemp(prefix="check-cost-", dir=args.dir)
    try:
        root = os.path.join(base, "seed")
        write_tree(root, args.shards, args.tensors)
        size = sum(os.path.getsize(os.path.join(root, n)) for n in os.listdir(root))
        print("%d shards x %d tensors, %.1f MB on disk, %d cores" % (args.shards, args.tensors, size / 1e6,
                                                                    os.cpu_count() or 1))
        one = median_time(args.runs, lambda: checkpoint._check_sharded(root, workers=1))
        forked = median_time(args.runs, lambda: checkpoint._check_sharded(root))
        tree = median_time(args.runs, lambda: verify.verify_tree(root, mode="structure")["problems"])
        for label, (med, best, cpu) in (("structure, one process", one), ("structure, as the check runs it", forked),
                                        ("verify_tree (structure, config, tokenizer)", tree)):
            print("  %-45s median %.3f s  best %.3f s  CPU here %.3f s  (%d runs)" % (label, med, best, cpu,
                                                                                     args.runs))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
