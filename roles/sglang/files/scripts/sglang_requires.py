# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Run with the virtualenv's python: print, as JSON, what the installed sglang wheel requires (its METADATA).
import json
import re
import sys
from importlib import metadata

TORCH_FAMILY = set(sys.argv[1].split(",")) if len(sys.argv) > 1 else {"torch", "torchvision", "torchaudio"}
KERNELS = {"sgl-kernel", "sglang-kernel"}


def canon(name):
    return re.sub(r"[-_.]+", "-", name).lower()


dist = metadata.distribution("sglang")
out = {"version": dist.version, "requires_python": dist.metadata.get("Requires-Python") or "",
       "torch": [], "kernel": [], "flashinfer": []}
for req in dist.requires or []:
    spec, _sep, marker = req.partition(";")
    if "extra" in marker:
        continue
    spec = spec.strip().replace(" ", "")
    name = canon(re.split(r"[\[<>=!~;]", spec, 1)[0])
    if name in TORCH_FAMILY:
        out["torch"].append(spec)
    elif name in KERNELS:
        out["kernel"].append(spec)
    elif name.startswith("flashinfer-"):
        out["flashinfer"].append(spec)
print(json.dumps(out))
