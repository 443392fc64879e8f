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

from __future__ import annotations

import json

from ansible_collections.llmserve.sglang.plugins.module_utils.host.values import to_bool, to_int

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
        adaptive = to_bool(adaptive) is True
    return {"on": True, "algorithm": algo, "draft_model_path": draft, "adaptive": bool(adaptive)}


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
        n, low = to_int(v), 0 if key == "num_steps" else 1
        if n is None or n < low:
            found.append(({key: v}, "is not a valid count", "give a whole number >= %d, or null" % low))
        else:
            out[key] = n
    v = spec.get("adaptive")
    if v is not None and to_bool(v) is None:
        found.append(({"adaptive": v}, "is not a boolean", "give true or false"))
    return out, found


SOURCE_MAX = 200  # characters of server_speculative.source kept (inventory text: shown, never run)
INVENTORY = "the inventory"


def _slots(cfg):
    """[(batch-size key, [candidate steps])] of an adaptive config (a mapping or its JSON text), by key; [] when it
    has none (SGLang's own default config) or cannot be read."""
    if isinstance(cfg, str):
        try:
            cfg = json.loads(cfg)
        except ValueError:
            return []
    if not isinstance(cfg, dict):
        return []
    out = []
    for key, entry in cfg.items():
        steps = entry.get("candidate_steps") if isinstance(entry, dict) else None
        if str(key).isdigit() and isinstance(steps, list) and all(to_int(s) is not None for s in steps):
            out.append((int(key), [to_int(s) for s in steps]))
    return sorted(out)


def _source(spec):
    text = spec.get("source") if isinstance(spec, dict) else None
    text = " ".join(str(text or "").split())  # one line: no newline or tab of an inventory string reaches a report
    return text[:SOURCE_MAX] or INVENTORY


def in_force(spec):
    """What a ``server_speculative`` mapping applies, in words, and where it came from (issue 44).

    ``{"setting": "off" | "static" | "adaptive", "algorithm", "threshold", "tiers", "source", "words"}``: ``tiers``
    the adaptive config's slots ``[{"from": batch, "steps": [...]}]``; ``threshold`` the largest batch that still speculates
    (the first slot of steps [0], less one) or None; ``source`` the mapping's ``source`` (what wrote it:
    playbooks/benchmark.yml names its run and date) else the inventory.
    """
    source = _source(spec)
    algo = algorithm(spec)
    out = {"setting": "off", "algorithm": algo, "threshold": None, "tiers": [], "source": source}
    if not algo:
        out["words"] = "off, from %s" % source
        return out
    if not resolve(spec)["adaptive"]:
        chain = ", ".join("%s %s" % (k, spec[k]) for k in ("num_steps", "eagle_topk") if spec.get(k) is not None)
        out.update(setting="static", words="static %s%s, from %s" % (algo, " (%s)" % chain if chain else "", source))
        return out
    tiers = _slots(spec.get("adaptive_config"))
    off = [key for key, steps in tiers if steps == [0]]
    out.update(setting="adaptive", tiers=[{"from": key, "steps": steps} for key, steps in tiers],
               threshold=off[0] - 1 if off else None)
    if not tiers:
        how = "SGLang's own config"
    else:
        how = "%s%s" % ("threshold %d: " % out["threshold"] if off else "",
                        ", ".join("%s steps from batch %d" % ("/".join(str(s) for s in steps), key)
                                  for key, steps in tiers))
    out["words"] = "adaptive %s (%s), from %s" % (algo, how, source)
    return out
