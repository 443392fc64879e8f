# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version impersonated: SGLANG_DOUBLE_VERSION, else the one install.py recorded, else the newest supported."""
import os

FLAGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flags")


def version_key(s):
    """A sortable key: X.Y.Z.postN after X.Y.Z, 10 after 9."""
    return tuple(int(p) if p.isdigit() else -1 for p in s.replace(".post", ".").split("."))


def supported(flags_dir=FLAGS):
    """The versions the double impersonates: one per flag table (flags/<version>.json, written by
    tools/sglang_double/gen_flag_table.py for each of the collection's sglang/gates.VERIFIED_VERSIONS; the double runs
    on hosts without the collection, so a test keeps the two equal), oldest first. install.py asks here too."""
    return tuple(sorted((n[:-len(".json")] for n in os.listdir(flags_dir) if n.endswith(".json")), key=version_key))


SUPPORTED = supported()
# the newest table: the collection's sglang/gates.DEFAULT_VERSION (a test keeps them equal)
DEFAULT = SUPPORTED[-1]


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
    """Compare against another supported version string (version_key order)."""
    return version_key(__version__) >= version_key(v)
