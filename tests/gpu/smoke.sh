#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# The user's path on the lent GPU in one device call (issue 43): from a bare machine, with .whl/ carried
# (tests/gpu/fetch_wheels.sh makes it), from the repository root:
#     bash tests/gpu/smoke.sh        -> one line "smoke: N of N ok ...", $OUT/summary.json, $OUT/smoke.tar.gz
# roles/sglang offline over the machine's torch; roles/server with tests/gpu/e2e/inventory.yml's settings: a fresh
# instance, a second fresh one beside it, a rerun that changes nothing; a chat and a generate request answered;
# EAGLE-3 READY with the accept-length check failing the deploy below its floor; status.yml; one broken model
# refused before launch (nothing started), and issue 45's rows (a chat template that does not render, one that
# raises, a tokenizer past vocab_size, a dtype torch lacks, a context length past the model's: refused before
# launch; a broken template given at launch: failed at READY by the chat probe); stop.yml. Each step's result and
# seconds go to summary.json.
# A change to roles/ or plugins/ is resolved only after this passed on the lent GPU for that commit.
set -u
OUT=${OUT:-/tmp/out}; CAP=/tmp/smoke; rm -rf "$CAP"; mkdir -p "$CAP" "$OUT"
PY=${SMOKE_PYTHON:-/opt/torch/.venv/bin/python3}; [ -x "$PY" ] || PY=$(command -v python3)
M=/srv/models; inv=tests/gpu/e2e/inventory.yml
t0=$(date +%s); deadline=$(( t0 + ${BUDGET:-520} ))
pack() { cp -r /var/log/sglang "$CAP/server-logs" 2>/dev/null; tar -C /tmp -czf "$OUT/smoke.tar.gz" smoke; }
trap pack EXIT
: > "$CAP/steps.tsv"
# step NAME OK(0/1) SECONDS DETAIL
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4//$'\t'/ }" >> "$CAP/steps.tsv"
           echo "[$(( $(date +%s) - t0 ))s] $1: $([ "$2" = 1 ] && echo ok || echo FAILED) ($3 s) $4"; }
# play NAME ARGS...: ansible-playbook under the call's deadline; its output in $CAP/NAME.txt; rc in $rc, seconds in $secs
play() { local name=$1; shift; local s=$EPOCHREALTIME left=$(( deadline - $(date +%s) ))
         if [ "$left" -lt 15 ]; then rc=124; secs=0; echo "out of time" > "$CAP/$name.txt"; return; fi
         timeout "$left" ansible-playbook -i "$inv" "$@" > "$CAP/$name.txt" 2>&1; rc=$?
         secs=$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b - a}'); }
recap() { grep -A3 'PLAY RECAP' "$CAP/$1.txt" | grep -o 'changed=[0-9]*' | head -1; }
# the play's output on one line: the YAML callback wraps a long message anywhere, inside a phrase too
flat() { tr -s ' \n' ' ' < "$CAP/$1.txt"; }
# roles/server's closing report says "READY in N s (...)" once the wait passed (server_ready's own message is shown
# only when it fails)
ready() { flat "$1" | grep -qE 'READY in [0-9.]+ s'; }
why() { grep -m1 -A3 -E '^ +msg: ' "$CAP/$1.txt" | tr -s ' \n' ' ' | cut -c1-300; }
# The summary: one line, and summary.json (commit, GPU, SGLang, each step's result and seconds); also when the
# call's deadline ends the run (TERM): the steps so far, and the ones not reached said so
finish() {
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
"$PY" - "$CAP/steps.tsv" "$OUT/summary.json" "${SMOKE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" \
  "$GPU" "${SGL:-sglang 0.5.15.post1}" $(( $(date +%s) - t0 )) <<'PYEOF'
import json, os, sys
steps = []
for line in open(sys.argv[1]):
    name, ok, secs, detail = (line.rstrip("\n").split("\t") + [""])[:4]
    steps.append({"step": name, "ok": ok == "1", "seconds": float(secs or 0), "detail": detail})
n_ok = sum(s["ok"] for s in steps)
core = bool(os.environ.get("SMOKE_CORE"))
summary = {"commit": sys.argv[3], "gpu": sys.argv[4], "sglang": sys.argv[5], "seconds": int(sys.argv[6]),
           "ok": n_ok, "steps_total": len(steps), "core_only": core, "steps": steps}
json.dump(summary, open(sys.argv[2], "w"), indent=1)
bad = [s["step"] for s in steps if not s["ok"]]
print("smoke%s: %d of %d ok in %d s (commit %s, %s, %s)%s" % (
    " (core steps only: no broken-model or issue-45 rows)" if core else "",
    n_ok, len(steps), summary["seconds"], sys.argv[3], sys.argv[4] or "no GPU read", sys.argv[5],
    "; failed: " + ", ".join(bad) if bad else ""))
sys.exit(0 if not bad else 1)
PYEOF
}
trap 'echo "smoke: ended by its deadline" >&2; finish; exit 1' TERM

instance() { local name=$1 port=$2; shift 2
  play "$name" tests/gpu/e2e/instance.yml -e server_instance="$name" -e server_port="$port" -e "$base" "$@"; }

# Ansible from the carried wheels; the rest of .whl/ is roles/sglang's wheelhouse.
mkdir -p /tmp/wheelhouse /tmp/ansible-wheels
for w in .whl/*.whl; do case "$(basename "$w")" in ansible_core-*|resolvelib-*) cp "$w" /tmp/ansible-wheels/;; *) cp "$w" /tmp/wheelhouse/;; esac; done
"$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/ansite /tmp/ansible-wheels/*.whl || exit 1
export PYTHONPATH=/tmp/ansite PATH=/tmp/ansite/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1 \
       ANSIBLE_LOCALHOST_WARNING=0 PYTHONUNBUFFERED=1

# Models made on the spot: the tiny random pair, a small target with a draft that fits it by construction
# (accept length 3 of 4), and a broken copy (config.json names a model type no Transformers knows).
s=$(date +%s)
{ "$PY" tests/gpu/make_tiny_models.py $M && \
  "$PY" tests/gpu/make_fitting_models.py $M --agree 2 --hidden 1024 --layers 4 --inter 2816 --heads 8 --kv-heads 8 && \
  "$PY" tests/gpu/make_issue45_models.py $M/llama-tiny $M/i45 && \
  rm -rf $M/llama-badtype && cp -r $M/llama-tiny $M/llama-badtype && \
  "$PY" -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['model_type']='llamaX'; json.dump(c, open(p,'w'))" \
    $M/llama-badtype/config.json; } > "$CAP/models.txt" 2>&1; made=$?
record models "$([ $made = 0 ] && echo 1 || echo 0)" $(( $(date +%s) - s )) "$(tail -1 "$CAP/models.txt" | cut -c1-120)"

args='"attention-backend": "triton", "sampling-backend": "pytorch", "grammar-backend": "none", "disable-cuda-graph": true, "mem-fraction-static": 0.1, "enable-metrics": true'
base="{\"server_speculative\": {\"algorithm\": \"\"}, \"server_spec_check\": \"off\", \"server_ready_timeout\": 300, \"server_model_path\": \"$M/llama-tiny\", \"server_args\": {$args}}"
spec="{\"server_model_path\": \"$M/llama-fixed\", \"server_speculative\": {\"algorithm\": \"EAGLE3\", \"draft_model_path\": \"$M/eagle3-fixed\", \"num_steps\": 3, \"eagle_topk\": 1, \"num_draft_tokens\": 4}, \"server_spec_check\": \"fail\", \"server_spec_min_accept_length\": 2.5}"

# 1. roles/sglang, offline
play install tests/gpu/e2e/install.yml
record install "$([ $rc = 0 ] && echo 1 || echo 0)" "$secs" "rc=$rc $(why install)"
SGL=$(grep -ho 'sglang[-=]0\.[0-9.a-z]*' "$CAP/install.txt" | head -1)

# 2. a fresh instance on a host where the collection made nothing yet
instance smoke-a 30010
ok=0; [ $rc = 0 ] && ready smoke-a && ok=1
cp "$CAP/smoke-a.txt" "$CAP/smoke-a-fresh.txt"   # step 4 runs the same instance again, into smoke-a.txt
record fresh_instance $ok "$secs" "rc=$rc $(flat smoke-a | grep -oE 'READY in [0-9.]+ s' | head -1) $(why smoke-a)"

# 3. beside it: a second fresh instance, EAGLE-3 with the accept-length check (fail below 2.5), and a broken model
( instance smoke-b 30011; echo "$rc $secs" > "$CAP/smoke-b.rc" ) &
pb=$!
( instance smoke-e 30012 -e "$spec"; echo "$rc $secs" > "$CAP/smoke-e.rc" ) &
pe=$!
# SMOKE_CORE=1 (a call with little device time left): the instances only, not the refusal rows
if [ -z "${SMOKE_CORE:-}" ]; then
( instance smoke-bad 30013 -e server_model_path=$M/llama-badtype; echo "$rc $secs" > "$CAP/smoke-bad.rc" ) &
pbad=$!
fi
# issue 45's rows, each a fresh instance: refused before launch naming the file and field, or (a template given
# at launch) failed at READY by the chat probe
i45() { local name=$1 port=$2 want=$3; shift 3
  ( instance "$name" "$port" "$@"; echo "$rc $secs" > "$CAP/$name.rc"; echo "$want" > "$CAP/$name.want" ) & }
[ -n "${SMOKE_CORE:-}" ] || {
i45 i45-tpl-syntax 30021 'chat_template does not render' -e server_model_path=$M/i45/tpl-syntax
i45 i45-tpl-raise 30022 'This model does not take chat requests' -e server_model_path=$M/i45/tpl-raise
i45 i45-extra-tokens 30023 'token ids are at or above' -e server_model_path=$M/i45/extra-tokens
i45 i45-bfloat17 30024 'is not a dtype of the installed torch' -e server_model_path=$M/i45/bfloat17
i45 i45-context-length 30025 'context-length 1000000 is above' -e '{"server_args": {'"$args"', "context-length": 1000000}}'
i45 i45-chat-at-ready 30026 '1-token /v1/chat/completions answers 4' -e '{"server_args": {'"$args"', "chat-template": "'$M'/i45/broken.jinja"}}'
}
# meanwhile: what users call, on the first instance
s=$EPOCHREALTIME
chat=$(curl -s -m 30 -o "$CAP/chat.json" -w '%{http_code}' http://127.0.0.1:30010/v1/chat/completions \
  -H 'Content-Type: application/json' -d '{"model": "default", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 8}')
gen=$(curl -s -m 30 -o "$CAP/generate.json" -w '%{http_code}' http://127.0.0.1:30010/generate \
  -H 'Content-Type: application/json' -d '{"text": "hello", "sampling_params": {"max_new_tokens": 8, "temperature": 0}}')
ok=0; [ "$chat" = 200 ] && [ "$gen" = 200 ] && grep -q '"choices"' "$CAP/chat.json" && grep -q '"text"' "$CAP/generate.json" && ok=1
record requests $ok "$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b - a}')" "chat=$chat generate=$gen"

wait $pb; read -r rcb secs_b < "$CAP/smoke-b.rc"
ok=0; [ "$rcb" = 0 ] && ready smoke-b && ok=1
record second_instance $ok "$secs_b" "rc=$rcb $(why smoke-b)"
wait $pe; read -r rce secs_e < "$CAP/smoke-e.rc"
acc=$(flat smoke-e | grep -o 'speculative accept length [0-9.]*' | head -1)
ok=0; [ "$rce" = 0 ] && ready smoke-e && [ -n "$acc" ] && ok=1
record eagle3 $ok "$secs_e" "rc=$rce $acc $(why smoke-e)"
if [ -z "${SMOKE_CORE:-}" ]; then
wait "$pbad"; read -r rcbad secs_bad < "$CAP/smoke-bad.rc"
# refused before launch: a failed play naming the field, and no server process on its port
ok=0; [ "$rcbad" != 0 ] && flat smoke-bad | grep -q 'model_type' && ! grep -q 'Uvicorn running' /var/log/sglang/smoke-bad*.log 2>/dev/null \
  && ! curl -s -m 2 -o /dev/null http://127.0.0.1:30013/health && ok=1
record broken_refused $ok "$secs_bad" "rc=$rcbad $(why smoke-bad)"
fi

wait
for f in "$CAP"/i45-*.rc; do [ -e "$f" ] || continue; n=$(basename "$f" .rc); read -r rcx secsx < "$f"; want=$(cat "$CAP/$n.want")
  ok=0; [ "$rcx" != 0 ] && flat "$n" | grep -q -- "$want" && ok=1
  record "$n" $ok "$secsx" "rc=$rcx $(why "$n")"; done

# 4. the same instance again: nothing changes, nothing restarts
instance smoke-a 30010
ch=$(recap smoke-a); cp "$CAP/smoke-a.txt" "$CAP/smoke-a-rerun.txt"
ok=0; [ $rc = 0 ] && [ "$ch" = "changed=0" ] && ok=1
record rerun_unchanged $ok "$secs" "rc=$rc $ch $(why smoke-a)"

# 5. status.yml and stop.yml as an operator runs them
play status playbooks/status.yml -e server_instance=smoke-e
ok=0; [ $rc = 0 ] && flat status | grep -q 'sglang-smoke-e (pidfile): [^,]*, READY' && ok=1
record status $ok "$secs" "rc=$rc $(flat status | grep -o 'sglang-smoke-e (pidfile)[^"]*' | head -1 | cut -c1-200)"
s=$EPOCHREALTIME; okall=1
for n in smoke-a smoke-b smoke-e; do play "stop-$n" playbooks/stop.yml -e server_instance=$n; [ $rc = 0 ] || okall=0; done
sleep 1; for p in 30010 30011 30012; do curl -s -m 2 -o /dev/null "http://127.0.0.1:$p/health" && okall=0; done
record stop $okall "$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b - a}')" "ports 30010-30012 closed: $([ $okall = 1 ] && echo yes || echo no)"
finish
