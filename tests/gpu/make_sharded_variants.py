# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-shard a small checkpoint the way the Hub stores big ones, and make it not whole in two ways (issue 20).

    python3 make_sharded_variants.py SRC OUTDIR [SHARDS]

SRC holds model.safetensors (tests/gpu/make_tiny_models.py). OUTDIR gets three checkpoints with an index
(model.safetensors.index.json + model-0000i-of-0000N.safetensors): ``sharded-good``; ``sharded-missing`` (shard 2
deleted: the index still names it); ``sharded-truncated`` (shard 2 cut to half its length, as an interrupted copy
leaves it). Needs torch and safetensors (the GPU host's).
"""
import json
import os
import shutil
import sys

from safetensors.torch import load_file, save_file


def shard(src, dest, count):
    weights = load_file(os.path.join(src, "model.safetensors"))
    names = sorted(weights)
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(src):
        if name != "model.safetensors" and os.path.isfile(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), dest)
    weight_map, total = {}, 0
    for i in range(count):
        part = names[i::count]
        fname = "model-%05d-of-%05d.safetensors" % (i + 1, count)
        save_file({n: weights[n] for n in part}, os.path.join(dest, fname), metadata={"format": "pt"})
        for n in part:
            weight_map[n] = fname
            total += weights[n].numel() * weights[n].element_size()
    with open(os.path.join(dest, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, fh, indent=1)
    for name in os.listdir(dest):
        os.chmod(os.path.join(dest, name), 0o644)
    return "model-%05d-of-%05d.safetensors" % (2, count)


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    src, out, count = argv[1], argv[2], int(argv[3]) if len(argv) == 4 else 3
    for variant in ("good", "missing", "truncated"):
        dest = os.path.join(out, "sharded-" + variant)
        second = shard(src, dest, count)
        path = os.path.join(dest, second)
        if variant == "missing":
            os.unlink(path)
        elif variant == "truncated":
            size = os.path.getsize(path)
            os.truncate(path, size // 2)
        print("%s: %s" % (dest, {"good": "whole", "missing": second + " deleted",
                                 "truncated": second + " cut to half"}[variant]))


if __name__ == "__main__":
    main(sys.argv)
