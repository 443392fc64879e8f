#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Build the collection tarball, install it into a scratch collections path and use it
# by FQCN from outside the checkout, as a user who installed it from Galaxy would.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${VENV:-$repo/.venv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$repo"
"$venv/bin/ansible-galaxy" collection build --output-path "$work/dist" --force >/dev/null
tarball=$(ls "$work"/dist/llmserve-sglang-*.tar.gz)
echo "built $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB)"
# Nothing from tests/, .venv or local state may ship.
if tar -tzf "$tarball" | grep -E '^(tests|\.venv|\.fleet|collections|extensions/molecule)/'; then
  echo "FAIL: the tarball ships files that build_ignore should drop" >&2; exit 1
fi
mkdir -p "$work/installed"
printf "[defaults]\ncollections_path = %s\n" "$work/installed" > "$work/ansible.cfg"
export ANSIBLE_CONFIG="$work/ansible.cfg" ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
# From outside the checkout, or ansible-galaxy sees the checkout's copy and installs nothing.
cd "$work"
"$venv/bin/ansible-galaxy" collection install --force -p "$work/installed" "$tarball" >/dev/null
for f in "$repo"/plugins/modules/*.py; do
  m=$(basename "$f" .py)
  case "$m" in __*) continue ;; esac
  # ansible-doc only warns when a plugin fails to load: require its header.
  "$venv/bin/ansible-doc" "llmserve.sglang.$m" 2>&1 | grep -q "^> MODULE llmserve.sglang.$m" ||
    { "$venv/bin/ansible-doc" "llmserve.sglang.$m"; echo "FAIL: ansible-doc llmserve.sglang.$m" >&2; exit 1; }
  echo "ansible-doc llmserve.sglang.$m: ok"
done
for f in "$repo"/playbooks/*.yml; do
  p=$(basename "$f" .yml)
  "$venv/bin/ansible-playbook" -i localhost, --syntax-check "llmserve.sglang.$p" >/dev/null
  echo "ansible-playbook --syntax-check llmserve.sglang.$p: ok"
done
# Every playbook in a subfolder too (playbooks/tasks/ holds task lists, inventory files are no playbooks): the shipped
# ones from the installed collection, the checkout-only ones (playbooks/demo) from the checkout's collections path.
while IFS= read -r f; do
  rel=${f#"$repo"/}
  case "$rel" in playbooks/tasks/*|*/inventory.yml) continue ;; esac
  if [ -f "$work/installed/ansible_collections/llmserve/sglang/$rel" ]; then
    "$venv/bin/ansible-playbook" -i localhost, --syntax-check "$work/installed/ansible_collections/llmserve/sglang/$rel" >/dev/null
    echo "ansible-playbook --syntax-check $rel (installed): ok"
  else
    ANSIBLE_COLLECTIONS_PATH="$repo/collections" "$venv/bin/ansible-playbook" -i localhost, --syntax-check "$f" >/dev/null
    echo "ansible-playbook --syntax-check $rel (checkout only): ok"
  fi
done < <(find "$repo/playbooks" -mindepth 2 -name '*.yml' | sort)
# What the shipped playbooks run must ship: every llmserve.sglang.X they name is a module, action, role, filter,
# playbook or action group (module_defaults' group/llmserve.sglang.X) of the installed collection, and none reaches
# into the checkout (tools/, tests/ are not in the tarball).
inst="$work/installed/ansible_collections/llmserve/sglang"
grep -rhoE 'llmserve\.sglang\.[a-z0-9_]+' "$inst/playbooks" | sort -u | sed 's/llmserve\.sglang\.//' |
while read -r name; do
  [ -f "$inst/plugins/modules/$name.py" ] || [ -f "$inst/plugins/action/$name.py" ] || [ -d "$inst/roles/$name" ] ||
    [ -f "$inst/playbooks/$name.yml" ] ||
    "$venv/bin/python" -c 'import sys, yaml; sys.exit(sys.argv[2] not in (yaml.safe_load(open(sys.argv[1])) or {}).get("action_groups", {}))' \
      "$inst/meta/runtime.yml" "$name" ||
    grep -rqE "[\"']${name}[\"']" "$inst/plugins/filter" "$inst/plugins/test" 2>/dev/null ||
    { echo "FAIL: the shipped playbooks use llmserve.sglang.$name, which the tarball lacks" >&2; exit 1; }
done
# tools/ or tests/ as a path part, also at its end ("{{ repo }}/tools" is how playbooks/demo/prepare.yml reached it)
if grep -rnE "(^|[/'\" ])(tools|tests)([/'\"]|$)" "$inst/playbooks" | grep -vE '^\S+:[0-9]+:\s*#'; then
  echo "FAIL: a shipped playbook reaches into tools/ or tests/, which the tarball leaves out" >&2; exit 1
fi
echo "shipped playbooks use only what ships: ok"
# The benchmark's report runs from the installed collection (the bench_report action and module_utils/bench).
mkdir -p "$work/run"
"$venv/bin/python" - "$work/run/raw.json" <<'PY'
import json, sys
rows = []
for mode, rate, sat in (("baseline", 60.0, 773.0), ("eagle3", 96.0, 354.0)):
    for c in (1, 2, 4, 8, 16):
        per_req = min(rate, sat / c)
        rows.append({"mode": mode, "concurrency": c, "repeat": 0, "median_per_request_tps": per_req,
                     "output_throughput": per_req * c, "completed": 8, "failed": 0,
                     "accept_length": 3.2 if mode == "eagle3" else None})
meta = {"sglang_version": "0.5.15.post1", "speculative": {"algorithm": "EAGLE3", "num_steps": 3, "eagle_topk": 1},
        "cuda_graph_bs": [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16]}
json.dump({"meta": meta, "results": rows}, open(sys.argv[1], "w"))
PY
"$venv/bin/ansible" localhost -m llmserve.sglang.bench_report -a "run_dir=$work/run plots=false" >"$work/report.out" ||
  { cat "$work/report.out"; echo "FAIL: llmserve.sglang.bench_report from the installed collection" >&2; exit 1; }
# Two static curves and no step-0 patch recorded: the installed report keeps static EAGLE-3 (issue 34: adaptive only
# where the patch is there and its curve was measured) and says why adaptive was refused.
if ! grep -q '"applied": "eagle3"' "$work/run/summary.json" || ! grep -q '"action": "keep"' "$work/run/analysis.json" ||
   ! grep -q 'adaptive refused' "$work/run/report.md"; then
  cat "$work/report.out"; echo "FAIL: the installed bench_report wrote no recommendation" >&2; exit 1
fi
echo "llmserve.sglang.bench_report from the installed collection: ok"
echo "build check: ok"
