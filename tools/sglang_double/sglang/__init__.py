"""SGLang double: a stdlib-only stand-in for the ``sglang`` package (see docs/sglang-double.md)."""
from sglang.version import __version__  # noqa: F401
