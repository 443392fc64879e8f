# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45's diagnosis of what slipped past the checks before launch: a context-length above the model's (SGLang's
own ValueError, read from every verified wheel's configs/model_config.py) is bad_args naming both numbers and both
fixes; a config.json dtype torch lacks (the line captured on the H100 with SGLang 0.5.15.post1) is the config's dtype,
not model_not_found."""
import os
import re
import sys

import pytest

import testpaths
sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import classify_text

TB = ('[2026-12-07 10:00:00] Scheduler hit an exception: Traceback (most recent call last):\n'
      '  File "/v/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 3100, in run_scheduler_process\n'
      '  File "/v/lib/python3.12/site-packages/sglang/srt/configs/model_config.py", line 699, in '
      '_derive_context_length\n')
DTYPE_TB = ('Traceback (most recent call last):\n'
            '  File "/v/lib/python3.12/site-packages/sglang/srt/utils/hf_transformers_utils.py", line 300, in get_config\n'
            '  File "/v/lib/python3.12/site-packages/transformers/configuration_utils.py", line 500, in __init__\n'
            '    torch_dtype = getattr(torch, torch_dtype)\n')
_FSTRING = re.compile(r'f"(Warning: \{reason\} context_length[^"]*)"\s*f"([^"]*)"')


def context_error(version, reason, asked, derived):
    """The ValueError SGLang ``version`` raises, built from its own source's f-strings."""
    src = W.read_member(version, "sglang/srt/configs/model_config.py")
    m = _FSTRING.search(src)
    assert m, "the context_length message moved in %s" % version
    tail = re.search(r'f"\{msg\} (To allow overriding[^"]*)"', src)
    assert tail and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN" in tail.group(1)
    assert "envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN.get()" in src
    msg = (m.group(1) + m.group(2)).format(reason=reason, context_length=asked, derived_context_len=derived)
    return "ValueError: %s %s" % (msg, tail.group(1))


@pytest.mark.parametrize("version", W.SUPPORTED)
@pytest.mark.parametrize("reason", ["User-specified", "Target model's"])
def test_a_context_length_above_the_models_is_bad_args_with_both_numbers(version, reason):
    v = classify_text(TB + context_error(version, reason, 1000000, 4096) + "\n")
    assert v["category"] == "bad_args"
    assert "--context-length 1000000 is above the 4096" in v["remedy"]
    assert "context-length to 4096 or less" in v["remedy"] and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in v["remedy"]


def test_the_warning_sglang_logs_with_the_override_set_is_not_this_refusal():
    v = classify_text("[2026-12-03 09:46:01] Warning: User-specified context_length (1000000000) is greater than the "
                      "derived context_length (4096). This may lead to incorrect model outputs or CUDA errors.\n")
    assert v["category"] != "bad_args"


def test_a_context_length_within_the_model_is_not_this_refusal():
    # the same frame with another ValueError: the frame rule's generic bad_args, not the numbers' remedy
    v = classify_text(TB + "ValueError: context_length must be positive\n")
    assert "derives from the model's config.json" not in v["remedy"]


@pytest.mark.parametrize("name", ["bfloat17", "float8_e4m3fnx", "int33"])
def test_a_dtype_torch_lacks_names_the_configs_dtype(name):
    v = classify_text(DTYPE_TB + "AttributeError: module 'torch' has no attribute '%s'\n" % name)
    assert v["category"] == "model_unsupported" and v["category"] != "model_not_found"
    assert "(torch.%s)" % name in v["remedy"] and "torch_dtype" in v["remedy"] and "config.json" in v["remedy"]
    assert v["line"] == "AttributeError: module 'torch' has no attribute '%s'" % name


def test_another_attribute_torch_lacks_is_not_a_dtype():
    v = classify_text(DTYPE_TB + "AttributeError: module 'torch' has no attribute 'xpu'\n")
    assert "torch_dtype" not in v["remedy"]
