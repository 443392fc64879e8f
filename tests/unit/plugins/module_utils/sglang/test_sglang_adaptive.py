# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/sglang/adaptive.py: the --speculative-adaptive-config each SGLang release reads, rendered and
validated per version, and the threshold config run through the REAL loader and router of the wheels from PyPI
(sglang/srt/speculative/adaptive_spec_params.py, compiled with its logging import stubbed).

Wheels: tests/sglang_wheels (the cache in ${LLMSERVE_CACHE:-/var/cache/llmserve}/wheels, downloaded once when absent).
"""
import testpaths
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import adaptive
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import render

SOURCE = "sglang/srt/speculative/adaptive_spec_params.py"


def real_module(version):
    """adaptive_spec_params of that wheel, its sglang imports replaced by a no-op logger (the rest as shipped)."""
    text = W.read_member(version, SOURCE)
    kept = []
    skipping = False
    for line in text.splitlines():
        # sglang-internal imports (one line or parenthesised) are the only thing replaced
        if skipping:
            skipping = not line.strip().startswith(")")
            continue
        if line.startswith("from sglang.") or line.startswith("import sglang"):
            skipping = line.rstrip().endswith("(")
            continue
        kept.append(line)
    namespace = {"__name__": "adaptive_spec_params_" + version.replace(".", "_"),
                 "log_info_on_rank0": lambda *a, **k: None}
    exec(compile("\n".join(kept), "%s:%s" % (version, SOURCE), "exec"), namespace)  # pylint: disable=exec-used
    return namespace


@pytest.mark.parametrize("version,fmt", [("0.5.9", "none"), ("0.5.10.post1", "none"), ("0.5.11", "flat"),
                                         ("0.5.12", "flat"), ("0.5.13", "slots"), ("0.5.13.post1", "slots"),
                                         ("0.5.14", "slots_zero"), ("0.5.15.post1", "slots_zero"),
                                         ("0.5.23", "slots_zero")])
def test_format_per_version(version, fmt):
    assert adaptive.config_format(version) == fmt


@pytest.mark.parametrize("version", ["0.5.14", "0.5.15.post1", "0.5.23"])
def test_threshold_config_routes_in_the_real_sglang(tmp_path, version):
    """Every batch up to the effective threshold drafts num_steps, every batch above it drafts 0 steps."""
    mod = real_module(version)
    capture = adaptive.spec_capture_sizes(256)
    for threshold in (5, 11, 40, 100, 200):
        rendered = adaptive.threshold_config(version, 3, threshold, capture)
        path = tmp_path / ("a%d.json" % threshold)
        path.write_text(json.dumps(rendered["config"]))
        params = mod["AdaptiveSpeculativeParams"](initial_steps=3, cfg_path=str(path))
        params.set_cuda_graph_bs(capture)
        eff = rendered["effective_threshold"]
        assert eff <= threshold and eff in capture
        steps = [params.get_steps_for_batch(b) for b in range(1, 257)]
        assert steps[:eff] == [3] * eff, (threshold, steps[:eff])
        assert steps[eff:] == [0] * (256 - eff), threshold
    # without CUDA graphs nothing is padded: the threshold is exact
    rendered = adaptive.threshold_config(version, 3, 11, None)
    path = tmp_path / "nograph.json"
    path.write_text(json.dumps(rendered["config"]))
    params = mod["AdaptiveSpeculativeParams"](initial_steps=3, cfg_path=str(path))
    assert [params.get_steps_for_batch(b) for b in (1, 11, 12, 300)] == [3, 3, 0, 0]


def test_the_capture_sizes_are_the_real_ones():
    """spec_capture_sizes mirrors server_args._generate_decode_cuda_graph_batch_sizes (spec branch) of 0.5.15.post1,
    as the real server reported them in its /server_info (cuda_graph_config.decode.bs, max_bs 256)."""
    info = json.load(open(os.path.join(testpaths.REPO, "docs", "evidence", "real-sglang-h200", "eagle3",
                                       "server_info.txt")))
    decode = info["cuda_graph_config"]["decode"]
    assert adaptive.spec_capture_sizes(decode["max_bs"]) == decode["bs"]


@pytest.mark.parametrize("version", ["0.5.12", "0.5.13"])
def test_older_loaders_refuse_what_the_threshold_needs(tmp_path, version):
    """Why 0.5.11-0.5.13 get no threshold: their real loader rejects a step-0 slot (0.5.13) or has no slots."""
    mod = real_module(version)
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"1": {"candidate_steps": [3]}, "6": {"candidate_steps": [0]}}))
    assert "error" in adaptive.threshold_config(version, 3, 5, None)
    errors, _steps = adaptive.validate(json.loads(path.read_text()), version, 3)
    assert errors
    if version == "0.5.13":
        with pytest.raises(ValueError):
            mod["_load_adaptive_config"](str(path))
    else:
        # 0.5.12 reads one flat object: the slots are ignored and its own default candidates are used
        params = mod["AdaptiveSpeculativeParams"](initial_steps=3, config={})
        assert params.candidate_steps == [1, 3, 7]


@pytest.mark.parametrize("version,cfg,ok", [
    ("0.5.12", {"candidate_steps": [1, 3]}, True),
    ("0.5.12", {"candidate_steps": [0, 3]}, False),
    ("0.5.11", {"candidate_steps": [3]}, False),          # one value: asserts at start
    ("0.5.12", {"1": {"candidate_steps": [3]}}, False),   # slots before 0.5.13
    ("0.5.13", {"1": {"candidate_steps": [1, 3]}, "8": {"candidate_steps": [1]}}, True),
    ("0.5.13", {"1": {"candidate_steps": [3]}, "8": {"candidate_steps": [0]}}, False),
    ("0.5.15.post1", {"1": {"candidate_steps": [3]}, "8": {"candidate_steps": [0]}}, True),
    ("0.5.23", {"ema_alpha": 0.3, "1": {"candidate_steps": [3]}}, True),
    ("0.5.23", {"ema_alpha": 0.3}, False),
])
def test_validate_matches_each_release(version, cfg, ok):
    errors, _steps = adaptive.validate(cfg, version, 3)
    assert (errors == []) is ok, errors


def test_argv_renders_the_config_file_only_where_the_release_reads_it():
    spec = {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3, "eagle_topk": 1, "adaptive": True,
            "adaptive_config": {"1": {"candidate_steps": [3]}, "97": {"candidate_steps": [0]}}}
    settings = {"model_path": "/m", "speculative": spec}
    ok = render(settings, "0.5.15.post1", adaptive_config_path="/etc/sglang/default/adaptive.json")
    assert ok["errors"] == [] and "--speculative-adaptive-config" in ok["argv"]
    assert json.loads(ok["files"]["/etc/sglang/default/adaptive.json"])["97"] == {"candidate_steps": [0]}
    old = render(settings, "0.5.13", adaptive_config_path="/x.json")
    assert any("0.5.14" in e for e in old["errors"])
    flat = render(settings, "0.5.12", adaptive_config_path="/x.json")
    assert any("flat" in e for e in flat["errors"])


@pytest.mark.parametrize("version", ["0.5.15.post1", "0.5.23"])
def test_the_disabled_warning_is_read_as_the_real_wheel_writes_it(version):
    # arg_groups/speculative_hook.py _maybe_disable_adaptive: logger.warning(f"speculative_adaptive disabled:
    # {reason}. " "Falling back to static speculative params."), reason from adaptive_unsupported_reason
    import re
    text = W.read_member(version, "sglang/srt/arg_groups/speculative_hook.py")
    found = re.search(r'f"(speculative_adaptive disabled: )\{reason\}(\. )"\s*"([^"]+)"', text)
    assert found, "the warning moved in %s" % version
    reason = "speculative_eagle_topk=4 (only topk=1 is supported)"
    assert "(only topk=1 is supported)" in W.read_member(version, SOURCE)
    line = "[2026-12-04 10:00:00] WARNING " + found.group(1) + reason + found.group(2) + found.group(3)
    assert found.group(1).strip() == adaptive.DISABLED_LINE
    assert adaptive.disabled("Load weight begin\n" + line + "\nready\n") == reason
    assert adaptive.disabled("Load weight begin\nready\n") is None


@pytest.mark.parametrize("info,why", [({"speculative_algorithm": "EAGLE3", "speculative_adaptive": False},
                                       "/server_info says speculative_adaptive false"),
                                      ({"speculative_algorithm": "EAGLE3", "speculative_adaptive": True}, None),
                                      ({"speculative_algorithm": None, "speculative_adaptive": False}, None),
                                      ("not json", None), (None, None)])
def test_server_info_says_when_adaptive_was_turned_off(info, why):
    assert adaptive.disabled("", info) == why
    assert adaptive.disabled("speculative_adaptive disabled: x", info) == "(reason not readable in the log)"
