#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# The demo: bare local test hosts -> SGLang (the double) serving "Kimi K2.5 int4, TP 8, EAGLE-3"
# on 2 hosts, with live progress and a ready summary.
#
#   tools/demo/run.sh [--keep] [--name FLEET] [--hosts N] [--scenario SCENARIO]   (make demo)
#
#   --keep        leave the fleet up afterwards (default: tear it down; env DEMO_KEEP=1)
#   --name        fleet name (default: demo, env DEMO_FLEET); hosts are NAME-gpu1..N
#   --hosts       number of hosts (default: 2, env HOSTS)
#   --scenario    SGLANG_DOUBLE_SCENARIO for the servers (default: ready, env DEMO_SCENARIO; try crash_oom_cuda_graph)
#
# Needs root, podman, runc, debootstrap (see docs/test-fleet.md) and .venv (make setup).
set -euo pipefail
cd "$(dirname "$0")/../.."
keep=${DEMO_KEEP:-0} name=${DEMO_FLEET:-demo} hosts=${HOSTS:-2} scenario=${DEMO_SCENARIO:-ready}
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --name) name="$2"; shift ;;
    --hosts) hosts="$2"; shift ;;
    --scenario) scenario="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "demo: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
ap=.venv/bin/ansible-playbook
[ -x "$ap" ] || { echo "demo: $ap is missing: run 'make setup' first" >&2; exit 2; }
teardown() { [ "$keep" = 1 ] || python3 tools/fleet/fleet.py down --name "$name"; }
trap teardown EXIT

step() { printf '\n==== %s\n' "$*"; }
step "1/4 bring up $hosts test hosts (fleet '$name')"
python3 tools/fleet/fleet.py up -n "$hosts" --name "$name"
inv=(-i ".fleet/$name/inventory.yml" -i playbooks/demo/inventory.yml)

step "2/4 prepare them: SGLang double + fake nvidia-smi (8x RTX PRO 6000)"
"$ap" "${inv[@]}" playbooks/demo/prepare.yml

step "3/4 deploy: playbooks/deploy_eagle3.yml (cuda/sglang skipped: no GPUs here)"
"$ap" "${inv[@]}" playbooks/deploy_eagle3.yml -e "{\"server_env\": {\"SGLANG_DOUBLE_SCENARIO\": \"$scenario\", \"SGLANG_DOUBLE_PACE\": \"1.0\"}}"

step "4/4 status"
"$ap" "${inv[@]}" playbooks/status.yml
if [ "$keep" = 1 ]; then echo "fleet '$name' left up: python3 tools/fleet/fleet.py down --name $name"; fi
