#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# On the H200, after tests/gpu/e2e.sh's install step (issue 26): each row of the issue's table through roles/server
# with the role's DEFAULTS (the model check is on by default now): refused before launch naming the file; then the
# same checkpoints with server_preflight=false, diagnosed by server_ready; and a whole checkpoint READY, with the
# check's own seconds (model_verify's elapsed) beside SGLang's weight loading.
set -u
CAP=$1; inv=tests/gpu/e2e/inventory.yml; PY=/opt/torch/.venv/bin/python3; M=/srv/models
"$PY" tests/gpu/make_sharded_variants.py $M/llama-tiny $M 4 > "$CAP/md-models.txt" 2>&1 || { cat "$CAP/md-models.txt"; exit 1; }
"$PY" - "$M" >> "$CAP/md-models.txt" 2>&1 <<'PYEOF' || { cat "$CAP/md-models.txt"; exit 1; }
import json, os, shutil, sys
m = sys.argv[1]
def clone(src, dst):
    shutil.rmtree(os.path.join(m, dst), ignore_errors=True)
    shutil.copytree(os.path.join(m, src), os.path.join(m, dst))
    return os.path.join(m, dst)
def edit(path, **kw):
    with open(os.path.join(path, "config.json")) as f:
        c = json.load(f)
    c.update(kw)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
d = clone("sharded-good", "no-tokenizer")
for n in os.listdir(d):
    if n.startswith("tokenizer") or n in ("special_tokens_map.json", "vocab.json", "merges.txt"):
        os.remove(os.path.join(d, n))
edit(clone("sharded-good", "bad-arch"), architectures=["LlamaForCausalLMM"])
edit(clone("eagle3-tiny", "eagle3-doubled"), hidden_size=512)
d = clone("sharded-good", "root-only")
for n in os.listdir(d):
    os.chmod(os.path.join(d, n), 0o600)
print("made no-tokenizer, bad-arch (LlamaForCausalLMM), eagle3-doubled (hidden_size 512), root-only (0600)")
PYEOF
id svc >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin svc >> "$CAP/md-models.txt" 2>&1 \
  || { echo "svc:x:990:990::/nonexistent:/usr/sbin/nologin" >> /etc/passwd; echo "svc:x:990:" >> /etc/group; }
id svc >> "$CAP/md-models.txt"; command -v sudo >> "$CAP/md-models.txt" || echo "no sudo on this host" >> "$CAP/md-models.txt"
args='"attention-backend": "triton", "sampling-backend": "pytorch", "grammar-backend": "none", "disable-cuda-graph": true, "mem-fraction-static": 0.08'
base="{\"server_speculative\": {\"algorithm\": \"\"}, \"server_spec_check\": \"off\", \"server_ready_timeout\": 240, \"server_args\": {$args}}"
draft='{"server_speculative": {"algorithm": "EAGLE3", "draft_model_path": "/srv/models/eagle3-doubled", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}}'
svc='{"server_user": "svc", "server_group": "svc"}'
one() { local name=$1 port=$2 model=$3; shift 3; local s=$EPOCHREALTIME
  timeout "${FAIL_TIMEOUT:-240}" ansible-playbook -v -i "$inv" tests/gpu/e2e/instance.yml -e "$base" -e server_instance="$name" \
    -e server_port="$port" -e server_model_path="$M/$model" "$@" > "$CAP/md-$name.txt" 2>&1; local rc=$?
  awk -v n="$name" -v rc="$rc" -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%s rc=%s %.1fs\n", n, rc, b - a}' \
    >> "$CAP/md.txt"; }
# 1. the defaults: every row refused before launch (and the whole checkpoint served)
one d_missing_shard 30301 sharded-missing &
one d_no_tokenizer 30302 no-tokenizer &
one d_bad_arch 30303 bad-arch &
one d_draft_doubled 30304 llama-tiny -e "$draft" &
one d_root_only_svc 30305 root-only -e "$svc" &
one d_readable_svc 30306 sharded-good -e "$svc" &
one d_whole 30307 sharded-good &
wait
# 2. the preflight off: what server_ready makes of each
one o_missing_shard 30311 sharded-missing -e server_preflight=false &
one o_no_tokenizer 30312 no-tokenizer -e server_preflight=false &
one o_bad_arch 30313 bad-arch -e server_preflight=false &
one o_draft_doubled 30314 llama-tiny -e "$draft" -e server_preflight=false &
one o_root_only_svc 30315 root-only -e "$svc" -e server_preflight=false &
wait
cat "$CAP/md.txt"
for f in "$CAP"/md-[do]_*.txt; do echo "== $(basename "$f")"
  grep -E "FAILED|fatal:|\"msg\"|msg:|READY|crashed|category|remedy|refus|not fit|elapsed|cannot|sudo" "$f" | grep -v "^ok:" | head -12 | cut -c1-700; done
grep -o '"elapsed": [0-9.]*' "$CAP/md-d_whole.txt"
for l in /var/log/sglang/o_*.log /var/log/sglang/d_whole*.log; do [ -f "$l" ] && cp "$l" "$CAP/"; done
grep -hE "Load weight (begin|end)|fired up" /var/log/sglang/d_whole*.log 2>/dev/null | cut -c1-200
