#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Build virtualenvs holding the REAL SGLang argument parser (no GPU needed), one per version:
#   ${LLMSERVE_CACHE:-/var/cache/llmserve}/parser-venvs/<version>
# Each has sglang==<version> --no-deps and the small packages that `sglang.srt.server_args` imports (found by
# importing until it worked, per version). torch, the heavy part, lives in a shared base venv per torch build
# (parser-venvs/_base-<torch>) that the version venvs see through a .pth file, the way roles/sglang reuses a
# host's torch. 0.5.23 uses the CPU torch 2.13.0 wheel that lies on the dev/CI machines. 0.5.9, 0.5.10.post1 and
# 0.5.15.post1 import torchvision.io at module level, and PyPI's torchvision is CUDA-built and does not load against
# CPU torch ("operator torchvision::nms does not exist"), so those three share one PyPI torch + torchvision base
# (big: it pulls the nvidia-* runtime wheels, once for the three; it imports fine without a GPU).
# A venv is reused when its stamp matches; pass versions as arguments to override the default set.
# Usage: tests/real_parser/build_venvs.sh [VERSION...]
set -euo pipefail

CACHE="${LLMSERVE_CACHE:-/var/cache/llmserve}/parser-venvs"
PY="${LLMSERVE_PARSER_PYTHON:-python3.11}"   # 0.5.23 wheels are cp311 only
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(0.5.9 0.5.10.post1 0.5.15.post1 0.5.23)

# Imported by server_args on every version (sglang.srt.utils.common and friends).
# triton is imported at module level even on CPU; sympy/dill come in through torch/transformers paths.
COMMON=(msgspec numpy orjson psutil pybase64 requests packaging pillow starlette pydantic pyzmq tqdm
        ipython aiohttp pyyaml safetensors triton sympy dill partial-json-parser huggingface-hub)

torch_for() {
  case "$1" in
    0.5.9|0.5.10.post1|0.5.15.post1) echo "torch==2.14.1 torchvision==0.29.1" ;;
    *)                  echo "torch==2.13.0" ;;
  esac
}

extra_for() {
  # Pins follow each wheel's own Requires-Dist where it pins (openai, transformers, sentencepiece).
  case "$1" in
    0.5.9)        echo "openai==2.6.1 transformers==4.57.1 sentencepiece" ;;
    0.5.10.post1) echo "openai==2.6.1 transformers==5.3.0 sentencepiece" ;;
    0.5.15.post1) echo "openai==2.6.1 transformers==5.12.1 sentencepiece" ;;
    0.5.23)       echo "openai==2.8.0 transformers==5.19.0 sentencepiece==0.2.1" ;;
    *) echo "build_venvs.sh: no package list for sglang $1; add one to extra_for()" >&2; return 1 ;;
  esac
}

site_of() { "$1" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"; }

# The shared torch base for a torch spec; prints its directory.
base_for() {
  local spec="$1" dir
  dir="$CACHE/_base-$(echo "$spec" | tr ' =' '_-')"
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$spec" ] && "$dir/bin/python" -c "import torch" >/dev/null 2>&1; then
    echo "$dir"; return
  fi
  local start; start=$(date +%s)
  rm -rf "$dir"
  "$PY" -m venv "$dir"
  # shellcheck disable=SC2086  # $spec is a word list on purpose
  "$dir/bin/pip" install -q $spec >&2
  echo "$spec" > "$dir/.stamp"
  echo "torch base $spec: built in $(( $(date +%s) - start ))s ($dir)" >&2
  echo "$dir"
}

probe='import argparse
from sglang.srt.server_args import ServerArgs
p = argparse.ArgumentParser(); ServerArgs.add_cli_args(p); print(len(p._actions))'

mkdir -p "$CACHE"
cons="$(mktemp)"; trap 'rm -f "$cons"' EXIT

for v in "${VERSIONS[@]}"; do
  extra="$(extra_for "$v")"
  torch="$(torch_for "$v")"
  dir="$CACHE/$v"
  # The stamp is a hash of every input: the package lists, this script, the python that builds it. When it matches
  # and the venv's parser file is there, the venv is reused without importing torch (seconds, not a minute each).
  stamp="$(printf '%s\n' "sglang==$v ${COMMON[*]} $extra base:$torch" "$("$PY" -VV 2>&1)" | cat - "$0" | sha256sum | cut -d' ' -f1)"
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ] && [ -x "$dir/bin/python" ] &&
     compgen -G "$dir/lib/python*/site-packages/sglang/srt/server_args.py" >/dev/null; then
    echo "parser venv $v: up to date, stamp ${stamp:0:12} ($dir)"; continue
  fi
  base="$(base_for "$torch")"
  start=$(date +%s)
  rm -rf "$dir"
  "$PY" -m venv "$dir"
  echo "import site; site.addsitedir('$(site_of "$base/bin/python")')" > "$(site_of "$dir/bin/python")/llmserve-base-site.pth"
  # Keep the base's torch: anything asking for torch (torchvision, ...) must accept this one.
  tr ' ' '\n' <<<"$torch" > "$cons"
  "$dir/bin/pip" install -q --no-deps "sglang==$v"
  # shellcheck disable=SC2086  # $extra is a word list on purpose
  "$dir/bin/pip" install -q -c "$cons" "${COMMON[@]}" $extra
  n=$("$dir/bin/python" -c "$probe" 2>"$dir/probe.err") || {
    echo "parser venv $v: sglang.srt.server_args does not import; see $dir/probe.err" >&2; exit 1; }
  echo "$stamp" > "$dir/.stamp"
  echo "parser venv $v: built in $(( $(date +%s) - start ))s, $n parser actions ($dir)"
done
