#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the default model check (issue 26) costs on every start, beside what loading the weights costs.

Two checkpoints, each checked as roles/server checks it (models/verify.verify_pair: structure of every shard,
tokenizer, the architecture against a real SGLang registry - sglang 0.5.15.post1's srt/models from the cached
wheel - and, as root, readability for another user in a child that drops to it):

  seed    the seed's case: 64 shards of ``--shard-gib`` GiB (Kimi-K2.5 int4 is about 595 GB in 64 shards), each a
          real safetensors header of ``--tensors`` int4-packed expert tensors, the data a sparse hole (nothing is
          written, so the check cannot be reading data); an index of every tensor
          - checked as on a first start (no record) and as on every later start (roles/server's cache_dir: the
          headers of shards unchanged since they were found whole are not parsed again)
  real    a checkpoint written by the safetensors library (``--real-mib`` MiB in 4 shards, bf16 tensors)

Baselines measured in the same run on the ``real`` checkpoint: reading every byte (the least any loader does, page
cache warm) and safetensors' own ``load_file`` of every shard (the library SGLang loads with). For the seed's size
the load cannot be run here; the run prints the check against SGLang's load times measured elsewhere and given on
the command line (``--load-s``: the H200's launch-to-READY of a 4-shard checkpoint, 114.6 s, and the seed log's
64 shards in 11 s - its shard progress bar alone, the smallest part of that start).

  python3 benchmarks/models/verify_cost.py [--dir /var/tmp/x] [--runs 5] [--shard-gib 9.3] [--tensors 3300]
"""

from __future__ import absolute_import, division, print_function

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "collections"))
sys.path.insert(0, os.path.join(REPO, "tests"))

from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_pair  # noqa: E402

_spec = importlib.util.spec_from_file_location("tiny_checkpoint",
                                               os.path.join(REPO, "tools", "models", "tiny_checkpoint.py"))
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)


def seed_checkpoint(root, shards, shard_gib, tensors):
    """64 sparse shards whose headers describe ``tensors`` int4-packed tensors each, exactly filling the file."""
    os.makedirs(root)
    target = int(shard_gib * (1 << 30))
    weight_map = {}
    per = target // tensors // 4 * 4  # bytes per tensor, I32-aligned
    cols = 1792  # 7168 bf16 inputs packed 8 int4 per I32 (Kimi/DeepSeek expert width)
    for s in range(shards):
        name = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        header, offset = {}, 0
        for t in range(tensors):
            layer, expert = divmod(s * tensors + t, 384)
            proj = ("gate_proj", "up_proj", "down_proj")[t % 3]
            tname = "model.layers.%d.mlp.experts.%d.%s.weight_packed" % (layer, expert, proj)
            rows = max(1, per // (cols * 4))
            nbytes = rows * cols * 4
            header[tname] = {"dtype": "I32", "shape": [rows, cols], "data_offsets": [offset, offset + nbytes]}
            weight_map[tname] = name
            offset += nbytes
        header["__metadata__"] = {"format": "pt"}
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)
        path = os.path.join(root, name)
        with open(path, "wb") as f:
            f.write(len(raw).to_bytes(8, "little"))
            f.write(raw)
        os.truncate(path, 8 + len(raw) + offset)  # a hole: the data is never written
    with open(os.path.join(root, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    with open(os.path.join(root, "config.json"), "w") as f:
        json.dump({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
                   "vocab_size": 163840, "num_hidden_layers": 61}, f)
    with open(os.path.join(root, "tiktoken.model"), "wb") as f:
        f.write(os.urandom(2 << 20))  # Kimi ships a 2.7 MB tiktoken.model
    with open(os.path.join(root, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "TikTokenTokenizer"}, f)
    return root


def real_checkpoint(root, mib):
    from safetensors.numpy import save_file
    import numpy as np
    tiny.write_target(root, shards=1)  # config.json and tokenizer.json
    os.remove(os.path.join(root, "model-00001-of-00001.safetensors"))
    rows = (mib << 20) // 4 // (4096 * 2)
    weight_map = {}
    for s in range(4):
        name = "model-%05d-of-00004.safetensors" % (s + 1)
        tensors = {"model.layers.%d.mlp.weight" % s: np.ones((rows, 4096), dtype=np.float16),
                   "model.layers.%d.norm.weight" % s: np.ones((4096,), dtype=np.float16)}
        save_file(tensors, os.path.join(root, name), metadata={"format": "pt"})
        weight_map.update((t, name) for t in tensors)
    with open(os.path.join(root, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    for n in os.listdir(root):
        os.chmod(os.path.join(root, n), 0o644)  # the library writes 0600: the server user could not read it
    return root


def sglang_registry(dest):
    import sglang_wheels as W
    with zipfile.ZipFile(W.wheel_path("0.5.15.post1")) as whl:
        whl.extractall(dest, [n for n in whl.namelist() if n.startswith("sglang/srt/models/") and n.endswith(".py")])
    os.makedirs(os.path.join(dest, "transformers", "models"))
    return {"models": os.path.join(dest, "sglang", "srt", "models"),
            "transformers": os.path.join(dest, "transformers", "models")}


def timed(runs, fn):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return times, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--shard-gib", type=float, default=9.3)
    ap.add_argument("--tensors", type=int, default=3300)
    ap.add_argument("--real-mib", type=int, default=512)
    ap.add_argument("--load-s", default="h200-launch-to-ready-4-shards=114.6,seed-64-shards-progress-bar=11")
    ap.add_argument("--user", default="nobody" if os.geteuid() == 0 else None)
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="llmserve-verify-cost-", dir=args.dir)
    os.chmod(base, 0o755)
    try:
        sglang = sglang_registry(os.path.join(base, "wheel"))
        t = time.perf_counter()
        seed = seed_checkpoint(os.path.join(base, "seed"), args.shards, args.shard_gib, args.tensors)
        made = time.perf_counter() - t
        apparent = sum(os.path.getsize(os.path.join(seed, n)) for n in os.listdir(seed))
        on_disk = sum(os.stat(os.path.join(seed, n)).st_blocks * 512 for n in os.listdir(seed))
        print("seed: %d shards, %.1f GB apparent, %.1f MB on disk, %d tensors, made in %.1f s"
              % (args.shards, apparent / 1e9, on_disk / 1e6, args.shards * args.tensors, made))
        check = lambda p: verify_pair(p, user=args.user, sglang=sglang)  # noqa: E731
        times, verdict = timed(args.runs, lambda: check(seed))
        assert verdict["ok"], verdict["problems"]
        print("  check (structure %d headers, tokenizer, registry, readable as %s): first %.3f s, best %.3f s"
              % (args.shards, args.user, times[0], min(times)))
        cache = os.path.join(base, "cache")
        verify_pair(seed, user=args.user, sglang=sglang, cache_dir=cache)  # the first start records it
        nxt, verdict = timed(args.runs, lambda: verify_pair(seed, user=args.user, sglang=sglang, cache_dir=cache))
        assert verdict["ok"] and "weights unchanged" in verdict["models"]["target"]["notes"][0]
        print("  every later start (roles/server's cache_dir: headers not parsed while no shard changed): best %.4f s"
              % min(nxt))
        from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import _check_sharded
        one, _ = timed(args.runs, lambda: _check_sharded(seed, workers=1))
        auto, _ = timed(args.runs, lambda: _check_sharded(seed))
        print("  structure alone: one process %.3f s, forked children (%d cores) %.3f s: %.2fx"
              % (min(one), os.cpu_count(), min(auto), min(one) / min(auto)))
        for item in args.load_s.split(","):
            label, secs = item.split("=")
            print("  vs SGLang load %-34s %7.1f s: first start %.3f%%, later starts %.4f%%"
                  % (label, float(secs), 100 * min(times) / float(secs), 100 * min(nxt) / float(secs)))

        real = real_checkpoint(os.path.join(base, "real"), args.real_mib)
        size = sum(os.path.getsize(os.path.join(real, n)) for n in os.listdir(real))
        shards = sorted(n for n in os.listdir(real) if n.endswith(".safetensors"))

        def read_all():
            for n in shards:
                with open(os.path.join(real, n), "rb") as f:
                    while f.read(1 << 24):
                        pass

        def load_all():
            from safetensors.numpy import load_file
            for n in shards:
                load_file(os.path.join(real, n))

        read_all()  # page cache warm on both sides of each ratio
        check_t, verdict = timed(args.runs, lambda: check(real))
        assert verdict["ok"], verdict["problems"]
        read_t, _ = timed(args.runs, read_all)
        load_t, _ = timed(args.runs, load_all)
        print("real: 4 shards written by safetensors %s, %.0f MB" % (__import__("safetensors").__version__,
                                                                      size / 1e6))
        print("  check %.4f s | read every byte %.3f s (%.1f GB/s) | safetensors load_file %.3f s  (best of %d)"
              % (min(check_t), min(read_t), size / min(read_t) / 1e9, min(load_t), args.runs))
        print("  check / read = %.2f%%, check / load_file = %.2f%%"
              % (100 * min(check_t) / min(read_t), 100 * min(check_t) / min(load_t)))
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
