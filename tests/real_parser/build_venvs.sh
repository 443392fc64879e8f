#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Build virtualenvs holding the REAL SGLang argument parser (no GPU needed), one per version:
#   ${LLMSERVE_CACHE:-/var/cache/llmserve}/parser-venvs/<version>
# Each has torch (0.5.23: the CPU 2.13.0 wheel that lies on the dev/CI machines; older: see extra_for),
# sglang==<version> --no-deps and the small packages that `sglang.srt.server_args` imports (found by importing until it worked, per
# version).  A venv is reused when its stamp matches; pass versions as arguments to override the
# default set.  Usage: tests/real_parser/build_venvs.sh [VERSION...]
set -euo pipefail

CACHE="${LLMSERVE_CACHE:-/var/cache/llmserve}/parser-venvs"
PY="${LLMSERVE_PARSER_PYTHON:-python3.11}"   # 0.5.23 wheels are cp311 only
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(0.5.10.post1 0.5.23)

# Imported by server_args on every version (sglang.srt.utils.common and friends).
# triton is imported at module level even on CPU; sympy/dill come in through torch/transformers paths.
COMMON=(msgspec numpy orjson psutil pybase64 requests packaging pillow starlette pydantic pyzmq tqdm
        ipython aiohttp pyyaml safetensors triton sympy dill partial-json-parser huggingface-hub)

extra_for() {
  # Pins follow each wheel's own Requires-Dist where it pins (openai, transformers, sentencepiece).
  case "$1" in
    # These import torchvision.io at module level (utils/common.py). PyPI's torchvision is CUDA-built and does
    # not load against CPU torch ("operator torchvision::nms does not exist"), so they get the PyPI torch and
    # torchvision pair instead (bigger: pulls the nvidia-* runtime wheels; imports fine without a GPU).
    0.5.9)        echo "openai==2.6.1 transformers==4.57.1 sentencepiece torch==2.14.1 torchvision==0.29.1" ;;
    0.5.10.post1) echo "openai==2.6.1 transformers==5.3.0 sentencepiece torch==2.14.1 torchvision==0.29.1" ;;
    0.5.23)       echo "openai==2.8.0 transformers==5.19.0 sentencepiece==0.2.1" ;;
    *) echo "build_venvs.sh: no package list for sglang $1; add one to extra_for()" >&2; return 1 ;;
  esac
}

probe='import argparse
from sglang.srt.server_args import ServerArgs
p = argparse.ArgumentParser(); ServerArgs.add_cli_args(p); print(len(p._actions))'

mkdir -p "$CACHE"
cons="$(mktemp)"; trap 'rm -f "$cons"' EXIT
# Keep the CPU torch: anything asking for torch (torchvision, ...) must accept this one.
echo "torch==2.13.0" > "$cons"

for v in "${VERSIONS[@]}"; do
  extra="$(extra_for "$v")"
  dir="$CACHE/$v"
  stamp="sglang==$v ${COMMON[*]} $extra"
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ] && "$dir/bin/python" -c "$probe" >/dev/null 2>&1; then
    echo "parser venv $v: up to date ($dir)"; continue
  fi
  start=$(date +%s)
  rm -rf "$dir"
  "$PY" -m venv "$dir"
  "$dir/bin/pip" install -q torch==2.13.0
  "$dir/bin/pip" install -q --no-deps "sglang==$v"
  case "$extra" in *torchvision*) c=() ;; *) c=(-c "$cons") ;; esac
  # shellcheck disable=SC2086  # $extra is a word list on purpose
  "$dir/bin/pip" install -q "${c[@]}" "${COMMON[@]}" $extra
  n=$("$dir/bin/python" -c "$probe" 2>"$dir/probe.err") || {
    echo "parser venv $v: sglang.srt.server_args does not import; see $dir/probe.err" >&2; exit 1; }
  echo "$stamp" > "$dir/.stamp"
  echo "parser venv $v: built in $(( $(date +%s) - start ))s, $n parser actions ($dir)"
done
