# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang double: a stdlib-only stand-in for the ``sglang`` package (see docs/sglang-double.md)."""
from sglang.version import __version__  # noqa: F401
