#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# On the device machine (one H200, no network), from the repository root, with .whl/ carried: a restart of real
# SGLang 0.5.15.post1 with a cold compile cache against one with the cache the first start left, CUDA graphs on.
# The cache environment is roles/server's own (plugins/module_utils/sglang/caches.py: SGLANG_CACHE_DIR and the
# Triton, Inductor, CUDA and FlashInfer caches under it). Each start gets a fresh empty HOME, so the only thing the
# warm start keeps from the cold one is that folder. Results: $OUT/compile_cache.json and the server logs.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PY=/opt/torch/.venv/bin/python3
VERSION=0.5.15.post1
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
mkdir -p /tmp/sgsite
wheels=()
for w in .whl/*.whl; do case "$(basename "$w")" in ansible_core-*|resolvelib-*) ;; *) wheels+=("$w");; esac; done
"$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/sgsite "${wheels[@]}" > "$OUT/pip.txt" 2>&1 ||
  { cat "$OUT/pip.txt"; exit 1; }
export PYTHONPATH=/tmp/sgsite HF_HUB_OFFLINE=1 CUDA_HOME=/usr/local/cuda PYTHONUNBUFFERED=1
"$PY" tests/gpu/make_tiny_models.py /srv/models > "$OUT/models.txt" 2>&1 || { cat "$OUT/models.txt"; exit 1; }
stamp "wheels installed, models made"
# The environment roles/server writes into server.env for this instance and version.
cache_env() {
  "$PY" -c 'import importlib.util as u, sys
spec = u.spec_from_file_location("caches", "plugins/module_utils/sglang/caches.py"); m = u.module_from_spec(spec)
spec.loader.exec_module(m)
print(" ".join("%s=%s" % kv for kv in sorted(m.env(sys.argv[1], "cc", sys.argv[2]).items())))' "$1" "$VERSION"
}
home_root=/tmp/cc-state   # stands for server_home: persistent across the two starts
rm -rf "$home_root"; mkdir -p "$home_root"
env_words=$(cache_env "$home_root")
echo "$env_words" > "$OUT/cache_env.txt"

el() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
start_once() {  # start_once NAME -> seconds to the port, seconds to /health 200
  local name=$1 home s pid port_s="" ready_s="" t code
  home=$(mktemp -d /tmp/home-XXXX)
  s=$(date +%s.%N)
  # shellcheck disable=SC2086  # env_words is VAR=value words
  env HOME="$home" $env_words setsid "$PY" -m sglang.launch_server --model-path /srv/models/llama-tiny \
    --host 127.0.0.1 --port 30000 --attention-backend triton --sampling-backend pytorch --grammar-backend none \
    --mem-fraction-static 0.3 --cuda-graph-max-bs 8 > "$OUT/$name.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 http://127.0.0.1:30000/health)
    t=$(el "$s")
    [ -z "$port_s" ] && [ "$code" != 000 ] && port_s=$t
    if [ "$code" = 200 ]; then ready_s=$t; break; fi
    [ "${t%.*}" -ge 125 ] && break
    sleep 0.5
  done
  kill -TERM -- -"$pid" 2>/dev/null; sleep 3; kill -KILL -- -"$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  for _ in $(seq 20); do  # the port free again before the next start
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 http://127.0.0.1:30000/health)" = 000 ] && break; sleep 0.5
  done
  echo "{\"run\": \"$name\", \"port_open_s\": ${port_s:-null}, \"ready_s\": ${ready_s:-null}, \"cache_mb\": $(du -sm "$home_root" | cut -f1), \"home_mb\": $(du -sm "$home" | cut -f1)}" | tee -a "$OUT/compile_cache.jsonl"
  rm -rf "$home"
}
start_once cold
stamp "cold done"
start_once warm
stamp "warm done"
(cd "$home_root" && find . -maxdepth 3 -type d | sort) > "$OUT/cache_tree.txt"
grep -h -E "Capture cuda graph|Load weight end|fired up|JIT|Compil" "$OUT"/cold.log "$OUT"/warm.log | tail -20
