#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# The controller matrix: the unit tests and ansible-test sanity under ansible-core releases this machine's own
# Python (3.11, Debian 12) cannot run - 2.20 and 2.21 need Python >= 3.12, 2.22 needs >= 3.13.
#
# A Debian 13 (trixie, Python 3.13) root file system is made with debootstrap, as tools/fleet makes the test hosts,
# and cached; each ansible-core gets a venv in it (from PyPI, through the ordinary pip client); the checkout's files
# are copied in under ansible_collections/llmserve/sglang and run there under chroot (private mounts: nothing
# stays mounted on the host). Needs root, debootstrap and the Debian mirror.
#
# Usage: tools/controller_matrix/run.sh [CORE...]     (default: 2.20.10 2.21.5 2.22.0rc1)
#   SANITY_CORES="2.22.0rc1"   which of them also run ansible-test sanity (default: those of 2.21 and newer, whose
#                              pylint has ansible-bad-function, else the newest given; "" = none)
#   SANITY_ARGS="--test pylint"  extra ansible-test sanity arguments
#   DILL_FROM_PYPI=auto        2.22's pylint requirements take dill from a github.com archive (a commit after dill
#                              0.4.1); where github.com does not resolve (auto) or always (1), the core's
#                              sanity.pylint.txt gets the newest dill on PyPI instead (0.4.1, what 2.21 pins; the
#                              result line says so); 0 leaves the file as it is
#   UNIT_ARGS="-x"             extra pytest arguments; UNITS=0 skips the unit tests
# The unit tests' own packages are requirements/test.txt's pins (pytest, hypothesis, safetensors, ...).
# Writes a summary table to stdout and $CACHE/controller-matrix/results.tsv; exits non-zero when a run failed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${LLMSERVE_CACHE:-/var/cache/llmserve}
work=$cache/controller-matrix
rootfs=$work/rootfs-trixie
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cores=("$@")
[ ${#cores[@]} -gt 0 ] || cores=(2.20.10 2.21.5 2.22.0rc1)
newer() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]; }  # newer A B: A >= B
if [ -z "${SANITY_CORES+set}" ]; then
  SANITY_CORES=
  for core in "${cores[@]}"; do newer "$core" 2.21 && SANITY_CORES="$SANITY_CORES $core"; done
  [ -n "$SANITY_CORES" ] || SANITY_CORES=${cores[-1]}
fi
sanity_cores=$SANITY_CORES
[ "$(id -u)" = 0 ] || { echo "controller-matrix: needs root (debootstrap, chroot)" >&2; exit 2; }
mkdir -p "$work"
exec 9>"$work/.lock"
flock -n 9 || { echo "controller-matrix: waiting for another run"; flock 9; }

if [ ! -x "$rootfs/usr/bin/python3" ]; then
  command -v debootstrap >/dev/null || { echo "controller-matrix: install debootstrap (make system-deps)" >&2; exit 2; }
  echo "== debootstrap trixie from $mirror (a few minutes, once)"
  rm -rf "$rootfs.tmp"
  debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates,git,shellcheck \
    trixie "$rootfs.tmp" "$mirror" > "$work/debootstrap.log" 2>&1
  mv "$rootfs.tmp" "$rootfs"
fi
pyver=$(chroot "$rootfs" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')

# The checkout as a collection, fresh each run: for the units everything they read (tools/, docs/evidence/), for
# sanity what tests/sanity/run.sh lays out (what a release ships, plus tests/).
layout() {  # layout DEST EXCLUDE-REGEX
  rm -rf "$1"; mkdir -p "$1"
  (cd "$repo" && git ls-files -co --exclude-standard -z | grep -zvE "$2" |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp -P --parents -t "$1")
  (cd "$1" && git init -q && printf '/tests/output/\n' >> .git/info/exclude && git add -A &&
    git -c user.name=ci -c user.email=ci@localhost commit -qm matrix)
}
rm -rf "$rootfs/src" "$rootfs/sanity"
layout "$rootfs/src/ansible_collections/llmserve/sglang" '^(collections|benchmarks)/'
mkdir -p "$rootfs/src/ansible_collections/llmserve/sglang/collections/ansible_collections/llmserve"
ln -s ../../.. "$rootfs/src/ansible_collections/llmserve/sglang/collections/ansible_collections/llmserve/sglang"
layout "$rootfs/sanity/ansible_collections/llmserve/sglang" '^(collections|tools|benchmarks|docs/evidence)/'
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
# The host's CA bundle (a TLS-intercepting proxy's CA with it) as the rootfs's own, and in its pip.conf: the venvs
# ansible-test makes call pip with an environment of their own, so PIP_CERT alone does not reach them.
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/host-ca.crt"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf '[global]\ncert = /etc/ssl/certs/host-ca.crt\ndisable-pip-version-check = true\n' > "$rootfs/etc/pip.conf"
fi
# ansible-test fetches get-pip from a host that may be unreachable: the same shim as tests/sanity/run.sh.
mkdir -p "$rootfs/root/.ansible/test/cache"

# shellcheck disable=SC2016  # the inner script expands its own arguments
in_root() {  # run a shell command inside the rootfs, with /proc, /dev and the wheel cache mounted privately
  unshare --mount --fork -- bash -c '
    set -e; r=$1; w=$2; shift 2
    mount --make-rprivate /
    mount --bind "$r" "$r"  # the root a mount point, as on a host: /proc/self/mountinfo lists "/" inside
    mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount -t tmpfs tmpfs "$r/tmp"
    mkdir -p "$r/var/cache/llmserve/wheels"; mount --bind "$w" "$r/var/cache/llmserve/wheels"
    exec chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
      PIP_CERT=/etc/ssl/certs/host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 \
      LLMSERVE_CACHE=/var/cache/llmserve bash -ec "$1"' _ "$rootfs" "$cache/wheels" "$1"
}
mkdir -p "$cache/wheels"

# What the unit tests import, pinned as the controller venv pins it (not ansible-core, nor the lint tools that
# depend on it)
pins=$(grep -hoE '^(jinja2|requests|matplotlib|pytest|pytest-xdist|safetensors|hypothesis|pyyaml)==[^ ]+' \
  "$repo/requirements/controller.txt" "$repo/requirements/test.txt" | sort | tr '\n' ' ')
results=$work/results.tsv
printf 'ansible-core\tpython\tunit\tunit_s\tsanity\tsanity_s\n' > "$results"
rc=0
for core in "${cores[@]}"; do
  venv=/opt/matrix/$core
  echo "== ansible-core $core on Python $pyver"
  if [ "$(cat "$rootfs$venv/.installed" 2>/dev/null)" != "$pins" ]; then
    in_root "python3 -m venv --clear $venv && $venv/bin/pip install -q ansible-core==$core pyyaml $pins &&
      printf '%s' '$pins' > $venv/.installed"
  fi
  # 2.22's pylint requirements name dill by a github.com archive: PyPI's newest dill where github.com is not reachable
  note=
  reqs=$rootfs$(in_root "$venv/bin/python -c 'import ansible_test,os;print(os.path.dirname(ansible_test.__file__))'")/_data/requirements/sanity.pylint.txt
  [ -f "$reqs.orig" ] && cp "$reqs.orig" "$reqs"
  if grep -q '^dill @ https://github.com/' "$reqs" && [ "${DILL_FROM_PYPI:-auto}" != 0 ] && { [ "${DILL_FROM_PYPI:-auto}" = 1 ] ||
      ! in_root "python3 -c 'import socket; socket.getaddrinfo(\"github.com\", 443)'" 2>/dev/null; }; then
    dill=$(in_root "$venv/bin/pip index versions dill 2>/dev/null" | sed -n -E 's/^dill \(([^)]+)\)$/\1/p')
    [ -n "$dill" ] || { echo "controller-matrix: no dill version from PyPI" >&2; exit 2; }
    cp "$reqs" "$reqs.orig"
    sed -i -E "s|^dill @ https://github.com/.*$|dill==$dill|" "$reqs"
    note=" (pylint's dill: $dill from PyPI for github.com's $(grep -oE 'archive/[0-9a-f]{7}' "$reqs.orig" | cut -d/ -f2))"
    echo "sanity.pylint.txt: dill==$dill from PyPI in place of $(grep '^dill' "$reqs.orig" | cut -c1-90)..."
  fi
  pip_version=$(in_root "$venv/bin/python -c 'import re,ansible_test,os;print(re.search(r\"pip=.([0-9.]+)\",open(os.path.join(os.path.dirname(ansible_test.__file__),\"_internal/python_requirements.py\")).read()).group(1))'")
  cp "$repo/tests/sanity/get_pip_shim.py" "$rootfs/root/.ansible/test/cache/get_pip_${pip_version//./_}.py"
  t0=$SECONDS; unit=pass
  [ "${UNITS:-1}" = 0 ] && { unit=skipped; echo "units skipped" > "$work/unit-$core.log"; } ||
  in_root "cd /src/ansible_collections/llmserve/sglang && $venv/bin/python -m pytest -q -p no:cacheprovider \
    ${UNIT_ARGS:-} tests/unit" > "$work/unit-$core.log" 2>&1 || { unit=FAIL; rc=1; }
  tail -5 "$work/unit-$core.log"
  unit_line=$(tail -1 "$work/unit-$core.log" | sed -E 's/=//g; s/^ +| +$//g')
  unit_s=$((SECONDS - t0)); sanity=-; sanity_s=-
  if [[ " $sanity_cores " == *" $core "* ]]; then
    t0=$SECONDS; sanity=pass
    in_root "cd /sanity/ansible_collections/llmserve/sglang && PATH=$venv/bin:\$PATH ansible-test sanity --color no \
      --venv --requirements --python $pyver ${SANITY_ARGS:-}" > "$work/sanity-$core.log" 2>&1 || { sanity=FAIL; rc=1; }
    tail -3 "$work/sanity-$core.log"
    sanity_s=$((SECONDS - t0))
  fi
  [ "$sanity" = - ] && note=
  printf '%s\t%s\t%s (%s)\t%s\t%s%s\t%s\n' "$core" "$pyver" "$unit" "$unit_line" "$unit_s" "$sanity" "$note" "$sanity_s" \
    >> "$results"
done
echo "=== controller matrix (logs: $work/{unit,sanity}-CORE.log)"
column -t -s $'\t' "$results"
exit "$rc"
