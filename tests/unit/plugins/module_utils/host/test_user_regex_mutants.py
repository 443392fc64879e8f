# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/user_regex (issue 47): the exact refusal words, where a long pattern is cut in them, which repeats count as
"quantified", and the nodes the check walks into (a conditional's yes branch, an atomic group, a leading anchor):
each bound held from both sides, the mutants of tools/mutation's host room that the other tests let through."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import user_regex

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
