# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one check of a regular expression a user gives (``extra_patterns`` of server_ready, ``own_process_patterns``
of gpu_health), before anything runs (target side, stdlib only).

Python's ``re`` backtracks: ``(a+)+$`` against forty ``a`` and a ``b`` runs for hours, and no deadline can stop it
inside a module. A pattern is refused, naming the option and its index, when it does not compile, is longer than
``MAX_LENGTH``, or can backtrack exponentially: a quantified group that holds a variable quantifier (``(a+)+``,
``(a*)*``, ``(\\d+\\.)+``), alternatives that can start alike or match nothing (``(a|aa)+``, ``(a|)+``), or two
quantifiers in a row that repeat the same thing (``.*.*x``: a power of the line's length). What it is matched
against is bounded too: the log reader's lines are clipped (``sglang/signatures.clip``).
"""
from __future__ import annotations

import re
import sys
import warnings

if sys.version_info >= (3, 11):  # sre_parse is deprecated in favour of re._parser (the same parser)
    from re import _parser as sre_parse  # pylint: disable=ungrouped-imports
else:  # pragma: no cover - Python < 3.11
    import sre_parse  # pylint: disable=deprecated-module

MAX_LENGTH = 1000
MAX_PATTERNS = 64
_REPEATS = tuple(getattr(sre_parse, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                 if hasattr(sre_parse, name))
_UNKNOWN = object()  # a first character that is not one literal


def _children(op, av):
    """The sub-patterns of one parsed node."""
    if op in _REPEATS:
        return [av[2]]
    if op == sre_parse.SUBPATTERN:
        return [av[-1]]
    if op == sre_parse.BRANCH:
        return list(av[1])
    if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
        return [av[1]]
    if op == sre_parse.GROUPREF_EXISTS:
        return [p for p in av[1:] if p is not None]
    if op == getattr(sre_parse, "ATOMIC_GROUP", None):
        return [av]
    return []


def _varies(op, av):
    return op in _REPEATS and av[1] != av[0]


def _has_variable_repeat(items):
    for op, av in items:
        if _varies(op, av) or any(_has_variable_repeat(child) for child in _children(op, av)):
            return True
    return False


def _first(items):
    """The literal a sub-pattern starts with, or _UNKNOWN (a class, a group, nothing at all)."""
    for op, av in items:
        if op == sre_parse.LITERAL:
            return av
        if op in (sre_parse.AT,):
            continue
        return _UNKNOWN
    return _UNKNOWN  # the empty alternative


def _ambiguous_branch(items):
    for op, av in items:
        if op == sre_parse.BRANCH:
            firsts = [_first(alt) for alt in av[1]]
            if _UNKNOWN in firsts or len(set(firsts)) != len(firsts):
                return True
        if any(_ambiguous_branch(child) for child in _children(op, av)):
            return True
    return False


def _nested(items):
    """Why ``items`` can backtrack exponentially (or polynomially with a high power), or None."""
    items = list(items)
    for (op, av), (op2, av2) in zip(items, items[1:]):
        if _varies(op, av) and _varies(op2, av2) and list(av[2]) == list(av2[2]):
            return "two quantifiers in a row repeat the same thing (as in .*.* or \\s*\\s+)"
    for op, av in items:
        if op in _REPEATS and av[1] > 1:
            if _has_variable_repeat(av[2]):
                return "a quantified group holds a quantifier (nested quantifiers, as in (a+)+)"
            if _ambiguous_branch(av[2]):
                return "a quantified group holds alternatives that can start alike or match nothing (as in (a|aa)+)"
        for child in _children(op, av):
            why = _nested(child)
            if why:
                return why
    return None


def problem(pattern):
    """Why ``pattern`` is refused, or None when it may be used."""
    if not isinstance(pattern, str) or not pattern:
        return "not a regular expression: %r" % (pattern,)
    if len(pattern) > MAX_LENGTH:
        return "%d characters, at most %d" % (len(pattern), MAX_LENGTH)
    try:
        with warnings.catch_warnings():  # "possible nested set" and the like: the user's pattern, not ours to print
            warnings.simplefilter("ignore")
            re.compile(pattern)
            parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError) as err:
        return "bad regex: %s" % err
    why = _nested(list(parsed))
    return "%s: it can backtrack for hours on one line; write it without the nesting" % why if why else None


def check(patterns, option):
    """The refusals of a list of user patterns, each naming ``option[index]`` and the pattern (cut); [] when all
    may be used."""
    patterns = list(patterns or [])
    if len(patterns) > MAX_PATTERNS:
        return ["%s: %d patterns, at most %d" % (option, len(patterns), MAX_PATTERNS)]
    found = []
    for index, pattern in enumerate(patterns):
        why = problem(pattern)
        if why:
            shown = pattern if not isinstance(pattern, str) or len(pattern) <= 80 else pattern[:77] + "..."
            found.append("%s[%d] %r refused: %s" % (option, index, shown, why))
    return found
