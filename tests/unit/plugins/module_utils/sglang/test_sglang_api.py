# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/api.accept_length: the one reader of the accept length (benchmark, spec_check and status agree)."""
import json
import os

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import accept_length

FIXTURE = os.path.join(testpaths.FIXTURES, "spec_check", "server_info_0.5.15.post1_eagle3_random_draft.json")


def test_mean_over_dp_ranks():
    info = {"internal_states": [{"avg_spec_accept_length": 3.0}, {"avg_spec_accept_length": 2.0}]}
    assert accept_length(info) == 2.5


def test_a_rank_that_has_not_decoded_is_left_out_not_zero():
    assert accept_length({"internal_states": [{"avg_spec_accept_length": 3.0}, {"last_gen_throughput": 1.0}]}) == 3.0


def test_absent_and_other_layouts():
    assert accept_length(None) is None
    assert accept_length({}) is None
    assert accept_length({"internal_states": [{}]}) is None
    assert accept_length({"internal_states": {"avg_spec_accept_length": 2.0}}) == 2.0  # a dict, not a list
    assert accept_length({"avg_spec_accept_length": 1.5}) == 1.5                       # top level (older layout)
    assert accept_length({"internal_states": [{"avg_spec_accept_length": True}]}) is None


def test_real_server_info_of_0515():
    with open(FIXTURE) as f:
        assert accept_length(json.load(f)) == 1.0
