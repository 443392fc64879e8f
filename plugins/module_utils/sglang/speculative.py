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
- anything else, stripped and upper-cased: that algorithm (plugin_utils/_server_plan.py refuses those not in :data:`ALGORITHMS`).

A value that is not a mapping (``null``, ``''``) is off. The plan (plugin_utils/_server_plan.py), sglang/argv.py,
bench/modes.py and the view (plugin_utils/_server_view.py, and through it every playbook) ask :func:`resolve`;
:func:`problems` is the one check of a mapping that is on (the plan and the sglang_argv filter ask it; the renderer
trusts what it passed).
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


_TRUE = ("1", "true", "yes", "on", "y", "t")
_FALSE = ("0", "false", "no", "off", "n", "f", "")


def _count(v):
    """A whole number from an inventory value (``8``, ``'8'``, ``8.0``), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return None


def problems(spec):
    """``(normalised, [(shown, problem, fix)])`` of a ``server_speculative`` mapping that is on: the algorithm is one
    this collection renders, a draft is named, the counts are whole numbers (``num_steps`` >= 0, the others >= 1),
    ``adaptive`` is a boolean. ``normalised`` is a copy with the counts as integers. A spec
    that is off has no problem."""
    algo = algorithm(spec)
    if not algo:
        return spec, []
    out, found = dict(spec), []
    if algo not in ALGORITHMS:
        found.append(({"algorithm": spec.get("algorithm")}, "names an algorithm this role does not render",
                      "use EAGLE3 (or EAGLE), or '' to serve without speculation"))
    if not str(spec.get("draft_model_path") or "").strip():
        found.append(({"draft_model_path": spec.get("draft_model_path")}, "has no draft model while algorithm is %s" % algo,
                      "set server_speculative.draft_model_path to the EAGLE-3 draft directory, or algorithm: '' to "
                      "serve without it"))
    for key in ("num_steps", "eagle_topk", "num_draft_tokens"):
        v = spec.get(key)
        if v is None:
            continue
        n, low = _count(v), 0 if key == "num_steps" else 1
        if n is None or n < low:
            found.append(({key: v}, "is not a valid count", "give a whole number >= %d, or null" % low))
        else:
            out[key] = n
    v = spec.get("adaptive")
    if not (v is None or isinstance(v, bool) or (isinstance(v, int) and v in (0, 1))
            or (isinstance(v, str) and v.strip().lower() in _TRUE + _FALSE)):
        found.append(({"adaptive": v}, "is not a boolean", "give true or false"))
    return out, found
