#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Here (a machine that reaches PyPI), from the repository root: the wheel set that the lent GPU machine (no index,
# Python 3.12, torch 2.11.0 cu130 already there) needs to run SGLang 0.5.15.post1 and Ansible, trimmed to fit the
# device's 64 MiB carry, into the ignored .whl/ (docs/evidence/real-sglang-h200/README.md,
# /work/shared/reference/real-sglang-on-h200.md). Idempotent: a wheel already in .whl/ is kept.
set -euo pipefail
DEST=${1:-.whl}; RAW=${RAW:-.whlraw}
mkdir -p "$DEST" "$RAW"
PY=${PYTHON:-python3}
dl() {  # cp312 manylinux wheels, no dependencies (each one is named here)
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_39_x86_64 --platform manylinux_2_35_x86_64 --platform manylinux_2_34_x86_64 \
    --platform manylinux_2_31_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 --platform any -d "$1" "${@:2}"
}
# SGLang's start-up imports beyond the machine's packages, at the versions that import together there
dl "$DEST" transformers==5.12.1 tokenizers==0.22.2 apache-tvm-ffi==0.1.11 pydantic==2.14.4 pydantic-core==2.50.5 \
  annotated-types typing-inspection typing-extensions==4.16.0 fastapi==0.141.1 starlette==1.10.0 uvicorn==0.55.0 \
  python-multipart orjson pybase64 pyzmq msgspec openai==2.6.1 distro sniffio partial-json-parser \
  compressed-tensors loguru gguf dill setproctitle jsonschema referencing rpds-py jsonschema-specifications \
  soundfile==0.13.1 cffi pycparser ipython traitlets ansible-core==2.19.14 resolvelib==1.2.1
# the three large ones, trimmed (tests/gpu/trim_wheel.py says why each part can go)
dl "$RAW" sglang==0.5.15.post1 sglang-kernel==0.4.4 flashinfer-python==0.6.12
ls "$DEST"/sglang-0.5.15.post1-*.whl >/dev/null 2>&1 || "$PY" tests/gpu/trim_wheel.py "$RAW"/sglang-0.5.15.post1-*.whl \
  "$DEST" --lzma --guard-dsa-import sglang/srt/grpc/ sglang/multimodal_gen/
ls "$DEST"/sglang_kernel-*.whl >/dev/null 2>&1 || "$PY" tests/gpu/trim_wheel.py "$RAW"/sglang_kernel-*.whl "$DEST" \
  sgl_kernel/flash_ops sgl_kernel/flashmla_ops sgl_kernel/sm100/
ls "$DEST"/flashinfer_python-*.whl >/dev/null 2>&1 || "$PY" tests/gpu/trim_wheel.py "$RAW"/flashinfer_python-*.whl \
  "$DEST" --lzma flashinfer/data/cutlass/ flashinfer/data/cccl/
# the other wheels over 1 MiB, LZMA too (the device's carry is 64 MiB with the tree; the marker keeps it idempotent)
for w in "$DEST"/*.whl; do
  if [ "$(stat -c %s "$w")" -le 1048576 ] || [ -e "$w.lzma" ]; then continue; fi
  mkdir -p "$RAW/lz" && "$PY" tests/gpu/trim_wheel.py "$w" "$RAW/lz" --lzma && mv "$RAW/lz/$(basename "$w")" "$w" && : > "$w.lzma"
done
du -sh "$DEST"
