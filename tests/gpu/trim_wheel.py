# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rewrite a wheel without some of its files, RECORD updated, so it fits the device's 64 MiB carry.

    trim_wheel.py IN.whl OUT_DIR PREFIX [PREFIX...]

Every member whose path starts with one of the PREFIXes is left out. Used for the real-GPU run
(docs/evidence/real-sglang-h200/README.md): sglang-kernel without FA3/FlashMLA/SM100 objects (an H200 with
--attention-backend triton loads only sm90/common_ops), flashinfer without the cutlass/cccl headers that the
warm-up's norm JIT build does not include. Such a wheel serves that one GPU and nothing else.
"""
import base64
import hashlib
import os
import sys
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def trim(src, out_dir, prefixes):
    dst = os.path.join(out_dir, os.path.basename(src))
    dropped = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
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
            zout.writestr(info, data)
            lines.append(record_line(name, data))
        lines.append("%s,," % record_name)
        zout.writestr(record_name, "\n".join(lines) + "\n")
    print("%s: dropped %d files, %.1f MiB -> %.1f MiB" % (
        os.path.basename(src), dropped, os.path.getsize(src) / 2**20, os.path.getsize(dst) / 2**20))
    return dst


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    trim(sys.argv[1], sys.argv[2], sys.argv[3:])
