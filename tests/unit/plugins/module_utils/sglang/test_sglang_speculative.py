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
    refusals = sp.plan(sp.validate(dict(defaults(), speculative=bad)), host())["refusals"]
    errors = sglang_argv({"model_path": "/m", "speculative": bad}, "0.5.23", strict=False)["errors"]
    for words in ("has no draft model while algorithm is EAGLE3", "is not a valid count"):
        assert sum(words in r for r in refusals) == 1 and sum(words in e for e in errors) == 1, (refusals, errors)
    # what passed the check is rendered as given
    argv = sglang_argv({"model_path": "/m", "speculative": {"draft_model_path": "/d", "num_steps": "2"}}, "0.5.23")["argv"]
    assert argv[argv.index("--speculative-num-steps") + 1] == "2" and "--speculative-draft-model-path" in argv


# ---- what is applied, in words, and where it came from (issue 44 item 5)

ADAPTIVE_57 = {"draft_model_path": "/d", "adaptive": True, "eagle_topk": 1, "num_steps": 3,
               "adaptive_config": {"1": {"candidate_steps": [3]}, "57": {"candidate_steps": [0]}},
               "source": "benchmark run /srv/bench/20261207T170000Z of 2026-12-07T17:00:00+00:00"}


@pytest.mark.parametrize("spec, setting, threshold, words", [
    (None, "off", None, "off, from the inventory"),
    ({"algorithm": "", "source": "benchmark run /r of 2026-12-07"}, "off", None, "off, from benchmark run /r of 2026-12-07"),
    ({"draft_model_path": "/d"}, "static", None, "static EAGLE3, from the inventory"),
    ({"draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1, "source": " "}, "static", None,
     "static EAGLE3 (num_steps 3, eagle_topk 1), from the inventory"),
    (ADAPTIVE_57, "adaptive", 56, "adaptive EAGLE3 (threshold 56: 3 steps from batch 1, 0 steps from batch 57), from "
                                  "benchmark run /srv/bench/20261207T170000Z of 2026-12-07T17:00:00+00:00"),
    # a JSON config, three tiers: the threshold is where drafting stops, not the first change
    (dict(ADAPTIVE_57, source=None, adaptive_config='{"73": {"candidate_steps": [0]}, "1": {"candidate_steps": [3]}, '
                                                    '"33": {"candidate_steps": [1]}, "ema_alpha": 0.2}'),
     "adaptive", 72, "adaptive EAGLE3 (threshold 72: 3 steps from batch 1, 1 steps from batch 33, 0 steps from batch "
                     "73), from the inventory"),
    ({"draft_model_path": "/d", "adaptive": "yes"}, "adaptive", None,
     "adaptive EAGLE3 (SGLang's own config), from the inventory"),
    ({"draft_model_path": "/d", "adaptive": True, "adaptive_config": "{not json"}, "adaptive", None,
     "adaptive EAGLE3 (SGLang's own config), from the inventory"),
])
def test_in_force_names_the_setting_and_where_it_came_from(spec, setting, threshold, words):
    got = speculative.in_force(spec)
    assert (got["setting"], got["threshold"], got["words"]) == (setting, threshold, words)


def test_in_force_keeps_an_inventory_source_to_one_bounded_line():
    got = speculative.in_force({"draft_model_path": "/d", "source": "run\n  X\tof\r\nday" + "y" * 300})
    assert got["source"].startswith("run X of day") and len(got["source"]) == speculative.SOURCE_MAX
    assert "\n" not in got["words"] and "\t" not in got["words"]
    assert speculative.in_force({"draft_model_path": "/d", "source": "y" * speculative.SOURCE_MAX})["source"] == \
        "y" * speculative.SOURCE_MAX
    assert speculative.in_force(ADAPTIVE_57)["tiers"] == [{"from": 1, "steps": [3]}, {"from": 57, "steps": [0]}]
