# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What SGLang's HTTP API answers mean (pure; no I/O). The one reader of the speculative accept length.

``GET /server_info`` (``/get_server_info`` before 0.4.7) carries ``internal_states``: one dict per data-parallel
rank, each with ``avg_spec_accept_length`` once speculative decoding has run. The benchmark (bench/client.py),
``spec_check`` (ready/spec_accept.py) and roles/server's status all read it through :func:`accept_length`, so
they report the same number on DP > 1.
"""

from __future__ import annotations

import math
import re

ACCEPT_KEY = "avg_spec_accept_length"
# The floor below which a draft does not fit its target (tokens per verify step; 1.0 = no draft token accepted): the
# default of roles/server's server_spec_min_accept_length (_server_view.DEFAULTS), spec_check and the benchmark report.
MIN_ACCEPT_LENGTH = 1.3


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def accept_length(server_info):
    """The mean of ``internal_states[*].avg_spec_accept_length`` over the DP ranks that report one; None when none does.

    Ranks share the load, so the mean is the deployment's figure; a rank that has not decoded yet (no key) is left
    out rather than counted as 0. Older layouts put the value at the top level (or ``internal_states`` as a dict).
    """
    if not isinstance(server_info, dict):
        return None
    states = server_info.get("internal_states") or []
    if isinstance(states, dict):
        states = [states]
    values = [v for v in (_number(s.get(ACCEPT_KEY)) for s in states if isinstance(s, dict)) if v is not None]
    if not values and _number(server_info.get(ACCEPT_KEY)) is not None:
        values = [_number(server_info[ACCEPT_KEY])]
    return sum(values) / len(values) if values else None


# One sample of the running-requests gauge in Prometheus text format 0.0.4: the name, optional labels (one per
# scheduler rank: tp_rank, pp_rank, ...), one space, the value.
_RUNNING = re.compile(r"(?m)^sglang:num_running_reqs(?:\{[^}]*\})? ([0-9.eE+-]+|NaN|[+-]Inf)\s*$")


def running_requests(metrics_text):
    """The requests a server is running now: the sum of ``sglang:num_running_reqs`` over its ranks, from the text of
    ``GET /metrics``; None when the text has no such sample (metrics off, or not SGLang)."""
    values = []
    for raw in _RUNNING.findall(metrics_text or ""):
        try:
            value = float(raw)
        except ValueError:
            continue
        if not math.isnan(value):  # NaN is no count
            values.append(value)
    return sum(values) if values else None
