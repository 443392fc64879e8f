# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the scenario's wheelhouse: the real sglang wheel (from the test cache) plus tiny stand-in wheels
named and versioned like the CUDA packages that SGLang pins (read from the real wheel's METADATA).

usage: build_wheelhouse.py DEST VERSION [--python 3.11] [--no-torch]   -> prints 'changed' or 'unchanged'
       build_wheelhouse.py DEST --torch 2.11.0+cu130 [--torch ...]      (torch stand-ins only, for base venvs)
--no-torch: the set a host that reuses its own torch needs (sglang, kernel and FlashInfer stand-ins).
"""
import argparse
import base64
import hashlib
import os
import re
import shutil
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "tests"))
import sglang_wheels as W  # noqa: E402

TORCH_INIT = '''"""llmserve test stand-in for torch (no CUDA here)."""
from . import version, cuda  # noqa: F401
__version__ = "{version}"
'''
TORCH_CUDA = '''def is_available():
    return False

def device_count():
    return 0

def get_arch_list():
    return ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
'''


def build(dest, dist, version, files, extras=()):
    norm = re.sub(r"[-.]+", "_", dist)
    name = "%s-%s-py3-none-any.whl" % (norm, version)
    path = os.path.join(dest, name)
    if os.path.exists(path):
        return False
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: llmserve test stand-in\n" % (dist, version)
    for e in extras:
        meta += "Provides-Extra: %s\n" % e
    distinfo = "%s-%s.dist-info" % (norm, version)
    files = dict(files)
    files[distinfo + "/METADATA"] = meta
    files[distinfo + "/WHEEL"] = "Wheel-Version: 1.0\nGenerator: llmserve\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for n, c in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (n, digest, len(c.encode())))
    record.append(distinfo + "/RECORD,,")
    files[distinfo + "/RECORD"] = "\n".join(record) + "\n"
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, c in files.items():
            z.writestr(n, c)
    os.replace(tmp, path)
    return True


def pin(reqs, name):
    for r in reqs:
        m = re.match(r"^%s(\[[^\]]*\])?==([^;\s]+)" % re.escape(name), r.replace(" ", ""), re.I)
        if m:
            return m.group(2)
    return None


def torch_stand_in(dest, torch_v):
    return build(dest, "torch", torch_v, {
        "torch/__init__.py": TORCH_INIT.format(version=torch_v),
        "torch/version.py": '__version__ = "%s"\ncuda = "13.0"\n' % torch_v,
        "torch/cuda.py": TORCH_CUDA})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dest")
    ap.add_argument("version", nargs="?")
    ap.add_argument("--python", default=None, help="CPython X.Y the sglang wheel must install on")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--torch", action="append", default=[], help="only build torch stand-ins of these versions")
    a = ap.parse_args()
    dest = a.dest
    os.makedirs(dest, exist_ok=True)
    changed = False
    if a.torch:
        for v in a.torch:
            changed |= torch_stand_in(dest, v)
        print("changed" if changed else "unchanged")
        return
    version = a.version
    whl = W.wheel_path(version, a.python)
    if not os.path.exists(os.path.join(dest, os.path.basename(whl))):
        shutil.copy(whl, dest)
        changed = True
    reqs = W.requires_dist(version)
    if not a.no_torch:
        torch_v = pin(reqs, "torch") + "+cu130"
        changed |= torch_stand_in(dest, torch_v)
        changed |= build(dest, "torchvision", "0.29.1+cu130", {"torchvision/__init__.py": ""})
        changed |= build(dest, "torchaudio", (pin(reqs, "torchaudio") or "2.11.0") + "+cu130", {"torchaudio/__init__.py": ""})
    for k in ("sglang-kernel", "sgl-kernel"):
        v = pin(reqs, k)
        if v:
            changed |= build(dest, k, v, {"sgl_kernel/__init__.py": "# stand-in\n"})
    fi = pin(reqs, "flashinfer_python")
    changed |= build(dest, "flashinfer-python", fi, {"flashinfer/__init__.py": "__version__ = %r\n" % fi}, extras=("cu13",))
    cubin = pin(reqs, "flashinfer_cubin")
    if cubin:
        changed |= build(dest, "flashinfer-cubin", cubin, {"flashinfer_cubin/__init__.py": ""})
    print("changed" if changed else "unchanged")


if __name__ == "__main__":
    main()
