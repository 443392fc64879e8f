# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private filters of playbooks/benchmark.yml (may change without notice): the doubling grid and whether to measure
its next point (plugin_utils/_bench_curves.py), and whether the installed SGLang carries the step-0 patch (roles/sglang's
patch record)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.module_utils.bench import limits
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_curves as curves


def _bench_grid(max_batch, given=None):
    """``given`` (benchmark_concurrency: a batch size or a list of them) when set, else 1, 2, 4, ... up to
    ``max_batch``; each a whole number from 1 to module_utils/bench/limits.MAX_CONCURRENCY (``"64"`` is 64, never
    ``[6, 4]``)."""
    try:
        if not (given is None or isinstance(given, (str, list)) and not given):  # unset: None, "" or []
            return limits.whole_list(given, "benchmark_concurrency")
        return curves.doubling(limits.whole(max_batch, "benchmark_max_batch"))
    except limits.BenchInputError as exc:
        raise AnsibleFilterError(str(exc))


def _bench_next(results, mode, batch, plan):
    """{"measure": bool, "why": str}: measure ``batch`` in ``mode`` now (curves.next_point). The counts it is given
    are checked first: the batch (1..MAX_CONCURRENCY), benchmark_repeats (1..MAX_REPEATS, the loop of every point) and
    benchmark_time_budget (0, no budget, to MAX_SECONDS; NaN and inf refused)."""
    plan = dict(plan or {})
    try:
        limits.whole(batch, "batch size")
        limits.whole(plan.get("repeats", 1), "benchmark_repeats", 1, limits.MAX_REPEATS)
        limits.seconds(plan.get("budget_s", 0), "benchmark_time_budget", 0, limits.MAX_SECONDS, low_included=True)
    except limits.BenchInputError as exc:
        raise AnsibleFilterError(str(exc))
    return curves.next_point(mode, batch, list(results or []), plan)


def _bench_step0(record):
    """True when roles/sglang's patch record (the venv's llmserve-patches.json, as a mapping) lists the step-0 patch;
    False when it does not; None when there is no record (an install roles/sglang did not make)."""
    if not isinstance(record, dict) or not isinstance(record.get("patches"), list):
        return None
    return any(isinstance(p, dict) and p.get("name") == curves.STEP0_PATCH for p in record["patches"])


class FilterModule(object):
    def filters(self):
        return {"_bench_grid": _bench_grid, "_bench_next": _bench_next, "_bench_step0": _bench_step0}
