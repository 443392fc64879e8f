# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/speculative.problems: the one check of a spec that is on, in one wording for the plan and the public
sglang_argv filter; the renderer trusts what passed it."""
import os
import sys

import pytest

import testpaths

from ansible_collections.llmserve.sglang.plugins.filter.sglang_argv import sglang_argv
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp

sys.path.insert(0, os.path.join(testpaths.REPO, "tests", "unit", "plugins", "plugin_utils"))


def problems(spec):
    return [problem for _shown, problem, _fix in speculative.problems(spec)[1]]


@pytest.mark.parametrize("spec, found", [
    (None, []),
    ({"algorithm": ""}, []),                                    # off: nothing to check
    ({"draft_model_path": "/d"}, []),
    ({"algorithm": "medusa", "draft_model_path": "/d"}, ["names an algorithm this role does not render"]),
    ({"algorithm": "EAGLE3"}, ["has no draft model while algorithm is EAGLE3"]),
    ({"draft_model_path": " "}, ["has no draft model while algorithm is EAGLE3"]),
    # counts: num_steps from 0, the others from 1 (at, just below)
    ({"draft_model_path": "/d", "num_steps": 0, "eagle_topk": 1, "num_draft_tokens": 1}, []),
    ({"draft_model_path": "/d", "num_steps": -1}, ["is not a valid count"]),
    ({"draft_model_path": "/d", "eagle_topk": 0}, ["is not a valid count"]),
    ({"draft_model_path": "/d", "num_draft_tokens": "x"}, ["is not a valid count"]),
    ({"draft_model_path": "/d", "num_steps": True}, ["is not a valid count"]),
    ({"draft_model_path": "/d", "adaptive": "maybe"}, ["is not a boolean"]),
    ({"draft_model_path": "/d", "adaptive": "yes"}, []),
    ({"draft_model_path": "/d", "adaptive": 2}, ["is not a boolean"]),
])
def test_problems(spec, found):
    assert problems(spec) == found


def test_counts_from_the_inventory_become_integers():
    spec, found = speculative.problems({"draft_model_path": "/d", "num_steps": "3", "eagle_topk": 1.0})
    assert not found and spec["num_steps"] == 3 and spec["eagle_topk"] == 1


def test_the_plan_and_the_public_filter_say_the_same_words():
    from test_server_plan import defaults, host
    bad = {"algorithm": "EAGLE3", "num_steps": -2}
    refusals = sp.plan(dict(defaults(), speculative=bad), host())["refusals"]
    errors = sglang_argv({"model_path": "/m", "speculative": bad}, "0.5.23", strict=False)["errors"]
    for words in ("has no draft model while algorithm is EAGLE3", "is not a valid count"):
        assert sum(words in r for r in refusals) == 1 and sum(words in e for e in errors) == 1, (refusals, errors)
    # what passed the check is rendered as given
    argv = sglang_argv({"model_path": "/m", "speculative": {"draft_model_path": "/d", "num_steps": "2"}}, "0.5.23")["argv"]
    assert argv[argv.index("--speculative-num-steps") + 1] == "2" and "--speculative-draft-model-path" in argv
