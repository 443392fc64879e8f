# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is speculative decoding on, and with what: the one home of that rule (pure).

``server_speculative`` is a mapping. Its ``algorithm`` decides:

- the key is absent (an inventory mapping replaces the role's whole default, ``{algorithm: EAGLE3, ...}``, so a
  mapping that names only its draft still means the role's default algorithm): EAGLE3;
- the key is present and empty (``''``, ``null``, blanks): speculation is off;
- anything else, stripped and upper-cased: that algorithm (server/plan.py refuses those not in :data:`ALGORITHMS`).

A value that is not a mapping (``null``, ``''``) is off. server/plan.py, sglang/argv.py, bench/modes.py and
server/view.py (and through it every playbook) ask :func:`resolve`.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ALGORITHMS = ("EAGLE3", "EAGLE")
DEFAULT_ALGORITHM = "EAGLE3"


def algorithm(spec):
    """The algorithm ``spec`` turns on (upper case), or '' when speculation is off."""
    if not isinstance(spec, dict):
        return ""
    if "algorithm" not in spec:
        return DEFAULT_ALGORITHM
    return str(spec.get("algorithm") or "").strip().upper()


def resolve(spec):
    """``{on, algorithm, draft_model_path, adaptive}`` of a ``server_speculative`` mapping (off: algorithm '',
    draft None, adaptive False)."""
    algo = algorithm(spec)
    if not algo:
        return {"on": False, "algorithm": "", "draft_model_path": None, "adaptive": False}
    draft = str(spec.get("draft_model_path") or "").strip() or None
    adaptive = spec.get("adaptive")
    if isinstance(adaptive, str):
        adaptive = adaptive.strip().lower() in ("1", "true", "yes", "on", "y", "t")
    return {"on": True, "algorithm": algo, "draft_model_path": draft, "adaptive": bool(adaptive)}
