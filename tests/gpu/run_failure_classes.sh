#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# On the device machine (one H200), from the repository root, with the wheel carry of
# docs/evidence/real-sglang-h200/README.md in .whl/: the failure classes of issue 29 that one GPU can produce
# (tests/gpu/capture_failure_classes.py). Everything lands in $OUT/failure_classes.tar.gz.
set -u
OUT=${OUT:-/tmp/out}; CAP=/tmp/fcap; rm -rf "$CAP"; mkdir -p "$CAP" "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
pack() { tar -C /tmp --exclude=fcap/big-copy --exclude="*.safetensors" -czf "$OUT/failure_classes.tar.gz" fcap; }
trap pack EXIT
start=$(date +%s)
{ id; uname -r; nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv; df -k /dev/shm; } > "$CAP/host.txt" 2>&1
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > "$CAP/pip.log" 2>&1 || { echo "wheel install failed"; tail "$CAP/pip.log"; exit 1; }
export PYTHONPATH=/tmp/site HF_HUB_OFFLINE=1 CUDA_HOME=/usr/local/cuda PYTHONUNBUFFERED=1
"$PY" tests/gpu/make_tiny_models.py /tmp/models > "$CAP/models.txt" 2>&1; tail -1 "$CAP/models.txt"
"$PY" tests/gpu/make_fitting_models.py /tmp/big --layers 8 --hidden 4096 --inter 14336 > "$CAP/big.txt" 2>&1; tail -1 "$CAP/big.txt"
echo "setup done at $(( $(date +%s) - start ))s"
timeout 260 "$PY" tests/gpu/capture_failure_classes.py --models /tmp/models --big /tmp/big/llama-fixed --out "$CAP/cases" --python "$PY"
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > "$CAP/compute-apps-end.txt" 2>&1
echo "all done at $(( $(date +%s) - start ))s"
