#!/usr/bin/env bash
# ansible-test must run from inside ansible_collections/<ns>/<name>: lay out a copy of the
# tracked files (what a release ships, plus tests/; not the checkout-only tools/) there and run the sanity tests on it, each in
# the virtualenv ansible-test builds with its own pinned requirements.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${VENV:-$repo/.venv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/ansible_collections/llmserve/sglang
mkdir -p "$dest"
(cd "$repo" && git ls-files -co --exclude-standard -z | grep -zvE '^(collections|tools|benchmarks)/' |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp -P --parents -t "$dest")
# ansible-test's pip bootstrap host is unreachable here: seed its cache with the shim.
pip_version=$("$venv/bin/python" -c 'import re,ansible_test,os;print(re.search(r"pip=.([0-9.]+)",open(os.path.join(os.path.dirname(ansible_test.__file__),"_internal/python_requirements.py")).read()).group(1))')
mkdir -p ~/.ansible/test/cache
cp "$repo/tests/sanity/get_pip_shim.py" ~/.ansible/test/cache/get_pip_${pip_version//./_}.py
cd "$dest"
# A fresh git repo so ansible-test sees exactly these files.
git init -q && git add -A && git -c user.name=ci -c user.email=ci@localhost commit -qm sanity
"$venv/bin/ansible-test" sanity --color no --venv --requirements --python 3.11 "$@"
