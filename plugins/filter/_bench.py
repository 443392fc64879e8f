# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private filters of playbooks/benchmark.yml (may change without notice): the doubling grid and whether to measure
its next point (plugin_utils/_bench_curves.py), and whether the installed SGLang carries the step-0 patch (roles/sglang's
patch record)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_curves as curves


def _bench_grid(max_batch, given=None):
    """``given`` (benchmark_concurrency) when it is a list, else 1, 2, 4, ... up to ``max_batch``."""
    if given:
        try:
            return sorted(set(int(b) for b in given))
        except (TypeError, ValueError):
            raise AnsibleFilterError("benchmark_concurrency must be a list of batch sizes, got %r" % (given,))
    try:
        top = int(max_batch)
    except (TypeError, ValueError):
        raise AnsibleFilterError("benchmark_max_batch must be a whole number, got %r" % (max_batch,))
    if top < 1:
        raise AnsibleFilterError("benchmark_max_batch must be at least 1, got %d" % top)
    return curves.doubling(top)


def _bench_next(results, mode, batch, plan):
    """{"measure": bool, "why": str}: measure ``batch`` in ``mode`` now (curves.next_point)."""
    return curves.next_point(mode, batch, list(results or []), dict(plan or {}))


def _bench_step0(record):
    """True when roles/sglang's patch record (the venv's llmserve-patches.json, as a mapping) lists the step-0 patch;
    False when it does not; None when there is no record (an install roles/sglang did not make)."""
    if not isinstance(record, dict) or not isinstance(record.get("patches"), list):
        return None
    return any(isinstance(p, dict) and p.get("name") == curves.STEP0_PATCH for p in record["patches"])


class FilterModule(object):
    def filters(self):
        return {"_bench_grid": _bench_grid, "_bench_next": _bench_next, "_bench_step0": _bench_step0}
