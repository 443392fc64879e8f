# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rewrite a wheel without some of its files, RECORD updated, so it fits the device's 64 MiB carry.

    trim_wheel.py IN.whl OUT_DIR [--guard-dsa-import] [--lzma] PREFIX [PREFIX...]

Every member whose path starts with one of the PREFIXes is left out. --guard-dsa-import (sglang 0.5.15.post1):
the EAGLE v2 draft worker imports the DeepSeek sparse-attention backend at CUDA-graph capture whatever the
attention backend, and that imports the CuTe DSL (nvidia-cutlass-dsl-libs-base, a 74 MB wheel that does not fit
the carry): "ModuleNotFoundError: No module named 'cutlass'" on the H200. The import only adds that backend's
class to an isinstance list, so it is wrapped in try/except ImportError; with --attention-backend triton the
capture is the same as with the DSL installed. Used for the real-GPU run
(docs/evidence/real-sglang-h200/README.md): sglang-kernel without FA3/FlashMLA/SM100 objects (an H200 with
--attention-backend triton loads only sm90/common_ops), flashinfer without the cutlass/cccl headers that the
warm-up's norm JIT build does not include. Such a wheel serves that one GPU and nothing else.
--lzma (with or without PREFIXes) stores the members LZMA-compressed: pip reads any compression Python's zipfile
reads, and the carried set shrinks by about 5 MiB (the sglang-kernel library alone by 2.3 MiB).
"""
import base64
import hashlib
import os
import sys
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


# member -> (old, new): the one edit --guard-dsa-import makes
DSA_GUARD = {
    "sglang/srt/speculative/eagle_worker_v2.py": (
        """            from sglang.srt.layers.attention.dsa_backend import (
                DeepseekSparseAttnBackend,
            )

            graph_supported_backend_types.append(DeepseekSparseAttnBackend)
""",
        """            try:  # llmserve tests/gpu/trim_wheel.py --guard-dsa-import: no CuTe DSL carried
                from sglang.srt.layers.attention.dsa_backend import (
                    DeepseekSparseAttnBackend,
                )

                graph_supported_backend_types.append(DeepseekSparseAttnBackend)
            except ImportError:
                pass
"""),
}


def trim(src, out_dir, prefixes, edits=None, compression=zipfile.ZIP_DEFLATED):
    dst = os.path.join(out_dir, os.path.basename(src))
    dropped = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression) as zout:
        record_name = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
        lines = []
        for info in zin.infolist():
            name = info.filename
            if name == record_name:
                continue
            if any(name.startswith(p) for p in prefixes):
                dropped += 1
                continue
            data = zin.read(name)
            if edits and name in edits:
                old, new = edits[name]
                if old.encode() not in data:
                    raise SystemExit("%s: the text to edit is not in %s" % (src, name))
                data = data.replace(old.encode(), new.encode())
            zout.writestr(info, data, compress_type=compression)
            lines.append(record_line(name, data))
        lines.append("%s,," % record_name)
        zout.writestr(record_name, "\n".join(lines) + "\n")
    print("%s: dropped %d files, %.1f MiB -> %.1f MiB" % (
        os.path.basename(src), dropped, os.path.getsize(src) / 2**20, os.path.getsize(dst) / 2**20))
    return dst


if __name__ == "__main__":
    args = sys.argv[1:]
    guard = "--guard-dsa-import" in args
    lzma = "--lzma" in args
    args = [a for a in args if a not in ("--guard-dsa-import", "--lzma")]
    if len(args) < 2 or (len(args) < 3 and not (guard or lzma)):
        sys.exit(__doc__)
    trim(args[0], args[1], args[2:], DSA_GUARD if guard else None, zipfile.ZIP_LZMA if lzma else zipfile.ZIP_DEFLATED)
