# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/user_regex (issue 42, items 5 and 6): a user's regex that could backtrack for hours, is too long or does not
compile is refused naming the option and its index, before server_ready's wait or gpu_health's gate starts; the
patterns people write beside them pass."""
import re

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.host import user_regex
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import gate
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter

GOOD = [r"CUDA out of memory", r"Lustre.*EIO", r"(error|fail)+", r"NCCL.*timeout", r"(?:foo)+bar", r"x{2,}",
        r"(ab){3}", r"(?:a|b|c)+", r"(a{2})+", r"(\w|\d)+$", r"a.*b.*c", r"Xid.*\d+", r"\d+\s+GB", r"^sglang::scheduler$", "a" * 1000]


@pytest.mark.parametrize("pattern", GOOD)
def test_the_patterns_people_write_pass(pattern):
    assert user_regex.problem(pattern) is None and user_regex.check([pattern], "extra_patterns") == []


@pytest.mark.parametrize("pattern, why", [
    (r"(a+)+", "nested quantifiers"), (r"(a*)*", "nested quantifiers"), (r"(a?)+", "nested quantifiers"),
    (r"(\d+\.)+$", "nested quantifiers"), (r"((a)+b)+", "nested quantifiers"), (r"(?=(a+)+)", "nested quantifiers"),
    (r"(x+x+)+y", "nested quantifiers"), (r"(.*a){12}", "nested quantifiers"), (r"(?:\s*,?)*$", "nested quantifiers"),
    (r"(a|aa)+", "start alike or match nothing"), (r"(a|)+", "start alike or match nothing"),
    (r"(a|a?b)*c", "nested quantifiers"), (r"(ab|a)+$", "start alike"), (r"(a|ab|c)*", "start alike"),
    (r".*.*.*x", "two quantifiers in a row"), (r"\s*\s+", "two quantifiers in a row"), (r"a+a+b", "in a row"),
    ("a" * 1001, "1001 characters, at most 1000"), (r"(", "bad regex"), (r"[z-a]", "bad regex"), ("", "not a regular"),
    (None, "not a regular"), (5, "not a regular")])
def test_a_pattern_that_can_hang_or_break_is_refused_with_why(pattern, why):
    assert why in user_regex.problem(pattern)


def test_the_refusal_names_the_option_index_and_pattern():
    got = user_regex.check([r"ok", r"(a+)+$", r"also ok", r"("], "extra_patterns")
    assert len(got) == 2
    assert got[0].startswith("extra_patterns[1] '(a+)+$' refused: a quantified group holds a quantifier")
    assert got[1].startswith("extra_patterns[3] '(' refused: bad regex")
    assert user_regex.check(["x"] * 65, "own_process_patterns") == ["own_process_patterns: 65 patterns, at most 64"]
    assert user_regex.check(["x"] * 64, "own_process_patterns") == []


@pytest.mark.parametrize("patterns, refused", [
    ([{"regex": "(a+)+$"}], "extra_patterns[0] '(a+)+$' refused"),
    ([{"regex": "ok"}, {"regex": "(a|aa)+"}], "extra_patterns[1] '(a|aa)+' refused"),
    ([{"regex": "("}], "bad regex"), ([{"regex": "x" * 1001}], "1001 characters")])
def test_server_ready_refuses_before_the_wait_starts(patterns, refused):
    with pytest.raises(BadInput) as e:
        Waiter({"extra_patterns": patterns})
    assert refused in str(e.value)


def test_gpu_health_refuses_a_pattern_and_an_unbounded_deadline_before_anything_runs():
    base = {"own_process_patterns": [r"sglang", r"(a+)+"], "probe_timeout": 300, "nccl_timeout": 120}
    assert gate.input_problems(base) == [
        "own_process_patterns[1] '(a+)+' refused: " + user_regex.problem(r"(a+)+")]
    assert gate.input_problems(dict(base, own_process_patterns=[r"sglang"])) == []
    assert gate.input_problems(dict(base, own_process_patterns=[], probe_timeout=0, nccl_timeout=-1)) == [
        "probe_timeout: 0 is outside 1..86400 seconds", "nccl_timeout: -1 is outside 0..86400 seconds"]
    assert gate.input_problems(dict(base, own_process_patterns=[], probe_timeout=86400, nccl_timeout=0)) == []


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab()|*+?.{}2,\\d[]^$", max_size=24))
def test_any_pattern_is_judged_without_raising_and_what_passes_compiles(pattern):
    why = user_regex.problem(pattern)
    if why is None:
        re.compile(pattern)
    else:
        assert isinstance(why, str) and why


# -- issue 47: the exact refusal words, where a long pattern is cut, which repeats count, the nodes walked into
NESTED = "a quantified group holds a quantifier (nested quantifiers, as in (a+)+)"
TAIL = ": it can backtrack for hours on one line; write it without the nesting"


def test_the_refusal_words_are_exact():
    assert user_regex.problem(None) == "not a regular expression: None"
    assert user_regex.problem("") == "not a regular expression: ''"
    assert user_regex.problem("a" * 1001) == "1001 characters, at most 1000"
    assert user_regex.problem("a" * 1000) is None
    assert user_regex.problem(".*.*x") == (
        "two quantifiers in a row repeat the same thing (as in .*.* or \\s*\\s+)" + TAIL)
    assert user_regex.problem("(a|aa)+") == (
        "a quantified group holds alternatives that can start alike or match nothing (as in (a|aa)+)" + TAIL)
    assert user_regex.problem("(a+)+") == NESTED + TAIL


def test_a_pattern_of_80_characters_is_shown_whole_and_one_of_81_is_cut():
    at = "(a+)+" + "b" * 75
    past = "(a+)+" + "b" * 76
    assert user_regex.check([at], "opt") == ["opt[0] %r refused: %s" % (at, NESTED + TAIL)]
    assert user_regex.check([past], "opt") == ["opt[0] %r refused: %s" % (past[:77] + "...", NESTED + TAIL)]
    assert user_regex.check([None], "opt") == ["opt[0] None refused: not a regular expression: None"]


@pytest.mark.parametrize("pattern, refused", [
    (r"(a+)?", False),      # at most once: nothing to backtrack over
    (r"(a+){0,2}", True),   # twice is already a nesting
    (r"(a+){2}", True),
])
def test_a_group_repeated_at_most_once_is_not_a_nesting(pattern, refused):
    assert (user_regex.problem(pattern) == NESTED + TAIL) is refused
    if not refused:
        assert user_regex.problem(pattern) is None


@pytest.mark.parametrize("pattern", [r"(a)?(?(1)(b+)+)", r"(a)?(?(1)(b+)+|c)", r"(a)?(?(1)c|(b+)+)"])
def test_a_nesting_in_either_branch_of_a_conditional_is_found(pattern):
    assert user_regex.problem(pattern) == NESTED + TAIL
    assert user_regex.problem(r"(a)?(?(1)b+|c)") is None


def test_a_nesting_inside_an_atomic_group_is_found():
    assert user_regex.problem(r"(?>(a+)+)") == NESTED + TAIL
    assert user_regex.problem(r"(?>a+)") is None


def test_a_leading_anchor_is_skipped_and_any_other_node_is_an_unknown_start():
    assert user_regex.problem(r"(\ba|^b)+") is None  # anchors, then distinct literals: no ambiguity
    assert user_regex.problem(r"([ab]x|[cd]y)+") is not None  # a class first: not told apart
