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
echo "build check: ok"
