# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Classifier and stage detection against real start-up logs pasted into
public issues (tests/fixtures/sglang_logs/public, sources in its README and
expected.json): TP / Ray / k8s-pod prefixes, flattened pastes, cut tracebacks,
sigquit-first order, multi-node and progress bars."""
import testpaths
import json
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import (
    CATEGORIES, classify_text, is_noise)
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import StageTracker

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")
PUB = os.path.join(FIX, "public")
H200 = os.path.join(FIX, "h200")  # real SGLang 0.5.15.post1 on an H200, captured by the lead
BATCH7 = os.path.join(FIX, "batch7")  # issue 46: 20 public logs of 2026, held out (their own folder and README)

with open(os.path.join(PUB, "expected.json"), encoding="utf-8") as _f:
    EXPECTED = json.load(_f)
with open(os.path.join(H200, "expected.json"), encoding="utf-8") as _f:
    EXPECTED.update(("h200/" + k, v) for k, v in json.load(_f).items())
with open(os.path.join(BATCH7, "expected.json"), encoding="utf-8") as _f:
    EXPECTED.update(("batch7/" + k, v) for k, v in json.load(_f).items())


def load(name):
    with open(os.path.join(FIX, name) if "/" in name else os.path.join(PUB, name),
              encoding="utf-8", errors="replace") as f:
        return f.read()


def stages_of(text):
    st = StageTracker()
    for raw in text.replace("\r", "\n").split("\n"):
        if raw.strip():
            st.feed(raw, 0)
    return st


def test_manifest_matches_folder():
    logs = sorted(n for n in os.listdir(PUB) if n.endswith(".log"))
    logs += sorted("h200/" + n for n in os.listdir(H200) if n.endswith(".log"))
    logs += sorted("batch7/" + n for n in os.listdir(BATCH7) if n.endswith(".log"))
    assert sorted(logs) == sorted(EXPECTED)
    assert len(logs) >= 60
    for name, exp in EXPECTED.items():
        assert exp["category"] in CATEGORIES, name
        for alt in exp.get("alternatives") or ():
            assert alt["category"] in CATEGORIES and alt["key"], name
        assert exp["source"].startswith("https://github.com/") or name.startswith("h200/"), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log_category_and_key_line(name):
    exp = EXPECTED[name]
    v = classify_text(load(name))
    if exp.get("known_miss", "").startswith("category"):
        assert v["category"] != exp["category"], "a known miss now passes: drop its known_miss"
        pytest.xfail(exp["known_miss"])
    assert v["category"] == exp["category"], (name, v)
    if exp["category"] == "unknown":
        # Nothing matched: the key line quotes the most telling line, never a notice.
        assert v["line"] is None or not is_noise(v["line"]), (name, v)
        return
    if exp.get("known_miss", "").startswith("key"):
        pytest.xfail(exp["known_miss"])
    # A label's alternatives (written with it, before the first replay) are fair readings of the same cause.
    keys = [exp["key"]] + [a["key"] for a in exp.get("alternatives") or () if a["category"] == v["category"]]
    assert any(k in v["line"] for k in keys), (name, v["line"])
    remedy = v["remedy"]
    assert remedy and "\n" not in remedy and len(remedy) <= 300, remedy


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if "stage" in e))
def test_real_log_stage(name):
    exp = EXPECTED[name]
    st = stages_of(load(name))
    assert st.stage == exp["stage"], (name, st.stages)
    if "detail" in exp:
        assert st.detail == exp["detail"], (name, st.detail)


def test_capture_failure_that_is_not_oom_is_not_oom():
    v = classify_text(load("capture_failed_gloo_not_oom_4205.log"))
    assert not v["category"].startswith("oom"), v


def test_banner_alone_still_reported_when_cause_cut():
    # Same multi-node log without its Gloo line: only banners are left.
    text = "\n".join(l for l in load("nccl_multinode_gloo_barrier_5602.log").splitlines()
                     if "ProcessGroupGloo" not in l)
    assert classify_text(text)["category"] == "scheduler_exception"


def test_exit_code_minus_nine_not_misread_when_other_code():
    text = load("host_oom_sigkill_diffusion_3848.log").replace("Exit code: -9", "Exit code: 1")
    assert classify_text(text)["category"] != "host_oom"


def test_ptxas_success_line_is_not_arch_failure():
    text = ("[2025-08-27 19:30:39 TP0] Capture cuda graph begin.\n"
            "ptxas info    : Compiling entry function 'kernel' for 'sm_120a'\n")
    assert classify_text(text)["category"] == "unknown"
