# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version impersonated: SGLANG_DOUBLE_VERSION, else the one install.py recorded, else 0.5.23."""
import os

# The collection's verified versions (sglang/gates.VERIFIED_VERSIONS; the double runs on hosts without the
# collection, so a test keeps the two equal). install.py reads this line.
SUPPORTED = ("0.5.9", "0.5.10.post1", "0.5.15.post1", "0.5.23")
DEFAULT = "0.5.23"


def _installed():
    try:
        from sglang._installed import VERSION  # written by install.py
        return VERSION
    except ImportError:
        return None


__version__ = os.environ.get("SGLANG_DOUBLE_VERSION") or _installed() or DEFAULT
if __version__ not in SUPPORTED:
    raise ImportError("sglang double: unsupported version %r (supported: %s)" % (__version__, ", ".join(SUPPORTED)))


def at_least(v):
    """Compare against another supported version string (0.5.10.post1 > 0.5.10 > 0.5.9)."""
    def key(s):
        return tuple(int(p) if p.isdigit() else -1 for p in s.replace(".post", ".").split("."))
    return key(__version__) >= key(v)
