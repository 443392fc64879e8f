#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Score the signature table on the corpus of real public SGLang logs.

  corpus_eval.py [--set public|h200|batch7] [--subset batch-2] [--verbose]

Reads tests/fixtures/sglang_logs/<set>/expected.json (public by default) and classifies each log with
plugins/module_utils/sglang/signatures.classify_text, as the waiter would after the
process is gone.  A log counts as right when the category matches and, unless the
expected category is ``unknown``, the expected key substring is in the key line.
``--subset`` scores only the entries tagged ``"heldout": NAME`` (a batch scored
before the table was changed for it).  An entry's ``alternatives`` (category and key
line pairs written with the label, before the first replay) are fair readings too:
they count in the "fair" figure, never in the strict one.
"""
from __future__ import print_function

import argparse
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "collections"))

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import classify_text  # noqa: E402

FIX = os.path.join(REPO, "tests", "fixtures", "sglang_logs")
PUB = os.path.join(FIX, "public")


def score(subset=None, verbose=False, out=sys.stdout, which="public"):
    pub = os.path.join(FIX, which)
    with open(os.path.join(pub, "expected.json"), encoding="utf-8") as f:
        expected = json.load(f)
    names = sorted(n for n, e in expected.items() if subset is None or e.get("heldout") == subset)
    right_cat = right = fair = 0
    rows = []
    for name in names:
        exp = expected[name]
        with open(os.path.join(pub, name), encoding="utf-8") as f:
            v = classify_text(f.read())
        cat_ok = v["category"] == exp["category"]
        key_ok = cat_ok and (exp["category"] == "unknown" or bool(exp.get("key") and v["line"]
                                                                     and exp["key"] in v["line"]))
        alt_ok = key_ok or any(v["category"] == a["category"] and v["line"] and a["key"] in v["line"]
                               for a in exp.get("alternatives") or ())
        right_cat += cat_ok
        right += key_ok
        fair += alt_ok
        rows.append((name, exp["category"], v["category"], "ok" if key_ok else "alt" if alt_ok else "MISS",
                     (v["line"] or "")[:100]))
    for name, want, got, mark, line in rows:
        if verbose or mark != "ok":
            print("%-4s %-58s want %-20s got %-20s %s" % (mark, name, want, got, line), file=out)
    n = len(names) or 1
    print("%d logs%s: category right %d (%.0f%%), category and key line right %d (%.0f%%), with the fair "
          "alternatives %d" % (len(names), " (subset %s)" % subset if subset else "", right_cat,
                               100.0 * right_cat / n, right, 100.0 * right / n, fair), file=out)
    return right, len(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="public")
    ap.add_argument("--subset")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    score(a.subset, a.verbose, which=a.set)


if __name__ == "__main__":
    main()
