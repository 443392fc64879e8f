#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one hostile log line costs the waiter: CPU seconds for the stage tracker, the bar reader and the classifier
on lines with no spaces (a base64 blob, digits, a path run, brackets, percent signs), against a line of ordinary words
of the same length run beside it (the baseline) and a single pass over the bytes (the physical floor).

Before the patterns were made linear, a 20 KB line of word characters took 4.9 s and a 300 KB one about 3 minutes in
one poll; a 2 KB line of digits took about 9 s in the weight-file pattern alone.

Usage: python3 benchmarks/readiness/long_lines.py [--size 300000] [--repeat 3]
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "collections"))

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import log, signatures, stages  # noqa: E402


def cost(line, repeat):
    best = None
    for _ in range(repeat):
        t = time.process_time()
        tracker, classifier = stages.StageTracker(), signatures.Classifier()
        tracker.feed(line, 0)
        tracker.progress(line)
        log.bar_key(line)
        classifier.feed(line, tracker.stage, 0)
        classifier.verdict()
        spent = time.process_time() - t
        best = spent if best is None else min(best, spent)
    return best


def floor(line, repeat):
    best = None
    for _ in range(repeat):
        t = time.process_time()
        line.encode("utf-8").count(b"\n")
        spent = time.process_time() - t
        best = spent if best is None else min(best, spent)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=300000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n = a.size
    shapes = {"words (baseline)": ("lorem ipsum " * n)[:n], "base64": ("QUJD+/9=" * n)[:n], "digits": "7" * n,
              "word chars": "a" * n, "path run": ("a/" * n)[:n], "dotted": ("a." * n)[:n], "brackets": "[" * n,
              "percent": ("1%" * n)[:n], "blanks then bar": " " * (n - 4) + "50%|"}
    base = cost(shapes["words (baseline)"], a.repeat)
    pass_ = floor(shapes["words (baseline)"], a.repeat)
    print("one line of %d characters; CPU seconds (best of %d); ratio against the baseline line" % (n, a.repeat))
    print("%-18s %10s %8s" % ("shape", "seconds", "ratio"))
    for name, line in shapes.items():
        spent = cost(line, a.repeat)
        print("%-18s %10.4f %7.1fx" % (name, spent, spent / base if base else float("inf")))
    print("physical floor (one pass over the bytes): %.5f s; the baseline is %.0fx it" % (pass_, base / pass_ if pass_ else 0))


if __name__ == "__main__":
    main()
