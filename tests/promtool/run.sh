#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# roles/monitoring's files, checked by promtool (Debian's prometheus package): the role renders them (files-only
# mode + the prometheus.yml it would run) from tests/promtool/inventory.yml; then check config, check rules,
# test rules (one test per alert, alerts.test.yml), and every dashboard query parsed by Prometheus's PromQL parser.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${VENV:-$repo/.venv}/bin"
command -v promtool >/dev/null || { echo "promtool missing: apt-get install prometheus (make system-deps)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# the folder stands for /etc/prometheus as Debian's package leaves it (root 0755): roles/monitoring takes an existing
# folder only as it is, never chmod-ing one it did not make (mktemp's is 0700)
chmod 0755 "$out"

ANSIBLE_CONFIG="$repo/ansible.cfg" "$bin/ansible-playbook" -i "$here/inventory.yml" "$here/render.yml" -e "out=$out" >"$out/render.log" \
  || { cat "$out/render.log"; exit 1; }
promtool check config "$out/prometheus.yml"
compgen -G "$out/rules.d/*.yml" >/dev/null || { echo "promtool: the role rendered no rule file: nothing to check" >&2; exit 1; }
promtool check rules "$out"/rules.d/*.yml
cp "$here/alerts.test.yml" "$out/"
promtool test rules "$out/alerts.test.yml"

# Dashboard queries as recording rules: promtool parses each expression (Grafana's variables filled in).
"$bin/python" - "$out/llmserve-sglang.json" "$out/dashboard.rules.yml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
subst = {"$__rate_interval": "5m", "$instance": ".*"}
rules = []
for i, e in enumerate(exprs):
    for k, v in subst.items():
        e = e.replace(k, v)
    rules.append({"record": "dashboard:query_%d" % i, "expr": e})
if not rules:
    sys.exit("dashboard: no query found in %s: nothing to check" % sys.argv[1])
json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(sys.argv[2], "w"))
print("dashboard: %d queries" % len(rules))
PY
promtool check rules "$out/dashboard.rules.yml"
