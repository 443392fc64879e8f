#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Real failures launched through roles/server on the H200, each its own instance and port, all at once (called by
# tests/gpu/e2e.sh with STEPS=... failures, after the bench left the EAGLE-3 instance 'default' on port 30000).
# Each: the play's output in CAP/fail-NAME.txt and the wall time from launch to the play's end in CAP/failures.txt.
set -u
CAP=$1; inv=tests/gpu/e2e/inventory.yml
base='{"server_speculative": {"algorithm": ""}, "server_spec_check": "off", "server_ready_timeout": 300}'
one() { local name=$1 port=$2; shift 2; local s=$EPOCHREALTIME
  timeout "${FAIL_TIMEOUT:-240}" ansible-playbook -i "$inv" tests/gpu/e2e/instance.yml -e "$base" -e server_instance="$name" \
    -e server_port="$port" "$@" > "$CAP/fail-$name.txt" 2>&1; local rc=$?
  awk -v n="$name" -v rc="$rc" -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%s rc=%s %.1fs\n", n, rc, b - a}' \
    >> "$CAP/failures.txt"; }
# Refused by the preflight before anything runs:
one pre_missing_model 30101 -e server_model_path=/srv/models/nope &
one pre_bad_flag 30102 -e '{"server_args": {"no-such-flag": 3, "attention-backend": "triton", "disable-cuda-graph": true}}' &
one pre_port_taken 30000 &
wait
# The same faults with the preflight off, and a memory failure: the waiter diagnoses the real server.
args='"attention-backend": "triton", "sampling-backend": "pytorch", "grammar-backend": "none", "disable-cuda-graph": true, "mem-fraction-static": 0.1'
one missing_model 30111 -e server_preflight=false -e server_model_path=/srv/models/nope &
one bad_flag 30112 -e server_preflight=false -e "{\"server_args\": {\"no-such-flag\": 3, $args}}" &
one port_taken 30000 -e server_preflight=false -e "{\"server_args\": {$args}}" &
one oom_context 30114 -e "{\"server_args\": {\"context-length\": 1000000000, $args}, \"server_env\": {\"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN\": \"1\"}}" &
wait
cat "$CAP/failures.txt"
for f in "$CAP"/fail-*.txt; do echo "== $(basename "$f")"; grep -E "FAILED|fatal:|msg:|is not ready|refus" "$f" | head -4 | cut -c1-400; done
