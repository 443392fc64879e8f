# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real SGLang wheels from PyPI for tests that read their source: ${LLMSERVE_CACHE:-/var/cache/llmserve}/wheels,
downloaded once with pip (no dependencies) when absent."""
import glob
import os
import subprocess
import sys
import zipfile

WHEELS = os.path.join(os.environ.get("LLMSERVE_CACHE", "/var/cache/llmserve"), "wheels")


def wheel(version):
    found = glob.glob(os.path.join(WHEELS, "sglang-%s-*.whl" % version))
    if not found:
        os.makedirs(WHEELS, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp", "--platform",
                        "manylinux_2_34_x86_64", "-d", WHEELS, "sglang==%s" % version], check=True)
        found = glob.glob(os.path.join(WHEELS, "sglang-%s-*.whl" % version))
    return found[0]


def read(version, member):
    """The text of one file of that wheel, or None when the wheel has no such file."""
    with zipfile.ZipFile(wheel(version)) as whl:
        try:
            return whl.read(member).decode()
        except KeyError:
            return None
