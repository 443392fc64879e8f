# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Download, cache and unpack real SGLang wheels from PyPI for tests (no dependencies).

Wheels are cached in ``${LLMSERVE_CACHE:-/var/cache/llmserve}/wheels`` and fetched with the ordinary
pip client (``pip download --no-deps``), which honours PIP_INDEX_URL, PIP_CERT, HTTPS_PROXY, ...
"""
import glob
import os
import subprocess
import sys
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.path.join(REPO, "collections") not in sys.path:
    sys.path.insert(0, os.path.join(REPO, "collections"))
# pylint: disable-next=wrong-import-position
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.gates import VERIFIED_VERSIONS  # noqa: E402

# the versions the collection verified (sglang/gates.py): the wheels the tests cache and read
SUPPORTED = VERIFIED_VERSIONS
PATCH_DIR = os.path.join(REPO, "roles", "sglang", "files", "patches")


def cache_dir():
    d = os.path.join(os.environ.get("LLMSERVE_CACHE") or "/var/cache/llmserve", "wheels")
    os.makedirs(d, exist_ok=True)
    return d


def wheel_path(version, python=None):
    """Path of the cached ``sglang==version`` wheel, downloading it when missing.

    ``python`` ("3.11"): a wheel that installs on that CPython (cpXY or pure); default: any cached one."""
    d = cache_dir()
    tags = ("cp%s" % python.replace(".", ""), "py3") if python else ("",)
    pattern = os.path.join(d, "sglang-%s-*.whl" % version)

    def cached():
        return sorted(f for f in glob.glob(pattern)
                      if any(os.path.basename(f).startswith("sglang-%s-%s" % (version, t)) for t in tags))

    found = cached()
    if found:
        return found[0]
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
        "--only-binary=:all:", "--python-version", python or "3.11", "--implementation", "cp",
        "--platform", "manylinux_2_34_x86_64", "--platform", "any",
        "-d", d, "sglang==%s" % version,
    ]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    found = cached()
    if proc.returncode != 0 or not found:
        raise RuntimeError("pip download sglang==%s failed (rc=%s):\n%s" % (version, proc.returncode, proc.stdout[-3000:]))
    return found[0]


def read_member(version, member):
    with zipfile.ZipFile(wheel_path(version)) as z:
        return z.read(member).decode("utf-8")


def metadata(version):
    with zipfile.ZipFile(wheel_path(version)) as z:
        name = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")][0]
        return z.read(name).decode("utf-8")


def requires_dist(version):
    return [line.split(":", 1)[1].strip() for line in metadata(version).splitlines() if line.startswith("Requires-Dist:")]


def unpack(version, dest, members=None):
    """Extract ``members`` (paths inside the wheel; default: the whole ``sglang/`` tree) into ``dest``."""
    with zipfile.ZipFile(wheel_path(version)) as z:
        names = z.namelist()
        if members is None:
            members = [n for n in names if n.startswith("sglang/")]
        missing = [m for m in members if m not in names]
        if missing:
            raise KeyError("not in sglang %s wheel: %s" % (version, ", ".join(missing)))
        for m in members:
            z.extract(m, dest)
    return dest


def shipped_patches(version, set_name="sm120"):
    """The role's shipped patch set (roles/sglang/vars/main.yml) selected for ``version``, module-ready."""
    import yaml  # ships with ansible-core on the controller

    from ansible_collections.llmserve.sglang.plugins.module_utils.install.patch import version_matches

    with open(os.path.join(REPO, "roles", "sglang", "vars", "main.yml")) as fh:
        data = yaml.safe_load(fh)
    out = []
    for p in data["__sglang_builtin_patch_sets"][set_name]:
        if version_matches(version, p["versions"]):
            with open(os.path.join(REPO, "roles", "sglang", "files", p["file"])) as fh:
                out.append({"name": p["name"], "diff": fh.read(), "versions": p["versions"], "gpus": p["gpus"]})
    return out


def patch_targets(patches):
    """Wheel members the patches touch."""
    from ansible_collections.llmserve.sglang.plugins.module_utils.install.patch import parse_unified_diff

    out = set()
    for p in patches:
        for fp in parse_unified_diff(p["diff"], p["name"]):
            out.add(fp.target(p.get("strip", 1)))
    return sorted(out)
