# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A threshold turned into the setting the installed SGLang really has, or a refusal (plugin_utils/
_bench_spec_setting.py): each answer whole, every field reasoned from the inputs - the capture sizes the threshold
is padded to, the chain it drafts, what a version without step 0 is told, and that the caller's settings are
never changed in place."""
import copy

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import adaptive
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_spec_setting as spec_setting

SPEC = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}
REFUSE_TAIL = (". Pick one mode for the expected load - EAGLE-3 if typical concurrency stays at or below %d, else "
               "server_speculative.algorithm: '' - or upgrade SGLang to 0.5.14 or later (roles/sglang; 0.5.15.post1 "
               "and 0.5.23 were checked) and run this again")


def recommend(threshold, speculative, version="0.5.23", **kw):
    """spec_setting.recommend, checking on the way that the caller's settings come back untouched."""
    before = copy.deepcopy(speculative)
    rec = spec_setting.recommend(threshold, version, speculative, **kw)
    assert speculative == before
    return rec


@pytest.mark.parametrize("version,cap", [("0.5.10.post1", "none"), ("0.5.11", "flat"), ("0.5.13.post1", "slots"),
                                         ("0.5.14", "slots_zero"), ("0.5.23", "slots_zero"), ("", None),
                                         ("not a version", None)])
def test_capability_is_what_the_version_reads_and_none_when_unreadable(version, cap):
    assert spec_setting.capability(version) == cap


def test_no_crossover_keeps_static_eagle3_and_drops_an_adaptive_config():
    spec = dict(SPEC, adaptive=True, adaptive_config={"1": {"candidate_steps": [3]}})
    assert recommend(None, spec) == {
        "version": "0.5.23", "threshold": None, "capability": "slots_zero", "action": "keep",
        "reason": "EAGLE-3 beats the baseline at every measured concurrency: keep it on",
        "server_speculative": dict(SPEC, adaptive=False)}
    # kept on whatever the version (nothing to switch by batch size)
    rec = recommend(None, SPEC, version="0.5.9")
    assert rec["action"] == "keep" and rec["capability"] == "none"
    assert rec["server_speculative"] == dict(SPEC, adaptive=False)


@pytest.mark.parametrize("threshold", [0, -3])
def test_never_paying_turns_speculation_off_on_any_version(threshold):
    for version, cap in (("0.5.23", "slots_zero"), ("0.5.9", "none")):
        assert recommend(threshold, SPEC, version=version) == {
            "version": version, "threshold": threshold, "capability": cap, "action": "off",
            "reason": "EAGLE-3 never beats the baseline in decode throughput: serve without it "
                      "(server_speculative.algorithm: '')",
            "server_speculative": {"algorithm": ""}}


def test_a_threshold_of_one_still_speculates_at_batch_one():
    # the smallest positive threshold: speculate for a lone request, plain decoding from 2 (not "off")
    rec = recommend(1, SPEC, cuda_graph=False)
    assert rec["action"] == "adaptive" and (rec["effective_threshold"], rec["config_key"]) == (1, 2)
    assert rec["server_speculative"]["adaptive_config"] == {"1": {"candidate_steps": [3]}, "2": {"candidate_steps": [0]}}


@pytest.mark.parametrize("version,cap", [("0.5.10.post1", "none"), ("0.5.12.post1", "flat"), ("0.5.13", "slots")])
def test_a_version_without_step_0_is_refused_with_what_it_lacks_and_the_fix(version, cap):
    assert recommend(24, SPEC, version=version) == {
        "version": version, "threshold": 24, "capability": cap, "action": "refuse",
        "reason": "SGLang %s %s" % (version, adaptive.WHY_NO_THRESHOLD[cap]) + REFUSE_TAIL % 24}


@pytest.mark.parametrize("version", [None, ""])
def test_an_unknown_version_is_refused_and_named_unknown(version):
    rec = recommend(7, SPEC, version=version)
    assert rec == {"version": version, "threshold": 7, "capability": None, "action": "refuse",
                   "reason": "SGLang (unknown version) has an unknown version" + REFUSE_TAIL % 7}


@pytest.mark.parametrize("topk", [2, 4])
def test_a_topk_other_than_one_is_refused_with_the_setting_to_change(topk):
    assert recommend(24, dict(SPEC, eagle_topk=topk)) == {
        "version": "0.5.23", "threshold": 24, "capability": "slots_zero", "action": "refuse",
        "reason": "SGLang's adaptive speculation supports eagle_topk 1 only, this deployment uses %d: set "
                  "server_speculative.eagle_topk: 1 (and num_draft_tokens: num_steps + 1), benchmark again, then "
                  "apply" % topk}


@pytest.mark.parametrize("topk", [None, 1])
def test_topk_one_or_unset_is_applied_as_one(topk):
    rec = recommend(24, dict(SPEC, eagle_topk=topk), cuda_graph=False)
    assert rec["action"] == "adaptive" and rec["server_speculative"]["eagle_topk"] == 1


def test_the_adaptive_setting_whole_when_the_threshold_is_a_capture_size():
    # 24 is a speculative capture size (..., 22, 24, 26, ...): no padding note
    spec = dict(SPEC, num_steps=2, num_draft_tokens=3)
    assert recommend(24, spec, cuda_graph_max_bs=64) == {
        "version": "0.5.23", "threshold": 24, "capability": "slots_zero", "action": "adaptive",
        "effective_threshold": 24, "config_key": 25,
        "server_speculative": dict(spec, adaptive=True, eagle_topk=1, num_steps=2, num_draft_tokens=3,
                                   adaptive_config={"1": {"candidate_steps": [2]}, "25": {"candidate_steps": [0]}}),
        "reason": "speculate (num_steps 2) while at most 24 requests run, plain decoding from 25: "
                  "--speculative-adaptive with slots 1 -> [2], 25 -> [0]"}


def test_a_threshold_between_capture_sizes_is_padded_down_and_says_so():
    # 47 lies between the capture sizes 44 and 48: batches 45..47 would pad to 48, so speculation stops above 44
    rec = recommend(47, SPEC, cuda_graph_max_bs=64)
    assert (rec["effective_threshold"], rec["config_key"]) == (44, 45)
    assert rec["reason"] == ("speculate (num_steps 3) while at most 44 requests run, plain decoding from 45: "
                             "--speculative-adaptive with slots 1 -> [3], 45 -> [0] (CUDA-graph padding routes "
                             "batches by capture size: 44 is the largest <= 47)")


@pytest.mark.parametrize("max_bs,eff", [(None, 48), (48, 48), (64, 64), (128, 96)])
def test_the_capture_sizes_come_from_cuda_graph_max_bs_48_by_default(max_bs, eff):
    # threshold 100: with graphs up to 48 (SGLang's default) the largest size <= 100 is 48; up to 64: 64; up to
    # 128: 96 (sizes run 72, 80, 88, 96, 104 there)
    rec = recommend(100, SPEC, cuda_graph_max_bs=max_bs)
    assert (rec["effective_threshold"], rec["config_key"]) == (eff, eff + 1)


def test_without_cuda_graphs_nothing_is_padded_even_when_capture_sizes_are_given():
    rec = recommend(47, SPEC, capture=[1, 2, 4, 8, 16, 32, 64], cuda_graph=False)
    assert (rec["effective_threshold"], rec["config_key"]) == (47, 48)
    assert rec["reason"].endswith("slots 1 -> [3], 48 -> [0]")
    # with them, the server's own sizes are used, not the derived ones
    rec = recommend(47, SPEC, capture=[1, 2, 4, 8, 16, 32, 64])
    assert (rec["effective_threshold"], rec["config_key"]) == (32, 33)


@pytest.mark.parametrize("steps,want", [(None, 3), (0, 3), (1, 1), (5, 5)])
def test_num_steps_unset_drafts_three_and_a_given_chain_is_kept(steps, want):
    rec = recommend(24, dict(SPEC, num_steps=steps), cuda_graph=False)
    s = rec["server_speculative"]
    assert (s["num_steps"], s["num_draft_tokens"]) == (want, want + 1)
    assert s["adaptive_config"]["1"] == {"candidate_steps": [want]}
    assert rec["reason"].startswith("speculate (num_steps %d) while at most 24 requests run" % want)


@pytest.mark.parametrize("threshold,spec,capture,why", [
    (4, SPEC, [8, 16], "no captured CUDA-graph size is <= 4: every batch would pad past the threshold, so no batch "
                       "size speculates profitably; serve without speculation"),
    (24, dict(SPEC, num_steps=-1), None, "num_steps must be >= 1 to speculate below the threshold (got -1)"),
])
def test_a_config_that_cannot_be_rendered_turns_speculation_off_with_why(threshold, spec, capture, why):
    assert recommend(threshold, spec, capture=capture) == {
        "version": "0.5.23", "threshold": threshold, "capability": "slots_zero", "action": "off", "reason": why,
        "server_speculative": {"algorithm": ""}}


def test_tiers_give_one_slot_per_tier_and_the_threshold_where_drafting_stops():
    tiers = [{"steps": 3, "upto": 20}, {"steps": 1, "upto": 30}, {"steps": 0, "upto": None}]
    spec = dict(SPEC, num_steps=2, eagle_topk=None, num_draft_tokens=None)
    rec = recommend(40, spec, cuda_graph=False, tiers=tiers)
    routed = [{"steps": 3, "from": 1, "upto": 20}, {"steps": 1, "from": 21, "upto": 30},
              {"steps": 0, "from": 31, "upto": None}]
    assert rec == {
        "version": "0.5.23", "threshold": 40, "capability": "slots_zero", "action": "adaptive",
        # the longest tier's chain is launched (3 steps, 4 draft tokens), topk 1 as adaptive needs
        "server_speculative": dict(spec, adaptive=True, eagle_topk=1, num_steps=3, num_draft_tokens=4,
                                   adaptive_config={"1": {"candidate_steps": [3]}, "21": {"candidate_steps": [1]},
                                                    "31": {"candidate_steps": [0]}}),
        "tiers": routed, "effective_threshold": 30, "config_key": 31,
        "reason": "speculate by tiers measured on this GPU: 3 steps up to 20 running requests, 1 steps up to 30 "
                  "running requests, 0 steps from batch 31: --speculative-adaptive with slots 1 -> [3], 21 -> [1], "
                  "31 -> [0]"}


def test_tiers_padded_to_the_capture_sizes_and_without_a_zero_tier_no_threshold():
    # the server captured 1, 2, 4, 8, 16, 32: a tier up to 21 covers the buckets up to 16, the next starts at 17
    tiers = [{"steps": 2, "upto": 21}, {"steps": 1, "upto": None}]
    rec = recommend(40, SPEC, capture=[1, 2, 4, 8, 16, 32], tiers=tiers)
    assert rec["server_speculative"]["adaptive_config"] == {"1": {"candidate_steps": [2]}, "17": {"candidate_steps": [1]}}
    assert rec["tiers"] == [{"steps": 2, "from": 1, "upto": 16}, {"steps": 1, "from": 17, "upto": None}]
    # never off: no batch size stops drafting, so there is no threshold to report
    assert (rec["effective_threshold"], rec["config_key"]) == (None, None)
    assert (rec["server_speculative"]["num_steps"], rec["server_speculative"]["num_draft_tokens"]) == (2, 3)
    assert rec["reason"] == ("speculate by tiers measured on this GPU: 2 steps up to 16 running requests, 1 steps "
                             "from batch 17: --speculative-adaptive with slots 1 -> [2], 17 -> [1]")


def test_tiers_are_refused_like_a_threshold_where_the_version_or_topk_cannot_run_them():
    tiers = [{"steps": 3, "upto": 20}, {"steps": 0, "upto": None}]
    assert recommend(40, SPEC, version="0.5.13", tiers=tiers)["action"] == "refuse"
    assert recommend(40, dict(SPEC, eagle_topk=4), tiers=tiers)["action"] == "refuse"
    # and the threshold's own answers come first: never paying is off, no crossover keeps
    assert recommend(0, SPEC, tiers=tiers)["action"] == "off"
    assert recommend(None, SPEC, tiers=tiers)["action"] == "keep"
