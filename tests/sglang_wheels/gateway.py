# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real SGLang gateways from PyPI for tests: smg (1.13.0) and sglang-router (0.3.2, its last release).

Each is installed (with its dependencies, by the ordinary pip client) into a venv cached under
``${LLMSERVE_CACHE:-/var/cache/llmserve}/gateways/<package>-<version>``, once; :func:`help_text` is what the
installed launcher prints for ``-m <pkg>.launch_router --help`` - the text roles/router reads on the target.
"""
import os
import subprocess
import sys

GATEWAYS = (("smg", "1.13.0", "smg.launch_router"), ("sglang-router", "0.3.2", "sglang_router.launch_router"))


def _cache():
    d = os.path.join(os.environ.get("LLMSERVE_CACHE") or "/var/cache/llmserve", "gateways")
    os.makedirs(d, exist_ok=True)
    return d


def venv(package, version):
    """Path of a venv holding ``package==version`` (built when missing; ``.installed`` marks a finished one)."""
    path = os.path.join(_cache(), "%s-%s" % (package, version))
    done = os.path.join(path, ".installed")
    if not os.path.exists(done):
        subprocess.run([sys.executable, "-m", "venv", "--clear", path], check=True)
        proc = subprocess.run([os.path.join(path, "bin", "pip"), "install", "-q", "--disable-pip-version-check",
                               "--only-binary=:all:", "%s==%s" % (package, version)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError("pip install %s==%s failed:\n%s" % (package, version, proc.stdout[-3000:]))
        with open(done, "w") as f:
            f.write("ok\n")
    return path


def python(package, version):
    return os.path.join(venv(package, version), "bin", "python")


def help_text(package, version):
    """The installed launcher's --help, cached next to the venv."""
    module = dict((p, m) for p, _v, m in GATEWAYS)[package]
    path = os.path.join(venv(package, version), "launch_router.help")
    if not os.path.exists(path):
        out = subprocess.run([python(package, version), "-m", module, "--help"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True, check=True).stdout
        with open(path + ".tmp", "w") as f:
            f.write(out)
        os.rename(path + ".tmp", path)
    with open(path) as f:
        return f.read()
