#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# On the device machine (one real H200, no systemd, no network), from the repository root, with .whl/ carried:
# the collection end to end. roles/sglang installs SGLang 0.5.15.post1 offline over the machine's torch, then
# benchmark.yml launches the base model and EAGLE-3 through roles/server (pid file), waits with server_ready,
# runs the accept-length check and measures both; status.yml reports. Results: $OUT/e2e.tar.gz.
#   STEPS="install bench status install-again"  (the default; run with STEPS=failures for tests/gpu/e2e_failures.sh)
set -u
OUT=${OUT:-/tmp/out}; CAP=/tmp/e2e; rm -rf "$CAP"; mkdir -p "$CAP" "$OUT"
PY=/opt/torch/.venv/bin/python3
pack() { cp -r /var/log/sglang "$CAP/server-logs" 2>/dev/null; cp -r /etc/sglang "$CAP/server-config" 2>/dev/null
         tar -C /tmp -czf "$OUT/e2e.tar.gz" e2e; }
trap pack EXIT
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }

# Ansible itself from carried wheels; everything else in .whl/ is the SGLang wheelhouse.
mkdir -p /tmp/wheelhouse /tmp/ansible-wheels
for w in .whl/*.whl; do case "$(basename "$w")" in ansible_core-*|resolvelib-*) cp "$w" /tmp/ansible-wheels/;; *) cp "$w" /tmp/wheelhouse/;; esac; done
"$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/ansite /tmp/ansible-wheels/*.whl || exit 1
export PYTHONPATH=/tmp/ansite PATH=/tmp/ansite/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1 \
       ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_FORCE_COLOR=0 PYTHONUNBUFFERED=1
# The tiny random pair serves install/status/failures; the bench step makes its own (TINY=0 skips these).
[ "${TINY:-1}" = 0 ] || "$PY" tests/gpu/make_tiny_models.py /srv/models > "$CAP/models.txt" 2>&1 || { cat "$CAP/models.txt"; exit 1; }
stamp "models made; ansible $(ansible --version | head -1)"
inv=tests/gpu/e2e/inventory.yml
# Every step under one deadline, so that the results are packed before the device call's own limit.
deadline=$(( t0 + ${BUDGET:-555} ))
run() { local name=$1; shift; local s left; s=$(date +%s); left=$(( deadline - s ))
        [ "$left" -gt 20 ] || { echo "$name skipped: out of time" | tee -a "$CAP/steps.txt"; return 1; }
        timeout "$left" ansible-playbook -i "$inv" "$@" > "$CAP/$name.txt" 2>&1; local rc=$?
        echo "$name rc=$rc $(( $(date +%s) - s ))s" | tee -a "$CAP/steps.txt"; tail -n 25 "$CAP/$name.txt"; return $rc; }
for step in ${STEPS:-install bench status install-again}; do
  case $step in
    install) run install tests/gpu/e2e/install.yml -v || exit 1 ;;
    install-again) run install-again tests/gpu/e2e/install.yml ;;
    # benchmark.yml in one piece: baseline and EAGLE-3 with the draft that fits by construction, CUDA graphs on,
    # the threshold applied through --speculative-adaptive-config, redeployed, confirmed, restored.
    bench) s=$(date +%s)
           "$PY" tests/gpu/make_fitting_models.py /srv/models --agree "${BENCH_AGREE:-2}" > "$CAP/fitting-models.txt" 2>&1 \
             || { cat "$CAP/fitting-models.txt"; exit 1; }
           stamp "fitting models made in $(( $(date +%s) - s ))s: $(tail -1 "$CAP/fitting-models.txt")"
           run bench playbooks/benchmark.yml -i tests/gpu/e2e/bench.yml -e benchmark_results_dir=$CAP/bench \
             -e "{\"benchmark_modes\": [\"baseline\", \"eagle3\"], \"benchmark_concurrency\": ${BENCH_CONCURRENCY:-[1, 8, 32, 64, 128, 256]}}" \
             -e "benchmark_max_new_tokens=${BENCH_TOKENS:-64}" -e benchmark_request_timeout=120 \
             -e "benchmark_repeats=${BENCH_REPEATS:-2}" -e benchmark_requests_per_slot=2 -e benchmark_min_requests=4 \
             -e benchmark_warmup_requests=2 -e benchmark_apply=true -e benchmark_apply_file=$CAP/speculation.yml ;;
    status) run status playbooks/status.yml
            for ep in health server_info model_info v1/models metrics; do
              curl -s -m 15 "http://127.0.0.1:30000/$ep" > "$CAP/eagle3_$(echo $ep | tr / _).txt" 2>&1; done ;;
    # issue 20: sharded checkpoints that are whole, miss a shard, or hold a cut one, through roles/server
    models) bash tests/gpu/e2e_models.sh "$CAP" ;;
    # issue 26: the table's rows through roles/server with the defaults (the model check on), then preflight off
    models_default) bash tests/gpu/e2e_models_default.sh "$CAP" ;;
    failures) left=$(( deadline - $(date +%s) ))
              if [ "$left" -gt 90 ]; then FAIL_TIMEOUT=$(( (left - 10) / 2 )) bash tests/gpu/e2e_failures.sh "$CAP"
              else echo "failures skipped: out of time" | tee -a "$CAP/steps.txt"; fi ;;
  esac
  stamp "$step done"
done
