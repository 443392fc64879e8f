# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang double: a stdlib-only stand-in for the ``sglang`` package (see docs/sglang-double.md)."""
import os

from sglang.version import __version__

__all__ = ["__version__"]

# Like the real package (seen with 0.5.15.post1 on the lent GPU, issue 43): importing it makes the compile-cache
# folders it is pointed at, with the process's umask and owner; a folder it may not make raises PermissionError.
for _name in ("SGLANG_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "CUDA_CACHE_PATH",
              "FLASHINFER_WORKSPACE_BASE"):
    if os.environ.get(_name):
        os.makedirs(os.environ[_name], exist_ok=True)
