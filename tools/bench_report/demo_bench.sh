#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Benchmark baseline vs EAGLE-3 (and, with -- -e benchmark_apply=true, the chosen threshold) on the local demo fleet: one test host running the SGLang
# double with the seed's rate model, playbooks/benchmark.yml through roles/server, report on the controller.
#
#   tools/bench_report/demo_bench.sh [--keep] [--name FLEET] [--scale X] [--concurrency 1,2,4,8,16,32,64] [--tokens N]
#
#   --keep         leave the fleet up afterwards (default: tear it down; env BENCH_KEEP=1)
#   --name         fleet name (default: bench, env BENCH_FLEET); the host is NAME-gpu1
#   --scale        multiply the seed's rates (baseline 60/773, EAGLE-3 96/354 tok/s) by X: shorter runs, same
#                  crossover (default 1, env BENCH_SCALE)
#   --concurrency  comma-separated levels (default 1,2,4,8,16,32, env BENCH_CONCURRENCY)
#   --tokens       output tokens per request (default 64, env BENCH_TOKENS)
#   --step0        verify (default, env BENCH_STEP0): the double is an SGLang without the step-0 patch - its adaptive
#                  step 0 costs what the H200 measured, and the benchmark refuses the adaptive setting and applies a
#                  static one; plain: the patch recorded in the venv (roles/sglang's record), step 0 a plain decode,
#                  the adaptive setting applied
# Extra arguments after -- go to ansible-playbook (e.g. -- -e benchmark_check_model=true).
# Prints the run folder (benchmarks/results/<UTC time>/: raw.json, report.md, summary.json, *.png).
# Needs root, podman, runc, debootstrap (docs/test-fleet.md) and .venv (make setup).
set -euo pipefail
cd "$(dirname "$0")/../.."
keep=${BENCH_KEEP:-0} name=${BENCH_FLEET:-bench} scale=${BENCH_SCALE:-1} step0=${BENCH_STEP0:-verify}
conc=${BENCH_CONCURRENCY:-1,2,4,8,16,32} tokens=${BENCH_TOKENS:-64}
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --name) name="$2"; shift ;;
    --scale) scale="$2"; shift ;;
    --concurrency) conc="$2"; shift ;;
    --tokens) tokens="$2"; shift ;;
    --step0) step0="$2"; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
ap=.venv/bin/ansible-playbook
[ -x "$ap" ] || { echo "bench: $ap is missing: run 'make setup' first" >&2; exit 2; }
teardown() { [ "$keep" = 1 ] || python3 tools/fleet/fleet.py down --name "$name"; }
trap teardown EXIT

python3 tools/fleet/fleet.py up -n 1 --name "$name"
inv=(-i ".fleet/$name/inventory.yml" -i playbooks/demo/inventory.yml)
"$ap" "${inv[@]}" playbooks/demo/prepare.yml
case "$step0" in
  plain) .venv/bin/ansible "${inv[@]}" gpu_hosts -b -m ansible.builtin.copy -a \
           'dest=/opt/sglang/venv/llmserve-patches.json mode=0644 content={"format": 1, "patches": [{"name": "spec-step0-plain-decode"}]}' ;;
  verify) .venv/bin/ansible "${inv[@]}" gpu_hosts -b -m ansible.builtin.file -a 'path=/opt/sglang/venv/llmserve-patches.json state=absent' ;;
  *) echo "bench: --step0 is plain or verify, not $step0" >&2; exit 2 ;;
esac
vars=$(python3 - "$scale" "$conc" "$tokens" <<'PY'
import json, sys
scale, conc, tokens = float(sys.argv[1]), [int(c) for c in sys.argv[2].split(",")], int(sys.argv[3])
perf = {"baseline": {"per_request_tps": 60 * scale, "saturation_tps": 773 * scale},
        "eagle3": {"per_request_tps": 96 * scale, "saturation_tps": 354 * scale, "accept_length": 3.2}}
print(json.dumps({"server_env": {"SGLANG_DOUBLE_SCENARIO": "ready", "SGLANG_DOUBLE_PACE": "0.1",
                                 "SGLANG_DOUBLE_PERF": json.dumps(perf)},
                  "benchmark_perf_model": perf, "benchmark_concurrency": conc, "benchmark_max_new_tokens": tokens,
                  "benchmark_engine": "builtin"}))
PY
)
"$ap" "${inv[@]}" playbooks/benchmark.yml -e "$vars" "${extra[@]}"
ls -td benchmarks/results/*/ | head -1
