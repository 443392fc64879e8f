# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Run with the interpreter the virtualenv will use: print, as JSON, what selects its wheels (CPython version,
# machine, C library and version) and the torch it already has, for playbooks/sglang_wheelhouse.yml.
import glob
import json
import platform
import sys
from importlib import metadata

libc, version = platform.libc_ver()
if not libc and glob.glob("/lib/ld-musl-*"):
    libc = "musl"
    version = "1.2"  # musllinux_1_2 is what current wheels use
try:
    torch = metadata.version("torch")  # what a reused torch would be
except metadata.PackageNotFoundError:
    torch = None
print(json.dumps({"torch": torch, "python": "%d.%d.%d" % sys.version_info[:3], "implementation": sys.implementation.name,
                  "machine": platform.machine(), "libc": libc, "libc_version": version}))
