#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rebuild a benchmark report from a run folder, from the checkout (the playbook uses the bench_report action).

    bench_report.py RUN_DIR [--no-plots] [--tolerance X] [--check-model] [--check-confirm]

The logic ships in the collection (plugins/module_utils/bench/report.py); this only makes the checkout importable.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "collections"))
from ansible_collections.llmserve.sglang.plugins.module_utils.bench import report  # noqa: E402

if __name__ == "__main__":
    sys.exit(report.main())
