# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's inputs checked as numbers, with their bounds (bench_serving, the ``_bench_grid`` filter,
bench_plan): a value is a whole number (an int, or a string of digits read as one int), a list of them, or a number
of seconds; anything else is refused naming the setting. A string is never a list of its characters (``"64"`` is
64, not ``[6, 4]``), a bool is not a number, NaN and infinity are no timeout.
"""

from __future__ import annotations

import math
import re

MAX_CONCURRENCY = 4096      # requests in flight (the load generator's worker pool); the largest batch measured
MAX_REQUESTS = 1000000      # requests of one load point
MAX_REPEATS = 100           # repeats of one load point (benchmark_repeats)
MAX_TOKENS = 1 << 20        # max_new_tokens, input_len
MAX_SECONDS = 7 * 86400     # a timeout, a time budget
MIN_INTERVAL_S = 0.01       # the running batch's sampling interval
MAX_INTERVAL_S = 3600.0

_DIGITS = re.compile(r"^\s*\d{1,12}\s*\Z")


class BenchInputError(ValueError):
    """A benchmark input refused: the message names the setting, the value and what is accepted."""


def _shown(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def whole(value, name, low=1, high=MAX_CONCURRENCY):
    """``value`` as an int in ``low..high``: an int, or a string of digits; refused otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise BenchInputError("%s must be a whole number from %d to %d, not %s" % (name, low, high, _shown(value)))
    if isinstance(value, str):
        if not _DIGITS.match(value):
            raise BenchInputError("%s must be a whole number from %d to %d, not the string %s"
                                  % (name, low, high, _shown(value)))
        value = int(value)
    if not low <= value <= high:
        raise BenchInputError("%s: %d is outside %d..%d" % (name, value, low, high))
    return value


def whole_list(value, name, low=1, high=MAX_CONCURRENCY, most=64):
    """``value`` as a sorted list of distinct ints in ``low..high``: one whole number (:func:`whole`) or a list of
    them, at most ``most`` entries; a string is one number, never a list of its digits."""
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return [whole(value, name, low, high)]
    if not isinstance(value, (list, tuple)) or not value:
        raise BenchInputError("%s must be a whole number or a non-empty list of them (%d..%d), not %s"
                              % (name, low, high, _shown(value)))
    if len(value) > most:
        raise BenchInputError("%s: %d entries, at most %d" % (name, len(value), most))
    return sorted(set(whole(item, "%s[%d]" % (name, i), low, high) for i, item in enumerate(value)))


def seconds(value, name, low=0.0, high=MAX_SECONDS, low_included=False):
    """``value`` as a finite number of seconds above ``low`` (or at it, with ``low_included``) and at most ``high``:
    an int, a float or a string of one; NaN, infinity, a bool or a list are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BenchInputError("%s must be a number of seconds, not %s" % (name, _shown(value)))
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise BenchInputError("%s must be a number of seconds, not %s" % (name, _shown(value)))
    if math.isnan(number) or math.isinf(number):
        raise BenchInputError("%s must be a finite number of seconds, not %s" % (name, _shown(value)))
    if number < low or (number == low and not low_included) or number > high:
        if low_included:
            raise BenchInputError("%s: %s s is outside %g..%g s" % (name, _shown(value), low, high))
        raise BenchInputError("%s: %s s must be above %g and at most %g s" % (name, _shown(value), low, high))
    return number


def load(params):
    """bench_serving's load settings checked: ``{concurrency, num_requests, max_new_tokens, input_len, timeout,
    sample_interval}`` (num_requests defaults to max(4 x concurrency, 8)); raises :class:`BenchInputError`."""
    concurrency = whole(params.get("concurrency"), "concurrency", 1, MAX_CONCURRENCY)
    num = params.get("num_requests")
    return {
        "concurrency": concurrency,
        "num_requests": max(4 * concurrency, 8) if num is None else whole(num, "num_requests", 1, MAX_REQUESTS),
        "max_new_tokens": whole(params.get("max_new_tokens"), "max_new_tokens", 1, MAX_TOKENS),
        "input_len": whole(params.get("input_len"), "input_len", 1, MAX_TOKENS),
        "timeout": seconds(params.get("timeout"), "timeout"),
        "sample_interval": seconds(params.get("sample_interval"), "sample_interval", MIN_INTERVAL_S, MAX_INTERVAL_S,
                                   low_included=True),
    }
