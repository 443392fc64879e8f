#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rebuild a benchmark report from a run folder, from the checkout (the playbook uses the bench_report action).

    bench_report.py RUN_DIR [--no-plots] [--tolerance X] [--check-model] [--check-confirm]

The logic ships in the collection (plugins/plugin_utils/_bench_report.py); this is its command line from a checkout.
Exit status: 0, 2 no raw.json, 3 --check-model failed, 4 --check-confirm failed.
"""
import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "collections"))
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as report  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("run_dir", type=Path, help="folder holding raw.json; outputs land next to it")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--tolerance", type=float, default=report.DEFAULT_TOLERANCE,
                        help="relative tolerance of the crossover against the rate model (default %(default)s)")
    parser.add_argument("--check-model", action="store_true",
                        help="exit 3 when a speculative mode's crossover/threshold does not match the rate model")
    parser.add_argument("--check-confirm", action="store_true",
                        help="exit 4 when the confirming run does not follow the better curve on both sides")
    args = parser.parse_args(argv)
    if not (args.run_dir / "raw.json").is_file():
        print("bench_report: %s not found" % (args.run_dir / "raw.json"), file=sys.stderr)
        return 2
    summary = report.build(args.run_dir, with_plots=not args.no_plots, tolerance=args.tolerance)
    print("\n".join(report.lines_of(summary, args.run_dir)))
    code, why = report.failures(summary, args.check_model, args.check_confirm)
    if why:
        print("bench_report: " + why, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
