#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# ansible-test must run from inside ansible_collections/<ns>/<name>: lay out a copy of the
# tracked files (what a release ships, plus tests/; not the checkout-only tools/, collections/, benchmarks/) there
# and run the sanity tests on it, each in the virtualenv ansible-test builds with its own pinned requirements.
#
# Usage: tests/sanity/run.sh [ansible-test sanity options, e.g. --test pylint | --list-tests]
# Exit status: ansible-test's (0 = every test passed). A summary (pass/fail and seconds per test) comes last.
#
# Caches, so that a second run does not rebuild anything:
#   - the per-test virtualenvs ansible-test keeps under ~/.ansible/test/venv (keyed by their requirements);
#   - the --venv delegation virtualenv, which ansible-test keeps in <collection>/tests/output/.tmp/delegation:
#     the layout lives in $SANITY_WORKDIR (default ~/.cache/llmserve-sanity) and that one folder survives re-layouts.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${VENV:-$repo/.venv}
work=${SANITY_WORKDIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llmserve-sanity}
dest=$work/ansible_collections/llmserve/sglang
keep=$work/delegation.keep
mkdir -p "$work"
exec 9>"$work/.lock"
flock -n 9 || { echo "sanity: waiting for another run using $work"; flock 9; }

# Fresh copy of the files, keeping only the delegation virtualenv from the last run.
rm -rf "$keep"
[ -d "$dest/tests/output/.tmp/delegation" ] && mv "$dest/tests/output/.tmp/delegation" "$keep"
rm -rf "$work/ansible_collections"
mkdir -p "$dest"
(cd "$repo" && git ls-files -co --exclude-standard -z | grep -zvE '^(collections|tools|benchmarks|docs/evidence)/' |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp -P --parents -t "$dest")
if [ -d "$keep" ]; then mkdir -p "$dest/tests/output/.tmp" && mv "$keep" "$dest/tests/output/.tmp/delegation"; fi

# ansible-test's pip bootstrap host is unreachable here: seed its cache with the shim.
pip_version=$("$venv/bin/python" -c 'import re,ansible_test,os;print(re.search(r"pip=.([0-9.]+)",open(os.path.join(os.path.dirname(ansible_test.__file__),"_internal/python_requirements.py")).read()).group(1))')
mkdir -p "$HOME/.ansible/test/cache"
cp "$repo/tests/sanity/get_pip_shim.py" "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"

cd "$dest"
# A fresh git repo so ansible-test sees exactly these files. ansible-test also lists untracked files that git does
# not ignore: keep its own output (the delegation virtualenv holds pip and setuptools) out of what it tests.
git init -q
printf '/tests/output/\n' >> .git/info/exclude
git add -A && git -c user.name=ci -c user.email=ci@localhost commit -qm sanity

log=$work/sanity.log
times=$work/times.tsv
: > "$times"; : > "$times.skip"; test=
start=$SECONDS
set +e
"$venv/bin/ansible-test" sanity --color no --venv --requirements --python 3.11 "$@" 2>&1 |
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [[ $line =~ ^Running\ sanity\ test\ \"([^\"]+)\" ]]; then test=${BASH_REMATCH[1]}; printf '%s\t%s\n' "$test" "$SECONDS" >> "$times"
    # ansible-test passes a test whose tool is missing (pwsh, shellcheck) after this warning: call it skipped.
    elif [[ $line =~ ^WARNING:\ Required\ program ]]; then printf '%s\n' "$test" >> "$times.skip"; fi
  done | tee "$log"
rc=${PIPESTATUS[0]}
set -e
end=$SECONDS

case " $* " in *" --list-tests "*) exit "$rc" ;; esac
echo
echo "=== sanity summary (log: $log)"
# A test failed if ansible-test reported issues for it: "ERROR: Found N <test> issue(s)" or the final list of failures.
failed=$( { sed -n -E 's/^ERROR: Found [0-9]+ ([^ ]+) issue\(s\).*/\1/p' "$log"
            awk '/^(ERROR|FATAL): The [0-9]+ sanity test\(s\) listed below/ {f = 1; next}
                 f && (/^(ERROR|FATAL|WARNING):/ || /^$/) {f = 0} f' "$log"; } | sort -u)
skipped=$( { sed -n -E 's/^WARNING: Skipping sanity test "([^"]+)".*/\1/p' "$log"; cat "$times.skip"; } | sort -u)
prev_name=; prev_t=
while IFS=$'\t' read -r name t; do
  [ -n "$prev_name" ] && printf '%s\t%s\n' "$prev_name" "$((t - prev_t))"
  prev_name=$name; prev_t=$t
done < "$times" > "$times.dur"
[ -n "$prev_name" ] && printf '%s\t%s\n' "$prev_name" "$((end - prev_t))" >> "$times.dur"
while IFS=$'\t' read -r name secs; do
  status=pass
  grep -qxF "$name" <<< "$skipped" && status=skipped
  grep -qxF "$name" <<< "$failed" && status=FAIL
  printf '  %-24s %-7s %4ss\n' "$name" "$status" "$secs"
done < "$times.dur"
printf '  total %ss, ansible-test exit status %s: %s\n' "$((end - start))" "$rc" "$([ "$rc" = 0 ] && echo PASSED || echo FAILED)"
# No stage passes doing nothing: no test run, or a test skipped because its tool is missing, fails the stage
# (ansible-test itself exits 0 then). SANITY_ALLOW_MISSING="test ..." lets named ones pass, printed as such.
if [ ! -s "$times" ]; then
  echo "sanity: FAILED: ansible-test ran no sanity test"; exit 1
fi
missing=
while IFS= read -r name; do
  [ -z "$name" ] && continue
  case " ${SANITY_ALLOW_MISSING:-} " in
    *" $name "*) echo "sanity: $name skipped, its tool missing (allowed by SANITY_ALLOW_MISSING)" ;;
    *) missing="$missing $name" ;;
  esac
done < <(sort -u "$times.skip")
if [ -n "$missing" ]; then
  echo "sanity: FAILED: skipped because their tool is missing:$missing (make system-deps installs them)"; exit 1
fi
exit "$rc"
