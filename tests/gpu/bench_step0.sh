#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Issue 34 on the lent H200, one device call: SGLang 0.5.15.post1 from the carried wheels (.whl/), a second copy of
# its package patched with roles/sglang's spec-step0-plain-decode.diff through install/patch.py (the role's own
# apply logic), the 13 GiB fitting pair, then tests/gpu/bench_step0.py for MODES (one server at a time).
#   MODES="adaptive,adaptive_patched" bash tests/gpu/bench_step0.sh   (SRC=. when run from the repository itself)
# Results: $OUT/results.json, $OUT/logs.tar.gz (server logs, adaptive config), $OUT/setup.txt.
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}; SRC=${SRC:-.spec}; WORK=/tmp/step0; mkdir -p "$OUT" "$WORK"
PY=${PY:-python3}
pack() { tar -C "$WORK" -czf "$OUT/logs.tar.gz" --exclude 'prof-*' . 2>/dev/null; }
trap pack EXIT
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
if [ ! -f /tmp/site/.done ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >"$OUT/setup.txt" 2>&1 \
    || { cat "$OUT/setup.txt"; exit 1; }
  touch /tmp/site/.done
fi
export PYTHONPATH=/tmp/site HF_HUB_OFFLINE=1 CUDA_HOME=/usr/local/cuda PYTHONUNBUFFERED=1
stamp "wheels installed"
# The patched copy: only the sglang package, first on PYTHONPATH for the patched server.
rm -rf /tmp/sgp /tmp/ac; mkdir -p /tmp/sgp /tmp/ac/ansible_collections/llmserve
cp -a /tmp/site/sglang /tmp/sgp/sglang
ln -s "$(cd "$SRC" && pwd)" /tmp/ac/ansible_collections/llmserve/sglang
PYTHONPATH=/tmp/ac "$PY" - "$SRC" <<'PYEOF' | tee -a "$OUT/setup.txt"
import sys
from ansible_collections.llmserve.sglang.plugins.module_utils.install import patch as sp
diff = open(sys.argv[1] + "/roles/sglang/files/patches/0.5.15.post1/spec-step0-plain-decode.diff").read()
r = sp.run("/tmp/sgp", [{"name": "spec-step0-plain-decode", "diff": diff, "versions": "==0.5.15.post1"}],
           "0.5.15.post1", ["9.0"], "/tmp/sgp/llmserve-patches.json")
print("patched copy:", r["newly_applied"], r["files_changed"])
PYEOF
if [ "${CHECK:-0}" != 0 ]; then  # correctness: a random tiny pair, CHECK concurrent greedy requests per mode
  [ -f /tmp/models/llama-tiny/model.safetensors ] || "$PY" "$SRC/tests/gpu/make_tiny_models.py" /tmp/models | tail -1 | tee -a "$OUT/setup.txt"
  EXTRA=(--target llama-tiny --draft eagle3-tiny --check-outputs "$CHECK" --tokens "${TOKENS:-64}")
else
  [ -f /tmp/models/llama-fixed/model.safetensors ] || \
    "$PY" "$SRC/tests/gpu/make_fitting_models.py" /tmp/models --agree 2 --layers 32 --hidden 4096 --inter 14336 | tee -a "$OUT/setup.txt"
  EXTRA=(--tokens "${TOKENS:-256}")
fi
stamp "models ready"
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv,noheader | tee -a "$OUT/setup.txt"
"$PY" "$SRC/tests/gpu/bench_step0.py" --out "$OUT" --work "$WORK" --models /tmp/models --modes "${MODES:-baseline,eagle3,adaptive,adaptive_patched}" \
  --points "${POINTS:-1,16,32,64,128,256}" --threshold "${THRESHOLD:-64}" --deadline $(( T0 + ${BUDGET:-565} )) "${EXTRA[@]}"
stamp "done"
