# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The double's rate model for speculation: adaptive routing by batch size, a mismatched draft (no timing here)."""
import testpaths
import json
import os
import sys
import threading

import pytest

REPO = testpaths.REPO
sys.path.insert(0, os.path.join(REPO, "tools", "sglang_double"))
os.environ.setdefault("SGLANG_DOUBLE_VERSION", "0.5.23")

from sglang._double import engine as eng  # noqa: E402  pylint: disable=wrong-import-position

BASE = {"per_request_tps": 60.0, "saturation_tps": 773.0}
EAGLE = {"per_request_tps": 96.0, "saturation_tps": 354.0, "accept_length": 3.2}


def make(adaptive=None, capture=None, perf=None, plain_step0=False):
    return eng.Engine(perf or EAGLE, True, 1, threading.Event(), base_perf=BASE, adaptive=adaptive, capture_bs=capture,
                      plain_step0=plain_step0)


def rate_at(e, running):
    e.running = running
    return e.rate()


def test_threshold_config_follows_eagle3_below_and_the_baseline_above():
    e = make(adaptive={1: [3], 6: [0]}, capture=eng.capture_sizes(48), plain_step0=True)  # the step-0 patch
    assert [e.drafting(b) for b in range(1, 9)] == [True] * 5 + [False] * 3
    assert rate_at(e, 4) == pytest.approx(min(96, 354 / 4))
    assert rate_at(e, 8) == pytest.approx(min(60, 773 / 8))   # baseline rate, not EAGLE-3's 354 / 8
    assert rate_at(e, 16) == pytest.approx(773 / 16)
    # without it, SGLang's step 0 costs more than a plain decode step
    e = make(adaptive={1: [3], 6: [0]}, capture=eng.capture_sizes(48))
    assert rate_at(e, 16) == pytest.approx(773 / 16 / eng.step0_factor(16, eng.STEP0_CONTEXT_REF))


def test_padding_to_capture_sizes_decides_the_slot_like_sglang():
    # spec capture sizes go 10, 12, 14: a batch of 11 pads to 12, which is >= the key 12
    e = make(adaptive={1: [3], 12: [0]}, capture=eng.capture_sizes(64))
    assert e.drafting(10) and not e.drafting(11)
    e = make(adaptive={1: [3], 12: [0]}, capture=None)   # --disable-cuda-graph: no padding
    assert e.drafting(11) and not e.drafting(12)


def test_default_config_and_a_mismatched_draft():
    e = make(adaptive=eng.load_adaptive(None), capture=eng.capture_sizes(128))   # 0.5.23's default slots
    assert e.drafting(60) and not e.drafting(61)   # 61 pads to 64, the all-zero slot
    bad = make(adaptive=eng.load_adaptive(None), capture=eng.capture_sizes(128), perf=dict(EAGLE, draft="mismatched"))
    assert bad.accept_length() == 1.0
    # drafts never accepted: the EMA sinks each slot to its smallest candidate, 0 from the "8" slot on
    assert bad.drafting(1) and not bad.drafting(8)
    plain = make(perf=dict(EAGLE, draft="mismatched"))
    assert rate_at(plain, 1) == pytest.approx(60 * eng.MISMATCH_PER_REQUEST)
    assert rate_at(plain, 32) == pytest.approx(773 * eng.MISMATCH_SATURATION / 32)


def test_adaptive_config_file_is_read_like_sglang(tmp_path):
    path = tmp_path / "adaptive.json"
    path.write_text(json.dumps({"1": {"candidate_steps": [3]}, "6": {"candidate_steps": [0]}, "ema_alpha": 0.2}))
    assert eng.load_adaptive(str(path)) == {1: [3], 6: [0]}
    path.write_text(json.dumps({"ema_alpha": 0.2}))
    with pytest.raises(ValueError):
        eng.load_adaptive(str(path))


def test_server_info_accept_length_waits_for_a_decode_log_interval():
    e = make()
    assert e.info_accept_length() is None
    e.spec_steps = eng.DECODE_LOG_INTERVAL
    assert e.info_accept_length() == 3.2


def test_token_rate_is_the_per_request_rate_until_the_saturation_shares_it():
    # what test_sglang_double.py once timed with a wall clock (now benchmarks/double/bench_token_rate.py)
    e = eng.Engine({"per_request_tps": 100, "saturation_tps": 150}, False, 1, threading.Event())
    assert rate_at(e, 1) == 100.0 and rate_at(e, 3) == 50.0 and rate_at(e, 0) == 100.0


def test_the_environment_gives_the_double_its_rate_model(monkeypatch):
    from sglang._double.config import DEFAULT_PERF, Settings
    perf = {"baseline": {"per_request_tps": 100, "saturation_tps": 150}}
    monkeypatch.setenv("SGLANG_DOUBLE_PERF", json.dumps(perf))
    assert Settings().perf == perf
    monkeypatch.delenv("SGLANG_DOUBLE_PERF")
    assert Settings().perf == DEFAULT_PERF


# ---- step 0 of --speculative-adaptive (issue 34) and the running-batch cap

def test_step0_costs_what_the_h200_measured_unless_patched():
    # the H200 table: adaptive step 0 at 0.64x, 0.37x, 0.26x, 0.20x of the baseline at batch 16, 64, 128, 256
    assert eng.step0_factor(256, eng.STEP0_CONTEXT_REF) == pytest.approx(5.0)
    assert [round(eng.step0_factor(b, eng.STEP0_CONTEXT_REF), 1) for b in (16, 64, 128)] == [1.8, 2.7, 3.6]
    assert eng.step0_factor(64, 2 * eng.STEP0_CONTEXT_REF) > eng.step0_factor(64, eng.STEP0_CONTEXT_REF)
    big = {"per_request_tps": 200.0, "saturation_tps": 30000.0}
    unpatched = eng.Engine(EAGLE, True, 1, threading.Event(), base_perf=big, adaptive={1: [3], 9: [0]},
                           capture_bs=eng.capture_sizes(256), max_running=256)
    patched = eng.Engine(EAGLE, True, 1, threading.Event(), base_perf=big, adaptive={1: [3], 9: [0]},
                         capture_bs=eng.capture_sizes(256), max_running=256, plain_step0=True)
    for e in (unpatched, patched):
        e.running = 256
    assert patched.rate() == pytest.approx(30000.0 / 256)  # the baseline's plain decode
    assert unpatched.rate() == pytest.approx(30000.0 / 256 / 5.0)
    unpatched.running = 4  # drafting below the threshold: EAGLE-3's rate, no step-0 cost
    assert unpatched.rate() == pytest.approx(min(96, 354 / 4))
    static = make()  # static EAGLE-3 never runs step 0
    static.running = 256
    assert static.rate() == pytest.approx(354 / 256)


@pytest.mark.parametrize("env,record,plain", [({"SGLANG_DOUBLE_STEP0": "plain"}, None, True),
                                              ({"SGLANG_DOUBLE_STEP0": "verify"}, [eng.STEP0_PATCH], False),
                                              ({}, [eng.STEP0_PATCH], True), ({}, ["sm120-symm-mem"], False),
                                              ({}, None, False)])
def test_the_patch_record_or_the_environment_says_whether_step0_is_plain(tmp_path, env, record, plain):
    if record is not None:
        (tmp_path / "llmserve-patches.json").write_text(json.dumps({"patches": [{"name": n} for n in record]}))
    assert eng.step0_plain(env, str(tmp_path)) is plain


def test_requests_above_max_running_wait_in_the_queue():
    e = eng.Engine({"per_request_tps": 1e6, "saturation_tps": 1e9}, False, 1, threading.Event(), max_running=2)
    assert eng.Engine(EAGLE, True, 1, threading.Event()).max_running == 48  # 0.5.15.post1's EAGLE cap
    gate = threading.Event()
    seen = []

    def hold(i):
        seen.append(e.running)
        gate.wait(5)
    threads = [threading.Thread(target=e.generate, args=(1, 1, hold)) for _thread in range(3)]
    for t in threads:
        t.start()
    for _tick in range(200):
        if e.running == 2 and e.queued == 1:
            break
        threading.Event().wait(0.01)
    assert (e.running, e.queued) == (2, 1)
    gate.set()
    for t in threads:
        t.join(5)
    assert (e.running, e.queued) == (0, 0) and max(seen) <= 2


def test_the_report_models_step0_and_names_the_patch_as_the_double_does():
    from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_curves as curves
    from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as report
    for batch in (1, 16, 64, 256):
        for context in (40, 160, 400):
            assert report.step0_factor(batch, context) == eng.step0_factor(batch, context)
    assert curves.STEP0_PATCH == eng.STEP0_PATCH
