# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang versions: one parser for the whole collection (PEP 440 subset, stdlib only, Python >= 3.8).

``key()`` orders versions as pip does (``0.5.10rc1 < 0.5.10 < 0.5.10.post1``); ``release()`` is the
``X.Y.Z`` part, which is what SGLang's command line changed on (``0.5.10.post1`` has the 0.5.10 flags).
"""

from __future__ import annotations

import re

VERSION_RE = re.compile(
    r"^\s*v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>a|alpha|b|beta|rc|c)[-_.]?(?P<pre_n>\d*))?"
    r"(?:(?:-(?P<post_n1>\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(?P<post_n2>\d*)))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev_n>\d*))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$",
    re.IGNORECASE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "rc": 2, "c": 2}


def _match(text):
    m = VERSION_RE.match(str(text if text is not None else ""))
    if not m:
        raise ValueError("unparseable SGLang version %r: give it as X.Y.Z (e.g. 0.5.23)" % (text,))
    return m


def release(text, width=3):
    """'0.5.10.post1' -> (0, 5, 10): the release part, padded or cut to ``width`` numbers."""
    rel = tuple(int(x) for x in _match(text).group("release").split("."))
    return (rel + (0,) * width)[:width]


def key(text):
    """A sort key for a version string (pre < final < post; dev before its release)."""
    m = _match(text)
    rel = tuple(int(x) for x in m.group("release").split("."))
    while len(rel) > 1 and rel[-1] == 0:
        rel = rel[:-1]
    has_post = m.group("post_n1") is not None or m.group("post_n2") is not None
    has_dev = m.group("dev_n") is not None
    if m.group("pre_l"):
        pre = (_PRE_RANK[m.group("pre_l").lower()], int(m.group("pre_n") or 0))
    elif has_dev and not has_post:
        pre = (-1, 0)
    else:
        pre = (3, 0)
    post = int(m.group("post_n1") or m.group("post_n2") or 0) if has_post else -1
    dev = int(m.group("dev_n") or 0) if has_dev else float("inf")
    return (rel, pre, post, dev)


def compare(a, b):
    """-1, 0 or 1 as a is older than, the same as or newer than b."""
    ka, kb = key(a), key(b)
    n = max(len(ka[0]), len(kb[0]))
    ka = ((ka[0] + (0,) * n)[:n],) + ka[1:]
    kb = ((kb[0] + (0,) * n)[:n],) + kb[1:]
    return (ka > kb) - (ka < kb)


def is_version(text):
    return bool(VERSION_RE.match(str(text if text is not None else "")))


# The one probe of the installed SGLang: run with the server venv's interpreter, it sees what the server will see.
# Distribution metadata first (a wheel install); a source checkout on sys.path has only sglang.__version__.
PROBE_SOURCE = r"""
def _sglang_version():
    try:
        from importlib.metadata import version, PackageNotFoundError
        try:
            return version("sglang")
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    try:
        import sglang
    except ImportError:
        return None
    return getattr(sglang, "__version__", None)
"""
PROBE = PROBE_SOURCE + "print(_sglang_version() or '')\n"


def probe(run, python):
    """``(version, error)`` of the sglang that ``python`` imports; ``run(argv) -> (rc, stdout, stderr)``.

    ``error`` names why there is no version (the interpreter failed, or no sglang is installed there).
    """
    rc, out, err = run([python, "-c", PROBE])
    lines = (out or "").strip().splitlines()
    if rc != 0:
        return None, ((err or "").strip().splitlines() or ["rc %d" % rc])[-1]
    if not lines or not lines[-1].strip():
        return None, "no sglang installed for %s" % python
    return lines[-1].strip(), None
