#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# On the H200, after tests/gpu/e2e.sh's install step (issue 20): real SGLang 0.5.15.post1 through roles/server with
# a sharded checkpoint that is whole, one whose index names a deleted shard, and one with a shard cut to half.
# Preflight on (server_verify_model): the broken ones must be refused before launch, naming the shard; preflight off:
# the truncated one must be diagnosed by server_ready (checkpoint_corrupt); the whole one must be served READY.
set -u
CAP=$1; inv=tests/gpu/e2e/inventory.yml; PY=/opt/torch/.venv/bin/python3
"$PY" tests/gpu/make_sharded_variants.py /srv/models/llama-tiny /srv/models 3 > "$CAP/models-sharded.txt" 2>&1 \
  || { cat "$CAP/models-sharded.txt"; exit 1; }
cat "$CAP/models-sharded.txt"
args='"attention-backend": "triton", "sampling-backend": "pytorch", "grammar-backend": "none", "disable-cuda-graph": true, "mem-fraction-static": 0.1'
base="{\"server_speculative\": {\"algorithm\": \"\"}, \"server_spec_check\": \"off\", \"server_ready_timeout\": 240, \"server_args\": {$args}}"
one() { local name=$1 port=$2 model=$3; shift 3; local s=$EPOCHREALTIME
  timeout "${FAIL_TIMEOUT:-240}" ansible-playbook -i "$inv" tests/gpu/e2e/instance.yml -e "$base" -e server_instance="$name" \
    -e server_port="$port" -e server_model_path="/srv/models/$model" "$@" > "$CAP/models-$name.txt" 2>&1; local rc=$?
  awk -v n="$name" -v rc="$rc" -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%s rc=%s %.1fs\n", n, rc, b - a}' \
    >> "$CAP/models.txt"; }
one pre_missing_shard 30201 sharded-missing -e server_verify_model=true &
one pre_truncated_shard 30202 sharded-truncated -e server_verify_model=true &
wait
one truncated_shard 30203 sharded-truncated -e server_preflight=false &
one whole_sharded 30204 sharded-good -e server_verify_model=true &
wait
cat "$CAP/models.txt"
for f in "$CAP"/models-*.txt; do echo "== $(basename "$f")"; grep -E "FAILED|fatal:|msg:|READY|refus|not whole|shard" "$f" | head -6 | cut -c1-500; done
cp /var/log/sglang/truncated_shard*.log "$CAP/" 2>/dev/null; ls /var/log/sglang/ >> "$CAP/models.txt" 2>&1
